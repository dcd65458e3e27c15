"""Shape rules shared by the pd_op declarations, after Paddle's phi InferMeta functions.

Paddle infers result types at program-build time ("compile time"), when some dims and
some mutable-attribute operands are unknown. Its rules there have quirks (a `-1` dim
against `n > 1` broadcasts to `n`; reduce axes fed by a computed tensor give a rank but
no dims; reshape's `0` copies the input dim) and printed programs carry those results,
so the declarations follow them: a result type here is the type Paddle 3.3.1 prints.
Impossible shapes raise `ctx.error(...)`, also the few that Paddle only rejects at run
time; an unknown (`-1`) dim never does, and where Paddle's build-time guess for one is a
wrong constant, -1 is kept (kernels_tests/pir/test_pd_op_paddle_golden.py lists each
such difference next to Paddle's answer).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from cinn_py.pir.constant import constant_of
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type, VectorType
from cinn_py.pir.value import Value

Dims = tuple[int, ...]


def fmt(dims: Sequence[int]) -> str:
    """Dims as Paddle's messages write them: `[8, 16]`."""
    return "[" + ", ".join(str(d) for d in dims) + "]"


def product(dims: Sequence[int]) -> int:
    """The element count; DYNAMIC if any dim is unknown."""
    n = 1
    for d in dims:
        if d == DYNAMIC:
            return DYNAMIC
        n *= d
    return n


def check_vector(ctx: InferContext, name: str, count: int, whose: str) -> None:
    """Operand `name` must be 1-D with `count` elements (unless either is unknown): a
    norm's scale, bias or statistics. `whose` says what fixes the count, for the error:
    "x [2, 3, 5] (NCHW) has 3 channels"."""
    param = ctx.tensor(name)
    if param.rank != 1:
        raise ctx.error(f"must be 1-D, got dims {fmt(param.dims)}", operand=name)
    if DYNAMIC not in (count, param.dims[0]) and param.dims[0] != count:
        raise ctx.error(f"has {param.dims[0]} elements, but {whose}", operand=name)


def tensor(ctx: InferContext, dtype: DataType, dims: Sequence[int]) -> DenseTensorType:
    """A fresh dense tensor type; a VerifyError (not a ValueError) for a bad dim or dtype."""
    if dtype is DataType.UNDEFINED:
        raise ctx.error("needs a defined dtype, got Undefined")
    for d in dims:
        if d < DYNAMIC:
            raise ctx.error(f"dims {fmt(dims)} hold a negative size {d}")
    return DenseTensorType.get(dtype, dims)


def unchanged(ctx: InferContext) -> list[Type]:
    """UnchangedInferMeta: the result is the first operand's type."""
    return [ctx.tensor(0)]


def to_bool(ctx: InferContext) -> list[Type]:
    """Same dims as the first operand, bool elements (isnan, logical_not)."""
    return [ctx.tensor(0).with_dtype(DataType.BOOL)]


# -- axes -------------------------------------------------------------------------------


def normalize_axis(ctx: InferContext, axis: int, rank: int, what: str = "axis") -> int:
    """`axis` in [-rank, rank) made non-negative; a 0-D tensor accepts -1 and 0 (as 0)."""
    if rank == 0:
        if axis not in (-1, 0):
            raise ctx.error(f"{what} {axis} is out of range for a 0-D tensor (expected -1 or 0)")
        return 0
    if not -rank <= axis < rank:
        raise ctx.error(f"{what} {axis} is out of range [{-rank}, {rank}) for a rank-{rank} tensor")
    return axis + rank if axis < 0 else axis


def reduce_dims(
    ctx: InferContext,
    dims: Sequence[int],
    axes: Sequence[int],
    keepdim: bool,
    reduce_all: bool = False,
) -> Dims:
    """ReduceInferDim: an empty axis list, or one naming every dim, reduces everything."""
    rank = len(dims)
    chosen: set[int] = set()
    for axis in axes:
        index = normalize_axis(ctx, axis, rank, "reduce axis")
        if index in chosen and rank > 0:
            raise ctx.error(f"reduce axes {list(axes)} name dim {index} more than once")
        chosen.add(index)
    reduce_all = reduce_all or not axes or all(i in chosen for i in range(rank))
    out: list[int] = []
    for i, d in enumerate(dims):
        if reduce_all or i in chosen:
            if keepdim:
                out.append(1)
        else:
            out.append(d)
    return tuple(out)


def reduce_dims_unknown_axes(
    dims: Sequence[int], count: int, keepdim: bool, reduce_all: bool
) -> Dims:
    """Reduce dims when the axes come from a computed tensor: rank known, dims not."""
    rank = len(dims)
    if reduce_all:
        return (1,) * rank if keepdim else ()
    if keepdim:
        return (DYNAMIC,) * rank
    return (DYNAMIC,) if count > rank else (DYNAMIC,) * (rank - count)


# -- broadcasting -------------------------------------------------------------------------


def broadcast_dim(a: int, b: int) -> int | None:
    """One broadcast dim (None if incompatible): equal; 1 gives way; -1 takes the other."""
    if a == b:
        return a
    if a == 1:
        return b
    if b == 1:
        return a
    if a == DYNAMIC:
        return b
    if b == DYNAMIC:
        return a
    return None


def broadcast_shapes(ctx: InferContext, x: Sequence[int], y: Sequence[int]) -> Dims:
    """NumPy-style broadcasting, trailing dims aligned, with Paddle's compile-time -1
    rules: -1 against 1 stays -1, -1 against n > 1 becomes n."""
    rank = max(len(x), len(y))
    xs = (1,) * (rank - len(x)) + tuple(x)
    ys = (1,) * (rank - len(y)) + tuple(y)
    out = []
    for i, (a, b) in enumerate(zip(xs, ys, strict=True)):
        d = broadcast_dim(a, b)
        if d is None:
            raise ctx.error(
                f"cannot broadcast x {fmt(x)} with y {fmt(y)}: "
                f"dim {a} of x is not equal to dim {b} of y at aligned axis {i}"
            )
        out.append(d)
    return tuple(out)


def elementwise_binary(ctx: InferContext) -> list[Type]:
    """ElementwiseInferMeta: broadcast dims, x's dtype."""
    x, y = ctx.tensor("x"), ctx.tensor("y")
    return [x.with_dims(broadcast_shapes(ctx, x.dims, y.dims))]


def compare_binary(ctx: InferContext) -> list[Type]:
    """CompareInferMeta / LogicalBinaryInferMeta: broadcast dims, bool."""
    x, y = ctx.tensor("x"), ctx.tensor("y")
    return [x.with_dims(broadcast_shapes(ctx, x.dims, y.dims)).with_dtype(DataType.BOOL)]


def check_same_dims(ctx: InferContext, a: Sequence[int], b: Sequence[int], what: str) -> None:
    """Equal rank and equal dims where both are known."""
    if len(a) != len(b):
        raise ctx.error(f"{what}: ranks differ, {fmt(a)} vs {fmt(b)}")
    for i, (p, q) in enumerate(zip(a, b, strict=True)):
        if p != q and DYNAMIC not in (p, q):
            raise ctx.error(f"{what}: dim {i} differs, {fmt(a)} vs {fmt(b)}")


# -- mutable attributes -------------------------------------------------------------------


def int_array(ctx: InferContext, key: str) -> list[int | None]:
    """A mutable IntArray operand (shape, axes, sections, starts, ...), element by element.

    Known elements come from the folded attribute or from constant producers
    (`full_int_array`, `full`, and a `stack`/`combine` of them); an element computed at
    run time is None. The length is always known: from the constant, from the vector's
    size or from the tensor's element count (1 if that is unknown too), as in Paddle.
    """
    constant = ctx.constant(key)
    if constant is not None:
        items = _flatten(constant)
    else:
        value = ctx.value(key)
        if value is None:
            raise ctx.error("is missing (no operand and no folded attribute)", operand=key)
        items = _int_array_of(ctx, key, value)
    for item in items:
        if item is not None and not (math.isfinite(float(item)) and float(item).is_integer()):
            raise ctx.error(f"must hold integers, got {item}", operand=key)
    return [None if item is None else int(item) for item in items]


MAX_INT_ARRAY = 4096
"""The most elements an IntArray operand (a shape, axes, sections) is read with: one
computed from a tensor of more is refused rather than listed element by element."""


def _flatten(constant: Any) -> list[Any]:
    if isinstance(constant, (list, tuple)):
        return [v for item in constant for v in _flatten(item)]
    return [constant]


def _int_array_of(ctx: InferContext, key: str, value: Value) -> list[Any]:
    constant = constant_of(value)
    if constant is not None:
        return _flatten(constant)
    op = value.defining_op
    if op is not None and op.name == "pd_op.stack" and op.operand_value(0) is not None:
        return _int_array_of(ctx, key, op.operand_value(0))
    if op is not None and op.name == "builtin.combine" and None not in op.operand_values():
        return [v for item in op.operand_values() for v in _int_array_of(ctx, key, item)]
    count = _element_count(value.type)
    if count > MAX_INT_ARRAY:
        raise ctx.error(
            f"holds {count} elements, more than an IntArray operand may ({MAX_INT_ARRAY})",
            operand=key,
        )
    return [None] * count


def _element_count(type_: Type) -> int:
    if isinstance(type_, VectorType):
        return len(type_.types)
    if isinstance(type_, DenseTensorType):
        n = product(type_.dims)
        return 1 if n == DYNAMIC else n
    return 1


def scalar(ctx: InferContext, key: str) -> Any:
    """A mutable Scalar operand (axis, p, scale): its number, or None if computed at run time."""
    constant = ctx.constant(key)
    if isinstance(constant, (list, tuple)):
        return constant[0] if len(constant) == 1 else None
    if constant is None and ctx.value(key) is None:
        raise ctx.error("is missing (no operand and no folded attribute)", operand=key)
    return constant


def int_scalar(ctx: InferContext, key: str) -> int | None:
    """A mutable Scalar operand that must hold an integer (an axis): its value, None if
    computed at run time; a VerifyError for NaN, infinity or a fraction."""
    value = scalar(ctx, key)
    if value is None:
        return None
    number = float(value)
    if not math.isfinite(number) or not number.is_integer():
        raise ctx.error(f"must be an integer, got {value}", operand=key)
    return int(number)


def attr_dtype(ctx: InferContext, name: str) -> DataType:
    value = ctx.attr(name)
    if isinstance(value, DataType):
        return value
    try:
        return DataType.from_name(str(value))
    except ValueError as error:
        raise ctx.error(f"attribute '{name}': {error}") from None
