"""softmax, log_softmax, layer_norm and rms_norm, as the composite op and written by hand,
in float32 and float16 (computed in float32): each compiles to exactly one kernel that
matches the reference executor.

The default passes decompose the composite; fusion puts the reductions and the
elementwise ops that read them in one group; the row schedule runs each row in one
thread block, so nothing between the ops leaves the kernel, and keeps the input row in
registers (`cache_read`), so the kernel reads it from HBM once, in 16-byte vectors where
the row allows (NVRTC's PTX has `ld.global.nc.v4` and no local memory).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.hlir.group import GroupKind
from cinn_py.pir.parser import parse_program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

DTYPES = {"float32": "f32", "float16": "f16"}


def _tensor(shape: tuple[int, ...], dtype: str) -> str:
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{DTYPES[dtype]}>" if shape else f"tensor<{DTYPES[dtype]}>"


def _data(number: int, name: str, shape: tuple[int, ...], dtype: str) -> str:
    dims = ",".join(str(d) for d in shape)
    return (
        f'    (%{number}) = "pd_op.data" () {{dtype:{dtype},name:"{name}",'
        f"place:Place(undefined:0),shape:[{dims}],stop_gradient:[true]}} : () -> "
        f"{_tensor(shape, dtype)}"
    )


def softmax(kind: str, shape: tuple[int, ...], axis: int, dtype: str) -> str:
    t = _tensor(shape, dtype)
    return "\n".join(
        [
            "{",
            _data(0, "x", shape, dtype),
            f'    (%1) = "pd_op.{kind}" (%0) {{axis:{axis},stop_gradient:[true]}} : ({t}) -> {t}',
            "}",
            "",
        ]
    )


def layer_norm(shape: tuple[int, ...], begin: int, dtype: str, affine: bool) -> str:
    t = _tensor(shape, dtype)
    norm = shape[begin:]
    count = int(np.prod(norm))
    stat = _tensor(shape[:begin], "float32")
    lines = ["{", _data(0, "x", shape, dtype)]
    if affine:
        lines += [_data(1, "w", (count,), "float32"), _data(2, "b", (count,), "float32")]
        operands = "%0, %1, %2"
        types = f"{t}, {_tensor((count,), 'float32')}, {_tensor((count,), 'float32')}"
    else:
        operands = "%0, <<NULL VALUE>>, <<NULL VALUE>>"
        types = f"{t}, <<NULL TYPE>>, <<NULL TYPE>>"
    lines.append(
        f'    (%3, %4, %5) = "pd_op.layer_norm" ({operands}) {{begin_norm_axis:{begin},'
        f"epsilon:1e-05,stop_gradient:[true,true,true]}} : ({types}) -> {t}, {stat}, {stat}"
    )
    return "\n".join([*lines, "}", ""])


def rms_norm(shape: tuple[int, ...], dtype: str) -> str:
    t = _tensor(shape, dtype)
    w = _tensor(shape[-1:], dtype)
    stat = _tensor(shape[:-1], "float32")
    return "\n".join(
        [
            "{",
            _data(0, "x", shape, dtype),
            _data(1, "w", shape[-1:], dtype),
            f'    (%2, %3) = "pd_op.rms_norm" (%0, %1) {{epsilon:1e-05,normalized_shape:'
            f"[{shape[-1]}],stop_gradient:[true,true]}} : ({t}, {w}) -> {t}, {stat}",
            "}",
            "",
        ]
    )


def softmax_by_hand(shape: tuple[int, ...], dtype: str) -> str:
    """max, subtract, exp, sum, divide over the last axis, computed in float32."""
    t16, t = _tensor(shape, dtype), _tensor(shape, "float32")
    row = _tensor((*shape[:-1], 1), "float32")
    axes = '"pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>'  # noqa: E501
    return "\n".join(
        [
            "{",
            _data(0, "x", shape, dtype),
            f'    (%1) = "pd_op.cast" (%0) {{dtype:float32,stop_gradient:[true]}} : ({t16}) -> {t}',
            f"    (%2) = {axes}",
            f'    (%3) = "pd_op.max" (%1, %2) {{keepdim:true,stop_gradient:[true]}} : ({t}, tensor<1xi64>) -> {row}',  # noqa: E501
            f'    (%4) = "pd_op.subtract" (%1, %3) {{stop_gradient:[true]}} : ({t}, {row}) -> {t}',
            f'    (%5) = "pd_op.exp" (%4) {{stop_gradient:[true]}} : ({t}) -> {t}',
            f'    (%6) = "pd_op.sum" (%5, %2) {{dtype:Undefined,keepdim:true,stop_gradient:[true]}} : ({t}, tensor<1xi64>) -> {row}',  # noqa: E501
            f'    (%7) = "pd_op.divide" (%5, %6) {{stop_gradient:[true]}} : ({t}, {row}) -> {t}',
            f'    (%8) = "pd_op.cast" (%7) {{dtype:{dtype},stop_gradient:[true]}} : ({t}) -> {t16}',
            "}",
            "",
        ]
    )


CASES = {
    "softmax-last": lambda d: softmax("softmax", (6, 100), -1, d),
    "softmax-middle-axis": lambda d: softmax("softmax", (2, 33, 5), 1, d),
    "softmax-first-axis": lambda d: softmax("softmax", (7, 3, 4), 0, d),
    "softmax-long-row": lambda d: softmax("softmax", (3, 2500), -1, d),
    "softmax-row-of-1": lambda d: softmax("softmax", (5, 1), -1, d),
    "log_softmax-last": lambda d: softmax("log_softmax", (4, 257), -1, d),
    "log_softmax-first-axis": lambda d: softmax("log_softmax", (9, 6), 0, d),
    "layer_norm-affine": lambda d: layer_norm((4, 3, 40), 2, d, True),
    "layer_norm-two-dims": lambda d: layer_norm((3, 7, 33), 1, d, True),
    "layer_norm-plain": lambda d: layer_norm((8, 96), 1, d, False),
    "layer_norm-short-rows": lambda d: layer_norm((5, 3, 20), 2, d, True),  # 8 rows a block
    "rms_norm": lambda d: rms_norm((5, 130), d),
    "rms_norm-short-rows": lambda d: rms_norm((7, 48), d),  # a warp per row, 1 spare
    "rms_norm-3d": lambda d: rms_norm((2, 3, 64), d),
    "softmax-by-hand": lambda d: softmax_by_hand((6, 77), d),
}


def global_reads(source: str, name: str) -> int:
    """The reads of global buffer `name` in a kernel's source: scalar (`name[...]`) and
    vector (`reinterpret_cast<const cinn_vec<...>*>(name + ...)`, one 16-byte load)."""
    scalar = re.findall(rf"\b{name}\[", source)
    vector = re.findall(rf"reinterpret_cast<const cinn_vec<[^>]*>\*>\({name} \+", source)
    return len(scalar) + len(vector)


def _feeds(program, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for op in program.block:
        if op.name == "pd_op.data":
            t = op.result().type
            feeds[op.attr("name")] = (rng.standard_normal(t.dims) * 2).astype(t.data_type.numpy)
    return feeds


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_compiles_to_one_kernel(case: str, dtype: str) -> None:
    program = parse_program(CASES[case](dtype))
    exe = cinn_py.compile(program, target="cuda-emu")
    kinds = [g.kind for g in exe.groups]
    assert kinds == [GroupKind.FUSED], f"{case}: groups {exe.groups}"
    assert exe.cuda_source.count("__global__") == 1
    if case != "softmax-row-of-1":  # x leaves HBM once: the row is kept in registers
        assert global_reads(exe.cuda_source, "var_0") == 1, exe.cuda_source
        assert "var_0_local[" in exe.cuda_source
    feeds = _feeds(program)
    got = exe.run(feeds)
    want = run_reference(program, feeds)
    assert len(got) == len(want)
    for key, expected in zip(got, want, strict=True):
        result = compare(np.asarray(got[key]), np.asarray(expected))
        assert result.ok, f"{case} {dtype} {key}: {result}"


def test_long_rows_use_a_block_reduce_and_keep_the_reductions_in_registers() -> None:
    program = parse_program(softmax("softmax", (4, 4096), -1, "float32"))
    exe = cinn_py.compile(program, target="cuda-emu")
    source = exe.cuda_source
    # 1024 vectors of 4 lanes, about 4 a thread: 256 threads
    assert source.count("cinn_block_reduce<256>(") == 2  # the row max, the row sum
    assert "cinn_reduce_max()" in source and "cinn_reduce_sum()" in source
    (kernel,) = exe.kernels
    assert kernel.grid == (4, 1, 1) and kernel.block == (256, 1, 1)
    x = _feeds(program)["x"]
    e = np.exp(x - x.max(-1, keepdims=True))
    (out,) = exe.run({"x": x}).values()
    assert compare(out, e / e.sum(-1, keepdims=True)).ok


BENCH = {
    "softmax": lambda d: softmax("softmax", (4096, 4096), -1, d),
    "layer_norm": lambda d: layer_norm((4096, 4096), 1, d, True),
    "rms_norm": lambda d: rms_norm((4096, 4096), d),
}


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("case", sorted(BENCH))
def test_bench_rows_load_16_bytes_a_thread(case: str, dtype: str) -> None:
    """[4096, 4096]: x is read with 16-byte vector loads only (4 a thread: 4 float32 or 8
    float16 lanes each), kept in registers (no local memory), and the output is written
    with 16-byte vector stores."""
    program = parse_program(BENCH[case](dtype))
    compiler = PIRCompiler(program, "cuda", arch="sm_80")
    (kernel,) = compiler.stages(until="scheduled").fused
    source = generate_cuda([kernel.scheduled.func]).source
    ptx = nvrtc.compile_ptx(source, "sm_80")
    assert "__local_depot" not in ptx and ".local" not in ptx
    x_loads = re.findall(r"ld\.global\.nc\.v4\.\w+\s+\{[^}]*\}, \[%rd\d+(?:\+\d+)?\]", ptx)
    assert len(x_loads) >= 4, ptx
    assert global_reads(source, "var_0") == 1
    assert len(re.findall(r"st\.global\.v4\.", ptx)) >= 4
