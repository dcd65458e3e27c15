"""Elementwise math, comparisons and logic, with Paddle 3.3.1's integer rules.

Operands broadcast NumPy-style (Paddle's rule). Each op computes in the compute dtype
of its result (float16 and bfloat16 in float32) and the executor rounds the result.
Integer rules checked against Paddle's CPU kernels: `divide` truncates toward zero;
`floor_divide` floors; `remainder` takes the divisor's sign (C `fmod`, then + y when
the signs differ, so a zero keeps the dividend's sign); `pow` truncates its float
exponent for integer tensors; `round` rounds half to even (`rint`), also with
`decimals`.

Integer arithmetic is defined for every input, as NumPy defines it (Paddle's kernels
leave these cases undefined or raise), and generated code does the same on every
target (`cinn_py_runtime.h`):

* add, subtract, multiply, negation, abs, scale, pow and sums wrap around (two's
  complement): abs(INT_MIN) is INT_MIN;
* a zero divisor gives 0 for `divide`, `floor_divide`, `remainder` and `reciprocal`
  (NumPy's result for `//` and `%`; C traps or is undefined);
* INT_MIN / -1 wraps to INT_MIN (also for `floor_divide`), INT_MIN % -1 is 0;
* `pow` and `elementwise_pow` of integers are exact integer powers, wrapping; a
  negative exponent gives trunc(1 / x**-y): 1 for x = 1, +-1 for x = -1, else 0
  (0 for x = 0 too: 1 / 0 is 0, as above). Paddle rounds a float64 pow, which is
  the same wherever that is exact.

Float-to-integer conversion (every cast, and an integer op computing in float)
truncates toward zero, saturates to the integer type's range and takes NaN to 0
(`dtypes.float_to_int`, what the GPU's `cvt.rzi` does).

Not mirrored: Paddle's float32 CPU `sqrt` gives NaN for +inf in the part of a tensor
its vectorized Eigen loop covers (a fast-math artifact that depends on the element's
position); here sqrt(+inf) is +inf, as IEEE and Paddle's GPU kernels give.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from cinn_py.reference_ops.context import Kernel, KernelContext

Unary = Callable[[np.ndarray], np.ndarray]
Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]

_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """NumPy has no erf; `math.erf`, element by element in float64, is exact enough."""
    # frompyfunc gives a Python float for a 0-D input: asarray keeps it an array.
    return np.asarray(_erf(x.astype(np.float64)), dtype=np.float64).astype(x.dtype, copy=False)


def unary(fn: Unary) -> Kernel:
    """A kernel applying `fn` to operand 0 in the result's compute dtype."""

    def kernel(ctx: KernelContext) -> np.ndarray:
        with np.errstate(all="ignore"):
            return fn(ctx.tensor_in(0, ctx.compute_dtype()))

    return kernel


def binary(fn: Binary) -> Kernel:
    """A kernel applying `fn` to operands 0 and 1 in the result's compute dtype."""

    def kernel(ctx: KernelContext) -> np.ndarray:
        dtype = ctx.compute_dtype()
        with np.errstate(all="ignore"):
            return fn(ctx.tensor_in(0, dtype), ctx.tensor_in(1, dtype))

    return kernel


def predicate(fn: Binary) -> Kernel:
    """A comparison or binary logical op: operands as they are (NumPy promotes mixed
    dtypes exactly), the result bool."""

    def kernel(ctx: KernelContext) -> np.ndarray:
        return fn(ctx.tensor(0), ctx.tensor(1))

    return kernel


def unary_test(fn: Unary) -> Kernel:
    """A unary test (isnan, logical_not): the operand as it is, the result bool."""

    def kernel(ctx: KernelContext) -> np.ndarray:
        return fn(ctx.tensor(0))

    return kernel


def is_int(x: np.ndarray) -> bool:
    return x.dtype.kind in "biu"


def trunc_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """C integer division (toward zero), which Paddle's integer `divide` does; x / 0 is
    0 and INT_MIN / -1 wraps to INT_MIN (NumPy's `//` gives both)."""
    with np.errstate(divide="ignore", over="ignore"):
        quotient = np.floor_divide(x, y)
    inexact = (quotient * y != x) & ((x < 0) != (y < 0)) & (y != 0)
    return quotient + inexact


def divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return trunc_divide(x, y) if is_int(x) else x / y


def remainder(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Paddle's remainder: `fmod`, moved into the divisor's sign when they differ. For
    integers x % 0 and INT_MIN % -1 are 0 (NumPy's fmod)."""
    rest = np.fmod(x, y)
    return np.where((rest != 0) & ((rest < 0) != (y < 0)), rest + y, rest)


def int_power(x: np.ndarray, y: np.ndarray | int) -> np.ndarray:
    """`x ** y` in x's integer type: exact and wrapping for y >= 0; for y < 0 the
    truncated 1 / x**-y: 1 for x = 1, +-1 for x = -1 (by y's parity), else 0 (also
    for x = 0, as integer division by zero gives)."""
    x, y = np.broadcast_arrays(x, np.asarray(y, dtype=x.dtype))
    positive = np.power(x, np.maximum(y, 0))
    unit = np.where(x == 1, 1, np.where(x == -1, np.where(y % 2 == 0, 1, -1), 0))
    return np.where(y < 0, unit, positive).astype(x.dtype)


def power(x: np.ndarray, y: np.ndarray | int | float) -> np.ndarray:
    """C's `pow`, which `elementwise_pow` follows for floats (integers: `int_power`).
    NumPy differs from C for -inf to a non-integer power (NaN; C: +inf for a positive
    power, +0 for a negative one)."""
    if is_int(x):
        return int_power(x, y)
    fraction = np.isfinite(y) & (y != np.trunc(y))
    return np.where(np.isneginf(x) & fraction, np.where(y > 0, np.inf, 0.0), np.power(x, y))


def pow_kernel(ctx: KernelContext) -> np.ndarray:
    """`pow` with a Scalar exponent `y`. An integer tensor truncates it first (Paddle
    casts the factor to the tensor's type, so `pow(int, 0.5)` is x**0 = 1). Unlike
    `elementwise_pow`, Paddle's `pow` drops the sign of infinite and zero bases:
    pow(-inf, 3) = +inf, pow(-0, -1) = +inf."""
    x = ctx.tensor_in(0, ctx.compute_dtype())
    exponent = ctx.attr("y", 1.0)
    with np.errstate(all="ignore"):
        if is_int(x):
            return power(x, int(exponent))
        return power(np.where(np.isinf(x) | (x == 0), np.abs(x), x), x.dtype.type(exponent))


def round_kernel(ctx: KernelContext) -> np.ndarray:
    """Half to even, as Paddle 3.3.1's CPU kernel rounds (0.5 -> 0, 2.5 -> 2), with
    `decimals` scaling by 10**decimals in the tensor's own dtype first."""
    x = ctx.tensor_in(0, ctx.compute_dtype())
    decimals = ctx.attr("decimals", 0)
    if is_int(x):
        return x
    if decimals == 0:
        return np.rint(x)
    factor = x.dtype.type(10.0 ** abs(decimals))
    with np.errstate(all="ignore"):
        if decimals > 0:
            return np.rint(x * factor) / factor
        return np.rint(x / factor) * factor


def scale(ctx: KernelContext) -> np.ndarray:
    """`scale * x + bias`, or `(x + bias) * scale`; an integer tensor truncates both
    factors to its type first, as Paddle does. (For float16 and bfloat16 Paddle's CPU
    kernel rounds the factors and the product to the dtype too, which can differ from
    this single rounding by one unit in the last place.)"""
    x = ctx.tensor_in(0, ctx.compute_dtype())
    factor = ctx.scalar(1, "scale")
    bias = ctx.attr("bias", 0.0)
    if is_int(x):
        factor, bias = int(factor), int(bias)
    with np.errstate(all="ignore"):
        if ctx.attr("bias_after_scale", True):
            return x * factor + bias
        return (x + bias) * factor


def clip(ctx: KernelContext) -> np.ndarray:
    """NaN stays NaN; an integer tensor truncates the float bounds to its type."""
    x = ctx.tensor_in(0, ctx.compute_dtype())
    low, high = ctx.scalar(1, "min"), ctx.scalar(2, "max")
    if is_int(x):
        low, high = int(low), int(high)
    return np.minimum(np.maximum(x, low), high)


def cast(ctx: KernelContext) -> np.ndarray:
    """The executor's conversion to the result dtype is the cast itself."""
    return ctx.tensor(0)


def where(ctx: KernelContext) -> np.ndarray:
    return np.where(ctx.tensor(0).astype(bool), ctx.tensor(1), ctx.tensor(2))


def reciprocal(x: np.ndarray) -> np.ndarray:
    return trunc_divide(np.ones_like(x), x) if is_int(x) else 1 / x


def rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _float_only(fn: Unary) -> Unary:
    """Keeps integer tensors as they are (floor, ceil of an int are the int)."""
    return lambda x: x if is_int(x) else fn(x)


KERNELS: dict[str, Kernel] = {
    "pd_op.add": binary(np.add),
    "pd_op.subtract": binary(np.subtract),
    "pd_op.multiply": binary(np.multiply),
    "pd_op.divide": binary(divide),
    "pd_op.floor_divide": binary(np.floor_divide),  # ints: x // 0 = 0, MIN // -1 = MIN
    "pd_op.remainder": binary(remainder),
    "pd_op.maximum": binary(np.maximum),
    "pd_op.minimum": binary(np.minimum),
    "pd_op.elementwise_pow": binary(power),
    "pd_op.pow": pow_kernel,
    "pd_op.scale": scale,
    "pd_op.clip": clip,
    "pd_op.cast": cast,
    "pd_op.where": where,
    "pd_op.round": round_kernel,
    "pd_op.exp": unary(np.exp),
    "pd_op.expm1": unary(np.expm1),
    "pd_op.log": unary(np.log),
    "pd_op.log1p": unary(np.log1p),
    "pd_op.log2": unary(np.log2),
    "pd_op.sqrt": unary(np.sqrt),
    "pd_op.rsqrt": unary(rsqrt),
    "pd_op.abs": unary(np.abs),
    "pd_op.sign": unary(np.sign),
    "pd_op.floor": unary(_float_only(np.floor)),
    "pd_op.ceil": unary(_float_only(np.ceil)),
    "pd_op.sin": unary(np.sin),
    "pd_op.cos": unary(np.cos),
    "pd_op.tan": unary(np.tan),
    "pd_op.tanh": unary(np.tanh),
    "pd_op.erf": unary(erf),
    "pd_op.square": unary(np.square),
    "pd_op.reciprocal": unary(reciprocal),
    "pd_op.equal": predicate(np.equal),
    "pd_op.not_equal": predicate(np.not_equal),
    "pd_op.less_than": predicate(np.less),
    "pd_op.less_equal": predicate(np.less_equal),
    "pd_op.greater_than": predicate(np.greater),
    "pd_op.greater_equal": predicate(np.greater_equal),
    "pd_op.logical_and": predicate(np.logical_and),
    "pd_op.logical_or": predicate(np.logical_or),
    "pd_op.logical_xor": predicate(np.logical_xor),
    "pd_op.logical_not": unary_test(np.logical_not),
    "pd_op.isnan": unary_test(np.isnan),
    "pd_op.isinf": unary_test(np.isinf),
    "pd_op.isfinite": unary_test(np.isfinite),
}
