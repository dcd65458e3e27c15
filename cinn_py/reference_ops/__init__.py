"""What reference kernels share: `KernelContext` and the dtype rules (`context.py`).
The kernels themselves live in the op entries (`cinn_py/ops/`)."""

from __future__ import annotations

from cinn_py.reference_ops.context import Kernel, KernelContext, Runtime

__all__ = ["Kernel", "KernelContext", "Runtime"]
