"""Neural-network ops: softmax, normalization, matmul, embedding, dropout.

All accumulate in float64 (float inputs) and round once into the result type.
"""

from __future__ import annotations

import math

import numpy as np

from cinn_py.errors import UnsupportedOpError
from cinn_py.reference_ops.context import Kernel, KernelContext, accumulate_dtype
from cinn_py.reference_ops.manipulation import check_indices
from cinn_py.reference_ops.reduction import normalize_axis

SOFTMAX_SHIFT_FLOOR = -64.0
"""Paddle's CPU softmax and log_softmax clip `x - max` at -64 before `exp` (its
ValueClip), so softmax never gives exactly 0 (e**-64 = 1.6e-28) and log_softmax is
never below -64, even for -inf inputs."""


def _shifted(ctx: KernelContext) -> tuple[np.ndarray, int]:
    x = ctx.tensor(0).astype(np.float64)
    if x.ndim == 0:
        x = x.reshape(1)
    axis = normalize_axis(ctx.attr("axis", -1), x.ndim, ctx)
    if x.size == 0:  # nothing to normalize (NumPy's max has no identity for an empty axis)
        return x, axis
    with np.errstate(invalid="ignore"):
        shifted = np.maximum(x - np.max(x, axis=axis, keepdims=True), SOFTMAX_SHIFT_FLOOR)
    return shifted, axis


def softmax(ctx: KernelContext) -> np.ndarray:
    shifted, axis = _shifted(ctx)
    e = np.exp(shifted)
    return (e / np.sum(e, axis=axis, keepdims=True)).reshape(ctx.tensor(0).shape)


def log_softmax(ctx: KernelContext) -> np.ndarray:
    shifted, axis = _shifted(ctx)
    out = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return out.reshape(ctx.tensor(0).shape)


def _rows(x: np.ndarray, begin: int) -> np.ndarray:
    """`x` as a matrix: the dims before `begin` are rows, the rest one row each."""
    rows = math.prod(x.shape[:begin])
    return x.astype(np.float64).reshape(rows, math.prod(x.shape[begin:]))


def _row_mean(rows: np.ndarray) -> np.ndarray:
    """The mean of each row, NaN for rows of no elements (NumPy's mean warns there)."""
    return rows.sum(axis=1, keepdims=True) / rows.shape[1]


def layer_norm(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalizes over the dims from `begin_norm_axis` on; scale and bias (optional)
    hold one value per normalized element. Returns out, mean and the biased variance,
    the last two shaped like the leading dims."""
    x = ctx.tensor(0)
    begin = normalize_axis(ctx.attr("begin_norm_axis", 1), x.ndim, ctx)
    rows = _rows(x, begin)
    with np.errstate(invalid="ignore", divide="ignore"):  # empty rows: NaN statistics
        mean = _row_mean(rows)
        variance = _row_mean(np.square(rows - mean))
        out = (rows - mean) / np.sqrt(variance + ctx.attr("epsilon", 1e-5))
    out = _affine(ctx, out, 1, np.multiply)
    out = _affine(ctx, out, 2, np.add)
    lead = x.shape[:begin]
    return out.reshape(x.shape), mean.reshape(lead), variance.reshape(lead)


def _affine(ctx: KernelContext, rows: np.ndarray, index: int, fn: np.ufunc) -> np.ndarray:
    """Applies optional operand `index` (one value per column of `rows`) with `fn`."""
    weight = ctx.optional(index)
    if weight is None:
        return rows
    weight = np.asarray(weight, dtype=np.float64).reshape(-1)
    if weight.size != rows.shape[1]:
        raise ctx.shape_error(
            f"operand #{index} has {weight.size} values for rows of {rows.shape[1]}"
        )
    return fn(rows, weight)


def rms_norm(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
    """Paddle 3.3.1's `pd_op.rms_norm(x, scale?)` {normalized_shape, epsilon} (a GPU-only
    kernel): y = x * rsqrt(mean(x**2) + epsilon) * scale over the trailing
    `normalized_shape` dims, and invvar = that rsqrt, shaped like the leading dims."""
    x = ctx.tensor(0)
    begin = x.ndim - len(ctx.attr("normalized_shape"))
    if not 0 <= begin <= x.ndim:
        raise ctx.error(f"normalized_shape is longer than the rank {x.ndim} of x")
    rows = _rows(x, begin)
    with np.errstate(invalid="ignore", divide="ignore"):  # empty rows: NaN statistics
        invvar = 1 / np.sqrt(_row_mean(np.square(rows)) + ctx.attr("epsilon", 1e-5))
    out = _affine(ctx, rows * invvar, 1, np.multiply)
    return out.reshape(x.shape), invvar.reshape(x.shape[:begin])


def matmul(ctx: KernelContext) -> np.ndarray:
    """`transpose_x` / `transpose_y` swap the last two dims of a tensor of rank >= 2;
    1-D operands act as a row (x) or column (y) vector; batch dims broadcast."""
    x, y = ctx.tensor(0), ctx.tensor(1)
    if ctx.attr("transpose_x", False) and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if ctx.attr("transpose_y", False) and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    dtype = accumulate_dtype(np.result_type(x, y))
    return np.matmul(x.astype(dtype), y.astype(dtype))


def bmm(ctx: KernelContext) -> np.ndarray:
    x, y = ctx.tensor(0), ctx.tensor(1)
    if x.ndim != 3 or y.ndim != 3:
        raise ctx.shape_error(
            f"needs two 3-D tensors, got shapes {list(x.shape)} and {list(y.shape)}"
        )
    dtype = accumulate_dtype(np.result_type(x, y))
    return np.matmul(x.astype(dtype), y.astype(dtype))


def embedding(ctx: KernelContext) -> np.ndarray:
    """Rows of `weight` by id; rows whose id is `padding_idx` are zero (-1: none, and
    ids are never negative: Paddle rejects ids outside [0, rows))."""
    ids, weight = ctx.tensor(0), ctx.tensor(1)
    check_indices(ctx, ids, 0, weight.shape[0])
    out = weight[ids.astype(np.int64)]
    out[ids == ctx.attr("padding_idx", -1)] = 0
    return out


def dropout(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
    """Inference only: `upscale_in_train` passes x through, `downgrade_in_infer` scales it
    by 1 - p. Paddle leaves the mask unwritten in inference; here it is all ones (every
    element kept). Training (is_test false) draws random masks, which no oracle can."""
    if not ctx.attr("is_test", False):
        raise UnsupportedOpError(
            ctx.op.name,
            ctx.op.where(),
            "with is_test=false (training, random masks) is not supported",
        )
    x = ctx.tensor_in(0, ctx.compute_dtype())
    mask = np.ones(x.shape, dtype=np.uint8)
    if ctx.attr("mode", "downgrade_in_infer") == "upscale_in_train":
        return x, mask
    return x * (np.float32(1) - np.float32(ctx.scalar(2, "p"))), mask


KERNELS: dict[str, Kernel] = {
    "pd_op.softmax": softmax,
    "pd_op.log_softmax": log_softmax,
    "pd_op.layer_norm": layer_norm,
    "pd_op.rms_norm": rms_norm,
    "pd_op.matmul": matmul,
    "pd_op.bmm": bmm,
    "pd_op.embedding": embedding,
    "pd_op.dropout": dropout,
}
