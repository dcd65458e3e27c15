"""Every kernel the compiler generates for the GPU compiles with NVRTC, for sm_80 and sm_90.

The scheduled functions of every op case and every fixture program, scheduled for the
`cuda` target (the GPU's launch configuration, not the emulator's), are emitted into
one translation unit (kernels renamed apart) and compiled to CUBIN for both archs: one
NVRTC run per arch instead of one per program keeps this fast enough for CI.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from op_cases import CASES

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.hlir.pir_compiler import PIRCompiler
from cinn_py.ir.stmt import LoweredFunc

FIXTURES = Path(__file__).parent.parent / "fixtures"


def scheduled_functions(label: str, program, feed_shapes=None) -> list[LoweredFunc]:
    compiler = PIRCompiler(program, "cuda", arch="sm_90", feed_shapes=feed_shapes)
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
    for i, path in enumerate(sorted((FIXTURES / "programs").glob("*/program.pir"))):
        with np.load(path.parent / "feeds.npz") as feeds:
            shapes = {name: feeds[name].shape for name in feeds.files}
        funcs += scheduled_functions(f"fixture{i}", cinn_py.load(path), shapes)
    return generate_cuda(funcs)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_generated_kernel_compiles_with_nvrtc(every_kernel, arch):
    assert len(every_kernel.kernels) > 600
    cubin = nvrtc.compile(every_kernel.source, arch, name="every_kernel.cu")
    assert cubin[:4] == b"\x7fELF"
    for kernel in every_kernel.kernels[:: max(1, len(every_kernel.kernels) // 50)]:
        assert kernel.name.encode() in cubin
