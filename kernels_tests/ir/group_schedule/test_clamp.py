"""The clamp of blocks that combine across threads: a thread past the last element
names the last element as a whole, the element its row cache holds.

Issue 14 found two silent wrong answers with one root cause. Warp rows (8 rows a
block) over fused kept dims `(r / 3, r % 3)` clamped each iter value alone, so the
warp of r = 6 of 6 rows named element (1, 0) while its register cache held row 5
(`min(r, 5)`): it stored row 5's total into out[1, 0]. Clamping the row-major offset
of the element, then splitting it, names (1, 2), the element the cache holds.
"""

from __future__ import annotations

import numpy as np
import pytest
from reduction_programs import lowered, reduction

import cinn_py
from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.expr import IntImm, Var
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.finish import clamped_iter_values
from cinn_py.ir.isl_domain import IndexDomain
from cinn_py.ir.printer import print_ir
from cinn_py.ir.stmt import For, ForType
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare


def _loop(name: str, extent: int) -> For:
    var = Var(name, lower=0, upper=extent)
    return For(var, 0, extent, ForType.SERIAL, IntImm(0))


def test_fused_rows_are_clamped_as_one_offset() -> None:
    """(r / 3, r % 3) with r < 8 over 2 x 3 elements: the offset r is clamped, then
    split, so r = 6 and 7 name (1, 2), never (1, 0) or (1, 1)."""
    loop = _loop("r", 8)
    r = loop.loop_var
    ivs = [Var("i0", lower=0, upper=2), Var("i1", lower=0, upper=3)]
    values = [r / IntImm(3), r % IntImm(3)]
    clamped = clamped_iter_values(ivs, values, IndexDomain([loop], (), values))
    assert [print_ir(v) for v in clamped] == ["(cinn_min(r, 5) / 3)", "(cinn_min(r, 5) % 3)"]
    for point in range(8):
        want = divmod(min(point, 5), 3)
        got = tuple(_evaluate(v, {"r": point}) for v in clamped)
        assert got == want


def test_values_in_range_are_left_alone() -> None:
    loop = _loop("r", 6)
    r = loop.loop_var
    ivs = [Var("i0", lower=0, upper=2), Var("i1", lower=0, upper=3)]
    values = [r / IntImm(3), r % IntImm(3)]
    clamped = clamped_iter_values(ivs, values, IndexDomain([loop], (), values))
    assert all(a is b for a, b in zip(clamped, values, strict=True))


def test_one_iter_var_is_clamped_alone() -> None:
    loop = _loop("r", 8)
    ivs = [Var("i0", lower=0, upper=5)]
    values = [loop.loop_var]
    (clamped,) = clamped_iter_values(ivs, values, IndexDomain([loop], (), values))
    assert print_ir(clamped) == "cinn_min(r, 4)"


def test_a_unit_dim_stays_zero() -> None:
    """(r / 5, 0, r % 5) of a keepdim statistic: the unit dim is 0 at every point."""
    loop = _loop("r", 16)
    r = loop.loop_var
    ivs = [Var("a", lower=0, upper=2), Var("b", lower=0, upper=1), Var("c", lower=0, upper=5)]
    values = [r / IntImm(5), IntImm(0), r % IntImm(5)]
    clamped = clamped_iter_values(ivs, values, IndexDomain([loop], (), values))
    assert [print_ir(v) for v in clamped] == [
        "(cinn_min(r, 9) / 5)",
        "0",
        "(cinn_min(r, 9) % 5)",
    ]


def _evaluate(expr, env: dict[str, int]) -> int:
    return int(evaluate(expr, env))


def test_the_row_schedule_names_the_cached_row() -> None:
    """sum over the last axis of [2, 3, 128]: the block's element and the cache's row
    are the same clamped offset."""
    func, pattern = lowered(reduction((2, 3, 128), (-1,)))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    text = print_ir(result.func)
    assert "cinn_min(((var_0_local_row * 8) + var_0_local_warp), 5)" in text
    assert (
        "axis.bind((cinn_min(((i_0_i_1_fused_0 * 8) + i_0_i_1_fused_1), 5) / 3), "
        "(cinn_min(((i_0_i_1_fused_0 * 8) + i_0_i_1_fused_1), 5) % 3))"
    ) in text


def _run_both(program: Program, x: np.ndarray) -> None:
    feeds = {"x": x}
    want = run_reference(program, feeds)
    got = list(cinn_py.compile(program, target="cuda-emu").run(feeds).values())
    for g, w in zip(got, want, strict=True):
        result = compare(np.asarray(g), w)
        assert result.ok, str(result)


SHAPES = [(2, 3, 128), (3, 5, 64), (7, 3, 512), (5, 7, 256), (3, 1, 129), (1, 7, 96)]


@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_last_axis_reductions_of_rows_not_a_multiple_of_8(op: str, shape) -> None:
    """The issue's smallest case is sum over -1 of [2, 3, 128]: out[1, 0] and out[1, 1]
    came out as out[1, 2]."""
    x = np.random.default_rng(0).uniform(0.9, 1.1, shape).astype(np.float32)
    _run_both(reduction(shape, (-1,), ops=(op,)), x)


def _statistic_read_back(shape) -> Program:
    """mean over axis 1 with keepdim, subtract, relu, sum over axis 1."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=DataType.FLOAT32)
    mean = b.op("pd_op.mean", x, b.op("pd_op.full_int_array", value=[1]), keepdim=True)
    relu = b.op("pd_op.relu", b.op("pd_op.subtract", x, mean))
    axes = b.op("pd_op.full_int_array", value=[1])
    b.op("pd_op.sum", relu, axes, keepdim=False, dtype=DataType.UNDEFINED)
    return program


@pytest.mark.parametrize("shape", [(2, 4, 5), (7, 3, 3), (3, 33, 7), (5, 2, 9), (2, 4, 8)], ids=str)
def test_middle_axis_statistic_read_back(shape) -> None:
    """[2, 4, 5] gave out[1, 0..3] == out[1, 4]; [7, 3, 3] got out[6, 0..1] wrong."""
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    _run_both(_statistic_read_back(shape), x)
