"""What the device table's modules share: importing a GPU package (or saying which extra
installs it), reading an op's static facts, bfloat16 bit patterns in array code, and
running on the call's stream."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np

from cinn_py.errors import MissingLibraryError
from cinn_py.pir.constant import constant_of
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import REQUIRED, attr_value
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DYNAMIC, DenseTensorType, is_null

PACKAGES = {
    "cupy": "cupy-cuda13x",
    "nvmath": "nvmath-python",
    "cudnn": "nvidia-cudnn-frontend",
}
"""Import name -> the distribution that provides it (all in the `gpu` extra)."""


def require(module: str, needed_for: str) -> ModuleType:
    """`import module`, or a MissingLibraryError naming its package and the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingLibraryError(PACKAGES.get(module.split(".")[0], module), needed_for) from error


def attr(op: Operation, name: str) -> Any:
    """The op's attribute `name`, else its declared default (None when it has neither)."""
    value = attr_value(op.op_def, op.attributes, name)
    return None if value is REQUIRED else value


def mutable_scalar(op: Operation, index: int, name: str) -> Any:
    """A mutable-attribute scalar known when the program is built (cumsum's axis, topk's
    k): the folded attribute, else the constant its operand holds; None when only the run
    knows it."""
    if name in op.attributes:
        return op.attributes[name].to_python()
    value = op.operand_value(index) if index < op.num_operands else None
    constant = None if value is None else constant_of(value)
    if constant is None:
        return None
    items = np.asarray(constant).reshape(-1)
    return items[0].item() if items.size == 1 else None


def tensor_type(value: Any) -> DenseTensorType | None:
    """A value's type when it is a tensor of static shape, else None."""
    type_ = None if value is None else value.type
    if not isinstance(type_, DenseTensorType) or DYNAMIC in type_.dims:
        return None
    return type_


def static_types(op: Operation) -> list[DenseTensorType | None] | None:
    """The types of the op's operands then results, each static or None for an absent
    operand or a result typed `<<NULL TYPE>>` (one the op does not make); None when a
    present one is not a static tensor (the table leaves such an op to the host)."""
    types: list[DenseTensorType | None] = []
    for value in [*op.operand_values(), *op.results]:
        if value is None or is_null(value.type):
            types.append(None)
            continue
        type_ = tensor_type(value)
        if type_ is None:
            return None
        types.append(type_)
    return types


# -- values in array code (NumPy or CuPy, `xp`) ------------------------------------------


def to_values(xp: ModuleType, array: Any, dtype: DataType) -> Any:
    """A stored array as values: bfloat16 bit patterns widened exactly to float32."""
    if dtype is DataType.BFLOAT16:
        return (array.astype(xp.uint32) << 16).view(xp.float32)
    return array


def to_storage(xp: ModuleType, values: Any, dtype: DataType) -> Any:
    """Values rounded into `dtype`'s storage: bfloat16 to nearest even as bit patterns
    (NaN as 0x7FC0, the reference's rule), other dtypes by `astype`."""
    if dtype is not DataType.BFLOAT16:
        return values.astype(dtype.numpy, copy=False)
    values = xp.ascontiguousarray(values.astype(xp.float32))
    bits = values.view(xp.uint32)
    rounded = ((bits + (((bits >> 16) & 1) + xp.uint32(0x7FFF))) >> 16).astype(xp.uint16)
    return xp.where(xp.isnan(values), xp.uint16(0x7FC0), rounded)


def store(out: Any, values: Any) -> None:
    """`values` written into the result array `out` (same shape and dtype)."""
    if out is not None:
        out[...] = values


@contextlib.contextmanager
def on_stream(xp: ModuleType, stream: Any) -> Iterator[None]:
    """CuPy's work inside goes on `stream` (a CUstream handle); NumPy runs as it is."""
    if stream is None or xp is np:
        yield
        return
    with xp.cuda.ExternalStream(int(stream)):
        yield
