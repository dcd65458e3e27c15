"""The fuzzers' hypothesis settings, chosen by environment variables.

    CINN_PY_FUZZ=ci          (default) a fixed seed (derandomized), CI_EXAMPLES examples
                             per test, plus FRESH_EXAMPLES random ones in the `fresh` tests
    CINN_PY_FUZZ=long        random examples, LONG_EXAMPLES per test, failures kept in the
                             example database (CINN_PY_FUZZ_DB, default .hypothesis/fuzz)
    CINN_PY_FUZZ_EXAMPLES=N  N examples per test (alone it means `long`, as the other
                             fuzzers of this folder read it)

The profiles are registered as `cinn-fuzz-ci` and `cinn-fuzz-long` but never loaded
globally (that would change every other hypothesis test of the session); fuzz tests
apply `fuzz_settings()` themselves.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

CI_EXAMPLES = 10
"""Fixed-seed examples per family and target in CI (each compiles with g++: ~1 s)."""
FRESH_EXAMPLES = 2
"""Random examples per family that each CI run adds."""
LONG_EXAMPLES = 100_000

_EXAMPLES = int(os.environ.get("CINN_PY_FUZZ_EXAMPLES") or 0)
PROFILE = os.environ.get("CINN_PY_FUZZ") or ("long" if _EXAMPLES else "ci")
if PROFILE not in ("ci", "long"):
    raise ValueError(f"CINN_PY_FUZZ={PROFILE!r}: expected 'ci' or 'long'")

_COMMON = dict(
    deadline=None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
)
settings.register_profile(
    "cinn-fuzz-ci",
    max_examples=_EXAMPLES or CI_EXAMPLES,
    derandomize=True,
    database=None,
    **_COMMON,
)
settings.register_profile(
    "cinn-fuzz-long",
    max_examples=_EXAMPLES or LONG_EXAMPLES,
    derandomize=False,
    database=DirectoryBasedExampleDatabase(
        os.environ.get("CINN_PY_FUZZ_DB") or os.path.join(".hypothesis", "fuzz")
    ),
    **_COMMON,
)


def fuzz_settings(*, fresh: bool = False, **overrides: object) -> settings:
    """The settings of the profile in force; `fresh` (CI only) for the few random
    examples each run adds to the fixed-seed ones."""
    parent = settings.get_profile(f"cinn-fuzz-{PROFILE}")
    if fresh and PROFILE == "ci":
        overrides = {"max_examples": FRESH_EXAMPLES, "derandomize": False, **overrides}
    return settings(parent, **overrides)
