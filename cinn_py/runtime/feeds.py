"""Feeds and parameters at the API: conversion to arrays and checks against the program.

Arrays in may be NumPy, CuPy, anything that exports DLPack (`np.from_dlpack`, or
`cupy.from_dlpack` for device memory on `cuda`), or Python scalars and lists. bfloat16
goes in as uint16 bit patterns (what Paddle's `.numpy()` gives) or as an `ml_dtypes`
bfloat16 array (reinterpreted as its bits, no copy). Every problem is a FeedError naming
the feed, what the program declares and what came: a wrong dtype, a wrong shape (a -1 dim
matches any size), a missing feed, a name the program has no feed or parameter for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cinn_py.errors import FeedError
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType
from cinn_py.reference_ops.context import shape_fits
from cinn_py.reference_ops.io import boundary_dtype, describe

_KDL_CUDA = 2
"""DLPack's device type of CUDA memory (`__dlpack_device__()[0]`)."""


def feed_types(program: Program) -> dict[str, DenseTensorType]:
    """Every `pd_op.data` op's declared type, by feed name, in program order."""
    return {
        str(op.attr("name")): op.result(0).type
        for op in program.data_ops()
        if isinstance(op.result(0).type, DenseTensorType)
    }


def parameter_types(program: Program) -> dict[str, DenseTensorType]:
    """Every `builtin.parameter` op's declared type, by parameter name."""
    return {
        str(op.attr("parameter_name")): op.result(0).type
        for op in program.parameter_ops()
        if isinstance(op.result(0).type, DenseTensorType)
    }


def to_array(name: str, value: Any, device: bool = False) -> Any:
    """`value` as a NumPy array, or, when `device` (the cuda target), a CuPy array where it
    already lives on the GPU. Host targets copy device arrays to the host."""
    if isinstance(value, np.ndarray):
        return _bfloat16_bits(value)
    if hasattr(value, "__cuda_array_interface__"):
        if device:
            import cupy

            return cupy.asarray(value)
        if hasattr(value, "get"):
            return value.get()
    if hasattr(value, "__dlpack__"):
        try:
            if device and _dlpack_device(value) == _KDL_CUDA:
                import cupy

                return cupy.from_dlpack(value)
            return _bfloat16_bits(np.from_dlpack(value))
        except (TypeError, RuntimeError, BufferError, ValueError) as error:
            raise FeedError(name, "an array DLPack can export", str(error)) from None
    if isinstance(value, (int, float, bool, np.generic, list, tuple)):
        return np.asarray(value)
    raise FeedError(name, "a NumPy, CuPy or DLPack array", type(value).__name__)


def _dlpack_device(value: Any) -> int | None:
    device = getattr(value, "__dlpack_device__", None)
    return int(device()[0]) if callable(device) else None


def _bfloat16_bits(array: np.ndarray) -> np.ndarray:
    """An ml_dtypes bfloat16 array as the uint16 bit patterns the program's arrays use."""
    if array.dtype.name == "bfloat16" and array.dtype.itemsize == 2:
        return array.view(np.uint16)
    return array


def check_array(name: str, array: Any, type_: DenseTensorType) -> Any:
    """`array` if its dtype and shape fit `type_` (a -1 dim matches any size)."""
    shape = tuple(int(d) for d in array.shape)
    got = f"{np.dtype(array.dtype)} {list(shape)}"
    if np.dtype(array.dtype) != boundary_dtype(type_.data_type) or not shape_fits(shape, type_):
        raise FeedError(name, describe(type_), got)
    return array


def check_feeds(program: Program, feeds: Mapping[str, Any], device: bool = False) -> dict[str, Any]:
    """Every feed of `program`, converted and checked, by feed name in program order."""
    types = feed_types(program)
    _refuse_unknown(feeds, types, "feeds")
    checked = {}
    for name, type_ in types.items():
        if name not in feeds or feeds[name] is None:
            raise FeedError(name, describe(type_), "nothing (it is missing)")
        checked[name] = check_array(name, to_array(name, feeds[name], device), type_)
    return checked


def check_params(
    program: Program, params: Mapping[str, Any] | None, device: bool = False
) -> dict[str, Any]:
    """The given parameters, converted and checked; names the program lacks are refused."""
    if not params:
        return {}
    types = parameter_types(program)
    _refuse_unknown(params, types, "parameters")
    return {
        name: check_array(name, to_array(name, value, device), types[name])
        for name, value in params.items()
    }


def _refuse_unknown(given: Mapping[str, Any], known: Mapping[str, Any], what: str) -> None:
    for name in given:
        if name not in known:
            listed = ", ".join(known) or "none"
            raise FeedError(name, f"one of the program's {what} ({listed})", "an unknown name")
