"""Every lowered op, over the whole case table, compiled for cuda-emu (and, under the `gpu`
marker, cuda) against the reference.

The table (`op_cases.py`) covers broadcasting, odd extents, 0-D, one-element and empty
tensors, and float32 / float16 / bfloat16 / int32 / bool where the op takes them. Each
case goes through the public API: passes, grouping, lowering, auto-schedule, CUDA C,
g++ against the emulation header, the runtime program.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from op_cases import CASES

import cinn_py
from cinn_py.backends import cuda_emu
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

TARGETS = [pytest.param("cuda-emu"), pytest.param("cuda", marks=pytest.mark.gpu)]
"""The same cases on the GPU under the `gpu` marker (skipped where there is none)."""


class _Collected(Exception):
    """Raised in place of the emulator's compile: the source is all that was wanted."""


@pytest.fixture(scope="module", autouse=True)
def prebuilt_emu_modules(request: pytest.FixtureRequest) -> None:
    """The selected cases' cuda-emu modules built up front, 32 to a g++ run
    (`cuda_emu.prebuild`): a g++ run's fixed cost is most of a small module's, so this
    makes the table's cold run several times cheaper.  The tests still compile through
    `cinn_py.compile`, now a cache hit; a batch g++ rejects is left to its tests, each
    compiling (and failing) alone.  Each case's source is the one `cinn_py.compile`
    builds, caught on its way to g++.  Under pytest-xdist each worker prebuilds its share
    of the cases (a case another worker runs before its share is built compiles alone)."""
    cases = [
        item.callspec.params["case"]
        for item in request.session.items
        if item.module is request.module and item.callspec.params["target"] == "cuda-emu"
    ]
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    workers = max(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")), 1)
    cases = cases[len(cases) * worker // workers : len(cases) * (worker + 1) // workers]
    sources: list[str] = []

    def collect(source: str, **options: object) -> None:
        sources.append(source)
        raise _Collected

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cuda_emu, "compile", collect)
        for case in cases:
            try:
                cinn_py.compile(case.build()[0], target="cuda-emu")
            except Exception:  # _Collected, or a case whose own test will report it
                pass
    cuda_emu.prebuild(sources)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op_compiled_matches_reference(case, target):
    program, feeds = case.build()
    outputs = program.outputs()
    want = run_reference(program, feeds)
    exe = cinn_py.compile(program, target=target)
    library = [g.name for g in exe.groups if g.kind.value == "library"]
    assert not library, f"{case.id}: ran as library calls, not generated code: {library}"
    got = list(exe.run(feeds).values())
    assert len(got) == len(outputs)
    for i, (value, g, w) in enumerate(zip(outputs, got, want, strict=True)):
        dtype = value.type.data_type.value
        g = np.asarray(g)
        if target == "cuda" and case.gpu_alternative is not None:
            g = np.where(g == case.gpu_alternative(feeds)[i], w, g)  # either answer is right
        result = compare(g, w, dtype if dtype == "bfloat16" else None)
        assert result.ok, f"{case.id} output {i} ({dtype}): {result}"
