"""Masks and selections: tril, triu, one_hot, index_select.

tril / triu keep the elements of the last two dims on and below / on and above
`diagonal` (batched over the leading dims) and zero the rest: an elementwise select on
the index, so a causal mask fuses with the add or where that uses it. Paddle needs a
rank of at least 2.

one_hot(x, num_classes) appends a dim of `num_classes` holding 1.0 at each index
(float32). Paddle's CPU kernel rejects an index outside [0, num_classes), and so does
the reference (a ShapeError naming the op); the lowering gives a row of zeros there, as
Paddle's GPU kernel does.

index_select(x, index, axis) takes the rows `index` (1-D, or [n, 1]) of x along `axis`:
as in Paddle, a negative index counts from the end and one outside [-size, size) is an
error of the reference (the lowering reads it unchecked, as gather's does).
"""

from __future__ import annotations

import numpy as np

from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering, any_dtype
from cinn_py.hlir.op_lowering.scalar import const, convert
from cinn_py.ir.expr import EQ, GE, LE, LT, Add, Expr, Select, Sub
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import Int32Attribute
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import DYNAMIC, Type
from cinn_py.reference_ops.context import KernelContext, check_indices, normalize_axis

# -- tril, triu ---------------------------------------------------------------------------


def _infer_triangle(ctx: InferContext) -> list[Type]:
    """TrilTriuInferMeta: x's type; a rank of at least 2."""
    x = ctx.tensor("x")
    if x.rank < 2:
        raise ctx.error(f"needs a tensor of rank at least 2, got {im.fmt(x.dims)}")
    return [x]


def _triangle_kernel(lower: bool):
    def kernel(ctx: KernelContext) -> np.ndarray:
        x, k = ctx.tensor(0), int(ctx.attr("diagonal"))
        if x.ndim < 2:
            raise ctx.shape_error(f"needs a tensor of rank at least 2, got {list(x.shape)}")
        return np.tril(x, k) if lower else np.triu(x, k)

    return kernel


def _triangle_lowering(lower: bool) -> OpLowering:
    """Select(col - row <= diagonal, x, 0) for tril, `>=` for triu."""

    def lower_fn(ctx: LowerContext) -> Compute:
        x, k = ctx.input(0), int(ctx.attr("diagonal"))

        def element(idx: Indices) -> Expr:
            offset = Sub(idx[-1], idx[-2])
            compare = LE if lower else GE
            keep = compare(offset, ctx.index(k))
            return Select(keep, x(idx), const(0, x.dtype))

        return Compute(x.dtype, x.shape, element)

    return OpLowering(lower_fn, any_dtype, symbolic=True)


def _triangle(name: str, lower: bool) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"),),
        attributes=(attr("diagonal", Int32Attribute, 0),),
        pattern=OpPatternKind.ELEMENTWISE,
        infer_meta=_infer_triangle,
        kernel=_triangle_kernel(lower),
        lowering=_triangle_lowering(lower),
    )


# -- one_hot ------------------------------------------------------------------------------


def _check_index_dtype(ctx: InferContext, key: str) -> None:
    dtype = ctx.tensor(key).data_type
    if dtype not in (DataType.INT32, DataType.INT64):
        raise ctx.error(f"must be int32 or int64, got {dtype.value}", operand=key)


def _infer_one_hot(ctx: InferContext) -> list[Type]:
    """OneHotInferMeta: x's dims and num_classes (-1 if computed), float32."""
    _check_index_dtype(ctx, "x")
    depth = im.int_scalar(ctx, "num_classes")
    if depth is not None and depth < 0:
        raise ctx.error(f"num_classes must not be negative, got {depth}")
    dims = (*ctx.tensor("x").dims, DYNAMIC if depth is None else depth)
    return [im.tensor(ctx, DataType.FLOAT32, dims)]


def one_hot_kernel(ctx: KernelContext) -> np.ndarray:
    x = ctx.tensor(0)
    depth = int(ctx.scalar(1, "num_classes"))
    check_indices(ctx, x, 0, depth)
    return (x[..., None].astype(np.int64) == np.arange(depth)).astype(np.float32)


def _lower_one_hot(ctx: LowerContext) -> Compute:
    x, dtype = ctx.input(0), ctx.out_dtype()

    def element(idx: Indices) -> Expr:
        key = convert(x(idx[:-1]), DataType.INT64)
        hit = EQ(key, convert(idx[-1], DataType.INT64))
        return Select(hit, const(1, dtype), const(0, dtype))

    return Compute(dtype, ctx.out_shape(), element)


# -- index_select -------------------------------------------------------------------------


def _infer_index_select(ctx: InferContext) -> list[Type]:
    """IndexSelectInferMeta: the axis dim becomes the index's length."""
    x, index = ctx.tensor("x"), ctx.tensor("index")
    _check_index_dtype(ctx, "index")
    if not (index.rank == 1 or (index.rank == 2 and index.dims[1] in (1, DYNAMIC))):
        raise ctx.error(f"index must be 1-D or [n, 1], got {im.fmt(index.dims)}")
    axis = im.normalize_axis(ctx, int(ctx.attr("axis")), x.rank)
    dims = list(x.dims)
    dims[axis] = index.dims[0]
    return [x.with_dims(dims)]


def index_select_kernel(ctx: KernelContext) -> np.ndarray:
    x, index = ctx.tensor(0), ctx.tensor(1)
    axis = normalize_axis(int(ctx.attr("axis")), x.ndim, ctx)
    check_indices(ctx, index, -x.shape[axis], x.shape[axis])
    return np.take(x, index.reshape(-1).astype(np.int64), axis=axis)


def _lower_index_select(ctx: LowerContext) -> Compute:
    x, index = ctx.input(0), ctx.input(1)
    axis = ctx.normalize_axis(int(ctx.attr("axis")), x.rank)
    size = ctx.index(x.shape[axis])

    def element(idx: Indices) -> Expr:
        position = [idx[axis]] + [ctx.index(0)] * (index.rank - 1)
        row = convert(index(position), ctx.index_dtype)
        row = Select(LT(row, ctx.index(0)), Add(row, size), row)
        return x([*idx[:axis], row, *idx[axis + 1 :]])

    return Compute(x.dtype, ctx.out_shape(), element)


OPS = [
    _triangle("tril", lower=True),
    _triangle("triu", lower=False),
    OpDef(
        "pd_op.one_hot",
        operands=(
            operand("x"),
            operand("num_classes", mutable_attr="num_classes", mutable_kind=Int32Attribute),
        ),
        pattern=OpPatternKind.INJECTIVE,
        infer_meta=_infer_one_hot,
        kernel=one_hot_kernel,
        lowering=OpLowering(_lower_one_hot, any_dtype),
        symbolic_meta=sym.one_hot_shape,
    ),
    OpDef(
        "pd_op.index_select",
        operands=(operand("x"), operand("index")),
        attributes=(attr("axis", Int32Attribute, 0),),
        pattern=OpPatternKind.INJECTIVE,
        infer_meta=_infer_index_select,
        kernel=index_select_kernel,
        lowering=OpLowering(_lower_index_select, any_dtype),
        symbolic_meta=sym.index_select_shape,
    ),
]
