"""The reference executor's kernels, one module per category, merged into one table
from op name to kernel (see `cinn_py.reference`)."""

from __future__ import annotations

from cinn_py.reference_ops import activation, creation, elementwise, io, manipulation, nn, reduction
from cinn_py.reference_ops.context import Kernel, KernelContext, Runtime

KERNELS: dict[str, Kernel] = {
    **io.KERNELS,
    **creation.KERNELS,
    **elementwise.KERNELS,
    **activation.KERNELS,
    **reduction.KERNELS,
    **manipulation.KERNELS,
    **nn.KERNELS,
}

__all__ = ["KERNELS", "Kernel", "KernelContext", "Runtime"]
