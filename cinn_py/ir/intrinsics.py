"""The loop IR's intrinsic calls, one table: what each computes (the interpreter's
NumPy form), how C spells it (its double function; the float one adds `f`), and its
float32 approximation under fast math (`cinn_py.compile(..., fast_math=True)`).

`Call(name, args, dtype, CallType.INTRINSIC)` nodes name an entry here. The integer
forms of `abs` and `pow` (wrapping) and the float tests' bool results are the callers'
to special-case: the table holds the floating-point meaning.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


def c_pow(a: Any, b: Any) -> Any:
    """C's pow: NumPy's power, except that -inf to a finite non-integer power is +inf
    (positive power) or +0 (negative), where NumPy gives NaN."""
    fb = float(b)
    if float(a) == -math.inf and math.isfinite(fb) and fb != math.trunc(fb):
        return type(a)(math.inf if fb > 0 else 0.0)
    return np.power(a, b)


@dataclass(frozen=True)
class Intrinsic:
    """One intrinsic function of the IR."""

    name: str
    arity: int
    numpy: Callable[..., Any]
    """Its value on NumPy scalars of the argument's float dtype (the interpreter's)."""
    c: str | None = None
    """Its C double function (`exp`; the float form adds `f`); None for a float test,
    which C spells as its own name and reads as an int."""
    fast: str | None = None
    """Its float32 approximation under fast math (`__expf`, or a runtime helper)."""

    @property
    def test(self) -> bool:
        """A float test (isnan, isinf, isfinite): bool-valued."""
        return self.c is None


_TABLE = (
    Intrinsic("exp", 1, np.exp, "exp", "__expf"),
    Intrinsic("exp2", 1, np.exp2, "exp2"),
    Intrinsic("expm1", 1, np.expm1, "expm1"),
    Intrinsic("log", 1, np.log, "log", "__logf"),
    Intrinsic("log1p", 1, np.log1p, "log1p"),
    Intrinsic("log2", 1, np.log2, "log2", "__log2f"),
    Intrinsic("sqrt", 1, np.sqrt, "sqrt"),
    Intrinsic("rsqrt", 1, lambda x: type(x)(1) / np.sqrt(x), "rsqrt"),
    Intrinsic("sin", 1, np.sin, "sin", "__sinf"),
    Intrinsic("cos", 1, np.cos, "cos", "__cosf"),
    Intrinsic("tan", 1, np.tan, "tan", "__tanf"),
    Intrinsic("tanh", 1, np.tanh, "tanh", "cinn_tanh_approx"),
    Intrinsic("erf", 1, lambda x: math.erf(float(x)), "erf"),
    Intrinsic("floor", 1, np.floor, "floor"),
    Intrinsic("ceil", 1, np.ceil, "ceil"),
    Intrinsic("rint", 1, np.rint, "rint"),
    Intrinsic("abs", 1, np.abs, "fabs"),
    Intrinsic("pow", 2, c_pow, "pow", "__powf"),
    Intrinsic("fmod", 2, np.fmod, "fmod"),
    Intrinsic("isnan", 1, np.isnan),
    Intrinsic("isinf", 1, np.isinf),
    Intrinsic("isfinite", 1, np.isfinite),
)

INTRINSICS: dict[str, Intrinsic] = {i.name: i for i in _TABLE}
"""Every intrinsic, by name."""
