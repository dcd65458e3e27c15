"""The auto-scheduler of elementwise, broadcast and injective groups.

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
loop to bind: in a function that binds any, it is wrapped in unit loops bound to those
axes, so that codegen runs it in thread 0 of block 0 only.

A reduction group with too few rows to fill the GPU (a reduce-all) takes the grid
schedule (`grid_schedule.py`: several blocks per row, combined by the last one to
finish). A reduction group that reads a reduction back, or reduces long innermost rows,
takes the row schedule instead (`reduce_schedule.py`: a thread block per row, block reduces);
a group of column reductions (reduced dims before a kept innermost dim of 32 or more)
takes the column schedule (`column_schedule.py`: 32 outputs per block on threadIdx.x,
per-thread partials of each on threadIdx.y, combined through shared memory).
Any other block whose value is a `Reduce` is scheduled the flat way over its spatial
loops (the reduce axes live inside the Reduce node), without vectors: one thread per
output element, which runs the reduce loops serially (codegen's accumulator loop).

A group of one block that reads an input transposed (its innermost index walks
another output dim than the innermost) takes the tile schedule instead
(`tile_schedule.py`: 32 x 32 tiles through shared memory, so that reads and writes are
both coalesced). Other injective blocks whose loads do not follow the output's innermost
dimension (several blocks, strided slices) stay on this flat schedule: coalesced
stores, strided loads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cinn_py.errors import ScheduleError
from cinn_py.ir import expr as e
from cinn_py.ir.bound_guards import ScopedStmtMutator, insert_bound_guards
from cinn_py.ir.expr import IntImm, MemoryType, Reduce, Var
from cinn_py.ir.group_schedule.column_schedule import schedule_columns, wants_column_schedule
from cinn_py.ir.group_schedule.distribute import distribute, fuse_all
from cinn_py.ir.group_schedule.grid_schedule import schedule_grid, wants_grid_schedule
from cinn_py.ir.group_schedule.launch_config import (
    LaunchConfig,
    choose_launch,
    vector_lanes,
)
from cinn_py.ir.group_schedule.reduce_schedule import (
    RowPattern,
    find_reduces,
    schedule_rows,
    wants_row_schedule,
)
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.group_schedule.tile_schedule import schedule_tiles, tile_plan
from cinn_py.ir.isl_domain import IndexDomain
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule import BlockRef, IRSchedule, Trace
from cinn_py.ir.schedule.analysis import single_store
from cinn_py.ir.schedule.thread_sync import check_barriers
from cinn_py.ir.simplify import simplify
from cinn_py.ir.stmt import (
    BindInfo,
    Block,
    For,
    ForType,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Stmt,
    Store,
)
from cinn_py.ir.visitor import Mutator, Visitor


@dataclass(frozen=True)
class ScheduleResult:
    """A scheduled function, ready for codegen, and the primitives that made it.

    `trace` replays on the lowered function to the schedule before its finishing passes
    (0-D block placement, bound guards); `replay` runs both and gives `func` again.
    """

    func: LoweredFunc
    trace: Trace
    launch: LaunchConfig | None
    """The shared configuration (None when no block has a loop to bind)."""

    def replay(self, lowered: LoweredFunc) -> LoweredFunc:
        return finish_schedule(self.trace.replay(lowered))


@dataclass(frozen=True)
class _BlockPlan:
    block: BlockRef
    extent: int
    """Elements of the fused loop; 0 for a 0-D block and for an empty tensor."""
    lanes: int

    @property
    def items(self) -> int:
        return self.extent // self.lanes


def auto_schedule(
    func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
) -> ScheduleResult:
    """Schedules every block of `func` for `target`, inserts the bound guards, and
    returns the result with its trace. `pattern`: what the group's reductions reduce
    (fusion's ReducePattern); a group whose rows are too few to fill the target gets
    the grid schedule (`grid_schedule.py`), a group that reads a reduction back, or a
    long innermost reduction, the row schedule (`reduce_schedule.py`), a column reduction the
    column schedule (`column_schedule.py`), the rest the flat one.

    Raises ScheduleError for a block this scheduler does not handle (nested blocks, no
    store, a non-constant extent)."""
    if pattern is not None and wants_grid_schedule(func, pattern, target):
        sch, launch = schedule_grid(func, target, pattern)
        return ScheduleResult(finish_schedule(sch.func), sch.trace, launch)
    if pattern is not None and wants_column_schedule(func, pattern, target):
        # before the row schedule: a column group that reads its reductions back (a mean
        # over axis 0 subtracted from x) would take the row schedule's strided walk
        sch, launch = schedule_columns(func, target, pattern)
        return ScheduleResult(finish_schedule(sch.func), sch.trace, launch)
    if pattern is not None and wants_row_schedule(func, pattern):
        sch, launch = schedule_rows(func, target, pattern)
        return ScheduleResult(finish_schedule(sch.func), sch.trace, launch)
    if func.temp_buffers:
        raise ScheduleError(
            "auto_schedule",
            func.name,
            "the function reads a reduction result back, which needs the row schedule: "
            "pass the group's reduce pattern",
        )
    tiles = tile_plan(func)
    if tiles is not None:
        sch, launch = schedule_tiles(func, tiles)
        return ScheduleResult(finish_schedule(sch.func), sch.trace, launch)
    sch = IRSchedule(func)
    plans = [_fuse(sch, block) for block in sch.get_all_blocks()]
    items = max((plan.items for plan in plans), default=0)
    launch = choose_launch(items, target) if items else None
    if launch is not None:
        for plan in plans:
            if plan.extent:
                _distribute(sch, plan, launch)
    return ScheduleResult(finish_schedule(sch.func), sch.trace, launch)


def finish_schedule(func: LoweredFunc) -> LoweredFunc:
    """The passes after the primitives: 0-D blocks placed on the bound axes, the iter
    values of blocks that combine across threads clamped into range, then the bound
    guards; and the check that shared memory has its barriers (`check_barriers`:
    ScheduleError for a race a missing `sync_threads` leaves, or a misplaced barrier)."""
    func = insert_bound_guards(_clamp_cross_thread_blocks(_place_scalar_blocks(func)))
    check_barriers(func)
    return func


def _fuse(sch: IRSchedule, block: BlockRef) -> _BlockPlan:
    """Fuses the block's loops into one; its extent and vector lanes (1 for a block
    that reduces: each thread accumulates one output element serially)."""
    itemsize, reduces = _stored_itemsize(sch.get(block).schedule_block)
    loops = sch.get_loops(block)
    if not loops:
        return _BlockPlan(block, 0, 1)
    extent = sch.get(fuse_all(sch, loops)).extent
    if not isinstance(extent, IntImm):
        raise ScheduleError(
            "auto_schedule", block.name, f"loop extent {extent!r} is not a constant"
        )
    lanes = 1 if reduces else vector_lanes(extent.value, itemsize)
    return _BlockPlan(block, extent.value, lanes)


def _distribute(sch: IRSchedule, plan: _BlockPlan, launch: LaunchConfig) -> None:
    """Splits the block's fused loop into [steps,] blocks, threads[, lanes] and binds them."""
    (fused,) = sch.get_loops(plan.block)
    distribute(sch, fused, plan.items, plan.lanes, launch)


def _stored_itemsize(block: ScheduleBlock) -> tuple[int, bool]:
    """The largest element size `block` stores and whether its value reduces;
    ScheduleError for a block this scheduler does not handle."""
    finder = _Finder()
    finder.visit(block.body)
    why = None
    if finder.nested:
        why = "the block holds nested blocks"
    elif not finder.stores:
        why = "the block stores nothing"
    if why is not None:
        raise ScheduleError("auto_schedule", block.name, why)
    return max(store.tensor.dtype.itemsize for store in finder.stores), finder.reduce


class _Finder(Visitor):
    """The stores of a block body, and whether it reduces or nests blocks."""

    def __init__(self) -> None:
        self.stores: list[Store] = []
        self.reduce = False
        self.nested = False

    def visit_Store(self, node: Store) -> None:
        self.stores.append(node)
        self.generic_visit(node)

    def visit_Reduce(self, node: Reduce) -> None:
        self.reduce = True

    visit_ArgReduce = visit_Reduce  # argmax / argmin reduce too

    def visit_ScheduleBlockRealize(self, node: ScheduleBlockRealize) -> None:
        self.nested = True


# ---- 0-D blocks -------------------------------------------------------------------------


def _place_scalar_blocks(func: LoweredFunc) -> LoweredFunc:
    """Wraps each loop-less block in unit loops bound to every axis the function binds
    (blockIdx before threadIdx), so that one thread of one block runs it."""
    axes = _Axes()
    axes.visit(func.body)
    if not axes.bound:
        return func
    order = sorted(axes.bound, key=lambda b: (b.value.startswith("thread"), b.value))
    taken = axes.names | {arg.name for arg in func.args}
    body = _WrapScalars(order, taken).visit(func.body)
    if body is func.body:
        return func
    return LoweredFunc(func.name, func.args, body, func.temp_buffers)


class _Axes(Visitor):
    """The bound axes of a function and every Var name in it."""

    def __init__(self) -> None:
        self.bound: set[BindInfo] = set()
        self.names: set[str] = set()

    def visit_For(self, node: For) -> None:
        if node.bind_info is not None:
            self.bound.add(node.bind_info)
        self.generic_visit(node)

    def visit_Var(self, node: Var) -> None:
        self.names.add(node.name)


class _WrapScalars(Mutator):
    """Wraps the realizes that no loop encloses (0-D blocks) in bound unit loops, named
    `<block>_block_x`, `<block>_thread_x` (made unique against `taken`)."""

    def __init__(self, axes: list[BindInfo], taken: set[str]) -> None:
        self.axes = axes
        self.taken = taken
        self.loop_depth = 0

    def visit_For(self, node: For) -> For:
        self.loop_depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self.loop_depth -= 1

    def visit_ScheduleBlockRealize(self, node: ScheduleBlockRealize) -> Stmt:
        if node.schedule_block.name == "root" or self.loop_depth:
            return self.generic_visit(node)
        body: Stmt = node
        axes = self.axes
        if _reduces_across_threads(node):  # every thread takes part: block 0 only
            axes = [axis for axis in axes if axis.value.startswith("block")]
        for axis in reversed(axes):
            base = f"{node.schedule_block.name}_{axis.value.replace('Idx.', '_')}"
            var = Var(fresh_name(base, self.taken), lower=0, upper=1)
            inner = body if body is node else Block([body])
            body = For(var, 0, 1, ForType.SERIAL, inner, axis)
        return body


def _reduces_across_threads(node: ScheduleBlockRealize) -> bool:
    return any(r.thread_axis is not None for r in find_reduces(node.schedule_block.body))


def _needs_clamp(node: ScheduleBlockRealize) -> bool:
    """A block that combines across threads (a guard would keep threads from its
    barriers), or one that stores a register temp: a thread past the end then holds the
    last element's value for the combine blocks after it, which read the register
    clamped too (guarded, it would hold garbage there and a clamped combine would store
    that garbage over the last element). Its register is its own, so recomputing an
    element in range is free of races."""
    if _reduces_across_threads(node):
        return True
    store = single_store(node.schedule_block)
    return store is not None and store.tensor.memory_type is MemoryType.LOCAL


# ---- blocks that combine across threads ---------------------------------------------------


def _clamp_cross_thread_blocks(func: LoweredFunc) -> LoweredFunc:
    """Every block holding a cross-thread Reduce (or storing a register temp, see
    `_needs_clamp`) whose iter values the enclosing loops may carry out of range gets
    them clamped instead, so that `insert_bound_guards` proves them in range and puts no
    `if` around the combine, whose barriers wait for every thread of the block. A thread
    past the end then computes an element in range and stores it again, bit for bit the
    value its owner stores: the threads that combine share their iter values (a loop
    bound to the combine's axis cannot enclose the block), so they fold the same element.

    The clamp is of the block's element as a whole, not of each iter value alone
    (`clamped_iter_values`): a row cache (`cache_read`) clamps the fused row
    `min(row, rows - 1)`, so a warp past the last row holds the last row's values, and
    the block must then name that row too. Clamping `(r / 3, r % 3)` dim by dim would
    name `(1, 0)` for r = 6 of 6 rows and store the last row's sum there."""
    body = _Clamper().visit(func.body)
    if body is func.body:
        return func
    return LoweredFunc(func.name, func.args, body, func.temp_buffers)


class _Clamper(ScopedStmtMutator):
    """Clamps the iter values of the blocks that combine across threads or store a
    register temp."""

    def visit_ScheduleBlockRealize(self, node: ScheduleBlockRealize) -> Stmt:
        if node.schedule_block.name == "root":
            return self.generic_visit(node)
        if not _needs_clamp(node):
            return node
        domain = IndexDomain(self.loops, self.guards, node.iter_values)
        values = clamped_iter_values(node.schedule_block.iter_vars, node.iter_values, domain)
        if all(a is b for a, b in zip(values, node.iter_values, strict=True)):
            return node
        return ScheduleBlockRealize(values, node.schedule_block)


def clamped_iter_values(
    iter_vars: Sequence[Var], values: Sequence[e.Expr], domain: IndexDomain
) -> list[e.Expr]:
    """`values` (bound to `iter_vars`) where every point of `domain` names an element in
    range: unchanged where `domain` proves them in range; else, for iter vars over
    `[0, extent)`, the row-major offset of the element clamped to `[0, count - 1]` and
    split back into its dims, so that a point past the end names the last element (as a
    row cache's `min(row, rows - 1)` does); iter vars with another range are clamped
    one by one."""
    values = list(values)
    out = [
        i
        for i, (iv, value) in enumerate(zip(iter_vars, values, strict=True))
        if not _in_range(iv, value, domain)
    ]
    if not out:
        return values
    extents = [iv.upper if iv.lower in (None, 0) else None for iv in iter_vars]
    if len(values) == 1 or any(n is None for n in extents):
        for i in out:
            values[i] = _clamp_one(iter_vars[i], values[i], domain)
        return values
    dtype = values[0].dtype
    strides = [math.prod(extents[k + 1 :]) for k in range(len(extents))]
    offset: e.Expr = IntImm(0, dtype)
    for value, stride in zip(values, strides, strict=True):
        value = value if value.dtype is dtype else e.Cast(dtype, value)
        offset = offset + value * IntImm(stride, dtype)
    offset = simplify(offset)
    count = math.prod(extents)
    if not domain.always(offset.ge(IntImm(0, dtype))):
        offset = e.Max(offset, IntImm(0, dtype))
    if not domain.always(offset.le(IntImm(count - 1, dtype))):
        offset = e.Min(offset, IntImm(count - 1, dtype))
    clamped = []
    for k, value in enumerate(values):
        if extents[k] == 1:
            part: e.Expr = IntImm(0, dtype)
        else:
            part = offset if strides[k] == 1 else e.Div(offset, IntImm(strides[k], dtype))
            if k > 0:
                part = e.Mod(part, IntImm(extents[k], dtype))
        part = simplify(part)
        clamped.append(part if part.dtype is value.dtype else e.Cast(value.dtype, part))
    return clamped


def _in_range(iv: Var, value: e.Expr, domain: IndexDomain) -> bool:
    if iv.lower is not None and not domain.always(value.ge(IntImm(iv.lower, value.dtype))):
        return False
    return iv.upper is None or domain.always(value.le(IntImm(iv.upper - 1, value.dtype)))


def _clamp_one(iv: Var, value: e.Expr, domain: IndexDomain) -> e.Expr:
    """`value` clamped into `iv`'s range where `domain` does not prove it in range."""
    if iv.lower is not None:
        lower = IntImm(iv.lower, value.dtype)
        if not domain.always(value.ge(lower)):
            value = e.Max(value, lower)
    if iv.upper is not None:
        last = IntImm(iv.upper - 1, value.dtype)
        if not domain.always(value.le(last)):
            value = e.Min(value, last)
    return value
