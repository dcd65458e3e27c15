"""Fixtures of the CUDA kernel tests (cuda-emu and GPU).

This folder goes on sys.path so that tests can `import kernel_cases` (pytest runs with
--import-mode=importlib, which does not add it).  Every test here compiles into a cache
folder private to the session (CINN_PY_CACHE_DIR), so runs are hermetic: a stale entry
in ~/.cache/cinn_py can neither hide a bug nor a fix.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kernel_cases  # noqa: E402

from cinn_py.backends import cuda_emu  # noqa: E402

ModuleGetter = Callable[[str], cuda_emu.EmuModule]
CompileFiles = Callable[..., ModuleGetter]


@pytest.fixture(scope="session", autouse=True)
def cinn_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("cinn_py_cache")
    previous = os.environ.get("CINN_PY_CACHE_DIR")
    os.environ["CINN_PY_CACHE_DIR"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("CINN_PY_CACHE_DIR", None)
    else:
        os.environ["CINN_PY_CACHE_DIR"] = previous


def _compile_files(files: Sequence[str], **options: object) -> ModuleGetter:
    """Compile kernel files for cuda-emu in parallel (g++ runs are independent).

    Returns a lookup by file name; a file that failed to compile raises its error there,
    so that only the tests that need it fail.
    """

    def build(file: str) -> cuda_emu.EmuModule | Exception:
        try:
            return cuda_emu.compile((kernel_cases.KERNEL_DIR / file).read_text(), **options)
        except Exception as error:  # raised again by the lookup below
            return error

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        modules = dict(zip(files, pool.map(build, files), strict=True))

    def lookup(file: str) -> cuda_emu.EmuModule:
        module = modules[file]
        if isinstance(module, Exception):
            raise module
        return module

    return lookup


@pytest.fixture(scope="session")
def emu_compile_files(cinn_cache_dir: Path) -> CompileFiles:
    """`compile(files, **options) -> lookup(file) -> EmuModule`, into the session's cache."""
    return _compile_files


@pytest.fixture(scope="session")
def emu_modules(emu_compile_files: CompileFiles) -> ModuleGetter:
    """Every file of kernel_cases.CASES, plus diagnostics.cu, for the in-process emulator."""
    return emu_compile_files([*kernel_cases.FILES, "diagnostics.cu"], check=False)
