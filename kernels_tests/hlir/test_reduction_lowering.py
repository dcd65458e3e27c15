"""Reductions: golden lowered / scheduled IR and CUDA for a sum over the last axis, the
grouping rule (a reduction is a FUSED group of its own), and the accumulation types.

Numbers for every reduction op, axis set, keepdim and dtype come from the case table
(`op_cases.py`), run by the interpreter, on cuda-emu and through NVRTC.
"""

from __future__ import annotations

import numpy as np
from op_cases import CASES, Net, fused_group

import cinn_py
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.hlir.group import GroupKind
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import can_lower, lower_group
from cinn_py.hlir.op_pattern import is_reduction
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.printer import print_ir
from cinn_py.ops.reduction import extreme_type, sum_type
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

F32, F16, F64 = DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64

LOWERED = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    serial for (i_0, 0, 7)
    {
      ScheduleBlock(var_1)
      {
        i0_0 = axis.bind(i_0)
        read_buffers(var_0[i0_0(0:7), r_0(0:33)])
        write_buffers(var_1[i0_0(0:7)])
        var_1[i0_0] = float16(Reduce(sum, float32(var_0[i0_0, r_0]),0.00000000f))
      }
    }
  }
}"""

SCHEDULED = """\
function fn_group_0 (var_0, var_1)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_0, 0, 1)
    {
      thread_bind[threadIdx.x] for (i_0_1, 0, 32)
      {
        if ((((i_0_0 * 32) + i_0_1) < 7)) {
          ScheduleBlock(var_1)
          {
            i0_0 = axis.bind(((i_0_0 * 32) + i_0_1))
            read_buffers(var_0[i0_0(0:7), r_0(0:33)])
            write_buffers(var_1[i0_0(0:7)])
            var_1[i0_0] = float16(Reduce(sum, float32(var_0[i0_0, r_0]),0.00000000f))
          }
        }
      }
    }
  }
}"""

CUDA = """\
extern "C" __global__ void __launch_bounds__(32) fn_group_0(const __half* __restrict__ var_0, __half* __restrict__ var_1) {
  const int i_0_0 = blockIdx.x;
  const int i_0_1 = threadIdx.x;
  if (((i_0_0 * 32) + i_0_1) < 7) {
    {
      const int i0_0 = (i_0_0 * 32) + i_0_1;
      float acc = 0.0f;
      for (int r_0 = 0; r_0 < 33; ++r_0) {
        const float v = __half2float(var_0[(i0_0 * 33) + r_0]);
        acc = acc + v;
      }
      var_1[i0_0] = __float2half_rn(acc);
    }
  }
}
"""


def test_sum_over_the_last_axis_golden():
    """float16 in, float32 accumulator, one rounding at the store."""
    case = next(c for c in CASES if c.id == "sum-f16-7x33-m1")
    program, _ = case.build()
    func = lower_group(fused_group(program), NameTable(program))
    assert print_ir(func) == LOWERED
    scheduled = auto_schedule(func, TargetInfo.cuda()).func
    assert print_ir(scheduled) == SCHEDULED
    source = generate_cuda([scheduled]).source
    assert source[source.index('extern "C"') :] == CUDA


def test_fused_softmax_reads_its_reductions_back_from_registers():
    """softmax in one group: each reduction is stored once (a temp block), scheduled as a
    block reduce, kept in a register, and read by the blocks after it."""
    case = next(c for c in CASES if c.id == "fused-softmax")
    program, _ = case.build()
    group = fused_group(program)
    func = lower_group(group, NameTable(program))
    temps = [b.name for b in func.temp_buffers]
    # the max (CSE merged the case's two equal ones), the exp (computed once), the sum
    assert len(temps) == 3
    schedule = auto_schedule(func, TargetInfo.cuda(), group.reduce_pattern)
    source = generate_cuda([schedule.func]).source
    body = source[source.index('extern "C"') :]
    assert body.count("cinn_block_reduce<32>(") == 2
    for name in (temps[0], temps[2]):
        assert f"float {name}[1];" in body
    assert f"float {temps[1]}_local[1];" in body  # the exp: one element a thread (9 <= 32)
    assert "for (int r_" not in body  # 9 elements a row, 32 threads: no partial loop


def _softmax_program() -> Program:
    program = Program()
    net = Net(program)
    x = net.data("x", (5, 9), F32)
    rowmax = net.op("max", x, net.ints([1]), keepdim=True)
    e = net.op("exp", net.op("subtract", x, rowmax))
    total = net.op("sum", e, net.ints([-1]), keepdim=True, dtype=DataType.UNDEFINED)
    net.op("divide", e, total)
    return program


def test_softmax_by_hand_is_one_fused_group_with_its_row_pattern():
    program = _softmax_program()
    PassManager().run(program)
    (group,) = group_program(program)
    assert group.kind is GroupKind.FUSED
    assert [op.name for op in group.ops] == [
        "pd_op.max",
        "pd_op.subtract",
        "pd_op.exp",
        "pd_op.sum",
        "pd_op.divide",
    ]
    assert (group.reduce_pattern.shape, group.reduce_pattern.axes) == ((5, 9), (1,))
    assert all(can_lower(op) for op in group.ops if is_reduction(op))


def test_softmax_compiles_to_kernels_only_and_matches():
    program = _softmax_program()
    x = np.random.default_rng(0).standard_normal((5, 9)).astype(np.float32)
    (want,) = run_reference(program, {"x": x})
    exe = cinn_py.compile(program, target="cuda-emu")
    assert all(g.kind is GroupKind.FUSED for g in exe.groups)
    (got,) = exe.run({"x": x}).values()
    assert compare(np.asarray(got), want).ok


def test_accumulation_types():
    assert sum_type(F16, F16) is F32 and sum_type(F32, F32) is F32
    assert sum_type(F32, F64) is F64 and sum_type(F32, DataType.INT32) is F64
    assert sum_type(DataType.INT32, DataType.INT64) is DataType.INT64
    assert sum_type(DataType.BOOL, DataType.INT64) is DataType.INT64
    assert extreme_type(DataType.BFLOAT16) is F32 and extreme_type(DataType.INT32) is DataType.INT32


# ---- one-element reduced dims (issue 14) --------------------------------------------------


def _size_one_program() -> Program:
    """min over axis 0 of [1, 4], unsqueezed back, times x, mean over axis 0 keepdim:
    it failed to compile (set_buffer refused a register read at `r * 4 + i`)."""
    program = Program()
    net = Net(program)
    x = net.data("x", (1, 4), F32)
    smallest = net.op("min", x, net.ints([0]), keepdim=False)
    product = net.op("multiply", net.op("unsqueeze", smallest, net.ints([0])), x)
    net.op("mean", product, net.ints([0]), keepdim=True)
    return program


def test_a_reduced_dim_of_one_element_gets_no_axis() -> None:
    program = Program()
    net = Net(program)
    net.op("sum", net.data("x", (1, 5, 3), F32), net.ints([0, 1]), keepdim=False)
    group = fused_group(program)
    text = print_ir(lower_group(group, NameTable(program)))
    assert "Reduce(sum, var_0[0, r_0, i0_0],0.00000000f)" in text
    program = Program()
    net = Net(program)
    net.op("min", net.data("x", (1, 4), F32), net.ints([0]), keepdim=False)
    text = print_ir(lower_group(fused_group(program), NameTable(program)))
    assert "Reduce" not in text
    assert "var_1[i0_0] = var_0[0, i0_0]" in text


def test_a_one_element_reduction_read_back_compiles_and_matches() -> None:
    program = _size_one_program()
    x = np.array([[1.5, -2.0, 3.25, 4.0]], np.float32)
    (want,) = run_reference(program, {"x": x})
    (got,) = cinn_py.compile(program, target="cuda-emu").run({"x": x}).values()
    np.testing.assert_array_equal(got, want)
