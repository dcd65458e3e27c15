"""LibraryInstruction: one op the compiler generates no kernel for, run by the call the
target planned for it at build time (`Target.plan_library_op`, `targets.library_call`).

A LIBRARY group (a matmul, a convolution, a sort, an op lowering cannot lower) still has
to run inside a compiled program, between the kernels around it. Its op is planned once
when the program is built: on `cuda` its device table's entry (cuBLASLt, cuDNN, CuPy:
stream-ordered, on the GPU's arrays), on `cuda-emu` the op's NumPy reference kernel over
the host arrays. `prepare(scope)` looks up the variables' arrays once and gives a
callable that only calls, as a kernel Instruction's `prepare` does.

Operands and results are given as `Storage`: a variable name, or, for a Tensor[] value
(`builtin.combine`'s, or `pd_op.split`'s), a list of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cinn_py.pir.operation import Operation
from cinn_py.runtime.scope import Scope
from cinn_py.targets.library_call import LibraryCall

Storage = str | list["Storage"]
"""Where a value lives in the Scope: a variable name, or a list for a Tensor[] value."""


@dataclass
class LibraryInstruction:
    """Run `op` by `call`: read `operands` (None for an absent operand), write `results`
    (None for a result nothing needs)."""

    group: str
    op: Operation
    operands: list[Storage | None]
    results: list[Storage | None]
    call: LibraryCall

    @property
    def capturable(self) -> bool:
        """Whether a CUDA graph may record it (`LibraryCall.capturable`)."""
        return self.call.capturable

    def prepare(self, scope: Scope) -> Callable[[Any], None]:
        """The call over `scope`'s arrays, looked up now: call it with the stream. Valid
        while `scope.generation` stays."""
        inputs = [None if s is None else storage_arrays(scope, s) for s in self.operands]
        outputs = [None if s is None else storage_arrays(scope, s) for s in self.results]
        call = self.call

        def run(stream: Any) -> None:
            call(inputs, outputs, stream)

        return run

    def run(self, scope: Scope, stream: Any = None) -> None:
        """Run once over `scope` (on cuda, on `stream`: None is CuPy's current stream)."""
        self.prepare(scope)(stream)

    def reads(self) -> list[str]:
        return [n for s in self.operands if s is not None for n in storage_names(s)]

    def writes(self) -> list[str]:
        return [n for s in self.results if s is not None for n in storage_names(s)]

    def __str__(self) -> str:
        return f"library {self.op.name} ({self.group})"


def storage_names(storage: Storage) -> list[str]:
    """The variable names of a value's storage, flattened."""
    if isinstance(storage, list):
        return [n for item in storage for n in storage_names(item)]
    return [storage]


def storage_arrays(scope: Scope, storage: Storage) -> Any:
    """The arrays of a value's variables: one array, or a list for a Tensor[] value."""
    if isinstance(storage, list):
        return [storage_arrays(scope, item) for item in storage]
    return scope[storage].array
