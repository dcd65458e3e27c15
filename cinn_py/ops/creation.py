"""Ops that make tensors from attributes (full, full_like, full_int_array) and assign.

Attribute defaults are what Paddle's Python API passes (full_int_array's dtype is int64,
though its C++ default is float32). A constant is converted as Paddle's Scalar converts
it: rounded to a float dtype, truncated for integers (2.7 -> 2; out of range and NaN by
`dtypes.float_to_int`, as every cast), nonzero for bool; lowered, `scalar.const` does the
same. full_like reads only its operand's shape, never its data. `full` carries
Trait.CONSTANT: fusion copies it into each group that reads it.
"""

from __future__ import annotations

import numpy as np

from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering
from cinn_py.hlir.op_lowering.scalar import const
from cinn_py.ir.expr import EQ, Expr, IntImm, Select
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import (
    DataTypeAttribute,
    DoubleAttribute,
    Int64Attribute,
    IntArrayAttribute,
    PlaceAttribute,
)
from cinn_py.pir.dtypes import DataType, float_to_int
from cinn_py.pir.op_def import ArrayOf, InferContext, OpDef, Scalar, attr, operand
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import Type
from cinn_py.reference_ops.context import KernelContext, storage_dtype

# -- declarations -------------------------------------------------------------------------


def _infer_full(ctx: InferContext) -> list[Type]:
    shape = ctx.attr("shape")
    for i, d in enumerate(shape):
        if d < 0:
            raise ctx.error(f"shape {im.fmt(shape)} has a negative size {d} at {i}")
    return [im.tensor(ctx, im.attr_dtype(ctx, "dtype"), shape)]


def _infer_full_like(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    dtype = im.attr_dtype(ctx, "dtype")
    return [x if dtype is DataType.UNDEFINED else x.with_dtype(dtype)]


def _infer_full_int_array(ctx: InferContext) -> list[Type]:
    return [im.tensor(ctx, im.attr_dtype(ctx, "dtype"), [len(ctx.attr("value"))])]


# -- reference kernels --------------------------------------------------------------------


def _filled(shape: list[int] | tuple[int, ...], value: float, ctx: KernelContext) -> np.ndarray:
    dtype = ctx.out_dtype()
    if dtype.is_integer and isinstance(value, float):
        return np.full(shape, float_to_int(value, dtype))
    with np.errstate(invalid="ignore", over="ignore"):
        return np.full(shape, value, dtype=storage_dtype(dtype))


def full(ctx: KernelContext) -> np.ndarray:
    return _filled(ctx.attr("shape"), ctx.attr("value"), ctx)


def full_like(ctx: KernelContext) -> np.ndarray:
    return _filled(ctx.tensor(0).shape, ctx.scalar(1, "value"), ctx)


def full_int_array(ctx: KernelContext) -> np.ndarray:
    return np.array(ctx.attr("value"), dtype=storage_dtype(ctx.out_dtype())).reshape(-1)


def assign(ctx: KernelContext) -> np.ndarray:
    return ctx.tensor(0).copy()


# -- lowerings ----------------------------------------------------------------------------


def _lower_filled(ctx: LowerContext, value: float) -> Compute:
    dtype = ctx.out_dtype()
    constant = const(value, dtype)
    return Compute(dtype, ctx.out_shape(), lambda idx: constant)


def _lower_full(ctx: LowerContext) -> Compute:
    return _lower_filled(ctx, ctx.attr("value"))


def _lower_full_like(ctx: LowerContext) -> Compute:
    return _lower_filled(ctx, ctx.scalar(1, "value"))


def _lower_full_int_array(ctx: LowerContext) -> Compute:
    """A 1-D tensor of the listed values: a select on the index."""
    dtype = ctx.out_dtype()
    values = [const(v, dtype) for v in ctx.attr("value")]

    def element(idx: Indices) -> Expr:
        (i,) = idx
        result = values[-1]
        for position in range(len(values) - 2, -1, -1):
            result = Select(EQ(i, IntImm(position, i.dtype)), values[position], result)
        return result

    return Compute(dtype, ctx.out_shape(), element)


def _lower_assign(ctx: LowerContext) -> Compute:
    return ctx.input(0)


# -- entries -------------------------------------------------------------------------------

OPS = [
    OpDef(
        "pd_op.full",
        attributes=(
            attr("shape", IntArrayAttribute),
            attr("value", DoubleAttribute),
            attr("dtype", DataTypeAttribute, DataType.FLOAT32),
            attr("place", PlaceAttribute, "cpu"),
        ),
        pattern=OpPatternKind.ELEMENTWISE,
        traits=frozenset({Trait.CONSTANT, Trait.NOT_FOLDED, Trait.KEEPS_EMPTY}),
        infer_meta=_infer_full,
        kernel=full,
        lowering=OpLowering(_lower_full, symbolic=True),
        symbolic_value=sym.full_value,
    ),
    OpDef(
        "pd_op.full_like",
        operands=(operand("x"), operand("value", mutable_attr="value", mutable_kind=Scalar)),
        attributes=(
            attr("dtype", DataTypeAttribute, DataType.UNDEFINED),
            attr("place", PlaceAttribute, "undefined:0"),
        ),
        pattern=OpPatternKind.ELEMENTWISE,
        traits=frozenset({Trait.NOT_FOLDED}),
        infer_meta=_infer_full_like,
        kernel=full_like,
        lowering=OpLowering(_lower_full_like, symbolic=True),
    ),
    OpDef(
        "pd_op.full_int_array",
        attributes=(
            attr("value", ArrayOf(Int64Attribute)),
            attr("dtype", DataTypeAttribute, DataType.INT64),
            attr("place", PlaceAttribute, "cpu"),
        ),
        pattern=OpPatternKind.ELEMENTWISE,
        traits=frozenset({Trait.NOT_FOLDED}),
        infer_meta=_infer_full_int_array,
        kernel=full_int_array,
        lowering=OpLowering(_lower_full_int_array, symbolic=True),
        symbolic_value=sym.full_value,
    ),
    OpDef(
        "pd_op.assign",
        operands=(operand("x"),),
        pattern=OpPatternKind.ELEMENTWISE,
        infer_meta=im.unchanged,
        kernel=assign,
        lowering=OpLowering(_lower_assign, symbolic=True),
        symbolic_meta=sym.same_as_first,
        symbolic_value=sym.pass_through_value,
    ),
]
