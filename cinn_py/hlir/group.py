"""A Group: the ops that become one kernel, or the one op run as a library instruction.

Grouping (`cinn_py.hlir.grouping`) makes them; op lowering turns a FUSED group into one
`LoweredFunc`; the runtime runs a LIBRARY group's op with its reference kernel.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cinn_py.errors import CompileError
from cinn_py.hlir.op_pattern import ReducePattern
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
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


def check_group_ops(name: str, ops: Sequence[Any], order: Mapping[int, int]) -> None:
    """A CompileError naming group `name` unless `ops` is a non-empty list of ops whose
    ids `order` (the program block's op positions) holds."""
    if not ops:
        raise CompileError(f"group '{name}' has no ops")
    for op in ops:
        if not isinstance(op, Operation):
            raise CompileError(f"group '{name}' holds {type(op).__name__} {op!r}, not an op")
        if id(op) not in order:
            raise CompileError(
                f"group '{name}' holds {op.name} ({op.where()}), which is not an op of the "
                "program's block"
            )


def check_groups(groups: Any, program: Program) -> None:
    """Hand-made groups (`PIRCompiler.build(groups)`): a CompileError naming the group
    unless `groups` is a list of Groups, each of ops of `program`'s block, none empty
    and no op in two of them."""
    if isinstance(groups, Group) or not isinstance(groups, Sequence):
        raise CompileError(f"groups must be a list of Group, got {type(groups).__name__}")
    order = {id(op): i for i, op in enumerate(program.block)}
    owner: dict[int, str] = {}
    for group in groups:
        if not isinstance(group, Group):
            raise CompileError(f"groups must be a list of Group, got {type(group).__name__}")
        check_group_ops(str(group.name), group.ops, order)
        for op in group.ops:
            if id(op) in owner:
                raise CompileError(
                    f"{op.name} ({op.where()}) is in two groups: '{owner[id(op)]}' and "
                    f"'{group.name}'"
                )
            owner[id(op)] = str(group.name)
