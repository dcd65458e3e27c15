"""IRSchedule: CINN's schedule primitives over one lowered function, with a trace.

The IR is immutable: each primitive builds a new function and the schedule keeps the
current one (`sch.func`). Handles (BlockRef, LoopRef) are names resolved against the
current function, so they stay valid across primitives that do not replace their
node. Every primitive that changes the IR is appended to `sch.trace`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cinn_py.ir.expr import as_int
from cinn_py.ir.schedule import (
    buffer_memory,
    cache_read,
    cache_tile,
    cache_write,
    compute_location,
    for_kind,
    grid_reduce,
    loop_transformation,
    persistent_blocks,
    reduction,
    reduction_fusion,
    row_registers,
    stream_reads,
    thread_sync,
)
from cinn_py.ir.schedule.analysis import find_loop, find_realize, loops_in, realizes
from cinn_py.ir.schedule.refs import BlockRef, LoopRef
from cinn_py.ir.schedule.trace import Step, Trace
from cinn_py.ir.stmt import For, LoweredFunc, ScheduleBlockRealize


def _plain(value: Any) -> Any:
    """A trace input with the numbers read from the dims (`ir.dim_guards`) made plain
    ints: a traced number is part of the schedule."""
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return as_int(value)


def _block_name(block: BlockRef | str) -> str:
    if isinstance(block, BlockRef):
        return block.name
    if isinstance(block, str):
        return block
    raise TypeError(f"expected a BlockRef or a block name, got {type(block).__name__}")


def _loop_ref(loop: LoopRef | str) -> LoopRef:
    if isinstance(loop, LoopRef):
        return loop
    if isinstance(loop, str):
        return LoopRef(loop)
    raise TypeError(f"expected a LoopRef or a loop var name, got {type(loop).__name__}")


class IRSchedule:
    """Schedules `func`; `trace=False` records nothing (a schedule tried and thrown away)."""

    def __init__(self, func: LoweredFunc, *, trace: bool = True) -> None:
        if not isinstance(func, LoweredFunc):
            raise TypeError(f"expected a LoweredFunc, got {type(func).__name__}")
        self._func = func
        self._trace = Trace()
        self._tracing = trace

    @property
    def func(self) -> LoweredFunc:
        """The current IR."""
        return self._func

    @property
    def trace(self) -> Trace:
        return self._trace

    def _record(self, primitive: str, inputs: dict[str, Any], outputs: Any = None) -> None:
        if self._tracing:
            items = tuple((k, _plain(v)) for k, v in inputs.items())
            self._trace.append(Step(primitive, items, outputs))

    # ---- lookups ------------------------------------------------------------------------

    def get_block(self, name: str) -> BlockRef:
        """The block `name`; ScheduleError when the function has none."""
        find_realize(self._func, name, "get_block")
        return BlockRef(name)

    def get_all_blocks(self) -> list[BlockRef]:
        """Every block but the root, in program order."""
        return [BlockRef(r.schedule_block.name) for r, _ in realizes(self._func)]

    def get_loops(self, block: BlockRef | str) -> list[LoopRef]:
        """The loops around `block`, outermost first (none for a 0-D block)."""
        _, path = find_realize(self._func, _block_name(block), "get_loops")
        return [LoopRef(loop.loop_var.name) for loop in loops_in(path)]

    def get(self, ref: BlockRef | LoopRef) -> ScheduleBlockRealize | For:
        """The node a handle names in the current IR (the block's realize, or the loop),
        for reading extents, kinds and bindings."""
        if isinstance(ref, LoopRef):
            return find_loop(self._func, ref.name, "get")[0]
        return find_realize(self._func, _block_name(ref), "get")[0]

    # ---- loop transformations ------------------------------------------------------------

    def split(
        self, loop: LoopRef | str, factors: Sequence[int], guard_at_block: bool = False
    ) -> list[LoopRef]:
        """Splits `loop` into len(factors) nested loops (outermost first). One factor may
        be -1 (inferred); the product may exceed the extent (guards come later).
        `guard_at_block`: a symbolic extent's guard goes around the block, inside the
        loops nested in `loop`, so they stay perfectly nested (`loop_transformation`)."""
        ref, factors = _loop_ref(loop), tuple(factors)
        self._func, names = loop_transformation.split(
            self._func, ref.name, factors, guard_at_block=guard_at_block
        )
        outputs = [LoopRef(n) for n in names]
        inputs: dict[str, Any] = {"loop": ref, "factors": factors}
        if guard_at_block:
            inputs["guard_at_block"] = True
        self._record("split", inputs, tuple(outputs))
        return outputs

    def fuse(self, loops: Sequence[LoopRef | str]) -> LoopRef:
        """Fuses consecutive, perfectly nested loops (outermost first) into one."""
        refs = tuple(_loop_ref(loop) for loop in loops)
        self._func, name = loop_transformation.fuse(self._func, [r.name for r in refs])
        output = LoopRef(name)
        self._record("fuse", {"loops": refs}, output)
        return output

    def reorder(self, loops: Sequence[LoopRef | str]) -> None:
        """Puts loops of one perfect nest into the given order (outermost first)."""
        refs = tuple(_loop_ref(loop) for loop in loops)
        self._func = loop_transformation.reorder(self._func, [r.name for r in refs])
        self._record("reorder", {"loops": refs})

    # ---- loop kinds ------------------------------------------------------------------

    def bind(self, loop: LoopRef | str, thread_axis: str) -> None:
        """Binds `loop` to a GPU axis, "blockIdx.x" ... "threadIdx.z"."""
        ref = _loop_ref(loop)
        self._func = for_kind.bind(self._func, ref.name, thread_axis)
        self._record("bind", {"loop": ref, "thread_axis": thread_axis})

    def vectorize(self, loop: LoopRef | str, factor: int) -> None:
        """Vectorizes an innermost loop of constant extent `factor` (2, 4, 8, 16)."""
        ref = _loop_ref(loop)
        self._func = for_kind.vectorize(self._func, ref.name, factor)
        self._record("vectorize", {"loop": ref, "factor": factor})

    def unroll(self, loop: LoopRef | str) -> None:
        """Unrolls a loop of constant extent."""
        ref = _loop_ref(loop)
        self._func = for_kind.unroll(self._func, ref.name)
        self._record("unroll", {"loop": ref})

    # ---- compute location ------------------------------------------------------------

    def compute_inline(self, block: BlockRef | str) -> None:
        """Substitutes an elementwise block into every consumer and removes it."""
        ref = BlockRef(_block_name(block))
        self._func = compute_location.compute_inline(self._func, ref.name)
        self._record("compute_inline", {"block": ref})

    def reverse_compute_inline(self, block: BlockRef | str) -> None:
        """Merges a consumer block into its single elementwise producer."""
        ref = BlockRef(_block_name(block))
        self._func = compute_location.reverse_compute_inline(self._func, ref.name)
        self._record("reverse_compute_inline", {"block": ref})

    # ---- reductions and memory -------------------------------------------------------

    def factorize_reduction(
        self,
        block: BlockRef | str,
        threads: int,
        thread_axis: str = "threadIdx.x",
        lanes: int = 1,
    ) -> None:
        """Splits every outermost Reduce of `block` into per-thread partials over a
        stride of `threads` (runs of `lanes` consecutive elements, a vector, per step)
        and a cross-thread combine over `thread_axis`."""
        ref = BlockRef(_block_name(block))
        self._func = reduction.factorize_reduction(
            self._func, ref.name, threads, thread_axis, lanes
        )
        inputs = {"block": ref, "threads": threads, "thread_axis": thread_axis}
        if lanes != 1:
            inputs["lanes"] = lanes
        self._record("factorize_reduction", inputs)

    def fuse_reductions(self, blocks: Sequence[BlockRef | str]) -> BlockRef:
        """Moves sibling blocks of cross-thread Reduces (factorized, over one thread axis,
        under matching loops, none reading another) into the first of them in program
        order: one serial walk and one combine for all (`reduction_fusion.py`). Returns
        the merged block; the other handles are gone."""
        refs = tuple(BlockRef(_block_name(b)) for b in blocks)
        self._func, name = reduction_fusion.fuse_reductions(self._func, [r.name for r in refs])
        output = BlockRef(name)
        self._record("fuse_reductions", {"blocks": refs}, output)
        return output

    def grid_reduce(
        self,
        chunk_size: int,
        threads: int | None = None,
        lanes: int = 1,
        rows_bound: int | None = None,
    ) -> tuple[LoopRef, LoopRef]:
        """Spreads the reductions of the whole function over several thread blocks per
        row: chunks of `chunk_size` elements folded into workspace partials, and the
        function's blocks run for each row by the last block to finish, which folds the
        partials in index order (`grid_reduce.py`). Every block must be a single store
        under at most one loop over the rows. With `threads`, each chunk is folded by
        that many threads across threadIdx.x, `lanes` consecutive elements a step, from
        registers each thread fills first (one vector load a step). A symbolic row
        count needs `rows_bound`, the count the workspace is sized for. Returns the new
        row and chunk loops."""
        self._func, row, chunk = grid_reduce.grid_reduce(
            self._func, chunk_size, threads, lanes, rows_bound
        )
        outputs = (LoopRef(row), LoopRef(chunk))
        inputs: dict[str, object] = {"chunk_size": chunk_size}
        if threads is not None:
            inputs["threads"] = threads
        if lanes != 1:
            inputs["lanes"] = lanes
        if rows_bound is not None:
            inputs["rows_bound"] = rows_bound
        self._record("grid_reduce", inputs, outputs)
        return outputs

    def set_buffer(self, block: BlockRef | str, memory_type: str) -> None:
        """Moves the temp buffer `block` stores to "global" or "local" memory."""
        ref = BlockRef(_block_name(block))
        self._func = buffer_memory.set_buffer(self._func, ref.name, memory_type)
        self._record("set_buffer", {"block": ref, "memory_type": memory_type})

    def stream_reads(self, block: BlockRef | str, buffer: str) -> None:
        """Marks `block`'s loads of input `buffer`, which no other block reads, as read
        once: codegen loads them evict-first (`stream_reads.py`)."""
        ref = BlockRef(_block_name(block))
        self._func = stream_reads.stream_reads(self._func, ref.name, buffer)
        self._record("stream_reads", {"block": ref, "buffer": buffer})

    def cache_read(
        self,
        buffer: str,
        memory_type: str,
        axes: Sequence[int],
        threads: int,
        rows_per_block: int = 1,
        lanes: int = 1,
        cols: int | None = None,
    ) -> BlockRef:
        """Keeps input `buffer` in `memory_type` ("local": each thread's registers) for
        a row walk over its dims `axes` by `threads` threads, the rows on blockIdx.x
        (times `rows_per_block`, plus threadIdx.y, when a block takes several rows),
        each thread taking `lanes` consecutive elements (a vector) per step: a new
        block, first, loads each thread's elements once, and every read of `buffer`
        becomes a read of them. `cols`: the bound a row of symbolic length is walked
        to. Returns the new block (its buffer has the same name)."""
        axes = tuple(axes)
        self._func, name = cache_read.cache_read(
            self._func, buffer, memory_type, axes, threads, rows_per_block, lanes, cols
        )
        output = BlockRef(name)
        inputs = {"buffer": buffer, "memory_type": memory_type, "axes": axes, "threads": threads}
        inputs |= _walk_options(rows_per_block, lanes, cols)
        self._record("cache_read", inputs, output)
        return output

    def keep_in_registers(
        self,
        block: BlockRef | str,
        axes: Sequence[int],
        threads: int,
        rows_per_block: int = 1,
        lanes: int = 1,
        cols: int | None = None,
    ) -> None:
        """Keeps the full-shaped temp `block` stores in each thread's registers along
        `cache_read`'s row walk (same arguments): stored and read back only at each
        thread's own positions, which is proved read by read (`row_registers.py`)."""
        ref = BlockRef(_block_name(block))
        axes = tuple(axes)
        self._func, _ = row_registers.keep_in_registers(
            self._func, ref.name, axes, threads, rows_per_block, lanes, cols
        )
        inputs = {"block": ref, "axes": axes, "threads": threads}
        inputs |= _walk_options(rows_per_block, lanes, cols)
        self._record("keep_in_registers", inputs)

    def cache_write(self, block: BlockRef | str) -> BlockRef:
        """Makes `block` (a single Store of a whole output argument no other block
        touches) store into a new temp buffer, and copies the temp into the output in a
        new block right after it, under serial loops over the output's dims (to be
        scheduled apart: one thread of a row storing a row reduction's total). Returns
        the new block; the temp, `<output>_tmp`, is global until `set_buffer`."""
        ref = BlockRef(_block_name(block))
        self._func, name = cache_write.cache_write(self._func, ref.name)
        output = BlockRef(name)
        self._record("cache_write", {"block": ref}, output)
        return output

    def cache_tile(
        self,
        block: BlockRef | str,
        buffer: str,
        loop: LoopRef | str,
        memory_type: str = "shared",
        pad: int = 0,
    ) -> BlockRef:
        """Copies the window of `buffer` that `block` reads in one iteration of `loop`
        into a `memory_type` ("shared") tile, its last dim `pad` longer: a new block,
        first in `loop`'s body under serial loops over the tile's dims (for the caller
        to bind to threads), and `block` reads the tile instead. A barrier must follow
        the new block (`sync_threads`). Returns it (its buffer has the same name)."""
        ref = BlockRef(_block_name(block))
        at = _loop_ref(loop)
        self._func, name = cache_tile.cache_tile(
            self._func, ref.name, buffer, at.name, memory_type, pad
        )
        output = BlockRef(name)
        inputs: dict[str, Any] = {"block": ref, "buffer": buffer, "loop": at}
        if memory_type != "shared":
            inputs["memory_type"] = memory_type
        if pad:
            inputs["pad"] = pad
        self._record("cache_tile", inputs, output)
        return output

    # ---- the grid ----------------------------------------------------------------------

    def persist_blocks(self, grid: int) -> tuple[LoopRef, LoopRef]:
        """Launches `grid` thread blocks instead of one per blockIdx.x row, each walking
        the rows `blockIdx.x + k * grid` in one loop around every nest; nests that come
        first and only fill registers every row shares run once per block, before it
        (`persistent_blocks.py`). Returns the grid's loop and the rows' loop."""
        self._func, names = persistent_blocks.persist_blocks(self._func, as_int(grid))
        outputs = (LoopRef(names[0]), LoopRef(names[1]))
        self._record("persist_blocks", {"grid": grid}, outputs)
        return outputs

    def prefetch_rows(self, block: BlockRef | str) -> BlockRef:
        """Double-buffers the register cache `block` fills (a `cache_read` block inside
        the rows' loop `persist_blocks` made): each row issues the loads of the row one
        grid further on before its own reductions, into `<cache>_next`, and starts by
        copying them in (`persistent_blocks.prefetch_rows`). Returns the new fill."""
        ref = BlockRef(_block_name(block))
        self._func, name = persistent_blocks.prefetch_rows(self._func, ref.name)
        output = BlockRef(name)
        self._record("prefetch_rows", {"block": ref}, output)
        return output

    # ---- barriers ----------------------------------------------------------------------

    def sync_threads(self, ref: BlockRef | LoopRef | str, after: bool = True) -> None:
        """Puts a `__syncthreads()` right after (`after=False`: before) block or loop
        `ref` (a block name when a str), outside every loop bound to threadIdx around
        it, where every thread of the block reaches it (`thread_sync.py`); none when a
        barrier is already there. Refused inside an `if` or a vectorized loop."""
        target = ref if isinstance(ref, LoopRef) else BlockRef(_block_name(ref))
        self._func = thread_sync.sync_threads(self._func, target, after)
        inputs: dict[str, Any] = {"ref": target}
        if not after:
            inputs["after"] = after
        self._record("sync_threads", inputs)


def _walk_options(rows_per_block: int, lanes: int, cols: int | None) -> dict[str, Any]:
    """A row walk's optional inputs as a trace records them: only those not at their
    defaults (so that traces read as they were written)."""
    options: dict[str, Any] = {}
    if rows_per_block != 1:
        options["rows_per_block"] = rows_per_block
    if lanes != 1:
        options["lanes"] = lanes
    if cols is not None:
        options["cols"] = cols
    return options
