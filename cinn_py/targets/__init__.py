"""The targets, one `Target` object each, by name: what differs between targets lives
on these objects (see `target.py`), and no other module compares target names.

    target = get_target("cuda-emu")       # the one CudaEmuTarget
    target.compile(source, "kernels.cu")  # an EmuModule

Adding a target is adding a Target subclass (its renderer, compiler, loader, arrays,
library calls, limits, synchronisation) and one `_register` line below.
"""

from __future__ import annotations

from cinn_py.errors import CinnError
from cinn_py.targets.cuda import CudaTarget
from cinn_py.targets.cuda_emu import CudaEmuTarget
from cinn_py.targets.device import gpu_available
from cinn_py.targets.reference import ReferenceTarget
from cinn_py.targets.target import KernelEvents, Target

_TARGETS: dict[str, Target] = {}


def _register(target: Target) -> Target:
    if target.name in _TARGETS:
        raise ValueError(f"target '{target.name}' is registered twice")
    _TARGETS[target.name] = target
    return target


CUDA = _register(CudaTarget())
CUDA_EMU = _register(CudaEmuTarget())
REFERENCE = _register(ReferenceTarget())

TARGETS = tuple(_TARGETS)
"""Every target's name, in the order errors and `--help` list them."""
COMPILED_TARGETS = tuple(name for name, t in _TARGETS.items() if t.compiles)
"""The targets programs are compiled for (with a Scope and a RuntimeProgram)."""


def get_target(target: str | Target) -> Target:
    """The one Target named `target` (a Target is returned as it is)."""
    if isinstance(target, Target):
        return target
    found = _TARGETS.get(target)
    if found is None:
        raise CinnError(f"unknown target '{target}'; targets: {', '.join(TARGETS)}")
    return found


def compiled_target(target: str | Target) -> Target:
    """The Target named `target`, which must compile programs (a Scope, a
    RuntimeProgram and a PIRCompiler need one); a Target that compiles is returned as
    it is (a stand-in, `backends.stand_in_driver`)."""
    found = target if isinstance(target, Target) else _TARGETS.get(target)
    if found is None or not found.compiles:
        raise CinnError(
            f"unknown runtime target '{target}'; targets: {', '.join(COMPILED_TARGETS)}"
        )
    return found


def default_target() -> Target:
    """`cuda` where a GPU (and CuPy) is usable, else `cuda-emu`."""
    return CUDA if gpu_available() else CUDA_EMU


__all__ = [
    "COMPILED_TARGETS",
    "CUDA",
    "CUDA_EMU",
    "REFERENCE",
    "TARGETS",
    "KernelEvents",
    "Target",
    "compiled_target",
    "default_target",
    "get_target",
]
