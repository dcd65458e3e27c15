"""The `cuda` target's device table: a device implementation for each library op.

`plan(op)` gives the op's `LibraryCall` on the GPU, made once when the program is built,
or None when the table has no entry (the target then falls back to the host and warns).
One module per library, each ending with its `ENTRIES` (op name -> planner):

    matmul.py     matmul, bmm, fused_gemm_epilogue: cuBLASLt through nvmath-python's
                  bindings (`nvmath.bindings.cublasLt`), descriptors, heuristic and
                  workspace made at plan time; integer and mixed dtypes through CuPy
    conv.py       conv2d, depthwise_conv2d, conv2d_transpose: cuDNN's frontend graphs
                  (`cudnn.pygraph`), built at plan time
    cupy_ops.py   cumsum, argsort, topk, argmax / argmin, dropout, pool2d,
                  max_pool2d_with_index: array code written against an array module
                  (`xp`), CuPy on the device (NumPy in the tests without a GPU)

A planner takes the op (its operand and result types are static by then) and gives a
`LibraryCall`, or None for a form of the op it does not cover (the host fallback, with
its warning). The GPU packages are imported by the planners, never at import time:
CI imports this table with none of them installed, and a planner whose package is
missing raises `MissingLibraryError` naming it and the `gpu` extra.
"""

from __future__ import annotations

from collections.abc import Callable

from cinn_py.pir.operation import Operation
from cinn_py.targets.cuda_library import conv, cupy_ops, matmul
from cinn_py.targets.library_call import LibraryCall

Planner = Callable[[Operation], LibraryCall | None]

TABLE: dict[str, Planner] = {**matmul.ENTRIES, **conv.ENTRIES, **cupy_ops.ENTRIES}
"""op name -> the planner of its device call."""


def plan(op: Operation) -> LibraryCall | None:
    """`op` planned on the device, or None when the table has no entry for it (or the
    entry does not cover this form of the op)."""
    planner = TABLE.get(op.name)
    return None if planner is None else planner(op)
