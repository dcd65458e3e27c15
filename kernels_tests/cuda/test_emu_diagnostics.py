"""cuda-emu reports bad kernels instead of hanging, crashing or passing them.

The kernels are in kernels/diagnostics.cu (valid CUDA with deliberate bugs) or inline
where they are not valid CUDA for NVRTC (device assert without a header, a wrong launch).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from cinn_py.backends import cuda_emu
from cinn_py.errors import FeedError, KernelError


@pytest.fixture(scope="module")
def diagnostics(emu_modules) -> cuda_emu.EmuModule:
    return emu_modules("diagnostics.cu")


@pytest.fixture(scope="module")
def checked_diagnostics(emu_compile_files) -> cuda_emu.EmuModule:
    return emu_compile_files(["diagnostics.cu"], check=True)("diagnostics.cu")


def test_barrier_that_exited_threads_never_reach(diagnostics) -> None:
    with pytest.raises(KernelError) as error:
        diagnostics.launch(
            "barrier_after_exit", (2, 1, 1), (256, 1, 1), [np.zeros(256, np.float32)]
        )
    message = str(error.value)
    assert "kernel 'barrier_after_exit' block (0, 0, 0): deadlock" in message
    assert "32 wait at __syncthreads()" in message
    assert "224 exited" in message


def test_threads_waiting_at_different_barriers(diagnostics) -> None:
    with pytest.raises(KernelError) as error:
        diagnostics.launch(
            "mismatched_barriers", (1, 1, 1), (256, 1, 1), [np.zeros(256, np.float32)]
        )
    message = str(error.value)
    assert "16 wait at __syncwarp (mask 0xffffffff) (first: thread (16, 0, 0))" in message
    assert "240 wait at __syncthreads()" in message
    assert "no thread exited" in message


def test_shuffle_mask_without_the_calling_lane(diagnostics) -> None:
    with pytest.raises(KernelError, match=r"thread \(1, 0, 0\): __shfl_sync with mask 0x00000001"):
        diagnostics.launch("lane_outside_mask", (1, 1, 1), (32, 1, 1), [np.zeros(32, np.int32)])


def test_module_runs_again_after_a_failed_launch(diagnostics) -> None:
    """Fibers abandoned mid-kernel by a deadlock are re-created for the next launch."""
    with pytest.raises(KernelError):
        diagnostics.launch("barrier_after_exit", (1, 1, 1), (64, 1, 1), [np.zeros(64, np.float32)])
    out = np.zeros(256, np.float32)
    diagnostics.launch("write_past_end", (1, 1, 1), (255, 1, 1), [out, np.int32(256)])
    assert (out[:255] == 1).all() and out[255] == 0


def test_shared_memory_starts_as_garbage(diagnostics) -> None:
    out = np.zeros(256, np.float32)
    diagnostics.launch("read_unwritten_shared", (2, 1, 1), (256, 1, 1), [out])
    assert (out[0::2] == 1).all()
    assert np.isnan(out[1::2]).all()


def test_printf_output(diagnostics, capfd) -> None:
    diagnostics.launch("hello", (2, 1, 1), (32, 1, 1), [np.int32(7)])
    lines = capfd.readouterr().out.splitlines()
    assert lines == ["hello from block 0, tag 7", "hello from block 1, tag 7"]


def test_out_of_bounds_write_in_checking_mode(checked_diagnostics) -> None:
    out = np.zeros(100, np.float32)
    with pytest.raises(KernelError) as error:
        checked_diagnostics.launch("write_past_end", (1, 1, 1), (128, 1, 1), [out, np.int32(100)])
    message = str(error.value)
    assert message.startswith("kernel 'write_past_end' block (0, 0, 0) thread (100, 0, 0)")
    assert "0 bytes past the end of argument #0 (an array of 400 bytes)" in message
    assert "AddressSanitizer: heap-buffer-overflow" in message
    assert "in write_past_end kernel.cu:" in message


def test_shared_arrays_are_bounds_checked_in_checking_mode(checked_diagnostics) -> None:
    with pytest.raises(KernelError, match=r"index 64 out of bounds for type 'float \[64\]'"):
        checked_diagnostics.launch(
            "shared_past_end", (1, 1, 1), (65, 1, 1), [np.zeros(65, np.float32)]
        )
    with pytest.raises(KernelError, match="in dynamic shared memory, 256 bytes from its start"):
        checked_diagnostics.launch(
            "dynamic_shared_past_end", (1, 1, 1), (64, 1, 1), [np.zeros(64, np.float32)], 256
        )


def test_deadlock_in_checking_mode(checked_diagnostics) -> None:
    with pytest.raises(KernelError, match="32 wait at __syncthreads"):
        checked_diagnostics.launch(
            "barrier_after_exit", (1, 1, 1), (64, 1, 1), [np.zeros(64, np.float32)]
        )


def test_checking_mode_from_the_environment(monkeypatch, checked_diagnostics) -> None:
    monkeypatch.setenv("CINN_PY_EMU_CHECK", "1")
    module = cuda_emu.compile(checked_diagnostics.source)
    assert module.options.check and module.path == checked_diagnostics.path


ASSERTING = r"""
#include <assert.h>
extern "C" __global__ void positive(const int* x) {
    assert(x[threadIdx.x] >= 0);
}
extern "C" __global__ void trap(int* x) {
    if (threadIdx.x == 3) __trap();
    x[threadIdx.x] = 1;
}
"""


def test_device_assert_and_trap_fail_the_launch() -> None:
    module = cuda_emu.compile(ASSERTING)
    x = np.arange(64, dtype=np.int32)
    module.launch("positive", (1, 1, 1), (64, 1, 1), [x])
    x[5] = -1
    with pytest.raises(
        KernelError,
        match=r"thread \(5, 0, 0\): kernel.cu:4: .*assertion 'x\[threadIdx.x\] >= 0' failed",
    ):
        module.launch("positive", (1, 1, 1), (64, 1, 1), [x])
    with pytest.raises(KernelError, match=r"thread \(3, 0, 0\): the kernel called __trap\(\)"):
        module.launch("trap", (1, 1, 1), (64, 1, 1), [x])


def test_arguments_are_checked_against_the_kernel(diagnostics) -> None:
    out = np.zeros(8, np.float32)
    with pytest.raises(KernelError, match="takes 2 arguments, got 1"):
        diagnostics.launch("write_past_end", (1, 1, 1), (8, 1, 1), [out])
    with pytest.raises(
        KernelError,
        match=re.escape("argument #1: the kernel takes a 4-byte value, got a 8-byte value"),
    ):
        diagnostics.launch("write_past_end", (1, 1, 1), (8, 1, 1), [out, np.int64(8)])
    with pytest.raises(KernelError, match="argument #0: the kernel takes a pointer"):
        diagnostics.launch("write_past_end", (1, 1, 1), (8, 1, 1), [np.float32(1), np.int32(8)])
    with pytest.raises(FeedError):
        diagnostics.launch("write_past_end", (1, 1, 1), (8, 1, 1), [out, 8])


def test_launches_that_cuda_refuses(diagnostics) -> None:
    args = [np.zeros(8, np.float32), np.int32(8)]
    with pytest.raises(ValueError, match="no kernel 'missing'"):
        diagnostics.launch("missing", (1,), (8,), args)
    with pytest.raises(ValueError, match="exceeds CUDA's limits"):
        diagnostics.launch("write_past_end", (1,), (1025,), args)
    with pytest.raises(ValueError, match="exceeds CUDA's limits"):
        diagnostics.launch("write_past_end", (1, 65536), (8,), args)
    with pytest.raises(ValueError, match="shared_mem"):
        diagnostics.launch("write_past_end", (1,), (8,), args, shared_mem=300 * 1024)
