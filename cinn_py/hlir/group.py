"""A Group: the ops that become one kernel, or the one op run as a library instruction.

Grouping (`cinn_py.hlir.grouping`) makes them; op lowering turns a FUSED group into one
`LoweredFunc`; the runtime runs a LIBRARY group's op with its reference kernel.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from cinn_py.hlir.op_pattern import ReducePattern
from cinn_py.pir.operation import Operation
from cinn_py.pir.value import Value


class GroupKind(enum.Enum):
    FUSED = "fused"
    """Ops lowered together into one kernel."""
    LIBRARY = "library"
    """One op the compiler does not generate code for yet, run by a library call."""


@dataclass
class Group:
    """`ops` in program order. `inputs`: tensors the group reads that are defined outside
    it, in first-use order. `outputs`: values defined in the group that something outside
    it uses, or that the program outputs, in definition order.

    A FUSED group may hold the builtin glue ops around its tensors (`builtin.combine`
    feeding its concat / stack, `builtin.split` / `builtin.slice` unpacking its
    split): lowering sees through them, so `inputs` and `outputs` are always tensors.

    `reduce_pattern`: the ReducePattern every reduction of a FUSED group shares (the
    row / column structure its schedule follows), None when it has no reduction.
    """

    name: str
    kind: GroupKind
    ops: list[Operation]
    inputs: list[Value] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)
    reduce_pattern: ReducePattern | None = None

    def __repr__(self) -> str:
        ops = ", ".join(op.name for op in self.ops)
        return f"Group({self.name}, {self.kind.value}: {ops})"


def describe_groups(groups: list[Group], printed: Callable[[Value], str]) -> str:
    """One line per group: `group_1 fused [pd_op.add, pd_op.gelu] (%5, %2) -> (%7)`,
    values named by `printed` (e.g. `NameTable.printed`)."""
    lines = []
    for group in groups:
        ops = ", ".join(op.name for op in group.ops)
        ins = ", ".join(printed(v) for v in group.inputs)
        outs = ", ".join(printed(v) for v in group.outputs)
        lines.append(f"{group.name} {group.kind.value} [{ops}] ({ins}) -> ({outs})")
    return "\n".join(lines)
