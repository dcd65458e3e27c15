"""Evaluating a scalar expression on concrete values: the oracle for simplifier tests.

Integers use C semantics (division truncates toward zero, the remainder takes the
dividend's sign) on unbounded Python ints, with the IR's defined cases C leaves
undefined: a zero divisor gives 0 for `/` and `%` (NumPy's answer, and what generated
code emits); a float converted to an integer truncates, saturates to the type's range
and takes NaN to 0 (`dtypes.float_to_int`). Floats are Python floats with IEEE
division (x / 0.0 is inf or NaN). An `ArgReduce` searches its axes' constant ranges
(NaN never wins, ties keep the first position).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from cinn_py.ir import expr as e
from cinn_py.ir.operators import OPERATORS
from cinn_py.pir.dtypes import float_to_int


def int_pow(base: int, exponent: int, bits: int) -> int:
    """The IR's integer `pow`: `base ** exponent` modulo 2**bits (the caller wraps it to
    its type) for exponent >= 0; for a negative exponent 1 / base**-exponent truncated:
    1 for base 1, +-1 for base -1 (by the exponent's parity), else 0 (also for base 0:
    integer division by zero gives 0)."""
    if exponent >= 0:
        return pow(base, exponent, 1 << bits)
    if base == 1:
        return 1
    if base == -1:
        return 1 if exponent % 2 == 0 else -1
    return 0


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
            if node.value.dtype.is_float:
                return int(float_to_int(v, node.dtype))
            return int(v)
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
    """The operator's value (`operators.OPERATORS`): integer forms on integer operands
    (and `%`, which has no float form), IEEE forms on floats."""
    op = OPERATORS[type(node)]
    if node.a.dtype.is_integer or op.real is None:
        return op.integer(a, b)
    return op.real(a, b)


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
