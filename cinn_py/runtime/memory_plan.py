"""The memory plan: one arena per compiled program, every intermediate at an offset.

A compiled program's intermediates (the variables its steps write: group outputs,
library results) need not each own an allocation: a value is only needed from the
step that writes it to the last step that reads it, so values whose lives do not meet
can share bytes. This module gives each such value an offset in one arena, as XLA's
buffer assignment (`HeapSimulator`, `GlobalDecreasingSizeBestFitHeap`) and TVM's
storage rewrite do:

    live range   [first step that touches it, last step that touches it], over the
                 steps of the RuntimeProgram in execution order (inclusive at both
                 ends: a kernel may read its inputs after it writes its outputs, so a
                 value read by step s never shares bytes with one written by step s)
    assignment   greedy by size: the largest value first, each at the best-fitting
                 gap (the smallest that holds it, lowest offset on a tie) between the
                 blocks of the values already placed whose ranges meet its own, else
                 on top of them
    alignment    every block starts on a multiple of `TargetInfo.memory_alignment`
                 (256 bytes: what cudaMalloc gives, a multiple of every dtype's size
                 and of a 128-bit vector access); cuda and cuda-emu use the same one,
                 so cuda-emu runs from the arena layout cuda uses

What stays outside the arena: feeds and parameters (filled by the caller between runs,
so they must survive them) and variables no step touches; they keep an allocation of
their own. Program outputs are in the arena, live to the end (the step after the last),
and are copied out after a run; an intermediate whose bytes a later value takes is
`overwritten`, so fetching it compiles the program again with it pinned as an output.

`check_plan` verifies a plan: every block aligned, inside the arena, and no two values
whose ranges meet sharing a byte. Every plan is checked when it is made.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from cinn_py.errors import CinnError
from cinn_py.pir.types import DenseTensorType
from cinn_py.reference_ops.context import boundary_dtype


@dataclass(frozen=True)
class LiveRange:
    """A value's life: it holds `nbytes` bytes from step `start` to step `end` (both
    included)."""

    name: str
    nbytes: int
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.nbytes < 0 or self.start > self.end:
            raise CinnError(f"bad live range {self}")

    def meets(self, other: LiveRange) -> bool:
        """Whether both values are live at some step."""
        return self.start <= other.end and other.start <= self.end


class MemoryPlanError(CinnError):
    """A memory plan that would let two live values share bytes (or is malformed)."""


@dataclass
class MemoryPlan:
    """Where each arena value lives: `offsets[name]` in an arena of `arena_bytes`.
    `naive_bytes` is what the same values take each in its own allocation (each size
    rounded up to `alignment`, as separate allocations would be)."""

    alignment: int
    ranges: dict[str, LiveRange] = field(default_factory=dict)
    offsets: dict[str, int] = field(default_factory=dict)
    arena_bytes: int = 0
    outside: tuple[str, ...] = ()
    """The variables not in the arena (feeds, parameters, ones no step touches)."""

    @property
    def naive_bytes(self) -> int:
        return sum(align(r.nbytes, self.alignment) for r in self.ranges.values())

    def overwritten(self, name: str) -> bool:
        """Whether a value written later takes some of `name`'s bytes, so that after a
        run its variable no longer holds it (False for a variable outside the arena)."""
        own = self.ranges.get(name)
        if own is None:
            return False
        lo, hi = self.offsets[name], self.offsets[name] + own.nbytes
        return any(
            other.start > own.start
            and other.nbytes
            and self.offsets[other.name] < hi
            and lo < self.offsets[other.name] + other.nbytes
            for other in self.ranges.values()
        )

    def summary(self) -> str:
        ratio = self.arena_bytes / self.naive_bytes if self.naive_bytes else 1.0
        return (
            f"arena {self.arena_bytes} bytes, naive {self.naive_bytes} bytes "
            f"({ratio:.2f} of naive, {len(self.ranges)} values)"
        )


def align(nbytes: int, alignment: int) -> int:
    return -(-nbytes // alignment) * alignment


def assign_offsets(ranges: Iterable[LiveRange], alignment: int) -> MemoryPlan:
    """Greedy by size, best fit (see the module doc); ties in size go by start step,
    then name, so the plan does not depend on the order of `ranges`."""
    if alignment < 1:
        raise MemoryPlanError(f"alignment must be positive, got {alignment}")
    plan = MemoryPlan(alignment, {r.name: r for r in ranges})
    placed: list[LiveRange] = []
    for value in sorted(plan.ranges.values(), key=lambda r: (-r.nbytes, r.start, r.name)):
        size = align(value.nbytes, alignment)
        blocks = sorted(
            (plan.offsets[p.name], plan.offsets[p.name] + align(p.nbytes, alignment))
            for p in placed
            if p.nbytes and p.meets(value)
        )
        best: tuple[int, int] | None = None  # (gap size, offset)
        top = 0
        for lo, hi in blocks:
            if lo - top >= size and (best is None or lo - top < best[0]):
                best = (lo - top, top)
            top = max(top, hi)
        offset = top if best is None else best[1]
        plan.offsets[value.name] = offset
        plan.arena_bytes = max(plan.arena_bytes, offset + size)
        placed.append(value)
    check_plan(plan)
    return plan


def check_plan(plan: MemoryPlan) -> None:
    """Raise MemoryPlanError if a block is misaligned or outside the arena, or two
    values live at the same step share a byte."""
    if set(plan.offsets) != set(plan.ranges):
        raise MemoryPlanError("the plan's offsets and live ranges name different values")
    blocks = []
    for name, value in plan.ranges.items():
        offset = plan.offsets[name]
        if offset < 0 or offset % plan.alignment:
            raise MemoryPlanError(
                f"{name} is at offset {offset}, not a multiple of {plan.alignment}"
            )
        if offset + value.nbytes > plan.arena_bytes:
            raise MemoryPlanError(
                f"{name} ends at {offset + value.nbytes}, past the arena ({plan.arena_bytes})"
            )
        if value.nbytes:
            blocks.append((offset, offset + value.nbytes, value))
    # Sweep by offset: only blocks whose bytes overlap are compared in time.
    blocks.sort(key=lambda b: b[0])
    for i, (lo, hi, value) in enumerate(blocks):
        for other_lo, _, other in blocks[i + 1 :]:
            if other_lo >= hi:
                break
            if value.meets(other):
                raise MemoryPlanError(
                    f"{value.name} (bytes {lo}..{hi}, steps {value.start}..{value.end}) and "
                    f"{other.name} (bytes {other_lo}.., steps {other.start}..{other.end}) "
                    "are live together in the same bytes"
                )


def tensor_nbytes(type_: DenseTensorType) -> int:
    return math.prod(type_.dims) * boundary_dtype(type_.data_type).itemsize


def plan_memory(
    steps: Sequence[tuple[Sequence[str], Sequence[str]]],
    variables: Mapping[str, DenseTensorType],
    keep_outside: Iterable[str],
    outputs: Iterable[str],
    alignment: int,
) -> MemoryPlan:
    """The plan for a program whose steps, in order, each read and write the variables
    given as (reads, writes); `keep_outside` (feeds, parameters) get no arena block,
    `outputs` live to the end."""
    outside = set(keep_outside)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for index, (reads, writes) in enumerate(steps):
        for name in [*reads, *writes]:
            if name in variables and name not in outside:
                first.setdefault(name, index)
                last[name] = index
    end = len(steps)
    for name in outputs:
        if name in last:
            last[name] = end
    ranges = [LiveRange(n, tensor_nbytes(variables[n]), first[n], last[n]) for n in first]
    plan = assign_offsets(ranges, alignment)
    plan.outside = tuple(n for n in variables if n not in first)
    return plan
