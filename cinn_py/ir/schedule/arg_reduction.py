"""factorize_reduction of an ArgReduce: per-thread (best value, position) partials and a
cross-thread pair combine.

argmax / argmin is not an associative fold of values, but of (value, position) pairs:
the better value wins, and of equal values the smaller position (NaN never wins, so a
thread's partial never holds one). `reduction.factorize_reduction` hands each
outermost ArgReduce of the block here:

    ArgReduce(argmax, x[i, r], [r], int64)                        # r < C
 -> ArgReduce(argmax across threadIdx.x,
        select(r_o * T + r_t < C, x[i, r_o * T + r_t], -inf), [r_o, r_t], int64)

The last axis `r_t` ranges over the T threads; each thread walks `r_o` serially over
its strided share (the same coalesced walk as a factorized Reduce) keeping its first
best value and that value's position, then the pairs are combined across the threads
(`cinn_block_arg_reduce` in the runtime header). The position the node yields is
row-major over [r_o, r_t], `r_o * T + r_t`: exactly the original flat position, so the
node's value is the serial one's and the interpreter runs it unchanged. Positions past
the end read the start value (-inf for argmax), which never wins: a thread with no
element (or only NaN / start values) reports (start, 0), which loses to any better
value and, on a tie with the start value, is the right answer (the serial search's
position 0). Several reduce axes are linearized first (row-major, lower bounds added
back); with at most one element per thread `r_o` is dropped.
"""

from __future__ import annotations

import math

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import LT, ArgReduce, Expr, IntImm, Select, Var
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import substitute, unflatten

PRIMITIVE = "factorize_reduction"


def factorize_arg_reduce(
    node: ArgReduce, threads: int, thread_axis: str, taken: set[str], block: str
) -> ArgReduce:
    """`node` over `threads` threads on `thread_axis`: each thread's serial search of its
    strided share (flat positions `o * threads + t`, guarded by `< total`), the pairs
    combined across the threads. Fresh loop names are drawn from (and added to) `taken`;
    `block` names the block in errors."""
    if node.thread_axis is not None:
        raise ScheduleError(PRIMITIVE, block, f"the ArgReduce is already across {node.thread_axis}")
    extents = [var.upper - var.lower for var in node.reduce_axis]
    total = math.prod(extents)
    dtype = node.reduce_axis[0].dtype
    steps = max(1, -(-total // threads))
    base = node.reduce_axis[0].name
    lane = Var(fresh_name(f"{base}_t", taken), dtype, 0, threads)
    if steps == 1:  # one element per thread at most: no serial part
        axes = [lane]
        flat: Expr = lane
    else:
        outer = Var(fresh_name(f"{base}_o", taken), dtype, 0, steps)
        axes = [outer, lane]
        flat = outer * IntImm(threads, dtype) + lane
    body = substitute(node.body, unflatten(flat, node.reduce_axis))
    if steps * threads != total:
        body = Select(LT(flat, IntImm(total, dtype)), body, node.start_value())
    return ArgReduce(node.reduce_type, body, axes, node.dtype, thread_axis)
