"""The CLI's progress bar over a compile's stages (tqdm, on stderr).

A large program takes seconds to compile (passes, grouping, lowering and scheduling of
every group, codegen, g++ or NVRTC); a bar says which stage it is in. It shows only
where someone watches and only when there is something to watch: stderr is a terminal,
and the compile has run for `DELAY_S` (nothing appears for a program loaded from the
compiled-program cache, or for a small one). The library never draws it: the CLI asks
for it (`driver.progress.reporting`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import IO, Any

from cinn_py.driver import progress
from cinn_py.driver.pir_compiler import STAGES

DELAY_S = 1.0
"""Seconds a compile runs before its bar appears."""


class StageBar:
    """A tqdm bar over `STAGES`, made on the first stage event after `DELAY_S`; each
    stage's start names it, each end advances the bar. A compile per feed shape starts
    the count again."""

    def __init__(self, stream: IO[str], delay: float) -> None:
        self.stream = stream
        self.delay = delay
        self.start = time.perf_counter()
        self.bar: Any = None
        self.done = 0
        self.current = ""

    def __call__(self, stage: str, starting: bool) -> None:
        if starting:
            self.current = stage
            if stage == STAGES[0]:
                self.done = 0
        else:
            self.done = min(self.done + 1, len(STAGES))
        if self.bar is None and time.perf_counter() - self.start < self.delay:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(
                total=len(STAGES),
                file=self.stream,
                desc="cinn-py: compiling",
                unit="stage",
                leave=False,
                dynamic_ncols=True,
                bar_format="{desc} {bar} {n_fmt}/{total_fmt} {postfix} [{elapsed}]",
            )
        self.bar.n = self.done
        self.bar.set_postfix_str(self.current if starting else f"{stage} done", refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextlib.contextmanager
def compile_progress(stream: IO[str], delay: float | None = None) -> Iterator[StageBar | None]:
    """A progress bar on `stream` for the compiles in the block (shown after `delay`
    seconds, default `DELAY_S`), when `stream` is a terminal (never in a pipe, a file or
    a test's captured output); yields the bar or None."""
    if not _is_terminal(stream):
        yield None
        return
    bar = StageBar(stream, DELAY_S if delay is None else delay)
    try:
        with progress.reporting(bar):
            yield bar
    finally:
        bar.close()


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
