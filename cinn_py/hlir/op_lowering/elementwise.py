"""Elementwise math, comparisons, logic, casts and select, as the reference computes them.

Each op converts its operands to the compute type of its result (`scalar.py`), builds
the reference kernel's formula from IR nodes and intrinsics, and converts the result
back. Integer rules follow `cinn_py/reference_ops/elementwise.py`: `divide` truncates
(C's `/`), `floor_divide` floors, `remainder` takes the divisor's sign; arithmetic
wraps, a zero divisor gives 0 and INT_MIN / -1 wraps (the IR's `Add` ... `Div` / `Mod`
nodes mean exactly that, and codegen emits them so). Float `floor_divide` is NumPy's
own algorithm (fmod, then snap the quotient), which is not `floor(x / y)`: 1 // 0.1
is 9. Comparisons and logic ops read their operands as they are and compare in the
type NumPy promotes the pair to (float16 in float32, exactly).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cinn_py.hlir.op_lowering.broadcast import broadcast_to
from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering, any_dtype, numeric
from cinn_py.hlir.op_lowering.scalar import (
    BOOL,
    F32,
    HALF,
    compute_type,
    const,
    convert,
    float_compute_type,
    intrinsic,
    nan_max,
    nan_min,
    saturate,
    truthy,
)
from cinn_py.ir.expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Div,
    Expr,
    Mod,
    Mul,
    Not,
    Or,
    Select,
    Sub,
)
from cinn_py.pir.dtypes import DataType

Unary = Callable[[Expr], Expr]
Binary = Callable[[Expr, Expr], Expr]


def unary_compute(ctx: LowerContext, fn: Unary, *, floating: bool = False) -> Compute:
    """The result of `fn` on operand 0, computed in the result's compute type (or, for a
    floating-point function of an integer tensor, in float64)."""
    x = ctx.input(0)
    dtype = ctx.out_dtype()
    ctype = float_compute_type(dtype) if floating else compute_type(dtype)
    return Compute(dtype, ctx.out_shape(), lambda idx: convert(fn(convert(x(idx), ctype)), dtype))


def unary(fn: Unary, *, floating: bool = False) -> OpLowering:
    return OpLowering(lambda ctx: unary_compute(ctx, fn, floating=floating), numeric)


def binary(fn: Binary) -> OpLowering:
    """`fn` of operands 0 and 1, broadcast to the result, in its compute type."""

    def lower(ctx: LowerContext) -> Compute:
        dtype, shape = ctx.out_dtype(), ctx.out_shape()
        ctype = compute_type(dtype)
        x, y = broadcast_to(ctx.input(0), shape), broadcast_to(ctx.input(1), shape)

        def element(idx: Indices) -> Expr:
            return convert(fn(convert(x(idx), ctype), convert(y(idx), ctype)), dtype)

        return Compute(dtype, shape, element)

    return OpLowering(lower, numeric)


def comparison_type(a: DataType, b: DataType) -> DataType:
    """The type NumPy compares an `a` and a `b` array in (bfloat16 is held as float32);
    float16 compares exactly in float32."""

    def held(d: DataType) -> np.dtype:
        return np.dtype(np.float32) if d is DataType.BFLOAT16 else d.numpy

    common = DataType.from_numpy(np.result_type(held(a), held(b)))
    return F32 if common in HALF else common


def predicate(fn: Binary, *, logical: bool = False) -> OpLowering:
    """A comparison (operands in their common type) or a binary logic op (operands as
    bool); the result is bool."""

    def lower(ctx: LowerContext) -> Compute:
        shape = ctx.out_shape()
        x, y = broadcast_to(ctx.input(0), shape), broadcast_to(ctx.input(1), shape)
        ctype = BOOL if logical else comparison_type(x.dtype, y.dtype)

        def element(idx: Indices) -> Expr:
            return fn(convert(x(idx), ctype), convert(y(idx), ctype))

        return Compute(BOOL, shape, element)

    return OpLowering(lower, any_dtype)


# ---- integer and float formulas ----------------------------------------------------------


def floor_divide(a: Expr, b: Expr) -> Expr:
    if a.dtype.is_integer:
        q = Div(a, b)
        inexact = And(NE(Mod(a, b), const(0, a.dtype)), NE(LT(a, zero(a)), LT(b, zero(b))))
        return Select(inexact, Sub(q, const(1, a.dtype)), q)
    # NumPy's npy_floor_divide: divmod through fmod, then snap to the nearest integer.
    mod = intrinsic("fmod", a, b)
    div = Div(Sub(a, mod), b)
    moved = And(NE(mod, zero(mod)), NE(LT(b, zero(b)), LT(mod, zero(mod))))
    div = Select(moved, Sub(div, const(1, div.dtype)), div)
    floor = intrinsic("floor", div)
    snapped = Select(
        GT(Sub(div, floor), const(0.5, div.dtype)), Add(floor, const(1, div.dtype)), floor
    )
    # A zero quotient takes the sign of a / b (NumPy's copysign(0, a / b)): -0.3 // -inf
    # is +0, where floor((a - mod) / b) gives -0 (and a later pow(q, -1) -inf for inf).
    # `x * 0` keeps x's sign for the finite a / b this branch sees.
    signed_zero = Mul(Div(a, b), const(0, a.dtype))
    snapped = Select(NE(div, zero(div)), snapped, signed_zero)
    return Select(EQ(b, zero(b)), Div(a, b), snapped)


def remainder(a: Expr, b: Expr) -> Expr:
    """C's fmod (or `%`), moved into the divisor's sign when the signs differ."""
    rest = Mod(a, b) if a.dtype.is_integer else intrinsic("fmod", a, b)
    differ = And(NE(rest, zero(rest)), NE(LT(rest, zero(rest)), LT(b, zero(b))))
    return Select(differ, Add(rest, b), rest)


def power(a: Expr, b: Expr) -> Expr:
    """C's pow for floats; for integers the `pow` intrinsic on integers, the exact
    wrapping power of the reference's `int_power` (a negative exponent: 1 / x**-y
    truncated, 0 for x = 0)."""
    return intrinsic("pow", a, b)


def zero(x: Expr) -> Expr:
    return const(0, x.dtype)


def _sign(v: Expr) -> Expr:
    one, minus_one = const(1, v.dtype), const(-1, v.dtype)
    return Select(GT(v, zero(v)), one, Select(LT(v, zero(v)), minus_one, v))


def _float_only(fn: Unary) -> Unary:
    """Integer tensors pass through (floor and ceil of an integer are itself)."""
    return lambda v: fn(v) if v.dtype.is_float else v


def _intrinsic(name: str) -> Unary:
    return lambda v: intrinsic(name, v)


# ---- ops with attributes --------------------------------------------------------------


def _round(ctx: LowerContext) -> Compute:
    """Half to even (`rint`); `decimals` scales by 10**decimals in the compute type."""
    decimals = int(ctx.attr("decimals", 0))

    def fn(v: Expr) -> Expr:
        if not v.dtype.is_float:
            return v
        if decimals == 0:
            return intrinsic("rint", v)
        factor = const(10.0 ** abs(decimals), v.dtype)
        if decimals > 0:
            return Div(intrinsic("rint", Mul(v, factor)), factor)
        return Mul(intrinsic("rint", Div(v, factor)), factor)

    return unary_compute(ctx, fn)


_MAX_MULTIPLY_EXPONENT = 16


def _pow(ctx: LowerContext) -> Compute:
    """`pow` with the Scalar exponent `y`. Floats: C pow of |x| where x is infinite or
    zero (Paddle drops their sign). Integers truncate the exponent; small ones multiply
    out, others are the integer `pow` intrinsic (both exact and wrapping, as the
    reference's `int_power`)."""
    exponent = ctx.attr("y", 1.0)

    def fn(v: Expr) -> Expr:
        if v.dtype.is_float:
            special = Or(intrinsic("isinf", v, dtype=BOOL), EQ(v, zero(v)))
            base = Select(special, intrinsic("abs", v), v)
            return intrinsic("pow", base, const(exponent, v.dtype))
        e = int(exponent)
        if e == 0:
            return const(1, v.dtype)
        if 0 < e <= _MAX_MULTIPLY_EXPONENT:
            result = v
            for _ in range(e - 1):
                result = Mul(result, v)
            return result
        return power(v, const(e, v.dtype))

    return unary_compute(ctx, fn)


def _scale(ctx: LowerContext) -> Compute:
    """`scale * x + bias`, or `(x + bias) * scale`; integers truncate both factors."""
    factor = ctx.scalar(1, "scale")
    bias = ctx.attr("bias", 0.0)
    after = ctx.attr("bias_after_scale", True)

    def fn(v: Expr) -> Expr:
        f, b = const(_int_if(factor, v), v.dtype), const(_int_if(bias, v), v.dtype)
        return Add(Mul(v, f), b) if after else Mul(Add(v, b), f)

    return unary_compute(ctx, fn)


def _int_if(value: float, v: Expr) -> float | int:
    return value if v.dtype.is_float else int(value)


def _clip(ctx: LowerContext) -> Compute:
    """`minimum(maximum(x, min), max)`: NaN stays NaN; integers truncate the bounds."""
    low, high = ctx.scalar(1, "min"), ctx.scalar(2, "max")

    def fn(v: Expr) -> Expr:
        if v.dtype.is_float:
            lo, hi = const(low, v.dtype), const(high, v.dtype)
        else:
            lo, hi = const(saturate(low, v.dtype), v.dtype), const(saturate(high, v.dtype), v.dtype)
        return nan_min(nan_max(v, lo), hi)

    return unary_compute(ctx, fn)


def _cast(ctx: LowerContext) -> Compute:
    x, dtype = ctx.input(0), ctx.out_dtype()
    return Compute(dtype, ctx.out_shape(), lambda idx: convert(x(idx), dtype))


def _where(ctx: LowerContext) -> Compute:
    """`condition ? x : y`, each branch converted to the result's dtype."""
    shape, dtype = ctx.out_shape(), ctx.out_dtype()
    cond, x, y = (broadcast_to(ctx.input(i), shape) for i in range(3))

    def element(idx: Indices) -> Expr:
        return Select(truthy(cond(idx)), convert(x(idx), dtype), convert(y(idx), dtype))

    return Compute(dtype, shape, element)


def _float_test(name: str, for_integers: bool) -> OpLowering:
    """isnan / isinf / isfinite: an intrinsic on floats (float16 widened exactly), a
    constant for integers and bools."""

    def lower(ctx: LowerContext) -> Compute:
        x = ctx.input(0)

        def element(idx: Indices) -> Expr:
            if not x.dtype.is_float:
                return const(for_integers, BOOL)
            return intrinsic(name, convert(x(idx), compute_type(x.dtype)), dtype=BOOL)

        return Compute(BOOL, ctx.out_shape(), element)

    return OpLowering(lower, any_dtype)


def _logical_not(ctx: LowerContext) -> Compute:
    x = ctx.input(0)
    return Compute(BOOL, ctx.out_shape(), lambda idx: Not(truthy(x(idx))))


_FLOAT_FUNCTIONS = ("exp", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "sin", "cos")
_FLOAT_FUNCTIONS += ("tan", "tanh", "erf")

LOWERINGS: dict[str, OpLowering] = {
    **{f"pd_op.{name}": unary(_intrinsic(name), floating=True) for name in _FLOAT_FUNCTIONS},
    "pd_op.abs": unary(_intrinsic("abs")),
    "pd_op.sign": unary(_sign),
    "pd_op.floor": unary(_float_only(_intrinsic("floor"))),
    "pd_op.ceil": unary(_float_only(_intrinsic("ceil"))),
    "pd_op.square": unary(lambda v: Mul(v, v)),
    "pd_op.reciprocal": unary(lambda v: Div(const(1, v.dtype), v)),
    "pd_op.round": OpLowering(_round, numeric),
    "pd_op.pow": OpLowering(_pow, numeric),
    "pd_op.scale": OpLowering(_scale, numeric),
    "pd_op.clip": OpLowering(_clip, numeric),
    "pd_op.cast": OpLowering(_cast, any_dtype),
    "pd_op.where": OpLowering(_where, any_dtype),
    "pd_op.add": binary(Add),
    "pd_op.subtract": binary(Sub),
    "pd_op.multiply": binary(Mul),
    "pd_op.divide": binary(Div),
    "pd_op.floor_divide": binary(floor_divide),
    "pd_op.remainder": binary(remainder),
    "pd_op.maximum": binary(nan_max),
    "pd_op.minimum": binary(nan_min),
    "pd_op.elementwise_pow": binary(power),
    "pd_op.equal": predicate(EQ),
    "pd_op.not_equal": predicate(NE),
    "pd_op.less_than": predicate(LT),
    "pd_op.less_equal": predicate(LE),
    "pd_op.greater_than": predicate(GT),
    "pd_op.greater_equal": predicate(GE),
    "pd_op.logical_and": predicate(And, logical=True),
    "pd_op.logical_or": predicate(Or, logical=True),
    "pd_op.logical_xor": predicate(NE, logical=True),
    "pd_op.logical_not": OpLowering(_logical_not, any_dtype),
    "pd_op.isnan": _float_test("isnan", False),
    "pd_op.isinf": _float_test("isinf", False),
    "pd_op.isfinite": _float_test("isfinite", True),
}
