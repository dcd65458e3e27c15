"""Scheduled functions through codegen on cuda-emu: every case of the interpreter test,
rendered into one source (one g++ compile), launched with the configuration codegen
derives from the bound loops, and compared bit for bit with the interpreted lowered
function."""

from __future__ import annotations

import numpy as np
from auto_schedule_funcs import CASES, inputs_for, run_interpreted

from cinn_py.backends import cuda_emu
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.ir.group_schedule import auto_schedule
from cinn_py.ir.interpreter import storage_dtype
from cinn_py.ir.stmt import ArgIO, LoweredFunc


def test_scheduled_kernels_match_the_interpreter_on_cuda_emu():
    lowered = {}
    for name, case in CASES.items():
        func = case.make()
        lowered[name] = LoweredFunc(f"fn_{name}", func.args, func.body)
    scheduled = [auto_schedule(lowered[name], CASES[name].target).func for name in CASES]
    source = generate_cuda(scheduled)
    module = cuda_emu.compile(source.source)
    for name, kernel in zip(CASES, source.kernels, strict=True):
        inputs = inputs_for(lowered[name], np.random.default_rng(0))
        want = run_interpreted(lowered[name], inputs)
        args, outputs = [], {}
        for arg in kernel.args:
            if arg.io is ArgIO.INPUT:
                args.append(inputs[arg.name])
                continue
            like = want[arg.name]
            fill = np.nan if storage_dtype(arg.value.dtype).kind == "f" else 1
            outputs[arg.name] = np.full(like.shape, fill, like.dtype)
            args.append(outputs[arg.name])
        module.launch(kernel.name, kernel.grid, kernel.block, args, kernel.shared_mem)
        for out, value in outputs.items():
            np.testing.assert_array_equal(value, want[out], err_msg=f"{name}: {out}")
