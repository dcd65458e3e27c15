"""Traces: one readable line per step, and replay to structurally equal IR."""

from __future__ import annotations

import pytest
from schedule_funcs import elementwise_2d, elementwise_3d, producer_consumer, producer_transpose

from cinn_py.errors import ScheduleError
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import BlockRef, IRSchedule, LoopRef, Step, Trace
from cinn_py.ir.visitor import structural_equal


def gpu_schedule(sch: IRSchedule) -> None:
    """What an elementwise tactic does: inline, fuse, split, bind, vectorize."""
    sch.compute_inline(sch.get_block("var_1"))
    fused = sch.fuse(sch.get_loops("var_2"))
    blocks, threads, lanes = sch.split(fused, [-1, 64, 4])
    sch.bind(blocks, "blockIdx.x")
    sch.bind(threads, "threadIdx.x")
    sch.vectorize(lanes, 4)


def test_trace_text() -> None:
    sch = IRSchedule(producer_consumer())
    gpu_schedule(sch)
    assert str(sch.trace) == "\n".join(
        [
            "compute_inline(block=var_1)",
            "fuse(loops=[i_2, i_3]) -> i_2_i_3_fused",
            "split(loop=i_2_i_3_fused, factors=[-1, 64, 4]) -> "
            "[i_2_i_3_fused_0, i_2_i_3_fused_1, i_2_i_3_fused_2]",
            "bind(loop=i_2_i_3_fused_0, thread_axis=blockIdx.x)",
            "bind(loop=i_2_i_3_fused_1, thread_axis=threadIdx.x)",
            "vectorize(loop=i_2_i_3_fused_2, factor=4)",
        ]
    )
    assert len(sch.trace) == 6
    assert sch.trace.steps[1] == Step(
        "fuse", (("loops", (LoopRef("i_2"), LoopRef("i_3"))),), LoopRef("i_2_i_3_fused")
    )


def test_scheduled_ir() -> None:
    sch = IRSchedule(producer_consumer())
    gpu_schedule(sch)
    assert (
        print_ir(sch.func)
        == """\
function fn_pc (var_0, var_2)
ScheduleBlock(root)
{
  {
    thread_bind[blockIdx.x] for (i_2_i_3_fused_0, 0, 2)
    {
      thread_bind[threadIdx.x] for (i_2_i_3_fused_1, 0, 64)
      {
        vectorize[4] for (i_2_i_3_fused_2, 0, 4)
        {
          ScheduleBlock(var_2)
          {
            i0_1, i1_1 = axis.bind(((((i_2_i_3_fused_0 * 256) + (i_2_i_3_fused_1 * 4)) + i_2_i_3_fused_2) / 16), (((i_2_i_3_fused_1 * 4) + i_2_i_3_fused_2) % 16))
            read_buffers(var_0[i0_1(0:32), i1_1(0:16)])
            write_buffers(var_2[i0_1(0:32), i1_1(0:16)])
            {
              var_2[i0_1, i1_1] = (exp(var_0[i0_1, i1_1]) + var_0[i0_1, i1_1])
            }
          }
        }
      }
    }
  }
}"""
    )


@pytest.mark.parametrize(
    "factory, schedule",
    [
        (producer_consumer, gpu_schedule),
        (
            elementwise_3d,
            lambda s: (
                s.reorder(["i_2", "i_0"]),
                s.split("i_1", [2, -1]),
                s.unroll("i_1_0"),
                s.fuse(["i_1_1", "i_0"]),
            ),
        ),
        (
            producer_transpose,
            lambda s: (
                s.reverse_compute_inline("var_2"),
                s.bind(s.fuse(s.get_loops("var_1")), "threadIdx.x"),
            ),
        ),
    ],
)
def test_replay_gives_the_same_ir(factory, schedule) -> None:
    func = factory()
    sch = IRSchedule(func)
    schedule(sch)
    replayed = sch.trace.replay(func)
    assert structural_equal(replayed, sch.func)
    assert print_ir(replayed) == print_ir(sch.func)
    assert not structural_equal(replayed, func)


def test_replay_of_a_rebuilt_trace() -> None:
    """A trace is plain data: one rebuilt from its steps replays the same."""
    func = producer_consumer()
    sch = IRSchedule(func)
    gpu_schedule(sch)
    again = Trace(list(sch.trace))
    assert again == sch.trace
    assert structural_equal(again.replay(func), sch.func)


def test_untraced_schedule_records_nothing() -> None:
    func = producer_consumer()
    traced, untraced = IRSchedule(func), IRSchedule(func, trace=False)
    gpu_schedule(traced)
    gpu_schedule(untraced)
    assert len(untraced.trace) == 0 and str(untraced.trace) == ""
    assert structural_equal(traced.func, untraced.func)


def test_lookups_are_not_recorded() -> None:
    sch = IRSchedule(elementwise_2d())
    sch.get_block("var_2")
    sch.get_all_blocks()
    sch.get_loops(BlockRef("var_2"))
    assert len(sch.trace) == 0


def test_replay_on_another_function_fails_clearly() -> None:
    trace = Trace(
        [
            Step(
                "split",
                (("loop", LoopRef("i_1")), ("factors", (-1, 4))),
                (LoopRef("a"), LoopRef("b")),
            )
        ]
    )
    with pytest.raises(ScheduleError) as info:
        trace.replay(elementwise_2d())
    assert str(info.value) == (
        "split on block '<unknown>': replay gave [i_1_0, i_1_1], the trace recorded [a, b]"
    )
    missing = Trace([Step("compute_inline", (("block", BlockRef("var_1")),))])
    with pytest.raises(ScheduleError, match="compute_inline on block 'var_1': no such block"):
        missing.replay(elementwise_2d())
