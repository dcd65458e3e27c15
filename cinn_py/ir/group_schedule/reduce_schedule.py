"""The row schedule of a reduction group: one thread block (or one warp) per row.

Fusion hands over a group whose reductions all share one `RowPattern`: they reduce the
dims `axes` of inputs of shape `shape`, so each output "row" (an index of the kept dims)
combines `cols` elements. Every other value of the group that depends on a reduction
is full-shaped (`shape`) or row-shaped, and is read at its own row. So one thread
block per row computes everything the row needs, in order, without a grid-wide
barrier:

    blockIdx.x   = the row (kept dims fused)
    threadIdx.x  = T threads striding over the row's cols (T a power of two, 32..1024,
                   about 4 elements per thread)
    threadIdx.y  = when T is one warp (rows of <= 128), R = 8 rows per block, a warp
                   each: row = blockIdx.x * R + threadIdx.y (a warp's reduce is
                   shuffles alone, so the warps of a block never wait for each other)

    reduction blocks  each thread folds its strided share (serial partial), then
                      `cinn_block_reduce` (warp shuffles + one shared-memory exchange)
                      hands the row's total to every thread   [factorize_reduction]
                      -> a register (set_buffer "local") when the group reads it again
    full blocks       kept dims on the rows' axes, reduced dims fused and split
                      (cols/T serial, T threads): the same strided walk as the reduces
    row blocks        stored by thread 0 of the row (a unit loop on threadIdx.x)
    other blocks      (values no reduction feeds, any shape) grid-stride over the
                      blocks x T threads (the first warp row when R > 1)
    input rows        an input that several passes read (a softmax's x: max, sum,
                      normalize; layer_norm's: mean, variance, scale) is loaded once
                      into each thread's registers, S = cols/T of them, by a first
                      block; every pass reads the registers        [cache_read local]

A softmax is then: load x's row into registers -> max (block reduce) -> sum of
exp(x - max) (block reduce) -> out = exp(x - max) / sum: x leaves HBM once, the output
is written once. Rows longer than 16 * T (16384 at T = 1024) are not cached (register
budget) and each pass reads the row again.

When nothing in the group reads a reduction back and the reduced dims are not the
innermost ones (a column reduction), the column schedule (`column_schedule.py`) or the
serial one of `auto_schedule` takes the group. argmax / argmin (`ArgReduce`) are not
factorized: in a row block thread 0 computes them serially.
"""

from __future__ import annotations

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import Buffer, Reduce
from cinn_py.ir.group_schedule.distribute import (
    BLOCK_AXIS,
    THREAD_AXIS,
    distribute,
    fuse_all,
    loop_extents,
)
from cinn_py.ir.group_schedule.launch_config import LaunchConfig
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.schedule import BlockRef, IRSchedule, LoopRef
from cinn_py.ir.schedule.analysis import readers, single_store, storage_name
from cinn_py.ir.schedule.cache_read import cache_problem
from cinn_py.ir.stmt import ArgIO, LoweredFunc
from cinn_py.ir.visitor import Visitor

ELEMENTS_PER_THREAD = 4
"""How many of a row's elements each thread folds serially before the block reduce:
enough to amortize the reduce, few enough to keep every row in one block."""
MAX_CACHED_STEPS = 16
"""At most this many elements per thread of a cached row (registers: 16 floats); a
longer row is read again by each pass (from L1/L2)."""
ROWS_PER_BLOCK = 8
"""Rows (warps) per thread block when one warp walks a row: 256 threads."""
ROW_THREAD_AXIS = "threadIdx.y"
MIN_ROW_COLS = 64
"""Below this many cols a lone row reduction keeps one thread per row (a block would
leave most of its threads idle)."""


def threads_for(cols: int, target: TargetInfo) -> int:
    """T: the power of two near cols / 4, at least a warp, at most the block limit."""
    want = max(1, -(-cols // ELEMENTS_PER_THREAD))
    threads = 1 << (want - 1).bit_length()
    limit = 1 << (target.max_threads_per_block.bit_length() - 1)
    return max(target.warp_size, min(threads, limit, 1024))


def wants_row_schedule(func: LoweredFunc, pattern: RowPattern) -> bool:
    """Whether `func` (lowered from a group with `pattern`) takes the row schedule: it
    must when the group reads a reduction back (its temps); it pays when the reduced
    dims are innermost and long enough and some reduction can be factorized."""
    if func.temp_buffers:
        return True
    if pattern.rows == 0 or not pattern.innermost or pattern.cols < MIN_ROW_COLS:
        return False
    return _has_reduce(func)


def schedule_rows(
    func: LoweredFunc, target: TargetInfo, pattern: RowPattern
) -> tuple[IRSchedule, LaunchConfig]:
    """Applies the row schedule's primitives; the caller finishes (guards) and traces."""
    sch = IRSchedule(func)
    threads = threads_for(pattern.cols, target)
    per_block = rows_per_block(pattern, threads, target)
    blocks = max(-(-pattern.rows // per_block), 1)
    if blocks > target.max_grid_dims[0]:
        raise ScheduleError(
            "auto_schedule",
            func.name,
            f"{blocks} blocks of rows exceed the grid's {target.max_grid_dims[0]}",
        )
    temps = {b.name for b in func.temp_buffers}
    local: list[BlockRef] = []
    for block in sch.get_all_blocks():
        shape = loop_extents(sch, block)
        realize = sch.get(block)
        reduces = _has_reduce(realize.schedule_block)
        store = single_store(realize.schedule_block)
        temp = store is not None and storage_name(store.tensor) in temps
        if reduces or temp:
            # Every thread computes it: the block reduce needs them all, and a temp is
            # a register each thread reads back.
            if not pattern.is_row(shape):
                raise ScheduleError(
                    "auto_schedule",
                    block.name,
                    f"reduces to shape {list(shape)}, not a row of {list(pattern.shape)} "
                    f"reduced over {list(pattern.axes)}",
                )
            _bind_rows(sch, sch.get_loops(block), per_block)
            if reduces:
                sch.factorize_reduction(block, threads, THREAD_AXIS)
            if temp:
                local.append(block)
        elif shape == pattern.shape and pattern.cols > 1:
            _schedule_full(sch, block, pattern, threads, per_block)
        elif pattern.is_row(shape):
            _schedule_row_store(sch, block, per_block)
        else:
            _schedule_other(sch, block, blocks, threads, per_block)
    for block in local:
        sch.set_buffer(block, "local")
    _cache_rows(sch, pattern, threads, per_block)
    return sch, LaunchConfig(threads=threads * per_block, blocks=blocks, steps=1)


def rows_per_block(pattern: RowPattern, threads: int, target: TargetInfo) -> int:
    """R: rows a thread block takes, one warp each (threadIdx.y), when one warp walks a
    row (a short row): its reduce is shuffles alone, so warps need no common barrier
    and a block of R warps keeps the SM busy where one warp per block would not."""
    if threads != target.warp_size or pattern.rows < 2:
        return 1
    return min(ROWS_PER_BLOCK, 1 << (pattern.rows - 1).bit_length())


def _cache_rows(sch: IRSchedule, pattern: RowPattern, threads: int, per_block: int) -> None:
    """Keeps in registers each input row that several passes read (a softmax's x: the
    max, the sum, the normalize), so the row leaves HBM once."""
    steps = -(-pattern.cols // threads)
    if steps > MAX_CACHED_STEPS:
        return
    for arg in sch.func.args:
        value = arg.value
        if arg.io is not ArgIO.INPUT or not isinstance(value, Buffer):
            continue
        if tuple(getattr(d, "value", None) for d in value.shape) != pattern.shape:
            continue
        if len(readers(sch.func, arg.name)) < 2:
            continue
        if cache_problem(sch.func, arg.name, pattern.axes, threads, per_block) is None:
            sch.cache_read(arg.name, "local", pattern.axes, threads, per_block)


def _bind_rows(sch: IRSchedule, loops: list[LoopRef], per_block: int) -> None:
    """The loops (the row's kept dims, and unit dims) fused onto blockIdx.x, or with
    several rows per block onto blockIdx.x x threadIdx.y; a 0-D block is placed on
    block 0 by `finish_schedule`."""
    if not loops:
        return
    row = fuse_all(sch, loops)
    if per_block == 1:
        sch.bind(row, BLOCK_AXIS)
        return
    extent = sch.get(row).extent.value
    outer, inner = sch.split(row, [-(-extent // per_block), per_block])
    sch.bind(outer, BLOCK_AXIS)
    sch.bind(inner, ROW_THREAD_AXIS)


def _schedule_full(
    sch: IRSchedule, block: BlockRef, pattern: RowPattern, threads: int, per_block: int
) -> None:
    """Kept dims onto the rows' axes, reduced dims strided over the threads."""
    loops = sch.get_loops(block)
    kept = [loops[d] for d in pattern.kept]
    reduced = [loops[d] for d in pattern.axes]
    if kept + reduced != loops:
        sch.reorder(kept + reduced)
    _bind_rows(sch, kept, per_block)
    col = fuse_all(sch, reduced)
    steps = -(-pattern.cols // threads)
    _, lane = sch.split(col, [steps, threads])
    sch.bind(lane, THREAD_AXIS)


def _schedule_row_store(sch: IRSchedule, block: BlockRef, per_block: int) -> None:
    """A per-row value: the row on the rows' axes, stored by thread 0 of its warp."""
    loops = sch.get_loops(block)
    if not loops:
        return  # 0-D: finish_schedule puts it on thread 0 of block 0
    row = fuse_all(sch, loops)
    extent = sch.get(row).extent.value
    outer, unit = sch.split(row, [extent, 1])
    _bind_rows(sch, [outer], per_block)
    sch.bind(unit, THREAD_AXIS)


def _schedule_other(
    sch: IRSchedule, block: BlockRef, blocks: int, threads: int, per_block: int
) -> None:
    """A value no reduction feeds: grid-stride over the launch's blocks x threads (of
    the first row warp, with several rows per block)."""
    loops = sch.get_loops(block)
    if not loops:
        return
    flat = fuse_all(sch, loops)
    extent = sch.get(flat).extent.value
    if per_block > 1:
        unit, flat = sch.split(flat, [1, extent])
        sch.bind(unit, ROW_THREAD_AXIS)
    distribute(sch, flat, extent, 1, LaunchConfig(threads=threads, blocks=blocks, steps=1))


class _Reduces(Visitor):
    def __init__(self) -> None:
        self.found: list[Reduce] = []

    def visit_Reduce(self, node: Reduce) -> None:
        self.found.append(node)
        self.generic_visit(node)


def find_reduces(node: object) -> list[Reduce]:
    """Every `Reduce` node under `node` (not ArgReduce: it is not factorized)."""
    finder = _Reduces()
    finder.visit(node)
    return finder.found


def _has_reduce(node: object) -> bool:
    return bool(find_reduces(node))
