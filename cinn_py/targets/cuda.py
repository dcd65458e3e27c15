"""`cuda`: NVRTC to CUBIN for the GPU's arch, loaded through the driver API; arrays in
CuPy, launches asynchronous on CuPy's current stream."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from cinn_py.backends import codegen_cuda, cuda_module, nvrtc
from cinn_py.backends.codegen_cuda import CudaSource
from cinn_py.errors import CinnError, HostFallbackWarning
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.pir.operation import Operation
from cinn_py.targets.device import gpu_facts, no_gpu_reason
from cinn_py.targets.library_call import HostLibraryCall, LibraryCall
from cinn_py.targets.target import Target


class CudaEvents:
    """CUDA events on CuPy's current stream (the stream launches go on)."""

    def __init__(self) -> None:
        import cupy

        self._cupy = cupy
        self.stream = cupy.cuda.get_current_stream()

    def synchronize(self) -> None:
        self.stream.synchronize()

    def record(self) -> Any:
        event = self._cupy.cuda.Event()
        event.record(self.stream)
        return event

    def seconds(self, start: Any, end: Any) -> float:
        return self._cupy.cuda.get_elapsed_time(start, end) / 1e3


class CudaTarget(Target):
    name = "cuda"
    compiles = True
    device_memory = True
    captures_graphs = True
    kernel_clock = "GPU time from CUDA events"

    def unavailable_reason(self) -> str | None:
        return no_gpu_reason()

    def check_available(self) -> None:
        reason = no_gpu_reason()
        if reason is not None:
            raise CinnError(f"target 'cuda' needs a CUDA GPU and CuPy: {reason}; use cuda-emu")

    def why_default(self) -> str:
        facts = gpu_facts()
        return "" if facts is None else f"GPU found: {facts.arch}, {facts.sm_count} SMs"

    def target_info(self, arch: str | None = None) -> TargetInfo:
        """The GPU here, else the reference GPU of `arch` (default sm_90: an H100's
        numbers, so `cinn-py ir` works anywhere); `arch` overrides the GPU's arch."""
        facts = gpu_facts()
        if facts is None:
            return TargetInfo.cuda(arch or nvrtc.DEFAULT_ARCH)
        return TargetInfo.cuda(arch or facts.arch, facts.sm_count, facts.max_threads_per_sm)

    def render(
        self, funcs: Sequence[LoweredFunc], unit_size: int | None = None, fast_math: bool = False
    ) -> CudaSource:
        return codegen_cuda.generate_cuda(funcs, unit_size, fast_math=fast_math)

    def compile(self, source: str, name: str, arch: str | None = None) -> Any:
        """A CUBIN for `arch`, or for the GPU here."""
        arch = arch or cuda_module.pick_arch(cuda_module.device_arch())
        return nvrtc.compile(source, arch, name=name)

    def compile_arch(self, arch: str | None = None) -> str | None:
        return arch or cuda_module.pick_arch(cuda_module.device_arch())

    def load(self, built: Any) -> Any:
        return cuda_module.load(built)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype | type) -> Any:
        """CuPy's allocations are 256-byte aligned."""
        import cupy

        return cupy.empty(shape, dtype=dtype)

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype | type) -> Any:
        import cupy

        return cupy.zeros(shape, dtype=dtype)

    def device_array(self, value: Any) -> Any:
        """A CuPy view of a device array: CuPy's own as it is, anything with a
        `__cuda_array_interface__` (torch, Numba, ...) or a CUDA DLPack export wrapped."""
        import cupy

        if isinstance(value, cupy.ndarray):
            return value
        if hasattr(value, "__cuda_array_interface__"):
            return cupy.asarray(value)
        return cupy.from_dlpack(value)

    def holds(self, array: Any) -> bool:
        """A device array: CuPy, or any `__cuda_array_interface__` / DLPack array the
        feed checks made a CuPy view of (host arrays are copied)."""
        return hasattr(array, "__cuda_array_interface__")

    def arena(self, nbytes: int, alignment: int) -> Any:
        import cupy

        return cupy.empty(nbytes, dtype=np.uint8)  # 256-byte aligned, as cudaMalloc

    def plan_library_op(self, op: Operation) -> LibraryCall:
        """The op's entry in the device table (`cuda_library`: cuBLASLt, cuDNN, CuPy),
        planned now; an op the table lacks runs its reference kernel on the host, with
        copies both ways, and warns (HostFallbackWarning)."""
        from cinn_py.targets import cuda_library

        call = cuda_library.plan(op)
        if call is not None:
            return call
        warnings.warn(
            f"{op.name} has no device entry on 'cuda': it runs its NumPy reference kernel "
            "on the host, with copies to and from the GPU, outside CUDA graphs",
            HostFallbackWarning,
            stacklevel=2,
        )
        return HostLibraryCall(op, "reference kernel, host, with copies", wait=_wait_stream)

    def synchronize(self) -> None:
        import cupy

        cupy.cuda.get_current_stream().synchronize()

    def using_stream(self, stream: Any) -> AbstractContextManager[Any]:
        """CuPy's current stream made `stream` for the block (None: CuPy's current one
        stays), so feed copies and results' copies are ordered with the launches."""
        if stream is None:
            return contextlib.nullcontext()
        import cupy

        return cupy.cuda.ExternalStream(cuda_module.stream_handle(stream))

    def stream_handle(self, stream: Any) -> Any:
        """A CUstream handle: `stream` (CuPy's or torch's stream, a `__cuda_stream__`
        object, an int), or CuPy's current stream for None."""
        return cuda_module.stream_handle(stream)

    def events(self) -> CudaEvents:
        return CudaEvents()


def _wait_stream(stream: Any) -> None:
    """Wait for the work queued on `stream` (a CUstream handle; None: CuPy's current)
    and on CuPy's current stream, which the host fallback's copies go on."""
    import cupy

    if stream is not None:
        cupy.cuda.ExternalStream(int(stream)).synchronize()
    cupy.cuda.get_current_stream().synchronize()
