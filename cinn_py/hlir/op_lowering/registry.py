"""The question grouping asks of an op's entry: can this op be generated?"""

from __future__ import annotations

from cinn_py.hlir.op_lowering.context import OpLowering
from cinn_py.pir.operation import Operation


def lowering_of(op: Operation) -> OpLowering | None:
    """The lowering of `op`'s entry (None for an undeclared op or one without)."""
    op_def = op.op_def
    return op_def.lowering if op_def is not None else None


def unfolded_operands(op: Operation) -> list[str]:
    """The op's mutable-attribute operands still fed by a value (not folded into their
    attribute): lowering needs those values at compile time."""
    op_def = op.op_def
    if op_def is None:
        return []
    names = []
    for index, spec in enumerate(op_def.operands):
        if spec.mutable_attr and index < op.num_operands and op.operand_value(index) is not None:
            names.append(spec.name)
    return names


def can_lower(op: Operation) -> bool:
    """Whether `lower_group` can generate code for `op`: it has a lowering for its
    dtypes and every mutable-attribute operand is folded. Anything else runs as a
    library instruction. Shapes are not checked: they are specialised before lowering."""
    lowering = lowering_of(op)
    return lowering is not None and not unfolded_operands(op) and lowering.accepts(op)
