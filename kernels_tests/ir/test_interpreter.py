"""The IR interpreter: scheduled loop forms, C semantics per dtype, bounds checks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cinn_py.errors import FeedError
from cinn_py.ir.expr import (
    GE,
    LT,
    Add,
    Buffer,
    Call,
    CallType,
    Cast,
    Div,
    Expr,
    FloatImm,
    IntImm,
    Load,
    Max,
    Min,
    Mod,
    Mul,
    Ramp,
    Reduce,
    ReduceType,
    Select,
    Sub,
    Var,
)
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    BindInfo,
    Block,
    BufferRange,
    For,
    ForType,
    IfThenElse,
    Let,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Stmt,
    Store,
)
from cinn_py.pir.dtypes import DataType as D
from cinn_py.pir.dtypes import bfloat16_to_float32, float32_to_bfloat16


def func(args: list[Argument], body: Stmt, temps=()) -> LoweredFunc:
    root = ScheduleBlock((), (), (), "root", body if isinstance(body, Block) else Block([body]))
    return LoweredFunc("fn_test", args, ScheduleBlockRealize((), root), temps)


def elementwise(
    n: int, dtype: D, value, out_dtype: D | None = None
) -> tuple[LoweredFunc, Buffer, Buffer]:
    """out[i] = value(x[i]) for i in [0, n), as lowering writes it."""
    x, out = Buffer("x", dtype, [n]), Buffer("out", out_dtype or dtype, [n])
    i, iv = Var("i", lower=0, upper=n), Var("i0", lower=0, upper=n)
    block = ScheduleBlock(
        [iv],
        [BufferRange(x, [iv])],
        [BufferRange(out, [iv])],
        "out",
        Store(out, value(Load(x, [iv])), [iv]),
    )
    nest = For(i, 0, n, ForType.SERIAL, Block([ScheduleBlockRealize([i], block)]))
    return func([Argument(x), Argument(out, ArgIO.OUTPUT)], nest), x, out


def run_elementwise(x: np.ndarray, dtype: D, value, out_dtype: D | None = None) -> np.ndarray:
    f, _, _ = elementwise(x.size, dtype, value, out_dtype)
    store = np.uint16 if (out_dtype or dtype) is D.BFLOAT16 else (out_dtype or dtype).numpy
    out = np.zeros(x.size, dtype=store)
    run_function(f, {"x": x, "out": out})
    return out


def intrinsic(name: str, *args: Expr, dtype: D | None = None) -> Call:
    return Call(name, args, dtype or args[0].dtype, CallType.INTRINSIC)


# ---- scheduled forms ---------------------------------------------------------------------


def scheduled_scale(n: int, threads: int, lanes: int) -> LoweredFunc:
    """out[i] = 2 * x[i], i split as (blockIdx.x, threadIdx.x, vectorized lane) with the
    excess cut by a bound guard, plus an unrolled copy of the first 3 elements into y."""
    x, out, y = (
        Buffer("x", D.FLOAT32, [n]),
        Buffer("out", D.FLOAT32, [n]),
        Buffer("y", D.FLOAT32, [3]),
    )
    bx, tx, v = Var("bx"), Var("tx"), Var("v")
    iv = Var("i0", lower=0, upper=n)
    index = Add(Mul(Add(Mul(bx, IntImm(threads)), tx), IntImm(lanes)), v)
    block = ScheduleBlock(
        [iv],
        [BufferRange(x, [iv])],
        [BufferRange(out, [iv])],
        "out",
        Store(out, Mul(Load(x, [iv]), FloatImm(2.0)), [iv]),
    )
    guarded = IfThenElse(LT(index, IntImm(n)), ScheduleBlockRealize([index], block))
    grid = -(-n // (threads * lanes))
    inner = For(v, 0, lanes, ForType.VECTORIZED, Block([guarded]))
    nest = For(
        bx,
        0,
        grid,
        ForType.SERIAL,
        Block([For(tx, 0, threads, ForType.SERIAL, Block([inner]), BindInfo.THREAD_X)]),
        BindInfo.BLOCK_X,
    )
    k = Var("k")
    copy = For(k, 0, 3, ForType.UNROLLED, Block([Store(y, Load(x, [k]), [k])]))
    args = [Argument(x), Argument(out, ArgIO.OUTPUT), Argument(y, ArgIO.OUTPUT)]
    return func(args, Block([nest, copy]))


def test_bound_vectorized_and_unrolled_loops_run_as_plain_loops():
    x = np.arange(100, dtype=np.float32) - 30
    out, y = np.zeros(100, np.float32), np.zeros(3, np.float32)
    run_function(scheduled_scale(100, 8, 4), {"x": x, "out": out, "y": y})
    np.testing.assert_array_equal(out, 2 * x)
    np.testing.assert_array_equal(y, x[:3])


def test_missing_bound_guard_is_an_iter_var_error():
    f = scheduled_scale(100, 8, 4)
    unguarded = f.body.schedule_block.body.stmts[0]
    inner = unguarded.body.stmts[0].body.stmts[0]
    realize = inner.body.stmts[0].true_case
    broken = For(inner.loop_var, 0, 4, ForType.VECTORIZED, Block([realize]))
    outer = For(
        unguarded.loop_var,
        0,
        unguarded.extent,
        ForType.SERIAL,
        Block([For(unguarded.body.stmts[0].loop_var, 0, 8, ForType.SERIAL, Block([broken]))]),
    )
    x, out = np.zeros(100, np.float32), np.zeros(100, np.float32)
    with pytest.raises(IndexError, match=r"block out binds i0 = 100, outside \[0, 100\)"):
        run_function(func(f.args[:2], outer), {"x": x, "out": out})


def test_out_of_bounds_load_names_the_buffer():
    f, _, _ = elementwise(4, D.INT32, lambda v: v)
    x = Buffer("x", D.INT32, [4])
    i = Var("i")
    bad = For(
        i,
        0,
        4,
        ForType.SERIAL,
        Store(Buffer("out", D.INT32, [4]), Load(x, [Add(i, IntImm(1))]), [i]),
    )
    with pytest.raises(IndexError, match=r"load x\[4\] is outside shape \[4\]"):
        run_function(func(f.args, bad), {"x": np.zeros(4, np.int32), "out": np.zeros(4, np.int32)})


def test_select_evaluates_only_the_taken_branch():
    x = Buffer("x", D.FLOAT32, [4])
    out = Buffer("out", D.FLOAT32, [4])
    i = Var("i")
    value = Select(LT(i, IntImm(4)), Load(x, [i]), Load(x, [Sub(i, IntImm(100))]))
    body = For(i, 0, 4, ForType.SERIAL, Store(out, value, [i]))
    got = np.zeros(4, np.float32)
    run_function(
        func([Argument(x), Argument(out, ArgIO.OUTPUT)], body),
        {"x": np.ones(4, np.float32), "out": got},
    )
    np.testing.assert_array_equal(got, np.ones(4))


def test_let_temps_and_scalar_arguments():
    n = 6
    x, out = Buffer("x", D.INT32, [n]), Buffer("out", D.INT32, [n])
    local = Buffer("tmp", D.INT32, [n])
    temp = Buffer("t", D.INT32, [n])
    scale = Var("scale", D.INT32)
    i, j, k = Var("i"), Var("j"), Var("k")
    sq = Var("sq")
    body = Block(
        [
            For(
                i,
                0,
                n,
                ForType.SERIAL,
                Block([Let(sq, Mul(Load(x, [i]), Load(x, [i]))), Store(local, sq, [i])]),
            ),
            For(j, 0, n, ForType.SERIAL, Store(temp, Mul(Load(local, [j]), scale), [j])),
            For(k, 0, n, ForType.SERIAL, Store(out, Add(Load(temp, [k]), IntImm(1)), [k])),
        ]
    )
    f = func([Argument(x), Argument(scale), Argument(out, ArgIO.OUTPUT)], body, [local, temp])
    got = np.zeros(n, np.int32)
    xs = np.arange(n, dtype=np.int32) - 2
    run_function(f, {"x": xs, "scale": np.int32(3), "out": got})
    np.testing.assert_array_equal(got, xs * xs * 3 + 1)


def test_reduce_sums_over_its_axis():
    x, out = Buffer("x", D.FLOAT32, [3, 5]), Buffer("out", D.FLOAT32, [3])
    i, r = Var("i"), Var("r", lower=0, upper=5)
    total = Reduce(ReduceType.SUM, FloatImm(0.0), Load(x, [i, r]), [r])
    body = For(i, 0, 3, ForType.SERIAL, Store(out, total, [i]))
    xs = np.arange(15, dtype=np.float32).reshape(3, 5)
    got = np.zeros(3, np.float32)
    run_function(func([Argument(x), Argument(out, ArgIO.OUTPUT)], body), {"x": xs, "out": got})
    np.testing.assert_array_equal(got, xs.sum(axis=1))


# ---- C semantics per dtype -------------------------------------------------------------------


def test_int32_wraps_and_divides_truncating():
    x = np.array([2**31 - 1, -(2**31), -7, 7, -7, 5], dtype=np.int32)
    wrapped = run_elementwise(x, D.INT32, lambda v: Add(v, IntImm(1)))
    np.testing.assert_array_equal(wrapped, [-(2**31), -(2**31) + 1, -6, 8, -6, 6])
    np.testing.assert_array_equal(
        run_elementwise(x[2:], D.INT32, lambda v: Div(v, IntImm(2))), [-3, 3, -3, 2]
    )
    np.testing.assert_array_equal(
        run_elementwise(x[2:], D.INT32, lambda v: Mod(v, IntImm(-3))), [-1, 1, -1, 2]
    )
    narrow = run_elementwise(
        np.array([100, -100], np.int8), D.INT8, lambda v: Mul(v, IntImm(2, D.INT8))
    )
    np.testing.assert_array_equal(narrow, [-56, 56])


def test_integer_division_by_zero_gives_zero_and_min_by_minus_one_wraps():
    x = np.array([1, -5, -(2**31)], np.int32)
    divisors = [IntImm(0), IntImm(0), IntImm(-1)]
    for k, divisor in enumerate(divisors):
        quotient = run_elementwise(x[k : k + 1], D.INT32, lambda v, d=divisor: Div(v, d))
        rest = run_elementwise(x[k : k + 1], D.INT32, lambda v, d=divisor: Mod(v, d))
        assert (int(quotient[0]), int(rest[0])) == ([0, 0, -(2**31)][k], 0)


def test_float16_rounds_every_operation():
    x = np.array([1000.0, 0.1, 65000.0], dtype=np.float16)
    got = run_elementwise(x, D.FLOAT16, lambda v: Sub(Add(v, FloatImm(0.3, D.FLOAT16)), v))
    want = (x + np.float16(0.3)) - x
    np.testing.assert_array_equal(got, want)
    assert got[0] != np.float16(0.3)  # 1000.3 rounds to 1000.5 in float16


def test_bfloat16_buffers_are_bits_and_casts_round_to_nearest_even():
    values = np.array([1.0, 1.00390625, 1.01171875, -3.5], dtype=np.float32)
    bits = float32_to_bfloat16(values)
    widened = run_elementwise(bits, D.BFLOAT16, lambda v: Cast(D.FLOAT32, v), D.FLOAT32)
    np.testing.assert_array_equal(widened, bfloat16_to_float32(bits))
    x = np.array([1.00390625, 1.01171875, 3.0], dtype=np.float32)  # ties: to even
    got = run_elementwise(x, D.FLOAT32, lambda v: Cast(D.BFLOAT16, v), D.BFLOAT16)
    np.testing.assert_array_equal(bfloat16_to_float32(got), [1.0, 1.015625, 3.0])
    summed = run_elementwise(bits, D.BFLOAT16, lambda v: Add(v, v), D.BFLOAT16)
    np.testing.assert_array_equal(summed, float32_to_bfloat16(2 * bfloat16_to_float32(bits)))


def test_casts_truncate_saturate_and_take_nan_to_zero():
    x = np.array([2.9, -2.9, np.nan, 3e9, 0.0, -0.0, -np.inf, 200.0], dtype=np.float32)
    ints = run_elementwise(x, D.FLOAT32, lambda v: Cast(D.INT32, v), D.INT32)
    np.testing.assert_array_equal(ints, [2, -2, 0, 2**31 - 1, 0, 0, -(2**31), 200])
    chars = run_elementwise(x, D.FLOAT32, lambda v: Cast(D.INT8, v), D.INT8)
    np.testing.assert_array_equal(chars, [2, -2, 0, 127, 0, 0, -128, 127])
    truth = run_elementwise(x, D.FLOAT32, lambda v: Cast(D.BOOL, v), D.BOOL)
    np.testing.assert_array_equal(truth, [True, True, True, True, False, False, True, True])
    halves = run_elementwise(
        np.array([70000, 3], np.int32), D.INT32, lambda v: Cast(D.FLOAT16, v), D.FLOAT16
    )
    np.testing.assert_array_equal(halves, [np.inf, 3.0])


def test_min_max_are_c_ternaries_without_nan_rules():
    x = np.array([np.nan, 1.0, 5.0], dtype=np.float32)
    np.testing.assert_array_equal(
        run_elementwise(x, D.FLOAT32, lambda v: Max(v, FloatImm(2.0))), [2.0, 2.0, 5.0]
    )
    got = run_elementwise(x, D.FLOAT32, lambda v: Min(FloatImm(2.0), v))
    np.testing.assert_array_equal(got, [np.nan, 1.0, 2.0])


def test_intrinsics():
    x = np.array([-np.inf, 2.5, -2.5, 0.5, 4.0], dtype=np.float32)
    pow_half = run_elementwise(x, D.FLOAT32, lambda v: intrinsic("pow", v, FloatImm(0.5)))
    np.testing.assert_array_equal(
        pow_half, [np.inf, np.sqrt(np.float32(2.5)), np.nan, np.sqrt(np.float32(0.5)), 2.0]
    )
    np.testing.assert_array_equal(
        run_elementwise(x, D.FLOAT32, lambda v: intrinsic("rint", v)),
        [-np.inf, 2.0, -2.0, 0.0, 4.0],
    )
    np.testing.assert_array_equal(
        run_elementwise(x, D.FLOAT32, lambda v: intrinsic("fmod", v, FloatImm(2.0))),
        [np.nan, 0.5, -0.5, 0.5, 0.0],
    )
    erf = run_elementwise(x[1:], D.FLOAT32, lambda v: intrinsic("erf", v))
    np.testing.assert_allclose(erf, [math.erf(v) for v in x[1:]], rtol=1e-6)
    rsqrt = run_elementwise(x[3:], D.FLOAT32, lambda v: intrinsic("rsqrt", v))
    np.testing.assert_array_equal(rsqrt, np.float32(1) / np.sqrt(x[3:]))
    tests = run_elementwise(x, D.FLOAT32, lambda v: intrinsic("isinf", v, dtype=D.BOOL), D.BOOL)
    np.testing.assert_array_equal(tests, [True, False, False, False, False])
    ints = np.array([-(2**31), -5, 5], np.int32)
    np.testing.assert_array_equal(
        run_elementwise(ints, D.INT32, lambda v: intrinsic("abs", v)), [-(2**31), 5, 5]
    )


def test_comparisons_and_logic_give_bool():
    x = np.array([1, 5, 9], np.int32)
    got = run_elementwise(x, D.INT32, lambda v: GE(v, IntImm(5)) & LT(v, IntImm(9)), D.BOOL)
    np.testing.assert_array_equal(got, [False, True, False])


# ---- what it refuses -------------------------------------------------------------------------


def test_feeds_are_checked_against_the_arguments():
    f, _, _ = elementwise(4, D.FLOAT32, lambda v: v)
    with pytest.raises(
        FeedError, match="feed 'out': expected an array for this argument, got nothing"
    ):
        run_function(f, {"x": np.zeros(4, np.float32)})
    with pytest.raises(FeedError, match="feed 'x': expected dtype float32, got dtype float64"):
        run_function(f, {"x": np.zeros(4), "out": np.zeros(4, np.float32)})
    with pytest.raises(FeedError, match=r"feed 'x': expected shape \[4\], got shape \[5\]"):
        run_function(f, {"x": np.zeros(5, np.float32), "out": np.zeros(4, np.float32)})
    bf16 = Buffer("x", D.BFLOAT16, [4])
    with pytest.raises(FeedError, match="expected dtype uint16"):
        run_function(func([Argument(bf16)], Block([])), {"x": np.zeros(4, np.float32)})


def test_vector_nodes_are_not_interpreted():
    with pytest.raises(NotImplementedError, match="Ramp is not interpreted"):
        run_elementwise(
            np.zeros(1, np.int32),
            D.INT32,
            lambda v: Load(Buffer("x", D.INT32, [1]), [Ramp(IntImm(0), IntImm(1), 4)]),
        )
