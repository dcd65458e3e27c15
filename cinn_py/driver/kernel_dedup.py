"""Identical groups scheduled once and compiled once: groups whose functions are equal up
to names share one schedule and launch one kernel.

A model of 32 identical layers has 32 softmax groups whose functions differ only in
their buffers' names (`var_2` in one, `var_9` in the next), their loop variables'
(`var_2_local_row`), their temps' (`var_8_tmp`) and their own (`fn_group_1`).
`ir.visitor.canonical_key` renames all of those consistently and keeps everything else
(dtypes, shapes, loop extents and bindings, so the launch, which codegen derives from
the bindings; the schedule's temps and barriers; the arguments' order and roles). Two
steps use it:

* before scheduling (`schedule_once`): the lowered functions are keyed, with the group's
  reduce pattern (the scheduler's other input; the target is one per compile); the
  first function of a key is scheduled, and every later one takes that schedule
  renamed to its own names (`renamed_schedule`: the function and the trace; a name the
  scheduler made from one of the first function's, `var_2_local` or
  `fn_group_1_semaphore`, made from the group's own) instead of running the scheduler
  again: 8 schedules, not 225, for 32 LLaMA layers. The scheduler's choices do not
  depend on what names spell (the tile schedule takes its inputs in reading order, not
  by name), so the renamed schedule is the one the group would get itself: a test
  checks it on every group of LLaMA and BERT models, and no fixture's dumped stages
  changed. One order does read names: `simplify` sorts a sum's terms by var name,
  which a renaming keeps while the vars of one sum are loops (named alike in every
  group) or made from one buffer's name. A renaming that is not one-to-one (a made
  name meeting one of the group's own) is not used: that group is scheduled itself.
* after scheduling (`share_kernels`): groups whose scheduled functions are equal up to
  names are one kernel, rendered once in the translation unit, compiled once, launched
  by each group's Instruction with its own variables, positionally (`launch_of`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from cinn_py.backends.codegen_cuda import KernelInfo
from cinn_py.ir.group_schedule import RowPattern, ScheduleResult
from cinn_py.ir.schedule import BlockRef, LoopRef, Trace
from cinn_py.ir.schedule.trace import Step
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.ir.visitor import canonical_form, canonical_key, rename

Schedule = Callable[[LoweredFunc, RowPattern | None], ScheduleResult]
"""The scheduler of one compile: a lowered function and its group's reduce pattern to
its schedule (`auto_schedule` for the compile's target)."""


def schedule_once(
    lowered: Sequence[LoweredFunc],
    patterns: Sequence[RowPattern | None],
    schedule: Schedule,
) -> tuple[list[ScheduleResult], list[int]]:
    """Each lowered function's schedule, `schedule` run once per class of functions
    equal up to names with equal patterns, the later ones of a class given the first
    one's schedule renamed to their own names (`renamed_schedule`). Also, for each
    function, the index of the function the scheduler ran on (its own, or the first of
    its class)."""
    first: dict[tuple[Any, ...], tuple[int, tuple[str, ...]]] = {}
    results: list[ScheduleResult] = []
    origins: list[int] = []
    for index, (func, pattern) in enumerate(zip(lowered, patterns, strict=True)):
        key, names = canonical_form(func)
        found = first.get((key, pattern))
        result = None
        if found is not None:
            origin, origin_names = found
            result = renamed_schedule(results[origin], origin_names, names)
        if result is None:
            result, origin = schedule(func, pattern), index
            first.setdefault((key, pattern), (index, names))
        results.append(result)
        origins.append(origin)
    return results, origins


class Renaming:
    """The names of one function to those of another equal to it up to names (the i-th
    of `old` to the i-th of `new`, in `canonical_form`'s order), and a name made from
    them (`var_2_local`, `var_2_local_i0_var_2_local_i1_fused`) to the name made the same
    way from the new ones: each longest run of its `_`-separated parts that is a renamed
    name is replaced. `one_to_one` turns False once two names were given one name."""

    def __init__(self, old: Sequence[str], new: Sequence[str]) -> None:
        self._names = dict(zip(old, new, strict=True))
        self._renamed = {a: b for a, b in self._names.items() if a != b}
        self._parts = max((a.count("_") + 1 for a in self._renamed), default=0)
        self._done: dict[str, str] = {}
        self._source: dict[str, str] = {}
        self.one_to_one = True

    def __call__(self, name: str) -> str:
        found = self._done.get(name)
        if found is None:
            found = self._names.get(name) or self._made(name)
            self._done[name] = found
            if self._source.setdefault(found, name) != name:
                self.one_to_one = False
        return found

    def _made(self, name: str) -> str:
        parts = name.split("_")
        out: list[str] = []
        start = 0
        while start < len(parts):
            for end in range(min(len(parts), start + self._parts), start, -1):
                new = self._renamed.get("_".join(parts[start:end]))
                if new is not None:
                    out.append(new)
                    start = end
                    break
            else:
                out.append(parts[start])
                start += 1
        return name if out == parts else "_".join(out)


def renamed_schedule(
    scheduled: ScheduleResult, old: Sequence[str], new: Sequence[str]
) -> ScheduleResult | None:
    """`scheduled`, the schedule of a function whose names are `old`, for the function
    equal to it up to names whose names are `new`: its function and trace renamed
    (`Renaming`), the launch as it is. None where the renaming is not one-to-one."""
    renaming = Renaming(old, new)
    func = rename(scheduled.func, renaming)
    steps = [
        Step(step.primitive, _renamed(step.inputs, renaming), _renamed(step.outputs, renaming))
        for step in scheduled.trace
    ]
    if not renaming.one_to_one:
        return None
    assert isinstance(func, LoweredFunc)
    return ScheduleResult(func, Trace(steps), scheduled.launch, scheduled.tactic, scheduled.tuned)


def _renamed(value: Any, renaming: Renaming) -> Any:
    """A trace step's inputs or outputs with the handles and names in them renamed (a
    string that is no name, "local" or "threadIdx.x", stays as it is)."""
    if isinstance(value, BlockRef):
        return BlockRef(renaming(value.name))
    if isinstance(value, LoopRef):
        return LoopRef(renaming(value.name))
    if isinstance(value, str):
        return renaming(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_renamed(v, renaming) for v in value)
    return value


def share_kernels(funcs: Sequence[LoweredFunc], origins: Sequence[int] | None = None) -> list[int]:
    """For each function, the index of the first function equal to it up to names
    (`canonical_key`): itself for a kernel of its own, an earlier one to share. With
    `origins` (`schedule_once`'s), a function whose schedule is a renaming of an earlier
    one's is not keyed again: it shares what that one shares (the first function of a
    key is never a renaming, whose origin comes before it with the same key)."""
    first: dict[tuple, int] = {}
    shares: list[int] = []
    for index, func in enumerate(funcs):
        origin = index if origins is None else origins[index]
        if origin == index:
            shares.append(first.setdefault(canonical_key(func), index))
        else:
            shares.append(shares[origin])
    return shares


def launch_of(info: KernelInfo, shared: LoweredFunc, own: LoweredFunc) -> KernelInfo:
    """How the group whose function is `own` launches the kernel `info` rendered from
    `shared` (equal up to names): the same kernel, grid, block and shared memory, with
    `own`'s parameters (the group's buffers and its own workspace, in the same
    positions) and the in-place pairs renamed to them."""
    if own is shared:
        return info
    rename = {a.name: b.name for a, b in zip(shared.args, own.args, strict=True)}
    pairs = tuple((rename[x], rename[y]) for x, y in info.in_place)
    return dataclasses.replace(info, args=own.args, in_place=pairs)
