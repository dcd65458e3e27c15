"""Compile jobs run side by side: a thread pool sized to the cores.

NVRTC and the emulator's g++ each compile one translation unit at a time on one core.
A program split into several units (`UNIT_SIZE`), or the per-group compiles that find
the group at fault in a unit that failed, are independent jobs: threads run them at
once, since g++ is a subprocess and NVRTC's `nvrtcCompileProgram` is called without
the GIL by cuda-bindings (checked: a Python loop keeps its pace beside a compile). The
results come back in job order and the error raised is the first failing job's in that
order, so neither the outputs nor the message depend on which job finished first.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

UNIT_SIZE = 16
"""Kernels per translation unit when a program has more distinct kernels than this. A
unit has a fixed cost (g++ about 0.3 s of CPU for the headers, less with the precompiled
header; NVRTC less), so small programs stay one unit; the split does not depend on the
core count, so a program gives the same units, and the same cache entries, on every
machine."""

Job = TypeVar("Job")
Result = TypeVar("Result")


@dataclass(frozen=True)
class PoolRun:
    """One `run_jobs` call: how many jobs and how many threads ran them (1: inline)."""

    jobs: int
    workers: int


_lock = threading.Lock()
runs: deque[PoolRun] = deque(maxlen=64)
"""The latest calls of `run_jobs` in this process (what tests and `-v` look at)."""


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_size(jobs: int) -> int:
    """Threads for `jobs` compiles: one per core, no more than the jobs."""
    return max(1, min(cores(), jobs))


def run_jobs(compile_one: Callable[[Job], Result], jobs: Sequence[Job]) -> list[Result]:
    """`compile_one` of every job, on `pool_size(len(jobs))` threads; the results in job
    order. The first job in order that fails raises its own error (after the others
    finished: nothing is left running)."""
    workers = pool_size(len(jobs))
    with _lock:
        runs.append(PoolRun(len(jobs), workers))
    if workers == 1:
        return [compile_one(job) for job in jobs]
    with ThreadPoolExecutor(workers, thread_name_prefix="cinn-compile") as pool:
        futures = [pool.submit(compile_one, job) for job in jobs]
        errors = [future.exception() for future in futures]
    for error in errors:
        if error is not None:
            raise error
    return [future.result() for future in futures]
