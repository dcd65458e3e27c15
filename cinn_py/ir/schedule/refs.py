"""Handles to the blocks and loops of a function under scheduling.

The IR is immutable, so every primitive builds a new function and old node objects
go stale. Handles therefore name things instead of pointing at them: a block by its
name, a loop by its loop variable's name (both unique in a lowered function). A handle
is resolved against the schedule's current IR each time it is used, so a handle to a
loop that a primitive replaced (split, fuse) is reported as unknown, not silently
applied to an old tree.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BlockRef:
    """A ScheduleBlock, by its name (the name of the buffer it stores)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class LoopRef:
    """A For loop, by the name of its loop variable."""

    name: str

    def __str__(self) -> str:
        return self.name
