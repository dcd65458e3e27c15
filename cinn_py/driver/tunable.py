"""The kernels of a program a schedule database could tune, as the rules schedule them.

tools/tune.py measures each kernel's candidates, and the fuzzer's `--knobs` mode
compiles each with a random one; both ask the same question of a program: which kernels
does a tactic with tunable knobs take, under which database key, with which settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB, ScheduleKey
from cinn_py.ir.group_schedule.tactics import TACTIC_NAMED
from cinn_py.pir.program import Program
from cinn_py.targets import Target, compiled_target


@dataclass(frozen=True)
class TunableKernel:
    """One kernel: its group, its tactic's database key, the settings the tactic can
    take for it (`Tactic.candidates`) and what its rules chose (`Tactic.knobs`)."""

    group: str
    key: ScheduleKey
    candidates: list[dict[str, int]]
    rule: dict[str, int]


def tunable_kernels(
    program: Program,
    target: str | Target,
    *,
    arch: str | None = None,
    feed_shapes: Mapping[str, Sequence[int]] | None = None,
) -> list[TunableKernel]:
    """The kernels of `program` (compiled for `target` to the scheduled stage, with no
    database: the rules) whose tactic has two settings or more to choose from."""
    info = compiled_target(target).target_info(arch)
    compiler = PIRCompiler(
        program, target, arch=arch, feed_shapes=feed_shapes, schedules=ScheduleDB(info.arch)
    )
    found = []
    for kernel in compiler.stages(until="scheduled").fused:
        tactic = TACTIC_NAMED[kernel.scheduled.tactic]
        pattern = kernel.group.reduce_pattern
        key = tactic.key(kernel.lowered, pattern)
        if key is None:
            continue
        candidates = tactic.candidates(kernel.lowered, info, pattern)
        if len(candidates) < 2:
            continue
        rule = tactic.knobs(kernel.lowered, info, pattern)
        found.append(TunableKernel(kernel.group.name, key, candidates, rule))
    return found
