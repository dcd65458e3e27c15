"""A Group: the ops that become one kernel, or the one op run as a library instruction.

Grouping (`cinn_py.hlir.grouping`) makes them; op lowering turns a FUSED group into one
`LoweredFunc`; the runtime runs a LIBRARY group's op with its reference kernel.
`dependency_order` is the one topological sort over groups (grouping, the recompute
pass, `groups_to_program` and the driver's instruction order all use it).
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cinn_py.errors import CompileError
from cinn_py.hlir.op_pattern import ReducePattern, is_reduction, reduce_pattern
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType
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


def dependency_order(
    units: Sequence[Sequence[Operation]],
    program: Program,
    names: Sequence[str] | None = None,
) -> list[int]:
    """The indices of `units` (disjoint, non-empty lists of top-level ops of `program`:
    groups, lone ops) in an order where each unit follows the units it reads from,
    directly or through ops in no unit (glue, a `builtin.combine` of group outputs);
    among units ready together, the one whose first op comes first in the program.
    Kahn's algorithm with a heap: O((ops + uses) + units log units). A CompileError
    naming the units (`names`, else their first ops) caught in a cycle."""
    position = {id(op): i for i, op in enumerate(program.block)}
    owner = {id(op): i for i, ops in enumerate(units) for op in ops}
    carried: dict[int, set[int]] = {}
    """The units an op in no unit reads from (through such ops too), by op id."""
    preds: list[set[int]] = [set() for _ in units]
    for op in program.block:  # program order: producers first
        reads: set[int] = set()
        for nested in op.walk():
            for value in nested.operand_values():
                producer = value.defining_op if value is not None else None
                if producer is None:
                    continue
                unit = owner.get(id(producer))
                if unit is not None:
                    reads.add(unit)
                else:
                    reads.update(carried.get(id(producer), ()))
        unit = owner.get(id(op))
        if unit is None:
            if reads:
                carried[id(op)] = reads
        else:
            reads.discard(unit)
            preds[unit] |= reads
    users: list[list[int]] = [[] for _ in units]
    for i, before in enumerate(preds):
        for j in before:
            users[j].append(i)
    waiting = [len(p) for p in preds]
    first = [min(position[id(op)] for op in ops) for ops in units]
    ready = [(first[i], i) for i in range(len(units)) if not waiting[i]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for user in users[i]:
            waiting[user] -= 1
            if not waiting[user]:
                heapq.heappush(ready, (first[user], user))
    if len(order) != len(units):
        stuck = [
            names[i] if names is not None else f"{units[i][0].name} ({units[i][0].where()})"
            for i in range(len(units))
            if waiting[i]
        ]
        raise CompileError(f"the groups depend on each other in a cycle: {', '.join(stuck)}")
    return order


def build_groups(
    program: Program, units: Sequence[tuple[GroupKind, list[Operation]]]
) -> list[Group]:
    """Groups of `units` (a kind and ops in program order each), in `dependency_order`,
    named `group_0`, `group_1`, ... in that order, with their inputs, outputs and (FUSED)
    reduce_pattern."""
    order = dependency_order([ops for _, ops in units], program)
    outputs = {id(v) for v in program.outputs()}
    groups = []
    for index, i in enumerate(order):
        kind, ops = units[i]
        group = Group(f"group_{index}", kind, ops)
        group.inputs, group.outputs = group_boundary(ops, outputs, kind)
        if kind is GroupKind.FUSED:
            group.reduce_pattern = group_reduce_pattern(ops)
        groups.append(group)
    return groups


def group_reduce_pattern(ops: Iterable[Operation]) -> ReducePattern | None:
    """The pattern of the first reduction among `ops` (grouping makes them all equal)."""
    for op in ops:
        if is_reduction(op):
            return reduce_pattern(op)
    return None


def group_boundary(
    ops: Sequence[Operation], program_outputs: set[int], kind: GroupKind
) -> tuple[list[Value], list[Value]]:
    """The inputs (values read from outside `ops`, in first-use order) and outputs
    (values used outside or program outputs, by id in `program_outputs`; tensors only
    for a FUSED group) of a group of `ops`."""
    members = {id(op) for op in ops}
    inputs: list[Value] = []
    seen: set[int] = set()
    for op in ops:
        for value in op.operand_values():
            if value is None or id(value) in seen:
                continue
            producer = value.defining_op
            if producer is not None and id(producer) in members:
                continue
            seen.add(id(value))
            inputs.append(value)
    outputs = [
        r
        for op in ops
        for r in op.results
        if id(r) in program_outputs or any(id(u) not in members for u in r.users())
    ]
    if kind is GroupKind.FUSED:
        outputs = [v for v in outputs if isinstance(v.type, DenseTensorType)]
    return inputs, outputs
