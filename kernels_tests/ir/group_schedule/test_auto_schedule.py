"""auto_schedule: golden IR of scheduled functions, their traces and launch numbers."""

from __future__ import annotations

import pytest
from auto_schedule_funcs import (
    Output,
    add_row_bias,
    copy_2d,
    lowered,
    negate_bool,
    scalar_and_vector,
    scalar_exp,
    scale,
    transpose,
    two_sizes,
)

from cinn_py.ir.expr import FloatImm, Load, Reduce, ReduceType, Var
from cinn_py.ir.group_schedule import ScheduleResult, TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.launch_config import LaunchConfig
from cinn_py.ir.printer import print_ir
from cinn_py.ir.stmt import For
from cinn_py.ir.visitor import Visitor, structural_equal
from cinn_py.pir.dtypes import DataType as D

CUDA = TargetInfo.cuda()
EMU = TargetInfo.cuda_emu()
F32, F16 = D.FLOAT32, D.FLOAT16


ELEMENTWISE_64x128 = """\
function fn_group_0 (var_0, var_1, var_2)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_i_1_fused_0, 0, 8)
    {
      thread_bind[threadIdx.x] for (i_0_i_1_fused_1, 0, 256)
      {
        vectorize[4] for (i_0_i_1_fused_2, 0, 4)
        ScheduleBlock(var_2)
        {
          i0_0, i1_0 = axis.bind(((((i_0_i_1_fused_0 * 1024) + (i_0_i_1_fused_1 * 4)) + i_0_i_1_fused_2) / 128), (((i_0_i_1_fused_1 * 4) + i_0_i_1_fused_2) % 128))
          read_buffers(var_0[i0_0(0:64), i1_0(0:128)], var_1[i1_0(0:128)])
          write_buffers(var_2[i0_0(0:64), i1_0(0:128)])
          var_2[i0_0, i1_0] = (var_0[i0_0, i1_0] + var_1[i1_0])
        }
      }
    }
  }
}"""


ODD_999 = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_0, 0, 4)
    {
      thread_bind[threadIdx.x] for (i_0_1, 0, 256)
      if ((((i_0_0 * 256) + i_0_1) < 999)) {
        ScheduleBlock(var_1)
        {
          i0_0 = axis.bind(((i_0_0 * 256) + i_0_1))
          read_buffers(var_0[i0_0(0:999)])
          write_buffers(var_1[i0_0(0:999)])
          var_1[i0_0] = (var_0[i0_0] * 2.00000000f)
        }
      }
    }
  }
}"""


FLOAT16_4096 = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (i_0_1, 0, 256)
      {
        vectorize[8] for (i_0_2, 0, 8)
        ScheduleBlock(var_1)
        {
          i0_0 = axis.bind((((i_0_0 * 2048) + (i_0_1 * 8)) + i_0_2))
          read_buffers(var_0[i0_0(0:4096)])
          write_buffers(var_1[i0_0(0:4096)])
          var_1[i0_0] = float16((float32(var_0[i0_0]) * 2.00000000f))
        }
      }
    }
  }
}"""


SCALAR_AND_VECTOR = """\
function fn_group_0 (var_0, var_1, var_2, var_3)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (var_2_block_x, 0, 1)
    {
      thread_bind[threadIdx.x] for (var_2_thread_x, 0, 1)
      ScheduleBlock(var_2)
      {
        read_buffers(var_0[])
        write_buffers(var_2[])
        var_2[] = (var_0[] * 3.00000000f)
      }
    }
    thread_bind[blockIdx.x] for (i_0_0, 0, 1)
    {
      thread_bind[threadIdx.x] for (i_0_1, 0, 32)
      {
        vectorize[4] for (i_0_2, 0, 4)
        if (((((i_0_0 * 128) + (i_0_1 * 4)) + i_0_2) < 100)) {
          ScheduleBlock(var_3)
          {
            i0_1 = axis.bind((((i_0_0 * 128) + (i_0_1 * 4)) + i_0_2))
            read_buffers(var_1[i0_1(0:100)], var_0[])
            write_buffers(var_3[i0_1(0:100)])
            var_3[i0_1] = (var_1[i0_1] + var_0[])
          }
        }
      }
    }
  }
}"""


GRID_STRIDE = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_i_1_fused_1, 0, 4096)
    {
      thread_bind[threadIdx.x] for (i_0_i_1_fused_2, 0, 256)
      {
        serial for (i_0_i_1_fused_0, 0, 2)
        {
          vectorize[4] for (i_0_i_1_fused_3, 0, 4)
          ScheduleBlock(var_1)
          {
            i0_0, i1_0 = axis.bind((((((i_0_i_1_fused_0 * 4194304) + (i_0_i_1_fused_1 * 1024)) + (i_0_i_1_fused_2 * 4)) + i_0_i_1_fused_3) / 2048), ((((i_0_i_1_fused_1 * 1024) + (i_0_i_1_fused_2 * 4)) + i_0_i_1_fused_3) % 2048))
            read_buffers(var_0[i0_0(0:4096), i1_0(0:2048)])
            write_buffers(var_1[i0_0(0:4096), i1_0(0:2048)])
            var_1[i0_0, i1_0] = var_0[i0_0, i1_0]
          }
        }
      }
    }
  }
}"""


def test_elementwise_64x128_float32_is_fused_and_vectorized_by_4_without_a_guard():
    result = auto_schedule(add_row_bias(), CUDA)
    assert print_ir(result.func) == ELEMENTWISE_64x128
    assert result.launch == LaunchConfig(threads=256, blocks=8, steps=1)
    assert str(result.trace) == (
        "fuse(loops=[i_0, i_1]) -> i_0_i_1_fused\n"
        "split(loop=i_0_i_1_fused, factors=[8, 256, 4]) -> "
        "[i_0_i_1_fused_0, i_0_i_1_fused_1, i_0_i_1_fused_2]\n"
        "bind(loop=i_0_i_1_fused_0, thread_axis=blockIdx.x)\n"
        "bind(loop=i_0_i_1_fused_1, thread_axis=threadIdx.x)\n"
        "vectorize(loop=i_0_i_1_fused_2, factor=4)"
    )


def test_odd_extent_is_scalar_and_guarded():
    result = auto_schedule(scale(999), CUDA)
    assert print_ir(result.func) == ODD_999
    assert result.launch == LaunchConfig(threads=256, blocks=4, steps=1)


def test_1000_elements_vectorize_and_the_guard_cuts_whole_vectors():
    text = print_ir(auto_schedule(scale(1000), CUDA).func)
    assert "thread_bind[blockIdx.x] for (i_0_0, 0, 1)" in text
    assert "thread_bind[threadIdx.x] for (i_0_1, 0, 256)" in text
    assert "vectorize[4] for (i_0_2, 0, 4)\n" in text
    assert "if (((((i_0_0 * 1024) + (i_0_1 * 4)) + i_0_2) < 1000)) {" in text


def test_float16_gets_8_lanes():
    result = auto_schedule(scale(4096, F16), CUDA)
    assert print_ir(result.func) == FLOAT16_4096
    assert "vectorize[8] for" in print_ir(auto_schedule(scale(4096, D.BFLOAT16), CUDA).func)


def test_bool_gets_16_lanes():
    text = print_ir(auto_schedule(negate_bool(), CUDA).func)
    assert "thread_bind[threadIdx.x] for (i_0_i_1_fused_1, 0, 32)" in text
    assert "vectorize[16] for (i_0_i_1_fused_2, 0, 16)" in text


def test_0d_output_alone_stays_unscheduled():
    func = scalar_exp()
    result = auto_schedule(func, CUDA)
    assert result.func is func
    assert len(result.trace) == 0
    assert result.launch is None


def test_0d_output_next_to_a_vector_runs_in_one_thread():
    result = auto_schedule(scalar_and_vector(), CUDA)
    assert print_ir(result.func) == SCALAR_AND_VECTOR


def test_two_outputs_of_different_sizes_share_the_launch_of_the_larger():
    result = auto_schedule(two_sizes(), CUDA)
    text = print_ir(result.func)
    first_nest = ELEMENTWISE_64x128.split("\n", 1)[1].rsplit("\n  }\n}", 1)[0]
    assert text.startswith("function fn_group_0 (var_0, var_1, var_2, var_3)\n" + first_nest)
    assert text.endswith("""\
    thread_bind[blockIdx.x] for (i_2_0, 0, 8)
    {
      thread_bind[threadIdx.x] for (i_2_1, 0, 256)
      {
        vectorize[8] for (i_2_2, 0, 8)
        if (((((i_2_0 * 2048) + (i_2_1 * 8)) + i_2_2) < 128)) {
          ScheduleBlock(var_3)
          {
            i0_1 = axis.bind((((i_2_0 * 2048) + (i_2_1 * 8)) + i_2_2))
            read_buffers(var_1[i0_1(0:128)])
            write_buffers(var_3[i0_1(0:128)])
            var_3[i0_1] = float16(var_1[i0_1])
          }
        }
      }
    }
  }
}""")
    assert result.launch == LaunchConfig(threads=256, blocks=8, steps=1)


def test_big_tensor_gets_a_grid_stride_loop_inside_the_bound_loops():
    """2M vectors: 2 passes of a grid of 4096 blocks (not the 4224 the grid may have:
    4096 cover the tensor exactly, so no step is partly idle and no guard is left)."""
    result = auto_schedule(copy_2d((4096, 2048)), CUDA)
    assert print_ir(result.func) == GRID_STRIDE
    assert result.launch == LaunchConfig(threads=256, blocks=4096, steps=2)
    assert str(result.trace).splitlines()[1:3] == [
        "split(loop=i_0_i_1_fused, factors=[2, 4096, 256, 4]) -> "
        "[i_0_i_1_fused_0, i_0_i_1_fused_1, i_0_i_1_fused_2, i_0_i_1_fused_3]",
        "reorder(loops=[i_0_i_1_fused_1, i_0_i_1_fused_2, i_0_i_1_fused_0])",
    ]
    uneven = auto_schedule(copy_2d((4095, 2047)), CUDA)  # scalars: 8,382,465 of them
    assert uneven.launch == LaunchConfig(threads=256, blocks=4094, steps=8)
    assert "if (" in print_ir(uneven.func)  # 4094 x 256 x 8 covers 2,047 elements more


def test_emulator_grid_strides_early_and_exactly():
    result = auto_schedule(copy_2d((64, 512)), EMU)
    assert result.launch == LaunchConfig(threads=256, blocks=8, steps=4)
    text = print_ir(result.func)
    assert "serial for (i_0_i_1_fused_0, 0, 4)" in text
    assert "if (" not in text  # 4 x 8 x 256 x 4 == 64 x 512


def test_empty_tensor_block_stays_a_serial_loop_of_no_iterations():
    func = lowered(
        [("var_0", (0, 4), F32), ("var_1", (10,), F32)],
        [
            Output("var_2", (0, 4), F32, lambda b, iv: Load(b["var_0"], iv)),
            Output("var_3", (10,), F32, lambda b, iv: Load(b["var_1"], iv)),
        ],
    )
    result = auto_schedule(func, CUDA)
    text = print_ir(result.func)
    assert "    serial for (i_0_i_1_fused, 0, 0)\n    ScheduleBlock(var_2)\n" in text
    assert "thread_bind[threadIdx.x] for (i_2_1, 0, 32)" in text
    assert result.launch == LaunchConfig(threads=32, blocks=1, steps=1)
    only_empty = lowered(
        [("var_0", (0, 4), F32)], [Output("var_2", (0, 4), F32, lambda b, iv: Load(b["var_0"], iv))]
    )
    assert auto_schedule(only_empty, CUDA).launch is None


def test_transpose_stays_on_the_flat_schedule():
    text = print_ir(auto_schedule(transpose(), CUDA).func)
    assert "var_1[i0_0, i1_0] = var_0[i1_0, i0_0]" in text
    assert "vectorize[4] for (i_0_i_1_fused_2, 0, 4)" in text


CASES = {
    "elementwise": add_row_bias,
    "odd": lambda: scale(999),
    "float16": lambda: scale(4096, F16),
    "scalar": scalar_exp,
    "scalar_and_vector": scalar_and_vector,
    "two_sizes": two_sizes,
    "grid_stride": lambda: copy_2d((4096, 2048)),
    "transpose": transpose,
}


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("target", [CUDA, EMU], ids=["cuda", "emu"])
def test_trace_replays_to_the_result(make, target):
    result: ScheduleResult = auto_schedule(make(), target)
    assert structural_equal(result.replay(make()), result.func)


@pytest.mark.parametrize("make", CASES.values(), ids=CASES.keys())
def test_every_bound_axis_has_one_extent_per_function(make):
    extents: dict[str, set[int]] = {}

    class Bound(Visitor):
        def visit_For(self, node: For) -> None:
            if node.bind_info is not None and node.extent.value != 1:
                extents.setdefault(node.bind_info.value, set()).add(node.extent.value)
            self.generic_visit(node)

    Bound().visit(auto_schedule(make(), CUDA).func)
    assert all(len(v) == 1 for v in extents.values()), extents


def _row_sum(rows: int, cols: int):
    k = Var("k", lower=0, upper=cols)
    return lowered(
        [("var_0", (rows, cols), F32)],
        [
            Output(
                "var_1",
                (rows,),
                F32,
                lambda b, iv: Reduce(
                    ReduceType.SUM, FloatImm(0.0), Load(b["var_0"], [iv[0], k]), [k]
                ),
            )
        ],
    )


def test_a_reduction_binds_its_spatial_loop_without_vectors():
    """One thread per output element; the reduce axis stays inside the Reduce node."""
    result = auto_schedule(_row_sum(1000, 8), CUDA)
    assert result.launch.threads == 256 and result.launch.blocks == 4
    text = print_ir(result.func)
    assert "vectorize" not in text
    assert "thread_bind[blockIdx.x] for (i_0_0, 0, 4)" in text
    assert "thread_bind[threadIdx.x] for (i_0_1, 0, 256)" in text
    assert "if ((((i_0_0 * 256) + i_0_1) < 1000))" in text
    assert "var_1[i0_0] = Reduce(sum, var_0[i0_0, k],0.00000000f)" in text
    assert str(result.trace).splitlines() == [
        "split(loop=i_0, factors=[4, 256]) -> [i_0_0, i_0_1]",
        "bind(loop=i_0_0, thread_axis=blockIdx.x)",
        "bind(loop=i_0_1, thread_axis=threadIdx.x)",
    ]


def test_a_reduction_to_a_scalar_is_left_to_one_thread():
    k = Var("k", lower=0, upper=8)
    func = lowered(
        [("var_0", (8,), F32)],
        [
            Output(
                "var_1",
                (),
                F32,
                lambda b, iv: Reduce(ReduceType.MAX, FloatImm(0.0), Load(b["var_0"], [k]), [k]),
            )
        ],
    )
    result = auto_schedule(func, CUDA)
    assert result.launch is None and result.func is func
