"""Lowerings of the reductions: sum, mean, max, min, prod, all, any, argmax, argmin.

A reduction's element is a `Reduce` node over its operand's Compute: the reduced dims
are read at fresh reduce-axis Vars (`r_<n>`, bounded by the input's extents), the kept
dims at the output's indices, so an elementwise producer inlines into the reduce body.
The axes follow the reference (`cinn_py/reference_ops/reduction.py`): the folded `axis`
attribute (sum/mean/max/min/prod) or the plain `axis` attribute (all/any), negative
axes counted from the end, an empty list (or prod's `reduce_all`) reducing every dim,
and a 0-D input reducing to itself. Reduced dims of extent 1 get no reduce axis (they are
read at 0), so a reduction over one-element dims only is the element itself.

Accumulation types (the reference accumulates floats in float64 and integers in int64):

| input | sum / prod / mean accumulate in | max / min |
| --- | --- | --- |
| float16, bfloat16, float32 | float32 (float64 when the result is float64 or an integer) | float32 |
| float64 | float64 | float64 |
| integers, bool | int64 (integer mean: the int64 sum divided truncating) | the type itself |

float32 accumulation differs from the reference's float64 by rounding order only, which
the float32 tolerance covers. max / min propagate NaN (the `Reduce` node's semantics for
floats, as NumPy's max); all / any reduce the operand's truth value.

argmax / argmin are an `ArgReduce` node (the row-major position of the first best
value, NaN never winning): over every dim with `flatten` or a 0-D input (which gives
0), else over the folded `axis` scalar; `keepdims` keeps the rank; the position's dtype
is the declared result's (the `dtype` attribute, int32 or int64). Values compare in
float32 for the 16-bit floats, else in their own type. An empty input is left to the
library (the reference raises for an empty search).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering, any_dtype, numeric
from cinn_py.hlir.op_lowering.scalar import const, convert, truthy
from cinn_py.ir.expr import ArgReduce, Div, Expr, FloatImm, Reduce, ReduceType, Var
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DenseTensorType

F32 = DataType.FLOAT32
F64 = DataType.FLOAT64
I64 = DataType.INT64
BOOL = DataType.BOOL

REDUCTIONS = frozenset(
    {
        "pd_op.sum",
        "pd_op.mean",
        "pd_op.max",
        "pd_op.min",
        "pd_op.prod",
        "pd_op.all",
        "pd_op.any",
        "pd_op.argmax",
        "pd_op.argmin",
    }
)
"""The ops lowered here; grouping puts each in a FUSED group of its own."""


def reduced_axes(ctx: LowerContext, rank: int, from_attribute: bool) -> list[int]:
    """The dims to reduce, sorted, as the reference picks them."""
    if rank == 0:
        return []
    axes = ctx.attr("axis", []) if from_attribute else ctx.int_list(1, "axis")
    if ctx.attr("reduce_all", False) or not axes:
        return list(range(rank))
    return sorted({ctx.normalize_axis(int(a), rank) for a in axes})


def sum_type(x: DataType, out: DataType) -> DataType:
    """What sum / prod / mean of `x` producing `out` accumulates in."""
    if not x.is_float:
        return I64
    if x is F64 or out is F64 or not out.is_float:
        return F64
    return F32


def extreme_type(x: DataType) -> DataType:
    """max / min compare in float32 for the 16-bit floats, else in the type itself."""
    return F32 if x in (DataType.FLOAT16, DataType.BFLOAT16) else x


def _identity(kind: ReduceType, dtype: DataType) -> Expr:
    if kind is ReduceType.SUM:
        return const(0, dtype)
    if kind is ReduceType.PROD:
        return const(1, dtype)
    if kind in (ReduceType.ALL, ReduceType.ANY):
        return const(kind is ReduceType.ALL, BOOL)
    if dtype.is_float:
        return FloatImm(float("-inf") if kind is ReduceType.MAX else float("inf"), dtype)
    limits = np.iinfo(dtype.numpy)
    return const(int(limits.min if kind is ReduceType.MAX else limits.max), dtype)


def _lower(
    kind: ReduceType, *, mean: bool = False, from_attribute: bool = False
) -> Callable[[LowerContext], Compute]:
    def lower(ctx: LowerContext) -> Compute:
        x = ctx.input(0)
        out_dtype, out_shape = ctx.out_dtype(), ctx.out_shape()
        axes = reduced_axes(ctx, x.rank, from_attribute)
        keepdim = bool(ctx.attr("keepdim", False))
        if kind in (ReduceType.ALL, ReduceType.ANY):
            acc = BOOL
        elif kind in (ReduceType.MAX, ReduceType.MIN):
            acc = extreme_type(x.dtype)
        else:
            acc = sum_type(x.dtype, out_dtype)
        count = 1
        for axis in axes:
            count *= x.shape[axis]
        if count == 0 and kind in (ReduceType.MAX, ReduceType.MIN):
            empty = next(a for a in axes if x.shape[a] == 0)
            raise ctx.shape_error(f"{kind.value} over axis {empty}, which has size 0, has no value")

        def element(value: Expr) -> Expr:
            return truthy(value) if acc is BOOL else convert(value, acc)

        def finish(total: Expr) -> Expr:
            if mean and acc.is_float:
                total = Div(total, const(count, acc)) if count else const(float("nan"), acc)
            elif mean:
                total = Div(total, const(max(count, 1), acc))
            return convert(total, out_dtype)

        def fcompute(indices: Indices) -> Expr:
            if keepdim and axes:
                kept = [i for d, i in enumerate(indices) if d not in axes]
            else:
                kept = list(indices)
            if count == 0:  # an empty reduction: the identity
                return finish(_identity(kind, acc))
            # A reduced dim of extent 1 is read at 0, with no axis: an index such as
            # `r * 4 + i` over a one-element axis would tie the thread that folds r to
            # a value no other thread reads (set_buffer refuses such a register).
            rvars = {
                d: Var(ctx.fresh_name("r"), ctx.index_dtype, 0, x.shape[d])
                for d in axes
                if x.shape[d] != 1
            }
            at, rest = [], iter(kept)
            for d in range(x.rank):
                if d in rvars:
                    at.append(rvars[d])
                elif d in axes:
                    at.append(const(0, ctx.index_dtype))
                else:
                    at.append(next(rest))
            body = element(x(at))
            if not rvars:  # a 0-D input, or only one-element axes: the element itself
                return finish(body)
            return finish(Reduce(kind, _identity(kind, acc), body, list(rvars.values())))

        return Compute(out_dtype, out_shape, fcompute)

    return lower


def _lower_arg(kind: ReduceType) -> Callable[[LowerContext], Compute]:
    """argmax (MAX) / argmin (MIN), as the reference's `arg_extreme` reads the op."""

    def lower(ctx: LowerContext) -> Compute:
        x = ctx.input(0)
        out_dtype, out_shape = ctx.out_dtype(), ctx.out_shape()
        if out_dtype not in (DataType.INT32, DataType.INT64):
            raise ctx.error(f"the result dtype must be int32 or int64, got {out_dtype.value}")
        flatten = bool(ctx.attr("flatten", False)) or x.rank == 0
        keepdims = bool(ctx.attr("keepdims", False))
        axes = (
            list(range(x.rank))
            if flatten
            else [ctx.normalize_axis(int(ctx.scalar(1, "axis")), x.rank)]
        )
        if any(x.shape[d] == 0 for d in axes):
            raise ctx.error(f"{kind.value} position of an empty tensor (the reference raises)")
        value_type = extreme_type(x.dtype)

        def fcompute(indices: Indices) -> Expr:
            if not axes:  # a 0-D input: its one element is at position 0
                return const(0, out_dtype)
            if flatten:
                kept: list[Expr] = []
            elif keepdims:
                kept = [i for d, i in enumerate(indices) if d not in axes]
            else:
                kept = list(indices)
            rvars = {d: Var(ctx.fresh_name("r"), ctx.index_dtype, 0, x.shape[d]) for d in axes}
            rest = iter(kept)
            at = [rvars[d] if d in rvars else next(rest) for d in range(x.rank)]
            body = convert(x(at), value_type)
            return ArgReduce(kind, body, list(rvars.values()), out_dtype)

        return Compute(out_dtype, out_shape, fcompute)

    return lower


def _arg_accepts(op: Operation) -> bool:
    """Integer and float inputs with no zero extent, an int32 / int64 result."""
    x, result = op.operand_values()[0].type, op.result(0).type
    if not isinstance(x, DenseTensorType) or not isinstance(result, DenseTensorType):
        return False
    if result.data_type not in (DataType.INT32, DataType.INT64) or 0 in x.dims:
        return False
    return numeric(op)


LOWERINGS: dict[str, OpLowering] = {
    "pd_op.sum": OpLowering(_lower(ReduceType.SUM), any_dtype),
    "pd_op.prod": OpLowering(_lower(ReduceType.PROD), any_dtype),
    "pd_op.mean": OpLowering(_lower(ReduceType.SUM, mean=True), numeric),
    "pd_op.max": OpLowering(_lower(ReduceType.MAX), numeric),
    "pd_op.min": OpLowering(_lower(ReduceType.MIN), numeric),
    "pd_op.all": OpLowering(_lower(ReduceType.ALL, from_attribute=True), any_dtype),
    "pd_op.any": OpLowering(_lower(ReduceType.ANY, from_attribute=True), any_dtype),
    "pd_op.argmax": OpLowering(_lower_arg(ReduceType.MAX), _arg_accepts),
    "pd_op.argmin": OpLowering(_lower_arg(ReduceType.MIN), _arg_accepts),
}
