"""Where values enter and leave a program (data, parameters, fetch) and the builtin
ops that pack and unpack Tensor[] values."""

from __future__ import annotations

from typing import Any

import numpy as np

from cinn_py.errors import FeedError
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32
from cinn_py.pir.types import DenseTensorType
from cinn_py.reference_ops.context import (
    Kernel,
    KernelContext,
    RuntimeValue,
    shape_fits,
    tensor_type,
    to_boundary,
)


def boundary_dtype(dtype: DataType) -> np.dtype:
    """The NumPy dtype of a `dtype` array at the API: bfloat16 travels as uint16 bit
    patterns (as Paddle's `.numpy()` gives it and model.pdiparams stores it)."""
    return np.dtype(np.uint16) if dtype is DataType.BFLOAT16 else dtype.numpy


def describe(type_: DenseTensorType) -> str:
    """`float32 [-1, 6]`, the way FeedError shows what a program expects."""
    suffix = " (uint16 bit patterns)" if type_.data_type is DataType.BFLOAT16 else ""
    return f"{type_.data_type.value}{suffix} {list(type_.dims)}"


def check_input(name: str, array: Any, type_: DenseTensorType) -> np.ndarray:
    """A feed or parameter as the executor holds it, after checking it against the
    program's declared type (a -1 dim matches any size)."""
    if array is None:
        raise FeedError(name, describe(type_), "nothing (it is missing)")
    array = np.asarray(array)
    got = f"{array.dtype} {list(array.shape)}"
    if array.dtype != boundary_dtype(type_.data_type):
        raise FeedError(name, describe(type_), got)
    if not shape_fits(array.shape, type_):
        raise FeedError(name, describe(type_), got)
    if type_.data_type is DataType.BFLOAT16:
        return bfloat16_to_float32(array)
    return array


def data(ctx: KernelContext) -> np.ndarray:
    name = ctx.attr("name")
    return check_input(name, ctx.runtime.feeds.get(name), ctx.result_type())


def parameter(ctx: KernelContext) -> np.ndarray:
    """A weight: written earlier in this run, else given by the caller, else the program's."""
    name = ctx.attr("parameter_name")
    runtime = ctx.runtime
    sources = (runtime.written, runtime.params, runtime.program_params)
    array = next((source[name] for source in sources if name in source), None)
    return check_input(name, array, ctx.result_type())


def set_parameter(ctx: KernelContext) -> None:
    """Stores the value as a caller would pass it (bfloat16 as bit patterns), so that a
    later `builtin.parameter` reads it back like any other parameter."""
    type_ = tensor_type(ctx.op.operand_value(0).type, ctx.op.name)
    ctx.runtime.written[ctx.attr("parameter_name")] = to_boundary(ctx.tensor(0), type_.data_type)


def identity(ctx: KernelContext) -> np.ndarray:
    return ctx.tensor(0)


def no_result(ctx: KernelContext) -> None:
    """An op that marks an output and computes nothing (shadow_output)."""


def combine(ctx: KernelContext) -> list[RuntimeValue]:
    return [ctx.tensor(i) for i in range(len(ctx.operands))]


def unpack(ctx: KernelContext) -> list[np.ndarray]:
    items = ctx.tensors(0)
    if len(items) != ctx.op.num_results:
        raise ctx.error(f"unpacks {len(items)} tensors into {ctx.op.num_results} results")
    return items


def pick(ctx: KernelContext) -> np.ndarray:
    items = ctx.tensors(0)
    index = ctx.attr("index")
    if not 0 <= index < len(items):
        raise ctx.error(f"index {index} is out of range for a vector of {len(items)}")
    return items[index]


KERNELS: dict[str, Kernel] = {
    "pd_op.data": data,
    "pd_op.fetch": identity,
    "builtin.parameter": parameter,
    "builtin.set_parameter": set_parameter,
    "builtin.shadow_output": no_result,
    "builtin.combine": combine,
    "builtin.split": unpack,
    "builtin.slice": pick,
}
