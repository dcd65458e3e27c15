"""The expression nodes of CINN's loop-level AST, and the buffers they read.

Every node is immutable: its fields are fixed by the constructor, which checks them
(dtype agreement, index counts), so a node that exists is well formed. Children are
listed in `_fields`, in constructor order, which is what lets the visitor, the mutator
and `structural_equal` walk every node kind without a case per kind.

`==` on nodes is identity (Python's default), so nodes can key dicts and sets by
object; structural comparison is `structural_equal`. Comparisons that build IR are
methods (`a.lt(b)`, `a.eq(b)`); arithmetic uses the operators (`a + b`, `i * 4`,
`i / 4` is CINN's `Div`, truncating for integers, `i % 4` is `Mod`).
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from cinn_py.pir.dtypes import DataType


def as_int(value: Any) -> Any:
    """A number read from the dims being compiled (`ir.dim_guards.GuardedInt`) as its
    plain int, recorded exactly (it goes into the IR); anything else as it is."""
    if type(value) is int or not getattr(value, "dim_guarded", False):
        return value
    return value.exact()


class IrNode:
    """Base of every node: immutable, with children listed in `_fields`."""

    __slots__ = ("_key",)
    _fields: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _init(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_key", None)

    def field_values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self._fields)

    def __repr__(self) -> str:
        from cinn_py.ir.printer import print_ir

        return print_ir(self)


def _fail(node: str, field: str, why: str, exc: type[Exception] = ValueError) -> Exception:
    return exc(f"{node}.{field}: {why}")


def _check_node(node: str, field: str, value: Any, cls: type | tuple[type, ...]) -> None:
    if not isinstance(value, cls):
        names = cls.__name__ if isinstance(cls, type) else " or ".join(c.__name__ for c in cls)
        raise _fail(node, field, f"expected {names}, got {type(value).__name__}", TypeError)


def _check_dtype(node: str, field: str, value: Any) -> None:
    if not isinstance(value, DataType):
        raise _fail(node, field, f"expected a DataType, got {type(value).__name__}", TypeError)


def _exprs(node: str, field: str, values: Any) -> tuple[Expr, ...]:
    items = tuple(values)
    for i, v in enumerate(items):
        _check_node(node, f"{field}[{i}]", v, Expr)
    return items


def _check_index(node: str, field: str, value: Expr) -> None:
    if not value.dtype.is_integer:
        raise _fail(node, field, f"expected an integer expression, got {value.dtype.value}")


class Expr(IrNode):
    """A node with a value: every Expr has a `dtype` (and `lanes`, 1 unless a vector)."""

    __slots__ = ()

    @property
    def lanes(self) -> int:
        return 1

    def _other(self, other: Any) -> Expr:
        return other if isinstance(other, Expr) else make_const(other, self.dtype)

    def __add__(self, other: Any) -> Add:
        return Add(self, self._other(other))

    def __radd__(self, other: Any) -> Add:
        return Add(self._other(other), self)

    def __sub__(self, other: Any) -> Sub:
        return Sub(self, self._other(other))

    def __rsub__(self, other: Any) -> Sub:
        return Sub(self._other(other), self)

    def __mul__(self, other: Any) -> Mul:
        return Mul(self, self._other(other))

    def __rmul__(self, other: Any) -> Mul:
        return Mul(self._other(other), self)

    def __truediv__(self, other: Any) -> Div:
        return Div(self, self._other(other))

    def __rtruediv__(self, other: Any) -> Div:
        return Div(self._other(other), self)

    def __mod__(self, other: Any) -> Mod:
        return Mod(self, self._other(other))

    def __rmod__(self, other: Any) -> Mod:
        return Mod(self._other(other), self)

    def __and__(self, other: Any) -> And:
        return And(self, self._other(other))

    def __or__(self, other: Any) -> Or:
        return Or(self, self._other(other))

    def __invert__(self) -> Not:
        return Not(self)

    def eq(self, other: Any) -> EQ:
        return EQ(self, self._other(other))

    def ne(self, other: Any) -> NE:
        return NE(self, self._other(other))

    def lt(self, other: Any) -> LT:
        return LT(self, self._other(other))

    def le(self, other: Any) -> LE:
        return LE(self, self._other(other))

    def gt(self, other: Any) -> GT:
        return GT(self, self._other(other))

    def ge(self, other: Any) -> GE:
        return GE(self, self._other(other))


# ---- immediates and variables -------------------------------------------------------


class IntImm(Expr):
    __slots__ = ("value", "dtype")
    _fields = ("value", "dtype")

    def __init__(self, value: int, dtype: DataType = DataType.INT32) -> None:
        _check_dtype("IntImm", "dtype", dtype)
        if not dtype.is_integer or dtype is DataType.UINT8:
            raise _fail("IntImm", "dtype", f"expected a signed integer type, got {dtype.value}")
        value = as_int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise _fail("IntImm", "value", f"expected int, got {type(value).__name__}", TypeError)
        self._init(value=value, dtype=dtype)


class UIntImm(Expr):
    """An unsigned constant; `bool` constants are UIntImm, as in CINN (uint1)."""

    __slots__ = ("value", "dtype")
    _fields = ("value", "dtype")

    def __init__(self, value: int | bool, dtype: DataType = DataType.BOOL) -> None:
        _check_dtype("UIntImm", "dtype", dtype)
        if dtype not in (DataType.BOOL, DataType.UINT8):
            raise _fail("UIntImm", "dtype", f"expected bool or uint8, got {dtype.value}")
        if not isinstance(value, int) or value < 0:
            raise _fail("UIntImm", "value", f"expected a non-negative int, got {value!r}")
        if dtype is DataType.BOOL:
            value = bool(value)
        self._init(value=value, dtype=dtype)


class FloatImm(Expr):
    __slots__ = ("value", "dtype")
    _fields = ("value", "dtype")

    def __init__(self, value: float, dtype: DataType = DataType.FLOAT32) -> None:
        _check_dtype("FloatImm", "dtype", dtype)
        if not dtype.is_float:
            raise _fail("FloatImm", "dtype", f"expected a float type, got {dtype.value}")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _fail(
                "FloatImm", "value", f"expected float, got {type(value).__name__}", TypeError
            )
        self._init(value=float(value), dtype=dtype)


class Var(Expr):
    """A named scalar. Bounds, when known, are constants: `lower <= var < upper`."""

    __slots__ = ("name", "dtype", "lower", "upper")
    _fields = ("name", "dtype", "lower", "upper")

    def __init__(
        self,
        name: str,
        dtype: DataType = DataType.INT32,
        lower: int | None = None,
        upper: int | None = None,
    ) -> None:
        _check_node("Var", "name", name, str)
        if not name:
            raise _fail("Var", "name", "must not be empty")
        _check_dtype("Var", "dtype", dtype)
        lower, upper = as_int(lower), as_int(upper)
        for field, bound in (("lower", lower), ("upper", upper)):
            if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool)):
                raise _fail("Var", field, f"expected int or None, got {bound!r}", TypeError)
        if lower is not None and upper is not None and lower >= upper:
            raise _fail("Var", "upper", f"empty range [{lower}, {upper})")
        self._init(name=name, dtype=dtype, lower=lower, upper=upper)


def make_const(value: int | float | bool, dtype: DataType) -> Expr:
    """A constant of `dtype` holding `value` (a Python number)."""
    if dtype is DataType.BOOL or dtype is DataType.UINT8:
        return UIntImm(int(value), dtype)
    if dtype.is_integer:
        return IntImm(int(value), dtype)
    if dtype.is_float:
        return FloatImm(float(value), dtype)
    raise TypeError(f"make_const: no constant of type {dtype.value}")


class Cast(Expr):
    __slots__ = ("dtype", "value")
    _fields = ("dtype", "value")

    def __init__(self, dtype: DataType, value: Expr) -> None:
        _check_dtype("Cast", "dtype", dtype)
        _check_node("Cast", "value", value, Expr)
        self._init(dtype=dtype, value=value)

    @property
    def lanes(self) -> int:
        return self.value.lanes


# ---- binary and logical operators ---------------------------------------------------


class BinaryOp(Expr):
    """Two operands of one dtype and lane count."""

    __slots__ = ("a", "b", "dtype")
    _fields = ("a", "b")

    def __init__(self, a: Expr, b: Expr) -> None:
        name = type(self).__name__
        _check_node(name, "a", a, Expr)
        _check_node(name, "b", b, Expr)
        if a.dtype is not b.dtype:
            raise _fail(
                name, "b", f"operand dtypes differ: {a.dtype.value} vs {b.dtype.value}", TypeError
            )
        if a.lanes != b.lanes:
            raise _fail(name, "b", f"operand lanes differ: {a.lanes} vs {b.lanes}")
        self._check_operand_type(a.dtype)
        self._init(a=a, b=b, dtype=self._result_type(a.dtype))

    def _check_operand_type(self, dtype: DataType) -> None:
        if dtype is DataType.BOOL or dtype is DataType.UNDEFINED:
            raise _fail(type(self).__name__, "a", f"arithmetic on {dtype.value}", TypeError)

    def _result_type(self, dtype: DataType) -> DataType:
        return dtype

    @property
    def lanes(self) -> int:
        return self.a.lanes


class Add(BinaryOp):
    __slots__ = ()


class Sub(BinaryOp):
    __slots__ = ()


class Mul(BinaryOp):
    __slots__ = ()


class Div(BinaryOp):
    """Division; truncating toward zero on integers (C semantics)."""

    __slots__ = ()


class Mod(BinaryOp):
    """Remainder with the dividend's sign on integers (C semantics)."""

    __slots__ = ()

    def _check_operand_type(self, dtype: DataType) -> None:
        super()._check_operand_type(dtype)
        if not dtype.is_integer:
            raise _fail("Mod", "a", f"expected integer operands, got {dtype.value}", TypeError)


class Min(BinaryOp):
    __slots__ = ()


class Max(BinaryOp):
    __slots__ = ()


class CmpOp(BinaryOp):
    """A comparison: operands of any one type, a bool result."""

    __slots__ = ()

    def _check_operand_type(self, dtype: DataType) -> None:
        if dtype is DataType.UNDEFINED:
            raise _fail(type(self).__name__, "a", "comparison of undefined values", TypeError)

    def _result_type(self, dtype: DataType) -> DataType:
        return DataType.BOOL


class EQ(CmpOp):
    __slots__ = ()


class NE(CmpOp):
    __slots__ = ()


class LT(CmpOp):
    __slots__ = ()


class LE(CmpOp):
    __slots__ = ()


class GT(CmpOp):
    __slots__ = ()


class GE(CmpOp):
    __slots__ = ()


class LogicalOp(BinaryOp):
    __slots__ = ()

    def _check_operand_type(self, dtype: DataType) -> None:
        if dtype is not DataType.BOOL:
            raise _fail(
                type(self).__name__, "a", f"expected bool operands, got {dtype.value}", TypeError
            )


class And(LogicalOp):
    __slots__ = ()


class Or(LogicalOp):
    __slots__ = ()


class Not(Expr):
    __slots__ = ("value", "dtype")
    _fields = ("value",)

    def __init__(self, value: Expr) -> None:
        _check_node("Not", "value", value, Expr)
        if value.dtype is not DataType.BOOL:
            raise _fail("Not", "value", f"expected bool, got {value.dtype.value}", TypeError)
        self._init(value=value, dtype=DataType.BOOL)


class Select(Expr):
    __slots__ = ("condition", "true_value", "false_value", "dtype")
    _fields = ("condition", "true_value", "false_value")

    def __init__(self, condition: Expr, true_value: Expr, false_value: Expr) -> None:
        _check_node("Select", "condition", condition, Expr)
        _check_node("Select", "true_value", true_value, Expr)
        _check_node("Select", "false_value", false_value, Expr)
        if condition.dtype is not DataType.BOOL:
            raise _fail(
                "Select", "condition", f"expected bool, got {condition.dtype.value}", TypeError
            )
        if true_value.dtype is not false_value.dtype:
            raise _fail(
                "Select",
                "false_value",
                f"branch dtypes differ: {true_value.dtype.value} vs {false_value.dtype.value}",
                TypeError,
            )
        self._init(
            condition=condition,
            true_value=true_value,
            false_value=false_value,
            dtype=true_value.dtype,
        )


class CallType(enum.Enum):
    INTRINSIC = "intrinsic"
    EXTERN = "extern"


class Call(Expr):
    """A call of a named function (`tan`, `cinn_warp_reduce_sum`) returning `dtype`."""

    __slots__ = ("name", "args", "dtype", "call_type")
    _fields = ("name", "args", "dtype", "call_type")

    def __init__(
        self,
        name: str,
        args: tuple[Expr, ...] | list[Expr],
        dtype: DataType,
        call_type: CallType = CallType.EXTERN,
    ) -> None:
        _check_node("Call", "name", name, str)
        _check_dtype("Call", "dtype", dtype)
        _check_node("Call", "call_type", call_type, CallType)
        self._init(name=name, args=_exprs("Call", "args", args), dtype=dtype, call_type=call_type)


# ---- vectors ------------------------------------------------------------------------


class Ramp(Expr):
    """`lanes` values `base, base + stride, ...`."""

    __slots__ = ("base", "stride", "lanes_", "dtype")
    _fields = ("base", "stride", "lanes_")

    def __init__(self, base: Expr, stride: Expr, lanes: int) -> None:
        _check_node("Ramp", "base", base, Expr)
        _check_node("Ramp", "stride", stride, Expr)
        _check_index("Ramp", "base", base)
        if stride.dtype is not base.dtype:
            raise _fail(
                "Ramp", "stride", f"dtype {stride.dtype.value} differs from base's", TypeError
            )
        lanes = as_int(lanes)
        if not isinstance(lanes, int) or lanes < 2:
            raise _fail("Ramp", "lanes", f"expected an int >= 2, got {lanes!r}")
        self._init(base=base, stride=stride, lanes_=lanes, dtype=base.dtype)

    @property
    def lanes(self) -> int:
        return self.lanes_


class Broadcast(Expr):
    __slots__ = ("value", "lanes_", "dtype")
    _fields = ("value", "lanes_")

    def __init__(self, value: Expr, lanes: int) -> None:
        _check_node("Broadcast", "value", value, Expr)
        if value.lanes != 1:
            raise _fail("Broadcast", "value", "expected a scalar")
        lanes = as_int(lanes)
        if not isinstance(lanes, int) or lanes < 2:
            raise _fail("Broadcast", "lanes", f"expected an int >= 2, got {lanes!r}")
        self._init(value=value, lanes_=lanes, dtype=value.dtype)

    @property
    def lanes(self) -> int:
        return self.lanes_


# ---- buffers, tensors, loads, reductions --------------------------------------------


class MemoryType(enum.Enum):
    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"


def _shape(node: str, shape: Any) -> tuple[Expr, ...]:
    items = tuple(IntImm(s) if isinstance(s, int) else s for s in map(as_int, shape))
    for i, s in enumerate(_exprs(node, "shape", items)):
        _check_index(node, f"shape[{i}]", s)
    return items


class Buffer(IrNode):
    """Memory of `dtype` and `shape` in one memory space.

    An on-chip buffer (local: registers, shared: the thread block's shared memory)
    keeps its logical shape: the interpreter runs threads and thread blocks one after
    another and needs all of their elements. `array_dims` are the dims codegen
    declares in the on-chip array (each thread's registers, or the thread block's
    shared array), indexed row-major by those dims' indices; the other dims are spread
    over the GPU axes (and serial loops around a shared tile), so codegen drops them.
    With none, a local buffer is one register per thread, `name[0]`, and a shared one a
    single element per thread block."""

    __slots__ = ("name", "dtype", "shape", "memory_type", "array_dims")
    _fields = ("name", "dtype", "shape", "memory_type", "array_dims")

    def __init__(
        self,
        name: str,
        dtype: DataType,
        shape: tuple[Expr | int, ...] | list[Expr | int],
        memory_type: MemoryType = MemoryType.GLOBAL,
        array_dims: tuple[int, ...] = (),
    ) -> None:
        _check_node("Buffer", "name", name, str)
        _check_dtype("Buffer", "dtype", dtype)
        _check_node("Buffer", "memory_type", memory_type, MemoryType)
        items = _shape("Buffer", shape)
        dims = tuple(array_dims)
        if dims and memory_type is MemoryType.GLOBAL:
            raise _fail("Buffer", "array_dims", "a global buffer has none: it is indexed whole")
        if list(dims) != sorted(set(dims)) or any(
            not isinstance(d, int) or not 0 <= d < len(items) for d in dims
        ):
            raise _fail(
                "Buffer",
                "array_dims",
                f"{dims} are not distinct, sorted dims of rank {len(items)}",
            )
        self._init(name=name, dtype=dtype, shape=items, memory_type=memory_type, array_dims=dims)


class Tensor(IrNode):
    """A named value of `shape`, stored in `buffer` once one is bound."""

    __slots__ = ("name", "dtype", "shape", "buffer")
    _fields = ("name", "dtype", "shape", "buffer")

    def __init__(
        self,
        name: str,
        dtype: DataType,
        shape: tuple[Expr | int, ...] | list[Expr | int],
        buffer: Buffer | None = None,
    ) -> None:
        _check_node("Tensor", "name", name, str)
        _check_dtype("Tensor", "dtype", dtype)
        shape = _shape("Tensor", shape)
        if buffer is not None:
            _check_node("Tensor", "buffer", buffer, Buffer)
            if buffer.dtype is not dtype:
                raise _fail(
                    "Tensor",
                    "buffer",
                    f"dtype {buffer.dtype.value} is not {dtype.value}",
                    TypeError,
                )
        self._init(name=name, dtype=dtype, shape=shape, buffer=buffer)


def storage_name(node: Buffer | Tensor) -> str:
    """The name of the memory a Load or Store of `node` touches: a Tensor's bound
    buffer's, else its own."""
    if isinstance(node, Tensor) and node.buffer is not None:
        return node.buffer.name
    return node.name


def check_access(node: str, tensor: Any, indices: Any) -> tuple[Expr, ...]:
    """The indices of a Load or Store of `tensor`, checked against its rank."""
    _check_node(node, "tensor", tensor, (Tensor, Buffer))
    items = _exprs(node, "indices", indices)
    if len(items) != len(tensor.shape):
        raise _fail(
            node,
            "indices",
            f"{len(items)} indices for '{tensor.name}' of rank {len(tensor.shape)}",
        )
    for i, index in enumerate(items):
        _check_index(node, f"indices[{i}]", index)
    return items


class Load(Expr):
    __slots__ = ("tensor", "indices", "dtype")
    _fields = ("tensor", "indices")

    def __init__(self, tensor: Tensor | Buffer, indices: tuple[Expr, ...] | list[Expr]) -> None:
        items = check_access("Load", tensor, indices)
        self._init(tensor=tensor, indices=items, dtype=tensor.dtype)

    @property
    def lanes(self) -> int:
        return max((i.lanes for i in self.indices), default=1)


class ReduceType(enum.Enum):
    SUM = "sum"
    PROD = "prod"
    MAX = "max"
    MIN = "min"
    ALL = "all"
    ANY = "any"


_THREAD_AXES = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
"""What a cross-thread reduction's `thread_axis` may name."""


class Reduction(Expr):
    """The base of the two reduction nodes, `Reduce` and `ArgReduce`: `body` combined by
    `reduce_type` over the vars of `reduce_axis` (never empty, each a Var), serially, or
    across the threads of a block when `thread_axis` ("threadIdx.x" / "threadIdx.y" /
    "threadIdx.z") is set, the axis over the threads then being the last of
    `reduce_axis` (a cross-thread Reduce's only one).

    It is not a node kind: nothing constructs a bare Reduction, and each subclass keeps
    its own `__slots__` and `_fields` (so keys, equality, printing and rebuilding are by
    the concrete class, as before). It exists for the code that treats both alike: a
    question of "is this any reduction" (`isinstance(x, Reduction)`: `has_reduce`,
    `find_reduces`, where a walk of a statement's eager Loads stops, what the simplifier
    counts as computing on values), and a Visitor / Mutator whose handling of both is
    one `visit_Reduction` (dispatch falls back along the class hierarchy,
    `visitor.Visitor`). Where the two differ (the printer, the interpreter, codegen's
    accumulators, factorize_reduction) they keep a method each.
    """

    __slots__ = ()

    reduce_type: ReduceType
    body: Expr
    reduce_axis: tuple[Var, ...]
    thread_axis: str | None

    @staticmethod
    def _check_reduce_axis(
        node: str, reduce_axis: tuple[Var, ...] | list[Var], constant_range: bool = False
    ) -> tuple[Var, ...]:
        """`reduce_axis` as a tuple: each item a Var (with a constant range if
        `constant_range`), and at least one."""
        axis = tuple(reduce_axis)
        for i, v in enumerate(axis):
            _check_node(node, f"reduce_axis[{i}]", v, Var)
            if constant_range and (v.lower is None or v.upper is None):
                raise _fail(node, f"reduce_axis[{i}]", f"'{v.name}' has no constant range")
        if not axis:
            raise _fail(node, "reduce_axis", "must not be empty")
        return axis

    @staticmethod
    def _check_thread_axis(node: str, thread_axis: str | None) -> None:
        if thread_axis is not None and thread_axis not in _THREAD_AXES:
            raise _fail(node, "thread_axis", f"expected a threadIdx axis, got {thread_axis!r}")


class Reduce(Reduction):
    """`body` combined by `reduce_type` over `reduce_axis`, starting from `init`.

    `thread_axis` ("threadIdx.x") marks a cross-thread reduction, made by the schedule's
    `factorize_reduction`: its one axis ranges over the threads of a block, each thread
    evaluates `body` at its own index, and every thread gets the combination of all of
    them (codegen: warp shuffles and a shared-memory block reduce). Its value is the
    same as the serial Reduce's, so the interpreter evaluates it as one.
    """

    __slots__ = ("reduce_type", "init", "body", "reduce_axis", "thread_axis", "dtype")
    _fields = ("reduce_type", "init", "body", "reduce_axis", "thread_axis")

    def __init__(
        self,
        reduce_type: ReduceType,
        init: Expr,
        body: Expr,
        reduce_axis: tuple[Var, ...] | list[Var],
        thread_axis: str | None = None,
    ) -> None:
        _check_node("Reduce", "reduce_type", reduce_type, ReduceType)
        _check_node("Reduce", "init", init, Expr)
        _check_node("Reduce", "body", body, Expr)
        if init.dtype is not body.dtype:
            raise _fail(
                "Reduce",
                "init",
                f"dtype {init.dtype.value} is not body's {body.dtype.value}",
                TypeError,
            )
        if reduce_type in (ReduceType.ALL, ReduceType.ANY) and body.dtype is not DataType.BOOL:
            raise _fail(
                "Reduce",
                "body",
                f"{reduce_type.value} needs bool, got {body.dtype.value}",
                TypeError,
            )
        axis = self._check_reduce_axis("Reduce", reduce_axis)
        self._check_thread_axis("Reduce", thread_axis)
        if thread_axis is not None and len(axis) != 1:
            raise _fail("Reduce", "thread_axis", "a cross-thread Reduce has exactly one axis")
        self._init(
            reduce_type=reduce_type,
            init=init,
            body=body,
            reduce_axis=axis,
            thread_axis=thread_axis,
            dtype=body.dtype,
        )


class ArgReduce(Reduction):
    """The position of the first maximum (`reduce_type` MAX) or minimum (MIN) of `body`
    over `reduce_axis`, counted row-major over the axes' ranges (the first axis
    outermost) from 0, as a `dtype` (int32 or int64) value: argmax / argmin.

    A NaN value never wins: the search starts from the value that loses to everything
    (-inf / the type's lowest for MAX) at position 0 and moves only to a value strictly
    better, so NaN counts as -inf (MAX) / +inf (MIN) and ties keep the first position,
    as the reference's argmax (NaN replaced, then NumPy's first maximum) does. Every
    axis needs constant bounds: the position is defined by them.

    `thread_axis` ("threadIdx.x" / "threadIdx.y") marks a cross-thread argmax, made by
    the schedule's `factorize_reduction`: the LAST axis (lower bound 0) ranges over the
    threads of a block, each thread searches the other axes serially at its own index
    (its partial: best value and position), and the (value, position) pairs are
    combined across the threads (codegen: `cinn_block_arg_reduce`), every thread getting
    the result. With the thread axis the innermost digit of the row-major position
    (`o * T + t`), the value is the serial ArgReduce's, so the interpreter evaluates it
    as one.
    """

    __slots__ = ("reduce_type", "body", "reduce_axis", "dtype", "thread_axis")
    _fields = ("reduce_type", "body", "reduce_axis", "dtype", "thread_axis")

    def __init__(
        self,
        reduce_type: ReduceType,
        body: Expr,
        reduce_axis: tuple[Var, ...] | list[Var],
        dtype: DataType = DataType.INT64,
        thread_axis: str | None = None,
    ) -> None:
        _check_node("ArgReduce", "reduce_type", reduce_type, ReduceType)
        if reduce_type not in (ReduceType.MAX, ReduceType.MIN):
            raise _fail("ArgReduce", "reduce_type", f"expected max or min, got {reduce_type.value}")
        _check_node("ArgReduce", "body", body, Expr)
        if not (body.dtype.is_float or body.dtype.is_integer):
            raise _fail(
                "ArgReduce", "body", f"expected a number, got {body.dtype.value}", TypeError
            )
        if body.lanes != 1:
            raise _fail("ArgReduce", "body", f"expected a scalar, got {body.lanes} lanes")
        axis = self._check_reduce_axis("ArgReduce", reduce_axis, constant_range=True)
        _check_dtype("ArgReduce", "dtype", dtype)
        if dtype not in (DataType.INT32, DataType.INT64):
            raise _fail("ArgReduce", "dtype", f"expected int32 or int64, got {dtype.value}")
        self._check_thread_axis("ArgReduce", thread_axis)
        if thread_axis is not None and axis[-1].lower != 0:
            raise _fail(
                "ArgReduce",
                "thread_axis",
                f"the thread axis '{axis[-1].name}' (the last) must start at 0, "
                f"not {axis[-1].lower}",
            )
        self._init(
            reduce_type=reduce_type,
            body=body,
            reduce_axis=axis,
            dtype=dtype,
            thread_axis=thread_axis,
        )

    def start_value(self) -> Expr:
        """The value the search starts from, which every value but an equal one (or a
        NaN) beats: -inf / the lowest value for MAX, +inf / the highest for MIN."""
        value_type = self.body.dtype
        is_max = self.reduce_type is ReduceType.MAX
        if value_type.is_float:
            return FloatImm(float("-inf") if is_max else float("inf"), value_type)
        limits = np.iinfo(value_type.numpy)
        return make_const(int(limits.min if is_max else limits.max), value_type)

    def position(self) -> Expr:
        """The row-major position of the current point of `reduce_axis`, in `dtype`:
        `sum((r_k - lower_k) * stride_k)`, unsimplified."""
        total: Expr | None = None
        stride = 1
        for var in reversed(self.reduce_axis):
            term: Expr = var if var.dtype is self.dtype else Cast(self.dtype, var)
            if var.lower:
                term = Sub(term, IntImm(var.lower, self.dtype))
            if stride != 1:
                term = Mul(term, IntImm(stride, self.dtype))
            total = term if total is None else Add(term, total)
            stride *= var.upper - var.lower
        assert total is not None
        return total
