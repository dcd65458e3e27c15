"""The loop moves every group schedule makes: fuse a block's loops into one, deal a
fused loop out to [grid-stride steps,] blocks, threads[, vector lanes], and put a
full-shaped block's kept dims before its reduced ones.

The flat schedule (`flat_schedule.py`) does both to every block; the row schedule
(`reduce_schedule.py`) to the blocks no reduction feeds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cinn_py.errors import ScheduleError
from cinn_py.ir.dim_values import concrete
from cinn_py.ir.expr import Buffer
from cinn_py.ir.group_schedule.launch_config import LaunchConfig, steps_for
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.schedule import BlockRef, IRSchedule, LoopRef
from cinn_py.ir.schedule.analysis import readers
from cinn_py.ir.stmt import COMPUTED_ONCE, ArgIO

BLOCK_AXIS = "blockIdx.x"
THREAD_AXIS = "threadIdx.x"


def fuse_all(sch: IRSchedule, loops: Sequence[LoopRef]) -> LoopRef:
    """The loops (outermost first, perfectly nested) as one loop; one loop as it is."""
    return sch.fuse(loops) if len(loops) > 1 else loops[0]


def distribute(
    sch: IRSchedule, loop: LoopRef, items: int, lanes: int, launch: LaunchConfig
) -> None:
    """Splits `loop` (`items` * `lanes` iterations) into [steps,] blocks, threads[, lanes]
    with the steps innermost of the bound loops, binds blocks and threads, and
    vectorizes the lanes."""
    steps = steps_for(items, launch.threads, launch.blocks)
    factors = [launch.blocks, launch.threads]
    if steps > 1:
        factors.insert(0, steps)
    if lanes > 1:
        factors.append(lanes)
    loops = sch.split(loop, factors)
    if steps > 1:
        stride, blocks, threads = loops[:3]
        sch.reorder([blocks, threads, stride])
    else:
        blocks, threads = loops[:2]
    sch.bind(blocks, BLOCK_AXIS)
    sch.bind(threads, THREAD_AXIS)
    if lanes > 1:
        sch.vectorize(loops[-1], lanes)


def loop_extents(sch: IRSchedule, block: BlockRef) -> tuple[int, ...]:
    """The extents of the loops around `block`, outermost first, as numbers: a
    symbolic extent's value at the dims being compiled (`ir.dim_values`); ScheduleError
    for a loop whose extent has no value."""
    extents = []
    for loop in sch.get_loops(block):
        extent = sch.get(loop).extent
        value = concrete(extent)
        if value is None:
            raise ScheduleError(
                "auto_schedule", block.name, f"loop extent {extent!r} is not constant"
            )
        extents.append(value)
    return tuple(extents)


def kept_then_reduced(
    sch: IRSchedule, block: BlockRef, pattern: RowPattern
) -> tuple[list[LoopRef], list[LoopRef]]:
    """The loops of a full-shaped block as (the pattern's kept dims, its reduced dims),
    reordered so that the kept ones are outermost: what the row and column schedules
    bind to the reductions' threads and walk as the partials do."""
    loops = sch.get_loops(block)
    kept = [loops[d] for d in pattern.kept]
    reduced = [loops[d] for d in pattern.axes]
    if kept + reduced != loops:
        sch.reorder(kept + reduced)
    return kept, reduced


def computed_temps(sch: IRSchedule) -> list[BlockRef]:
    """The blocks of values lowering stored once for several readers (their attribute
    `computed_once`: softmax's exp), which a schedule keeps in registers or inlines
    back."""
    return [
        block
        for block in sch.get_all_blocks()
        if dict(sch.get(block).schedule_block.attrs).get(COMPUTED_ONCE)
    ]


def inline_computed(sch: IRSchedule) -> None:
    """Every computed temp inlined back into its readers: for the schedules that walk
    no row in registers (column, grid, flat, tile)."""
    for block in computed_temps(sch):
        sch.compute_inline(block)


def stream_full_inputs(sch: IRSchedule) -> list[str]:
    """Every input as large as the function's largest, read by one block alone, marked
    read once (`IRSchedule.stream_reads`: evict-first loads): an elementwise map's
    operands, the rows a reduction caches. Smaller inputs (a norm's weight and bias, a
    broadcast bias) are read by every row or block and stay cached. The `stream` knob of
    the flat and row tactics (tunable; their rules leave it off until a GPU times it).
    Returns the buffers marked."""
    func = sch.func
    inputs = [a for a in func.args if a.io is ArgIO.INPUT and isinstance(a.value, Buffer)]
    sizes = {a.name: _elements(a.value) for a in inputs}
    largest = max(sizes.values(), default=0)
    marked = []
    for name, size in sizes.items():
        if size != largest or largest == 0:
            continue
        blocks = readers(sch.func, name)
        if len(blocks) == 1:
            sch.stream_reads(blocks[0], name)
            marked.append(name)
    return marked


def _elements(buffer: Buffer) -> int | None:
    dims = [concrete(d) for d in buffer.shape]
    return None if any(d is None for d in dims) else math.prod(dims)
