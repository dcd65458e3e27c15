"""persist_blocks: a grid of G blocks walking the rows G apart (the row tactic's
`blocks_per_sm` knob). Every persistent candidate of row groups at odd shapes runs on
cuda-emu (one source, one compile) and on the IR interpreter against the unscheduled
function; the printed IR shows the grid's loop, the rows' loop, its guard and a norm's
weight loaded once a block; and what the primitive refuses, it names."""

from __future__ import annotations

import numpy as np
import pytest
from auto_schedule_funcs import assert_close, inputs_for, run_emulated, run_interpreted
from reduction_programs import lowered, reduction, softmax

from cinn_py.backends import cuda_emu
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.errors import ScheduleError
from cinn_py.ir.group_schedule import TargetInfo
from cinn_py.ir.group_schedule.tactics import TACTIC_NAMED
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program

TWO_SMS = TargetInfo(arch="sm_90", sm_count=2, max_blocks_per_sm=32, max_threads_per_sm=256)
"""Two SMs of 256 threads: persistent grids of 2 to 16 blocks, so that rows from 7 to 129
take several waves of them."""
F16 = DataType.FLOAT16
ROW = TACTIC_NAMED["row"]


def _norm(op: str, shape, dtype=DataType.FLOAT32) -> Program:
    """layer_norm (weight and bias) or rms_norm (weight) over the last axis."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    cols = [shape[-1]]
    if op == "layer_norm":
        stats = DataType.FLOAT32 if dtype is F16 else dtype
        w, bias = (b.op("pd_op.data", name=n, shape=cols, dtype=stats) for n in "wb")
        results = b.op("pd_op.layer_norm", x, w, bias, begin_norm_axis=1, epsilon=1e-5)
    else:
        w = b.op("pd_op.data", name="w", shape=cols, dtype=dtype)
        results = b.op("pd_op.rms_norm", x, w, normalized_shape=cols, epsilon=1e-6)
    program.pinned_outputs = [results[0]]
    return program


def _norm_of_product(shape) -> Program:
    """layer_norm(x * y) with a weight: x and y each read by every pass, two row caches
    (each prefetched), the weight in registers once a block."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=DataType.FLOAT32)
    y = b.op("pd_op.data", name="y", shape=list(shape), dtype=DataType.FLOAT32)
    w = b.op("pd_op.data", name="w", shape=[shape[-1]], dtype=DataType.FLOAT32)
    xy = b.op("pd_op.multiply", x, y)
    results = b.op("pd_op.layer_norm", xy, w, None, begin_norm_axis=1, epsilon=1e-5)
    program.pinned_outputs = [results[0]]
    return program


CASES = {
    "layer_norm_of_product_33x8": lambda: _norm_of_product((33, 8)),
    "layer_norm_33x129": lambda: _norm("layer_norm", (33, 129)),
    "layer_norm_f16_129x256": lambda: _norm("layer_norm", (129, 256), F16),
    "rms_norm_7x1000": lambda: _norm("rms_norm", (7, 1000)),
    "rms_norm_f16_33x1000": lambda: _norm("rms_norm", (33, 1000), F16),
    "rms_norm_bf16_129x64": lambda: _norm("rms_norm", (129, 64), DataType.BFLOAT16),
    "softmax_f16_129x33": lambda: softmax((129, 33), F16),
    "softmax_7x1000": lambda: softmax((7, 1000)),
    "row_sum_129x129": lambda: reduction((129, 129), [1]),
}


def _spread(settings: list[dict[str, int]], most: int = 6) -> list[dict[str, int]]:
    """At most `most` of `settings`, spread from the first to the last (each case has 6
    to 84: all of them would make one emulated source of 300 kernels)."""
    if len(settings) <= most:
        return settings
    return [settings[round(i * (len(settings) - 1) / (most - 1))] for i in range(most)]


def _persistent_candidates():
    """(case, knobs, lowered function, scheduled function) for persistent settings."""
    found = []
    for name, make in CASES.items():
        func, pattern = lowered(make())
        assert ROW.accepts(func, TWO_SMS, pattern) is None, name
        settings = [k for k in ROW.candidates(func, TWO_SMS, pattern) if k.get("blocks_per_sm")]
        assert settings, f"{name}: no persistent candidate"
        chosen = _spread(settings)
        if not any(k.get("prefetch") for k in chosen):  # and one that prefetches, always
            chosen.append(next(k for k in settings if k.get("prefetch")))
        for index, knobs in enumerate(chosen):
            renamed = LoweredFunc(f"fn_{name}_{index}", func.args, func.body, func.temp_buffers)
            result = ROW.apply(renamed, TWO_SMS, pattern, knobs)
            assert result is not None and result.tuned == knobs, (name, knobs)
            assert result.launch.blocks == 2 * knobs["blocks_per_sm"], (name, knobs)
            found.append((name, knobs, renamed, result.func))
    return found


def test_every_persistent_candidate_matches_the_unscheduled_function_on_cuda_emu():
    found = _persistent_candidates()
    assert len(found) == 9 * 6 + 3
    assert sum(1 for _, knobs, *_ in found if knobs.get("prefetch")) == 18
    source = generate_cuda([scheduled for *_, scheduled in found])
    module = cuda_emu.compile(source.source)
    rng = np.random.default_rng(0)
    for (name, knobs, func, _), kernel in zip(found, source.kernels, strict=True):
        inputs = inputs_for(func, rng)
        want = run_interpreted(func, inputs)
        assert kernel.grid == (2 * knobs["blocks_per_sm"], 1, 1), (name, knobs)
        for out, value in run_emulated(module, kernel, inputs, want).items():
            assert_close(value, want[out], f"{name} with {knobs}: {out}")


@pytest.mark.parametrize("name", ["layer_norm_33x129", "softmax_f16_129x33", "row_sum_129x129"])
def test_the_interpreter_runs_the_persistent_function(name):
    """The IR itself means what the unscheduled function means (not only its C)."""
    func, pattern = lowered(CASES[name]())
    knobs = next(k for k in ROW.candidates(func, TWO_SMS, pattern) if k.get("blocks_per_sm"))
    scheduled = ROW.apply(func, TWO_SMS, pattern, knobs).func
    inputs = inputs_for(func, np.random.default_rng(1))
    want, got = run_interpreted(func, inputs), run_interpreted(scheduled, inputs)
    for out in want:
        assert_close(got[out], want[out], f"{name}: {out}")


LAYER_NORM_IR = """\
    thread_bind[blockIdx.x] for (persist_b, 0, 6)
    serial for (persist_k, 0, 6)
    if (((persist_b + (persist_k * 6)) < 33)) {
      {
        unroll for (var_0_local_s, 0, 5)
        thread_bind[threadIdx.x] for (var_0_local_t, 0, 32)
        ScheduleBlock(var_0_local)
        {
          var_0_local_i0, var_0_local_i1, var_0_local_i2 = axis.bind((persist_b + (persist_k * 6)), var_0_local_s, var_0_local_t)"""


def test_the_printed_ir_walks_rows_and_loads_the_weight_once_a_block():
    """layer_norm [33, 129] at 32 threads a row, 3 blocks an SM of two: 6 blocks walk
    the 33 rows in 6 steps (the last one guarded); the register caches of w and b (5
    elements a thread at 32 threads) are filled before the rows' loop, x's inside it."""
    func, pattern = lowered(CASES["layer_norm_33x129"]())
    knobs = {"threads_per_row": 32, "rows_per_block": 1, "blocks_per_sm": 3}
    assert knobs not in ROW.candidates(func, TWO_SMS, pattern)  # 3 is no power of two
    sch, launch = ROW.schedule(func, TWO_SMS, pattern, knobs)
    assert (launch.blocks, launch.steps) == (6, 6)
    text = print_ir(sch.func)
    assert LAYER_NORM_IR in text
    w_fill, b_fill, loop = (
        text.index("ScheduleBlock(var_1_local)"),
        text.index("ScheduleBlock(var_2_local)"),
        text.index("persist_b, 0, 6"),
    )
    assert max(w_fill, b_fill) < loop, text
    assert "var_1_local[0, i_5_0, i_5_1]) + var_2_local[0, i_5_0, i_5_1]" in text
    assert "persist_blocks(grid=6) -> [persist_b, persist_k]" in str(sch.trace)
    assert print_ir(sch.trace.replay(func)) == print_ir(sch.func)


def test_the_weight_is_loaded_once_a_block_in_the_cuda():
    func, pattern = lowered(CASES["layer_norm_33x129"]())
    knobs = {"threads_per_row": 32, "rows_per_block": 1, "blocks_per_sm": 2}
    cuda = generate_cuda([ROW.apply(func, TWO_SMS, pattern, knobs).func]).source
    kernel = cuda[cuda.index("__global__") :]
    for name in ("var_0", "var_1", "var_2"):  # x, w, b: one load each
        assert kernel.count(f"{name}[") == 1, (name, kernel)
    loop = kernel.index("for (int persist_k")
    assert kernel.index("var_1[") < loop and kernel.index("var_2[") < loop < kernel.index("var_0[")


def test_persist_blocks_refuses_what_it_cannot_walk():
    func, pattern = lowered(CASES["rms_norm_7x1000"]())
    sch, launch = ROW.schedule(func, TWO_SMS, pattern, {"threads_per_row": 64, "rows_per_block": 1})
    assert launch.blocks == 7
    with pytest.raises(ScheduleError, match=r"grid 7: expected a count of blocks from 1 to 6"):
        sch.persist_blocks(7)
    with pytest.raises(ScheduleError, match=r"grid 0: expected a count of blocks from 1 to 6"):
        sch.persist_blocks(0)
    scalar, _ = lowered(reduction((129,), [0]))  # a 0-D sum: a block with no loop
    with pytest.raises(ScheduleError, match="a block with no loop"):
        IRSchedule(scalar).persist_blocks(2)


SOFTMAX_PREFETCH_IR = """\
    thread_bind[blockIdx.x] for (persist_b, 0, 2)
    {
      unroll for (var_0_local_s_f, 0, 4)
      thread_bind[threadIdx.x] for (var_0_local_t_f, 0, 64)
      vectorize[4] for (var_0_local_v_f, 0, 4)
      if ((((((var_0_local_s_f * 64) + var_0_local_t_f) * 4) + var_0_local_v_f) < 1000)) {
        ScheduleBlock(var_0_local_first)
        {
          var_0_local_i0_f, var_0_local_i1_f, var_0_local_i2_f, var_0_local_i3_f = axis.bind(persist_b, var_0_local_s_f, var_0_local_t_f, var_0_local_v_f)
          read_buffers(var_0[var_0_d0_f(0:7), var_0_d1_f(0:1000)])
          write_buffers(var_0_local_next[var_0_local_next_d0(0:7), var_0_local_next_d1(0:4), var_0_local_next_d2(0:64), var_0_local_next_d3(0:4)])
          var_0_local_next[var_0_local_i0_f, var_0_local_i1_f, var_0_local_i2_f, var_0_local_i3_f] = var_0[var_0_local_i0_f, ((((var_0_local_i1_f * 64) + var_0_local_i2_f) * 4) + var_0_local_i3_f)]
        }
      }
      serial for (persist_k, 0, 4)
      if (((persist_b + (persist_k * 2)) < 7)) {
        {
          unroll for (var_0_local_s_c, 0, 4)
          thread_bind[threadIdx.x] for (var_0_local_t_c, 0, 64)
          unroll for (var_0_local_v_c, 0, 4)
          ScheduleBlock(var_0_local)
          {
            var_0_local_c0, var_0_local_c1, var_0_local_c2, var_0_local_c3 = axis.bind((persist_b + (persist_k * 2)), var_0_local_s_c, var_0_local_t_c, var_0_local_v_c)
            read_buffers(var_0_local_next[var_0_local_next_d0(0:7), var_0_local_next_d1(0:4), var_0_local_next_d2(0:64), var_0_local_next_d3(0:4)])
            write_buffers(var_0_local[var_0_local_d0(0:7), var_0_local_d1(0:4), var_0_local_d2(0:64), var_0_local_d3(0:4)])
            var_0_local[var_0_local_c0, var_0_local_c1, var_0_local_c2, var_0_local_c3] = var_0_local_next[var_0_local_c0, var_0_local_c1, var_0_local_c2, var_0_local_c3]
          }
          if ((((persist_b + (persist_k * 2)) + 2) < 7)) {
            unroll for (var_0_local_s_n, 0, 4)
            thread_bind[threadIdx.x] for (var_0_local_t_n, 0, 64)
            vectorize[4] for (var_0_local_v_n, 0, 4)
            if ((((((var_0_local_s_n * 64) + var_0_local_t_n) * 4) + var_0_local_v_n) < 1000)) {
              ScheduleBlock(var_0_local_ahead)
              {
                var_0_local_i0_n, var_0_local_i1_n, var_0_local_i2_n, var_0_local_i3_n = axis.bind(((persist_b + (persist_k * 2)) + 2), var_0_local_s_n, var_0_local_t_n, var_0_local_v_n)"""


def test_prefetch_loads_the_next_row_before_this_rows_reductions():
    """softmax [7, 1000] at 64 threads a row on a grid of 2: x's first row is loaded
    before the rows' loop into x_local_next; each row copies it into x_local and loads
    the row 2 further on (guarded past row 6) before its max; the exp (computed from
    the row's max) is not prefetched."""
    func, pattern = lowered(CASES["softmax_7x1000"]())
    knobs = {"threads_per_row": 64, "rows_per_block": 1, "blocks_per_sm": 1, "prefetch": 1}
    assert knobs in ROW.candidates(func, TWO_SMS, pattern)
    sch, launch = ROW.schedule(func, TWO_SMS, pattern, knobs)
    assert (launch.blocks, launch.steps) == (2, 4)
    text = print_ir(sch.func)
    assert SOFTMAX_PREFETCH_IR in text, text
    assert text.index("var_0_local_ahead") < text.index("ScheduleBlock(var_1_tmp)")
    assert "var_5_tmp_local_next" not in text
    assert "prefetch_rows(block=var_0_local) -> var_0_local_ahead" in str(sch.trace)
    assert print_ir(sch.trace.replay(func)) == print_ir(sch.func)


def test_prefetch_rows_refuses_what_it_cannot_double_buffer():
    func, pattern = lowered(CASES["softmax_7x1000"]())
    sch, _ = ROW.schedule(func, TWO_SMS, pattern, {"threads_per_row": 64, "rows_per_block": 1})
    with pytest.raises(ScheduleError, match=r"does not walk rows \(persist_blocks first\)"):
        sch.prefetch_rows("var_0_local")
    knobs = {"threads_per_row": 64, "rows_per_block": 1, "blocks_per_sm": 1}
    sch, _ = ROW.schedule(func, TWO_SMS, pattern, knobs)
    with pytest.raises(ScheduleError, match="not a register cache filled once a row"):
        sch.prefetch_rows("var_5_tmp_local")  # the exp: computed from this row's max
    with pytest.raises(ScheduleError, match="not a register cache filled once a row"):
        sch.prefetch_rows("var_1_tmp")
