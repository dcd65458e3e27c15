"""Reductions and scans, with Paddle's dtype rules.

An empty axis list (or prod's `reduce_all`) reduces every axis; a 0-D tensor reduces to
itself whatever the axis. Floats accumulate in float64 and round once; integer and bool
sums in int64 (the result type says what Paddle keeps: int32 and bool sums are int64).
The mean of integers divides the integer sum by the count truncating toward zero, as
Paddle does. max/min propagate NaN; argmax/argmin skip NaN and take the first of equal
values, as Paddle's Eigen-based CPU kernel does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cinn_py.reference_ops.context import Kernel, KernelContext, accumulate_dtype
from cinn_py.reference_ops.elementwise import trunc_divide

Axes = tuple[int, ...] | None


def normalize_axis(axis: int, rank: int, ctx: KernelContext) -> int:
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for a rank-{rank} tensor")
    return axis % rank


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
        axes = ctx.attr("axis", []) if axes_from_attribute else ctx.int_list(1, "axis")
        if ctx.attr("reduce_all", False):
            axes = []
        keepdim = ctx.attr("keepdim", False)
        with np.errstate(all="ignore"):
            return reducer(x, reduce_axes(ctx, x, axes), keepdim)

    return kernel


def _sum(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    return np.sum(x, axis=axes, dtype=accumulate_dtype(x.dtype), keepdims=keepdim)


def _prod(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    return np.prod(x, axis=axes, dtype=accumulate_dtype(x.dtype), keepdims=keepdim)


def _mean(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    total = _sum(x, axes, keepdim)
    count = x.size // max(total.size, 1) if x.size else 0
    if x.dtype.kind in "iu":
        return trunc_divide(total, np.int64(max(count, 1)))
    return total / count


def _max(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    _check_not_empty("max", x, axes)
    return np.max(x, axis=axes, keepdims=keepdim)


def _min(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    _check_not_empty("min", x, axes)
    return np.min(x, axis=axes, keepdims=keepdim)


def _check_not_empty(name: str, x: np.ndarray, axes: Axes) -> None:
    """max / min have no identity: Paddle refuses a reduction over an empty axis (sum,
    prod, mean, all and any give their identity, or NaN for mean)."""
    for axis in range(x.ndim) if axes is None else axes:
        if x.shape[axis] == 0:
            raise ValueError(f"{name} over axis {axis}, which has size 0, has no value")


def _all(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    return np.all(x, axis=axes, keepdims=keepdim)


def _any(x: np.ndarray, axes: Axes, keepdim: bool) -> np.ndarray:
    return np.any(x, axis=axes, keepdims=keepdim)


def arg_extreme(pick: Callable[..., np.ndarray], nan_fill: float) -> Kernel:
    """argmax / argmin. NaN never wins (it is replaced by the value that loses to
    everything); `flatten` searches the flattened tensor; keepdims keeps the rank."""

    def kernel(ctx: KernelContext) -> np.ndarray:
        x = ctx.tensor(0)
        if x.dtype.kind == "f":
            x = np.where(np.isnan(x), nan_fill, x)
        keepdims = ctx.attr("keepdims", False)
        flatten = ctx.attr("flatten", False)
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
    if ctx.attr("flatten", False) or x.ndim == 0:
        x, axis = x.reshape(-1), 0
    else:
        axis = normalize_axis(int(ctx.scalar(1, "axis")), x.ndim, ctx)
    reverse = ctx.attr("reverse", False)
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=accumulate_dtype(x.dtype))
    if ctx.attr("exclusive", False):
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


KERNELS: dict[str, Kernel] = {
    "pd_op.sum": reduction(_sum),
    "pd_op.mean": reduction(_mean),
    "pd_op.max": reduction(_max),
    "pd_op.min": reduction(_min),
    "pd_op.prod": reduction(_prod),
    "pd_op.all": reduction(_all, axes_from_attribute=True),
    "pd_op.any": reduction(_any, axes_from_attribute=True),
    "pd_op.argmax": arg_extreme(np.argmax, -np.inf),
    "pd_op.argmin": arg_extreme(np.argmin, np.inf),
    "pd_op.cumsum": cumsum,
}
