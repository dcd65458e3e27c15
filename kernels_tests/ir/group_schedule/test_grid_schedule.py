"""The grid schedule of reductions whose rows are too few to fill the GPU: which
groups take it, its plan for both targets (scalar, and the vector walk of V lanes), the
`grid_reduce` primitive (golden IR, trace replay, the interpreter run twice, the chunk
walk from register caches, its refusals), numbers on cuda-emu against the reference
executor for every reduce kind and dtype (bit-identical when run again), NVRTC for
sm_80 / sm_90 (16-byte loads in the PTX, no local memory), and a real GPU where there
is one."""

from __future__ import annotations

import re

import numpy as np
import pytest
from reduction_programs import lowered, reduction

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import ScheduleError, UnsupportedOpError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.group_schedule import RowPattern, TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.grid_schedule import (
    grid_plan,
    grid_problem,
    schedule_grid,
)
from cinn_py.ir.group_schedule.launch_config import GridLaunch
from cinn_py.ir.group_schedule.tactics import GridTactic
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

CUDA, EMU = TargetInfo.cuda(), TargetInfo.cuda_emu()
F32, F64, F16, BF16 = DataType.FLOAT32, DataType.FLOAT64, DataType.FLOAT16, DataType.BFLOAT16
I32, I64, BOOL = DataType.INT32, DataType.INT64, DataType.BOOL
ALL2 = (0, 1)


def feed(shape, dtype, seed=0, kind="uniform") -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "powers":  # a product exact in any order: mostly 1, a few 2 and 0.5
        x = np.ones(shape, np.float32).reshape(-1)
        picks = rng.choice(x.size, 90, replace=False)
        x[picks[:50]], x[picks[50:]] = 2.0, 0.5
        return x.reshape(shape).astype(dtype.numpy)
    if dtype is BOOL:
        return rng.random(shape) < 0.5
    if dtype.is_integer:
        if kind == "signs":  # a product that stays small: +-1 and a few 3
            x = rng.choice(np.array([-1, 1]), shape).reshape(-1)
            x[rng.choice(x.size, 9, replace=False)] = 3
            return x.reshape(shape).astype(dtype.numpy)
        return rng.integers(-1000, 1000, shape).astype(dtype.numpy)
    x = rng.uniform(-1.0, 2.0, shape).astype(np.float32)
    if dtype is BF16:
        return float32_to_bfloat16(x)
    return x.astype(dtype.numpy)


# ---- the plan and which groups take it ---------------------------------------------------


A100 = TargetInfo.cuda("sm_80")
L40S = TargetInfo.cuda("sm_89")


@pytest.mark.parametrize(
    ("shape", "axes", "target", "plan"),
    [
        # 64M elements, one row: 525 blocks of 1024 threads (two waves of 2 per SM)
        ((8192, 8192), ALL2, CUDA, GridLaunch(threads=1024, blocks=1, steps=125, chunks=525)),
        ((4, 1 << 20), (1,), CUDA, GridLaunch(threads=1024, blocks=4, steps=8, chunks=128)),
        # an A100's 108 SMs: 432 blocks a fill, 108 chunks a row, 10 steps -> 103
        ((4, 1 << 20), (1,), A100, GridLaunch(threads=1024, blocks=4, steps=10, chunks=103)),
        # an L40S's SMs hold 1536 threads, one block of 1024: 142 * 2 = 284 -> 71 -> 69
        ((4, 1 << 20), (1,), L40S, GridLaunch(threads=1024, blocks=4, steps=15, chunks=69)),
        ((3, 100003), (1,), EMU, GridLaunch(threads=1024, blocks=3, steps=49, chunks=2)),
        ((129, 257), ALL2, EMU, GridLaunch(threads=1024, blocks=1, steps=9, chunks=4)),
        ((2, 5, 4099), (1, 2), EMU, GridLaunch(threads=1024, blocks=2, steps=11, chunks=2)),
        ((8191,), (0,), EMU, None),  # under 2 * 4 * 1024 elements: one block is enough
        ((528, 1 << 20), (1,), CUDA, None),  # 528 rows fill the GPU by themselves
        ((4, 0), (1,), EMU, None),
    ],
)
def test_grid_plan(shape, axes, target, plan):
    assert grid_plan(RowPattern(shape, axes), target) == plan


def _vector(threads, blocks, chunks, lanes):
    return GridLaunch(threads=threads, blocks=blocks, steps=4, chunks=chunks, lanes=lanes)


@pytest.mark.parametrize(
    ("shape", "axes", "lanes", "target", "plan"),
    [
        # 4 vectors a thread (64 bytes, in registers): L = 4 * T * V
        ((8192, 8192), ALL2, 4, CUDA, _vector(1024, 1, 4096, 4)),  # float32
        ((8192, 8192), ALL2, 8, CUDA, _vector(1024, 1, 2048, 8)),  # float16
        ((8192, 8192), ALL2, 2, CUDA, _vector(1024, 1, 8192, 2)),  # float64
        ((4, 1 << 20), (1,), 4, CUDA, _vector(1024, 4, 64, 4)),
        ((3, 20000), (1,), 4, EMU, _vector(1024, 3, 2, 4)),  # the last chunk 3616 long
        ((3, 65544), (1,), 8, EMU, _vector(1024, 3, 3, 8)),  # the last chunk one vector
        # the vector walk would be one chunk: the scalar plan (G = 4)
        ((4, 4096), ALL2, 4, EMU, GridLaunch(threads=1024, blocks=1, steps=4, chunks=4)),
        # 65536 chunks of 16384 are past the grid's y limit: the scalar plan
        ((1 << 15, 1 << 15), ALL2, 4, CUDA, GridLaunch(1024, 1, 1986, 528)),
        ((8191,), (0,), 4, EMU, None),  # no grid either way
    ],
)
def test_vector_plan(shape, axes, lanes, target, plan):
    """With V lanes the plan counts steps in vectors, so L is a multiple of T * V."""
    got = grid_plan(RowPattern(shape, axes), target, lanes)
    assert got == plan
    if got is not None and got.lanes > 1:
        assert got.chunk_size == got.steps * got.threads * got.lanes
        assert (got.chunks - 1) * got.chunk_size < RowPattern(shape, axes).cols


@pytest.mark.parametrize(
    ("shape", "axes", "ops", "why"),
    [
        ((129, 257), ALL2, ("sum",), None),
        ((129, 257), ALL2, ("sum", "max", "mean"), None),  # siblings and an epilogue
        ((3, 100003), (1,), ("mean",), None),
        ((2, 5, 4099), (1, 2), ("min",), None),
        ((129, 257), ALL2, ("argmax",), "argmax"),
    ],
)
def test_which_groups_take_the_grid_schedule(shape, axes, ops, why):
    if ops == ("argmax",):
        program = Program()
        b = Builder(program)
        x = b.op("pd_op.data", name="x", shape=list(shape), dtype=F32)
        b.op("pd_op.argmax", x, b.op("pd_op.full", shape=[1], value=0, dtype=I64), flatten=True)
    else:
        program = reduction(shape, axes, ops=ops)
    func, pattern = lowered(program)
    problem = grid_problem(func, pattern)
    assert (problem is None) if why is None else (why in problem)
    result = auto_schedule(func, EMU, pattern)
    assert isinstance(result.launch, GridLaunch) is (why is None)


def test_softmax_over_everything_keeps_the_row_schedule():
    """x - max(x) reads the reduction back at full shape: every chunk would need the
    grid-wide max first, which one kernel cannot wait for."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[20000], dtype=F32)
    b.op("pd_op.softmax", x, axis=0)
    PassManager().run(program)
    (group,) = group_program(program)
    func = lower_group(group, NameTable(program))
    pattern = group.reduce_pattern
    assert grid_plan(pattern, EMU) is not None
    assert "reads the reduction" in grid_problem(func, pattern)
    assert GridTactic().accepts(func, EMU, pattern) is not None
    result = auto_schedule(func, EMU, pattern)
    assert not isinstance(result.launch, GridLaunch) and result.launch.blocks == 1
    with pytest.raises(ScheduleError, match="the grid schedule does not apply: block"):
        schedule_grid(func, EMU, pattern)
    _check(program, {"x": feed((20000,), F32)}, grid=False)


def test_column_patterns_stay_off_the_grid():
    func, pattern = lowered(reduction((100003, 3), (0,)))
    assert grid_plan(pattern, EMU) is not None and not pattern.innermost
    assert GridTactic().accepts(func, EMU, pattern) == "the reduced dims are not innermost"


# ---- golden IR, trace, replay, interpreter -------------------------------------------------


def test_golden_mean_over_long_rows():
    """20000 float32 a row: V = 4, T = 1024, L = 4 * 1024 * 4; the fill loads each
    thread's 4 vectors of the chunk into registers (guarded: the last chunk is 3616
    long), the partial reads them, the combine folds the 2 partials of the row."""
    func, pattern = lowered(reduction((3, 20000), (1,), ops=("mean",)))
    result = auto_schedule(func, EMU, pattern)
    assert result.launch == GridLaunch(threads=1024, blocks=3, steps=4, chunks=2, lanes=4)
    assert str(result.trace) == (
        "grid_reduce(chunk_size=16384, threads=1024, lanes=4) -> [grid_row, grid_chunk]\n"
        "bind(loop=grid_row, thread_axis=blockIdx.x)\n"
        "bind(loop=grid_chunk, thread_axis=blockIdx.y)\n"
        "factorize_reduction(block=var_1_tmp, threads=1024, thread_axis=threadIdx.x)\n"
        "set_buffer(block=var_1_tmp, memory_type=local)"
    )
    assert print_ir(result.func) == GOLDEN_MEAN_IR
    assert structural_equal(result.replay(func), result.func)
    (kernel,) = generate_cuda([result.func]).kernels
    assert kernel.grid == (3, 2, 1) and kernel.block == (1024, 1, 1)
    assert [a.io for a in kernel.args][-2:] == [s.ArgIO.WORKSPACE] * 2
    (cache,) = [b for b in result.func.temp_buffers if b.name == "var_0_local"]
    assert cache.array_dims == (0, 2) and [d.value for d in cache.shape] == [4, 1024, 4]


def test_scalar_trace_where_no_vector_divides_the_row():
    """20001 a row: V = 1, the walk of single elements (L = 10 * 1024), factorized after
    grid_reduce like the combine."""
    func, pattern = lowered(reduction((3, 20001), (1,), ops=("mean",)))
    result = auto_schedule(func, EMU, pattern)
    assert result.launch == GridLaunch(threads=1024, blocks=3, steps=10, chunks=2)
    assert str(result.trace) == (
        "grid_reduce(chunk_size=10240) -> [grid_row, grid_chunk]\n"
        "bind(loop=grid_row, thread_axis=blockIdx.x)\n"
        "bind(loop=grid_chunk, thread_axis=blockIdx.y)\n"
        "factorize_reduction(block=var_1_tmp_partials, threads=1024, thread_axis=threadIdx.x)\n"
        "factorize_reduction(block=var_1_tmp, threads=1024, thread_axis=threadIdx.x)\n"
        "set_buffer(block=var_1_tmp, memory_type=local)"
    )
    assert structural_equal(result.replay(func), result.func)
    assert "var_0_local" not in print_ir(result.func)


GOLDEN_MEAN_IR = """\
function fn_group_0 (var_0, var_3; workspace var_1_tmp_partials float32[3, 2], fn_group_0_semaphore int32[3])
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (grid_row, 0, 3)
    thread_bind[blockIdx.y] for (grid_chunk, 0, 2)
    {
      unroll for (var_0_local_o, 0, 4)
      thread_bind[threadIdx.x] for (var_0_local_t, 0, 1024)
      vectorize[4] for (var_0_local_v, 0, 4)
      if ((((grid_chunk * 16384) + ((((var_0_local_o * 1024) + var_0_local_t) * 4) + var_0_local_v)) < 20000)) {
        ScheduleBlock(var_0_local)
        {
          var_0_local_i0, var_0_local_i1, var_0_local_i2, var_0_local_i3, var_0_local_i4 = axis.bind(grid_row, grid_chunk, var_0_local_o, var_0_local_t, var_0_local_v)
          read_buffers(var_0[var_0_d0(0:3), var_0_d1(0:20000)])
          write_buffers(var_0_local[var_0_local_d0(0:4), var_0_local_d1(0:1024), var_0_local_d2(0:4)])
          var_0_local[var_0_local_i2, var_0_local_i3, var_0_local_i4] = var_0[var_0_local_i0, ((((var_0_local_i1 * 16384) + (var_0_local_i2 * 4096)) + (var_0_local_i3 * 4)) + var_0_local_i4)]
        }
      }
      ScheduleBlock(var_1_tmp_partials)
      {
        i0_0, var_1_tmp_partials_c = axis.bind(grid_row, grid_chunk)
        read_buffers(var_0_local[var_0_local_d0(0:4), var_0_local_d1(0:1024), var_0_local_d2(0:4)])
        write_buffers(var_1_tmp_partials[i0_0(0:3), var_1_tmp_partials_c(0:2)])
        var_1_tmp_partials[i0_0, var_1_tmp_partials_c] = Reduce(sum across threadIdx.x, Reduce(sum, select((((var_1_tmp_partials_c * 16384) + ((((r_0_k_o * 1024) + r_0_k_t) * 4) + r_0_k_v)) < 20000), var_0_local[r_0_k_o, r_0_k_t, r_0_k_v], 0.00000000f),0.00000000f),0.00000000f)
      }
      if (last_block_done(fn_group_0_semaphore[grid_row], 2)) {
        {
          ScheduleBlock(var_1_tmp)
          {
            i0_0 = axis.bind(grid_row)
            read_buffers(var_1_tmp_partials[i0_0(0:3), var_1_tmp_partials_k(0:2)])
            write_buffers(var_1_tmp[i0_0(0:3)])
            var_1_tmp[i0_0] = Reduce(sum across threadIdx.x, select((var_1_tmp_partials_k_t < 2), var_1_tmp_partials[i0_0, var_1_tmp_partials_k_t], 0.00000000f),0.00000000f)
          }
          ScheduleBlock(var_3)
          {
            i0_1 = axis.bind(grid_row)
            read_buffers(var_1_tmp[i0_1(0:3)])
            write_buffers(var_3[i0_1(0:3)])
            var_3[i0_1] = (var_1_tmp[i0_1] / 20000.0000f)
          }
        }
      }
    }
  }
}"""


def _small_grid(shape, axes, ops, chunk_size, threads=32, dtype=F32, lanes=None, program=None):
    """The primitive by hand on a small function: chunks of `chunk_size`, combined by
    `threads` threads; with `lanes`, grid_reduce walks the chunks itself (`threads`
    threads, `lanes` a step, from registers) and only the combines are factorized."""
    func, _ = lowered(program or reduction(shape, axes, ops=ops, dtype=dtype))
    sch = IRSchedule(func)
    for block in sch.get_all_blocks():
        loops = sch.get_loops(block)
        if len(loops) > 1:
            sch.fuse(loops)
    if lanes is None:
        row, chunk = sch.grid_reduce(chunk_size)
    else:
        row, chunk = sch.grid_reduce(chunk_size, threads, lanes)
    sch.bind(row, "blockIdx.x")
    sch.bind(chunk, "blockIdx.y")
    for block in sch.get_all_blocks():
        text = print_ir(sch.get(block).schedule_block)
        if "Reduce(" in text and " across " not in text:
            sch.factorize_reduction(block, threads)
    return func, sch


def _run_twice(func, sch, feeds):
    """Runs `func` and, twice on one workspace, the scheduled function in the
    interpreter: the same values, and the counters back at zero after each run."""
    outputs = [a for a in func.args if a.io is not s.ArgIO.INPUT]
    want = {
        a.name: np.zeros([d.value for d in a.value.shape], a.value.dtype.numpy) for a in outputs
    }
    run_function(func, {**feeds, **want})
    work = {
        a.name: np.zeros([d.value for d in a.value.shape], a.value.dtype.numpy)
        for a in sch.func.args
        if a.io is s.ArgIO.WORKSPACE
    }
    for _ in range(2):  # the counters come back to zero: a second run is the same
        got = {name: np.zeros_like(value) for name, value in want.items()}
        run_function(sch.func, {**feeds, **got, **work})
        for name in want:
            assert compare(got[name], want[name]).ok, name
        semaphore = [a.name for a in sch.func.args if a.name.endswith("_semaphore")]
        assert len(semaphore) == 1 and not work[semaphore[0]].any()
    assert structural_equal(sch.trace.replay(func), sch.func)


@pytest.mark.parametrize(
    ("shape", "axes", "ops", "chunk_size"),
    [
        ((3, 40), (1,), ("sum", "max"), 7),  # 6 chunks, the last one 5 long
        ((2, 5, 9), (1, 2), ("min", "prod"), 45),  # exactly 2 chunks... of 45: one row each
        ((6, 7), ALL2, ("sum",), 10),  # reduce-all: 5 chunks of 10, the last 2
        ((6, 7), ALL2, ("mean",), 8),  # a temp, read back by the epilogue
    ],
)
def test_primitive_in_the_interpreter_run_twice(shape, axes, ops, chunk_size):
    if chunk_size >= np.prod([shape[a] for a in axes]):
        chunk_size = chunk_size // 2
    func, sch = _small_grid(shape, axes, ops, chunk_size)
    x = feed(shape, F32, kind="powers" if "prod" in ops else "uniform")
    _run_twice(func, sch, {func.args[0].name: x})


@pytest.mark.parametrize(
    ("shape", "axes", "ops", "lanes", "chunk_size"),
    [
        ((3, 600), (1,), ("sum", "max"), 4, 256),  # S = 2; 3 chunks, the last 88 long
        ((6, 64), ALL2, ("sum",), 4, 128),  # S = 1: no step axis; 3 whole chunks
        ((2, 5, 48), (1, 2), ("min", "prod"), 2, 64),  # 4 chunks, the last 48
        ((4, 400), (1,), ("max", "mean"), 2, 192),  # S = 3, a temp read back
        ((6, 7), ALL2, ("mean",), 1, 32),  # V = 1: the cached walk of single elements
    ],
)
def test_chunk_walk_from_registers_in_the_interpreter(shape, axes, ops, lanes, chunk_size):
    """grid_reduce(L, T, V): one register cache of x for all the siblings, filled in
    vectors of V by T threads (guarded where the last chunk is shorter), the partials
    across threadIdx.x from it; the interpreter runs it twice as it runs the lowered
    function."""
    func, sch = _small_grid(shape, axes, ops, chunk_size, lanes=lanes)
    caches = [b for b in sch.func.temp_buffers if b.name.endswith("_local")]
    assert [b.name for b in caches] == ["var_0_local"]
    steps = chunk_size // (32 * lanes)
    assert [d.value for d in caches[0].shape] == [steps, 32, lanes]
    assert caches[0].array_dims == (0, 2)
    text = print_ir(sch.func)
    assert text.count("ScheduleBlock(var_0_local)") == 1
    assert ("vectorize[" in text) is (lanes > 1)
    total = int(np.prod([shape[a] for a in axes]))
    assert (f" < {total})) {{" in text) is (total % chunk_size != 0)  # the fill's guard
    partials = [line for line in text.splitlines() if "_partials_c] = Reduce(" in line]
    assert len(partials) == len(ops)
    for line in partials:  # the partials read registers only
        assert "var_0[" not in line and "var_0_local[" in line, line
    x = feed(shape, F32, kind="powers" if "prod" in ops else "uniform")
    _run_twice(func, sch, {func.args[0].name: x})


def test_chunk_walk_caches_each_input_it_reads():
    """sum(exp(x) * y) over rows, y broadcast along them: a cache (and a fill) for x and
    one for y, both walked alike."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[3, 520], dtype=F32)
    y = b.op("pd_op.data", name="y", shape=[520], dtype=F32)
    product = b.op("pd_op.multiply", b.op("pd_op.exp", x), y)
    axis = b.op("pd_op.full_int_array", value=[1])
    b.op("pd_op.sum", product, axis, keepdim=False, dtype=DataType.UNDEFINED)
    func, sch = _small_grid(None, None, None, 256, lanes=4, program=program)
    caches = sorted(b.name for b in sch.func.temp_buffers if b.name.endswith("_local"))
    assert caches == ["var_0_local", "var_1_local"]
    rng = np.random.default_rng(3)
    feeds = {
        "var_0": rng.uniform(-1, 1, (3, 520)).astype(np.float32),
        "var_1": rng.uniform(-1, 1, (520,)).astype(np.float32),
    }
    _run_twice(func, sch, feeds)
    (kernel,) = generate_cuda([sch.func]).kernels
    assert kernel.grid == (3, 3, 1)


def test_each_sibling_reduction_gets_its_own_partials():
    func, sch = _small_grid((3, 40), (1,), ("sum", "max", "min"), 16)
    work = [a for a in sch.func.args if a.io is s.ArgIO.WORKSPACE]
    assert [(a.name, [d.value for d in a.value.shape], a.value.dtype) for a in work] == [
        ("var_1_partials", [3, 3], F32),
        ("var_2_partials", [3, 3], F32),
        ("var_3_partials", [3, 3], F32),
        ("fn_group_0_semaphore", [3], I32),
    ]
    text = print_ir(sch.func)
    assert text.count("last_block_done(fn_group_0_semaphore[grid_row], 3)") == 1


# ---- refusals ------------------------------------------------------------------------------


def test_primitive_refusals():
    func, _ = lowered(reduction((3, 40), (1,)))
    with pytest.raises(ScheduleError, match="chunk_size must be a positive int, got 0"):
        IRSchedule(func).grid_reduce(0)
    with pytest.raises(ScheduleError, match="covers the whole reduction of 40 elements in one"):
        IRSchedule(func).grid_reduce(40)
    with pytest.raises(ScheduleError, match="lanes=4 needs threads: the lanes are a thread's"):
        IRSchedule(func).grid_reduce(8, lanes=4)
    with pytest.raises(ScheduleError, match="lanes must be a positive int, got 0"):
        IRSchedule(func).grid_reduce(32, 32, 0)
    with pytest.raises(
        ScheduleError, match="threads must be a power of two from 32 to 1024, got 48"
    ):
        IRSchedule(func).grid_reduce(96, 48)
    with pytest.raises(ScheduleError, match="chunk_size 20 is not a whole number of steps of 32"):
        IRSchedule(func).grid_reduce(20, 32, 2)
    sch = IRSchedule(func)
    sch.bind(sch.get_loops("var_1")[0], "blockIdx.x")
    with pytest.raises(ScheduleError, match="loop i_0 is not a plain serial loop"):
        sch.grid_reduce(8)
    sch = IRSchedule(func)
    sch.factorize_reduction("var_1", 32)
    with pytest.raises(ScheduleError, match="the Reduce is already across threadIdx.x"):
        sch.grid_reduce(8)
    two_loops, _ = lowered(reduction((3, 4, 40), (2,)))
    with pytest.raises(ScheduleError, match="under 2 loops; fuse them"):
        IRSchedule(two_loops).grid_reduce(8)
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[3, 40], dtype=F32)
    b.op("pd_op.argmax", x, b.op("pd_op.full", shape=[1], value=1, dtype=I64))
    arg, _ = lowered(program)
    with pytest.raises(ScheduleError, match="an ArgReduce .argmax / argmin. is not split"):
        IRSchedule(arg).grid_reduce(8)
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[40], dtype=F32)
    b.op("pd_op.softmax", x, axis=0)
    PassManager().run(program)
    (group,) = group_program(program)
    soft = lower_group(group, NameTable(program))
    with pytest.raises(ScheduleError, match=r"loops differ in extent \(var_1_tmp 1, .*40\)"):
        IRSchedule(soft).grid_reduce(8)
    program = Program()  # a variance: sum((x - mean)^2) reads the mean in its Reduce
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[3, 40], dtype=F32)
    axis = b.op("pd_op.full_int_array", value=[1])
    mean = b.op("pd_op.mean", x, axis, keepdim=True)
    d = b.op("pd_op.subtract", x, mean)
    b.op("pd_op.sum", b.op("pd_op.multiply", d, d), axis, keepdim=False, dtype=DataType.UNDEFINED)
    variance, pattern = lowered(program)
    assert "reads the reduction var_" in grid_problem(variance, pattern)
    sch = IRSchedule(variance)
    for block in sch.get_all_blocks():
        loops = sch.get_loops(block)
        if len(loops) > 1:
            sch.fuse(loops)
    with pytest.raises(ScheduleError, match="its Reduce reads var_.*_tmp, which block"):
        sch.grid_reduce(8)


def test_last_block_done_checks():
    counter = e.Buffer("c", I32, [4])
    node = s.LastBlockDone(counter, [e.IntImm(1, I32)], 3)
    assert node.dtype is BOOL and print_ir(node) == "last_block_done(c[1], 3)"
    with pytest.raises(TypeError, match="expected an int32 counter buffer, got float32"):
        s.LastBlockDone(e.Buffer("f", F32, [4]), [e.IntImm(0, I32)], 3)
    with pytest.raises(ValueError, match="expected a positive int, got 0"):
        s.LastBlockDone(counter, [e.IntImm(0, I32)], 0)


def test_codegen_refuses_a_grid_past_cudas_limit():
    func, _ = lowered(reduction((70000,), (0,)))
    sch = IRSchedule(func)
    row, chunk = sch.grid_reduce(1)
    sch.bind(row, "blockIdx.x")
    sch.bind(chunk, "blockIdx.y")
    with pytest.raises(ValueError, match="70000 blocks along blockIdx.y, more than CUDA's 65535"):
        generate_cuda([sch.func])


def test_codegen_refuses_last_block_done_under_a_thread_branch():
    counter = e.Buffer("sem", I32, [1])
    out = e.Buffer("out", I32, [1])
    t = e.Var("t", I32, 0, 32)
    body = s.For(
        t,
        0,
        32,
        s.ForType.SERIAL,
        s.IfThenElse(
            t.lt(e.IntImm(16, I32)),
            s.IfThenElse(
                s.LastBlockDone(counter, [e.IntImm(0, I32)], 2),
                s.Store(out, e.IntImm(1, I32), [e.IntImm(0, I32)]),
            ),
        ),
        s.BindInfo.THREAD_X,
    )
    func = s.LoweredFunc(
        "f", [s.Argument(out, s.ArgIO.OUTPUT), s.Argument(counter, s.ArgIO.WORKSPACE)], body
    )
    with pytest.raises(UnsupportedOpError, match="inside a branch on the thread index"):
        generate_cuda([func])


# ---- numbers on the emulator ----------------------------------------------------------------

FLOAT_OPS = ("sum", "max", "min", "mean")
NUMBER_CASES = {
    # name: shape, axes, keepdim, dtype, ops, feed kind
    "all-f32": ((129, 257), ALL2, False, F32, FLOAT_OPS, "uniform"),
    "all-f32-keep": ((129, 257), ALL2, True, F32, ("sum", "max"), "uniform"),
    "all-f32-prod": ((129, 257), ALL2, False, F32, ("prod",), "powers"),
    "all-f64": ((100, 170), ALL2, False, F64, ("sum", "max", "min"), "uniform"),
    "all-f16": ((97, 211), ALL2, False, F16, FLOAT_OPS, "uniform"),
    "all-bf16": ((97, 211), ALL2, False, BF16, ("sum", "min", "mean"), "uniform"),
    "all-i32": ((129, 257), ALL2, False, I32, ("sum", "max", "min"), "uniform"),
    "all-i32-prod": ((129, 257), ALL2, False, I32, ("prod",), "signs"),
    "all-i64": ((101, 199), ALL2, False, I64, ("sum", "max", "min", "prod"), "signs"),
    "all-bool": ((129, 257), ALL2, False, BOOL, ("all", "any"), "uniform"),
    "rows-f32": ((3, 100003), (1,), False, F32, ("sum", "max", "mean"), "uniform"),
    "rows-f16-keep": ((3, 30011), (1,), True, F16, ("sum", "max"), "uniform"),
    "axes12-f32": ((2, 5, 4099), (1, 2), False, F32, ("sum", "min"), "uniform"),
    "exact-multiples": ((4, 8192), ALL2, False, F32, ("sum",), "uniform"),
}


def _check(program: Program, feeds: dict, grid: bool = True):
    exe = cinn_py.compile(program, target="cuda-emu")
    assert len(exe.kernels) == 1
    kernel = exe.kernels[0]
    assert (kernel.grid[1] > 1) is grid, kernel  # G > 1 blocks per row on blockIdx.y
    got = exe.run(feeds)
    again = exe.run(feeds)
    want = run_reference(program, feeds)
    assert len(got) == len(want)
    for (name, value), expected in zip(got.items(), want, strict=True):
        dtype = "bfloat16" if np.asarray(expected).dtype == np.uint16 else None
        result = compare(np.asarray(value), np.asarray(expected), dtype)
        assert result.ok, f"{name}: {result}"
        assert np.array_equal(np.asarray(again[name]), np.asarray(value), equal_nan=True)
        assert np.asarray(value).tobytes() == np.asarray(again[name]).tobytes()
    return exe


@pytest.mark.parametrize("case", sorted(NUMBER_CASES))
def test_numbers_on_the_emulator(case):
    shape, axes, keepdim, dtype, ops, kind = NUMBER_CASES[case]
    _check(reduction(shape, axes, keepdim, dtype, ops), {"x": feed(shape, dtype, kind=kind)})


def test_bool_reductions_both_ways():
    """all / any of all-true, all-false and one-different inputs, on one compiled kernel
    (its workspace reused by every run)."""
    program = reduction((129, 257), ALL2, dtype=BOOL, ops=("all", "any"))
    exe = cinn_py.compile(program, target="cuda-emu")
    assert exe.kernels[0].grid[1] > 1
    ones, zeros = np.ones((129, 257), bool), np.zeros((129, 257), bool)
    one_off = ones.copy()
    one_off[128, 256] = False
    one_on = zeros.copy()
    one_on[0, 0] = True
    for x, (all_, any_) in [
        (ones, (True, True)),
        (zeros, (False, False)),
        (one_off, (False, True)),
        (one_on, (False, True)),
    ]:
        got = list(exe.run({"x": x}).values())
        assert [bool(v) for v in got] == [all_, any_]


@pytest.mark.parametrize(
    ("shape", "axes"), [((1,), (0,)), ((1, 1), ALL2), ((7, 13), ALL2), ((3, 600), (1,))]
)
def test_small_reductions_stay_in_one_block(shape, axes):
    _check(reduction(shape, axes, ops=("sum", "max")), {"x": feed(shape, F32)}, grid=False)


def test_nan_in_max_and_min():
    x = feed((129, 257), F32)
    x[77, 3] = np.nan
    _check(reduction((129, 257), ALL2, ops=("max", "min", "sum")), {"x": x})


VECTOR_CASES = {
    # name: shape, axes, keepdim, dtype, ops, feed kind, V, G (T = 1024, 4 steps)
    "all-f32": ((64, 1000), ALL2, False, F32, FLOAT_OPS, "uniform", 4, 4),  # last: 14848
    "all-f32-exact": ((4, 8192), ALL2, False, F32, ("sum", "max"), "uniform", 4, 2),
    "all-f32-prod": ((160, 256), ALL2, False, F32, ("prod",), "powers", 4, 3),
    "rows-f32": ((3, 40000), (1,), False, F32, ("sum", "max", "mean"), "uniform", 4, 3),
    "rows-f32-keep": ((2, 36000), (1,), True, F32, ("sum", "min"), "uniform", 4, 3),
    "rows-f32-v2": ((2, 40002), (1,), False, F32, ("sum", "max"), "uniform", 2, 5),
    "axes12-f32": ((2, 5, 4100), (1, 2), False, F32, ("sum", "min"), "uniform", 4, 2),
    "all-f16": ((256, 300), ALL2, False, F16, FLOAT_OPS, "uniform", 8, 3),
    "rows-f16-v4": ((2, 65540), (1,), False, F16, ("sum", "max"), "uniform", 4, 5),
    "rows-bf16": ((3, 65544), (1,), False, BF16, ("sum", "min", "mean"), "uniform", 8, 3),
    "all-f64": ((100, 170), ALL2, False, F64, ("sum", "max", "min"), "uniform", 2, 3),
    "all-i32": ((129, 256), ALL2, False, I32, ("sum", "max", "min"), "uniform", 4, 3),
    "all-i32-prod": ((129, 256), ALL2, False, I32, ("prod",), "signs", 4, 3),
    "all-i64": ((101, 200), ALL2, False, I64, ("sum", "max", "min", "prod"), "signs", 2, 3),
    "all-bool": ((129, 256), ALL2, False, BOOL, ("all", "any"), "uniform", 8, 2),
}


@pytest.mark.parametrize("case", sorted(VECTOR_CASES))
def test_vector_walk_numbers_on_the_emulator(case):
    """The chunk walk in vectors of V (16 bytes of the dtype, halved until V divides the
    row), every reduce kind and dtype, rows whose last chunk is shorter than L and not a
    whole number of steps, against the reference executor, the same bits run again."""
    shape, axes, keepdim, dtype, ops, kind, lanes, chunks = VECTOR_CASES[case]
    program = reduction(shape, axes, keepdim, dtype, ops)
    exe = _check(program, {"x": feed(shape, dtype, kind=kind)})
    assert exe.kernels[0].grid[1] == chunks
    assert re.search(rf"cinn_vec<[^>]*, {lanes}>", exe.cuda_source), case


def test_vector_walk_of_exp_with_nan():
    """sum / max / min of exp(x) over long rows, a NaN in one row: the cached walk reads
    x once for the three partials."""
    x = feed((3, 40000), F32)
    x[1, 39999] = np.nan
    program = reduction((3, 40000), (1,), ops=("sum", "max", "min"), exp=True)
    exe = _check(program, {"x": x})
    assert exe.cuda_source.count("reinterpret_cast<const cinn_vec<float, 4>*>(var_0 +") == 1


# ---- NVRTC and a real GPU --------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpu_grid_source():
    funcs = []
    for i, (shape, axes, dtype, ops) in enumerate(
        [
            ((8192, 8192), ALL2, F32, ("sum", "max", "mean")),
            ((4, 1 << 20), (1,), F16, FLOAT_OPS),
            ((4096, 4096), ALL2, BF16, ("sum", "min")),
            ((4096, 4096), ALL2, I32, ("sum", "prod")),
            ((4096, 4096), ALL2, I64, ("max",)),
            ((4096, 4096), ALL2, F64, ("sum",)),
            ((4096, 4096), ALL2, BOOL, ("all", "any")),
        ]
    ):
        stages = PIRCompiler(reduction(shape, axes, dtype=dtype, ops=ops), "cuda", arch="sm_90")
        (kernel,) = stages.stages(until="scheduled").fused
        assert isinstance(kernel.scheduled.launch, GridLaunch)
        func = kernel.scheduled.func
        funcs.append(s.LoweredFunc(f"grid{i}", func.args, func.body, func.temp_buffers))
    return generate_cuda(funcs)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_grid_kernels_compile_with_nvrtc(gpu_grid_source, arch):
    assert gpu_grid_source.kernels[0].grid == (1, 4096, 1)  # chunks of 4 x 1024 x 4
    assert "cinn_last_block_done(" in gpu_grid_source.source
    cubin = nvrtc.compile(gpu_grid_source.source, arch, name="grid_kernels.cu")
    assert cubin[:4] == b"\x7fELF"
    for kernel in gpu_grid_source.kernels:
        assert kernel.name.encode() in cubin


def _grid_ptx(shape, axes, dtype, ops, arch="sm_90"):
    """The grid kernel of `ops` over `shape` for `arch`: its launch, CUDA source and
    NVRTC's PTX (the test is skipped where NVRTC is not there)."""
    stages = PIRCompiler(reduction(shape, axes, dtype=dtype, ops=ops), "cuda", arch=arch)
    (kernel,) = stages.stages(until="scheduled").fused
    source = generate_cuda([kernel.scheduled.func])
    try:
        ptx = nvrtc.compile_ptx(source.source, arch)
    except (FileNotFoundError, OSError, ImportError) as error:
        pytest.skip(f"NVRTC is not available: {error}")
    return kernel.scheduled.launch, source, ptx


@pytest.mark.parametrize(
    ("dtype", "lanes", "chunks", "load"),
    [(F32, 4, 4096, "ld.global.nc.v4.f32"), (F16, 8, 2048, "ld.global.nc.v4.u32")],
)
def test_reduce_all_loads_16_byte_vectors(dtype, lanes, chunks, load):
    """sum of [8192, 8192] to 0-D on sm_90: each thread of the chunk walk loads its 4
    steps as 4 aligned 16-byte vectors into registers (unrolled, no local memory); the
    stage-2 fold reads the partials as scalars (volatile)."""
    launch, source, ptx = _grid_ptx((8192, 8192), ALL2, dtype, ("sum",))
    assert launch == GridLaunch(threads=1024, blocks=1, steps=4, chunks=chunks, lanes=lanes)
    assert source.kernels[0].grid == (1, chunks, 1)
    reads = re.findall(r"ld\.global\.nc\.[a-z0-9.]+", ptx)
    assert reads == [load] * 4
    assert "ld.volatile.global.f32" in ptx
    assert ".local" not in ptx and "__local_depot" not in ptx


@pytest.mark.parametrize(
    ("shape", "axes", "dtype", "ops", "width"),
    [
        ((4, 1 << 20), (1,), F32, ("sum", "max", "mean"), 16),
        ((4096, 4096), ALL2, BF16, ("sum", "min"), 16),
        ((4096, 4096), ALL2, I32, ("sum", "prod"), 16),
        ((4096, 4096), ALL2, I64, ("max",), 16),
        ((4096, 4096), ALL2, F64, ("sum",), 16),
        ((4096, 4096), ALL2, BOOL, ("all", "any"), 8),  # 8 lanes of one byte
        ((3, 1000004), (1,), F32, ("sum", "min"), 16),  # the last chunk guarded
        ((3, 1000002), (1,), F32, ("sum",), 8),  # 4 does not divide the row: V = 2
        ((3, 1000003), (1,), F32, ("sum",), 4),  # no vector does: the scalar walk
    ],
)
def test_vector_widths_in_the_ptx(shape, axes, dtype, ops, width):
    """Every read of x in the chunk walk is one vector of V lanes (16 bytes where V
    fills them), issued 4 times a thread (the steps), shared by sibling reductions;
    nothing spills to local memory."""
    launch, _, ptx = _grid_ptx(shape, axes, dtype, ops)
    reads = re.findall(r"ld\.global\.nc(?:\.v(\d))?\.[a-z]+(\d+)", ptx)
    widths = [int(n or 1) * int(bits) // 8 for n, bits in reads]
    assert widths and set(widths) == {width}, widths
    if width > dtype.itemsize:
        assert launch.lanes == width // dtype.itemsize and len(widths) == launch.steps
    assert ".local" not in ptx


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("shape", "axes", "dtype", "ops"),
    [
        ((8192, 8192), ALL2, F32, ("sum", "max", "mean")),
        ((4, 1 << 20), (1,), F16, ("sum", "max")),
        ((3, 100003), (1,), F32, ("sum", "min")),
        ((2048, 2048), ALL2, I64, ("sum",)),
    ],
)
def test_on_the_gpu(shape, axes, dtype, ops):
    program = reduction(shape, axes, dtype=dtype, ops=ops)
    exe = cinn_py.compile(program, target="cuda")
    assert len(exe.kernels) == 1 and exe.kernels[0].grid[1] > 1
    x = feed(shape, dtype)
    runs = [exe.run({"x": x}) for _ in range(3)]
    want = run_reference(program, {"x": x})
    for (name, value), expected in zip(runs[0].items(), want, strict=True):
        assert compare(np.asarray(value), np.asarray(expected)).ok, name
        for other in runs[1:]:  # whichever block finishes last: the same bits
            assert np.asarray(other[name]).tobytes() == np.asarray(value).tobytes()


def test_a_grid_reduction_and_a_shared_tile_share_one_unit_on_the_emulator() -> None:
    """Found by the fuzzer: a transpose's tile (a kernel's __shared__ array) and the grid
    reduction's last-block flag (a __shared__ static of an inline helper) in one
    translation unit made g++ refuse it ("section type conflict"): the helpers now have
    internal linkage, so no __shared__ static is a comdat object."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[256, 256], dtype=DataType.FLOAT32)
    y = b.op("pd_op.data", name="y", shape=[33, 256], dtype=DataType.FLOAT32)
    b.op("pd_op.transpose", y, perm=[1, 0])
    b.op("pd_op.sum", x, b.op("pd_op.full_int_array", value=[]), keepdim=False)
    rng = np.random.default_rng(3)
    feeds = {
        "x": rng.standard_normal((256, 256), dtype=np.float32),
        "y": rng.standard_normal((33, 256), dtype=np.float32),
    }
    exe = cinn_py.compile(program, target="cuda-emu")
    source = exe.cuda_source
    assert "__shared__ float" in source and "cinn_last_block_done" in source
    for got, want in zip(exe.run(feeds).values(), run_reference(program, feeds), strict=True):
        assert compare(np.asarray(got), want).ok


@pytest.mark.parametrize(("shape", "axes"), [((3, 70000), (1,)), ((1000, 1000), ALL2)])
def test_one_thread_of_a_block_stores_its_partial_and_the_total(shape, axes):
    """Every thread of a block holds the combine's total; thread x 0 alone stores the
    block's partial (and, in the last block, the row's total), one store a block, not
    one a thread (issue 19); the numbers are unchanged on the emulator."""
    program = reduction(shape, axes, ops=("sum", "max"))
    func, pattern = lowered(program)
    result = auto_schedule(func, CUDA, pattern)
    assert result.tactic == "grid"
    source = generate_cuda([result.func]).source
    partials = re.findall(r"if \(threadIdx\.x == 0\) \{\n\s+(\w+_partials)\[", source)
    totals = re.findall(r"if \(threadIdx\.x == 0\) \{\n\s+(var_\d+)\[", source)
    assert len(partials) == 2 and len(totals) == 2, source
    assert not re.search(r"\n\s+\w+_partials\[[^\n]*\] = acc", source.replace("{\n", "{"))
    exe = cinn_py.compile(reduction(shape, axes, ops=("sum", "max")), target="cuda-emu")
    x = feed(shape, F32, seed=3)
    got = list(exe.run({"x": x}).values())
    want = [x.astype(np.float64).sum(axis=axes), x.max(axis=axes)]
    for g, w in zip(got, want, strict=True):
        assert compare(g, w.astype(np.float32), override=(1e-5, 1e-3)).ok
