"""The record of a schedule: one step per primitive that changed the IR.

Handles are names and every primitive names its new loops deterministically, so a
step needs no lookups to replay: calling the same primitive with the same handles on
the same input function rebuilds the same IR. Lookups (`get_block`, `get_loops`)
change nothing and are not recorded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from cinn_py.errors import ScheduleError
from cinn_py.ir.schedule.analysis import UNKNOWN_BLOCK
from cinn_py.ir.schedule.refs import BlockRef, LoopRef
from cinn_py.ir.stmt import LoweredFunc


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return str(value)


@dataclass(frozen=True)
class Step:
    """One primitive call: its name, its keyword inputs in call order, its outputs
    (None, a LoopRef, or a tuple of LoopRefs)."""

    primitive: str
    inputs: tuple[tuple[str, Any], ...]
    outputs: LoopRef | tuple[LoopRef, ...] | None = None

    def __str__(self) -> str:
        args = ", ".join(f"{key}={_text(value)}" for key, value in self.inputs)
        head = f"{self.primitive}({args})"
        return head if self.outputs is None else f"{head} -> {_text(self.outputs)}"


def _block_of(step: Step) -> str:
    for _, value in step.inputs:
        if isinstance(value, BlockRef):
            return value.name
    return UNKNOWN_BLOCK


class Trace:
    """The steps of a schedule, in order; prints one line per step."""

    def __init__(self, steps: tuple[Step, ...] | list[Step] = ()) -> None:
        self._steps = list(steps)

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self._steps)

    def append(self, step: Step) -> None:
        self._steps.append(step)

    def __len__(self) -> int:
        return len(self._steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self._steps)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trace) and self._steps == other._steps

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return "\n".join(str(step) for step in self._steps)

    def __repr__(self) -> str:
        return f"Trace({len(self._steps)} steps)"

    def replay(self, func: LoweredFunc) -> LoweredFunc:
        """Runs the steps on a fresh schedule of `func`: the same IR the traced schedule
        built when `func` is the function it started from. A step whose outputs differ
        from the recorded ones (another input function) raises ScheduleError."""
        # ir_schedule records into a Trace, so the schedule is imported here, not above.
        from cinn_py.ir.schedule.ir_schedule import IRSchedule

        sch = IRSchedule(func)
        for step in self._steps:
            outputs = getattr(sch, step.primitive)(**dict(step.inputs))
            if isinstance(outputs, list):
                outputs = tuple(outputs)
            if outputs != step.outputs:
                raise ScheduleError(
                    step.primitive,
                    _block_of(step),
                    f"replay gave {_text(outputs)}, the trace recorded {_text(step.outputs)}",
                )
        return sch.func
