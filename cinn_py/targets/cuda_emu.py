"""`cuda-emu`: the CUDA C compiled by g++ and run on the CPU, arrays in NumPy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cinn_py.backends import codegen_cuda, cuda_emu
from cinn_py.backends.codegen_cuda import CudaSource
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.pir.operation import Operation
from cinn_py.targets.device import no_gpu_reason
from cinn_py.targets.library_call import HostLibraryCall, LibraryCall
from cinn_py.targets.memory import aligned_empty
from cinn_py.targets.target import Target


class CudaEmuTarget(Target):
    name = "cuda-emu"
    compiles = True
    kernel_clock = "emulated: CPU time, not GPU time"

    def why_default(self) -> str:
        return f"no GPU: {no_gpu_reason()}"

    def target_info(self, arch: str | None = None) -> TargetInfo:
        return TargetInfo.cuda_emu()

    def render(
        self, funcs: Sequence[LoweredFunc], unit_size: int | None = None, fast_math: bool = False
    ) -> CudaSource:
        return codegen_cuda.generate_cuda(funcs, unit_size, fast_math=fast_math)

    def compile(self, source: str, name: str, arch: str | None = None) -> Any:
        """An EmuModule: g++ builds it and loads it in one step."""
        return cuda_emu.compile(source)

    def load(self, built: Any) -> Any:
        return built

    def empty(self, shape: tuple[int, ...], dtype: np.dtype | type) -> Any:
        return aligned_empty(shape, dtype)

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype | type) -> Any:
        array = aligned_empty(shape, dtype)
        array.fill(0)
        return array

    def holds(self, array: Any) -> bool:
        """A NumPy array: the host's memory is the emulated device's."""
        return isinstance(array, np.ndarray)

    def arena(self, nbytes: int, alignment: int) -> Any:
        return aligned_empty((nbytes,), np.uint8, alignment)

    def plan_library_op(self, op: Operation) -> LibraryCall:
        """The op's NumPy reference kernel, reading and writing the host arrays."""
        return HostLibraryCall(op)
