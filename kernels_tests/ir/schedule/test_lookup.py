"""Finding blocks and loops, and handles that stay valid across primitives."""

from __future__ import annotations

import pytest
from schedule_funcs import (
    F32,
    elementwise_2d,
    elementwise_3d,
    function,
    loop,
    producer_consumer,
    realize,
    reduce_init_update,
    scalar_0d,
)

from cinn_py.ir.expr import Buffer, Load, Var
from cinn_py.ir.schedule import BlockRef, IRSchedule, LoopRef
from cinn_py.ir.stmt import BindInfo, For, ScheduleBlockRealize


def test_blocks_in_program_order() -> None:
    assert IRSchedule(producer_consumer()).get_all_blocks() == [
        BlockRef("var_1"),
        BlockRef("var_2"),
    ]
    assert IRSchedule(reduce_init_update()).get_all_blocks() == [
        BlockRef("var_1__reduce_init"),
        BlockRef("var_1"),
        BlockRef("var_2"),
    ]
    assert IRSchedule(scalar_0d()).get_all_blocks() == [BlockRef("var_1")]


def test_get_block_and_loops() -> None:
    sch = IRSchedule(producer_consumer())
    block = sch.get_block("var_2")
    assert block == BlockRef("var_2") and str(block) == "var_2"
    assert sch.get_loops(block) == [LoopRef("i_2"), LoopRef("i_3")]
    assert sch.get_loops("var_1") == [LoopRef("i_0"), LoopRef("i_1")]
    assert IRSchedule(scalar_0d()).get_loops("var_1") == []
    assert IRSchedule(reduce_init_update()).get_loops("var_1") == [LoopRef("i_1"), LoopRef("i_2")]


def test_get_reads_the_current_nodes() -> None:
    sch = IRSchedule(elementwise_3d())
    sch.bind("i_0", "blockIdx.x")
    loop = sch.get(LoopRef("i_0"))
    assert isinstance(loop, For)
    assert (loop.extent.value, loop.bind_info) == (4, BindInfo.BLOCK_X)
    realize = sch.get(sch.get_block("var_1"))
    assert isinstance(realize, ScheduleBlockRealize)
    assert [v.name for v in realize.schedule_block.iter_vars] == ["i0_0", "i1_0", "i2_0"]


def test_handles_survive_unrelated_primitives() -> None:
    sch = IRSchedule(elementwise_3d())
    i_0, i_1, i_2 = sch.get_loops("var_1")
    outer, inner = sch.split(i_2, [-1, 4])
    sch.reorder([inner, i_0])
    sch.unroll(i_1)
    assert sch.get_loops("var_1") == [inner, i_1, outer, i_0]
    assert str(inner) == "i_2_1"


def test_loop_names_stay_unique() -> None:
    """A split whose natural names are taken picks the next free ones."""
    sch = IRSchedule(elementwise_2d())
    sch.split("i_0", [-1])  # i_0 -> i_0_0
    sch.split("i_0_0", [-1, 4])  # i_0_0 -> i_0_0_0, i_0_0_1
    a, b = sch.fuse(["i_0_0_0", "i_0_0_1"]), LoopRef("i_1")
    assert a == LoopRef("i_0_0_0_i_0_0_1_fused")
    first, second = sch.split(a, [2, -1])
    assert (first.name, second.name) == ("i_0_0_0_i_0_0_1_fused_0", "i_0_0_0_i_0_0_1_fused_1")
    assert sch.get_loops("var_2") == [first, second, b]


def test_split_names_avoid_existing_vars() -> None:
    """Loops `i` and `i_0`: splitting `i` cannot name its outer loop `i_0`."""
    x, out = Buffer("var_0", F32, [8, 4]), Buffer("var_1", F32, [8, 4])
    i, i_0 = Var("i", lower=0, upper=8), Var("i_0", lower=0, upper=4)
    body = loop(i, 8, loop(i_0, 4, realize(out, [x], lambda iv: Load(x, iv), 0, [i, i_0])))
    sch = IRSchedule(function("fn_names", [x], [out], [body]))
    assert sch.split("i", [2, -1]) == [LoopRef("i_0_1"), LoopRef("i_1")]
    assert sch.get_loops("var_1") == [LoopRef("i_0_1"), LoopRef("i_1"), LoopRef("i_0")]


def test_not_a_function() -> None:
    with pytest.raises(TypeError, match="expected a LoweredFunc, got str"):
        IRSchedule("fn")
