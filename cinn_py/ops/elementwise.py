"""Elementwise math, comparisons, logic, casts and select: declarations, reference
kernels and lowerings.

Declarations: binary ops broadcast NumPy-style with Paddle's compile-time -1 rules and
keep x's dtype (Paddle's Python API inserts casts before mixing dtypes); compares, logic
ops and the isnan family give bool.

Reference kernels: operands broadcast NumPy-style (Paddle's rule). Each op computes in
the compute dtype of its result (float16 and bfloat16 in float32) and the executor
rounds the result. Integer rules checked against Paddle's CPU kernels: `divide`
truncates toward zero; `floor_divide` floors; `remainder` takes the divisor's sign (C
`fmod`, then + y when the signs differ, so a zero keeps the dividend's sign); `pow`
truncates its float exponent for integer tensors; `round` rounds half to even (`rint`),
also with `decimals`.

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

Lowerings convert their operands to the compute type of the result
(`hlir/op_lowering/scalar.py`), build the reference kernel's formula from IR nodes and
intrinsics, and convert the result back; the IR's `Add` ... `Div` / `Mod` nodes mean
exactly the integer rules above, and codegen emits them so. Float `floor_divide` is
NumPy's own algorithm (fmod, then snap the quotient), which is not `floor(x / y)`:
1 // 0.1 is 9. Comparisons and logic ops read their operands as they are and compare in
the type NumPy promotes the pair to (float16 in float32, exactly).

Not mirrored: Paddle's float32 CPU `sqrt` gives NaN for +inf in the part of a tensor
its vectorized Eigen loop covers (a fast-math artifact that depends on the element's
position); here sqrt(+inf) is +inf, as IEEE and Paddle's GPU kernels give.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

import numpy as np

from cinn_py.hlir.op_lowering.compute import Compute, Indices, broadcast_to
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
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import BoolAttribute, DataTypeAttribute, FloatAttribute, Int32Attribute
from cinn_py.pir.dim_expr import dim_max
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import AttrSpec, InferContext, InferMeta, OpDef, attr, operand
from cinn_py.pir.passes.decompose import DecomposeRule
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import Type
from cinn_py.reference_ops.context import Kernel, KernelContext, trunc_divide

Unary = Callable[[np.ndarray], np.ndarray]
Binary = Callable[[np.ndarray, np.ndarray], np.ndarray]
ExprUnary = Callable[[Expr], Expr]
ExprBinary = Callable[[Expr, Expr], Expr]

# -- declarations -------------------------------------------------------------------------

_COMPLEX_TO_REAL = {DataType.COMPLEX64: DataType.FLOAT32, DataType.COMPLEX128: DataType.FLOAT64}


def _infer_abs(ctx: InferContext) -> list[Type]:
    """RealAndImagInferMeta: |complex| is real."""
    x = ctx.tensor("x")
    real = _COMPLEX_TO_REAL.get(x.data_type)
    return [x.with_dtype(real) if real else x]


def _infer_cast(ctx: InferContext) -> list[Type]:
    dtype = im.attr_dtype(ctx, "dtype")
    if dtype is DataType.UNDEFINED:
        raise ctx.error("cannot cast to Undefined")
    return [ctx.tensor("x").with_dtype(dtype)]


def _infer_where(ctx: InferContext) -> list[Type]:
    """WhereInferMeta: no broadcasting; condition, x and y have one shape."""
    cond, x, y = ctx.tensor("condition"), ctx.tensor("x"), ctx.tensor("y")
    im.check_same_dims(ctx, cond.dims, x.dims, "condition and x must have the same dims")
    im.check_same_dims(ctx, x.dims, y.dims, "x and y must have the same dims")
    return [x]


# -- reference kernels --------------------------------------------------------------------


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
    exponent = ctx.attr("y")
    with np.errstate(all="ignore"):
        if is_int(x):
            return power(x, int(exponent))
        return power(np.where(np.isinf(x) | (x == 0), np.abs(x), x), x.dtype.type(exponent))


def round_kernel(ctx: KernelContext) -> np.ndarray:
    """Half to even, as Paddle 3.3.1's CPU kernel rounds (0.5 -> 0, 2.5 -> 2), with
    `decimals` scaling by 10**decimals in the tensor's own dtype first."""
    x = ctx.tensor_in(0, ctx.compute_dtype())
    decimals = ctx.attr("decimals")
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
    bias = ctx.attr("bias")
    if is_int(x):
        factor, bias = int(factor), int(bias)
    with np.errstate(all="ignore"):
        if ctx.attr("bias_after_scale"):
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


# -- lowerings ----------------------------------------------------------------------------


def unary_compute(ctx: LowerContext, fn: ExprUnary, *, floating: bool = False) -> Compute:
    """The result of `fn` on operand 0, computed in the result's compute type (or, for a
    floating-point function of an integer tensor, in float64)."""
    x = ctx.input(0)
    dtype = ctx.out_dtype()
    ctype = float_compute_type(dtype) if floating else compute_type(dtype)
    return Compute(dtype, ctx.out_shape(), lambda idx: convert(fn(convert(x(idx), ctype)), dtype))


def unary_lowering(fn: ExprUnary, *, floating: bool = False) -> OpLowering:
    return OpLowering(lambda ctx: unary_compute(ctx, fn, floating=floating), numeric, symbolic=True)


def binary_lowering(fn: ExprBinary) -> OpLowering:
    """`fn` of operands 0 and 1, broadcast to the result, in its compute type."""

    def lower(ctx: LowerContext) -> Compute:
        dtype, shape = ctx.out_dtype(), ctx.out_shape()
        ctype = compute_type(dtype)
        x, y = broadcast_to(ctx.input(0), shape), broadcast_to(ctx.input(1), shape)

        def element(idx: Indices) -> Expr:
            return convert(fn(convert(x(idx), ctype), convert(y(idx), ctype)), dtype)

        return Compute(dtype, shape, element)

    return OpLowering(lower, numeric, symbolic=True)


def comparison_type(a: DataType, b: DataType) -> DataType:
    """The type NumPy compares an `a` and a `b` array in (bfloat16 is held as float32);
    float16 compares exactly in float32."""

    def held(d: DataType) -> np.dtype:
        return np.dtype(np.float32) if d is DataType.BFLOAT16 else d.numpy

    common = DataType.from_numpy(np.result_type(held(a), held(b)))
    return F32 if common in HALF else common


def predicate_lowering(fn: ExprBinary, *, logical: bool = False) -> OpLowering:
    """A comparison (operands in their common type) or a binary_lowering logic op (operands as
    bool); the result is bool."""

    def lower(ctx: LowerContext) -> Compute:
        shape = ctx.out_shape()
        x, y = broadcast_to(ctx.input(0), shape), broadcast_to(ctx.input(1), shape)
        ctype = BOOL if logical else comparison_type(x.dtype, y.dtype)

        def element(idx: Indices) -> Expr:
            return fn(convert(x(idx), ctype), convert(y(idx), ctype))

        return Compute(BOOL, shape, element)

    return OpLowering(lower, any_dtype, symbolic=True)


# ---- integer and float formulas ----------------------------------------------------------


def floor_divide_expr(a: Expr, b: Expr) -> Expr:
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


def remainder_expr(a: Expr, b: Expr) -> Expr:
    """C's fmod (or `%`), moved into the divisor's sign when the signs differ."""
    rest = Mod(a, b) if a.dtype.is_integer else intrinsic("fmod", a, b)
    differ = And(NE(rest, zero(rest)), NE(LT(rest, zero(rest)), LT(b, zero(b))))
    return Select(differ, Add(rest, b), rest)


def power_expr(a: Expr, b: Expr) -> Expr:
    """C's pow for floats; for integers the `pow` intrinsic on integers, the exact
    wrapping power_expr of the reference's `int_power` (a negative exponent: 1 / x**-y
    truncated, 0 for x = 0)."""
    return intrinsic("pow", a, b)


def zero(x: Expr) -> Expr:
    return const(0, x.dtype)


def _lower_sign(v: Expr) -> Expr:
    one, minus_one = const(1, v.dtype), const(-1, v.dtype)
    return Select(GT(v, zero(v)), one, Select(LT(v, zero(v)), minus_one, v))


def _float_only_expr(fn: ExprUnary) -> ExprUnary:
    """Integer tensors pass through (floor and ceil of an integer are itself)."""
    return lambda v: fn(v) if v.dtype.is_float else v


def _lower_intrinsic(name: str) -> ExprUnary:
    return lambda v: intrinsic(name, v)


# ---- ops with attributes --------------------------------------------------------------


def _lower_round(ctx: LowerContext) -> Compute:
    """Half to even (`rint`); `decimals` scales by 10**decimals in the compute type."""
    decimals = int(ctx.attr("decimals"))

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


def _lower_pow(ctx: LowerContext) -> Compute:
    """`pow` with the Scalar exponent `y`. Floats: C pow of |x| where x is infinite or
    zero (Paddle drops their sign). Integers truncate the exponent; small ones multiply
    out, others are the integer `pow` intrinsic (both exact and wrapping, as the
    reference's `int_power`)."""
    exponent = ctx.attr("y")

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
        return power_expr(v, const(e, v.dtype))

    return unary_compute(ctx, fn)


def _lower_scale(ctx: LowerContext) -> Compute:
    """`scale * x + bias`, or `(x + bias) * scale`; integers truncate both factors."""
    factor = ctx.scalar(1, "scale")
    bias = ctx.attr("bias")
    after = ctx.attr("bias_after_scale")

    def fn(v: Expr) -> Expr:
        f, b = const(_lower_int_if(factor, v), v.dtype), const(_lower_int_if(bias, v), v.dtype)
        return Add(Mul(v, f), b) if after else Mul(Add(v, b), f)

    return unary_compute(ctx, fn)


def _lower_int_if(value: float, v: Expr) -> float | int:
    return value if v.dtype.is_float else int(value)


def _lower_clip(ctx: LowerContext) -> Compute:
    """`minimum(maximum(x, min), max)`: NaN stays NaN; integers truncate the bounds."""
    low, high = ctx.scalar(1, "min"), ctx.scalar(2, "max")

    def fn(v: Expr) -> Expr:
        if v.dtype.is_float:
            lo, hi = const(low, v.dtype), const(high, v.dtype)
        else:
            lo, hi = const(saturate(low, v.dtype), v.dtype), const(saturate(high, v.dtype), v.dtype)
        return nan_min(nan_max(v, lo), hi)

    return unary_compute(ctx, fn)


def _lower_cast(ctx: LowerContext) -> Compute:
    x, dtype = ctx.input(0), ctx.out_dtype()
    return Compute(dtype, ctx.out_shape(), lambda idx: convert(x(idx), dtype))


def _lower_where(ctx: LowerContext) -> Compute:
    """`condition ? x : y`, each branch converted to the result's dtype."""
    shape, dtype = ctx.out_shape(), ctx.out_dtype()
    cond, x, y = (broadcast_to(ctx.input(i), shape) for i in range(3))

    def element(idx: Indices) -> Expr:
        return Select(truthy(cond(idx)), convert(x(idx), dtype), convert(y(idx), dtype))

    return Compute(dtype, shape, element)


def _lower_float_test(name: str, for_integers: bool) -> OpLowering:
    """isnan / isinf / isfinite: an intrinsic on floats (float16 widened exactly), a
    constant for integers and bools."""

    def lower(ctx: LowerContext) -> Compute:
        x = ctx.input(0)

        def element(idx: Indices) -> Expr:
            if not x.dtype.is_float:
                return const(for_integers, BOOL)
            return intrinsic(name, convert(x(idx), compute_type(x.dtype)), dtype=BOOL)

        return Compute(BOOL, ctx.out_shape(), element)

    return OpLowering(lower, any_dtype, symbolic=True)


def _lower_logical_not(ctx: LowerContext) -> Compute:
    x = ctx.input(0)
    return Compute(BOOL, ctx.out_shape(), lambda idx: Not(truthy(x(idx))))


# -- entries -------------------------------------------------------------------------------


def unary_op(
    name: str,
    kernel: Kernel,
    lowering: OpLowering,
    infer: InferMeta = im.unchanged,
    attributes: tuple[AttrSpec, ...] = (),
    decompose: DecomposeRule | None = None,
    symbolic_value: sym.ValueRule | None = None,
) -> OpDef:
    """The entry of a unary elementwise op `pd_op.<name>` of one tensor `x` (its result
    typed like x unless `infer` says otherwise)."""
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"),),
        attributes=attributes,
        pattern=OpPatternKind.ELEMENTWISE,
        infer_meta=infer,
        kernel=kernel,
        lowering=lowering,
        decompose=decompose,
        symbolic_value=symbolic_value,
    )


def _binary(
    name: str,
    kernel: Kernel,
    lowering: OpLowering,
    infer: InferMeta = im.elementwise_binary,
    symbolic_value: sym.ValueRule | None = None,
) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"), operand("y")),
        pattern=OpPatternKind.ELEMENTWISE,
        infer_meta=infer,
        kernel=kernel,
        lowering=lowering,
        symbolic_value=symbolic_value,
    )


def _float_function(name: str, fn: Unary) -> OpDef:
    """A float function of x (an intrinsic of the same name when lowered)."""
    return unary_op(name, unary(fn), unary_lowering(_lower_intrinsic(name), floating=True))


def _compare(name: str, fn: Binary, expr: ExprBinary, logical: bool = False) -> OpDef:
    return _binary(
        name, predicate(fn), predicate_lowering(expr, logical=logical), im.compare_binary
    )


OPS = [
    _float_function("exp", np.exp),
    _float_function("expm1", np.expm1),
    _float_function("log", np.log),
    _float_function("log1p", np.log1p),
    _float_function("log2", np.log2),
    _float_function("sqrt", np.sqrt),
    _float_function("rsqrt", rsqrt),
    _float_function("sin", np.sin),
    _float_function("cos", np.cos),
    _float_function("tan", np.tan),
    _float_function("tanh", np.tanh),
    _float_function("erf", erf),
    unary_op("sign", unary(np.sign), unary_lowering(_lower_sign)),
    unary_op(
        "floor",
        unary(_float_only(np.floor)),
        unary_lowering(_float_only_expr(_lower_intrinsic("floor"))),
    ),
    unary_op(
        "ceil",
        unary(_float_only(np.ceil)),
        unary_lowering(_float_only_expr(_lower_intrinsic("ceil"))),
    ),
    unary_op("square", unary(np.square), unary_lowering(lambda v: Mul(v, v))),
    unary_op("reciprocal", unary(reciprocal), unary_lowering(lambda v: Div(const(1, v.dtype), v))),
    unary_op("abs", unary(np.abs), unary_lowering(_lower_intrinsic("abs")), _infer_abs),
    unary_op(
        "round",
        round_kernel,
        OpLowering(_lower_round, numeric, symbolic=True),
        attributes=(attr("decimals", Int32Attribute, 0),),
    ),
    unary_op(
        "pow",
        pow_kernel,
        OpLowering(_lower_pow, numeric, symbolic=True),
        attributes=(attr("y", FloatAttribute, 1.0),),
    ),
    unary_op(
        "logical_not",
        unary_test(np.logical_not),
        OpLowering(_lower_logical_not, any_dtype, symbolic=True),
        im.to_bool,
    ),
    unary_op("isnan", unary_test(np.isnan), _lower_float_test("isnan", False), im.to_bool),
    unary_op("isinf", unary_test(np.isinf), _lower_float_test("isinf", False), im.to_bool),
    unary_op("isfinite", unary_test(np.isfinite), _lower_float_test("isfinite", True), im.to_bool),
    unary_op(
        "cast",
        cast,
        OpLowering(_lower_cast, any_dtype, symbolic=True),
        _infer_cast,
        (attr("dtype", DataTypeAttribute),),
        symbolic_value=sym.pass_through_value,
    ),
    OpDef(
        "pd_op.scale",
        operands=(
            operand("x"),
            operand("scale", mutable_attr="scale", mutable_kind=FloatAttribute),
        ),
        attributes=(
            attr("bias", FloatAttribute, 0.0),
            attr("bias_after_scale", BoolAttribute, True),
        ),
        pattern=OpPatternKind.ELEMENTWISE,
        infer_meta=im.unchanged,
        kernel=scale,
        lowering=OpLowering(_lower_scale, numeric, symbolic=True),
        symbolic_value=sym.scale_value,
    ),
    OpDef(
        "pd_op.clip",
        operands=(
            operand("x"),
            operand("min", mutable_attr="min", mutable_kind=FloatAttribute),
            operand("max", mutable_attr="max", mutable_kind=FloatAttribute),
        ),
        pattern=OpPatternKind.ELEMENTWISE,
        infer_meta=im.unchanged,
        kernel=clip,
        lowering=OpLowering(_lower_clip, numeric, symbolic=True),
    ),
    _binary(
        "add",
        binary(np.add),
        binary_lowering(Add),
        symbolic_value=sym.arithmetic_value(operator.add),
    ),
    _binary(
        "subtract",
        binary(np.subtract),
        binary_lowering(Sub),
        symbolic_value=sym.arithmetic_value(operator.sub),
    ),
    _binary(
        "multiply",
        binary(np.multiply),
        binary_lowering(Mul),
        symbolic_value=sym.arithmetic_value(operator.mul),
    ),
    _binary("divide", binary(divide), binary_lowering(Div)),
    # integers: x // 0 = 0, MIN // -1 = MIN
    _binary(
        "floor_divide",
        binary(np.floor_divide),
        binary_lowering(floor_divide_expr),
        symbolic_value=sym.arithmetic_value(operator.floordiv),
    ),
    _binary("remainder", binary(remainder), binary_lowering(remainder_expr)),
    _binary(
        "maximum",
        binary(np.maximum),
        binary_lowering(nan_max),
        symbolic_value=sym.arithmetic_value(dim_max),
    ),
    _binary("minimum", binary(np.minimum), binary_lowering(nan_min)),
    _binary("elementwise_pow", binary(power), binary_lowering(power_expr)),
    _compare("equal", np.equal, EQ),
    _compare("not_equal", np.not_equal, NE),
    _compare("less_than", np.less, LT),
    _compare("less_equal", np.less_equal, LE),
    _compare("greater_than", np.greater, GT),
    _compare("greater_equal", np.greater_equal, GE),
    _compare("logical_and", np.logical_and, And, logical=True),
    _compare("logical_or", np.logical_or, Or, logical=True),
    _compare("logical_xor", np.logical_xor, NE, logical=True),
    OpDef(
        "pd_op.where",
        operands=(operand("condition"), operand("x"), operand("y")),
        pattern=OpPatternKind.ELEMENTWISE,
        infer_meta=_infer_where,
        kernel=where,
        lowering=OpLowering(_lower_where, any_dtype, symbolic=True),
    ),
]
