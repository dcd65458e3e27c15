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
    in place     a step may declare (input, output) pairs: the output may take the
                 input's very bytes (XLA's `CanShareOperandBufferWithUser`). Only
                 kernels declare them, where `ir.in_place` proves from the scheduled
                 function that each element of the input is read only by the
                 iteration that writes the output's same element, before it writes
                 (elementwise groups; not a broadcast operand, a reduction, a
                 transpose); library calls declare none. The plan takes a declared
                 pair when the input dies at that step (its last step, so no program
                 output; written before it), both are arena values of the same
                 non-zero size, and neither is in another pair taken. A chain of
                 taken pairs (a -> b -> c) is placed as one block over the chain's
                 joint life, so the output's offset is the input's and nothing else
                 live then is in those bytes; the plan without pairs is kept instead
                 where its arena is smaller, so pairs never grow an arena
    alignment    every block starts on a multiple of `TargetInfo.memory_alignment`
                 (256 bytes: what cudaMalloc gives, a multiple of every dtype's size
                 and of a 128-bit vector access); cuda and cuda-emu use the same one,
                 so cuda-emu runs from the arena layout cuda uses

What stays outside the arena: feeds and parameters (filled by the caller between runs,
so they must survive them) and variables no step touches; they keep an allocation of
their own. Program outputs are in the arena, live to the end (the step after the last),
and are copied out after a run; an intermediate whose bytes a later value takes (an
in-place pair's input included) is `overwritten`, so fetching it compiles the program
again with it pinned as an output (then it lives to the end and is no pair's input).

`check_plan` verifies a plan: every block aligned, inside the arena, and no two values
whose ranges meet sharing a byte, except the two of a pair the plan took, which must
be declared, of one size, at one offset, the input's last step the pair's step and the
output's first. Every plan is checked when it is made.
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


@dataclass(frozen=True)
class InPlace:
    """Step `step` may write `output` over `input`'s bytes (`ir.in_place` proves which
    kernels may): what the step declares, and, in `MemoryPlan.in_place`, what the plan
    took."""

    input: str
    output: str
    step: int

    def __str__(self) -> str:
        return f"{self.input} -> {self.output} at step {self.step}"


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
    declared: frozenset[InPlace] = frozenset()
    """The in-place pairs the steps allow."""
    in_place: tuple[InPlace, ...] = ()
    """The declared pairs the plan took: the output at the input's offset."""

    @property
    def naive_bytes(self) -> int:
        return sum(align(r.nbytes, self.alignment) for r in self.ranges.values())

    def overwritten(self, name: str) -> bool:
        """Whether a value written later takes some of `name`'s bytes (an in-place
        output included), so that after a run its variable no longer holds it (False
        for a variable outside the arena)."""
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
            f"({ratio:.2f} of naive, {len(self.ranges)} values, "
            f"{len(self.in_place)} in place)"
        )


def align(nbytes: int, alignment: int) -> int:
    return -(-nbytes // alignment) * alignment


def assign_offsets(
    ranges: Iterable[LiveRange], alignment: int, in_place: Iterable[InPlace] = ()
) -> MemoryPlan:
    """Greedy by size, best fit (see the module doc), with the eligible pairs of
    `in_place` colocated; the plan without them where that one's arena is smaller.
    Ties in size go by start step, then name, so the plan does not depend on the order
    of `ranges`."""
    if alignment < 1:
        raise MemoryPlanError(f"alignment must be positive, got {alignment}")
    by_name = {r.name: r for r in ranges}
    declared = frozenset(in_place)
    taken = eligible_pairs(by_name, declared)
    plan = _greedy(by_name, alignment, taken)
    if taken:
        plain = _greedy(by_name, alignment, ())
        if plain.arena_bytes < plan.arena_bytes:
            plan = plain
    plan.declared = declared
    check_plan(plan)
    return plan


def eligible_pairs(
    ranges: Mapping[str, LiveRange], declared: Iterable[InPlace]
) -> tuple[InPlace, ...]:
    """The declared pairs the plan may take: both values in the arena with the same
    (non-zero) size, the input written before the pair's step and last used there, the
    output first written there;
    an input given to one output, an output taking one input (the earliest declared,
    by step and names)."""
    taken: list[InPlace] = []
    inputs: set[str] = set()
    outputs: set[str] = set()
    for pair in sorted(declared, key=lambda p: (p.step, p.input, p.output)):
        x, y = ranges.get(pair.input), ranges.get(pair.output)
        if x is None or y is None or pair.input in inputs or pair.output in outputs:
            continue
        if _pair_problem(pair, x, y) is None:
            taken.append(pair)
            inputs.add(pair.input)
            outputs.add(pair.output)
    return tuple(taken)


def _pair_problem(pair: InPlace, x: LiveRange, y: LiveRange) -> str | None:
    """Why the output of `pair` may not take its input's bytes (None: it may)."""
    if x.nbytes != y.nbytes:
        return f"{x.name} has {x.nbytes} bytes and {y.name} {y.nbytes}"
    if not x.nbytes:
        return f"{x.name} is empty"
    if x.start >= pair.step:
        return f"{x.name} is live from step {x.start}, not before step {pair.step}"
    if x.end != pair.step:
        return f"{x.name} is live until step {x.end}"
    if y.start != pair.step:
        return f"{y.name} is live from step {y.start}"
    return None


def _greedy(
    ranges: Mapping[str, LiveRange], alignment: int, in_place: Sequence[InPlace]
) -> MemoryPlan:
    """Each chain of in-place pairs is one unit (one block over the chain's joint
    life), every other value a unit of its own; units placed greedy by size."""
    after = {p.input: p.output for p in in_place}
    heads = set(ranges) - {p.output for p in in_place}
    units: list[tuple[LiveRange, list[str]]] = []
    for head in heads:
        chain = [head]
        while chain[-1] in after:
            chain.append(after[chain[-1]])
        first, last = ranges[head], ranges[chain[-1]]
        units.append((LiveRange(head, first.nbytes, first.start, last.end), chain))
    plan = MemoryPlan(alignment, dict(ranges), in_place=tuple(in_place))
    placed: list[tuple[LiveRange, int]] = []
    for unit, chain in sorted(units, key=lambda u: (-u[0].nbytes, u[0].start, u[0].name)):
        size = align(unit.nbytes, alignment)
        blocks = sorted(
            (offset, offset + align(p.nbytes, alignment))
            for p, offset in placed
            if p.nbytes and p.meets(unit)
        )
        best: tuple[int, int] | None = None  # (gap size, offset)
        top = 0
        for lo, hi in blocks:
            if lo - top >= size and (best is None or lo - top < best[0]):
                best = (lo - top, top)
            top = max(top, hi)
        offset = top if best is None else best[1]
        for name in chain:
            plan.offsets[name] = offset
        plan.arena_bytes = max(plan.arena_bytes, offset + size)
        placed.append((unit, offset))
    plan.offsets = {name: plan.offsets[name] for name in ranges}
    return plan


def check_plan(plan: MemoryPlan) -> None:
    """Raise MemoryPlanError if a block is misaligned or outside the arena, or two
    values live at the same step share a byte, unless they are a pair of
    `plan.in_place`: declared, its output at its input's offset with its size, the
    input's last step the pair's step and the output's first."""
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
    shared = {_check_pair(plan, pair) for pair in plan.in_place}
    for side in ("input", "output"):
        names = [getattr(p, side) for p in plan.in_place]
        if len(set(names)) != len(names):
            raise MemoryPlanError(f"an in-place {side} is in more than one pair")
    # Sweep by offset: only blocks whose bytes overlap are compared in time.
    blocks.sort(key=lambda b: b[0])
    for i, (lo, hi, value) in enumerate(blocks):
        for other_lo, _, other in blocks[i + 1 :]:
            if other_lo >= hi:
                break
            if (
                value.meets(other)
                and not {
                    (value.name, other.name),
                    (other.name, value.name),
                }
                & shared
            ):
                raise MemoryPlanError(
                    f"{value.name} (bytes {lo}..{hi}, steps {value.start}..{value.end}) and "
                    f"{other.name} (bytes {other_lo}.., steps {other.start}..{other.end}) "
                    "are live together in the same bytes"
                )


def _check_pair(plan: MemoryPlan, pair: InPlace) -> tuple[str, str]:
    """The (input, output) names of a pair the plan took, checked."""
    if pair not in plan.declared:
        raise MemoryPlanError(f"the in-place pair {pair} was not declared by its step")
    x, y = plan.ranges.get(pair.input), plan.ranges.get(pair.output)
    if x is None or y is None:
        raise MemoryPlanError(f"the in-place pair {pair} names a value outside the arena")
    problem = _pair_problem(pair, x, y)
    if problem is None and plan.offsets[x.name] != plan.offsets[y.name]:
        problem = f"{y.name} is not at {x.name}'s offset"
    if problem is not None:
        raise MemoryPlanError(f"bad in-place pair {pair}: {problem}")
    return pair.input, pair.output


def tensor_nbytes(type_: DenseTensorType) -> int:
    return math.prod(type_.dims) * boundary_dtype(type_.data_type).itemsize


def plan_memory(
    steps: Sequence[tuple[Sequence[str], Sequence[str]]],
    variables: Mapping[str, DenseTensorType],
    keep_outside: Iterable[str],
    outputs: Iterable[str],
    alignment: int,
    in_place: Sequence[Sequence[tuple[str, str]]] = (),
) -> MemoryPlan:
    """The plan for a program whose steps, in order, each read and write the variables
    given as (reads, writes); `keep_outside` (feeds, parameters) get no arena block,
    `outputs` live to the end; `in_place[i]` are the (input, output) pairs step i
    allows (none for the steps past its end)."""
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
    declared = [InPlace(x, y, index) for index, pairs in enumerate(in_place) for x, y in pairs]
    plan = assign_offsets(ranges, alignment, declared)
    plan.outside = tuple(n for n in variables if n not in first)
    return plan
