"""cache_write: golden IR, values kept (interpreter), trace replay, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import BlockRef, IRSchedule
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager

PROGRAM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[3,70],stop_gradient:[true]} : () -> tensor<3x70xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<3x70xf32>, tensor<1xi64>) -> tensor<3x1xf32>
}
"""  # noqa: E501

CACHED = """\
function fn_group_0 (var_0, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 3)
    {
      serial for (i_1, 0, 1)
      {
        ScheduleBlock(var_2)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:3), r_0(0:70)])
          write_buffers(var_2_tmp[i0_0(0:3), i1_0(0:1)])
          var_2_tmp[i0_0, i1_0] = Reduce(sum, var_0[i0_0, r_0],0.00000000f)
        }
      }
    }
    serial for (var_2_write_l0, 0, 3)
    serial for (var_2_write_l1, 0, 1)
    ScheduleBlock(var_2_write)
    {
      var_2_write_i0, var_2_write_i1 = axis.bind(var_2_write_l0, var_2_write_l1)
      read_buffers(var_2_tmp[var_2_write_i0(0:3), var_2_write_i1(0:1)])
      write_buffers(var_2[var_2_write_i0(0:3), var_2_write_i1(0:1)])
      var_2[var_2_write_i0, var_2_write_i1] = var_2_tmp[var_2_write_i0, var_2_write_i1]
    }
"""


def lowered():
    program = parse_program(PROGRAM)
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program))


def test_cache_write_golden_values_and_replay():
    func = lowered()
    sch = IRSchedule(func)
    assert sch.cache_write("var_2") == BlockRef("var_2_write")
    assert print_ir(sch.func).startswith(CACHED)
    (temp,) = sch.func.temp_buffers
    assert (temp.name, temp.memory_type.value) == ("var_2_tmp", "global")
    assert str(sch.trace) == "cache_write(block=var_2) -> var_2_write"
    assert structural_equal(sch.trace.replay(func), sch.func)
    x = np.random.default_rng(2).standard_normal((3, 70)).astype(np.float32)
    sums = np.zeros((3, 1), np.float32)
    run_function(sch.func, {"var_0": x, "var_2": sums})
    np.testing.assert_allclose(sums, x.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("var_0", "cache_write on block 'var_0': no such block in fn_group_0 (blocks: var_2)"),
        ("root", "cache_write on block 'root': the root block cannot be scheduled"),
    ],
)
def test_cache_write_refusals(block, message):
    sch = IRSchedule(lowered())
    with pytest.raises(ScheduleError) as error:
        sch.cache_write(block)
    assert str(error.value) == message
    assert "cache_write" not in str(sch.trace)


def test_cache_write_refuses_a_temp_and_a_buffer_another_block_reads():
    sch = IRSchedule(lowered())
    sch.cache_write("var_2")
    with pytest.raises(ScheduleError) as error:
        sch.cache_write("var_2")  # now stores the temp var_2_tmp, which var_2_write reads
    assert "buffer var_2_tmp is not an output argument of fn_group_0" in str(error.value)
