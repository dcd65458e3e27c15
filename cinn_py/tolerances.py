"""Dtype-aware comparison of results, shared by `--check` and the tests.

A float32 result may differ from the oracle by rounding order; a float16 one by a
half ULP of float16 per op; integers and bools must match exactly. One table, so the
CLI and every test mean the same thing by "matches".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cinn_py.pir.dtypes import bfloat16_to_float32

TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-9, 1e-12),
    "float32": (1e-4, 1e-5),
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-9, 1e-12),
}
"""(rtol, atol) per dtype; dtypes not listed (ints, bool) compare exactly."""


@dataclass(frozen=True)
class Comparison:
    ok: bool
    max_abs_error: float
    max_rel_error: float
    reason: str = ""

    def __str__(self) -> str:
        if self.reason:
            return self.reason
        return f"max abs error {self.max_abs_error:.3g}, max rel error {self.max_rel_error:.3g}"


def tolerance(dtype: np.dtype | str) -> tuple[float, float]:
    name = dtype if dtype == "bfloat16" else str(np.dtype(dtype))
    return TOLERANCES.get(name, (0.0, 0.0))


def compare(
    got: np.ndarray,
    want: np.ndarray,
    dtype: str | None = None,
    override: tuple[float, float] | None = None,
) -> Comparison:
    """Compare with the tolerance of `dtype` (default: `want`'s dtype), or the explicit
    `(rtol, atol)` of `override`; NaNs and infinities must agree.

    `dtype="bfloat16"` takes both arrays as uint16 bit patterns, as Paddle gives them.
    """
    got = np.asarray(got)
    want = np.asarray(want)
    if dtype == "bfloat16":
        got, want = bfloat16_to_float32(got), bfloat16_to_float32(want)
    if got.shape != want.shape:
        return Comparison(False, np.inf, np.inf, f"shape {got.shape} != expected {want.shape}")
    rtol, atol = override or tolerance(dtype or want.dtype)
    if want.dtype.kind in "biu" and not rtol:
        mismatches = int(np.count_nonzero(got != want))
        diff = 0.0 if not got.size else float(np.max(np.abs(got.astype(np.float64) - want)))
        reason = f"{mismatches} element(s) differ" if mismatches else "exact match"
        return Comparison(mismatches == 0, diff, diff, reason)
    g = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
    w = want.astype(g.dtype)
    nan_ok = np.array_equal(np.isnan(g), np.isnan(w))
    finite = np.isfinite(w) & np.isfinite(g)
    same_inf = np.array_equal(g[~np.isnan(w) & ~finite], w[~np.isnan(w) & ~finite])
    err = np.abs(g[finite] - w[finite])
    max_abs = float(err.max()) if err.size else 0.0
    rel = err / np.maximum(np.abs(w[finite]), np.finfo(np.float64).tiny)
    max_rel = float(rel.max()) if rel.size else 0.0
    within = bool(np.all(err <= atol + rtol * np.abs(w[finite])))
    reason = "" if nan_ok and same_inf else "NaN or inf positions differ"
    return Comparison(within and nan_ok and same_inf, max_abs, max_rel, reason)
