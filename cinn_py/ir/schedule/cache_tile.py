"""cache_tile: the part of a buffer a block reads in one iteration of a loop, copied
into a shared-memory tile first (CINN's CacheRead into shared memory plus ComputeAt).

A transpose `out[i, j] = x[j, i]` walked in out's order reads x with a stride: each
warp touches 32 rows of x. Cut into 32 x 32 tiles, each iteration of the tile loop
reads one 32 x 32 window of x, which the thread block can load row by row (coalesced)
into shared memory and then read in any order:

    cache_tile(out, "x", tile_loop, "shared", pad=1)

  - for every read of x in the block, its indices (iter values substituted, in loop
    vars) split into a base, fixed in one iteration of `tile_loop` (the loops down to
    and including it), and an offset over the loops below it (and any reduce axes):
    the offset's range, from isl, is the window. Reads whose bases differ are refused;
  - a new block `x_shared` goes first into `tile_loop`'s body, under its own serial
    loops over the window's dims (those wider than one element), storing
    `x_shared[a, b] = x[base_0 + a, base_1 + b]`, guarded where the window can cross
    x's edge;
  - every read of x in the block becomes a read of `x_shared` at its offset;
  - `x_shared` is a shared buffer of the window's shape, its last dim `pad` longer
    (32 x 33: a column of the tile then spans all 32 banks).

The new loops are the fill's to schedule (split, bind to threads); the fill and the
reads need a barrier between them (`sync_threads`), which the barrier check asks for.
Because the fill sits inside the tile loop, the interpreter, which runs every loop in
order, fills and reads one tile at a time as the GPU does, and the logical shape is
the tile's own. Loops above the tile are the thread block's (blockIdx, or serial):
one bound to a thread axis would make the tile per thread, and is refused.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from cinn_py.errors import ScheduleError
from cinn_py.ir.dim_values import is_dim_name
from cinn_py.ir.expr import GE, LT, And, Buffer, Expr, IntImm, Load, MemoryType, Var, as_int
from cinn_py.ir.isl_domain import IndexDomain, NotAffine
from cinn_py.ir.names import fresh_name
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule.analysis import (
    RedirectReads,
    find_loop,
    find_realize,
    loads_of,
    realizes,
    replace,
    storage_name,
    stores_of,
    substitute,
    taken_names,
    var_names,
    whole_region,
)
from cinn_py.ir.schedule.buffer_memory import shared_size_problem
from cinn_py.ir.simplify import simplify
from cinn_py.ir.stmt import (
    ArgIO,
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
from cinn_py.ir.visitor import nodes, structural_key

PRIMITIVE = "cache_tile"


@dataclass(frozen=True)
class _Window:
    """Where block reads fall in one iteration of the tile loop: per buffer dim, the
    base (outer loop vars only) and the offsets' range [low, high]."""

    bases: tuple[Expr, ...]
    lows: tuple[int, ...]
    highs: tuple[int, ...]

    @property
    def tile_dims(self) -> tuple[int, ...]:
        """The dims wider than one element: the tile's dims."""
        return tuple(
            d for d, (lo, hi) in enumerate(zip(self.lows, self.highs, strict=True)) if hi > lo
        )

    def extent(self, dim: int) -> int:
        return self.highs[dim] - self.lows[dim] + 1

    def start(self, dim: int) -> Expr:
        """The buffer index of the window's first element along `dim`."""
        return simplify(self.bases[dim] + IntImm(self.lows[dim], self.bases[dim].dtype))


def cache_tile(
    func: LoweredFunc,
    block_name: str,
    buffer_name: str,
    loop_name: str,
    memory_type: str = "shared",
    pad: int = 0,
) -> tuple[LoweredFunc, str]:
    """Copies the window of `buffer_name` that block `block_name` reads in one
    iteration of loop `loop_name` into a `memory_type` ("shared") tile, filled first
    in that loop's body, and redirects the block's reads to it; returns the function
    and the new block's name (also its buffer's)."""
    if memory_type != MemoryType.SHARED.value:
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            f"memory type {memory_type!r}: a tile is read by every thread of the block, "
            "so it lives in 'shared' memory (cache_read 'local' keeps a thread's own "
            "elements in registers)",
        )
    pad = as_int(pad)
    if not isinstance(pad, int) or pad < 0:
        raise ScheduleError(PRIMITIVE, block_name, f"pad must be a non-negative int, got {pad!r}")
    realize, path = find_realize(func, block_name, PRIMITIVE)
    loops = [node for node in path if isinstance(node, For)]
    at = next((k for k, loop in enumerate(loops) if loop.loop_var.name == loop_name), None)
    if at is None:
        raise ScheduleError(
            PRIMITIVE, block_name, f"loop {loop_name} does not enclose block {block_name}"
        )
    tile_loop, outer, inner = loops[at], loops[: at + 1], loops[at + 1 :]
    for loop in outer:
        if loop.bind_info is not None and loop.bind_info.value.startswith("thread"):
            raise ScheduleError(
                PRIMITIVE,
                block_name,
                f"loop {loop.loop_var.name} above the tile is bound to "
                f"{loop.bind_info.value}; a shared tile belongs to the whole thread block",
            )
    buffer = _read_buffer(func, realize, buffer_name, tile_loop)
    loads = loads_of(realize.schedule_block.body, buffer_name)
    bindings = {
        iv.name: value
        for iv, value in zip(realize.schedule_block.iter_vars, realize.iter_values, strict=True)
    }
    outer_names = {loop.loop_var.name for loop in outer}
    offsets: dict[int, list[Expr]] = {}
    window = _window(block_name, buffer, loads, bindings, outer_names, inner, offsets)
    if not window.tile_dims:
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            f"block {block_name} reads one element of {buffer_name} per iteration of "
            f"{loop_name}: there is no tile to cache",
        )
    taken = taken_names(func)
    name = fresh_name(f"{buffer_name}_shared", taken)
    shape = [window.extent(d) for d in window.tile_dims]
    shape[-1] += pad
    cache = Buffer(name, buffer.dtype, shape, MemoryType.SHARED, tuple(range(len(shape))))
    why = shared_size_problem(func, cache, cache.array_dims)
    if why is not None:
        raise ScheduleError(PRIMITIVE, block_name, why)
    fill = _fill_nest(buffer, cache, window, name, taken | {name}, path, tile_loop)
    in_tile = {
        key: [
            simplify(offset[d] - IntImm(window.lows[d], offset[d].dtype)) for d in window.tile_dims
        ]
        for key, offset in offsets.items()
    }
    new_block = RedirectReads(buffer_name, cache, in_tile).visit(realize.schedule_block)
    func = replace(func, realize, ScheduleBlockRealize(realize.iter_values, new_block))
    tile_loop, _ = find_loop(func, loop_name, PRIMITIVE)
    body = tile_loop.body.stmts if isinstance(tile_loop.body, Block) else (tile_loop.body,)
    new_loop = For(
        tile_loop.loop_var,
        tile_loop.min,
        tile_loop.extent,
        tile_loop.for_type,
        Block([fill, *body]),
        tile_loop.bind_info,
    )
    func = replace(func, tile_loop, new_loop)
    return LoweredFunc(func.name, func.args, func.body, [*func.temp_buffers, cache]), name


def _read_buffer(
    func: LoweredFunc, realize: ScheduleBlockRealize, name: str, tile_loop: For
) -> Buffer:
    """The buffer `name` the block reads: an input argument, or a temp no block inside
    the tile loop writes (the tile would go stale)."""
    block = realize.schedule_block.name
    if not loads_of(realize.schedule_block.body, name):
        raise ScheduleError(PRIMITIVE, block, f"block {block} does not read buffer {name}")
    for arg in func.args:
        if arg.name == name and isinstance(arg.value, Buffer):
            if arg.io is not ArgIO.INPUT:
                raise ScheduleError(
                    PRIMITIVE, block, f"buffer {name} is written by the function, not only read"
                )
            return arg.value
    temp = next((b for b in func.temp_buffers if b.name == name), None)
    if temp is None:
        raise ScheduleError(PRIMITIVE, block, f"buffer {name} is not an input or temp buffer")
    for other, _ in realizes(tile_loop):
        if any(storage_name(s.tensor) == name for s in stores_of(other.schedule_block)):
            raise ScheduleError(
                PRIMITIVE,
                block,
                f"block {other.schedule_block.name} writes buffer {name} inside the tile loop",
            )
    return temp


def _window(
    block: str,
    buffer: Buffer,
    loads: list[Load],
    bindings: dict[str, Expr],
    outer_names: set[str],
    inner: list[For],
    offsets: dict[int, list[Expr]],
) -> _Window:
    """The window the reads cover; fills `offsets` (per Load id, its offset per dim)."""
    inner_names = {loop.loop_var.name for loop in inner}
    bases: list[Expr] | None = None
    lows = [0] * len(buffer.shape)
    highs = [0] * len(buffer.shape)
    for load in loads:
        indices = [simplify(substitute(i, bindings)) for i in load.indices]
        free = {v.name: v for i in indices for v in _vars(i)}
        # a symbolic kernel's dims (`S0`) are fixed for the whole launch, as the loops
        # above the tile are in one tile: a window's base may read them
        outer_names = outer_names | {n for n in free if is_dim_name(n)}
        walked = {n: v for n, v in free.items() if n not in outer_names}
        starts: dict[str, Expr] = {}
        for n, var in walked.items():
            if n in inner_names:
                loop = next(loop for loop in inner if loop.loop_var.name == n)
                starts[n] = loop.min
            elif var.lower is not None and var.upper is not None:
                starts[n] = IntImm(var.lower, var.dtype)  # a reduce axis
            else:
                raise ScheduleError(
                    PRIMITIVE,
                    block,
                    f"read {buffer.name}{_show(load)} depends on {n}, which is neither a "
                    "loop nor a bounded axis",
                )
        load_bases = [substitute(i, starts) for i in indices]
        load_offsets = [simplify(i - b) for i, b in zip(indices, load_bases, strict=True)]
        for base, offset in zip(load_bases, load_offsets, strict=True):
            if var_names(base) - outer_names or var_names(offset) & outer_names:
                raise ScheduleError(
                    PRIMITIVE,
                    block,
                    f"read {buffer.name}{_show(load)} is not a fixed window moved by the "
                    "tile loop: its index mixes the loops above the tile with those below",
                )
        if bases is None:
            bases = load_bases
        elif [structural_key(b) for b in bases] != [structural_key(b) for b in load_bases]:
            raise ScheduleError(
                PRIMITIVE,
                block,
                f"reads of {buffer.name} in block {block} sit at different windows "
                f"({_show_list(bases)} and {_show_list(load_bases)})",
            )
        domain = IndexDomain(inner, exprs=load_offsets)
        for dim, offset in enumerate(load_offsets):
            try:
                found = domain.bounds(offset)
            except NotAffine as why:
                raise ScheduleError(
                    PRIMITIVE, block, f"read {buffer.name}{_show(load)} is not affine: {why}"
                ) from None
            if found is None:
                raise ScheduleError(
                    PRIMITIVE,
                    block,
                    f"read {buffer.name}{_show(load)} has an unbounded window along dim {dim}",
                )
            lo, hi = found
            first = load is loads[0]
            lows[dim] = lo if first else min(lows[dim], lo)
            highs[dim] = hi if first else max(highs[dim], hi)
        offsets[id(load)] = load_offsets
    assert bases is not None
    return _Window(tuple(bases), tuple(lows), tuple(highs))


def _vars(node: Expr) -> list[Var]:
    return [n for n in nodes(node) if isinstance(n, Var)]


def _show(load: Load) -> str:
    return _show_list(load.indices)


def _show_list(indices: Sequence[Expr]) -> str:
    return "[" + ", ".join(print_ir(i) for i in indices) + "]"


def _fill_nest(
    buffer: Buffer,
    cache: Buffer,
    window: _Window,
    name: str,
    taken: set[str],
    path: object,
    tile_loop: For,
) -> Stmt:
    """Serial loops over the tile's dims around block `name`:
    cache[v...] = buffer[start + v ...], under a guard where a window may cross the
    buffer's edge."""
    dims = window.tile_dims
    loop_vars = [
        Var(fresh_name(f"{name}_{k}", taken), lower=0, upper=window.extent(d))
        for k, d in enumerate(dims)
    ]
    taken |= {v.name for v in loop_vars}
    ivs = [
        Var(fresh_name(f"{name}_i{k}", taken), lower=0, upper=window.extent(d))
        for k, d in enumerate(dims)
    ]
    by_dim = dict(zip(dims, ivs, strict=True))
    indices = [
        simplify(window.start(d) + by_dim[d]) if d in by_dim else window.start(d)
        for d in range(len(buffer.shape))
    ]
    block = ScheduleBlock(
        ivs,
        [BufferRange(buffer, whole_region(buffer, f"{buffer.name}_d"))],
        [BufferRange(cache, whole_region(cache, f"{name}_d"))],
        name,
        Store(cache, Load(buffer, indices), ivs),
    )
    nest: Stmt = ScheduleBlockRealize(list(loop_vars), block)
    guard = _edge_guard(buffer, window, loop_vars, path, tile_loop)
    if guard is not None:
        nest = IfThenElse(guard, nest)
    for var, d in reversed(list(zip(loop_vars, dims, strict=True))):
        nest = For(var, 0, window.extent(d), ForType.SERIAL, Block([nest]))
    return nest


def _edge_guard(
    buffer: Buffer, window: _Window, loop_vars: list[Var], path: object, tile_loop: For
) -> Expr | None:
    """`0 <= start + v < n` along each tile dim where isl cannot prove it for every
    tile the loops above reach (a tile past the buffer's last row, say)."""
    above: list[For] = []
    guards: list[Expr] = []
    for node in path:
        if isinstance(node, For):
            above.append(node)
            if node is tile_loop:
                break
        elif isinstance(node, IfThenElse):
            guards.append(node.condition)
    fill_loops = [
        For(var, 0, window.extent(d), ForType.SERIAL, Block([]))
        for var, d in zip(loop_vars, window.tile_dims, strict=True)
    ]
    checks: list[Expr] = []
    for var, d in zip(loop_vars, window.tile_dims, strict=True):
        index = simplify(window.start(d) + var)
        size = buffer.shape[d]
        checks += [GE(index, IntImm(0, index.dtype)), LT(index, size)]
    domain = IndexDomain([*above, *fill_loops], guards, checks)
    # `index < S0` is kept even where the dims compiled for make it always true (S0 a
    # multiple of the tile): then every length shares the kernel, as the block's own
    # guards from `split` of a symbolic dim let it
    needed = [
        c
        for c in checks
        if not domain.always(c) or (isinstance(c, LT) and not isinstance(c.b, IntImm))
    ]
    return functools.reduce(And, needed) if needed else None
