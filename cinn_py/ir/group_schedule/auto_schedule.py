"""The auto-scheduler: a lowered group function for one kernel, by the first tactic
that takes it.

The tactics (`tactics.py`: grid, column, row, tile, flat, in that order, each with a
cheap `accepts` that says why not) hold the choice; this module only tries them. The
chosen one applies its IRSchedule primitives (traced) and `finish_schedule`
(`finish.py`) places 0-D blocks, clamps the blocks that combine across threads and
inserts the bound guards, so every tactic's result is ready for codegen and names the
tactic that made it:

    auto_schedule(func, target, pattern)
      grid.accepts   -> "the reduced dims are not innermost"
      column.accepts -> None: column.apply -> ScheduleResult(func, trace, launch, "column")
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.errors import ScheduleError
from cinn_py.ir.group_schedule.finish import ScheduleResult
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB
from cinn_py.ir.group_schedule.tactics import TACTICS, Tactic
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.stmt import LoweredFunc


def auto_schedule(
    func: LoweredFunc,
    target: TargetInfo,
    pattern: RowPattern | None = None,
    tactics: Sequence[Tactic] = TACTICS,
    schedules: ScheduleDB | None = None,
) -> ScheduleResult:
    """Schedules every block of `func` for `target`, inserts the bound guards, and
    returns the result with its trace and the tactic's name: the first of `tactics`
    (default `TACTICS`) whose `apply` gives one. `pattern`: what the group's reductions
    reduce (fusion's ReducePattern); without it only the tile and flat tactics apply.

    Raises ScheduleError when no tactic takes `func` (each one's refusal in the message:
    a function that reads a reduction back needs its pattern), or for a block the chosen
    tactic does not handle (nested blocks, no store, a non-constant extent).

    `schedules`: a schedule database (`schedule_db`): the tactic that takes `func` uses
    the entry for its key where there is one it can take, its rules elsewhere."""
    for tactic in tactics:
        if tactic.accepts(func, target, pattern) is not None:
            continue
        knobs = schedules.lookup(tactic.key(func, pattern)) if schedules else None
        return tactic.scheduled(func, target, pattern, knobs)
    refusals = "; ".join(f"{t.name}: {t.accepts(func, target, pattern)}" for t in tactics)
    raise ScheduleError("auto_schedule", func.name, f"no tactic applies ({refusals})")
