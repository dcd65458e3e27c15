"""fuse_reductions: sibling cross-thread reductions in one block, one walk, one exchange.

After `factorize_reduction`, each reduction block of a row walks its share of the row
and combines the partials across the block's threads on its own: two reductions of
one row (layer_norm's sum and sum of squares) cost two walks and two block exchanges,
each with its barriers. When neither reads the other, nothing orders them, and the
primitive moves them into one block:

    thread_bind[blockIdx.x] for (i, 0, R)
      ScheduleBlock(s)   s[i]  = Reduce(sum across threadIdx.x, Reduce(sum, x[i, ..a..]))
    thread_bind[blockIdx.x] for (j, 0, R)
      ScheduleBlock(q)   q[j]  = Reduce(sum across threadIdx.x, Reduce(sum, x[j, ..b..]^2))
 -> thread_bind[blockIdx.x] for (i, 0, R)
      ScheduleBlock(s)   s[i]  = Reduce(sum across threadIdx.x, Reduce(sum, x[i, ..a..]))
                         q[i]  = Reduce(sum across threadIdx.x, Reduce(sum, x[i, ..a..]^2))

The later block's iter vars become the first's, and its reduce vars (the thread index,
the serial walk's axes where their ranges match) the first's: the printed IR shows one
walk. Codegen emits a block holding several cross-thread Reduces on one axis as one
serial loop folding every partial, and one combine of all of them: the partials travel
as nested pairs (`cinn_pair`) through `cinn_block_reduce` / `cinn_block_reduce_y`, each
half folded by its own functor, so N reductions cost the barriers of one. Values are
unchanged (each Reduce still folds its own body in the same order), so the interpreter
runs the result as it runs the blocks apart.

Preconditions, each refused with a ScheduleError naming the block: two or more distinct
blocks; each stores only values whose outermost reductions are cross-thread `Reduce`s
(argmax pairs are combined by their own helper and are not fused), all across one
thread axis over one thread range; the blocks' loops match (extents, kinds, bindings)
and so do their iter values; each later block is alone in its loop nest (it is moved);
neither block reads what the other writes, and no block between them writes what the
later one reads or writes, or reads what it writes.
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import ArgReduce, Expr, IntImm, Load, Reduce, Reduction, Var
from cinn_py.ir.schedule.analysis import (
    REMOVED,
    Path,
    all_loads,
    find_realize,
    loops_in,
    outermost_reductions,
    realizes,
    replace,
    storage_name,
    stores_of,
    substitute,
    substitute_stmt,
    unwrap,
)
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
from cinn_py.ir.visitor import structural_equal

PRIMITIVE = "fuse_reductions"


def fuse_reductions(func: LoweredFunc, block_names: Sequence[str]) -> tuple[LoweredFunc, str]:
    """Merges the reduction blocks `block_names` into the first of them in program order
    (see the module docstring); returns the new function and the merged block's name."""
    names = list(block_names)
    if len(names) < 2:
        raise ScheduleError(
            PRIMITIVE, ", ".join(names) or "<none>", "needs at least two blocks to fuse"
        )
    if len(set(names)) != len(names):
        repeated = next(n for n in names if names.count(n) > 1)
        raise ScheduleError(PRIMITIVE, repeated, "the block is named twice")
    for name in names:
        find_realize(func, name, PRIMITIVE)
    order = [r.schedule_block.name for r, _ in realizes(func)]
    first, *rest = sorted(names, key=order.index)
    for name in rest:
        func = _merge(func, first, name)
    return func, first


def fusion_problem(func: LoweredFunc, first: str, later: str) -> str | None:
    """Why block `later` cannot be fused into block `first` (which comes before it in
    program order), or None when it can: the primitive's checks, without the rewrite
    (a group schedule asks before it fuses)."""
    try:
        _check_pair(func, first, later)
    except ScheduleError as error:
        return error.why
    return None


def combines_of(block: ScheduleBlock) -> list[Reduction]:
    """The outermost reductions of the values `block` stores, in store order."""
    return [node for store in stores_of(block) for node in outermost_reductions(store.value)]


def _merge(func: LoweredFunc, first: str, later: str) -> LoweredFunc:
    """`func` with block `later` moved into block `first`."""
    realize_a, realize_b, top_b = _check_pair(func, first, later)
    block_a, block_b = realize_a.schedule_block, realize_b.schedule_block
    combines_a, combines_b = combines_of(block_a), combines_of(block_b)
    mapping: dict[str, Expr] = {
        b.name: a for a, b in zip(block_a.iter_vars, block_b.iter_vars, strict=True)
    }
    mapping.update(_walk_renames(combines_a[0], [*combines_a[1:], *combines_b]))
    body_a = substitute_stmt(block_a.body, _walk_renames(combines_a[0], combines_a[1:]))
    body_b = substitute_stmt(block_b.body, mapping)
    iters = block_a.iter_vars
    reads = _union(block_a.read_buffers, _renamed(block_b.read_buffers, mapping), iters)
    writes = _union(block_a.write_buffers, _renamed(block_b.write_buffers, mapping), iters)
    merged = ScheduleBlock(
        block_a.iter_vars,
        reads,
        writes,
        block_a.name,
        Block([*_statements(body_a), *_statements(body_b)]),
        block_a.attrs,
    )
    func = replace(func, realize_a, ScheduleBlockRealize(realize_a.iter_values, merged))
    return replace(func, top_b, REMOVED)


# ---- checks -------------------------------------------------------------------------------


def _check_pair(
    func: LoweredFunc, first: str, later: str
) -> tuple[ScheduleBlockRealize, ScheduleBlockRealize, Stmt]:
    """Every precondition for moving block `later` into block `first`; returns both
    realizes and the statement holding `later` alone (what the move removes)."""
    realize_a, path_a = find_realize(func, first, PRIMITIVE)
    realize_b, path_b = find_realize(func, later, PRIMITIVE)
    block_a, block_b = realize_a.schedule_block, realize_b.schedule_block
    anchor = _cross_thread_combines(block_a)[0]
    _check_threads(later, anchor, _cross_thread_combines(block_b))
    loop_map = _check_loops(first, later, path_a, path_b)
    top_b = _check_alone(later, path_b, realize_b)
    _check_iter_values(first, later, realize_a, realize_b, loop_map)
    _check_dependences(func, block_a, block_b)
    return realize_a, realize_b, top_b


def _cross_thread_combines(block: ScheduleBlock) -> list[Reduce]:
    """The block's outermost reductions, each a cross-thread Reduce (else refused)."""
    found = combines_of(block)
    if not found:
        raise ScheduleError(PRIMITIVE, block.name, "the block stores no reduction")
    for node in found:
        if isinstance(node, ArgReduce):
            raise ScheduleError(
                PRIMITIVE,
                block.name,
                "the block holds an argmax / argmin: its (value, position) pairs combine on "
                "their own and are not fused",
            )
        if node.thread_axis is None:
            raise ScheduleError(
                PRIMITIVE,
                block.name,
                "the block holds a serial Reduce: factorize_reduction it first, so that it "
                "combines across threads",
            )
    return found


def _check_threads(later: str, anchor: Reduce, combines: list[Reduce]) -> None:
    """Every combine across the anchor's thread axis and over its thread range."""
    axis = anchor.reduce_axis[0]
    for node in combines:
        var = node.reduce_axis[0]
        if node.thread_axis != anchor.thread_axis:
            raise ScheduleError(
                PRIMITIVE,
                later,
                f"it combines across {node.thread_axis}, the first block across "
                f"{anchor.thread_axis}",
            )
        if (var.lower, var.upper) != (axis.lower, axis.upper):
            raise ScheduleError(
                PRIMITIVE,
                later,
                f"it combines over {var.upper} threads, the first block over {axis.upper}",
            )


def _check_loops(first: str, later: str, path_a: Path, path_b: Path) -> dict[str, Expr]:
    """The loops around both blocks match one for one (no `if` between them); returns
    the later block's loop vars mapped to the first's."""
    for name, path in ((first, path_a), (later, path_b)):
        if any(isinstance(node, IfThenElse) for node in path):
            raise ScheduleError(
                PRIMITIVE, name, "the block is under an `if`: fuse before guards are inserted"
            )
    loops_a, loops_b = loops_in(path_a), loops_in(path_b)
    if len(loops_a) != len(loops_b):
        raise ScheduleError(
            PRIMITIVE,
            later,
            f"it is inside {len(loops_b)} loops, block {first} inside {len(loops_a)}",
        )
    for a, b in zip(loops_a, loops_b, strict=True):
        if _loop_key(a) != _loop_key(b):
            raise ScheduleError(
                PRIMITIVE,
                later,
                f"its loop {b.loop_var.name} {_describe(b)} does not match loop "
                f"{a.loop_var.name} {_describe(a)} of block {first}",
            )
    return {b.loop_var.name: a.loop_var for a, b in zip(loops_a, loops_b, strict=True)}


def _loop_key(loop: For) -> tuple[object, ...]:
    def value(node: Expr) -> object:
        return node.value if isinstance(node, IntImm) else ("expr", id(node))

    return (value(loop.min), value(loop.extent), loop.for_type, loop.bind_info)


def _describe(loop: For) -> str:
    kind = loop.bind_info.value if loop.bind_info is not None else loop.for_type.value
    return f"({kind}, {loop.min!r}, {loop.extent!r})"


def _check_alone(later: str, path: Path, realize: ScheduleBlockRealize) -> Stmt:
    """The statement that holds the later block and nothing else (its outermost loop,
    or the realize itself): what the merge removes."""
    loops = loops_in(path)
    if not loops:
        return realize
    inner: list[Stmt] = [*loops[1:], realize]
    for loop, child in zip(loops, inner, strict=True):
        if unwrap(loop.body) is not child:
            raise ScheduleError(
                PRIMITIVE,
                later,
                f"loop {loop.loop_var.name} holds more than the block: only a block alone in "
                "its loop nest can move",
            )
    return loops[0]


def _check_iter_values(
    first: str,
    later: str,
    realize_a: ScheduleBlockRealize,
    realize_b: ScheduleBlockRealize,
    loop_map: dict[str, Expr],
) -> None:
    values_a, values_b = realize_a.iter_values, realize_b.iter_values
    if len(values_a) != len(values_b):
        raise ScheduleError(
            PRIMITIVE,
            later,
            f"it has {len(values_b)} iter vars, block {first} has {len(values_a)}",
        )
    for var, a, b in zip(realize_b.schedule_block.iter_vars, values_a, values_b, strict=True):
        if not structural_equal(substitute(b, loop_map), a):
            raise ScheduleError(
                PRIMITIVE,
                later,
                f"its iter var {var.name} is bound to {b!r}, not to the first block's "
                f"{a!r}: the blocks compute different elements",
            )


def _check_dependences(func: LoweredFunc, block_a: ScheduleBlock, block_b: ScheduleBlock) -> None:
    """Nothing orders the two blocks, so the later one may move up to the first."""
    reads_a, writes_a = _reads(block_a), _writes(block_a)
    reads_b, writes_b = _reads(block_b), _writes(block_b)
    if reads_b & writes_a:
        raise ScheduleError(
            PRIMITIVE,
            block_b.name,
            f"it reads {sorted(reads_b & writes_a)[0]}, which block {block_a.name} writes: "
            "the reductions depend on each other and cannot share a pass",
        )
    if reads_a & writes_b:
        raise ScheduleError(
            PRIMITIVE,
            block_a.name,
            f"it reads {sorted(reads_a & writes_b)[0]}, which block {block_b.name} writes",
        )
    order = [r.schedule_block for r, _ in realizes(func)]
    start, end = order.index(block_a), order.index(block_b)
    for between in order[start + 1 : end]:
        reads, writes = _reads(between), _writes(between)
        clash = (writes & (reads_b | writes_b)) | (reads & writes_b)
        if clash:
            raise ScheduleError(
                PRIMITIVE,
                block_b.name,
                f"block {between.name}, between it and block {block_a.name}, also touches "
                f"{sorted(clash)[0]}: the block cannot move past it",
            )


def _reads(block: ScheduleBlock) -> set[str]:
    return {storage_name(load.tensor) for s in stores_of(block) for load in _loads(s)}


def _loads(store: Store) -> list[Load]:
    return [*all_loads(store.value), *(ld for i in store.indices for ld in all_loads(i))]


def _writes(block: ScheduleBlock) -> set[str]:
    return {storage_name(s.tensor) for s in stores_of(block)}


# ---- rewriting ----------------------------------------------------------------------------


def _walk_renames(anchor: Reduce, others: list[Reduce]) -> dict[str, Expr]:
    """Each other combine's thread var renamed to the anchor's, and the axes of its
    serial partial to the anchor's where their ranges match: one walk in the IR."""
    thread = anchor.reduce_axis[0]
    walk = anchor.body.reduce_axis if _is_partial(anchor.body) else None
    mapping: dict[str, Expr] = {}
    for node in others:
        mapping[node.reduce_axis[0].name] = thread
        if walk is None or not _is_partial(node.body):
            continue
        axes = node.body.reduce_axis
        if [(v.lower, v.upper, v.dtype) for v in axes] == [
            (v.lower, v.upper, v.dtype) for v in walk
        ]:
            mapping.update({v.name: w for v, w in zip(axes, walk, strict=True)})
    return mapping


def _is_partial(node: Expr) -> bool:
    return isinstance(node, Reduce) and node.thread_axis is None


def _renamed(ranges: tuple[BufferRange, ...], mapping: dict[str, Expr]) -> list[BufferRange]:
    return [substitute_stmt(r, mapping) for r in ranges]


def _union(
    first: Sequence[BufferRange], second: Sequence[BufferRange], iter_vars: Sequence[Var]
) -> list[BufferRange]:
    """The regions of both lists, a region of `second` dropped when `first` has one of
    the same buffer over the same ranges (dims named by the same iter var, or by any
    var over the same bounds: the reduce vars of the two blocks differ in name)."""
    bound = {var.name for var in iter_vars}

    def key(region: BufferRange) -> tuple[object, ...]:
        dims = tuple((r.name if r.name in bound else None, r.lower, r.upper) for r in region.ranges)
        return (storage_name(region.buffer), dims)

    merged = list(first)
    seen = {key(region) for region in merged}
    for region in second:
        if key(region) not in seen:
            seen.add(key(region))
            merged.append(region)
    return merged


def _statements(body: Stmt) -> tuple[Stmt, ...]:
    return body.stmts if isinstance(body, Block) else (body,)
