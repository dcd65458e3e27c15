"""Placeholder grouping: maximal connected sets of ops the compiler can lower.

Until CINN's fusion pass replaces it, a group is a maximal set of ops that op lowering
can generate code for (elementwise, broadcast, injective: `op_lowering.can_lower`),
connected through producer-consumer edges, such that contracting the group makes no
cycle: a path that leaves the group, runs through another op (a library instruction,
say) and comes back into it would need the group's kernel to run both before and after
that op. A reduction (`op_lowering.reduction.REDUCTIONS`) is a FUSED group of its own:
its producers and consumers are in other groups, so its kernel reads stored inputs and
stores its result. Every other computing op is a LIBRARY group of its own. This module is the one
place that decides; `group_program` can be swapped for another strategy as long as it
returns groups in an order that respects their dependencies.
"""

from __future__ import annotations

from collections.abc import Callable

from cinn_py.hlir.group import Group, GroupKind
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType
from cinn_py.pir.value import Value

GLUE_OPS = frozenset(
    {
        "pd_op.data",
        "pd_op.fetch",
        "builtin.parameter",
        "builtin.shadow_output",
        "builtin.set_parameter",
        "builtin.constant",
    }
)
"""Ops that move no data: the runtime binds their values in the Scope, no group runs them."""

VECTOR_OPS = frozenset({"builtin.combine", "builtin.split", "builtin.slice"})
"""Ops that pack or unpack Tensor[] values: inside the fused group of the op they serve,
else bookkeeping for the runtime."""

Fusible = Callable[[Operation], bool]


def group_program(program: Program, is_fusible: Fusible | None = None) -> list[Group]:
    """The program's groups in an order where every group follows the groups it reads
    from. `is_fusible` defaults to `op_lowering.can_lower`."""
    if is_fusible is None:
        from cinn_py.hlir.op_lowering import can_lower

        is_fusible = can_lower
    return _Grouper(program, is_fusible).run()


def make_group(
    name: str, ops: list[Operation], program: Program, kind: GroupKind = GroupKind.FUSED
) -> Group:
    """A group of the given ops of `program` (as the seed's tests build them by hand),
    with its inputs and outputs worked out."""
    order = {id(op): i for i, op in enumerate(program.block)}
    ops = sorted(ops, key=lambda op: order[id(op)])
    group = Group(name, kind, ops)
    group.inputs, group.outputs = _boundary(ops, {id(v) for v in program.outputs()}, kind)
    return group


class _Grouper:
    def __init__(self, program: Program, is_fusible: Fusible) -> None:
        self.program = program
        self.ops = [op for op in program.block if op.name not in GLUE_OPS]
        self.order = {id(op): i for i, op in enumerate(program.block)}
        self.fusible = {id(op) for op in self.ops if self._fusible(op, is_fusible)}
        self.leader: dict[int, int] = {id(op): id(op) for op in self.ops}
        self.by_id = {id(op): op for op in self.ops}
        from cinn_py.hlir.op_lowering.reduction import REDUCTIONS

        self.alone = {id(op) for op in self.ops if op.name in REDUCTIONS}
        """Fusible ops that merge with no other op: the reductions."""

    def _fusible(self, op: Operation, is_fusible: Fusible) -> bool:
        if op.name == "builtin.combine":
            users = op.result(0).users()
            return bool(users) and all(is_fusible(u) for u in users)
        if op.name in ("builtin.split", "builtin.slice"):
            producer = op.operand_values()[0].defining_op
            return producer is not None and is_fusible(producer)
        if not is_fusible(op):
            return False
        # A Tensor[] result must be unpacked inside the group (split -> builtin.split).
        for result in op.results:
            if not isinstance(result.type, DenseTensorType):
                if not all(u.name in ("builtin.split", "builtin.slice") for u in result.users()):
                    return False
        return True

    # ---- union-find over ops -----------------------------------------------------------

    def find(self, key: int) -> int:
        while self.leader[key] != key:
            self.leader[key] = self.leader[self.leader[key]]
            key = self.leader[key]
        return key

    def members(self, root: int) -> set[int]:
        return {k for k in self.leader if self.find(k) == root}

    def run(self) -> list[Group]:
        for op in self.ops:
            if id(op) not in self.fusible or id(op) in self.alone:
                continue
            for value in op.operand_values():
                producer = value.defining_op if value is not None else None
                if producer is None or id(producer) not in self.fusible:
                    continue
                if id(producer) in self.alone:
                    continue
                a, b = self.find(id(producer)), self.find(id(op))
                if a != b and not self._merge_makes_cycle(a, b):
                    self.leader[b] = a
        return self._groups()

    def _merge_makes_cycle(self, a: int, b: int) -> bool:
        """Whether some path leaves group a or b, passes an op of neither, and enters the
        other: contracting both into one node would then close a cycle."""
        inside = self.members(a) | self.members(b)
        frontier = [user for key in inside for user in self._users(key) if id(user) not in inside]
        seen: set[int] = set()
        while frontier:
            op = frontier.pop()
            if id(op) in seen:
                continue
            seen.add(id(op))
            for user in self._users(id(op)):
                if id(user) in inside:
                    return True
                frontier.append(user)
        return False

    def _users(self, key: int) -> list[Operation]:
        op = self.by_id.get(key)
        if op is None:
            return []
        return [u for r in op.results for u in r.users() if id(u) in self.by_id]

    # ---- building the groups -----------------------------------------------------------

    def _groups(self) -> list[Group]:
        buckets: dict[int, list[Operation]] = {}
        for op in self.ops:
            buckets.setdefault(self.find(id(op)), []).append(op)
        ordered = self._topological([ops for ops in buckets.values() if _computes(ops)])
        outputs = {id(v) for v in self.program.outputs()}
        groups = []
        for index, ops in enumerate(ordered):
            kind = GroupKind.FUSED if id(ops[0]) in self.fusible else GroupKind.LIBRARY
            group = Group(f"group_{index}", kind, ops)
            group.inputs, group.outputs = _boundary(ops, outputs, kind)
            groups.append(group)
        return groups

    def _topological(self, buckets: list[list[Operation]]) -> list[list[Operation]]:
        """Groups ordered so producers come first; ties by the program position of
        the group's first op."""
        owner = {id(op): i for i, ops in enumerate(buckets) for op in ops}
        preds: list[set[int]] = [set() for _ in buckets]
        for i, ops in enumerate(buckets):
            for op in ops:
                for value in op.operand_values():
                    producer = value.defining_op if value is not None else None
                    j = owner.get(id(producer)) if producer is not None else None
                    if j is not None and j != i:
                        preds[i].add(j)
        done: list[int] = []
        placed: set[int] = set()
        pending = sorted(range(len(buckets)), key=lambda i: self.order[id(buckets[i][0])])
        while pending:
            for i in pending:
                if preds[i] <= placed:
                    done.append(i)
                    placed.add(i)
                    pending.remove(i)
                    break
            else:  # pragma: no cover - the merge rule keeps the group graph acyclic
                raise AssertionError("grouping made a cycle")
        return [buckets[i] for i in done]


def _computes(ops: list[Operation]) -> bool:
    """A lone vector op outside any fused group is runtime bookkeeping, not a group."""
    return not all(op.name in VECTOR_OPS for op in ops)


def _boundary(
    ops: list[Operation], program_outputs: set[int], kind: GroupKind
) -> tuple[list[Value], list[Value]]:
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
