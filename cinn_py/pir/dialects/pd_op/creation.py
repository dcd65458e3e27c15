"""pd_op creation ops: program inputs and outputs, constants, copies.

`data` and `fetch` carry SideEffect: they are the program's interface and must survive
dead-code elimination even when nothing reads them. Attribute defaults are what Paddle's
Python API passes (full_int_array's dtype is int64, though its C++ default is float32);
`data` needs its name, shape and dtype given.
"""

from __future__ import annotations

from cinn_py.pir.dialects.pd_op import infer_meta as im
from cinn_py.pir.dialects.pd_op.traits import ELEMENTWISE, NON_FUSIBLE, SIDE_EFFECT, traits
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.types import Type


def _infer_data(ctx: InferContext) -> list[Type]:
    return [im.tensor(ctx, im.attr_dtype(ctx, "dtype"), ctx.attr("shape"))]


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


OPS = [
    OpDef(
        "pd_op.data",
        attributes=(
            attr("name", "str"),
            attr("shape", "int_array"),
            attr("dtype", "data_type"),
            attr("place", "place", "undefined:0"),
        ),
        traits=traits(NON_FUSIBLE, SIDE_EFFECT),
        infer_meta=_infer_data,
    ),
    OpDef(
        "pd_op.fetch",
        operands=(operand("x"),),
        attributes=(attr("name", "str"), attr("col", "int32", 0)),
        traits=traits(NON_FUSIBLE, SIDE_EFFECT),
        infer_meta=im.unchanged,
    ),
    OpDef(
        "pd_op.full",
        attributes=(
            attr("shape", "int_array"),
            attr("value", "double"),
            attr("dtype", "data_type", DataType.FLOAT32),
            attr("place", "place", "cpu"),
        ),
        traits=traits(ELEMENTWISE),
        infer_meta=_infer_full,
    ),
    OpDef(
        "pd_op.full_like",
        operands=(operand("x"), operand("value", mutable_attr="value", mutable_kind="scalar")),
        attributes=(
            attr("dtype", "data_type", DataType.UNDEFINED),
            attr("place", "place", "undefined:0"),
        ),
        traits=traits(ELEMENTWISE),
        infer_meta=_infer_full_like,
    ),
    OpDef(
        "pd_op.full_int_array",
        attributes=(
            attr("value", "array<int64>"),
            attr("dtype", "data_type", DataType.INT64),
            attr("place", "place", "cpu"),
        ),
        traits=traits(ELEMENTWISE),
        infer_meta=_infer_full_int_array,
    ),
    OpDef(
        "pd_op.assign",
        operands=(operand("x"),),
        traits=traits(ELEMENTWISE),
        infer_meta=im.unchanged,
    ),
]
