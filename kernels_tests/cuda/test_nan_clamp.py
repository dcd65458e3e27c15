"""A clamp at a float32 constant (`a <= c ? c : a`, the lowering's NaN-keeping maximum
with a constant: softmax's floor at -64) renders as `cinn_max_nan(a, c)`, one
`max.NaN.f32` on sm_80+; `a >= c ? c : a` as `cinn_min_nan`. Only where the two agree for
every a: float32, scalar, c neither NaN nor +-0, the compare against c itself."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.backends.codegen_cuda import _nan_clamp
from cinn_py.ir import expr as e
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program

F32, F64 = DataType.FLOAT32, DataType.FLOAT64


def _var(dtype: DataType = F32) -> e.Var:
    return e.Var("a", dtype)


@pytest.mark.parametrize(
    ("make", "helper"),
    [
        (lambda a, c: e.Select(e.LE(a, c), c, a), "cinn_max_nan"),  # `nan_max`'s form
        (lambda a, c: e.Select(e.GE(a, c), c, a), "cinn_min_nan"),
        (lambda a, c: e.Select(e.LT(a, c), c, a), "cinn_max_nan"),
        (lambda a, c: e.Select(e.GT(a, c), c, a), "cinn_min_nan"),
        (lambda a, c: e.Select(e.GT(a, c), a, c), None),  # a max, but not this form
        (lambda a, c: e.Select(e.LT(a, e.FloatImm(1.0, F32)), c, a), None),  # other constant
        (lambda a, c: e.Select(e.NE(a, c), c, a), None),
    ],
)
def test_which_selects_are_clamps(make, helper):
    assert _nan_clamp(make(_var(), e.FloatImm(-64.0, F32))) == helper


@pytest.mark.parametrize("value", [0.0, -0.0, float("nan")])
def test_no_clamp_at_zero_or_nan(value):
    """At c = +-0 the select keeps a's sign of zero where the helper may not; at NaN the
    compare is never true."""
    c = e.FloatImm(value, F32)
    a = _var()
    assert _nan_clamp(e.Select(e.LT(a, c), c, a)) is None


def test_no_clamp_in_float64():
    a, c = _var(F64), e.FloatImm(-64.0, F64)
    assert _nan_clamp(e.Select(e.LT(a, c), c, a)) is None


def test_softmax_renders_its_floor_as_one_max_and_keeps_nan_and_inf():
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[3, 33], dtype=F32)
    b.op("pd_op.softmax", x, axis=-1)
    exe = cinn_py.compile(program, "cuda-emu")
    assert "cinn_max_nan(" in exe.cuda_source and "-64.0f) ? -64.0f" not in exe.cuda_source
    rng = np.random.default_rng(0)
    values = rng.standard_normal((3, 33)).astype(np.float32) * 40
    values[0, 3] = np.nan  # the row is NaN
    values[1, :] = -np.inf  # x - max is NaN everywhere: NaN
    values[2, 5] = -1e30  # far under the floor: exp(-64), not 0
    (got,) = exe.run({"x": values}).values()
    (want,) = cinn_py.compile(program, "reference").run({"x": values}).values()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[0]).all() and np.isnan(got[1]).all()
    assert got[2, 5] > 0
    np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-30)
