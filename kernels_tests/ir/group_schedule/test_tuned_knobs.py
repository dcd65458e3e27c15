"""Every tunable setting of every tactic (`Tactic.candidates`, what tools/tune.py tries
and a schedule database may hold) scheduled at odd shapes and run on cuda-emu against
the IR interpreter: all candidates of all cases rendered into one source (one g++
compile). A knob the rules never pick (1024 threads for a 125-vector row, 32 rows a
block for 7 rows) must still give the right numbers."""

from __future__ import annotations

import numpy as np
import pytest
from auto_schedule_funcs import assert_emulated_matches_interpreter
from reduction_programs import lowered, reduction, softmax

from cinn_py.backends import cuda_emu
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.ir.group_schedule import TargetInfo
from cinn_py.ir.group_schedule.tactics import TACTICS
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program

CUDA = TargetInfo.cuda()
F16 = DataType.FLOAT16


def _add_relu_mul(shape, dtype=DataType.FLOAT32) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    y = b.op("pd_op.data", name="y", shape=list(shape), dtype=dtype)
    b.op("pd_op.multiply", b.op("pd_op.relu", b.op("pd_op.add", x, y)), x)
    return program


def _transpose(shape, dtype=DataType.FLOAT32) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    b.op("pd_op.transpose", x, perm=[1, 0])
    return program


CASES = {
    # row: 1000 cols (V = 4: 250 vectors), 7 rows; softmax reads its reductions back
    "softmax_7x1000": (lambda: softmax((7, 1000)), "row"),
    "softmax_f16_3x129": (lambda: softmax((3, 129), F16), "row"),
    "row_sum_33x129": (lambda: reduction((33, 129), [1]), "row"),
    "column_sum_129x33": (lambda: reduction((129, 33), [0]), "column"),
    "grid_sum_3x40000": (lambda: reduction((3, 40000), [1]), "grid"),
    "flat_1000": (lambda: _add_relu_mul((1000,)), "flat"),
    "flat_33x129": (lambda: _add_relu_mul((33, 129)), "flat"),
    "tile_129x33": (lambda: _transpose((129, 33)), "tile"),  # lanes 1 only: edge tiles
    "tile_f16_128x192": (lambda: _transpose((128, 192), F16), "tile"),  # lanes 1, 2, 8
    "tile_f32_96x64": (lambda: _transpose((96, 64)), "tile"),  # lanes 1, 4: 32 x 32 tiles
    "tile_i64_32x48": (lambda: _transpose((32, 48), DataType.INT64), "tile"),  # 16 x 16
}

TACTIC = {t.name: t for t in TACTICS}


def _scheduled_candidates():
    """(case, knobs, lowered function, scheduled function) for every candidate."""
    found = []
    for name, (make, tactic_name) in CASES.items():
        func, pattern = lowered(make())
        tactic = TACTIC[tactic_name]
        assert tactic.accepts(func, CUDA, pattern) is None, name
        candidates = tactic.candidates(func, CUDA, pattern)
        assert len(candidates) >= (1 if name == "tile_129x33" else 2), (name, candidates)
        for index, knobs in enumerate(candidates):
            renamed = LoweredFunc(f"fn_{name}_{index}", func.args, func.body, func.temp_buffers)
            result = tactic.apply(renamed, CUDA, pattern, knobs)
            assert result is not None and result.tuned == knobs, (name, knobs)
            found.append((name, knobs, renamed, result.func))
    return found


def test_every_candidate_computes_the_interpreters_numbers_on_cuda_emu():
    found = _scheduled_candidates()
    source = generate_cuda([scheduled for *_, scheduled in found])
    module = cuda_emu.compile(source.source)
    rng = np.random.default_rng(0)
    for (name, knobs, func, _), kernel in zip(found, source.kernels, strict=True):
        assert_emulated_matches_interpreter(module, kernel, func, rng, f"{name} with {knobs}")


@pytest.mark.parametrize("name", list(CASES))
def test_the_rules_choice_is_a_candidate(name):
    """With no knobs the tactic's rules schedule; giving their own choice back as knobs
    schedules the very same function."""
    make, tactic_name = CASES[name]
    func, pattern = lowered(make())
    tactic = TACTIC[tactic_name]
    rule = tactic.apply(func, CUDA, pattern)
    assert rule is not None and rule.tuned is None
    matching = [
        knobs
        for knobs in tactic.candidates(func, CUDA, pattern)
        if str(tactic.apply(func, CUDA, pattern, knobs).trace) == str(rule.trace)
    ]
    assert matching, f"{name}: no candidate reproduces the rules' schedule"


def test_knobs_outside_the_candidates_leave_the_rules():
    func, pattern = lowered(softmax((7, 1000)))
    tactic = TACTIC["row"]
    rule = tactic.apply(func, CUDA, pattern)
    odd = tactic.apply(func, CUDA, pattern, {"threads_per_row": 96, "rows_per_block": 1})
    assert odd.tuned is None
    assert str(odd.trace) == str(rule.trace)


@pytest.mark.parametrize(("tile_rows", "steps"), [(4, 8), (8, 4), (16, 2), (32, 1)])
def test_tile_rows_set_the_threads_of_a_tile(tile_rows, steps):
    """A transpose's tile of 32 x 32 takes `tile_rows` rows of 32 threads, each walking
    32 / tile_rows of its rows (the rules: 8 rows, 4 steps)."""
    func, pattern = lowered(_transpose((128, 96)))
    tactic = TACTIC["tile"]
    assert {"lanes": 1, "tile_rows": tile_rows} in tactic.candidates(func, CUDA, pattern)
    result = tactic.apply(func, CUDA, pattern, {"lanes": 1, "tile_rows": tile_rows})
    assert result.tuned == {"lanes": 1, "tile_rows": tile_rows}
    assert (result.launch.threads, result.launch.steps) == (32 * tile_rows, steps)
    assert f"split(loop=i_0_1, factors=[{steps}, {tile_rows}])" in str(result.trace)
