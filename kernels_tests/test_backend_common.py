"""What both targets share: the kernel-argument packing and the on-disk cache."""

from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

from cinn_py.backends import cache
from cinn_py.backends.kernel_args import launch_dims, pack_args
from cinn_py.errors import CinnError, FeedError, LaunchError


def _deref(pointer: int, ctype: type):
    return ctypes.cast(pointer, ctypes.POINTER(ctype))[0]


def test_arrays_pass_their_data_pointer_scalars_their_value():
    a = np.arange(6, dtype=np.float32)
    packed = pack_args([a, np.int32(-7), np.float32(2.5), np.int64(2**40), np.float16(1.5)])
    assert _deref(packed.pointers[0], ctypes.c_void_p) == a.ctypes.data
    assert _deref(packed.pointers[1], ctypes.c_int32) == -7
    assert _deref(packed.pointers[2], ctypes.c_float) == 2.5
    assert _deref(packed.pointers[3], ctypes.c_int64) == 2**40
    assert _deref(packed.pointers[4], ctypes.c_uint16) == 0x3E00  # 1.5 as IEEE half bits


def test_cuda_array_interface_passes_the_device_pointer():
    class FakeDeviceArray:
        __cuda_array_interface__ = {"data": (0xDEAD0000, False), "shape": (4,), "version": 3}

    packed = pack_args([FakeDeviceArray()])
    assert _deref(packed.pointers[0], ctypes.c_void_p) == 0xDEAD0000


def test_python_scalars_are_refused_with_a_hint():
    with pytest.raises(FeedError, match=r"kernel argument #1.*np\.int32\(n\)"):
        pack_args([np.zeros(1), 3])


def test_launch_dims():
    assert launch_dims((4,), "grid") == (4, 1, 1)
    assert launch_dims([2, 3, 4], "block") == (2, 3, 4)
    with pytest.raises(LaunchError, match=r"block must be 1 to 3 positive ints, got \(0,\)"):
        launch_dims((0,), "block")


def test_cache_keys_separate_their_parts():
    assert cache.cache_key("ab", "c") != cache.cache_key("a", "bc")
    assert cache.cache_key("x", b"y") == cache.cache_key(b"x", "y")


def test_cache_round_trip_is_atomic(tmp_path, monkeypatch):
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path / "cache"))
    key = cache.cache_key("source", "sm_90")
    assert cache.read("cubin", key, ".cubin") is None
    path = cache.write("cubin", key, ".cubin", b"\x7fELF...")
    assert path.parent == tmp_path / "cache" / "cubin"
    assert cache.read("cubin", key, ".cubin") == b"\x7fELF..."
    assert [p for p in os.listdir(path.parent) if p.startswith(".tmp-")] == []


def test_launch_errors_are_cinn_errors_the_cli_prints():
    assert issubclass(LaunchError, CinnError) and issubclass(LaunchError, ValueError)
