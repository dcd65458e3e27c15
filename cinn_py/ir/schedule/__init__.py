"""CINN's IRSchedule: schedule primitives over a lowered function, recorded as a trace.

`IRSchedule(func)` holds the current function; handles (`BlockRef`, `LoopRef`) name
blocks and loops; `split`, `fuse`, `reorder`, `bind`, `vectorize`, `unroll`,
`compute_inline` and `reverse_compute_inline` rebuild it; `Trace.replay` rebuilds the
same IR from the original function. See docs/SCHEDULE.md.
"""

from cinn_py.ir.schedule.ir_schedule import IRSchedule
from cinn_py.ir.schedule.refs import BlockRef, LoopRef
from cinn_py.ir.schedule.trace import Step, Trace

__all__ = ["BlockRef", "IRSchedule", "LoopRef", "Step", "Trace"]
