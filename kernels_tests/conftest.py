"""Test tiers: no-device tests run everywhere; `gpu` tests need CuPy and a CUDA device.

The kernel cache.  Tests compile into the user's kernel cache (`CINN_PY_CACHE_DIR`, else
~/.cache/cinn_py), so a second run, or a run after `cinn-py run`, reuses the kernels
the first one built; CI keeps ~/.cache between the runs of a session.  That is safe: a
key covers the full source, the compiler's flags and version and a digest of every
header it reads, and every entry is sealed with its key and a checksum and verified
before use, so a stale entry cannot be hit (it would need the same key) and a damaged
one is rebuilt.  A stale entry can neither hide a bug nor a fix.  Tests that need a
cold cache, count compiles, look at the cache's files or damage them take the
`private_cache` fixture (or their own temporary folder): the shared one changes under
them, since pytest-xdist's workers and other runs write into it concurrently.

The compiled-program cache is off in tests (`CINN_PY_CACHE=0`, set here for the test
processes and the commands they start, unless the environment sets it): its key covers
cinn_py's source files, not what a test monkeypatches, so a program another test
compiled would come back without the patched stage ever running.
`test_program_cache.py` turns it on, in private folders; `CINN_PY_CACHE=1 pytest
kernels_tests/test_compiled_fixtures.py`, run twice, sends every fixture through it.

Every schedule a program with -1 dims takes from its schedule cache is checked against
a fresh one (`CINN_PY_VERIFY_SCHEDULE_CACHE=1`, `driver.schedule_cache`): each symbolic
test run at several shapes is then also a test that the cache's guards are complete.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cinn_py.backends import cache, cuda_emu, emu_build

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")

os.environ.setdefault("CINN_PY_CACHE", "0")
os.environ.setdefault("CINN_PY_VERIFY_SCHEDULE_CACHE", "1")


@functools.cache
def gpu_available() -> tuple[bool, str]:
    try:
        import cupy
    except ImportError:
        return False, "CuPy is not installed (pip install -e '.[gpu]')"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy raises its own CUDARuntimeError types
        return False, f"no CUDA device: {error}"
    return (count > 0, "no CUDA device") if count == 0 else (True, "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ok, why = gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"gpu test: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _seed_precompiled_header(folder: Path) -> None:
    """Put the shared cache's precompiled header for the default flags into the cache
    `folder`: hard-linked where it can be (building it takes seconds, copying 30 MB per
    test adds up), else copied.  A test that changes it in place must replace the link
    by a copy of its own first, or it would damage the shared one."""
    options = emu_build.EmuOptions(context_switch=cuda_emu.default_context_switch())
    header = emu_build.precompiled_header(emu_build.gxx_flags(options))
    if header is None:
        return
    target = folder / header.gch.relative_to(cache.cache_dir())
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(header.gch, target)
    except OSError:
        shutil.copyfile(header.gch, target)


@pytest.fixture(scope="session")
def seed_precompiled_header() -> Callable[[Path], None]:
    """`seed(folder)`: the shared precompiled header in the cache `folder` (see
    `private_cache`), for fixtures of a wider scope."""
    return _seed_precompiled_header


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty kernel cache of the test's own (CINN_PY_CACHE_DIR), for tests that need a
    cold cache, count compiles or damage entries.  The emulator's precompiled header is
    linked in from the shared cache (`_seed_precompiled_header`), so only kernels are
    cold; tests of the header itself use a bare temporary folder."""
    folder = tmp_path / "cinn_py_cache"
    _seed_precompiled_header(folder)
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(folder))
    return folder
