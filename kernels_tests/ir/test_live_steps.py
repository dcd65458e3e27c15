"""live_extent: where a reduction masked past a symbolic length may end its loop.

Each case builds the partial Reduce the row / column schedules leave (an outer step
axis `o`, a thread var `t` from 0), asks for the end and checks it two ways: its text,
and, by brute force over small lengths, that every step past it is masked for every
thread (so leaving it out changes nothing)."""

from __future__ import annotations

import pytest

from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.expr import (
    LT,
    And,
    Buffer,
    Div,
    FloatImm,
    IntImm,
    Load,
    Reduce,
    ReduceType,
    Select,
    Var,
)
from cinn_py.ir.live_steps import live_extent
from cinn_py.ir.printer import print_ir
from cinn_py.pir.dtypes import DataType as D

S0 = Var("S0", D.INT32, 1)
X = Buffer("x", D.FLOAT32, [S0])
ZERO = FloatImm(0.0, D.FLOAT32)


def partial(steps: int, threads: int, mask_of, init=ZERO, kind=ReduceType.SUM):
    """`sum over o < steps of (mask(o, t) ? x[o * threads + t] : init)`."""
    o = Var("o", D.INT32, 0, steps)
    t = Var("t", D.INT32, 0, threads)
    at = o * IntImm(threads) + t
    return Reduce(kind, init, Select(mask_of(o, t, at), Load(X, [at]), init), [o]), o, t


def masked_past(reduce, o, t, end, lengths):
    """Every step from `end` on is masked off for every thread, at each length."""
    for n in lengths:
        stop = int(evaluate(end, {"S0": n}))
        for step in range(max(stop, 0), o.upper):
            for thread in range(t.upper):
                keep = evaluate(reduce.body.condition, {"S0": n, "o": step, "t": thread})
                assert not keep, (n, step, thread)


def test_a_row_walk_ends_at_the_last_step_holding_an_element():
    reduce, o, t = partial(8, 32, lambda o, t, at: LT(at, S0))
    end = live_extent([reduce], o)
    assert print_ir(end) == "cinn_min(8, ((S0 + 31) / 32))"
    masked_past(reduce, o, t, end, range(1, 257))


def test_a_divided_mask_and_an_exact_multiple():
    # the reduce-all over [S0, 64] rows: element (o * 32 + t) is in row (.../64)
    reduce, o, t = partial(64, 32, lambda o, t, at: LT(Div(at, IntImm(64)), S0))
    end = live_extent([reduce], o)
    assert print_ir(end) == "cinn_min(64, (S0 * 2))"
    masked_past(reduce, o, t, end, range(1, 33))


def test_the_tightest_of_nested_masks():
    def mask(o, t, at):
        return And(LT(at, IntImm(200)), LT(at, S0))

    reduce, o, t = partial(8, 32, mask)
    end = live_extent([reduce], o)
    assert print_ir(end) == "cinn_min(8, cinn_min(7, ((S0 + 31) / 32)))"
    masked_past(reduce, o, t, end, range(1, 257))


def test_siblings_sharing_the_loop_take_the_later_end():
    a, o, _ = partial(8, 32, lambda o, t, at: LT(at, S0))
    b = Reduce(ReduceType.SUM, ZERO, Select(LT(o * IntImm(16), S0), Load(X, [o]), ZERO), [o])
    assert (
        print_ir(live_extent([a, b], o))
        == "cinn_min(8, cinn_max(((S0 + 31) / 32), ((S0 + 15) / 16)))"
    )


@pytest.mark.parametrize(
    ("why", "mask_of", "init"),
    [
        (
            "the masked value is not the identity",
            lambda o, t, at: LT(at, S0),
            FloatImm(1.0, D.FLOAT32),
        ),
        ("the bound reads a thread var", lambda o, t, at: LT(o, S0 - t), ZERO),
        ("a term may be negative", lambda o, t, at: LT(at - t - t, S0), ZERO),
        ("the axis is not in the mask", lambda o, t, at: LT(t, S0), ZERO),
        (
            "the bound reads memory",
            lambda o, t, at: LT(at, Load(Buffer("n", D.INT32, [1]), [IntImm(0)])),
            ZERO,
        ),
    ],
)
def test_masks_that_say_nothing_about_the_steps(why, mask_of, init):
    o = Var("o", D.INT32, 0, 8)
    t = Var("t", D.INT32, 0, 32)
    at = o * IntImm(32) + t
    body = Select(mask_of(o, t, at), Load(X, [at]), init)
    reduce = Reduce(ReduceType.SUM, ZERO, body, [o])
    assert live_extent([reduce], o) is None, why


def test_an_unmasked_body_or_a_static_mask_keeps_the_loop():
    o = Var("o", D.INT32, 0, 8)
    plain = Reduce(ReduceType.SUM, ZERO, Load(X, [o]), [o])
    assert live_extent([plain], o) is None
    static, o2, _ = partial(8, 32, lambda o, t, at: LT(at, IntImm(4096)))
    assert live_extent([static], o2) is None  # 4096 is past 8 steps of 32: nothing to cut


def test_a_grid_chunk_past_the_length_runs_no_step():
    # grid_reduce's chunk c of 4 steps of 32 over the bucket: element c * 128 + o * 32 + t
    c = Var("c", D.INT32, 0, 8)
    reduce, o, t = partial(4, 32, lambda o, t, at: LT(at + c * IntImm(128), S0))
    end = live_extent([reduce], o)
    assert print_ir(end) == "cinn_min(4, (((S0 - (c * 128)) + 31) / 32))"
    for n in range(1, 1025):
        for chunk in range(8):
            stop = int(evaluate(end, {"S0": n, "c": chunk}))
            assert stop <= 0 or chunk * 128 < n  # a chunk wholly past S0: no step
            for step in range(max(stop, 0), 4):
                for thread in range(32):
                    values = {"S0": n, "o": step, "t": thread, "c": chunk}
                    assert not evaluate(reduce.body.condition, values)
