"""Every case of kernel_cases.py on cuda-emu, against its NumPy oracle.

In process for all of them; in checking mode (AddressSanitizer + UBSan) for a few files,
which shows that correct kernels, fiber stacks and shared memory raise no false reports.
"""

from __future__ import annotations

import kernel_cases
import numpy as np
import pytest
from kernel_cases import CASES, KernelCase, snapshot

from cinn_py.backends import cuda_emu

CHECKED_FILES = ("softmax.cu", "warp_intrinsics.cu", "dynamic_shared.cu", "atomics.cu", "fp16.cu")


def run_case(module: cuda_emu.EmuModule, case: KernelCase, seed: int = 0) -> list[str]:
    args = case.make_args(np.random.default_rng(seed))
    before = snapshot(args)
    module.launch(case.kernel, case.grid, case.block, args, shared_mem=case.shared_mem)
    return case.check(args, before)


@pytest.fixture(scope="module")
def checked_modules(emu_compile_files):
    return emu_compile_files(CHECKED_FILES, check=True)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_case(case: KernelCase, emu_modules) -> None:
    assert run_case(emu_modules(case.file), case) == []


@pytest.mark.parametrize(
    "case",
    [case for case in CASES if case.file in CHECKED_FILES],
    ids=[case.name for case in CASES if case.file in CHECKED_FILES],
)
def test_case_in_checking_mode(case: KernelCase, checked_modules) -> None:
    module = checked_modules(case.file)
    assert module.options.check
    assert run_case(module, case) == []


def test_case_table_is_consistent() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))
    for case in CASES:
        assert (kernel_cases.KERNEL_DIR / case.file).is_file(), case.name
        assert case.kernel in case.source(), case.name
        assert len(case.grid) == len(case.block) == 3, case.name


def test_ucontext_switch_gives_the_same_results() -> None:
    case = next(case for case in CASES if case.name == "warp_ops")
    module = cuda_emu.compile(case.source(), context_switch="ucontext")
    assert run_case(module, case) == []


def test_launches_of_growing_blocks_reuse_one_module(emu_modules) -> None:
    """Fibers made for one block size serve the next; a larger block adds fibers."""
    module = emu_modules("softmax.cu")
    x = np.random.default_rng(1).standard_normal((3, 700), dtype=np.float32)
    want = np.exp(x - x.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    for threads in (64, 1024, 32, 256):
        y = np.zeros_like(x)
        module.launch("softmax_rows", (3, 1, 1), (threads, 1, 1), [x, y, np.int32(700)])
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-7)


def test_small_stacks_and_no_optimisation() -> None:
    case = next(case for case in CASES if case.name == "transpose_tiled")
    module = cuda_emu.compile(case.source(), opt_level=0, stack_size=16 * 1024)
    assert run_case(module, case, seed=3) == []
