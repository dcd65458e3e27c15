"""LibraryInstruction: one op the compiler generates no kernel for, run by its reference
kernel over Scope variables.

A LIBRARY group (a reduction, a matmul, anything op lowering cannot lower yet) still has
to run inside a compiled program, between the kernels around it. It runs here as the
target's library-call table says (`Target.run_library_op`; today the reference
executor's kernel for the op, `cinn_py.reference.run_op`, on NumPy on every target): on `cuda`
its operands are copied from the device and its results back (synchronising on CuPy's
stream), which is slow but correct. Reductions and matmul become generated kernels in a
later issue; until then this is the whole cost of their presence in a program.

Operands and results are given as `Storage`: a variable name, or, for a Tensor[] value
(`builtin.combine`'s, or `pd_op.split`'s), a list of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cinn_py.pir.dtypes import DataType, bfloat16_to_float32
from cinn_py.pir.operation import Operation
from cinn_py.reference_ops.context import RuntimeValue, to_boundary
from cinn_py.runtime.scope import Scope

Storage = str | list["Storage"]
"""Where a value lives in the Scope: a variable name, or a list for a Tensor[] value."""


@dataclass
class LibraryInstruction:
    """Run `op` by its reference kernel: read `operands` (None for an absent operand),
    write `results` (None for a result nothing needs)."""

    group: str
    op: Operation
    operands: list[Storage | None]
    results: list[Storage | None]

    def run(self, scope: Scope) -> None:
        values = [None if s is None else read_storage(scope, s) for s in self.operands]
        results = scope.target.run_library_op(self.op, values)
        for storage, value in zip(self.results, results, strict=True):
            if storage is not None:
                write_storage(scope, storage, value)

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


def read_storage(scope: Scope, storage: Storage) -> RuntimeValue:
    """A value as the reference kernels take it: a host array (bfloat16 as float32
    values), or a list of them for a Tensor[]."""
    if isinstance(storage, list):
        return [read_storage(scope, item) for item in storage]
    variable = scope[storage]
    array: Any = variable.array
    if not isinstance(array, np.ndarray):
        array = variable.to_numpy()
    if variable.type.data_type is DataType.BFLOAT16:
        return bfloat16_to_float32(array)
    return array


def write_storage(scope: Scope, storage: Storage, value: RuntimeValue) -> None:
    """Store a reference kernel's result (already in its declared dtype) into variables."""
    if isinstance(storage, list):
        for item, element in zip(storage, value, strict=True):
            write_storage(scope, item, element)
        return
    variable = scope[storage]
    variable.set(to_boundary(value, variable.type.data_type))
