"""The grid schedule of a reduction group whose rows are too few to fill the GPU.

The row schedule gives each row one thread block. A reduce-all (sum of [8192, 8192]
to 0-D) is one row: one block of 1024 threads, one SM of 132, 64M elements walked by
1024 threads. The grid schedule gives each row G blocks instead, in one kernel:

    blockIdx.x   the row (kept dims fused)
    blockIdx.y   the chunk: G chunks of L = steps * T * V consecutive elements of the row
    threadIdx.x  T threads striding over the chunk in vectors of V lanes (the row
                 schedule's walk: thread t, step s, lane v at c * L + (s * T + t) * V + v)

    stage 1   every thread loads its steps of the chunk into registers, one V-vector a
              step (16 bytes: one `ld.global.nc.v4`), then every block folds its chunk
              (serial partials from the registers, `cinn_block_reduce`) and stores one
              partial per Reduce to a workspace buffer `X_partials[row, c]`, then counts
              itself in `F_semaphore[row]` (`last_block_done`: fence, then one atomicAdd)
    stage 2   the block that arrives last folds the G partials in index order (strided
              over its threads, scalar loads, a block reduce: an order fixed by index, not
              by arrival), stores the output and runs the rest of the group for the row
              (a mean's divide, a cast), and resets the counter; the other blocks store
              nothing

So the result is bit-identical from run to run, for every reduce kind and dtype: two
stages always, no float atomics (`docs/AUTO_SCHEDULE.md`).

V is the row schedule's (`lanes_for`: 16 bytes of the narrowest full-shaped argument,
halved until it divides the row, so each row and chunk starts V-aligned); T its threads
for V lanes, halved down to 128 while the grid would have fewer blocks than the GPU has
SMs; each thread takes CACHED_STEPS = 4 vectors (64 bytes of registers), so
L = 4 * T * V and G = ceil(cols / L). Where that gives fewer than 2 chunks or more than
the grid's y limit, or V = 1 (a row no vector divides), the scalar plan: G from the
waves the GPU holds, steps elements a thread, loaded one at a time (`grid_plan`).
The primitives: fuse each block's loops, `grid_reduce(L, T, V)` (the two stages, the
partials across threadIdx.x, the register caches and their fills) or `grid_reduce(L)`
and `factorize_reduction` on the partials (scalar), `bind` (blockIdx.x, blockIdx.y),
`factorize_reduction` on every combine, `set_buffer local` on the temps.

Which groups (`tactics.GridTactic.accepts`, the first tactic tried): the reduced dims
are innermost (a row of contiguous elements; a reduce-all always is), every block is a
single store of a row-shaped value (keepdim or dropped), its value either holding
`Reduce`s (not ArgReduce) whose bodies read no other block's result, or holding none
(a row-shaped epilogue, which may read the reductions); and G >= 2 (`grid_plan`). A
group that reads a reduction back at full shape (a softmax over everything: x - max
needs the max before any chunk can go on) would need a grid-wide barrier inside the
kernel, so it keeps the one-block row schedule, as do argmax / argmin and groups with
full-shaped or other outputs.
"""

from __future__ import annotations

import dataclasses

from cinn_py.errors import ScheduleError
from cinn_py.ir.dim_guards import pow2_at_least, shown
from cinn_py.ir.dim_values import concrete
from cinn_py.ir.expr import ArgReduce, IntImm
from cinn_py.ir.group_schedule.distribute import (
    BLOCK_AXIS,
    THREAD_AXIS,
    fuse_all,
    inline_computed,
)
from cinn_py.ir.group_schedule.launch_config import VECTOR_BYTES, GridLaunch
from cinn_py.ir.group_schedule.reduce_schedule import (
    MAX_SINGLE_PASS_BYTES,
    lanes_for,
    symbolic_cols_bound,
    symbolic_lanes,
    threads_for,
)
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.schedule.analysis import (
    all_loads,
    loops_in,
    outermost_reductions,
    realizes,
    single_store,
    storage_name,
)
from cinn_py.ir.stmt import COMPUTED_ONCE, LoweredFunc

CHUNK_AXIS = "blockIdx.y"
MIN_STEPS = 4
"""Each thread folds at least this many steps (elements, or vectors of V) of its chunk,
so a chunk's fold outweighs the block's share of the combine (a partial store, a fence,
an atomic)."""
WAVES = 2
"""Resident blocks the grid asks for per slot: enough to even out the tail."""
MIN_VECTOR_THREADS = 128
"""The smallest block of the vector walk: 4 warps, so the block reduce still has a few
warps to combine and an SM holds enough blocks (at most 32) to fill its threads."""
CACHED_STEPS = MAX_SINGLE_PASS_BYTES // VECTOR_BYTES
"""Vectors each thread of the vector walk takes of its chunk, all held in registers and
loaded up front: 64 bytes of 16-byte vectors (the row schedule's budget for an input one
pass reads), 4 steps, MIN_STEPS of work."""


def walked_cols(func: LoweredFunc, pattern: RowPattern) -> tuple[int, int]:
    """The row length the grid walks and its lanes V: the row's and `lanes_for`'s; for
    a row of symbolic length (`symbolic_cols_bound`: a reduce-all over a -1 batch), its
    bucket's bound, in vectors where the length's constant factor allows them
    (`symbolic_lanes`: `S0 * 8192`, the aligned variant's `S0 * ((S1 / 4) * 4)`), else
    one element a step, the steps past the length masked (their loads skipped: a chunk
    wholly past it costs its blocks a loop of compares). The plan is then the bucket's,
    so every length in it shares the kernel."""
    bound = symbolic_cols_bound(func, pattern)
    if bound is None:
        return pattern.cols, lanes_for(func, pattern)
    return bound, symbolic_lanes(func, pattern, bound)


def grid_plan(
    pattern: RowPattern,
    target: TargetInfo,
    lanes: int = 1,
    cols: int | None = None,
    bucketed: bool = False,
    threads: int | None = None,
) -> GridLaunch | None:
    """The launch of the grid schedule for `pattern` on `target`, or None when one block
    per row is enough: T = the row schedule's threads for the row, G chunks per row so
    that rows * G blocks fill the target WAVES times over (sm_count * max_threads_per_sm
    / T blocks a wave), at most cols / (MIN_STEPS * T) (enough work per thread) and the grid's y
    limit; then L = steps * T elements per chunk and G = ceil(cols / L). With `lanes`
    V > 1 (V dividing cols, `lanes_for`), the vector walk where it gives G >= 2 within
    the y limit: T = the row schedule's threads for V lanes (halved, down to 128, while
    rows * G is under the SM count), CACHED_STEPS vectors a thread, L = steps * T * V,
    G = ceil(cols / L); elsewhere the scalar plan. `cols` overrides the pattern's (the
    bound `walked_cols` gives a row of symbolic length). `bucketed`: the row count is
    symbolic (`symbolic_rows`): the plan is made for its bucket (`planned_rows`), which
    it carries as `rows_bound`. `threads`: T for both plans instead of the rules (a
    tuned setting, `grid_candidates`; no halving)."""
    rows = pattern.rows
    cols = pattern.cols if cols is None else cols
    if rows < 1 or cols < 1:
        return None
    tuned = threads
    if threads is None:
        threads = threads_for(cols, target)
    by_work = min(cols // (MIN_STEPS * threads), target.max_grid_dims[1])
    if by_work < 2:  # decided by the row alone, whatever the row count (`ir.dim_guards`)
        return None
    fill = target.sm_count * max(1, target.max_threads_per_sm // threads) * WAVES
    walked = planned_rows(rows, fill) if bucketed else rows
    chunks = min(-(-fill // walked), by_work)
    if chunks < 2:
        return None
    steps = -(-cols // (chunks * threads))
    chunks = -(-cols // (steps * threads))
    if chunks < 2:
        return None
    bound = walked if bucketed else None
    scalar = GridLaunch(threads, rows, steps, chunks, rows_bound=bound)
    vector = _vector_plan(walked, cols, target, lanes, tuned)
    return scalar if vector is None else dataclasses.replace(vector, blocks=rows, rows_bound=bound)


def grid_candidates(pattern: RowPattern, target: TargetInfo, lanes: int, cols: int) -> list[int]:
    """The threads a block the grid schedule can take for `pattern` (static dims): 128
    to 1024 (at most the block limit) where `grid_plan` still finds a plan of 2 chunks
    or more with them, and the rule's."""
    rule = grid_plan(pattern, target, lanes, cols)
    found = set() if rule is None else {rule.threads}
    for threads in (128, 256, 512, 1024):
        if threads > target.max_threads_per_block:
            continue
        plan = grid_plan(pattern, target, lanes, cols, threads=threads)
        if plan is not None and plan.threads == threads:
            found.add(threads)
    return sorted(found)


def planned_rows(rows: int, fill: int) -> int:
    """The row count a plan over a symbolic count (a -1 batch) is made for: the least
    power of two at or above it, so every count of that bucket gets one plan, one
    kernel (its workspace sized for the bucket: `grid_reduce`'s `rows_bound`); decided
    by comparisons, so a kept schedule's guards hold for the bucket (`ir.dim_guards`).
    At most the power of two at or above `fill` (the blocks the plan asks for): every
    count past it fills the GPU with one block a row, one outcome."""
    return pow2_at_least(rows, pow2_at_least(fill))


def symbolic_rows(func: LoweredFunc) -> bool:
    """Whether a loop over the rows of `func` (a row-shaped block's) has a symbolic
    extent."""
    return any(
        not isinstance(loop.extent, IntImm) for _, path in realizes(func) for loop in loops_in(path)
    )


def _vector_plan(
    rows: int, cols: int, target: TargetInfo, lanes: int, threads: int | None = None
) -> GridLaunch | None:
    """T from the row schedule, halved (down to MIN_VECTOR_THREADS) while the grid has
    fewer blocks than the target has SMs: the work fixes the threads (CACHED_STEPS
    vectors each), smaller blocks spread them over more SMs (4 rows of 40000 float32:
    12 blocks of 1024 threads would use 12 SMs, 80 of 128 use 80)."""
    if lanes < 2 or cols % lanes:
        return None
    tuned = threads is not None
    if threads is None:
        threads = threads_for(cols, target, lanes)
    chunks = -(-cols // (CACHED_STEPS * threads * lanes))
    while not tuned and threads > MIN_VECTOR_THREADS and rows * chunks < target.sm_count:
        threads //= 2
        chunks = -(-cols // (CACHED_STEPS * threads * lanes))
    if not 2 <= chunks <= target.max_grid_dims[1]:
        return None
    return GridLaunch(threads=threads, blocks=rows, steps=CACHED_STEPS, chunks=chunks, lanes=lanes)


def grid_problem(func: LoweredFunc, pattern: RowPattern, cols: int | None = None) -> str | None:
    """Why the blocks of `func` cannot take the grid schedule, or None when they can;
    its Reduces must each cover `cols` elements (default: the pattern's row)."""
    cols = pattern.cols if cols is None else cols
    temps = {b.name for b in func.temp_buffers}
    reduces = 0
    for realize, path in realizes(func):
        block = realize.schedule_block
        store = single_store(block)
        if store is None:
            return f"block {block.name} is not a single store"
        if dict(block.attrs).get(COMPUTED_ONCE):
            continue  # a value computed once: inlined back into its readers
        shape = []
        for loop in loops_in(path):
            extent = concrete(loop.extent)  # a symbolic row count: at the dims compiled
            if extent is None:
                return f"block {block.name} has a loop of non-constant extent"
            shape.append(extent)
        if not pattern.is_row(tuple(shape)):
            shape_text = [shown(n) for n in shape]
            return f"block {block.name} stores shape {shape_text}, not a row of the pattern"
        symbolic = [n for n in store.tensor.shape if not isinstance(n, IntImm)]
        if len(symbolic) > 1:
            return f"block {block.name} stores a row value of more than one symbolic dim"
        for node in outermost_reductions(store.value):
            if isinstance(node, ArgReduce):
                return f"block {block.name} holds an argmax / argmin"
            length = 1
            for var in node.reduce_axis:
                if var.lower != 0 or var.upper is None:
                    return f"block {block.name} reduces over {var.name} of unknown range"
                length *= var.upper
            if length != cols:
                return f"block {block.name} reduces {length} elements, not the row's {cols}"
            read = {storage_name(load.tensor) for load in all_loads(node)} & temps
            if read:
                return (
                    f"block {block.name} reads the reduction {sorted(read)[0]} back inside a "
                    "Reduce (a full-shaped read: it needs a grid-wide barrier)"
                )
            reduces += 1
    if not reduces:
        return "the function has no Reduce"
    return None


def schedule_grid(
    func: LoweredFunc, target: TargetInfo, pattern: RowPattern, threads: int | None = None
) -> tuple[IRSchedule, GridLaunch]:
    """Applies the grid schedule's primitives (for a function `GridTactic.accepts`
    takes); the caller finishes (guards) and traces. `threads`, for a function of
    static shape: one of `grid_candidates` instead of the rules."""
    cols, lanes = walked_cols(func, pattern)
    bucketed = symbolic_rows(func)
    launch = grid_plan(pattern, target, lanes, cols, bucketed, None if bucketed else threads)
    why = "no grid plan for the pattern" if launch is None else grid_problem(func, pattern, cols)
    if why is not None:
        raise ScheduleError("auto_schedule", func.name, f"the grid schedule does not apply: {why}")
    sch = IRSchedule(func)
    inline_computed(sch)  # a value computed once (softmax's exp) is recomputed by each reader
    for block in sch.get_all_blocks():
        loops = sch.get_loops(block)
        if len(loops) > 1:
            fuse_all(sch, loops)
    bound = launch.rows_bound
    if launch.lanes > 1:  # the partials come walked across threadIdx.x, from registers
        row, chunk = sch.grid_reduce(
            launch.chunk_size, launch.threads, launch.lanes, rows_bound=bound
        )
    else:
        row, chunk = sch.grid_reduce(launch.chunk_size, rows_bound=bound)
    sch.bind(row, BLOCK_AXIS)
    sch.bind(chunk, CHUNK_AXIS)
    temps = {b.name for b in func.temp_buffers}
    for block in sch.get_all_blocks():
        schedule_block = sch.get(block).schedule_block
        found = outermost_reductions(schedule_block.body)
        if found and all(node.thread_axis is None for node in found):
            sch.factorize_reduction(block, launch.threads, THREAD_AXIS)
        store = single_store(schedule_block)
        if store is not None and storage_name(store.tensor) in temps:
            sch.set_buffer(block, "local")
    return sch, launch
