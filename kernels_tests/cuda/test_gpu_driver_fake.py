"""`cuda_module` against a recording stand-in for `cuda.bindings.driver`.

CI has no GPU, so these tests check what can be checked without one: which driver calls
a load and a launch make and with what (context handling, the packed `void**`, the
shared-memory opt-in), and that bad launches are refused before the driver sees them.
The CUBINs are real ones from NVRTC; the real driver runs in `test_gpu.py`.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from cuda.bindings import driver as real_driver

from cinn_py.backends import cuda_module, nvrtc
from cinn_py.backends.stand_in_driver import H100_ATTRIBUTES, StandInDriver
from cinn_py.errors import CinnError, FeedError, KernelError

OK = real_driver.CUresult.CUDA_SUCCESS
INVALID_VALUE = real_driver.CUresult.CUDA_ERROR_INVALID_VALUE

SOURCE = r"""
__device__ __noinline__ float twice(float x) { return 2.0f * x; }

extern "C" __global__ void scale(float* out, const float* in, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = twice(in[i]) * factor;
}

__global__ void mangled(float* out) { out[threadIdx.x] = 1.0f; }

extern "C" __global__ void dynamic_smem(float* out) {
  extern __shared__ float buffer[];
  buffer[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
}
"""
PARAM_SIZES = {"scale": (8, 8, 4, 4), "_Z7mangledPf": (8,), "dynamic_smem": (8,)}


class FakeDriver(StandInDriver):
    """The stand-in driver (`backends.stand_in_driver`) with this file's kernels."""

    def __init__(
        self, current_context: int = 0, kernel_max_threads: int = 1024, static_shared: int = 0
    ) -> None:
        super().__init__(
            current_context,
            kernel_max_threads,
            static_shared,
            param_sizes=PARAM_SIZES,
            device_attributes=H100_ATTRIBUTES,
        )


@pytest.fixture(autouse=True)
def hermetic_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def fake(monkeypatch):
    fake = FakeDriver()
    monkeypatch.setattr(cuda_module, "driver", fake)
    monkeypatch.setattr(cuda_module, "_state", cuda_module._State())
    return fake


@pytest.fixture
def module(fake):
    return cuda_module.load(nvrtc.compile(SOURCE, "sm_90"))


class FakeCudaArray:
    """The least a CuPy array shows: `__cuda_array_interface__` with a device pointer."""

    def __init__(self, pointer: int = 0xD0000000) -> None:
        self.__cuda_array_interface__ = {
            "data": (pointer, False),
            "shape": (4,),
            "typestr": "<f4",
            "version": 3,
        }


DEVICE_ARRAY = FakeCudaArray()


def test_kernel_names_come_from_the_cubin_symbol_table():
    cubin = nvrtc.compile(SOURCE, "sm_80")
    assert cuda_module.cubin_kernel_names(cubin) == ("_Z7mangledPf", "dynamic_smem", "scale")


def test_not_a_cubin_is_refused():
    with pytest.raises(CinnError, match="not a CUBIN"):
        cuda_module.cubin_kernel_names(b"// PTX")


def test_kernel_names_resolve_extern_c_and_mangled():
    kernels = ("_Z7mangledPf", "dynamic_smem", "scale")
    assert cuda_module.resolve_kernel_name("scale", kernels) == "scale"
    assert cuda_module.resolve_kernel_name("mangled", kernels) == "_Z7mangledPf"
    with pytest.raises(ValueError, match="ambiguous"):
        cuda_module.resolve_kernel_name("k", ("_Z1kPf", "_Z1kPi"))


def test_load_without_context_retains_the_primary_context(fake, module):
    assert "cuDevicePrimaryCtxRetain" in fake.calls
    assert fake.stack == [0x1000]
    assert module.kernels == ("_Z7mangledPf", "dynamic_smem", "scale")


def test_load_uses_the_current_context(monkeypatch):
    fake = FakeDriver(current_context=0x5000)  # as after CuPy has touched the device
    monkeypatch.setattr(cuda_module, "driver", fake)
    monkeypatch.setattr(cuda_module, "_state", cuda_module._State())
    module = cuda_module.load(nvrtc.compile(SOURCE, "sm_90"))
    assert "cuDevicePrimaryCtxRetain" not in fake.calls
    module.launch("mangled", (1,), (32,), [DEVICE_ARRAY])
    assert fake.launches[0]["context"] == 0x5000
    assert "cuCtxPushCurrent" not in fake.calls


def test_launch_packs_pointers_and_scalars(fake, module):
    out = FakeCudaArray(0xBEEF0000)
    source = FakeCudaArray(0xDEAD0000)
    module.launch("scale", (2,), (128, 1), [out, source, np.float32(1.5), np.int32(4)])
    (launch,) = fake.launches
    assert launch["kernel"] == "scale"
    assert launch["grid"] == (2, 1, 1) and launch["block"] == (128, 1, 1)
    assert launch["shared"] == 0 and launch["stream"] == 0 and launch["extra"] == 0
    pointer_out, pointer_in, factor, n = launch["params"]
    assert struct.unpack("<Q", pointer_out)[0] == 0xBEEF0000
    assert struct.unpack("<Q", pointer_in)[0] == 0xDEAD0000
    assert struct.unpack("<f", factor)[0] == 1.5
    assert struct.unpack("<i", n)[0] == 4


def test_function_handles_are_cached(fake, module):
    for _ in range(3):
        module.launch("mangled", (1,), (32,), [DEVICE_ARRAY])
    assert fake.calls.count("cuModuleGetFunction(_Z7mangledPf)") == 1
    assert len(fake.launches) == 3


def test_unknown_kernel_lists_the_kernels(fake, module):
    with pytest.raises(ValueError, match=r"no kernel 'nope'.*_Z7mangledPf, dynamic_smem, scale"):
        module.launch("nope", (1,), (1,), [])
    assert not fake.launches


@pytest.mark.parametrize(
    ("grid", "block", "message"),
    [
        (
            (1, 70000),
            (32,),
            r"grid \(1, 70000, 1\) has grid.y = 70000, above the device's limit 65535",
        ),
        ((1,), (2048,), r"block \(2048, 1, 1\) has block.x = 2048"),
        ((1,), (1, 1, 65), r"block.z = 65"),
        ((1,), (32, 64), r"2048 threads, above the 1024"),
    ],
)
def test_launch_beyond_device_limits_is_refused(fake, module, grid, block, message):
    with pytest.raises(ValueError, match=message):
        module.launch("mangled", grid, block, [DEVICE_ARRAY])
    assert not fake.launches


def test_launch_beyond_the_kernels_own_thread_limit(monkeypatch):
    fake = FakeDriver(kernel_max_threads=256)  # e.g. __launch_bounds__(256) or many registers
    monkeypatch.setattr(cuda_module, "driver", fake)
    monkeypatch.setattr(cuda_module, "_state", cuda_module._State())
    module = cuda_module.load(nvrtc.compile(SOURCE, "sm_90"))
    with pytest.raises(ValueError, match="512 threads, above the 256 this kernel can run"):
        module.launch("mangled", (1,), (512,), [DEVICE_ARRAY])


def test_bad_dims_are_refused(fake, module):
    with pytest.raises(ValueError, match="grid"):
        module.launch("mangled", (0,), (32,), [DEVICE_ARRAY])


def test_arguments_are_checked_against_the_kernel(fake, module):
    out = DEVICE_ARRAY
    with pytest.raises(
        FeedError, match=r"kernel scale arguments': expected 4 argument\(s\), got 3"
    ):
        module.launch("scale", (1,), (32,), [out, out, np.float32(1)])
    with pytest.raises(
        FeedError, match=r"kernel scale argument #3': expected a 4-byte value .* got 8 bytes"
    ):
        module.launch("scale", (1,), (32,), [out, out, np.float32(1), np.int64(4)])
    host = np.zeros(4, np.float32)
    with pytest.raises(FeedError, match=r"kernel scale argument #0.*NumPy array in host memory"):
        module.launch("scale", (1,), (32,), [host, out, np.float32(1), np.int32(4)])
    with pytest.raises(FeedError, match="argument #3"):
        module.launch("scale", (1,), (32,), [out, out, np.float32(1), 4])
    assert not fake.launches


def test_large_dynamic_shared_memory_opts_in_once(fake, module):
    out = DEVICE_ARRAY
    module.launch("dynamic_smem", (1,), (64,), [out], shared_mem=48 * 1024)
    assert fake.function_attributes == []
    for _ in range(2):
        module.launch("dynamic_smem", (1,), (64,), [out], shared_mem=100 * 1024)
    assert fake.function_attributes == [
        ("dynamic_smem", "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", 100 * 1024)
    ]
    assert [launch["shared"] for launch in fake.launches] == [48 * 1024, 100 * 1024, 100 * 1024]
    with pytest.raises(ValueError, match="exceed the device's 232448 bytes"):
        module.launch("dynamic_smem", (1,), (64,), [out], shared_mem=228 * 1024)


def test_static_shared_memory_counts_toward_the_opt_in(monkeypatch):
    fake = FakeDriver(static_shared=40 * 1024)
    monkeypatch.setattr(cuda_module, "driver", fake)
    monkeypatch.setattr(cuda_module, "_state", cuda_module._State())
    module = cuda_module.load(nvrtc.compile(SOURCE, "sm_90"))
    out = [DEVICE_ARRAY]
    module.launch("dynamic_smem", (1,), (64,), out, shared_mem=8 * 1024)
    assert fake.function_attributes == []
    module.launch("dynamic_smem", (1,), (64,), out, shared_mem=16 * 1024)
    assert fake.function_attributes[-1][2] == 16 * 1024
    with pytest.raises(ValueError, match=r"plus 40960 static"):
        module.launch("dynamic_smem", (1,), (64,), out, shared_mem=200 * 1024)


def test_streams(fake, module):
    out = [DEVICE_ARRAY]

    class CupyLikeStream:
        ptr = 0x77

    class ProtocolStream:
        def __cuda_stream__(self):
            return (0, 0x88)

    for stream in (5, real_driver.CUstream(6), CupyLikeStream(), ProtocolStream()):
        module.launch("mangled", (1,), (32,), out, stream=stream)
    assert [launch["stream"] for launch in fake.launches] == [5, 6, 0x77, 0x88]
    with pytest.raises(TypeError, match="stream"):
        module.launch("mangled", (1,), (32,), out, stream="default")


def test_launch_from_another_context_pushes_and_pops(fake, module):
    fake.stack = [0x9000]  # the caller switched device, or a fresh thread bound another context
    module.launch("mangled", (1,), (32,), [DEVICE_ARRAY])
    assert fake.launches[0]["context"] == 0x1000
    assert fake.stack == [0x9000]


def test_driver_errors_name_the_call_and_kernel(fake, module):
    fake.fail["cuLaunchKernel"] = real_driver.CUresult.CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
    message = "cuLaunchKernel for kernel 'mangled' failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
    with pytest.raises(KernelError, match=message):
        module.launch("mangled", (1,), (32,), [DEVICE_ARRAY])
    fake.fail["cuFuncGetAttribute"] = real_driver.CUresult.CUDA_ERROR_INVALID_HANDLE
    with pytest.raises(CinnError, match="cuFuncGetAttribute for kernel 'scale' failed"):
        module.launch(
            "scale", (1,), (32,), [DEVICE_ARRAY, DEVICE_ARRAY, np.float32(1), np.int32(1)]
        )


def test_wrong_arch_cubin_says_so(fake):
    fake.fail["cuModuleLoadData"] = real_driver.CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU
    with pytest.raises(CinnError, match=r"not for this device \(sm_90\)"):
        cuda_module.load(nvrtc.compile(SOURCE, "sm_80"))


def test_no_driver_is_a_clear_error(monkeypatch):
    fake = FakeDriver()
    fake.fail["cuInit"] = real_driver.CUresult.CUDA_ERROR_NO_DEVICE
    monkeypatch.setattr(cuda_module, "driver", fake)
    monkeypatch.setattr(cuda_module, "_state", cuda_module._State())
    with pytest.raises(
        CinnError, match="no CUDA driver/GPU available: cuInit: CUDA_ERROR_NO_DEVICE"
    ):
        cuda_module.load(nvrtc.compile(SOURCE, "sm_90"))


def test_missing_libcuda_is_a_clear_error(monkeypatch):
    def no_libcuda(flags):
        raise RuntimeError(
            '"cuda" is an NVIDIA driver library and can only be found via system search'
        )

    fake = FakeDriver()
    fake.cuInit = no_libcuda
    monkeypatch.setattr(cuda_module, "driver", fake)
    monkeypatch.setattr(cuda_module, "_state", cuda_module._State())
    with pytest.raises(CinnError, match="no CUDA driver/GPU available"):
        cuda_module.device_arch()


def test_compile_and_load_builds_for_the_device(fake):
    module = cuda_module.compile_and_load(SOURCE)
    assert nvrtc.stats.events[-1].target == "sm_90"
    assert "scale" in module.kernels


def test_pick_arch_falls_back_within_the_major_version():
    assert cuda_module.pick_arch("sm_90") == "sm_90"
    supported = nvrtc.supported_archs()
    assert cuda_module.pick_arch("sm_99") == max(
        (a for a in supported if a.startswith("sm_9")), key=lambda a: int(a[3:])
    )
    with pytest.raises(CinnError, match="cannot build"):
        cuda_module.pick_arch("sm_30")


def test_unload_then_launch_is_refused(fake, module):
    module.unload()
    assert "cuModuleUnload" in fake.calls
    with pytest.raises(CinnError, match="unloaded"):
        module.launch("mangled", (1,), (32,), [DEVICE_ARRAY])


def test_the_real_driver_without_a_gpu_is_a_clear_error(monkeypatch):
    """Not the stand-in: the real `cuda.bindings.driver` where there is no driver or GPU."""
    try:
        present = real_driver.cuInit(0)[0] == OK
    except RuntimeError:
        present = False
    if present:
        pytest.skip("a CUDA driver and device are present")
    monkeypatch.setattr(cuda_module, "_state", cuda_module._State())
    with pytest.raises(CinnError, match="no CUDA driver/GPU available"):
        cuda_module.load(nvrtc.compile(SOURCE, "sm_90"))
    with pytest.raises(CinnError, match="no CUDA driver/GPU available"):
        cuda_module.compile_and_load(SOURCE)
