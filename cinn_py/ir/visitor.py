"""Walking the AST: `nodes` (every node once, for the collectors), a Visitor, a Mutator
that shares unchanged subtrees, structural equality (exact, or up to a consistent
renaming: `canonical_key`), and the renaming itself (`rename`).

Dispatch is by class name along the node's class hierarchy: `visit_Add(self, node)`
handles Add; a node kind without a method of its own goes to the method of its nearest
base class that has one (`visit_Reduction` serves both `Reduce` and `ArgReduce` where
they are handled alike; `visit_Reduce` alone leaves ArgReduce to the next), and one
with none to `generic_visit`, which walks its children (the IrNode values of its
`_fields`, and the IrNodes inside tuple fields). The method is looked up once per
(visitor class, node class) and cached, so a `visit_<Node>` method must be on the class
before the class first visits that kind (in its body, or set just after it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from cinn_py.ir.expr import Buffer, IrNode, Tensor, Var
from cinn_py.ir.stmt import LoweredFunc, ScheduleBlock


def children(node: IrNode) -> list[IrNode]:
    """The direct child nodes of `node`, in field order."""
    out: list[IrNode] = []
    for value in node.field_values():
        if isinstance(value, IrNode):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(v for v in value if isinstance(v, IrNode))
    return out


def nodes(root: IrNode, prune: Callable[[IrNode], bool] | None = None) -> Iterator[IrNode]:
    """Every node under `root` (itself first), pre-order in field order, each node of a
    shared DAG once (an expression that reads one Load twice holds it once). `prune`:
    below a node it is true of, nothing more (the node itself is still given). The one
    walk of the collectors: `[n for n in nodes(x) if isinstance(n, Load)]`, not a
    Visitor subclass each."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if prune is None or not prune(node):
            stack.extend(reversed(children(node)))


_METHODS: dict[type, dict[type, Callable[[Any, Any], Any]]] = {}
"""Visitor class -> node class -> the function (unbound) that visits it: `_method`'s
answers, kept."""


def _method(cls: type, kind: type) -> Callable[[Any, Any], Any]:
    """The function with which a `cls` visitor visits a `kind` node: `visit_<name>` of
    the first class in `kind`'s MRO that `cls` has a method for, else `generic_visit`;
    looked up once per pair."""
    for base in kind.__mro__:
        found = getattr(cls, "visit_" + base.__name__, None)
        if found is not None:
            break
    else:
        found = cls.generic_visit  # type: ignore[attr-defined]
    _METHODS.setdefault(cls, {})[kind] = found
    return found


class Visitor:
    """Calls `visit_<Node>` for each node (or that of its nearest base class with one:
    `visit_Reduction`); the default visits the children."""

    def visit(self, node: IrNode) -> Any:
        try:
            method = _METHODS[type(self)][type(node)]
        except KeyError:
            method = _method(type(self), type(node))
        return method(self, node)

    def generic_visit(self, node: IrNode) -> Any:
        for child in children(node):
            self.visit(child)
        return None


class Mutator:
    """Rewrites a tree: `visit_<Node>` returns the replacement node (dispatch as
    `Visitor`'s, along the node's class hierarchy).

    The default rebuilds a node (through its constructor, so the result is checked
    again) only when one of its children changed, and returns the very same object
    otherwise, so unchanged subtrees are shared and `is` tells whether anything
    changed.
    """

    def visit(self, node: IrNode) -> IrNode:
        try:
            method = _METHODS[type(self)][type(node)]
        except KeyError:
            method = _method(type(self), type(node))
        return method(self, node)

    def generic_visit(self, node: IrNode) -> IrNode:
        old = node.field_values()
        new = tuple(self._field(v) for v in old)
        if all(a is b for a, b in zip(old, new, strict=True)):
            return node
        return type(node)(*new)

    def _field(self, value: Any) -> Any:
        if isinstance(value, IrNode):
            return self.visit(value)
        if isinstance(value, tuple):
            items = tuple(self.visit(v) if isinstance(v, IrNode) else v for v in value)
            return value if all(a is b for a, b in zip(value, items, strict=True)) else items
        return value


def structural_key(node: IrNode) -> tuple[Any, ...]:
    """A hashable value equal for structurally equal trees (Vars compare by name,
    dtype and bounds, as CINN compares them by name)."""
    key = node._key
    if key is None:
        key = (type(node).__name__, *(_key_of(v) for v in node.field_values()))
        object.__setattr__(node, "_key", key)
    return key


def _key_of(value: Any) -> Any:
    if isinstance(value, IrNode):
        return structural_key(value)
    if isinstance(value, tuple):
        return tuple(_key_of(v) for v in value)
    if isinstance(value, float):
        return ("float", value.hex())
    return value


def structural_equal(a: IrNode, b: IrNode) -> bool:
    return a is b or structural_key(a) == structural_key(b)


def structural_hash(node: IrNode) -> int:
    return hash(structural_key(node))


NAMED = (Buffer, Tensor, Var, ScheduleBlock, LoweredFunc)
"""The nodes whose `name` is an identifier the tree binds (not a callee's name, not a
string constant): what `canonical_key` renames."""


def canonical_key(node: IrNode) -> tuple[Any, ...]:
    """`structural_key` up to a consistent renaming: each name a `NAMED` node carries is
    replaced by the order of its first appearance in a walk of the fields, one numbering
    for all of them. So two trees get one key exactly when a one-to-one renaming makes
    them structurally equal (two groups' kernels that differ only in their buffers',
    loop variables' and function's names), while dtypes, shapes, extents, constants,
    callees, argument order and roles and the schedule (loops, bindings, temps) all
    count. Shared subtrees are keyed once per walk: every name in one was numbered at
    its first visit, so a later visit would give the same key."""
    return canonical_form(node)[0]


def canonical_form(node: IrNode) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    """`canonical_key(node)` and the names it numbered, in their numbering order: two
    trees with one key are equal once the i-th name of one is renamed to the i-th name
    of the other (`rename`)."""
    names: dict[str, int] = {}
    memo: dict[int, tuple[Any, ...]] = {}

    def key_of(value: Any) -> Any:
        if isinstance(value, IrNode):
            found = memo.get(id(value))
            if found is None:
                rename = isinstance(value, NAMED)
                found = (type(value).__name__,) + tuple(
                    names.setdefault(item, len(names))
                    if rename and field == "name"
                    else key_of(item)
                    for field, item in zip(value._fields, value.field_values(), strict=True)
                )
                memo[id(value)] = found
            return found
        if isinstance(value, tuple):
            return tuple(key_of(v) for v in value)
        return _key_of(value)

    return key_of(node), tuple(names)


def rename(node: IrNode, new_name: Callable[[str], str]) -> IrNode:
    """`node` with the name of every `NAMED` node in it replaced by `new_name(name)`: the
    nodes whose name changed, and those above them, rebuilt (through their
    constructors), the rest shared; a node met twice (one Buffer read in many places)
    is rebuilt once, so the result shares exactly what `node` shares. `new_name` must be
    one-to-one on the names of `node` for the result to equal it up to names."""
    memo: dict[int, IrNode] = {}

    def field(value: Any) -> Any:
        if isinstance(value, IrNode):
            return visit(value)
        if isinstance(value, tuple):
            items = tuple(field(v) for v in value)
            return value if all(a is b for a, b in zip(value, items, strict=True)) else items
        return value

    def visit(value: IrNode) -> IrNode:
        found = memo.get(id(value))
        if found is not None:
            return found
        named = isinstance(value, NAMED)
        new = []
        changed = False
        for attr in value._fields:
            item = getattr(value, attr)
            out = new_name(item) if named and attr == "name" else field(item)
            changed = changed or (out is not item and out != item)
            new.append(out)
        found = type(value)(*new) if changed else value
        memo[id(value)] = found
        return found

    return visit(node)
