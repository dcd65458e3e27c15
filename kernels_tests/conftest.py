"""Test tiers: no-device tests run everywhere; `gpu` tests need CuPy and a CUDA device."""

from __future__ import annotations

import functools
import os

import pytest

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


@functools.cache
def gpu_available() -> tuple[bool, str]:
    try:
        import cupy
    except ImportError:
        return False, "CuPy is not installed (pip install -e '.[gpu]')"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy raises its own CUDARuntimeError types
        return False, f"no CUDA device: {error}"
    return (count > 0, "no CUDA device") if count == 0 else (True, "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ok, why = gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"gpu test: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
