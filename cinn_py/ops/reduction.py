"""Reductions and scans: sum, mean, max, min, prod, all, any, argmax, argmin, cumsum.

Declarations: sum/mean/max/min/prod take their axes as a mutable IntArray operand (a
`full_int_array`); all/any hold them as an attribute. An empty axis list, or one that
names every dim (or prod's `reduce_all`), reduces everything (0-D unless keepdim); a 0-D
tensor reduces to itself whatever the axis. Axes computed at run time give the result's
rank but not its dims, as in Paddle. Output dtypes follow Paddle's InferMeta: sum
promotes bool and int32 to int64 unless `dtype` says otherwise; mean, max, min, prod,
all and any keep the input's dtype (all/any of a float tensor print as float).

Reference kernels: floats accumulate in float64 and round once; integer and bool sums
in int64. The mean of integers divides the integer sum by the count truncating toward
zero, as Paddle does. max/min propagate NaN; argmax/argmin skip NaN and take the first
of equal values, as Paddle's Eigen-based CPU kernel does.

Lowerings: a reduction's element is a `Reduce` node over its operand's Compute: the
reduced dims are read at fresh reduce-axis Vars (`r_<n>`, bounded by the input's
extents), the kept dims at the output's indices, so an elementwise producer inlines
into the reduce body. Reduced dims of extent 1 get no reduce axis (they are read at 0),
so a reduction over one-element dims only is the element itself.

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
library (the reference raises for an empty search). Paddle calls them NonFusible; here
they are compiled as reductions (pattern REDUCTION, Trait.ARG_REDUCTION).

Decomposition: `mean` becomes sum / count (its parts fuse with their neighbours); a
mean over a dim unknown until run time has no constant count and stays whole. cumsum
runs as a library call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cinn_py.errors import ShapeError
from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering, any_dtype, numeric
from cinn_py.hlir.op_lowering.scalar import const, convert, truthy
from cinn_py.ir.buckets import BUCKET_LIMIT
from cinn_py.ir.expr import (
    LT,
    And,
    ArgReduce,
    Div,
    Expr,
    FloatImm,
    Mod,
    Reduce,
    ReduceType,
    Select,
    Var,
)
from cinn_py.ir.simplify import simplify
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import BoolAttribute, DataTypeAttribute, Int64Attribute
from cinn_py.pir.constant import constant_of
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import (
    ArrayOf,
    AttrSpec,
    InferContext,
    InferMeta,
    OpDef,
    Scalar,
    attr,
    operand,
)
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import (
    DecomposeRule,
    Emitter,
    compute_dtype,
    dtype_of,
    element_count,
)
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type
from cinn_py.pir.value import Value
from cinn_py.reference_ops.context import (
    Kernel,
    KernelContext,
    accumulate_dtype,
    normalize_axis,
    trunc_divide,
)

# -- declarations -------------------------------------------------------------------------


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


# -- reference kernels --------------------------------------------------------------------

Axes = tuple[int, ...] | None


def reduce_axes(ctx: KernelContext, x: np.ndarray, axes: list[int]) -> Axes:
    """The axes to reduce as NumPy wants them (None: all)."""
    if not axes or x.ndim == 0:
        return None
    return tuple(sorted({normalize_axis(a, x.ndim, ctx) for a in axes}))


Reducer = Callable[[np.ndarray, Axes, bool], np.ndarray]


def reduction(reducer: Reducer, axes_from_attribute: bool = False) -> Kernel:
    """A kernel reducing operand 0 over its axes: operand 1 (or the folded `axis`
    attribute) for sum/mean/max/min/prod, the `axis` attribute for all/any."""

    def kernel(ctx: KernelContext) -> np.ndarray:
        x = ctx.tensor(0)
        axes = ctx.attr("axis") if axes_from_attribute else ctx.int_list(1, "axis")
        if ctx.declares("reduce_all") and ctx.attr("reduce_all"):
            axes = []
        keepdim = ctx.attr("keepdim")
        with np.errstate(all="ignore"):
            return reducer(x, reduce_axes(ctx, x, axes), keepdim)

    return kernel


def _sum_reducer(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    return np.sum(x, axis=axes, dtype=accumulate_dtype(x.dtype), keepdims=keepdim)


def _prod_reducer(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    return np.prod(x, axis=axes, dtype=accumulate_dtype(x.dtype), keepdims=keepdim)


def _mean_reducer(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    total = _sum_reducer(x, axes, keepdim)
    count = x.size // max(total.size, 1) if x.size else 0
    if x.dtype.kind in "iu":
        return trunc_divide(total, np.int64(max(count, 1)))
    return total / count


def _max_reducer(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    _check_not_empty("max", x, axes)
    return np.max(x, axis=axes, keepdims=keepdim)


def _min_reducer(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    _check_not_empty("min", x, axes)
    return np.min(x, axis=axes, keepdims=keepdim)


def _check_not_empty(name: str, x: np.ndarray, axes: Axes) -> None:
    """max / min have no identity: Paddle refuses a reduction over an empty axis (sum,
    prod, mean, all and any give their identity, or NaN for mean)."""
    for axis in range(x.ndim) if axes is None else axes:
        if x.shape[axis] == 0:
            raise ValueError(f"{name} over axis {axis}, which has size 0, has no value")


def _all_reducer(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    return np.all(x, axis=axes, keepdims=keepdim)


def _any_reducer(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    return np.any(x, axis=axes, keepdims=keepdim)


def arg_extreme(pick: Callable[..., np.ndarray], nan_fill: float) -> Kernel:
    """argmax / argmin. NaN never wins (it is replaced by the value that loses to
    everything); `flatten` searches the flattened tensor; keepdims keeps the rank."""

    def kernel(ctx: KernelContext) -> np.ndarray:
        x = ctx.tensor(0)
        if x.dtype.kind == "f":
            x = np.where(np.isnan(x), nan_fill, x)
        keepdims = ctx.attr("keepdims")
        flatten = ctx.attr("flatten")
        if flatten or x.ndim == 0:
            index = pick(x.reshape(-1), axis=0)
            # Paddle's ArgMinMaxInferMeta: a 0-D input keeps "its axis" as [1] without
            # flatten; with flatten, keepdims keeps the (empty) rank.
            shape = (1,) if keepdims and not flatten else (1,) * x.ndim if keepdims else ()
            return np.full(shape, index)
        axis = normalize_axis(int(ctx.scalar(1, "axis")), x.ndim, ctx)
        return pick(x, axis=axis, keepdims=keepdims)

    return kernel


def cumsum(ctx: KernelContext) -> np.ndarray:
    """Inclusive or exclusive, forward or reversed, along `axis` or the flattened tensor."""
    x = ctx.tensor(0)
    if ctx.attr("flatten") or x.ndim == 0:
        x, axis = x.reshape(-1), 0
    else:
        axis = normalize_axis(int(ctx.scalar(1, "axis")), x.ndim, ctx)
    reverse = ctx.attr("reverse")
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=accumulate_dtype(x.dtype))
    if ctx.attr("exclusive"):
        out = shift_right(out, axis)
    return np.flip(out, axis) if reverse else out


def shift_right(x: np.ndarray, axis: int) -> np.ndarray:
    """Each element replaced by its predecessor along `axis`, the first by zero: the
    exclusive scan from the inclusive one, without the rounding of subtracting."""
    out = np.roll(x, 1, axis)
    first = [slice(None)] * x.ndim
    first[axis] = slice(0, 1)
    out[tuple(first)] = 0
    return out


# -- lowerings ----------------------------------------------------------------------------

F32 = DataType.FLOAT32
F64 = DataType.FLOAT64
I64 = DataType.INT64
BOOL = DataType.BOOL


def reduced_axes(ctx: LowerContext, rank: int, from_attribute: bool) -> list[int]:
    """The dims to reduce, sorted, as the reference picks them."""
    if rank == 0:
        return []
    axes = ctx.attr("axis") if from_attribute else ctx.int_list(1, "axis")
    if (ctx.declares("reduce_all") and ctx.attr("reduce_all")) or not axes:
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


def reduce_identity(kind: ReduceType, dtype: DataType) -> Expr:
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


def _lower_reduce(
    kind: ReduceType, *, mean: bool = False, from_attribute: bool = False
) -> Callable[[LowerContext], Compute]:
    def lower(ctx: LowerContext) -> Compute:
        x = ctx.input(0)
        out_dtype, out_shape = ctx.out_dtype(), ctx.out_shape()
        axes = reduced_axes(ctx, x.rank, from_attribute)
        keepdim = bool(ctx.attr("keepdim"))
        if kind in (ReduceType.ALL, ReduceType.ANY):
            acc = BOOL
        elif kind in (ReduceType.MAX, ReduceType.MIN):
            acc = extreme_type(x.dtype)
        else:
            acc = sum_type(x.dtype, out_dtype)
        count: Any = 1
        for axis in axes:
            count = count * x.shape[axis]
        if isinstance(count, int) and count == 0 and kind in (ReduceType.MAX, ReduceType.MIN):
            empty = next(a for a in axes if x.shape[a] == 0)
            raise ctx.shape_error(f"{kind.value} over axis {empty}, which has size 0, has no value")

        def element(value: Expr) -> Expr:
            return truthy(value) if acc is BOOL else convert(value, acc)

        def finish(total: Expr) -> Expr:
            if mean and not isinstance(count, int):  # a symbolic count (at least 2)
                total = Div(total, convert(count, acc))
            elif mean and acc.is_float:
                total = Div(total, const(count, acc)) if count else const(float("nan"), acc)
            elif mean:
                total = Div(total, const(max(count, 1), acc))
            return convert(total, out_dtype)

        def fcompute(indices: Indices) -> Expr:
            if keepdim and axes:
                kept = [i for d, i in enumerate(indices) if d not in axes]
            else:
                kept = list(indices)
            if isinstance(count, int) and count == 0:  # an empty reduction: the identity
                return finish(reduce_identity(kind, acc))
            # A reduced dim of extent 1 is read at 0, with no axis: an index such as
            # `r * 4 + i` over a one-element axis would tie the thread that folds r to
            # a value no other thread reads (set_buffer refuses such a register).
            # A symbolic reduced dim (a sequence length) gets an axis over its bucket's
            # bound (`LowerContext.reduce_bound`), the steps past the dim masked off.
            # Adjacent reduced dims, one or more of them symbolic, get one axis over
            # their product's bucket (`_merged_runs`): a reduce-all of `[S0, S1]` walks
            # at most twice its elements, not the product of two buckets (up to 4x),
            # and `[S0, 8192]` has a length 8192 divides (vectors walk it). Their
            # indices `r / S1`, `r % S1` fold back to `r` in a row-major offset.
            rvars, masks, reduced = [], [], {}
            runs = _merged_runs(ctx, axes, x.shape)  # by the first dim of each
            merged = {d for run in runs.values() for d in run[0]}
            for d in axes:
                extent = x.shape[d]
                if d in runs:
                    rvars.append(_merged_axis(ctx, *runs[d], x.shape, reduced, masks))
                if d in merged:
                    continue
                if isinstance(extent, int):
                    if extent != 1:
                        reduced[d] = Var(ctx.fresh_name("r"), ctx.index_dtype, 0, extent)
                        rvars.append(reduced[d])
                    continue
                reduced[d] = Var(ctx.fresh_name("r"), ctx.index_dtype, 0, ctx.reduce_bound(extent))
                rvars.append(reduced[d])
                masks.append(LT(reduced[d], extent))
            at, rest = [], iter(kept)
            for d in range(x.rank):
                if d in reduced:
                    at.append(reduced[d])
                elif d in axes:
                    at.append(const(0, ctx.index_dtype))
                else:
                    at.append(next(rest))
            body = element(x(at))
            if masks:
                keep = masks[0]
                for mask in masks[1:]:
                    keep = And(keep, mask)
                body = Select(keep, body, reduce_identity(kind, acc))
            if not rvars:  # a 0-D input, or only one-element axes: the element itself
                return finish(body)
            return finish(Reduce(kind, reduce_identity(kind, acc), body, rvars))

        return Compute(out_dtype, out_shape, fcompute)

    return lower


def _merged_runs(
    ctx: LowerContext, axes: Sequence[int], shape: Sequence[Any]
) -> dict[int, tuple[list[int], Expr, int]]:
    """Runs of two or more adjacent reduced dims holding a symbolic one, each reduced
    as one axis (`_merged_axis`), by the run's first dim: (the dims, their product, its
    bucket's bound). Only where that bound is at most `BUCKET_LIMIT` at this
    signature (else each dim its own axis, as alone)."""
    runs: list[list[int]] = []
    for d in sorted(axes):
        if runs and d == runs[-1][-1] + 1:
            runs[-1].append(d)
        else:
            runs.append([d])
    merged = {}
    for run in runs:
        dims = [shape[d] for d in run]
        if len(run) < 2 or all(isinstance(n, int) for n in dims):
            continue  # nothing symbolic to merge
        if any(isinstance(n, int) and n == 0 for n in dims):
            continue  # an empty reduction: the identity, no axis
        product = dims[0]
        for n in dims[1:]:
            product = product * n
        extent = simplify(product)
        try:
            merged[run[0]] = (run, extent, ctx.reduce_bound(extent, BUCKET_LIMIT))
        except ShapeError:
            continue
    return merged


def _merged_axis(
    ctx: LowerContext,
    run: Sequence[int],
    extent: Expr,
    bound: int,
    shape: Sequence[Any],
    reduced: dict[int, Expr],
    masks: list[Expr],
) -> Var:
    """One reduce axis over `extent`, the product of the dims of `run` (to its bucket's
    `bound`, the steps past the product masked off); fills `reduced` with each dim's
    index (row-major: `r / S1`, `r % S1`) and `masks` with the mask."""
    var = Var(ctx.fresh_name("r"), ctx.index_dtype, 0, bound)
    masks.append(LT(var, extent))
    rest: Expr = var
    for d in reversed(run[1:]):
        dim = shape[d] if not isinstance(shape[d], int) else const(shape[d], ctx.index_dtype)
        reduced[d] = Mod(rest, dim)
        rest = Div(rest, dim)
    reduced[run[0]] = rest
    return var


def _lower_arg_reduce(kind: ReduceType) -> Callable[[LowerContext], Compute]:
    """argmax (MAX) / argmin (MIN), as the reference's `arg_extreme` reads the op."""

    def lower(ctx: LowerContext) -> Compute:
        x = ctx.input(0)
        out_dtype, out_shape = ctx.out_dtype(), ctx.out_shape()
        if out_dtype not in (DataType.INT32, DataType.INT64):
            raise ctx.error(f"the result dtype must be int32 or int64, got {out_dtype.value}")
        flatten = bool(ctx.attr("flatten")) or x.rank == 0
        keepdims = bool(ctx.attr("keepdims"))
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


# -- decomposition -------------------------------------------------------------------------


def _decompose_mean(emit: Emitter, op: Operation) -> list[Value] | None:
    """sum / count. Floats sum in their compute dtype (an empty mean is 0 / 0 = NaN);
    integers in int64 and divide truncating (pd_op.divide of integers does) by at least
    1, then cast back, as the reference does."""
    x = op.operand_value(0)
    if x is None or not isinstance(x.type, DenseTensorType):
        return None
    dtype = x.type.data_type
    if not (dtype.is_float or dtype.is_integer):
        return None
    axes = _reduce_axes(op)
    if axes is None:
        return None
    dims = x.type.dims
    reduced = [a % len(dims) for a in axes] if axes and dims else list(range(len(dims)))
    count = element_count([dims[a] for a in set(reduced)])
    if count is None:
        return None
    wide = compute_dtype(x) if dtype.is_float else DataType.INT64
    keepdim = emit.attr("keepdim")
    total = emit.sum(emit.cast(x, wide), axes, keepdim)
    divisor = count if dtype.is_float else max(count, 1)
    out = emit.op("pd_op.divide", total, emit.const(divisor, wide))
    return [emit.cast(out, dtype_of(op.result()))]


def _reduce_axes(op: Operation) -> list[int] | None:
    """A reduction's axes, from its folded attribute or its constant operand."""
    if "axis" in op.attributes:
        axes = op.attr("axis")
    else:
        operand = op.operand_value(1)
        axes = None if operand is None else constant_of(operand)
    if axes is None:
        return None
    return [int(a) for a in axes] if isinstance(axes, list) else [int(axes)]


# -- entries -------------------------------------------------------------------------------


def _reduce_op(
    name: str,
    kernel: Kernel,
    lowering: OpLowering,
    infer: InferMeta = _infer_reduce,
    extra: tuple[AttrSpec, ...] = (),
    decompose: DecomposeRule | None = None,
) -> OpDef:
    """A reduction whose axes are the mutable `axis` operand."""
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"), operand("axis", mutable_attr="axis")),
        attributes=(*extra, attr("keepdim", BoolAttribute, False)),
        pattern=OpPatternKind.REDUCTION,
        traits=frozenset({Trait.AXIS_OPERAND_REDUCTION}),
        infer_meta=infer,
        kernel=kernel,
        lowering=lowering,
        decompose=decompose,
        symbolic_meta=sym.reduce_shape,
    )


def _all_any(name: str, reducer: Reducer, kind: ReduceType) -> OpDef:
    """A reduction whose axes are the plain `axis` attribute."""
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"),),
        attributes=(
            attr("axis", ArrayOf(Int64Attribute), []),
            attr("keepdim", BoolAttribute, False),
        ),
        pattern=OpPatternKind.REDUCTION,
        traits=frozenset({Trait.AXIS_ATTRIBUTE_REDUCTION}),
        infer_meta=_infer_all_any,
        kernel=reduction(reducer, axes_from_attribute=True),
        lowering=OpLowering(_lower_reduce(kind, from_attribute=True), any_dtype, symbolic=True),
        symbolic_meta=sym.reduce_shape,
    )


def _arg_min_max(name: str, kernel: Kernel, kind: ReduceType) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"), operand("axis", mutable_attr="axis", mutable_kind=Scalar)),
        attributes=(
            attr("keepdims", BoolAttribute, False),
            attr("flatten", BoolAttribute, False),
            attr("dtype", DataTypeAttribute, DataType.INT64),
        ),
        pattern=OpPatternKind.REDUCTION,
        traits=frozenset({Trait.ARG_REDUCTION}),
        infer_meta=_infer_arg_min_max,
        kernel=kernel,
        lowering=OpLowering(_lower_arg_reduce(kind), _arg_accepts, symbolic=True),
        symbolic_meta=sym.arg_min_max_shape,
    )


OPS = [
    _reduce_op(
        "sum",
        reduction(_sum_reducer),
        OpLowering(_lower_reduce(ReduceType.SUM), any_dtype, symbolic=True),
        _infer_sum,
        (attr("dtype", DataTypeAttribute, DataType.UNDEFINED),),
    ),
    _reduce_op(
        "mean",
        reduction(_mean_reducer),
        OpLowering(_lower_reduce(ReduceType.SUM, mean=True), numeric, symbolic=True),
        decompose=_decompose_mean,
    ),
    _reduce_op(
        "max",
        reduction(_max_reducer),
        OpLowering(_lower_reduce(ReduceType.MAX), numeric, symbolic=True),
    ),
    _reduce_op(
        "min",
        reduction(_min_reducer),
        OpLowering(_lower_reduce(ReduceType.MIN), numeric, symbolic=True),
    ),
    OpDef(
        "pd_op.prod",
        operands=(operand("x"), operand("axis", mutable_attr="axis")),
        attributes=(
            attr("keepdim", BoolAttribute, False),
            attr("reduce_all", BoolAttribute, False),
        ),
        pattern=OpPatternKind.REDUCTION,
        traits=frozenset({Trait.AXIS_OPERAND_REDUCTION}),
        infer_meta=_infer_prod,
        kernel=reduction(_prod_reducer),
        lowering=OpLowering(_lower_reduce(ReduceType.PROD), any_dtype, symbolic=True),
        symbolic_meta=sym.reduce_shape,
    ),
    _all_any("all", _all_reducer, ReduceType.ALL),
    _all_any("any", _any_reducer, ReduceType.ANY),
    _arg_min_max("argmax", arg_extreme(np.argmax, -np.inf), ReduceType.MAX),
    _arg_min_max("argmin", arg_extreme(np.argmin, np.inf), ReduceType.MIN),
    OpDef(
        "pd_op.cumsum",
        operands=(operand("x"), operand("axis", mutable_attr="axis", mutable_kind=Scalar)),
        attributes=(
            attr("flatten", BoolAttribute, False),
            attr("exclusive", BoolAttribute, False),
            attr("reverse", BoolAttribute, False),
        ),
        pattern=OpPatternKind.NON_FUSIBLE,
        infer_meta=_infer_cumsum,
        kernel=cumsum,
        symbolic_meta=sym.cumsum_shape,
    ),
]
