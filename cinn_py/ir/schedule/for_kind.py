"""bind, vectorize and unroll: primitives that change how a loop runs, not its shape."""

from __future__ import annotations

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import IntImm, as_int
from cinn_py.ir.schedule.analysis import (
    block_names,
    const_extent,
    find_loop,
    loops_in,
    replace,
    starts_at_zero,
    unwrap,
    walk,
)
from cinn_py.ir.stmt import (
    BindInfo,
    For,
    ForType,
    LoweredFunc,
    ScheduleBlockRealize,
    SyncThreads,
)

THREAD_AXES = tuple(b.value for b in BindInfo)
VECTOR_WIDTHS = (2, 4, 8, 16)


def _rebuilt(
    func: LoweredFunc, loop: For, for_type: ForType, bind_info: BindInfo | None
) -> LoweredFunc:
    new = For(loop.loop_var, loop.min, loop.extent, for_type, loop.body, bind_info)
    return replace(func, loop, new)


def _check_unbound_serial(loop: For, primitive: str) -> None:
    name, block = loop.loop_var.name, block_names(loop)
    if loop.bind_info is not None:
        raise ScheduleError(
            primitive, block, f"loop {name} is already bound to {loop.bind_info.value}"
        )
    if loop.for_type is not ForType.SERIAL:
        raise ScheduleError(
            primitive, block, f"loop {name} is already {loop.for_type.value}, not serial"
        )


def bind(func: LoweredFunc, loop_name: str, thread_axis: str) -> LoweredFunc:
    """Binds a serial loop that starts at 0 to a GPU axis ("blockIdx.x" ... "threadIdx.z").
    A loop nest may bind each axis at most once (an enclosing or enclosed loop bound to
    the same axis would make both loops one index), and a loop holding a barrier no
    threadIdx axis."""
    loop, path = find_loop(func, loop_name, "bind")
    block = block_names(loop)
    if thread_axis not in THREAD_AXES:
        raise ScheduleError(
            "bind",
            block,
            f"unknown thread axis {thread_axis!r} (expected one of {', '.join(THREAD_AXES)})",
        )
    _check_unbound_serial(loop, "bind")
    if not starts_at_zero(loop):
        raise ScheduleError("bind", block, f"loop {loop_name} does not start at 0")
    axis = BindInfo(thread_axis)
    nest = loops_in(path) + [n for n, _ in walk(loop.body) if isinstance(n, For)]
    clash = [n.loop_var.name for n in nest if n.bind_info is axis]
    if clash:
        raise ScheduleError(
            "bind",
            block,
            f"loop {clash[0]} of the same nest is already bound to {thread_axis}",
        )
    if thread_axis.startswith("threadIdx") and any(
        isinstance(n, SyncThreads) for n, _ in walk(loop.body)
    ):
        raise ScheduleError(
            "bind",
            block,
            f"loop {loop_name} holds a __syncthreads() barrier, which inside a loop bound "
            f"to {thread_axis} would be no barrier every thread reaches together (bind the "
            "loops inside it instead)",
        )
    return _rebuilt(func, loop, ForType.SERIAL, axis)


def vectorize(func: LoweredFunc, loop_name: str, factor: int) -> LoweredFunc:
    """Marks a loop vectorized with `factor` lanes. The loop must have the constant
    extent `factor` (2, 4, 8 or 16: split first), be serial and unbound, and hold exactly
    one schedule block and no other loop, so that the lanes are one block's iterations."""
    loop, _ = find_loop(func, loop_name, "vectorize")
    block = block_names(loop)
    factor = as_int(factor)
    if not isinstance(factor, int) or isinstance(factor, bool) or factor not in VECTOR_WIDTHS:
        raise ScheduleError(
            "vectorize",
            block,
            f"factor {factor!r} is not a vector width ({', '.join(map(str, VECTOR_WIDTHS))})",
        )
    _check_unbound_serial(loop, "vectorize")
    if not (isinstance(loop.extent, IntImm) and loop.extent.value == factor):
        raise ScheduleError(
            "vectorize",
            block,
            f"loop {loop_name} has extent {loop.extent!r}, not the factor {factor} (split it first)",
        )
    if not isinstance(unwrap(loop.body), ScheduleBlockRealize):
        raise ScheduleError(
            "vectorize",
            block,
            f"the body of loop {loop_name} is not a single schedule block (only an "
            "innermost loop around one block can be vectorized)",
        )
    return _rebuilt(func, loop, ForType.VECTORIZED, None)


def unroll(func: LoweredFunc, loop_name: str) -> LoweredFunc:
    """Marks a serial, unbound loop with a constant extent unrolled."""
    loop, _ = find_loop(func, loop_name, "unroll")
    _check_unbound_serial(loop, "unroll")
    const_extent(loop, "unroll")
    return _rebuilt(func, loop, ForType.UNROLLED, None)
