"""Every case of kernel_cases.py on the GPU (NVRTC CUBIN, CuPy arrays), and launch errors.

The same cases, oracles and tolerances as the cuda-emu tests: a kernel that passes there
and fails here is a bug in one of the two. Needs CuPy and a device (the root conftest
skips these otherwise):

    pip install cupy-cuda13x && python -m pytest kernels_tests -m gpu
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from kernel_cases import CASES, KERNEL_DIR, KernelCase, snapshot

from cinn_py.backends import cuda_module, nvrtc
from cinn_py.errors import CinnError, FeedError

pytestmark = pytest.mark.gpu

ModuleGetter = Callable[[str], cuda_module.CudaModule]


@pytest.fixture(scope="module")
def cp() -> Any:
    return pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def arch(cp) -> str:
    return cuda_module.pick_arch(cuda_module.device_arch())


@pytest.fixture(scope="module")
def gpu_modules(arch) -> ModuleGetter:
    """Kernel files compiled for this device and loaded, each once."""
    modules: dict[str, cuda_module.CudaModule] = {}

    def lookup(file: str) -> cuda_module.CudaModule:
        if file not in modules:
            cubin = nvrtc.compile((KERNEL_DIR / file).read_text(), arch, name=file)
            modules[file] = cuda_module.load(cubin)
        return modules[file]

    return lookup


def to_device(cp, args: list[Any]) -> list[Any]:
    return [cp.asarray(arg) if isinstance(arg, np.ndarray) else arg for arg in args]


def to_host(cp, device_args: list[Any]) -> list[Any]:
    return [cp.asnumpy(arg) if isinstance(arg, cp.ndarray) else arg for arg in device_args]


def run_case(
    cp, module: cuda_module.CudaModule, case: KernelCase, seed: int = 0, **launch
) -> list[str]:
    args = case.make_args(np.random.default_rng(seed))
    before = snapshot(args)
    device_args = to_device(cp, args)
    shared_mem = launch.pop("shared_mem", case.shared_mem)
    module.launch(case.kernel, case.grid, case.block, device_args, shared_mem=shared_mem, **launch)
    cp.cuda.Device().synchronize()
    return case.check(to_host(cp, device_args), before)


def case_named(name: str) -> KernelCase:
    return next(case for case in CASES if case.name == name)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_case(cp, gpu_modules, case: KernelCase) -> None:
    assert run_case(cp, gpu_modules(case.file), case) == []


def test_device_arch_is_cupys_device(cp) -> None:
    assert cuda_module.device_arch() == f"sm_{cp.cuda.Device().compute_capability}"


def test_module_lists_its_kernels(gpu_modules) -> None:
    for case in CASES:
        assert cuda_module.resolve_kernel_name(case.kernel, gpu_modules(case.file).kernels)


def test_compile_and_load_uses_the_cache(cp) -> None:
    case = case_named("vector_add")
    cuda_module.compile_and_load(case.source(), name=case.file)
    hits = nvrtc.stats.cache_hits
    module = cuda_module.compile_and_load(case.source(), name=case.file)
    assert nvrtc.stats.cache_hits == hits + 1
    assert run_case(cp, module, case) == []


def test_launch_on_a_cupy_stream(cp, gpu_modules) -> None:
    case = case_named("softmax_rows_256")
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:  # the launch goes on CuPy's current stream
        assert run_case(cp, gpu_modules(case.file), case) == []
    assert run_case(cp, gpu_modules(case.file), case, stream=stream) == []


def test_launch_from_a_thread_without_a_context(cp, gpu_modules) -> None:
    """A fresh thread has no current context: the launch pushes the module's and pops it."""
    case = case_named("transpose_tiled")
    module = gpu_modules(case.file)
    args = case.make_args(np.random.default_rng(0))
    before = snapshot(args)
    device_args = to_device(cp, args)
    cp.cuda.Device().synchronize()
    errors: list[Exception] = []

    def work() -> None:
        try:
            module.launch(case.kernel, case.grid, case.block, device_args, stream=0)
        except Exception as error:
            errors.append(error)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors == []
    cp.cuda.Device().synchronize()
    assert case.check(to_host(cp, device_args), before) == []


def test_more_than_48k_of_dynamic_shared_memory(cp, gpu_modules) -> None:
    case = case_named("dynamic_shared_reverse")
    assert run_case(cp, gpu_modules(case.file), case, shared_mem=100 * 1024) == []
    assert run_case(cp, gpu_modules(case.file), case, shared_mem=64 * 1024) == []


def test_unknown_kernel_lists_the_kernels(gpu_modules) -> None:
    module = gpu_modules("vector_add.cu")
    with pytest.raises(ValueError, match=r"no kernel 'vector_sub' .*vector_add"):
        module.launch("vector_sub", (1,), (32,), [])


@pytest.mark.parametrize(
    ("grid", "block", "shared_mem", "message"),
    [
        ((1,), (2048,), 0, "block.x = 2048"),
        ((1,), (32, 32, 2), 0, "2048 threads"),
        ((1, 70000), (32,), 0, "grid.y = 70000"),
        ((1,), (256,), 10 * 1024 * 1024, "dynamic shared memory"),
    ],
)
def test_launch_beyond_the_device_is_refused(cp, gpu_modules, grid, block, shared_mem, message):
    x = cp.zeros(16, cp.float32)
    module = gpu_modules("vector_add.cu")
    with pytest.raises(ValueError, match=message):
        module.launch("vector_add", grid, block, [x, x, x, np.int32(16)], shared_mem=shared_mem)


def test_launch_bounds_are_the_kernels_thread_limit(cp, gpu_modules) -> None:
    x = cp.zeros(16, cp.float32)
    with pytest.raises(ValueError, match="above the 256 this kernel can run"):
        gpu_modules("vector_add.cu").launch("vector_add", (1,), (512,), [x, x, x, np.int32(16)])


def test_arguments_must_match_the_kernel(cp, gpu_modules) -> None:
    x = cp.zeros(16, cp.float32)
    module = gpu_modules("vector_add.cu")
    with pytest.raises(FeedError, match="expected 4 argument"):
        module.launch("vector_add", (1,), (32,), [x, x, x])
    with pytest.raises(FeedError, match="got 8 bytes"):
        module.launch("vector_add", (1,), (32,), [x, x, x, np.int64(16)])
    with pytest.raises(FeedError, match="NumPy array in host memory"):
        module.launch("vector_add", (1,), (32,), [np.zeros(16, np.float32), x, x, np.int32(16)])


def test_cubin_for_another_arch_is_refused(cp, arch) -> None:
    other = "sm_80" if arch.startswith("sm_9") else "sm_90"
    with pytest.raises(CinnError, match="cuModuleLoadData failed"):
        cuda_module.load(nvrtc.compile(case_named("vector_add").source(), other))


def test_unloaded_module_is_refused(cp, arch) -> None:
    case = case_named("vector_add")
    module = cuda_module.load(nvrtc.compile(case.source(), arch))
    assert run_case(cp, module, case) == []
    module.unload()
    with pytest.raises(CinnError, match="unloaded"):
        run_case(cp, module, case)
