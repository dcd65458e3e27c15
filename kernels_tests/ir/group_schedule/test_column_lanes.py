"""The column schedule's 16-byte lanes (`column_lanes`, `schedule_lanes`): V neighbouring
outputs a thread, one vector load of each row of its column slice, one exchange of the V
partials across threadIdx.y, thread (x, 0) storing the totals. Every lanes candidate of
odd-shaped column groups runs on cuda-emu against the IR interpreter on the unscheduled
function (one source, one compile); the CUDA text, the trace and the refusals are
checked as text."""

from __future__ import annotations

import re

import numpy as np
import pytest
from auto_schedule_funcs import assert_emulated_matches_interpreter
from reduction_programs import lowered, reduction

from cinn_py.backends import cuda_emu
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.ir.group_schedule import TargetInfo
from cinn_py.ir.group_schedule.column_schedule import (
    ColumnLaunch,
    column_lanes,
    lanes_threads_y,
)
from cinn_py.ir.group_schedule.tactics import ColumnTactic
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program

CUDA = TargetInfo.cuda()
TACTIC = ColumnTactic()
F16, BF16, I64 = DataType.FLOAT16, DataType.BFLOAT16, DataType.INT64

CASES = {
    # rows reduced: odd (33, 9, 129, 1000); kept: runs of 8 to 32 outputs
    "sum_33x64": lambda: reduction((33, 64), [0]),
    "sum_9x32": lambda: reduction((9, 32), [0]),
    "sum_1000x96": lambda: reduction((1000, 96), [0]),  # 96 = 3 x 32: TX 2, 4, 8
    "sum_f16_33x128": lambda: reduction((33, 128), [0], dtype=F16),  # V = 8
    "max_bf16_129x64": lambda: reduction((129, 64), [0], dtype=BF16, ops=("max",)),
    "min_i64_33x32": lambda: reduction((33, 32), [0], dtype=I64, ops=("min",)),  # V = 2
    "sum_5x33x32": lambda: reduction((5, 33, 32), [1]),  # kept [5, 32]: runs within rows
    "sum_keepdim_3x33x64": lambda: reduction((3, 33, 64), [0, 1], keepdim=True),
    "any_bool_33x64": lambda: reduction((33, 64), [0], dtype=DataType.BOOL, ops=("any",)),
    "sum_i8_129x32": lambda: reduction((129, 32), [0], dtype=DataType.INT8),  # V = 16
}


def _lanes_candidates():
    """(case, knobs, lowered function, scheduled function) for every lanes candidate."""
    found = []
    for name, make in CASES.items():
        func, pattern = lowered(make())
        assert TACTIC.accepts(func, CUDA, pattern) is None, name
        lanes = [k for k in TACTIC.candidates(func, CUDA, pattern) if k["lanes"] > 1]
        assert lanes, name
        for index, knobs in enumerate(lanes):
            renamed = LoweredFunc(f"fn_{name}_{index}", func.args, func.body, func.temp_buffers)
            result = TACTIC.apply(renamed, CUDA, pattern, knobs)
            assert result is not None and result.tuned == knobs, (name, knobs)
            found.append((name, knobs, renamed, result))
    return found


@pytest.fixture(scope="module")
def emulated():
    found = _lanes_candidates()
    source = generate_cuda([result.func for *_, result in found])
    return found, source, cuda_emu.compile(source.source)


def test_every_lanes_candidate_computes_the_interpreters_numbers(emulated):
    found, source, module = emulated
    rng = np.random.default_rng(0)
    for (name, knobs, func, _), kernel in zip(found, source.kernels, strict=True):
        assert_emulated_matches_interpreter(module, kernel, func, rng, f"{name} with {knobs}")


def test_every_lanes_kernel_loads_vectors_and_stores_from_row_zero(emulated):
    """Each kernel walks its slice with one V-element vector load a step, exchanges the
    V partials once (one `cinn_block_reduce_y` of nested pairs) and stores the V
    totals from thread y 0 alone."""
    found, source, _ = emulated
    for (name, knobs, _, result), kernel in zip(found, source.kernels, strict=True):
        text = source.source.split("void __launch_bounds__")[1:]
        body = next(t for t in text if f" {kernel.name}(" in t.split("{", 1)[0])
        body = body.split("\nextern", 1)[0]
        lanes, threads_x = knobs["lanes"], knobs["threads_x"]
        assert re.search(rf"cinn_vec<[\w ]+, {lanes}> \w+_vec = \*reinterpret_cast", body), name
        assert body.count("cinn_block_reduce_y<") == 1, (name, knobs)
        assert f"cinn_block_reduce_y<{threads_x}, {knobs['threads_y']}>" in body
        assert body.count("if (threadIdx.y == 0)") == lanes, (name, knobs)
        assert result.launch == ColumnLaunch(
            threads=threads_x,
            blocks=result.launch.blocks,
            steps=1,
            threads_y=knobs["threads_y"],
            lanes=lanes,
        )
        assert kernel.block == (threads_x, knobs["threads_y"], 1)


def test_the_lanes_trace_and_launch():
    func, pattern = lowered(reduction((1000, 96), [0]))
    knobs = {"threads_y": 16, "lanes": 4, "threads_x": 8}
    result = TACTIC.apply(func, CUDA, pattern, knobs)
    assert str(result.trace).splitlines() == [
        "split(loop=i_0, factors=[3, 8, 4]) -> [i_0_0, i_0_1, i_0_2]",
        "bind(loop=i_0_0, thread_axis=blockIdx.x)",
        "bind(loop=i_0_1, thread_axis=threadIdx.x)",
        "factorize_reduction(block=var_1, threads=16, thread_axis=threadIdx.y)",
        "vectorize(loop=i_0_2, factor=4)",
    ]
    assert result.launch == ColumnLaunch(threads=8, blocks=3, steps=1, threads_y=16, lanes=4)


def test_lanes_candidates_per_element_size_and_shape():
    """V = 16 bytes / element; threads_x from a 32-byte run of a row to 32 outputs a
    block, where the outputs and the innermost kept dim divide the run; TY from 2 while
    the block holds 1024 threads and each thread folds 4 rows or more."""
    cases = [
        ((33, 64), DataType.FLOAT32, 4, (2, 4, 8)),
        ((33, 96), DataType.FLOAT32, 4, (2, 4, 8)),
        ((33, 48), DataType.FLOAT32, 4, (2, 4)),  # 48 = 3 x 16: no run of 32 outputs
        ((33, 128), F16, 8, (2, 4)),
        ((33, 32), I64, 2, (2, 4, 8, 16)),
    ]
    for shape, dtype, lanes, threads_x in cases:
        func, pattern = lowered(reduction(shape, [0], dtype=dtype))
        shape_found = column_lanes(func, pattern)
        assert shape_found is not None and shape_found.lanes == lanes, (shape, dtype)
        assert shape_found.threads_x == threads_x, (shape, dtype)
    func, pattern = lowered(reduction((8192, 8192), [0]))
    assert lanes_threads_y(pattern, CUDA, 2) == [2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert lanes_threads_y(pattern, CUDA, 8) == [2, 4, 8, 16, 32, 64, 128]
    func, pattern = lowered(reduction((7, 32), [0]))
    assert lanes_threads_y(pattern, CUDA, 2) == []  # 7 rows: fewer than 4 a thread at TY 2


def _argmax() -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[33, 64], dtype=DataType.FLOAT32)
    b.op("pd_op.argmax", x, b.op("pd_op.full", shape=[1], value=0, dtype=DataType.INT64))
    return program


def _two_columns() -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[33, 64], dtype=DataType.FLOAT32)
    axes = b.op("pd_op.full_int_array", value=[0])
    total = b.op("pd_op.sum", x, axes, keepdim=True, dtype=DataType.UNDEFINED)
    b.op("pd_op.subtract", x, total)
    return program


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda: reduction((33, 36), [0]), "36 outputs: no run of 8"),
        (lambda: reduction((33, 64), [0], ops=("sum", "max")), "two blocks"),
        (_argmax, "an ArgReduce"),
        (_two_columns, "a reduction read back (a temp)"),
        (lambda: reduction((33, 64), [0], ops=("mean",)), "a mean: its division reads the sum"),
    ],
)
def test_groups_without_lanes_keep_one_output_a_thread(make, why):
    func, pattern = lowered(make())
    assert column_lanes(func, pattern) is None, why
    assert all(k["lanes"] == 1 for k in TACTIC.candidates(func, CUDA, pattern)), why


@pytest.mark.parametrize(
    ("shape", "dtype", "rule"),
    [
        # 8192 outputs: 256 blocks of 32 (8 threads of 4), TY 128 (LANES_THREADS_Y)
        ((8192, 8192), DataType.FLOAT32, {"threads_y": 128, "lanes": 4, "threads_x": 8}),
        ((8192, 8192), F16, {"threads_y": 128, "lanes": 8, "threads_x": 4}),
        # 1024 outputs: 32 blocks of 32 are fewer than the SMs: 16 outputs a block
        ((4096, 1024), DataType.FLOAT32, {"threads_y": 128, "lanes": 4, "threads_x": 4}),
        ((4096, 1024), F16, {"threads_y": 128, "lanes": 8, "threads_x": 2}),
        # 129 rows: TY 32 (4 rows a thread or more); 64 outputs: 16 a block
        ((129, 64), DataType.FLOAT32, {"threads_y": 32, "lanes": 4, "threads_x": 4}),
        # 36 outputs: no lanes, one output a thread
        ((129, 36), DataType.FLOAT32, {"threads_y": 32, "lanes": 1, "threads_x": 32}),
    ],
)
def test_the_rules(shape, dtype, rule):
    func, pattern = lowered(reduction(shape, [0], dtype=dtype))
    assert TACTIC.knobs(func, CUDA, pattern) == rule
    candidates = TACTIC.candidates(func, CUDA, pattern)
    assert rule in candidates
    assert all(set(k) == {"threads_y", "lanes", "threads_x"} for k in candidates)
    result = TACTIC.apply(func, CUDA, pattern)
    assert (result.launch.threads, result.launch.threads_y) == (
        rule["threads_x"],
        rule["threads_y"],
    )
