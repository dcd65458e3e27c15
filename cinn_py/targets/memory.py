"""Host arrays as generated kernels need them: C-contiguous and aligned.

Generated kernels load and store with 128-bit vector accesses. NumPy only promises the
element size, so host arrays are cut from a padded byte buffer at a 64-byte boundary.
"""

from __future__ import annotations

import math

import numpy as np

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
