"""The proofs behind vector accesses: contiguous, aligned lanes and lane-uniform guards."""

from __future__ import annotations

import pytest
from codegen_cases import all_cases
from codegen_helpers import buffer, flat_nest, function

from cinn_py.backends.codegen_lanes import (
    contiguous_base,
    is_on_chip,
    is_uniform,
    lane_form,
    plan_vector_loop,
)
from cinn_py.ir.expr import Buffer, Cast, FloatImm, IntImm, Load, MemoryType, Select, Var
from cinn_py.ir.printer import print_ir
from cinn_py.ir.stmt import (
    Block,
    BufferRange,
    For,
    ForType,
    Let,
    ScheduleBlock,
    ScheduleBlockRealize,
    Store,
)
from cinn_py.pir.dtypes import DataType

CASES_BY_NAME = {case.name: case for case in all_cases()}
L = 4
b = Var("b", DataType.INT32, 0, 8)
t = Var("t", DataType.INT32, 0, 256)
v = Var("v", DataType.INT32, 0, L)
n = Var("n", DataType.INT32)  # no bounds: nothing proves it non-negative
FUSED = b * 1024 + t * 4 + v


def base_of(x) -> str | None:
    found = contiguous_base(x, "v", L)
    return None if found is None else print_ir(found)


def test_lane_form_of_a_split_index():
    form = lane_form(FUSED, "v", L)
    assert (print_ir(form.base), form.stride, form.multiple) == (
        "(((b * 1024) + (t * 4)) + 0)",
        1,
        4,
    )


def test_lane_form_through_division_and_remainder():
    row, col = lane_form(FUSED / 128, "v", L), lane_form(FUSED % 128, "v", L)
    assert (row.stride, row.multiple) == (0, 1)
    assert (col.stride, col.multiple) == (1, 4)
    assert lane_form((t * 2 + v) / 4, "v", L) is None  # lanes cross a multiple of 4
    assert lane_form((n * 4 + v) / 8, "v", L) is None  # n * 4 may be negative
    assert lane_form((n * 8) / 4, "v", L).multiple == 2  # exact without the lane
    assert lane_form(Load(buffer("x", DataType.INT32, [4]), [v]), "v", L) is None


@pytest.mark.parametrize(
    ("offset", "base"),
    [
        (FUSED, "((b * 1024) + (t * 4))"),
        # after fuse + split: rows and columns of one index, which the simplifier
        # merges back (`%` dropped b * 1024, `/` kept it: both never negative)
        ((FUSED / 128) * 128 + FUSED % 128, "((b * 1024) + (t * 4))"),
        # (2, 3, 8) fused: the simplifier cannot merge it back, the lane form still proves it
        (
            ((FUSED / 24) * 3 + (FUSED / 8) % 3) * 8 + FUSED % 8,
            "(((((((b * 1024) + (t * 4)) / 8) % 3) * 8) + ((((b * 1024) + (t * 4)) / 24) * 24))"
            " + ((t * 4) % 8))",
        ),
        # a row of 6 is no multiple of 4, but the simplified offset is the fused index
        ((t * 4 + v) % 6 + ((t * 4 + v) / 6) * 6, "(t * 4)"),
        # rows of 128 that lie 256 apart: each run of 4 lanes is within one row
        (
            (FUSED / 128) * 256 + FUSED % 128,
            "(((((b * 1024) + (t * 4)) / 128) * 256) + ((t * 4) % 128))",
        ),
    ],
    ids=["fused", "2d", "3d", "odd_rows", "padded_rows"],
)
def test_contiguous_offsets(offset, base):
    assert base_of(offset) == base


@pytest.mark.parametrize(
    "offset",
    [
        v * 2,  # stride 2
        t * 3 + v,  # not a multiple of 4 lanes
        IntImm(3) - v,  # backwards
        (FUSED / 2) * 4 + FUSED % 2,  # rows of 2, 4 apart
        n * 4 + v * v,
    ],
    ids=["stride", "misaligned", "backwards", "gapped", "nonlinear"],
)
def test_offsets_that_are_not_one_aligned_run(offset):
    assert base_of(offset) is None


@pytest.mark.parametrize(
    ("cond", "uniform"),
    [
        (FUSED.lt(64), True),
        (FUSED.lt(62), False),
        (FUSED.ge(8), True),
        ((FUSED / 6).lt(10), True),  # f < 60
        ((FUSED / 7).lt(5), False),  # f < 35
        (v.lt(2), False),
        (FUSED.eq(8), False),
        ((FUSED / 4).eq(3), True),
        (t.lt(3), True),
        (FUSED.lt(64) & t.lt(3), True),
        (~FUSED.lt(62), False),
        (IntImm(64).gt(FUSED), True),
    ],
)
def test_uniform_conditions(cond, uniform):
    assert is_uniform(cond, "v", L) is uniform


def _vector_loop(func):
    """The vectorized loop of a flat_nest function."""
    node = func.body.schedule_block.body.stmts[0]
    while node.for_type is not ForType.VECTORIZED:
        node = node.body.stmts[0]
    return node


def _bounds():
    return {"i_b": Var("i_b", DataType.INT32, 0, 8), "i_t": Var("i_t", DataType.INT32, 0, 256)}


def test_plan_of_an_elementwise_loop():
    plan = plan_vector_loop(_vector_loop(CASES_BY_NAME["ew_f32_vec4"].func), _bounds())
    ((realize_plan),) = plan.realizes.values()
    assert len(realize_plan.vector_stores) == 1
    assert [name for name, _ in realize_plan.loads] == ["var_3", "var_4"]
    assert plan.conditions == {}


def test_only_loads_every_lane_performs_are_hoisted():
    x, y = buffer("var_0", DataType.FLOAT32, [1024]), buffer("var_1", DataType.FLOAT32, [1024])
    z = buffer("var_2", DataType.FLOAT32, [1024])

    def value(iv):
        return Select(Load(x, iv).gt(FloatImm(0.0)), Load(y, iv), FloatImm(0.0))

    func = function("fn", [x, y], [z], [flat_nest(z, value, threads=256, lanes=4)])
    plan = plan_vector_loop(_vector_loop(func), _bounds())
    ((realize_plan),) = plan.realizes.values()
    assert [name for name, _ in realize_plan.loads] == ["var_0"]


def test_loops_that_stay_scalar():
    guarded = _vector_loop(CASES_BY_NAME["guard_lanes"].func)
    assert plan_vector_loop(guarded, _bounds()) is None

    loop = _vector_loop(CASES_BY_NAME["ew_f32_vec4"].func)
    shifted = For(loop.loop_var, 1, 4, ForType.VECTORIZED, loop.body)
    assert plan_vector_loop(shifted, _bounds()) is None

    y = buffer("var_7", DataType.FLOAT32, [64, 128])
    in_place = Store(y, Load(y, [IntImm(0), v]), [IntImm(0), v])
    assert plan_vector_loop(For(v, 0, 4, ForType.VECTORIZED, in_place), _bounds()) is None

    with_let = Block([Let(Var("s", DataType.FLOAT32), FloatImm(1.0))])
    assert plan_vector_loop(For(v, 0, 4, ForType.VECTORIZED, with_let), _bounds()) is None


def test_widening_casts_keep_the_form():
    wide = lane_form(Cast(DataType.INT64, FUSED), "v", L)
    assert (print_ir(wide.base), wide.stride, wide.multiple) == (
        "int64((((b * 1024) + (t * 4)) + 0))",
        1,
        4,
    )
    assert lane_form(Cast(DataType.INT8, FUSED), "v", L) is None


def _register_loop(load_registers: bool) -> For:
    """`for v vectorized[4]`: r[t, v] = x[t * 4 + v] (a register fill) or, with
    `load_registers`, y[t * 4 + v] = r[t, v] (a write from registers); r is a local
    buffer whose dim 1 is the thread's registers."""
    x, y = buffer("x", DataType.FLOAT32, [1024]), buffer("y", DataType.FLOAT32, [1024])
    r = Buffer("r", DataType.FLOAT32, [256, 4], MemoryType.LOCAL, (1,))
    a, c = Var("a", DataType.INT32, 0, 256), Var("c", DataType.INT32, 0, 4)
    if load_registers:
        store = Store(y, Load(r, [a, c]), [a * 4 + c])
    else:
        store = Store(r, Load(x, [a * 4 + c]), [a, c])
    written = BufferRange(store.tensor, [a, c] if store.tensor is r else [a])
    block = ScheduleBlock([a, c], [], [written], "blk", store)
    return For(v, 0, L, ForType.VECTORIZED, ScheduleBlockRealize([t, v], block))


def test_register_arrays_stay_lane_by_lane_and_global_accesses_become_vectors():
    """A register array is never read or written through a vector pointer (it has no
    address to cast; its lanes are register moves), while the global access of the
    same loop still becomes one vector access."""
    fill = plan_vector_loop(_register_loop(False), {"t": t})
    ((fill_plan),) = fill.realizes.values()
    assert [name for name, _ in fill_plan.loads] == ["x"]
    assert print_ir(fill_plan.loads[0][1]) == "(t * 4)"
    assert fill_plan.vector_stores == {}
    write = plan_vector_loop(_register_loop(True), {"t": t})
    ((write_plan),) = write.realizes.values()
    assert write_plan.loads == [] and write_plan.load_slots == {}
    assert [print_ir(base) for base in write_plan.vector_stores.values()] == ["(t * 4)"]
    assert is_on_chip(Buffer("r", DataType.FLOAT32, [4], MemoryType.LOCAL, (0,)))
    assert is_on_chip(Buffer("t", DataType.FLOAT32, [4], MemoryType.SHARED, (0,)))
    assert not is_on_chip(buffer("x", DataType.FLOAT32, [4]))
