"""The row schedule of a reduction group: one thread block per row.

Fusion hands over a group whose reductions all share one `RowPattern`: they reduce the
dims `axes` of inputs of shape `shape`, so each output "row" (an index of the kept dims)
combines `cols` elements. Every other value of the group that depends on a reduction
is full-shaped (`shape`) or row-shaped, and is read at its own row. So one thread
block per row computes everything the row needs, in order, without a grid-wide
barrier:

    blockIdx.x   = the row (kept dims fused)
    threadIdx.x  = T threads striding over the row's cols (T a power of two, 32..1024,
                   about 4 elements per thread)

    reduction blocks  each thread folds its strided share (serial partial), then
                      `cinn_block_reduce` (warp shuffles + one shared-memory exchange)
                      hands the row's total to every thread   [factorize_reduction]
                      -> a register (set_buffer "local") when the group reads it again
    full blocks       kept dims fused onto blockIdx.x, reduced dims fused and split
                      (cols/T serial, T threads): the same strided walk as the reduces
    row blocks        stored by thread 0 (a unit loop bound to threadIdx.x)
    other blocks      (values no reduction feeds, any shape) grid-stride over the
                      rows x T threads

A softmax is then: max (block reduce) -> sum of exp(x - max) (block reduce) -> out =
exp(x - max) / sum, all in registers but x itself, which each pass reads again (the
row is 16-32 KB at the benchmark sizes: the second and third reads come from L1/L2).

When nothing in the group reads a reduction back and the reduced dims are not the
innermost ones (a column reduction), the serial schedule of `auto_schedule` stays:
one thread per output walks its column, and neighbouring threads read neighbouring
addresses (coalesced). argmax / argmin (`ArgReduce`) are not factorized: in a row
block thread 0 computes them serially.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import IntImm, Reduce
from cinn_py.ir.group_schedule.distribute import BLOCK_AXIS, THREAD_AXIS, distribute, fuse_all
from cinn_py.ir.group_schedule.launch_config import LaunchConfig
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.schedule import BlockRef, IRSchedule
from cinn_py.ir.schedule.analysis import single_store, storage_name
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.ir.visitor import Visitor

ELEMENTS_PER_THREAD = 4
"""How many of a row's elements each thread folds serially before the block reduce:
enough to amortize the reduce, few enough to keep every row in one block."""
MIN_ROW_COLS = 64
"""Below this many cols a lone row reduction keeps one thread per row (a block would
leave most of its threads idle)."""


@dataclass(frozen=True)
class RowPattern:
    """What every reduction of a group reduces: dims `axes` of `shape` (stored as a
    tuple of ints and as sorted, distinct dims). Fusion's `ReducePattern` extends it."""

    shape: tuple[int, ...]
    axes: tuple[int, ...]

    def __post_init__(self) -> None:
        shape = tuple(int(d) for d in self.shape)
        axes = tuple(sorted({int(a) for a in self.axes}))
        if any(not 0 <= a < len(shape) for a in axes):
            raise ValueError(f"axes {axes} out of range for shape {shape}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "axes", axes)

    @property
    def kept(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(self.shape)) if d not in self.axes)

    @property
    def rows(self) -> int:
        return math.prod(self.shape[d] for d in self.kept)

    @property
    def cols(self) -> int:
        return math.prod(self.shape[d] for d in self.axes)

    @property
    def keepdim_shape(self) -> tuple[int, ...]:
        return tuple(1 if d in self.axes else n for d, n in enumerate(self.shape))

    @property
    def dropped_shape(self) -> tuple[int, ...]:
        return tuple(self.shape[d] for d in self.kept)

    @property
    def innermost(self) -> bool:
        """The reduced dims are the trailing ones (a row of contiguous elements)."""
        n = len(self.shape)
        return self.axes == tuple(range(n - len(self.axes), n))

    def is_row(self, shape: tuple[int, ...]) -> bool:
        """A value with one element per row (keepdim or dropped form)."""
        return tuple(shape) in (self.keepdim_shape, self.dropped_shape)


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
    rows, threads = pattern.rows, threads_for(pattern.cols, target)
    if rows > target.max_grid_dims[0]:
        raise ScheduleError(
            "auto_schedule", func.name, f"{rows} rows exceed the grid's {target.max_grid_dims[0]}"
        )
    temps = {b.name for b in func.temp_buffers}
    local: list[BlockRef] = []
    for block in sch.get_all_blocks():
        shape = _loop_extents(sch, block)
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
            _bind_rows(sch, block)
            if reduces:
                sch.factorize_reduction(block, threads, THREAD_AXIS)
            if temp:
                local.append(block)
        elif shape == pattern.shape and pattern.cols > 1:
            _schedule_full(sch, block, pattern, threads)
        elif pattern.is_row(shape):
            _schedule_row_store(sch, block)
        else:
            _schedule_other(sch, block, rows, threads)
    for block in local:
        sch.set_buffer(block, "local")
    return sch, LaunchConfig(threads=threads, blocks=max(rows, 1), steps=1)


def _loop_extents(sch: IRSchedule, block: BlockRef) -> tuple[int, ...]:
    extents = []
    for loop in sch.get_loops(block):
        extent = sch.get(loop).extent
        if not isinstance(extent, IntImm):
            raise ScheduleError(
                "auto_schedule", block.name, f"loop extent {extent!r} is not constant"
            )
        extents.append(extent.value)
    return tuple(extents)


def _bind_rows(sch: IRSchedule, block: BlockRef) -> None:
    """All the block's loops (the row's kept dims, and unit dims) fused onto blockIdx.x;
    a 0-D block is placed on block 0 by `finish_schedule`."""
    loops = sch.get_loops(block)
    if not loops:
        return
    sch.bind(fuse_all(sch, loops), BLOCK_AXIS)


def _schedule_full(sch: IRSchedule, block: BlockRef, pattern: RowPattern, threads: int) -> None:
    """Kept dims onto blockIdx.x, reduced dims strided over the threads."""
    loops = sch.get_loops(block)
    kept = [loops[d] for d in pattern.kept]
    reduced = [loops[d] for d in pattern.axes]
    if kept + reduced != loops:
        sch.reorder(kept + reduced)
    if kept:
        sch.bind(fuse_all(sch, kept), BLOCK_AXIS)
    col = fuse_all(sch, reduced)
    steps = -(-pattern.cols // threads)
    _, lane = sch.split(col, [steps, threads])
    sch.bind(lane, THREAD_AXIS)


def _schedule_row_store(sch: IRSchedule, block: BlockRef) -> None:
    """A per-row value: the row on blockIdx.x, stored by thread 0 alone."""
    loops = sch.get_loops(block)
    if not loops:
        return  # 0-D: finish_schedule puts it on thread 0 of block 0
    row = fuse_all(sch, loops)
    extent = sch.get(row).extent.value
    outer, unit = sch.split(row, [extent, 1])
    sch.bind(outer, BLOCK_AXIS)
    sch.bind(unit, THREAD_AXIS)


def _schedule_other(sch: IRSchedule, block: BlockRef, rows: int, threads: int) -> None:
    """A value no reduction feeds: grid-stride over the launch's rows x threads."""
    loops = sch.get_loops(block)
    if not loops:
        return
    flat = fuse_all(sch, loops)
    extent = sch.get(flat).extent.value
    distribute(sch, flat, extent, 1, LaunchConfig(threads=threads, blocks=max(rows, 1), steps=1))


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
