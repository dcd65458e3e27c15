"""Golden CINN text for every node kind, constructor checks, visitor and mutator."""

from __future__ import annotations

import re

import pytest

from cinn_py.ir import (
    Add,
    ArgIO,
    ArgReduce,
    Argument,
    BindInfo,
    Block,
    Broadcast,
    Buffer,
    BufferRange,
    Call,
    CallType,
    Cast,
    FloatImm,
    For,
    ForType,
    IfThenElse,
    IntImm,
    Let,
    Load,
    LoweredFunc,
    Max,
    MemoryType,
    Min,
    Mutator,
    Not,
    Ramp,
    Reduce,
    ReduceType,
    Reduction,
    ScheduleBlock,
    ScheduleBlockRealize,
    Select,
    Store,
    SyncThreads,
    Tensor,
    UIntImm,
    Var,
    Visitor,
    print_ir,
    structural_equal,
    structural_hash,
)
from cinn_py.pir.dtypes import DataType as D

i = Var("i")
j = Var("j")
x = Var("x", D.FLOAT32)
b = Var("b", D.BOOL)
A = Tensor("var_35", D.FLOAT32, [16, 8])
B = Buffer("_B", D.FLOAT32, [16], MemoryType.SHARED)
S = Store(B, FloatImm(1.0), [IntImm(0)])  # a statement for the bodies of the others

EXPR_GOLDEN = [
    (IntImm(3), "3"),
    (IntImm(-3, D.INT64), "-3ll"),
    (IntImm(7, D.INT16), "(int16_t)7"),
    (IntImm(7, D.INT8), "(int8_t)7"),
    (UIntImm(True), "true"),
    (UIntImm(5, D.UINT8), "(uint8_t)5"),
    (FloatImm(1.0), "1.00000000f"),
    (FloatImm(0.1), "0.100000001f"),
    (FloatImm(0.5, D.FLOAT64), "0.50000000000000000"),
    (FloatImm(float("inf")), "inf"),
    (FloatImm(1.5, D.FLOAT16), "(float16)1.5f"),
    (i, "i"),
    (Cast(D.FLOAT32, i), "float32(i)"),
    (i + j, "(i + j)"),
    (i - 1, "(i - 1)"),
    (i * 2, "(i * 2)"),
    (i / 4, "(i / 4)"),
    (i % 4, "(i % 4)"),
    (2 + i, "(2 + i)"),
    (Min(i, j), "cinn_min(i, j)"),
    (Max(i, j), "cinn_max(i, j)"),
    (i.eq(j), "(i == j)"),
    (i.ne(j), "(i != j)"),
    (i.lt(j), "(i < j)"),
    (i.le(j), "(i <= j)"),
    (i.gt(j), "(i > j)"),
    (i.ge(j), "(i >= j)"),
    (b & i.lt(4), "(b and (i < 4))"),
    (b | b, "(b or b)"),
    (~b, "!b"),
    (Not(i.lt(j)), "!(i < j)"),
    (Select(i.lt(j), x, x * 2.0), "select((i < j), x, (x * 2.00000000f))"),
    (Load(A, [i, j]), "var_35[i, j]"),
    (Call("tan", [x], D.FLOAT32), "tan(x)"),
    (
        Call("cinn_nvgpu_foo", [x, IntImm(2)], D.FLOAT32, CallType.INTRINSIC),
        "cinn_nvgpu_foo(x, 2)",
    ),
    (Ramp(i, IntImm(1), 4), "Ramp(i,1,4)"),
    (Broadcast(x, 4), "Broadcast(x,4)"),
    (
        Reduce(ReduceType.SUM, FloatImm(0.0), Load(A, [i, j]), [j]),
        "Reduce(sum, var_35[i, j],0.00000000f)",
    ),
    (Reduce(ReduceType.MAX, x, x, [j]), "Reduce(Max, x,x)"),
    (Reduce(ReduceType.ALL, UIntImm(True), b, [j]), "Reduce(&&, b,true)"),
    (A, "Tensor(var_35, [16,8])"),
    (B, "_Buffer_<float32: 16>(_B)"),
]


@pytest.mark.parametrize(("node", "text"), EXPR_GOLDEN, ids=[t for _, t in EXPR_GOLDEN])
def test_expr_text(node, text):
    assert print_ir(node) == text


STMT_GOLDEN = [
    (Store(A, x, [i, j]), "var_35[i, j] = x"),
    (Let(Var("t"), i + 1), "int32 t = (i + 1)"),
    (SyncThreads(), "__syncthreads()"),
    (
        Block([Store(A, x, [i, j]), SyncThreads()]),
        "{\n  var_35[i, j] = x\n  __syncthreads()\n}",
    ),
    (For(i, 0, 16, ForType.SERIAL, Store(A, x, [i, j])), "serial for (i, 0, 16)\nvar_35[i, j] = x"),
    (
        For(i, 0, 16, ForType.PARALLEL, Block([Store(A, x, [i, j])])),
        "parallel for (i, 0, 16)\n{\n  var_35[i, j] = x\n}",
    ),
    (For(i, 0, 4, ForType.VECTORIZED, Block([])), "vectorize[4] for (i, 0, 4)\n{\n\n}"),
    (For(i, 0, 4, ForType.UNROLLED, S), "unroll for (i, 0, 4)\n_B[0] = 1.00000000f"),
    (
        For(i, 0, 256, ForType.SERIAL, S, BindInfo.THREAD_X),
        "thread_bind[threadIdx.x] for (i, 0, 256)\n_B[0] = 1.00000000f",
    ),
    (
        For(i, 0, 8, ForType.SERIAL, S, BindInfo.BLOCK_Y),
        "thread_bind[blockIdx.y] for (i, 0, 8)\n_B[0] = 1.00000000f",
    ),
    (IfThenElse(i.lt(4), S), "if ((i < 4)) {\n  _B[0] = 1.00000000f\n}"),
    (
        IfThenElse(i.lt(4), S, Store(A, x, [i, j])),
        "if ((i < 4)) {\n  _B[0] = 1.00000000f\n} else {\n  var_35[i, j] = x\n}",
    ),
    (
        BufferRange(A, [Var("i0", lower=0, upper=16), Var("i1")]),
        "var_35[i0(0:16), i1(undefined:undefined)]",
    ),
    (
        ScheduleBlock([i], [], [], "blk", S),
        "ScheduleBlock(blk)\n{\n  i\n  _B[0] = 1.00000000f\n}",
    ),
    (
        ScheduleBlockRealize([], ScheduleBlock([], [], [], "root", Block([SyncThreads()]))),
        "ScheduleBlock(root)\n{\n  {\n    __syncthreads()\n  }\n}",
    ),
]


@pytest.mark.parametrize(
    ("node", "text"), STMT_GOLDEN, ids=[str(n) for n in range(len(STMT_GOLDEN))]
)
def test_stmt_text(node, text):
    assert print_ir(node) == text


def _elementwise_func() -> LoweredFunc:
    src = Tensor("var_35", D.FLOAT32, [16])
    dst = Tensor("var_36", D.FLOAT32, [16])
    i_fused = Var("i_fused")
    i0 = Var("i0_14")
    block = ScheduleBlock(
        [i0],
        [BufferRange(src, [Var("i0_14", lower=0, upper=16)])],
        [BufferRange(dst, [Var("i0_14", lower=0, upper=16)])],
        "var_36",
        Store(dst, Call("tan", [Load(src, [i0])], D.FLOAT32), [i0]),
        {"auto_unroll": 4},
    )
    loop = For(i_fused, 0, 16, ForType.SERIAL, Block([ScheduleBlockRealize([i_fused], block)]))
    root = ScheduleBlockRealize([], ScheduleBlock([], [], [], "root", Block([loop])))
    args = [
        Argument(Buffer("var_35", D.FLOAT32, [16])),
        Argument(Buffer("var_36", D.FLOAT32, [16]), ArgIO.OUTPUT),
    ]
    return LoweredFunc("fn_tan", args, Block([root]))


LOWERED_FUNC = """\
function fn_tan (var_35, var_36)
{
  ScheduleBlock(root)
  {
    {
      serial for (i_fused, 0, 16)
      {
        ScheduleBlock(var_36)
        {
          i0_14 = axis.bind(i_fused)
          read_buffers(var_35[i0_14(0:16)])
          write_buffers(var_36[i0_14(0:16)])
          attrs(auto_unroll:4)
          var_36[i0_14] = tan(var_35[i0_14])
        }
      }
    }
  }
}"""


def test_lowered_func_text():
    assert print_ir(_elementwise_func()) == LOWERED_FUNC


CONSTRUCTOR_ERRORS = [
    (lambda: i + x, TypeError, "Add.b: operand dtypes differ: int32 vs float32"),
    (lambda: Load(A, [i]), ValueError, "Load.indices: 1 indices for 'var_35' of rank 2"),
    (lambda: Store(A, x, [i]), ValueError, "Store.indices: 1 indices for 'var_35' of rank 2"),
    (lambda: Store(A, i, [i, j]), TypeError, "Store.value: dtype int32 is not var_35's float32"),
    (lambda: Load(A, [i, x]), ValueError, "Load.indices[1]: expected an integer expression"),
    (lambda: Select(i, x, x), TypeError, "Select.condition: expected bool"),
    (lambda: Select(b, x, i), TypeError, "Select.false_value: branch dtypes differ"),
    (lambda: Not(i), TypeError, "Not.value: expected bool"),
    (lambda: b & i.lt(j) & i, TypeError, "And.b: operand dtypes differ"),
    (lambda: x % x, TypeError, "Mod.a: expected integer operands"),
    (lambda: IntImm(1.5), TypeError, "IntImm.value: expected int"),
    (lambda: IntImm(1, D.FLOAT32), ValueError, "IntImm.dtype: expected a signed integer type"),
    (lambda: FloatImm(1.0, D.INT32), ValueError, "FloatImm.dtype: expected a float type"),
    (lambda: Var("v", lower=4, upper=4), ValueError, "Var.upper: empty range [4, 4)"),
    (lambda: Var(""), ValueError, "Var.name: must not be empty"),
    (lambda: Cast("float32", i), TypeError, "Cast.dtype: expected a DataType"),
    (
        lambda: For(x, 0, 4, ForType.SERIAL, SyncThreads()),
        ValueError,
        "For.loop_var: expected an integer",
    ),
    (
        lambda: For(i, 0, j, ForType.VECTORIZED, SyncThreads()),
        ValueError,
        "For.extent: a vectorized loop needs",
    ),
    (
        lambda: For(i, 0, 4, ForType.PARALLEL, SyncThreads(), BindInfo.THREAD_X),
        ValueError,
        "For.bind_info: a parallel loop cannot be bound to threadIdx.x",
    ),
    (
        lambda: For(i, IntImm(0, D.INT64), 4, ForType.SERIAL, SyncThreads()),
        TypeError,
        "For.min: dtype int64",
    ),
    (lambda: IfThenElse(i, SyncThreads()), TypeError, "IfThenElse.condition: expected bool"),
    (lambda: Block([1]), TypeError, "Block.stmts[0]: expected Stmt or Expr, got int"),
    (
        lambda: ScheduleBlockRealize([i], ScheduleBlock([], [], [], "blk", SyncThreads())),
        ValueError,
        "ScheduleBlockRealize.iter_values: 1 values for 0 iter_vars of block 'blk'",
    ),
    (
        lambda: BufferRange(A, [i]),
        ValueError,
        "BufferRange.ranges: 1 ranges for 'var_35' of rank 2",
    ),
    (lambda: Reduce(ReduceType.SUM, IntImm(0), x, [j]), TypeError, "Reduce.init: dtype int32"),
    (lambda: Reduce(ReduceType.ANY, x, x, [j]), TypeError, "Reduce.body: any needs bool"),
    (lambda: Reduce(ReduceType.SUM, x, x, []), ValueError, "Reduce.reduce_axis: must not be empty"),
    (lambda: Ramp(x, x, 4), ValueError, "Ramp.base: expected an integer"),
    (lambda: Ramp(i, IntImm(1), 1), ValueError, "Ramp.lanes: expected an int >= 2"),
    (lambda: Broadcast(Ramp(i, IntImm(1), 4), 4), ValueError, "Broadcast.value: expected a scalar"),
    (lambda: Ramp(i, IntImm(1), 4) + i, ValueError, "Add.b: operand lanes differ: 4 vs 1"),
    (lambda: Tensor("t", D.INT32, [4], B), TypeError, "Tensor.buffer: dtype float32 is not int32"),
    (lambda: Let(Var("t"), x), TypeError, "Let.value: dtype float32 is not int32"),
    (
        lambda: LoweredFunc("f", [Argument(B), Argument(B)], Block([])),
        ValueError,
        "LoweredFunc.args: duplicate argument names ['_B']",
    ),
    (
        lambda: Reduce(ReduceType.SUM, x, x, [j], "blockIdx.x"),
        ValueError,
        "Reduce.thread_axis: expected a threadIdx axis, got 'blockIdx.x'",
    ),
    (
        lambda: Reduce(ReduceType.SUM, x, x, [i, j], "threadIdx.x"),
        ValueError,
        "Reduce.thread_axis: a cross-thread Reduce has exactly one axis",
    ),
]


@pytest.mark.parametrize(
    ("build", "exc", "message"), CONSTRUCTOR_ERRORS, ids=[m for _, _, m in CONSTRUCTOR_ERRORS]
)
def test_constructor_errors(build, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        build()


def test_nodes_are_immutable():
    node = i + j
    with pytest.raises(AttributeError, match="Add is immutable"):
        node.a = j


def test_eq_is_identity_and_structural_equal_compares_trees():
    a, c = i * 4 + j, Var("i") * 4 + Var("j")
    assert a != c
    assert structural_equal(a, c)
    assert structural_hash(a) == structural_hash(c)
    assert not structural_equal(a, i * 4 + i)
    assert not structural_equal(IntImm(1), UIntImm(1, D.UINT8))
    assert len({structural_hash(n) for n, _ in EXPR_GOLDEN}) > 30


class _CountVars(Visitor):
    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Var(self, node: Var) -> None:
        self.names.append(node.name)


def test_visitor_reaches_every_var():
    counter = _CountVars()
    counter.visit(_elementwise_func())
    assert counter.names.count("i_fused") == 2
    assert "i0_14" in counter.names


class _RenameJ(Mutator):
    def visit_Var(self, node: Var) -> Var:
        return Var("k") if node.name == "j" else node


def test_mutator_returns_same_object_when_nothing_changes():
    func = _elementwise_func()
    assert _RenameJ().visit(func) is func
    store = Store(A, x, [i * 2, i])
    assert _RenameJ().visit(store) is store


def test_mutator_rebuilds_only_the_changed_path():
    left = Load(A, [i, i])
    tree = Block([Store(A, left + x, [i, j]), Store(A, x, [i, i])])
    new = _RenameJ().visit(tree)
    assert new is not tree
    assert print_ir(new) == "{\n  var_35[i, k] = (var_35[i, i] + x)\n  var_35[i, i] = x\n}"
    assert new.stmts[1] is tree.stmts[1]
    assert new.stmts[0].value is tree.stmts[0].value
    assert new.stmts[0].indices[0] is i


def test_binary_ops_of_python_numbers_take_the_expr_dtype():
    assert isinstance(x * 2, type(x * x))
    assert (x * 2).b.dtype is D.FLOAT32
    assert (Var("n", D.INT64) + 1).b.dtype is D.INT64
    assert isinstance(i + 1, Add)


class _Reductions(Visitor):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def visit_Reduction(self, node: Reduction) -> None:
        self.seen.append(type(node).__name__)
        self.generic_visit(node)


class _ReduceFirst(_Reductions):
    def visit_Reduce(self, node: Reduce) -> None:
        self.seen.append("visit_Reduce")
        self.generic_visit(node)


def test_dispatch_falls_back_along_the_class_hierarchy():
    r = Var("r", lower=0, upper=8)
    arg = ArgReduce(ReduceType.MAX, Load(A, [i, r]), [r])
    total = Reduce(ReduceType.SUM, IntImm(0, D.INT64), arg, [j])
    assert isinstance(arg, Reduction) and isinstance(total, Reduction)
    both = _Reductions()
    both.visit(total)
    assert both.seen == ["Reduce", "ArgReduce"]  # one visit_Reduction serves both
    first = _ReduceFirst()
    first.visit(total)
    assert first.seen == ["visit_Reduce", "ArgReduce"]  # a node's own method comes first
    both.visit(Store(A, x, [i, j]))  # no method for Store or its bases: generic_visit
    assert both.seen == ["Reduce", "ArgReduce"]


class _DropArgReduce(Mutator):
    def visit_Reduction(self, node: Reduction) -> IntImm:
        return IntImm(0, node.dtype)


def test_mutator_dispatch_falls_back_too_and_keys_stay_by_node_kind():
    r = Var("r", lower=0, upper=8)
    arg = ArgReduce(ReduceType.MAX, Load(A, [i, r]), [r])
    assert print_ir(_DropArgReduce().visit(arg + 1)) == "(0ll + 1ll)"
    same = ArgReduce(ReduceType.MAX, Load(A, [i, r]), [r])
    assert arg != same and structural_equal(arg, same)
    assert not structural_equal(
        Reduce(ReduceType.MAX, x, x, [r]), Reduce(ReduceType.MIN, x, x, [r])
    )
