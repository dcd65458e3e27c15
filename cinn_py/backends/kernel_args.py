"""Kernel arguments, packed the way `cuLaunchKernel` takes them.

A launch passes `void** kernelParams`: one pointer per parameter, pointing at the
parameter's value. An array argument's value is its data pointer; a NumPy scalar's is
itself, in its own C type (`np.int32(n)` is an `int`, `np.float32(x)` a `float`,
`np.int64(k)` a `long long`). The emulator's launcher takes the same array, so the
two targets share this packing and a test is written once for both.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cinn_py.errors import FeedError, LaunchError

_SCALAR_CTYPES: dict[np.dtype, type] = {
    np.dtype(np.bool_): ctypes.c_bool,
    np.dtype(np.int8): ctypes.c_int8,
    np.dtype(np.uint8): ctypes.c_uint8,
    np.dtype(np.int16): ctypes.c_int16,
    np.dtype(np.uint16): ctypes.c_uint16,
    np.dtype(np.int32): ctypes.c_int32,
    np.dtype(np.uint32): ctypes.c_uint32,
    np.dtype(np.int64): ctypes.c_int64,
    np.dtype(np.uint64): ctypes.c_uint64,
    np.dtype(np.float16): ctypes.c_uint16,
    np.dtype(np.float32): ctypes.c_float,
    np.dtype(np.float64): ctypes.c_double,
}


@dataclass
class PackedArgs:
    """`pointers` is the `void**` to pass; `values` keeps what it points at alive."""

    pointers: ctypes.Array
    values: list[Any]

    @property
    def address(self) -> int:
        return ctypes.addressof(self.pointers)


def data_pointer(array: Any) -> int | None:
    """The data address of a NumPy, CuPy or `__cuda_array_interface__` array, else None."""
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]  # a third of `.ctypes.data`'s time
    pointer = getattr(getattr(array, "data", None), "ptr", None)
    if isinstance(pointer, int):
        return pointer  # CuPy's MemoryPointer: no interface dict built on every run
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is not None:
        return int(interface["data"][0])
    return None


def pack_args(args: Sequence[Any]) -> PackedArgs:
    """Pack launch arguments: arrays by data pointer, NumPy scalars by value."""
    values: list[Any] = []
    for index, arg in enumerate(args):
        pointer = data_pointer(arg)
        if pointer is not None:
            values.append(ctypes.c_void_p(pointer))
            continue
        if isinstance(arg, np.generic) and arg.dtype in _SCALAR_CTYPES:
            raw = arg.view(np.uint16) if arg.dtype == np.float16 else arg
            values.append(_SCALAR_CTYPES[arg.dtype](raw.item()))
            continue
        raise FeedError(
            f"kernel argument #{index}",
            "an array or a NumPy scalar such as np.int32(n) or np.float32(x)",
            f"{type(arg).__name__} {arg!r}"[:80],
        )
    pointers = (ctypes.c_void_p * max(len(values), 1))()
    for i, value in enumerate(values):
        pointers[i] = ctypes.addressof(value)
    return PackedArgs(pointers, values)


def launch_dims(value: Sequence[int], what: str) -> tuple[int, int, int]:
    """A 3-tuple of positive ints (shorter tuples are padded with 1)."""
    dims = tuple(int(v) for v in value)
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise LaunchError(f"{what} must be 1 to 3 positive ints, got {tuple(value)}")
    return (dims + (1, 1))[:3]  # type: ignore[return-value]
