"""How often a CompiledProgram compiled, and how many compiles it keeps.

A program with -1 dims is compiled once per feed signature (`driver.compiled`): a
caller serving many shapes wants to know whether its runs compile (seconds each) or
reuse a compile (nothing), and whether the kernels came out of the kernel cache. The
counts are kept per CompiledProgram (`CompiledProgram.stats`, `exe.compile_stats`),
so they are not mixed with other programs' as the process-wide `backends.cache.stats`
and `program_cache.stats` are.

Each CompiledProgram also bounds the compiles it holds (`max_shapes`): every one keeps
a Scope with its arena and, on `cuda`, its CUDA graphs, so a server fed ever new shapes
would otherwise grow without end. `CINN_PY_MAX_SHAPES` sets the default bound.
"""

from __future__ import annotations

import operator
import os
from dataclasses import dataclass

from cinn_py.errors import CinnError

MAX_SHAPES_ENV = "CINN_PY_MAX_SHAPES"
DEFAULT_MAX_SHAPES = 32
"""Feed signatures a CompiledProgram keeps compiled by default; the least recently run
one is dropped beyond it."""


@dataclass
class CompileStats:
    """A CompiledProgram's compile counts, since it was made.

    `compiled`: compiles that ran the compiler's stages (passes, grouping, lowering,
    scheduling, codegen). `loaded`: compiles taken from the on-disk compiled-program
    cache (`program_cache`), no stage run. `reused`: runs that found their compile in
    memory and compiled nothing (a static program's runs all do; its one compile
    happens when it is made). `kernel_units_compiled` / `kernel_units_cached`: the
    kernel source units (translation units, `compile_pool`) that NVRTC or the
    emulator's g++ built, against those found in the kernel cache (on disk or in this
    process's memory) by the compiles counted here; they are read off the process-wide
    kernel cache counts (`backends.cache.stats`) around each compile, so a compile
    another thread runs at the same time is counted too. `evicted`: compiles dropped
    to stay within `max_shapes` (a dropped shape run again compiles, or loads, again).
    `schedules_made` / `schedules_reused`: schedules of the kernels of a program with -1
    dims (and their aligned variants) that the compiles counted here made, against
    those taken from the program's schedule cache (`driver.schedule_cache`: a new shape
    in a bucket already compiled schedules nothing).

    A fetch of a value that lives inside a fused kernel compiles the program once more
    with it pinned as an output: that is a compile too, kept with its shape's."""

    compiled: int = 0
    loaded: int = 0
    reused: int = 0
    kernel_units_compiled: int = 0
    kernel_units_cached: int = 0
    schedules_made: int = 0
    schedules_reused: int = 0
    evicted: int = 0

    @property
    def compiles(self) -> int:
        """Every compile: `compiled` + `loaded`."""
        return self.compiled + self.loaded

    def summary(self) -> str:
        """One line: `compiles: 1 (compiled 1, loaded 0), reused 0, evicted 0; kernel
        units: 3 compiled, 0 cached`, and `; schedules: 9 made, 18 reused` for a
        program with -1 dims."""
        line = (
            f"compiles: {self.compiles} (compiled {self.compiled}, loaded {self.loaded}), "
            f"reused {self.reused}, evicted {self.evicted}; kernel units: "
            f"{self.kernel_units_compiled} compiled, {self.kernel_units_cached} cached"
        )
        if self.schedules_made or self.schedules_reused:
            line += f"; schedules: {self.schedules_made} made, {self.schedules_reused} reused"
        return line


def max_shapes(given: int | None = None) -> int:
    """The bound on the feed signatures a CompiledProgram keeps compiled: `given`, else
    `CINN_PY_MAX_SHAPES`, else 32. Anything but a whole number >= 1 is a CinnError
    (a bound of 0 would drop the compile a run is about to use)."""
    if given is None:
        text = os.environ.get(MAX_SHAPES_ENV, "").strip()
        if not text:
            return DEFAULT_MAX_SHAPES
        try:
            value = int(text)
        except ValueError:
            raise CinnError(
                f"{MAX_SHAPES_ENV}={text!r}: expected a whole number of feed shapes >= 1"
            ) from None
        where = f"{MAX_SHAPES_ENV}={text}"
    else:
        try:
            if isinstance(given, bool):
                raise TypeError
            value = operator.index(given)
        except TypeError:
            raise CinnError(
                f"max_shapes={given!r}: expected a whole number of feed shapes >= 1"
            ) from None
        where = f"max_shapes={value}"
    if value < 1:
        raise CinnError(
            f"{where}: a compiled program must keep at least 1 compiled feed shape "
            "(the one a run uses)"
        )
    return value
