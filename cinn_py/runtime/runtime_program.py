"""RuntimeProgram: the instructions of a compiled program, run in order over a Scope.

    runtime_program = PIRCompiler(program, "cuda-emu", scope).build()
    runtime_program.execute()           # over the scope it was built for
    runtime_program.execute(other)      # or any scope with the same variables

Besides the instructions it keeps what the compile made, for inspection and for the API:
the groups, the CUDA C of the fused groups, the storage plan (which variable a feed,
parameter or value is in) and the seconds each compile stage took.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from cinn_py.errors import CinnError
from cinn_py.hlir.group import Group
from cinn_py.pir.program import Program
from cinn_py.pir.value import Value
from cinn_py.runtime.instruction import Instruction
from cinn_py.runtime.library import LibraryInstruction, Storage
from cinn_py.runtime.scope import Scope
from cinn_py.runtime.storage import StoragePlan

Step = Instruction | LibraryInstruction


@dataclass
class RuntimeProgram:
    instructions: list[Step]
    scope: Scope | None = None
    """The scope `execute()` runs over when given none (the one it was built with)."""
    program: Program | None = field(default=None, repr=False)
    """The program as compiled (after passes): the ops the groups hold."""
    groups: list[Group] = field(default_factory=list, repr=False)
    cuda_source: str = field(default="", repr=False)
    """The generated CUDA C: every fused group's kernel in one translation unit."""
    storage: StoragePlan | None = field(default=None, repr=False)
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per compile stage (passes, grouping, lowering, scheduling, codegen, compile)."""

    def execute(self, scope: Scope | None = None) -> None:
        """Run every instruction in order. On cuda the launches are asynchronous: reading
        an array back (`Variable.to_numpy`) waits for them."""
        scope = scope if scope is not None else self.scope
        if scope is None:
            raise CinnError("RuntimeProgram.execute needs a scope (it was built without one)")
        for step in self.instructions:
            step.run(scope)

    def profile(self, scope: Scope | None = None) -> list[tuple[str, float]]:
        """Run once, timing each instruction (on cuda each is synchronised, so the
        seconds are its own); returns (instruction, seconds) in order."""
        scope = scope if scope is not None else self.scope
        if scope is None:
            raise CinnError("RuntimeProgram.profile needs a scope (it was built without one)")
        sync = _synchronizer(scope.target)
        times = []
        for step in self.instructions:
            start = time.perf_counter()
            step.run(scope)
            sync()
            times.append((str(step), time.perf_counter() - start))
        return times

    @property
    def kernels(self) -> list[Instruction]:
        """The kernel launches, in execution order."""
        return [step for step in self.instructions if isinstance(step, Instruction)]

    def storage_of(self, value: Value) -> Storage | None:
        """The variable(s) a value of `program` is in, None if it lives inside a kernel."""
        return None if self.storage is None else self.storage.get(value)


def _synchronizer(target: str) -> Any:
    if target != "cuda":
        return lambda: None
    import cupy

    return cupy.cuda.get_current_stream().synchronize
