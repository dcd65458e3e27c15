"""The one dtype-aware comparison that `--check` and the tests share."""

from __future__ import annotations

import numpy as np

from cinn_py.pir.dtypes import float32_to_bfloat16
from cinn_py.tolerances import compare, tolerance


def test_integers_and_bools_compare_exactly():
    assert compare(np.array([1, 2, 3]), np.array([1, 2, 3])).ok
    result = compare(np.array([1, 2, 4], np.int32), np.array([1, 2, 3], np.int32))
    assert not result.ok and str(result) == "1 element(s) differ"
    assert not compare(np.array([True]), np.array([False])).ok


def test_float_tolerances_follow_the_dtype():
    want = np.array([1.0, 2.0], np.float32)
    assert compare(want * (1 + 5e-5), want).ok
    assert not compare(want * (1 + 5e-3), want).ok
    half = want.astype(np.float16)
    assert compare((want * (1 + 5e-3)).astype(np.float16), half).ok
    assert tolerance("bfloat16") == (2e-2, 1e-2)
    assert tolerance(np.int64) == (0.0, 0.0)


def test_bfloat16_compares_bit_patterns_as_values():
    want = float32_to_bfloat16(np.array([1.0, 3.0], np.float32))
    near = float32_to_bfloat16(np.array([1.0078125, 3.0], np.float32))
    assert compare(near, want, "bfloat16").ok
    assert not compare(float32_to_bfloat16(np.array([1.5, 3.0], np.float32)), want, "bfloat16").ok


def test_nan_and_inf_positions_must_agree():
    want = np.array([np.nan, np.inf, 1.0], np.float32)
    assert compare(want.copy(), want).ok
    nan_moved = compare(np.array([1.0, np.inf, 1.0], np.float32), want)
    assert not nan_moved.ok and str(nan_moved) == "NaN or inf positions differ"
    assert not compare(np.array([np.nan, -np.inf, 1.0], np.float32), want).ok


def test_shape_mismatch_and_explicit_override():
    assert str(compare(np.zeros(2), np.zeros(3))) == "shape (2,) != expected (3,)"
    want = np.array([1.0], np.float32)
    assert not compare(want + 0.01, want).ok
    assert compare(want + 0.01, want, override=(0.0, 0.02)).ok
