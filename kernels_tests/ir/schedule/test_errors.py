"""Every precondition a primitive checks, violated once: ScheduleError with its message."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from schedule_funcs import (
    broadcast_consumer,
    elementwise_2d,
    elementwise_3d,
    odd_loops,
    producer_consumer,
    producer_transpose,
    reduce_expr,
    reduce_init_update,
    scalar_0d,
    shared_outer_loop,
    slice_consumer,
    symmetric_sum,
    two_consumers,
    two_producers,
)

from cinn_py.errors import ScheduleError
from cinn_py.ir.schedule import BlockRef, IRSchedule, LoopRef

FUSE_NEEDS = " (fuse needs consecutive, perfectly nested loops)"


def split_twice(sch: IRSchedule) -> None:
    sch.split("i_0", [2, -1])
    sch.split("i_0", [2, -1])


ERRORS: dict[str, tuple[Callable, Callable[[IRSchedule], object], str]] = {
    # lookups and handles
    "unknown block": (
        producer_consumer,
        lambda s: s.get_block("var_9"),
        "get_block on block 'var_9': no such block in fn_pc (blocks: var_1, var_2)",
    ),
    "root block": (
        elementwise_2d,
        lambda s: s.get_loops(BlockRef("root")),
        "get_loops on block 'root': the root block cannot be scheduled",
    ),
    "stale loop": (
        elementwise_2d,
        split_twice,
        "split on block '<unknown>': no loop 'i_0' in fn_ew2d (a stale handle to a replaced "
        "loop, or a wrong name)",
    ),
    "0-D has no loops": (
        scalar_0d,
        lambda s: s.unroll(LoopRef("i_0")),
        "unroll on block '<unknown>': no loop 'i_0' in fn_0d (a stale handle to a replaced "
        "loop, or a wrong name)",
    ),
    # split
    "split two -1": (
        elementwise_2d,
        lambda s: s.split("i_1", [-1, 4, -1]),
        "split on block 'var_2': factors [-1, 4, -1] have more than one -1 (only one can be "
        "inferred)",
    ),
    "split zero factor": (
        elementwise_2d,
        lambda s: s.split("i_1", [0, -1]),
        "split on block 'var_2': factor 0 of [0, -1] is not positive",
    ),
    "split negative factor": (
        elementwise_2d,
        lambda s: s.split("i_1", [-4, 32]),
        "split on block 'var_2': factor -4 of [-4, 32] is not positive",
    ),
    "split too small": (
        elementwise_2d,
        lambda s: s.split("i_1", [4, 16]),
        "split on block 'var_2': factors [4, 16] cover 64 iterations, fewer than the extent "
        "128 of loop i_1",
    ),
    "split no factors": (
        elementwise_2d,
        lambda s: s.split("i_1", []),
        "split on block 'var_2': no factors given for loop i_1",
    ),
    "split float factor": (
        elementwise_2d,
        lambda s: s.split("i_1", [2.0, -1]),
        "split on block 'var_2': factor 2.0 is not an int",
    ),
    "split bound loop": (
        elementwise_2d,
        lambda s: (s.bind("i_0", "blockIdx.x"), s.split("i_0", [-1, 2])),
        "split on block 'var_2': loop i_0 is bound to blockIdx.x; bind after split",
    ),
    "split unrolled loop": (
        elementwise_2d,
        lambda s: (s.unroll("i_0"), s.split("i_0", [-1, 2])),
        "split on block 'var_2': loop i_0 is unrolled, not serial",
    ),
    "split symbolic extent without -1": (
        odd_loops,
        lambda s: s.split("i_0", [4, 2]),
        "split on block 'var_1': loop i_0 has the symbolic extent n: give positive int "
        "factors with exactly one -1, or constant factors covering its value, got [4, 2]",
    ),
    "split loop not from 0": (
        odd_loops,
        lambda s: s.split("i_1", [-1, 2]),
        "split on block 'var_2': loop i_1 does not start at 0",
    ),
    # fuse
    "fuse nothing": (
        elementwise_2d,
        lambda s: s.fuse([]),
        "fuse on block '<unknown>': no loops given",
    ),
    "fuse duplicate": (
        elementwise_2d,
        lambda s: s.fuse(["i_0", "i_0"]),
        "fuse on block 'var_2': loop i_0 is given more than once",
    ),
    "fuse skipping a loop": (
        elementwise_3d,
        lambda s: s.fuse(["i_0", "i_2"]),
        "fuse on block 'var_1': loop i_2 is not directly inside loop i_0" + FUSE_NEEDS,
    ),
    "fuse inner first": (
        elementwise_2d,
        lambda s: s.fuse(["i_1", "i_0"]),
        "fuse on block 'var_2': loop i_0 is not inside loop i_1" + FUSE_NEEDS,
    ),
    "fuse two nests": (
        producer_consumer,
        lambda s: s.fuse(["i_1", "i_2"]),
        "fuse on block 'var_1': loop i_2 is not inside loop i_1" + FUSE_NEEDS,
    ),
    "fuse imperfect nest": (
        shared_outer_loop,
        lambda s: s.fuse(["i_0", "i_1"]),
        "fuse on block 'var_1, var_2': the body of loop i_0 holds more than loop i_1" + FUSE_NEEDS,
    ),
    "fuse vectorized": (
        elementwise_2d,
        lambda s: (s.split("i_1", [-1, 4]), s.vectorize("i_1_1", 4), s.fuse(["i_1_0", "i_1_1"])),
        "fuse on block 'var_2': loop i_1_1 is vectorized, not serial",
    ),
    # reorder
    "reorder two nests": (
        producer_consumer,
        lambda s: s.reorder(["i_0", "i_2"]),
        "reorder on block 'var_1': loops i_0 and i_2 are not in one loop nest",
    ),
    "reorder imperfect nest": (
        shared_outer_loop,
        lambda s: s.reorder(["i_1", "i_0"]),
        "reorder on block 'var_1, var_2': the body of loop i_0 is not a single loop (reorder "
        "needs a perfect nest from i_0 down)",
    ),
    "reorder siblings": (
        shared_outer_loop,
        lambda s: s.reorder(["i_1", "i_2"]),
        "reorder on block 'var_1': loops i_1 and i_2 are not in one loop nest",
    ),
    "reorder duplicate": (
        elementwise_3d,
        lambda s: s.reorder(["i_2", "i_0", "i_2"]),
        "reorder on block 'var_1': loop i_2 is given more than once",
    ),
    # bind
    "bind unknown axis": (
        elementwise_2d,
        lambda s: s.bind("i_0", "threadIdx.w"),
        "bind on block 'var_2': unknown thread axis 'threadIdx.w' (expected one of blockIdx.x, "
        "blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z)",
    ),
    "bind twice": (
        elementwise_2d,
        lambda s: (s.bind("i_0", "blockIdx.x"), s.bind("i_0", "blockIdx.y")),
        "bind on block 'var_2': loop i_0 is already bound to blockIdx.x",
    ),
    "bind vectorized": (
        elementwise_2d,
        lambda s: (
            s.split("i_1", [-1, 4]),
            s.vectorize("i_1_1", 4),
            s.bind("i_1_1", "threadIdx.x"),
        ),
        "bind on block 'var_2': loop i_1_1 is already vectorized, not serial",
    ),
    "bind same axis in one nest": (
        elementwise_2d,
        lambda s: (s.bind("i_1", "threadIdx.x"), s.bind("i_0", "threadIdx.x")),
        "bind on block 'var_2': loop i_1 of the same nest is already bound to threadIdx.x",
    ),
    "bind loop not from 0": (
        odd_loops,
        lambda s: s.bind("i_1", "threadIdx.x"),
        "bind on block 'var_2': loop i_1 does not start at 0",
    ),
    # vectorize
    "vectorize odd width": (
        elementwise_2d,
        lambda s: (s.split("i_1", [-1, 3]), s.vectorize("i_1_1", 3)),
        "vectorize on block 'var_2': factor 3 is not a vector width (2, 4, 8, 16)",
    ),
    "vectorize extent differs": (
        elementwise_2d,
        lambda s: s.vectorize("i_1", 4),
        "vectorize on block 'var_2': loop i_1 has extent 128, not the factor 4 (split it first)",
    ),
    "vectorize outer loop": (
        elementwise_3d,
        lambda s: s.vectorize("i_0", 4),
        "vectorize on block 'var_1': the body of loop i_0 is not a single schedule block (only "
        "an innermost loop around one block can be vectorized)",
    ),
    "vectorize bound": (
        elementwise_3d,
        lambda s: (s.bind("i_2", "threadIdx.x"), s.vectorize("i_2", 16)),
        "vectorize on block 'var_1': loop i_2 is already bound to threadIdx.x",
    ),
    # unroll
    "unroll non-constant extent": (
        odd_loops,
        lambda s: s.unroll("i_0"),
        "unroll on block 'var_1': loop i_0 has a non-constant extent n",
    ),
    "unroll twice": (
        elementwise_2d,
        lambda s: (s.unroll("i_1"), s.unroll("i_1")),
        "unroll on block 'var_2': loop i_1 is already unrolled, not serial",
    ),
    "unroll bound": (
        elementwise_2d,
        lambda s: (s.bind("i_1", "threadIdx.x"), s.unroll("i_1")),
        "unroll on block 'var_2': loop i_1 is already bound to threadIdx.x",
    ),
    # compute_inline
    "inline an output": (
        producer_consumer,
        lambda s: s.compute_inline("var_2"),
        "compute_inline on block 'var_2': var_2 is an output argument of fn_pc; it must stay "
        "written",
    ),
    "inline a temp that is an output too": (
        lambda: producer_consumer(tmp_is_output=True),
        lambda s: s.compute_inline("var_1"),
        "compute_inline on block 'var_1': var_1 is an output argument of fn_pc; it must stay "
        "written",
    ),
    "inline a reduction": (
        reduce_expr,
        lambda s: s.compute_inline("var_1"),
        "compute_inline on block 'var_1': it is a reduction",
    ),
    "inline a permuted store": (
        producer_transpose,
        lambda s: (s.reverse_compute_inline("var_2"), s.compute_inline("var_1")),
        "compute_inline on block 'var_1': it stores var_2[i1_0, i0_0], not at its iter vars "
        "[i0_0, i1_0]",
    ),
    "inline a block reading itself": (
        reduce_init_update,
        lambda s: s.compute_inline("var_1"),
        "compute_inline on block 'var_1': it stores var_1[i0_1], not at its iter vars [i0_1, i1_1]",
    ),
    "inline a buffer written twice": (
        reduce_init_update,
        lambda s: s.compute_inline("var_1__reduce_init"),
        "compute_inline on block 'var_1__reduce_init': var_1 is also written by block var_1",
    ),
    # reverse_compute_inline
    "reverse: broadcast read": (
        broadcast_consumer,
        lambda s: s.reverse_compute_inline("var_3"),
        "reverse_compute_inline on block 'var_3': it reads var_1 at [i0_1], not a one-to-one "
        "map of its iter vars [i0_1, i1_1]",
    ),
    "reverse: no producer": (
        elementwise_2d,
        lambda s: s.reverse_compute_inline("var_2"),
        "reverse_compute_inline on block 'var_2': it must read exactly one buffer written by "
        "another block; it reads none",
    ),
    "reverse: two producers": (
        two_producers,
        lambda s: s.reverse_compute_inline("var_3"),
        "reverse_compute_inline on block 'var_3': it must read exactly one buffer written by "
        "another block; it reads var_1, var_2",
    ),
    "reverse: two consumers": (
        two_consumers,
        lambda s: s.reverse_compute_inline("var_2"),
        "reverse_compute_inline on block 'var_2': var_1 is also read by block var_3",
    ),
    "reverse: producer is an output": (
        lambda: producer_consumer(tmp_is_output=True),
        lambda s: s.reverse_compute_inline("var_2"),
        "reverse_compute_inline on block 'var_2': var_1 is an output argument of fn_pc; it must "
        "stay written",
    ),
    "reverse: two index lists": (
        symmetric_sum,
        lambda s: s.reverse_compute_inline("var_2"),
        "reverse_compute_inline on block 'var_2': it reads var_1 at [i0_1, i1_1] and at "
        "[i1_1, i0_1]",
    ),
    "reverse: smaller domain": (
        slice_consumer,
        lambda s: s.reverse_compute_inline("var_2"),
        "reverse_compute_inline on block 'var_2': its iter var i0_1 ranges over [0, 8) but the "
        "producer's i0_0 over [0, 16)",
    ),
    "reverse: producer is a reduction": (
        reduce_expr,
        lambda s: s.reverse_compute_inline("var_2"),
        "reverse_compute_inline on block 'var_2': its producer var_1: it is a reduction",
    ),
    "reverse: consumer is a reduction": (
        reduce_expr,
        lambda s: s.reverse_compute_inline("var_3"),
        "reverse_compute_inline on block 'var_3': it is a reduction",
    ),
    "reverse: producer written twice": (
        reduce_init_update,
        lambda s: s.reverse_compute_inline("var_2"),
        "reverse_compute_inline on block 'var_2': var_1 is written by blocks "
        "var_1__reduce_init, var_1",
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error(name: str) -> None:
    factory, schedule, message = ERRORS[name]
    sch = IRSchedule(factory())
    with pytest.raises(ScheduleError) as info:
        schedule(sch)
    assert str(info.value) == message


def test_failed_primitive_changes_nothing() -> None:
    sch = IRSchedule(elementwise_2d())
    sch.split("i_1", [-1, 32])
    before, steps = sch.func, sch.trace.steps
    with pytest.raises(ScheduleError):
        sch.fuse(["i_1_1", "i_0"])
    assert sch.func is before
    assert sch.trace.steps == steps


def test_error_fields() -> None:
    with pytest.raises(ScheduleError) as info:
        IRSchedule(elementwise_2d()).vectorize("i_1", 8)
    assert (info.value.primitive, info.value.block) == ("vectorize", "var_2")
    assert info.value.why.startswith("loop i_1 has extent 128")


def test_handles_of_the_wrong_type() -> None:
    sch = IRSchedule(elementwise_2d())
    with pytest.raises(TypeError, match="expected a LoopRef or a loop var name, got int"):
        sch.unroll(0)
    with pytest.raises(TypeError, match="expected a BlockRef or a block name, got LoopRef"):
        sch.get_loops(LoopRef("i_0"))
