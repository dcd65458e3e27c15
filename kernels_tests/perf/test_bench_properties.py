"""What every benchmark case's kernels must be, read without a GPU (issue 19): each case
of tools/bench.py at full size, compiled by NVRTC for sm_90 and read by the static
report (`cinn_py.perf`): no spills, the program's minimum bytes, issue time at most half
of the memory time, at least 2 waves, 16-byte loads (and stores, for a full-shaped
output). The properties the kernels do not have yet are listed in `KNOWN_GAPS`, each a
strict xfail: a fix that gives a kernel the property fails the test until its line goes.
Structural facts only, never timings."""

from __future__ import annotations

import functools

import pytest

from cinn_py.perf import binaries, perf_report
from cinn_py.perf.report import ProgramReport
from cinn_py.pir.parser import parse_program
from kernels_tests.tool_modules import load_tool

available, why = binaries.tools_available()
pytestmark = pytest.mark.skipif(not available, reason=why)

ISSUE_OVER_MEMORY = 0.5
"""The most issue time a kernel may take against its memory time (the model's)."""
MIN_WAVES = 2.0
VECTOR = 16

KNOWN_GAPS = {
    ("reduce_sum_cols_f32_8192x8192", "waves"): (
        "256 blocks of 1024 threads: 0.97 waves, kept: the 2-wave lanes settings (8 or 16 "
        "outputs a block) timed 1.28x to 1.55x slower on an H200, 2026-11-27"
    ),
}
PROPERTIES = ("spills", "bytes", "issue", "waves", "vectors")
FULL_OUTPUT = ("add_relu_mul", "softmax", "layer_norm", "rms_norm", "transpose")
"""The families whose output is as large as their input: their stores are 16 bytes too
(a reduction stores a total a row, or partials)."""


@functools.cache
def _bench():
    return load_tool("bench")


def _case_names() -> list[str]:
    return [case.name for case in _bench()._cases()]


@functools.cache
def _report(name: str) -> ProgramReport:
    case = next(c for c in _bench()._cases() if c.name == name)
    return perf_report(parse_program(case.program_text), label=name)


def _params():
    for name in _case_names():
        for prop in PROPERTIES:
            gap = KNOWN_GAPS.get((name, prop))
            marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
            yield pytest.param(name, prop, marks=marks, id=f"{name}-{prop}")


def test_every_known_gap_names_a_case_and_a_property():
    names = set(_case_names())
    for name, prop in KNOWN_GAPS:
        assert name in names and prop in PROPERTIES, (name, prop)


@pytest.mark.parametrize(("name", "prop"), _params())
def test_bench_case_kernels_have_the_property(name: str, prop: str):
    report = _report(name)
    assert report.kernels, f"{name} launches no kernel"
    if prop == "bytes":
        assert report.over_minimum <= 1.005, f"{report.over_minimum:.3f}x the minimum bytes"
        return
    for kernel in report.kernels:
        where = f"{name} {kernel.name}"
        if prop == "spills":
            assert kernel.resources.spills == 0 and kernel.sass.local_bytes == 0, where
        elif prop == "issue":
            ratio = kernel.estimate.issue_s / kernel.estimate.memory_s
            assert ratio <= ISSUE_OVER_MEMORY, f"{where}: issue / memory {ratio:.2f}"
        elif prop == "waves":
            assert kernel.waves >= MIN_WAVES, f"{where}: {kernel.waves:.2f} waves"
        elif prop == "vectors":
            assert max(kernel.sass.loads) == VECTOR, f"{where}: loads {dict(kernel.sass.loads)}"
            if name.startswith(FULL_OUTPUT):
                stores = kernel.sass.stores
                assert max(stores) == VECTOR, f"{where}: stores {dict(stores)}"
