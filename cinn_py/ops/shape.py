"""Shapes and the tensors made from them: shape, shape64, full_with_tensor, arange,
expand_as.

`paddle.shape(x)` / `x.shape[i]` on a -1 dim print `pd_op.shape64` (int64; `pd_op.shape`
is its int32 twin), sliced to 0-D values and stacked into the shape operands of
expand, reshape, full_with_tensor and arange. Once the feeds' shapes are known,
`specialize_shapes` evaluates those chains to constants (the shape ops carry
`Trait.SHAPE_ONLY`: they read no data) and the consumers' shapes become static; the
shape ops' own lowering (a select over the static dims) is only for a program that
keeps one.

arange follows Paddle 3.3.1's CPU kernel: the bounds are first converted to the
result's dtype (a float bound of an integer arange truncates), the length is
`ceil(|(end - start) / step|)` computed in that dtype (integers:
`(|end - start| + |step| - 1) / |step|`), a step of 0 is an error and a step of the
wrong sign gives an empty tensor (Paddle 3.3.1 returns one; the length is then 0). The
values accumulate `value += step` in the result's dtype, as Paddle's CPU loop does; the
lowering computes `start + i * step` (Paddle's GPU formula), within float tolerance of it.

full_with_tensor's value is a tensor operand (`tensor<1xf32>` whatever the dtype),
converted to the result's dtype as a cast does; a constant one is a `full`, which fusion
copies into the kernel.
expand_as broadcasts x to y's shape (y's data is never read), else to `target_shape`.
"""

from __future__ import annotations

import math

import numpy as np

from cinn_py.hlir.op_lowering.compute import Compute, Indices, broadcast_to
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering, any_dtype, numeric
from cinn_py.hlir.op_lowering.scalar import const, convert
from cinn_py.ir.expr import EQ, Add, Expr, IntImm, Mul, Select
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import (
    DataTypeAttribute,
    DoubleAttribute,
    Int64Attribute,
    IntArrayAttribute,
    PlaceAttribute,
)
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import ArrayOf, InferContext, OpDef, attr, operand
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import DYNAMIC, Type
from cinn_py.reference_ops.context import KernelContext, storage_dtype

# -- shape, shape64 -----------------------------------------------------------------------


def _infer_shape(dtype: DataType):
    def infer(ctx: InferContext) -> list[Type]:
        return [im.tensor(ctx, dtype, [ctx.tensor("input").rank])]

    return infer


def shape_kernel(ctx: KernelContext) -> np.ndarray:
    return np.array(ctx.tensor(0).shape, dtype=np.int64)


def _lower_shape(ctx: LowerContext) -> Compute:
    """The input's static dims as a 1-D tensor: a select on the index."""
    dims = ctx.op.operand_value(0).type.dims
    if DYNAMIC in dims:
        raise ctx.error(f"needs static input dims, got {im.fmt(dims)}")
    dtype = ctx.out_dtype()

    def element(idx: Indices) -> Expr:
        (i,) = idx
        result = const(dims[-1], dtype)
        for position in range(len(dims) - 2, -1, -1):
            result = Select(EQ(i, IntImm(position, i.dtype)), const(dims[position], dtype), result)
        return result

    return Compute(dtype, ctx.out_shape(), element)


def _shape_op(name: str, dtype: DataType) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("input"),),
        pattern=OpPatternKind.NON_FUSIBLE,
        traits=frozenset({Trait.SHAPE_ONLY}),
        infer_meta=_infer_shape(dtype),
        kernel=shape_kernel,
        symbolic_meta=sym.rank_shape,
        lowering=OpLowering(_lower_shape),
    )


# -- full_with_tensor ---------------------------------------------------------------------


def _infer_full_with_tensor(ctx: InferContext) -> list[Type]:
    """FullWithTensorInferMeta: dims from the shape operand (-1 where computed)."""
    shape = im.int_array(ctx, "shape")
    for d in shape:
        if d is not None and d < 0:
            raise ctx.error(f"shape {im.fmt(shape)} has a negative size {d}")
    dims = [DYNAMIC if d is None else d for d in shape]
    return [im.tensor(ctx, im.attr_dtype(ctx, "dtype"), dims)]


def full_with_tensor_kernel(ctx: KernelContext) -> np.ndarray:
    value = ctx.tensor(0).reshape(-1)[0]
    shape = ctx.int_list(1, "shape")
    if any(d < 0 for d in shape):
        raise ctx.shape_error(f"shape {shape} has a negative size")
    return np.full(shape, value)


def _lower_full_with_tensor(ctx: LowerContext) -> Compute:
    dtype = ctx.out_dtype()
    value = ctx.input(0)
    zeros = [IntImm(0, ctx.index_dtype)] * value.rank
    return Compute(dtype, ctx.out_shape(), lambda idx: convert(value(zeros), dtype))


# -- arange -------------------------------------------------------------------------------


def _bound(value: float, dtype: DataType) -> float | int:
    """A bound as Paddle's kernel holds it: converted to the result's dtype."""
    if dtype.is_integer:
        return int(math.trunc(value))
    return float(np.asarray(value, dtype=storage_dtype(dtype)))


def arange_length(start: float, end: float, step: float, dtype: DataType) -> int | None:
    """Paddle's GetSize in the result's dtype; None for a step of 0."""
    start, end, step = (_bound(v, dtype) for v in (start, end, step))
    if step == 0:
        return None
    if (start < end and step < 0) or (start > end and step > 0):
        return 0
    if dtype.is_integer:
        return (abs(end - start) + abs(step) - 1) // abs(step)
    held = storage_dtype(dtype).type
    with np.errstate(all="ignore"):
        return int(math.ceil(abs(float(held(held(end) - held(start)) / held(step)))))


def _infer_arange(ctx: InferContext) -> list[Type]:
    dtype = im.attr_dtype(ctx, "dtype")
    bounds = [im.scalar(ctx, key) for key in ("start", "end", "step")]
    if None in bounds:
        return [im.tensor(ctx, dtype, [DYNAMIC])]
    start, end, step = (float(b) for b in bounds)
    if not all(math.isfinite(b) for b in (start, end, step)):
        raise ctx.error(f"start {start}, end {end} and step {step} must be finite")
    length = arange_length(start, end, step, dtype)
    if length is None:
        raise ctx.error(f"the step must not be 0 (start {start}, end {end})", operand="step")
    return [im.tensor(ctx, dtype, [length])]


def _arange_bounds(ctx: KernelContext | LowerContext) -> tuple[float, float, float]:
    return tuple(float(ctx.scalar(i, name)) for i, name in enumerate(("start", "end", "step")))


def arange_kernel(ctx: KernelContext) -> np.ndarray:
    """Paddle's CPU loop: `value += step` in the result's dtype."""
    dtype = ctx.out_dtype()
    start, end, step = _arange_bounds(ctx)
    length = arange_length(start, end, step, dtype)
    if length is None:
        raise ctx.shape_error(f"the step must not be 0 (start {start}, end {end})")
    held = np.dtype(np.int64) if dtype.is_integer else storage_dtype(dtype)
    first, delta = (np.asarray(_bound(v, dtype), dtype=held) for v in (start, step))
    if dtype.is_integer:
        return first + delta * np.arange(length, dtype=np.int64)
    out = np.empty(length, dtype=held)
    value = first
    with np.errstate(all="ignore"):
        for i in range(length):
            out[i] = value
            value = held.type(value + delta)
    return out


def _lower_arange(ctx: LowerContext) -> Compute:
    """start + i * step, in the result's compute type (Paddle's GPU formula)."""
    dtype = ctx.out_dtype()
    start, _, step = (_bound(v, dtype) for v in _arange_bounds(ctx))
    work = DataType.INT64 if dtype.is_integer else DataType.FLOAT32
    if dtype is DataType.FLOAT64:
        work = dtype

    def element(idx: Indices) -> Expr:
        (i,) = idx
        value = Add(const(start, work), Mul(convert(i, work), const(step, work)))
        return convert(value, dtype)

    return Compute(dtype, ctx.out_shape(), element)


# -- expand_as ----------------------------------------------------------------------------


def _expand_as_dims(ctx: InferContext) -> list[int]:
    """y's dims (else target_shape), checked against x's where both are known."""
    x = ctx.tensor("x")
    target = list(ctx.tensor("y").dims if ctx.has("y") else ctx.attr("target_shape"))
    if len(target) < x.rank:
        raise ctx.error(f"cannot expand {im.fmt(x.dims)} to {im.fmt(target)}: a lower rank")
    offset = len(target) - x.rank
    for d, t in zip(x.dims, target[offset:], strict=True):
        if d not in (1, DYNAMIC, t) and t != DYNAMIC:
            raise ctx.error(
                f"cannot expand {im.fmt(x.dims)} to {im.fmt(target)}: dim {d} is neither 1 nor {t}"
            )
    return target


def _infer_expand_as(ctx: InferContext) -> list[Type]:
    """ExpandAsInferMeta: y's dims (else target_shape); x's dims broadcast to them."""
    x = ctx.tensor("x")
    return [im.tensor(ctx, x.data_type, _expand_as_dims(ctx))]


def expand_as_kernel(ctx: KernelContext) -> np.ndarray:
    x = ctx.tensor(0)
    y = ctx.optional(1)
    target = list(y.shape) if isinstance(y, np.ndarray) else list(ctx.attr("target_shape"))
    offset = len(target) - x.ndim
    if offset < 0 or any(t == -1 for t in target):
        raise ctx.shape_error(f"cannot expand shape {list(x.shape)} to {target}")
    try:
        return np.broadcast_to(x, target)
    except ValueError:
        raise ctx.shape_error(f"cannot expand shape {list(x.shape)} to {target}") from None


def _lower_expand_as(ctx: LowerContext) -> Compute:
    return broadcast_to(ctx.input(0), ctx.out_shape())


OPS = [
    _shape_op("shape64", DataType.INT64),
    _shape_op("shape", DataType.INT32),
    OpDef(
        "pd_op.full_with_tensor",
        operands=(
            operand("value"),
            operand("shape", mutable_attr="shape", mutable_kind=IntArrayAttribute),
        ),
        attributes=(attr("dtype", DataTypeAttribute, DataType.FLOAT32),),
        pattern=OpPatternKind.BROADCAST,
        infer_meta=_infer_full_with_tensor,
        kernel=full_with_tensor_kernel,
        lowering=OpLowering(_lower_full_with_tensor, any_dtype, symbolic=True),
        symbolic_meta=sym.from_shape_operand("shape"),
    ),
    OpDef(
        "pd_op.arange",
        operands=(
            operand("start", mutable_attr="start", mutable_kind=DoubleAttribute),
            operand("end", mutable_attr="end", mutable_kind=DoubleAttribute),
            operand("step", mutable_attr="step", mutable_kind=DoubleAttribute),
        ),
        attributes=(
            attr("dtype", DataTypeAttribute, DataType.INT64),
            attr("place", PlaceAttribute, "undefined:0"),
        ),
        pattern=OpPatternKind.ELEMENTWISE,
        infer_meta=_infer_arange,
        kernel=arange_kernel,
        lowering=OpLowering(_lower_arange, numeric, symbolic=True),
        symbolic_meta=sym.arange_shape,
    ),
    OpDef(
        "pd_op.expand_as",
        operands=(operand("x"), operand("y", optional=True)),
        attributes=(attr("target_shape", ArrayOf(Int64Attribute), []),),
        pattern=OpPatternKind.BROADCAST,
        infer_meta=_infer_expand_as,
        kernel=expand_as_kernel,
        lowering=OpLowering(_lower_expand_as, symbolic=True),
        symbolic_meta=sym.expand_as_shape,
    ),
]
