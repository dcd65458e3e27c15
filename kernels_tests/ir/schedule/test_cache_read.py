"""cache_read to local memory: the golden IR of the fill block and of the redirected
reads (scalar walk, and vectors of 4 and 8 lanes), values kept (interpreter and
cuda-emu), the register array in CUDA, vector loads in NVRTC's PTX, trace replay, and
every refusal with its message."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.finish import finish_schedule
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.schedule.cache_read import cache_problem
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.tolerances import compare

SOFTMAX = """{{
    (%0) = "pd_op.data" () {{dtype:float32,name:"x",place:Place(undefined:0),shape:[{shape}],stop_gradient:[true]}} : () -> tensor<{dims}xf32>
    (%1) = "pd_op.softmax" (%0) {{axis:{axis},stop_gradient:[true]}} : (tensor<{dims}xf32>) -> tensor<{dims}xf32>
}}
"""  # noqa: E501


def softmax(shape: tuple[int, ...], axis: int = -1, dtype: str = "float32") -> str:
    text = SOFTMAX.format(
        shape=",".join(map(str, shape)), dims="x".join(map(str, shape)), axis=axis
    )
    return text.replace("float32", dtype).replace("xf32", "x" + DTYPE_SUFFIX[dtype])


DTYPE_SUFFIX = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64"}


def global_reads(source: str, name: str) -> int:
    """The reads of global buffer `name` in CUDA source: scalar (`name[...]`) and vector
    (`reinterpret_cast<const cinn_vec<...>*>(name + ...)`)."""
    scalar = re.findall(rf"\b{name}\[", source)
    vector = re.findall(rf"reinterpret_cast<const cinn_vec<[^>]*>\*>\({name} \+", source)
    return len(scalar) + len(vector)


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
      read_buffers(var_0[var_0_d0(0:2), var_0_d1(0:39)])
      write_buffers(var_0_local[var_0_local_d0(0:2), var_0_local_d1(0:2), var_0_local_d2(0:32)])
      if ((((var_0_local_i1 * 32) + var_0_local_i2) < 39)) {
        var_0_local[var_0_local_i0, var_0_local_i1, var_0_local_i2] = var_0[var_0_local_i0, ((var_0_local_i1 * 32) + var_0_local_i2)]
      }
    }
"""  # noqa: E501

MAX_READ = "Reduce(Max across threadIdx.x, Reduce(Max, select((((r_0_o * 32) + r_0_t) < 39), var_0_local[i0_0, r_0_o, r_0_t], -inf),-inf),-inf)"  # noqa: E501
EXP_READ = "var_0_local[i0_1, i_3_0, i_3_1]"  # the exp, computed once into registers


def test_row_schedule_caches_a_softmax_row_golden():
    """39 cols: no power of two above 1 divides the row, so V = 1 (the scalar walk)."""
    func, pattern = lowered(softmax((2, 39)))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    text = print_ir(result.func)
    assert FILL_BLOCK in text
    assert f"var_2_tmp[i0_0, i1_0] = {MAX_READ}" in text
    assert EXP_READ in text and "unroll for (i_3_0, 0, 2)" in text
    assert not re.search(r"var_0\[i", text.split("ScheduleBlock(var_2_tmp)")[1])
    cache = result.func.temp_buffers[-1]
    assert (cache.name, cache.memory_type.value, cache.array_dims) == (
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


FILL_BLOCK_V4 = """\
    thread_bind[blockIdx.x] for (var_0_local_row, 0, 1)
    thread_bind[threadIdx.y] for (var_0_local_warp, 0, 2)
    unroll for (var_0_local_s, 0, 1)
    thread_bind[threadIdx.x] for (var_0_local_t, 0, 32)
    vectorize[4] for (var_0_local_v, 0, 4)
    if ((((((var_0_local_s * 32) + var_0_local_t) * 4) + var_0_local_v) < 40)) {
      ScheduleBlock(var_0_local)
      {
        var_0_local_i0, var_0_local_i1, var_0_local_i2, var_0_local_i3 = axis.bind(((var_0_local_row * 2) + var_0_local_warp), var_0_local_s, var_0_local_t, var_0_local_v)
        read_buffers(var_0[var_0_d0(0:2), var_0_d1(0:40)])
        write_buffers(var_0_local[var_0_local_d0(0:2), var_0_local_d1(0:1), var_0_local_d2(0:32), var_0_local_d3(0:4)])
        var_0_local[var_0_local_i0, var_0_local_i1, var_0_local_i2, var_0_local_i3] = var_0[var_0_local_i0, ((((var_0_local_i1 * 32) + var_0_local_i2) * 4) + var_0_local_i3)]
      }
    }
"""  # noqa: E501

MAX_READ_V4 = "Reduce(Max across threadIdx.x, Reduce(Max, select((((r_0_t * 4) + r_0_v) < 40), var_0_local[i0_0, 0, r_0_t, r_0_v], -inf),-inf),-inf)"  # noqa: E501
NORMALIZE_V4 = """\
            vectorize[4] for (i_3_2, 0, 4)
            {
              if (((((i_3_0 * 128) + (i_3_1 * 4)) + i_3_2) < 40)) {
                ScheduleBlock(var_6_tmp)
                {
                  i0_1, i1_1 = axis.bind(((i_2_0 * 2) + i_2_1), (((i_3_0 * 128) + (i_3_1 * 4)) + i_3_2))
                  read_buffers(var_0_local[var_0_local_d0(0:2), var_0_local_d1(0:1), var_0_local_d2(0:32), var_0_local_d3(0:4)], var_2_tmp[i0_1(0:2), var_2_tmp_d1(0:1)])
                  write_buffers(var_6_tmp_local[var_6_tmp_local_d0(0:2), var_6_tmp_local_d1(0:1), var_6_tmp_local_d2(0:32), var_6_tmp_local_d3(0:4)])
                  attrs(computed_once:1)
                  var_6_tmp_local[i0_1, i_3_0, i_3_1, i_3_2] = exp(select(((var_0_local[i0_1, i_3_0, i_3_1, i_3_2] - var_2_tmp[i0_1, 0]) <= -64.0000000f), -64.0000000f, (var_0_local[i0_1, i_3_0, i_3_1, i_3_2] - var_2_tmp[i0_1, 0])))
"""  # noqa: E501


def test_vector_lanes_of_4_golden():
    """40 float32 cols: V = 4 (16 bytes), 10 vectors on a warp, one step: the fill loads a
    vector per thread (guarded as a whole: 4 divides 40), the max folds the thread's 4
    lanes, the normalize writes a vector from the registers."""
    func, pattern = lowered(softmax((2, 40)))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    text = print_ir(result.func)
    assert FILL_BLOCK_V4 in text
    assert f"var_2_tmp[i0_0, i1_0] = {MAX_READ_V4}" in text
    assert NORMALIZE_V4 in text
    cache = result.func.temp_buffers[-1]
    assert [d.value for d in cache.shape] == [2, 1, 32, 4] and cache.array_dims == (1, 3)
    assert (
        "factorize_reduction(block=var_2_tmp, threads=32, thread_axis=threadIdx.x, lanes=4)"
        in str(result.trace)
    )
    assert str(result.trace).endswith(
        "cache_read(buffer=var_0, memory_type=local, axes=[1], threads=32, rows_per_block=2,"
        " lanes=4) -> var_0_local"
    )
    assert structural_equal(result.replay(func), result.func)


FILL_BLOCK_V8 = """\
    thread_bind[blockIdx.x] for (var_0_local_row, 0, 1)
    thread_bind[threadIdx.y] for (var_0_local_warp, 0, 4)
    unroll for (var_0_local_s, 0, 3)
    thread_bind[threadIdx.x] for (var_0_local_t, 0, 32)
    vectorize[8] for (var_0_local_v, 0, 8)
    if ((((((var_0_local_s * 32) + var_0_local_t) * 8) + var_0_local_v) < 600)) {
      ScheduleBlock(var_0_local)
      {
        var_0_local_i0, var_0_local_i1, var_0_local_i2, var_0_local_i3 = axis.bind(cinn_min(((var_0_local_row * 4) + var_0_local_warp), 2), var_0_local_s, var_0_local_t, var_0_local_v)
        read_buffers(var_0[var_0_d0(0:3), var_0_d1(0:600)])
        write_buffers(var_0_local[var_0_local_d0(0:3), var_0_local_d1(0:3), var_0_local_d2(0:32), var_0_local_d3(0:8)])
        var_0_local[var_0_local_i0, var_0_local_i1, var_0_local_i2, var_0_local_i3] = var_0[var_0_local_i0, ((((var_0_local_i1 * 32) + var_0_local_i2) * 8) + var_0_local_i3)]
      }
    }
"""  # noqa: E501

SUM_READ_V8 = "Reduce(sum across threadIdx.x, Reduce(sum, select((((((r_1_o * 32) + r_1_t) * 8) + r_1_v) < 600), var_10_tmp_local[i0_2, r_1_o, r_1_t, r_1_v], 0.00000000f),0.00000000f),0.00000000f)"  # noqa: E501


def test_vector_lanes_of_8_golden():
    """3 rows of 600 float16: V = 8 (16 bytes), 75 vectors, a warp per row (4 a block, the
    fourth warp clamped onto the last row), 3 steps with a guard on the last."""
    func, pattern = lowered(softmax((3, 600), dtype="float16"))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    text = print_ir(result.func)
    assert FILL_BLOCK_V8 in text
    assert f"var_12_tmp[i0_2, i1_2] = {SUM_READ_V8}" in text  # (float16's exp: 2 ** (s log2 e))
    assert (
        "split(loop=i_7, factors=[3, 32, 8]) -> [i_7_0, i_7_1, i_7_2]\nvectorize(loop=i_7_2, factor=8)"
        in str(result.trace)
    )
    assert structural_equal(result.replay(func), result.func)
    x = np.random.default_rng(6).standard_normal((3, 600)).astype(np.float16)
    out = np.zeros_like(x)
    run_function(result.func, {"var_0": x, "var_1": out})
    xf = x.astype(np.float32)
    e = np.exp(xf - xf.max(-1, keepdims=True))
    assert compare(out, (e / e.sum(-1, keepdims=True)).astype(np.float16)).ok


@pytest.mark.parametrize(
    ("shape", "axis"),
    [((2, 40), -1), ((2, 39), -1), ((3, 64), -1), ((2, 33, 5), 1), ((7, 3, 4), 0), ((8, 2, 4), 0)],
)
def test_cached_schedule_keeps_the_values(shape, axis):
    func, pattern = lowered(softmax(shape, axis))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    assert any(b.array_dims for b in result.func.temp_buffers)
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    out = np.zeros(shape, np.float32)
    run_function(result.func, {"var_0": x, "var_1": out})
    e = np.exp(x - x.max(axis, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis, keepdims=True), rtol=1e-5, atol=1e-7)


def test_cuda_source_reads_the_row_once_into_a_register_array():
    program = parse_program(softmax((4, 3001)))  # odd: V = 1
    exe = cinn_py.compile(program, target="cuda-emu")
    source = exe.cuda_source
    assert "float var_0_local[3];" in source  # 3001 cols / 1024 threads
    kernel = source[source.index('extern "C"') :]
    assert global_reads(source, "var_0") == 1 and "cinn_vec" not in kernel
    # the max reads the registers, so does the exp (computed once, into registers too;
    # its floor at -64 is one cinn_max_nan, which reads x - max once)
    assert source.count("var_0_local[r_0_o]") == 1 and source.count("var_0_local[i_3_0]") == 1
    # every loop indexing the register array is unrolled
    for loop in re.findall(r"(.*)\n\s*for \(int (\w+) = 0; \w+ < 3;", source):
        assert "#pragma unroll" in loop[0], loop
    x = np.random.default_rng(3).standard_normal((4, 3001)).astype(np.float32)
    (out,) = exe.run({"x": x}).values()
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-8)


VECTOR_SOURCE = """\
      const cinn_vec<float, 4> var_0_vec = *reinterpret_cast<const cinn_vec<float, 4>*>(var_0 + ((var_0_local_row * 3000) + (var_0_local_s * 1024)) + (var_0_local_t * 4));
      #pragma unroll
      for (int var_0_local_v = 0; var_0_local_v < 4; ++var_0_local_v) {
        const int var_0_local_i0 = var_0_local_row;
        const int var_0_local_i1 = var_0_local_s;
        const int var_0_local_i2 = var_0_local_t;
        const int var_0_local_i3 = var_0_local_v;
        var_0_local[(var_0_local_i1 * 4) + var_0_local_i3] = var_0_vec.v[var_0_local_v];
      }"""  # noqa: E501


def test_cuda_source_fills_the_registers_with_vector_loads():
    """3000 float32 cols: V = 4, T = 256, S = 3: one 16-byte load a step (under one guard
    for its 4 lanes), 4 register moves; the normalize stores whole vectors."""
    program = parse_program(softmax((4, 3000)))
    exe = cinn_py.compile(program, target="cuda-emu")
    source = exe.cuda_source
    assert "float var_0_local[12];" in source
    assert VECTOR_SOURCE in source
    assert "if (((var_0_local_s * 1024) + (var_0_local_t * 4)) < 3000) {" in source
    assert global_reads(source, "var_0") == 1
    assert "*reinterpret_cast<cinn_vec<float, 4>*>(var_1 + " in source
    x = np.random.default_rng(3).standard_normal((4, 3000)).astype(np.float32)
    (out,) = exe.run({"x": x}).values()
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-8)


def _bound_softmax(cols: int = 301):
    """A softmax with the row schedule's loops (a block of 128 threads per row; 301 cols:
    V = 1) but no cache yet."""
    func, pattern = lowered(softmax((2, cols)))
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
    x = np.random.default_rng(4).standard_normal((2, 301)).astype(np.float32)
    want, got = np.zeros_like(x), np.zeros_like(x)
    run_function(finish_schedule(before), {"var_0": x, "var_1": want})
    run_function(finish_schedule(sch.func), {"var_0": x, "var_1": got})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("var_0", "shared", [1], 128),
            r"a tile that threads share is cache_tile's \(shared memory\)",
        ),
        (("var_0", "texture", [1], 128), "unknown memory type 'texture'; use 'local'"),
        (("var_1", "local", [1], 128), "buffer var_1 is written by fn_group_0; only inputs"),
        (("var_9", "local", [1], 128), "fn_group_0 has no input buffer var_9"),
        (("var_0", "local", [2], 128), r"axes \[2\] out of range for \[2, 301\]"),
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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("var_0", "local", [1], 32, 8, 0), "lanes must be positive, got 0"),
        (
            ("var_0", "local", [1], 32, 8, 2),
            r"is not at its own position of the row walk \(row blockIdx.x, column \(step \* 32 "
            r"\+ threadIdx.x\) \* 2 \+ lane\)",
        ),
        (("var_0", "local", [1], 32, 8), "is not at its own position of the row walk"),
    ],
)
def test_cache_read_refusals_with_lanes(args, message):
    """A walk of 4 lanes (300 float32 cols) read as one of 2 lanes, or of none."""
    sch = _bound_softmax(300)
    with pytest.raises(ScheduleError, match=message):
        sch.cache_read(*args)


def test_cache_read_with_lanes_as_a_primitive_keeps_the_values():
    sch = _bound_softmax(300)
    before = sch.func
    sch.cache_read("var_0", "local", [1], 32, 8, 4)
    x = np.random.default_rng(4).standard_normal((2, 300)).astype(np.float32)
    want, got = np.zeros_like(x), np.zeros_like(x)
    run_function(finish_schedule(before), {"var_0": x, "var_1": want})
    run_function(finish_schedule(sch.func), {"var_0": x, "var_1": got})
    np.testing.assert_array_equal(got, want)


def test_a_read_outside_the_walk_is_named():
    func, _ = lowered(softmax((2, 40)))  # not scheduled: no loop on blockIdx.x
    why = cache_problem(func, "var_0", [1], 32)
    assert why is not None
    assert re.search(
        r"the read var_0\[i0_0, r_0\] in block var_2_tmp is not inside one loop on each of "
        r"blockIdx.x, threadIdx.x",
        why,
    )


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize(
    ("dtype", "registers", "vector"),
    [("float32", "float var_0_local[16];", "f32"), ("float16", "__half var_0_local[32];", "u32")],
)
def test_bench_sized_rows_stay_in_registers(dtype: str, registers: str, vector: str, arch: str):
    """[16384, 8192]: V = 16 bytes (4 float32, 8 float16) lanes, 4 vectors a thread (512
    or 256 threads); NVRTC keeps the row in registers (no local memory in the PTX), loads
    each element once with 4 16-byte loads a thread, and stores 4 vectors."""
    text = SOFTMAX.format(shape="16384,8192", dims="16384x8192", axis=-1)
    if dtype == "float16":
        text = text.replace("float32", "float16").replace("xf32", "xf16")
    compiler = PIRCompiler(parse_program(text), "cuda", arch=arch)
    (kernel,) = compiler.stages(until="scheduled").fused
    assert kernel.scheduled.launch.threads == (512 if dtype == "float32" else 256)
    source = generate_cuda([kernel.scheduled.func]).source
    assert registers in source
    ptx = nvrtc.compile_ptx(source, arch)
    assert "__local_depot" not in ptx and ".local" not in ptx
    loads = re.findall(r"ld\.global(?:\.nc)?\.v4\.(\w+)", ptx)
    assert loads == [vector] * 4, loads
    assert ptx.count("ld.global") == 4
    assert len(re.findall(r"st\.global\.v4\.", ptx)) == 4
