"""NVRTC: CUDA C to CUBIN, its errors and its cache. No GPU or driver needed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from kernel_cases import CASES, KernelCase

from cinn_py.backends import cache, cuda_headers, cuda_module, nvrtc
from cinn_py.errors import CacheWarning, CompileError

KERNELS = sorted((Path(__file__).parent / "kernels").glob("*.cu"))
ARCHS = ("sm_80", "sm_90")

SIMPLE = r"""
extern "C" __global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
"""

HALF = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void halves(__half2* a, __nv_bfloat162* b) {
  a[threadIdx.x] = __hadd2(a[threadIdx.x], a[threadIdx.x]);
  b[threadIdx.x] = __hmul2(b[threadIdx.x], b[threadIdx.x]);
}
"""

REAL_HEADER_CHECK = {
    "cuda_fp16.h": "\n#ifndef __CUDA_FP16_H__\n#error not the CUDA toolkit's cuda_fp16.h\n#endif\n",
    "cuda_bf16.h": "\n#ifndef __CUDA_BF16_H__\n#error not the CUDA toolkit's cuda_bf16.h\n#endif\n",
}


@pytest.fixture(autouse=True)
def hermetic_cache(tmp_path, monkeypatch):
    """Every test gets an empty cache of its own and fresh stats."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(folder))
    monkeypatch.delenv("CINN_PY_DUMP_DIR", raising=False)
    nvrtc.stats.reset()
    return folder


def test_there_are_kernel_files():
    assert KERNELS, "kernels_tests/cuda/kernels/*.cu is empty"


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", KERNELS, ids=[p.name for p in KERNELS])
def test_every_kernel_file_compiles_to_a_cubin(path, arch):
    cubin = nvrtc.compile(path.read_text(), arch, name=path.name)
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_every_case_kernel_is_in_its_cubin(case: KernelCase):
    cubin = nvrtc.compile(case.source(), "sm_90", name=case.file)
    assert cuda_module.resolve_kernel_name(case.kernel, cuda_module.cubin_kernel_names(cubin))


HALF_KERNELS = [p for p in KERNELS if any(h in p.read_text() for h in REAL_HEADER_CHECK)]


@pytest.mark.parametrize("path", HALF_KERNELS, ids=[p.name for p in HALF_KERNELS])
def test_half_kernels_include_the_real_cuda_headers(path):
    source = path.read_text()
    checks = "".join(check for header, check in REAL_HEADER_CHECK.items() if header in source)
    assert nvrtc.compile(source + checks, "sm_90", name=path.name)[:4] == b"\x7fELF"


@pytest.mark.parametrize("arch", ARCHS)
def test_fp16_and_bf16_intrinsics_compile(arch):
    source = HALF + "".join(REAL_HEADER_CHECK.values())
    assert nvrtc.compile(source, arch)[:4] == b"\x7fELF"


def test_include_dir_holds_the_headers():
    folder = cuda_headers.include_dir()
    assert (folder / "cuda_fp16.h").is_file() and (folder / "cuda_bf16.h").is_file()
    assert cuda_headers.headers_version().isdigit()


def test_missing_headers_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(cuda_headers, "_wheel_candidates", lambda: [tmp_path / "nowhere"])
    monkeypatch.setattr(cuda_headers, "_pathfinder_candidates", lambda: [])
    cuda_headers.include_dir.cache_clear()
    try:
        with pytest.raises(CompileError, match="pip install nvidia-cuda-runtime") as error:
            cuda_headers.include_dir()
        assert str(tmp_path / "nowhere") in str(error.value)
    finally:
        monkeypatch.undo()
        cuda_headers.include_dir.cache_clear()


def test_compile_error_carries_the_log_and_names_the_line():
    source = 'extern "C" __global__ void broken(float* x) {\n  x[0] = undefined_name;\n}\n'
    with pytest.raises(CompileError) as error:
        nvrtc.compile(source, "sm_90", name="broken.cu")
    first_line = str(error.value).splitlines()[0]
    assert "broken.cu(2): error" in first_line and "undefined_name" in first_line
    assert "sm_90" in first_line
    assert 'identifier "undefined_name" is undefined' in error.value.log
    assert error.value.source == source
    assert nvrtc.stats.compiles == 0


def test_bad_options_are_compile_errors():
    with pytest.raises(CompileError, match="unrecognized option --no-such-option"):
        nvrtc.compile(SIMPLE, options=["--no-such-option"])
    with pytest.raises(CompileError, match="arch="):
        nvrtc.compile(SIMPLE, options=["-arch=sm_80"])
    with pytest.raises(TypeError, match="sequence of strings"):
        nvrtc.compile(SIMPLE, options="--use_fast_math")


def test_archs():
    assert {"sm_80", "sm_90"} <= set(nvrtc.supported_archs())
    assert nvrtc.target_arch(90) == nvrtc.target_arch("90") == nvrtc.target_arch("SM_90") == "sm_90"
    assert nvrtc.target_arch("sm_90a") == "sm_90a"
    assert nvrtc.target_arch("sm_80", "ptx") == "compute_80"
    with pytest.raises(CompileError, match="not supported by NVRTC .*sm_80"):
        nvrtc.compile(SIMPLE, "sm_35")
    with pytest.raises(CompileError, match="not of the form"):
        nvrtc.compile(SIMPLE, "hopper")


def test_nvrtc_version():
    major, minor = nvrtc.nvrtc_version().split(".")
    assert int(major) >= 12 and minor.isdigit()


def test_default_options():
    options = nvrtc.build_options("sm_90")
    assert options[0] == "--gpu-architecture=sm_90"
    assert "-std=c++17" in options
    assert f"--include-path={cuda_headers.include_dir()}" in options
    assert "--use_fast_math" not in options
    fast = nvrtc.build_options("sm_90", ["--use_fast_math", "-std=c++20"])
    assert fast[-2:] == ["--use_fast_math", "-std=c++20"] and "-std=c++17" not in fast


def test_ptx_is_for_reading():
    ptx = nvrtc.compile_ptx(SIMPLE, "sm_90")
    assert ".target sm_90" in ptx and ".entry add_one" in ptx
    assert not ptx.endswith("\0")


def test_second_compile_is_a_cache_hit_without_nvrtc(monkeypatch):
    first = nvrtc.compile(SIMPLE, "sm_90")

    def no_nvrtc(*args, **kwargs):
        raise AssertionError("NVRTC was called on a cache hit")

    monkeypatch.setattr(nvrtc._bindings, "nvrtcCreateProgram", no_nvrtc)
    monkeypatch.setattr(nvrtc._bindings, "nvrtcCompileProgram", no_nvrtc)
    second = nvrtc.compile(SIMPLE, "sm_90")
    assert second == first
    assert (nvrtc.stats.compiles, nvrtc.stats.cache_hits) == (1, 1)
    compiled, hit = nvrtc.stats.events
    assert not compiled.cache_hit and hit.cache_hit and compiled.key == hit.key
    assert hit.seconds < compiled.seconds
    assert "1 NVRTC compile(s)" in nvrtc.stats.summary()


def test_cache_lives_in_cinn_py_cache_dir(hermetic_cache):
    nvrtc.compile(SIMPLE, "sm_80")
    (event,) = nvrtc.stats.events
    entry = hermetic_cache / "cubin" / f"{event.key}.cubin"
    assert entry.read_bytes()[:4] == b"\x7fELF"


def test_key_changes_with_every_part():
    target = "sm_90"
    options = nvrtc.build_options(target)
    base = nvrtc.compile_key(SIMPLE, target, options, "kernel.cu", "cubin")
    variants = [
        nvrtc.compile_key(SIMPLE + "\n", target, options, "kernel.cu", "cubin"),
        nvrtc.compile_key(SIMPLE, "sm_80", nvrtc.build_options("sm_80"), "kernel.cu", "cubin"),
        nvrtc.compile_key(SIMPLE, target, [*options, "--use_fast_math"], "kernel.cu", "cubin"),
        nvrtc.compile_key(SIMPLE, target, options, "other.cu", "cubin"),
        nvrtc.compile_key(SIMPLE, target, options, "kernel.cu", "ptx"),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_key_changes_with_the_nvrtc_version(monkeypatch):
    options = nvrtc.build_options("sm_90")
    before = nvrtc.compile_key(SIMPLE, "sm_90", options, "kernel.cu", "cubin")
    monkeypatch.setattr(nvrtc, "nvrtc_version", lambda: "99.9")
    assert nvrtc.compile_key(SIMPLE, "sm_90", options, "kernel.cu", "cubin") != before


def test_a_changed_input_is_a_miss():
    nvrtc.compile(SIMPLE, "sm_90")
    nvrtc.compile(SIMPLE, "sm_80")
    nvrtc.compile(SIMPLE, "sm_90", ["--use_fast_math"])
    nvrtc.compile(SIMPLE.replace("1.0f", "2.0f"), "sm_90")
    nvrtc.compile(SIMPLE, 90)
    assert (nvrtc.stats.compiles, nvrtc.stats.cache_hits) == (4, 1)


def test_a_damaged_entry_is_rebuilt(hermetic_cache):
    good = nvrtc.compile(SIMPLE, "sm_90")
    (event,) = nvrtc.stats.events
    (hermetic_cache / "cubin" / f"{event.key}.cubin").write_bytes(b"garbage")
    assert nvrtc.compile(SIMPLE, "sm_90") == good
    assert nvrtc.stats.compiles == 2


def test_writes_are_atomic_and_leave_no_temp_files(hermetic_cache):
    sources = [SIMPLE.replace("1.0f", f"{i}.0f") for i in range(4)]
    results: dict[int, bytes] = {}

    def work(index: int) -> None:
        results[index] = nvrtc.compile(sources[index % 4], "sm_90")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(results[i] == results[i % 4] for i in range(8))
    files = sorted(os.listdir(hermetic_cache / "cubin"))
    assert len(files) == 4 and all(f.endswith(".cubin") and not f.startswith(".") for f in files)


def test_a_failed_write_warns_compiles_and_leaves_nothing(hermetic_cache, monkeypatch):
    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(cache.os, "replace", fail)
    with pytest.warns(CacheWarning, match="disk full"):
        assert nvrtc.compile(SIMPLE, "sm_90").startswith(b"\x7fELF")
    assert os.listdir(hermetic_cache / "cubin") == []


def test_dump_dir_keeps_the_nvrtc_log(tmp_path, monkeypatch):
    monkeypatch.setenv("CINN_PY_DUMP_DIR", str(tmp_path / "dump"))
    source = SIMPLE.replace("int i =", "int unused_variable; int i =")
    nvrtc.compile(source, "sm_90", name="group_7.cu")
    log = (tmp_path / "dump" / "group_7.nvrtc.log").read_text()
    assert "unused_variable" in log
    assert "unused_variable" in nvrtc.stats.events[-1].log


def test_a_log_that_cannot_be_written_warns_and_the_compile_goes_on(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CINN_PY_DUMP_DIR", str(blocker / "dump"))
    with pytest.warns(RuntimeWarning, match="CINN_PY_DUMP_DIR: cannot write"):
        cubin = nvrtc.compile(SIMPLE, "sm_90", name="group_7.cu")
    assert cubin.startswith(b"\x7fELF")
