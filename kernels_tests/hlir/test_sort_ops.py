"""pd_op.argsort and pd_op.topk: library ops run by their reference kernels, with the
order Paddle 3.3.1's CPU kernels give (probed): NaN as the largest value, ties in index
order; compiled on cuda-emu as library instructions."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import VerifyError
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import lookup_op_def
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference

NAN = np.nan
PROBE = np.array([3, NAN, 1, 2, NAN, -np.inf], np.float32)
TIES = np.array([1, 2, 1, 2, 1, 0, 2], np.float32)


def _program(op: str, shape, dtype=DataType.FLOAT32, k: int | None = None, **attrs):
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    operands = [x]
    if k is not None:
        operands.append(b.op("pd_op.full", shape=[1], value=float(k), dtype=DataType.INT32))
    values, indices = b.op(op, *operands, **attrs)
    program.pinned_outputs = [values, indices]
    return program


def _run(program, x):
    want = run_reference(program, {"x": x})
    exe = cinn_py.compile(program, target="cuda-emu")
    assert [g.kind.value for g in exe.groups] == ["library"]
    got = [np.asarray(v) for v in exe.run({"x": x}).values()]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    return want


@pytest.mark.parametrize(
    "x, descending, indices",
    [
        (PROBE, False, [5, 2, 3, 0, 1, 4]),  # Paddle: NaN last, in index order
        (PROBE, True, [1, 4, 0, 3, 2, 5]),  # Paddle: NaN first, in index order
        (TIES, False, [5, 0, 2, 4, 1, 3, 6]),
        (TIES, True, [1, 3, 6, 0, 2, 4, 5]),
    ],
)
def test_argsort_orders_nan_and_ties_as_paddle(x, descending, indices):
    values, got = _run(_program("pd_op.argsort", x.shape, descending=descending), x)
    assert got.tolist() == indices and got.dtype == np.int64
    np.testing.assert_array_equal(values, x[indices])


@pytest.mark.parametrize("shape, axis", [((7, 33), 0), ((3, 33, 7), 1), ((1,), -1), ((), -1)])
@pytest.mark.parametrize("dtype", [DataType.FLOAT32, DataType.INT64, DataType.FLOAT16])
def test_argsort_odd_shapes(shape, axis, dtype):
    rng = np.random.default_rng(7)
    x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(dtype.numpy)
    values, indices = _run(_program("pd_op.argsort", shape, dtype, axis=axis, descending=True), x)
    if shape:
        np.testing.assert_array_equal(values, -np.sort(-x, axis=axis))
        np.testing.assert_array_equal(np.take_along_axis(x, indices, axis), values)


def test_int64_descending_keeps_the_minimum():
    x = np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max], np.int64)
    values, indices = _run(_program("pd_op.argsort", x.shape, DataType.INT64, descending=True), x)
    assert indices.tolist() == [2, 1, 0]


@pytest.mark.parametrize(
    "x, k, largest, indices",
    [
        (PROBE, 3, True, [1, 4, 0]),  # Paddle: [nan, nan, 3]
        (PROBE, 3, False, [5, 2, 3]),  # Paddle: [-inf, 1, 2]
        (TIES, 1, True, [1]),
    ],
)
def test_topk_nan_and_order(x, k, largest, indices):
    _, got = _run(_program("pd_op.topk", x.shape, k=k, largest=largest), x)
    assert got.tolist() == indices


@pytest.mark.parametrize("shape, axis, k", [((7, 33), 1, 3), ((33, 7), 0, 33), ((3, 1, 7), -1, 1)])
def test_topk_odd_shapes(shape, axis, k):
    rng = np.random.default_rng(3)
    x = rng.normal(size=shape).astype(np.float32)
    values, indices = _run(_program("pd_op.topk", shape, k=k, axis=axis), x)
    expect = np.take(-np.sort(-x, axis=axis), np.arange(k), axis=axis)
    np.testing.assert_array_equal(values, expect)
    assert indices.shape == expect.shape


def test_sort_ops_are_library_ops():
    assert lookup_op_def("pd_op.argsort").compiled_by == "library"
    assert lookup_op_def("pd_op.topk").compiled_by == "library"


def test_topk_k_out_of_range_is_a_verify_error():
    with pytest.raises(VerifyError, match=r"pd_op.topk.*k 8 is out of range \[0, 7\]"):
        _program("pd_op.topk", (3, 7), k=8)


def test_argsort_bad_axis_is_a_verify_error():
    with pytest.raises(VerifyError, match=r"pd_op.argsort.*axis 2 is out of range \[-2, 2\)"):
        _program("pd_op.argsort", (3, 7), axis=2)
