"""The builtin dialect: module, parameters, outputs, and Tensor[] packing.

`combine` packs tensors into a vector for Tensor[] operands (concat, stack); `split`
and `slice` unpack a vector result (split_with_num). `parameter` names a weight whose
value lives in `Program.parameters`; `shadow_output` names a program output.
"""

from __future__ import annotations

from cinn_py.pir.op_def import InferContext, OpDef, attr, operand, register_ops
from cinn_py.pir.types import Type, VectorType


def _infer_combine(ctx: InferContext) -> list[Type]:
    types = []
    for i, value in enumerate(ctx.operands):
        if value is None:
            raise ctx.error(f"operand #{i} is null")
        types.append(value.type)
    return [VectorType.get(types)]


def _vector_items(ctx: InferContext) -> list[Type]:
    value = ctx.value(0)
    if value is None or not isinstance(value.type, VectorType):
        raise ctx.error("needs a vector operand", operand="input")
    return list(value.type.types)


def _infer_split(ctx: InferContext) -> list[Type]:
    return _vector_items(ctx)


def _infer_slice(ctx: InferContext) -> list[Type]:
    items = _vector_items(ctx)
    index = ctx.attr("index")
    if not 0 <= index < len(items):
        raise ctx.error(f"index {index} is out of range for a vector of {len(items)}")
    return [items[index]]


def _infer_none(ctx: InferContext) -> list[Type]:
    return []


def _infer_constant(ctx: InferContext) -> list[Type]:
    raise ctx.error("needs its result type given explicitly")


def _infer_parameter(ctx: InferContext) -> list[Type]:
    raise ctx.error("needs its result type given explicitly (the parameter's type)")


_PARAMETER_FLAGS = ("is_distributed", "is_parameter", "need_clip", "trainable")

OPS = [
    OpDef("builtin.module", results=(), traits=frozenset({"SideEffect"})),
    OpDef(
        "builtin.parameter",
        attributes=(
            attr("parameter_name", "str"),
            *(attr(name, "array<bool>", None) for name in _PARAMETER_FLAGS),
        ),
        traits=frozenset({"SideEffect"}),
        infer_meta=_infer_parameter,
    ),
    OpDef(
        "builtin.set_parameter",
        operands=(operand("parameter"),),
        attributes=(attr("parameter_name", "str"),),
        results=(),
        traits=frozenset({"SideEffect"}),
        infer_meta=_infer_none,
    ),
    OpDef(
        "builtin.shadow_output",
        operands=(operand("x"),),
        attributes=(attr("output_name", "str"),),
        results=(),
        traits=frozenset({"SideEffect"}),
        infer_meta=_infer_none,
    ),
    OpDef(
        "builtin.combine",
        operands=(operand("inputs"),),
        variadic_operands=True,
        infer_meta=_infer_combine,
    ),
    OpDef(
        "builtin.split",
        operands=(operand("input"),),
        variadic_results=True,
        infer_meta=_infer_split,
    ),
    OpDef(
        "builtin.slice",
        operands=(operand("input"),),
        attributes=(attr("index", "int32"),),
        infer_meta=_infer_slice,
    ),
    OpDef("builtin.constant", attributes=(attr("value", "array"),), infer_meta=_infer_constant),
]

register_ops("builtin", OPS)
