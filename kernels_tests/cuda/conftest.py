"""Fixtures of the CUDA kernel tests (cuda-emu and GPU).

This folder goes on sys.path so that tests can `import kernel_cases` (pytest runs with
--import-mode=importlib, which does not add it).  The tests compile into the shared
kernel cache, so a second run reuses the kernels: keys over the full source, flags,
compiler version and header digests, and entries verified against their seal before
use, mean a stale entry cannot be hit (kernels_tests/conftest.py says more).  Tests that
need a cold cache or look at its files take `private_cache`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kernel_cases  # noqa: E402

from cinn_py.backends import cuda_emu  # noqa: E402

ModuleGetter = Callable[[str], cuda_emu.EmuModule]
CompileFiles = Callable[..., ModuleGetter]


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
def emu_compile_files() -> CompileFiles:
    """`compile(files, **options) -> lookup(file) -> EmuModule`."""
    return _compile_files


@pytest.fixture(scope="session")
def emu_modules(emu_compile_files: CompileFiles) -> ModuleGetter:
    """Every file of kernel_cases.CASES, plus diagnostics.cu, for the in-process emulator."""
    return emu_compile_files([*kernel_cases.FILES, "diagnostics.cu"], check=False)
