"""Every kernel the compiler generates for the GPU compiles with NVRTC, for sm_80 and sm_90.

The scheduled functions of every op case and every fixture program, scheduled for the
`cuda` target (the GPU's launch configuration, not the emulator's), are emitted into
one translation unit (kernels renamed apart) and compiled to CUBIN for both archs: one
NVRTC run per arch instead of one per program keeps this fast enough for CI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from op_cases import CASES

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.pir.passes.infer_shapes import DataDependentShape

FIXTURES = Path(__file__).parent.parent / "fixtures"
sys.path.insert(0, str(FIXTURES.parent.resolve()))
from fixture_ops import executable  # noqa: E402


def scheduled_functions(
    label: str, program, feed_shapes=None, feed_values=None
) -> list[LoweredFunc]:
    compiler = PIRCompiler(
        program, "cuda", arch="sm_90", feed_shapes=feed_shapes, feed_values=feed_values
    )
    stages = compiler.stages(until="scheduled")
    return [
        LoweredFunc(
            f"{label}_{k.scheduled.func.name}",
            k.scheduled.func.args,
            k.scheduled.func.body,
            k.scheduled.func.temp_buffers,
        )
        for k in stages.fused
    ]


@pytest.fixture(scope="module")
def every_kernel():
    funcs: list[LoweredFunc] = []
    for i, case in enumerate(CASES):
        program, _ = case.build()
        funcs += scheduled_functions(f"case{i}", program)
    # Fixtures with ops cinn_py does not know yet join once their ops are registered
    # (their own tests are strict xfails until then: kernels_tests/fixture_ops.py).
    programs = sorted((FIXTURES / "programs").glob("*/program.pir"))
    for i, path in enumerate(p for p in programs if executable(p)):
        with np.load(path.parent / "feeds.npz") as feeds:
            arrays = {name: feeds[name] for name in feeds.files}
        shapes = {name: array.shape for name, array in arrays.items()}
        values: dict[str, np.ndarray] = {}
        while True:
            try:
                funcs += scheduled_functions(f"fixture{i}", cinn_py.load(path), shapes, values)
                break
            except DataDependentShape as error:  # compiled per value of these feeds
                assert not set(error.feeds) <= set(values), error
                values.update({name: arrays[name] for name in error.feeds})
    return generate_cuda(funcs)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_generated_kernel_compiles_with_nvrtc(every_kernel, arch):
    assert len(every_kernel.kernels) > 600
    cubin = nvrtc.compile(every_kernel.source, arch, name="every_kernel.cu")
    assert cubin[:4] == b"\x7fELF"
    for kernel in every_kernel.kernels[:: max(1, len(every_kernel.kernels) // 50)]:
        assert kernel.name.encode() in cubin
