"""Fold constant shape / axis / factor operands into attributes.

Paddle feeds many "attributes" as tensors (a `pd_op.full_int_array` for reshape's
shape, a `pd_op.full` for scale's factor, a `builtin.combine` of fulls for a shape
list), because at run time they may be computed. Where the producer is a constant the
consumer wants it as an attribute: later stages (lowering, scheduling) need the value
at compile time. This pass sets the attribute, nulls the operand (printed
`<<NULL VALUE>>`, as Paddle prints an absent operand) and leaves the now-unused
producers to dead-code elimination.
"""

from __future__ import annotations

from typing import Any

from cinn_py.pir.attributes import Attribute, FloatAttribute, IntArrayAttribute
from cinn_py.pir.constant import constant_of
from cinn_py.pir.op_def import AttrKind, make_attribute
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType
from cinn_py.pir.value import Value


def fold_mutable_attributes(program: Program) -> int:
    """Fold every constant mutable-attribute operand; returns how many were folded."""
    folded = 0
    for op in program.ops():
        folded += fold_op(op)
    return folded


def fold_op(op: Operation) -> int:
    """Fold the constant mutable-attribute operands of one op; returns how many."""
    op_def = op.op_def
    if op_def is None or op_def.variadic_operands:
        return 0
    folded = 0
    for index, spec in enumerate(op_def.operands):
        if spec.mutable_attr is None or index >= op.num_operands:
            continue
        value = op.operand_value(index)
        if value is None:
            continue
        constant = constant_of(value)
        if constant is None:
            continue
        if _holds_integers(value):
            constant = [int(v) for v in constant] if isinstance(constant, list) else int(constant)
        op.set_attribute(spec.mutable_attr, _attribute_for(spec.mutable_kind, constant))
        op.set_operand(index, None)
        folded += 1
    return folded


def _holds_integers(value: Value) -> bool:
    """An integer tensor's constant is an int, though `full` keeps its value as a double."""
    return isinstance(value.type, DenseTensorType) and value.type.data_type.is_integer


def _attribute_for(kind: AttrKind, constant: Any) -> Attribute:
    """The attribute of the declared kind; an IntArray also takes a one-element scalar
    (Paddle allows `full` where it declares an IntArray)."""
    if kind is IntArrayAttribute:
        if not isinstance(constant, list):
            constant = [constant]
        return IntArrayAttribute.get([int(v) for v in constant])
    if kind is FloatAttribute:
        return FloatAttribute.get(float(constant))
    return make_attribute(kind, constant)
