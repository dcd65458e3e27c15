"""DimExpr: canonical forms (equal expressions compare and hash equal), evaluation and
printing."""

from __future__ import annotations

import pytest

from cinn_py.pir.dim_expr import (
    Broadcast,
    Const,
    FloorDiv,
    Max,
    Sym,
    as_dim,
    broadcast,
    const,
    dim_max,
)

S0, S1, S2 = Sym(0), Sym(1), Sym(2)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (S0, "S0"),
        (S0 * 4, "S0*4"),
        (4 * S0, "S0*4"),
        ((S0 + 1) // 2, "(S0+1)//2"),
        (dim_max(S0, S1), "max(S0,S1)"),
        (dim_max(S1, S0), "max(S0,S1)"),
        (broadcast(S1, S0), "broadcast(S0,S1)"),
        (S1 + S0 * 4 + 3, "S0*4+S1+3"),
        (S0 - 4, "S0-4"),
        (3 - S0, "-S0+3"),
        (S0 * S1 * 2, "S0*S1*2"),
        ((S0 * S1) // S2, "(S0*S1)//S2"),
        (const(7), "7"),
    ],
)
def test_printing(expr, text):
    assert str(expr) == text


@pytest.mark.parametrize(
    ("expr", "same"),
    [
        (S0 * 1, S0),
        (S0 + 0, S0),
        ((S0 * 4) // 4, S0),
        (dim_max(S0, S0), S0),
        (dim_max(S0, 0), S0),  # dims are never negative
        (S0 + S1, S1 + S0),
        (S0 * S1, S1 * S0),
        ((S0 + 1) * 2, S0 * 2 + 2),
        (S0 + S0, S0 * 2),
        (S0 - S0, Const(0)),
        (const(3) * 4 + 1, Const(13)),
        (const(7) // 2, Const(3)),
        ((S0 * 8 + 4) // 4, S0 * 2 + 1),
        ((S0 * S1 * 16) // (S1 * 16), S0),
        ((S0 * S1 * 6) // (S0 * 4), (S1 * 3) // 2),
        (S0 // 1, S0),
        (S0 // S0, Const(1)),
        (broadcast(S0, 1), S0),
        (broadcast(S0, S0), S0),
        (broadcast(S0, 16), Const(16)),
        (broadcast(1, 1), Const(1)),
        (broadcast(broadcast(S0, S1), S0), broadcast(S0, S1)),
        (dim_max(dim_max(S0, 3), 5), dim_max(S0, 5)),
    ],
)
def test_equal_expressions_are_equal(expr, same):
    assert expr == same
    assert hash(expr) == hash(same)


def test_canonical_forms_are_the_node_kinds():
    assert isinstance((S0 + 1) // 2, FloorDiv)
    assert isinstance(dim_max(S0, S1), Max)
    assert isinstance(broadcast(S0, S1), Broadcast)
    assert {S0 * 4, 4 * S0, (S0 * 16) // 4} == {S0 * 4}


def test_evaluation():
    binding = {S0: 7, S1: 3}
    assert ((S0 + 1) // 2).evaluate(binding) == 4
    assert (S0 * S1 * 4).evaluate(binding) == 84
    assert dim_max(S0, S1).evaluate(binding) == 7
    assert broadcast(S0, S1).evaluate({S0: 5, S1: 1}) == 5
    assert (S0 - 9).evaluate(binding) == -2
    with pytest.raises(KeyError):
        (S0 + S2).evaluate(binding)
    with pytest.raises(ValueError, match="do not broadcast"):
        broadcast(S0, S1).evaluate(binding)


def test_symbols_and_substitution():
    expr = (S0 * S1 + S2) // 2
    assert expr.symbols() == {S0, S1, S2}
    assert expr.substitute({S2: S0 * 2}) == (S0 * S1 + S0 * 2) // 2
    assert (S0 * 4).substitute({S0: Const(3)}) == Const(12)


def test_bad_input():
    with pytest.raises(ValueError, match="do not broadcast"):
        broadcast(3, 4)
    with pytest.raises(ZeroDivisionError):
        S0 // 0
    with pytest.raises(TypeError):
        as_dim(1.5)
    with pytest.raises(TypeError):
        as_dim(True)
