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

- No cycle (`_cycle_through`): a path that leaves the group, runs through another op
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
- Inlined copies stay few: a group's ops inline into their readers, so a value read
  twice inside the group (silu's `x / (1 + exp(-x))`) is written out twice in the
  kernel, and an op that reads several elements of its input for one output element
  (a pooling window's kh * kw taps, bilinear interpolation's 4, float maximum's NaN
  test 3: `inline_copies.written_copies`, measured from the op's own lowering)
  once per tap. Along a chain the copies multiply: 16 chained silus wrote x out 65,536
  times (3.5 MB of CUDA C, 73 s to compile), four chained pools 67,500 times an output
  (a fuzzer timeout). No value's expression may appear more than `MAX_INLINED_COPIES`
  times in the group's stores (`_inlined_copies`: a reduction's operands appear once,
  in its body, however many read its result); past it the chain splits into kernels
  that pass the value through memory.
- argmax / argmin stay simple: a group holding one has no other reduction and nothing in
  the group reads a reduction result (their index-and-value pairs have no cross-thread
  reduction yet, so they keep the serial per-output schedule; the contract asks only
  that argmax / argmin results have no in-group consumers, this is a little stricter).

The merging is an analysis (`merge_groups`: the program is not changed) in near-linear
time (`_Grouper`: static reachability bitsets over the ops in program order for cycle
checks, refusals remembered per pair of group states, sibling candidates only among the
readers of one value that no path through a library op ties together; docs/FUSION.md,
"How fast"). Then a pass (`recompute_cheap.recompute_shared_cheap_ops`) copies each
cheap op that fused ops of several groups read (a `pd_op.full` CSE shared between two
composites, an elementwise op of outside values) into each other group rather than pass
it between kernels. `group_program` runs both.

Groups are returned in dependency order (`group.dependency_order`), each with its
`reduce_pattern`. This module is the one place that decides; docs/FUSION.md has the
worked softmax example.
`explain_grouping` also returns why each pair of groups that share an edge (a value one
computes and the other reads, or a value both read) stayed apart: the rule that refused
their merge, as data (`FusionExplanation`), for `cinn-py groups --explain`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from cinn_py.hlir import op_pattern
from cinn_py.hlir.group import (
    Group,
    GroupKind,
    build_groups,
    check_group_ops,
    group_boundary,
    group_reduce_pattern,
)
from cinn_py.hlir.inline_copies import written_copies
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_pattern import (
    OpPatternKind,
    ReducePattern,
    op_pattern_kind,
    reduce_pattern,
    static_numel,
    static_shape,
)
from cinn_py.hlir.recompute_cheap import recompute_shared_cheap_ops
from cinn_py.ir.group_schedule.tactics import row_schedule_fits
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait
from cinn_py.pir.types import DenseTensorType
from cinn_py.pir.value import Value

Fusible = Callable[[Operation], bool]

MAX_INLINED_COPIES = 169
"""The most times one value's expression may be written out in a group's stores: 13 x
13, the largest single window the pooling lowering writes out
(`ops.pool.MAX_UNROLLED_TAPS`); 3 x 3 pooling after 3 x 3 fuses (81 copies), 5 x 5
after 5 x 5 (625) does not, nor an eighth chained silu (256)."""

_ROW_OPS = frozenset({OpPatternKind.ELEMENTWISE, OpPatternKind.BROADCAST})
"""Kinds that may compute a reduction-dependent value (plus reshapes, row to row)."""


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
    merge_tries: int = 0
    """How many group pairs the merging examined (each a check, a remembered refusal or
    a sibling pair skipped for a path through a library op): grouping's work, about
    linear in the program's ops and uses."""


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


def group_program(
    program: Program, is_fusible: Fusible | None = None, target: TargetInfo | None = None
) -> list[Group]:
    """The program's groups in an order where every group follows the groups it reads
    from. `is_fusible` defaults to `op_lowering.can_lower`; `target` (what the groups
    are scheduled for, whose tactics the merging asks) to `TargetInfo.cuda()`."""
    return explain_grouping(program, is_fusible, target).groups


def explain_grouping(
    program: Program, is_fusible: Fusible | None = None, target: TargetInfo | None = None
) -> Grouping:
    """`group_program`'s groups, with a `FusionExplanation` for each pair of groups that
    a value links (one computes it and the other reads it, or both read it): the rule
    that refused their merge, in group order. The steps: the merging (an analysis, the
    program unchanged), the recompute pass (`recompute_cheap`: copies of cheap shared
    producers into their readers' groups), the explanations of the final groups."""
    grouper = _Grouper(program, _default_fusible(is_fusible), target)
    groups = recompute_shared_cheap_ops(program, grouper.run())
    return Grouping(groups, grouper.explain(groups), grouper.tries)


def merge_groups(
    program: Program, is_fusible: Fusible | None = None, target: TargetInfo | None = None
) -> list[Group]:
    """The groups the merging makes, in dependency order, before the recompute pass:
    an analysis that leaves `program` as it is (`group_program` runs the pass after)."""
    return _Grouper(program, _default_fusible(is_fusible), target).run()


def _default_fusible(is_fusible: Fusible | None) -> Fusible:
    if is_fusible is not None:
        return is_fusible
    from cinn_py.hlir.op_lowering import can_lower

    return can_lower


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
    group.inputs, group.outputs = group_boundary(ops, {id(v) for v in program.outputs()}, kind)
    if kind is GroupKind.FUSED:
        group.reduce_pattern = group_reduce_pattern(ops)
    return group


def check_row_invariant(ops: Iterable[Operation], target: TargetInfo | None = None) -> str | None:
    """Why the ops cannot form one group under the row invariant (see the module
    docstring), or None when they can, for `target` (default `TargetInfo.cuda()`).
    Cycles are not checked here."""
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
    split = splits_long_rows(reductions[0], ops, target)
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


def splits_long_rows(
    reduction: Operation, ops: Iterable[Operation] = (), target: TargetInfo | None = None
) -> bool:
    """Whether the row tactic does not suit the rows of `reduction` on `target` (default
    `TargetInfo.cuda()`; `tactics.row_schedule_fits`: rows few and long, measured in the
    narrowest full-shaped value among `ops` and its input: a float16 x cast to float32
    is cached as float16): then nothing full-shaped that reads a reduction shares its
    group (`_long_row_refusal`), so that each reduction takes the grid tactic (many
    thread blocks per row) and the full-shaped consumers a flat kernel of their own.
    One block per row would use a few SMs, and would read the row once per pass anyway;
    split, the passes read it as often, with the whole GPU. argmax / argmin and column
    patterns never split: the grid tactic takes neither."""
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
    return not row_schedule_fits(pattern, itemsize, target or TargetInfo.cuda())


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
    """The merging, over the program's ops as numbered in program order (a topological
    order: users come after what they read). Groups are union-find sets of op numbers,
    each with a bitset of its members. Reachability is static, since merging changes no
    op: `reach[i]` is the bitset of ops some path from op i reaches, `through[i]` those it
    reaches through an op that fuses with nothing (that op never joins a group, so such
    a path stays outside any merge: a permanent cycle). A merge check costs the size of
    the two groups; a refused check is remembered for the two groups as they are, so
    retrying an unchanged pair costs nothing; sibling candidates are the readers of a
    shared value that no path through a library op ties to the first reader's group.
    """

    def __init__(
        self, program: Program, is_fusible: Fusible, target: TargetInfo | None = None
    ) -> None:
        self.program = program
        self.target = target or TargetInfo.cuda()
        """What the groups are scheduled for: the row invariant asks its tactics."""
        self.ops = [op for op in program.block if not has_trait(op, Trait.GLUE)]
        self.index = {id(op): i for i, op in enumerate(self.ops)}
        self.not_fusible: dict[int, str] = {}
        """Why each op that fuses with nothing does not (a library op, ...), by op id."""
        for op in self.ops:
            why = self._fusible_refusal(op, is_fusible)
            if why is not None:
                self.not_fusible[id(op)] = why
        self.fusible = [id(op) not in self.not_fusible for op in self.ops]
        self.pinned = {id(v) for v in program.outputs()}
        self.leader = list(range(len(self.ops)))
        self.group_ops: dict[int, list[Operation]] = {i: [op] for i, op in enumerate(self.ops)}
        """Members of each group, by its root, in program order."""
        self.mask = {i: 1 << i for i in range(len(self.ops))}
        self.reduces = [is_reduction(op) for op in self.ops]
        self.reductions = {i: [op] for i, op in enumerate(self.ops) if self.reduces[i]}
        """The reductions of each group that has some, in program order, by root."""
        self._copies: dict[int, int] = {}
        """`_written_copies` by op number."""
        self._names: NameTable | None = None
        self.refused: dict[tuple[int, int, int, int, bool], tuple[str, Operation | None]] = {}
        """Refused merges by (root, size, root, size, horizontal): why, and the op a cycle
        would pass. Groups only grow, so a root and its size name one set of ops."""
        self.tries = 0
        """Group pairs examined (memo hits and pruned siblings included): the measure of
        the merging's work that a test holds linear."""
        self.users = [self._users(op) for op in self.ops]
        self.values = [
            ([id(v) for v in op.operand_values() if v is not None], [id(r) for r in op.results])
            for op in self.ops
        ]
        """Each op's operand and result value ids (`_inlined_copies` reads them often)."""
        self.stored = [
            not self.users[i] or any(id(r) in self.pinned for r in op.results)
            for i, op in enumerate(self.ops)
        ]
        """Whether each op's result is stored whatever the group: a program output, or a
        value nothing reads."""
        self.producers = [
            [
                self.index[id(v.defining_op)]
                for v in op.operand_values()
                if v is not None
                and v.defining_op is not None
                and id(v.defining_op) in self.index
                and self.fusible[self.index[id(v.defining_op)]]
            ]
            for op in self.ops
        ]
        """Fusible producers of each op, once per operand, in operand order."""
        self.reach, self.through = self._reachability()
        self.span = [r | (1 << i) for i, r in enumerate(self.reach)]
        """Each op and what it reaches."""
        self.span_of = dict(enumerate(self.span))
        """By group root: its members and what any of them reaches (a group runs as one
        kernel, so whatever reaches one member reaches all that the group reaches)."""
        self.multi_bits = 0
        """The members of every group of more than one op (where a path can jump from
        one member to another)."""
        self.below = dict(enumerate(self.through))
        """Ops reached from each group through an op that never fuses, by root."""
        self.siblings = self._siblings()

    def _users(self, op: Operation) -> list[int]:
        found = dict.fromkeys(
            self.index[id(u)] for r in op.results for u in r.users() if id(u) in self.index
        )
        return list(found)

    def _reachability(self) -> tuple[list[int], list[int]]:
        reach = [0] * len(self.ops)
        through = [0] * len(self.ops)
        for i in reversed(range(len(self.ops))):
            r = t = 0
            for user in self.users[i]:
                r |= (1 << user) | reach[user]
                t |= through[user] if self.fusible[user] else reach[user]
            reach[i], through[i] = r, t
        return reach, through

    def _siblings(self) -> list[tuple[Value, list[int]]]:
        """Each value (in program order) that several fusible ops read, with its readers
        in use order: the candidates for horizontal merges."""
        found = []
        for op in self.program.block:
            for value in op.results:
                readers = [
                    self.index[id(u)]
                    for u in dict.fromkeys(value.users())
                    if id(u) in self.index and self.fusible[self.index[id(u)]]
                ]
                if len(readers) > 1:
                    found.append((value, readers))
        return found

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

    def find(self, i: int) -> int:
        leader = self.leader
        while leader[i] != i:
            leader[i] = leader[leader[i]]
            i = leader[i]
        return i

    def run(self) -> list[Group]:
        """The groups (before the recompute pass), in dependency order."""
        changed = True
        while changed:
            changed = self._vertical()
            changed = self._horizontal() or changed
        units = [
            (GroupKind.FUSED if self.fusible[root] else GroupKind.LIBRARY, ops)
            for root, ops in sorted(self.group_ops.items())
            if _computes(ops)
        ]
        return build_groups(self.program, units)

    def _vertical(self) -> bool:
        """Merge each fusible op's group with its fusible producers' groups, in program
        order, until nothing more merges."""
        merged_any = False
        changed = True
        while changed:
            changed = False
            for consumer, producers in enumerate(self.producers):
                if not self.fusible[consumer]:
                    continue
                for producer in producers:
                    if self._try_merge(self.find(producer), self.find(consumer), False):
                        changed = merged_any = True
        return merged_any

    def _horizontal(self) -> bool:
        """Merge sibling groups that read one value (see the module docstring): each
        reader's group with the groups of the readers after it, in use order, but for
        those a path through a library op ties to it (they could never merge)."""
        merged_any = False
        for _, readers in self.siblings:
            rank = {op: k for k, op in enumerate(readers)}
            later = [0] * len(readers)  # bitset of the readers after each one
            for k in range(len(readers) - 2, -1, -1):
                later[k] = later[k + 1] | (1 << readers[k + 1])
            for k, first in enumerate(readers[:-1]):
                a = self.find(first)
                left = later[k] & ~(self.mask[a] | self.below[a])
                candidates = []
                while left:
                    bit = left & -left
                    candidates.append(bit.bit_length() - 1)
                    left ^= bit
                for second in sorted(candidates, key=rank.__getitem__):
                    a, b = self.find(first), self.find(second)
                    if a != b and self._tied(a, b):
                        self.tries += 1
                    elif self._try_merge(a, b, True):
                        merged_any = True
        return merged_any

    def _tied(self, a: int, b: int) -> bool:
        """Whether a path through an op that fuses with nothing links groups a and b:
        merging them would close a cycle, now and after any other merge."""
        return bool(self.below[a] & self.mask[b] or self.below[b] & self.mask[a])

    def _try_merge(self, a: int, b: int, horizontal: bool) -> bool:
        """Merge groups a and b (a's root stays) if that keeps the invariants; whether it
        did. Siblings (`horizontal`) are first checked by `_sibling_refusal`."""
        if a == b:
            return False
        self.tries += 1
        key = (a, len(self.group_ops[a]), b, len(self.group_ops[b]), horizontal)
        if key in self.refused:
            return False
        why = self._refusal(a, b, horizontal)
        if why is not None:
            self.refused[key] = why
            return False
        self.leader[b] = a
        self.group_ops[a] = self._merged(a, b)
        del self.group_ops[b]
        self.mask[a] |= self.mask.pop(b)
        self.below[a] |= self.below.pop(b)
        self.span_of[a] |= self.span_of.pop(b)
        self.multi_bits |= self.mask[a]
        if b in self.reductions:
            merged = self.reductions.get(a, []) + self.reductions.pop(b)
            self.reductions[a] = sorted(merged, key=lambda op: self.index[id(op)])
        return True

    def _merged(self, a: int, b: int) -> list[Operation]:
        ops = self.group_ops[a] + self.group_ops[b]
        return sorted(ops, key=lambda op: self.index[id(op)])

    def _refusal(self, a: int, b: int, horizontal: bool) -> tuple[str, Operation | None] | None:
        """Why groups a and b may not merge (and the op a cycle passes), or None."""
        if horizontal:
            why = self._sibling_refusal(a, b)
            if why is not None:
                return why, None
        if a in self.reductions or b in self.reductions:
            why = check_row_invariant(self._merged(a, b), self.target)
            if why is not None:
                return f"row invariant: {why}", None
        copies, op = self._inlined_copies(a, b)
        if copies > MAX_INLINED_COPIES:
            return (
                f"inlined copies: the merged kernel would write out a value that {op.name} "
                f"({op.where()}) computes or reads {copies} times (at most "
                f"{MAX_INLINED_COPIES}: chained windows and values read twice multiply)",
                None,
            )
        through = self._cycle_through(a, b)
        if through is not None:
            return "would create a cycle", through
        return None

    def _inlined_copies(self, a: int, b: int) -> tuple[int, Operation]:
        """How many times the merged group's kernel would write out the expression of
        its most copied value (a member's result, or a group input's load), and the op
        that computes or first reads it: a member's result once where the group stores
        it (an output), plus, for each read inside the group, the reader's own copies
        times the copies its lowering writes (`_written_copies`); a reduction's operand
        once a reduction (its body: the result is a register its readers share). Readers
        come after what they read, so one pass backwards over the members."""
        inside = self.mask[a] | self.mask[b]
        reads: dict[int, int] = {}
        """Copies of each value (by id) the members read, so far."""
        reader: dict[int, Operation] = {}
        """The first member (in program order) that reads each value."""
        worst, most = self.ops[a], 0
        for op in reversed(self._merged(a, b)):
            i = self.index[id(op)]
            operands, results = self.values[i]
            stored = self.stored[i] or any(not inside >> user & 1 for user in self.users[i])
            copies = sum(reads.pop(r, 0) for r in results) + stored
            if copies > most:
                worst, most = op, copies
            each = self._written_copies(i) * (1 if self.reduces[i] else copies)
            for value in operands:
                reads[value] = reads.get(value, 0) + each
                reader[value] = op
        for value, copies in reads.items():  # what is left: the group's inputs
            if copies > most:
                worst, most = reader[value], copies
        return most, worst

    def _written_copies(self, i: int) -> int:
        """How many copies of an input's expression op i's lowering writes out an
        output element (`inline_copies.written_copies`; ops a merge check never reads
        through are not lowered)."""
        found = self._copies.get(i)
        if found is None:
            if self._names is None:
                self._names = NameTable(self.program)
            found = self._copies[i] = written_copies(self.ops[i], self.program, self._names)
        return found

    def _sibling_refusal(self, a: int, b: int) -> str | None:
        """Why sibling groups a and b do not fuse side by side, or None when they may."""
        reduces_a, reduces_b = a in self.reductions, b in self.reductions
        if reduces_a != reduces_b:
            return "horizontal fusion needs both siblings or neither to reduce"
        if reduces_a:
            pa = reduce_pattern(self.reductions[a][0])
            pb = reduce_pattern(self.reductions[b][0])
            if pa is None or pa != pb:
                return f"sibling reductions of different patterns ({pa} vs {pb})"
            return None
        counts = [{static_numel(v) for v in self._outputs(root)} for root in (a, b)]
        if None in counts[0] | counts[1]:
            return "a sibling has an output of unknown element count"
        if len(counts[0] | counts[1]) != 1:
            shown = " vs ".join(", ".join(map(str, sorted(c))) for c in counts)
            return f"siblings whose outputs have different element counts ({shown})"
        return None

    def _outputs(self, root: int) -> list[Value]:
        inside = {id(op) for op in self.group_ops[root]}
        return [
            r
            for op in self.group_ops[root]
            for r in op.results
            if isinstance(r.type, DenseTensorType)
            and (id(r) in self.pinned or any(id(u) not in inside for u in r.users()))
        ]

    def _cycle_through(self, a: int, b: int) -> Operation | None:
        """The first op (in program order) of neither group that a path leaves group a
        or b through and enters the other after (contracting both into one node would
        then close a cycle), or None when there is no such path: an exit whose reach
        meets the two groups' members."""
        exits = {
            user
            for root in (a, b)
            for op in self.group_ops[root]
            for user in self.users[self.index[id(op)]]
            if self.find(user) not in (a, b)
        }
        inside = self.mask[a] | self.mask[b]
        for user in sorted(exits):
            if self.reach[user] & inside:
                return self.ops[user]
        if not exits:
            return None
        # A path may also enter another group at one member and leave it from another
        # (the group runs as one kernel), which reachability between ops does not see:
        # grow what the exits reach by every group it touches, to a fixed point.
        reached = 0
        for user in exits:
            reached |= self.span[user]
        while True:
            touched = reached & self.multi_bits & ~inside
            grown = reached
            while touched:
                root = self.find((touched & -touched).bit_length() - 1)
                touched &= ~self.mask[root]
                if self.mask[root] & ~reached:
                    grown |= self.span_of[root]
            if grown & inside:
                return self.ops[min(exits)]
            if grown == reached:
                return None
            reached = grown

    # ---- explaining the groups ---------------------------------------------------------

    def explain(self, groups: list[Group]) -> list[FusionExplanation]:
        """Why each pair of `groups` (the final groups, after the recompute pass) linked
        by a value stayed apart: every producer -> consumer edge between two groups, then
        sibling pairs of readers of one value; one explanation per group pair and
        reason. The reason is the merge check of the two groups as grouping left them,
        which its last round made (and remembered) or, for siblings it skipped, the
        cycle through a library op."""
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
        pairs: dict[tuple[int, int], Value] = {}
        for value, readers in self.siblings:
            still = [
                r
                for r in readers
                if id(self.ops[r]) in owner
                and any(v is value for v in self.ops[r].operand_values())
            ]  # a reader may read a recomputed copy now
            for k, first in enumerate(still):
                for second in still[k + 1 :]:
                    if owner[id(self.ops[first])] != owner[id(self.ops[second])]:
                        pairs[first, second] = value
        for (first, second), value in pairs.items():
            why = self._sibling_reason(first, second, owner)
            add("horizontal", (self.ops[first], self.ops[second]), value, why)
        return found

    def _edge_reason(self, producer: Operation, consumer: Operation, owner: dict[int, str]) -> str:
        for op in (producer, consumer):
            if id(op) in self.not_fusible:
                return self.not_fusible[id(op)]
        if id(producer) not in self.index or id(consumer) not in self.index:
            return "no merge was tried along this edge"  # a recomputed copy
        a, b = self.find(self.index[id(producer)]), self.find(self.index[id(consumer)])
        refusal = self.refused.get((a, len(self.group_ops[a]), b, len(self.group_ops[b]), False))
        if refusal is None:
            return "no merge was tried along this edge"
        return _refusal_text(*refusal, owner)

    def _sibling_reason(self, first: int, second: int, owner: dict[int, str]) -> str:
        a, b = self.find(first), self.find(second)
        if self._tied(a, b):
            return _refusal_text("would create a cycle", self._cycle_through(a, b), owner)
        refusal = self.refused.get((a, len(self.group_ops[a]), b, len(self.group_ops[b]), True))
        if refusal is None:
            return "no merge was tried between these siblings"
        return _refusal_text(*refusal, owner)


def _refusal_text(reason: str, through: Operation | None, owner: dict[int, str]) -> str:
    if through is None:
        return reason
    where = owner.get(id(through))
    named = (
        f"{where} ({through.name})" if where is not None else f"{through.name} ({through.where()})"
    )
    return f"{reason} through {named}"


def _computes(ops: list[Operation]) -> bool:
    """A lone vector op outside any fused group is runtime bookkeeping, not a group."""
    return not all(has_trait(op, Trait.VECTOR) for op in ops)
