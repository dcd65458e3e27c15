"""The column schedule of column reductions: which groups take it, its trace and IR
(golden), the launch, numbers on cuda-emu against the reference executor, NVRTC for the
GPU's 2-D block, and the refusals of the primitive and of codegen."""

from __future__ import annotations

import numpy as np
import pytest
from auto_schedule_funcs import Output
from auto_schedule_funcs import lowered as hand_lowered
from reduction_programs import lowered, reduction

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import ScheduleError, UnsupportedOpError
from cinn_py.ir.bound_guards import insert_bound_guards
from cinn_py.ir.expr import Call, CallType, FloatImm, Load
from cinn_py.ir.group_schedule import RowPattern, TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.column_schedule import (
    ColumnLaunch,
    column_threads,
    columns_pattern,
)
from cinn_py.ir.group_schedule.finish import finish_schedule
from cinn_py.ir.group_schedule.tactics import ColumnTactic
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

CUDA, EMU = TargetInfo.cuda(), TargetInfo.cuda_emu()
F32, F16, BF16 = DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16
I32, BOOL = DataType.INT32, DataType.BOOL


def feed(shape, dtype, seed=0, nan=False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype is BOOL:
        return rng.random(shape) < 0.9  # mostly true: `all` is not always false
    if dtype is I32:
        return rng.integers(-3, 4, shape).astype(np.int32)
    x = rng.uniform(0.7, 1.3, shape).astype(np.float32)  # a product stays finite
    if nan:
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, 3, replace=False)] = np.nan
    return x.astype(dtype.numpy)


# ---- which groups take it -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "axes", "takes"),
    [
        ((300, 40), (0,), True),  # outer axis
        ((5, 37, 70), (1,), True),  # middle axis
        ((5, 37, 70), (0, 1), True),  # leading axes
        ((9, 3, 7, 64), (0, 2), True),  # reduced dims before a kept innermost one
        ((300, 1, 33), (0, 1), True),  # a reduced unit dim does not count
        ((300, 40, 1), (0,), True),  # nor a kept one after the innermost
        ((300, 40, 1), (0, 2), True),
        ((300, 31), (0,), False),  # innermost kept extent under 32: flat
        ((5, 37, 7), (1,), False),
        ((9, 3, 64), (0, 2), False),  # the innermost dim is reduced: lanes would stride
        ((300, 40), (1,), False),  # a row reduction
        ((300, 40), (0, 1), False),  # a full reduction
        ((1, 40), (0,), False),  # nothing to reduce
        ((7, 40), (0,), False),  # too short a column for two threads of 4 elements
    ],
)
def test_which_patterns_take_the_column_schedule(shape, axes, takes):
    func, pattern = lowered(reduction(shape, axes, False))
    assert (ColumnTactic().accepts(func, EMU, pattern) is None) is takes
    result = auto_schedule(func, EMU, pattern)
    assert isinstance(result.launch, ColumnLaunch) is takes
    assert (result.tactic == "column") is takes


def test_pattern_facts():
    assert columns_pattern(RowPattern((8192, 8192), (0,)))
    assert not columns_pattern(RowPattern((8, 40, 64), (0, 2)))
    assert not columns_pattern(RowPattern((1, 1), (0,)))
    assert not columns_pattern(RowPattern((), ()))


@pytest.mark.parametrize(
    ("shape", "axes", "target", "threads_y"),
    [
        ((8192, 8192), (0,), CUDA, 32),  # 256 blocks of 32 x 32: the grid wants more
        ((64, 1 << 21), (0,), CUDA, 1),  # 2^21 outputs fill the GPU on their own
        ((64, 1 << 20), (0,), CUDA, 2),
        ((64, 65536), (0,), CUDA, 16),  # 16 = 64 / 4 elements per thread
        ((8, 100), (0,), CUDA, 2),
        ((300, 40), (0,), EMU, 32),
        ((300, 1024), (0,), EMU, 2),  # the emulator wants 2048 threads
        ((300, 4096), (0,), EMU, 1),
    ],
)
def test_threads_along_y(shape, axes, target, threads_y):
    assert column_threads(RowPattern(shape, axes), target) == threads_y


def test_what_reads_a_reduction_back_and_argmax_take_it():
    mean, pattern = lowered(reduction((300, 40), (0,), False, ops=("mean",)))
    assert (
        mean.temp_buffers and ColumnTactic().accepts(mean, EMU, pattern) is None
    )  # sum, then * 1/N
    assert auto_schedule(mean, EMU, pattern).launch == ColumnLaunch(
        threads=32, blocks=2, steps=1, threads_y=32
    )
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[300, 40], dtype=F32)
    b.op("pd_op.argmax", x, b.op("pd_op.full", shape=[1], value=0, dtype=DataType.INT64))
    arg, pattern = lowered(program)
    assert ColumnTactic().accepts(arg, EMU, pattern) is None  # ArgReduce: (value, position) pairs
    launch = auto_schedule(arg, EMU, pattern).launch
    assert launch == ColumnLaunch(threads=32, blocks=2, steps=1, threads_y=32)


def normalize_columns(shape, axes, dtype=F32, affine=False) -> Program:
    """Batch-norm's training arithmetic over `axes` (the kept innermost dim the
    channels): mean, centered variance, (x - mean) * rsqrt(var + eps) [* w + b]; the
    normalized x, the mean and the variance are outputs."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    if dtype is not F32:
        x = b.op("pd_op.cast", x, dtype=F32)
    mean = b.op("pd_op.mean", x, b.op("pd_op.full_int_array", value=list(axes)), keepdim=True)
    centered = b.op("pd_op.subtract", x, mean)
    square = b.op("pd_op.multiply", centered, centered)
    var = b.op("pd_op.mean", square, b.op("pd_op.full_int_array", value=list(axes)), keepdim=True)
    eps = b.op("pd_op.full", shape=[1], value=1e-5, dtype=F32)
    rstd = b.op("pd_op.rsqrt", b.op("pd_op.add", var, eps))
    out = b.op("pd_op.multiply", centered, rstd)
    if affine:
        channels = [shape[-1]]
        w = b.op("pd_op.data", name="w", shape=channels, dtype=F32)
        bias = b.op("pd_op.data", name="b", shape=channels, dtype=F32)
        out = b.op("pd_op.add", b.op("pd_op.multiply", out, w), bias)
    if dtype is not F32:
        out = b.op("pd_op.cast", out, dtype=dtype)
    for col, (name, value) in enumerate((("out", out), ("mean", mean), ("var", var))):
        b.op("pd_op.fetch", value, name=name, col=col)
    return program


NORMALIZE_CASES = {
    # id: (shape, axes, dtype, affine)
    "nc-f32": ((300, 40), (0,), F32, False),
    "nc-f32-affine": ((129, 96), (0,), F32, True),
    "nhwc-f32": ((7, 5, 3, 64), (0, 1, 2), F32, True),
    "nc-f16": ((200, 48), (0,), F16, False),
    "nc-bf16-affine": ((100, 64), (0,), BF16, True),
    "exact-multiples": ((256, 128), (0,), F32, False),
}


@pytest.mark.parametrize("case", NORMALIZE_CASES, ids=NORMALIZE_CASES)
def test_a_group_that_reads_its_column_reductions_back(case):
    """One 2-D-block kernel: the reductions' totals stay in registers (set_buffer local)
    and the full-shaped values walk their columns the way the partials did."""
    shape, axes, dtype, affine = NORMALIZE_CASES[case]
    program = normalize_columns(shape, axes, dtype, affine)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    x = float32_to_bfloat16(x) if dtype is BF16 else x.astype(dtype.numpy)
    feeds = {"x": x}
    if affine:
        feeds["w"] = rng.uniform(0.5, 1.5, shape[-1]).astype(np.float32)
        feeds["b"] = rng.uniform(-1, 1, shape[-1]).astype(np.float32)
    exe = cinn_py.compile(program, target="cuda-emu")
    (kernel,) = exe.kernels
    assert kernel.block == (32, column_threads(RowPattern(shape, axes), EMU), 1)
    assert "cinn_block_reduce_y<32, " in exe.cuda_source
    got = exe.run(feeds)
    want = run_reference(program, feeds)
    for (name, value), expected in zip(got.items(), want, strict=True):
        kind = "bfloat16" if np.asarray(expected).dtype == np.uint16 else None
        result = compare(np.asarray(value), np.asarray(expected), kind)
        assert result.ok, f"{name}: {result}"


COLUMN_READ_BACK = """\
function fn_group_0 (var_0, var_4)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_i_1_fused_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (i_0_i_1_fused_1, 0, 32)
      {
        ScheduleBlock(var_1_tmp)
        {
          i0_0, i1_0 = axis.bind(0, cinn_min(((i_0_i_1_fused_0 * 32) + i_0_i_1_fused_1), 39))
          read_buffers(var_0[r_0(0:70), i1_0(0:40)])
          write_buffers(var_1_tmp[i0_0(0:1), i1_0(0:40)])
          var_1_tmp[i0_0, i1_0] = Reduce(sum across threadIdx.y, Reduce(sum, select((((r_0_o * 16) + r_0_t) < 70), var_0[((r_0_o * 16) + r_0_t), i1_0], 0.00000000f),0.00000000f),0.00000000f)
        }
      }
    }
    thread_bind[blockIdx.x] for (i_3_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (i_3_1, 0, 32)
      {
        serial for (i_2_0, 0, 5)
        {
          thread_bind[threadIdx.y] for (i_2_1, 0, 16)
          {
            if (((((i_2_0 * 16) + i_2_1) < 70) and (((i_3_0 * 32) + i_3_1) < 40))) {
              ScheduleBlock(var_4)
              {
                i0_1, i1_1 = axis.bind(((i_2_0 * 16) + i_2_1), ((i_3_0 * 32) + i_3_1))
                read_buffers(var_0[i0_1(0:70), i1_1(0:40)], var_1_tmp[var_1_tmp_d0(0:1), i1_1(0:40)])
                write_buffers(var_4[i0_1(0:70), i1_1(0:40)])
                var_4[i0_1, i1_1] = (var_0[i0_1, i1_1] - (var_1_tmp[0, i1_1] / 70.0000000f))
              }
            }
          }
        }
      }
    }
  }
}"""  # noqa: E501


def test_golden_column_read_back():
    """x - mean(x, axis=0, keepdim) of [70, 40]: the sum in a register of each (x, y)
    thread, the subtraction walking rows y, y + 16, ... of its lane's column."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[70, 40], dtype=F32)
    mean = b.op("pd_op.mean", x, b.op("pd_op.full_int_array", value=[0]), keepdim=True)
    b.op("pd_op.subtract", x, mean)
    func, pattern = lowered(program)
    result = auto_schedule(func, EMU, pattern)
    assert print_ir(result.func) == COLUMN_READ_BACK
    assert result.launch == ColumnLaunch(threads=32, blocks=2, steps=1, threads_y=16)
    assert [b.memory_type.value for b in result.func.temp_buffers] == ["local"]
    assert structural_equal(result.replay(func), result.func)
    x_value = feed((70, 40), F32)
    buffers = {"var_0": x_value, "var_4": np.zeros((70, 40), np.float32)}
    run_function(result.func, buffers)
    np.testing.assert_allclose(buffers["var_4"], x_value - x_value.mean(0), rtol=1e-5, atol=1e-6)


def test_column_read_back_compiles_with_nvrtc():
    program = normalize_columns((8192, 1024), (0,), F16, affine=True)
    stages = PIRCompiler(program, "cuda", arch="sm_90").stages()
    (kernel,) = stages.source.kernels
    assert kernel.grid == (32, 1, 1) and kernel.block == (32, 32, 1)
    for arch in ("sm_80", "sm_90"):
        try:
            cubin = nvrtc.compile(stages.source.source, arch, name="column_read_back.cu")
        except (FileNotFoundError, OSError, ImportError) as error:
            pytest.skip(f"NVRTC is not available: {error}")
        assert cubin[:4] == b"\x7fELF"


# ---- trace, IR, launch ----------------------------------------------------------------------------

TRACE = """\
cache_write(block=var_2) -> var_2_write
cache_write(block=var_3) -> var_3_write
split(loop=i_0, factors=[2, 32]) -> [i_0_0, i_0_1]
bind(loop=i_0_0, thread_axis=blockIdx.x)
bind(loop=i_0_1, thread_axis=threadIdx.x)
factorize_reduction(block=var_2, threads=32, thread_axis=threadIdx.y)
split(loop=var_2_write_l0, factors=[2, 32, 1]) -> [var_2_write_l0_0, var_2_write_l0_1, var_2_write_l0_2]
bind(loop=var_2_write_l0_0, thread_axis=blockIdx.x)
bind(loop=var_2_write_l0_1, thread_axis=threadIdx.x)
bind(loop=var_2_write_l0_2, thread_axis=threadIdx.y)
fuse(loops=[i_1, i_2]) -> i_1_i_2_fused
split(loop=i_1_i_2_fused, factors=[2, 32]) -> [i_1_i_2_fused_0, i_1_i_2_fused_1]
bind(loop=i_1_i_2_fused_0, thread_axis=blockIdx.x)
bind(loop=i_1_i_2_fused_1, thread_axis=threadIdx.x)
factorize_reduction(block=var_3, threads=32, thread_axis=threadIdx.y)
fuse(loops=[var_3_write_l0, var_3_write_l1]) -> var_3_write_l0_var_3_write_l1_fused
split(loop=var_3_write_l0_var_3_write_l1_fused, factors=[2, 32, 1]) -> [var_3_write_l0_var_3_write_l1_fused_0, var_3_write_l0_var_3_write_l1_fused_1, var_3_write_l0_var_3_write_l1_fused_2]
bind(loop=var_3_write_l0_var_3_write_l1_fused_0, thread_axis=blockIdx.x)
bind(loop=var_3_write_l0_var_3_write_l1_fused_1, thread_axis=threadIdx.x)
bind(loop=var_3_write_l0_var_3_write_l1_fused_2, thread_axis=threadIdx.y)
set_buffer(block=var_2, memory_type=local)
set_buffer(block=var_3, memory_type=local)"""

SCHEDULED = """\
function fn_group_0 (var_0, var_2, var_3)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (i_0_1, 0, 32)
      {
        ScheduleBlock(var_2)
        {
          i0_0 = axis.bind(cinn_min(((i_0_0 * 32) + i_0_1), 39))
          read_buffers(var_0[r_0(0:300), i0_0(0:40)])
          write_buffers(var_2_tmp[i0_0(0:40)])
          var_2_tmp[i0_0] = Reduce(sum across threadIdx.y, Reduce(sum, select((((r_0_o * 32) + r_0_t) < 300), exp(var_0[((r_0_o * 32) + r_0_t), i0_0]), 0.00000000f),0.00000000f),0.00000000f)
        }
      }
    }
    thread_bind[blockIdx.x] for (var_2_write_l0_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (var_2_write_l0_1, 0, 32)
      {
        thread_bind[threadIdx.y] for (var_2_write_l0_2, 0, 1)
        if (((((var_2_write_l0_0 * 32) + var_2_write_l0_1) + var_2_write_l0_2) < 40)) {
          ScheduleBlock(var_2_write)
          {
            var_2_write_i0 = axis.bind((((var_2_write_l0_0 * 32) + var_2_write_l0_1) + var_2_write_l0_2))
            read_buffers(var_2_tmp[var_2_write_i0(0:40)])
            write_buffers(var_2[var_2_write_i0(0:40)])
            var_2[var_2_write_i0] = var_2_tmp[var_2_write_i0]
          }
        }
      }
    }
    thread_bind[blockIdx.x] for (i_1_i_2_fused_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (i_1_i_2_fused_1, 0, 32)
      {
        ScheduleBlock(var_3)
        {
          i0_1, i1_1 = axis.bind(0, cinn_min(((i_1_i_2_fused_0 * 32) + i_1_i_2_fused_1), 39))
          read_buffers(var_0[r_1(0:300), i1_1(0:40)])
          write_buffers(var_3_tmp[i0_1(0:1), i1_1(0:40)])
          var_3_tmp[i0_1, i1_1] = Reduce(Max across threadIdx.y, Reduce(Max, select((((r_1_o * 32) + r_1_t) < 300), exp(var_0[((r_1_o * 32) + r_1_t), i1_1]), -inf),-inf),-inf)
        }
      }
    }
    thread_bind[blockIdx.x] for (var_3_write_l0_var_3_write_l1_fused_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (var_3_write_l0_var_3_write_l1_fused_1, 0, 32)
      {
        thread_bind[threadIdx.y] for (var_3_write_l0_var_3_write_l1_fused_2, 0, 1)
        if (((((var_3_write_l0_var_3_write_l1_fused_0 * 32) + var_3_write_l0_var_3_write_l1_fused_1) + var_3_write_l0_var_3_write_l1_fused_2) < 40)) {
          ScheduleBlock(var_3_write)
          {
            var_3_write_i0, var_3_write_i1 = axis.bind(0, (((var_3_write_l0_var_3_write_l1_fused_0 * 32) + var_3_write_l0_var_3_write_l1_fused_1) + var_3_write_l0_var_3_write_l1_fused_2))
            read_buffers(var_3_tmp[var_3_write_i0(0:1), var_3_write_i1(0:40)])
            write_buffers(var_3[var_3_write_i0(0:1), var_3_write_i1(0:40)])
            var_3[var_3_write_i0, var_3_write_i1] = var_3_tmp[var_3_write_i0, var_3_write_i1]
          }
        }
      }
    }
  }
}"""  # noqa: E501


def sum_and_max_of_exp():
    """sum(exp(x), 0) and max(exp(x), 0, keepdim) of a [300, 40] x: the exp inlined in
    both, 40 outputs (a block and 8 lanes past the end), 300 rows (not a multiple of 32)."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.exp", b.op("pd_op.data", name="x", shape=[300, 40], dtype=F32))
    b.op("pd_op.sum", x, b.op("pd_op.full_int_array", value=[0]), dtype=DataType.UNDEFINED)
    b.op("pd_op.max", x, b.op("pd_op.full_int_array", value=[0]), keepdim=True)
    return lowered(program)


def test_golden_trace_and_ir():
    func, pattern = sum_and_max_of_exp()
    result = auto_schedule(func, CUDA, pattern)
    assert str(result.trace) == TRACE
    assert print_ir(result.func) == SCHEDULED  # clamped lanes, no guard around the combine
    assert result.launch == ColumnLaunch(threads=32, blocks=2, steps=1, threads_y=32)
    assert structural_equal(result.replay(func), result.func)


def test_the_clamped_schedule_computes_what_the_lowered_function_does():
    """In the interpreter (which checks every iter var against its range), the lanes past
    the end store the last elements again, with the same values."""
    func, pattern = lowered(reduction((67, 45), (0,), True, I32, ops=("sum", "max")))
    scheduled = auto_schedule(func, EMU, pattern).func
    x = feed((67, 45), I32)

    outputs = [a.value for a in func.args if a.name != "var_0"]

    def run(f):
        buffers = {"var_0": x}
        for out in outputs:
            shape = tuple(int(d.value) for d in out.shape)
            buffers[out.name] = np.full(shape, -99, out.dtype.numpy)
        run_function(f, buffers)
        return [buffers[out.name] for out in outputs]

    got, want = run(scheduled), run(func)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(want[0], x.sum(0, keepdims=True))


def test_8192_squared_on_the_gpu_is_one_2d_block_per_32_columns_in_vectors():
    """The lanes rule: 32 outputs a block as 8 threads of 4 (one 16-byte load of each
    row a thread), 128 threads down each column slice."""
    program = reduction((8192, 8192), (0,), False)
    stages = PIRCompiler(program, "cuda", arch="sm_90").stages()
    (kernel,) = stages.source.kernels
    assert kernel.grid == (256, 1, 1) and kernel.block == (8, 128, 1)
    source = stages.source.source
    assert "cinn_block_reduce_y<8, 128>(" in source and "cinn_block_reduce<" not in source
    assert "cinn_vec<float, 4> var_0_vec = *reinterpret_cast" in source
    assert "__launch_bounds__(1024)" in source
    for arch in ("sm_80", "sm_90"):
        try:
            cubin = nvrtc.compile(source, arch, name="column_8192.cu")
        except (FileNotFoundError, OSError, ImportError) as error:
            pytest.skip(f"NVRTC is not available: {error}")
        assert cubin[:4] == b"\x7fELF"


def test_half_floats_and_bools_compile_with_nvrtc():
    funcs = []
    for i, (dtype, ops) in enumerate([(F16, ("sum", "max")), (BF16, ("min",)), (BOOL, ("any",))]):
        stages = PIRCompiler(reduction((100, 3, 64), (0, 1), True, dtype, ops), "cuda").stages(
            until="scheduled"
        )
        (kernel,) = stages.fused
        func = kernel.scheduled.func
        funcs.append(type(func)(f"{func.name}_{i}", func.args, func.body, func.temp_buffers))
    source = generate_cuda(funcs)
    assert all(k.block[1] > 1 for k in source.kernels)
    try:
        cubin = nvrtc.compile(source.source, "sm_80", name="column_halves.cu")
    except (FileNotFoundError, OSError, ImportError) as error:
        pytest.skip(f"NVRTC is not available: {error}")
    assert cubin[:4] == b"\x7fELF"


# ---- numbers on cuda-emu ----------------------------------------------------------------------

FLOAT_OPS = ("sum", "max", "min", "prod")
NUMBER_CASES = {
    # id: (shape, axes, keepdim, dtype, ops, exp)
    "outer-f32": ((300, 40), (0,), False, F32, FLOAT_OPS, False),
    "outer-f32-keep": ((300, 40), (0,), True, F32, FLOAT_OPS, False),
    "outer-exp-f32": ((129, 96), (0,), False, F32, ("sum", "max"), True),
    "middle-f32": ((5, 37, 70), (1,), False, F32, FLOAT_OPS, False),
    "middle-f32-keep": ((3, 64, 33), (1,), True, F32, FLOAT_OPS, False),
    "leading-two-f32": ((4, 33, 50), (0, 1), False, F32, ("sum", "min"), False),
    "split-axes-f32": ((9, 3, 7, 64), (0, 2), True, F32, ("sum", "max"), False),
    "unit-dims-f32": ((300, 1, 33, 1), (0, 1), False, F32, ("sum",), False),
    "unit-dims-keep-f32": ((300, 40, 1), (0, 2), True, F32, ("max",), False),
    "outer-f16": ((300, 40), (0,), False, F16, FLOAT_OPS, False),
    "middle-f16-keep": ((5, 37, 70), (1,), True, F16, ("sum", "max"), False),
    "outer-bf16": ((100, 64), (0,), False, BF16, ("sum", "min"), False),
    "outer-i32": ((67, 45), (0,), False, I32, ("sum", "max", "min", "prod"), False),
    "middle-i32-keep": ((2, 50, 32), (1,), True, I32, ("sum",), False),
    "outer-bool": ((40, 33), (0,), False, BOOL, ("all", "any"), False),
    "split-axes-bool-keep": ((9, 3, 7, 64), (0, 2), True, BOOL, ("all", "any"), False),
    "exact-multiples": ((256, 128), (0,), False, F32, ("sum",), False),
}


def _check(program: Program, x: np.ndarray, column: bool = True) -> None:
    exe = cinn_py.compile(program, target="cuda-emu")
    assert len(exe.kernels) == 1
    if column:  # 32 x lanes, or 32 / V x lanes with V outputs a thread (column_lanes)
        threads_x, threads_y, _ = exe.kernels[0].block
        assert threads_x in (2, 4, 8, 16, 32) and threads_y > 1
    got = exe.run({"x": x})
    want = run_reference(program, {"x": x})
    assert len(got) == len(want)
    for (name, value), expected in zip(got.items(), want, strict=True):
        dtype = "bfloat16" if np.asarray(expected).dtype == np.uint16 else None
        result = compare(np.asarray(value), np.asarray(expected), dtype)
        assert result.ok, f"{name}: {result}"


@pytest.mark.parametrize("case", NUMBER_CASES, ids=NUMBER_CASES)
def test_numbers_on_the_emulator(case):
    shape, axes, keepdim, dtype, ops, exp = NUMBER_CASES[case]
    x = float32_to_bfloat16(feed(shape, F32)) if dtype is BF16 else feed(shape, dtype)
    _check(reduction(shape, axes, keepdim, dtype, ops, exp), x)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_max_and_min_keep_nan(dtype):
    x = feed((300, 40), dtype, nan=True)
    assert np.isnan(x.astype(np.float32)).any(axis=0).sum() >= 2
    _check(reduction((300, 40), (0,), False, dtype, ("max", "min")), x)


@pytest.mark.parametrize(
    ("shape", "axes", "keepdim", "ops"),
    [
        ((3, 64, 33), (1,), True, ("mean",)),  # innermost kept extent 33, mean: 8 threads on y
        ((1, 40), (0,), True, ("sum", "max")),  # extents of 1: the flat schedule
        ((300, 1), (0,), False, ("sum",)),
    ],
)
def test_numbers_of_what_stays_off_the_column_schedule(shape, axes, keepdim, ops):
    _check(reduction(shape, axes, keepdim, F32, ops), feed(shape, F32), column=False)


# ---- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("threads", "axis", "message"),
    [
        (1, "threadIdx.y", "threads must be a power of two from 2 to 1024, got 1"),
        (24, "threadIdx.y", "threads must be a power of two from 2 to 1024, got 24"),
        (2048, "threadIdx.y", "threads must be a power of two from 2 to 1024, got 2048"),
        (16, "threadIdx.x", "threads must be a power of two from 32 to 1024, got 16"),
        (
            32,
            "threadIdx.z",
            "thread_axis must be one of threadIdx.x, threadIdx.y, got 'threadIdx.z'",
        ),
        (32, "blockIdx.x", "thread_axis must be one of threadIdx.x, threadIdx.y, got 'blockIdx.x'"),
    ],
)
def test_factorize_refuses_bad_threads_and_axes(threads, axis, message):
    func, _ = lowered(reduction((300, 40), (0,), False))
    sch = IRSchedule(func)
    with pytest.raises(ScheduleError, match="^factorize_reduction on block 'var_1': ") as error:
        sch.factorize_reduction("var_1", threads, axis)
    assert str(error.value).endswith(message)
    assert not str(sch.trace)


def test_factorize_refuses_a_block_inside_a_loop_bound_to_its_axis():
    func, _ = lowered(reduction((300, 40), (0,), False))
    sch = IRSchedule(func)
    outer, inner = sch.split("i_0", [5, 8])
    sch.bind(inner, "threadIdx.y")
    with pytest.raises(ScheduleError) as error:
        sch.factorize_reduction("var_1", 4, "threadIdx.y")
    assert str(error.value).endswith(
        "the block is inside loop i_0_1, bound to threadIdx.y; a cross-thread reduction "
        "needs every thread of the block"
    )
    sch2 = IRSchedule(func)
    sch2.factorize_reduction("var_1", 4, "threadIdx.y")
    with pytest.raises(ScheduleError, match="the Reduce is already across threadIdx.y"):
        sch2.factorize_reduction("var_1", 32, "threadIdx.x")


def test_codegen_refuses_a_combine_under_a_branch_on_the_thread_index():
    """Without finish_schedule's clamp, the guard of the lanes past the end would keep
    them from the barriers: codegen refuses it rather than emit a hang."""
    func, _ = lowered(reduction((300, 40), (0,), False))
    sch = IRSchedule(func)
    group, lane = sch.split("i_0", [2, 32])
    sch.bind(group, "blockIdx.x")
    sch.bind(lane, "threadIdx.x")
    sch.factorize_reduction("var_1", 8, "threadIdx.y")
    guarded = insert_bound_guards(sch.func)
    assert "if (" in print_ir(guarded)
    with pytest.raises(UnsupportedOpError, match="inside a branch on the thread index"):
        generate_cuda([guarded])


def test_codegen_refuses_a_block_wide_x_combine_in_a_2d_block():
    """cinn_block_reduce over more than a warp assumes a 1-D block (one of 32 is only a
    warp's shuffles, fine in any block)."""
    func, _ = sum_and_max_of_exp()
    sch = IRSchedule(func)
    sch.factorize_reduction("var_2", 64, "threadIdx.x")
    sch.factorize_reduction("var_3", 4, "threadIdx.y")
    with pytest.raises(UnsupportedOpError, match=r"across threadIdx.x in a block of 64x4x1"):
        generate_cuda([sch.func])


# ---- register temps past the end --------------------------------------------------------------


def test_a_register_temp_is_clamped_not_guarded():
    """t = exp(x) in a register, y = t * 2, 40 elements over 2 x 32 lanes: the 24 lanes
    past the end compute t of the last element (clamped, no guard: a combine after it
    could read the register), y stays guarded."""

    def exp_x(bufs, ivs):
        return Call("exp", [Load(bufs["x"], ivs)], F32, CallType.INTRINSIC)

    func = hand_lowered(
        [("x", (40,), F32)],
        [
            Output("t", (40,), F32, exp_x),
            Output("y", (40,), F32, lambda bufs, ivs: exp_x(bufs, ivs) * FloatImm(2.0, F32)),
        ],
    )
    t = next(a.value for a in func.args if a.name == "t")
    func = LoweredFunc(func.name, [a for a in func.args if a.name != "t"], func.body, [t])
    sch = IRSchedule(func)
    for block in sch.get_all_blocks():
        (loop,) = sch.get_loops(block)
        group, lane = sch.split(loop, [2, 32])
        sch.bind(group, "blockIdx.x")
        sch.bind(lane, "threadIdx.x")
    sch.set_buffer("t", "local")
    text = print_ir(finish_schedule(sch.func))
    assert "axis.bind(cinn_min(((i_0_0 * 32) + i_0_1), 39))" in text  # t: clamped
    assert "if ((((i_0_0 * 32) + i_0_1) < 40))" not in text
    assert "if ((((i_1_0 * 32) + i_1_1) < 40))" in text  # y: guarded


def test_codegen_takes_a_warp_combine_under_a_branch_a_whole_warp_takes():
    """Rows a warp each on threadIdx.y, 8 a block: the guard of the rows past the end
    reads threadIdx.y alone, so a warp takes it or skips it whole, and a combine of 32
    threads along x is a warp's shuffles (no barrier): codegen emits it. (A combine
    across threadIdx.y under a branch on threadIdx.x stays refused: the test above.)"""
    func, _ = lowered(reduction((300, 32), (1,), False))
    sch = IRSchedule(func)
    block, row = sch.split("i_0", [-1, 8])
    sch.bind(block, "blockIdx.x")
    sch.bind(row, "threadIdx.y")
    sch.factorize_reduction("var_1", 32, "threadIdx.x")
    guarded = insert_bound_guards(sch.func)
    assert "if (" in print_ir(guarded)
    source = generate_cuda([guarded]).source
    kernel = source[source.index('extern "C"') :]
    assert "if (((i_0_0 * 8) + i_0_1) < 300) {" in kernel
    assert "cinn_block_reduce<32>(" in kernel
