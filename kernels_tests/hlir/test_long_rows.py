"""Long rows. Few long rows: a softmax, log_softmax, layer_norm or rms_norm whose rows are fewer
than `TargetInfo.few_rows` and longer than `TargetInfo.long_row_bytes` (the row
tactic does not fit them: `tactics.row_schedule_fits`) is split so that each reduction takes
the grid schedule (many thread blocks per row) and the full-shaped values that read a
reduction get a flat kernel of their own, recomputing what they need from x (never
reading an intermediate of x's size from another kernel). Which programs split, how
each piece is scheduled for the GPU, and the values on cuda-emu against the reference.
Many rows too long for the registers: each pass walks the row again, in 16-byte
vector loads.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from test_one_kernel import layer_norm, rms_norm, softmax

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.launch_config import GridLaunch
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare


def _groups(text: str) -> list[list[str]]:
    program = parse_program(text)
    PassManager().run(program)
    return [[op.name.removeprefix("pd_op.") for op in g.ops] for g in group_program(program)]


def test_the_thresholds():
    for target in (TargetInfo.cuda(), TargetInfo.cuda_emu()):  # the emulator groups alike
        assert (target.few_rows, target.long_row_bytes) == (64, 128 * 1024)


def test_softmax_of_few_long_rows_is_three_kernels():
    assert _groups(softmax("softmax", (4, 40000), -1, "float32")) == [
        ["max"],
        # exp(max(x - max, -64)) (the floor), its sum and 1 / sum, one division a row
        ["subtract", "full", "maximum", "exp", "full", "sum", "divide"],
        ["subtract", "full", "maximum", "exp", "multiply"],  # again, from x and the maxima
    ]


def test_layer_norm_of_few_long_rows_is_statistics_then_normalize():
    statistics, normalize = _groups(layer_norm((4, 40000), 1, "float32", True))
    assert statistics.count("sum") == 2 and "square" in statistics  # sum, sum of squares
    assert "rsqrt" in statistics  # the row-shaped epilogue: the last block of each row
    assert normalize == ["subtract", "multiply", "multiply", "add"]  # flat


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [
        ((4, 32768), "float32"),  # 128 KiB a row: what the registers hold, one kernel
        ((64, 40000), "float32"),  # rows enough for a block each
        ((4, 40000), "float16"),  # 80 KB a row
    ],
)
def test_rows_that_are_not_few_and_long_stay_one_kernel(shape, dtype):
    assert len(_groups(softmax("softmax", shape, -1, dtype))) == 1


CASES = [
    ("softmax", softmax("softmax", (4, 40000), -1, "float32"), 3),
    ("log_softmax", softmax("log_softmax", (3, 40000), -1, "float32"), 3),
    ("softmax_f16", softmax("softmax", (2, 70000), -1, "float16"), 3),
    ("layer_norm", layer_norm((4, 40000), 1, "float32", True), 2),
    ("layer_norm_f16", layer_norm((2, 70000), 1, "float16", True), 2),
    ("rms_norm", rms_norm((2, 40000), "float32"), 2),
    ("softmax_1_row", softmax("softmax", (1, 65536), -1, "float32"), 3),
]


@pytest.mark.parametrize(("name", "text", "kernels"), CASES, ids=[c[0] for c in CASES])
def test_each_reduction_takes_the_grid_schedule_on_the_gpu(name, text, kernels):
    program = parse_program(text)
    PassManager().run(program)
    names = NameTable(program)
    launches = []
    for group in group_program(program):
        func = lower_group(group, names)
        launches.append(auto_schedule(func, TargetInfo.cuda(), group.reduce_pattern).launch)
    assert len(launches) == kernels
    *reductions, normalize = launches
    assert all(isinstance(launch, GridLaunch) for launch in reductions)
    # blocks of 128 threads (the smallest), or enough of them for every SM
    assert all(r.threads == 128 or r.blocks * r.chunks >= 132 for r in reductions)
    assert not isinstance(normalize, GridLaunch)


@pytest.mark.parametrize(("name", "text", "kernels"), CASES, ids=[c[0] for c in CASES])
def test_split_rows_match_the_reference_on_emu(name, text, kernels):
    program = parse_program(text)
    exe = cinn_py.compile(program, target="cuda-emu")
    assert len(exe.kernels) == kernels
    rng = np.random.default_rng(3)
    feeds = {}
    for op in program.block:
        if op.name == "pd_op.data":
            t = op.result().type
            feeds[op.attr("name")] = (rng.standard_normal(t.dims) * 3).astype(t.data_type.numpy)
    got = exe.run(feeds)
    want = run_reference(program, feeds)
    for key, expected in zip(got, want, strict=True):
        result = compare(np.asarray(got[key]), np.asarray(expected))
        assert result.ok, f"{name} {key}: {result}"


# ---- rows too long to cache: vector loads in the reductions' walk -------------------------


def _global_loads(ptx: str) -> Counter:
    return Counter(re.findall(r"\bld\.global\.nc\.[\w.]+", ptx))


@pytest.mark.parametrize(
    ("dtype", "vector"), [("float32", "ld.global.nc.v4.f32"), ("float16", "ld.global.nc.v4.u32")]
)
def test_uncached_rows_load_16_bytes_in_every_pass(dtype, vector):
    """softmax over 128 rows of 65536: too long for the registers, so each of the three
    passes reads the row again, each step one 16-byte vector (the reductions' lane
    loop reads `.v[lane]` of it), no scalar load left."""
    exe = cinn_py.compile(parse_program(softmax("softmax", (128, 65536), -1, dtype)), "cuda-emu")
    (kernel,) = exe.kernels
    assert kernel.block == (1024, 1, 1)
    source = exe.cuda_source
    assert source.count("#pragma unroll\n        for (int r_") >= 2  # both reductions
    loads = _global_loads(nvrtc.compile_ptx(source, "sm_90"))
    assert set(loads) == {vector}


@pytest.mark.parametrize(
    ("shape", "vectors"),
    [((64, 36864), True), ((64, 33000), True), ((64, 33001), False)],
    # 9 steps exactly; the last one guarded: its vector is loaded under the mask, which
    # is the same for the 4 lanes of a vector (4 divides 33000); a row 4 does not divide
    # is read one element at a time
)
def test_uncached_rows_match_the_reference_on_emu(shape, vectors):
    program = parse_program(softmax("softmax", shape, -1, "float32"))
    exe = cinn_py.compile(program, target="cuda-emu")
    # the reductions' unrolled lane loops read a vector
    assert bool(re.search(r"#pragma unroll\n\s+for \(int r_", exe.cuda_source)) == vectors
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32) * 3
    (got,) = exe.run({"x": x}).values()
    (want,) = run_reference(program, {"x": x})
    assert compare(np.asarray(got), np.asarray(want)).ok
