"""Fused ops Paddle substitutes for what users write: swiglu and fused_rms_norm_quant.

`paddle.incubate.nn.functional.swiglu(x, y=None)` prints `pd_op.swiglu (x, y?)`:
silu(x) * y, and with y absent x split in halves along its last axis, silu of the first
half times the second. `paddle.incubate.nn.functional.fused_rms_norm` prints
`pd_op.fused_rms_norm_quant (x, bias?, residual?, norm_weight, norm_bias?)` with three
results (out, residual_out, inv_var). Paddle 3.3.1's kernel, probed on CPU: with a
residual, residual_out = x + residual + bias and that sum is what is normalized; without
one, `bias` is ignored and residual_out is typed `<<NULL TYPE>>` (an unmade result);
out = r * rsqrt(mean(r^2) + epsilon) * norm_weight + norm_bias over the dims from
`begin_norm_axis` on, norm_weight and norm_bias holding their product (flat, `[35]` for
`[7, 5]`); inv_var (float32, the leading dims) is that rsqrt. `quant_scale > 0` asks for
an int8 output, which cinn_py does not support (UnsupportedOpError).

Both decompose into primitives that fuse with their neighbours (cast in, compute in
float32 for 16-bit floats, cast out, as the reference kernels compute).
"""

from __future__ import annotations

import math

import numpy as np

from cinn_py.errors import UnsupportedOpError
from cinn_py.ops.activation import silu
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import FloatAttribute, Int32Attribute
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import Emitter, compute_dtype, dtype_of, element_count
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import DYNAMIC, NullType, Type
from cinn_py.pir.value import Value
from cinn_py.reference_ops.context import KernelContext

# -- swiglu ------------------------------------------------------------------------------


def _infer_swiglu(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    if ctx.has("y"):
        im.check_same_dims(ctx, x.dims, ctx.tensor("y").dims, "x and y")
        return [x]
    if x.rank == 0:
        raise ctx.error("needs x of rank >= 1 to split in halves", operand="x")
    last = x.dims[-1]
    if last != DYNAMIC and last % 2:
        raise ctx.error(
            f"without y, splits x in halves along its last axis, which has odd size {last}",
            operand="x",
        )
    return [x.with_dims(x.dims[:-1] + (DYNAMIC if last == DYNAMIC else last // 2,))]


def _swiglu_kernel(ctx: KernelContext) -> np.ndarray:
    x = ctx.tensor_in(0, ctx.compute_dtype())
    y = ctx.optional(1)
    if y is None:
        half = x.shape[-1] // 2
        x, y = x[..., :half], x[..., half:]
    else:
        y = y.astype(x.dtype, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        return silu(x) * y


def _decompose_swiglu(emit: Emitter, op: Operation) -> list[Value | None] | None:
    """silu(a) * b as exp / add / divide / multiply; a and b two slices of x without y."""
    x, y = op.operand_value(0), op.operand_value(1)
    if not x.type.data_type.is_float:
        return None
    dtype = compute_dtype(x)
    a = emit.cast(x, dtype)
    if y is None:
        last = x.type.dims[-1]
        if last == DYNAMIC:
            return None
        axis, half = x.type.rank - 1, last // 2
        b = emit.op("pd_op.slice", a, None, None, axes=[axis], starts=[half], ends=[last])
        a = emit.op("pd_op.slice", a, None, None, axes=[axis], starts=[0], ends=[half])
    else:
        b = emit.cast(y, dtype)
    e = emit.op("pd_op.exp", emit.op("pd_op.multiply", a, emit.const(-1.0, dtype)))
    gate = emit.op("pd_op.divide", a, emit.op("pd_op.add", e, emit.const(1.0, dtype)))
    return [emit.cast(emit.op("pd_op.multiply", gate, b), dtype_of(op.result()))]


# -- fused_rms_norm_quant ----------------------------------------------------------------------


def _begin(ctx: InferContext | KernelContext, rank: int) -> int:
    begin = ctx.attr("begin_norm_axis")
    if not -rank <= begin < max(rank, 1):
        raise ctx.error(f"begin_norm_axis {begin} is out of range for a rank-{rank} x")
    return begin % rank if rank else 0


def _infer_fused_rms_norm(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    begin = _begin(ctx, x.rank)
    cols = im.product(x.dims[begin:])
    for name in ("norm_weight", "norm_bias", "bias"):
        if not ctx.has(name):
            continue
        size = im.product(ctx.tensor(name).dims)
        if DYNAMIC not in (size, cols) and size != cols:
            raise ctx.error(
                f"has {size} elements, but the normalized dims {im.fmt(x.dims[begin:])} "
                f"hold {cols}",
                operand=name,
            )
    if ctx.has("residual"):
        im.check_same_dims(ctx, x.dims, ctx.tensor("residual").dims, "x and residual")
    quantized = ctx.attr("quant_scale") > 0
    out = x.with_dtype(DataType.INT8) if quantized else x
    residual_out = x if ctx.has("residual") else NullType.get()
    inv_var = im.tensor(ctx, DataType.FLOAT32, x.dims[:begin])
    return [out, residual_out, inv_var]


def _quantized(op: Operation) -> UnsupportedOpError:
    return UnsupportedOpError(
        op.name,
        op.where(),
        f"quantizes its output to int8 (quant_scale {op.attr('quant_scale')} > 0), "
        "which cinn_py does not support",
    )


def _fused_rms_norm_kernel(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Statistics in float64, rounded once; residual_out is None without a residual."""
    if ctx.attr("quant_scale") > 0:
        raise _quantized(ctx.op)
    x = ctx.tensor(0)
    begin = _begin(ctx, x.ndim)
    rows = x.reshape(math.prod(x.shape[:begin]), math.prod(x.shape[begin:])).astype(
        ctx.compute_dtype()
    )
    bias, residual, norm_bias = ctx.optional(1), ctx.optional(2), ctx.optional(4)
    residual_out = None
    if residual is not None:
        rows = rows + residual.reshape(rows.shape).astype(rows.dtype)
        if bias is not None:
            rows = rows + bias.reshape(-1).astype(rows.dtype)
        residual_out = rows.reshape(x.shape)
    wide = rows.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):  # empty rows: NaN statistics
        inv_var = 1 / np.sqrt(np.mean(np.square(wide), axis=1, keepdims=True) + ctx.attr("epsilon"))
    out = wide * inv_var * ctx.tensor(3).reshape(-1)
    if norm_bias is not None:
        out = out + norm_bias.reshape(-1)
    return out.reshape(x.shape), residual_out, inv_var.reshape(x.shape[:begin])


def _per_column(emit: Emitter, weight: Value, dims: tuple[int, ...], dtype: DataType) -> Value:
    """A flat per-element weight (or bias) shaped like the normalized dims, in `dtype`."""
    if weight.type.dims != dims:
        weight = emit.op("pd_op.reshape", weight, None, shape=list(dims))
    return emit.cast(weight, dtype)


def _decompose_fused_rms_norm(emit: Emitter, op: Operation) -> list[Value | None] | None:
    """The residual sum first (when given), then rms_norm's primitives (square, mean,
    rsqrt, multiply) and the affine norm_weight / norm_bias."""
    if emit.attr("quant_scale") > 0:
        raise _quantized(op)
    x = op.operand_value(0)
    if not x.type.data_type.is_float:
        return None
    dims = x.type.dims
    begin = emit.attr("begin_norm_axis") % max(len(dims), 1)
    norm_dims = dims[begin:]
    count = element_count(norm_dims)
    if count is None:
        return None
    dtype = compute_dtype(x)
    xc = emit.cast(x, dtype)
    bias, residual, weight, norm_bias = (op.operand_value(i) for i in range(1, 5))
    residual_out = None
    if residual is not None:
        xc = emit.op("pd_op.add", xc, emit.cast(residual, dtype))
        if bias is not None:
            xc = emit.op("pd_op.add", xc, _per_column(emit, bias, norm_dims, dtype))
        residual_out = emit.cast(xc, dtype_of(op.result(1)))
    axes = list(range(begin, len(dims)))
    mean_square = emit.mean(emit.op("pd_op.square", xc), axes, count)
    shifted = emit.op("pd_op.add", mean_square, emit.const(emit.attr("epsilon"), dtype))
    inv_var = emit.op("pd_op.rsqrt", shifted)
    out = emit.op(
        "pd_op.multiply",
        emit.op("pd_op.multiply", xc, inv_var),
        _per_column(emit, weight, norm_dims, dtype),
    )
    if norm_bias is not None:
        out = emit.op("pd_op.add", out, _per_column(emit, norm_bias, norm_dims, dtype))
    # The kept dims as they are where known (a 0 in reshape's shape copies the input's
    # dim, except for an input with no elements, where Paddle reads it as a 0 dim: an
    # empty x would give [0, 0, 0] for [0, 3, 256]); a -1 dim is copied.
    kept_dims = [0 if d == DYNAMIC else d for d in dims[:begin]]
    kept = emit.op("pd_op.reshape", inv_var, None, shape=kept_dims)
    return [
        emit.cast(out, dtype_of(op.result(0))),
        residual_out,
        emit.cast(kept, dtype_of(op.result(2))),
    ]


OPS = [
    OpDef(
        "pd_op.swiglu",
        operands=(operand("x"), operand("y", optional=True)),
        pattern=OpPatternKind.ELEMENTWISE,
        infer_meta=_infer_swiglu,
        kernel=_swiglu_kernel,
        symbolic_meta=sym.swiglu_shape,
        decompose=_decompose_swiglu,
    ),
    OpDef(
        "pd_op.fused_rms_norm_quant",
        operands=(
            operand("x"),
            operand("bias", optional=True),
            operand("residual", optional=True),
            operand("norm_weight"),
            operand("norm_bias", optional=True),
        ),
        attributes=(
            attr("epsilon", FloatAttribute),
            attr("begin_norm_axis", Int32Attribute),
            attr("quant_scale", FloatAttribute, -1.0),
            attr("quant_round_type", Int32Attribute, 0),
            attr("quant_max_bound", FloatAttribute, 0.0),
            attr("quant_min_bound", FloatAttribute, 0.0),
        ),
        results=("out", "residual_out", "inv_var"),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_fused_rms_norm,
        kernel=_fused_rms_norm_kernel,
        decompose=_decompose_fused_rms_norm,
        symbolic_meta=sym.norm_shape,
    ),
]
