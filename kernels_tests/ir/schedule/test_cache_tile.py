"""cache_tile and set_buffer "shared": golden IR, values kept (interpreter and
cuda-emu, whose shared memory starts as garbage), trace replay, the shared arrays
codegen declares, and every refusal with its message."""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py.backends import cuda_emu
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.group_schedule.finish import finish_schedule
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager


def transpose_relu(rows: int, cols: int) -> str:
    """relu(x^T) for x of [rows, cols]: one block reading x[j, i]."""
    x, t = f"tensor<{rows}x{cols}xf32>", f"tensor<{cols}x{rows}xf32>"
    return f"""{{
    (%0) = "pd_op.data" () {{dtype:float32,name:"x",place:Place(undefined:0),shape:[{rows},{cols}],stop_gradient:[true]}} : () -> {x}
    (%1) = "pd_op.transpose" (%0) {{perm:[1,0],stop_gradient:[true]}} : ({x}) -> {t}
    (%2) = "pd_op.relu" (%1) {{stop_gradient:[true]}} : ({t}) -> {t}
}}
"""  # noqa: E501


ROW_SUM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[3,70],stop_gradient:[true]} : () -> tensor<3x70xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<3x70xf32>, tensor<1xi64>) -> tensor<3x1xf32>
    (%3) = "pd_op.divide" (%0, %2) {stop_gradient:[true]} : (tensor<3x70xf32>, tensor<3x1xf32>) -> tensor<3x70xf32>
}
"""  # noqa: E501


def lowered(text: str):
    program = parse_program(text)
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program))


def tiled(rows: int = 100, cols: int = 70, *, sync: bool = True):
    """relu(x^T) cut into 32 x 32 tiles by hand: tiles on blockIdx.x, 32 x 8 threads
    (4 rows each), x's window cached in shared memory with a padded row."""
    sch = IRSchedule(lowered(transpose_relu(rows, cols)))
    i, j = sch.get_loops("var_2")
    i_out, i_in = sch.split(i, [-1, 32])
    j_out, j_in = sch.split(j, [-1, 32])
    sch.reorder([i_out, j_out, i_in, j_in])
    tile = sch.fuse([i_out, j_out])
    sch.bind(tile, "blockIdx.x")
    step, row = sch.split(i_in, [4, 8])
    sch.reorder([row, j_in, step])
    sch.bind(row, "threadIdx.y")
    sch.bind(j_in, "threadIdx.x")
    fill = sch.cache_tile("var_2", "var_0", tile, pad=1)
    a, b = sch.get_loops(fill)[1:]
    a_step, a_row = sch.split(a, [4, 8])
    sch.reorder([a_row, b, a_step])
    sch.bind(a_row, "threadIdx.y")
    sch.bind(b, "threadIdx.x")
    if sync:
        sch.sync_threads(fill)
    return sch, tile


FILL = """      thread_bind[threadIdx.y] for (var_0_shared_0_1, 0, 8)
      {
        thread_bind[threadIdx.x] for (var_0_shared_1, 0, 32)
        {
          serial for (var_0_shared_0_0, 0, 4)
          {
            if ((((((var_0_shared_0_0 * 8) + var_0_shared_0_1) + ((i_0_0_i_1_0_fused % 4) * 32)) < 100) and ((var_0_shared_1 + ((i_0_0_i_1_0_fused / 4) * 32)) < 70))) {
              ScheduleBlock(var_0_shared)
              {
                var_0_shared_i0, var_0_shared_i1 = axis.bind(((var_0_shared_0_0 * 8) + var_0_shared_0_1), var_0_shared_1)
                read_buffers(var_0[var_0_d0(0:100), var_0_d1(0:70)])
                write_buffers(var_0_shared[var_0_shared_d0(0:32), var_0_shared_d1(0:33)])
                var_0_shared[var_0_shared_i0, var_0_shared_i1] = var_0[(var_0_shared_i0 + ((i_0_0_i_1_0_fused % 4) * 32)), (var_0_shared_i1 + ((i_0_0_i_1_0_fused / 4) * 32))]
              }
            }
          }
        }
      }
      __syncthreads()
"""  # noqa: E501

READ = "var_2[i0_0, i1_0] = cinn_max(var_0_shared[i_1_1, ((i_0_1_0 * 8) + i_0_1_1)], 0.00000000f)"


def test_cache_tile_golden_ir_and_trace():
    sch, _ = tiled()
    text = print_ir(sch.func)
    assert FILL in text
    assert READ in text
    assert "read_buffers(var_0_shared[var_0_shared_d0(0:32), var_0_shared_d1(0:33)])" in text
    (cache,) = sch.func.temp_buffers
    assert (cache.memory_type.value, [d.value for d in cache.shape], cache.array_dims) == (
        "shared",
        [32, 33],
        (0, 1),
    )
    assert (
        "cache_tile(block=var_2, buffer=var_0, loop=i_0_0_i_1_0_fused, pad=1) -> var_0_shared"
        in str(sch.trace)
    )
    assert structural_equal(sch.trace.replay(lowered(transpose_relu(100, 70))), sch.func)


@pytest.mark.parametrize(("rows", "cols"), [(100, 70), (64, 32), (33, 65)])
def test_cache_tile_keeps_the_values(rows, cols):
    """The interpreter fills and reads one tile at a time; cuda-emu runs every thread
    of a block as a fiber, with a real barrier and garbage-initialized shared memory."""
    sch, _ = tiled(rows, cols)
    func = finish_schedule(sch.func)
    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    want = np.maximum(x.T, 0)
    out = np.zeros((cols, rows), np.float32)
    run_function(func, {"var_0": x, "var_2": out})
    np.testing.assert_array_equal(out, want)
    source = generate_cuda([func])
    (kernel,) = source.kernels
    assert kernel.block == (32, 8, 1)
    assert "__shared__ float var_0_shared[1056];" in source.source
    assert source.source.count("__syncthreads();") >= 1
    module = cuda_emu.compile(source.source, check=True)
    out = np.full((cols, rows), np.nan, np.float32)
    module.launch(kernel.name, kernel.grid, kernel.block, [x, out])
    np.testing.assert_array_equal(out, want)


def test_the_kernel_reads_the_tile_across_threads_after_one_barrier():
    sch, _ = tiled()
    text = generate_cuda([finish_schedule(sch.func)]).source
    body = text[text.index('extern "C"') :]
    fill, read = body.split("__syncthreads();")
    assert "var_0_shared[(var_0_shared_i0 * 33) + var_0_shared_i1] = var_0[" in fill
    assert "var_0_shared[((i_0_1_0 * 8) + i_0_1_1) + (i_1_1 * 33)]" in read


def test_a_missing_barrier_is_refused():
    sch, _ = tiled(sync=False)
    with pytest.raises(ScheduleError, match="var_0_shared"):
        finish_schedule(sch.func)


def _refusal(call):
    sch = IRSchedule(lowered(transpose_relu(100, 70)))
    with pytest.raises(ScheduleError) as error:
        call(sch)
    return str(error.value)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s: s.cache_tile("var_2", "var_0", s.get_loops("var_2")[0], "local"),
            "memory type 'local': a tile is read by every thread of the block, so it "
            "lives in 'shared' memory",
        ),
        (
            lambda s: s.cache_tile("var_2", "var_0", s.get_loops("var_2")[0], pad=-1),
            "pad must be a non-negative int, got -1",
        ),
        (
            lambda s: s.cache_tile("var_2", "var_9", s.get_loops("var_2")[0]),
            "block var_2 does not read buffer var_9",
        ),
        (
            lambda s: s.cache_tile("var_2", "var_0", "nowhere"),
            "loop nowhere does not enclose block var_2",
        ),
        (
            lambda s: s.cache_tile("var_2", "var_0", s.get_loops("var_2")[1]),
            "block var_2 reads one element of var_0 per iteration of i_1: there is no "
            "tile to cache",
        ),
        (
            lambda s: (
                s.bind(s.get_loops("var_2")[0], "threadIdx.x"),
                s.cache_tile("var_2", "var_0", s.get_loops("var_2")[1]),
            ),
            "loop i_0 above the tile is bound to threadIdx.x; a shared tile belongs to "
            "the whole thread block",
        ),
        (
            lambda s: (
                s.split(s.fuse(s.get_loops("var_2")), [-1, 32]),
                s.cache_tile("var_2", "var_0", s.get_loops("var_2")[0]),
            ),
            "is not a fixed window moved by the tile loop: its index mixes the loops "
            "above the tile with those below",
        ),
        (
            lambda s: s.cache_tile("var_2", "var_0", s.get_loops("var_2")[0], pad=100000),
            "more than the 49152 a kernel declares statically",
        ),
    ],
    ids=[
        "local",
        "negative-pad",
        "not-read",
        "loop-not-enclosing",
        "one-element",
        "thread-loop-above",
        "not-separable",
        "too-big",
    ],
)
def test_cache_tile_refusals_name_the_block_and_why(call, message):
    assert message in _refusal(call)


def test_cache_tile_of_the_whole_input_at_the_outer_loop():
    """At the outer loop of the unscheduled nest the window is one column of x (its
    100 rows by one column): a [100] tile, and the values stay."""
    sch = IRSchedule(lowered(transpose_relu(100, 70)))
    outer = sch.get_loops("var_2")[0]
    sch.cache_tile("var_2", "var_0", outer)
    (cache,) = sch.func.temp_buffers
    assert [d.value for d in cache.shape] == [100]
    x = np.random.default_rng(3).standard_normal((100, 70)).astype(np.float32)
    out = np.zeros((70, 100), np.float32)
    run_function(sch.func, {"var_0": x, "var_2": out})
    np.testing.assert_array_equal(out, np.maximum(x.T, 0))


# ---- set_buffer "shared" -----------------------------------------------------------------


def row_sum_in_shared(*, sync: bool = True) -> IRSchedule:
    """x / sum(x) with the row sums in shared memory: a row per thread block, its sum
    computed by every thread (the same value), the divide's 70 columns over 32 threads
    reading it back after a barrier."""
    sch = IRSchedule(lowered(ROW_SUM))
    sch.bind(sch.fuse(sch.get_loops("var_2_tmp")), "blockIdx.x")
    row, col = sch.get_loops("var_3")
    sch.bind(row, "blockIdx.x")
    _, lane = sch.split(col, [-1, 32])
    sch.bind(lane, "threadIdx.x")
    sch.set_buffer("var_2_tmp", "shared")
    if sync:
        sch.sync_threads("var_2_tmp")
    return sch


def test_set_buffer_shared_declares_a_slice_per_thread_block():
    sch = row_sum_in_shared()
    (temp,) = sch.func.temp_buffers
    assert (temp.memory_type.value, temp.array_dims) == ("shared", (1,))
    assert "set_buffer(block=var_2_tmp, memory_type=shared)" in str(sch.trace)
    func = finish_schedule(sch.func)
    source = generate_cuda([func])
    assert "__shared__ float var_2_tmp[1];" in source.source
    x = np.random.default_rng(5).uniform(0.5, 1.5, (3, 70)).astype(np.float32)
    want = x / x.sum(1, keepdims=True)
    out = np.zeros_like(x)
    run_function(func, {"var_0": x, "var_3": out})
    np.testing.assert_allclose(out, want, rtol=1e-6)
    (kernel,) = source.kernels
    out = np.full_like(x, np.nan)
    cuda_emu.compile(source.source, check=True).launch(
        kernel.name, kernel.grid, kernel.block, [x, out]
    )
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_set_buffer_shared_without_a_barrier_is_refused_by_the_check():
    sch = row_sum_in_shared(sync=False)
    with pytest.raises(ScheduleError, match="var_2_tmp"):
        finish_schedule(sch.func)


def test_set_buffer_shared_refuses_a_dim_mixing_blockidx_and_threads():
    sch = IRSchedule(lowered(ROW_SUM))
    row, col = sch.get_loops("var_3")
    fused = sch.fuse([row, col])
    block, lane = sch.split(fused, [-1, 32])
    sch.bind(block, "blockIdx.x")
    sch.bind(lane, "threadIdx.x")
    sch.bind(sch.fuse(sch.get_loops("var_2_tmp")), "threadIdx.x")
    with pytest.raises(ScheduleError) as error:
        sch.set_buffer("var_2_tmp", "shared")
    assert "dim 0 of buffer var_2_tmp is indexed by blockIdx and threadIdx.x in block var_3" in (
        str(error.value)
    )


def test_set_buffer_shared_refuses_an_array_over_the_static_limit():
    big = ROW_SUM.replace("3,70", "3,13000").replace("3x70", "3x13000")
    big = big.replace("value:[-1]", "value:[0]").replace("tensor<3x1xf32>", "tensor<1x13000xf32>")
    sch = IRSchedule(lowered(big))
    with pytest.raises(ScheduleError) as error:
        sch.set_buffer("var_2_tmp", "shared")
    assert "would take 52000 bytes, more than the 49152 a kernel declares statically" in str(
        error.value
    )
