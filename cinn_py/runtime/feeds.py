"""Feeds and parameters at the API: conversion to arrays and checks against the program.

Arrays in may be NumPy, CuPy, anything that exports DLPack (`np.from_dlpack`, or
`cupy.from_dlpack` for device memory on `cuda`), or Python scalars and lists. bfloat16
goes in as uint16 bit patterns (what Paddle's `.numpy()` gives) or as an `ml_dtypes`
bfloat16 array (reinterpreted as its bits, no copy). Every problem is a FeedError naming
the feed, what the program declares and what came: a wrong dtype, a wrong shape (a -1 dim
matches any size), a missing feed, a name the program has no feed or parameter for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from cinn_py.errors import FeedError
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType
from cinn_py.reference_ops.context import boundary_dtype, describe, shape_fits

DeviceArray = Callable[[Any], Any]
"""A target's view of an array already in its device memory, made without a copy."""

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


_TAKEN_AS_IS: set[tuple[Any, type]] = set()
"""(device_array, array type) pairs where a target's `device_array` returned as they were (CuPy's ndarray): later
feeds of them skip `__cuda_array_interface__`, a dict CuPy builds on every access (a
LLaMA layer's run checks 13 arrays)."""


def to_array(name: str, value: Any, device_array: DeviceArray | None = None) -> Any:
    """`value` as a NumPy array, or, given `device_array` (a target with device memory:
    `Target.device_array`), as that target's array where it already lives on the
    device, without a copy. Host targets copy device arrays to the host."""
    if isinstance(value, np.ndarray):
        return _bfloat16_bits(value)
    taker = getattr(device_array, "__func__", device_array)  # the target's, not its binding
    if device_array is not None and (taker, type(value)) in _TAKEN_AS_IS:
        return value
    if hasattr(value, "__cuda_array_interface__"):
        if device_array is not None:
            array = device_array(value)
            if array is value:
                _TAKEN_AS_IS.add((taker, type(value)))
            return array
        if hasattr(value, "get"):
            return value.get()
    if hasattr(value, "__dlpack__"):
        try:
            if device_array is not None and _dlpack_device(value) == _KDL_CUDA:
                return device_array(value)
            return _bfloat16_bits(np.from_dlpack(value))
        except (TypeError, RuntimeError, BufferError, ValueError) as error:
            raise FeedError(name, "an array DLPack can export", str(error)) from None
    if isinstance(value, (int, float, bool, np.generic, list, tuple)):
        return _from_python(name, value)
    raise FeedError(name, "a NumPy, CuPy or DLPack array", type(value).__name__)


def _from_python(name: str, value: Any) -> np.ndarray:
    """A Python scalar or (nested) list as an array of numbers or bools: a ragged list,
    one holding strings, None or other objects, or an int no NumPy type holds, is a
    FeedError saying so, not NumPy's ValueError or an object array."""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError, OverflowError, RuntimeError) as error:
        if "inhomogeneous" in str(error):
            why = "a ragged list (its rows differ in length)"
        else:
            why = f"a list NumPy cannot convert ({error})"
        raise FeedError(name, "a rectangular list of numbers", why) from None
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise FeedError(name, "numbers or bools", f"{_list_or_scalar(value)} {_holding(array)}")
    return array


_NUMERIC_KINDS = frozenset("biufc")
"""NumPy dtype kinds of bools and numbers (the rest: str, bytes, object, datetime)."""


def _list_or_scalar(value: Any) -> str:
    return "a list" if isinstance(value, (list, tuple)) else f"a {type(value).__name__}"


def _holding(array: np.ndarray) -> str:
    """What a non-numeric array holds: `holding strings`, `holding None, float`, ..."""
    if array.dtype.kind in "US":
        return "holding strings"
    if array.dtype.kind != "O":
        return f"of {array.dtype}"
    kinds = sorted({"None" if item is None else type(item).__name__ for item in array.flat})
    if kinds == ["int"]:
        return "holding integers too large for int64"
    shown = ", ".join(kinds[:4]) + (", ..." if len(kinds) > 4 else "")
    return f"holding {shown}"


def _dlpack_device(value: Any) -> int | None:
    device = getattr(value, "__dlpack_device__", None)
    return int(device()[0]) if callable(device) else None


def _bfloat16_bits(array: np.ndarray) -> np.ndarray:
    """An ml_dtypes bfloat16 array as the uint16 bit patterns the program's arrays use."""
    dtype = array.dtype
    if dtype.kind == "V" and dtype.itemsize == 2 and dtype.name == "bfloat16":  # name is slow
        return array.view(np.uint16)
    return array


def check_array(
    name: str, array: Any, type_: DenseTensorType, expected: np.dtype | None = None
) -> Any:
    """`array` if its dtype and shape fit `type_` (a -1 dim matches any size). A NumPy
    array of the right type in the other byte order is swapped to this machine's.
    `expected`: `boundary_dtype(type_.data_type)`, where the caller keeps it across runs
    (`boundary_dtypes`)."""
    if expected is None:
        expected = boundary_dtype(type_.data_type)
    if array.dtype == expected and array.shape == type_.dims:
        return array  # the common case, checked without building anything (every run)
    shape = tuple(int(d) for d in array.shape)
    dtype = np.dtype(array.dtype)
    if isinstance(array, np.ndarray) and not dtype.isnative and dtype.newbyteorder("=") == expected:
        array, dtype = array.astype(expected), expected
    if dtype != expected or not shape_fits(shape, type_):
        raise FeedError(name, describe(type_), f"{_dtype_name(dtype)} {list(shape)}")
    return array


def _dtype_name(dtype: np.dtype) -> str:
    """`float64`, `object`, `str` (not `<U21`), `big-endian float32` (not `>f4`)."""
    if dtype.kind == "U":
        return "str"
    if dtype.kind == "S":
        return "bytes"
    if dtype.fields is not None:
        return f"a structured dtype {dtype}"
    if not dtype.isnative and dtype.byteorder != "|":
        return f"{'big' if dtype.byteorder == '>' else 'little'}-endian {dtype.newbyteorder('=')}"
    return str(dtype)


def boundary_dtypes(types: Mapping[str, DenseTensorType]) -> dict[str, np.dtype]:
    """Each name's array dtype at the API (`boundary_dtype`), for a caller that checks
    the same feeds or parameters on every run (a compiled program: a LLaMA layer's run
    checks 13 arrays, and this was a third of its host time)."""
    return {name: boundary_dtype(type_.data_type) for name, type_ in types.items()}


def check_feeds(
    program: Program,
    feeds: Mapping[str, Any] | None,
    device_array: DeviceArray | None = None,
    types: Mapping[str, DenseTensorType] | None = None,
    dtypes: Mapping[str, np.dtype] | None = None,
) -> dict[str, Any]:
    """Every feed of `program`, converted and checked, by feed name in program order.
    `types`: `feed_types(program)`, and `dtypes`: `boundary_dtypes(types)`, when the
    caller keeps them across runs."""
    feeds = {} if feeds is None else feeds
    _check_mapping(feeds, "feeds")
    types = feed_types(program) if types is None else types
    _refuse_unknown(feeds, types, "feeds")
    checked = {}
    for name, type_ in types.items():
        value = feeds.get(name)
        if value is None:
            raise FeedError(name, describe(type_), "nothing (it is missing)")
        expected = None if dtypes is None else dtypes[name]
        checked[name] = check_array(name, to_array(name, value, device_array), type_, expected)
    return checked


def check_params(
    program: Program,
    params: Mapping[str, Any] | None,
    device_array: DeviceArray | None = None,
    types: Mapping[str, DenseTensorType] | None = None,
    dtypes: Mapping[str, np.dtype] | None = None,
) -> dict[str, Any]:
    """The given parameters, converted and checked; names the program lacks are refused.
    `types`: `parameter_types(program)`, and `dtypes`: `boundary_dtypes(types)`, when the
    caller keeps them across runs."""
    if params is None:
        return {}
    _check_mapping(params, "params")
    if not params:
        return {}
    types = parameter_types(program) if types is None else types
    _refuse_unknown(params, types, "parameters")
    return {
        name: check_array(
            name,
            to_array(name, value, device_array),
            types[name],
            None if dtypes is None else dtypes[name],
        )
        for name, value in params.items()
    }


def _check_mapping(given: Any, what: str) -> None:
    if not isinstance(given, Mapping):
        raise FeedError(f"<{what}>", "a dict of arrays keyed by name", f"a {type(given).__name__}")


def _refuse_unknown(given: Mapping[str, Any], known: Mapping[str, Any], what: str) -> None:
    for name in given:
        if name not in known:
            listed = ", ".join(known) or "none"
            raise FeedError(name, f"one of the program's {what} ({listed})", "an unknown name")
