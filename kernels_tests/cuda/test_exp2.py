"""`pow(2, y)` of floats renders as `exp2(y)` (`codegen_c.power_of_two`), and softmax
with a float16 or bfloat16 result takes its exp as 2 ** (s * log2 e) through it
(`ops/nn.py`): about 100 fewer SASS instructions a thread for the float16 bench softmax.
The numbers on cuda-emu against the reference over odd shapes and hostile rows; float32
softmax and log_softmax keep the precise exp."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.backends.codegen_c import power_of_two
from cinn_py.ir import expr as e
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program
from cinn_py.tolerances import tolerance

F16, BF16, F32, F64, I32 = (
    DataType.FLOAT16,
    DataType.BFLOAT16,
    DataType.FLOAT32,
    DataType.FLOAT64,
    DataType.INT32,
)


def _y(dtype: DataType = F32) -> e.Var:
    return e.Var("y", dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_pow_of_two_is_exp2(dtype):
    call = e.Call("pow", (e.FloatImm(2.0, dtype), _y(dtype)), dtype, e.CallType.INTRINSIC)
    rewritten = power_of_two(call)
    assert rewritten.name == "exp2" and rewritten.args == (call.args[1],)


@pytest.mark.parametrize(
    "base",
    [e.FloatImm(3.0, F32), e.FloatImm(-2.0, F32), e.Var("b", F32)],
)
def test_other_bases_stay_pow(base):
    call = e.Call("pow", (base, _y()), F32, e.CallType.INTRINSIC)
    assert power_of_two(call) is call


def test_integer_pow_stays_pow():
    call = e.Call("pow", (e.IntImm(2, I32), _y(I32)), I32, e.CallType.INTRINSIC)
    assert power_of_two(call) is call


def _program(op: str, shape, dtype: DataType, **attrs) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    if op == "pow2":
        two = b.op("pd_op.full", shape=[1], value=2.0, dtype=dtype)
        b.op("pd_op.elementwise_pow", two, x)
    else:
        b.op(op, x, **attrs)
    return program


def _run(program: Program, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    (got,) = cinn_py.compile(program, "cuda-emu").run({"x": x}).values()
    (want,) = cinn_py.compile(program, "reference").run({"x": x}).values()
    return got, want


def test_a_programs_own_pow_of_two_renders_exp2_and_keeps_nan_and_inf():
    program = _program("pow2", [3, 33], F32)
    source = cinn_py.compile(program, "cuda-emu").cuda_source
    assert "exp2f(" in source and "powf(" not in source
    y = np.random.default_rng(1).standard_normal((3, 33)).astype(np.float32) * 30
    y[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    y[1, :3] = [128.0, -149.0, -126.5]  # overflow to inf, the last subnormals
    got, want = _run(program, y)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=0)


def _as_float(a: np.ndarray, dtype: DataType) -> np.ndarray:
    if dtype is BF16:  # bit patterns at the API
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


def _feed(values: np.ndarray, dtype: DataType) -> np.ndarray:
    if dtype is BF16:
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return values.astype(np.float16)


@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (7, 33), (5, 129), (3, 1000), (2, 3, 4100)])
def test_16_bit_softmax_through_exp2_matches_the_reference(dtype, shape):
    program = _program("pd_op.softmax", shape, dtype, axis=-1)
    source = cinn_py.compile(program, "cuda-emu").cuda_source
    assert "exp2f(" in source and "expf(" not in source
    rng = np.random.default_rng(sum(shape))
    x = _feed(rng.standard_normal(shape) * 2, dtype)  # most of each row counts
    got, want = _run(program, x)
    rtol, atol = tolerance(dtype.value)
    np.testing.assert_allclose(_as_float(got, dtype), _as_float(want, dtype), rtol=rtol, atol=atol)
    # Closer than the dtype's tolerance: every output within one unit of the last place of
    # the float64 reference rounded (outputs are positive: adjacent bit patterns).
    ulps = np.abs(got.view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32))
    assert ulps.max() <= 1, ulps.max()


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_16_bit_softmax_through_exp2_on_hostile_rows(dtype):
    """A NaN row, an all -inf row (NaN), a row of one huge value (1 and e**-64 = 0 in
    float16), equal values (1/n each), values far under the floor."""
    program = _program("pd_op.softmax", (5, 33), dtype, axis=-1)
    x = np.random.default_rng(5).standard_normal((5, 33)).astype(np.float32)
    x[0, 7] = np.nan
    x[1, :] = -np.inf
    x[2, :] = -3e4
    x[2, 11] = 3e4
    x[3, :] = 0.5
    x[4, ::2] = -6e4
    got, want = _run(program, _feed(x, dtype))
    got, want = _as_float(got, dtype), _as_float(want, dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[0]).all() and np.isnan(got[1]).all()
    assert got[2, 11] == 1.0
    rtol, atol = tolerance(dtype.value)
    np.testing.assert_allclose(got[2:], want[2:], rtol=rtol, atol=atol)
    np.testing.assert_allclose(got[3], np.float32(1 / 33), rtol=rtol)


@pytest.mark.parametrize(
    ("op", "dtype"),
    [("pd_op.softmax", F32), ("pd_op.log_softmax", F16), ("pd_op.log_softmax", F32)],
)
def test_float32_softmax_and_log_softmax_keep_the_precise_exp(op, dtype):
    source = cinn_py.compile(_program(op, (3, 33), dtype, axis=-1), "cuda-emu").cuda_source
    assert "expf(" in source and "exp2f(" not in source
