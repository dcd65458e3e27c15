"""The loop IR's binary operators, one table: how each is spelled in C and in CINN's
printed IR, and what it computes on numbers. The printer, the C renderer, `evaluate`,
`simplify`'s constant folding and the interpreter all read it, so an operator's
meaning is written once.

Integers follow C on unbounded Python ints (division truncates toward zero, the
remainder takes the dividend's sign) with the IR's defined answers where C has none: a
zero divisor gives 0 (`c_div`, `c_mod`); the callers wrap to the dtype. Floats follow
IEEE: `x / 0.0` is inf or NaN, never an exception. Comparisons and `and` / `or` give
bools. Min and Max have no C operator (the renderers call `cinn_min` / `cinn_max`) and
no printed one (`cinn_min(a, b)`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from cinn_py.ir import expr as e


def c_div(a: int, b: int) -> int:
    """C's `a / b` on integers: the quotient truncated toward zero; 0 when `b` is 0."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_mod(a: int, b: int) -> int:
    """C's `a % b`: `a - (a / b) * b`, with the sign of `a`; 0 when `b` is 0."""
    return a - c_div(a, b) * b if b != 0 else 0


def ieee_div(a: float, b: float) -> float:
    """IEEE `a / b` in float64: a zero divisor gives inf or NaN, not an exception."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(a) / np.float64(b))


@dataclass(frozen=True)
class Operator:
    """One binary operator of the IR."""

    c: str | None
    """Its C spelling (None: rendered as a helper call)."""
    printed: str | None
    """Its spelling in CINN's printed IR (None: printed as a call)."""
    integer: Callable[[Any, Any], Any]
    """Its value on two Python ints (before wrapping to the dtype)."""
    real: Callable[[Any, Any], Any] | None
    """Its value on two floats (IEEE); None where the IR has no float form (`%`)."""


def _and(a: Any, b: Any) -> bool:
    return bool(a and b)


def _or(a: Any, b: Any) -> bool:
    return bool(a or b)


OPERATORS: dict[type[e.BinaryOp], Operator] = {
    e.Add: Operator("+", "+", operator.add, operator.add),
    e.Sub: Operator("-", "-", operator.sub, operator.sub),
    e.Mul: Operator("*", "*", operator.mul, operator.mul),
    e.Div: Operator("/", "/", c_div, ieee_div),
    e.Mod: Operator("%", "%", c_mod, None),
    e.Min: Operator(None, None, min, min),
    e.Max: Operator(None, None, max, max),
    e.EQ: Operator("==", "==", operator.eq, operator.eq),
    e.NE: Operator("!=", "!=", operator.ne, operator.ne),
    e.LT: Operator("<", "<", operator.lt, operator.lt),
    e.LE: Operator("<=", "<=", operator.le, operator.le),
    e.GT: Operator(">", ">", operator.gt, operator.gt),
    e.GE: Operator(">=", ">=", operator.ge, operator.ge),
    e.And: Operator("&&", "and", _and, _and),
    e.Or: Operator("||", "or", _or, _or),
}
"""Every binary node kind of `ir.expr`, by class."""

C_SPELLING: dict[type[e.BinaryOp], str] = {
    kind: op.c for kind, op in OPERATORS.items() if op.c is not None
}
PRINTED: dict[type[e.BinaryOp], str] = {
    kind: op.printed for kind, op in OPERATORS.items() if op.printed is not None
}
