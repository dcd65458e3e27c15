"""Instruction: one kernel launch over Scope variables.

The compiler resolves everything at build time (the module, the kernel's launch shape and
which variable each parameter gets), so running is a lookup of arrays and one `launch`:
`EmuModule.launch` on cuda-emu, `CudaModule.launch` (asynchronous, on CuPy's current
stream) on cuda. Both take the same arguments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from cinn_py.runtime.scope import Scope


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

    def run(self, scope: Scope) -> None:
        if self.outputs and all(scope[name].array.size == 0 for name in self.outputs):
            return
        arrays = [scope[name].array for name in self.args]
        self.module.launch(self.name, self.grid, self.block, arrays, self.shared_mem)

    def __str__(self) -> str:
        return (
            f"{self.name}<<<{self.grid}, {self.block}, {self.shared_mem}>>>({', '.join(self.args)})"
        )
