"""Symbolic kernels (issue 18): -1 dims lowered as kernel arguments, one kernel source
for every feed shape, results against NumPy over odd shapes.

The host-side stages still run per feed signature; what is shared is the kernel source,
so the kernel cache compiles it once. Each test checks both halves: the numbers, and
that the source did (or, where a group falls back to static dims, did not) stay the
same across shapes.
"""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import ScheduleError, ShapeError
from cinn_py.ir.expr import Var
from cinn_py.ir.group_schedule.reduce_schedule import find_reduces
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program

BROADCAST_EXP = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,16],stop_gradient:[true]} : () -> tensor<-1x16xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"y",place:Place(undefined:0),shape:[16],stop_gradient:[true]} : () -> tensor<16xf32>
    (%2) = "pd_op.add" (%0, %1) {stop_gradient:[true]} : (tensor<-1x16xf32>, tensor<16xf32>) -> tensor<-1x16xf32>
    (%3) = "pd_op.exp" (%2) {stop_gradient:[true]} : (tensor<-1x16xf32>) -> tensor<-1x16xf32>
    () = "builtin.shadow_output" (%3) {output_name:"out"} : (tensor<-1x16xf32>) ->
}
"""

# Rotary embedding's data movement on [batch, seq, 16] with both -1: reshape with 0
# (copy a dim), slices of the static last axis, negate, concat, a broadcast multiply
# and a transpose that moves the symbolic seq dim.
ROTATE_HALF = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1,16],stop_gradient:[true]} : () -> tensor<-1x-1x16xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"c",place:Place(undefined:0),shape:[8],stop_gradient:[true]} : () -> tensor<8xf32>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0,0,2,8]} : () -> tensor<4xi64>
    (%3) = "pd_op.reshape" (%0, %2) {stop_gradient:[true]} : (tensor<-1x-1x16xf32>, tensor<4xi64>) -> tensor<-1x-1x2x8xf32>
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[4]} : () -> tensor<1xi64>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[2147483647]} : () -> tensor<1xi64>
    (%6) = "pd_op.slice" (%3, %4, %5) {axes:[3],decrease_axis:[],infer_flags:[1],stop_gradient:[true]} : (tensor<-1x-1x2x8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<-1x-1x2x4xf32>
    (%7) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:-1} : () -> tensor<1xf32>
    (%8) = "pd_op.scale" (%6, %7) {bias:0,bias_after_scale:true,stop_gradient:[true]} : (tensor<-1x-1x2x4xf32>, tensor<1xf32>) -> tensor<-1x-1x2x4xf32>
    (%9) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0]} : () -> tensor<1xi64>
    (%10) = "pd_op.slice" (%3, %9, %4) {axes:[3],decrease_axis:[],infer_flags:[1],stop_gradient:[true]} : (tensor<-1x-1x2x8xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<-1x-1x2x4xf32>
    (%11) = "builtin.combine" (%8, %10) {stop_gradient:[true]} : (tensor<-1x-1x2x4xf32>, tensor<-1x-1x2x4xf32>) -> vec[tensor<-1x-1x2x4xf32>,tensor<-1x-1x2x4xf32>]
    (%12) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[1],stop_gradient:[true],value:-1} : () -> tensor<1xi32>
    (%13) = "pd_op.concat" (%11, %12) {stop_gradient:[true]} : (vec[tensor<-1x-1x2x4xf32>,tensor<-1x-1x2x4xf32>], tensor<1xi32>) -> tensor<-1x-1x2x8xf32>
    (%14) = "pd_op.multiply" (%13, %1) {stop_gradient:[true]} : (tensor<-1x-1x2x8xf32>, tensor<8xf32>) -> tensor<-1x-1x2x8xf32>
    (%15) = "pd_op.add" (%3, %14) {stop_gradient:[true]} : (tensor<-1x-1x2x8xf32>, tensor<-1x-1x2x8xf32>) -> tensor<-1x-1x2x8xf32>
    (%16) = "pd_op.transpose" (%15) {perm:[0,2,1,3],stop_gradient:[true]} : (tensor<-1x-1x2x8xf32>) -> tensor<-1x2x-1x8xf32>
    () = "builtin.shadow_output" (%16) {output_name:"out"} : (tensor<-1x2x-1x8xf32>) ->
}
"""

# A row reduction: rows symbolic, the row static.
ROW_SUM = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,16],stop_gradient:[true]} : () -> tensor<-1x16xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<-1x16xf32>, tensor<1xi64>) -> tensor<-1x1xf32>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (tensor<-1x1xf32>) ->
}
"""


# Two feeds whose rows broadcast against each other: S0 and S1 may each be 1.
TWO_FEEDS = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,16],stop_gradient:[true]} : () -> tensor<-1x16xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"z",place:Place(undefined:0),shape:[-1,16],stop_gradient:[true]} : () -> tensor<-1x16xf32>
    (%2) = "pd_op.multiply" (%0, %1) {stop_gradient:[true]} : (tensor<-1x16xf32>, tensor<-1x16xf32>) -> tensor<-1x16xf32>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (tensor<-1x16xf32>) ->
}
"""

# Softmax over a row of symbolic length (attention scores over the sequence).
SOFTMAX = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1],stop_gradient:[true]} : () -> tensor<-1x-1xf32>
    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<-1x-1xf32>) -> tensor<-1x-1xf32>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (tensor<-1x-1xf32>) ->
}
"""


# Mean pooling over a symbolic sequence: a column reduction (the kept hidden dim is
# innermost), the reduced dim symbolic, the kept rows B * 64.
MEAN_POOL = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1,64],stop_gradient:[true]} : () -> tensor<-1x-1x64xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%2) = "pd_op.mean" (%0, %1) {keepdim:false,stop_gradient:[true]} : (tensor<-1x-1x64xf32>, tensor<1xi64>) -> tensor<-1x64xf32>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (tensor<-1x64xf32>) ->
}
"""


# Attention's softmax: rows B * 8 heads * S, rows of length S (symbols S0, S1, S2).
ATTENTION_SOFTMAX = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,8,-1,-1],stop_gradient:[true]} : () -> tensor<-1x8x-1x-1xf32>
    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<-1x8x-1x-1xf32>) -> tensor<-1x8x-1x-1xf32>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (tensor<-1x8x-1x-1xf32>) ->
}
"""


def rotate_half_reference(x: np.ndarray, c: np.ndarray) -> np.ndarray:
    b, s, _ = x.shape
    q = x.reshape(b, s, 2, 8)
    rotated = np.concatenate([-q[..., 4:], q[..., :4]], axis=-1) * c
    return (q + rotated).transpose(0, 2, 1, 3)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CINN_PY_SPECIALIZE", raising=False)


def source_for(text: str, **shapes: tuple[int, ...]) -> str:
    program = parse_program(text)
    stages = PIRCompiler(program, "cuda-emu", feed_shapes=shapes).stages()
    return stages.source.source


@pytest.mark.parametrize("rows", [1, 3, 7, 33, 129, 1000])
def test_broadcast_exp_matches_numpy(cache, rows):
    exe = cinn_py.compile(parse_program(BROADCAST_EXP), "cuda-emu")
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 16), dtype=np.float32)
    y = rng.standard_normal(16, dtype=np.float32)
    (got,) = exe.run({"x": x, "y": y}).values()
    np.testing.assert_allclose(got, np.exp(x + y), rtol=2e-6, atol=1e-7)


def test_one_source_for_every_row_count(cache):
    sources = {rows: source_for(BROADCAST_EXP, x=(rows, 16)) for rows in (1, 2, 3, 7, 33, 1000)}
    assert len(set(sources.values())) == 1  # S0 meets no broadcast: 1 is a value like any
    shared = sources[3]
    assert "const int v_S0" in shared
    assert "< (v_S0 * 4)" in shared  # the guard: S0 * 16 floats are S0 * 4 vectors
    assert "cinn_vec<float, 4>" in shared  # 16 divides every S0 * 16: float4 accesses


def test_a_dim_that_may_broadcast_gets_its_own_kernel_when_fed_one(cache):
    a = {source_for(TWO_FEEDS, x=(rows, 16), z=(rows, 16)) for rows in (2, 7, 33)}
    assert len(a) == 1 and "v_S0" in next(iter(a))
    one = source_for(TWO_FEEDS, x=(1, 16), z=(7, 16))  # x broadcast over z's rows
    assert one not in a
    exe = cinn_py.compile(parse_program(TWO_FEEDS), "cuda-emu")
    rng = np.random.default_rng(5)
    for x_rows, z_rows in [(1, 7), (7, 1), (7, 7), (1, 1), (33, 33)]:
        x = rng.standard_normal((x_rows, 16), dtype=np.float32)
        z = rng.standard_normal((z_rows, 16), dtype=np.float32)
        (got,) = exe.run({"x": x, "z": z}).values()
        np.testing.assert_allclose(got, x * z, rtol=1e-6)


@pytest.mark.parametrize(("batch", "seq"), [(1, 1), (1, 7), (3, 1), (2, 33), (3, 129), (5, 100)])
def test_rotate_half_matches_numpy(cache, batch, seq):
    exe = cinn_py.compile(parse_program(ROTATE_HALF), "cuda-emu")
    rng = np.random.default_rng(batch * 1000 + seq)
    x = rng.standard_normal((batch, seq, 16), dtype=np.float32)
    c = rng.standard_normal(8, dtype=np.float32)
    (got,) = exe.run({"x": x, "c": c}).values()
    np.testing.assert_allclose(got, rotate_half_reference(x, c), rtol=1e-6, atol=1e-6)


def test_rotate_half_is_one_kernel_for_every_shape_without_ones(cache):
    sources = {source_for(ROTATE_HALF, x=(b, s, 16)) for b, s in [(2, 7), (3, 33), (8, 1000)]}
    assert len(sources) == 1
    (shared,) = sources
    assert "const int v_S0, const int v_S1" in shared


def test_lowered_ir_names_the_dims(cache):
    program = parse_program(BROADCAST_EXP)
    stages = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (7, 16)}).stages(until="lowered")
    text = print_ir(stages.fused[0].lowered)
    assert text.startswith("function fn_group_0 (var_0, var_1, var_3, S0)\n")
    assert "serial for (i_0, 0, S0)" in text
    assert "var_3[i0_0, i1_0] = exp((var_0[i0_0, i1_0] + var_1[i1_0]))" in text


def test_kernel_args_carry_the_dims_and_the_grid_follows_them(cache):
    exe = cinn_py.compile(parse_program(BROADCAST_EXP), "cuda-emu")
    x, y = np.ones((1000, 16), np.float32), np.zeros(16, np.float32)
    exe.run({"x": x, "y": y})
    (step,) = exe.kernels
    assert step.args[-1] == "=S0"
    assert dict(step.scalars)["=S0"] == 1000
    vectors = 1000 * 16 // 4  # float4s: 16 divides every row count times 16
    assert step.grid == (-(-vectors // 256), 1, 1) and step.block == (256, 1, 1)
    assert "=S0" not in step.reads()


@pytest.mark.parametrize("cols", [16, 4096])
def test_row_reduction_over_symbolic_rows_is_one_kernel(cache, cols):
    text = ROW_SUM.replace("16", str(cols))
    sources = {source_for(text, x=(rows, cols)) for rows in (3, 33, 100)}
    assert len(sources) == 1 and "v_S0" in next(iter(sources))
    exe = cinn_py.compile(parse_program(text), "cuda-emu")
    for rows in (1, 3, 7, 33, 129):
        x = np.random.default_rng(rows).standard_normal((rows, cols), dtype=np.float32)
        (got,) = exe.run({"x": x}).values()
        np.testing.assert_allclose(got, x.sum(-1, keepdims=True), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "cols", [1, 3, 7, 33, 100, 127, 128, 129, 511, 1000, 1023, 1024, 3000, 8192, 9000]
)
def test_softmax_over_a_symbolic_row_matches_numpy(cache, cols):
    exe = cinn_py.compile(parse_program(SOFTMAX), "cuda-emu")
    x = np.random.default_rng(cols).standard_normal((7, cols), dtype=np.float32) * 4
    (got,) = exe.run({"x": x}).values()
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_softmax_rows_share_a_kernel_per_bucket(cache):
    def kernels(cols):
        return source_for(SOFTMAX, x=(7, cols))

    small = {kernels(c) for c in (2, 7, 100, 127, 128)}  # [1, 128]
    middle = {kernels(c) for c in (129, 511, 1000, 1024)}  # (128, 1024]
    long = {kernels(c) for c in (8193, 9000, 16000, 16384)}  # (8192, 16384]
    assert len(small) == len(middle) == len(long) == 1
    assert len(small | middle | long) == 3
    # above 1024 each power of two bounds a bucket: 4096 is walked as a static 4096
    assert kernels(4096) == kernels(2049) != kernels(4097)
    assert "v_S1" in next(iter(small))
    # past 2**20 the powers of two go on (to BUCKET_LIMIT, 2**30)
    assert kernels(2**20 + 1) == kernels(2**21) not in small | middle | long


def test_reduction_past_the_largest_bucket_falls_back_to_static_dims(cache):
    program = parse_program(SOFTMAX)
    compiler = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (1, 2**30 + 1)})
    stages = compiler.stages(until="scheduled")
    reductions = [k for k in stages.fused if k.group.reduce_pattern is not None]
    assert reductions and all(
        not any(isinstance(arg.value, Var) for arg in k.lowered.args) for k in reductions
    )
    dims = compiler.symbolic_dims
    (long,) = [symbol for symbol, value in dims.binding.items() if value == 2**30 + 1]
    with pytest.raises(ShapeError, match=r"longer than the largest bucket \(1073741824\)"):
        dims.reduce_bound(dims.var(long, DataType.INT32))


def test_specialize_env_compiles_every_dim_in(cache, monkeypatch):
    monkeypatch.setenv("CINN_PY_SPECIALIZE", "1")
    source = source_for(BROADCAST_EXP, x=(7, 16))
    assert "v_S0" not in source and "fn_group_0(const float" in source


def test_kernel_cache_compiles_the_shared_source_once(cache):
    from cinn_py.backends.cache import stats

    exe = cinn_py.compile(parse_program(BROADCAST_EXP), "cuda-emu")
    before = stats.snapshot()
    for rows in (3, 7, 33, 129):
        exe.run({"x": np.ones((rows, 16), np.float32), "y": np.ones(16, np.float32)})
    counts = stats.snapshot() - before
    assert (counts.misses, counts.hits) == (1, 3)


def test_split_of_a_symbolic_loop_needs_one_inferred_factor(cache):
    program = parse_program(BROADCAST_EXP)
    stages = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (7, 16)}).stages(until="lowered")
    sch = IRSchedule(stages.fused[0].lowered)
    (block,) = sch.get_all_blocks()
    outer, _ = sch.get_loops(block)
    with pytest.raises(ScheduleError, match=r"symbolic extent S0: give positive int factors"):
        sch.split(outer, [4, 8])
    a, b = sch.split(outer, [-1, 4])
    assert str(sch.get(a).extent) == "((S0 + 3) / 4)"


def test_split_of_a_symbolic_multiple_is_exact_and_unguarded(cache):
    program = parse_program(BROADCAST_EXP)
    stages = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (7, 16)}).stages(until="lowered")
    sch = IRSchedule(stages.fused[0].lowered)
    (block,) = sch.get_all_blocks()
    fused = sch.fuse(sch.get_loops(block))  # S0 * 16
    outer, inner = sch.split(fused, [-1, 4])
    assert str(sch.get(outer).extent) == "(S0 * 4)"
    assert "if (" not in print_ir(sch.func)
    sch.split(outer, [-1, 256])  # S0 * 4 by 256: not a multiple for every S0
    assert "if (" in print_ir(sch.func)


@pytest.mark.parametrize(("batch", "seq"), [(1, 1), (3, 7), (2, 33), (7, 129), (3, 300), (2, 1000)])
def test_mean_pooling_over_a_symbolic_sequence_matches_numpy(cache, batch, seq):
    exe = cinn_py.compile(parse_program(MEAN_POOL), "cuda-emu")
    x = np.random.default_rng(batch * seq).standard_normal((batch, seq, 64), dtype=np.float32)
    (got,) = exe.run({"x": x}).values()
    np.testing.assert_allclose(got, x.mean(1), rtol=1e-5, atol=1e-6)


def test_column_reduction_is_one_kernel_per_bucket(cache):
    """The column tactic over symbolic outputs (B * 64, exact in 32-lane groups) and a
    symbolic reduced dim: threads along y from the bucket, not from the row count."""
    program = parse_program(MEAN_POOL)
    tactics = set()
    sources = set()
    for batch, seq in [(2, 200), (7, 300), (3, 1000)]:
        stages = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (batch, seq, 64)}).stages()
        tactics |= {k.scheduled.tactic for k in stages.fused}
        sources.add(stages.source.source)
    assert tactics == {"column"} and len(sources) == 1
    assert "v_S1" in next(iter(sources))


MEAN_POOL_40 = (
    MEAN_POOL.replace("x64x", "x40x").replace(",64]", ",40]").replace("x64xf32", "x40xf32")
)


@pytest.mark.parametrize("target", ["cuda-emu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize(("batch", "seq"), [(1, 1), (3, 300), (5, 301), (7, 33), (2, 1000)])
def test_column_outputs_not_a_multiple_of_32_match_numpy(cache, batch, seq, target):
    exe = cinn_py.compile(parse_program(MEAN_POOL_40), target)
    x = np.random.default_rng(seq).standard_normal((batch, seq, 40), dtype=np.float32)
    (got,) = exe.run({"x": x}).values()
    np.testing.assert_allclose(got, x.mean(1), rtol=1e-5, atol=1e-6)
    assert "=S0" in exe.kernels[0].args  # symbolic, not compiled with numbers


def test_column_lanes_past_the_last_output_are_clamped_into_the_combine(cache):
    """B * 40 outputs in 32-lane groups: the last group's lanes past the end must reach
    the combine's barriers, so the reduction's block takes `min(lane, B * 40 - 1 - o *
    32)` (the guard of `split(..., guard_at_block=True)` turned into a clamp by
    `finish_schedule`), and only the store of the output stays guarded."""
    source = source_for(MEAN_POOL_40, x=(3, 300, 40))
    assert source_for(MEAN_POOL_40, x=(5, 301, 40)) == source
    kernel = source[source.index('extern "C"') :]
    combine, store = kernel.split("cinn_block_reduce_y<32, 32>(")
    assert "cinn_min(i_0_i_1_fused_1, ((v_S0 * 40) - (i_0_i_1_fused_0 * 32)) - 1)" in combine
    assert "if (" not in combine.split("float acc;")[0]  # no guard before the combine
    assert "< (v_S0 * 40)) {" in store


@pytest.mark.parametrize(("batch", "seq"), [(1, 1), (2, 7), (3, 8), (3, 33), (1, 129), (2, 300)])
def test_attention_softmax_with_rows_of_8_heads_matches_numpy(cache, batch, seq):
    exe = cinn_py.compile(parse_program(ATTENTION_SOFTMAX), "cuda-emu")
    x = np.random.default_rng(seq).standard_normal((batch, 8, seq, seq), dtype=np.float32) * 4
    (got,) = exe.run({"x": x}).values()
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_short_symbolic_rows_take_8_rows_a_block_where_8_divides_them(cache):
    """Rows B * 8 * S: 8 warps a block split the rows exactly for every B and S, so short
    rows keep the static schedule's 256-thread blocks, symbolic."""
    program = parse_program(ATTENTION_SOFTMAX)
    sources = set()
    for batch, seq in [(2, 7), (3, 33), (5, 100)]:
        stages = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (batch, 8, seq, seq)}).stages()
        sources.add(stages.source.source)
    (source,) = sources
    assert "const int v_S0, const int v_S1, const int v_S2" in source
    assert "threadIdx.y" in source  # a warp a row, 8 rows a block
    assert "__launch_bounds__(256)" in source


ATTENTION_SOFTMAX_12_HEADS = ATTENTION_SOFTMAX.replace("x8x", "x12x").replace(",8,", ",12,")


def test_short_symbolic_rows_take_8_rows_a_block_whatever_their_count(cache):
    """Rows B * 12 * S (BERT-base's heads): 8 does not divide 12, yet 8 warps a block
    (256 threads): the warps past the last row fold the last row again (clamped), and
    the fill of the register cache loads the last row for them, in bounds."""
    program = parse_program(ATTENTION_SOFTMAX_12_HEADS)
    stages = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (3, 12, 33, 33)}).stages()
    source = stages.source.source
    scalar = source[source.index("fn_group_0(") : source.index("fn_group_0_aligned4(")]
    assert "threadIdx.y" in scalar and source.count("__launch_bounds__(256)") == 2
    fill_row = "cinn_min((var_0_local_row * 8) + var_0_local_warp, ((v_S0 * 12) * v_S1) - 1)"
    assert fill_row in scalar
    exe = cinn_py.compile(program, "cuda-emu")
    for batch, seq in [(1, 1), (3, 7), (2, 33), (1, 100)]:
        x = np.random.default_rng(seq).standard_normal((batch, 12, seq, seq), dtype=np.float32)
        (got,) = exe.run({"x": x}).values()
        np.testing.assert_allclose(got, softmax_reference(x), rtol=2e-6, atol=1e-7)


# Softmax over static rows of 512 halves, the rows symbolic: each thread keeps its
# elements of the row in registers across the three passes, as for static rows.
SOFTMAX_F16_ROWS = """\
{
    (%0) = "pd_op.data" () {dtype:float16,name:"x",place:Place(undefined:0),shape:[-1,512],stop_gradient:[true]} : () -> tensor<-1x512xf16>
    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<-1x512xf16>) -> tensor<-1x512xf16>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (tensor<-1x512xf16>) ->
}
"""

# Two kept dims, one symbolic ([S0, 8] rows of 32): 8 short rows a block, the cached
# rows unflattened over S0 and 8.
SOFTMAX_HEADS = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,8,32],stop_gradient:[true]} : () -> tensor<-1x8x32xf32>
    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<-1x8x32xf32>) -> tensor<-1x8x32xf32>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (tensor<-1x8x32xf32>) ->
}
"""


def softmax_reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_symbolic_rows_keep_the_register_cache_of_static_rows(cache):
    symbolic = {source_for(SOFTMAX_F16_ROWS, x=(rows, 512)) for rows in (3, 33, 1000)}
    assert len(symbolic) == 1
    (shared,) = symbolic
    assert "__half var_0_local[" in shared  # the row, read once into registers
    # one 16-byte load of x per step, in the fill; the passes read the registers
    assert shared.count("*reinterpret_cast<const cinn_vec<__half, 8>*>(var_0") == 1
    assert "var_0_local[(r_0_o * 8) + r_0_v]" in shared


@pytest.mark.parametrize("rows", [1, 3, 7, 33, 129, 1000])
def test_cached_symbolic_rows_match_numpy(cache, rows):
    exe = cinn_py.compile(parse_program(SOFTMAX_F16_ROWS), "cuda-emu")
    x = np.random.default_rng(rows).standard_normal((rows, 512)).astype(np.float16)
    (got,) = exe.run({"x": x}).values()
    np.testing.assert_allclose(got.astype(np.float64), softmax_reference(x), rtol=5e-3, atol=2e-4)


@pytest.mark.parametrize("batch", [1, 3, 7, 33])
def test_cached_rows_over_two_kept_dims_match_numpy(cache, batch):
    exe = cinn_py.compile(parse_program(SOFTMAX_HEADS), "cuda-emu")
    x = np.random.default_rng(batch).standard_normal((batch, 8, 32), dtype=np.float32)
    (got,) = exe.run({"x": x}).values()
    np.testing.assert_allclose(got, softmax_reference(x), rtol=2e-6, atol=1e-7)
    source = source_for(SOFTMAX_HEADS, x=(batch, 8, 32))
    assert "var_0_local[" in source and "v_S0" in source


# Everything of a -1 batch reduced to one value (a loss): few rows of symbolic length,
# the grid schedule over the length's bucket.
REDUCE_ALL = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,64],stop_gradient:[true]} : () -> tensor<-1x64xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0,1]} : () -> tensor<2xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<-1x64xf32>, tensor<2xi64>) -> tensor<f32>
    (%3) = "pd_op.max" (%0, %1) {keepdim:false,stop_gradient:[true]} : (tensor<-1x64xf32>, tensor<2xi64>) -> tensor<f32>
    () = "builtin.shadow_output" (%2) {output_name:"total"} : (tensor<f32>) ->
    () = "builtin.shadow_output" (%3) {output_name:"top"} : (tensor<f32>) ->
}
"""


@pytest.mark.parametrize("rows", [1, 3, 7, 33, 129, 1000, 1025])
def test_reduce_all_over_a_symbolic_batch_matches_numpy(cache, rows):
    exe = cinn_py.compile(parse_program(REDUCE_ALL), "cuda-emu")
    x = np.random.default_rng(rows).standard_normal((rows, 64), dtype=np.float32) - 3.0
    total, top = exe.run({"x": x}).values()
    np.testing.assert_allclose(total, x.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)
    assert top == x.max()  # every element is below 0: a masked 0 would win


def test_reduce_all_takes_the_grid_schedule_of_its_bucket(cache):
    def scheduled(rows):
        program = parse_program(REDUCE_ALL)
        stages = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (rows, 64)}).stages()
        return stages.fused, stages.source.source

    fused, source = scheduled(1000)  # 64000 elements: one axis, bucket 65536
    assert [k.scheduled.tactic for k in fused] == ["grid"]
    # 4 chunks of 16384: the bucket's plan, a constant; the elements past S0 * 64 are
    # masked, a float4 at a time (64 divides the length), the loop ending at the last
    # live step
    assert "cinn_last_block_done(fn_group_0_semaphore + grid_row, 4)" in source
    assert "cinn_min(4, (((v_S0 * 64) - (var_2_partials_c * 16384)) + 4095) / 4096)" in source
    assert "+ (var_2_partials_c * 16384)) < (v_S0 * 64)) {" in source
    assert "const cinn_vec<float, 4> var_0_vec = " in source
    assert scheduled(700)[1] == source  # 44800: the same bucket (32768, 65536]
    assert scheduled(1025)[1] != source  # next bucket


# Softmax over rows of symbolic length in half precision: the scalar kernel for every
# length, its aligned variant (8-lane vectors) launched where 8 divides the length.
SOFTMAX_F16 = SOFTMAX.replace("float32", "float16").replace("xf32>", "xf16>")

# An elementwise op over a [-1, -1] matrix: the flat tactic's variant walks float4s.
EXP_ADD = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1],stop_gradient:[true]} : () -> tensor<-1x-1xf32>
    (%1) = "pd_op.exp" (%0) {stop_gradient:[true]} : (tensor<-1x-1xf32>) -> tensor<-1x-1xf32>
    (%2) = "pd_op.add" (%1, %0) {stop_gradient:[true]} : (tensor<-1x-1xf32>, tensor<-1x-1xf32>) -> tensor<-1x-1xf32>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (tensor<-1x-1xf32>) ->
}
"""


@pytest.mark.parametrize(
    ("rows", "cols"), [(1, 1), (3, 7), (7, 8), (2, 16), (33, 129), (5, 1000), (3, 1024), (2, 3000)]
)
def test_rows_of_symbolic_length_match_numpy_aligned_or_not(cache, rows, cols):
    exe = cinn_py.compile(parse_program(SOFTMAX_F16), "cuda-emu")
    x = np.random.default_rng(cols).standard_normal((rows, cols)).astype(np.float16)
    (got,) = exe.run({"x": x}).values()
    np.testing.assert_allclose(got.astype(np.float64), softmax_reference(x), rtol=5e-3, atol=2e-4)
    (step,) = exe.kernels
    assert step.name.endswith("_aligned8") == (cols % 8 == 0)


def test_aligned_and_unaligned_lengths_share_one_unit(cache):
    aligned = source_for(SOFTMAX_F16, x=(3, 1000))
    assert source_for(SOFTMAX_F16, x=(3, 1001)) == aligned == source_for(SOFTMAX_F16, x=(9, 200))
    assert "fn_group_0_aligned8(" in aligned and "fn_group_0(" in aligned
    variant = aligned[aligned.index("fn_group_0_aligned8(") :]
    # the row cached in registers to its bucket's bound (1024), 16 bytes a load, the
    # loads past the length skipped; the passes skip the steps past it
    assert "__half var_0_local[32];" in variant
    assert "if (((var_0_local_s * 256) + (var_0_local_t * 8)) < ((v_S1 / 8) * 8)) {" in variant
    assert "const cinn_vec<__half, 8> var_0_vec = *reinterpret_cast" in variant
    assert "if (r_0_o < cinn_min(4, (((v_S1 / 8) * 8) + 255) / 256)) {" in variant
    assert variant.count("var_0[") == 0  # every read of x is the registers'
    scalar = aligned[aligned.index("fn_group_0(") : aligned.index("fn_group_0_aligned8(")]
    assert "var_0_local[" in scalar  # the scalar kernel caches the row too


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (3, 4), (7, 33), (5, 64), (129, 7)])
def test_elementwise_variant_matches_numpy(cache, rows, cols):
    exe = cinn_py.compile(parse_program(EXP_ADD), "cuda-emu")
    x = np.random.default_rng(rows).standard_normal((rows, cols), dtype=np.float32)
    (got,) = exe.run({"x": x}).values()
    np.testing.assert_allclose(got, np.exp(x) + x, rtol=2e-6, atol=1e-6)
    (step,) = exe.kernels
    assert step.name.endswith("_aligned4") == (cols % 4 == 0)
    if cols % 4 == 0:
        assert "cinn_vec<float, 4>" in source_for(EXP_ADD, x=(rows, cols))


def test_a_unit_whose_variant_codegen_refuses_is_rendered_without_variants(cache, monkeypatch):
    compiler = PIRCompiler(parse_program(SOFTMAX_F16), "cuda-emu", feed_shapes={"x": (3, 64)})
    target = type(compiler.target)
    real = target.render
    seen = []

    def render(self, funcs, unit_size=None, fast_math=False):
        seen.append([f.name for f in funcs])
        if any(f.name.endswith("_aligned8") for f in funcs):
            raise ValueError("codegen refuses the variant")
        return real(self, funcs, unit_size, fast_math)

    monkeypatch.setattr(target, "render", render)
    stages = compiler.stages()
    assert seen == [["fn_group_0", "fn_group_0_aligned8"], ["fn_group_0"]]
    assert [k.aligned for k in stages.distinct] == [None]
    assert "aligned8" not in stages.source.source


# expand_as of a -1 dim to a static one (found by the attention fuzzer: fed 1, the dim
# broadcasts, but the analysis gave expand_as no broadcast constraint, so the kernel
# took the dim as a Var and read x past its one row).
EXPAND_AS = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,1,7,-1]} : () -> tensor<-1x1x7x-1xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"y",place:Place(undefined:0),shape:[3,1,7,7]} : () -> tensor<3x1x7x7xf32>
    (%2) = "pd_op.expand_as" (%0, %1) {target_shape:[3,1,7,7]} : (tensor<-1x1x7x-1xf32>, tensor<3x1x7x7xf32>) -> tensor<3x1x7x7xf32>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (tensor<3x1x7x7xf32>) ->
}
"""


@pytest.mark.parametrize("shape", [(1, 1, 7, 7), (3, 1, 7, 7), (1, 1, 7, 1), (3, 1, 7, 1)])
def test_expand_as_broadcasts_a_symbol_fed_one(cache, shape):
    exe = cinn_py.compile(parse_program(EXPAND_AS), "cuda-emu")
    x = np.random.default_rng(sum(shape)).standard_normal(shape, dtype=np.float32)
    y = np.zeros((3, 1, 7, 7), np.float32)
    (got,) = exe.run({"x": x, "y": y}).values()
    np.testing.assert_array_equal(got, np.broadcast_to(x, (3, 1, 7, 7)))


# Transposes whose both dims are -1 take the tile tactic: 32 x 32 tiles through shared
# memory, the tile count over the dims, the edge guards on the block and the fill,
# under the loops of the tile, never around the barrier between them.
TRANSPOSE = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1],stop_gradient:[true]} : () -> tensor<-1x-1xf32>
    (%1) = "pd_op.transpose" (%0) {perm:[1,0],stop_gradient:[true]} : (tensor<-1x-1xf32>) -> tensor<-1x-1xf32>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (tensor<-1x-1xf32>) ->
}
"""

# [batch, seq, 48] -> [batch, 48, seq] in half precision, an exp fused in
TRANSPOSE_EXP_F16 = """\
{
    (%0) = "pd_op.data" () {dtype:float16,name:"x",place:Place(undefined:0),shape:[-1,-1,48],stop_gradient:[true]} : () -> tensor<-1x-1x48xf16>
    (%1) = "pd_op.transpose" (%0) {perm:[0,2,1],stop_gradient:[true]} : (tensor<-1x-1x48xf16>) -> tensor<-1x48x-1xf16>
    (%2) = "pd_op.exp" (%1) {stop_gradient:[true]} : (tensor<-1x48x-1xf16>) -> tensor<-1x48x-1xf16>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (tensor<-1x48x-1xf16>) ->
}
"""


@pytest.mark.parametrize("target", ["cuda-emu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize(
    "shape", [(1, 1), (3, 7), (31, 100), (32, 32), (33, 40), (40, 33), (129, 64), (64, 1000)]
)
def test_symbolic_transpose_matches_numpy(cache, shape, target):
    exe = cinn_py.compile(parse_program(TRANSPOSE), target)
    x = np.random.default_rng(sum(shape)).standard_normal(shape, dtype=np.float32)
    (got,) = exe.run({"x": x}).values()
    np.testing.assert_array_equal(got, x.T)


def test_symbolic_transpose_is_tiled_and_one_kernel_for_every_tiled_shape(cache):
    program = parse_program(TRANSPOSE)
    stages = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (33, 40)}).stages()
    assert [k.scheduled.tactic for k in stages.fused] == ["tile"]
    source = stages.source.source
    kernel = source[source.index('extern "C"') :]
    assert "const int v_S0, const int v_S1" in kernel
    fill, store = kernel.split("__syncthreads();")
    # the fill's guard (x's edge) and the block's guards (out's edge) sit inside the
    # tile's thread loops, so every thread reaches the barrier
    assert "< v_S0) && (" in fill and "< v_S1)) {" in fill
    assert store.count("< v_S0) {") == 1 and store.count("< v_S1) {") == 1
    assert "var_0_shared[" in store and "var_0[" not in store
    # a multiple of the tile along both dims shares the kernel: no guard is dropped
    for shape in [(32, 32), (129, 64), (1000, 4096)]:
        assert source_for(TRANSPOSE, x=shape) == source, shape
    # tiles along q on blockIdx.x, the rest on blockIdx.y: no division by a tile count
    assert "= blockIdx.y;" in kernel and "/ 32)" not in kernel
    # a dim shorter than a tile goes flat; its index divides by a dim (at least 1): a
    # plain `/`, not the helper that checks for 0 and -1
    flat = source_for(TRANSPOSE, x=(31, 100))
    flat = flat[flat.index('extern "C"') :]
    assert "= ((i_0_i_1_fused_0 * 256) + i_0_i_1_fused_1) / v_S0;" in flat
    assert "cinn_div(" not in flat and "cinn_mod(" not in flat


@pytest.mark.parametrize("shape", [(1, 1, 48), (3, 33, 48), (2, 129, 48), (1, 1000, 48)])
def test_symbolic_transpose_of_a_sequence_matches_numpy(cache, shape):
    exe = cinn_py.compile(parse_program(TRANSPOSE_EXP_F16), "cuda-emu")
    x = np.random.default_rng(shape[1]).standard_normal(shape).astype(np.float16)
    (got,) = exe.run({"x": x}).values()
    want = np.exp(x.transpose(0, 2, 1).astype(np.float32))
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-3, atol=1e-3)
    if shape[1] >= 32:
        (step,) = exe.kernels
        assert "__syncthreads" in exe.cuda_source


def test_split_guard_at_block_keeps_the_nest_perfect(cache):
    stages = PIRCompiler(parse_program(TRANSPOSE), "cuda-emu", feed_shapes={"x": (40, 33)})
    (kernel,) = stages.stages(until="lowered").fused
    sch = IRSchedule(kernel.lowered)
    (block,) = sch.get_all_blocks()
    rows, cols = sch.get_loops(block)
    r_out, r_in = sch.split(rows, [-1, 32], guard_at_block=True)
    c_out, c_in = sch.split(cols, [-1, 32], guard_at_block=True)
    sch.reorder([r_out, c_out, r_in, c_in])  # refused with the guards around loops
    assert [loop.name for loop in sch.get_loops(block)] == ["i_0_0", "i_1_0", "i_0_1", "i_1_1"]
    text = print_ir(sch.func)
    body = text[text.index("serial for (i_1_1") :]
    assert "if ((((i_1_0 * 32) + i_1_1) < S0)) {" in body
    assert "if ((((i_0_0 * 32) + i_0_1) < S1)) {" in body
    assert "split(loop=i_0, factors=[-1, 32], guard_at_block=True)" in str(sch.trace)


# Reductions over several adjacent dims, some symbolic: one reduce axis over their
# product's bucket (`ops.reduction._merged_axis`), the indices `r / S1`, `r % S1`.
def reduce_program(kind: str, shape: str, axes: str, out: str, dtype: str = "f32") -> str:
    name = {"f32": "float32", "f16": "float16"}[dtype]
    ranked = f"tensor<{shape}x{dtype}>"
    count = axes.count(",") + 1
    extra = "dtype:Undefined," if kind == "sum" else ""
    dims = ",".join("-1" if d == "-1" else d for d in shape.split("x"))
    return f"""{{
    (%0) = "pd_op.data" () {{dtype:{name},name:"x",place:Place(undefined:0),shape:[{dims}],stop_gradient:[true]}} : () -> {ranked}
    (%1) = "pd_op.full_int_array" () {{dtype:int64,place:Place(cpu),stop_gradient:[true],value:[{axes}]}} : () -> tensor<{count}xi64>
    (%2) = "pd_op.{kind}" (%0, %1) {{{extra}keepdim:false,stop_gradient:[true]}} : ({ranked}, tensor<{count}xi64>) -> tensor<{out}{dtype}>
    () = "builtin.shadow_output" (%2) {{output_name:"out"}} : (tensor<{out}{dtype}>) ->
}}
"""  # noqa: E501


@pytest.mark.parametrize("kind", ["sum", "max", "mean"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (33, 129), (1000, 7), (1, 5000), (5000, 1)])
def test_reduce_all_over_two_symbolic_dims_matches_numpy(cache, kind, shape):
    exe = cinn_py.compile(parse_program(reduce_program(kind, "-1x-1", "0,1", "")), "cuda-emu")
    x = np.random.default_rng(sum(shape)).standard_normal(shape, dtype=np.float32) - 3.0
    (got,) = exe.run({"x": x}).values()
    want = getattr(np, kind)(x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 7, 33), (2, 129, 9), (5, 1, 1000)])
def test_rows_reduced_over_two_symbolic_dims_match_numpy(cache, shape):
    text = reduce_program("sum", "-1x-1x-1", "1,2", "-1x", "f16")
    exe = cinn_py.compile(parse_program(text), "cuda-emu")
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float16)
    (got,) = exe.run({"x": x}).values()
    want = x.astype(np.float64).sum(axis=(1, 2))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=5e-3, atol=5e-2)


def test_two_symbolic_dims_reduce_over_one_axis_of_their_products_bucket(cache):
    text = reduce_program("sum", "-1x-1", "0,1", "")
    lowered = PIRCompiler(parse_program(text), "cuda-emu", feed_shapes={"x": (100, 300)})
    (kernel,) = lowered.stages(until="lowered").fused
    # one axis over 30000's bucket [16384, 32768)
    assert "select((r_0 < (S0 * S1)), var_0[(r_0 / S1), (r_0 % S1)]" in print_ir(kernel.lowered)
    (reduce,) = find_reduces(kernel.lowered.body)
    assert [(v.name, v.upper) for v in reduce.reduce_axis] == [("r_0", 32768)]
    source = source_for(text, x=(100, 300))
    assert source_for(text, x=(50, 400)) == source  # 20000: the same bucket
    assert source_for(text, x=(200, 300)) != source  # 60000: the next
    kernel_text = source[source.index('extern "C"') :]  # the offset folded back to r
    assert "/ v_S1" not in kernel_text and "% v_S1" not in kernel_text


def test_a_product_past_the_merged_limit_keeps_an_axis_per_dim(cache):
    text = reduce_program("sum", "-1x-1", "0,1", "")
    big = PIRCompiler(parse_program(text), "cuda-emu", feed_shapes={"x": (40000, 40000)})
    (kernel,) = big.stages(until="lowered").fused
    ir = print_ir(kernel.lowered)
    assert "(S0 * S1)" not in ir and "< S0" in ir and "< S1" in ir  # 1.6e9 > 2**30


# y along the rows of x, reduced with it over both dims: y is read at `r % S1`
WEIGHTED_SUM = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1],stop_gradient:[true]} : () -> tensor<-1x-1xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"y",place:Place(undefined:0),shape:[-1],stop_gradient:[true]} : () -> tensor<-1xf32>
    (%2) = "pd_op.multiply" (%0, %1) {stop_gradient:[true]} : (tensor<-1x-1xf32>, tensor<-1xf32>) -> tensor<-1x-1xf32>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[0,1]} : () -> tensor<2xi64>
    (%4) = "pd_op.sum" (%2, %3) {dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<-1x-1xf32>, tensor<2xi64>) -> tensor<f32>
    () = "builtin.shadow_output" (%4) {output_name:"out"} : (tensor<f32>) ->
}
"""


@pytest.mark.parametrize("shape", [(2, 2), (3, 7), (33, 129), (1000, 7), (2, 5000)])
def test_a_broadcast_operand_of_a_merged_reduction_matches_numpy(cache, shape):
    exe = cinn_py.compile(parse_program(WEIGHTED_SUM), "cuda-emu")
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape, dtype=np.float32)
    y = rng.standard_normal(shape[1:], dtype=np.float32)
    (got,) = exe.run({"x": x, "y": y}).values()
    want = (x.astype(np.float64) * y).sum()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


# A router's softmax over 8 experts per token: B * S rows (no constant factor), each a
# warp, 8 a block; the warps past the last row fold the last row again, unstored.
ROUTER_SOFTMAX = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1,8],stop_gradient:[true]} : () -> tensor<-1x-1x8xf32>
    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<-1x-1x8xf32>) -> tensor<-1x-1x8xf32>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (tensor<-1x-1x8xf32>) ->
}
"""


@pytest.mark.parametrize("target", ["cuda-emu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (2, 33), (1, 129), (5, 100), (8, 8)])
def test_router_softmax_over_token_rows_matches_numpy(cache, shape, target):
    exe = cinn_py.compile(parse_program(ROUTER_SOFTMAX), target)
    x = np.random.default_rng(sum(shape)).standard_normal((*shape, 8), dtype=np.float32) * 3
    (got,) = exe.run({"x": x}).values()
    np.testing.assert_allclose(got, softmax_reference(x), rtol=2e-6, atol=1e-7)


def test_token_rows_take_8_warps_a_block_in_one_kernel(cache):
    sources = {source_for(ROUTER_SOFTMAX, x=shape) for shape in [(3, 7, 8), (2, 33, 8), (8, 8, 8)]}
    (source,) = sources  # 21, 66 and 64 rows: one kernel
    kernel = source[source.index('extern "C"') :]
    assert "__launch_bounds__(256)" in kernel and "threadIdx.y" in kernel
    # a warp past the last row folds the last row again (its row clamped, the guard of
    # the split turned into the clamp by finish_schedule); only the stores are guarded
    clamped = "cinn_min(i_0_i_1_i_2_fused_1, ((i_0_i_1_i_2_fused_0 * -8) + (v_S0 * v_S1)) - 1)"
    assert clamped in kernel and "cinn_block_reduce<32>(" in kernel
    assert "if (((i_9_i_10_fused_0 * 8) + i_9_i_10_fused_1) < (v_S0 * v_S1)) {" in kernel


@pytest.mark.parametrize(
    ("rows", "cols", "dtype"), [(1, 2**30 - 1, "int32"), (2, 2**29 + 1, "int64")]
)
def test_long_symbolic_rows_take_int64_indices_where_masked_steps_could_overflow(
    cache, rows, cols, dtype
):
    """A row of 2**29 + 1 walks to 2**30: its masked steps' offsets pass the tensor by
    up to a row, so a tensor of 2**30 elements or more is indexed in int64 when
    lowered with symbolic dims (statically from 2**31)."""
    shape = {"x": (rows, cols)}
    compiler = PIRCompiler(parse_program(SOFTMAX), "cuda-emu", feed_shapes=shape)
    fused = compiler.stages(until="lowered").fused
    dims = {a.value.dtype.value for k in fused for a in k.lowered.args if isinstance(a.value, Var)}
    assert dims == {dtype}
