"""Common-subexpression elimination: an op that recomputes what an earlier op computed
is dropped, its results replaced by the earlier op's.

Two ops compute the same thing when they have the same name, the same operands (the
same values, in order), the same result types and the same attributes, leaving out
bookkeeping that does not change what is computed (`stop_gradient`, `op_callstack`, ...;
the earlier op's are kept). Attributes are uniqued, so equal ones are the same object.
Ops with a side effect, undeclared ops (effects unknown), ops with regions and random
ops are never merged. Decomposition makes many equal constants (`full` of 1, of 0), and
this pass is what folds them into one.
"""

from __future__ import annotations

from collections.abc import Hashable

from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import replace_value
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait

BOOKKEEPING_ATTRIBUTES = frozenset(
    {"stop_gradient", "persistable", "trainable", "op_callstack", "op_role", "op_namescope"}
)
"""Attributes that say how Paddle tracks an op, not what it computes."""


def eliminate_common_subexpressions(program: Program) -> int:
    """Merge every op into an earlier identical one; returns how many were removed."""
    seen: dict[Hashable, Operation] = {}
    removed = 0
    for op in list(program.block):
        key = _key(op)
        if key is None:
            continue
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = op
            continue
        for old, new in zip(op.results, earlier.results, strict=True):
            replace_value(program, old, new)
        op.erase()
        removed += 1
    return removed


def _key(op: Operation) -> Hashable | None:
    """What `op` computes, as a dict key; None if it must not be merged."""
    op_def = op.op_def
    if (
        op_def is None
        or op_def.has_trait(Trait.SIDE_EFFECT)
        or op_def.has_trait(Trait.RANDOM)
        or op.regions
        or not op.results
    ):
        return None
    attributes = tuple(
        sorted(
            (name, id(attribute))
            for name, attribute in op.attributes.items()
            if name not in BOOKKEEPING_ATTRIBUTES
        )
    )
    operands = tuple(None if v is None else id(v) for v in op.operand_values())
    types = tuple(id(r.type) for r in op.results)
    return op.name, operands, types, attributes
