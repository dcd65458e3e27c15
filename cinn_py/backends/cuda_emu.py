"""The `cuda-emu` target: CUDA C run on the CPU, with CUDA's semantics.

CI has no GPU, yet every kernel the compiler emits must run somewhere with the GPU's
rules.  This target compiles the very same source with g++ against emulation headers
(`emu_include/`) and runs each launch block by block, every CUDA thread a fiber:
`__syncthreads` is a real barrier, warp shuffles and votes exchange values between lanes,
`__shared__` memory is per block and starts as garbage, atomics are atomic.  A kernel that
deadlocks at a barrier raises a KernelError instead of hanging; in checking mode
(`check=True` or `CINN_PY_EMU_CHECK=1`) AddressSanitizer and UBSan catch out-of-bounds
accesses too.

    module = cuda_emu.compile(source)
    module.launch("softmax", grid=(rows, 1, 1), block=(256, 1, 1), args=[x, y, np.int32(n)])

`launch` takes the same arguments as the GPU path's (`kernel_args.pack_args`): NumPy
arrays are read and written in place, NumPy scalars are passed by value.  The pieces:
`emu_source` (kernels, launchers), `emu_build` (g++, cache), `emu_inprocess` (ctypes),
`emu_check` (checking mode).
"""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from cinn_py.backends import emu_build, emu_source
from cinn_py.backends.emu_build import EmuOptions, ModuleImage
from cinn_py.backends.emu_check import run_checked
from cinn_py.backends.emu_inprocess import InProcessLibrary
from cinn_py.backends.kernel_args import data_pointer, launch_dims, pack_args
from cinn_py.errors import FeedError, LaunchError

__all__ = ["EmuModule", "EmuOptions", "compile", "prebuild"]

CHECK_ENV = "CINN_PY_EMU_CHECK"
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)
MAX_DYNAMIC_SHARED = 227 * 1024
"""An H100's opt-in maximum; the emulator needs no opt-in (the GPU does above 48 KiB)."""
CHECK_STACK_FACTOR = 4
"""Sanitizer redzones make frames larger: checking mode gives each fiber this much more stack."""


def default_context_switch() -> str:
    """The hand-written switch where it exists (x86-64), glibc's swapcontext elsewhere."""
    return "asm" if platform.machine() in ("x86_64", "AMD64") else "ucontext"


def compile(
    source: str,
    *,
    check: bool | None = None,
    opt_level: int = 2,
    stack_size: int = 64 * 1024,
    context_switch: str | None = None,
) -> EmuModule:
    """Compile CUDA C for the CPU (cached on disk); raises CompileError with g++'s log.

    `check=None` reads `CINN_PY_EMU_CHECK`; see `EmuOptions` for the rest.
    """
    if check is None:
        check = os.environ.get(CHECK_ENV, "") not in ("", "0")
    options = EmuOptions(check, opt_level, stack_size, context_switch or default_context_switch())
    prepared = emu_source.prepare(source, executable=options.check)
    image = emu_build.build(prepared.text, options, source=source)
    return EmuModule(source, prepared.kernels, image, options)


def prebuild(
    sources: Iterable[str],
    *,
    batch_size: int = 32,
    opt_level: int = 2,
    context_switch: str | None = None,
) -> int:
    """Build many sources' modules with one g++ run per `batch_size` of them, so that
    `compile` of each is then a cache hit (a g++ run's fixed cost is most of a small
    module's: 40 op-table modules took 10.4 s of CPU one by one, 0.8 s as one batch).
    Sources already cached are skipped; a batch g++ rejects is left to `compile`, source
    by source, so each source's error stays its own.  Returns how many were built."""
    options = EmuOptions(False, opt_level, 64 * 1024, context_switch or default_context_switch())
    return emu_build.build_batches(list(sources), options, batch_size)


class EmuModule:
    """A compiled module: its kernels, launched one at a time with CUDA's semantics."""

    def __init__(
        self, source: str, kernels: tuple[str, ...], image: ModuleImage, options: EmuOptions
    ) -> None:
        self.source = source
        self.kernels = kernels
        self.path = image.entry
        """The module's cache entry (what runs is a private copy of its verified bytes)."""
        self.options = options
        self._image = image
        self._library = (
            None if options.check else InProcessLibrary(image.library(), kernels, image.symbol)
        )

    def prepare(
        self,
        name: str,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[Any],
        shared_mem: int = 0,
    ) -> Callable[[Any], None]:
        """Check and pack one launch of kernel `name` once (the kernel, CUDA's limits, host
        arrays, the `void**`); the result runs it with no further checks when called
        (its argument, a stream, is ignored: emulated launches are synchronous)."""
        if name not in self.kernels:
            raise LaunchError(f"no kernel {name!r} in this module; it has {list(self.kernels)}")
        grid3 = launch_dims(grid, "grid")
        block3 = launch_dims(block, "block")
        _check_limits(grid3, block3, shared_mem)
        for index, arg in enumerate(args):
            if data_pointer(arg) is not None and not isinstance(arg, np.ndarray):
                raise FeedError(f"kernel argument #{index}", "a NumPy array", type(arg).__name__)
        packed = pack_args(args)
        keep = tuple(args)  # the arrays the packed pointers point into stay alive
        stack_size = self.options.stack_size
        if self._library is None:
            stack_size *= CHECK_STACK_FACTOR

            def run_checked_launch(stream: Any = None) -> None:
                with self._image.executable() as path:
                    run_checked(path, name, grid3, block3, shared_mem, stack_size, keep, packed)

            return run_checked_launch
        library = self._library

        def run_launch(stream: Any = None) -> None:
            library.launch(name, grid3, block3, shared_mem, stack_size, packed)

        return run_launch

    def bound(self, stream: Any = None) -> contextlib.AbstractContextManager[Any]:
        """Nothing to bind on the host: the stream for prepared launches is None."""
        return contextlib.nullcontext()

    def launch(
        self,
        name: str,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[Any],
        shared_mem: int = 0,
    ) -> None:
        """Run kernel `name` over `grid` x `block`; raises KernelError if the kernel fails."""
        self.prepare(name, grid, block, args, shared_mem)(None)


def _check_limits(grid: tuple[int, ...], block: tuple[int, ...], shared_mem: int) -> None:
    """CUDA's launch limits, so a launch that the GPU would refuse fails here too."""
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS_PER_BLOCK or any(
        b > m for b, m in zip(block, MAX_BLOCK_DIMS, strict=True)
    ):
        raise LaunchError(
            f"block {block} exceeds CUDA's limits ({MAX_THREADS_PER_BLOCK} threads, "
            f"{MAX_BLOCK_DIMS} per dimension)"
        )
    if any(g > m for g, m in zip(grid, MAX_GRID_DIMS, strict=True)):
        raise LaunchError(f"grid {grid} exceeds CUDA's limits {MAX_GRID_DIMS}")
    if not 0 <= shared_mem <= MAX_DYNAMIC_SHARED:
        raise LaunchError(f"shared_mem must be 0 to {MAX_DYNAMIC_SHARED} bytes, got {shared_mem}")
