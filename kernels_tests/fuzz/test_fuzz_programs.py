"""Random programs of every family, compiled, against the reference executor.

Each test draws programs of one family (`fuzz_programs.FAMILIES`: elementwise, cast,
reduce, norm, layout, graph, spatial, attention) with hypothesis and checks every
output of the compiled target against the reference (`fuzz_check.check_case`); a failure is shrunk to a
minimal program, printed in Paddle's text format (`cinn-py run` reads it back). CI
runs a fixed seed (`fixed`) plus a few random examples (`fresh`) per family;
`CINN_PY_FUZZ=long` / `CINN_PY_FUZZ_EXAMPLES=N` run longer (see docs/TESTING.md and
tools/fuzz.py). `CINN_PY_FUZZ_ISOLATE=1` runs each compiled program in a forked child,
so a crash fails the example instead of killing pytest.
"""

from __future__ import annotations

import os

import pytest
from fuzz_check import family_test
from fuzz_config import PROFILE, fuzz_settings
from fuzz_programs import FAMILIES

TARGETS = [pytest.param("cuda-emu"), pytest.param("cuda", marks=pytest.mark.gpu)]
ISOLATE = os.environ.get("CINN_PY_FUZZ_ISOLATE", "") not in ("", "0")
KNOB_FAMILIES = ["elementwise", "reduce", "norm", "layout"]
"""The families whose kernels the tunable tactics take (flat, row, column, grid, tile)."""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seeding", ["fixed", "fresh"])
@pytest.mark.parametrize("family", FAMILIES)
def test_compiled_programs_match_reference(family: str, seeding: str, target: str) -> None:
    if seeding == "fresh" and PROFILE != "ci":
        pytest.skip("outside CI every example is fresh")
    test = family_test(family, target, fuzz_settings(fresh=seeding == "fresh"), isolate=ISOLATE)
    test()


@pytest.mark.parametrize("family", KNOB_FAMILIES)
def test_programs_compiled_with_random_tuned_knobs_match_reference(family: str) -> None:
    """The fixed seed's programs again, each kernel scheduled with a random one of its
    tactic's candidates (`fuzz_check.random_schedules`: what a schedule database may
    ask for) instead of the rules."""
    if PROFILE != "ci":
        pytest.skip("long runs take --knobs (tools/fuzz.py) instead")
    test = family_test(family, "cuda-emu", fuzz_settings(fresh=False), isolate=ISOLATE, knobs=True)
    test()
