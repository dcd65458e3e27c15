"""pd_op reductions and scans.

sum/mean/max/min/prod take their axes as a mutable IntArray operand (a
`full_int_array`); all/any hold them as an attribute. An empty axis list, or one that
names every dim, reduces everything (0-D unless keepdim). Axes computed at run time give
the result's rank but not its dims, as in Paddle. Output dtypes follow Paddle's
InferMeta: sum promotes bool and int32 to int64 unless `dtype` says otherwise; mean, max,
min, prod, all and any keep the input's dtype (all/any of a float tensor print as float).
"""

from __future__ import annotations

from cinn_py.pir.dialects.pd_op import infer_meta as im
from cinn_py.pir.dialects.pd_op.traits import NON_FUSIBLE, REDUCTION, traits
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type


def _reduced(ctx: InferContext, keepdim: bool, reduce_all: bool = False) -> DenseTensorType:
    """x with the dims named by the `axis` operand reduced."""
    x = ctx.tensor("x")
    axes = im.int_array(ctx, "axis")
    if None in axes:
        return x.with_dims(im.reduce_dims_unknown_axes(x.dims, len(axes), keepdim, reduce_all))
    return x.with_dims(im.reduce_dims(ctx, x.dims, axes, keepdim, reduce_all))


def _infer_sum(ctx: InferContext) -> list[Type]:
    out = _reduced(ctx, ctx.attr("keepdim"))
    dtype = im.attr_dtype(ctx, "dtype")
    if dtype is DataType.UNDEFINED:
        promote = out.data_type in (DataType.BOOL, DataType.INT32)
        dtype = DataType.INT64 if promote else out.data_type
    return [out.with_dtype(dtype)]


def _infer_reduce(ctx: InferContext) -> list[Type]:
    return [_reduced(ctx, ctx.attr("keepdim"))]


def _infer_prod(ctx: InferContext) -> list[Type]:
    return [_reduced(ctx, ctx.attr("keepdim"), ctx.attr("reduce_all"))]


def _infer_all_any(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    return [x.with_dims(im.reduce_dims(ctx, x.dims, ctx.attr("axis"), ctx.attr("keepdim")))]


def _infer_arg_min_max(ctx: InferContext) -> list[Type]:
    """ArgMinMaxInferMeta."""
    x = ctx.tensor("x")
    dtype = im.attr_dtype(ctx, "dtype")
    if dtype not in (DataType.INT32, DataType.INT64):
        raise ctx.error(f"dtype must be int32 or int64, got {dtype.value}")
    keepdims, flatten = ctx.attr("keepdims"), ctx.attr("flatten")
    rank = x.rank
    axis = im.int_scalar(ctx, "axis")
    if axis is None:
        if keepdims:
            dims: tuple[int, ...] = (DYNAMIC,) * rank
        else:
            dims = () if flatten else (DYNAMIC,) * (rank - 1)
        return [x.with_dims(dims).with_dtype(dtype)]
    index = im.normalize_axis(ctx, axis, rank)
    if flatten:
        dims = (1,) * rank if keepdims else ()
    else:
        kept = (1,) if keepdims else ()
        dims = x.dims[:index] + kept + x.dims[index + 1 :]
    return [x.with_dims(dims).with_dtype(dtype)]


def _infer_cumsum(ctx: InferContext) -> list[Type]:
    """CumInferMeta: flatten gives 1-D; the axis is checked only without flatten."""
    x = ctx.tensor("x")
    if ctx.attr("flatten"):
        return [x.with_dims((im.product(x.dims),))]
    axis = im.int_scalar(ctx, "axis")
    if axis is not None:
        im.normalize_axis(ctx, axis, x.rank)
    return [x]


def _reduce_op(name: str, infer=_infer_reduce, extra: tuple = ()) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"), operand("axis", mutable_attr="axis")),
        attributes=(*extra, attr("keepdim", "bool", False)),
        traits=traits(REDUCTION),
        infer_meta=infer,
    )


def _all_any(name: str) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"),),
        attributes=(attr("axis", "array<int64>", []), attr("keepdim", "bool", False)),
        traits=traits(REDUCTION),
        infer_meta=_infer_all_any,
    )


def _arg_min_max(name: str) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"), operand("axis", mutable_attr="axis", mutable_kind="scalar")),
        attributes=(
            attr("keepdims", "bool", False),
            attr("flatten", "bool", False),
            attr("dtype", "data_type", DataType.INT64),
        ),
        traits=traits(NON_FUSIBLE),
        infer_meta=_infer_arg_min_max,
    )


OPS = [
    _reduce_op("sum", _infer_sum, (attr("dtype", "data_type", DataType.UNDEFINED),)),
    _reduce_op("mean"),
    _reduce_op("max"),
    _reduce_op("min"),
    OpDef(
        "pd_op.prod",
        operands=(operand("x"), operand("axis", mutable_attr="axis")),
        attributes=(attr("keepdim", "bool", False), attr("reduce_all", "bool", False)),
        traits=traits(REDUCTION),
        infer_meta=_infer_prod,
    ),
    _all_any("all"),
    _all_any("any"),
    _arg_min_max("argmax"),
    _arg_min_max("argmin"),
    OpDef(
        "pd_op.cumsum",
        operands=(operand("x"), operand("axis", mutable_attr="axis", mutable_kind="scalar")),
        attributes=(
            attr("flatten", "bool", False),
            attr("exclusive", "bool", False),
            attr("reverse", "bool", False),
        ),
        traits=traits(NON_FUSIBLE),
        infer_meta=_infer_cumsum,
    ),
]
