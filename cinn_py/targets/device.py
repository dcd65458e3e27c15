"""Is there a GPU to run the `cuda` target on, and what is it?

The `cuda` target needs CuPy (its arrays live in CuPy's memory pool) and a CUDA device
the driver API can open. Both are probed once per process.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass

from cinn_py.backends import cuda_module
from cinn_py.errors import CinnError


@dataclass(frozen=True)
class GpuFacts:
    """The current device as the compiler needs it: its arch (`sm_90`), SM count and the
    threads an SM holds (2048 on sm_80 and sm_90, 1536 on sm_86 and sm_89)."""

    arch: str
    sm_count: int
    max_threads_per_sm: int


def gpu_facts() -> GpuFacts | None:
    """The current GPU's facts, or None when CuPy, the driver or a device is missing."""
    probed = _probe()
    return probed if isinstance(probed, GpuFacts) else None


def gpu_available() -> bool:
    """Whether the `cuda` target can run here."""
    return gpu_facts() is not None


def no_gpu_reason() -> str | None:
    """Why the `cuda` target cannot run here ("CuPy is not installed", "CuPy found no
    CUDA device", ...), or None when it can."""
    probed = _probe()
    return probed if isinstance(probed, str) else None


@functools.cache
def _probe() -> GpuFacts | str:
    """The current GPU's facts, or why there are none."""
    if importlib.util.find_spec("cupy") is None:
        return "CuPy is not installed"
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy found no CUDA device"
        attributes = cupy.cuda.Device().attributes
        return GpuFacts(
            cuda_module.device_arch(),
            int(attributes["MultiProcessorCount"]),
            int(attributes["MaxThreadsPerMultiProcessor"]),
        )
    except ImportError as error:
        return f"CuPy cannot be imported ({error})"
    except (CinnError, RuntimeError, OSError) as error:
        return f"no usable CUDA device ({_first_line(error)})"
    except Exception as error:  # CuPy's CUDARuntimeError derives from none of the above
        if type(error).__module__.startswith("cupy"):
            return f"no usable CUDA device ({_first_line(error)})"
        raise


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
