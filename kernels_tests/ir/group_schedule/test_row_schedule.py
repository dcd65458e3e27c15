"""The row schedule of reduction groups: its trace (golden, scalar and vector walks),
the vector lanes and threads it picks, the launch, which inputs it keeps in registers,
one thread a row storing a row's total, when it is chosen, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.expr import MemoryType
from cinn_py.ir.group_schedule import RowPattern, TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.reduce_schedule import lanes_for, threads_for
from cinn_py.ir.group_schedule.tactics import RowTactic
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.schedule.analysis import storage_name, walk
from cinn_py.ir.stmt import BindInfo, For, Store
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
factorize_reduction(block=var_2_tmp, threads=128, thread_axis=threadIdx.x)
bind(loop=i_2, thread_axis=blockIdx.x)
split(loop=i_3, factors=[4, 128]) -> [i_3_0, i_3_1]
bind(loop=i_3_1, thread_axis=threadIdx.x)
fuse(loops=[i_4, i_5]) -> i_4_i_5_fused
bind(loop=i_4_i_5_fused, thread_axis=blockIdx.x)
factorize_reduction(block=var_8_tmp, threads=128, thread_axis=threadIdx.x)
bind(loop=i_6, thread_axis=blockIdx.x)
split(loop=i_7, factors=[4, 128]) -> [i_7_0, i_7_1]
bind(loop=i_7_1, thread_axis=threadIdx.x)
set_buffer(block=var_2_tmp, memory_type=local)
set_buffer(block=var_8_tmp, memory_type=local)
keep_in_registers(block=var_6_tmp, axes=[1], threads=128)
cache_read(buffer=var_0, memory_type=local, axes=[1], threads=128) -> var_0_local"""


def test_softmax_row_schedule_trace_and_launch():
    """499 cols: odd, so V = 1, the scalar walk."""
    func, pattern = lowered(SOFTMAX.format(r=16, c=499))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    assert str(result.trace) == SOFTMAX_TRACE
    assert (result.launch.blocks, result.launch.threads) == (16, 128)
    assert [b.memory_type.value for b in result.func.temp_buffers] == ["local"] * 4
    assert structural_equal(result.replay(func), result.func)


SOFTMAX_TRACE_V8 = """\
fuse(loops=[i_0, i_1]) -> i_0_i_1_fused
bind(loop=i_0_i_1_fused, thread_axis=blockIdx.x)
factorize_reduction(block=var_3_tmp, threads=128, thread_axis=threadIdx.x, lanes=8)
bind(loop=i_2, thread_axis=blockIdx.x)
split(loop=i_3, factors=[4, 128, 8]) -> [i_3_0, i_3_1, i_3_2]
vectorize(loop=i_3_2, factor=8)
bind(loop=i_3_1, thread_axis=threadIdx.x)
fuse(loops=[i_4, i_5]) -> i_4_i_5_fused
bind(loop=i_4_i_5_fused, thread_axis=blockIdx.x)
factorize_reduction(block=var_12_tmp, threads=128, thread_axis=threadIdx.x, lanes=8)
bind(loop=i_6, thread_axis=blockIdx.x)
split(loop=i_7, factors=[4, 128, 8]) -> [i_7_0, i_7_1, i_7_2]
vectorize(loop=i_7_2, factor=8)
bind(loop=i_7_1, thread_axis=threadIdx.x)
set_buffer(block=var_3_tmp, memory_type=local)
set_buffer(block=var_12_tmp, memory_type=local)
keep_in_registers(block=var_10_tmp, axes=[1], threads=128, lanes=8)
cache_read(buffer=var_0, memory_type=local, axes=[1], threads=128, lanes=8) -> var_0_local"""


def test_float16_softmax_walks_rows_in_vectors_of_8():
    """4000 float16 cols: V = 8 (16 bytes), 500 vectors, T = 128 (about 4 a thread). (Its
    exp is 2 ** (s * log2 e): three more values than float32's, hence the names.)"""
    text = SOFTMAX.format(r=16, c=4000).replace("float32", "float16").replace("xf32", "xf16")
    func, pattern = lowered(text)
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    assert str(result.trace) == SOFTMAX_TRACE_V8
    assert (result.launch.blocks, result.launch.threads) == (16, 128)
    cache = result.func.temp_buffers[-1]
    assert [d.value for d in cache.shape] == [16, 4, 128, 8] and cache.array_dims == (1, 3)
    assert structural_equal(result.replay(func), result.func)


ROW_SUM_TRACE_V4 = """\
cache_write(block=var_2) -> var_2_write
bind(loop=i_0, thread_axis=blockIdx.x)
factorize_reduction(block=var_2, threads=64, thread_axis=threadIdx.x, lanes=4)
split(loop=var_2_write_l0, factors=[8, 1]) -> [var_2_write_l0_0, var_2_write_l0_1]
bind(loop=var_2_write_l0_0, thread_axis=blockIdx.x)
bind(loop=var_2_write_l0_1, thread_axis=threadIdx.x)
set_buffer(block=var_2, memory_type=local)
cache_read(buffer=var_0, memory_type=local, axes=[1], threads=64, lanes=4) -> var_0_local"""


@pytest.mark.parametrize(
    ("cols", "trace"),
    [
        (1024, ROW_SUM_TRACE_V4),  # 4 steps of 16 bytes a thread: cached for its loads
        (1023, None),  # V = 1: a single pass gains nothing from registers
        (32768, None),  # 8 steps of 16 bytes: past the single-pass budget of 64 bytes
    ],
)
def test_a_row_sum_caches_its_input_for_vector_loads(cols, trace):
    func, pattern = lowered(ROW_SUM.format(r=8, c=cols, axis=-1, out=8))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    cached = "cache_read" in str(result.trace)
    assert cached == (trace is not None), str(result.trace)
    if trace is not None:
        assert str(result.trace) == trace


@pytest.mark.parametrize(
    ("cols", "lanes", "threads"),
    [
        (1, 1, 32),
        (7, 1, 32),
        (128, 1, 32),
        (129, 1, 64),
        (1000, 1, 256),
        (4096, 1, 1024),
        (10**6, 1, 1024),
        (512, 4, 32),  # 128 vectors: a warp's 4 each
        (516, 4, 64),
        (4096, 4, 256),
        (8192, 4, 512),
        (8192, 8, 256),
        (4096, 8, 128),
        (10**6, 8, 1024),
    ],
)
def test_threads_per_row(cols, lanes, threads):
    assert threads_for(cols, TargetInfo.cuda(), lanes) == threads


@pytest.mark.parametrize(
    ("dtype", "cols", "lanes"),
    [
        ("float32", 4096, 4),
        ("float16", 4096, 8),
        ("bfloat16", 8192, 8),
        ("float64", 4096, 2),
        ("int32", 4096, 4),
        ("float16", 4100, 4),  # 4 divides the row, 8 does not
        ("float16", 6, 2),
        ("float32", 1, 1),
        ("float32", 499, 1),
    ],
)
def test_vector_lanes_per_row(dtype, cols, lanes):
    suffix = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64"}
    suffix["int32"] = "i32"
    text = ROW_SUM.format(r=8, c=cols, axis=-1, out=8)
    text = text.replace("float32", dtype).replace("xf32", "x" + suffix[dtype])
    text = text.replace("tensor<8xi32>", "tensor<8xi64>")  # an int32 sum is int64
    func, pattern = lowered(text)
    assert lanes_for(func, pattern) == lanes


def test_vector_lanes_follow_the_narrowest_full_shaped_argument():
    """A float16 input summed into float32 (a cast fused in): 8 lanes, one 16-byte load
    of the input a step; a column reduction's strided row takes no vectors."""
    text = """{
    (%0) = "pd_op.data" () {dtype:float16,name:"x",place:Place(undefined:0),shape:[8,256],stop_gradient:[true]} : () -> tensor<8x256xf16>
    (%1) = "pd_op.cast" (%0) {dtype:float32,stop_gradient:[true]} : (tensor<8x256xf16>) -> tensor<8x256xf32>
    (%2) = "pd_op.exp" (%1) {stop_gradient:[true]} : (tensor<8x256xf32>) -> tensor<8x256xf32>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%4) = "pd_op.sum" (%2, %3) {dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<8x256xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    (%5) = "pd_op.divide" (%2, %4) {stop_gradient:[true]} : (tensor<8x256xf32>, tensor<8x1xf32>) -> tensor<8x256xf32>
}
"""  # noqa: E501
    func, pattern = lowered(text)
    assert lanes_for(func, pattern) == 8
    columns, pattern = lowered(ROW_SUM.format(r=300, c=8, axis=0, out=8))
    assert lanes_for(columns, pattern) == 1


def test_which_groups_take_the_row_schedule():
    long_rows, pattern = lowered(ROW_SUM.format(r=8, c=300, axis=-1, out=8))
    row, cuda = RowTactic(), TargetInfo.cuda()
    assert row.accepts(long_rows, cuda, pattern) is None
    short_rows, pattern = lowered(ROW_SUM.format(r=8, c=20, axis=-1, out=8))
    assert row.accepts(short_rows, cuda, pattern) is not None  # one thread per row is enough
    columns, pattern = lowered(ROW_SUM.format(r=300, c=8, axis=0, out=8))
    assert row.accepts(columns, cuda, pattern) is not None  # coalesced column walk per thread
    softmax, pattern = lowered(SOFTMAX.format(r=8, c=20))
    assert row.accepts(softmax, cuda, pattern) is None  # it reads its reductions back


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
        (20, 300, 3, (32, 8, 1)),  # 75 vectors of 4: a warp
        (20, 301, 20, (128, 1, 1)),  # V = 1: 301 elements
        (20, 1200, 20, (128, 1, 1)),  # 300 vectors of 4
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


@pytest.mark.parametrize(("rows", "cols"), [(6, 100), (5, 4096)])
def test_one_thread_of_a_row_stores_the_rows_total(rows, cols):
    """The block reduce leaves the row's total in every thread of the row: the reduction
    stores it to a register (`cache_write`, `set_buffer` "local") and one thread of the
    row (a unit loop on threadIdx.x, codegen's `if (threadIdx.x < 1)`) stores the output,
    one store a row; a warp per row (6 rows of 100) or a block (5 rows of 4096)."""
    func, pattern = lowered(ROW_SUM.format(r=rows, c=cols, axis=-1, out=rows))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    assert "cache_write(block=var_2) -> var_2_write" in str(result.trace)
    stores = [
        (node, path)
        for node, path in walk(result.func.body)
        if isinstance(node, Store) and storage_name(node.tensor) == "var_2"
    ]
    ((store, path),) = stores
    loops = [n for n in path if isinstance(n, For)]
    assert loops[-1].bind_info is BindInfo.THREAD_X and loops[-1].extent.value == 1
    (cache,) = [b for b in result.func.temp_buffers if b.name == "var_2_tmp"]
    assert cache.memory_type is MemoryType.LOCAL
    assert structural_equal(result.replay(func), result.func)
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    buffers = {"var_0": x, "var_2": np.full(rows, -99, np.float32)}
    run_function(result.func, buffers)
    np.testing.assert_allclose(buffers["var_2"], x.sum(1), rtol=1e-5, atol=1e-4)
    source = generate_cuda([result.func]).source
    assert "if (threadIdx.x < 1) {" in source


VECTOR_SUM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4096],stop_gradient:[true]} : () -> tensor<4096xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<4096xf32>, tensor<1xi64>) -> tensor<f32>
}"""  # noqa: E501


def test_one_thread_stores_a_0d_rows_total():
    """A 0-D total: no loop binds an axis, the combine binds threadIdx.x, so the copy is
    placed on thread 0 (`finish_schedule`) and the reduction, which stores a register,
    stays on every thread."""
    func, pattern = lowered(VECTOR_SUM)
    result = auto_schedule(func, TargetInfo.cuda(), pattern, tactics=[RowTactic()])
    ((store, path),) = [
        (node, path)
        for node, path in walk(result.func.body)
        if isinstance(node, Store) and storage_name(node.tensor) == "var_2"
    ]
    loops = [n for n in path if isinstance(n, For)]
    assert [(n.bind_info, n.extent.value) for n in loops] == [(BindInfo.THREAD_X, 1)]
    x = np.random.default_rng(1).standard_normal(4096).astype(np.float32)
    buffers = {"var_0": x, "var_2": np.zeros((), np.float32)}
    run_function(result.func, buffers)
    np.testing.assert_allclose(buffers["var_2"], x.sum(), rtol=1e-5, atol=1e-4)
    source = generate_cuda([result.func]).source
    assert "if (threadIdx.x < 1) {" in source and "var_2_tmp[0] = acc;" in source
