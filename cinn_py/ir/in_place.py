"""Which outputs of a kernel may take an input's bytes: the in-place pairs of a LoweredFunc.

The memory plan (`runtime.memory_plan`) may give an output the very bytes of an input
that dies at the kernel's launch, as XLA's `CanShareOperandBufferWithUser` lets an
elementwise fusion write over its operand. That is only safe when no thread can read
an element of the input after some thread has written the output over it. This module
proves it from the scheduled function itself (after every schedule primitive, the
guards and the launch configuration), not from what the group was meant to be, for an
(input buffer X, output buffer Y) pair when all of these hold:

    buffers       X is an INPUT and Y an OUTPUT argument, both global, with the same
                  shape (constant, or the same expression of symbolic dims: isl decides
                  their products at the signature being compiled, `IndexDomain` taking
                  the dims as constants inside `ir.dim_values.bound_dims`) and element
                  size (so equal flat indices are the same
                  bytes); the function touches X only by Loads (no Store, no other node
                  naming it) and writes Y by exactly one Store
    same element  every Load of X sits in the same loop nest as Y's Store (the same
                  occurrences of the same loops), comes before it in program order (in
                  its value, or in an earlier statement of that nest), and reads at the
                  Store's own indices, both written in the loop variables alone once the
                  block iter vars are replaced by the values they are bound to
    one writer    the Store's flat index is injective over the loop nest's box (isl:
                  two different points of the box never give the same index), so each
                  element of Y is written by exactly one iteration

Then element k of X is read only by the iteration that writes Y[k] (any iteration that
reads X[k] has the Store's index k, and only one iteration does), and that iteration
reads it before it writes: threads and loop iterations may run in any order, vectors
load all lanes before they store. Loops over the box without its guards cover at least
every iteration that runs, so injectivity over the box is enough. Anything the proof
cannot read (a product of symbolic dims in an index, an index through a Let, a non-affine index, a
reduction's axis, a shared tile) leaves the pair out: conservative, never unsafe.

Codegen declares the two parameters of a pair without `__restrict__` (they may be the
same memory), and the runtime passes the pairs to the memory plan as variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count

from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.isl_domain import IndexDomain
from cinn_py.ir.schedule.analysis import storage_name, substitute
from cinn_py.ir.visitor import children, structural_key
from cinn_py.pir.dtypes import DataType


@dataclass(frozen=True)
class _Context:
    """Where a statement runs: the loop occurrences around it (outermost first, each
    numbered so that one For object met twice is two loops), the conditions of the
    `if`s that hold there, and the block iter vars' values, all in loop variables."""

    loops: tuple[tuple[int, s.For], ...] = ()
    guards: tuple[e.Expr, ...] = ()
    bindings: tuple[tuple[str, e.Expr], ...] = ()

    def resolve(self, x: e.Expr) -> e.Expr:
        return substitute(x, dict(self.bindings)) if self.bindings else x


@dataclass(frozen=True)
class _Access:
    """One Load or Store as it runs: the buffer, the indices in loop variables, its
    context and its place in program order."""

    buffer: str
    store: bool
    indices: tuple[e.Expr, ...]
    context: _Context
    order: int


class _Accesses:
    """Every Load and Store of a function with its context, and the buffers some other
    node names (a semaphore): those are never paired."""

    def __init__(self, func: s.LoweredFunc) -> None:
        self.accesses: list[_Access] = []
        self.other: set[str] = set()
        self._ticks = count()
        self._visit(func.body, _Context())

    def _visit(self, node: e.IrNode, at: _Context) -> None:
        if isinstance(node, s.For):
            self._visit_all((node.min, node.extent), at)
            loops = (*at.loops, (next(self._ticks), node))
            self._visit(node.body, _Context(loops, at.guards, at.bindings))
        elif isinstance(node, s.IfThenElse):
            self._visit(node.condition, at)
            condition = at.resolve(node.condition)
            inner = _Context(at.loops, (*at.guards, condition), at.bindings)
            self._visit(node.true_case, inner)
            if node.false_case is not None:
                inner = _Context(at.loops, (*at.guards, e.Not(condition)), at.bindings)
                self._visit(node.false_case, inner)
        elif isinstance(node, s.ScheduleBlockRealize):
            self._visit_all(node.iter_values, at)
            block = node.schedule_block
            bound = dict(at.bindings)
            for var, value in zip(block.iter_vars, node.iter_values, strict=True):
                bound[var.name] = at.resolve(value)
            # read_buffers / write_buffers only describe the block: not visited
            self._visit(block.body, _Context(at.loops, at.guards, tuple(bound.items())))
        elif isinstance(node, (s.Store, e.Load)):
            if isinstance(node, s.Store):
                self._visit(node.value, at)
            self._visit_all(node.indices, at)
            indices = tuple(at.resolve(i) for i in node.indices)
            self.accesses.append(
                _Access(
                    storage_name(node.tensor),
                    isinstance(node, s.Store),
                    indices,
                    at,
                    next(self._ticks),
                )
            )
        elif isinstance(node, (e.Buffer, e.Tensor)):
            self.other.add(storage_name(node))
        else:
            self._visit_all(children(node), at)

    def _visit_all(self, nodes, at: _Context) -> None:
        for node in nodes:
            self._visit(node, at)


def in_place_pairs(func: s.LoweredFunc) -> list[tuple[str, str]]:
    """The (input, output) argument names of `func` whose output may take the input's
    bytes (see the module doc); each input and each output in at most one pair, in
    argument order."""
    inputs = [a.value for a in func.args if a.io is s.ArgIO.INPUT and _global(a.value)]
    outputs = [a.value for a in func.args if a.io is s.ArgIO.OUTPUT and _global(a.value)]
    if not inputs or not outputs:
        return []
    found = _Accesses(func)
    by_buffer: dict[str, list[_Access]] = {}
    for access in found.accesses:
        by_buffer.setdefault(access.buffer, []).append(access)
    pairs: list[tuple[str, str]] = []
    taken: set[str] = set()
    for x in inputs:
        for y in outputs:
            if y.name not in taken and _may_share(x, y, by_buffer, found.other):
                pairs.append((x.name, y.name))
                taken.add(y.name)
                break
    return pairs


def _global(value: e.Buffer | e.Var) -> bool:
    return isinstance(value, e.Buffer) and value.memory_type is e.MemoryType.GLOBAL


def _may_share(
    x: e.Buffer,
    y: e.Buffer,
    by_buffer: dict[str, list[_Access]],
    other: set[str],
) -> bool:
    if _key(x.shape) != _key(y.shape) or x.dtype.itemsize != y.dtype.itemsize:
        return False
    shape = x.shape
    if x.name in other or y.name in other:
        return False
    stores = [a for a in by_buffer.get(y.name, []) if a.store]
    reads = by_buffer.get(x.name, [])
    if len(stores) != 1 or not reads or any(a.store for a in reads):
        return False
    store = stores[0]
    loops = [loop for _, loop in store.context.loops]
    loop_vars = {loop.loop_var.name for loop in loops}
    if len(loop_vars) != len(loops):
        return False  # a shadowed loop var: isl would see only the inner loop
    flat = _flat(store.indices, shape)
    # Symbolic dims (`S0`: scalar arguments) are the same everywhere in a launch.
    allowed = loop_vars | _dim_names(shape)
    for access in [store, *reads]:
        if not _only_vars(access.indices, allowed):
            return False
    for read in reads:
        if read.context.loops != store.context.loops or read.order > store.order:
            return False
        if _key(read.indices) != _key(store.indices) and not _equal_where_run(
            _flat(read.indices, shape), flat, read, allowed
        ):
            return False
    return _injective(flat, loops)


def _equal_where_run(a: e.Expr, b: e.Expr, access: _Access, allowed: set[str]) -> bool:
    """Whether `a == b` at every point where `access` runs (its loops and `if`s): a
    read of element 0 of a one-element input (`x[0]`) is the store's own element.
    Only the guards over `allowed` (loop variables, the kernel's symbolic dims) are
    assumed."""
    loops = [loop for _, loop in access.context.loops]
    guards = [g for g in access.context.guards if _only_vars((g,), allowed)]
    domain = IndexDomain(loops, guards, exprs=[a, b])
    return domain.always(e.EQ(a, b))


def _dim_names(shape: tuple[e.Expr, ...]) -> set[str]:
    """The Vars a buffer's shape reads (a symbolic kernel's dims)."""
    names: set[str] = set()
    stack: list[e.IrNode] = list(shape)
    while stack:
        node = stack.pop()
        if isinstance(node, e.Var):
            names.add(node.name)
        stack.extend(children(node))
    return names


def _key(indices: tuple[e.Expr, ...]) -> tuple:
    return tuple(structural_key(i) for i in indices)


def _only_vars(indices: tuple[e.Expr, ...], allowed: set[str]) -> bool:
    """Whether every Var in `indices` is one of `allowed` (and nothing is loaded)."""
    stack: list[e.IrNode] = list(indices)
    while stack:
        node = stack.pop()
        if isinstance(node, e.Var) and node.name not in allowed:
            return False
        if isinstance(node, (e.Load, e.Reduction, e.Call)):
            return False
        stack.extend(children(node))
    return True


def _flat(indices: tuple[e.Expr, ...], shape: tuple[e.Expr, ...]) -> e.Expr:
    """The row-major element number of `indices` in a buffer of `shape` (in isl's
    integers, which do not overflow). A symbolic extent after the first dim makes a
    product of variables, which isl cannot decide: such a pair is left out."""
    flat: e.Expr = e.IntImm(0, DataType.INT64)
    for index, extent in zip(indices, shape, strict=True):
        wide = index if index.dtype is DataType.INT64 else e.Cast(DataType.INT64, index)
        if isinstance(extent, e.IntImm):
            size: e.Expr = e.IntImm(extent.value, DataType.INT64)
        else:
            size = extent if extent.dtype is DataType.INT64 else e.Cast(DataType.INT64, extent)
        flat = flat * size + wide
    return flat


def _injective(flat: e.Expr, loops: list[s.For]) -> bool:
    """Whether two different points of the loops' box never give the same `flat`: isl
    over the box and a copy of it with every loop var renamed; False where isl cannot
    tell."""
    copies = {loop.loop_var.name: _renamed(loop.loop_var) for loop in loops}
    twin = [
        s.For(
            copies[loop.loop_var.name],
            substitute(loop.min, copies),
            substitute(loop.extent, copies),
            s.ForType.SERIAL,
            s.Block([]),
        )
        for loop in loops
    ]
    other = substitute(flat, copies)
    same_point: e.Expr = e.UIntImm(1)
    for loop in loops:
        same_point = e.And(same_point, e.EQ(loop.loop_var, copies[loop.loop_var.name]))
    domain = IndexDomain([*loops, *twin], exprs=[flat, other])
    return domain.always(e.Or(e.NE(flat, other), same_point))


def _renamed(var: e.Var) -> e.Var:
    return e.Var(f"{var.name}'", var.dtype, var.lower, var.upper)
