"""ptxas's resource report: read from golden text, and from a real NVRTC compile for sm_90
(`nvrtc.compile_verbose`; NVRTC only, no GPU)."""

from __future__ import annotations

from cinn_py.backends import nvrtc
from cinn_py.perf.ptxas import Resources, parse_ptxas_log

LOG = """\
kernel.cu(12): warning #177-D: variable "i" was declared but never referenced
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'fn_a' for 'sm_90'
ptxas info    : Function properties for fn_a
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 256 bytes smem
ptxas info    : Compile time = 160.118 ms
ptxas info    : Function properties for __internal_div
ptxas         .     8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'fn_b' for 'sm_90'
ptxas info    : Function properties for fn_b
ptxas         .     24 bytes stack frame, 20 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers
"""


def test_reads_each_entry_function():
    found = parse_ptxas_log(LOG)
    assert found == {
        "fn_a": Resources(registers=64, static_shared=256, barriers=1),
        "fn_b": Resources(registers=255, spill_stores=20, spill_loads=16, stack=24),
    }
    assert found["fn_b"].spills == 36


SOURCE = """
extern "C" __global__ void __launch_bounds__(128) scale(const float* __restrict__ x,
                                                        float* __restrict__ y) {
  __shared__ float tile[128];
  tile[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x] * 2.0f;
  __syncthreads();
  y[blockIdx.x * 128 + threadIdx.x] = tile[127 - threadIdx.x];
}
"""


def test_compile_verbose_gives_the_cubin_and_ptxas_report():
    cubin, log = nvrtc.compile_verbose(SOURCE, "sm_90", name="scale.cu")
    assert cubin.startswith(b"\x7fELF")
    resources = parse_ptxas_log(log)["scale"]
    assert resources.spills == 0 and resources.stack == 0
    assert resources.static_shared == 128 * 4 and resources.barriers == 1
    assert 1 <= resources.registers <= 32


def test_compile_verbose_asks_nvrtc_not_to_serve_a_cached_build(monkeypatch):
    """NVRTC 12.9+ may serve a repeated build from the driver's compute cache, with no
    ptxas report in the log (an H200, 2026-11-27): compile_verbose passes --no-cache."""
    seen: list[list[str]] = []
    real = nvrtc._run_nvrtc

    def spy(source, target, options, name, output):
        seen.append(list(options))
        return real(source, target, options, name, output)

    monkeypatch.setattr(nvrtc, "_run_nvrtc", spy)
    for _ in range(2):  # the same source twice: each build's log has the report
        _, log = nvrtc.compile_verbose(SOURCE, "sm_90", name="scale.cu")
        assert parse_ptxas_log(log)["scale"].barriers == 1
    major, minor = (int(part) for part in nvrtc.nvrtc_version().split("."))
    assert all((nvrtc.NO_CACHE in options) == ((major, minor) >= (12, 9)) for options in seen)
    assert all(nvrtc.PTXAS_VERBOSE in options for options in seen) and len(seen) == 2
