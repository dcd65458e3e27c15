"""stream_reads: a block's loads of an input it alone reads, marked read once, and what
codegen makes of the mark (evict-first loads: `cinn_ldcs`, SASS `LDG.E.EF`); the flat
and row tactics' `stream` knob that sets it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from cinn_py.backends import cuda_emu, nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.errors import ScheduleError
from cinn_py.ir.group_schedule import TargetInfo
from cinn_py.ir.group_schedule.tactics import TACTIC_NAMED
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.schedule.stream_reads import STREAM_ATTR, streamed
from cinn_py.perf import binaries
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program

sys.path.insert(0, str(Path(__file__).parents[1] / "group_schedule"))
from reduction_programs import lowered, reduction  # noqa: E402

CUDA = TargetInfo.cuda()
F32 = DataType.FLOAT32


def _layer_norm(rows: int, cols: int) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[rows, cols], dtype=F32)
    w = b.op("pd_op.data", name="w", shape=[cols], dtype=F32)
    bias = b.op("pd_op.data", name="b", shape=[cols], dtype=F32)
    b.op("pd_op.layer_norm", x, w, bias, epsilon=1e-5, begin_norm_axis=1)
    return program


def _add_relu_mul(shape) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=F32)
    y = b.op("pd_op.data", name="y", shape=list(shape), dtype=F32)
    bias = b.op("pd_op.data", name="bias", shape=[shape[-1]], dtype=F32)
    b.op("pd_op.multiply", b.op("pd_op.relu", b.op("pd_op.add", x, y)), bias)
    return program


def _sass_global_loads(source: str) -> list[str]:
    """The kernel's `LDG` lines, built by NVRTC for sm_90 (skips without the tools)."""
    available, why = binaries.tools_available()
    if not available:
        pytest.skip(why)
    try:
        cubin = nvrtc.compile(source, "sm_90", name="stream.cu")
    except (FileNotFoundError, OSError, ImportError) as error:
        pytest.skip(f"NVRTC is not available: {error}")
    return [line for line in binaries.disassemble(cubin).splitlines() if "LDG.E" in line]


def _kernel_lines(func) -> list[str]:
    source = generate_cuda([func]).source
    body = source.split("void __launch_bounds__", 1)[1]
    return [line.strip() for line in body.splitlines()]


def test_the_mark_is_a_block_attribute_traced_and_replayed():
    func, _ = lowered(reduction((33, 129), [1]))
    sch = IRSchedule(func)
    (block,) = sch.get_all_blocks()
    input_name = next(a.name for a in func.args if a.io.name == "INPUT")
    sch.stream_reads(block, input_name)
    marked = sch.get(sch.get_all_blocks()[0]).schedule_block
    assert streamed(marked) == {input_name}
    assert dict(marked.attrs)[STREAM_ATTR] == input_name
    assert str(sch.trace) == f"stream_reads(block={block.name}, buffer={input_name})"
    replayed = sch.trace.replay(func)
    assert streamed(IRSchedule(replayed).get(block).schedule_block) == {input_name}
    # the IR means the same: the interpreter runs it as before
    x = np.random.default_rng(0).standard_normal((33, 129)).astype(np.float32)
    out_name = next(a.name for a in func.args if a.io.name == "OUTPUT")
    want = {input_name: x, out_name: np.zeros(33, np.float32)}
    got = {input_name: x, out_name: np.zeros(33, np.float32)}
    run_function(func, want)
    run_function(sch.func, got)
    np.testing.assert_array_equal(got[out_name], want[out_name])


def test_refusals_name_the_block_and_why():
    func, pattern = lowered(_layer_norm(4, 64))
    names = {a.name: a for a in func.args}
    x_name = next(n for n, a in names.items() if a.io.name == "INPUT" and len(a.value.shape) == 2)
    out_name = next(n for n, a in names.items() if a.io.name == "OUTPUT")
    sch = IRSchedule(func)
    blocks = sch.get_all_blocks()
    readers = [b for b in blocks if x_name in str(sch.get(b).schedule_block.body)]
    assert len(readers) > 1  # layer_norm reads x in its sums and its normalize
    with pytest.raises(ScheduleError, match=f"{x_name} is also read by"):
        sch.stream_reads(readers[0], x_name)
    with pytest.raises(ScheduleError, match=f"{out_name} is not an input"):
        sch.stream_reads(blocks[-1], out_name)
    weight = next(n for n, a in names.items() if a.io.name == "INPUT" and n != x_name)
    first = next(b for b in blocks if weight not in str(sch.get(b).schedule_block.body))
    with pytest.raises(ScheduleError, match=f"the block does not read {weight}"):
        sch.stream_reads(first, weight)


def test_the_row_knob_streams_the_cached_rows_not_the_weight():
    """layer_norm [33, 1000]: the rows' fill block reads x once (evict-first vectors);
    the weight and bias, read by every row's block, stay plain loads."""
    func, pattern = lowered(_layer_norm(33, 1000))
    row = TACTIC_NAMED["row"]
    streams = [k for k in row.candidates(func, CUDA, pattern) if k.get("stream")]
    rule = row.knobs(func, CUDA, pattern)
    assert streams == [
        {
            "threads_per_row": rule["threads_per_row"],
            "rows_per_block": rule["rows_per_block"],
            "stream": 1,
        }
    ]
    result = row.apply(func, CUDA, pattern, streams[0])
    assert result.tuned == streams[0]
    assert "stream_reads(block=" in str(result.trace)
    lines = _kernel_lines(result.func)
    streamed_loads = [line for line in lines if "cinn_ldcs(" in line]
    plain_vectors = [line for line in lines if "= *reinterpret_cast<const cinn_vec" in line]
    assert (
        len(streamed_loads) == 1
        and "cinn_ldcs(reinterpret_cast<const cinn_vec<float, 4>*>" in streamed_loads[0]
    )
    assert len(plain_vectors) == 2  # the weight and the bias


def test_the_flat_knob_streams_the_full_inputs_not_the_broadcast_bias():
    func, pattern = lowered(_add_relu_mul((33, 128)))
    flat = TACTIC_NAMED["flat"]
    streams = [k for k in flat.candidates(func, CUDA, pattern) if k.get("stream")]
    assert streams == [{"threads": flat.knobs(func, CUDA)["threads"], "min_steps": 1, "stream": 1}]
    lines = _kernel_lines(flat.apply(func, CUDA, pattern, streams[0]).func)
    loads = [line for line in lines if "_vec = " in line and "reinterpret_cast<const" in line]
    assert sum("cinn_ldcs(" in line for line in loads) == 2  # x and y, not the bias
    assert len(loads) == 3


def test_a_scalar_streamed_load_under_a_mask_stays_under_it():
    func, pattern = lowered(reduction((33, 129), [1]))
    row = TACTIC_NAMED["row"]
    (knobs,) = [k for k in row.candidates(func, CUDA, pattern) if k.get("stream")]
    lines = _kernel_lines(row.apply(func, CUDA, pattern, knobs).func)
    masked = [line for line in lines if "cinn_ldcs(" in line]
    assert masked and all(re.search(r"< 129\) \? cinn_ldcs\(", line) for line in masked)


def test_streamed_loads_are_evict_first_in_the_sass_and_exact_on_cuda_emu():
    func, pattern = lowered(_add_relu_mul((64, 256)))
    flat = TACTIC_NAMED["flat"]
    (knobs,) = [k for k in flat.candidates(func, CUDA, pattern) if k.get("stream")]
    scheduled = flat.apply(func, CUDA, pattern, knobs).func
    source = generate_cuda([scheduled])
    module = cuda_emu.compile(source.source)
    rng = np.random.default_rng(0)
    arrays = {}
    for arg in func.args:
        shape = tuple(int(d.value) for d in arg.value.shape)
        arrays[arg.name] = rng.standard_normal(shape).astype(np.float32)
    want = {k: v.copy() for k, v in arrays.items()}
    run_function(func, want)
    (kernel,) = source.kernels
    got = {k: v.copy() for k, v in arrays.items()}
    module.launch(kernel.name, kernel.grid, kernel.block, [got[a.name] for a in func.args], 0)
    out = next(a.name for a in func.args if a.io.name == "OUTPUT")
    np.testing.assert_array_equal(got[out], want[out])
    loads = _sass_global_loads(source.source)
    assert sum(".EF." in line for line in loads) == 2, loads  # x and y evict-first
    assert sum(".EF." not in line for line in loads) == 1, loads  # the bias


def _cast_to_half(shape) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=F32)
    b.op("pd_op.cast", x, dtype=DataType.FLOAT16)
    return program


def test_a_32_byte_streamed_vector_goes_as_two_16_byte_words():
    """A float16 map of float32 inputs takes 8 lanes (by its output): the streamed input
    vector is `cinn_vec<float, 8>`, 32 bytes, loaded as two evict-first 16-byte words
    (the fuzzer's `--knobs` found the 16-byte assertion refusing it, 2026-11-27)."""
    func, pattern = lowered(_cast_to_half((33, 64)))
    flat = TACTIC_NAMED["flat"]
    (knobs,) = [k for k in flat.candidates(func, CUDA, pattern) if k.get("stream")]
    scheduled = flat.apply(func, CUDA, pattern, knobs).func
    source = generate_cuda([scheduled])
    assert "cinn_ldcs(reinterpret_cast<const cinn_vec<float, 8>*>" in source.source
    module = cuda_emu.compile(source.source)
    x = np.random.default_rng(1).standard_normal((33, 64)).astype(np.float32)
    (kernel,) = source.kernels
    out = np.full((33, 64), np.nan, np.float16)
    module.launch(kernel.name, kernel.grid, kernel.block, [x, out], 0)
    np.testing.assert_array_equal(out, x.astype(np.float16))
    loads = _sass_global_loads(source.source)
    assert loads and all(".EF.128" in line for line in loads), loads
