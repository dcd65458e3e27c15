"""Fixtures of the runtime tests: a compile cache private to the session, so a stale
entry can neither hide a bug nor a fix."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def runtime_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("cinn_py_runtime_cache")
    previous = os.environ.get("CINN_PY_CACHE_DIR")
    os.environ["CINN_PY_CACHE_DIR"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("CINN_PY_CACHE_DIR", None)
    else:
        os.environ["CINN_PY_CACHE_DIR"] = previous
