"""batch_norm and batch_norm_ (its in-place form) in inference.

Paddle 3.3.1's facts these follow (`BatchNormInferMeta` and the CPU kernel, probed with
the real thing): operands x, mean, variance, scale, bias (scale and bias optional, the
running statistics `builtin.parameter`s in a saved model); six results: out (x's type),
mean_out and variance_out (`[C]`, the statistics' dtype), saved_mean and saved_variance
(`[C]`), and reserve_space, declared `tensor<-1xu8>` even in a static program. The
channel axis is 1, or the last one for NHWC (a 2-D input is `[N, C]` either way).

Inference is `is_test` without `trainable_statistics`, or `use_global_stats`: out is
`(x - mean) / sqrt(variance + epsilon) * scale + bias` over the channel axis; mean_out
and variance_out are the running statistics passed through, saved_mean and
saved_variance zeros (what Paddle returns then), reserve_space empty. Its real type is
`tensor<0xu8>` (`computed_meta`), so a program with static feeds is static
(`has_dynamic_dims`), a specialised one holds no -1 dim and reserve_space needs no storage.
The decomposition makes the results after `out` only where something reads them (a
copy of each running statistic, zeros, an empty `full`), so in a model they cost nothing. Training
(batch statistics, running statistics updated) is refused with an UnsupportedOpError on
every target: the reference kernel raises it when it runs, the decomposition when the
program is compiled.

The reference kernel computes in float64 and rounds once. The compiled path is a
decomposition into broadcast elementwise pd_ops (the per-channel operands reshaped to
`[C, 1, ..., 1]` for channel-first layouts), computed in float32 for float16 / bfloat16,
so a batch norm and the activation after a conv fuse into one kernel.
"""

from __future__ import annotations

import numpy as np

from cinn_py.errors import UnsupportedOpError
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import BoolAttribute, FloatAttribute, StrAttribute
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import Emitter, compute_dtype, dtype_of, float_input
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type
from cinn_py.pir.value import Value
from cinn_py.reference_ops.context import KernelContext

CHANNEL_FIRST = ("NCHW", "NCDHW", "NCL", "AnyLayout")
CHANNEL_LAST = ("NHWC", "NDHWC", "NLC")

TRAINING = (
    "runs in training mode (is_test false, or trainable_statistics, and use_global_stats "
    "false: batch statistics and updated running statistics), which cinn_py does not "
    "support; only inference (is_test or use_global_stats true) is"
)


def is_inference(attrs: object) -> bool:
    """Paddle's `global_stats = (is_test && !trainable_statistics) || use_global_stats`."""
    get = attrs.attr  # type: ignore[attr-defined]
    return bool((get("is_test") and not get("trainable_statistics")) or get("use_global_stats"))


def channel_axis(data_format: str, rank: int) -> int:
    return rank - 1 if data_format in CHANNEL_LAST else 1


# -- infer_meta -------------------------------------------------------------------------------


def infer_batch_norm(ctx: InferContext) -> list[Type]:
    """BatchNormInferMeta: out like x; mean_out / variance_out / saved_* `[C]` in the
    statistics' dtype; reserve_space `tensor<-1xu8>`."""
    x = ctx.tensor("x")
    data_format = ctx.attr("data_format")
    if data_format not in CHANNEL_FIRST + CHANNEL_LAST:
        raise ctx.error(
            f"data_format must be one of {list(CHANNEL_FIRST + CHANNEL_LAST)}, got '{data_format}'"
        )
    if not 2 <= x.rank <= 5:
        raise ctx.error(f"x must have 2 to 5 dims, got {im.fmt(x.dims)}", operand="x")
    channels = x.dims[channel_axis(data_format, x.rank)]
    for name in ("mean", "variance", "scale", "bias"):
        if not ctx.has(name):
            if name in ("mean", "variance"):
                raise ctx.error("is missing", operand=name)
            continue
        im.check_vector(
            ctx, name, channels, f"x {im.fmt(x.dims)} ({data_format}) has {channels} channels"
        )
    mean, variance = ctx.tensor("mean"), ctx.tensor("variance")
    stats = (channels,)
    return [
        x,
        mean.with_dims(stats),
        variance.with_dims(stats),
        mean.with_dims(stats),
        variance.with_dims(stats),
        DenseTensorType.get(DataType.UINT8, (DYNAMIC,)),
    ]


def computed_batch_norm(ctx: InferContext) -> list[Type]:
    """What the kernel computes: reserve_space is empty (`tensor<0xu8>`), not -1."""
    types = infer_batch_norm(ctx)
    return [*types[:5], DenseTensorType.get(DataType.UINT8, (0,))]


# -- reference kernel -------------------------------------------------------------------------


def batch_norm(ctx: KernelContext) -> tuple[np.ndarray, ...]:
    if not is_inference(ctx):
        raise UnsupportedOpError(ctx.op.name, ctx.op.where(), TRAINING)
    x = ctx.tensor(0)
    axis = channel_axis(ctx.attr("data_format"), x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1

    def channel(index: int) -> np.ndarray | None:
        value = ctx.optional(index)
        return None if value is None else np.asarray(value, np.float64).reshape(shape)

    mean, variance = ctx.tensor(1), ctx.tensor(2)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (x.astype(np.float64) - channel(1)) / np.sqrt(channel(2) + ctx.attr("epsilon"))
    scale, bias = channel(3), channel(4)
    if scale is not None:
        out = out * scale
    if bias is not None:
        out = out + bias
    return (
        out,
        mean.copy(),
        variance.copy(),
        np.zeros_like(mean),
        np.zeros_like(variance),
        np.zeros((0,), np.uint8),
    )


# -- decomposition ----------------------------------------------------------------------------


def decompose_batch_norm(emit: Emitter, op: Operation) -> list[Value | None] | None:
    """(x - mean) * rsqrt(variance + epsilon) [* scale] [+ bias], the per-channel operands
    reshaped to broadcast over the channel axis; the other results only where read."""
    if not is_inference(emit):
        raise UnsupportedOpError(op.name, op.where(), TRAINING)
    x = float_input(op)
    if x is None:
        return None
    dtype = compute_dtype(x)
    rank = x.type.rank
    trailing = rank - 1 - channel_axis(str(emit.attr("data_format")), rank)

    def channel(index: int) -> Value | None:
        value = op.operand_value(index)
        if value is None:
            return None
        value = emit.cast(value, dtype)
        if trailing:
            value = emit.op("pd_op.reshape", value, None, shape=[-1] + [1] * trailing)
        return value

    eps = emit.const(float(emit.attr("epsilon")), dtype)
    inv_std = emit.op("pd_op.rsqrt", emit.op("pd_op.add", channel(2), eps))
    out = emit.op(
        "pd_op.multiply", emit.op("pd_op.subtract", emit.cast(x, dtype), channel(1)), inv_std
    )
    scale, bias = channel(3), channel(4)
    if scale is not None:
        out = emit.op("pd_op.multiply", out, scale)
    if bias is not None:
        out = emit.op("pd_op.add", out, bias)
    results: list[Value | None] = [emit.cast(out, dtype_of(op.result(0)))]
    for index in (1, 2):  # the running statistics, passed through (a copy: no alias)
        if emit.unused(op.result(index)):
            results.append(None)
        else:
            results.append(emit.op("pd_op.assign", op.operand_value(index)))
    for index in (3, 4):  # saved statistics: zeros in inference
        result = op.result(index)
        if emit.unused(result):
            results.append(None)
            continue
        stat = op.operand_value(index - 2)
        results.append(emit.op("pd_op.full_like", stat, None, value=0.0, dtype=dtype_of(result)))
    if emit.unused(op.result(5)):
        results.append(None)
    else:
        results.append(emit.op("pd_op.full", shape=[0], value=0.0, dtype=DataType.UINT8))
    return results


# -- entries ----------------------------------------------------------------------------------


def _batch_norm(name: str) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(
            operand("x"),
            operand("mean"),
            operand("variance"),
            operand("scale", optional=True),
            operand("bias", optional=True),
        ),
        attributes=(
            attr("is_test", BoolAttribute, False),
            attr("momentum", FloatAttribute, 0.9),
            attr("epsilon", FloatAttribute, 1e-5),
            attr("data_format", StrAttribute, "NCHW"),
            attr("use_global_stats", BoolAttribute, False),
            attr("trainable_statistics", BoolAttribute, False),
        ),
        results=(
            "out",
            "mean_out",
            "variance_out",
            "saved_mean",
            "saved_variance",
            "reserve_space",
        ),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=infer_batch_norm,
        computed_meta=computed_batch_norm,
        kernel=batch_norm,
        decompose=decompose_batch_norm,
        symbolic_meta=sym.batch_norm_shape,
    )


OPS = [_batch_norm("batch_norm"), _batch_norm("batch_norm_")]
