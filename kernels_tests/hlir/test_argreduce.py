"""The `ArgReduce` IR node (argmax / argmin): construction checks, its text form, the
mutator and simplifier, `evaluate`, the interpreter, the CUDA C it becomes (golden, and
run on cuda-emu and NVRTC), and the argmax / argmin lowering's IR and grouping.

Numbers for every axis, flatten, keepdims, dtype and NaN / tie configuration come from
the case table (`op_cases.py`: the interpreter, cuda-emu and NVRTC run them all).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from op_cases import CASES, Net, fused_group

import cinn_py
from cinn_py.backends import cuda_emu, nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.errors import UnsupportedOpError
from cinn_py.hlir.group import GroupKind
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import can_lower, lower_group
from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.expr import (
    GT,
    Add,
    ArgReduce,
    Buffer,
    Cast,
    FloatImm,
    IntImm,
    Load,
    Mul,
    ReduceType,
    Select,
    Sub,
    Var,
)
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.schedule.analysis import has_reduce
from cinn_py.ir.simplify import simplify
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    Block,
    BufferRange,
    For,
    ForType,
    IfThenElse,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Store,
)
from cinn_py.ir.visitor import Mutator, structural_equal
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import lookup_op_def
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait

F32, F16, BF16 = DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16
I32, I64 = DataType.INT32, DataType.INT64
MAX, MIN = ReduceType.MAX, ReduceType.MIN
NAN, INF = math.nan, math.inf

r = Var("r", I32, 0, 7)
x = Var("x", F32)


# ---- construction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "exc", "message"),
    [
        (
            lambda: ArgReduce(ReduceType.SUM, x, [r]),
            ValueError,
            "ArgReduce.reduce_type: expected max or min, got sum",
        ),
        (lambda: ArgReduce(MAX, "x", [r]), TypeError, "ArgReduce.body: expected Expr, got str"),
        (
            lambda: ArgReduce(MAX, GT(x, x), [r]),
            TypeError,
            "ArgReduce.body: expected a number, got bool",
        ),
        (lambda: ArgReduce(MAX, x, []), ValueError, "ArgReduce.reduce_axis: must not be empty"),
        (
            lambda: ArgReduce(MAX, x, [Var("k")]),
            ValueError,
            "ArgReduce.reduce_axis[0]: 'k' has no constant range",
        ),
        (
            lambda: ArgReduce(MAX, x, [r, IntImm(0)]),
            TypeError,
            "ArgReduce.reduce_axis[1]: expected Var, got IntImm",
        ),
        (
            lambda: ArgReduce(MAX, x, [r], F32),
            ValueError,
            "ArgReduce.dtype: expected int32 or int64, got float32",
        ),
    ],
)
def test_construction_is_checked(make, exc, message):
    with pytest.raises(exc, match=message.replace("[", r"\[").replace("]", r"\]")):
        make()


def test_fields_start_value_and_position():
    a = Var("a", I32, 2, 5)
    node = ArgReduce(MIN, Cast(F32, Var("v", I32)), [a, r], I32)
    assert node.dtype is I32 and node.reduce_axis == (a, r) and node.lanes == 1
    assert ArgReduce(MAX, x, [r]).dtype is I64  # Paddle's default
    assert ArgReduce(MAX, x, [r]).start_value().value == -INF
    assert node.start_value().value == INF
    assert ArgReduce(MAX, Var("n", I32), [r]).start_value().value == -(2**31)
    assert ArgReduce(MIN, Var("n", DataType.INT8), [r]).start_value().value == 127
    # Row-major over the axes' ranges, from 0: (a - 2) * 7 + r.
    assert print_ir(simplify(node.position())) == "(((a * 7) + r) - 14)"
    wide = ArgReduce(MAX, x, [a, r], I64).position()
    assert print_ir(simplify(wide)) == "(((int64(a) * 7ll) + int64(r)) - 14ll)"


# ---- text, mutator, simplifier, evaluate ---------------------------------------------------


def test_prints_kind_body_axes_and_dtype():
    a = Var("a", I32, 0, 3)
    buf = Buffer("var_0", F16, [3, 7])
    node = ArgReduce(MAX, Cast(F32, Load(buf, [a, r])), [a, r], I32)
    assert print_ir(node) == "ArgReduce(argmax, float32(var_0[a, r]), [a, r], int32)"
    assert print_ir(ArgReduce(MIN, x, [r])) == "ArgReduce(argmin, x, [r], int64)"


def test_mutator_and_simplify_rebuild_it():
    node = ArgReduce(MAX, Add(Mul(x, FloatImm(1.0)), FloatImm(0.0)), [r], I32)
    simple = simplify(node)
    assert isinstance(simple, ArgReduce) and simple.dtype is I32
    assert print_ir(simple) == "ArgReduce(argmax, (x + 0.00000000f), [r], int32)"
    assert simplify(simple) is simple  # nothing left to do: the same object

    class Rename(Mutator):
        def visit_Var(self, var: Var) -> Var:
            return Var(var.name + "_1", var.dtype, var.lower, var.upper)

    renamed = Rename().visit(node)
    assert renamed.reduce_axis[0].name == "r_1" and renamed.reduce_axis[0].upper == 7
    assert structural_equal(node, ArgReduce(MAX, node.body, [Var("r", I32, 0, 7)], I32))
    assert not structural_equal(node, ArgReduce(MIN, node.body, [r], I32))
    assert not structural_equal(node, ArgReduce(MAX, node.body, [r], I64))
    assert has_reduce(Add(IntImm(1), node))


def test_evaluate_takes_the_first_best_position():
    # -(r - 3)^2 peaks at r = 3; as a float it ties at r = 2 and r = 4 for argmin over
    # [2, 5): the first wins.
    d = Cast(F32, Sub(r, IntImm(3)))
    assert evaluate(ArgReduce(MAX, Mul(FloatImm(-1.0), Mul(d, d)), [r]), {}) == 3
    near = ArgReduce(MIN, Mul(FloatImm(-1.0), Mul(d, d)), [Var("r", I32, 2, 5)])
    assert evaluate(near, {}) == 0
    # Two axes: the position is row-major over the ranges (lower bounds subtracted).
    a, b = Var("a", I32, 1, 3), Var("b", I32, 0, 4)
    value = Cast(F32, Add(Mul(a, IntImm(10)), b))
    assert evaluate(ArgReduce(MAX, value, [a, b]), {}) == 7  # a = 2, b = 3
    # A NaN never wins; an outer Var is read from env.
    nan_at_2 = Select(r.eq(IntImm(2)), FloatImm(NAN), Cast(F32, r))
    assert evaluate(ArgReduce(MAX, Mul(nan_at_2, x), [r]), {"x": 1.0}) == 6
    assert evaluate(ArgReduce(MIN, Mul(nan_at_2, x), [r]), {"x": -1.0}) == 6
    assert evaluate(ArgReduce(MAX, FloatImm(NAN), [r]), {}) == 0


# ---- interpreter, CUDA C, cuda-emu, NVRTC ------------------------------------------------------


def argmax_function(kind: ReduceType = MAX, dtype: DataType = F16) -> LoweredFunc:
    """out[i] = argmax over x[i, 1:4, 0:5] (two axes, the first starting at 1), int64."""
    x_buf, out = Buffer("x", dtype, [3, 4, 5]), Buffer("out", I64, [3])
    i, i0 = Var("i", I32, 0, 3), Var("i0", I32, 0, 3)
    r1, r2 = Var("r1", I32, 1, 4), Var("r2", I32, 0, 5)
    value = ArgReduce(kind, Cast(F32, Load(x_buf, [i0, r1, r2])), [r1, r2], I64)
    block = ScheduleBlock([i0], [], [BufferRange(out, [i0])], "out", Store(out, value, [i0]))
    loop = For(i, 0, 3, ForType.SERIAL, Block([ScheduleBlockRealize([i], block)]))
    root = ScheduleBlockRealize([], ScheduleBlock([], [], [], "root", Block([loop])))
    return LoweredFunc("fn_argmax", [Argument(x_buf), Argument(out, ArgIO.OUTPUT)], root)


GOLDEN_CUDA = """\
extern "C" __global__ void __launch_bounds__(1) fn_argmax(const __half* __restrict__ x, long long* __restrict__ out) {
  for (int i = 0; i < 3; ++i) {
    {
      const int i0 = i;
      float best = (-CINN_PY_INF_F);
      long long arg = 0ll;
      for (int r1 = 1; r1 < 4; ++r1) {
        for (int r2 = 0; r2 < 5; ++r2) {
          const float v = __half2float(x[((i0 * 20) + (r1 * 5)) + r2]);
          if (v > best) {
            best = v;
            arg = ((static_cast<long long>(r1) * 5ll) + static_cast<long long>(r2)) - 5ll;
          }
        }
      }
      out[i0] = arg;
    }
  }
}
"""


def _inputs() -> np.ndarray:
    x = np.random.default_rng(7).integers(-3, 4, size=(3, 4, 5)).astype(np.float16)
    x[0, 1:, :] = np.nan  # all NaN in the searched part: position 0
    x[0, 0, :] = 100  # outside the searched rows (r1 starts at 1)
    x[1, 1:, :] = -np.inf
    x[1, 2, 3] = np.nan  # every other value is -inf: position 0 (argmax)
    x[2, 3, 4] = np.nan
    return x


def _want(x: np.ndarray, kind: ReduceType) -> np.ndarray:
    part = x[:, 1:, :].reshape(3, -1).astype(np.float32)
    fill = -np.inf if kind is MAX else np.inf
    pick = np.argmax if kind is MAX else np.argmin
    return pick(np.where(np.isnan(part), fill, part), axis=1).astype(np.int64)


def test_golden_cuda():
    source = generate_cuda([argmax_function()]).source
    assert source.split("#endif /* CINN_PY_RUNTIME_H */\n\n")[1] == GOLDEN_CUDA
    argmin = generate_cuda([argmax_function(MIN, F32)]).source
    assert "float best = CINN_PY_INF_F;" in argmin and "if (v < best) {" in argmin
    assert "const float v = x[((i0 * 20) + (r1 * 5)) + r2];" in argmin


@pytest.mark.parametrize("kind", [MAX, MIN])
def test_interpreter_and_cuda_emu_agree_with_the_reference_rule(kind):
    x = _inputs()
    want = _want(x, kind)
    assert want[0] == 0 and (kind is MIN or want[1] == 0)
    func = argmax_function(kind)
    got = np.full(3, -1, np.int64)
    run_function(func, {"x": x, "out": got})
    np.testing.assert_array_equal(got, want)
    cuda = generate_cuda([func])
    emu = np.full(3, -1, np.int64)
    kernel = cuda.kernels[0]
    cuda_emu.compile(cuda.source).launch(kernel.name, kernel.grid, kernel.block, [x, emu])
    np.testing.assert_array_equal(emu, want)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_compiles_with_nvrtc(arch):
    source = generate_cuda([argmax_function(), argmax_function(MIN, BF16)]).source
    assert nvrtc.compile(source, arch, name="argreduce.cu")[:4] == b"\x7fELF"


def test_outside_a_stored_value_is_unsupported():
    func = argmax_function()
    loop = func.body.schedule_block.body.stmts[0]
    guard = GT(ArgReduce(MAX, FloatImm(1.0), [r]), IntImm(0, I64))
    body = ScheduleBlockRealize([], ScheduleBlock([], [], [], "root", IfThenElse(guard, loop)))
    with pytest.raises(
        UnsupportedOpError,
        match=r"op 'ir.ArgReduce' appears outside a stored value \(code generation of fn_argmax\)",
    ):
        generate_cuda([LoweredFunc(func.name, func.args, body)])


# ---- lowering -----------------------------------------------------------------------------


LOWERED = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 7)
    {
      ScheduleBlock(var_1)
      {
        i0_0 = axis.bind(i_0)
        read_buffers(var_0[i0_0(0:7), r_0(0:33)])
        write_buffers(var_1[i0_0(0:7)])
        var_1[i0_0] = ArgReduce(argmax, float32(var_0[i0_0, r_0]), [r_0], int64)
      }
    }
  }
}"""


def _lowered(case_id: str) -> str:
    program, _ = next(c for c in CASES if c.id == case_id).build()
    return print_ir(lower_group(fused_group(program), NameTable(program)))


def test_lowered_ir():
    assert _lowered("argmax-f16-7x33-am1-i64") == LOWERED
    # flatten reduces every dim; keepdims keeps the rank with 1s (iter vars at 0).
    text = _lowered("argmin-f32-2x3x5-flat-keep-i64")
    assert "read_buffers(var_0[r_0(0:2), r_1(0:3), r_2(0:5)])" in text
    assert (
        "var_1[i0_0, i1_0, i2_0] = ArgReduce(argmin, var_0[r_0, r_1, r_2], [r_0, r_1, r_2], int64)"
        in text
    )
    # A 0-D input's one element is at position 0: no node at all.
    assert "var_1[] = 0ll" in _lowered("argmax-f32-0d-a0-i64")
    assert "var_1[] = 0" in _lowered("argmin-f32-0d-am1-i32")


def _argmax_program(shape, axis=0, **attrs) -> Program:
    program = Program()
    net = Net(program)
    x = net.data("x0", shape, F32)
    net.op("argmax", x, net.scalar(axis, I64), **{"keepdims": False, "flatten": False, **attrs})
    return program


def test_grouping_and_can_lower():
    assert all(
        lookup_op_def(n).has_trait(Trait.ARG_REDUCTION) for n in ("pd_op.argmax", "pd_op.argmin")
    )
    program = _argmax_program((4, 6), 1)
    PassManager().run(program)
    argmax = next(op for op in program.block if op.name == "pd_op.argmax")
    assert can_lower(argmax)
    (group,) = group_program(program)
    assert group.kind is GroupKind.FUSED and [op.name for op in group.ops] == ["pd_op.argmax"]
    # An empty search (the reference raises) and an unfolded axis stay library ops.
    empty = _argmax_program((0, 6), 0)
    PassManager().run(empty)
    assert not can_lower(next(op for op in empty.block if op.name == "pd_op.argmax"))
    dynamic = Program()
    net = Net(dynamic)
    op = net.op(
        "argmax", net.data("x0", (4, 6), F32), net.data("a", (1,), I64), keepdims=False
    ).defining_op
    assert not can_lower(op)


def test_compiled_through_the_public_api():
    program = _argmax_program((5, 9), -1, dtype=I32)
    x = np.random.default_rng(3).standard_normal((5, 9)).astype(np.float32)
    x[0] = np.nan
    x[1, :4] = np.nan
    x[2, 3] = x[2, 7] = 50.0
    exe = cinn_py.compile(program, target="cuda-emu")
    assert [g.kind for g in exe.groups] == [GroupKind.FUSED]
    assert "arg = r_0;" in exe.cuda_source
    (got,) = exe.run({"x0": x}).values()
    want = np.argmax(np.where(np.isnan(x), -np.inf, x), axis=1)
    assert np.asarray(got).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), want)
    assert list(want[:3]) == [0, int(np.argmax(x[1, 4:])) + 4, 3]


# ---- across threads (factorize_reduction) ----------------------------------------------------


def test_thread_axis_is_checked_printed_and_compared():
    t, o = Var("r_t", I32, 0, 32), Var("r_o", I32, 0, 4)
    node = ArgReduce(MAX, x, [o, t], I64, "threadIdx.x")
    assert node.thread_axis == "threadIdx.x" and ArgReduce(MAX, x, [r]).thread_axis is None
    assert print_ir(node) == "ArgReduce(argmax across threadIdx.x, x, [r_o, r_t], int64)"
    assert print_ir(ArgReduce(MIN, x, [t], I32, "threadIdx.y")) == (
        "ArgReduce(argmin across threadIdx.y, x, [r_t], int32)"
    )
    assert not structural_equal(node, ArgReduce(MAX, x, [o, t], I64))
    assert not structural_equal(node, ArgReduce(MAX, x, [o, t], I64, "threadIdx.y"))
    assert simplify(ArgReduce(MAX, Add(x, FloatImm(0.0)), [o, t], I64, "threadIdx.x")).thread_axis

    class Rename(Mutator):
        def visit_Var(self, var: Var) -> Var:
            return Var(var.name + "_1", var.dtype, var.lower, var.upper)

    assert Rename().visit(node).thread_axis == "threadIdx.x"
    # Its value is the serial one's: row-major over [r_o, r_t] is r_o * 32 + r_t.
    d = Cast(F32, Sub(Add(Mul(o, IntImm(32)), t), IntImm(70)))  # flat position - 70
    peak = Mul(FloatImm(-1.0), Mul(d, d))
    assert evaluate(ArgReduce(MAX, peak, [o, t], I64, "threadIdx.x"), {}) == 70
    with pytest.raises(ValueError, match=r"ArgReduce.thread_axis: expected a threadIdx axis"):
        ArgReduce(MAX, x, [t], I64, "blockIdx.x")
    with pytest.raises(ValueError, match=r"the thread axis 'r' \(the last\) must start at 0"):
        ArgReduce(MAX, x, [Var("r", I32, 1, 8)], I64, "threadIdx.x")


GOLDEN_ACROSS_X = """\
extern "C" __global__ void __launch_bounds__(32) fn_argmax(const __half* __restrict__ x, long long* __restrict__ out) {
  for (int i = 0; i < 3; ++i) {
    {
      const int i0 = i;
      long long arg;
      {
        const int r1_t = threadIdx.x;
        float best = (-CINN_PY_INF_F);
        long long arg_1 = 0ll;
        const float v = ((r1_t < 15) ? __half2float(x[((i0 * 20) + r1_t) + 5]) : (-CINN_PY_INF_F));
        if (v > best) {
          best = v;
          arg_1 = static_cast<long long>(r1_t);
        }
        cinn_block_arg_reduce<32>(best, arg_1, cinn_arg_max());
        arg = arg_1;
      }
      out[i0] = arg;
    }
  }
}
"""


def _across(kind: ReduceType, dtype: DataType, threads: int, axis: str) -> LoweredFunc:
    """argmax_function factorized over `threads` threads on `axis` (along y, its output
    loop on threadIdx.x: a 3 x threads block)."""
    sch = IRSchedule(argmax_function(kind, dtype))
    if axis == "threadIdx.y":
        (loop,) = sch.get_loops("out")
        sch.bind(loop, "threadIdx.x")
    sch.factorize_reduction("out", threads, axis)
    return sch.func


def test_golden_cuda_across_threads():
    source = generate_cuda([_across(MAX, F16, 32, "threadIdx.x")]).source
    assert source.split("#endif /* CINN_PY_RUNTIME_H */\n\n")[1] == GOLDEN_ACROSS_X
    y = generate_cuda([_across(MIN, BF16, 4, "threadIdx.y")])
    assert y.kernels[0].block == (3, 4, 1)
    assert "cinn_block_arg_reduce_y<3, 4>(best, arg_1, cinn_arg_min());" in y.source
    assert "for (int r1_o = 0; r1_o < 4; ++r1_o) {" in y.source


@pytest.mark.parametrize("kind", [MAX, MIN])
@pytest.mark.parametrize(
    ("threads", "axis"), [(32, "threadIdx.x"), (64, "threadIdx.x"), (4, "threadIdx.y")]
)
def test_across_threads_on_cuda_emu_and_the_interpreter(kind, threads, axis):
    """The NaN / -inf / tie rows of `_inputs`: the pair combine gives the serial result."""
    x = _inputs()
    want = _want(x, kind)
    func = _across(kind, F16, threads, axis)
    got = np.full(3, -1, np.int64)
    run_function(func, {"x": x, "out": got})
    np.testing.assert_array_equal(got, want)
    cuda = generate_cuda([func])
    emu = np.full(3, -1, np.int64)
    kernel = cuda.kernels[0]
    cuda_emu.compile(cuda.source).launch(kernel.name, kernel.grid, kernel.block, [x, emu])
    np.testing.assert_array_equal(emu, want)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_across_threads_compiles_with_nvrtc(arch):
    funcs = [
        _across(MAX, F16, 64, "threadIdx.x"),
        _across(MIN, BF16, 4, "threadIdx.y"),
        _across(MAX, F32, 32, "threadIdx.x"),
    ]
    funcs = [LoweredFunc(f"{f.name}_{i}", f.args, f.body) for i, f in enumerate(funcs)]
    source = generate_cuda(funcs).source
    assert nvrtc.compile(source, arch, name="argreduce_across.cu")[:4] == b"\x7fELF"
