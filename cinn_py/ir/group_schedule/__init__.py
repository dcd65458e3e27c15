"""Group scheduling: the target's facts, launch configurations, and the auto-scheduler
that turns a lowered elementwise / broadcast / injective function into one ready for
codegen. See docs/AUTO_SCHEDULE.md."""

from cinn_py.ir.group_schedule.auto_schedule import ScheduleResult, auto_schedule
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.row_pattern import RowPattern

__all__ = ["RowPattern", "ScheduleResult", "TargetInfo", "auto_schedule"]
