"""factorize_reduction of argmax / argmin (`ArgReduce`): per-thread (value, position)
partials and the cross-thread pair combine.

The primitive's IR (golden) and refusals, the interpreter on the factorized form, the
row and column schedules' IR (golden) and launches, numbers on cuda-emu through the
compile API against the reference executor (every input dtype, int32 / int64 results,
ties, NaN, +-inf, integer extremes, extents of 1, rows that are not multiples of the
thread count), NVRTC for sm_80 / sm_90, codegen's refusals, and the GPU (`gpu`).
"""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_c import CNames, CRenderer
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import ScheduleError, UnsupportedOpError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.bound_guards import insert_bound_guards
from cinn_py.ir.expr import ArgReduce, Buffer, Cast, Load, ReduceType, Var
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.column_schedule import ColumnLaunch
from cinn_py.ir.group_schedule.reduce_schedule import (
    find_reduces,
    lanes_for,
    threads_for,
)
from cinn_py.ir.group_schedule.tactics import ColumnTactic, RowTactic
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    Block,
    BufferRange,
    For,
    ForType,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Store,
)
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference

CUDA, EMU = TargetInfo.cuda(), TargetInfo.cuda_emu()
F32, F16, BF16, F64 = DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT64
I32, I64 = DataType.INT32, DataType.INT64
MAX, MIN = ReduceType.MAX, ReduceType.MIN


def arg_program(
    shape, axis, ops=("argmax", "argmin"), dtype=F32, keepdims=False, out=I64, flatten=False
) -> Program:
    """x (shape, dtype) -> each op over `axis` (one group per op)."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    for op in ops:
        axis_value = b.op("pd_op.full", shape=[1], value=axis, dtype=I64)
        b.op(f"pd_op.{op}", x, axis_value, keepdims=keepdims, flatten=flatten, dtype=out)
    return program


def lowered(program: Program):
    """The one group's lowered function and reduce pattern."""
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program)), group.reduce_pattern


def search_lines(shape, axis: int, dtype: DataType, seed: int = 0) -> np.ndarray:
    """Small integers (many ties), and along `axis` hand-made lines: all NaN, all -inf,
    all +inf, all equal, NaN first then a tie of the best across threads, the best
    last, NaN next to an infinity; integers: all lowest, all highest, equal. As
    `dtype`'s NumPy array (bfloat16 as its uint16 bits)."""
    rng = np.random.default_rng(seed)
    numbers = np.float64 if dtype.is_float else dtype.numpy
    n = shape[axis]
    moved = [d for i, d in enumerate(shape) if i != axis % len(shape)] + [n]
    y = rng.integers(-4, 5, size=moved).astype(numbers)
    lines = y.reshape(-1, n)  # a view of y: the lines along `axis`
    if dtype.is_float:
        specials = [
            np.full(n, np.nan),
            np.full(n, -np.inf),
            np.full(n, np.inf),
            np.full(n, 3.0),
        ]
        tie = np.full(n, 1.0)
        tie[0] = np.nan
        tie[min(n - 1, 5)] = tie[min(n - 1, 37)] = tie[n - 1] = 9.0
        specials.append(tie)
        last = np.zeros(n)
        last[-1] = 7.0
        specials.append(last)
        mixed = np.full(n, np.nan)
        mixed[n // 2] = np.inf
        mixed[n - 1] = -np.inf
        specials.append(mixed)
    else:
        info = np.iinfo(dtype.numpy)
        specials = [np.full(n, info.min), np.full(n, info.max), np.full(n, 2)]
        edge = np.full(n, info.min)
        edge[n - 1] = info.max
        specials.append(edge)
    step = max(1, len(lines) // len(specials))
    for i, line in enumerate(specials[: len(lines)]):
        lines[i * step] = line
    x = np.moveaxis(y, -1, axis)
    if dtype is BF16:
        return float32_to_bfloat16(x.astype(np.float32))
    return x.astype(dtype.numpy)


def check_numbers(program: Program, x: np.ndarray):
    """Compiled on cuda-emu against the reference executor: exactly, dtype included."""
    exe = cinn_py.compile(program, target="cuda-emu")
    got = exe.run({"x": x})
    want = run_reference(program, {"x": x})
    assert len(got) == len(want)
    for (name, value), expected in zip(got.items(), want, strict=True):
        value, expected = np.asarray(value), np.asarray(expected)
        assert value.dtype == expected.dtype and value.shape == expected.shape, name
        np.testing.assert_array_equal(value, expected, err_msg=name)
    return exe


# ---- the primitive ---------------------------------------------------------------------------


def two_axis_function(kind: ReduceType = MAX, dtype: DataType = F16) -> LoweredFunc:
    """out[i] = argmax over x[i, 1:4, 0:5] (two axes, the first starting at 1), int64."""
    x_buf, out = Buffer("x", dtype, [3, 4, 5]), Buffer("out", I64, [3])
    i, i0 = Var("i", I32, 0, 3), Var("i0", I32, 0, 3)
    r1, r2 = Var("r1", I32, 1, 4), Var("r2", I32, 0, 5)
    body = Load(x_buf, [i0, r1, r2])
    if dtype is not F32:
        body = Cast(F32, body)
    value = ArgReduce(kind, body, [r1, r2], I64)
    block = ScheduleBlock([i0], [], [BufferRange(out, [i0])], "out", Store(out, value, [i0]))
    loop = For(i, 0, 3, ForType.SERIAL, Block([ScheduleBlockRealize([i], block)]))
    root = ScheduleBlockRealize([], ScheduleBlock([], [], [], "root", Block([loop])))
    return LoweredFunc("fn_argmax", [Argument(x_buf), Argument(out, ArgIO.OUTPUT)], root)


FACTORIZED = (
    "out[i0] = ArgReduce(argmax across threadIdx.x, select((r1_t < 15), "
    "float32(x[i0, ((r1_t / 5) + 1), (r1_t % 5)]), -inf), [r1_t], int64)"
)
FACTORIZED_Y = (
    "out[i0] = ArgReduce(argmin across threadIdx.y, select((((r1_o * 4) + r1_t) < 15), "
    "float32(x[i0, ((((r1_o * 4) + r1_t) / 5) + 1), (((r1_o * 4) + r1_t) % 5)]), inf), "
    "[r1_o, r1_t], int64)"
)


def test_factorized_ir_keeps_the_original_positions():
    """15 positions over (r1 - 1, r2): one per thread of 32 (no serial part), or a
    strided share of 4 threads along y; the lower bound of r1 is added back."""
    sch = IRSchedule(two_axis_function())
    sch.factorize_reduction("out", 32)
    assert FACTORIZED in print_ir(sch.func)
    sch = IRSchedule(two_axis_function(MIN))
    sch.factorize_reduction("out", 4, "threadIdx.y")
    assert FACTORIZED_Y in print_ir(sch.func)
    assert str(sch.trace) == "factorize_reduction(block=out, threads=4, thread_axis=threadIdx.y)"
    (node,) = find_reduces(sch.func.body)
    assert isinstance(node, ArgReduce) and node.thread_axis == "threadIdx.y"
    assert [v.upper for v in node.reduce_axis] == [4, 4]  # ceil(15 / 4) steps, 4 threads


def _two_axis_inputs(dtype: DataType) -> np.ndarray:
    x = np.random.default_rng(1).integers(-2, 3, size=(3, 4, 5)).astype(np.float32)
    x[0, 1:, :] = np.nan  # all NaN where searched: position 0
    x[0, 0, :] = 100.0  # outside the searched rows
    x[1, 1:, :] = -np.inf
    x[1, 3, 4] = np.nan
    x[2, 2, 1] = x[2, 3, 3] = 5.0  # a tie across threads: the first
    return x.astype(dtype.numpy)


@pytest.mark.parametrize("kind", [MAX, MIN])
@pytest.mark.parametrize(("threads", "axis"), [(32, "threadIdx.x"), (2, "threadIdx.y")])
def test_the_interpreter_gives_the_serial_values(kind, threads, axis):
    func = two_axis_function(kind, F32)
    sch = IRSchedule(func)
    sch.factorize_reduction("out", threads, axis)
    x = _two_axis_inputs(F32)
    outs = []
    for f in (func, sch.func):
        out = np.full(3, -1, np.int64)
        run_function(f, {"x": x, "out": out})
        outs.append(out)
    np.testing.assert_array_equal(outs[1], outs[0])
    part = np.where(np.isnan(x[:, 1:, :]), -np.inf if kind is MAX else np.inf, x[:, 1:, :])
    pick = np.argmax if kind is MAX else np.argmin
    np.testing.assert_array_equal(outs[0], pick(part.reshape(3, -1), axis=1))


def test_factorize_refuses_a_second_time_and_an_axis_starting_elsewhere():
    sch = IRSchedule(two_axis_function())
    sch.factorize_reduction("out", 32)
    with pytest.raises(ScheduleError) as error:
        sch.factorize_reduction("out", 64)
    assert str(error.value) == (
        "factorize_reduction on block 'out': the ArgReduce is already across threadIdx.x"
    )
    with pytest.raises(ValueError, match=r"ArgReduce.thread_axis: expected a threadIdx axis"):
        ArgReduce(MAX, Var("v", F32), [Var("r", I32, 0, 8)], I64, "blockIdx.x")
    with pytest.raises(ValueError, match="the thread axis 'r' .the last. must start at 0, not 1"):
        ArgReduce(MAX, Var("v", F32), [Var("r", I32, 1, 8)], I64, "threadIdx.x")


# ---- the schedules -------------------------------------------------------------------------------

ROW_IR = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_0, 0, 1)
    {
      thread_bind[threadIdx.y] for (i_0_1, 0, 4)
      {
        ScheduleBlock(var_1)
        {
          i0_0 = axis.bind(((i_0_0 * 4) + i_0_1))
          read_buffers(var_0[i0_0(0:4), r_0(0:100)])
          write_buffers(var_1_tmp[i0_0(0:4)])
          var_1_tmp[i0_0] = ArgReduce(argmax across threadIdx.x, select((((r_0_o * 32) + r_0_t) < 100), var_0[i0_0, ((r_0_o * 32) + r_0_t)], -inf), [r_0_o, r_0_t], int64)
        }
      }
    }
    thread_bind[blockIdx.x] for (var_1_write_l0_0_0, 0, 1)
    {
      thread_bind[threadIdx.y] for (var_1_write_l0_0_1, 0, 4)
      {
        thread_bind[threadIdx.x] for (var_1_write_l0_1, 0, 1)
        ScheduleBlock(var_1_write)
        {
          var_1_write_i0 = axis.bind((((var_1_write_l0_0_0 * 4) + var_1_write_l0_0_1) + var_1_write_l0_1))
          read_buffers(var_1_tmp[var_1_write_i0(0:4)])
          write_buffers(var_1[var_1_write_i0(0:4)])
          var_1[var_1_write_i0] = var_1_tmp[var_1_write_i0]
        }
      }
    }
  }
}"""  # noqa: E501

COLUMN_IR = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_i_1_fused_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (i_0_i_1_fused_1, 0, 32)
      {
        ScheduleBlock(var_1)
        {
          i0_0, i1_0 = axis.bind(0, cinn_min(((i_0_i_1_fused_0 * 32) + i_0_i_1_fused_1), 39))
          read_buffers(var_0[r_0(0:300), i1_0(0:40)])
          write_buffers(var_1_tmp[i0_0(0:1), i1_0(0:40)])
          var_1_tmp[i0_0, i1_0] = ArgReduce(argmin across threadIdx.y, select((((r_0_o * 32) + r_0_t) < 300), float32(var_0[((r_0_o * 32) + r_0_t), i1_0]), inf), [r_0_o, r_0_t], int32)
        }
      }
    }
    thread_bind[blockIdx.x] for (var_1_write_l0_var_1_write_l1_fused_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (var_1_write_l0_var_1_write_l1_fused_1, 0, 32)
      {
        thread_bind[threadIdx.y] for (var_1_write_l0_var_1_write_l1_fused_2, 0, 1)
        if (((((var_1_write_l0_var_1_write_l1_fused_0 * 32) + var_1_write_l0_var_1_write_l1_fused_1) + var_1_write_l0_var_1_write_l1_fused_2) < 40)) {
          ScheduleBlock(var_1_write)
          {
            var_1_write_i0, var_1_write_i1 = axis.bind(0, (((var_1_write_l0_var_1_write_l1_fused_0 * 32) + var_1_write_l0_var_1_write_l1_fused_1) + var_1_write_l0_var_1_write_l1_fused_2))
            read_buffers(var_1_tmp[var_1_write_i0(0:1), var_1_write_i1(0:40)])
            write_buffers(var_1[var_1_write_i0(0:1), var_1_write_i1(0:40)])
            var_1[var_1_write_i0, var_1_write_i1] = var_1_tmp[var_1_write_i0, var_1_write_i1]
          }
        }
      }
    }
  }
}"""  # noqa: E501


def test_row_schedule_ir_and_launch():
    """A lone argmax over rows of 100: a warp per row (4 rows, one block of 32 x 4), each
    lane searching 4 strided positions, then the warp's pair combine."""
    func, pattern = lowered(arg_program((4, 100), -1, ("argmax",)))
    assert RowTactic().accepts(func, CUDA, pattern) is None
    result = auto_schedule(func, CUDA, pattern)
    assert print_ir(result.func) == ROW_IR
    assert result.launch.threads == 128 and result.launch.blocks == 1
    assert structural_equal(result.replay(func), result.func)


def test_column_schedule_ir_and_launch():
    func, pattern = lowered(arg_program((300, 40), 0, ("argmin",), F16, True, I32))
    assert ColumnTactic().accepts(func, CUDA, pattern) is None
    result = auto_schedule(func, CUDA, pattern)
    assert print_ir(result.func) == COLUMN_IR  # clamped lanes: no guard around the combine
    assert result.launch == ColumnLaunch(threads=32, blocks=2, steps=1, threads_y=32)


def test_long_rows_use_every_thread_of_the_block():
    """Rows of 3000: a block of T threads per row, each searching its strided share, the
    pairs combined by cinn_block_arg_reduce<T> (not thread 0 walking the row)."""
    x = search_lines((6, 3000), 1, F32)
    exe = check_numbers(arg_program((6, 3000), 1, ("argmax",)), x)
    (kernel,) = exe.kernels
    threads = kernel.block[0]
    assert kernel.grid == (6, 1, 1) and kernel.block == (threads, 1, 1) and threads >= 128
    func, pattern = lowered(arg_program((6, 3000), 1, ("argmax",)))
    assert lanes_for(func, pattern) == 1  # one element a step: vectors would cut threads
    assert threads == threads_for(3000, EMU)
    source = exe.cuda_source
    assert f"cinn_block_arg_reduce<{threads}>(best, arg_1, cinn_arg_max());" in source
    assert "const int r_0_t = threadIdx.x;" in source
    assert f"for (int r_0_o = 0; r_0_o < {-(-3000 // threads)}; ++r_0_o) {{" in source


def test_column_source_combines_along_y():
    x = search_lines((300, 40), 0, F16)
    exe = check_numbers(arg_program((300, 40), 0, ("argmin",), F16, True, I32), x)
    (kernel,) = exe.kernels
    assert kernel.block == (32, 32, 1)
    assert "cinn_block_arg_reduce_y<32, 32>(best, arg_1, cinn_arg_min());" in exe.cuda_source
    assert "const float v = " in exe.cuda_source  # float16 compares in float


# ---- numbers on cuda-emu ----------------------------------------------------------------------

NUMBER_CASES = {
    # id: (shape, axis, dtype, keepdims, out, flatten)
    "row-f32": ((9, 300), 1, F32, False, I64, False),
    "row-f32-keep-i32": ((9, 300), -1, F32, True, I32, False),
    "row-f16": ((7, 257), 1, F16, False, I64, False),
    "row-bf16-i32": ((7, 130), 1, BF16, True, I32, False),
    "row-f64": ((8, 100), 1, F64, False, I64, False),
    "row-i32": ((6, 1000), 1, I32, False, I32, False),
    "row-i64": ((6, 77), 1, I64, False, I64, False),
    "row-long-f32": ((5, 5000), 1, F32, False, I64, False),
    "row-3d-f32": ((3, 4, 129), 2, F32, True, I64, False),
    "flatten-f32": ((6, 50), 0, F32, False, I64, True),
    "flatten-keep-i32": ((3, 7, 40), 0, I32, True, I32, True),
    "column-f32": ((300, 40), 0, F32, False, I64, False),
    "column-f16-keep": ((77, 33), 0, F16, True, I32, False),
    "column-bf16": ((100, 64), 0, BF16, False, I64, False),
    "column-f64": ((50, 45), 0, F64, False, I64, False),
    "column-i32": ((67, 45), 0, I32, False, I32, False),
    "column-i64": ((40, 35), 0, I64, True, I64, False),
    "middle-f32": ((5, 37, 70), 1, F32, False, I64, False),
    "middle-f16-keep": ((3, 64, 33), -2, F16, True, I32, False),
    "extent-1-row": ((40, 1), 1, F32, False, I64, False),
    "extent-1-column": ((1, 300), 0, F32, True, I32, False),
    "short-row": ((9, 7), 1, F32, False, I64, False),
}


@pytest.mark.parametrize("case", NUMBER_CASES, ids=NUMBER_CASES)
def test_numbers_on_the_emulator(case):
    shape, axis, dtype, keepdims, out, flatten = NUMBER_CASES[case]
    program = arg_program(shape, axis, dtype=dtype, keepdims=keepdims, out=out, flatten=flatten)
    search_axis = -1 if flatten else axis
    x = search_lines(shape, search_axis, dtype, seed=len(case))
    if dtype in (F32, F64, F16) and min(shape) > 1:  # the special lines are there
        values = x.astype(np.float64)
        assert np.isnan(values).all(axis=search_axis).any()
        assert np.isneginf(values).all(axis=search_axis).any()
    check_numbers(program, x)


def test_the_interpreter_runs_scheduled_groups_as_lowered():
    for program, axis in (
        (arg_program((9, 300), 1, ("argmax",)), 1),
        (arg_program((70, 40), 0, ("argmin",), out=I32), 0),
    ):
        func, pattern = lowered(program)
        scheduled = auto_schedule(func, EMU, pattern).func
        assert "across threadIdx" in print_ir(scheduled)
        x_arg, out_arg = func.args
        x = search_lines(tuple(d.value for d in x_arg.value.shape), axis, F32)
        outs = []
        for f in (func, scheduled):
            shape = tuple(d.value for d in out_arg.value.shape)
            out = np.full(shape, -1, out_arg.value.dtype.numpy)
            run_function(f, {x_arg.name: x, out_arg.name: out})
            outs.append(out)
        np.testing.assert_array_equal(outs[1], outs[0])
        np.testing.assert_array_equal(outs[0], run_reference(program, {"x": x})[0])


# ---- NVRTC, codegen refusals, the GPU ---------------------------------------------------------

NVRTC_CASES = [
    ((9, 3000), 1, F32, I64),
    ((9, 300), 1, F16, I32),
    ((9, 300), 1, BF16, I64),
    ((9, 70), 1, F64, I64),
    ((9, 300), 1, I64, I32),
    ((300, 40), 0, F32, I64),
    ((300, 40), 0, BF16, I32),
    ((300, 40), 0, F64, I64),
    ((300, 40), 0, I32, I64),
]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles_with_nvrtc(arch):
    funcs = []
    for i, (shape, axis, dtype, out) in enumerate(NVRTC_CASES):
        program = arg_program(shape, axis, ("argmax",), dtype, out=out)
        (kernel,) = PIRCompiler(program, "cuda").stages(until="scheduled").fused
        func = kernel.scheduled.func
        funcs.append(LoweredFunc(f"{func.name}_{i}", func.args, func.body, func.temp_buffers))
    source = generate_cuda(funcs).source
    assert source.count("cinn_block_arg_reduce<") >= 5
    assert source.count("cinn_block_arg_reduce_y<") == 4
    try:
        cubin = nvrtc.compile(source, arch, name="arg_factorize.cu")
    except (FileNotFoundError, OSError, ImportError) as error:
        pytest.skip(f"NVRTC is not available: {error}")
    assert cubin[:4] == b"\x7fELF"


def test_codegen_refusals():
    func = two_axis_function()
    sch = IRSchedule(func)
    sch.factorize_reduction("out", 32)
    names = CNames(CRenderer.reserved)
    for arg in sch.func.args:
        names.declare(arg.name)
    with pytest.raises(UnsupportedOpError, match="across threadIdx.x outside a CUDA kernel"):
        CRenderer(sch.func, names).statement(sch.func.body)
    # Under a guard on the thread index, some threads would miss the barriers.
    lanes = IRSchedule(two_axis_function())
    group, lane = lanes.split("i", [1, 4])
    lanes.bind(lane, "threadIdx.x")
    lanes.factorize_reduction("out", 2, "threadIdx.y")
    with pytest.raises(UnsupportedOpError, match="ArgReduce' across threadIdx.y inside a branch"):
        generate_cuda([insert_bound_guards(lanes.func)])
    # A block-wide x combine needs a 1-D block.
    wide = IRSchedule(two_axis_function())
    wide.factorize_reduction("out", 64)
    (loop,) = wide.get_loops("out")
    wide.bind(loop, "threadIdx.y")
    with pytest.raises(UnsupportedOpError, match=r"across threadIdx.x in a block of 64x3x1"):
        generate_cuda([wide.func])


@pytest.mark.gpu
@pytest.mark.parametrize(
    "case", ["row-f32", "row-f16", "row-long-f32", "column-f32", "column-bf16", "row-i64"]
)
def test_numbers_on_the_gpu(case):
    shape, axis, dtype, keepdims, out, flatten = NUMBER_CASES[case]
    program = arg_program(shape, axis, dtype=dtype, keepdims=keepdims, out=out, flatten=flatten)
    x = search_lines(shape, axis, dtype, seed=len(case))
    exe = cinn_py.compile(program, target="cuda")
    got = exe.run({"x": x})
    want = run_reference(program, {"x": x})
    for value, expected in zip(got.values(), want, strict=True):
        np.testing.assert_array_equal(np.asarray(value), np.asarray(expected))
