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
from cinn_py.ir.expr import Buffer, Load, MemoryType
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import (
    find_realize,
    single_store,
    storage_name,
    taken_names,
    whole_region,
    writers,
)
from cinn_py.ir.schedule.cache_read import _locate, _Redirect, _walk, locate_reads
from cinn_py.ir.stmt import BufferRange, For, LoweredFunc, ScheduleBlock, Store
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
    temp = _temp_of(func, block_name)
    walk = _walk(temp, axes, threads, rows_per_block, lanes, cols)
    realize, path = find_realize(func, block_name, PRIMITIVE)
    store = single_store(realize.schedule_block)
    assert store is not None  # _temp_of checked it
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
    for var in (at.step, at.lane):
        if var is not None and hasattr(var, "name"):
            steps.add(var.name)
    name = fresh_name(f"{temp.name}_local", taken_names(func))
    cache = Buffer(name, temp.dtype, walk.cache_dims, MemoryType.LOCAL, walk.array_dims)
    body = _Redirect(temp.name, cache, reads, steps).visit(func.body)
    body = _RedirectStore(block_name, temp.name, cache, at.indices).visit(body)
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


def _temp_of(func: LoweredFunc, block_name: str) -> Buffer:
    """The temp buffer the block stores, which no other block writes."""
    realize, _ = find_realize(func, block_name, PRIMITIVE)
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
    return temp


class _RedirectStore(Mutator):
    """The block's store of the temp -> a store of the register array at the walk
    position; its write region -> the whole array."""

    def __init__(self, block: str, name: str, cache: Buffer, indices: list) -> None:
        self.block, self.name, self.cache, self.indices = block, name, cache, indices

    def visit_ScheduleBlock(self, node: ScheduleBlock) -> ScheduleBlock:
        if node.name != self.block:
            return self.generic_visit(node)
        writes = tuple(
            BufferRange(self.cache, whole_region(self.cache, f"{self.cache.name}_d"))
            if storage_name(w.buffer) == self.name
            else w
            for w in node.write_buffers
        )
        store = single_store(node)
        assert store is not None
        body = _ReplaceStore(store, Store(self.cache, store.value, self.indices)).visit(node.body)
        return ScheduleBlock(node.iter_vars, node.read_buffers, writes, node.name, body, node.attrs)


class _ReplaceStore(Mutator):
    def __init__(self, old: Store, new: Store) -> None:
        self.old, self.new = old, new

    def visit_Store(self, node: Store) -> Store:
        return self.new if node is self.old else node
