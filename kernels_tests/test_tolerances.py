"""The one dtype-aware comparison that `--check` and the tests share."""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py.pir.dtypes import float32_to_bfloat16
from cinn_py.tolerances import compare, tolerance


def test_integers_and_bools_compare_exactly():
    assert compare(np.array([1, 2, 3]), np.array([1, 2, 3])).ok
    result = compare(np.array([1, 2, 4], np.int32), np.array([1, 2, 3], np.int32))
    assert not result.ok
    assert (
        str(result)
        == "1 of 3 element(s) differ (int32 compares exactly); first at [2]: got 4, expected 3"
    )
    assert str(compare(np.array([1, 2]), np.array([1, 2]))) == "exact (int64 compares exactly)"
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


def test_the_text_names_the_tolerance_it_applied():
    want = np.array([1.0, 2.0], np.float32)
    got = np.array([1.0, 2.0625], np.float32)
    assert str(compare(got, want, override=(0.1, 0.0))) == (
        "max abs error 0.0625, max rel error 0.0312; within given tolerance rtol 1e-01, atol 0"
    )
    assert str(compare(want, want)) == (
        "max abs error 0, max rel error 0; within float32 tolerance rtol 1e-04, atol 1e-05"
    )
    assert str(compare(want, want, override=(0.0, 0.02))).endswith(
        "within given tolerance rtol 0, atol 2e-02"
    )
    assert str(compare(np.zeros(0, np.float32), np.zeros(0, np.float32))) == (
        "empty: nothing to compare"
    )


def test_a_large_relative_error_that_passes_says_why():
    """Never "ok" next to a relative error of 1 without the reason: atol, near 0."""
    want = np.array([1e-9, 1.0], np.float32)
    got = np.array([2e-9, 1.0], np.float32)
    result = compare(got, want)
    assert result.ok and result.max_rel_error == pytest.approx(1.0)
    assert str(result) == (
        "max abs error 1e-09, max rel error 1; within float32 tolerance rtol 1e-04, atol 1e-05 "
        "(rel error 1 on an expected 1e-09, near 0, where atol governs: abs error 1e-09 <= "
        "atol + rtol * 1e-09 = 1e-05)"
    )


def test_a_mismatch_counts_the_elements_and_shows_the_worst():
    want = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    got = want + np.array([[0.0, 0.5], [0.0, 0.01]], np.float32)
    result = compare(got, want)
    assert not result.ok and result.mismatches == 2
    assert str(result) == (
        "2 of 4 element(s) outside atol + rtol * |expected| (float32 tolerance rtol 1e-04, "
        "atol 1e-05); max abs error 0.5, max rel error 0.25; worst at [0, 1]: got 2.5, "
        "expected 2"
    )


def test_agreeing_nan_and_inf_are_counted():
    want = np.array([np.nan, np.inf, 1.0], np.float32)
    assert str(compare(want.copy(), want)).endswith("; 2 NaN / inf in the same places")
