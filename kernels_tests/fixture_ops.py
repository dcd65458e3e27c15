"""Which Paddle fixtures cinn_py can execute yet: strict xfail for the ones it cannot.

The fixtures (kernels_tests/fixtures, written by tools/gen_paddle_fixtures.py) include
model blocks and per-op programs whose printed programs use ops cinn_py does not know
yet. A test that *executes* or *verifies* a fixture (reference executor, compiled,
shape inference, passes, verifier, grouping) takes its parameters from here: a fixture
with an op that the op registry (`lookup_op_def`) does not know is collected as
``pytest.mark.xfail(strict=True, reason="needs ops: pd_op.x, ...")``. It must fail
today, and it turns into a normal, passing test by itself once the op is registered
(strict: an unexpected pass fails the run, so a stale mark cannot linger).

Tests that only parse and print (the round trip) do not use these marks: unknown ops
parse and print generically, so every fixture must round-trip already.

``KNOWN_FAILURES`` lists fixtures that fail for a reason other than a missing op, per
test, with the precise reason; it is empty where nothing of that kind is known.

This is a helper module, not a test file; tests import it after putting kernels_tests/
on ``sys.path`` (the suite runs with ``--import-mode=importlib``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

_OP_NAME = re.compile(r'^\s*\([^)]*\) = "([^"]+)"', re.MULTILINE)


@functools.cache
def _lookup():
    import cinn_py.pir  # noqa: F401  (registers the dialects)

    try:
        from cinn_py.pir.op_def import lookup_op_def
    except ImportError:  # the registry may move; cinn_py.pir re-exports it
        from cinn_py.pir import lookup_op_def
    return lookup_op_def


def ops_in_text(text: str) -> set[str]:
    """Op names of every op line in a printed program (nested regions included)."""
    return set(_OP_NAME.findall(text))


def fixture_texts(folder: Path) -> list[Path]:
    """The printed programs of a fixture folder (program.pir, program_jit_load.pir)."""
    return sorted(folder.glob("*.pir"))


@functools.cache
def missing_ops(path: Path) -> tuple[str, ...]:
    """Ops of a fixture folder (or one printed program) the registry does not know."""
    path = Path(path)
    paths = [path] if path.is_file() else fixture_texts(path)
    names: set[str] = set()
    for p in paths:
        names |= ops_in_text(p.read_text(encoding="utf-8"))
    lookup = _lookup()
    return tuple(sorted(n for n in names if lookup(n) is None))


KNOWN_FAILURES: dict[tuple[str, str], str] = {}
"""(test kind, fixture folder relative to fixtures/) -> why it fails besides missing ops.
Test kinds: "reference", "compiled", "passes", "verify", "shapes", "grouping"."""


def marks_for(
    path: Path, kind: str = "", needs_registered_ops: bool = True
) -> list[pytest.MarkDecorator]:
    """The strict-xfail mark for a fixture folder or printed program, if it needs one.

    ``needs_registered_ops=False`` for tests that pass with unknown ops (they keep the
    types Paddle printed: shape specialization, grouping); those only get the marks of
    ``KNOWN_FAILURES``."""
    path = Path(path).resolve()
    folder = path if path.is_dir() else path.parent
    rel = folder.relative_to(FIXTURES.resolve()).as_posix()
    reasons = []
    missing = missing_ops(path) if needs_registered_ops else ()
    if missing:
        reasons.append("needs ops: " + ", ".join(missing))
    if (kind, rel) in KNOWN_FAILURES:
        reasons.append(KNOWN_FAILURES[(kind, rel)])
    return [pytest.mark.xfail(strict=True, reason="; ".join(reasons))] if reasons else []


def program_params(names: Iterable[str], kind: str = "", needs_registered_ops: bool = True) -> list:
    """``programs/<name>`` parameters, each with its xfail mark where it needs one."""
    return [
        pytest.param(
            name,
            marks=marks_for(FIXTURES / "programs" / name, kind, needs_registered_ops),
            id=name,
        )
        for name in names
    ]


def model_params(names: Iterable[str], kind: str = "") -> list:
    """``models/<name>`` parameters, each with its xfail mark where it needs one."""
    return [
        pytest.param(name, marks=marks_for(FIXTURES / "models" / name, kind), id=name)
        for name in names
    ]


def executable(path: Path) -> bool:
    """Whether every op of the fixture is registered (for tests that loop over many
    fixtures in one test)."""
    return not missing_ops(path)
