"""ModuleSet: the modules of a program compiled as several translation units, seen as
one module.

A program with many distinct kernels compiles as several units in parallel
(`driver.compile_pool`), one module each. Instructions launch through a module by
kernel name; the RuntimeProgram binds one module per run and, on cuda, captures CUDA
graphs through it. The set gives it that one module: each launch goes to the module
that holds its kernel; binding and capture are the first module's, since every module
of a program is loaded into the same context (cuda) or needs none (cuda-emu).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from cinn_py.errors import LaunchError


class ModuleSet:
    """The modules of one program's units; a kernel name picks its module."""

    def __init__(self, modules: Sequence[Any]) -> None:
        if not modules:
            raise ValueError("a ModuleSet needs at least one module")
        self.modules = tuple(modules)
        self._owner = {name: m for m in self.modules for name in m.kernels}
        self.kernels = tuple(self._owner)

    def module_of(self, name: str) -> Any:
        module = self._owner.get(name)
        if module is None:
            raise LaunchError(f"no kernel {name!r} in this module; it has {list(self.kernels)}")
        return module

    def prepare(
        self,
        name: str,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[Any],
        shared_mem: int = 0,
    ) -> Callable[[Any], None]:
        return self.module_of(name).prepare(name, grid, block, args, shared_mem)

    def launch(
        self,
        name: str,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[Any],
        shared_mem: int = 0,
    ) -> None:
        self.module_of(name).launch(name, grid, block, args, shared_mem)

    def bound(self, stream: Any = None) -> AbstractContextManager[Any]:
        return self.modules[0].bound(stream)

    def __getattr__(self, name: str) -> Any:
        """`capture` where the modules capture CUDA graphs (cuda), absent elsewhere."""
        if name == "capture":
            return self.modules[0].capture
        raise AttributeError(name)


def one_module(modules: Sequence[Any]) -> Any:
    """The one module of `modules`, or a ModuleSet of several."""
    return modules[0] if len(modules) == 1 else ModuleSet(modules)
