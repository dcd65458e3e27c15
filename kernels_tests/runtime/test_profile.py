"""`RuntimeProgram.profile_steps` (`cinn-py run --profile`): on cuda-emu the host's clock
around each instruction; on cuda a pair of CUDA events around each launch on CuPy's
current stream, read after the stream drains, against a recording stand-in for CuPy (CI
has no GPU; the real events run under `gpu`)."""

from __future__ import annotations

import contextlib
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from cinn_py.cli_report import profile_table
from cinn_py.runtime.instruction import Instruction
from cinn_py.runtime.runtime_program import RuntimeProgram, StepTime
from cinn_py.targets.device import gpu_available


class FakeGpu:
    """CuPy's stream, events and elapsed time, on a clock that only kernels advance."""

    def __init__(self, kernel_ms: float) -> None:
        self.kernel_ms = kernel_ms
        self.clock = 0.0
        self.calls: list[str] = []
        stream = types.SimpleNamespace(synchronize=lambda: self.calls.append("sync"))
        gpu = self

        class Event:
            def record(self, on):
                assert on is stream
                self.at = gpu.clock
                gpu.calls.append("record")

        self.module = types.ModuleType("cupy")
        self.module.cuda = types.SimpleNamespace(
            get_current_stream=lambda: stream,
            Event=Event,
            get_elapsed_time=lambda start, end: end.at - start.at,
        )

    def prepare(self, name, grid, block, args, shared_mem=0):
        def launch(stream):
            self.calls.append(f"launch {name}")
            self.clock += self.kernel_ms

        return launch

    def launch(self, name, grid, block, args, shared_mem=0):
        self.prepare(name, grid, block, args, shared_mem)(None)

    def bound(self, stream=None):
        return contextlib.nullcontext()


class Variable:
    def __init__(self) -> None:
        self.array = np.zeros(4, np.float32)


class FakeScope:
    def __init__(self, target: str) -> None:
        self.target = target

    def __getitem__(self, name: str) -> Variable:
        return Variable()


class HostStep:
    """A library op's place in the instruction list."""

    group = "group_1"
    op = types.SimpleNamespace(name="pd_op.matmul")
    call = types.SimpleNamespace(where="reference kernel, host, with copies")

    def __init__(self, gpu: FakeGpu) -> None:
        self.gpu = gpu

    def run(self, scope) -> None:
        self.gpu.calls.append("library")

    def __str__(self) -> str:
        return "library pd_op.matmul (group_1)"


def program(gpu: FakeGpu) -> RuntimeProgram:
    kernel = Instruction(
        "group_0", gpu, "fn_group_0", (8, 1, 1), (256, 1, 1), 0, ("var_0", "var_1"), ("var_1",)
    )
    tail = Instruction("group_2", gpu, "fn_group_2", (1, 1, 1), (32, 1, 1), 64, ("var_1",))
    return RuntimeProgram([kernel, HostStep(gpu), tail])


def test_cuda_kernels_are_timed_by_events_on_the_current_stream(monkeypatch):
    gpu = FakeGpu(kernel_ms=2.5)
    monkeypatch.setitem(sys.modules, "cupy", gpu.module)
    times = program(gpu).profile_steps(FakeScope("cuda"))
    assert [(str(t.step).split("(")[0], t.clock) for t in times] == [
        ("fn_group_0<<<", "gpu"),
        ("library pd_op.matmul ", "cpu"),
        ("fn_group_2<<<", "gpu"),
    ]
    assert times[0].seconds == pytest.approx(2.5e-3) and times[2].seconds == pytest.approx(2.5e-3)
    assert gpu.calls == [
        "sync",  # nothing queued before counts
        "record",
        "launch fn_group_0",
        "record",
        "sync",  # the library op waits for the kernels before it, outside its own time
        "library",
        "sync",
        "record",
        "launch fn_group_2",
        "record",
        "sync",  # the events are read once the stream has drained
    ]


def test_cuda_emu_steps_are_timed_on_the_host(monkeypatch):
    gpu = FakeGpu(kernel_ms=2.5)
    monkeypatch.setitem(sys.modules, "cupy", None)  # never imported for cuda-emu
    times = program(gpu).profile_steps(FakeScope("cuda-emu"))
    assert [t.clock for t in times] == ["cpu", "cpu", "cpu"]
    assert all(t.seconds >= 0 for t in times)
    assert gpu.calls == ["launch fn_group_0", "library", "launch fn_group_2"]


def test_profile_table_names_the_clock_and_each_launch():
    gpu = FakeGpu(kernel_ms=0)
    steps = program(gpu).instructions
    times = [StepTime(steps[0], 2.5e-3, "gpu"), StepTime(steps[1], 4e-4, "cpu")]
    times.append(StepTime(steps[2], 1.25, "gpu"))
    assert profile_table(times, "cuda") == (
        "profile (cuda; kernels: GPU time from CUDA events):\n"
        "  group_0  fn_group_0  grid (8, 1, 1) block (256, 1, 1)  dynamic shared 0 B    2.50 ms\n"
        "  group_1  library pd_op.matmul (reference kernel, host, with copies)           400 us\n"
        "  group_2  fn_group_2  grid (1, 1, 1) block (32, 1, 1)  dynamic shared 64 B    1.250 s\n"
        "  total                                                                        1.253 s\n"
    )
    emulated = profile_table(times[:1], "cuda-emu")
    assert emulated.startswith("profile (cuda-emu; kernels: emulated: CPU time, not GPU time):\n")


@pytest.mark.gpu
@pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and CuPy")
def test_cuda_profile_of_a_compiled_program():
    import cinn_py

    root = Path(__file__).resolve().parents[2]
    exe = cinn_py.compile(cinn_py.load(root / "examples" / "softmax.pir"), "cuda")
    exe.run({"x": np.ones((64, 128), np.float32)})
    times = exe.runtime_program.profile_steps()
    assert [t.clock for t in times] == ["gpu"] and 0 < times[0].seconds < 1
