"""The row schedule of a reduction group: one thread block (or one warp) per row.

Fusion hands over a group whose reductions all share one `RowPattern`: they reduce the
dims `axes` of inputs of shape `shape`, so each output "row" (an index of the kept dims)
combines `cols` elements. Every other value of the group that depends on a reduction
is full-shaped (`shape`) or row-shaped, and is read at its own row. So one thread
block per row computes everything the row needs, in order, without a grid-wide
barrier:

    blockIdx.x   = the row (kept dims fused)
    threadIdx.x  = T threads striding over the row's cols in vectors of V lanes: thread
                   t at step s touches cols (s * T + t) * V + v, v in [0, V) (T a power
                   of two, 32..1024, about 4 vectors per thread)
    threadIdx.y  = when T is one warp (rows of <= 128 vectors), R = 8 rows per block, a
                   warp each: row = blockIdx.x * R + threadIdx.y (a warp's reduce is
                   shuffles alone, so the warps of a block never wait for each other)

V (`lanes_for`) is 16 bytes of the narrowest dtype among the group's full-shaped inputs
and outputs (4 for float32, 8 for float16 / bfloat16, 2 for float64, at most 8), so the
narrowest access is one 16-byte vector and a wider one two or four (a float16 row with a
float32 output: one ld.global.v4 and two st.global.v4 per step); it is halved until it
divides cols (every row then starts V-aligned), and is 1 when the reduced dims are not
the innermost ones (a strided row has no contiguous run) or no argument is full-shaped.
V = 1 is the plain strided walk `s * T + t`.

    reduction blocks  each thread folds its strided share (serial partial), then
                      `cinn_block_reduce` (warp shuffles + one shared-memory exchange)
                      hands the row's total to every thread   [factorize_reduction]
                      -> a register (set_buffer "local") when the group reads it again
    computed values   a full-shaped temp no reduction stores (softmax's exp, which
                      lowering stores once for its sum and its normalize): a full
                      block, kept in each thread's registers along the walk
                      [keep_in_registers]; over the register budget, inlined back
                      into its readers [compute_inline]
    full blocks       kept dims on the rows' axes, reduced dims fused and split
                      [S serial, T threads, V vectorized]: the same walk as the reduces,
                      each step one vector store per output
    row blocks        stored by thread 0 of the row (a unit loop on threadIdx.x); a
                      reduction into a row-shaped output (a row sum) goes through a
                      register first (`cache_write`), so that one thread stores it
    other blocks      (values no reduction feeds, any shape) grid-stride over the
                      blocks x T threads (the first warp row when R > 1)
    input rows        an input that several passes read (a softmax's x: max, sum,
                      normalize; layer_norm's: mean, variance, scale) is loaded once
                      into each thread's registers, S x V of them (S = cols / (T * V)),
                      by a first block, one vector load per step; every pass reads the
                      registers                                    [cache_read local]
                      With V > 1 an input only a reduction reads (a row sum's) is
                      cached too when its share is at most 64 bytes a thread: the fill
                      issues all of a thread's vector loads up front.

A softmax is then: load x's row into registers -> max (block reduce) -> e = exp(x -
max) into registers -> sum of e (block reduce) -> out = e * (1 / sum): x leaves HBM
once, the output is written once, each exp is computed once. The register budget: at
most 16 steps and 128 bytes of cached rows per thread (`TargetInfo.row_cache_bytes`,
the exp's array counted apart: x's is dead once it is filled), inputs read by several
passes first (float32 rows up to 32768 cols at V = 4, T = 1024); a longer row is not
cached and each pass reads it again.

Which groups take it (`tactics.RowTactic.accepts`, after the grid and column tactics):
a group that reads a reduction back (it must: a register is per thread), or one whose
reduced dims are innermost and at least MIN_ROW_COLS long. When nothing in the group
reads a reduction back and the reduced dims are not the innermost ones (a column
reduction), the column schedule (`column_schedule.py`) or the flat one
(`flat_schedule.py`, one thread per output) takes the group. argmax / argmin (`ArgReduce`) blocks are
reduction blocks like the others: each thread searches its strided share for its first
best (value, position), and `cinn_block_arg_reduce` combines the pairs across the row's
threads (`arg_reduction.py`), so a lone argmax over long innermost rows takes this
schedule too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cinn_py.errors import ScheduleError
from cinn_py.ir.buckets import bucket_floor
from cinn_py.ir.dim_guards import pow2_at_least
from cinn_py.ir.dim_values import concrete
from cinn_py.ir.expr import ArgReduce, Buffer, IntImm, Reduction, Var, as_int
from cinn_py.ir.group_schedule.distribute import (
    BLOCK_AXIS,
    THREAD_AXIS,
    computed_temps,
    distribute,
    fuse_all,
    kept_then_reduced,
    loop_extents,
)
from cinn_py.ir.group_schedule.launch_config import VECTOR_BYTES, LaunchConfig
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.schedule import BlockRef, IRSchedule, LoopRef
from cinn_py.ir.schedule.analysis import (
    has_reduce,
    readers,
    realizes,
    single_store,
    storage_name,
)
from cinn_py.ir.schedule.cache_read import cache_problem
from cinn_py.ir.schedule.loop_transformation import static_factor
from cinn_py.ir.schedule.reduction_fusion import fusion_problem
from cinn_py.ir.stmt import ArgIO, For, LoweredFunc
from cinn_py.ir.visitor import nodes

ELEMENTS_PER_THREAD = 4
"""How many of a row's accesses (vectors of V elements; elements at V = 1) each thread
folds serially before the block reduce: enough to amortize the reduce, few enough to
keep every row in one block."""
MAX_CACHED_STEPS = 16
"""At most this many steps (accesses) per thread of a cached row: its unrolled walks."""
MAX_SINGLE_PASS_BYTES = 64
"""An input only one reduction reads is cached (for its up-front vector loads) when its
share is at most this many bytes a thread."""
MAX_LANES = 8
"""The most lanes of a row's vector: 16 bytes of float16; a 1-byte dtype loads 8 bytes."""
ROWS_PER_BLOCK = 8
"""Rows (warps) per thread block when one warp walks a row: 256 threads."""
ROW_THREAD_AXIS = "threadIdx.y"
PERSISTENT_SM_SHARE = 4
"""A persistent grid keeps at least 1 / 4 of an SM's threads (512 of 2048) busy: fewer
keep too few loads in flight to cover the memory's latency, and no later block comes
to make up for it."""
PERSISTENT_MIN_ROWS = 2
"""A persistent grid's blocks each walk at least this many of the rows' blocks (else it
is the one-block-a-row schedule with a loop around it)."""
MIN_ROW_COLS = 64
"""Below this many cols a lone row reduction keeps one thread per row (a block would
leave most of its threads idle)."""


def threads_for(cols: int, target: TargetInfo, lanes: int = 1) -> int:
    """T: the power of two near cols / (4 * V) (about 4 vectors of V lanes a thread), at
    least a warp, at most the block limit."""
    vectors = -(-cols // lanes)
    want = max(1, -(-vectors // ELEMENTS_PER_THREAD))
    limit = 1 << (target.max_threads_per_block.bit_length() - 1)
    return max(target.warp_size, pow2_at_least(want, min(limit, 1024)))


def lanes_for(func: LoweredFunc, pattern: RowPattern) -> int:
    """V: 16 bytes of the narrowest dtype among the full-shaped arguments (at most
    `MAX_LANES`), halved until it divides the row; 1 for a row that is not innermost
    (not contiguous), a group with no full-shaped argument, or one whose reductions are
    all argmax / argmin (their search takes one element a step: lanes would only cut
    the threads of the row)."""
    if pattern.cols < 2:
        return 1
    return _lanes_dividing(func, pattern, pattern.cols)


def _lanes_dividing(func: LoweredFunc, pattern: RowPattern, length: int) -> int:
    """`lanes_for`'s V, halved until it divides `length` instead of the row."""
    if not pattern.innermost:
        return 1
    reduces = find_reduces(func.body)
    if reduces and all(isinstance(r, ArgReduce) for r in reduces):
        return 1
    full = _full_shaped(func, pattern)
    if not full:
        return 1
    lanes = min(MAX_LANES, max(1, VECTOR_BYTES // min(b.dtype.itemsize for b in full)))
    while length % lanes:
        lanes //= 2
    return lanes


def _full_shaped(func: LoweredFunc, pattern: RowPattern) -> list[Buffer]:
    """`func`'s buffer arguments of the pattern's shape (symbolic dims at their values
    at the dims being compiled), in argument order."""
    return [
        arg.value
        for arg in func.args
        if isinstance(arg.value, Buffer) and _static_shape(arg.value) == pattern.shape
    ]


def symbolic_cols_bound(func: LoweredFunc, pattern: RowPattern) -> int | None:
    """For a row of symbolic length (a full-shaped argument's reduced dims read symbolic
    dims), the static bound its reductions iterate to (their axes' extent: the
    length's bucket, `ir.buckets.REDUCE_BUCKETS`); None for a static row."""
    symbolic = any(
        any(not isinstance(buffer.shape[d], IntImm) for d in pattern.axes)
        for buffer in _full_shaped(func, pattern)
    )
    if not symbolic:
        return None
    reduces = find_reduces(func.body)
    if not reduces:
        return None
    bound = 1
    for axis in reduces[0].reduce_axis:
        if axis.upper is None:
            return None
        bound *= axis.upper
    return bound


def symbolic_lanes(func: LoweredFunc, pattern: RowPattern, bound: int) -> int:
    """V for a row of symbolic length: `lanes_for`'s 16 bytes, halved until V divides
    both the length's constant factor (`static_factor`: 8 for the aligned variant's
    `(S1 / 8) * 8`, `driver.aligned_variants`) and its bucket's bound; 1 for a length
    that is all symbol (`S1`: the scalar kernel)."""
    full = _full_shaped(func, pattern)
    if not full:
        return 1
    factor = math.prod(static_factor(full[0].shape[d]) for d in pattern.axes)
    return _lanes_dividing(func, pattern, math.gcd(factor, as_int(bound)))


def symbolic_threads(
    func: LoweredFunc, pattern: RowPattern, bound: int, lanes: int, target: TargetInfo
) -> int:
    """T for a row of symbolic length walked to its bucket's `bound`: the row schedule's
    threads for the bucket's shortest length (`bucket_floor`: each thread holds about
    4 vectors there, as for a static row of that length), more where the bound would
    then take more steps than a register cache holds (`MAX_CACHED_STEPS`, and
    `TargetInfo.row_cache_bytes` of the narrowest full-shaped input): the bucket
    (8192, 16384] of float32 gets 512 threads, 4 steps live just past 8192, 8 at 16384."""
    itemsize = min((b.dtype.itemsize for b in _full_shaped(func, pattern)), default=4)
    steps = max(1, min(MAX_CACHED_STEPS, target.row_cache_bytes // (lanes * itemsize)))
    least = threads_for(bucket_floor(bound), target, lanes)
    wanted = -(-bound // (lanes * steps))
    limit = 1 << (target.max_threads_per_block.bit_length() - 1)
    return max(least, pow2_at_least(wanted, min(limit, 1024)))  # least: a warp or more


def _symbolic_warp_rows(
    func: LoweredFunc, pattern: RowPattern, threads: int, target: TargetInfo
) -> bool:
    """Whether the rows are short (a warp each, contiguous) and their count reads a
    symbolic dim (a full-shaped argument's kept dims): R of them a block may then leave
    warps past the last row, which `finish_schedule` clamps to it (the split's guard
    `row < rows` turned into `min`: such a warp folds the last row again, its stores
    guarded), so R need not divide the count (`B * S` rows of a router's softmax over
    8 experts: 8 rows a block)."""
    if threads != target.warp_size or not pattern.innermost:
        return False
    full = _full_shaped(func, pattern)
    return bool(full) and any(not isinstance(full[0].shape[d], IntImm) for d in pattern.kept)


def rows_factor(func: LoweredFunc, pattern: RowPattern) -> int:
    """The constant factor of the rows of a symbolic function (`static_factor` of the
    product of a full-shaped argument's kept dims): 32 for `S0 * 32 * S1`; 1 where no
    argument is full-shaped."""
    full = _full_shaped(func, pattern)
    return math.prod(static_factor(full[0].shape[d]) for d in pattern.kept) if full else 1


def takes_dims(func: LoweredFunc) -> bool:
    """Whether `func` takes symbolic dims (kernel arguments `S0`, ...)."""
    return any(isinstance(arg.value, Var) for arg in func.args)


def _static_shape(buffer: Buffer) -> tuple[int | None, ...]:
    """The buffer's dims as numbers (symbolic ones at the dims being compiled)."""
    return tuple(concrete(d) for d in buffer.shape)


def row_candidates(
    func: LoweredFunc, pattern: RowPattern, target: TargetInfo
) -> list[tuple[int, int]]:
    """(threads a row, rows a block) the row schedule can take for `func` of static
    shape: threads from a warp up to the row's vectors (a power of two, at most the
    block limit); where a warp walks a row, 1 to 32 rows a block (at most the rows);
    each within the block and grid limits. `threads_for` and `rows_per_block` pick one."""
    lanes = lanes_for(func, pattern)
    vectors = max(1, -(-pattern.cols // lanes))
    limit = min(1 << (target.max_threads_per_block.bit_length() - 1), 1024)
    top = max(target.warp_size, pow2_at_least(vectors, limit))
    found = []
    threads = target.warp_size
    while threads <= top:
        per_blocks = [1]
        if threads == target.warp_size and pattern.rows >= 2:
            most = min(pow2_at_least(pattern.rows), target.max_threads_per_block // threads)
            per_blocks = [r for r in (1, 2, 4, 8, 16, 32) if r <= most]
        for per_block in per_blocks:
            if -(-pattern.rows // per_block) <= target.max_grid_dims[0]:
                found.append((threads, per_block))
        threads *= 2
    return found


def schedule_rows(
    func: LoweredFunc,
    target: TargetInfo,
    pattern: RowPattern,
    threads: int | None = None,
    per_block: int | None = None,
    blocks_per_sm: int = 0,
    prefetch: bool = False,
) -> tuple[IRSchedule, LaunchConfig]:
    """Applies the row schedule's primitives; the caller finishes (guards) and traces.
    `threads` (a row) and `per_block` (rows a block), for a function of static shape:
    one of `row_candidates` instead of the rules. `blocks_per_sm` > 0: a grid of that
    many blocks an SM, each walking rows that far apart (`persist_rows`); `prefetch`
    with it: each row's input loads issued one row ahead (`IRSchedule.prefetch_rows`)."""
    sch = IRSchedule(func)
    bound = symbolic_cols_bound(func, pattern)
    if bound is None:
        lanes = lanes_for(func, pattern)
        threads = threads or threads_for(pattern.cols, target, lanes)
    else:  # a symbolic row length: the rules' threads and rows for its bucket
        lanes = symbolic_lanes(func, pattern, bound)
        threads = symbolic_threads(func, pattern, bound, lanes, target)
        per_block = None
    if per_block is None:
        per_block = _rule_rows_per_block(func, pattern, threads, target)
    blocks = max(-(-pattern.rows // per_block), 1)
    if blocks > target.max_grid_dims[0]:
        raise ScheduleError(
            "auto_schedule",
            func.name,
            f"{blocks} blocks of rows exceed the grid's {target.max_grid_dims[0]}",
        )
    write_row_outputs(sch, pattern)
    kept = _registers_for_computed(sch, pattern, threads, lanes, target, bound)
    temps = {b.name for b in sch.func.temp_buffers}
    local: list[BlockRef] = []
    for block in sch.get_all_blocks():
        shape = loop_extents(sch, block)
        realize = sch.get(block)
        reduces = has_reduce(realize.schedule_block)
        store = single_store(realize.schedule_block)
        temp = store is not None and storage_name(store.tensor) in temps
        if block in kept:
            _schedule_full(sch, block, pattern, threads, per_block, lanes, bound)
        elif reduces or temp:
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
                sch.factorize_reduction(block, threads, THREAD_AXIS, lanes)
            if temp:
                local.append(block)
        elif shape == pattern.shape and pattern.cols > 1:
            _schedule_full(sch, block, pattern, threads, per_block, lanes, bound)
        elif pattern.is_row(shape):
            _schedule_row_store(sch, block, per_block)
        else:
            _schedule_other(sch, block, blocks, threads, per_block)
    for block in local:
        sch.set_buffer(block, "local")
    for block in kept:
        try:
            sch.keep_in_registers(block, pattern.axes, threads, per_block, lanes, bound)
        except ScheduleError:  # a reader off the walk (a reduction simplified away)
            sch.compute_inline(block)
    budget, caches = _cache_rows(
        sch, pattern, threads, per_block, lanes, target.row_cache_bytes, bound
    )
    fuse_sibling_reductions(sch)
    if blocks_per_sm:
        grid = persistent_grid(target, blocks_per_sm)
        prefetched = caches if prefetch else []
        steps = persist_rows(sch, pattern, threads, per_block, lanes, budget, grid, prefetched)
        return sch, LaunchConfig(threads=threads * per_block, blocks=grid, steps=steps)
    return sch, LaunchConfig(threads=threads * per_block, blocks=blocks, steps=1)


def persistent_candidates(
    func: LoweredFunc, pattern: RowPattern, target: TargetInfo, threads: int, per_block: int
) -> list[int]:
    """The blocks an SM (`blocks_per_sm`, powers of two) a persistent grid of the row
    schedule can take for `func` of static shape at `threads` a row and `per_block`
    rows a block: from a quarter of the SM's threads (`PERSISTENT_SM_SHARE`) to as
    many as it holds (`TargetInfo.max_threads_per_sm`), each block walking at least
    `PERSISTENT_MIN_ROWS` of the rows' blocks; none for a function with a block of no
    loop (`persist_blocks` refuses those)."""
    if takes_dims(func) or any(
        not any(isinstance(n, For) for n in path) for _, path in realizes(func)
    ):
        return []
    blocks = -(-pattern.rows // per_block)
    block_threads = threads * per_block
    most = target.max_threads_per_sm // block_threads
    least = -(-target.max_threads_per_sm // (PERSISTENT_SM_SHARE * block_threads))
    found = []
    count = pow2_at_least(least)
    while count <= most and persistent_grid(target, count) * PERSISTENT_MIN_ROWS <= blocks:
        found.append(count)
        count *= 2
    return found


def persistent_grid(target: TargetInfo, blocks_per_sm: int) -> int:
    """The blocks a persistent row schedule launches: `blocks_per_sm` on every SM."""
    return target.sm_count * blocks_per_sm


def persist_rows(
    sch: IRSchedule,
    pattern: RowPattern,
    threads: int,
    per_block: int,
    lanes: int,
    budget: int,
    grid: int,
    prefetch: Sequence[str] = (),
) -> int:
    """`grid` blocks, each walking the rows `grid` apart (`IRSchedule.persist_blocks`),
    and what that makes worth it: each input every row shares (a norm's weight and
    bias, of the row's own shape) kept in registers within what is left of the budget
    (`budget` bytes a thread, after the rows' own caches), loaded once per block before
    its rows instead of once per row; the row caches named in `prefetch`
    double-buffered (the next row's loads issued before this row's reductions,
    `IRSchedule.prefetch_rows`). Returns the rows a block walks (the launch's steps)."""
    row_dims = tuple(pattern.shape[d] for d in pattern.axes)
    steps = -(-pattern.cols // (threads * lanes))
    for cache in sch.func.temp_buffers:
        if cache.name in prefetch:  # its second buffer comes out of the budget too
            budget -= steps * lanes * cache.dtype.itemsize
    if steps <= MAX_CACHED_STEPS:
        for arg in sch.func.args:
            value = arg.value
            if arg.io is not ArgIO.INPUT or not isinstance(value, Buffer):
                continue
            if _static_shape(value) != row_dims or len(row_dims) == len(pattern.shape):
                continue
            size = steps * lanes * value.dtype.itemsize
            axes = tuple(range(len(row_dims)))
            if size > budget or cache_problem(sch.func, arg.name, axes, threads, 1, lanes):
                continue
            sch.cache_read(arg.name, "local", axes, threads, 1, lanes)
            budget -= size
    _, rows = sch.persist_blocks(grid)
    for name in prefetch:
        sch.prefetch_rows(name)
    return sch.get(rows).extent.value  # ceil(blocks / grid): persist_blocks made it constant


def _rule_rows_per_block(
    func: LoweredFunc, pattern: RowPattern, threads: int, target: TargetInfo
) -> int:
    """R by the rules: `rows_per_block`, made to serve every row count of a symbolic
    function."""
    per_block = rows_per_block(pattern, threads, target)
    if _symbolic_warp_rows(func, pattern, threads, target):
        per_block = ROWS_PER_BLOCK  # not from the signature's count: the kernel serves all
    elif takes_dims(func) and per_block > 1:
        # R must divide the rows for every value: the rows of a block past the last row
        # would need their combine's element clamped to `rows - 1`, which `finish` does
        # for constant row counts only. So R is halved until it divides the rows'
        # constant factor (B * 12 heads * S rows: 4 rows a block), and then R rows a
        # block split exactly for every value, no row past the end.
        factor = rows_factor(func, pattern)
        while factor % per_block:
            per_block //= 2
    return per_block


def _registers_for_computed(
    sch: IRSchedule,
    pattern: RowPattern,
    threads: int,
    lanes: int,
    target: TargetInfo,
    bound: int | None,
) -> list[BlockRef]:
    """The blocks of computed temps (`computed_temps`: a softmax's exp, stored once by
    lowering) this schedule keeps in registers along the walk (`keep_in_registers`):
    each when its share of a row fits a thread's budget (at most `MAX_CACHED_STEPS`
    steps and `TargetInfo.row_cache_bytes`); the others are inlined back into their
    readers (`compute_inline`: recomputed by each)."""
    cols = pattern.cols if bound is None else bound
    steps = -(-cols // (threads * lanes))
    kept = []
    for block in computed_temps(sch):
        dtype = single_store(sch.get(block).schedule_block).tensor.dtype
        size = steps * lanes * dtype.itemsize
        # a row index to walk by (a reduce-all's single row has none: no blockIdx loop)
        full = loop_extents(sch, block) == pattern.shape and bool(pattern.kept)
        fits = steps <= MAX_CACHED_STEPS and size <= target.row_cache_bytes
        if full and pattern.innermost and fits:
            kept.append(block)
        else:
            sch.compute_inline(block)
    return kept


def write_row_outputs(sch: IRSchedule, pattern: RowPattern) -> None:
    """Each reduction that stores a row-shaped output directly (a row sum nothing in
    the group reads again) stores it through a temp instead (`cache_write`): the
    reduction keeps every thread of the row, for its combine, and its total goes to a
    register of each; the copy into the output is a row-shaped block, which one thread
    of the row stores. Stored straight from the combine, the total would be written by
    every thread of the row, the same value T times."""
    outputs = {arg.name for arg in sch.func.args if arg.io is ArgIO.OUTPUT}
    for block in sch.get_all_blocks():
        realize = sch.get(block)
        store = single_store(realize.schedule_block)
        if store is None or storage_name(store.tensor) not in outputs:
            continue
        if not has_reduce(realize.schedule_block) or not pattern.is_row(loop_extents(sch, block)):
            continue
        if readers(sch.func, storage_name(store.tensor)):
            continue
        sch.cache_write(block)


def fuse_sibling_reductions(sch: IRSchedule) -> None:
    """Reduction blocks of the row that do not feed each other (layer_norm's sum and sum
    of squares; a max and a sum of one x) go into one block: one walk over the row and
    one exchange for all their partials (`IRSchedule.fuse_reductions`). Each block
    joins the first earlier one it can legally move to; a reduction that reads another
    (softmax's sum reads the max) stays apart."""
    pending = [
        block
        for block in sch.get_all_blocks()
        if (found := find_reduces(sch.get(block).schedule_block.body))
        and not any(isinstance(node, ArgReduce) for node in found)
    ]
    while pending:
        anchor = pending.pop(0)
        for other in list(pending):
            if fusion_problem(sch.func, anchor.name, other.name) is None:
                sch.fuse_reductions([anchor, other])
                pending.remove(other)


def rows_per_block(pattern: RowPattern, threads: int, target: TargetInfo) -> int:
    """R: rows a thread block takes, one warp each (threadIdx.y), when one warp walks a
    row (a short row): its reduce is shuffles alone, so warps need no common barrier
    and a block of R warps keeps the SM busy where one warp per block would not."""
    if threads != target.warp_size or pattern.rows < 2:
        return 1
    return pow2_at_least(pattern.rows, ROWS_PER_BLOCK)


def _cache_rows(
    sch: IRSchedule,
    pattern: RowPattern,
    threads: int,
    per_block: int,
    lanes: int,
    budget: int,
    bound: int | None = None,
) -> tuple[int, list[str]]:
    """Keeps in registers each input row that several passes read (a softmax's x: the
    max, the sum, the normalize), so the row leaves HBM once; with vectors, also an
    input only a reduction reads, so that its loads are 16 bytes each, issued up front.
    Within the register budget (`budget` bytes a thread, all inputs together:
    `TargetInfo.row_cache_bytes`; a row that does not fit is read again by each pass,
    from L1/L2), inputs read by several passes first. A row of symbolic length is
    cached to its bucket's `bound` (the columns past the length not loaded). Returns
    the budget left and the caches' names (their fill blocks')."""
    cols = pattern.cols if bound is None else bound
    steps = -(-cols // (threads * lanes))
    if steps > MAX_CACHED_STEPS:
        return budget, []
    wanted: list[tuple[bool, int, str]] = []
    for arg in sch.func.args:
        value = arg.value
        if arg.io is not ArgIO.INPUT or not isinstance(value, Buffer):
            continue
        if _static_shape(value) != pattern.shape:
            continue
        size = steps * lanes * value.dtype.itemsize
        blocks = readers(sch.func, arg.name)
        if len(blocks) < 2:
            single = lanes > 1 and size <= MAX_SINGLE_PASS_BYTES and len(blocks) == 1
            if not single or not has_reduce(sch.get(BlockRef(blocks[0])).schedule_block):
                continue
        wanted.append((len(blocks) < 2, size, arg.name))
    caches = []
    for _, size, name in sorted(wanted, key=lambda w: w[0]):
        if size > budget:
            continue
        if cache_problem(sch.func, name, pattern.axes, threads, per_block, lanes, bound) is None:
            block = sch.cache_read(name, "local", pattern.axes, threads, per_block, lanes, bound)
            caches.append(block.name)
            budget -= size
    return budget, caches


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
    extent = sch.get(row).extent
    if isinstance(extent, IntImm):
        outer, inner = sch.split(row, [-(-extent.value // per_block), per_block])
    else:  # symbolic rows: ceil(rows / R) blocks, the last one guarded
        outer, inner = sch.split(row, [-1, per_block])
    sch.bind(outer, BLOCK_AXIS)
    sch.bind(inner, ROW_THREAD_AXIS)


def _schedule_full(
    sch: IRSchedule,
    block: BlockRef,
    pattern: RowPattern,
    threads: int,
    per_block: int,
    lanes: int = 1,
    bound: int | None = None,
) -> None:
    """Kept dims onto the rows' axes, reduced dims split [steps, threads, lanes]: the
    threads stride over the row in vectors of `lanes` (vectorized: one vector store
    per output and step). A row of symbolic length is walked to its bucket's `bound`
    in a constant number of steps (guarded past the length), as its reductions are,
    so that a register cache of the row (read at constant indices) serves it too."""
    kept, reduced = kept_then_reduced(sch, block, pattern)
    _bind_rows(sch, kept, per_block)
    col = fuse_all(sch, reduced)
    steps = -(-pattern.cols // (threads * lanes))
    extent = sch.get(col).extent
    if not isinstance(extent, IntImm):  # a symbolic row length
        outer = -1 if bound is None else -(-bound // (threads * lanes))
        if lanes > 1 and static_factor(extent) % lanes == 0:
            _, thread, lane = sch.split(col, [outer, threads, lanes])
            sch.vectorize(lane, lanes)
        else:
            _, thread = sch.split(col, [outer, threads])
        sch.bind(thread, THREAD_AXIS)
        return
    if lanes == 1:
        _, thread = sch.split(col, [steps, threads])
    else:
        _, thread, lane = sch.split(col, [steps, threads, lanes])
        sch.vectorize(lane, lanes)
    sch.bind(thread, THREAD_AXIS)


def _schedule_row_store(sch: IRSchedule, block: BlockRef, per_block: int) -> None:
    """A per-row value: the row on the rows' axes, stored by thread 0 of its warp."""
    loops = sch.get_loops(block)
    if not loops:
        return  # 0-D: finish_schedule puts it on thread 0 of block 0
    row = fuse_all(sch, loops)
    extent = sch.get(row).extent
    factors = [extent.value, 1] if isinstance(extent, IntImm) else [-1, 1]
    outer, unit = sch.split(row, factors)
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
    extent = sch.get(flat).extent
    if not isinstance(extent, IntImm):
        raise ScheduleError(
            "auto_schedule",
            block.name,
            f"a block no reduction feeds has the symbolic extent {extent!r}",
        )
    extent = extent.value
    if per_block > 1:
        unit, flat = sch.split(flat, [1, extent])
        sch.bind(unit, ROW_THREAD_AXIS)
    distribute(sch, flat, extent, 1, LaunchConfig(threads=threads, blocks=blocks, steps=1))


def find_reduces(node: object) -> list[Reduction]:
    """Every `Reduction` (`Reduce` and `ArgReduce`) node under `node`: what
    `factorize_reduction` rewrites, and (with `thread_axis` set) what combines across
    threads (argmax / argmin: factorized as pairs)."""
    return [n for n in nodes(node) if isinstance(n, Reduction)]
