"""Normalization over spatial dims: pd_op.group_norm and pd_op.instance_norm (inference).

Paddle 3.3.1 facts (probed): group_norm(x, scale?, bias?) {epsilon, groups, data_format}
has results y, mean, variance, the statistics shaped [N, groups] (the biased variance);
instance_norm(x, scale?, bias?) {epsilon} has results y, saved_mean, saved_variance,
both shaped [N * C], and saved_variance is 1 / sqrt(variance + epsilon), not the
variance. Statistics of float16 / bfloat16 input are float32 (as layer_norm's). The
channel dim is 1 (NCHW) or the last (NHWC, group_norm only); `groups` must divide it,
else a ShapeError, as in Paddle.

Compiled path: each decomposes, like layer_norm, into reductions and elementwise ops
that compile as generated row-reduction kernels: mean and mean of squares as sibling
reductions (variance = E[x^2] - E[x]^2, clamped at 0), then (x - mean) * rsqrt(var + eps)
* scale + bias. instance_norm reduces x's own spatial dims (keepdim), so its normalize
fuses with the reductions; group_norm reduces a reshape of x to [N, G, C/G * HW]
([N, HW, G, C/G] for NHWC), normalizes there and reshapes back. The decomposition needs
static channel and spatial dims (N may be -1); otherwise the op runs its reference
kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from cinn_py.errors import ShapeError, ShapeVerifyError
from cinn_py.ops.pool import keepdim_mean
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import DoubleAttribute, FloatAttribute, Int32Attribute, StrAttribute
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import Emitter, compute_dtype, dtype_of, float_input
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type
from cinn_py.pir.value import Value
from cinn_py.reference_ops.context import Kernel, KernelContext


def _accumulator(x: DenseTensorType) -> DataType:
    """Statistics of 16-bit floats are kept in float32."""
    return DataType.FLOAT32 if x.data_type in (DataType.FLOAT16, DataType.BFLOAT16) else x.data_type


def _shape_error(name: str, where: str, why: str) -> ShapeError:
    return ShapeVerifyError(name, why, where=where)


# -- declarations -------------------------------------------------------------------------


def _channel_dim(rank: int, data_format: str) -> int:
    return rank - 1 if data_format in ("NHWC", "NDHWC", "NLC") else 1


def _check_params(ctx: InferContext, channels: int) -> None:
    for name in ("scale", "bias"):
        if not ctx.has(name):
            continue
        param = ctx.tensor(name)
        count = im.product(param.dims)
        if DYNAMIC not in (count, channels) and count != channels:
            raise _shape_error(
                ctx.op_def.name,
                ctx.where,
                f"{name} has {count} elements for {channels} channels",
            )


def _infer_group_norm(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    name = ctx.op_def.name
    if x.rank < 2:
        raise _shape_error(name, ctx.where, f"x must have 2 or more dims, got {im.fmt(x.dims)}")
    groups = ctx.attr("groups")
    channels = x.dims[_channel_dim(x.rank, ctx.attr("data_format"))]
    if groups < 1:
        raise _shape_error(name, ctx.where, f"groups must be at least 1, got {groups}")
    if channels != DYNAMIC and (groups > channels or channels % groups):
        raise _shape_error(
            name,
            ctx.where,
            f"groups {groups} must divide the {channels} channels of x {im.fmt(x.dims)}",
        )
    _check_params(ctx, channels)
    stats = x.with_dims([x.dims[0], groups]).with_dtype(_accumulator(x))
    return [x, stats, stats]


def _infer_instance_norm(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    if x.rank < 2:
        raise _shape_error(
            ctx.op_def.name, ctx.where, f"x must have 2 or more dims, got {im.fmt(x.dims)}"
        )
    _check_params(ctx, x.dims[1])
    rows = DYNAMIC if DYNAMIC in x.dims[:2] else x.dims[0] * x.dims[1]
    stats = x.with_dims([rows]).with_dtype(_accumulator(x))
    return [x, stats, stats]


# -- reference kernels ----------------------------------------------------------------------


def _statistics(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and biased variance of each row (float64), NaN for empty rows."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = rows.sum(axis=-1, keepdims=True) / rows.shape[-1]
        variance = np.square(rows - mean).sum(axis=-1, keepdims=True) / rows.shape[-1]
    return mean, variance


def _per_channel(ctx: KernelContext, index: int, channels: int) -> np.ndarray | None:
    weight = ctx.optional(index)
    if weight is None:
        return None
    weight = np.asarray(weight, dtype=np.float64).reshape(-1)
    if weight.size != channels:
        raise ctx.shape_error(f"operand #{index} has {weight.size} values for {channels} channels")
    return weight


def _affine(ctx: KernelContext, y: np.ndarray, channel_dim: int) -> np.ndarray:
    """y * scale + bias, each one value per channel (optional)."""
    channels = y.shape[channel_dim]
    shape = [1] * y.ndim
    shape[channel_dim] = channels
    scale, bias = _per_channel(ctx, 1, channels), _per_channel(ctx, 2, channels)
    if scale is not None:
        y = y * scale.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


Statistics = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
"""Mean and biased variance of each row of a [..., n] array (keepdims)."""


def group_norm_with(statistics: Statistics) -> Kernel:
    """The group_norm kernel over `statistics` (the reference's exact two-pass ones, or,
    for the fuzzer's check, the one-pass float32 ones the compiled code computes)."""

    def kernel(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = ctx.tensor(0).astype(np.float64)
        groups = ctx.attr("groups")
        last = _channel_dim(x.ndim, ctx.attr("data_format")) != 1
        planes = np.moveaxis(x, -1, 1) if last else x
        n, channels = planes.shape[:2]
        if groups < 1 or channels % groups:
            raise ctx.shape_error(f"groups {groups} must divide the {channels} channels")
        rows = planes.reshape(n, groups, -1)
        mean, variance = statistics(rows)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = ((rows - mean) / np.sqrt(variance + ctx.attr("epsilon"))).reshape(planes.shape)
        y = _affine(ctx, y, 1)
        y = np.moveaxis(y, 1, -1) if last else y
        return y, mean.reshape(n, groups), variance.reshape(n, groups)

    return kernel


def instance_norm_with(statistics: Statistics) -> Kernel:
    """The instance_norm kernel over `statistics` (see `group_norm_with`)."""

    def kernel(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = ctx.tensor(0).astype(np.float64)
        rows = x.reshape(x.shape[0], x.shape[1], -1)
        mean, variance = statistics(rows)
        with np.errstate(invalid="ignore", divide="ignore"):
            inverse = 1 / np.sqrt(variance + ctx.attr("epsilon"))
            y = ((rows - mean) * inverse).reshape(x.shape)
        return _affine(ctx, y, 1), mean.reshape(-1), inverse.reshape(-1)

    return kernel


group_norm_kernel = group_norm_with(_statistics)
instance_norm_kernel = instance_norm_with(_statistics)


# -- decompositions ------------------------------------------------------------------------


def _moments(emit: Emitter, xc: Value, axes: list[int]) -> tuple[Value, Value]:
    """Keepdim mean and biased variance over `axes`, as layer_norm's decomposition: two
    sibling means (x and x * x), variance = E[x^2] - E[x]^2 clamped at 0."""
    dtype = dtype_of(xc)
    mean = keepdim_mean(emit, xc, axes)
    squares = keepdim_mean(emit, emit.op("pd_op.square", xc), axes)
    spread = emit.op("pd_op.subtract", squares, emit.op("pd_op.square", mean))
    return mean, emit.op("pd_op.maximum", spread, emit.const(0.0, dtype))


def _param(emit: Emitter, op: Operation, index: int, shape: list[int], dtype: DataType):
    weight = op.operand_value(index)
    if weight is None:
        return None
    return emit.cast(emit.op("pd_op.reshape", weight, None, shape=shape), dtype)


def _normalize(
    emit: Emitter, op: Operation, xc: Value, axes: list[int], param_shape: list[int]
) -> tuple[Value, Value, Value, Value]:
    """(y before the final reshape, mean, variance, rsqrt(variance + epsilon))."""
    dtype = dtype_of(xc)
    mean, variance = _moments(emit, xc, axes)
    shifted = emit.op("pd_op.add", variance, emit.const(emit.attr("epsilon"), dtype))
    inverse = emit.op("pd_op.rsqrt", shifted)
    y = emit.op("pd_op.multiply", emit.op("pd_op.subtract", xc, mean), inverse)
    scale = _param(emit, op, 1, param_shape, dtype)
    if scale is not None:
        y = emit.op("pd_op.multiply", y, scale)
    bias = _param(emit, op, 2, param_shape, dtype)
    if bias is not None:
        y = emit.op("pd_op.add", y, bias)
    return y, mean, variance, inverse


def _static_after_batch(x: Value) -> bool:
    dims = x.type.dims
    return len(dims) >= 2 and DYNAMIC not in dims[1:] and 0 not in dims


def _decompose_group_norm(emit: Emitter, op: Operation) -> list[Value] | None:
    x = float_input(op)
    if x is None or not _static_after_batch(x):
        return None
    dims = list(x.type.dims)
    groups = emit.attr("groups")
    last = _channel_dim(len(dims), emit.attr("data_format")) != 1
    channels = dims[-1] if last else dims[1]
    if groups < 1 or channels % groups:
        return None
    per_group = channels // groups
    spatial = math.prod(dims[1:-1] if last else dims[2:])
    xc = emit.cast(x, compute_dtype(x))
    if last:  # [N, HW, G, C/G]: reduce HW and C/G
        grouped = emit.op("pd_op.reshape", xc, None, shape=[0, spatial, groups, per_group])
        axes, param_shape = [1, 3], [groups, per_group]
    else:  # [N, G, C/G, HW]
        grouped = emit.op("pd_op.reshape", xc, None, shape=[0, groups, per_group, spatial])
        axes, param_shape = [2, 3], [groups, per_group, 1]
    y, mean, variance, _ = _normalize(emit, op, grouped, axes, param_shape)
    out = emit.op("pd_op.reshape", y, None, shape=[0, *dims[1:]])
    stats = dtype_of(op.result(1))
    return [
        emit.cast(out, dtype_of(op.result(0))),
        emit.cast(emit.op("pd_op.reshape", mean, None, shape=[0, groups]), stats),
        emit.cast(emit.op("pd_op.reshape", variance, None, shape=[0, groups]), stats),
    ]


def _decompose_instance_norm(emit: Emitter, op: Operation) -> list[Value] | None:
    x = float_input(op)
    if x is None or not _static_after_batch(x) or x.type.rank < 3:
        return None
    rank = x.type.rank
    xc = emit.cast(x, compute_dtype(x))
    param_shape = [x.type.dims[1]] + [1] * (rank - 2)
    y, mean, _, inverse = _normalize(emit, op, xc, list(range(2, rank)), param_shape)
    stats = dtype_of(op.result(1))
    return [
        emit.cast(y, dtype_of(op.result(0))),
        emit.cast(emit.op("pd_op.reshape", mean, None, shape=[-1]), stats),
        emit.cast(emit.op("pd_op.reshape", inverse, None, shape=[-1]), stats),
    ]


# -- entries -------------------------------------------------------------------------------

_OPERANDS = (operand("x"), operand("scale", optional=True), operand("bias", optional=True))

OPS = [
    OpDef(
        "pd_op.group_norm",
        operands=_OPERANDS,
        attributes=(
            attr("epsilon", DoubleAttribute, 1e-5),
            attr("groups", Int32Attribute, -1),
            attr("data_format", StrAttribute, "NCHW"),
        ),
        results=("y", "mean", "variance"),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_group_norm,
        kernel=group_norm_kernel,
        decompose=_decompose_group_norm,
        symbolic_meta=sym.stats_shape,
    ),
    OpDef(
        "pd_op.instance_norm",
        operands=_OPERANDS,
        attributes=(attr("epsilon", FloatAttribute, 1e-5),),
        results=("y", "saved_mean", "saved_variance"),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_instance_norm,
        kernel=instance_norm_kernel,
        decompose=_decompose_instance_norm,
        symbolic_meta=sym.stats_shape,
    ),
]
