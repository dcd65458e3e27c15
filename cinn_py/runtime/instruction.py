"""Instruction: one kernel launch over Scope variables.

The compiler resolves everything at build time (the module, the kernel's launch shape and
which variable each parameter gets). `prepare(scope)` looks up the arrays, has the module
check the launch and pack its arguments once (`EmuModule.prepare` on cuda-emu,
`CudaModule.prepare` on cuda: asynchronous, on CuPy's current stream) and gives a
callable that only launches: `RuntimeProgram` prepares every instruction when it binds a
scope and calls the prepared launches on every `execute()`.

A kernel may also take workspace parameters (`ArgIO.WORKSPACE`: a grid reduction's
partials and counters), global memory that is no program value. The instruction owns
them: allocated zero-filled on its first run in each target's memory (`Target.zeros`:
NumPy on cuda-emu, CuPy on cuda), then reused by every later run. The kernel leaves them as it
found them (its last block resets each counter), so no run clears them. One
instruction's runs must not overlap (two streams running the same program at once
would share the counters); runs on one stream are ordered.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from cinn_py.errors import CinnError
from cinn_py.runtime.scope import Scope
from cinn_py.targets import COMPILED_TARGETS, Target, get_target


class KernelModule(Protocol):
    """What an Instruction launches through: an `EmuModule` or a `CudaModule`."""

    def launch(
        self,
        name: str,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[Any],
        shared_mem: int = 0,
    ) -> None: ...

    def prepare(
        self,
        name: str,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[Any],
        shared_mem: int = 0,
    ) -> Callable[[Any], None]:
        """The launch checked and its arguments packed once; calling it (with the stream
        `bound` gave) launches with no further checks."""
        ...

    def bound(self, stream: Any = None) -> AbstractContextManager[Any]:
        """The module ready to launch prepared launches in the block (its context current
        on cuda), giving the stream to pass them."""
        ...


@dataclass(frozen=True)
class Workspace:
    """A kernel's own global scratch buffer: its parameter name, element type (the
    storage dtype: bfloat16 as uint16) and shape."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]

    def allocate(self, target: str | Target) -> Any:
        """A zero-filled array of this workspace in `target`'s memory."""
        target = get_target(target)
        if not target.compiles:
            raise CinnError(
                f"workspace {self.name}: target '{target}' runs no kernels and has no "
                f"workspace memory (targets with kernels: {', '.join(COMPILED_TARGETS)})"
            )
        return target.zeros(self.shape, self.dtype)


@dataclass
class Instruction:
    """Launch kernel `name` of `module` with the arrays of the variables `args` (in the
    kernel's parameter order). `outputs` names the variables it writes: when every one
    of them is empty there is nothing to compute and no launch (a GPU refuses a 0-sized
    grid, which is what an empty tensor's schedule gives)."""

    group: str
    module: KernelModule = field(repr=False)
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    args: tuple[str, ...]
    outputs: tuple[str, ...] = ()
    workspace: tuple[Workspace, ...] = ()
    """The parameters in `args` that name a workspace of the kernel, not a variable."""
    in_place: tuple[tuple[str, str], ...] = ()
    """(input, output) variables whose output the kernel may write over the input's
    bytes (`ir.in_place` proves which); the memory plan decides whether it does."""
    scalars: tuple[tuple[str, Any], ...] = ()
    """The parameters in `args` that take a number, not a variable's array, with their
    value (NumPy scalars): a symbolic kernel's dims (`S0`, ...) at this signature."""
    _arrays: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False, compare=False)

    def run(self, scope: Scope) -> None:
        """Launch once over `scope` (checked and packed now; `RuntimeProgram.execute`
        uses `prepare` instead, once per binding)."""
        launch = self.prepare(scope)
        if launch is not None:
            with self.module.bound() as stream:
                launch(stream)

    def prepare(self, scope: Scope) -> Callable[[Any], None] | None:
        """The launch over `scope`'s arrays, checked and packed (device pointers, the
        workspace's, the dims): call it with the stream `module.bound()` gives. None when
        every output is empty (nothing to compute). Valid while `scope.generation` stays."""
        if self.outputs and all(scope[name].array.size == 0 for name in self.outputs):
            return None
        scalars = self._scalars
        arrays = [
            (scalars[name] if name in scalars else scope[name].array)
            if workspace is None
            else self.workspace_array(workspace, scope.target)
            for name, workspace in zip(self.args, self._workspaces, strict=True)
        ]
        return self.module.prepare(self.name, self.grid, self.block, arrays, self.shared_mem)

    @functools.cached_property
    def _workspaces(self) -> tuple[Workspace | None, ...]:
        """Per parameter in `args`, its workspace, or None for a variable: found once,
        not per launch."""
        own = {w.name: w for w in self.workspace}
        return tuple(own.get(name) for name in self.args)

    @functools.cached_property
    def _scalars(self) -> dict[str, Any]:
        return dict(self.scalars)

    def workspace_array(self, workspace: Workspace, target: str | Target) -> Any:
        """The instruction's array of `workspace` on `target`, allocated on first use."""
        key = (workspace.name, str(target))
        array = self._arrays.get(key)
        if array is None:
            array = self._arrays[key] = workspace.allocate(target)
        return array

    def reads(self) -> list[str]:
        """The variables the kernel reads (its inputs)."""
        own = {w.name for w in self.workspace} | {name for name, _ in self.scalars}
        return [n for n in self.args if n not in own and n not in self.outputs]

    def writes(self) -> list[str]:
        return list(self.outputs)

    def __str__(self) -> str:
        return (
            f"{self.name}<<<{self.grid}, {self.block}, {self.shared_mem}>>>({', '.join(self.args)})"
        )
