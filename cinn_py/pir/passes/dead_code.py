"""Dead-code elimination: remove ops none of whose results can reach an output.

An op survives if it has a side effect (declared trait `SideEffect`, or it is an
undeclared op, whose effects are unknown) or one of its results is used by a
surviving op or is one of the program's outputs. Outputs are taken before the pass
runs, so that a printed program (which names none) keeps what it computed.
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait
from cinn_py.pir.value import Value


def eliminate_dead_code(program: Program, keep: Sequence[Value] | None = None) -> int:
    """Erase dead ops, last to first; `keep` defaults to `program.outputs()`. Returns the count."""
    kept = {id(v) for v in (program.outputs() if keep is None else keep)}
    removed = 0
    for op in reversed(list(program.block)):
        if _is_dead(op, kept):
            op.erase()
            removed += 1
    return removed


def _is_dead(op: Operation, kept: set[int]) -> bool:
    op_def = op.op_def
    if op_def is None or op_def.has_trait(Trait.SIDE_EFFECT) or op.regions:
        return False
    return all(r.use_empty() and id(r) not in kept for r in op.results)
