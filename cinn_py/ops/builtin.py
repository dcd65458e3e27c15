"""The builtin dialect's ops that run: parameters, program outputs, constants, and the
Tensor[] glue.

`combine` packs tensors into a vector for Tensor[] operands (concat, stack); `split`
and `slice` unpack a vector result (split_with_num); inside a fused group they lower
to the tensors they move. `parameter` names a weight whose value lives in
`Program.parameters` (or is written earlier in the run by `set_parameter`);
`shadow_output` names a program output. `builtin.module` itself is structural and is
declared with the PIR layer (`cinn_py/pir/dialects/builtin.py`).
"""

from __future__ import annotations

import numpy as np

from cinn_py.hlir.op_lowering.compute import Compute, Lowered, Vector
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import BoolAttribute, Int32Attribute, StrAttribute
from cinn_py.pir.op_def import ArrayOf, InferContext, OpDef, attr, operand
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import Type, VectorType
from cinn_py.reference_ops.context import (
    KernelContext,
    RuntimeValue,
    check_input,
    tensor_type,
    to_boundary,
)

# -- declarations -------------------------------------------------------------------------


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

# -- reference kernels --------------------------------------------------------------------


def parameter(ctx: KernelContext) -> np.ndarray:
    """A weight: written earlier in this run, else given by the caller, else the program's."""
    name = ctx.attr("parameter_name")
    runtime = ctx.runtime
    sources = (runtime.written, runtime.params, runtime.program_params)
    array = next((source[name] for source in sources if name in source), None)
    return check_input(name, array, ctx.result_type())


def set_parameter(ctx: KernelContext) -> None:
    """Stores the value as a caller would pass it (bfloat16 as bit patterns), so that a
    later `builtin.parameter` reads it back like any other parameter."""
    type_ = tensor_type(ctx.op.operand_value(0).type, ctx.op.name)
    ctx.runtime.written[ctx.attr("parameter_name")] = to_boundary(ctx.tensor(0), type_.data_type)


def no_result(ctx: KernelContext) -> None:
    """An op that marks an output and computes nothing (shadow_output)."""


def combine(ctx: KernelContext) -> list[RuntimeValue]:
    return [ctx.tensor(i) for i in range(len(ctx.operands))]


def unpack(ctx: KernelContext) -> list[np.ndarray]:
    items = ctx.tensors(0)
    if len(items) != ctx.op.num_results:
        raise ctx.error(f"unpacks {len(items)} tensors into {ctx.op.num_results} results")
    return items[0] if len(items) == 1 else items  # one result is returned as itself


def pick(ctx: KernelContext) -> np.ndarray:
    items = ctx.tensors(0)
    index = ctx.attr("index")
    if not 0 <= index < len(items):
        raise ctx.error(f"index {index} is out of range for a vector of {len(items)}")
    return items[index]


# -- lowerings ----------------------------------------------------------------------------


def _lower_combine(ctx: LowerContext) -> Vector:
    return [ctx.input(i) for i in range(len(ctx.operands))]


def _lower_split(ctx: LowerContext) -> Lowered:
    """One result per tensor of the vector (one result is returned as itself)."""
    items = ctx.inputs(0)
    return items[0] if len(items) == 1 else items


def _lower_slice(ctx: LowerContext) -> Compute:
    return ctx.inputs(0)[int(ctx.attr("index"))]


# -- entries -------------------------------------------------------------------------------

_VECTOR_GLUE = frozenset({Trait.VECTOR, Trait.KEEPS_EMPTY})

OPS = [
    OpDef(
        "builtin.parameter",
        attributes=(
            attr("parameter_name", StrAttribute),
            *(attr(name, ArrayOf(BoolAttribute), None) for name in _PARAMETER_FLAGS),
        ),
        traits=frozenset(
            {
                Trait.SIDE_EFFECT,
                Trait.PROGRAM_INPUT,
                Trait.GLUE,
                Trait.EXPLICIT_TYPE,
                Trait.KEEPS_EMPTY,
            }
        ),
        infer_meta=_infer_parameter,
        kernel=parameter,
    ),
    OpDef(
        "builtin.set_parameter",
        operands=(operand("parameter"),),
        attributes=(attr("parameter_name", StrAttribute),),
        results=(),
        traits=frozenset({Trait.SIDE_EFFECT, Trait.GLUE, Trait.NO_STORAGE}),
        infer_meta=_infer_none,
        kernel=set_parameter,
    ),
    OpDef(
        "builtin.shadow_output",
        operands=(operand("x"),),
        attributes=(attr("output_name", StrAttribute),),
        results=(),
        traits=frozenset({Trait.SIDE_EFFECT, Trait.PROGRAM_OUTPUT, Trait.GLUE, Trait.KEEPS_EMPTY}),
        infer_meta=_infer_none,
        kernel=no_result,
    ),
    OpDef(
        "builtin.combine",
        operands=(operand("inputs"),),
        variadic_operands=True,
        pattern=OpPatternKind.INJECTIVE,
        traits=_VECTOR_GLUE,
        infer_meta=_infer_combine,
        kernel=combine,
        lowering=OpLowering(_lower_combine, symbolic=True),
        symbolic_meta=sym.combine_shape,
    ),
    OpDef(
        "builtin.split",
        operands=(operand("input"),),
        variadic_results=True,
        pattern=OpPatternKind.INJECTIVE,
        traits=_VECTOR_GLUE,
        infer_meta=_infer_split,
        kernel=unpack,
        lowering=OpLowering(_lower_split, symbolic=True),
        symbolic_meta=sym.split_shape,
    ),
    OpDef(
        "builtin.slice",
        operands=(operand("input"),),
        attributes=(attr("index", Int32Attribute),),
        pattern=OpPatternKind.INJECTIVE,
        traits=_VECTOR_GLUE,
        infer_meta=_infer_slice,
        kernel=pick,
        lowering=OpLowering(_lower_slice, symbolic=True),
    ),
    OpDef(
        "builtin.constant",
        attributes=(attr("value", ArrayOf()),),
        traits=frozenset({Trait.GLUE, Trait.EXPLICIT_TYPE, Trait.NO_STORAGE, Trait.KEEPS_EMPTY}),
        infer_meta=_infer_constant,
    ),
]
