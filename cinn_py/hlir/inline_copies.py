"""How many times an op's lowering writes out the expression of one of its inputs.

Fusion inlines a group's ops into their readers: an op whose lowered element reads an
input element several times (float `maximum`'s NaN handling `x != x ? x : (x > y ? x :
y)` reads x three times; a 5 x 5 pooling window 25 elements; `pow` seven times) holds
that many copies of the input's whole inlined expression. Along a chain the copies
multiply, and so do the lowering's, the scheduler's and codegen's walks, which read
expressions as trees: `grouping` keeps every value under `MAX_INLINED_COPIES` copies a
kernel, and asks this module how many copies each op makes.

The answer comes from the op's own lowering, not from a table: the op lowered alone
(as a group of one, `lower_group`), then for each input buffer the number of paths
from a store to a load of it (each shared subexpression counted once per path, which
is how the later stages see it). It is cached per (op name, attributes, operand and
result types), so a model's repeated layers lower each kind of op once a process.
"""

from __future__ import annotations

from collections import Counter

from cinn_py.hlir.group import GroupKind, build_groups
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering.lower import lower_group
from cinn_py.ir.expr import IrNode, Load
from cinn_py.ir.stmt import Store
from cinn_py.ir.visitor import children, nodes
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program

_COPIES: dict[tuple[object, ...], int] = {}
"""`written_copies` by the op's signature (`_signature`)."""


def written_copies(op: Operation, program: Program, names: NameTable | None = None) -> int:
    """The most times `op`'s lowering writes out one input element's expression for one
    output element (at least 1; 1 where the op does not lower alone)."""
    key = _signature(op)
    found = _COPIES.get(key)
    if found is None:
        found = _COPIES[key] = _measure(op, program, names)
    return found


def _signature(op: Operation) -> tuple[object, ...]:
    attributes = tuple(sorted((name, repr(value)) for name, value in op.attributes.items()))
    operands = tuple(repr(v.type) if v is not None else None for v in op.operand_values())
    results = tuple(repr(r.type) for r in op.results)
    return op.name, attributes, operands, results


def _measure(op: Operation, program: Program, names: NameTable | None) -> int:
    try:
        (group,) = build_groups(program, [(GroupKind.FUSED, [op])])
        func = lower_group(group, names or NameTable(program))
    except Exception:  # a probe: what cannot lower alone counts as 1
        return 1  # (the real lowering of its group reports what is wrong)
    paths: dict[int, Counter[str]] = {}
    most = 1
    for node in nodes(func.body):
        if isinstance(node, Store):
            counts = _load_paths(node.value, paths)
            if counts:
                most = max(most, max(counts.values()))
    return most


def _load_paths(node: IrNode, paths: dict[int, Counter[str]]) -> Counter[str]:
    """How many paths lead from `node` to a load of each buffer (memoized by node)."""
    found = paths.get(id(node))
    if found is not None:
        return found
    counts: Counter[str] = Counter()
    if isinstance(node, Load):
        counts[node.tensor.name] += 1
    for child in children(node):
        counts.update(_load_paths(child, paths))
    paths[id(node)] = counts
    return counts
