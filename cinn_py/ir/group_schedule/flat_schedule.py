"""The flat schedule of elementwise, broadcast and injective groups.

Every block of such a group computes one output element per iteration of its loop
nest, independently of the others, so one flat schedule fits them all: fuse the nest
into one loop over the output in row-major order, cut it into vectors of 16 bytes, and
deal the vectors out to threads, blocks and grid-stride steps:

    serial for (i_0, 0, 64) serial for (i_1, 0, 128)          # 64x128 float32
 -> fuse     i_0_i_1_fused (8192)
 -> split    [blocks 8, threads 256, lanes 4]
 -> bind     blockIdx.x, threadIdx.x; vectorize[4]
    (with a grid-stride loop: split [steps, blocks, threads, lanes], then reorder to
     blocks, threads, steps, lanes, so the bound loops are outermost)

A function is one kernel, so every block shares one launch: the configuration comes
from the block with the most vectors (`launch_config.choose_launch`), the others are
split by the same block and thread counts (and their own steps and lanes), and the
bound guard pass cuts the iterations a smaller block does not have. A 0-D block has no
loop to bind: in a function that binds any, `finish_schedule` wraps it in unit loops
bound to those axes, so that codegen runs it in thread 0 of block 0 only.

A block whose value is a `Reduce` that no reduction tactic took (short rows, the column
reductions the column schedule leaves) is scheduled the flat way over its spatial loops
(the reduce axes live inside the Reduce node), without vectors: one thread per output
element, which runs the reduce loops serially (codegen's accumulator loop). Injective
blocks whose loads do not follow the output's innermost dimension and that the tile
schedule leaves (several blocks, strided slices) are flat too: coalesced stores,
strided loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import Expr, IntImm, IrNode, Reduction
from cinn_py.ir.group_schedule.distribute import BLOCK_AXIS, THREAD_AXIS, distribute, fuse_all
from cinn_py.ir.group_schedule.launch_config import (
    PREFERRED_THREADS,
    VECTOR_BYTES,
    LaunchConfig,
    choose_launch,
    vector_lanes,
)
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.schedule import BlockRef, IRSchedule
from cinn_py.ir.schedule.loop_transformation import static_factor
from cinn_py.ir.stmt import LoweredFunc, ScheduleBlock, ScheduleBlockRealize, Store
from cinn_py.ir.visitor import nodes


def schedule_flat(
    func: LoweredFunc, target: TargetInfo, threads: int | None = None, min_steps: int = 1
) -> tuple[IRSchedule, LaunchConfig | None]:
    """Applies the flat schedule's primitives to every block of `func`; the caller
    finishes (guards) and traces. The launch is None when no block has a loop to bind.
    `threads` and `min_steps` (vectors a thread, at least), for a function of static
    shape: one of `flat_candidates` instead of the rule. Raises ScheduleError for a block this
    schedule does not handle (nested blocks, no store, a non-constant extent)."""
    sch = IRSchedule(func)
    plans = _fused_plans(sch)
    if any(plan.symbolic is not None for plan in plans):
        return sch, _distribute_symbolic(sch, plans, target)
    launch = _launch(plans, target, threads, min_steps)
    if launch is not None:
        for plan in plans:
            if plan.extent:
                _distribute(sch, plan, launch)
    return sch, launch


def flat_knobs(func: LoweredFunc, target: TargetInfo) -> dict[str, int]:
    """What `schedule_flat` decides for `func`: the launch's threads, blocks and
    grid-stride steps, and the vector lanes of the block that sets it (empty when
    nothing is bound)."""
    plans = _fused_plans(IRSchedule(func, trace=False))
    launch = _launch(plans, target)
    if launch is None:
        return {}
    widest = max(plans, key=lambda plan: plan.items)
    return {
        "threads": launch.threads,
        "blocks": launch.blocks,
        "steps": launch.steps,
        "lanes": widest.lanes,
    }


def flat_candidates(func: LoweredFunc, target: TargetInfo) -> list[tuple[int, int]]:
    """(threads, min_steps) the flat schedule can launch `func` with (static extents):
    64 to 1024 threads a block (at most the block limit, and no more warps than the
    vectors need), at least 1, 2, 4 or 8 vectors a thread (grid-stride steps), one pair
    for each distinct launch (the least min_steps giving it); the rule's
    (`choose_launch`: its threads, min_steps 1) among them. Empty when nothing is bound
    or an extent is symbolic."""
    plans = _fused_plans(IRSchedule(func, trace=False))
    items = max((plan.items for plan in plans), default=0)
    if not items or any(plan.symbolic is not None for plan in plans):
        return []
    rule = choose_launch(items, target)
    warp = target.warp_size
    most = min(target.max_threads_per_block, max(warp, -(-items // warp) * warp))
    found: dict[LaunchConfig, tuple[int, int]] = {rule: (rule.threads, 1)}
    for threads in (64, 128, 256, 512, 1024):
        if threads > most:
            continue
        for steps in (1, 2, 4, 8):
            found.setdefault(choose_launch(items, target, threads, steps), (threads, steps))
    return sorted(found.values())


def _fused_plans(sch: IRSchedule) -> list[_BlockPlan]:
    """Every block of `sch` with its loops fused into one (`_fuse`)."""
    return [_fuse(sch, block) for block in sch.get_all_blocks()]


def _launch(
    plans: list[_BlockPlan], target: TargetInfo, threads: int | None = None, min_steps: int = 1
) -> LaunchConfig | None:
    """The launch of the block with the most vectors; None when no block has any."""
    items = max((plan.items for plan in plans), default=0)
    return choose_launch(items, target, threads, min_steps) if items else None


@dataclass(frozen=True)
class _BlockPlan:
    block: BlockRef
    extent: int
    """Elements of the fused loop; 0 for a 0-D block and for an empty tensor."""
    lanes: int
    symbolic: Expr | None = None
    """The fused loop's extent where it reads a symbolic dim (then `extent` is 0)."""

    @property
    def items(self) -> int:
        return self.extent // self.lanes


def _fuse(sch: IRSchedule, block: BlockRef) -> _BlockPlan:
    """Fuses the block's loops into one; its extent and vector lanes (1 for a block
    that reduces: each thread accumulates one output element serially)."""
    itemsize, reduces = _stored_itemsize(sch.get(block).schedule_block)
    loops = sch.get_loops(block)
    if not loops:
        return _BlockPlan(block, 0, 1)
    extent = sch.get(fuse_all(sch, loops)).extent
    if not isinstance(extent, IntImm):
        widest = 1 if reduces else max(1, VECTOR_BYTES // itemsize)
        return _BlockPlan(block, 0, widest, extent)
    lanes = 1 if reduces else vector_lanes(extent.value, itemsize)
    return _BlockPlan(block, extent.value, lanes)


def _distribute(sch: IRSchedule, plan: _BlockPlan, launch: LaunchConfig) -> None:
    """Splits the block's fused loop into [steps,] blocks, threads[, lanes] and binds them."""
    (fused,) = sch.get_loops(plan.block)
    distribute(sch, fused, plan.items, plan.lanes, launch)


def _distribute_symbolic(
    sch: IRSchedule, plans: list[_BlockPlan], target: TargetInfo
) -> LaunchConfig:
    """The flat schedule of a function whose extents read symbolic dims (`S0`, kernel
    arguments): every block's fused loop split into [ceil(extent / threads), threads],
    bound to blockIdx.x and threadIdx.x, its body guarded by `index < extent`; the grid
    is the largest block count, worked out per launch. Nothing here depends on the dims'
    values, so one kernel serves every feed shape: threads are the preferred count, and
    there is no grid-stride loop (the grid grows with the tensor; 2**31 - 1 blocks of 256 threads
    cover any tensor an int64 index addresses on a GPU). Vector lanes where the extent's
    constant factor allows them for every value (`symbolic_lanes`)."""
    threads = min(PREFERRED_THREADS, target.max_threads_per_block)
    for plan in plans:
        if plan.symbolic is None and not plan.extent:
            continue  # a 0-D block: finish_schedule puts it in thread 0 of block 0
        (fused,) = sch.get_loops(plan.block)
        extent = sch.get(fused).extent
        lanes = 1 if plan.lanes == 1 else symbolic_lanes(extent, plan.lanes)
        vector = None
        if lanes > 1:  # exact: the extent's constant factor is a multiple of lanes
            fused, vector = sch.split(fused, [-1, lanes])
        blocks, thread = sch.split(fused, [-1, threads])
        sch.bind(blocks, BLOCK_AXIS)
        sch.bind(thread, THREAD_AXIS)
        if vector is not None:
            sch.vectorize(vector, lanes)
    return LaunchConfig(threads, 0, 1)


def symbolic_lanes(extent: Expr, widest: int) -> int:
    """Vector lanes for a fused loop of symbolic `extent`: up to `widest` (16 bytes of
    the stored dtype), halved until they divide the extent's constant factor (`S0 * 16`
    takes 4 float32 lanes for every S0), so that every vector is whole: no run-time
    check, and a row whose length is all symbol gets scalar accesses."""
    factor = static_factor(extent)
    lanes = widest
    while lanes > 1 and factor % lanes:
        lanes //= 2
    return lanes


def _stored_itemsize(block: ScheduleBlock) -> tuple[int, bool]:
    """The largest element size `block` stores and whether its value reduces;
    ScheduleError for a block this scheduler does not handle."""
    found = list(nodes(block.body, prune=_stops_the_search))
    stores = [n for n in found if isinstance(n, Store)]
    why = None
    if any(isinstance(n, ScheduleBlockRealize) for n in found):
        why = "the block holds nested blocks"
    elif not stores:
        why = "the block stores nothing"
    if why is not None:
        raise ScheduleError("auto_schedule", block.name, why)
    reduces = any(isinstance(n, Reduction) for n in found)  # a Reduce, or an argmax / argmin
    return max(store.tensor.dtype.itemsize for store in stores), reduces


def _stops_the_search(node: IrNode) -> bool:
    """A nested block (refused whole) and a reduction (its body stores nothing)."""
    return isinstance(node, (ScheduleBlockRealize, Reduction))
