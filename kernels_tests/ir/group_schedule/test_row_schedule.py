"""The row schedule of reduction groups: its trace (golden), the launch, when it is
chosen, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.group_schedule import RowPattern, TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.reduce_schedule import threads_for, wants_row_schedule
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager

SOFTMAX = """{{
    (%0) = "pd_op.data" () {{dtype:float32,name:"x",place:Place(undefined:0),shape:[{r},{c}],stop_gradient:[true]}} : () -> tensor<{r}x{c}xf32>
    (%1) = "pd_op.softmax" (%0) {{axis:-1,stop_gradient:[true]}} : (tensor<{r}x{c}xf32>) -> tensor<{r}x{c}xf32>
}}
"""  # noqa: E501

ROW_SUM = """{{
    (%0) = "pd_op.data" () {{dtype:float32,name:"x",place:Place(undefined:0),shape:[{r},{c}],stop_gradient:[true]}} : () -> tensor<{r}x{c}xf32>
    (%1) = "pd_op.full_int_array" () {{dtype:int64,place:Place(cpu),stop_gradient:[true],value:[{axis}]}} : () -> tensor<1xi64>
    (%2) = "pd_op.sum" (%0, %1) {{dtype:Undefined,keepdim:false,stop_gradient:[true]}} : (tensor<{r}x{c}xf32>, tensor<1xi64>) -> tensor<{out}xf32>
}}
"""  # noqa: E501


def lowered(text: str):
    program = parse_program(text)
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program)), group.reduce_pattern


SOFTMAX_TRACE = """\
fuse(loops=[i_0, i_1]) -> i_0_i_1_fused
bind(loop=i_0_i_1_fused, thread_axis=blockIdx.x)
factorize_reduction(block=var_1_tmp, threads=128, thread_axis=threadIdx.x)
fuse(loops=[i_2, i_3]) -> i_2_i_3_fused
bind(loop=i_2_i_3_fused, thread_axis=blockIdx.x)
factorize_reduction(block=var_6_tmp, threads=128, thread_axis=threadIdx.x)
bind(loop=i_4, thread_axis=blockIdx.x)
split(loop=i_5, factors=[4, 128]) -> [i_5_0, i_5_1]
bind(loop=i_5_1, thread_axis=threadIdx.x)
set_buffer(block=var_1_tmp, memory_type=local)
set_buffer(block=var_6_tmp, memory_type=local)
cache_read(buffer=var_0, memory_type=local, axes=[1], threads=128) -> var_0_local"""


def test_softmax_row_schedule_trace_and_launch():
    func, pattern = lowered(SOFTMAX.format(r=16, c=500))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    assert str(result.trace) == SOFTMAX_TRACE
    assert (result.launch.blocks, result.launch.threads) == (16, 128)
    assert [b.memory_type.value for b in result.func.temp_buffers] == ["local"] * 3
    assert structural_equal(result.replay(func), result.func)


@pytest.mark.parametrize(
    ("cols", "threads"),
    [(1, 32), (7, 32), (128, 32), (129, 64), (1000, 256), (4096, 1024), (10**6, 1024)],
)
def test_threads_per_row(cols, threads):
    assert threads_for(cols, TargetInfo.cuda()) == threads


def test_which_groups_take_the_row_schedule():
    long_rows, pattern = lowered(ROW_SUM.format(r=8, c=300, axis=-1, out=8))
    assert wants_row_schedule(long_rows, pattern)
    short_rows, pattern = lowered(ROW_SUM.format(r=8, c=20, axis=-1, out=8))
    assert not wants_row_schedule(short_rows, pattern)  # one thread per row is enough
    columns, pattern = lowered(ROW_SUM.format(r=300, c=8, axis=0, out=8))
    assert not wants_row_schedule(columns, pattern)  # coalesced column walk per thread
    softmax, pattern = lowered(SOFTMAX.format(r=8, c=20))
    assert wants_row_schedule(softmax, pattern)  # it reads its reductions back


def test_reading_a_reduction_back_needs_the_pattern():
    func, _ = lowered(SOFTMAX.format(r=4, c=8))
    with pytest.raises(ScheduleError, match="reads a reduction result back, which needs the row"):
        auto_schedule(func, TargetInfo.cuda())


def test_a_reduction_of_another_shape_is_refused():
    func, _ = lowered(SOFTMAX.format(r=4, c=8))
    with pytest.raises(ScheduleError, match=r"reduces to shape \[4, 1\], not a row of \[8, 4\]"):
        auto_schedule(func, TargetInfo.cuda(), RowPattern((8, 4), (1,)))


@pytest.mark.parametrize(
    ("rows", "cols", "grid", "block"),
    [
        (20, 100, 3, (32, 8, 1)),
        (3, 100, 1, (32, 4, 1)),
        (1, 100, 1, (32, 1, 1)),
        (20, 300, 20, (128, 1, 1)),
    ],
)
def test_short_rows_take_a_warp_each_several_per_block(rows, cols, grid, block):
    """A row one warp walks gets a warp (threadIdx.y) of a block of up to 8; longer rows
    keep a block each."""
    program = parse_program(SOFTMAX.format(r=rows, c=cols))
    exe = cinn_py.compile(program, target="cuda-emu")
    (kernel,) = exe.kernels
    assert (kernel.grid, kernel.block) == ((grid, 1, 1), block)
    x = np.random.default_rng(5).standard_normal((rows, cols)).astype(np.float32)
    (out,) = exe.run({"x": x}).values()
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-8)
