"""keep_in_registers: a full-shaped temp of a row walk held in each thread's registers.

A softmax folds `e = exp(x - max)` in its sum and reads `e` again to normalize. Lowering
stores such a value once, in a temp of the row's shape (`hlir.op_lowering.lower`'s
`_computed_once`), rather than have both passes compute the exp. The row schedule then
walks the temp's block like any full-shaped block (thread t of row r at step s, lane v,
touches column `(s * T + t) * V + v`), and so do its readers; each thread therefore
only ever reads back the elements it stored itself, and the temp fits in registers:

    keep_in_registers(e_block, axes=[1], threads=T, lanes=V)

  - the temp `e` becomes a register array `e_local` of logical shape [rows, S, T(, V)],
    register dims as `cache_read`'s (`T e_local[S * V]` a thread in codegen);
  - the block's store goes to `e_local[row, s, t(, v)]` at its own walk position, and
    every read of `e` to the element at the reader's, each position proved with isl
    (`cache_read.locate_reads`); the loops over steps and lanes are unrolled, since a
    register array needs constant indices.

Refused, naming the block or the read, where a position is not the walk's (a read at
another column, another row): then `compute_inline` is the way back to one expression
a reader, recomputed.
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import Buffer, Load, MemoryType, Var
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import (
    Path,
    find_realize,
    single_store,
    storage_name,
    taken_names,
    whole_region,
    writers,
)
from cinn_py.ir.schedule.cache_read import _locate, _Redirect, _walk, locate_reads
from cinn_py.ir.stmt import (
    BufferRange,
    For,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Store,
)
from cinn_py.ir.visitor import Mutator

PRIMITIVE = "keep_in_registers"


def keep_in_registers(
    func: LoweredFunc,
    block_name: str,
    axes: Sequence[int],
    threads: int,
    rows_per_block: int = 1,
    lanes: int = 1,
    cols: int | None = None,
) -> tuple[LoweredFunc, str]:
    """The temp that block `block_name` stores, kept in registers along a row walk
    over its dims `axes` (`cache_read`'s walk: `threads`, `rows_per_block`, `lanes`,
    and `cols` for a row of symbolic length); returns the function and the register
    array's name."""
    realize, path, store, temp = _temp_of(func, block_name)
    walk = _walk(temp, axes, threads, rows_per_block, lanes, cols)
    loops = [n for n in path if isinstance(n, For)]
    try:
        at = _locate(realize, loops, [], Load(temp, list(store.indices)), walk)
    except ScheduleError as error:
        raise ScheduleError(
            PRIMITIVE, block_name, f"its store is not at its own walk position: {error.why}"
        ) from None
    try:
        reads, steps = locate_reads(func, temp.name, walk)
    except ScheduleError as error:
        raise ScheduleError(PRIMITIVE, block_name, error.why) from None
    steps |= {var.name for var in (at.step, at.lane) if isinstance(var, Var)}
    name = fresh_name(f"{temp.name}_local", taken_names(func))
    cache = Buffer(name, temp.dtype, walk.cache_dims, MemoryType.LOCAL, walk.array_dims)
    # the store first, while it is the very node `_temp_of` found
    body = _RedirectStore(block_name, store, Store(cache, store.value, at.indices)).visit(func.body)
    body = _Redirect(temp.name, cache, reads, steps).visit(body)
    temps = [cache if b.name == temp.name else b for b in func.temp_buffers]
    return LoweredFunc(func.name, func.args, body, temps), name


def register_problem(
    func: LoweredFunc,
    block_name: str,
    axes: Sequence[int],
    threads: int,
    rows_per_block: int = 1,
    lanes: int = 1,
    cols: int | None = None,
) -> str | None:
    """Why `keep_in_registers` would refuse, or None."""
    try:
        keep_in_registers(func, block_name, axes, threads, rows_per_block, lanes, cols)
    except ScheduleError as error:
        return error.why
    return None


def _temp_of(
    func: LoweredFunc, block_name: str
) -> tuple[ScheduleBlockRealize, Path, Store, Buffer]:
    """The block's realize, its ancestors, its single store and the temp buffer it
    stores, which no other block writes."""
    realize, path = find_realize(func, block_name, PRIMITIVE)
    store = single_store(realize.schedule_block)
    if store is None:
        raise ScheduleError(PRIMITIVE, block_name, "the block is not a single store")
    name = storage_name(store.tensor)
    temp = next((b for b in func.temp_buffers if b.name == name), None)
    if temp is None:
        raise ScheduleError(PRIMITIVE, block_name, f"{name} is not a temp buffer of {func.name}")
    if temp.memory_type is not MemoryType.GLOBAL:
        raise ScheduleError(
            PRIMITIVE, block_name, f"{name} is already in {temp.memory_type.value} memory"
        )
    others = [w for w in writers(func, name) if w != block_name]
    if others:
        raise ScheduleError(PRIMITIVE, block_name, f"{name} is also written by {', '.join(others)}")
    return realize, path, store, temp


class _RedirectStore(Mutator):
    """The block's store of the temp -> `new`, the store of the register array at the
    walk position; the block's write region of the temp -> the whole array."""

    def __init__(self, block: str, old: Store, new: Store) -> None:
        self.block, self.old, self.new = block, old, new

    def visit_Store(self, node: Store) -> Store:
        return self.new if node is self.old else node

    def visit_ScheduleBlock(self, node: ScheduleBlock) -> ScheduleBlock:
        new = self.generic_visit(node)
        if node.name != self.block:
            return new
        temp, cache = storage_name(self.old.tensor), self.new.tensor
        writes = tuple(
            BufferRange(cache, whole_region(cache, f"{cache.name}_d"))
            if storage_name(w.buffer) == temp
            else w
            for w in new.write_buffers
        )
        return ScheduleBlock(new.iter_vars, new.read_buffers, writes, new.name, new.body, new.attrs)
