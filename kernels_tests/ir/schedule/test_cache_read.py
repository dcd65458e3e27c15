"""cache_read to local memory: the golden IR of the fill block and of the redirected
reads, values kept (interpreter and cuda-emu), the register array in CUDA, trace replay,
and every refusal with its message."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.hlir.pir_compiler import PIRCompiler
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.auto_schedule import finish_schedule
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.schedule.cache_read import cache_problem
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager

SOFTMAX = """{{
    (%0) = "pd_op.data" () {{dtype:float32,name:"x",place:Place(undefined:0),shape:[{shape}],stop_gradient:[true]}} : () -> tensor<{dims}xf32>
    (%1) = "pd_op.softmax" (%0) {{axis:{axis},stop_gradient:[true]}} : (tensor<{dims}xf32>) -> tensor<{dims}xf32>
}}
"""  # noqa: E501


def softmax(shape: tuple[int, ...], axis: int = -1) -> str:
    return SOFTMAX.format(
        shape=",".join(map(str, shape)), dims="x".join(map(str, shape)), axis=axis
    )


def lowered(text: str):
    program = parse_program(text)
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program)), group.reduce_pattern


FILL_BLOCK = """\
    thread_bind[blockIdx.x] for (var_0_local_row, 0, 1)
    thread_bind[threadIdx.y] for (var_0_local_warp, 0, 2)
    unroll for (var_0_local_s, 0, 2)
    thread_bind[threadIdx.x] for (var_0_local_t, 0, 32)
    ScheduleBlock(var_0_local)
    {
      var_0_local_i0, var_0_local_i1, var_0_local_i2 = axis.bind(((var_0_local_row * 2) + var_0_local_warp), var_0_local_s, var_0_local_t)
      read_buffers(var_0[var_0_d0(0:2), var_0_d1(0:40)])
      write_buffers(var_0_local[var_0_local_d0(0:2), var_0_local_d1(0:2), var_0_local_d2(0:32)])
      if ((((var_0_local_i1 * 32) + var_0_local_i2) < 40)) {
        var_0_local[var_0_local_i0, var_0_local_i1, var_0_local_i2] = var_0[var_0_local_i0, ((var_0_local_i1 * 32) + var_0_local_i2)]
      }
    }
"""  # noqa: E501

MAX_READ = "Reduce(Max across threadIdx.x, Reduce(Max, select((((r_0_o * 32) + r_0_t) < 40), var_0_local[i0_0, r_0_o, r_0_t], -inf),-inf),-inf)"  # noqa: E501
NORMALIZE_READ = "var_0_local[i0_2, i_5_0, i_5_1]"


def test_row_schedule_caches_a_softmax_row_golden():
    func, pattern = lowered(softmax((2, 40)))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    text = print_ir(result.func)
    assert FILL_BLOCK in text
    assert f"var_1_tmp[i0_0, i1_0] = {MAX_READ}" in text
    assert NORMALIZE_READ in text and "unroll for (i_5_0, 0, 2)" in text
    assert not re.search(r"var_0\[i", text.split("ScheduleBlock(var_1_tmp)")[1])
    cache = result.func.temp_buffers[-1]
    assert (cache.name, cache.memory_type.value, cache.register_dims) == (
        "var_0_local",
        "local",
        (1,),
    )
    assert [d.value for d in cache.shape] == [2, 2, 32]
    assert str(result.trace).endswith(
        "cache_read(buffer=var_0, memory_type=local, axes=[1], threads=32, rows_per_block=2)"
        " -> var_0_local"
    )
    assert structural_equal(result.replay(func), result.func)


@pytest.mark.parametrize(
    ("shape", "axis"), [((2, 40), -1), ((3, 64), -1), ((2, 33, 5), 1), ((7, 3, 4), 0)]
)
def test_cached_schedule_keeps_the_values(shape, axis):
    func, pattern = lowered(softmax(shape, axis))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    assert any(b.register_dims for b in result.func.temp_buffers)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    out = np.zeros(shape, np.float32)
    run_function(result.func, {"var_0": x, "var_7": out})
    e = np.exp(x - x.max(axis, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis, keepdims=True), rtol=1e-5, atol=1e-7)


def test_cuda_source_reads_the_row_once_into_a_register_array():
    program = parse_program(softmax((4, 3000)))
    exe = cinn_py.compile(program, target="cuda-emu")
    source = exe.cuda_source
    assert "float var_0_local[3];" in source  # 3000 cols / 1024 threads
    assert len(re.findall(r"\bvar_0\[", source)) == 1
    assert source.count("var_0_local[r_0_o]") == 1 and source.count("var_0_local[r_1_o]") == 2
    # every loop indexing the register array is unrolled
    for loop in re.findall(r"(.*)\n\s*for \(int (\w+) = 0; \w+ < 3;", source):
        assert "#pragma unroll" in loop[0], loop
    x = np.random.default_rng(3).standard_normal((4, 3000)).astype(np.float32)
    (out,) = exe.run({"x": x}).values()
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-8)


def _bound_softmax():
    """A softmax with the row schedule's loops (a block of 128 threads per row) but no
    cache yet."""
    func, pattern = lowered(softmax((2, 300)))
    steps = auto_schedule(func, TargetInfo.cuda(), pattern).trace.steps
    sch = IRSchedule(func)
    for step in steps:
        if step.primitive != "cache_read":
            getattr(sch, step.primitive)(**dict(step.inputs))
    return sch


def test_cache_read_as_a_primitive_keeps_the_values():
    sch = _bound_softmax()
    before = sch.func
    block = sch.cache_read("var_0", "local", [1], 128)
    assert block.name == "var_0_local"
    x = np.random.default_rng(4).standard_normal((2, 300)).astype(np.float32)
    want, got = np.zeros_like(x), np.zeros_like(x)
    run_function(finish_schedule(before), {"var_0": x, "var_7": want})
    run_function(finish_schedule(sch.func), {"var_0": x, "var_7": got})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("var_0", "shared", [1], 128), "shared memory caches are not supported yet"),
        (("var_0", "texture", [1], 128), "unknown memory type 'texture'; use 'local'"),
        (("var_7", "local", [1], 128), "buffer var_7 is written by fn_group_0; only inputs"),
        (("var_9", "local", [1], 128), "fn_group_0 has no input buffer var_9"),
        (("var_0", "local", [2], 128), r"axes \[2\] out of range for \[2, 300\]"),
        (("var_0", "local", [1], 128, 0), "rows_per_block must be positive, got 0"),
        (("var_0", "local", [1], 128, 2), "not inside one loop on each of blockIdx.x, threadIdx.y"),
        (
            ("var_0", "local", [1], 64),
            r"is not at its own position of the row walk \(row blockIdx.x, column step \* 64 \+ threadIdx.x\)",
        ),  # noqa: E501
        (("var_0", "local", [0], 128), "is not at its own position of the row walk"),
    ],
)
def test_cache_read_refusals(args, message):
    sch = _bound_softmax()
    with pytest.raises(ScheduleError, match=message):
        sch.cache_read(*args)


def test_a_read_outside_the_walk_is_named():
    func, _ = lowered(softmax((2, 40)))  # not scheduled: no loop on blockIdx.x
    why = cache_problem(func, "var_0", [1], 32)
    assert why is not None
    assert re.search(
        r"the read var_0\[i0_0, r_0\] in block var_1_tmp is not inside one loop on each of "
        r"blockIdx.x, threadIdx.x",
        why,
    )


@pytest.mark.parametrize(("dtype", "steps"), [("float32", 8), ("float16", 8)])
def test_bench_sized_rows_stay_in_registers(dtype: str, steps: int) -> None:
    """[16384, 8192]: 1024 threads x 8 steps; NVRTC keeps the row in registers (no local
    memory in the PTX) and loads each element once (8 global loads per thread)."""
    text = SOFTMAX.format(shape="16384,8192", dims="16384x8192", axis=-1)
    if dtype == "float16":
        text = text.replace("float32", "float16").replace("xf32", "xf16")
    compiler = PIRCompiler(parse_program(text), "cuda", arch="sm_90")
    (kernel,) = compiler.stages(until="scheduled").fused
    source = generate_cuda([kernel.scheduled.func]).source
    assert f"var_0_local[{steps}];" in source
    ptx = nvrtc.compile_ptx(source, "sm_90")
    assert "__local_depot" not in ptx and ".local" not in ptx
    assert ptx.count("ld.global") == steps
