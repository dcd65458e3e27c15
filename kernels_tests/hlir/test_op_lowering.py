"""Golden printed IR of lowered groups, and lowering's errors.

The goldens are the LOWERED FUNCTION form of the contract: arguments (inputs, then
outputs), the root block, one loop nest per stored tensor with iter vars bound to the
loop vars, read and write regions, simplified indices (a broadcast reads `x[i0, 0]`, a
reshape reads affine div/mod by constants), float16 computed in float32 and rounded
once per op.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import F16, F32, I32, Net, fused_group

from cinn_py.errors import ShapeError, UnsupportedOpError
from cinn_py.hlir.grouping import make_group
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import can_lower, lower_group
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.stmt import ArgIO
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program


def lowered(build, *, inline=True):
    program = Program()
    build(Net(program))
    return lower_group(fused_group(program), NameTable(program), inline=inline)


ADD_RELU = """\
function fn_group_0 (var_0, var_1, var_3)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 64)
    {
      serial for (i_1, 0, 128)
      {
        ScheduleBlock(var_3)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:64), i1_0(0:128)], var_1[i0_0(0:64), i1_0(0:128)])
          write_buffers(var_3[i0_0(0:64), i1_0(0:128)])
          var_3[i0_0, i1_0] = cinn_max((var_0[i0_0, i1_0] + var_1[i0_0, i1_0]), 0.00000000f)
        }
      }
    }
  }
}
"""

BROADCAST_ADD = """\
function fn_group_0 (var_0, var_1, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 64)
    {
      serial for (i_1, 0, 128)
      {
        ScheduleBlock(var_2)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:64), var_0_d1(0:1)], var_1[i0_0(0:64), i1_0(0:128)])
          write_buffers(var_2[i0_0(0:64), i1_0(0:128)])
          var_2[i0_0, i1_0] = (var_0[i0_0, 0] + var_1[i0_0, i1_0])
        }
      }
    }
  }
}
"""

TRANSPOSE = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 5)
    {
      serial for (i_1, 0, 2)
      {
        serial for (i_2, 0, 3)
        {
          ScheduleBlock(var_1)
          {
            i0_0, i1_0, i2_0 = axis.bind(i_0, i_1, i_2)
            read_buffers(var_0[i1_0(0:2), i2_0(0:3), i0_0(0:5)])
            write_buffers(var_1[i0_0(0:5), i1_0(0:2), i2_0(0:3)])
            var_1[i0_0, i1_0, i2_0] = var_0[i1_0, i2_0, i0_0]
          }
        }
      }
    }
  }
}
"""

RESHAPE = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 128)
    {
      serial for (i_1, 0, 64)
      {
        ScheduleBlock(var_1)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[var_0_d0(0:64), var_0_d1(0:128)])
          write_buffers(var_1[i0_0(0:128), i1_0(0:64)])
          var_1[i0_0, i1_0] = var_0[(((i0_0 * 64) + i1_0) / 128), (((i0_0 * 64) + i1_0) % 128)]
        }
      }
    }
  }
}
"""

CONCAT = """\
function fn_group_0 (var_0, var_1, var_3)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 7)
    {
      serial for (i_1, 0, 8)
      {
        ScheduleBlock(var_3)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:7), i1_0(0:8)], var_1[i0_0(0:7), var_1_d1(0:5)])
          write_buffers(var_3[i0_0(0:7), i1_0(0:8)])
          var_3[i0_0, i1_0] = select((i1_0 < 3), var_0[i0_0, i1_0], var_1[i0_0, (i1_0 - 3)])
        }
      }
    }
  }
}
"""

FLOAT16_EXP = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 7)
    {
      serial for (i_1, 0, 33)
      {
        ScheduleBlock(var_1)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:7), i1_0(0:33)])
          write_buffers(var_1[i0_0(0:7), i1_0(0:33)])
          var_1[i0_0, i1_0] = float16(exp(float32(var_0[i0_0, i1_0])))
        }
      }
    }
  }
}
"""

STORED_EXP_RELU = """\
function fn_group_0 (var_0, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 7)
    {
      serial for (i_1, 0, 33)
      {
        ScheduleBlock(var_1)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:7), i1_0(0:33)])
          write_buffers(var_1[i0_0(0:7), i1_0(0:33)])
          var_1[i0_0, i1_0] = float16(exp(float32(var_0[i0_0, i1_0])))
        }
      }
    }
    serial for (i_2, 0, 7)
    {
      serial for (i_3, 0, 33)
      {
        ScheduleBlock(var_2)
        {
          i0_1, i1_1 = axis.bind(i_2, i_3)
          read_buffers(var_1[i0_1(0:7), i1_1(0:33)])
          write_buffers(var_2[i0_1(0:7), i1_1(0:33)])
          var_2[i0_1, i1_1] = float16(cinn_max(float32(var_1[i0_1, i1_1]), 0.00000000f))
        }
      }
    }
  }
}
"""

SPLIT = """\
function fn_group_0 (var_0, var_2, var_3)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 4)
    {
      serial for (i_1, 0, 2)
      {
        ScheduleBlock(var_2)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:4), i1_0(0:2)])
          write_buffers(var_2[i0_0(0:4), i1_0(0:2)])
          var_2[i0_0, i1_0] = var_0[i0_0, i1_0]
        }
      }
    }
    serial for (i_2, 0, 4)
    {
      serial for (i_3, 0, 4)
      {
        ScheduleBlock(var_3)
        {
          i0_1, i1_1 = axis.bind(i_2, i_3)
          read_buffers(var_0[i0_1(0:4), var_0_d1(2:6)])
          write_buffers(var_3[i0_1(0:4), i1_1(0:4)])
          var_3[i0_1, i1_1] = var_0[i0_1, (i1_1 + 2)]
        }
      }
    }
  }
}
"""

ZERO_D = """\
function fn_group_0 (var_0, var_1, var_2)
ScheduleBlock(root)
{
  {
    ScheduleBlock(var_2)
    {
      read_buffers(var_0[], var_1[])
      write_buffers(var_2[])
      var_2[] = (var_0[] + var_1[])
    }
  }
}
"""


GOLDEN = {
    "add_relu": (
        lambda n: n.op(
            "relu", n.op("add", n.data("x", (64, 128), F32), n.data("y", (64, 128), F32))
        ),
        True,
        ADD_RELU,
    ),
    "broadcast_add": (
        lambda n: n.op("add", n.data("x", (64, 1), F32), n.data("y", (64, 128), F32)),
        True,
        BROADCAST_ADD,
    ),
    "transpose": (
        lambda n: n.op("transpose", n.data("x", (2, 3, 5), F32), perm=[2, 0, 1]),
        True,
        TRANSPOSE,
    ),
    "reshape": (
        lambda n: n.op("reshape", n.data("x", (64, 128), F32), n.ints([128, 64])),
        True,
        RESHAPE,
    ),
    "concat": (
        lambda n: n.op(
            "concat", n.vec([n.data("x", (7, 3), F32), n.data("y", (7, 5), F32)]), n.scalar(1, I32)
        ),
        True,
        CONCAT,
    ),
    "float16_exp": (lambda n: n.op("exp", n.data("x", (7, 33), F16)), True, FLOAT16_EXP),
    "stored_exp_relu": (
        lambda n: n.op("relu", n.op("exp", n.data("x", (7, 33), F16))),
        False,
        STORED_EXP_RELU,
    ),
    "split": (
        lambda n: n.unpack(
            n.op("split", n.data("x", (4, 6), F32), n.ints([2, 4]), n.scalar(1, I32))
        ),
        True,
        SPLIT,
    ),
    "zero_d": (lambda n: n.op("add", n.data("x", (), F32), n.data("y", (), F32)), True, ZERO_D),
}


@pytest.mark.parametrize("name", list(GOLDEN))
def test_golden_lowered_ir(name):
    build, inline, want = GOLDEN[name]
    assert print_ir(lowered(build, inline=inline)) + "\n" == want


def test_arguments_are_inputs_then_outputs_and_temps_are_listed():
    def build(n):
        x, y = n.data("x", (7, 33), F32), n.data("y", (33,), F32)
        e = n.op("exp", x)
        n.op("tanh", e)
        n.op("add", e, y)

    func = lowered(build)
    assert [(a.name, a.io) for a in func.args] == [
        ("var_0", ArgIO.INPUT),
        ("var_1", ArgIO.INPUT),
        ("var_3", ArgIO.OUTPUT),
        ("var_4", ArgIO.OUTPUT),
    ]
    assert func.name == "fn_group_0" and func.temp_buffers == ()
    stored = lowered(build, inline=False)
    assert [b.name for b in stored.temp_buffers] == ["var_2"]
    blocks = [
        nest.body.stmts[0].body.stmts[0].schedule_block
        for nest in stored.body.schedule_block.body.stmts
    ]
    assert [b.name for b in blocks] == ["var_2", "var_3", "var_4"]


def test_inlined_blocks_read_only_inputs_and_names_are_unique():
    def build(n):
        x = n.data("x", (4, 6), F32)
        first, second = n.unpack(n.op("split", x, n.ints([3, 3]), n.scalar(1, I32)))
        n.op("multiply", first, second)
        n.op("subtract", first, second)

    text = print_ir(lowered(build))
    assert "read_buffers(var_0[" in text and "read_buffers(var_4" not in text
    for name in ("i_0", "i_1", "i_2", "i_3", "i0_0", "i1_0", "i0_1", "i1_1"):
        assert text.count(f"({name}, 0,") + text.count(f" {name} = ") <= 1
    assert "(i1_1 + 3)" in text


def test_empty_output_gets_no_loop_nest():
    func = lowered(lambda n: n.op("full", shape=[0, 3], value=1.0, dtype=F32))
    assert [a.name for a in func.args] == ["var_0"]
    assert func.body.schedule_block.body.stmts == ()


def test_huge_tensors_index_in_int64():
    func = lowered(lambda n: n.op("relu", n.data("x", (65536, 32768), F32)))
    text = print_ir(func)
    assert "serial for (i_0, 0ll, 65536ll)" in text and "serial for (i_1, 0ll, 32768ll)" in text
    loop = func.body.schedule_block.body.stmts[0]
    assert loop.loop_var.dtype is DataType.INT64


# ---- errors -----------------------------------------------------------------------------


def _program(build):
    program = Program()
    build(Net(program))
    return program


def test_op_without_lowering_is_a_library_op():
    program = _program(lambda n: n.op("softmax", n.data("x", (4, 8), F32), axis=-1))
    softmax = program.block.ops[-1]
    assert not can_lower(softmax)  # the default passes decompose it before lowering
    with pytest.raises(UnsupportedOpError, match=r"op 'pd_op.softmax' has no lowering \(op #1"):
        lower_group(make_group("group_0", [softmax], program), NameTable(program))


def test_unfolded_mutable_operand_is_not_lowered():
    def build(n):
        x = n.data("x", (4, 8), F32)
        shape = n.data("shape", (2,), DataType.INT64)
        n.op("reshape", x, shape)

    program = _program(build)
    reshape = program.block.ops[-1]
    assert not can_lower(reshape)
    with pytest.raises(
        UnsupportedOpError,
        match=r"op 'pd_op.reshape' has operand\(s\) shape computed at run time",
    ):
        lower_group(fused_group(program), NameTable(program))


def test_constant_mutable_operand_is_lowerable_once_folded():
    program = _program(lambda n: n.op("reshape", n.data("x", (4, 8), F32), n.ints([8, 4])))
    reshape = program.block.ops[-1]
    assert not can_lower(reshape)  # the constant is still an operand
    fused_group(program)  # runs the folding pass
    assert can_lower(reshape)


def test_arithmetic_on_bool_is_a_library_op():
    program = _program(
        lambda n: n.op("add", n.data("x", (3,), DataType.BOOL), n.data("y", (3,), DataType.BOOL))
    )
    add = program.block.ops[-1]
    assert not can_lower(add)
    with pytest.raises(UnsupportedOpError, match="has no lowering for these dtypes"):
        lower_group(fused_group(program), NameTable(program))


def test_glue_ops_are_lowerable():
    program = _program(
        lambda n: n.unpack(
            n.op("split_with_num", n.data("x", (4, 6), F32), n.scalar(1, I32), num=2)
        )
    )
    fused_group(program)
    assert all(can_lower(op) for op in program.block.ops[1:])
    assert [op.name for op in program.block.ops[1:]] == ["pd_op.split_with_num", "builtin.split"]


def test_dynamic_shape_is_a_shape_error_naming_the_op():
    program = _program(lambda n: n.op("exp", n.data("x", (-1, 8), F32)))
    group = fused_group(program)
    with pytest.raises(ShapeError, match=r"group_0: input %0 has dynamic dims \[-1, 8\]"):
        lower_group(group, NameTable(program))
    group.inputs = []
    with pytest.raises(
        ShapeError, match=r"pd_op.exp \(op #1\): result %1 has dynamic dims \[-1, 8\]"
    ):
        lower_group(group, NameTable(program))


def test_output_also_read_inside_the_group_is_recomputed_not_reloaded():
    program = Program()
    n = Net(program)
    x = n.data("x", (3, 4), F32)
    e = n.op("exp", x)
    added = n.op("add", e, x)
    n.op("tanh", e)  # outside the group: makes exp's result a group output
    PassManager().run(program)
    ops = [e.defining_op, added.defining_op]
    group = make_group("group_0", ops, program)
    names = NameTable(program)
    assert [names.printed(v) for v in group.outputs] == ["%1", "%2"]
    func = lower_group(group, names)
    text = print_ir(func)
    assert "var_2[i0_1, i1_1] = (exp(var_0[i0_1, i1_1]) + var_0[i0_1, i1_1])" in text
    xs = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    exp_out, add_out = np.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32)
    run_function(func, {"var_0": xs, "var_1": exp_out, "var_2": add_out})
    np.testing.assert_allclose(exp_out, np.exp(xs), rtol=1e-6)
    np.testing.assert_allclose(add_out, np.exp(xs) + xs, rtol=1e-6)
