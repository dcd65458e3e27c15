"""pd_op elementwise ops: unary and binary math, compares, logic, casts, select.

Binary ops broadcast NumPy-style with Paddle's compile-time -1 rules and keep x's dtype
(Paddle's Python API inserts casts before mixing dtypes); compares, logic ops and the
isnan family give bool. Paddle 3.3.1's relu6 and hardswish take no attributes.
"""

from __future__ import annotations

from cinn_py.pir.dialects.pd_op import infer_meta as im
from cinn_py.pir.dialects.pd_op.traits import ELEMENTWISE, traits
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import AttrSpec, InferContext, InferMeta, OpDef, attr, operand
from cinn_py.pir.types import Type

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


def _unary(
    name: str, infer: InferMeta = im.unchanged, attributes: tuple[AttrSpec, ...] = ()
) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"),),
        attributes=attributes,
        traits=traits(ELEMENTWISE),
        infer_meta=infer,
    )


def _binary(name: str, infer: InferMeta = im.elementwise_binary) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("x"), operand("y")),
        traits=traits(ELEMENTWISE),
        infer_meta=infer,
    )


_SAME_TYPE_UNARY = (
    "exp", "expm1", "log", "log1p", "log2", "sqrt", "rsqrt", "sign", "floor", "ceil",
    "sin", "cos", "tan", "tanh", "sigmoid", "relu", "relu6", "silu", "erf", "square",
    "reciprocal", "hardswish",
)  # fmt: skip
_ARITHMETIC = (
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "maximum",
    "minimum", "elementwise_pow",
)  # fmt: skip
_COMPARE = ("equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal")
_LOGICAL = ("logical_and", "logical_or", "logical_xor")

OPS = [
    *(_unary(name) for name in _SAME_TYPE_UNARY),
    _unary("abs", _infer_abs),
    _unary("round", attributes=(attr("decimals", "int32", 0),)),
    _unary("pow", attributes=(attr("y", "float", 1.0),)),
    _unary("leaky_relu", attributes=(attr("negative_slope", "double", 0.02),)),
    _unary("hardsigmoid", attributes=(attr("slope", "float", 0.2), attr("offset", "float", 0.5))),
    _unary("logical_not", im.to_bool),
    _unary("isnan", im.to_bool),
    _unary("isinf", im.to_bool),
    _unary("isfinite", im.to_bool),
    _unary("cast", _infer_cast, (attr("dtype", "data_type"),)),
    OpDef(
        "pd_op.scale",
        operands=(operand("x"), operand("scale", mutable_attr="scale", mutable_kind="float")),
        attributes=(attr("bias", "float", 0.0), attr("bias_after_scale", "bool", True)),
        traits=traits(ELEMENTWISE),
        infer_meta=im.unchanged,
    ),
    OpDef(
        "pd_op.clip",
        operands=(
            operand("x"),
            operand("min", mutable_attr="min", mutable_kind="float"),
            operand("max", mutable_attr="max", mutable_kind="float"),
        ),
        traits=traits(ELEMENTWISE),
        infer_meta=im.unchanged,
    ),
    *(_binary(name) for name in _ARITHMETIC),
    *(_binary(name, im.compare_binary) for name in _COMPARE + _LOGICAL),
    OpDef(
        "pd_op.where",
        operands=(operand("condition"), operand("x"), operand("y")),
        traits=traits(ELEMENTWISE),
        infer_meta=_infer_where,
    ),
]
