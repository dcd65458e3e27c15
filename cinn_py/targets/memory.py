"""Host arrays as generated kernels need them: C-contiguous and aligned.

Generated kernels load and store with 128-bit vector accesses. NumPy only promises the
element size, so host arrays are cut from a padded byte buffer at a 64-byte boundary.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cinn_py.backends.kernel_args import data_pointer

HOST_ALIGNMENT = 64
"""Bytes every host array is aligned to: a cache line, and a multiple of the 16 that a
128-bit vector load needs."""


def aligned_empty(
    shape: tuple[int, ...], dtype: np.dtype | type, alignment: int = HOST_ALIGNMENT
) -> np.ndarray:
    """An uninitialised C-contiguous NumPy array whose data starts on an `alignment`
    boundary (also when it is empty or 0-D)."""
    dtype = np.dtype(dtype)
    size = math.prod(shape)
    # At least one element: NumPy moves the data pointer of a zero-byte slice.
    nbytes = max(size, 1) * dtype.itemsize
    raw = np.empty(nbytes + alignment, np.uint8)
    offset = -raw.ctypes.data % alignment
    return raw[offset : offset + nbytes].view(dtype)[:size].reshape(shape)


def usable_in_place(array: Any, alignment: int) -> bool:
    """Whether a kernel may read `array` where it is: C-contiguous (NumPy's flags, or the
    `__cuda_array_interface__`'s strides) and its data on an `alignment`-byte boundary."""
    pointer = data_pointer(array)
    if pointer is None or pointer % alignment:
        return False
    contiguous = getattr(getattr(array, "flags", None), "c_contiguous", None)
    if isinstance(contiguous, bool):
        return contiguous  # NumPy's and CuPy's flags
    interface = array.__cuda_array_interface__
    strides = interface.get("strides")
    if strides is None:
        return True
    itemsize = np.dtype(interface["typestr"]).itemsize
    expected = []
    step = itemsize
    for extent in reversed(interface["shape"]):
        expected.append(step)
        step *= extent
    return all(
        stride == want or extent == 1
        for stride, want, extent in zip(
            strides, reversed(expected), interface["shape"], strict=True
        )
    )
