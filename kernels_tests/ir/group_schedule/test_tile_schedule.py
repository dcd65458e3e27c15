"""The tile schedule of transposing groups: which groups take it, its golden IR and
trace, and every dtype, rank and edge on cuda-emu against the reference executor (one
kernel, a shared tile per transposed input, one barrier after each fill)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB
from cinn_py.ir.group_schedule.tactics import TACTIC_NAMED
from cinn_py.ir.group_schedule.tile_schedule import (
    TilePlan,
    tile_lane_choices,
    tile_lanes,
    tile_plan,
)
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

SUFFIX = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int64": "i64", "float64": "f64"}


def _t(shape, dtype):
    return f"tensor<{'x'.join(map(str, shape))}x{SUFFIX[dtype]}>"


def _data(k, name, shape, dtype):
    dims = ",".join(map(str, shape))
    return (
        f'    (%{k}) = "pd_op.data" () {{dtype:{dtype},name:"{name}",place:Place(undefined:0),'
        f"shape:[{dims}],stop_gradient:[true]}} : () -> {_t(shape, dtype)}"
    )


def transpose(shape, perm, dtype="float32", then=None, second=None):
    """transpose(x, perm), then an elementwise op: `then` "relu", "add" (with a y in
    the output's order), "add_t" (with another input transposed the same way) or
    "cast" (to float32)."""
    out = [shape[p] for p in perm]
    perm_text = ",".join(map(str, perm))
    lines = ["{", _data(0, "x", shape, dtype)]
    lines.append(
        f'    (%1) = "pd_op.transpose" (%0) {{perm:[{perm_text}],stop_gradient:[true]}} : '
        f"({_t(shape, dtype)}) -> {_t(out, dtype)}"
    )
    if then == "relu":
        lines.append(
            f'    (%2) = "pd_op.relu" (%1) {{stop_gradient:[true]}} : ({_t(out, dtype)}) -> '
            f"{_t(out, dtype)}"
        )
    elif then == "add":
        lines.append(_data(2, "y", out, dtype))
        lines.append(
            f'    (%3) = "pd_op.add" (%1, %2) {{stop_gradient:[true]}} : ({_t(out, dtype)}, '
            f"{_t(out, dtype)}) -> {_t(out, dtype)}"
        )
    elif then == "add_t":
        lines.append(_data(2, "z", shape, dtype))
        lines.append(
            f'    (%3) = "pd_op.transpose" (%2) {{perm:[{perm_text}],stop_gradient:[true]}} : '
            f"({_t(shape, dtype)}) -> {_t(out, dtype)}"
        )
        lines.append(
            f'    (%4) = "pd_op.add" (%1, %3) {{stop_gradient:[true]}} : ({_t(out, dtype)}, '
            f"{_t(out, dtype)}) -> {_t(out, dtype)}"
        )
    elif then == "cast":
        lines.append(
            f'    (%2) = "pd_op.cast" (%1) {{dtype:float32,stop_gradient:[true]}} : '
            f"({_t(out, dtype)}) -> {_t(out, 'float32')}"
        )
    lines += ["}", ""]
    return "\n".join(lines)


def lowered(text):
    program = parse_program(text)
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program))


GOLDEN = """function fn_group_0 (var_0, var_2)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_0_0_i_1_0_fused, 0, 12)
    {
      thread_bind[threadIdx.y] for (var_0_shared_0_1, 0, 8)
      {
        thread_bind[threadIdx.x] for (var_0_shared_1, 0, 32)
        {
          unroll for (var_0_shared_0_0, 0, 4)
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
      thread_bind[threadIdx.y] for (i_0_1_1, 0, 8)
      {
        thread_bind[threadIdx.x] for (i_1_1, 0, 32)
        {
          unroll for (i_0_1_0, 0, 4)
          {
            if ((((((i_0_1_0 * 8) + i_0_1_1) + ((i_0_0_i_1_0_fused / 4) * 32)) < 70) and ((i_1_1 + ((i_0_0_i_1_0_fused % 4) * 32)) < 100))) {
              ScheduleBlock(var_2)
              {
                i0_0, i1_0 = axis.bind((((i_0_1_0 * 8) + i_0_1_1) + ((i_0_0_i_1_0_fused / 4) * 32)), (i_1_1 + ((i_0_0_i_1_0_fused % 4) * 32)))
                read_buffers(var_0_shared[var_0_shared_d0(0:32), var_0_shared_d1(0:33)])
                write_buffers(var_2[i0_0(0:70), i1_0(0:100)])
                var_2[i0_0, i1_0] = cinn_max(var_0_shared[i_1_1, ((i_0_1_0 * 8) + i_0_1_1)], 0.00000000f)
              }
            }
          }
        }
      }
    }
  }
}"""  # noqa: E501

TRACE = """split(loop=i_0, factors=[-1, 32]) -> [i_0_0, i_0_1]
split(loop=i_1, factors=[-1, 32]) -> [i_1_0, i_1_1]
reorder(loops=[i_0_0, i_1_0, i_0_1, i_1_1])
fuse(loops=[i_0_0, i_1_0]) -> i_0_0_i_1_0_fused
bind(loop=i_0_0_i_1_0_fused, thread_axis=blockIdx.x)
split(loop=i_0_1, factors=[4, 8]) -> [i_0_1_0, i_0_1_1]
reorder(loops=[i_0_1_1, i_1_1, i_0_1_0])
bind(loop=i_0_1_1, thread_axis=threadIdx.y)
bind(loop=i_1_1, thread_axis=threadIdx.x)
unroll(loop=i_0_1_0)
cache_tile(block=var_2, buffer=var_0, loop=i_0_0_i_1_0_fused, pad=1) -> var_0_shared
split(loop=var_0_shared_0, factors=[4, 8]) -> [var_0_shared_0_0, var_0_shared_0_1]
reorder(loops=[var_0_shared_0_1, var_0_shared_1, var_0_shared_0_0])
bind(loop=var_0_shared_0_1, thread_axis=threadIdx.y)
bind(loop=var_0_shared_1, thread_axis=threadIdx.x)
unroll(loop=var_0_shared_0_0)
sync_threads(ref=var_0_shared)"""


def test_golden_ir_and_trace_of_a_transpose():
    func = lowered(transpose((100, 70), (1, 0), then="relu"))
    result = auto_schedule(func, TargetInfo.cuda())
    assert print_ir(result.func).strip() == GOLDEN
    assert str(result.trace).strip() == TRACE
    assert (result.launch.threads, result.launch.blocks) == (256, 12)
    x = np.random.default_rng(0).standard_normal((100, 70)).astype(np.float32)
    out = np.zeros((70, 100), np.float32)
    run_function(result.func, {"var_0": x, "var_2": out})
    np.testing.assert_array_equal(out, np.maximum(x.T, 0))


PLANS = [
    # (program, the plan's (dim, inputs), or None: the flat schedule)
    (transpose((100, 70), (1, 0)), (0, ("var_0",))),
    (transpose((5, 64, 48), (0, 2, 1)), (1, ("var_0",))),
    (transpose((2, 40, 3, 36), (0, 2, 3, 1)), (2, ("var_0",))),
    (transpose((64, 64), (1, 0), then="add"), (0, ("var_0",))),
    (transpose((64, 48), (1, 0), then="add_t"), (0, ("var_0", "var_2"))),
    (transpose((3, 40, 50), (1, 0, 2)), None),  # the innermost dim stays: coalesced already
    (transpose((100, 20), (1, 0)), None),  # 20 columns: shorter than a tile
    (transpose((20, 100), (1, 0)), None),
    (transpose((40, 3, 50), (2, 1, 0)), (0, ("var_0",))),  # the middle dim on the grid
    (transpose((40, 3, 16), (2, 1, 0)), None),  # x's innermost dim: shorter than a tile
]


@pytest.mark.parametrize(("text", "want"), PLANS, ids=[f"plan{k}" for k in range(len(PLANS))])
def test_which_groups_take_the_tile_schedule(text, want):
    plan = tile_plan(lowered(text))
    if want is None:
        assert plan is None
    else:
        assert isinstance(plan, TilePlan)
        assert (plan.dim, plan.inputs) == want


def _feeds(program, seed=0):
    rng = np.random.default_rng(seed)
    feeds = {}
    for op in program.block:
        if op.name != "pd_op.data":
            continue
        t = op.result().type
        values = rng.standard_normal(t.dims) * 3
        if t.data_type is DataType.BFLOAT16:
            feeds[op.attr("name")] = float32_to_bfloat16(values.astype(np.float32))
        elif np.issubdtype(t.data_type.numpy, np.integer):
            feeds[op.attr("name")] = rng.integers(-(2**40), 2**40, t.dims).astype(t.data_type.numpy)
        else:
            feeds[op.attr("name")] = values.astype(t.data_type.numpy)
    return feeds


EMU = [
    ("f32-100x70", transpose((100, 70), (1, 0), then="relu"), 1, (32, 8, 1)),
    ("f32-64x64", transpose((64, 64), (1, 0)), 1, (8, 32, 1)),  # 16-byte vectors
    ("f32-33x65", transpose((33, 65), (1, 0)), 1, (32, 8, 1)),  # a row and a column past
    ("f16-64x96", transpose((64, 96), (1, 0), "float16"), 1, (32, 8, 1)),
    ("bf16-40x33", transpose((40, 33), (1, 0), "bfloat16"), 1, (32, 8, 1)),
    ("i64-33x64", transpose((33, 64), (1, 0), "int64"), 1, (32, 8, 1)),
    ("i64-64x32", transpose((64, 32), (1, 0), "int64"), 1, (8, 16, 1)),  # 16 x 16 tiles
    ("f64-48x40", transpose((48, 40), (1, 0), "float64"), 1, (32, 8, 1)),
    ("f64-32x96", transpose((32, 96), (1, 0), "float64"), 1, (8, 16, 1)),
    ("f32-3d", transpose((5, 64, 48), (0, 2, 1)), 1, (32, 8, 1)),
    ("f32-3d-vectors", transpose((3, 64, 96), (0, 2, 1)), 1, (8, 32, 1)),
    ("f32-4d", transpose((2, 40, 3, 36), (0, 2, 3, 1)), 1, (32, 8, 1)),
    ("f32-reverse-3d", transpose((40, 3, 50), (2, 1, 0)), 1, (32, 8, 1)),
    ("f32-add", transpose((64, 70), (1, 0), then="add"), 1, (32, 8, 1)),
    ("f32-add-vectors", transpose((64, 96), (1, 0), then="add"), 1, (8, 32, 1)),
    ("f32-two-tiles", transpose((64, 48), (1, 0), then="add_t"), 2, (32, 8, 1)),
    ("f32-two-tiles-vectors", transpose((64, 32), (1, 0), then="add_t"), 2, (8, 32, 1)),
    ("f16-cast", transpose((96, 40), (1, 0), "float16", then="cast"), 1, (32, 8, 1)),
]


@pytest.mark.parametrize(("name", "text", "tiles", "block"), EMU, ids=[c[0] for c in EMU])
def test_tiled_transposes_match_the_reference_on_emu(name, text, tiles, block):
    """Scalars in 32 x 32 tiles of 32 x 8 threads; where both tiled dims are multiples
    of a 128-byte tile row, 16-byte vectors: 8 threads a row, a thread a row."""
    program = parse_program(text)
    exe = cinn_py.compile(program, target="cuda-emu")
    (kernel,) = exe.kernels
    assert kernel.block == block
    body = exe.cuda_source[exe.cuda_source.index('extern "C"') :]
    assert body.count("__shared__") == tiles
    assert body.count("__syncthreads();") == tiles
    assert ("cinn_vec<" in body) == (block[0] == 8)
    _matches_the_reference(name, text, program, exe, _feeds(program))


def _matches_the_reference(name, text, program, exe, feeds):
    got = exe.run(feeds)
    want = run_reference(program, feeds)
    for key, expected in zip(got, want, strict=True):
        expected = np.asarray(expected)
        bf16 = "bfloat16" in text and expected.dtype == np.uint16
        result = compare(np.asarray(got[key]), expected, "bfloat16" if bf16 else None)
        assert result.ok, f"{name} {key}: {result}"


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_nvrtc_compiles_the_tile_with_one_barrier(arch):
    func = lowered(transpose((4096, 4096), (1, 0)))
    result = auto_schedule(func, TargetInfo.cuda())
    ptx = nvrtc.compile_ptx(generate_cuda([result.func]).source, arch)
    assert ptx.count("bar.sync") == 1
    assert ".shared .align 4 .b8" in ptx and "ld.shared.f32" in ptx and "st.shared.f32" in ptx
    assert ptx.count("ld.global.nc.v4.f32") == 1 and ptx.count("st.global.v4.f32") == 1
    assert ".local" not in ptx


SIXTEEN_BYTES = [
    ("f16-64x128", transpose((64, 128), (1, 0), "float16")),
    ("f16-192x64-relu", transpose((192, 64), (1, 0), "float16", then="relu")),
    ("bf16-128x64", transpose((128, 64), (1, 0), "bfloat16")),
    ("f16-3d", transpose((3, 64, 128), (0, 2, 1), "float16")),
    ("f16-add-t", transpose((64, 64), (1, 0), "float16", then="add_t")),
]


@pytest.mark.parametrize(("name", "text"), SIXTEEN_BYTES, ids=[c[0] for c in SIXTEEN_BYTES])
def test_two_byte_tiles_move_16_bytes_and_match_the_reference(name, text):
    """2-byte elements with both tiled dims a multiple of 64: 64 x 64 tiles, each thread
    8 columns of a tile row (`tile_lanes`), so the fill loads and the block stores 16
    bytes a thread (8 threads a 128-byte row); the numbers as the reference's."""
    program = parse_program(text)
    exe = cinn_py.compile(program, target="cuda-emu")
    body = exe.cuda_source[exe.cuda_source.index('extern "C"') :]
    half = "__nv_bfloat16" if "bfloat16" in text else "__half"
    assert f"*reinterpret_cast<const cinn_vec<{half}, 8>*>(var_" in body
    assert f"*reinterpret_cast<cinn_vec<{half}, 8>*>(var_" in body
    assert re.search(r"__shared__ \w+ var_\d+_shared\[4160\];", body)  # 64 x (64 + 1)
    _matches_the_reference(name, text, program, exe, _feeds(program, seed=5))


@pytest.mark.parametrize(("name", "text"), SIXTEEN_BYTES, ids=[c[0] for c in SIXTEEN_BYTES])
def test_two_byte_tiles_can_move_pairs(name, text):
    """The pairs a thread (lanes 2: 64 x 64 tiles of 32 x 8 threads, 4 bytes an access)
    stay a candidate of the tuner's, and compute the reference's numbers."""
    program = parse_program(text)
    func = lowered(text)
    plan = tile_plan(func)
    assert tile_lane_choices(func, plan) == [1, 2, 8]
    entry = {"lanes": 2, "tile_rows": 8}
    db = ScheduleDB("sm_90").with_entry(TACTIC_NAMED["tile"].key(func), entry)
    exe = cinn_py.compile(program, target="cuda-emu", schedules=db)
    body = exe.cuda_source[exe.cuda_source.index('extern "C"') :]
    half = "__nv_bfloat16" if "bfloat16" in text else "__half"
    assert f"*reinterpret_cast<const cinn_vec<{half}, 2>*>(var_" in body
    assert re.search(r"__shared__ \w+ var_\d+_shared\[4224\];", body)  # 64 x (64 + 2)
    _matches_the_reference(name, text, program, exe, _feeds(program, seed=6))


@pytest.mark.parametrize(
    "text",
    [
        transpose((64, 96), (1, 0), "float16"),  # 96: an edge tile
        transpose((100, 64), (1, 0), "float32"),  # 100: an edge tile
        transpose((96, 40), (1, 0), "float16", then="cast"),  # a float32 output
    ],
)
def test_other_tiles_keep_one_element_a_thread(text):
    func = lowered(text)
    plan = tile_plan(func)
    assert plan is not None and tile_lanes(func, plan) == 1
