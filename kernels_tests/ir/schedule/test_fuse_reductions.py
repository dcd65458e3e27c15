"""fuse_reductions: sibling cross-thread reductions moved into one block (one walk, one
exchange). Golden IR and trace, values kept (interpreter), the CUDA it becomes (one
serial loop, one `cinn_block_reduce` of nested pairs), the group schedules using it,
and every refusal with its message."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest
from schedule_funcs import function, nest

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.expr import ArgReduce, Buffer, Load, ReduceType, Var
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.schedule.reduction_fusion import fusion_problem
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare


def siblings(
    shape: Sequence[int] = (3, 70),
    axes: Sequence[int] = (1,),
    ops: Sequence[str] = ("sum", "max"),
    dtype: DataType = DataType.FLOAT32,
) -> Program:
    """x -> each op of `ops` over `axes` (no keepdim): sibling reductions, one group."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    for op in ops:
        if op in ("all", "any"):
            b.op(f"pd_op.{op}", x, axis=list(axes), keepdim=False)
        elif op == "argmax":
            axis = b.op("pd_op.full", shape=[1], value=axes[0], dtype=DataType.INT64)
            b.op("pd_op.argmax", x, axis)
        elif op == "sum_of_squares":
            axes_value = b.op("pd_op.full_int_array", value=list(axes))
            b.op("pd_op.sum", b.op("pd_op.square", x), axes_value, dtype=DataType.UNDEFINED)
        else:
            extra = {"dtype": DataType.UNDEFINED} if op == "sum" else {}
            axes_value = b.op("pd_op.full_int_array", value=list(axes))
            b.op(f"pd_op.{op}", x, axes_value, keepdim=False, **extra)
    return program


def lowered(program: Program) -> LoweredFunc:
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program))


def factorized(func: LoweredFunc, threads: int = 32) -> IRSchedule:
    """Every reduction block's row on blockIdx.x, factorized over `threads` threads."""
    sch = IRSchedule(func)
    for block in sch.get_all_blocks():
        loops = sch.get_loops(block)
        sch.bind(sch.fuse(loops) if len(loops) > 1 else loops[0], "blockIdx.x")
        sch.factorize_reduction(block, threads)
    return sch


FUSED = """\
    thread_bind[blockIdx.x] for (i_0, 0, 3)
    {
      ScheduleBlock(var_1)
      {
        i0_0 = axis.bind(i_0)
        read_buffers(var_0[i0_0(0:3), r_0(0:70)])
        write_buffers(var_1[i0_0(0:3)], var_2[i0_0(0:3)])
        {
          var_1[i0_0] = Reduce(sum across threadIdx.x, Reduce(sum, select((((r_0_o * 32) + r_0_t) < 70), var_0[i0_0, ((r_0_o * 32) + r_0_t)], 0.00000000f),0.00000000f),0.00000000f)
          var_2[i0_0] = Reduce(Max across threadIdx.x, Reduce(Max, select((((r_0_o * 32) + r_0_t) < 70), var_0[i0_0, ((r_0_o * 32) + r_0_t)], -inf),-inf),-inf)
        }
      }
    }
"""  # noqa: E501


def test_fused_golden_trace_and_replay():
    func = lowered(siblings())
    sch = factorized(func)
    merged = sch.fuse_reductions(["var_2", "var_1"])  # any order: the first in the program
    assert merged.name == "var_1"
    assert [b.name for b in sch.get_all_blocks()] == ["var_1"]
    assert FUSED in print_ir(sch.func)
    assert str(sch.trace).splitlines()[-1] == "fuse_reductions(blocks=[var_2, var_1]) -> var_1"
    assert structural_equal(sch.trace.replay(func), sch.func)


def test_fused_blocks_compute_what_the_blocks_apart_compute():
    func = lowered(siblings(ops=("sum", "max", "min", "sum_of_squares")))
    apart = factorized(func)
    together = factorized(func)
    together.fuse_reductions([b.name for b in together.get_all_blocks()])
    assert len(together.get_all_blocks()) == 1
    x = np.random.default_rng(3).standard_normal((3, 70)).astype(np.float32)
    outs = [a.name for a in func.args if a.name != "var_0"]
    got = {n: np.zeros(3, np.float32) for n in outs}
    want = {n: np.zeros(3, np.float32) for n in outs}
    run_function(apart.func, {"var_0": x, **want})
    run_function(together.func, {"var_0": x, **got})
    for name in outs:
        np.testing.assert_array_equal(got[name], want[name])
    expected = sorted([x.sum(1), x.max(1), x.min(1), (x * x).sum(1)], key=lambda a: a[0])
    np.testing.assert_allclose(
        sorted(got.values(), key=lambda a: a[0]), expected, rtol=1e-5, atol=1e-5
    )


def test_codegen_walks_once_and_exchanges_once():
    sch = factorized(lowered(siblings(ops=("sum", "max", "min"))))
    sch.fuse_reductions([b.name for b in sch.get_all_blocks()])
    source = generate_cuda([sch.func]).source
    kernel = source[source.index('extern "C"') :]
    assert kernel.count("cinn_block_reduce<32>(") == 1
    assert (
        "cinn_block_reduce<32>(cinn_make_pair(v_3, cinn_make_pair(v_4, v_5)), "
        "cinn_pair_op<cinn_reduce_sum, cinn_pair_op<cinn_reduce_max, cinn_reduce_min>>())"
    ) in kernel
    assert kernel.count("for (int r_0_o = 0; r_0_o < 3; ++r_0_o)") == 1
    for half in ("total.first", "total.second.first", "total.second.second"):
        assert half in kernel


# ---- the group schedules ------------------------------------------------------------------


def _emu_matches_reference(program: Program, feeds: dict[str, np.ndarray]) -> str:
    exe = cinn_py.compile(program.clone(), target="cuda-emu")
    got = exe.run(feeds)
    want = run_reference(program, feeds)
    assert len(got) == len(want)
    for key, expected in zip(got, want, strict=True):
        result = compare(np.asarray(got[key]), np.asarray(expected))
        assert result.ok, f"{key}: {result}"
    return exe.cuda_source[exe.cuda_source.index('extern "C"') :]  # the kernels


@pytest.mark.parametrize(
    ("shape", "axes", "ops", "exchange"),
    [
        ((5, 4000), (1,), ("sum", "max", "min"), r"cinn_block_reduce<256>\("),
        ((9, 70), (1,), ("sum", "sum_of_squares"), r"cinn_block_reduce<32>\("),  # warp rows
        ((40, 333), (0,), ("sum", "max"), r"cinn_block_reduce_y<32, \d+>\("),  # columns
        ((6, 1000), (1,), ("sum", "all"), r"cinn_block_reduce<64>\("),  # float and bool
    ],
)
def test_schedules_fuse_sibling_reductions(shape, axes, ops, exchange):
    program = siblings(shape, axes, ops)
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(np.float32)
    if "all" in ops:
        x[rng.random(shape) < 0.01] = 0.0
    source = _emu_matches_reference(program, {"x": x})
    assert len(re.findall(exchange, source)) == 1, source
    assert "cinn_make_pair(" in source


def test_a_reduction_that_reads_another_stays_apart():
    """softmax: the sum of exp(x - max) reads the max, so two exchanges remain."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[4, 512], dtype=DataType.FLOAT32)
    b.op("pd_op.softmax", x, axis=-1)
    source = _emu_matches_reference(program, {"x": np.ones((4, 512), np.float32)})
    assert source.count("cinn_block_reduce<32>(") == 2  # warp rows: 128 vectors a row
    assert "cinn_make_pair(" not in source


# ---- refusals -----------------------------------------------------------------------------


def _refused(sch: IRSchedule, blocks: list[str], message: str) -> None:
    before = sch.func
    with pytest.raises(ScheduleError, match=message):
        sch.fuse_reductions(blocks)
    assert sch.func is before


def test_refuses_fewer_than_two_blocks_and_repeats():
    sch = factorized(lowered(siblings()))
    _refused(sch, ["var_1"], "fuse_reductions on block 'var_1': needs at least two blocks")
    _refused(sch, ["var_1", "var_1"], "on block 'var_1': the block is named twice")
    _refused(sch, ["var_1", "nope"], "on block 'nope': no such block")


def test_refuses_serial_reductions():
    sch = IRSchedule(lowered(siblings()))
    _refused(sch, ["var_1", "var_2"], "serial Reduce: factorize_reduction it first")


def two_argmaxes() -> LoweredFunc:
    """var_1[i] = argmax over k of var_0[i, k], var_2[i] = argmin: two ArgReduce blocks
    over rows of 64 (grouping keeps an argmax apart, so this one is built by hand)."""
    x = Buffer("var_0", DataType.FLOAT32, [4, 64])
    outs = [Buffer(f"var_{n}", DataType.INT64, [4]) for n in (1, 2)]
    nests = []
    for n, (out, kind) in enumerate(zip(outs, (ReduceType.MAX, ReduceType.MIN), strict=True)):
        k = Var(f"k_{n}", lower=0, upper=64)

        def value(iv: list[Var], k: Var = k, kind: ReduceType = kind) -> ArgReduce:
            return ArgReduce(kind, Load(x, [iv[0], k]), [k])

        nests.append(nest(out, [x], value, n, n))
    return function("fn_args", [x], outs, nests)


def test_refuses_argmax():
    sch = factorized(two_argmaxes())
    _refused(sch, ["var_1", "var_2"], r"argmax / argmin: its \(value, position\) pairs combine on")


def test_refuses_other_thread_counts_and_loops():
    func = lowered(siblings())
    sch = IRSchedule(func)
    sch.bind(sch.get_loops("var_1")[0], "blockIdx.x")
    sch.factorize_reduction("var_1", 32)
    sch.bind(sch.get_loops("var_2")[0], "blockIdx.x")
    sch.factorize_reduction("var_2", 64)
    _refused(sch, ["var_1", "var_2"], "it combines over 64 threads, the first block over 32")
    sch = IRSchedule(func)
    sch.factorize_reduction("var_1", 32)
    sch.bind(sch.get_loops("var_2")[0], "blockIdx.x")
    sch.factorize_reduction("var_2", 32)
    _refused(sch, ["var_1", "var_2"], r"its loop i_1 \(blockIdx.x, 0, 3\) does not match loop i_0")


def test_refuses_dependent_reductions():
    """x - max(x) summed: the sum reads the max (a temp), so it cannot share its pass."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[3, 70], dtype=DataType.FLOAT32)
    axes = b.op("pd_op.full_int_array", value=[1])
    top = b.op("pd_op.max", x, axes, keepdim=True)
    b.op("pd_op.sum", b.op("pd_op.subtract", x, top), axes, keepdim=True, dtype=DataType.UNDEFINED)
    sch = factorized(lowered(program))
    first, second = (b.name for b in sch.get_all_blocks())
    _refused(
        sch,
        [first, second],
        f"on block '{second}': it reads {first}, which block {first} writes: the "
        "reductions depend on each other",
    )
    assert fusion_problem(sch.func, first, second).startswith(f"it reads {first}, which")


def test_fusion_problem_is_none_for_siblings():
    sch = factorized(lowered(siblings()))
    assert fusion_problem(sch.func, "var_1", "var_2") is None
    before = sch.func
    assert fusion_problem(before, "var_1", "nope").startswith("no such block")
    assert sch.func is before


# ---- NVRTC ---------------------------------------------------------------------------------


def _ptx(program: Program, arch: str = "sm_90") -> str:
    compiler = PIRCompiler(program, "cuda", arch=arch)
    (kernel,) = compiler.stages(until="scheduled").fused
    return nvrtc.compile_ptx(generate_cuda([kernel.scheduled.func]).source, arch)


def _layer_norm(shape: Sequence[int], dtype: DataType) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    b.op("pd_op.layer_norm", x, None, None, begin_norm_axis=len(shape) - 1, epsilon=1e-5)
    return program


@pytest.mark.parametrize("dtype", [DataType.FLOAT32, DataType.FLOAT16])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_layer_norm_is_one_exchange_in_the_ptx(arch, dtype):
    """Mean and variance in one pass: one block exchange (its two barriers), against
    softmax's two (its sum reads the max); the row stays in registers."""
    ptx = _ptx(_layer_norm((4096, 4096), dtype), arch)
    assert ptx.count("bar.sync") == 2
    assert ".local" not in ptx
    softmax = Program()
    b = Builder(softmax)
    b.op("pd_op.softmax", b.op("pd_op.data", name="x", shape=[4096, 4096], dtype=dtype), axis=-1)
    assert _ptx(softmax, arch).count("bar.sync") == 4


@pytest.mark.parametrize(
    ("shape", "axes", "ops"),
    [((64, 4096), (1,), ("sum", "all", "max")), ((4096, 256), (0,), ("sum", "sum_of_squares"))],
)
def test_nvrtc_compiles_pair_exchanges(shape, axes, ops):
    """A float / bool / float triple across threadIdx.x, a pair across threadIdx.y."""
    ptx = _ptx(siblings(shape, axes, ops))
    assert ptx.count("bar.sync") == 2 and ".local" not in ptx
