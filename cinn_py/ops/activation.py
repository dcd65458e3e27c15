"""Activations: relu, relu6, sigmoid, silu, hardswish, gelu, leaky_relu, hardsigmoid.

Each entry holds the op's declaration, its reference kernel (Paddle's functors, so NaN
and infinities come out as Paddle's do: relu(NaN) = 0 (`x > 0 ? x : 0`), relu6 and
hardsigmoid keep NaN, silu(-inf) = hardswish(-inf) = NaN (inf * 0)), its lowering (the
same formulas as IR nodes: relu is a Max node, which is `a > b ? a : b`, so NaN gives 0;
relu6 and hardsigmoid clip with the NaN-keeping `nan_min` / `nan_max`) and, for the
composites, the decomposition into primitive pd_ops that fuse with their neighbours.

The floating-point ones compute in float32 for float16/bfloat16/float32 and in float64
for integer tensors, truncating back as the reference does; the reference computes gelu
in float64 (erf needs it) and rounds once, within float32 tolerance of the lowering.
Paddle 3.3.1's relu6 and hardswish take no attributes; hardsigmoid's op defaults are
slope 0.2, offset 0.5 (the Python API passes 1/6).
"""

from __future__ import annotations

import math

import numpy as np

from cinn_py.hlir.op_lowering.compute import Compute
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering, numeric
from cinn_py.hlir.op_lowering.scalar import const, intrinsic, nan_max, nan_min, negate
from cinn_py.ir.expr import GT, Add, Div, Expr, Max, Mul, Select
from cinn_py.ops.elementwise import erf, unary, unary_compute, unary_lowering, unary_op
from cinn_py.pir.attributes import BoolAttribute, DoubleAttribute, FloatAttribute
from cinn_py.pir.op_def import attr
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import Emitter, computed_input, dtype_of
from cinn_py.pir.value import Value
from cinn_py.reference_ops.context import KernelContext

# -- reference kernels --------------------------------------------------------------------


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


def gelu_kernel(ctx: KernelContext) -> np.ndarray:
    """`approximate=False`: 0.5 x (1 + erf(x / sqrt 2)); True: the tanh form. Computed
    in float64 (erf needs it) and rounded once."""
    x = _in(ctx).astype(np.float64)
    with np.errstate(all="ignore"):
        if ctx.attr("approximate"):
            return gelu_tanh(x)
        return 0.5 * x * (1 + erf(x * math.sqrt(0.5)))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """gelu's tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in x's dtype:
    what `gelu {approximate: true}` and fused_gemm_epilogue's "gelu" compute."""
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
    return 0.5 * x * (1 + np.tanh(inner))


def leaky_relu_kernel(ctx: KernelContext) -> np.ndarray:
    x = _in(ctx)
    return np.where(x > 0, x, x * ctx.attr("negative_slope"))


def hardsigmoid_kernel(ctx: KernelContext) -> np.ndarray:
    """clip(slope x + offset, 0, 1); Paddle's op defaults are slope 0.2, offset 0.5
    (the Python API passes 1/6)."""
    x = _in(ctx)
    y = x * ctx.attr("slope") + ctx.attr("offset")
    return np.minimum(np.maximum(y, 0), 1)


# -- lowerings ----------------------------------------------------------------------------


def _lower_relu(v: Expr) -> Expr:
    """`x > 0 ? x : 0` is Max(x, 0) exactly (a Max node is `a > b ? a : b`: NaN gives
    0), and reads x once, which keeps inlined consumers small."""
    return Max(v, const(0, v.dtype))


def _lower_relu6(v: Expr) -> Expr:
    return nan_min(nan_max(v, const(0, v.dtype)), const(6, v.dtype))


def _lower_sigmoid(v: Expr) -> Expr:
    one = const(1, v.dtype)
    return Div(one, Add(one, intrinsic("exp", negate(v))))


def _lower_silu(v: Expr) -> Expr:
    return Div(v, Add(const(1, v.dtype), intrinsic("exp", negate(v))))


def _lower_hardswish(v: Expr) -> Expr:
    """Paddle's fixed threshold 6, scale 6, offset 3: x * min(max(x + 3, 0), 6) / 6."""
    clipped = nan_min(nan_max(Add(v, const(3, v.dtype)), const(0, v.dtype)), const(6, v.dtype))
    return Div(Mul(v, clipped), const(6, v.dtype))


def _lower_gelu(ctx: LowerContext) -> Compute:
    """`approximate=False`: 0.5 x (1 + erf(x / sqrt 2)); True: the tanh form."""
    approximate = ctx.attr("approximate")

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


def _lower_leaky_relu(ctx: LowerContext) -> Compute:
    slope = ctx.attr("negative_slope")

    def fn(v: Expr) -> Expr:
        return Select(GT(v, const(0, v.dtype)), v, Mul(v, const(slope, v.dtype)))

    return unary_compute(ctx, fn, floating=True)


def _lower_hardsigmoid(ctx: LowerContext) -> Compute:
    """clip(slope x + offset, 0, 1), NaN kept; Paddle's op defaults are 0.2 and 0.5."""
    slope, offset = ctx.attr("slope"), ctx.attr("offset")

    def fn(v: Expr) -> Expr:
        y = Add(Mul(v, const(slope, v.dtype)), const(offset, v.dtype))
        return nan_min(nan_max(y, const(0, v.dtype)), const(1, v.dtype))

    return unary_compute(ctx, fn, floating=True)


# -- decompositions -------------------------------------------------------------------------


def _decompose_gelu(emit: Emitter, op: Operation) -> list[Value] | None:
    """Exact: x/2 (1 + erf(x / sqrt 2)); approximate: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    operand = computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    if emit.attr("approximate"):
        cube = emit.op("pd_op.multiply", emit.op("pd_op.multiply", xc, xc), xc)
        inner = emit.op(
            "pd_op.add", xc, emit.op("pd_op.multiply", cube, emit.const(0.044715, dtype))
        )
        scaled = emit.op("pd_op.multiply", inner, emit.const(math.sqrt(2 / math.pi), dtype))
        curve = emit.op("pd_op.tanh", scaled)
    else:
        scaled = emit.op("pd_op.multiply", xc, emit.const(math.sqrt(0.5), dtype))
        curve = emit.op("pd_op.erf", scaled)
    one_plus = emit.op("pd_op.add", curve, emit.const(1.0, dtype))
    # (x / 2) (1 + curve), halved first: x (1 + curve) overflows to inf for x past half the
    # type's largest value (gelu(3.3e38) is 3.3e38; found by the fuzzer)
    half_x = emit.op("pd_op.multiply", xc, emit.const(0.5, dtype))
    out = emit.op("pd_op.multiply", half_x, one_plus)
    return [emit.cast(out, dtype_of(op.result()))]


def _decompose_silu(emit: Emitter, op: Operation) -> list[Value] | None:
    """x / (1 + exp(-x)), as the reference writes it (silu(-inf) is NaN)."""
    operand = computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    e = emit.op("pd_op.exp", emit.op("pd_op.multiply", xc, emit.const(-1.0, dtype)))
    out = emit.op("pd_op.divide", xc, emit.op("pd_op.add", e, emit.const(1.0, dtype)))
    return [emit.cast(out, dtype_of(op.result()))]


def _decompose_hardswish(emit: Emitter, op: Operation) -> list[Value] | None:
    """x * min(max(x + 3, 0), 6) / 6."""
    operand = computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    six = emit.const(6.0, dtype)
    shifted = emit.op("pd_op.add", xc, emit.const(3.0, dtype))
    gate = emit.op("pd_op.minimum", emit.op("pd_op.maximum", shifted, emit.const(0.0, dtype)), six)
    out = emit.op("pd_op.divide", emit.op("pd_op.multiply", xc, gate), six)
    return [emit.cast(out, dtype_of(op.result()))]


def _decompose_hardsigmoid(emit: Emitter, op: Operation) -> list[Value] | None:
    """min(max(x * slope + offset, 0), 1)."""
    operand = computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    line = emit.op("pd_op.multiply", xc, emit.const(emit.attr("slope"), dtype))
    line = emit.op("pd_op.add", line, emit.const(emit.attr("offset"), dtype))
    low = emit.op("pd_op.maximum", line, emit.const(0.0, dtype))
    out = emit.op("pd_op.minimum", low, emit.const(1.0, dtype))
    return [emit.cast(out, dtype_of(op.result()))]


# -- entries -------------------------------------------------------------------------------


OPS = [
    unary_op("relu", unary(relu), unary_lowering(_lower_relu)),
    unary_op("relu6", unary(relu6), unary_lowering(_lower_relu6)),
    unary_op("sigmoid", unary(sigmoid), unary_lowering(_lower_sigmoid, floating=True)),
    unary_op(
        "silu",
        unary(silu),
        unary_lowering(_lower_silu, floating=True),
        decompose=_decompose_silu,
    ),
    unary_op(
        "hardswish",
        unary(hardswish),
        unary_lowering(_lower_hardswish, floating=True),
        decompose=_decompose_hardswish,
    ),
    unary_op(
        "gelu",
        gelu_kernel,
        OpLowering(_lower_gelu, numeric, symbolic=True),
        attributes=(attr("approximate", BoolAttribute, False),),
        decompose=_decompose_gelu,
    ),
    unary_op(
        "leaky_relu",
        leaky_relu_kernel,
        OpLowering(_lower_leaky_relu, numeric, symbolic=True),
        attributes=(attr("negative_slope", DoubleAttribute, 0.02),),
    ),
    unary_op(
        "hardsigmoid",
        hardsigmoid_kernel,
        OpLowering(_lower_hardsigmoid, numeric, symbolic=True),
        attributes=(attr("slope", FloatAttribute, 0.2), attr("offset", FloatAttribute, 0.5)),
        decompose=_decompose_hardsigmoid,
    ),
]
