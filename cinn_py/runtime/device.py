"""Is there a GPU to run the `cuda` target on, and what is it?

The `cuda` target needs CuPy (its arrays live in CuPy's memory pool) and a CUDA device
the driver API can open. Both are probed once per process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from cinn_py.backends import cuda_module
from cinn_py.errors import CinnError


@dataclass(frozen=True)
class GpuFacts:
    """The current device as the compiler needs it: its arch (`sm_90`) and SM count."""

    arch: str
    sm_count: int


@functools.cache
def gpu_facts() -> GpuFacts | None:
    """The current GPU's facts, or None when CuPy, the driver or a device is missing."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        sm_count = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
        return GpuFacts(cuda_module.device_arch(), sm_count)
    except (ImportError, CinnError, RuntimeError, OSError):
        return None
    except Exception as error:  # CuPy's CUDARuntimeError derives from none of the above
        if type(error).__module__.startswith("cupy"):
            return None
        raise


def gpu_available() -> bool:
    """Whether the `cuda` target can run here."""
    return gpu_facts() is not None
