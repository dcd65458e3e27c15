"""Evaluating a scalar expression on concrete values: the oracle for simplifier tests.

Integers use C semantics (division truncates toward zero, the remainder takes the
dividend's sign) on unbounded Python ints; floats are Python floats. An `ArgReduce`
searches its axes' constant ranges (NaN never wins, ties keep the first position).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

from cinn_py.ir import expr as e


def c_div(a: int, b: int) -> int:
    """C's `a / b` on integers: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def c_mod(a: int, b: int) -> int:
    """C's `a % b`: `a - (a / b) * b`, with the sign of `a`."""
    return a - c_div(a, b) * b


def evaluate(node: e.Expr, env: Mapping[str, int | float | bool]) -> int | float | bool:
    """The value of `node` with each Var replaced by `env[var.name]`."""
    if isinstance(node, (e.IntImm, e.UIntImm, e.FloatImm)):
        return node.value
    if isinstance(node, e.Var):
        return env[node.name]
    if isinstance(node, e.Cast):
        v = evaluate(node.value, env)
        if node.dtype.value == "bool":
            return bool(v)
        if node.dtype.is_integer:
            return math.trunc(v)
        return float(v)
    if isinstance(node, e.Not):
        return not evaluate(node.value, env)
    if isinstance(node, e.Select):
        cond = evaluate(node.condition, env)
        return evaluate(node.true_value if cond else node.false_value, env)
    if isinstance(node, e.BinaryOp):
        a, b = evaluate(node.a, env), evaluate(node.b, env)
        return _binary(node, a, b)
    if isinstance(node, e.ArgReduce):
        return _arg_reduce(node, env)
    raise TypeError(f"evaluate: cannot evaluate {type(node).__name__}")


def _binary(node: e.BinaryOp, a: int | float | bool, b: int | float | bool) -> int | float | bool:
    integer = node.a.dtype.is_integer
    if isinstance(node, e.Add):
        return a + b
    if isinstance(node, e.Sub):
        return a - b
    if isinstance(node, e.Mul):
        return a * b
    if isinstance(node, e.Div):
        return c_div(a, b) if integer else a / b
    if isinstance(node, e.Mod):
        return c_mod(a, b)
    if isinstance(node, e.Min):
        return min(a, b)
    if isinstance(node, e.Max):
        return max(a, b)
    if isinstance(node, e.And):
        return a and b
    if isinstance(node, e.Or):
        return a or b
    compare = {
        e.EQ: a == b,
        e.NE: a != b,
        e.LT: a < b,
        e.LE: a <= b,
        e.GT: a > b,
        e.GE: a >= b,
    }
    return compare[type(node)]


def _arg_reduce(node: e.ArgReduce, env: Mapping[str, int | float | bool]) -> int:
    """The first position (row-major over the axes) of the best value; NaN never wins."""
    start = evaluate(node.start_value(), env)
    better = (lambda a, b: a > b) if node.reduce_type is e.ReduceType.MAX else (lambda a, b: a < b)
    inner = dict(env)
    best, index = start, 0
    points = itertools.product(*(range(v.lower, v.upper) for v in node.reduce_axis))
    for position, point in enumerate(points):
        inner.update((v.name, p) for v, p in zip(node.reduce_axis, point, strict=True))
        value = evaluate(node.body, inner)
        if better(value, best):
            best, index = value, position
    return index
