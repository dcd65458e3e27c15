"""Open compiler bugs the program fuzzer steers around, one named switch each.

Each entry of KNOWN_BUGS names a bug that is open, so that CI stays green and long runs
find *new* bugs instead of the same one over and over. A switch works one of two ways:
the generator (`fuzz_programs.py`) avoids the pattern (each place that does says
`self.avoided("<switch>")`), or, for a bug no rule of the generator can steer around,
`fuzz_check` lets a failure whose signature matches KNOWN_SIGNATURES[switch] pass.
When a bug is fixed, delete its entries: the fuzzer then finds the pattern again.

`CINN_PY_FUZZ_AVOID` overrides the set for one run: `none` fuzzes every pattern (to check
whether the bugs are still there), a comma list (`switch_a,switch_b`) avoids
only those.
"""

from __future__ import annotations

import os
import re

KNOWN_BUGS: dict[str, str] = {}
"""Switch name -> what goes wrong (and how the fuzzer steers around it)."""

KNOWN_SIGNATURES: dict[str, re.Pattern[str]] = {}
"""Switch name -> the failure signatures (`fuzz_check`) that pass while it is on, e.g.
`re.compile(r"^error:CompileError: .*section type conflict")` for the cuda-emu build
failure the fuzzer found (fixed since)."""


def avoided_bugs() -> frozenset[str]:
    """The switches in force: every KNOWN_BUGS entry, unless CINN_PY_FUZZ_AVOID says
    otherwise."""
    setting = os.environ.get("CINN_PY_FUZZ_AVOID")
    if setting is None:
        return frozenset(KNOWN_BUGS)
    if setting.strip().lower() in ("", "none"):
        return frozenset()
    names = frozenset(name.strip() for name in setting.split(",") if name.strip())
    unknown = names - KNOWN_BUGS.keys()
    if unknown:
        raise ValueError(
            f"CINN_PY_FUZZ_AVOID names unknown switches {sorted(unknown)}; "
            f"known: {sorted(KNOWN_BUGS)}"
        )
    return names


def known_failure(signature: str, avoided: frozenset[str]) -> str | None:
    """The switch in force whose KNOWN_SIGNATURES match `signature`, if any."""
    for name in sorted(avoided):
        pattern = KNOWN_SIGNATURES.get(name)
        if pattern is not None and pattern.search(signature):
            return name
    return None
