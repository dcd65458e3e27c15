"""Group scheduling: the target's facts, launch configurations, the tactics (one per
schedule, tried in order) and the auto-scheduler that asks them to turn a lowered group
function into one ready for codegen. See docs/AUTO_SCHEDULE.md."""

from cinn_py.ir.group_schedule.auto_schedule import auto_schedule
from cinn_py.ir.group_schedule.finish import ScheduleResult
from cinn_py.ir.group_schedule.tactics import TACTICS, Tactic
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.row_pattern import RowPattern

__all__ = ["TACTICS", "RowPattern", "ScheduleResult", "Tactic", "TargetInfo", "auto_schedule"]
