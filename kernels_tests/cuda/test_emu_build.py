"""cuda-emu's build: source preparation, g++ errors, and the on-disk cache."""

from __future__ import annotations

import subprocess
import time

import numpy as np
import pytest

from cinn_py.backends import cache, cuda_emu, emu_build, emu_source
from cinn_py.errors import CompileError

BROKEN = """extern "C" __global__ void broken(float* x) {
    const int i = threadIdx.x;
    x[i] = undeclared_value * 2.0f;
}
"""


def test_gxx_error_is_a_compile_error_naming_the_line() -> None:
    with pytest.raises(CompileError) as error:
        cuda_emu.compile(BROKEN)
    first_line = str(error.value).splitlines()[0]
    assert first_line.startswith("g++ rejected the CUDA source (cuda-emu): kernel.cu:3:")
    assert "'undeclared_value' was not declared" in first_line
    assert str(error.value).splitlines()[1].strip() == "x[i] = undeclared_value * 2.0f;"
    assert "error:" in error.value.log
    assert error.value.source == BROKEN


def test_second_compile_is_a_cache_hit_without_gxx(monkeypatch) -> None:
    source = 'extern "C" __global__ void fill(int* x) { x[threadIdx.x] = 7; }\n'
    first = cuda_emu.compile(source)

    def no_gxx(*args, **kwargs):
        raise AssertionError(f"g++ ran on a cache hit: {args}")

    monkeypatch.setattr(emu_build.subprocess, "run", no_gxx)
    start = time.perf_counter()
    second = cuda_emu.compile(source)
    elapsed = time.perf_counter() - start
    assert second.path == first.path and first.path.is_file()
    assert elapsed < 0.25, f"a cache hit took {elapsed:.3f} s"
    x = np.zeros(32, np.int32)
    second.launch("fill", (1,), (32,), [x])
    assert (x == 7).all()


def test_cache_key_separates_builds() -> None:
    source = 'extern "C" __global__ void one(int* x) { x[0] = 1; }\n'
    plain = cuda_emu.compile(source)
    assert cuda_emu.compile(source, opt_level=1).path != plain.path
    assert cuda_emu.compile(source, context_switch="ucontext").path != plain.path
    assert cuda_emu.compile(source + "// changed\n").path != plain.path


def test_gxx_missing_is_a_compile_error(monkeypatch) -> None:
    emu_build.gxx_version.cache_clear()
    monkeypatch.setattr(emu_build, "GXX", "no-such-gxx-cinn-emu")
    try:
        with pytest.raises(CompileError, match="needs no-such-gxx-cinn-emu"):
            cuda_emu.compile(BROKEN)
    finally:
        emu_build.gxx_version.cache_clear()


def test_invalid_options() -> None:
    with pytest.raises(ValueError, match="opt_level"):
        cuda_emu.compile(BROKEN, opt_level=4)
    with pytest.raises(ValueError, match="context_switch"):
        cuda_emu.compile(BROKEN, context_switch="threads")
    with pytest.raises(ValueError, match="stack_size"):
        cuda_emu.compile(BROKEN, stack_size=1000)


KERNELS = """
#include <cuda_fp16.h>
// extern "C" __global__ void commented_out(float* x) {}
extern "C" __global__ void __launch_bounds__(256, 2) first(float* x) { }
extern "C" __global__ void declared_only(float* x);
template <int N> __global__ void templated(float* x) { }
extern "C" {
__global__ void
second(const char* s = "__global__ void fake(") {
}
}
static __global__ void third() {}
"""


def test_find_kernels() -> None:
    prepared = emu_source.prepare(KERNELS)
    assert prepared.kernels == ("first", "second", "third")
    assert prepared.text.startswith(KERNELS)
    assert "cinn_emu::launch<&first>" in prepared.text
    assert "check_main" not in prepared.text
    assert "check_main" in emu_source.prepare(KERNELS, executable=True).text


def test_dynamic_shared_rewrite_keeps_lines() -> None:
    source = (
        "extern __shared__ float a[];\n"
        "__global__ void k() {\n"
        "    extern __shared__ __align__(16)\n"
        "        unsigned char b[];\n"
        "    extern volatile __shared__ double c [ ] ;\n"
        "    extern int not_shared[];\n"
        "}\n"
    )
    text = emu_source.prepare(source).text
    lines = text.splitlines()
    assert lines[0] == "float* const a = reinterpret_cast<float*>(cinn_emu_dynamic_shared);"
    assert lines[2].strip().startswith("unsigned char* const b = reinterpret_cast<unsigned char*>(")
    assert lines[3] == ""
    assert "volatile double* const c = reinterpret_cast<volatile double*>(" in lines[4]
    assert lines[5] == "    extern int not_shared[];"
    assert lines[6] == "}"


def test_emulation_headers_are_part_of_the_key() -> None:
    digest = emu_build.headers_digest()
    assert len(digest) == 64 and digest == emu_build.headers_digest()
    assert (emu_build.INCLUDE_DIR / "cinn_emu.h").is_file()


def test_gxx_really_runs_on_a_miss(monkeypatch, private_cache) -> None:
    emu_build.gxx_version()  # cached once per process
    calls = []
    real_run = subprocess.run

    def counting_run(command, *args, **kwargs):
        if "-shared" in command:  # a module build (the first may also build the .gch)
            calls.append(command[0])
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(emu_build.subprocess, "run", counting_run)
    cuda_emu.compile('extern "C" __global__ void fresh(int* x) { x[1] = 2; }\n')
    assert calls.count(emu_build.GXX) == 1


def test_precompiled_header_is_built_once_and_used(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path))
    commands = []
    real_run = subprocess.run

    def recording_run(command, *args, **kwargs):
        commands.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(emu_build.subprocess, "run", recording_run)
    for value in (3, 4):
        module = cuda_emu.compile(
            f'extern "C" __global__ void put(int* x) {{ x[threadIdx.x] = {value}; }}\n'
        )
        x = np.zeros(4, np.int32)
        module.launch("put", (1, 1, 1), (4, 1, 1), [x])
        assert (x == value).all()
    headers = [c for c in commands if "c++-header" in c]
    modules = [c for c in commands if "-shared" in c]
    assert len(headers) == 1 and len(modules) == 2
    assert all(emu_build.PCH_HEADER in c for c in modules)
    assert list(tmp_path.glob("cuda-emu-pch/*/cinn_emu_pch.h.gch"))


def test_gxx_uses_the_sealed_precompiled_header(private_cache, tmp_path) -> None:
    """The header is a sealed cache entry like any other (its seal after g++'s data);
    g++ reads only what the PCH's own header describes, so it uses the file as it is:
    `-H` marks a precompiled header it used with `!`."""
    options = emu_build.EmuOptions(context_switch=cuda_emu.default_context_switch())
    flags = emu_build.gxx_flags(options)
    header = emu_build.precompiled_header(flags)
    assert header is not None and cache.verified_file(header.gch, header.key)
    (tmp_path / "kernel.cu").write_text('extern "C" __global__ void k(int* x) { x[0] = 1; }\n')
    result = subprocess.run(
        [emu_build.GXX, *emu_build.with_precompiled_header(flags, header)]
        + ["-H", "-fsyntax-only", "kernel.cu"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert f"! {header.gch}" in result.stderr.splitlines()


CUDA_ISMS = r"""
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <cassert>
#include <memory>

struct __align__(16) Pair { float a, b; };

__device__ __noinline__ float twice(float v) { return 2.0f * v; }
static __device__ __forceinline__ int64_t widen(int32_t v) { return static_cast<int64_t>(v) << 32; }

__constant__ float kScale[2] = {0.5f, 4.0f};
__device__ int g_counter;

extern "C" __global__ void __launch_bounds__(128, 4)
misc(const float* __restrict__ x, float* __restrict__ y, long long* z, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Pair p{x[i], kScale[i % 2]};
    y[i] = twice(p.a) * p.b + sizeof(Pair) + alignof(Pair);
    z[i] = widen(static_cast<int32_t>(i));
    atomicAdd(&g_counter, 1);
    assert(__half2float(__float2half(1.5f)) == 1.5f);
    const dim3 d = blockDim;
    if (d.x != 128) __trap();
}

extern "C" __global__ void read_counter(int* out) { out[0] = g_counter; }
"""


def test_cuda_headers_qualifiers_and_device_globals() -> None:
    """Headers resolve to the emulation's, qualifiers compile, device globals persist."""
    module = cuda_emu.compile(CUDA_ISMS)
    n = 200
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    z = np.zeros(n, np.int64)
    counter = np.zeros(1, np.int32)
    for launches in (1, 2):
        module.launch("misc", (2,), (128,), [x, y, z, np.uint32(n)])
        module.launch("read_counter", (1,), (1,), [counter])
        assert counter[0] == n * launches
    np.testing.assert_array_equal(y, 2 * x * np.where(np.arange(n) % 2, 4.0, 0.5) + 32)
    np.testing.assert_array_equal(z, np.arange(n, dtype=np.int64) << 32)


def _fill(value: int) -> str:
    return f'extern "C" __global__ void fill(int* x) {{ x[threadIdx.x] = {value}; }}\n'


def _filled(module: cuda_emu.EmuModule) -> np.ndarray:
    x = np.zeros(8, np.int32)
    module.launch("fill", (1,), (8,), [x])
    return x


def test_prebuild_builds_many_sources_in_one_gxx_run(monkeypatch, private_cache) -> None:
    sources = [_fill(value) for value in range(5)]
    modules = []
    real_run = subprocess.run

    def counting_run(command, *args, **kwargs):
        if "-shared" in command:
            modules.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(emu_build.subprocess, "run", counting_run)
    assert cuda_emu.prebuild(sources) == 5
    assert len(modules) == 1
    assert cuda_emu.prebuild(sources + [sources[0]]) == 0  # all cached
    for value, source in enumerate(sources):
        module = cuda_emu.compile(source)
        assert module.path.suffix == emu_build.BATCH_SUFFIX
        assert (_filled(module) == value).all()
    assert len(modules) == 1, "compile ran g++ after prebuild"


def test_a_batch_gxx_rejects_is_left_to_each_source(private_cache) -> None:
    assert cuda_emu.prebuild([_fill(1), BROKEN, _fill(2)]) == 0
    assert (_filled(cuda_emu.compile(_fill(1))) == 1).all()
    with pytest.raises(CompileError, match="kernel.cu:3:"):
        cuda_emu.compile(BROKEN)


def test_sources_whose_macros_clash_are_not_batched(private_cache) -> None:
    sources = [
        f'#define VALUE {value}\nextern "C" __global__ void fill(int* x) {{ x[0] = VALUE; }}\n'
        for value in (3, 4)
    ]
    assert cuda_emu.prebuild(sources) == 0
    for value, source in zip((3, 4), sources, strict=True):
        assert _filled(cuda_emu.compile(source))[0] == value


def test_cache_keys_do_not_spell_the_checkout_path(monkeypatch):
    """Two clones of one source in different folders share emulated kernels: the key
    names the headers' folder (what the headers hold is `headers_digest`)."""
    from pathlib import Path

    from cinn_py.backends import emu_build

    monkeypatch.setattr(emu_build, "headers_digest", lambda: "same headers")
    here = emu_build.module_key("cuda-emu", "x", ["-O1", "-I", str(emu_build.INCLUDE_DIR)])
    elsewhere = Path("/elsewhere/cinn_py/backends/emu_include")
    monkeypatch.setattr(emu_build, "INCLUDE_DIR", elsewhere)
    there = emu_build.module_key("cuda-emu", "x", ["-O1", "-I", str(elsewhere)])
    assert here == there
    assert emu_build.module_key("cuda-emu", "y", ["-O1", "-I", str(elsewhere)]) != there
