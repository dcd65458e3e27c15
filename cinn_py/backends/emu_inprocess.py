"""Running a `cuda-emu` module inside this process: the library, loaded with ctypes.

Each launcher `cinn_emu_launch_<name>(const LaunchConfig*, void** args)` returns 0, or
1 with a message in the buffer the config points at; the message becomes a KernelError.
ctypes releases the GIL during the call; one lock serialises launches because a
module's scheduler state is global to it.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

from cinn_py.backends.emu_source import LAUNCHER_PREFIX, RELEASE_FUNCTION
from cinn_py.backends.kernel_args import PackedArgs
from cinn_py.errors import KernelError

_LAUNCH_LOCK = threading.Lock()
_MESSAGE_SIZE = 4096


class LaunchConfig(ctypes.Structure):
    """Mirror of `cinn_emu::LaunchConfig` (cinn_emu_runtime.h), field by field."""

    _fields_ = [
        ("grid", ctypes.c_uint * 3),
        ("block", ctypes.c_uint * 3),
        ("shared_mem", ctypes.c_ulonglong),
        ("stack_size", ctypes.c_ulonglong),
        ("num_args", ctypes.c_uint),
        ("arg_sizes", ctypes.POINTER(ctypes.c_uint)),
        ("message", ctypes.POINTER(ctypes.c_char)),
        ("message_size", ctypes.c_uint),
    ]


def argument_sizes(packed: PackedArgs) -> list[int]:
    """Each packed argument's size in bytes, 0 for an array (as the launcher checks them)."""
    return [0 if isinstance(v, ctypes.c_void_p) else ctypes.sizeof(v) for v in packed.values]


class InProcessLibrary:
    """A module's shared library (loaded once per process by `emu_build.ModuleImage`) and
    its launchers."""

    def __init__(
        self, library: ctypes.CDLL, kernels: tuple[str, ...], symbol: Callable[[str], str]
    ) -> None:
        """`symbol(kernel)`: the kernel's name in the library (renamed in a batch)."""
        self._library = library
        self._launchers = {}
        for name in kernels:
            launcher = getattr(self._library, LAUNCHER_PREFIX + symbol(name))
            launcher.argtypes = [ctypes.POINTER(LaunchConfig), ctypes.c_void_p]
            launcher.restype = ctypes.c_int
            self._launchers[name] = launcher
        self._release = getattr(self._library, RELEASE_FUNCTION)
        self._release.restype = None

    def __del__(self) -> None:
        # Another EmuModule of the same library re-maps its stacks on its next launch.
        release = getattr(self, "_release", None)
        if release is not None:
            with _LAUNCH_LOCK:
                release()

    def launch(
        self,
        name: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared_mem: int,
        stack_size: int,
        packed: PackedArgs,
    ) -> None:
        sizes = argument_sizes(packed)
        size_array = (ctypes.c_uint * max(len(sizes), 1))(*sizes)
        message = ctypes.create_string_buffer(_MESSAGE_SIZE)
        config = LaunchConfig(
            (ctypes.c_uint * 3)(*grid),
            (ctypes.c_uint * 3)(*block),
            shared_mem,
            stack_size,
            len(sizes),
            size_array,
            ctypes.cast(message, ctypes.POINTER(ctypes.c_char)),
            _MESSAGE_SIZE,
        )
        with _LAUNCH_LOCK:
            status = self._launchers[name](ctypes.byref(config), packed.address)
        if status != 0:
            raise KernelError(message.value.decode("utf-8", "replace"))
