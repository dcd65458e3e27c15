"""Compile progress: who is told when a compile stage starts and ends.

    with progress.reporting(listener):   # the CLI's progress bar
        exe = cinn_py.compile(program)   # listener("passes", True) ... ("compile", False)

`PIRCompiler` announces each stage it times (`stage`); nobody listens unless a caller
asked to (`reporting`), so the library itself never writes to the terminal.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

Listener = Callable[[str, bool], None]
"""Called with the stage's name and True when it starts, False when it ends."""

_listener: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "compile_progress", default=None
)


@contextlib.contextmanager
def reporting(listener: Listener) -> Iterator[None]:
    """Tell `listener` about the stages of every compile in the block."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """The stage `name` runs in the block."""
    listener = _listener.get()
    if listener is None:
        yield
        return
    listener(name, True)
    try:
        yield
    finally:
        listener(name, False)
