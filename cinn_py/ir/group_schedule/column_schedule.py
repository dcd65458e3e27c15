"""The column schedule of a reduction group: per-thread partials across row slices.

A column reduction reduces dims that are not the innermost ones (`sum(x[8192, 8192],
axis=0)`, axis 1 of [A, R, C]): neighbouring output elements read neighbouring
addresses, so one thread per output walking its column serially is coalesced, but it
leaves only as many threads as outputs (8192 threads each reading 8192 elements: a few
percent of what an H100 keeps in flight). The column schedule adds a second thread
dimension over the reduced elements:

    blockIdx.x   = a group of 32 outputs (the kept dims fused, row-major)
    threadIdx.x  = the output within the group (32 lanes: a warp reads 32 neighbouring
                   addresses, one 128-byte line of float32)
    threadIdx.y  = TY threads striding over the output's reduced elements: thread
                   (x, y) folds reduced indices y, y + TY, y + 2 TY, ... serially (its
                   partial), then `cinn_block_reduce_y<32, TY>` combines the TY partials
                   of each x lane through shared memory and hands the total to each of
                   them                                   [factorize_reduction, threadIdx.y]

    serial for (i_0, 0, 8192)                         # sum over axis 0 of [8192, 8192]
 -> split    [blocks 256, lanes 32]; bind blockIdx.x, threadIdx.x
 -> factorize_reduction(TY = 32, threadIdx.y): 32 x 32 = 1024-thread blocks

TY (`column_threads`) is the power of two that brings the grid to the thread count the
flat schedule fills the target with (`max_blocks` x 256: four waves on a GPU), at most
32 (a 1024-thread block) and at most the reduced extent / 4 (each thread folds about
four elements or more). Every thread of a block stores its lane's total (the same value
TY times: a benign race, as in the row schedule).

A kept extent that is not a multiple of 32 leaves lanes past the end in the last block.
They must still reach the combine (its barriers wait for the whole block), so no bound
guard may wrap the block: `finish_schedule` clamps the iter values of a block holding a
cross-thread Reduce into their range instead, and those lanes recompute (and store
again, bit for bit) the last elements.

Which groups take it (`wants_column_schedule`; the row schedule is asked first): every
block of the group is a reduction (a `Reduce`, elementwise producers inlined into its
body) storing one row-shaped value of the group's pattern, horizontally fused siblings
included; no temp buffers (a group that reads a reduction back takes the row
schedule); with the pattern's unit dims dropped, the innermost dim is kept and at least
32 long (32 lanes then read contiguous addresses, whatever the reduced dims before it);
and the reduced extent gives TY >= 2. The rest stays on the flat schedule, one thread
per output running its reduce loops serially: argmax / argmin (`ArgReduce`, not
factorized), an innermost kept extent under 32, patterns whose innermost non-unit dim
is reduced but not all trailing dims are (axes [0, 2] of [A, B, C]: lanes would read
addresses C apart), short reductions (fewer than 8 elements), and huge output counts
(the flat grid is already full).
"""

from __future__ import annotations

from dataclasses import dataclass

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import ArgReduce
from cinn_py.ir.group_schedule.distribute import BLOCK_AXIS, THREAD_AXIS, fuse_all, loop_extents
from cinn_py.ir.group_schedule.launch_config import PREFERRED_THREADS, LaunchConfig
from cinn_py.ir.group_schedule.reduce_schedule import ELEMENTS_PER_THREAD, find_reduces
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.schedule import BlockRef, IRSchedule
from cinn_py.ir.schedule.analysis import single_store
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.ir.visitor import Visitor

LANES = 32
"""Outputs per thread block, on threadIdx.x: a warp reads 32 neighbouring addresses."""
Y_AXIS = "threadIdx.y"


@dataclass(frozen=True)
class ColumnLaunch(LaunchConfig):
    """A 2-D block: `threads` (32) lanes on x, `threads_y` on y; `blocks` on x."""

    threads_y: int


def column_threads(pattern: RowPattern, target: TargetInfo) -> int:
    """TY: threads per output along threadIdx.y, a power of two; 1 when a second thread
    dimension does not pay (the flat schedule then stays)."""
    blocks = -(-pattern.rows // LANES)
    want = target.max_blocks * PREFERRED_THREADS
    threads = 1 << (-(-want // (blocks * LANES)) - 1).bit_length()
    by_block = _floor_pow2(target.max_threads_per_block // LANES)
    by_work = _floor_pow2(pattern.cols // ELEMENTS_PER_THREAD)
    return max(1, min(threads, by_block, by_work))


def columns_pattern(pattern: RowPattern) -> bool:
    """The pattern's shape facts allow the column schedule: with unit dims dropped, some
    dim is reduced and the innermost one is kept and at least `LANES` long."""
    dims = [d for d, n in enumerate(pattern.shape) if n != 1]
    if not dims or dims[-1] in pattern.axes or pattern.shape[dims[-1]] < LANES:
        return False
    return any(d in pattern.axes for d in dims)


def wants_column_schedule(func: LoweredFunc, pattern: RowPattern, target: TargetInfo) -> bool:
    """Whether `func` (lowered from a group with `pattern`) takes the column schedule: see
    the module docstring."""
    if func.temp_buffers or not columns_pattern(pattern):
        return False
    blocks = -(-pattern.rows // LANES)
    if blocks > target.max_grid_dims[0] or column_threads(pattern, target) < 2:
        return False
    sch = IRSchedule(func, trace=False)
    all_blocks = sch.get_all_blocks()
    return bool(all_blocks) and all(_is_column_block(sch, b, pattern) for b in all_blocks)


def schedule_columns(
    func: LoweredFunc, target: TargetInfo, pattern: RowPattern
) -> tuple[IRSchedule, ColumnLaunch]:
    """Applies the column schedule's primitives (for a function `wants_column_schedule`
    accepts); the caller finishes (clamps, guards) and traces."""
    sch = IRSchedule(func)
    blocks = -(-pattern.rows // LANES)
    threads_y = column_threads(pattern, target)
    for block in sch.get_all_blocks():
        outputs = fuse_all(sch, sch.get_loops(block))
        group, lane = sch.split(outputs, [blocks, LANES])
        sch.bind(group, BLOCK_AXIS)
        sch.bind(lane, THREAD_AXIS)
        sch.factorize_reduction(block, threads_y, Y_AXIS)
    return sch, ColumnLaunch(threads=LANES, blocks=blocks, steps=1, threads_y=threads_y)


def _is_column_block(sch: IRSchedule, block: BlockRef, pattern: RowPattern) -> bool:
    """A single store of a row-shaped value that reduces (Reduce, no ArgReduce)."""
    schedule_block = sch.get(block).schedule_block
    if single_store(schedule_block) is None or _has_arg_reduce(schedule_block.body):
        return False
    if not find_reduces(schedule_block.body):
        return False
    try:
        extents = loop_extents(sch, block)
    except ScheduleError:
        return False
    return pattern.is_row(extents)


def _floor_pow2(n: int) -> int:
    return 1 << (n.bit_length() - 1) if n >= 1 else 0


class _ArgReduces(Visitor):
    def __init__(self) -> None:
        self.found = False

    def visit_ArgReduce(self, node: ArgReduce) -> None:
        self.found = True


def _has_arg_reduce(node: object) -> bool:
    finder = _ArgReduces()
    finder.visit(node)
    return finder.found
