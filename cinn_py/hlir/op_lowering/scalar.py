"""The reference executor's dtype rules, as expression builders every lowering shares.

The reference (`cinn_py/reference_ops/context.py`) computes an op producing float16,
bfloat16 or float32 in float32 and rounds the result to its dtype once; float64 in
float64; integers in an integer type (its wrap-around is the result's). Conversions
follow the reference's `to_dtype`: floats truncate to integers, saturating, NaN to 0
(`dtypes.float_to_int`); anything nonzero (NaN too) is true. Here that becomes:
operands `convert`ed to the compute type, the op's expression, the result
`convert`ed to the declared dtype. float16 and bfloat16 only ever meet float32
(`Cast(float32, x)`, `Cast(float16, y)`), never another type or arithmetic of their
own, so the code generator needs no half-precision arithmetic.

Min/Max nodes are `a < b ? a : b` (no NaN rule); NumPy's maximum and minimum return
NaN when either side is NaN, and b where the two compare equal (maximum(-0.0, 0.0) is
+0.0), so `nan_max` / `nan_min` build that from Select.
"""

from __future__ import annotations

import numpy as np

from cinn_py.ir.expr import (
    GE,
    LE,
    NE,
    Call,
    CallType,
    Cast,
    Expr,
    FloatImm,
    Max,
    Min,
    Or,
    Select,
    Sub,
    make_const,
)
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16, float_to_int

F32 = DataType.FLOAT32
F64 = DataType.FLOAT64
BOOL = DataType.BOOL
HALF = (DataType.FLOAT16, DataType.BFLOAT16)


def compute_type(dtype: DataType) -> DataType:
    """The type an op producing `dtype` computes in: float32 for the 16- and 32-bit
    floats, the type itself otherwise."""
    return F32 if dtype in HALF else dtype


def float_compute_type(dtype: DataType) -> DataType:
    """The type a floating-point function (exp, sigmoid, ...) of a `dtype` tensor
    computes in: as `compute_type` for floats; float64 for integers, as NumPy gives
    `np.exp(int64)` (the reference then truncates the result back)."""
    return compute_type(dtype) if dtype.is_float else F64


def round_float(value: float, dtype: DataType) -> float:
    """`value` rounded to `dtype` (bfloat16 through float32, as the reference does)."""
    if dtype is DataType.BFLOAT16:
        bits = float32_to_bfloat16(np.array([value], dtype=np.float32))
        return float(bfloat16_to_float32(bits)[0])
    if dtype is F64:
        return float(value)
    with np.errstate(over="ignore"):
        return float(dtype.numpy.type(value))


def wrap_int(value: int, dtype: DataType) -> int:
    """`value` wrapped to `dtype`'s width (two's complement; uint8 unsigned)."""
    bits = 8 * dtype.itemsize
    value &= (1 << bits) - 1
    if dtype is DataType.UINT8:
        return value
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def const(value: float | int | bool, dtype: DataType) -> Expr:
    """A constant of `dtype` holding `value` as the reference's `full` does: rounded for
    floats, a float converted to an integer by `float_to_int` (truncated, saturated,
    NaN 0), an integer wrapped, nonzero for bool."""
    if dtype is BOOL:
        return make_const(bool(value), dtype)
    if dtype.is_float:
        return FloatImm(round_float(float(value), dtype), dtype)
    if dtype.is_integer:
        if isinstance(value, float):
            value = int(float_to_int(value, dtype))
        return make_const(wrap_int(int(value), dtype), dtype)
    raise TypeError(f"no constant of type {dtype.value}")


def saturate(value: float, dtype: DataType) -> int:
    """An integer bound `int(value)` clamped to `dtype`'s range, for comparisons."""
    info = np.iinfo(dtype.numpy)
    return max(int(info.min), min(int(info.max), int(value)))


def intrinsic(name: str, *args: Expr, dtype: DataType | None = None) -> Call:
    """A call of one of the contract's intrinsics; the result has the first
    argument's dtype unless `dtype` says otherwise."""
    return Call(name, args, dtype or args[0].dtype, CallType.INTRINSIC)


def truthy(x: Expr) -> Expr:
    """`x` as bool, as NumPy's `astype(bool)`: nonzero, NaN included."""
    if x.dtype is BOOL:
        return x
    if x.dtype in HALF:
        x = Cast(F32, x)
    return NE(x, const(0, x.dtype))


def convert(x: Expr, target: DataType) -> Expr:
    """`x` converted to `target` with the reference's semantics. float16 and bfloat16
    convert only to and from float32; other types go through float32 on the way."""
    if x.dtype is target:
        return x
    if target is BOOL:
        return truthy(x)
    if x.dtype in HALF and target is not F32:
        x = Cast(F32, x)
    if target in HALF and x.dtype is not F32:
        x = Cast(F32, x)
    return x if x.dtype is target else Cast(target, x)


def widen(x: Expr) -> Expr:
    """An operand converted to the type its op computes in (float16 -> float32)."""
    return convert(x, compute_type(x.dtype))


def is_nan(x: Expr) -> Expr:
    return intrinsic("isnan", x, dtype=BOOL)


def negate(x: Expr) -> Expr:
    return Sub(const(0, x.dtype), x)


def _is_number(x: Expr) -> bool:
    """A constant that is not NaN: no NaN test needed on its side."""
    return not isinstance(x, FloatImm) or not np.isnan(x.value)


def nan_max(a: Expr, b: Expr) -> Expr:
    """NumPy's `maximum(a, b)`: NaN if either is NaN, b where they compare equal (the
    sign of a zero: relu6(-0.0) is +0.0, as Paddle's and NumPy's)."""
    if not a.dtype.is_float:
        return Max(a, b)
    if isinstance(b, FloatImm) and _is_number(b):
        return Select(LE(a, b), b, a)
    return Select(Or(LE(a, b), is_nan(b)), b, a)


def nan_min(a: Expr, b: Expr) -> Expr:
    """NumPy's `minimum(a, b)`: NaN if either is NaN, b where they compare equal."""
    if not a.dtype.is_float:
        return Min(a, b)
    if isinstance(b, FloatImm) and _is_number(b):
        return Select(GE(a, b), b, a)
    return Select(Or(GE(a, b), is_nan(b)), b, a)
