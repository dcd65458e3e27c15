"""Golden printed IR before and after each schedule primitive, on hand-built functions
in op lowering's shape."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from schedule_funcs import (
    broadcast_consumer,
    elementwise_2d,
    elementwise_3d,
    producer_consumer,
    producer_transpose,
    reduce_expr,
    scalar_0d,
    scalar_chain,
    two_consumers,
    two_producers,
)

from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule

GOLDEN: dict[str, tuple[Callable, Callable[[IRSchedule], object], str]] = {
    "before_2d": (
        elementwise_2d,
        lambda sch: None,
        """\
function fn_ew2d (var_0, var_1, var_2)
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
          read_buffers(var_0[i0_0(0:64), i1_0(0:128)], var_1[i0_0(0:64), i1_0(0:128)])
          write_buffers(var_2[i0_0(0:64), i1_0(0:128)])
          {
            var_2[i0_0, i1_0] = (var_0[i0_0, i1_0] + var_1[i0_0, i1_0])
          }
        }
      }
    }
  }
}
""",
    ),
    "before_3d": (
        elementwise_3d,
        lambda sch: None,
        """\
function fn_ew3d (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 4)
    {
      serial for (i_1, 0, 8)
      {
        serial for (i_2, 0, 16)
        {
          ScheduleBlock(var_1)
          {
            i0_0, i1_0, i2_0 = axis.bind(i_0, i_1, i_2)
            read_buffers(var_0[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            write_buffers(var_1[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            {
              var_1[i0_0, i1_0, i2_0] = (var_0[i0_0, i1_0, i2_0] * 2.00000000f)
            }
          }
        }
      }
    }
  }
}
""",
    ),
    "before_0d": (
        scalar_0d,
        lambda sch: None,
        """\
function fn_0d (var_0, var_1)
ScheduleBlock(root)
{
  {
    ScheduleBlock(var_1)
    {
      read_buffers(var_0[])
      write_buffers(var_1[])
      {
        var_1[] = (var_0[] * 2.00000000f)
      }
    }
  }
}
""",
    ),
    "before_pc": (
        producer_consumer,
        lambda sch: None,
        """\
function fn_pc (var_0, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 32)
    {
      serial for (i_1, 0, 16)
      {
        ScheduleBlock(var_1)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:32), i1_0(0:16)])
          write_buffers(var_1[i0_0(0:32), i1_0(0:16)])
          {
            var_1[i0_0, i1_0] = exp(var_0[i0_0, i1_0])
          }
        }
      }
    }
    serial for (i_2, 0, 32)
    {
      serial for (i_3, 0, 16)
      {
        ScheduleBlock(var_2)
        {
          i0_1, i1_1 = axis.bind(i_2, i_3)
          read_buffers(var_1[i0_1(0:32), i1_1(0:16)], var_0[i0_1(0:32), i1_1(0:16)])
          write_buffers(var_2[i0_1(0:32), i1_1(0:16)])
          {
            var_2[i0_1, i1_1] = (var_1[i0_1, i1_1] + var_0[i0_1, i1_1])
          }
        }
      }
    }
  }
}
""",
    ),
    "split_inferred_inner": (
        elementwise_3d,
        lambda sch: sch.split("i_2", [2, -1]),
        """\
function fn_ew3d (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 4)
    {
      serial for (i_1, 0, 8)
      {
        serial for (i_2_0, 0, 2)
        {
          serial for (i_2_1, 0, 8)
          {
            ScheduleBlock(var_1)
            {
              i0_0, i1_0, i2_0 = axis.bind(i_0, i_1, ((i_2_0 * 8) + i_2_1))
              read_buffers(var_0[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
              write_buffers(var_1[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
              {
                var_1[i0_0, i1_0, i2_0] = (var_0[i0_0, i1_0, i2_0] * 2.00000000f)
              }
            }
          }
        }
      }
    }
  }
}
""",
    ),
    "split_three_over_extent": (
        elementwise_2d,
        lambda sch: sch.split("i_1", [3, -1, 8]),
        """\
function fn_ew2d (var_0, var_1, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 64)
    {
      serial for (i_1_0, 0, 3)
      {
        serial for (i_1_1, 0, 6)
        {
          serial for (i_1_2, 0, 8)
          {
            ScheduleBlock(var_2)
            {
              i0_0, i1_0 = axis.bind(i_0, (((i_1_0 * 48) + (i_1_1 * 8)) + i_1_2))
              read_buffers(var_0[i0_0(0:64), i1_0(0:128)], var_1[i0_0(0:64), i1_0(0:128)])
              write_buffers(var_2[i0_0(0:64), i1_0(0:128)])
              {
                var_2[i0_0, i1_0] = (var_0[i0_0, i1_0] + var_1[i0_0, i1_0])
              }
            }
          }
        }
      }
    }
  }
}
""",
    ),
    "split_one_factor": (
        elementwise_3d,
        lambda sch: sch.split("i_0", [-1]),
        """\
function fn_ew3d (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0_0, 0, 4)
    {
      serial for (i_1, 0, 8)
      {
        serial for (i_2, 0, 16)
        {
          ScheduleBlock(var_1)
          {
            i0_0, i1_0, i2_0 = axis.bind(i_0_0, i_1, i_2)
            read_buffers(var_0[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            write_buffers(var_1[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            {
              var_1[i0_0, i1_0, i2_0] = (var_0[i0_0, i1_0, i2_0] * 2.00000000f)
            }
          }
        }
      }
    }
  }
}
""",
    ),
    "fuse_all": (
        elementwise_3d,
        lambda sch: sch.fuse(sch.get_loops("var_1")),
        """\
function fn_ew3d (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0_i_1_i_2_fused, 0, 512)
    {
      ScheduleBlock(var_1)
      {
        i0_0, i1_0, i2_0 = axis.bind((i_0_i_1_i_2_fused / 128), ((i_0_i_1_i_2_fused / 16) % 8), (i_0_i_1_i_2_fused % 16))
        read_buffers(var_0[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
        write_buffers(var_1[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
        {
          var_1[i0_0, i1_0, i2_0] = (var_0[i0_0, i1_0, i2_0] * 2.00000000f)
        }
      }
    }
  }
}
""",
    ),
    "fuse_inner": (
        elementwise_3d,
        lambda sch: sch.fuse(["i_1", "i_2"]),
        """\
function fn_ew3d (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 4)
    {
      serial for (i_1_i_2_fused, 0, 128)
      {
        ScheduleBlock(var_1)
        {
          i0_0, i1_0, i2_0 = axis.bind(i_0, (i_1_i_2_fused / 16), (i_1_i_2_fused % 16))
          read_buffers(var_0[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
          write_buffers(var_1[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
          {
            var_1[i0_0, i1_0, i2_0] = (var_0[i0_0, i1_0, i2_0] * 2.00000000f)
          }
        }
      }
    }
  }
}
""",
    ),
    "fuse_after_split": (
        elementwise_2d,
        lambda sch: sch.fuse(sch.split("i_1", [4, 32])),
        """\
function fn_ew2d (var_0, var_1, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 64)
    {
      serial for (i_1_0_i_1_1_fused, 0, 128)
      {
        ScheduleBlock(var_2)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1_0_i_1_1_fused)
          read_buffers(var_0[i0_0(0:64), i1_0(0:128)], var_1[i0_0(0:64), i1_0(0:128)])
          write_buffers(var_2[i0_0(0:64), i1_0(0:128)])
          {
            var_2[i0_0, i1_0] = (var_0[i0_0, i1_0] + var_1[i0_0, i1_0])
          }
        }
      }
    }
  }
}
""",
    ),
    "reorder_swap_ends": (
        elementwise_3d,
        lambda sch: sch.reorder(["i_2", "i_0"]),
        """\
function fn_ew3d (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_2, 0, 16)
    {
      serial for (i_1, 0, 8)
      {
        serial for (i_0, 0, 4)
        {
          ScheduleBlock(var_1)
          {
            i0_0, i1_0, i2_0 = axis.bind(i_0, i_1, i_2)
            read_buffers(var_0[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            write_buffers(var_1[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            {
              var_1[i0_0, i1_0, i2_0] = (var_0[i0_0, i1_0, i2_0] * 2.00000000f)
            }
          }
        }
      }
    }
  }
}
""",
    ),
    "reorder_all": (
        elementwise_3d,
        lambda sch: sch.reorder(["i_1", "i_2", "i_0"]),
        """\
function fn_ew3d (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_1, 0, 8)
    {
      serial for (i_2, 0, 16)
      {
        serial for (i_0, 0, 4)
        {
          ScheduleBlock(var_1)
          {
            i0_0, i1_0, i2_0 = axis.bind(i_0, i_1, i_2)
            read_buffers(var_0[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            write_buffers(var_1[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            {
              var_1[i0_0, i1_0, i2_0] = (var_0[i0_0, i1_0, i2_0] * 2.00000000f)
            }
          }
        }
      }
    }
  }
}
""",
    ),
    "bind": (
        elementwise_2d,
        lambda sch: (sch.bind("i_0", "blockIdx.x"), sch.bind("i_1", "threadIdx.x")),
        """\
function fn_ew2d (var_0, var_1, var_2)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0, 0, 64)
    {
      thread_bind[threadIdx.x] for (i_1, 0, 128)
      {
        ScheduleBlock(var_2)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:64), i1_0(0:128)], var_1[i0_0(0:64), i1_0(0:128)])
          write_buffers(var_2[i0_0(0:64), i1_0(0:128)])
          {
            var_2[i0_0, i1_0] = (var_0[i0_0, i1_0] + var_1[i0_0, i1_0])
          }
        }
      }
    }
  }
}
""",
    ),
    "vectorize": (
        elementwise_2d,
        lambda sch: sch.vectorize(sch.split("i_1", [-1, 4])[1], 4),
        """\
function fn_ew2d (var_0, var_1, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 64)
    {
      serial for (i_1_0, 0, 32)
      {
        vectorize[4] for (i_1_1, 0, 4)
        {
          ScheduleBlock(var_2)
          {
            i0_0, i1_0 = axis.bind(i_0, ((i_1_0 * 4) + i_1_1))
            read_buffers(var_0[i0_0(0:64), i1_0(0:128)], var_1[i0_0(0:64), i1_0(0:128)])
            write_buffers(var_2[i0_0(0:64), i1_0(0:128)])
            {
              var_2[i0_0, i1_0] = (var_0[i0_0, i1_0] + var_1[i0_0, i1_0])
            }
          }
        }
      }
    }
  }
}
""",
    ),
    "unroll": (
        elementwise_3d,
        lambda sch: sch.unroll("i_1"),
        """\
function fn_ew3d (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 4)
    {
      unroll for (i_1, 0, 8)
      {
        serial for (i_2, 0, 16)
        {
          ScheduleBlock(var_1)
          {
            i0_0, i1_0, i2_0 = axis.bind(i_0, i_1, i_2)
            read_buffers(var_0[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            write_buffers(var_1[i0_0(0:4), i1_0(0:8), i2_0(0:16)])
            {
              var_1[i0_0, i1_0, i2_0] = (var_0[i0_0, i1_0, i2_0] * 2.00000000f)
            }
          }
        }
      }
    }
  }
}
""",
    ),
    "compute_inline": (
        producer_consumer,
        lambda sch: sch.compute_inline("var_1"),
        """\
function fn_pc (var_0, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_2, 0, 32)
    {
      serial for (i_3, 0, 16)
      {
        ScheduleBlock(var_2)
        {
          i0_1, i1_1 = axis.bind(i_2, i_3)
          read_buffers(var_0[i0_1(0:32), i1_1(0:16)])
          write_buffers(var_2[i0_1(0:32), i1_1(0:16)])
          {
            var_2[i0_1, i1_1] = (exp(var_0[i0_1, i1_1]) + var_0[i0_1, i1_1])
          }
        }
      }
    }
  }
}
""",
    ),
    "compute_inline_transpose": (
        producer_transpose,
        lambda sch: sch.compute_inline("var_1"),
        """\
function fn_pt (var_0, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_2, 0, 32)
    {
      serial for (i_3, 0, 16)
      {
        ScheduleBlock(var_2)
        {
          i0_1, i1_1 = axis.bind(i_2, i_3)
          read_buffers(var_0[i1_1(0:16), i0_1(0:32)])
          write_buffers(var_2[i0_1(0:32), i1_1(0:16)])
          {
            var_2[i0_1, i1_1] = (exp(var_0[i1_1, i0_1]) * 2.00000000f)
          }
        }
      }
    }
  }
}
""",
    ),
    "compute_inline_broadcast": (
        broadcast_consumer,
        lambda sch: sch.compute_inline("var_1"),
        """\
function fn_bc (var_0, var_2, var_3)
ScheduleBlock(root)
{
  {
    serial for (i_1, 0, 8)
    {
      serial for (i_2, 0, 4)
      {
        ScheduleBlock(var_3)
        {
          i0_1, i1_1 = axis.bind(i_1, i_2)
          read_buffers(var_2[i0_1(0:8), i1_1(0:4)], var_0[i0_1(0:8)])
          write_buffers(var_3[i0_1(0:8), i1_1(0:4)])
          {
            var_3[i0_1, i1_1] = (exp(var_0[i0_1]) + var_2[i0_1, i1_1])
          }
        }
      }
    }
  }
}
""",
    ),
    "reverse_compute_inline": (
        producer_consumer,
        lambda sch: sch.reverse_compute_inline("var_2"),
        """\
function fn_pc (var_0, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 32)
    {
      serial for (i_1, 0, 16)
      {
        ScheduleBlock(var_1)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:32), i1_0(0:16)])
          write_buffers(var_2[i0_0(0:32), i1_0(0:16)])
          {
            var_2[i0_0, i1_0] = (exp(var_0[i0_0, i1_0]) + var_0[i0_0, i1_0])
          }
        }
      }
    }
  }
}
""",
    ),
    "reverse_compute_inline_transpose": (
        producer_transpose,
        lambda sch: sch.reverse_compute_inline("var_2"),
        """\
function fn_pt (var_0, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 16)
    {
      serial for (i_1, 0, 32)
      {
        ScheduleBlock(var_1)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:16), i1_0(0:32)])
          write_buffers(var_2[i1_0(0:32), i0_0(0:16)])
          {
            var_2[i1_0, i0_0] = (exp(var_0[i0_0, i1_0]) * 2.00000000f)
          }
        }
      }
    }
  }
}
""",
    ),
    "split_fused_then_bind": (
        elementwise_2d,
        lambda sch: sch.split(sch.fuse(sch.get_loops("var_2")), [-1, 256]),
        """\
function fn_ew2d (var_0, var_1, var_2)
ScheduleBlock(root)
{
  {
    serial for (i_0_i_1_fused_0, 0, 32)
    {
      serial for (i_0_i_1_fused_1, 0, 256)
      {
        ScheduleBlock(var_2)
        {
          i0_0, i1_0 = axis.bind((((i_0_i_1_fused_0 * 256) + i_0_i_1_fused_1) / 128), (i_0_i_1_fused_1 % 128))
          read_buffers(var_0[i0_0(0:64), i1_0(0:128)], var_1[i0_0(0:64), i1_0(0:128)])
          write_buffers(var_2[i0_0(0:64), i1_0(0:128)])
          {
            var_2[i0_0, i1_0] = (var_0[i0_0, i1_0] + var_1[i0_0, i1_0])
          }
        }
      }
    }
  }
}
""",
    ),
    "compute_inline_two_consumers": (
        two_consumers,
        lambda sch: sch.compute_inline("var_1"),
        """\
function fn_2c (var_0, var_2, var_3)
ScheduleBlock(root)
{
  {
    serial for (i_1, 0, 8)
    {
      ScheduleBlock(var_2)
      {
        i0_1 = axis.bind(i_1)
        read_buffers(var_0[i0_1(0:8)])
        write_buffers(var_2[i0_1(0:8)])
        {
          var_2[i0_1] = (exp(var_0[i0_1]) * 2.00000000f)
        }
      }
    }
    serial for (i_2, 0, 8)
    {
      ScheduleBlock(var_3)
      {
        i0_2 = axis.bind(i_2)
        read_buffers(var_0[i0_2(0:8)])
        write_buffers(var_3[i0_2(0:8)])
        {
          var_3[i0_2] = (exp(var_0[i0_2]) + var_0[i0_2])
        }
      }
    }
  }
}
""",
    ),
    "compute_inline_two_producers": (
        two_producers,
        lambda sch: (sch.compute_inline("var_1"), sch.compute_inline("var_2")),
        """\
function fn_2p (var_0, var_3)
ScheduleBlock(root)
{
  {
    serial for (i_4, 0, 8)
    {
      serial for (i_5, 0, 8)
      {
        ScheduleBlock(var_3)
        {
          i0_2, i1_2 = axis.bind(i_4, i_5)
          read_buffers(var_0[i0_2(0:8), i1_2(0:8)])
          write_buffers(var_3[i0_2(0:8), i1_2(0:8)])
          {
            var_3[i0_2, i1_2] = (exp(var_0[i0_2, i1_2]) - (var_0[i0_2, i1_2] * 3.00000000f))
          }
        }
      }
    }
  }
}
""",
    ),
    "compute_inline_into_reduction": (
        reduce_expr,
        lambda sch: sch.compute_inline("var_2"),
        """\
function fn_reduce (var_0, var_3)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 8)
    {
      ScheduleBlock(var_1)
      {
        i0_0 = axis.bind(i_0)
        read_buffers(var_0[i0_0(0:8), var_0_d1(0:4)])
        write_buffers(var_1[i0_0(0:8)])
        {
          var_1[i0_0] = Reduce(sum, var_0[i0_0, k_0],0.00000000f)
        }
      }
    }
    serial for (i_2, 0, 8)
    {
      ScheduleBlock(var_3)
      {
        i0_2 = axis.bind(i_2)
        read_buffers(var_0[i0_2(0:8), var_0_d1(0:4)], var_1[i0_2(0:8)])
        write_buffers(var_3[i0_2(0:8)])
        {
          var_3[i0_2] = Reduce(sum, ((var_1[i0_2] * 2.00000000f) * var_0[i0_2, k_1]),0.00000000f)
        }
      }
    }
  }
}
""",
    ),
    "compute_inline_0d": (
        scalar_chain,
        lambda sch: sch.compute_inline("var_1"),
        """\
function fn_0d_chain (var_0, var_2)
ScheduleBlock(root)
{
  {
    ScheduleBlock(var_2)
    {
      read_buffers(var_0[])
      write_buffers(var_2[])
      {
        var_2[] = ((var_0[] * 2.00000000f) + 1.00000000f)
      }
    }
  }
}
""",
    ),
    "reverse_compute_inline_0d": (
        scalar_chain,
        lambda sch: sch.reverse_compute_inline("var_2"),
        """\
function fn_0d_chain (var_0, var_2)
ScheduleBlock(root)
{
  {
    ScheduleBlock(var_1)
    {
      read_buffers(var_0[])
      write_buffers(var_2[])
      {
        var_2[] = ((var_0[] * 2.00000000f) + 1.00000000f)
      }
    }
  }
}
""",
    ),
}


@pytest.mark.parametrize("name", list(GOLDEN))
def test_golden(name: str) -> None:
    factory, schedule, expected = GOLDEN[name]
    func = factory()
    before = print_ir(func)
    sch = IRSchedule(func)
    schedule(sch)
    assert print_ir(sch.func) == expected.rstrip("\n")
    assert print_ir(func) == before  # the input function is never changed
