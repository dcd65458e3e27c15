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
                   (argmax / argmin: each thread keeps its first best (value, position)
                   and `cinn_block_arg_reduce_y<32, TY>` picks the better pair, the
                   smaller position on a tie: the serial result, bit for bit)

    serial for (i_0, 0, 8192)                         # sum over axis 0 of [8192, 8192]
 -> split    [blocks 256, lanes 32]; bind blockIdx.x, threadIdx.x
 -> factorize_reduction(TY = 32, threadIdx.y): 32 x 32 = 1024-thread blocks

TY (`column_threads`) is the power of two that brings the grid to the thread count the
flat schedule fills the target with (`max_blocks` x 256: four waves on a GPU), at most
32 (a 1024-thread block) and at most the reduced extent / 4 (each thread folds about
four elements or more). A reduction that stores an output goes through a register
(`cache_write`, then `set_buffer` "local"), and only thread (x, 0) of each lane copies
it to the output (a unit loop on threadIdx.y, which codegen emits as `if (threadIdx.y <
1)`), where every y thread would store the same total.

16-byte lanes (`column_lanes`, `lanes_rule`, `schedule_lanes`; the rules' choice where a
group takes them): a group that is one plain Reduce storing an output nothing reads
back, over static dims, gives each thread V = 16 bytes / element neighbouring outputs:

    blockIdx.x   = a group of TX * V outputs (32; 16 where 32 leave fewer blocks than SMs)
    threadIdx.x  = TX threads of V outputs each: a warp reads TX * V * element bytes of
                   each of 32 / TX rows a step
    threadIdx.y  = TY (128) threads striding over the reduced elements, as above
    the V loop   = vectorized: codegen folds the V partials in one walk with one vector
                   load a row, exchanges them once, and thread (x, 0) stores the V
                   totals (`codegen_lanes.plan_lane_reductions`)

On an H200 this beat one output a thread on every shape timed (float16 [8192, 8192]:
0.84 of its time; float32 0.99; smaller grids 0.58 to 0.74, 2026-11-27).

A kept extent that is not a multiple of 32 leaves lanes past the end in the last block.
They must still reach the combine (its barriers wait for the whole block), so no bound
guard may wrap the block: `finish_schedule` clamps the iter values of a block holding a
cross-thread Reduce into their range instead, and those lanes recompute (and store
again, bit for bit) the last elements.

A group that reads its column reductions back (`x - mean(x, axis=0)`, batch norm's
training arithmetic over N, H, W of NHWC) takes the same launch, and each value's
thread mapping follows the reductions':

    reduction blocks   as above; a total the group reads again stays in a register of
                       each (x, y) thread (set_buffer "local": every y thread of a lane
                       holds its column's total after the combine)
    row-shaped values  (mean = sum / N, stored outputs) on blockIdx.x x threadIdx.x,
                       computed by every y thread of the lane (a temp, a register of
                       each) or, for an output, stored by thread (x, 0) alone
    full-shaped values kept dims on blockIdx.x x threadIdx.x, reduced dims fused and
                       split [S serial, TY on threadIdx.y]: thread (x, y) walks rows
                       y, y + TY, ... of its lane's column, as its partials did, so it
                       reads its own register totals and a warp touches 32 neighbouring
                       elements per step (coalesced reads and writes)

x is read from memory once per pass (the sum, the variance, the normalize): a column is
too long for registers (S = N / TY elements a thread), unlike the row schedule's rows.

Which groups take it (`tactics.ColumnTactic.accepts`, tried before the row tactic): with
the pattern's unit dims dropped, the innermost dim is kept and at least 32 long (32
lanes then read contiguous addresses, whatever the reduced dims before it); the
reduced extent gives TY >= 2; every block is a single store of a row-shaped reduction
(a `Reduce`, or an argmax / argmin `ArgReduce`, elementwise producers inlined into its
body), and, when the group reads a reduction back (temp buffers), also of a row-shaped
or full-shaped value. The rest stays on the flat schedule, one thread per output running
its reduce loops serially: an innermost kept extent under 32, patterns whose innermost
non-unit dim is reduced but not all trailing dims are (axes [0, 2] of [A, B, C]: lanes
would read addresses C apart), short reductions (fewer than 8 elements), and huge
output counts (the flat grid is already full); or, when it reads a reduction back, the
row schedule (whose strided walk over a column is correct, not coalesced).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from cinn_py.errors import ScheduleError
from cinn_py.ir.dim_guards import pow2_at_least, pow2_at_most
from cinn_py.ir.expr import IntImm, Reduce
from cinn_py.ir.group_schedule.distribute import (
    BLOCK_AXIS,
    THREAD_AXIS,
    fuse_all,
    inline_computed,
    kept_then_reduced,
    loop_extents,
)
from cinn_py.ir.group_schedule.launch_config import PREFERRED_THREADS, LaunchConfig
from cinn_py.ir.group_schedule.reduce_schedule import (
    ELEMENTS_PER_THREAD,
    find_reduces,
    fuse_sibling_reductions,
    symbolic_cols_bound,
    write_row_outputs,
)
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.schedule import BlockRef, IRSchedule, LoopRef
from cinn_py.ir.schedule.analysis import readers, single_store, storage_name
from cinn_py.ir.stmt import ArgIO, LoweredFunc

LANES = 32
"""Outputs per thread block, on threadIdx.x: a warp reads 32 neighbouring addresses."""
Y_AXIS = "threadIdx.y"


@dataclass(frozen=True)
class ColumnLaunch(LaunchConfig):
    """A 2-D block: `threads` lanes on x (32; with `lanes` V > 1, 32 / V or fewer), and
    `threads_y` on y; `blocks` on x."""

    threads_y: int
    lanes: int = 1


@dataclass(frozen=True)
class ColumnLanes:
    """The 16-byte shape of a column group (`column_lanes`): `lanes` neighbouring
    outputs a thread (one 16-byte vector of each row of its column slice), `threads_x`
    choices of threads along x (their outputs, `threads_x * lanes`, a thread block's
    run of each row)."""

    lanes: int
    threads_x: tuple[int, ...]


def column_threads(pattern: RowPattern, target: TargetInfo, bound: int | None = None) -> int:
    """TY: threads per output along threadIdx.y, a power of two; 1 when a second thread
    dimension does not pay (the flat schedule then stays). With `bound` (the reduced
    dims are symbolic: the bound of their bucket, `symbolic_cols_bound`), TY is the
    bucket's: by the block limit and the bound's work alone, not by the row count, so
    every shape of the bucket gets one kernel."""
    by_block = _floor_pow2(target.max_threads_per_block // LANES)
    if bound is not None:
        return max(1, min(by_block, _floor_pow2(bound // ELEMENTS_PER_THREAD)))
    blocks = -(-pattern.rows // LANES)
    want = target.max_blocks * PREFERRED_THREADS
    threads = pow2_at_least(-(-want // (blocks * LANES)), by_block)
    by_work = _floor_pow2(pattern.cols // ELEMENTS_PER_THREAD)
    return max(1, min(threads, by_block, by_work))


def column_candidates(pattern: RowPattern, target: TargetInfo) -> list[int]:
    """The threadIdx.y counts the column schedule can take for `pattern` (static dims):
    powers of two from 2 up to the block limit's and the reduction's (`ELEMENTS_PER_THREAD`
    elements a thread at least), the rule's (`column_threads`) among them."""
    by_block = _floor_pow2(target.max_threads_per_block // LANES)
    by_work = _floor_pow2(pattern.cols // ELEMENTS_PER_THREAD)
    rule = column_threads(pattern, target)
    found = {rule} if rule >= 2 else set()
    threads = 2
    while threads <= min(by_block, by_work):
        found.add(threads)
        threads *= 2
    return sorted(found)


VECTOR_BYTES = 16
MIN_RUN_BYTES = 32
"""The shortest run of a row a thread block reads with lanes: one 32-byte sector."""


def column_lanes(func: LoweredFunc, pattern: RowPattern) -> ColumnLanes | None:
    """Whether the column group `func` can take V = 16 bytes / element outputs a thread,
    one vector load of each row of its slice (codegen's `plan_lane_reductions`): one
    block, a plain Reduce storing an output nothing reads back (no temps: a mean's
    division is a second block that reads the sum), static dims, every input of one
    element size, and the kept innermost dim and the outputs a multiple of the smallest
    run (`MIN_RUN_BYTES`) of V-element vectors. None otherwise: the group takes one
    output a thread."""
    if func.temp_buffers or not all(isinstance(d, int) for d in pattern.shape):
        return None
    sch = IRSchedule(func, trace=False)
    blocks = sch.get_all_blocks()
    if len(blocks) != 1 or column_kind(sch, blocks[0], pattern) is not ColumnKind.REDUCE:
        return None
    reduces = find_reduces(sch.get(blocks[0]).schedule_block.body)
    if not reduces or any(not isinstance(r, Reduce) for r in reduces):
        return None
    sizes = {a.value.dtype.itemsize for a in func.args if a.io is ArgIO.INPUT}
    if len(sizes) != 1:
        return None
    lanes = VECTOR_BYTES // sizes.pop()
    if lanes < 2:
        return None
    innermost = pattern.shape[max(pattern.kept)]
    choices = []
    threads_x = max(1, MIN_RUN_BYTES // VECTOR_BYTES)
    while threads_x * lanes <= LANES:
        if innermost % (threads_x * lanes) == 0 and pattern.rows % (threads_x * lanes) == 0:
            choices.append(threads_x)
        threads_x *= 2
    return ColumnLanes(lanes, tuple(choices)) if choices else None


def lanes_threads_y(pattern: RowPattern, target: TargetInfo, threads_x: int) -> list[int]:
    """TY choices of a lanes setting: powers of two from 2 while the block holds at
    most `max_threads_per_block` threads and each thread folds `ELEMENTS_PER_THREAD`
    rows or more."""
    by_block = _floor_pow2(target.max_threads_per_block // threads_x)
    by_work = _floor_pow2(pattern.cols // ELEMENTS_PER_THREAD)
    found, threads = [], 2
    while threads <= min(by_block, by_work):
        found.append(threads)
        threads *= 2
    return found


LANES_THREADS_Y = 128
"""TY of the lanes rule (at most; fewer where the block or the column is short): timed
best of 64, 128, 256 and 512 on every column shape and dtype tried on an H200
(2026-11-27: [8192, 8192] and smaller ones, float32 and float16), by 2% to 19%."""
FEW_BLOCKS_OUTPUTS = 16
"""Outputs a block of the lanes rule where 32 a block leave fewer blocks than SMs:
twice the blocks (timed 0.74 against 0.94 of one output a thread for float32, 2026-11-27)."""


def column_rule(func: LoweredFunc, pattern: RowPattern, target: TargetInfo) -> dict[str, int]:
    """The rules' setting: V outputs a thread where the group takes lanes
    (`lanes_rule`), else one output a thread, 32 on x, TY by `column_threads` (TY for
    the bucket where the reduced dims are symbolic)."""
    found = lanes_rule(func, pattern, target)
    if found is not None:
        return found
    bound = symbolic_cols_bound(func, pattern)
    return {"threads_y": column_threads(pattern, target, bound), "lanes": 1, "threads_x": LANES}


def lanes_rule(func: LoweredFunc, pattern: RowPattern, target: TargetInfo) -> dict[str, int] | None:
    """V outputs a thread, 32 outputs a block (a 128-byte run of each row for float32)
    or, where that leaves fewer blocks than SMs, `FEW_BLOCKS_OUTPUTS`; TY up to
    `LANES_THREADS_Y`. On the H200 this beat one output a thread on every shape timed
    (float16 [8192, 8192]: 0.84 of its time; float32 [8192, 8192]: 0.99; smaller
    grids 0.58 to 0.74). None where the group takes no lanes or TY would be 1."""
    shape = column_lanes(func, pattern)
    if shape is None:
        return None
    outputs = LANES if pattern.rows // LANES >= target.sm_count else FEW_BLOCKS_OUTPUTS
    fitting = [t for t in shape.threads_x if t * shape.lanes <= outputs]
    threads_x = max(fitting) if fitting else min(shape.threads_x)
    choices = lanes_threads_y(pattern, target, threads_x)
    if not choices:
        return None
    threads_y = max(t for t in choices if t <= LANES_THREADS_Y)
    return {"threads_y": threads_y, "lanes": shape.lanes, "threads_x": threads_x}


def columns_pattern(pattern: RowPattern) -> bool:
    """The pattern's shape facts allow the column schedule: with unit dims dropped, some
    dim is reduced and the innermost one is kept and at least `LANES` long."""
    dims = [d for d, n in enumerate(pattern.shape) if n != 1]
    if not dims or dims[-1] in pattern.axes or pattern.shape[dims[-1]] < LANES:
        return False
    return any(d in pattern.axes for d in dims)


def schedule_columns(
    func: LoweredFunc,
    target: TargetInfo,
    pattern: RowPattern,
    threads_y: int | None = None,
    lanes: int = 1,
    threads_x: int = LANES,
) -> tuple[IRSchedule, ColumnLaunch]:
    """Applies the column schedule's primitives (for a function `ColumnTactic.accepts`
    takes); the caller finishes (clamps, guards) and traces. `threads_y`, for a
    function of static shape: one of `column_candidates` instead of the rule; with
    `lanes` V > 1 (a group `column_lanes` takes, `threads_x` one of its choices and
    `threads_y` one of `lanes_threads_y`'s): V outputs a thread (`schedule_lanes`)."""
    bound = symbolic_cols_bound(func, pattern)
    if threads_y is None or bound is not None:
        threads_y = column_threads(pattern, target, bound)
    elif lanes > 1:
        return schedule_lanes(func, pattern, threads_y, lanes, threads_x)
    sch = IRSchedule(func)
    inline_computed(sch)  # a computed temp (softmax's exp) is recomputed by each reader
    blocks = -(-pattern.rows // LANES)
    write_row_outputs(sch, pattern)
    temps = {b.name for b in sch.func.temp_buffers}
    outputs = {a.name for a in sch.func.args if a.io is ArgIO.OUTPUT}
    local: list[BlockRef] = []
    for block in sch.get_all_blocks():
        kind = column_kind(sch, block, pattern)
        if kind is ColumnKind.FULL:
            _schedule_full(sch, block, pattern, blocks, threads_y)
            continue
        store = single_store(sch.get(block).schedule_block)
        name = storage_name(store.tensor) if store is not None else None
        lane_zero = kind is ColumnKind.ROW and name in outputs and not readers(sch.func, name)
        _bind_outputs(sch, sch.get_loops(block), blocks, lane_zero)
        if kind is ColumnKind.REDUCE:
            sch.factorize_reduction(block, threads_y, Y_AXIS)
        if name in temps:
            local.append(block)
    for block in local:
        sch.set_buffer(block, "local")
    fuse_sibling_reductions(sch)
    return sch, ColumnLaunch(threads=LANES, blocks=blocks, steps=1, threads_y=threads_y)


def schedule_lanes(
    func: LoweredFunc, pattern: RowPattern, threads_y: int, lanes: int, threads_x: int
) -> tuple[IRSchedule, ColumnLaunch]:
    """V outputs a thread: the outputs split [blocks, threads_x on threadIdx.x, V], the
    reduction factorized over threadIdx.y within each output, and the V loop
    vectorized. Codegen writes the V lanes out (`plan_lane_reductions`): one walk of the
    thread's column slice with one V-element vector load a row, V partials, one
    exchange of the V partials across threadIdx.y, and thread (x, 0) stores the V
    totals. The output is stored straight from the combine (no register temp: codegen
    lets thread y 0 alone store a combine across y)."""
    sch = IRSchedule(func)
    (block,) = sch.get_all_blocks()
    blocks = pattern.rows // (threads_x * lanes)
    outputs = fuse_all(sch, sch.get_loops(block))
    group, lane, vector = sch.split(outputs, [blocks, threads_x, lanes])
    sch.bind(group, BLOCK_AXIS)
    sch.bind(lane, THREAD_AXIS)
    sch.factorize_reduction(block, threads_y, Y_AXIS)
    sch.vectorize(vector, lanes)
    launch = ColumnLaunch(
        threads=threads_x, blocks=blocks, steps=1, threads_y=threads_y, lanes=lanes
    )
    return sch, launch


class ColumnKind(enum.Enum):
    REDUCE = "a row-shaped reduction"
    ROW = "a row-shaped value computed from reductions"
    FULL = "a value of the pattern's full shape"


def column_kind(sch: IRSchedule, block: BlockRef, pattern: RowPattern) -> ColumnKind | None:
    """What the column schedule makes of `block`: a single store of a row-shaped value
    that reduces (Reduce or ArgReduce) or not, or of a full-shaped value that does not;
    None for anything else (the group then takes another schedule)."""
    schedule_block = sch.get(block).schedule_block
    if single_store(schedule_block) is None:
        return None
    try:
        extents = loop_extents(sch, block)
    except ScheduleError:
        return None
    reduces = bool(find_reduces(schedule_block.body))
    if pattern.is_row(extents):
        return ColumnKind.REDUCE if reduces else ColumnKind.ROW
    if extents == pattern.shape and not reduces:
        return ColumnKind.FULL
    return None


def _bind_outputs(
    sch: IRSchedule, loops: list[LoopRef], blocks: int, lane_zero: bool = False
) -> None:
    """A row-shaped block's loops (the kept dims, unit dims between) fused and dealt out
    as 32 outputs per thread block: blockIdx.x x threadIdx.x; with `lane_zero` (an
    output every y thread of the lane would store, the same value), a unit loop on
    threadIdx.y inside: thread (x, 0) stores it."""
    outputs = fuse_all(sch, loops)
    symbolic = not isinstance(sch.get(outputs).extent, IntImm)
    if symbolic:
        # symbolic outputs: exact where 32 divides their constant factor (`B * 64`);
        # otherwise the guard of the lanes past the end goes on each block, and
        # `finish_schedule` turns it into a clamp on the blocks that combine (their
        # lanes must reach the combine's barriers; `B * 40`)
        blocks = -1
    factors = [blocks, LANES, 1] if lane_zero else [blocks, LANES]
    group, lane, *unit = sch.split(outputs, factors, guard_at_block=symbolic)
    sch.bind(group, BLOCK_AXIS)
    sch.bind(lane, THREAD_AXIS)
    for loop in unit:
        sch.bind(loop, Y_AXIS)


def _schedule_full(
    sch: IRSchedule, block: BlockRef, pattern: RowPattern, blocks: int, threads_y: int
) -> None:
    """A full-shaped block (x - mean): its kept dims onto the reductions' lanes
    (blockIdx.x x threadIdx.x, so a thread reads its own lane's registers), its reduced
    dims strided over threadIdx.y as the partials walk them: a warp touches 32
    neighbouring elements of one row slice per step (coalesced)."""
    kept, reduced = kept_then_reduced(sch, block, pattern)
    _bind_outputs(sch, kept, blocks)
    steps = -(-pattern.cols // threads_y)
    column = fuse_all(sch, reduced)
    if not isinstance(sch.get(column).extent, IntImm):
        steps = -1  # a symbolic column: ceil(rows / TY) steps, the last guarded
    _, lane = sch.split(column, [steps, threads_y])
    sch.bind(lane, Y_AXIS)


def _floor_pow2(n: int) -> int:
    return pow2_at_most(n)
