"""A stand-in for `cuda.bindings.driver` and for device memory, for tests and the host
benchmark where there is no GPU.

`StandInDriver` answers the driver calls `cuda_module` makes (contexts as ints on a
stack, a device with an H100's limits, functions handed out by name) and records them:
`calls` names every call, and with `record=True` each launch is kept with its grid,
block, stream, context and the bytes its packed parameters point at (`param_sizes`
gives each kernel's parameter sizes, as `cuFuncGetParamInfo` would; a kernel without
an entry reports none). With `record=False` a launch only counts (`launch_count`), so a
benchmark measures the caller's host cost, not the stand-in's. Graphs: a launch on a
stream under capture (`cuStreamBeginCapture`) is recorded into the capture, not run or
counted; `cuGraphInstantiate` keeps the recorded launches and each `cuGraphLaunch`
replays them (counted, and with `record=True` kept with `graph` set to the
executable's handle).

`HostDeviceArray` is the least of a CuPy array that a Scope and a launch use, over host
memory: `__cuda_array_interface__` gives its address as the device pointer.
`StandInCudaTarget` is the `cuda` target with such arrays (and host library ops), so a
program compiled with NVRTC for `cuda` builds and executes against the stand-in.

    with stand_in_driver.installed(StandInDriver()) as fake:
        ...  # cuda_module calls go to `fake`
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from cuda.bindings import driver as real_driver

from cinn_py.backends import cuda_module
from cinn_py.pir.operation import Operation
from cinn_py.targets.cuda import CudaTarget
from cinn_py.targets.library_call import HostLibraryCall, LibraryCall

OK = real_driver.CUresult.CUDA_SUCCESS
INVALID_VALUE = real_driver.CUresult.CUDA_ERROR_INVALID_VALUE

H100_ATTRIBUTES = {
    "MAX_BLOCK_DIM_X": 1024,
    "MAX_BLOCK_DIM_Y": 1024,
    "MAX_BLOCK_DIM_Z": 64,
    "MAX_GRID_DIM_X": 2**31 - 1,
    "MAX_GRID_DIM_Y": 65535,
    "MAX_GRID_DIM_Z": 65535,
    "MAX_THREADS_PER_BLOCK": 1024,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 227 * 1024,
    "COMPUTE_CAPABILITY_MAJOR": 9,
    "COMPUTE_CAPABILITY_MINOR": 0,
}


class StandInDriver:
    """Records calls; contexts are ints on a per-thread stack, as the driver keeps them."""

    CUresult = real_driver.CUresult
    CUdevice_attribute = real_driver.CUdevice_attribute
    CUfunction_attribute = real_driver.CUfunction_attribute
    CUstream = real_driver.CUstream
    CUstream_flags = real_driver.CUstream_flags
    CUstreamCaptureMode = real_driver.CUstreamCaptureMode

    def __init__(
        self,
        current_context: int = 0,
        kernel_max_threads: int = 1024,
        static_shared: int = 0,
        *,
        param_sizes: Mapping[str, tuple[int, ...]] | None = None,
        device_attributes: Mapping[str, int] | None = None,
        record: bool = True,
    ) -> None:
        self.stack = [current_context] if current_context else []
        self.kernel_max_threads = kernel_max_threads
        self.static_shared = static_shared
        self.param_sizes = dict(param_sizes or {})
        self.device_attributes = dict(device_attributes or H100_ATTRIBUTES)
        self.record = record
        self.calls: list[str] = []
        self.launches: list[dict] = []
        self.launch_count = 0
        self.function_attributes: list[tuple[str, int, int]] = []
        self.fail: dict[str, real_driver.CUresult] = {}
        self._functions: dict[int, str] = {}
        self.streams_created = 0
        self.capturing: dict[int, list[dict]] = {}
        """Per stream under capture, the launches recorded so far (not run)."""
        self.graphs: dict[int, list[dict]] = {}
        self.executables: dict[int, list[dict]] = {}
        """Instantiated graphs (by handle): the launches each replays."""
        self.graph_launches = 0
        self._graph_handles = itertools.count(1)
        """Graph and executable handles are never reused (the driver's are not while they
        live; numbering by the count alive handed a freed one's number to a live graph)."""

    def _result(self, call: str, *values):
        self.calls.append(call)
        return (self.fail.get(call, OK), *values)

    def cuInit(self, flags):
        return self._result("cuInit")

    def cuGetErrorName(self, error):
        return OK, error.name.encode()

    def cuGetErrorString(self, error):
        return OK, b"described"

    def cuCtxGetCurrent(self):
        return self._result(
            "cuCtxGetCurrent", real_driver.CUcontext(self.stack[-1] if self.stack else 0)
        )

    def cuCtxGetDevice(self):
        return self._result("cuCtxGetDevice", real_driver.CUdevice(0))

    def cuDeviceGet(self, ordinal):
        return self._result("cuDeviceGet", real_driver.CUdevice(ordinal))

    def cuDevicePrimaryCtxRetain(self, device):
        return self._result("cuDevicePrimaryCtxRetain", real_driver.CUcontext(0x1000 + int(device)))

    def cuCtxSetCurrent(self, context):
        self.stack[-1:] = [int(context)]
        return self._result("cuCtxSetCurrent")

    def cuCtxPushCurrent(self, context):
        self.stack.append(int(context))
        return self._result("cuCtxPushCurrent")

    def cuCtxPopCurrent(self):
        return self._result("cuCtxPopCurrent", real_driver.CUcontext(self.stack.pop()))

    def cuDeviceGetAttribute(self, attribute, device):
        name = attribute.name.removeprefix("CU_DEVICE_ATTRIBUTE_")
        return self._result("cuDeviceGetAttribute", self.device_attributes[name])

    def cuModuleLoadData(self, image):
        assert bytes(image).startswith(b"\x7fELF")
        return self._result("cuModuleLoadData", 0x2000)

    def cuModuleUnload(self, module):
        return self._result("cuModuleUnload")

    def cuModuleGetFunction(self, module, name):
        handle = 0x3000 + len(self._functions)
        self._functions[handle] = name.decode()
        return self._result(f"cuModuleGetFunction({name.decode()})", handle)

    def cuFuncGetAttribute(self, attribute, function):
        values = {
            "MAX_THREADS_PER_BLOCK": self.kernel_max_threads,
            "SHARED_SIZE_BYTES": self.static_shared,
            "MAX_DYNAMIC_SHARED_SIZE_BYTES": 48 * 1024 - self.static_shared,
        }
        return self._result(
            "cuFuncGetAttribute", values[attribute.name.removeprefix("CU_FUNC_ATTRIBUTE_")]
        )

    def cuFuncGetParamInfo(self, function, index):
        sizes = self.param_sizes.get(self._functions[function], ())
        if index >= len(sizes):
            return INVALID_VALUE, 0, 0
        return OK, 8 * index, sizes[index]

    def cuFuncSetAttribute(self, function, attribute, value):
        self.function_attributes.append((self._functions[function], attribute.name, value))
        return self._result("cuFuncSetAttribute")

    def cuStreamCreate(self, flags):
        self.streams_created += 1
        return self._result("cuStreamCreate", real_driver.CUstream(0x5000 + self.streams_created))

    def cuStreamBeginCapture(self, stream, mode):
        self.capturing[int(stream)] = []
        return self._result("cuStreamBeginCapture")

    def cuStreamEndCapture(self, stream):
        launches = self.capturing.pop(int(stream))
        handle = 0x6000 + next(self._graph_handles)
        self.graphs[handle] = launches
        return self._result("cuStreamEndCapture", real_driver.CUgraph(handle))

    def cuGraphInstantiate(self, graph, flags):
        handle = 0x70000 + next(self._graph_handles)
        self.executables[handle] = list(self.graphs[int(graph)])
        return self._result("cuGraphInstantiate", real_driver.CUgraphExec(handle))

    def cuGraphDestroy(self, graph):
        self.graphs.pop(int(graph), None)
        return self._result("cuGraphDestroy")

    def cuGraphExecDestroy(self, executable):
        self.executables.pop(int(executable), None)
        return self._result("cuGraphExecDestroy")

    def cuGraphLaunch(self, executable, stream):
        """Replays the launches the graph recorded: each counts (and, with `record`, is
        kept with `graph` set to the executable's handle)."""
        launches = self.executables[int(executable)]
        self.graph_launches += 1
        self.launch_count += len(launches)
        if self.record:
            self.calls.append("cuGraphLaunch")
            for launch in launches:
                self.launches.append({**launch, "stream": int(stream), "graph": int(executable)})
        return (self.fail.get("cuGraphLaunch", OK),)

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        captured = self.capturing.get(int(stream))
        if captured is None:
            self.launch_count += 1
        if not self.record and captured is None:
            return (OK,)
        name = self._functions[function]
        sizes = self.param_sizes.get(name, ())
        pointers = (ctypes.c_void_p * max(len(sizes), 1)).from_address(params)
        values = [ctypes.string_at(pointers[i], size) for i, size in enumerate(sizes)]
        (self.launches if captured is None else captured).append(
            {
                "kernel": name,
                "grid": (gx, gy, gz),
                "block": (bx, by, bz),
                "shared": shared,
                "stream": int(stream),
                "params": values,
                "extra": extra,
                "context": self.stack[-1] if self.stack else 0,
            }
        )
        return self._result("cuLaunchKernel")


@contextlib.contextmanager
def installed(fake: Any) -> Iterator[Any]:
    """`cuda_module` talks to `fake` (with fresh per-process state) inside the block."""
    saved = cuda_module.driver, cuda_module._state
    cuda_module.driver, cuda_module._state = fake, cuda_module._State()
    try:
        yield fake
    finally:
        cuda_module.driver, cuda_module._state = saved


class HostDeviceArray:
    """A host array dressed as a device array: `__cuda_array_interface__` (its address
    as the device pointer), `get`, `set`, `copy`, slicing, `view` and `reshape`."""

    def __init__(self, host: np.ndarray) -> None:
        self.host = host

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {
            "data": (self.host.ctypes.data, False),
            "shape": self.host.shape,
            "strides": None if self.host.flags.c_contiguous else self.host.strides,
            "typestr": self.host.dtype.str,
            "version": 3,
        }

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        """Refused, as CuPy refuses it: code that means to copy to the host says `get`
        (an H200 run found `np.asarray` on a device feed that the stand-in had let by)."""
        raise TypeError("Implicit conversion to a NumPy array is not allowed (use .get())")

    shape = property(lambda self: self.host.shape)
    dtype = property(lambda self: self.host.dtype)
    size = property(lambda self: self.host.size)
    itemsize = property(lambda self: self.host.itemsize)

    def __getitem__(self, key: Any) -> HostDeviceArray:
        return HostDeviceArray(self.host[key])

    def __setitem__(self, key: Any, value: Any) -> None:
        self.host[key] = value.host if isinstance(value, HostDeviceArray) else value

    def view(self, dtype: Any) -> HostDeviceArray:
        return HostDeviceArray(self.host.view(dtype))

    def reshape(self, *shape: Any) -> HostDeviceArray:
        return HostDeviceArray(self.host.reshape(*shape))

    def get(self) -> np.ndarray:
        return self.host.copy()

    def set(self, value: np.ndarray) -> None:
        np.copyto(self.host, value)

    def copy(self) -> HostDeviceArray:
        return HostDeviceArray(self.host.copy())


class StandInCudaTarget(CudaTarget):
    """`cuda` with `HostDeviceArray`s for memory and the host's clock; nothing to wait for."""

    def check_available(self) -> None:
        pass

    def unavailable_reason(self) -> str | None:
        return None

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return HostDeviceArray(np.empty(shape, dtype))

    def zeros(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return HostDeviceArray(np.zeros(shape, dtype))

    def arena(self, nbytes: int, alignment: int) -> Any:
        raw = np.zeros(nbytes + alignment, np.uint8)
        start = -raw.ctypes.data % alignment
        return HostDeviceArray(raw[start : start + nbytes])

    def plan_library_op(self, op: Operation) -> LibraryCall:
        """The reference kernel over the host arrays (no device table: no GPU libraries)."""
        return HostLibraryCall(op, "reference kernel, host (stand-in)")

    def synchronize(self) -> None:
        pass

    def device_array(self, value: Any) -> Any:
        return value if isinstance(value, HostDeviceArray) else HostDeviceArray(np.asarray(value))

    def using_stream(self, stream: Any) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def events(self) -> None:
        return None
