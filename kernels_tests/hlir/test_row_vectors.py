"""The row schedule's vector walk on cuda-emu: softmax, layer_norm, rms_norm and row
sums in every dtype it vectorizes, against the reference executor, over rows whose
length is a whole number of steps (S * T * V), is not (a guarded last step), is no
multiple of the vector (V falls back), is shorter than a warp's vector, or is 1; rows
one warp walks (several a block, the spare warps clamped); and the interpreter running
the scheduled IR as it runs the lowered one.

Thread t at step s touches cols (s * T + t) * V + v: V = 16 bytes of the narrowest
full-shaped argument (4 float32 / int32, 8 float16 / bfloat16, 2 float64), halved
until it divides the row.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_one_kernel import _data, _tensor, global_reads, layer_norm, rms_norm, softmax

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.reduce_schedule import lanes_for, threads_for
from cinn_py.ir.interpreter import run_function, storage_dtype
from cinn_py.ir.stmt import ArgIO
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

SUFFIX = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64"}
SUFFIX["int32"] = "i32"


def _typed(text: str, dtype: str) -> str:
    """A float16 program of test_one_kernel's builders (which know float32 and float16;
    statistics stay float32) in `dtype`."""
    return text.replace("float16", dtype).replace("xf16", "x" + SUFFIX[dtype])


def row_sum(shape: tuple[int, ...], dtype: str) -> str:
    """sum over the last axis (an int32 sum is int64, as Paddle's)."""
    out = "int64" if dtype == "int32" else dtype
    row = shape[:-1]
    axes = '"pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>'  # noqa: E501
    t = _tensor(shape, "float32").replace("xf32", "x" + SUFFIX[dtype])
    r = _tensor(row, "float32").replace("xf32", "xi64" if out == "int64" else "x" + SUFFIX[dtype])
    return "\n".join(
        [
            "{",
            _data(0, "x", shape, "float32")
            .replace("float32", dtype)
            .replace("xf32", "x" + SUFFIX[dtype]),
            f"    (%1) = {axes}",
            f'    (%2) = "pd_op.sum" (%0, %1) {{dtype:Undefined,keepdim:false,stop_gradient:[true]}} : ({t}, tensor<1xi64>) -> {r}',  # noqa: E501
            "}",
            "",
        ]
    )


def mixed_softmax(shape: tuple[int, ...]) -> str:
    """A float16 input cast to float32 and normalized in float32: 8 lanes (16 bytes of
    the input a step), so each step stores 32 bytes of the float32 output."""
    t16, t = _tensor(shape, "float16"), _tensor(shape, "float32")
    return "\n".join(
        [
            "{",
            _data(0, "x", shape, "float16"),
            f'    (%1) = "pd_op.cast" (%0) {{dtype:float32,stop_gradient:[true]}} : ({t16}) -> {t}',
            f'    (%2) = "pd_op.softmax" (%1) {{axis:-1,stop_gradient:[true]}} : ({t}) -> {t}',
            "}",
            "",
        ]
    )


def _program(kind: str, shape: tuple[int, ...], dtype: str) -> str:
    if kind == "softmax":
        return _typed(softmax("softmax", shape, -1, "float16"), dtype)
    if kind == "layer_norm":
        return _typed(layer_norm(shape, len(shape) - 1, "float16", True), dtype)
    if kind == "layer_norm_2d":  # normalized over the last two dims, fused into one row
        return _typed(layer_norm(shape, len(shape) - 2, "float16", True), dtype)
    if kind == "rms_norm":
        return _typed(rms_norm(shape, "float16"), dtype)
    if kind == "sum":
        return row_sum(shape, dtype)
    assert kind == "mixed_softmax"
    return mixed_softmax(shape)


def _feeds(program, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for op in program.block:
        if op.name != "pd_op.data":
            continue
        t = op.result().type
        values = rng.standard_normal(t.dims) * 2
        if t.data_type is DataType.BFLOAT16:
            feeds[op.attr("name")] = float32_to_bfloat16(values.astype(np.float32))
            continue
        dtype = t.data_type.numpy
        if np.issubdtype(dtype, np.integer):
            feeds[op.attr("name")] = rng.integers(-1000, 1000, t.dims).astype(dtype)
        else:
            feeds[op.attr("name")] = values.astype(dtype)
    return feeds


CASES = [
    # (kind, shape, dtype, lanes, threads): the walk the schedule must pick
    ("softmax", (3, 512), "float32", 4, 32),  # 4 steps x 32 threads x 4 lanes exactly
    ("softmax", (2, 4096), "float32", 4, 256),  # 4 x 256 x 4 exactly: a block a row
    ("softmax", (5, 300), "float32", 4, 32),  # 75 vectors: the last step guarded
    ("softmax", (3, 301), "float32", 1, 128),  # no vector divides the row: V = 1
    ("softmax", (9, 20), "float32", 4, 32),  # 5 vectors, shorter than a warp's step
    ("softmax", (4, 1), "float32", 1, None),  # a row of 1: no reduction left, no row walk
    ("softmax", (3, 1024), "float16", 8, 32),  # 4 x 32 x 8 exactly
    ("softmax", (5, 600), "float16", 8, 32),  # warp rows, 75 vectors, rows % 4 clamped
    ("softmax", (2, 4100), "float16", 4, 512),  # 8 does not divide 4100, 4 does
    ("softmax", (3, 30), "float16", 2, 32),
    ("softmax", (3, 1000), "bfloat16", 8, 32),
    ("softmax", (2, 600), "float64", 2, 128),
    ("mixed_softmax", (3, 1200), None, 8, 64),
    ("layer_norm", (4, 1024), "float32", 4, 64),
    ("layer_norm", (3, 1000), "float16", 8, 32),
    ("layer_norm", (3, 333), "float32", 1, 128),
    ("layer_norm", (2, 640), "bfloat16", 8, 32),
    ("layer_norm_2d", (3, 6, 40), "float32", 4, 32),  # lanes through the fused dims' / and %
    ("rms_norm", (5, 768), "float32", 4, 64),
    ("rms_norm", (9, 256), "float16", 8, 32),  # 9 warp rows: 2 blocks of 8
    ("rms_norm", (3, 4096), "bfloat16", 8, 128),
    ("sum", (6, 2048), "float32", 4, 128),  # cached for its vector loads
    ("sum", (3, 4096), "float16", 8, 128),  # (longer rows this few take the grid schedule)
    ("sum", (4, 1000), "int32", 4, 64),  # exact: ints add in any order
    ("sum", (2, 3000), "float64", 2, 512),
    ("sum", (5, 255), "float32", 1, 64),
]


def _id(case) -> str:
    kind, shape, dtype, *_ = case
    return f"{kind}-{'x'.join(map(str, shape))}-{dtype or 'f16in'}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_vector_walk_matches_the_reference(case) -> None:
    kind, shape, dtype, lanes, threads = case
    program = parse_program(_program(kind, shape, dtype))
    exe = cinn_py.compile(program, target="cuda-emu")
    assert exe.cuda_source.count("__global__") == 1
    (kernel,) = exe.kernels
    if threads is None:
        assert "cinn_block_reduce" not in exe.cuda_source[exe.cuda_source.index('extern "C"') :]
    else:
        assert kernel.block[0] == threads
    if lanes > 1:
        assert "cinn_vec<" in exe.cuda_source[exe.cuda_source.index('extern "C"') :]
        assert global_reads(exe.cuda_source, "var_0") == 1
    feeds = _feeds(program)
    got = exe.run(feeds)
    want = run_reference(program, feeds)
    for key, expected in zip(got, want, strict=True):
        expected = np.asarray(expected)
        bf16 = dtype == "bfloat16" and expected.dtype == np.uint16
        result = compare(np.asarray(got[key]), expected, "bfloat16" if bf16 else None)
        assert result.ok, f"{_id(case)} {key}: {result}"


def _lowered(text: str):
    program = parse_program(text)
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program)), group.reduce_pattern


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_the_schedule_picks_the_walk(case) -> None:
    kind, shape, dtype, lanes, threads = case
    func, pattern = _lowered(_program(kind, shape, dtype))
    assert lanes_for(func, pattern) == lanes
    if threads is not None:  # else the lowered function has no Reduce to walk
        assert threads_for(pattern.cols, TargetInfo.cuda(), lanes) == threads


INTERPRETED = [
    ("softmax", (5, 300), "float32"),
    ("softmax", (3, 40), "float16"),
    ("layer_norm", (3, 96), "float32"),
    ("rms_norm", (9, 64), "float32"),
    ("sum", (4, 1000), "int32"),
    ("sum", (3, 520), "float64"),
]


@pytest.mark.parametrize(("kind", "shape", "dtype"), INTERPRETED)
def test_interpreter_runs_the_vector_schedule_as_the_lowered_ir(kind, shape, dtype) -> None:
    """The scheduled IR (lanes, register cache, factorized partials) computes what the
    lowered IR computes: exactly for ints, within rounding order for floats."""
    func, pattern = _lowered(_program(kind, shape, dtype))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    assert lanes_for(func, pattern) > 1
    assert any(b.array_dims for b in result.func.temp_buffers)
    rng = np.random.default_rng(7)
    want: dict[str, np.ndarray] = {}
    got: dict[str, np.ndarray] = {}
    for arg in func.args:
        dims = tuple(d.value for d in arg.value.shape)
        np_dtype = storage_dtype(arg.value.dtype)
        if arg.io is ArgIO.INPUT:
            if np.issubdtype(np_dtype, np.integer):
                array = rng.integers(-1000, 1000, dims).astype(np_dtype)
            else:
                array = (rng.standard_normal(dims) * 2).astype(np_dtype)
            want[arg.name] = got[arg.name] = array
        else:
            want[arg.name] = np.zeros(dims, np_dtype)
            got[arg.name] = np.zeros(dims, np_dtype)
    run_function(func, want)
    run_function(result.func, got)
    for arg in func.args:
        if arg.io is not ArgIO.INPUT:
            assert compare(got[arg.name], want[arg.name]).ok, arg.name


def _ptx(text: str, arch: str) -> str:
    compiler = PIRCompiler(parse_program(text), "cuda", arch=arch)
    (kernel,) = compiler.stages(until="scheduled").fused
    return nvrtc.compile_ptx(generate_cuda([kernel.scheduled.func]).source, arch)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_nvrtc_compiles_the_vector_walk(case, arch: str) -> None:
    """Every case compiles for sm_80 and sm_90, keeps its registers out of local memory,
    and loads x in vectors of V elements (16 bytes where V fills them)."""
    kind, shape, dtype, lanes, _ = case
    ptx = _ptx(_program(kind, shape, dtype), arch)
    assert "__local_depot" not in ptx and ".local" not in ptx
    itemsize = {"float32": 4, "int32": 4, "float64": 8}.get(dtype, 2)
    widths = [
        int(n) * int(bits) // 8
        for n, bits in re.findall(r"ld\.global\.nc\.v(\d)\.[a-z]+(\d+)", ptx)
    ]
    assert max(widths, default=1) == (lanes * itemsize if lanes > 1 else 1), widths


def test_a_float16_input_with_a_float32_output_stores_two_vectors_a_step() -> None:
    """8 lanes: one 16-byte load of the float16 row a step, two 16-byte stores of the
    float32 output (4096 cols: 4 steps of 128 threads)."""
    ptx = _ptx(mixed_softmax((4096, 4096)), "sm_90")
    assert len(re.findall(r"ld\.global\.nc\.v4\.u32", ptx)) == 4
    assert ptx.count("ld.global") == 4
    assert len(re.findall(r"st\.global\.v4\.f32", ptx)) == 8
    assert ".local" not in ptx
