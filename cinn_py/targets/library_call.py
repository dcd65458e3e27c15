"""Library calls: how a target runs an op the compiler generates no kernel for.

A LIBRARY group's op (a matmul, a convolution, a sort, ...) is *planned* once, when the
program is built: `Target.plan_library_op(op)` gives a `LibraryCall`, an object that
knows the op's operand and result types and has made whatever the library needs ahead
of time (a cuBLASLt plan, a cuDNN graph). Each run then calls it with the arrays of the
op's variables, already in the target's memory:

    call(inputs, outputs, stream)

    inputs    per operand: None (an absent optional operand), an array, or a list of
              arrays for a Tensor[] operand (`builtin.combine`'s)
    outputs   per result: None (nothing reads it), an array, or a list for a Tensor[]
              result (`pd_op.split`'s); the call writes its results INTO these arrays
              (variables of the memory plan's arena), it never returns new ones
    stream    where the work goes: on `cuda` a CUstream handle (an int, or anything
              `int()` takes), on the host targets None

Arrays are in their storage dtype (bfloat16 as uint16 bit patterns, bool as one byte).
`capturable` says whether the call may be recorded into a CUDA graph: it enqueues its
work on `stream` only, never waits on the host and never allocates (a call that
allocates or synchronises runs between the graph's segments).

`HostLibraryCall` is every target's fallback: the op's NumPy reference kernel
(`cinn_py.reference.run_op`) on host copies of the operands. On cuda-emu the arrays are
host arrays already; on `cuda` it waits for the stream and copies both ways, which is
correct but slow, so `cuda` plans it only for an op its device table lacks (and warns).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from cinn_py.errors import CinnError
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DenseTensorType, Type, VectorType
from cinn_py.reference import run_op
from cinn_py.reference_ops.context import RuntimeValue, to_boundary


class LibraryCall(Protocol):
    """One op planned for a target (see the module doc)."""

    op_name: str
    capturable: bool
    """Whether it may be recorded into a CUDA graph (stream-ordered, no allocation, no
    host synchronisation)."""
    where: str
    """What runs it, as `--profile` and `cinn-py run -v` say: "host (NumPy reference)",
    "device (cuBLASLt via nvmath-python)", ..."""

    def __call__(self, inputs: list[Any], outputs: list[Any], stream: Any) -> None: ...


class HostLibraryCall:
    """The op's reference kernel on host copies of its operands (see the module doc).

    `wait(stream)` is called before reading device arrays (the target's stream
    synchronisation); NumPy arrays are read in place."""

    capturable = False

    def __init__(
        self, op: Operation, where: str = "reference kernel, host", wait: Callable | None = None
    ) -> None:
        self.op = op
        self.op_name = op.name
        self.where = where
        self._wait = wait
        self._operand_types = [None if v is None else v.type for v in op.operand_values()]
        self._result_types = [r.type for r in op.results]

    def __call__(self, inputs: list[Any], outputs: list[Any], stream: Any) -> None:
        if self._wait is not None:
            self._wait(stream)
        values = [
            None if array is None else _to_reference(array, type_)
            for array, type_ in zip(inputs, self._operand_types, strict=True)
        ]
        results = run_op(self.op, values)
        for out, value, type_ in zip(outputs, results, self._result_types, strict=True):
            if out is not None:
                _store(out, value, type_)
        if self._wait is not None:
            self._wait(stream)

    def __repr__(self) -> str:
        return f"HostLibraryCall({self.op_name})"


def _to_reference(array: Any, type_: Type | None) -> RuntimeValue:
    """A value as the reference kernels take it: a host array (bfloat16 as float32
    values), or a list of them for a Tensor[]."""
    if isinstance(array, list):
        items = type_.types if isinstance(type_, VectorType) else [None] * len(array)
        return [_to_reference(a, t) for a, t in zip(array, items, strict=True)]
    host = array if isinstance(array, np.ndarray) else array.get()
    if isinstance(type_, DenseTensorType) and type_.data_type is DataType.BFLOAT16:
        return bfloat16_to_float32(host)
    return host


def _store(out: Any, value: RuntimeValue, type_: Type) -> None:
    """Write a reference result (already in its declared dtype) into its array(s)."""
    if isinstance(out, list):
        items = type_.types if isinstance(type_, VectorType) else [None] * len(out)
        for array, element, item in zip(out, value, items, strict=True):
            _store(array, element, item)
        return
    data_type = type_.data_type if isinstance(type_, DenseTensorType) else None
    host = np.asarray(to_boundary(value, data_type) if data_type is not None else value)
    if host.shape != tuple(out.shape) or host.dtype != out.dtype:
        raise CinnError(
            f"library op result {host.dtype} {list(host.shape)} does not fit its variable "
            f"({out.dtype} {list(out.shape)})"
        )
    if isinstance(out, np.ndarray):
        np.copyto(out, host)
    else:
        out.set(np.ascontiguousarray(host))
