"""Dtype-aware comparison of results, shared by `--check` and the tests.

A float32 result may differ from the oracle by rounding order; a float16 one by a
half ULP of float16 per op; integers and bools must match exactly. One table, so the
CLI and every test mean the same thing by "matches".

An element matches when `|got - want| <= atol + rtol * |want|` (NumPy's `allclose`).
Near zero `atol` governs, so a match may have a large *relative* error (1e-9 against
an expected 1e-9 is 100%): `Comparison` keeps where its largest relative error is and
says so in its text, so that "ok" never stands next to a relative error of 1 without
the reason it passed.
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

FAST_MATH: dict[str, tuple[float, float]] = {**TOLERANCES, "float32": (2e-3, 1e-4)}
"""(rtol, atol) per dtype for results of kernels compiled with `fast_math=True`: float32
transcendentals then err by up to about 5e-4 relative (`tanh.approx`), `__expf` by
|x| * 2**-22 more than `expf`; the 16-bit floats' own tolerances already cover that."""


@dataclass(frozen=True)
class Comparison:
    """The result of `compare`: whether it matched, the largest errors, and the rule
    that decided (the tolerance and the dtype it belongs to, or an exact compare)."""

    ok: bool
    max_abs_error: float
    max_rel_error: float
    reason: str = ""
    """Why the arrays cannot match at all (shapes, NaN / inf positions); "" otherwise."""
    rtol: float = 0.0
    atol: float = 0.0
    rule: str = ""
    """Whose tolerance applied: a dtype name (`float32`), or "given" for an override."""
    exact: bool = False
    """Compared element for element (integers, bools)."""
    size: int = 0
    mismatches: int = 0
    """Elements outside the tolerance (or different, when exact)."""
    rel_at: float = 0.0
    """|expected| at the element with the largest relative error."""
    rel_abs_error: float = 0.0
    """The absolute error of that element."""
    worst: str = ""
    """The element furthest outside the tolerance, for a mismatch: `[3, 7]: got 1.5,
    expected 1`."""
    nonfinite: int = 0
    """NaN and inf elements of the expected array (they must sit in the same places)."""

    def __str__(self) -> str:
        if self.reason:
            return self.reason
        if self.exact:
            return self._exact_text()
        if not self.size:
            return "empty: nothing to compare"
        errors = f"max abs error {self.max_abs_error:.3g}, max rel error {self.max_rel_error:.3g}"
        rule = f"{self.rule} tolerance rtol {_tol(self.rtol)}, atol {_tol(self.atol)}"
        if not self.ok:
            text = (
                f"{self.mismatches} of {self.size} element(s) outside atol + rtol * |expected| "
                f"({rule}); {errors}"
            )
            return text + (f"; worst at {self.worst}" if self.worst else "")
        text = f"{errors}; within {rule}"
        if self.max_rel_error > self.rtol:
            text += (
                f" (rel error {self.max_rel_error:.3g} on an expected {self.rel_at:.3g}, near 0,"
                f" where atol governs: abs error {self.rel_abs_error:.3g} <= atol + rtol * "
                f"{self.rel_at:.3g} = {self.atol + self.rtol * self.rel_at:.3g})"
            )
        if self.nonfinite:
            text += f"; {self.nonfinite} NaN / inf in the same places"
        return text

    def _exact_text(self) -> str:
        rule = f"{self.rule} compares exactly" if self.rule else "compared exactly"
        if self.ok:
            return f"exact ({rule})" if self.size else f"exact ({rule}; empty)"
        text = f"{self.mismatches} of {self.size} element(s) differ ({rule})"
        return text + (f"; first at {self.worst}" if self.worst else "")


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
    rule = "given" if override else (dtype or str(want.dtype))
    rtol, atol = override or tolerance(dtype or want.dtype)
    if want.dtype.kind in "biu" and not rtol:
        return _compare_exactly(got, want, rule)
    g = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
    w = want.astype(g.dtype)
    nan_ok = np.array_equal(np.isnan(g), np.isnan(w))
    finite = np.isfinite(w) & np.isfinite(g)
    same_inf = np.array_equal(g[~np.isnan(w) & ~finite], w[~np.isnan(w) & ~finite])
    if not (nan_ok and same_inf):
        return Comparison(False, np.inf, np.inf, "NaN or inf positions differ", rtol, atol, rule)
    err = np.abs(g[finite] - w[finite])
    scale = np.abs(w[finite])
    rel = err / np.maximum(scale, np.finfo(np.float64).tiny)
    outside = err > atol + rtol * scale
    mismatches = int(np.count_nonzero(outside))
    worst = ""
    if mismatches:
        k = int(np.argmax(err - (atol + rtol * scale)))
        index = _index(np.flatnonzero(finite)[k], want.shape)
        worst = f"{index}: got {g[finite][k]:.6g}, expected {w[finite][k]:.6g}"
    r = int(np.argmax(rel)) if rel.size else 0
    return Comparison(
        ok=mismatches == 0,
        max_abs_error=float(err.max()) if err.size else 0.0,
        max_rel_error=float(rel.max()) if rel.size else 0.0,
        rtol=rtol,
        atol=atol,
        rule=rule,
        size=int(want.size),
        mismatches=mismatches,
        rel_at=float(scale[r]) if rel.size else 0.0,
        rel_abs_error=float(err[r]) if rel.size else 0.0,
        worst=worst,
        nonfinite=int(want.size - np.count_nonzero(finite)),
    )


def _compare_exactly(got: np.ndarray, want: np.ndarray, rule: str) -> Comparison:
    differ = got != want
    mismatches = int(np.count_nonzero(differ))
    diff = 0.0 if not got.size else float(np.max(np.abs(got.astype(np.float64) - want)))
    worst = ""
    if mismatches:
        k = int(np.flatnonzero(differ)[0])
        worst = f"{_index(k, want.shape)}: got {got.flat[k]}, expected {want.flat[k]}"
    return Comparison(
        mismatches == 0,
        diff,
        diff,
        rule=rule,
        exact=True,
        size=int(want.size),
        mismatches=mismatches,
        worst=worst,
    )


def _tol(x: float) -> str:
    return f"{x:.0e}" if x else "0"


def _index(flat: int, shape: tuple[int, ...]) -> list[int]:
    return [int(i) for i in np.unravel_index(int(flat), shape)] if shape else []
