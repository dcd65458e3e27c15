"""Activations, written as Paddle's functors write them, so NaN and infinities come out
as Paddle's do: relu(NaN) = 0 (`x > 0 ? x : 0`), relu6/hardsigmoid keep NaN,
silu(-inf) = hardswish(-inf) = NaN (inf * 0)."""

from __future__ import annotations

import math

import numpy as np

from cinn_py.reference_ops.context import Kernel, KernelContext
from cinn_py.reference_ops.elementwise import erf, unary


def relu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, 0)


def relu6(x: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(x, 0), 6)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.exp(-x))


def hardswish(x: np.ndarray) -> np.ndarray:
    """Paddle's fixed threshold 6, scale 6, offset 3."""
    return x * np.minimum(np.maximum(x + 3, 0), 6) / 6


def _in(ctx: KernelContext) -> np.ndarray:
    return ctx.tensor_in(0, ctx.compute_dtype())


def gelu(ctx: KernelContext) -> np.ndarray:
    """`approximate=False`: 0.5 x (1 + erf(x / sqrt 2)); True: the tanh form. Computed
    in float64 (erf needs it) and rounded once."""
    x = _in(ctx).astype(np.float64)
    with np.errstate(all="ignore"):
        if ctx.attr("approximate", False):
            inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
            return 0.5 * x * (1 + np.tanh(inner))
        return 0.5 * x * (1 + erf(x * math.sqrt(0.5)))


def leaky_relu(ctx: KernelContext) -> np.ndarray:
    x = _in(ctx)
    return np.where(x > 0, x, x * ctx.attr("negative_slope", 0.02))


def hardsigmoid(ctx: KernelContext) -> np.ndarray:
    """clip(slope x + offset, 0, 1); Paddle's op defaults are slope 0.2, offset 0.5
    (the Python API passes 1/6)."""
    x = _in(ctx)
    y = x * ctx.attr("slope", 0.2) + ctx.attr("offset", 0.5)
    return np.minimum(np.maximum(y, 0), 1)


KERNELS: dict[str, Kernel] = {
    "pd_op.relu": unary(relu),
    "pd_op.relu6": unary(relu6),
    "pd_op.sigmoid": unary(sigmoid),
    "pd_op.silu": unary(silu),
    "pd_op.hardswish": unary(hardswish),
    "pd_op.gelu": gelu,
    "pd_op.leaky_relu": leaky_relu,
    "pd_op.hardsigmoid": hardsigmoid,
}
