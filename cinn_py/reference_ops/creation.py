"""Ops that make tensors from attributes: full, full_like, full_int_array, assign."""

from __future__ import annotations

import numpy as np

from cinn_py.pir.dtypes import float_to_int
from cinn_py.reference_ops.context import Kernel, KernelContext, storage_dtype


def _filled(shape: list[int] | tuple[int, ...], value: float, ctx: KernelContext) -> np.ndarray:
    """`value` converted as Paddle's Scalar converts it: truncated for ints (2.7 -> 2;
    out of range and NaN by `dtypes.float_to_int`, as every cast), nonzero for bool."""
    dtype = ctx.out_dtype()
    if dtype.is_integer and isinstance(value, float):
        return np.full(shape, float_to_int(value, dtype))
    with np.errstate(invalid="ignore", over="ignore"):
        return np.full(shape, value, dtype=storage_dtype(dtype))


def full(ctx: KernelContext) -> np.ndarray:
    return _filled(ctx.attr("shape"), ctx.attr("value"), ctx)


def full_like(ctx: KernelContext) -> np.ndarray:
    return _filled(ctx.tensor(0).shape, ctx.scalar(1, "value"), ctx)


def full_int_array(ctx: KernelContext) -> np.ndarray:
    return np.array(ctx.attr("value"), dtype=storage_dtype(ctx.out_dtype())).reshape(-1)


def assign(ctx: KernelContext) -> np.ndarray:
    return ctx.tensor(0).copy()


KERNELS: dict[str, Kernel] = {
    "pd_op.full": full,
    "pd_op.full_like": full_like,
    "pd_op.full_int_array": full_int_array,
    "pd_op.assign": assign,
}
