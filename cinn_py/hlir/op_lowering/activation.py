"""Activations, written as the reference (Paddle's functors) writes them, so NaN and
infinities come out the same: relu(NaN) = 0 (`x > 0 ? x : 0`, a Max node), relu6 and hardsigmoid
keep NaN (NumPy's maximum/minimum), silu(-inf) = hardswish(-inf) = NaN (inf * 0).

The floating-point ones compute in float32 for float16/bfloat16/float32 (the reference
computes gelu in float64 and rounds once: within float32 tolerance) and in float64
for integer tensors, truncating back as the reference does.
"""

from __future__ import annotations

import math

from cinn_py.hlir.op_lowering.compute import Compute
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering, numeric
from cinn_py.hlir.op_lowering.elementwise import unary, unary_compute
from cinn_py.hlir.op_lowering.scalar import const, intrinsic, nan_max, nan_min, negate
from cinn_py.ir.expr import GT, Add, Div, Expr, Max, Mul, Select


def _relu(v: Expr) -> Expr:
    """`x > 0 ? x : 0` is Max(x, 0) exactly (a Max node is `a > b ? a : b`: NaN gives
    0), and reads x once, which keeps inlined consumers small."""
    return Max(v, const(0, v.dtype))


def _relu6(v: Expr) -> Expr:
    return nan_min(nan_max(v, const(0, v.dtype)), const(6, v.dtype))


def _sigmoid(v: Expr) -> Expr:
    one = const(1, v.dtype)
    return Div(one, Add(one, intrinsic("exp", negate(v))))


def _silu(v: Expr) -> Expr:
    return Div(v, Add(const(1, v.dtype), intrinsic("exp", negate(v))))


def _hardswish(v: Expr) -> Expr:
    """Paddle's fixed threshold 6, scale 6, offset 3: x * min(max(x + 3, 0), 6) / 6."""
    clipped = nan_min(nan_max(Add(v, const(3, v.dtype)), const(0, v.dtype)), const(6, v.dtype))
    return Div(Mul(v, clipped), const(6, v.dtype))


def _gelu(ctx: LowerContext) -> Compute:
    """`approximate=False`: 0.5 x (1 + erf(x / sqrt 2)); True: the tanh form."""
    approximate = ctx.attr("approximate", False)

    def fn(x: Expr) -> Expr:
        def c(value: float) -> Expr:
            return const(value, x.dtype)

        half_x = Mul(c(0.5), x)
        if approximate:
            cube = Mul(Mul(x, x), x)
            inner = Mul(c(math.sqrt(2 / math.pi)), Add(x, Mul(c(0.044715), cube)))
            return Mul(half_x, Add(c(1), intrinsic("tanh", inner)))
        return Mul(half_x, Add(c(1), intrinsic("erf", Mul(x, c(math.sqrt(0.5))))))

    return unary_compute(ctx, fn, floating=True)


def _leaky_relu(ctx: LowerContext) -> Compute:
    slope = ctx.attr("negative_slope", 0.02)

    def fn(v: Expr) -> Expr:
        return Select(GT(v, const(0, v.dtype)), v, Mul(v, const(slope, v.dtype)))

    return unary_compute(ctx, fn, floating=True)


def _hardsigmoid(ctx: LowerContext) -> Compute:
    """clip(slope x + offset, 0, 1), NaN kept; Paddle's op defaults are 0.2 and 0.5."""
    slope, offset = ctx.attr("slope", 0.2), ctx.attr("offset", 0.5)

    def fn(v: Expr) -> Expr:
        y = Add(Mul(v, const(slope, v.dtype)), const(offset, v.dtype))
        return nan_min(nan_max(y, const(0, v.dtype)), const(1, v.dtype))

    return unary_compute(ctx, fn, floating=True)


LOWERINGS: dict[str, OpLowering] = {
    "pd_op.relu": unary(_relu),
    "pd_op.relu6": unary(_relu6),
    "pd_op.sigmoid": unary(_sigmoid, floating=True),
    "pd_op.silu": unary(_silu, floating=True),
    "pd_op.hardswish": unary(_hardswish, floating=True),
    "pd_op.gelu": OpLowering(_gelu, numeric),
    "pd_op.leaky_relu": OpLowering(_leaky_relu, numeric),
    "pd_op.hardsigmoid": OpLowering(_hardsigmoid, numeric),
}
