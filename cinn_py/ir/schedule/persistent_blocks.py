"""persist_blocks: a grid of G thread blocks, each walking the rows G apart.

The row schedule gives every row (or every R rows) a thread block of its own: each
top-level loop nest of the function binds its row loop to blockIdx.x, extent E, and the
nests run in order for that row (load the row into registers, reduce, normalize, store).
With E in the thousands the GPU runs ~E / (resident blocks) waves of blocks that start
and finish together; each new block also reloads what every row shares (a norm's weight
and bias). `persist_blocks(grid=G)` keeps the same work per row and launches G blocks
instead, each walking the rows `blockIdx.x + k * G` for k = 0, 1, ... (the "virtual
blocks" of the original launch, in order):

    thread_bind[blockIdx.x] for (b, 0, G)        <- the grid
      for (k, 0, ceil(E / G))                     <- the rows of this block
        if (k * G + b < E)                        <- uniform over the block
          <every nest, its blockIdx.x loop removed, its row k * G + b>

A nest's blockIdx.x loop of a shorter extent E' (a block distributed over fewer blocks)
keeps its own guard `row < E'`. Nests with no blockIdx.x loop that come first and store
only registers (a register cache of an input every row shares, `cache_read` over no
kept dims) run once per block, before the rows' loop: that is what a block walking
several rows saves.

The rewrite keeps each virtual block's work and order, so it is valid whatever the
nests do, given what it checks: constant extents, no 0-D block at the top (the finishing
pass places those on one thread of block 0, which the loop would repeat), nothing bound
to blockIdx.y / .z, and no shared-memory buffer of the function's own (a later row would
overwrite a tile an earlier row's slower threads still read). The runtime's block
reduces start with a barrier, so their shared partials are safe across rows.
"""

from __future__ import annotations

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import LT, Buffer, Expr, IntImm, Load, MemoryType, Var
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import (
    root_statements,
    storage_name,
    substitute_stmt,
    taken_names,
    whole_region,
    with_root_statements,
)
from cinn_py.ir.simplify import simplify
from cinn_py.ir.stmt import (
    ArgIO,
    BindInfo,
    Block,
    BufferRange,
    For,
    ForType,
    IfThenElse,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Stmt,
    Store,
)
from cinn_py.ir.visitor import Mutator, nodes, rename

PRIMITIVE = "persist_blocks"
BLOCK_AXIS = BindInfo.BLOCK_X


def persist_blocks(func: LoweredFunc, grid: int) -> tuple[LoweredFunc, tuple[str, str]]:
    """`func` launched on `grid` blocks that walk its blockIdx.x rows `grid` apart (the
    module docstring); returns the function and the names of the new loops (the grid's,
    the rows'). ScheduleError where the function does not have the shape it needs, or
    `grid` is not below the blocks it launches now."""
    stmts, extent = _nests(func)
    if not isinstance(grid, int) or grid < 1 or grid >= extent:
        raise ScheduleError(
            PRIMITIVE,
            func.name,
            f"grid {grid!r}: expected a count of blocks from 1 to {extent - 1} (the "
            f"function launches {extent})",
        )
    taken = taken_names(func)
    block = Var(fresh_name("persist_b", taken), lower=0, upper=grid)
    taken.add(block.name)
    waves = -(-extent // grid)
    wave = Var(fresh_name("persist_k", taken), lower=0, upper=waves)
    row = simplify(wave * IntImm(grid, wave.dtype) + block)
    prologue: list[Stmt] = []
    rows: list[Stmt] = []
    for stmt in stmts:
        if not rows and _invariant(stmt):
            prologue.append(stmt)
        else:
            rows.append(_Virtualize(row, extent).visit(stmt))
    inner: Stmt = Block(rows)
    if waves * grid != extent:
        inner = IfThenElse(LT(row, IntImm(extent, row.dtype)), inner)
    loop = For(
        block, 0, grid, ForType.SERIAL, For(wave, 0, waves, ForType.SERIAL, inner), BLOCK_AXIS
    )
    return with_root_statements(func, [*prologue, loop]), (block.name, wave.name)


def _nests(func: LoweredFunc) -> tuple[list[Stmt], int]:
    """The root's top-level statements and the largest blockIdx.x extent, after the
    checks the module docstring lists."""
    stmts = root_statements(func, PRIMITIVE, func.name)
    shared = [b.name for b in func.temp_buffers if b.memory_type is MemoryType.SHARED]
    if shared:
        raise ScheduleError(
            PRIMITIVE,
            func.name,
            f"shared buffer {shared[0]}: a later row would overwrite it while an earlier "
            "one's threads may still read it",
        )
    extent = 0
    for stmt in stmts:
        if isinstance(stmt, ScheduleBlockRealize):
            raise ScheduleError(
                PRIMITIVE,
                stmt.schedule_block.name,
                "a block with no loop (placed on one thread of block 0) would run once a row",
            )
        if not isinstance(stmt, For):
            raise ScheduleError(
                PRIMITIVE, func.name, f"a top-level {type(stmt).__name__}: expected loop nests"
            )
        for node in nodes(stmt):
            if not isinstance(node, For) or node.bind_info is None:
                continue
            if node.bind_info in (BindInfo.BLOCK_Y, BindInfo.BLOCK_Z):
                raise ScheduleError(
                    PRIMITIVE,
                    node.loop_var.name,
                    f"bound to {node.bind_info.value}: only blockIdx.x rows are walked",
                )
            if node.bind_info is BLOCK_AXIS:
                if not isinstance(node.extent, IntImm):
                    raise ScheduleError(
                        PRIMITIVE, node.loop_var.name, "a blockIdx.x loop of symbolic extent"
                    )
                if not (isinstance(node.min, IntImm) and node.min.value == 0):
                    raise ScheduleError(
                        PRIMITIVE, node.loop_var.name, "a blockIdx.x loop that starts past 0"
                    )
                extent = max(extent, node.extent.value)
    if extent < 2:
        raise ScheduleError(PRIMITIVE, func.name, "the function launches one block")
    return stmts, extent


def _invariant(stmt: Stmt) -> bool:
    """Whether a top-level nest is the same for every row: no blockIdx.x loop, and it
    stores registers only (a register cache every row reads)."""
    found = list(nodes(stmt))
    if any(isinstance(n, For) and n.bind_info is BLOCK_AXIS for n in found):
        return False
    stores = [n for n in found if isinstance(n, Store)]
    return bool(stores) and all(s.tensor.memory_type is MemoryType.LOCAL for s in stores)


class _Virtualize(Mutator):
    """Each blockIdx.x loop -> its body at the virtual row, guarded by
    `row < extent` where its extent is below the launch's `blocks` (the rows' loop
    guards those)."""

    def __init__(self, row: Expr, blocks: int) -> None:
        self.row = row
        self.blocks = blocks

    def visit_For(self, node: For) -> Stmt:
        if node.bind_info is not BLOCK_AXIS:
            return self.generic_visit(node)
        inner = substitute_stmt(self.visit(node.body), {node.loop_var.name: self.row})
        if node.extent.value >= self.blocks:
            return inner
        return IfThenElse(LT(self.row, IntImm(node.extent.value, self.row.dtype)), inner)


# ---- the next row's loads, issued during this row's work ---------------------------------

PREFETCH = "prefetch_rows"


def prefetch_rows(func: LoweredFunc, cache: str) -> tuple[LoweredFunc, str]:
    """In a function `persist_blocks` made, the register cache `cache` (a `cache_read`
    fill among the rows' nests) double-buffered: the block's first row is loaded into
    `<cache>_next` before the rows' loop; each row then copies `<cache>_next` into
    `cache` and issues the loads of the row `grid` further on into `<cache>_next`
    (guarded past the last row) before its own reductions, whose barriers the loads
    then wait behind instead of in front of:

        x_next <- x[b]
        for k:  x_local <- x_next;  if (row + G < E) x_next <- x[row + G];  <row's work>

    Returns the function and the name of the new fill (the copy keeps `cache`'s)."""
    stmts, grid_loop, rows_loop, guard, nests = _persistent_parts(func)
    index = next(
        (i for i, nest in enumerate(nests) if _fills(nest, cache, _inputs(func))),
        None,
    )
    if index is None:
        raise ScheduleError(
            PREFETCH, cache, "not a register cache filled once a row inside the rows' loop"
        )
    fill = nests[index]
    buffer = next(b for b in func.temp_buffers if b.name == cache)
    if len([n for n in nodes(fill) if isinstance(n, For)]) != len(buffer.shape) - 1:
        raise ScheduleError(
            PREFETCH, cache, "a fill of several rows a block (threadIdx.y): one row a block only"
        )
    taken = taken_names(func)
    spare = Buffer(
        fresh_name(f"{cache}_next", taken),
        buffer.dtype,
        buffer.shape,
        buffer.memory_type,
        buffer.array_dims,
    )
    taken.add(spare.name)
    upcoming_fill = _retarget(fill, cache, spare, f"{cache}_ahead", "n", taken)
    first_fill = _retarget(fill, cache, spare, f"{cache}_first", "f", taken)
    wave = rows_loop.loop_var
    grid = grid_loop.extent
    blocks = _blocks(guard, rows_loop, grid)
    row = simplify(wave * grid + grid_loop.loop_var)
    ahead = simplify(row + grid)
    upcoming = substitute_stmt(upcoming_fill, {wave.name: wave + IntImm(1, wave.dtype)})
    upcoming = IfThenElse(LT(ahead, IntImm(blocks, ahead.dtype)), upcoming)
    first = substitute_stmt(first_fill, {wave.name: IntImm(0, wave.dtype)})
    copy = _copy_nest(buffer, spare, fill, row, taken)
    new_nests = [*nests[:index], copy, upcoming, *nests[index + 1 :]]
    inner: Stmt = Block(new_nests)
    if guard is not None:
        inner = IfThenElse(guard.condition, inner)
    rows = For(wave, rows_loop.min, rows_loop.extent, rows_loop.for_type, inner)
    grid_body = Block([*_grid_parts(grid_loop)[:-1], first, rows])
    new_grid = For(
        grid_loop.loop_var, grid_loop.min, grid, grid_loop.for_type, grid_body, BLOCK_AXIS
    )
    stmts[stmts.index(grid_loop)] = new_grid
    temps = [*func.temp_buffers, spare]
    return with_root_statements(func, stmts, temps), _block_of(upcoming_fill)


def _persistent_parts(
    func: LoweredFunc,
) -> tuple[list[Stmt], For, For, IfThenElse | None, list[Stmt]]:
    """The root's statements, the grid's loop, the rows' loop, its guard (None without
    one) and the rows' nests of a function `persist_blocks` made; ScheduleError for
    another."""
    why = "the function does not walk rows (persist_blocks first)"
    stmts = root_statements(func, PREFETCH, func.name)
    grids = [s for s in stmts if isinstance(s, For) and s.bind_info is BLOCK_AXIS]
    if len(grids) != 1:
        raise ScheduleError(PREFETCH, func.name, why)
    grid_loop = grids[0]
    rows_loop = _grid_parts(grid_loop)[-1]  # after the first rows' fills of earlier calls
    if (
        not isinstance(rows_loop, For)
        or rows_loop.bind_info is not None
        or not isinstance(grid_loop.extent, IntImm)
    ):
        raise ScheduleError(PREFETCH, func.name, why)
    inner = rows_loop.body
    guard = None
    if isinstance(inner, IfThenElse) and inner.false_case is None:
        guard, inner = inner, inner.true_case
    nests = list(inner.stmts) if isinstance(inner, Block) else [inner]
    return stmts, grid_loop, rows_loop, guard, nests


def _grid_parts(grid_loop: For) -> list[Stmt]:
    """The statements of the grid's loop: the first rows' fills `prefetch_rows` put
    there, then the rows' loop."""
    body = grid_loop.body
    return list(body.stmts) if isinstance(body, Block) else [body]


def _blocks(guard: IfThenElse | None, rows_loop: For, grid: Expr) -> int:
    """The rows' count E: the guard's bound, or waves x grid where there is none."""
    if (
        guard is not None
        and isinstance(guard.condition, LT)
        and isinstance(guard.condition.b, IntImm)
    ):
        return guard.condition.b.value
    return rows_loop.extent.value * grid.value


def _inputs(func: LoweredFunc) -> set[str]:
    return {arg.name for arg in func.args if arg.io is ArgIO.INPUT}


def _fills(nest: Stmt, cache: str, inputs: set[str]) -> bool:
    """Whether `nest` is one realize storing only register buffer `cache`, from the
    function's inputs alone (a row cache's fill, not a value computed from the row's
    reductions, which the next row does not have yet)."""
    found = [n for n in nodes(nest) if isinstance(n, ScheduleBlockRealize)]
    stores = [n for n in nodes(nest) if isinstance(n, Store)]
    loads = [n for n in nodes(nest) if isinstance(n, Load)]
    return (
        len(found) == 1
        and bool(stores)
        and all(s.tensor.name == cache and s.tensor.memory_type is MemoryType.LOCAL for s in stores)
        and all(storage_name(load.tensor) in inputs for load in loads)
    )


def _block_of(nest: Stmt) -> str:
    return next(n for n in nodes(nest) if isinstance(n, ScheduleBlockRealize)).schedule_block.name


def _local_names(nest: Stmt) -> set[str]:
    """The names a nest binds: its loop vars, its block's iter vars and region vars."""
    names = set()
    for node in nodes(nest):
        if isinstance(node, For):
            names.add(node.loop_var.name)
        elif isinstance(node, ScheduleBlockRealize):
            block = node.schedule_block
            names.update(v.name for v in block.iter_vars)
            for region in (*block.read_buffers, *block.write_buffers):
                names.update(v.name for v in region.ranges)
    return names


def _retarget(
    fill: Stmt, cache: str, spare: Buffer, block: str, suffix: str, taken: set[str]
) -> Stmt:
    """`fill` storing into `spare` instead of `cache`, its block named `block` and the
    names it binds given `suffix` (each fresh against `taken`): a copy of the nest that
    can sit beside the original."""
    names = {}
    for name in sorted(_local_names(fill)):
        names[name] = fresh_name(f"{name}_{suffix}", taken)
        taken.add(names[name])
    renamed = rename(fill, lambda name: names.get(name, name))
    block_name = fresh_name(block, taken)
    taken.add(block_name)
    return _Retarget(cache, spare, block_name).visit(renamed)


class _Retarget(Mutator):
    """Stores into (and regions of) buffer `cache` -> buffer `spare`; the block renamed."""

    def __init__(self, cache: str, spare: Buffer, block: str) -> None:
        self.cache = cache
        self.spare = spare
        self.block = block

    def visit_Store(self, node: Store) -> Store:
        if storage_name(node.tensor) != self.cache:
            return self.generic_visit(node)
        return Store(self.spare, self.visit(node.value), node.indices)

    def visit_BufferRange(self, node: BufferRange) -> BufferRange:
        if storage_name(node.buffer) != self.cache:
            return node
        return BufferRange(self.spare, whole_region(self.spare, f"{self.spare.name}_d"))

    def visit_ScheduleBlock(self, node: ScheduleBlock) -> ScheduleBlock:
        new = self.generic_visit(node)
        return ScheduleBlock(
            new.iter_vars, new.read_buffers, new.write_buffers, self.block, new.body, new.attrs
        )


def _copy_nest(cache: Buffer, spare: Buffer, fill: Stmt, row: Expr, taken: set[str]) -> Stmt:
    """`cache[row, s, t(, v)] = spare[row, s, t(, v)]` under the fill's own loops over
    the steps, threads (and lanes: unrolled, a register copy)."""
    loops = [n for n in nodes(fill) if isinstance(n, For)]
    new_vars = []
    for loop in loops:
        name = fresh_name(f"{loop.loop_var.name}_c", taken)
        taken.add(name)
        new_vars.append(Var(name, lower=loop.loop_var.lower, upper=loop.loop_var.upper))
    ivs = []
    for k, dim in enumerate(cache.shape):
        name = fresh_name(f"{cache.name}_c{k}", taken)
        taken.add(name)
        ivs.append(Var(name, lower=0, upper=dim.value if isinstance(dim, IntImm) else None))
    values = [row, *new_vars]
    block = ScheduleBlock(
        ivs,
        [BufferRange(spare, whole_region(spare, f"{spare.name}_d"))],
        [BufferRange(cache, whole_region(cache, f"{cache.name}_d"))],
        cache.name,
        Store(cache, Load(spare, ivs), ivs),
    )
    nest: Stmt = ScheduleBlockRealize(values, block)
    for loop, var in reversed(list(zip(loops, new_vars, strict=True))):
        kind = ForType.UNROLLED if loop.for_type is ForType.VECTORIZED else loop.for_type
        nest = For(var, loop.min, loop.extent, kind, nest, loop.bind_info)
    return nest
