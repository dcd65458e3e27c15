"""Recompute rather than pass between kernels: the pass after grouping.

Grouping puts an op that several groups read in the first group that merges it, which
then exports the value for the others to load: an intermediate leaving its kernel. For a
cheap value that is a waste, so, once the groups are settled, each other FUSED group that
reads it gets its own copy, inserted before that group's first reader (docs/FUSION.md,
"Recomputed, not passed"). Cheap (`_recompute_chain`): a constant (`pd_op.full`: CSE
shares one `full(eps)` between two layer_norms; the copy folds into the code as a
literal), or an elementwise op together with the elementwise ops and constants of its
own group it is computed from, reading at most one outside value as large as its result
(CSE shares `square(x)` between two layer_norms of one x: the reader recomputes it from x
instead of reading a second copy of x's size that the first kernel wrote; a softmax over
few long rows reads exp(x - max) in its normalizing kernel: it recomputes it from x and
the max). Ops that no reader uses any more are dropped from their group; LIBRARY groups
still read the original.
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.hlir.group import Group, GroupKind, build_groups
from cinn_py.hlir.op_pattern import is_reduction, op_pattern_kind, static_numel
from cinn_py.pir.operation import Block, Operation
from cinn_py.pir.program import Program
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import DenseTensorType
from cinn_py.pir.value import Value

MAX_RECOMPUTED = 8
"""The longest chain of elementwise ops a reader's group recomputes instead of reading
their value from another kernel."""


def recompute_shared_cheap_ops(program: Program, groups: Sequence[Group]) -> list[Group]:
    """`groups` (of `program`, as grouping gives them) after copying each cheap value
    that fused ops of several groups read into every reader group but its own: the
    copies are inserted into `program` and the readers read them; ops no longer used
    are erased. The groups come back re-formed (`build_groups`: inputs, outputs,
    dependency order and names), since a group that read a copied value from another
    no longer waits for it. Linear in the program's ops and uses, but for the block
    positions of the copies (each a scan of the block)."""
    home = {id(op): i for i, g in enumerate(groups) if g.kind is GroupKind.FUSED for op in g.ops}
    """The fused group of each op, copies included, by op id."""
    members = [list(g.ops) for g in groups]
    block = program.block
    pinned = {id(v) for v in program.outputs()}
    for op in list(block):
        if id(op) not in home:
            continue
        chain = _recompute_chain(op, home, block)
        if chain is None:
            continue
        (result,) = op.results
        own = home[id(op)]
        readers: dict[int, list[Operation]] = {}
        for user in dict.fromkeys(result.users()):
            group = home.get(id(user))
            if group is not None and group != own:
                readers.setdefault(group, []).append(user)
        for group, users in readers.items():
            first = min(users, key=block.index_of)
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
                block.insert(block.index_of(first), clone)
                copies[id(original.result(0))] = clone.result(0)
                home[id(clone)] = group
                members[group].append(clone)
            for user in users:
                for index, value in enumerate(user.operand_values()):
                    if value is result:
                        user.set_operand(index, copies[id(result)])
        for unused in reversed(chain):  # last first: its producers may be unused then
            if any(id(r) in pinned or not r.use_empty() for r in unused.results):
                continue
            members[home.pop(id(unused))].remove(unused)
            unused.erase()
    position = {id(op): i for i, op in enumerate(block)}
    units = [
        (group.kind, sorted(ops, key=lambda op: position[id(op)]))
        for group, ops in zip(groups, members, strict=True)
        if not all(_has_trait(op, Trait.VECTOR) for op in ops)  # emptied, or bookkeeping
    ]
    return build_groups(program, units)


def _recompute_chain(op: Operation, home: dict[int, int], block: Block) -> list[Operation] | None:
    """The ops a reader's group copies to recompute `op`'s value, producers first
    (`op` last), or None when that is not cheaper than passing it: a constant alone;
    an elementwise op with the elementwise ops and constants of its own group it
    reads through (at most MAX_RECOMPUTED), the values they read from outside the
    group at most one as large as the result."""
    if op.num_results != 1 or not isinstance(op.result(0).type, DenseTensorType):
        return None
    if _constant(op):
        return [op]
    if _has_trait(op, Trait.CONSTANT):
        return None
    size = static_numel(op.result(0))
    if size is None or not _elementwise(op):
        return None
    own = home[id(op)]
    chain: dict[int, Operation] = {}
    outside: dict[int, Value] = {}
    stack = [op]
    while stack:
        current = stack.pop()
        if id(current) in chain:
            continue
        if not (_constant(current) or _elementwise(current)) or len(chain) == MAX_RECOMPUTED:
            return None
        chain[id(current)] = current
        for value in current.operand_values():
            if value is None:
                return None
            producer = value.defining_op
            if producer is not None and home.get(id(producer)) == own:
                stack.append(producer)  # computed in the group: copied too
                continue
            outside[id(value)] = value
    if sum(static_numel(v) == size for v in outside.values()) > 1:
        return None
    return sorted(chain.values(), key=block.index_of)


def _constant(op: Operation) -> bool:
    return _has_trait(op, Trait.CONSTANT) and not op.num_operands


def _has_trait(op: Operation, trait: Trait) -> bool:
    op_def = op.op_def
    return op_def is not None and op_def.has_trait(trait)


def _elementwise(op: Operation) -> bool:
    return (
        op.num_results == 1
        and isinstance(op.result(0).type, DenseTensorType)
        and op_pattern_kind(op) is OpPatternKind.ELEMENTWISE
        and not is_reduction(op)
    )
