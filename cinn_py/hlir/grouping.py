"""Fusion: CINN-style grouping of ops into kernels.

Only ops `op_lowering.can_lower` accepts fuse; every other computing op is a LIBRARY
group of its own. Fusible ops start as one group each and groups merge, in two ways:

1. Vertical (producer group P into a consumer group Q, along an edge P -> Q). A P
   without reductions always merges: its elementwise / broadcast / injective ops inline
   into Q's computations, reduction bodies included, and its values used elsewhere become
   group outputs. A P with reductions merges only if the merged group keeps the row
   invariant below (and if Q has reductions too, they have P's ReducePattern, so e.g. a
   variance's mean may read the centred values that depend on the first mean).
2. Horizontal (sibling groups reading one value): if neither has reductions and all
   their outputs have one element count (one loop nest serves both), or both have
   reductions with equal ReducePattern (layer_norm's two means, a sum and a max of one
   input): one kernel then reads the shared input once.

Every merge must keep three properties, checked on the merged group as a whole:

- No cycle (`_merge_makes_cycle`): a path that leaves the group, runs through another op
  (a library matmul, a group that was refused) and comes back would need the group's
  kernel to run both before and after that op.
- The row invariant. All reductions of a group share one `ReducePattern` (input shape S,
  reduced dims A), and every op that depends, inside the group, on a reduction result is
  ElementWise or Broadcast with a full (S) or row (S with A set to 1, or S without A)
  output whose reduction-dependent operands are `row_aligned`, or a reshape / squeeze /
  unsqueeze / flatten from a row form to a row form, or a reduction of the same pattern.
  Why: the group schedule runs one thread block per row. A block reduces its row into a
  register / shared value that only that block sees, so every value computed from it
  must be needed only by the same row: full-shaped values at their own element, row
  values once per row. A non-keepdim row broadcast against the wrong dims (numpy aligns
  dims from the right), a transpose of a row value, or a second reduction over other
  axes would read another block's result, which no barrier can provide.
- argmax / argmin stay simple: a group holding one has no other reduction and nothing in
  the group reads a reduction result (their index-and-value pairs have no cross-thread
  reduction yet, so they keep the serial per-output schedule; the contract asks only
  that argmax / argmin results have no in-group consumers, this is a little stricter).

Once the groups are settled, a cheap op that fused ops of several groups read (a
`pd_op.full` CSE shared between two composites, an elementwise op of outside values)
is copied into each other group rather than passed between kernels
(`_recompute_shared_cheap_ops`).

Groups are returned in dependency order, each with its `reduce_pattern`. This module is
the one place that decides; docs/FUSION.md has the worked softmax example.
`explain_grouping` also returns why each pair of groups that share an edge (a value one
computes and the other reads, or a value both read) stayed apart: the rule that refused
their merge, as data (`FusionExplanation`), for `cinn-py groups --explain`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from cinn_py.hlir import op_pattern
from cinn_py.hlir.group import Group, GroupKind, check_group_ops
from cinn_py.hlir.op_pattern import (
    OpPatternKind,
    ReducePattern,
    op_pattern_kind,
    reduce_pattern,
    static_shape,
)
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait
from cinn_py.pir.types import DenseTensorType
from cinn_py.pir.value import Value

MAX_RECOMPUTED = 8
"""The longest chain of elementwise ops a reader's group recomputes instead of reading
their value from another kernel."""

Fusible = Callable[[Operation], bool]

_ROW_OPS = frozenset({OpPatternKind.ELEMENTWISE, OpPatternKind.BROADCAST})
"""Kinds that may compute a reduction-dependent value (plus reshapes, row to row)."""

FEW_ROWS = 64
"""A reduction with fewer rows than this (half the SMs of an A100 or H100) leaves most
of the GPU idle under the row schedule's one thread block per row."""
LONG_ROW_BYTES = 128 * 1024
"""A row longer than this does not fit the row schedule's register cache (128 bytes a
thread, 1024 threads): each pass over it reads it from memory again anyway."""


@dataclass(frozen=True)
class FusionExplanation:
    """Why two groups were not merged. `kind` is "vertical" (`first` computes `value`,
    `second` reads it: `ops` is the producer and the consumer) or "horizontal" (both read
    `value`: `ops` is one reader in each); `reason` is the rule that refused the merge."""

    kind: str
    first: str
    second: str
    value: Value
    ops: tuple[Operation, Operation]
    reason: str


@dataclass
class Grouping:
    """The groups of a program (as `group_program` gives them) and why the groups that
    share an edge stayed apart."""

    groups: list[Group]
    explanations: list[FusionExplanation] = field(default_factory=list)


@dataclass(frozen=True)
class _Refusal:
    """A refused merge as the grouper saw it: the op pair tried (held, so that no other
    op takes their ids), why, the op a cycle would pass (named by its group once the
    groups are named) and, for siblings, the value both read."""

    ops: tuple[Operation, Operation]
    reason: str
    through: Operation | None = None
    value: Value | None = None


def has_trait(op: Operation, trait: Trait) -> bool:
    """Whether `op`'s entry has `trait` (an undeclared op has none)."""
    op_def = op.op_def
    return op_def is not None and op_def.has_trait(trait)


def _unpacks(op: Operation) -> bool:
    """builtin.split / builtin.slice: Tensor[] glue that reads a vector."""
    return has_trait(op, Trait.VECTOR) and op.name != "builtin.combine"


def is_reduction(op: Operation) -> bool:
    """Whether `op` is a reduction op lowering generates (argmax / argmin included)."""
    return op_pattern.is_reduction(op)


def group_program(program: Program, is_fusible: Fusible | None = None) -> list[Group]:
    """The program's groups in an order where every group follows the groups it reads
    from. `is_fusible` defaults to `op_lowering.can_lower`."""
    return explain_grouping(program, is_fusible).groups


def explain_grouping(program: Program, is_fusible: Fusible | None = None) -> Grouping:
    """`group_program`'s groups, with a `FusionExplanation` for each pair of groups that
    a value links (one computes it and the other reads it, or both read it): the rule
    that refused their merge, in group order."""
    if is_fusible is None:
        from cinn_py.hlir.op_lowering import can_lower

        is_fusible = can_lower
    grouper = _Grouper(program, is_fusible)
    groups = grouper.run()
    return Grouping(groups, grouper.explain(groups))


def make_group(
    name: str, ops: list[Operation], program: Program, kind: GroupKind = GroupKind.FUSED
) -> Group:
    """A group of the given ops of `program` (as the seed's tests build them by hand),
    with its inputs, outputs and (for a FUSED group) reduce_pattern worked out. A
    CompileError if `ops` is empty or holds an op that is not in `program`'s block."""
    order = {id(op): i for i, op in enumerate(program.block)}
    ops = list(ops)
    check_group_ops(str(name), ops, order)
    ops = sorted(ops, key=lambda op: order[id(op)])
    group = Group(name, kind, ops)
    group.inputs, group.outputs = _boundary(ops, {id(v) for v in program.outputs()}, kind)
    if kind is GroupKind.FUSED:
        group.reduce_pattern = group_reduce_pattern(ops)
    return group


def group_reduce_pattern(ops: Iterable[Operation]) -> ReducePattern | None:
    """The pattern of the first reduction among `ops` (grouping makes them all equal)."""
    for op in ops:
        if is_reduction(op):
            return reduce_pattern(op)
    return None


def check_row_invariant(ops: Iterable[Operation]) -> str | None:
    """Why the ops cannot form one group under the row invariant (see the module
    docstring), or None when they can. Cycles are not checked here."""
    ops = list(ops)
    reductions = [op for op in ops if is_reduction(op)]
    if not reductions:
        return None
    patterns = [reduce_pattern(op) for op in reductions]
    pattern = patterns[0]
    if len(reductions) > 1:
        if any(p is None for p in patterns):
            return "a reduction with an unknown pattern shares a group"
        if any(p != pattern for p in patterns):
            return "reductions with different patterns"
        if any(op_pattern.is_arg_reduction(op) for op in reductions):
            return "argmax / argmin with another reduction"
    split = splits_long_rows(reductions[0], ops)
    dependent: set[int] = set()  # ids of values that depend on a reduction result
    for op in ops:  # program order: producers first
        row_operands = [v for v in op.operand_values() if v is not None and id(v) in dependent]
        if not row_operands:
            if is_reduction(op):
                dependent.update(id(r) for r in op.results)
            continue
        why = _row_op_refusal(op, row_operands, pattern)
        if why is None and split:
            why = _long_row_refusal(op, pattern)
        if why is not None:
            return why
        dependent.update(id(r) for r in op.results)
    return None


def splits_long_rows(reduction: Operation, ops: Iterable[Operation] = ()) -> bool:
    """Whether the rows of `reduction` are few (under FEW_ROWS) and long (over
    LONG_ROW_BYTES of the narrowest full-shaped value among `ops` and its input: a
    float16 x cast to float32 is cached as float16): then nothing full-shaped that reads a reduction shares
    its group (`_long_row_refusal`), so that each reduction takes the grid schedule
    (many thread blocks per row) and the full-shaped consumers a flat kernel of their
    own. One block per row would use a few SMs, and would read the row once per pass
    anyway; split, the passes read it as often, with the whole GPU."""
    pattern = reduce_pattern(reduction)
    source = reduction.operand_values()[0] if reduction.num_operands else None
    if pattern is None or source is None or not isinstance(source.type, DenseTensorType):
        return False
    if op_pattern.is_arg_reduction(reduction) or not pattern.innermost:
        return False
    full = [source] + [
        v
        for op in ops
        for v in [*op.operand_values(), *op.results]
        if v is not None
        and isinstance(v.type, DenseTensorType)
        and static_shape(v) is not None
        and pattern.is_full(static_shape(v))
    ]
    itemsize = min(v.type.data_type.itemsize for v in full)
    return pattern.rows < FEW_ROWS and pattern.cols * itemsize > LONG_ROW_BYTES


def _long_row_refusal(op: Operation, pattern: ReducePattern) -> str | None:
    """Why `op`, which reads a reduction of few long rows, leaves the group: it is
    full-shaped, or a reduction of values that depend on another one."""
    if is_reduction(op):
        return f"{op.name} reduces values computed from another reduction of few long rows"
    out = static_shape(op.result(0))
    if out is not None and pattern.is_full(out) and not pattern.is_row(out):
        return f"{op.name} is full-shaped and reads a reduction of few long rows"
    return None


def _row_op_refusal(
    op: Operation, row_operands: list[Value], pattern: ReducePattern | None
) -> str | None:
    """Why `op`, reading the reduction-dependent `row_operands`, breaks the invariant."""
    if any(op_pattern.is_arg_reduction(v.defining_op) for v in row_operands):
        return f"{op.name} reads an argmax / argmin result"
    if pattern is None:
        return f"{op.name} reads a reduction whose pattern is unknown"
    if is_reduction(op):
        if op_pattern.is_arg_reduction(op):
            return f"{op.name} reads a reduction result"
        return None  # same pattern (checked by the caller): its input is full
    if op.num_results != 1:
        return f"{op.name} has {op.num_results} results"
    out = static_shape(op.result(0))
    if out is None:
        return f"{op.name} has a dynamic or non-tensor result"
    if op_pattern.is_reshape(op):
        operand = static_shape(row_operands[0])
        if operand is not None and pattern.is_row(operand) and pattern.is_row(out):
            return None
        return f"{op.name} does not take a row form to a row form"
    if op_pattern_kind(op) not in _ROW_OPS:
        return f"{op.name} ({op_pattern_kind(op).value}) reads a reduction result"
    if not (pattern.is_full(out) or pattern.is_row(out)):
        return f"{op.name}'s result {list(out)} is neither full nor a row of {pattern}"
    for value in row_operands:
        shape = static_shape(value)
        if shape is None or not pattern.row_aligned(shape, out):
            return f"{op.name} reads a row value of shape {shape} off its row into {list(out)}"
    return None


class _Grouper:
    def __init__(self, program: Program, is_fusible: Fusible) -> None:
        self.program = program
        self.ops = [op for op in program.block if not has_trait(op, Trait.GLUE)]
        self.order = {id(op): i for i, op in enumerate(program.block)}
        self.not_fusible: dict[int, str] = {}
        """Why each op that fuses with nothing does not (a library op, ...), by op id."""
        for op in self.ops:
            why = self._fusible_refusal(op, is_fusible)
            if why is not None:
                self.not_fusible[id(op)] = why
        self.fusible = {id(op) for op in self.ops if id(op) not in self.not_fusible}
        self.refusals: dict[tuple[bool, int, int], _Refusal] = {}
        """The latest refused merge of each op pair tried, by (horizontal, id, id):
        producer and consumer, or two readers of one value."""
        self.leader: dict[int, int] = {id(op): id(op) for op in self.ops}
        self.group_ops: dict[int, list[Operation]] = {id(op): [op] for op in self.ops}
        """Members of each group, by the leader's id, in program order."""
        self.by_id = {id(op): op for op in self.ops}

    def _fusible_refusal(self, op: Operation, is_fusible: Fusible) -> str | None:
        """Why `op` fuses with nothing, or None when it may fuse."""
        if op.name == "builtin.combine":
            users = op.result(0).users()
            if users and all(is_fusible(u) for u in users):
                return None
            return f"{op.name} packs a Tensor[] for an op that does not fuse"
        if _unpacks(op):
            producer = op.operand_values()[0].defining_op
            if producer is not None and is_fusible(producer):
                return None
            return f"{op.name} unpacks a Tensor[] of an op that does not fuse"
        if not is_fusible(op):
            return f"{op.name} is a library op (no generated kernel: the target's library call runs it)"
        # A Tensor[] result must be unpacked inside the group (split -> builtin.split).
        for result in op.results:
            if not isinstance(result.type, DenseTensorType):
                if not all(_unpacks(u) for u in result.users()):
                    return f"{op.name}'s Tensor[] result is read other than by a split"
        return None

    # ---- union-find over ops -----------------------------------------------------------

    def find(self, key: int) -> int:
        while self.leader[key] != key:
            self.leader[key] = self.leader[self.leader[key]]
            key = self.leader[key]
        return key

    def members(self, root: int) -> set[int]:
        return {id(op) for op in self.group_ops[root]}

    def _has_reduction(self, root: int) -> bool:
        return any(is_reduction(op) for op in self.group_ops[root])

    def run(self) -> list[Group]:
        changed = True
        while changed:
            changed = self._vertical()
            changed = self._horizontal() or changed
        return self._groups()

    def _vertical(self) -> bool:
        """Merge each fusible op's group with its fusible producers' groups, in program
        order, until nothing more merges."""
        merged_any = False
        changed = True
        while changed:
            changed = False
            for op in self.ops:
                if id(op) not in self.fusible:
                    continue
                for value in op.operand_values():
                    producer = value.defining_op if value is not None else None
                    if producer is None or id(producer) not in self.fusible:
                        continue
                    edge = (producer, op)
                    if self._try_merge(self.find(id(producer)), self.find(id(op)), edge):
                        changed = merged_any = True
        return merged_any

    def _horizontal(self) -> bool:
        """Merge sibling groups that read one value (see the module docstring)."""
        merged_any = False
        values: list[Value] = [r for op in self.program.block for r in op.results]
        for value in values:
            users = [u for u in dict.fromkeys(value.users()) if id(u) in self.fusible]
            for i, first in enumerate(users):
                for second in users[i + 1 :]:
                    a, b = self.find(id(first)), self.find(id(second))
                    if a == b:
                        continue
                    pair = (first, second)
                    why = self._sibling_refusal(a, b)
                    if why is not None:
                        self._refuse(pair, why, value=value)
                    elif self._try_merge(a, b, pair, value):
                        merged_any = True
        return merged_any

    def _sibling_refusal(self, a: int, b: int) -> str | None:
        """Why sibling groups a and b do not fuse side by side, or None when they may."""
        reduces_a, reduces_b = self._has_reduction(a), self._has_reduction(b)
        if reduces_a != reduces_b:
            return "horizontal fusion needs both siblings or neither to reduce"
        if reduces_a:
            pa = group_reduce_pattern(self.group_ops[a])
            pb = group_reduce_pattern(self.group_ops[b])
            if pa is None or pa != pb:
                return f"sibling reductions of different patterns ({pa} vs {pb})"
            return None
        counts = [{_numel(v) for v in self._outputs(root)} for root in (a, b)]
        if None in counts[0] | counts[1]:
            return "a sibling has an output of unknown element count"
        if len(counts[0] | counts[1]) != 1:
            shown = " vs ".join(", ".join(map(str, sorted(c))) for c in counts)
            return f"siblings whose outputs have different element counts ({shown})"
        return None

    def _outputs(self, root: int) -> list[Value]:
        inside = self.members(root)
        pinned = {id(v) for v in self.program.outputs()}
        return [
            r
            for op in self.group_ops[root]
            for r in op.results
            if isinstance(r.type, DenseTensorType)
            and (id(r) in pinned or any(id(u) not in inside for u in r.users()))
        ]

    def _try_merge(
        self, a: int, b: int, ops: tuple[Operation, Operation], value: Value | None = None
    ) -> bool:
        """Merge groups a and b if that keeps the invariants; whether it did. A refusal
        is recorded for `ops`, the producer and consumer (or, with the `value` both read,
        the siblings) whose merge was tried."""
        if a == b:
            return False
        merged = sorted(self.group_ops[a] + self.group_ops[b], key=lambda op: self.order[id(op)])
        why = check_row_invariant(merged)
        if why is not None:
            self._refuse(ops, f"row invariant: {why}", value=value)
            return False
        through = self._cycle_through(a, b)
        if through is not None:
            self._refuse(ops, "would create a cycle", through, value)
            return False
        self.leader[b] = a
        self.group_ops[a] = merged
        del self.group_ops[b]
        return True

    def _refuse(
        self,
        ops: tuple[Operation, Operation],
        why: str,
        through: Operation | None = None,
        value: Value | None = None,
    ) -> None:
        key = (value is not None, id(ops[0]), id(ops[1]))
        self.refusals[key] = _Refusal(ops, why, through, value)

    def _cycle_through(self, a: int, b: int) -> Operation | None:
        """An op of neither group that some path leaves group a or b through and enters
        the other after (contracting both into one node would then close a cycle), or
        None when there is no such path. Program order is topological, so the search
        stops at ops placed after the last member."""
        inside = self.members(a) | self.members(b)
        last = max(self.order[key] for key in inside)
        frontier = [
            (user, user) for key in inside for user in self._users(key) if id(user) not in inside
        ]
        seen: set[int] = set()
        while frontier:
            op, exit_op = frontier.pop()
            if id(op) in seen or self.order[id(op)] > last:
                continue
            seen.add(id(op))
            for user in self._users(id(op)):
                if id(user) in inside:
                    return exit_op
                frontier.append((user, exit_op))
        return None

    def _users(self, key: int) -> list[Operation]:
        op = self.by_id.get(key)
        if op is None:
            return []
        return [u for r in op.results for u in r.users() if id(u) in self.by_id]

    # ---- explaining the groups ---------------------------------------------------------

    def explain(self, groups: list[Group]) -> list[FusionExplanation]:
        """Why each pair of `groups` (this grouper's result) linked by a value stayed
        apart: every producer -> consumer edge between two groups, then sibling pairs of
        readers of one value; one explanation per group pair and reason."""
        owner = {id(op): group.name for group in groups for op in group.ops}
        index = {group.name: i for i, group in enumerate(groups)}
        found: list[FusionExplanation] = []
        seen: set[tuple[str, str, str]] = set()

        def add(kind: str, ops: tuple[Operation, Operation], value: Value, why: str) -> None:
            if kind == "horizontal" and index[owner[id(ops[0])]] > index[owner[id(ops[1])]]:
                ops = (ops[1], ops[0])
            first, second = owner[id(ops[0])], owner[id(ops[1])]
            key = (first, second, why)
            if key not in seen:
                seen.add(key)
                found.append(FusionExplanation(kind, first, second, value, ops, why))

        for group in groups:
            for op in group.ops:
                for value in op.operand_values():
                    producer = value.defining_op if value is not None else None
                    if producer is None or owner.get(id(producer), group.name) == group.name:
                        continue
                    add("vertical", (producer, op), value, self._edge_reason(producer, op, owner))
        for refusal in self.refusals.values():
            value = refusal.value
            if value is None or not all(id(op) in owner for op in refusal.ops):
                continue
            # both still read it (a reader may read a recomputed copy now), apart
            reads = all(any(v is value for v in op.operand_values()) for op in refusal.ops)
            if reads and owner[id(refusal.ops[0])] != owner[id(refusal.ops[1])]:
                add("horizontal", refusal.ops, value, self._refusal_text(refusal, owner))
        return found

    def _edge_reason(self, producer: Operation, consumer: Operation, owner: dict[int, str]) -> str:
        for op in (producer, consumer):
            if id(op) in self.not_fusible:
                return self.not_fusible[id(op)]
        refusal = self.refusals.get((False, id(producer), id(consumer)))
        if refusal is None:
            return "no merge was tried along this edge"
        return self._refusal_text(refusal, owner)

    @staticmethod
    def _refusal_text(refusal: _Refusal, owner: dict[int, str]) -> str:
        op = refusal.through
        if op is None:
            return refusal.reason
        where = owner.get(id(op))
        named = f"{where} ({op.name})" if where is not None else f"{op.name} ({op.where()})"
        return f"{refusal.reason} through {named}"

    # ---- building the groups -----------------------------------------------------------

    def _groups(self) -> list[Group]:
        self._recompute_shared_cheap_ops()
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
            if kind is GroupKind.FUSED:
                group.reduce_pattern = group_reduce_pattern(ops)
            groups.append(group)
        return groups

    def _recompute_shared_cheap_ops(self) -> None:
        """Recompute rather than pass between kernels: a cheap value that fused ops of
        several groups read is computed again in each other fused group, by copies
        inserted before that group's first reader, so no group exports it for another
        kernel to load (no intermediate leaves a kernel). Cheap (`_recompute_chain`): a
        constant (`pd_op.full`: CSE shares one `full(eps)` between two layer_norms; the
        copy folds into the code as a literal), or an elementwise op together with the
        elementwise ops of its own group it is computed from, reading at most one
        outside value as large as its result (CSE shares `square(x)` between two
        layer_norms of one x: the reader recomputes it from x instead of reading a
        second copy of x's size that the first kernel wrote; a softmax over few long
        rows reads exp(x - max) in its normalizing kernel: it recomputes it from x and
        the max)."""
        for op in list(self.ops):
            if id(op) not in self.fusible:
                continue
            chain = self._recompute_chain(op)
            if chain is None:
                continue
            (result,) = op.results
            home = self.find(id(op))
            readers: dict[int, list[Operation]] = {}
            for user in dict.fromkeys(result.users()):
                if id(user) in self.fusible and self.find(id(user)) != home:
                    readers.setdefault(self.find(id(user)), []).append(user)
            for root, users in readers.items():
                first = min(users, key=lambda u: self.program.block.index_of(u))
                copies: dict[int, Value] = {}
                for original in chain:
                    operands = [copies.get(id(v), v) for v in original.operand_values()]
                    clone = Operation.create(
                        original.name,
                        operands,
                        [original.result(0).type],
                        dict(original.attributes),
                        loc=original.loc,
                    )
                    self.program.block.insert(self.program.block.index_of(first), clone)
                    copies[id(original.result(0))] = clone.result(0)
                    self.ops.append(clone)
                    self.fusible.add(id(clone))
                    self.by_id[id(clone)] = clone
                    self.leader[id(clone)] = root
                    self.group_ops[root].append(clone)
                for user in users:
                    for index, value in enumerate(user.operand_values()):
                        if value is result:
                            user.set_operand(index, copies[id(result)])
            self._erase_unused(chain)
        self.order = {id(op): i for i, op in enumerate(self.program.block)}
        self.ops.sort(key=lambda op: self.order[id(op)])
        for members in self.group_ops.values():
            members.sort(key=lambda op: self.order[id(op)])

    def _erase_unused(self, chain: list[Operation]) -> None:
        """Drops the ops of `chain` that every reader now recomputes (no use left, not a
        program output), last first, so that their group does not compute them for
        nothing."""
        pinned = {id(v) for v in self.program.outputs()}
        for op in reversed(chain):
            if any(id(r) in pinned or not r.use_empty() for r in op.results):
                continue
            root = self.find(id(op))
            self.group_ops[root] = [o for o in self.group_ops[root] if o is not op]
            self.ops = [o for o in self.ops if o is not op]
            self.fusible.discard(id(op))
            op.erase()

    def _recompute_chain(self, op: Operation) -> list[Operation] | None:
        """The ops a reader's group copies to recompute `op`'s value, producers first
        (`op` last), or None when that is not cheaper than passing it: a constant alone;
        an elementwise op with the elementwise ops and constants of its own group it
        reads through (at most MAX_RECOMPUTED), the values they read from outside the
        group at most one as large as the result."""
        if op.num_results != 1 or not isinstance(op.result(0).type, DenseTensorType):
            return None
        if has_trait(op, Trait.CONSTANT):
            return None if op.num_operands else [op]
        size = _numel(op.result(0))
        if size is None or not self._elementwise(op):
            return None
        home = self.find(id(op))
        chain: dict[int, Operation] = {}
        outside: dict[int, Value] = {}
        stack = [op]
        while stack:
            current = stack.pop()
            if id(current) in chain:
                continue
            constant = has_trait(current, Trait.CONSTANT) and not current.num_operands
            if not (constant or self._elementwise(current)) or len(chain) == MAX_RECOMPUTED:
                return None
            chain[id(current)] = current
            for value in current.operand_values():
                if value is None:
                    return None
                producer = value.defining_op
                if producer is not None and id(producer) in self.leader:
                    if self.find(id(producer)) == home:
                        stack.append(producer)  # computed in the group: copied too
                        continue
                outside[id(value)] = value
        if sum(_numel(v) == size for v in outside.values()) > 1:
            return None
        return sorted(chain.values(), key=lambda o: self.program.block.index_of(o))

    @staticmethod
    def _elementwise(op: Operation) -> bool:
        return (
            op.num_results == 1
            and isinstance(op.result(0).type, DenseTensorType)
            and op_pattern_kind(op) is OpPatternKind.ELEMENTWISE
            and not is_reduction(op)
        )

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


def _numel(value: Value) -> int | None:
    shape = static_shape(value)
    if shape is None:
        return None
    count = 1
    for d in shape:
        count *= d
    return count


def _computes(ops: list[Operation]) -> bool:
    """A lone vector op outside any fused group is runtime bookkeeping, not a group."""
    return not all(has_trait(op, Trait.VECTOR) for op in ops)


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
