"""Load a CUBIN on the GPU and launch its kernels, with the emulator's launch signature.

Contexts: CuPy works through the CUDA runtime, which uses each device's *primary*
context. So does this module: it loads into the context current on the calling thread
(CuPy's, once CuPy has touched the device), and where there is none it retains the
primary context of CuPy's current device (device 0 without CuPy) and makes it current,
which is the very context CuPy will use. A launch from a thread or device where another
context is current pushes the module's context for the launch and pops it after.

Arguments are packed by `kernel_args.pack_args`, so arrays (CuPy, or anything with
`__cuda_array_interface__`) go by device pointer and NumPy scalars by value. Launches
go on CuPy's current stream unless a stream is given, so they are ordered with CuPy's
own work. A launch that cannot work is refused before it reaches the driver, with the
emulator's errors: ValueError for an unknown kernel or a grid, block or shared memory
beyond the device (or the kernel), FeedError for a host array or an argument list that
does not match the kernel's parameters. Every driver call is checked: a failed launch
is a KernelError, any other failure a CinnError naming the call and the kernel.

`prepare` checks and packs a launch once; `capture(calls)` records prepared launches
(and library calls that allow it) into a CUDA graph by stream capture on a private
stream and instantiates it once (`CudaGraph`: one `cuGraphLaunch` per replay).
"""

from __future__ import annotations

import contextlib
import struct
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from cuda.bindings import driver

from cinn_py.backends import nvrtc
from cinn_py.backends.kernel_args import data_pointer, launch_dims, pack_args
from cinn_py.errors import CinnError, FeedError, KernelError, LaunchError

_STO_CUDA_ENTRY = 0x10
_STT_FUNC = 2
_SHT_SYMTAB = 2
_MAX_PARAMS = 4096


def cubin_kernel_names(cubin: bytes) -> tuple[str, ...]:
    """The kernels (entry functions) a CUBIN defines, read from its ELF symbol table."""
    if not cubin.startswith(b"\x7fELF") or cubin[4] != 2 or cubin[5] != 1:
        raise CinnError("not a CUBIN: expected a 64-bit little-endian ELF image")
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", cubin, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)
    ]
    names: list[str] = []
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != _SHT_SYMTAB or not entsize:
            continue
        strtab_offset = sections[link][4]
        for start in range(offset, offset + size, entsize):
            st_name, st_info, st_other = struct.unpack_from("<IBB", cubin, start)
            if st_info & 0xF == _STT_FUNC and st_info >> 4 and st_other & _STO_CUDA_ENTRY:
                end = cubin.index(b"\0", strtab_offset + st_name)
                names.append(cubin[strtab_offset + st_name : end].decode())
    return tuple(sorted(names))


def resolve_kernel_name(name: str, kernels: Sequence[str]) -> str:
    """The symbol of kernel `name`: itself when `extern "C"`, else the one C++ symbol of a
    global-namespace function of that name (`_Z4kbarPfi` for `kbar`)."""
    if name in kernels:
        return name
    mangled = f"_Z{len(name)}{name}"
    matches = [k for k in kernels if k.startswith(mangled)]
    if len(matches) == 1:
        return matches[0]
    has = ", ".join(kernels) or "none"
    if matches:
        raise LaunchError(f"kernel '{name}' is ambiguous in this module: {', '.join(matches)}")
    raise LaunchError(f"no kernel '{name}' in this module; its kernels: {has}")


@dataclass(frozen=True)
class DeviceLimits:
    """What one launch may ask of a device."""

    max_block: tuple[int, int, int]
    max_grid: tuple[int, int, int]
    max_threads_per_block: int
    max_shared_per_block_optin: int


def check_launch(
    kernel: str,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem: int,
    limits: DeviceLimits,
    *,
    kernel_max_threads: int | None = None,
    static_shared: int = 0,
) -> None:
    """Refuse a launch the device cannot run, naming the kernel and the limit (ValueError,
    as the emulator does)."""
    axes = "xyz"
    for what, dims, maxima in (("grid", grid, limits.max_grid), ("block", block, limits.max_block)):
        for axis, dim, most in zip(axes, dims, maxima, strict=True):
            if dim > most:
                raise LaunchError(
                    f"launch of '{kernel}': {what} {dims} has {what}.{axis} = {dim}, "
                    f"above the device's limit {most}"
                )
    threads = block[0] * block[1] * block[2]
    most = limits.max_threads_per_block
    if kernel_max_threads is not None and kernel_max_threads < most:
        most = kernel_max_threads
    if threads > most:
        raise LaunchError(
            f"launch of '{kernel}': block {block} has {threads} threads, above the "
            f"{most} this kernel can run per block on this device"
        )
    if shared_mem < 0:
        raise LaunchError(f"launch of '{kernel}': shared_mem must be >= 0, got {shared_mem}")
    if static_shared + shared_mem > limits.max_shared_per_block_optin:
        raise LaunchError(
            f"launch of '{kernel}': {shared_mem} bytes of dynamic shared memory (plus "
            f"{static_shared} static) exceed the device's {limits.max_shared_per_block_optin} "
            "bytes per block"
        )


def _error_text(error: Any) -> str:
    try:
        _, name = driver.cuGetErrorName(error)
        _, text = driver.cuGetErrorString(error)
        return f"{name.decode()}: {text.decode()}"
    except Exception:
        return str(error)


def _call(
    result: tuple, call: str, kernel: str | None = None, error_class: type[CinnError] = CinnError
) -> Any:
    """The value(s) after a CUresult, or an error naming the call (and the kernel)."""
    error, *values = result
    if error != driver.CUresult.CUDA_SUCCESS:
        where = f" for kernel '{kernel}'" if kernel else ""
        raise error_class(f"{call}{where} failed: {_error_text(error)}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


@dataclass
class _State:
    """Per-process driver state: initialized once, one retained primary context per device."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    initialized: bool = False
    primary: dict[int, Any] = field(default_factory=dict)
    limits: dict[int, DeviceLimits] = field(default_factory=dict)
    capture_streams: dict[int, Any] = field(default_factory=dict)
    """Per context, the private stream graphs are captured on (see `capture_graph`)."""


_state = _State()


def _init() -> None:
    with _state.lock:
        if _state.initialized:
            return
        try:
            error, *_ = driver.cuInit(0)
        except RuntimeError as exc:  # cuda.pathfinder: libcuda.so not found
            raise CinnError(f"no CUDA driver/GPU available: {exc}") from exc
        if error != driver.CUresult.CUDA_SUCCESS:
            raise CinnError(f"no CUDA driver/GPU available: cuInit: {_error_text(error)}")
        _state.initialized = True


def _cupy_device() -> int:
    """CuPy's current device on this thread, or 0 when CuPy is not in use."""
    cupy = sys.modules.get("cupy")
    return int(cupy.cuda.runtime.getDevice()) if cupy is not None else 0


def current_context() -> tuple[Any, int]:
    """The context (and device ordinal) kernels load into on this thread; see the module doc."""
    _init()
    context = _call(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if context is not None and int(context) != 0:
        return context, int(_call(driver.cuCtxGetDevice(), "cuCtxGetDevice"))
    ordinal = _cupy_device()
    device = _call(driver.cuDeviceGet(ordinal), "cuDeviceGet")
    with _state.lock:
        context = _state.primary.get(ordinal)
        if context is None:
            context = _call(driver.cuDevicePrimaryCtxRetain(device), "cuDevicePrimaryCtxRetain")
            _state.primary[ordinal] = context
    _call(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    return context, int(device)


def _attribute(name: str, device: Any) -> int:
    attribute = getattr(driver.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
    return int(_call(driver.cuDeviceGetAttribute(attribute, device), "cuDeviceGetAttribute"))


def device_limits(ordinal: int) -> DeviceLimits:
    """Block, grid and shared-memory limits of device `ordinal`, read once."""
    limits = _state.limits.get(ordinal)
    if limits is None:
        _init()
        device = _call(driver.cuDeviceGet(ordinal), "cuDeviceGet")
        limits = DeviceLimits(
            max_block=tuple(_attribute(f"MAX_BLOCK_DIM_{a}", device) for a in "XYZ"),  # type: ignore[arg-type]
            max_grid=tuple(_attribute(f"MAX_GRID_DIM_{a}", device) for a in "XYZ"),  # type: ignore[arg-type]
            max_threads_per_block=_attribute("MAX_THREADS_PER_BLOCK", device),
            max_shared_per_block_optin=_attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", device),
        )
        _state.limits[ordinal] = limits
    return limits


def device_arch() -> str:
    """The current device's real architecture, e.g. "sm_90" for an H100."""
    _, ordinal = current_context()
    device = _call(driver.cuDeviceGet(ordinal), "cuDeviceGet")
    major = _attribute("COMPUTE_CAPABILITY_MAJOR", device)
    minor = _attribute("COMPUTE_CAPABILITY_MINOR", device)
    return f"sm_{major}{minor}"


def stream_handle(stream: Any) -> int:
    """A CUstream handle from None (CuPy's current stream, else the default stream), an
    int, a CUstream, a `__cuda_stream__` object or a CuPy stream (`.ptr`)."""
    if stream is None:
        cupy = sys.modules.get("cupy")
        return int(cupy.cuda.get_current_stream().ptr) if cupy is not None else 0
    if isinstance(stream, (int, driver.CUstream)):
        return int(stream)
    protocol = getattr(stream, "__cuda_stream__", None)
    if callable(protocol):
        return int(protocol()[1])
    pointer = getattr(stream, "ptr", None)  # CuPy's Stream
    if pointer is None:
        pointer = getattr(stream, "cuda_stream", None)  # torch's Stream
    if pointer is not None:
        return int(pointer)
    raise TypeError(
        f"stream must be None, an int, a CUstream, a CuPy or torch stream, not {stream!r}"
    )


@contextlib.contextmanager
def _bound(context: Any) -> Iterator[None]:
    """Make `context` current for the block, restoring the caller's after."""
    current = _call(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if current is not None and int(current) == int(context):
        yield
        return
    _call(driver.cuCtxPushCurrent(context), "cuCtxPushCurrent")
    try:
        yield
    finally:
        driver.cuCtxPopCurrent()


@dataclass
class _Function:
    """A kernel's handle and limits; `dynamic_shared_limit` starts at the driver's default
    (48 KiB less the static shared memory) and is raised on demand."""

    handle: Any
    max_threads: int
    static_shared: int
    param_sizes: tuple[int, ...] | None
    dynamic_shared_limit: int


def _param_sizes(handle: Any) -> tuple[int, ...] | None:
    """The byte size of each kernel parameter, or None where the driver cannot say."""
    sizes: list[int] = []
    try:
        while len(sizes) < _MAX_PARAMS:
            error, _, size = driver.cuFuncGetParamInfo(handle, len(sizes))
            if error != driver.CUresult.CUDA_SUCCESS:
                break
            sizes.append(int(size))
    except RuntimeError:  # a driver older than cuFuncGetParamInfo (CUDA 12.4)
        return None
    return tuple(sizes) if sizes else None


def _release(api: Any, free: str, handle: Any, context: Any) -> None:
    """Finalizer: free `handle` by the driver call `free` (`cuModuleUnload`,
    `cuGraphExecDestroy`) of the driver API that made it, in its context; it may run
    late, when the context or the driver is gone, so failures are ignored."""
    with contextlib.suppress(Exception):
        (error,) = api.cuCtxPushCurrent(context)
        if error == api.CUresult.CUDA_SUCCESS:
            try:
                getattr(api, free)(handle)
            finally:
                api.cuCtxPopCurrent()


class CudaModule:
    """A CUBIN loaded into a context; `launch` runs one of its kernels."""

    def __init__(
        self, cubin: bytes, kernel_names: tuple[str, ...], handle: Any, context: Any, device: int
    ) -> None:
        self.cubin = cubin
        self.kernels = kernel_names
        self.device = device
        self._handle = handle
        self._context = context
        self._functions: dict[str, _Function] = {}
        self._finalizer = weakref.finalize(
            self, _release, driver, "cuModuleUnload", handle, context
        )

    def unload(self) -> None:
        """Free the module now rather than when it is collected."""
        self._finalizer()

    def _function(self, name: str) -> _Function:
        function = self._functions.get(name)
        if function is None:
            symbol = resolve_kernel_name(name, self.kernels)
            handle = _call(
                driver.cuModuleGetFunction(self._handle, symbol.encode()),
                "cuModuleGetFunction",
                name,
            )

            def attribute(which: str) -> int:
                attr = getattr(driver.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{which}")
                return int(
                    _call(driver.cuFuncGetAttribute(attr, handle), "cuFuncGetAttribute", name)
                )

            function = _Function(
                handle,
                max_threads=attribute("MAX_THREADS_PER_BLOCK"),
                static_shared=attribute("SHARED_SIZE_BYTES"),
                dynamic_shared_limit=attribute("MAX_DYNAMIC_SHARED_SIZE_BYTES"),
                param_sizes=_param_sizes(handle),
            )
            self._functions[name] = function
        return function

    def prepare(
        self,
        name: str,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[Any],
        shared_mem: int = 0,
    ) -> PreparedLaunch:
        """Check and pack one launch of kernel `name` once: the kernel, the device's
        limits, the arguments against its parameters, the `void**` of their values and any
        shared-memory opt-in. The result launches with no further checks (`launch(stream)`
        inside `bound()`), so its arrays must keep their addresses."""
        if not self._finalizer.alive:
            raise CinnError(f"launch of '{name}': the module was unloaded")
        grid3 = launch_dims(grid, "grid")
        block3 = launch_dims(block, "block")
        shared_mem = int(shared_mem)
        with _bound(self._context):
            function = self._function(name)
            check_launch(
                name,
                grid3,
                block3,
                shared_mem,
                device_limits(self.device),
                kernel_max_threads=function.max_threads,
                static_shared=function.static_shared,
            )
            _check_args(name, function.param_sizes, args)
            packed = pack_args(args)
            if shared_mem > function.dynamic_shared_limit:
                attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                _call(
                    driver.cuFuncSetAttribute(function.handle, attr, shared_mem),
                    "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
                    name,
                )
                function.dynamic_shared_limit = shared_mem
        return PreparedLaunch(
            self, name, function.handle, (*grid3, *block3, shared_mem), packed, tuple(args)
        )

    @contextlib.contextmanager
    def bound(self, stream: Any = None) -> Iterator[Any]:
        """The module's context current for the block, which gets the stream handle to
        launch on (`stream`, or CuPy's current stream), resolved once for many launches."""
        if not self._finalizer.alive:
            raise CinnError("launch: the module was unloaded")
        with _bound(self._context):
            yield driver.CUstream(stream_handle(stream))

    def capture(self, calls: Sequence[Callable[[Any], None]]) -> CudaGraph:
        """`calls` (prepared launches, or library calls that allow capture, each taking a
        stream) recorded once into a CUDA graph in the module's context (`capture_graph`)."""
        if not self._finalizer.alive:
            raise CinnError("graph capture: the module was unloaded")
        return capture_graph(self._context, calls)

    def launch(
        self,
        name: str,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[Any],
        shared_mem: int = 0,
        stream: Any = None,
    ) -> None:
        """Launch kernel `name` on a `grid` of `block`s; asynchronous, like CUDA's launch."""
        prepared = self.prepare(name, grid, block, args, shared_mem)
        with self.bound(stream) as handle:
            prepared.launch(handle)


class PreparedLaunch:
    """One launch, checked and packed (`CudaModule.prepare`): `launch(stream)` is one
    `cuLaunchKernel` with the packed `void**`, and one check of its result."""

    __slots__ = ("module", "name", "handle", "dims", "packed", "address", "arrays")

    def __init__(
        self,
        module: CudaModule,
        name: str,
        handle: Any,
        dims: tuple[int, ...],
        packed: Any,
        arrays: tuple[Any, ...],
    ) -> None:
        self.module = module
        self.name = name
        self.handle = handle
        self.dims = dims
        self.packed = packed  # keeps the values the pointers point at alive
        self.address = packed.address
        self.arrays = arrays  # and the arrays their data pointers are in

    def __call__(self, stream: Any) -> None:
        """Launch on `stream` (a CUstream); the module's context must be current
        (`CudaModule.bound`)."""
        result = driver.cuLaunchKernel(self.handle, *self.dims, stream, self.address, 0)
        if result[0] != driver.CUresult.CUDA_SUCCESS:
            _call(result, "cuLaunchKernel", self.name, KernelError)

    launch = __call__


def _capture_stream(context: Any) -> Any:
    """The context's private non-blocking stream that graphs are captured on, made once:
    capture records without running, so it need not be the stream the graph runs on (the
    legacy default stream, CuPy's default, cannot be captured at all)."""
    key = int(context)
    stream = _state.capture_streams.get(key)
    if stream is None:
        flags = driver.CUstream_flags.CU_STREAM_NON_BLOCKING
        stream = _call(driver.cuStreamCreate(flags), "cuStreamCreate")
        _state.capture_streams[key] = stream
    return stream


def capture_graph(context: Any, calls: Sequence[Callable[[Any], None]]) -> CudaGraph:
    """Record `calls` into a graph by stream capture and instantiate it once.

    Each call gets the capture stream and enqueues its work on it (kernels by their
    packed `cuLaunchKernel`, library calls by their library on that stream). Capture is
    thread-local (`CU_STREAM_CAPTURE_MODE_THREAD_LOCAL`): another thread's work is not
    disturbed, and a call that synchronises or allocates fails the capture, which is
    why only calls that declare themselves `capturable` are given. A failed capture is
    ended and its graph freed before the error propagates."""
    with _bound(context):
        stream = _capture_stream(context)
        mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
        _call(driver.cuStreamBeginCapture(stream, mode), "cuStreamBeginCapture")
        try:
            for call in calls:
                call(stream)
        except BaseException:
            error, graph = driver.cuStreamEndCapture(stream)
            if error == driver.CUresult.CUDA_SUCCESS and graph is not None and int(graph):
                driver.cuGraphDestroy(graph)
            raise
        graph = _call(driver.cuStreamEndCapture(stream), "cuStreamEndCapture")
        try:
            executable = _call(driver.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        finally:
            driver.cuGraphDestroy(graph)
    return CudaGraph(executable, context, len(calls))


class CudaGraph:
    """An instantiated CUDA graph of `steps` recorded calls (`capture_graph`): calling it
    with a stream handle is one `cuGraphLaunch` (the context must be current, as for a
    prepared launch). The arrays the recorded calls use must keep their addresses."""

    __slots__ = ("executable", "steps", "_finalizer", "__weakref__")

    def __init__(self, executable: Any, context: Any, steps: int) -> None:
        self.executable = executable
        self.steps = steps
        self._finalizer = weakref.finalize(
            self, _release, driver, "cuGraphExecDestroy", executable, context
        )

    def __call__(self, stream: Any) -> None:
        result = driver.cuGraphLaunch(self.executable, stream)
        if result[0] != driver.CUresult.CUDA_SUCCESS:
            _call(result, "cuGraphLaunch", None, KernelError)

    launch = __call__

    def __repr__(self) -> str:
        return f"CudaGraph({self.steps} steps)"


def _check_args(kernel: str, sizes: tuple[int, ...] | None, args: Sequence[Any]) -> None:
    """Host arrays cannot be read by a kernel; where the driver knows the parameters'
    sizes, the arguments must match them in number and size."""
    for index, arg in enumerate(args):
        if isinstance(arg, np.ndarray):
            raise FeedError(
                f"kernel {kernel} argument #{index}",
                "a device array (CuPy, or anything with __cuda_array_interface__)",
                "a NumPy array in host memory",
            )
    if sizes is None:
        return
    if len(args) != len(sizes):
        raise FeedError(f"kernel {kernel} arguments", f"{len(sizes)} argument(s)", f"{len(args)}")
    for index, (arg, size) in enumerate(zip(args, sizes, strict=True)):
        got = 8 if data_pointer(arg) is not None else getattr(arg, "itemsize", size)
        if got != size:
            raise FeedError(
                f"kernel {kernel} argument #{index}",
                f"a {size}-byte value (the kernel's parameter)",
                f"{got} bytes ({type(arg).__name__})",
            )


def load(cubin: bytes) -> CudaModule:
    """Load a CUBIN into the current context (see the module doc for which context)."""
    cubin = bytes(cubin)
    kernel_names = cubin_kernel_names(cubin)
    context, device = current_context()
    error, handle = driver.cuModuleLoadData(cubin)
    if error == driver.CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU:
        raise CinnError(
            f"cuModuleLoadData failed: the CUBIN is not for this device ({device_arch()}); "
            "compile it with arch=cuda_module.device_arch()"
        )
    _call((error,), "cuModuleLoadData")
    return CudaModule(cubin, kernel_names, handle, context, device)


def pick_arch(device: str) -> str:
    """The arch to build for `device`: itself if NVRTC supports it, else the newest
    supported arch of the same major version whose CUBIN the device runs."""
    supported = nvrtc.supported_archs()
    if device in supported:
        return device
    number = int(device.removeprefix("sm_"))
    same_major = [a for a in supported if int(a[3:]) // 10 == number // 10 and int(a[3:]) <= number]
    if not same_major:
        raise CinnError(f"NVRTC {nvrtc.nvrtc_version()} cannot build for the device's {device}")
    return max(same_major, key=lambda a: int(a[3:]))


def compile_and_load(
    source: str, arch: str | int | None = None, options: Sequence[str] = (), name: str = "kernel.cu"
) -> CudaModule:
    """Compile (or fetch from the cache) for the current device, then load."""
    target = pick_arch(device_arch()) if arch is None else arch
    return load(nvrtc.compile(source, target, options, name))
