"""Workspace arguments (`ArgIO.WORKSPACE`): kernel memory that is no program value,
owned by the instruction (a grid reduction's partials and counters): allocated once,
zero-filled, aligned, reused by every run and left with zero counters; refused where no
kernel runs."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import CinnError
from cinn_py.ir.stmt import ArgIO
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program
from cinn_py.runtime.instruction import Workspace
from cinn_py.targets.memory import HOST_ALIGNMENT


def sum_and_max_all(shape=(129, 257)) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=DataType.FLOAT32)
    axes = b.op("pd_op.full_int_array", value=list(range(len(shape))))
    b.op("pd_op.sum", x, axes, keepdim=False, dtype=DataType.UNDEFINED)
    b.op("pd_op.max", x, axes, keepdim=False)
    return program


def test_the_instruction_owns_zeroed_aligned_workspace():
    exe = cinn_py.compile(sum_and_max_all(), target="cuda-emu")
    (kernel,) = exe.kernels
    assert kernel.workspace == (
        Workspace("var_2_partials", np.dtype(np.float32), (4,)),
        Workspace("var_3_partials", np.dtype(np.float32), (4,)),
        Workspace("fn_group_0_semaphore", np.dtype(np.int32), (1,)),
    )
    assert kernel.args[-3:] == tuple(w.name for w in kernel.workspace)
    x = np.random.default_rng(1).uniform(-1, 1, (129, 257)).astype(np.float32)
    first = exe.run({"x": x})
    arrays = [kernel.workspace_array(w, "cuda-emu") for w in kernel.workspace]
    for array in arrays:
        assert array.ctypes.data % HOST_ALIGNMENT == 0
    assert not arrays[-1].any()  # the last block reset the counter
    partials = arrays[0].copy()
    assert np.isclose(partials.astype(np.float64).sum(), x.astype(np.float64).sum(), rtol=1e-5)
    again = exe.run({"x": x})
    assert [kernel.workspace_array(w, "cuda-emu") for w in kernel.workspace][0] is arrays[0]
    for name in first:
        assert first[name].tobytes() == again[name].tobytes()
    other = exe.run({"x": -x})  # new data through the same workspace
    assert np.isclose(float(other["%2"]), -float(first["%2"]), rtol=1e-5)


def test_workspace_is_refused_where_no_kernel_runs():
    work = Workspace("w_partials", np.dtype(np.float32), (3, 2))
    with pytest.raises(CinnError, match="workspace w_partials: target 'reference' runs no kernels"):
        work.allocate("reference")
    array = work.allocate("cuda-emu")
    assert array.shape == (3, 2) and array.dtype == np.float32 and not array.any()


def test_printed_function_lists_its_workspace():
    from cinn_py.driver.pir_compiler import PIRCompiler

    stages = PIRCompiler(sum_and_max_all(), "cuda-emu").stages(until="scheduled")
    func = stages.fused[0].scheduled.func
    assert [a.io for a in func.args] == [ArgIO.INPUT, ArgIO.OUTPUT, ArgIO.OUTPUT] + [
        ArgIO.WORKSPACE
    ] * 3
    from cinn_py.ir.printer import print_ir

    assert print_ir(func).splitlines()[0] == (
        "function fn_group_0 (var_0, var_2, var_3; workspace var_2_partials float32[4], "
        "var_3_partials float32[4], fn_group_0_semaphore int32[1])"
    )
