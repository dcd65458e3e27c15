"""Finding blocks and loops in a function, and rebuilding it around them.

Schedule handles are names; these helpers turn a name into its node and the statements
above it, and rebuild the immutable function with one node replaced or removed. Only
statements are walked when searching (expressions hold no loops or blocks).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import (
    Add,
    Buffer,
    Div,
    Expr,
    IntImm,
    IrNode,
    Load,
    Mod,
    Reduction,
    Var,
    storage_name,
)
from cinn_py.ir.simplify import simplify
from cinn_py.ir.stmt import (
    Block,
    BufferRange,
    For,
    IfThenElse,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Stmt,
    Store,
)
from cinn_py.ir.visitor import Mutator, nodes

ROOT = "root"
UNKNOWN_BLOCK = "<unknown>"
Path = tuple[IrNode, ...]


def stmt_children(node: IrNode) -> tuple[IrNode, ...]:
    """The statements directly inside `node`."""
    if isinstance(node, LoweredFunc):
        return (node.body,)
    if isinstance(node, For):
        return (node.body,)
    if isinstance(node, Block):
        return node.stmts
    if isinstance(node, IfThenElse):
        return (node.true_case,) if node.false_case is None else (node.true_case, node.false_case)
    if isinstance(node, ScheduleBlockRealize):
        return (node.schedule_block,)
    if isinstance(node, ScheduleBlock):
        return (node.body,)
    return ()


def walk(root: IrNode, path: Path = ()) -> Iterator[tuple[IrNode, Path]]:
    """Every statement under `root` (pre-order, program order) with its ancestors,
    outermost first."""
    yield root, path
    inner = (*path, root)
    for child in stmt_children(root):
        yield from walk(child, inner)


def realizes(root: IrNode) -> list[tuple[ScheduleBlockRealize, Path]]:
    """The realizes of every block but the root, in program order."""
    return [
        (node, path)
        for node, path in walk(root)
        if isinstance(node, ScheduleBlockRealize) and node.schedule_block.name != ROOT
    ]


def find_realize(func: LoweredFunc, name: str, primitive: str) -> tuple[ScheduleBlockRealize, Path]:
    """The realize of block `name` and its ancestors; ScheduleError when there is none."""
    if name == ROOT:
        raise ScheduleError(primitive, name, "the root block cannot be scheduled")
    found = [(r, p) for r, p in realizes(func) if r.schedule_block.name == name]
    if not found:
        known = ", ".join(r.schedule_block.name for r, _ in realizes(func)) or "none"
        raise ScheduleError(primitive, name, f"no such block in {func.name} (blocks: {known})")
    if len(found) > 1:
        raise ScheduleError(primitive, name, f"{len(found)} blocks have this name")
    return found[0]


def find_loop(func: LoweredFunc, name: str, primitive: str) -> tuple[For, Path]:
    """The loop whose variable is `name` and its ancestors; ScheduleError when there is
    none (a misspelled name, or a handle to a loop an earlier primitive replaced)."""
    for node, path in walk(func):
        if isinstance(node, For) and node.loop_var.name == name:
            return node, path
    raise ScheduleError(
        primitive,
        UNKNOWN_BLOCK,
        f"no loop '{name}' in {func.name} (a stale handle to a replaced loop, or a wrong name)",
    )


def block_names(node: IrNode) -> str:
    """The names of the blocks under `node`, for error messages."""
    names = [r.schedule_block.name for r, _ in realizes(node)]
    return ", ".join(names) if names else UNKNOWN_BLOCK


def unwrap(body: IrNode) -> IrNode:
    """The single statement of a one-statement Block, else `body` itself."""
    if isinstance(body, Block) and len(body.stmts) == 1:
        return body.stmts[0]
    return body


def loops_in(path: Path) -> list[For]:
    return [node for node in path if isinstance(node, For)]


def starts_at_zero(loop: For) -> bool:
    return isinstance(loop.min, IntImm) and loop.min.value == 0


def const_extent(loop: For, primitive: str) -> int:
    if not isinstance(loop.extent, IntImm):
        raise ScheduleError(
            primitive,
            block_names(loop),
            f"loop {loop.loop_var.name} has a non-constant extent {loop.extent!r}",
        )
    return loop.extent.value


# ---- rebuilding -------------------------------------------------------------------------


class _Removed:
    """Marks a statement taken out of the tree."""


REMOVED = _Removed()


class _Replace(Mutator):
    """Replaces the node `target` (by identity) with `replacement`; with REMOVED, drops
    it and every loop, block or `if` left empty by that."""

    def __init__(self, target: IrNode, replacement: IrNode | _Removed) -> None:
        self.target = target
        self.replacement = replacement

    def visit(self, node: IrNode) -> IrNode:
        if node is self.target:
            return self.replacement  # type: ignore[return-value]
        if isinstance(node, Expr):
            return node
        return super().visit(node)

    def visit_Block(self, node: Block) -> IrNode:
        stmts = [self.visit(s) for s in node.stmts]
        if all(a is b for a, b in zip(stmts, node.stmts, strict=True)):
            return node
        kept = [s for s in stmts if s is not REMOVED]
        return Block(kept) if kept else REMOVED  # type: ignore[return-value]

    def visit_For(self, node: For) -> IrNode:
        body = self.visit(node.body)
        if body is node.body:
            return node
        if body is REMOVED:
            return body
        return For(node.loop_var, node.min, node.extent, node.for_type, body, node.bind_info)

    def visit_IfThenElse(self, node: IfThenElse) -> IrNode:
        true_case = self.visit(node.true_case)
        false_case = None if node.false_case is None else self.visit(node.false_case)
        if true_case is node.true_case and false_case is node.false_case:
            return node
        if false_case is REMOVED:
            false_case = None
        if true_case is REMOVED:
            if false_case is None:
                return REMOVED  # type: ignore[return-value]
            true_case = Block(())
        return IfThenElse(node.condition, true_case, false_case)

    def visit_ScheduleBlock(self, node: ScheduleBlock) -> IrNode:
        body = self.visit(node.body)
        if body is node.body:
            return node
        if body is REMOVED:
            body = Block(())
        return ScheduleBlock(
            node.iter_vars, node.read_buffers, node.write_buffers, node.name, body, node.attrs
        )


def root_statements(func: LoweredFunc, primitive: str, where: str) -> list[Stmt]:
    """The statements of `func`'s root block, in order; ScheduleError (`primitive`, on
    `where`) where `func` has no root block."""
    root = func.body
    if not isinstance(root, ScheduleBlockRealize):
        raise ScheduleError(primitive, where, "the function has no root block")
    body = root.schedule_block.body
    return list(body.stmts) if isinstance(body, Block) else [body]


def with_root_statements(
    func: LoweredFunc, stmts: Sequence[Stmt], temp_buffers: Sequence[Buffer] | None = None
) -> LoweredFunc:
    """`func` with its root block holding `stmts` (a function `root_statements` read),
    and `temp_buffers` where given."""
    root = func.body
    assert isinstance(root, ScheduleBlockRealize)
    old = root.schedule_block
    block = ScheduleBlock(
        old.iter_vars, old.read_buffers, old.write_buffers, old.name, Block(stmts), old.attrs
    )
    temps = func.temp_buffers if temp_buffers is None else list(temp_buffers)
    return LoweredFunc(func.name, func.args, ScheduleBlockRealize(root.iter_values, block), temps)


def replace(func: LoweredFunc, target: IrNode, replacement: IrNode | _Removed) -> LoweredFunc:
    """`func` with the statement `target` replaced (or, with REMOVED, removed)."""
    body = _Replace(target, replacement).visit(func.body)
    if body is func.body:
        return func
    return LoweredFunc(func.name, func.args, body, func.temp_buffers)


# ---- substitution -----------------------------------------------------------------------


class _SubstituteVars(Mutator):
    """Each node rewritten once: a node shared in the DAG (a load an expression reads
    twice) stays one node, which codegen's per-node rewrites (a vector load's lanes)
    rely on."""

    def __init__(self, mapping: Mapping[str, Expr]) -> None:
        self.mapping = mapping
        self.done: dict[int, tuple[IrNode, IrNode]] = {}

    def visit(self, node: IrNode) -> IrNode:
        hit = self.done.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        new = super().visit(node)
        self.done[id(node)] = (node, new)
        return new

    def visit_Var(self, node: Var) -> Expr:
        return self.mapping.get(node.name, node)


def substitute(expr: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """`expr` with the Vars named in `mapping` replaced, simplified when anything was."""
    new = _SubstituteVars(mapping).visit(expr)
    return expr if new is expr else simplify(new)


class _SubstituteInStmt(Mutator):
    """Substitutes in each expression of a statement tree, simplifying each changed one
    on its own (the statements around them are rebuilt, not simplified)."""

    def __init__(self, mapping: Mapping[str, Expr]) -> None:
        self.mapping = mapping

    def visit(self, node: IrNode) -> IrNode:
        if isinstance(node, Expr):
            return substitute(node, self.mapping)
        return super().visit(node)


def substitute_stmt(stmt: IrNode, mapping: Mapping[str, Expr]) -> IrNode:
    """`stmt` with the Vars named in `mapping` replaced in every expression. The mapping
    must not name a variable the tree binds (a loop var, an iter var)."""
    return _SubstituteInStmt(mapping).visit(stmt)


# ---- names ------------------------------------------------------------------------------


def unflatten(flat: Expr, axes: tuple[Var, ...] | list[Var]) -> dict[str, Expr]:
    """Each axis's index at row-major position `flat` of the box `axes` spans (every Var
    with a constant [lower, upper)): the substitution that walks several reduce axes as
    one, as factorize_reduction's strided walk does."""
    dtype = axes[0].dtype
    extents = [var.upper - var.lower for var in axes]
    mapping: dict[str, Expr] = {}
    stride = math.prod(extents)
    for i, (var, extent) in enumerate(zip(axes, extents, strict=True)):
        stride //= extent
        index = flat if stride == 1 else Div(flat, IntImm(stride, dtype))
        if i > 0:
            index = Mod(index, IntImm(extent, dtype))
        if var.lower:
            index = Add(index, IntImm(var.lower, dtype))
        mapping[var.name] = index
    return mapping


def var_names(node: IrNode) -> set[str]:
    """The names of every Var in `node`."""
    return {n.name for n in nodes(node) if isinstance(n, Var)}


def taken_names(func: LoweredFunc) -> set[str]:
    """Every variable and argument name in `func`: what a new loop var must not be."""
    return var_names(func) | {a.name for a in func.args}


# ---- blocks and buffers -----------------------------------------------------------------


def single_store(block: ScheduleBlock) -> Store | None:
    """The block's store when its body is exactly one Store."""
    body = unwrap(block.body)
    return body if isinstance(body, Store) else None


def loads_of(node: IrNode, name: str) -> list[Load]:
    """The Loads of buffer `name` in `node` (outside nested schedule blocks)."""
    nested = nodes(node, prune=lambda n: isinstance(n, ScheduleBlockRealize))
    return [n for n in nested if isinstance(n, Load) and storage_name(n.tensor) == name]


def all_loads(expr: Expr) -> list[Load]:
    """Every Load in `expr`, in pre-order (a Load the expression shares, once)."""
    return [n for n in nodes(expr) if isinstance(n, Load)]


def has_reduce(node: IrNode) -> bool:
    """Whether `node` (an expression, a block) holds a Reduce or an ArgReduce (argmax /
    argmin reduce too)."""
    return any(isinstance(n, Reduction) for n in nodes(node))


def outermost_reductions(node: IrNode) -> list[Reduction]:
    """The Reduce / ArgReduce nodes under `node` that no other one encloses, in
    evaluation order, each once (a Reduce inside another's body is part of that one;
    one the expression reads twice is one reduction)."""
    return [n for n in nodes(node, prune=_is_reduction) if isinstance(n, Reduction)]


def _is_reduction(node: IrNode) -> bool:
    return isinstance(node, Reduction)


def stores_of(block: ScheduleBlock) -> list[Store]:
    """The Stores of `block`'s own body (not of nested blocks)."""
    return [
        node
        for node, path in walk(block.body)
        if isinstance(node, Store) and not any(isinstance(p, ScheduleBlockRealize) for p in path)
    ]


def writers(func: LoweredFunc, name: str) -> list[str]:
    """The blocks that store into buffer `name`, in program order."""
    return [
        r.schedule_block.name
        for r, _ in realizes(func)
        if any(storage_name(s.tensor) == name for s in stores_of(r.schedule_block))
    ]


def readers(func: LoweredFunc, name: str) -> list[str]:
    """The blocks that load from buffer `name`, in program order."""
    return [
        r.schedule_block.name for r, _ in realizes(func) if loads_of(r.schedule_block.body, name)
    ]


# ---- caches -------------------------------------------------------------------------------


def whole_region(buffer: Buffer, prefix: str) -> list[Var]:
    """A region covering every element of `buffer` (one bounded Var per dim)."""
    return [
        Var(f"{prefix}{k}", IntImm(0).dtype, 0, getattr(d, "value", None))
        for k, d in enumerate(buffer.shape)
    ]


class RedirectReads(Mutator):
    """The cache primitives' rewrite: each Load in `indices` (by id) becomes a load of
    `cache` at its indices there, and every region of buffer `name` the whole cache."""

    def __init__(self, name: str, cache: Buffer, indices: Mapping[int, list[Expr]]) -> None:
        self.name = name
        self.cache = cache
        self.indices = indices

    def visit_Load(self, node: Load) -> Expr:
        at = self.indices.get(id(node))
        if at is None:
            return self.generic_visit(node)
        return Load(self.cache, at)

    def visit_BufferRange(self, node: BufferRange) -> BufferRange:
        if storage_name(node.buffer) != self.name:
            return node
        return BufferRange(self.cache, whole_region(self.cache, f"{self.cache.name}_d"))
