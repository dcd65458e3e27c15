"""factorize_reduction: a Reduce split into per-thread partials and a cross-thread combine.

CINN's FactorizeReduction (TVM's rfactor) makes a reduction parallel over the threads
of a block. Here the reduce axes live inside the `Reduce` node, so the primitive
rewrites the expression instead of adding a partials buffer:

    Reduce(sum, x[i, r], r < C)
 -> Reduce(sum across threadIdx.x,                         # every thread gets the total
        Reduce(sum, select(r_o * T + r_t < C, x[i, r_o * T + r_t], 0), r_o < ceil(C / T)),
        r_t < T)

The inner Reduce is the thread's serial partial over its strided share of the row (the
stride is T, so a warp reads 32 consecutive elements per step: coalesced); the outer is
the cross-thread combine, which codegen emits as warp shuffles and a shared-memory
exchange between warps (`cinn_block_reduce` in the runtime header). Several reduce axes
are linearized first (row-major); with at most one element per thread there is no
partial loop. The value is unchanged, so the interpreter runs the result as it runs the
original.

With `lanes` V > 1 each thread takes V consecutive elements per step (a 16-byte vector
of the row): the partial runs over (r_o, r_v) at `(r_o * T + r_t) * V + r_v`, r_v
innermost, guarded by `< C` when ceil(C / (T * V)) * T * V != C. The row schedule's
register cache and full blocks walk the same positions, so each thread's elements are
one aligned vector per step. V = 1 is the walk above, node for node. The walk itself
(`thread_walk`) is shared with grid_reduce, whose threads walk a chunk of the row so.

The combine may run over threadIdx.y instead (the column schedule): the block is then
inside a loop bound to threadIdx.x (its output elements spread over the x lanes), the
TY threads of one x lane fold the strided partials of that lane's element, and codegen
combines them through shared memory (`cinn_block_reduce_y<TX, TY>`). TY is then any
power of two from 2 to 1024 (a 2-D block of TX x TY threads; codegen checks the
product against CUDA's 1024).

An ArgReduce (argmax / argmin) is factorized too (`arg_reduction.py`): each thread's
serial search of its strided share keeps (best value, position), and the pairs are
combined across the threads (`cinn_block_arg_reduce`, `cinn_block_arg_reduce_y`); the
node keeps its original positions, so its value is the serial one's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import LT, ArgReduce, Expr, IntImm, Reduce, Select, Var, as_int
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import (
    find_realize,
    replace,
    substitute,
    taken_names,
    unflatten,
)
from cinn_py.ir.schedule.arg_reduction import factorize_arg_reduce
from cinn_py.ir.stmt import LoweredFunc, ScheduleBlock, ScheduleBlockRealize
from cinn_py.ir.visitor import Mutator
from cinn_py.pir.dtypes import DataType

PRIMITIVE = "factorize_reduction"
WARP = 32
MAX_THREADS = 1024
MIN_THREADS = {"threadIdx.x": WARP, "threadIdx.y": 2}
"""The fewest threads a combine over each axis takes: a whole warp along x (the
shuffles); two along y (a combine of one thread would be no combine)."""


def factorize_reduction(
    func: LoweredFunc,
    block_name: str,
    threads: int,
    thread_axis: str = "threadIdx.x",
    lanes: int = 1,
) -> LoweredFunc:
    """Rewrites every outermost Reduce of block `block_name` into per-thread partials over
    a stride of `threads` (runs of `lanes` consecutive elements) and a cross-thread
    combine over `thread_axis`.

    `thread_axis` is threadIdx.x (`threads` a power of two from 32, a warp, to 1024) or
    threadIdx.y (a power of two from 2 to 1024); the block must not be inside a loop
    bound to `thread_axis` (each thread already takes part). `lanes` is a positive int
    (the row schedule's vector width)."""
    realize, path = find_realize(func, block_name, PRIMITIVE)
    low = MIN_THREADS.get(thread_axis)
    if low is None:
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            f"thread_axis must be one of {', '.join(MIN_THREADS)}, got {thread_axis!r}",
        )
    threads, lanes = as_int(threads), as_int(lanes)
    if (
        not isinstance(threads, int)
        or isinstance(threads, bool)
        or threads & (threads - 1)
        or not low <= threads <= MAX_THREADS
    ):
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            f"threads must be a power of two from {low} to {MAX_THREADS}, got {threads!r}",
        )
    if not isinstance(lanes, int) or isinstance(lanes, bool) or lanes < 1:
        raise ScheduleError(PRIMITIVE, block_name, f"lanes must be a positive int, got {lanes!r}")
    for node in path:
        bind = getattr(node, "bind_info", None)
        if bind is not None and bind.value == thread_axis:
            raise ScheduleError(
                PRIMITIVE,
                block_name,
                f"the block is inside loop {node.loop_var.name}, bound to {thread_axis}; "
                "a cross-thread reduction needs every thread of the block",
            )
    rewriter = _Factorize(threads, thread_axis, taken_names(func), block_name, lanes)
    block = realize.schedule_block
    body = rewriter.visit(block.body)
    if not rewriter.count:
        raise ScheduleError(PRIMITIVE, block_name, "the block's value has no Reduce to factorize")
    new_block = ScheduleBlock(
        block.iter_vars, block.read_buffers, block.write_buffers, block.name, body, block.attrs
    )
    return replace(func, realize, ScheduleBlockRealize(realize.iter_values, new_block))


class _Factorize(Mutator):
    """Rewrites the outermost Reduces (the ones inside them are part of their body)."""

    def __init__(
        self, threads: int, thread_axis: str, taken: set[str], block: str, lanes: int = 1
    ) -> None:
        self.threads = threads
        self.thread_axis = thread_axis
        self.taken = taken
        self.block = block
        self.count = 0
        self.lanes = lanes
        """Consecutive elements a thread takes per step."""

    def visit_ScheduleBlockRealize(self, node: ScheduleBlockRealize) -> ScheduleBlockRealize:
        return node  # a nested block is scheduled on its own

    def visit_ArgReduce(self, node: ArgReduce) -> Expr:
        # (value, position) partials and a pair combine: arg_reduction.py. One element
        # per step whatever `lanes` is (the search compares and moves one at a time).
        self.count += 1
        return factorize_arg_reduce(node, self.threads, self.thread_axis, self.taken, self.block)

    def visit_Reduce(self, node: Reduce) -> Expr:
        if node.thread_axis is not None:
            raise ScheduleError(
                PRIMITIVE, self.block, f"the Reduce is already across {node.thread_axis}"
            )
        extents = []
        for var in node.reduce_axis:
            if var.lower != 0 or var.upper is None:
                raise ScheduleError(
                    PRIMITIVE,
                    self.block,
                    f"reduce axis {var.name} has no constant range starting at 0",
                )
            extents.append(var.upper)
        self.count += 1
        total = math.prod(extents)
        dtype = node.reduce_axis[0].dtype
        walk = thread_walk(
            total, dtype, node.reduce_axis[0].name, self.threads, self.lanes, self.taken
        )
        body = substitute(node.body, unflatten(walk.position, node.reduce_axis))
        if walk.steps * self.threads * self.lanes != total:
            body = Select(LT(walk.position, IntImm(total, dtype)), body, node.init)
        partial = Reduce(node.reduce_type, node.init, body, walk.serial) if walk.serial else body
        return Reduce(node.reduce_type, node.init, partial, [walk.thread], self.thread_axis)


@dataclass(frozen=True)
class ThreadWalk:
    """How T threads walk `total` positions in vectors of V lanes: thread `thread` at
    step o, lane v takes `position` = (o * T + thread) * V + v; `serial` holds the axes a
    thread folds itself, (o, v), each left out where its extent is 1 (S = 1 step, V = 1
    lane), and `step` / `lane` name them (None when left out)."""

    thread: Var
    step: Var | None
    lane: Var | None
    position: Expr
    steps: int

    @property
    def serial(self) -> list[Var]:
        return [v for v in (self.step, self.lane) if v is not None]


def thread_walk(
    total: int, dtype: DataType, base: str, threads: int, lanes: int, taken: set[str]
) -> ThreadWalk:
    """The strided walk of `threads` threads over `total` positions, `lanes` consecutive
    ones a step (S = ceil(total / (T * V)) steps), its axes named after `base` and kept
    unique in `taken`: factorize_reduction's partials, and grid_reduce's chunk walk."""
    steps = max(1, -(-total // (threads * lanes)))
    thread = Var(fresh_name(f"{base}_t", taken), dtype, 0, threads)
    step = None
    vector: Expr = thread
    if steps > 1:  # one step per thread at most: no step loop
        step = Var(fresh_name(f"{base}_o", taken), dtype, 0, steps)
        vector = step * IntImm(threads, dtype) + thread
    lane = None
    position = vector
    if lanes > 1:
        lane = Var(fresh_name(f"{base}_v", taken), dtype, 0, lanes)
        position = vector * IntImm(lanes, dtype) + lane
    return ThreadWalk(thread, step, lane, position, steps)
