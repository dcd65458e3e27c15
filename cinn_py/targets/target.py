"""Target: one object per target that owns everything that differs between targets.

A target is a value, not a name to compare (as Triton's `GPUTarget` + backend, or
tinygrad's `Compiled` device): the driver, the runtime, the API and the CLI ask it.

    renderer        `render(funcs, unit_size)`: scheduled functions -> one translation
                    unit (and, past `unit_size` kernels, the same split into units)
    compiler        `compile(source, name, arch)`: a unit -> a built artefact, callable
                    from a pool's threads with the arch `compile_arch(arch)` resolved
    module loader   `load(built)`: the artefact -> a module with `launch(...)`
    array library   `empty`, `zeros`, `arena`: where a Scope's arrays live
    library calls   `plan_library_op(op)`: a `LibraryCall` for an op that gets no
                    generated kernel, planned once at build time (`library_call`)
    device limits   `target_info(arch)`: the `TargetInfo` the scheduler reads
    synchronisation `synchronize()`, and `events()` for timing kernels on the device

`compiles` says whether the target has a compiler at all (`reference` runs the NumPy
interpreter and needs no Scope). Each target is registered once, by name
(`cinn_py.targets.get_target`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np

from cinn_py.backends.codegen_cuda import CudaSource
from cinn_py.errors import CinnError
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.pir.operation import Operation
from cinn_py.targets.library_call import LibraryCall
from cinn_py.targets.memory import usable_in_place


class KernelEvents(Protocol):
    """A device's event clock on the stream kernels launch on (`Target.events`)."""

    def synchronize(self) -> None: ...

    def record(self) -> Any: ...

    def seconds(self, start: Any, end: Any) -> float: ...


class Target:
    """The base of every target; a target without a compiler keeps the refusals."""

    name: str = ""
    compiles: bool = False
    """Whether programs are compiled for it (kernels, a Scope, a RuntimeProgram)."""
    device_memory: bool = False
    """Whether its arrays live on a device, so feeds already there may stay there."""
    captures_graphs: bool = False
    """Whether its modules record launches into CUDA graphs (`cuda_graph` defaults on)."""
    kernel_clock: str = ""
    """What `--profile` says measured the kernels."""

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Target({self.name})"

    # ---- availability --------------------------------------------------------------------

    def unavailable_reason(self) -> str | None:
        """Why the target cannot run here, or None when it can."""
        return None

    def check_available(self) -> None:
        """Raise a CinnError saying why the target cannot run here."""

    def why_default(self) -> str:
        """Why `default_target()` chose this target here (`cinn-py run`'s status line)."""
        return "the default target"

    # ---- compile -------------------------------------------------------------------------

    def target_info(self, arch: str | None = None) -> TargetInfo:
        raise self._no_kernels("device limits")

    def render(
        self, funcs: Sequence[LoweredFunc], unit_size: int | None = None, fast_math: bool = False
    ) -> CudaSource:
        """The kernels' source (`unit_size`: split into units of at most that many;
        `fast_math`: float32 transcendentals and division approximated)."""
        raise self._no_kernels("renderer")

    def compile(self, source: str, name: str, arch: str | None = None) -> Any:
        raise self._no_kernels("compiler")

    def compile_arch(self, arch: str | None = None) -> str | None:
        """The arch `compile` builds for, found in the calling thread (on cuda the current
        device's), so that compiles in a pool's threads are given it and ask no device."""
        return arch

    def load(self, built: Any) -> Any:
        raise self._no_kernels("module loader")

    # ---- run -----------------------------------------------------------------------------

    def empty(self, shape: tuple[int, ...], dtype: np.dtype | type) -> Any:
        raise self._no_kernels("memory")

    def zeros(self, shape: tuple[int, ...], dtype: np.dtype | type) -> Any:
        raise self._no_kernels("memory")

    def device_array(self, value: Any) -> Any:
        """A device array (`__cuda_array_interface__` or a CUDA DLPack export) as the
        target's array type, without a copy (targets with `device_memory` only)."""
        raise self._no_kernels("device memory")

    def holds(self, array: Any) -> bool:
        """Whether `array` lives in this target's memory (where its kernels read)."""
        return False

    def adopt_feed(self, array: Any) -> Any | None:
        """`array` (a checked feed) if kernels may read it where it is: in the target's
        memory (`holds`), C-contiguous and aligned for their widest access; else None
        (it is copied into the feed's own buffer)."""
        if self.holds(array) and usable_in_place(array, self._vector_alignment):
            return array
        return None

    @functools.cached_property
    def _vector_alignment(self) -> int:
        """`TargetInfo.vector_alignment`, read once, not on every run's feeds."""
        return self.target_info().vector_alignment

    def arena(self, nbytes: int, alignment: int) -> Any:
        """A byte array of `nbytes` whose start is on `alignment`."""
        raise self._no_kernels("memory")

    def plan_library_op(self, op: Operation) -> LibraryCall:
        """`op`, which got no generated kernel, planned for this target: a call that runs
        it over its variables' arrays on every run (`library_call`)."""
        raise self._no_kernels("library calls")

    def synchronize(self) -> None:
        """Wait for the work queued on the target (nothing to wait for on the host)."""

    def using_stream(self, stream: Any) -> AbstractContextManager[Any]:
        """A block in which the target's array library queues its work (feed copies,
        results' copies) on `stream`; the host targets have none."""
        return contextlib.nullcontext()

    def stream_handle(self, stream: Any) -> Any:
        """The handle library calls get for the stream a run was asked to use (None on
        the host targets, which have no streams)."""
        return None

    def events(self) -> KernelEvents | None:
        """The device's event clock for timing kernels, or None: the host's clock."""
        return None

    def _no_kernels(self, what: str) -> CinnError:
        return CinnError(f"target '{self.name}' runs no kernels and has no {what}")
