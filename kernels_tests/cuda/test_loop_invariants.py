"""Math calls every iteration of a loop computes alike are evaluated once before it
(`backends/loop_invariants.py`, `CRenderer.hoisting_invariants`): which calls qualify,
the CUDA text, the SASS it saves (log_softmax float16: ptxas had sunk logf's
special-case tail into the loop, once an element) and the numbers on cuda-emu, a
persistent row loop's per-row log included."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cinn_py
from cinn_py.backends.loop_invariants import invariant_calls
from cinn_py.driver.tunable import tunable_kernels
from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB
from cinn_py.perf import binaries, perf_report
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program
from cinn_py.tolerances import compare

F32, I32 = DataType.FLOAT32, DataType.INT32
LOCAL = e.MemoryType.LOCAL

I = e.Var("i", I32, 0, 8)  # noqa: E741  (the loop's variable)
J = e.Var("j", I32, 0, 4)
ROW = e.Var("row", I32, 0, 64)  # bound outside the loop
TOTAL = e.Buffer("total", F32, [64, 1], LOCAL, array_dims=(1,))  # a register a row
PARTS = e.Buffer("parts", F32, [64, 8], LOCAL, array_dims=(1,))
X = e.Buffer("x", F32, [64, 8])  # global
OUT = e.Buffer("out", F32, [64, 8])


def _log(x: e.Expr) -> e.Call:
    return e.Call("log", (x,), F32, e.CallType.INTRINSIC)


def _loop(value: e.Expr, *more: s.Stmt, var: e.Var = I) -> s.For:
    store = s.Store(OUT, value, [ROW, var])
    body = s.Block([store, *more]) if more else store
    return s.For(var, 0, var.upper, s.ForType.UNROLLED, body)


def _total(row: e.Expr = ROW) -> e.Load:
    return e.Load(TOTAL, [row, e.IntImm(0, I32)])


def test_a_log_of_a_register_the_loop_does_not_write_is_hoisted():
    log = _log(_total())
    loop = _loop(e.Sub(e.Load(X, [ROW, I]), log))
    assert invariant_calls(loop) == [log]


def test_the_register_arrays_other_dims_may_use_vars_the_loop_binds():
    """A register array is indexed by its array dims alone; the row index (a block's
    iter var bound per iteration, the same value every time) is not read."""
    inner = e.Var("row_0", I32, 0, 64)
    log = _log(_total(inner))
    loop = _loop(log)
    assert invariant_calls(loop) == [log]


@pytest.mark.parametrize(
    "why, value, more",
    [
        ("uses the loop's var", lambda: _log(e.Cast(F32, I)), ()),
        ("reads global memory", lambda: _log(e.Load(X, [ROW, e.IntImm(0, I32)])), ()),
        ("reads a register indexed by the loop", lambda: _log(e.Load(PARTS, [ROW, I])), ()),
        (
            "reads a register the loop writes",
            lambda: _log(_total()),
            (s.Store(TOTAL, e.FloatImm(1.0, F32), [ROW, e.IntImm(0, I32)]),),
        ),
        ("a constant's the compiler's", lambda: _log(e.FloatImm(2.0, F32)), ()),
        (
            "an extern call",
            lambda: e.Call("mystery", (_total(),), F32, e.CallType.EXTERN),
            (),
        ),
        (
            "holds a reduction",
            lambda: _log(
                e.Reduce(
                    e.ReduceType.SUM,
                    e.FloatImm(0.0, F32),
                    e.Load(X, [ROW, J]),
                    (J,),
                )
            ),
            (),
        ),
    ],
)
def test_what_stays_in_the_loop(why, value, more):
    assert invariant_calls(_loop(value(), *more)) == [], why


def test_only_the_outermost_invariant_call_is_hoisted():
    inner = _log(_total())
    outer = e.Call("exp", (inner,), F32, e.CallType.INTRINSIC)
    mixed = e.Call("exp", (e.Add(e.Cast(F32, I), _log(_total())),), F32, e.CallType.INTRINSIC)
    assert invariant_calls(_loop(outer)) == [outer]
    assert invariant_calls(_loop(mixed)) == [mixed.args[0].b]  # its log; exp uses i


def _log_softmax(shape, dtype: DataType) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    b.op("pd_op.log_softmax", x, axis=-1)
    return program


def _kernel(source: str) -> str:
    return source[source.index('extern "C"') :]


def test_log_softmax_takes_its_log_once_a_row():
    kernel = _kernel(
        cinn_py.compile(_log_softmax((4, 4096), DataType.FLOAT16), "cuda-emu").cuda_source
    )
    (name,) = re.findall(r"const float (\w+) = logf\(var_\d+_tmp\[0\]\);", kernel)
    assert kernel.count("logf(") == 1
    head = kernel.index(f"const float {name} =")
    assert head < kernel.index("for (", head)  # before the store's loop
    assert f" - {name})" in kernel


@pytest.mark.skipif(not binaries.tools_available()[0], reason=binaries.tools_available()[1])
def test_log_softmax_float16_issues_under_half_its_memory_time():
    """[4096, 4096]: 658 SASS a thread with the precise exp, 495 with MUFU.EX2 alone, 409
    with the log once (issue / memory 0.66 -> 0.41): the issue's bound."""
    (kernel,) = perf_report(_log_softmax((4096, 4096), DataType.FLOAT16)).kernels
    assert kernel.sass.instructions < 450, kernel.sass.instructions
    assert kernel.estimate.issue_over_memory <= 0.5


@pytest.mark.parametrize("dtype", [DataType.FLOAT32, DataType.FLOAT16])
@pytest.mark.parametrize("shape", [(1, 7), (33, 129), (7, 1000)])
def test_log_softmax_numbers_with_the_hoisted_log(dtype, shape):
    program = _log_softmax(shape, dtype)
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 3).astype(dtype.numpy)
    (got,) = cinn_py.compile(program, "cuda-emu").run({"x": x}).values()
    (want,) = cinn_py.compile(program, "reference").run({"x": x}).values()
    assert compare(got, want).ok


@pytest.mark.parametrize("prefetch", [False, True])
def test_a_persistent_row_loop_takes_each_rows_log_inside_it(prefetch):
    """Blocks walking many rows (a tuned persistent grid, with the next row prefetched or
    not): the log reads the register the row's reduction writes inside the row loop, so
    it is hoisted out of the row's element loop only, once a row, and every row's output
    is right."""
    shape = (37, 256)
    program = _log_softmax(shape, DataType.FLOAT32)
    (tunable,) = tunable_kernels(program, "cuda-emu")
    (knobs, *_) = [
        k
        for k in tunable.candidates
        if k.get("blocks_per_sm") and bool(k.get("prefetch")) == prefetch
    ]
    tuned = cinn_py.compile(
        program, "cuda-emu", schedules=ScheduleDB("sm_90").with_entry(tunable.key, knobs)
    )
    source = _kernel(tuned.cuda_source)
    assert "persist_" in source  # the row loop of the persistent grid
    assert source.count("logf(") == 1
    assert source.index("for (") < source.index("= logf(")  # inside the row loop
    x = (np.random.default_rng(3).standard_normal(shape) * 3).astype(np.float32)
    (got,) = tuned.run({"x": x}).values()
    (want,) = cinn_py.compile(program, "reference").run({"x": x}).values()
    assert compare(got, want).ok
