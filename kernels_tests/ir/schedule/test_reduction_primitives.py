"""factorize_reduction and set_buffer: golden IR, values kept (interpreter), trace
replay, and every refusal with its message."""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager

ROW_SUM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[3,70],stop_gradient:[true]} : () -> tensor<3x70xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<3x70xf32>, tensor<1xi64>) -> tensor<3x1xf32>
    (%3) = "pd_op.divide" (%0, %2) {stop_gradient:[true]} : (tensor<3x70xf32>, tensor<3x1xf32>) -> tensor<3x70xf32>
}
"""  # noqa: E501

FACTORIZED = "Reduce(sum across threadIdx.x, Reduce(sum, select((((r_0_o * 32) + r_0_t) < 70), var_0[i0_0, ((r_0_o * 32) + r_0_t)], 0.00000000f),0.00000000f),0.00000000f)"  # noqa: E501


def lowered():
    program = parse_program(ROW_SUM)
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program))


def test_factorize_reduction_golden_and_same_values():
    func = lowered()
    sch = IRSchedule(func)
    sch.factorize_reduction("var_2_tmp", 32)
    text = print_ir(sch.func)
    assert f"var_2_tmp[i0_0, i1_0] = {FACTORIZED}" in text
    x = np.random.default_rng(1).uniform(0.5, 1.5, (3, 70)).astype(np.float32)
    before, after = np.zeros((3, 70), np.float32), np.zeros((3, 70), np.float32)
    run_function(func, {"var_0": x, "var_3": before})
    run_function(sch.func, {"var_0": x, "var_3": after})
    np.testing.assert_allclose(after, x / x.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(after, before, rtol=1e-6)  # another summation order only


def test_factorize_with_one_element_per_thread_has_no_partial_loop():
    sch = IRSchedule(lowered())
    sch.factorize_reduction("var_2_tmp", 128)
    text = print_ir(sch.func)
    assert "Reduce(sum across threadIdx.x, select((r_0_t < 70), var_0[i0_0, r_0_t]" in text
    assert "r_0_o" not in text


def test_set_buffer_local_after_binding_and_replay():
    func = lowered()
    sch = IRSchedule(func)
    (row,) = sch.get_loops("var_2_tmp")[:1]
    fused = sch.fuse(sch.get_loops("var_2_tmp"))
    sch.bind(fused, "blockIdx.x")
    sch.factorize_reduction("var_2_tmp", 32)
    outer, inner = sch.get_loops("var_3")
    sch.bind(outer, "blockIdx.x")
    _, lane = sch.split(inner, [3, 32])
    sch.bind(lane, "threadIdx.x")
    sch.set_buffer("var_2_tmp", "local")
    (temp,) = sch.func.temp_buffers
    assert temp.memory_type.value == "local"
    assert "set_buffer(block=var_2_tmp, memory_type=local)" in str(sch.trace)
    assert structural_equal(sch.trace.replay(func), sch.func)
    assert row.name == "i_0"


def test_set_buffer_local_refuses_a_read_at_another_row():
    sch = IRSchedule(lowered())
    sch.bind(sch.fuse(sch.get_loops("var_2_tmp")), "blockIdx.x")
    # the consumer's loops are not bound: its read of the temp depends on a serial loop
    with pytest.raises(ScheduleError) as error:
        sch.set_buffer("var_2_tmp", "local")
    assert str(error.value).endswith(
        "in block var_3, not only by bound GPU axes; a local buffer holds one element per thread"
    )
    assert "set_buffer" not in str(sch.trace)  # a failing primitive records nothing


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s: s.factorize_reduction("var_2_tmp", 48),
            "threads must be a power of two from 32 to 1024, got 48",
        ),
        (
            lambda s: s.factorize_reduction("var_2_tmp", 2048),
            "threads must be a power of two from 32 to 1024, got 2048",
        ),
        (
            lambda s: s.factorize_reduction("var_3", 32),
            "the block's value has no Reduce to factorize",
        ),
        (
            lambda s: (
                s.factorize_reduction("var_2_tmp", 32),
                s.factorize_reduction("var_2_tmp", 32),
            ),
            "the Reduce is already across threadIdx.x",
        ),
        (
            lambda s: (
                s.bind(s.get_loops("var_2_tmp")[0], "threadIdx.x"),
                s.factorize_reduction("var_2_tmp", 32),
            ),
            "the block is inside loop i_0, bound to threadIdx.x; a cross-thread reduction "
            "needs every thread of the block",
        ),
        (
            lambda s: s.set_buffer("var_2_tmp", "texture"),
            "unknown memory type 'texture' (expected one of global, shared, local)",
        ),
        (
            lambda s: (
                s.bind(s.fuse(s.get_loops("var_2_tmp")), "blockIdx.x"),
                s.set_buffer("var_2_tmp", "shared"),
            ),
            "block var_3 indexes dim 0 of buffer var_2_tmp without blockIdx, where "
            "var_2_tmp indexes it by blockIdx; a thread block sees only its own shared memory",
        ),
        (
            lambda s: s.set_buffer("var_3", "local"),
            "buffer var_3 is an argument of fn_group_0; only temp buffers change memory",
        ),
    ],
    ids=[
        "threads-not-power-of-two",
        "threads-too-many",
        "no-reduce",
        "already-across",
        "inside-thread-loop",
        "unknown-memory",
        "shared-read-by-another-block",
        "argument",
    ],
)
def test_refusals_name_the_block_and_why(call, message):
    sch = IRSchedule(lowered())
    with pytest.raises(ScheduleError) as error:
        call(sch)
    assert message in str(error.value)
