"""The simplifier: a table of input -> printed output, and a property test against
`evaluate` on random affine expressions over bounded Vars."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cinn_py.ir import (
    Block,
    Buffer,
    Cast,
    Div,
    Expr,
    FloatImm,
    IfThenElse,
    IntImm,
    Load,
    Max,
    Min,
    Mod,
    Select,
    Store,
    UIntImm,
    Var,
    evaluate,
    print_ir,
    simplify,
)
from cinn_py.ir.simplify import lower_bound
from cinn_py.pir.dtypes import DataType as D

i = Var("i", lower=0, upper=16)
j = Var("j", lower=0, upper=4)
k = Var("k", lower=0, upper=8)
n = Var("n")
x = Var("x", D.FLOAT32)
b = Var("b", D.BOOL)
C = IntImm

CASES = [
    # constant folding
    (C(3) + C(4), "7"),
    (C(7) / C(2), "3"),
    (C(-7) / C(2), "-3"),
    (C(-7) % C(2), "-1"),
    (C(7) % C(-2), "1"),
    (C(2147483647) + C(1), "-2147483648"),
    (C(5) / C(0), "0"),  # the IR's integer division by zero (NumPy's // and %)
    (Min(C(3), C(5)), "3"),
    (Max(C(3), C(5)), "5"),
    (FloatImm(0.1) + FloatImm(0.2), "0.300000012f"),
    (FloatImm(1.0) / FloatImm(3.0), "0.333333343f"),
    (FloatImm(0.1, D.FLOAT64) + FloatImm(0.2, D.FLOAT64), "0.30000000000000004"),
    (FloatImm(1.0, D.FLOAT16) + FloatImm(0.0001, D.FLOAT16), "(float16)1f"),
    (Cast(D.INT32, FloatImm(-2.7)), "-2"),
    (Cast(D.FLOAT32, C(3)), "3.00000000f"),
    (Cast(D.INT32, n), "n"),
    (C(3).lt(C(4)), "true"),
    (UIntImm(True) & UIntImm(False), "false"),
    (~UIntImm(False), "true"),
    # identities
    (n + 0, "n"),
    (0 + n, "n"),
    (n * 1, "n"),
    (n * 0, "0"),
    (n - n, "0"),
    (n / 1, "n"),
    (n % 1, "0"),
    (x * 1.0, "x"),
    (x / 1.0, "x"),
    (x - 0.0, "x"),
    (x + 0.0, "(x + 0.00000000f)"),
    (x * 0.0, "(x * 0.00000000f)"),
    (Min(n, n), "n"),
    (Max(x, x), "x"),
    (Select(UIntImm(True), n, n + 1), "n"),
    (Select(UIntImm(False), n, n + 1), "(n + 1)"),
    (Select(b, n, n + 0), "n"),
    # affine canonical form
    (j + i, "(i + j)"),
    (n * 2 + i * 3 + n, "((i * 3) + (n * 3))"),
    ((j + i * 2) + (i * 3) + 1 - j, "((i * 5) + 1)"),
    (C(3) - i * 2, "((i * -2) + 3)"),
    (i - k - 2, "((i - k) - 2)"),
    ((i + 1) * 4 - 4, "(i * 4)"),
    (2 * (i + j * 2) + 2 * (k - j * 2), "((i * 2) + (k * 2))"),
    # division and remainder with bounds
    ((i * 4 + j) / 4, "i"),
    ((i * 4 + j) % 4, "j"),
    ((j + i * 4) / 4, "i"),
    ((i * 8 + k) / 8, "i"),
    ((i * 8 + k) % 8, "k"),
    ((i * 4 + j + 4) / 4, "(i + 1)"),
    ((i * 4 + k) / 4, "(((i * 4) + k) / 4)"),
    ((i * 4 + k) % 4, "(k % 4)"),
    ((i % 8) % 4, "(i % 4)"),
    ((i % 4) % 8, "(i % 4)"),
    (i / 4 * 4 + i % 4, "i"),
    (i % 4 + i / 4 * 4, "i"),
    (n / 4 * 4 + n % 4, "n"),
    ((n * 8) / 4, "(n * 2)"),
    ((n * 8) % 4, "0"),
    ((n * 4 + 1) / 4, "(((n * 4) + 1) / 4)"),
    ((i / 2) / 4, "(i / 8)"),
    (j % 4, "j"),
    (j / 4, "0"),
    (k % 4, "(k % 4)"),
    # comparisons, min, max decided by bounds
    (j.lt(4), "true"),
    (j.ge(4), "false"),
    (i.lt(j), "(i < j)"),
    (Min(j, C(8)), "j"),
    (Max(j, C(8)), "8"),
    (Min(i, j), "cinn_min(i, j)"),
    # statements
    (
        IfThenElse(j.lt(4), Store(Buffer("B", D.FLOAT32, [4]), FloatImm(1.0), [j])),
        "B[j] = 1.00000000f",
    ),
    (IfThenElse(j.gt(4), Store(Buffer("B", D.FLOAT32, [4]), FloatImm(1.0), [j])), "{\n\n}"),
]


@pytest.mark.parametrize(("node", "text"), CASES, ids=[print_ir(n) for n, _ in CASES])
def test_simplify(node, text):
    assert print_ir(simplify(node)) == text


def test_at_least_forty_cases():
    assert len(CASES) >= 40


def test_simplify_returns_the_same_object_when_already_simple():
    tree = Block([Store(Buffer("B", D.FLOAT32, [4]), FloatImm(1.0), [j])])
    assert simplify(tree) is tree
    expr = (i * 4) + j
    assert simplify(expr) is not expr
    assert print_ir(simplify(expr)) == print_ir(expr)


VARS = [Var("a", lower=0, upper=5), Var("b", lower=0, upper=4), Var("c", lower=0, upper=17)]


def _affine_exprs() -> st.SearchStrategy[Expr]:
    leaves = st.one_of(st.sampled_from(VARS), st.integers(0, 9).map(IntImm))

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        consts = st.integers(1, 9).map(IntImm)
        return st.one_of(
            st.tuples(children, children).map(lambda p: p[0] + p[1]),
            st.tuples(children, children).map(lambda p: p[0] - p[1]),
            st.tuples(children, consts).map(lambda p: p[0] * p[1]),
            st.tuples(children, consts).map(lambda p: Div(p[0], p[1])),
            st.tuples(children, consts).map(lambda p: Mod(p[0], p[1])),
            st.tuples(children, children).map(lambda p: Min(p[0], p[1])),
            st.tuples(children, children).map(lambda p: Max(p[0], p[1])),
        )

    return st.recursive(leaves, extend, max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(
    expr=_affine_exprs(),
    a=st.integers(0, 4),
    b_=st.integers(0, 3),
    c=st.integers(0, 16),
)
def test_simplify_preserves_value(expr, a, b_, c):
    env = {"a": a, "b": b_, "c": c}
    assert evaluate(simplify(expr), env) == evaluate(expr, env)


@settings(max_examples=200, deadline=None)
@given(q=st.integers(0, 4), r=st.integers(0, 3), w=st.integers(0, 16))
def test_div_mod_of_split_index(q, r, w):
    a, b_, c = VARS
    env = {"a": q, "b": r, "c": w}
    for expr in ((a * 4 + b_) / 4, (a * 4 + b_) % 4, (c / 4) * 4 + c % 4, (c % 8) % 4):
        assert evaluate(simplify(expr), env) == evaluate(expr, env)


# `lower_bound`: what codegen reads to print a plain `/` for a divisor of symbolic dims
# (each at least 1, no upper bound) instead of the 0 / -1 checking helper.
DIM_VARS = (Var("S0", lower=1), Var("S1", lower=1), Var("t", lower=0, upper=32))


def _dim_exprs():
    leaves = st.one_of(st.sampled_from(DIM_VARS), st.integers(-40, 40).map(C))

    def extend(children):
        return st.one_of(
            st.tuples(children, children).map(lambda p: p[0] + p[1]),
            st.tuples(children, children).map(lambda p: p[0] - p[1]),
            st.tuples(children, children).map(lambda p: p[0] * p[1]),
            st.tuples(children, st.integers(1, 64)).map(lambda p: Div(p[0], C(p[1]))),
            st.tuples(children, children).map(lambda p: Min(p[0], p[1])),
            st.tuples(children, children).map(lambda p: Max(p[0], p[1])),
        )

    return st.recursive(leaves, extend, max_leaves=8)


@settings(max_examples=500, deadline=None)
@given(expr=_dim_exprs(), s0=st.integers(1, 5000), s1=st.integers(1, 70), t=st.integers(0, 31))
def test_lower_bound_holds_for_every_value_of_the_dims(expr, s0, s1, t):
    low = lower_bound(expr)
    if low is not None:
        assert evaluate(expr, {"S0": s0, "S1": s1, "t": t}) >= low


def test_lower_bound_of_a_tile_count_and_what_it_does_not_know():
    s0, s1, t = DIM_VARS
    assert lower_bound((s0 + 31) / 32) == 1
    assert lower_bound(s0 * s1 * 4) == 4
    assert lower_bound(Max(s0 - 5, C(2))) == 2
    assert lower_bound(s0 / 32) == 0  # 0 for S0 < 32: codegen keeps cinn_div
    assert lower_bound(s0 - s1) is None
    assert lower_bound(Var("n")) is None
    assert lower_bound(t * C(-1)) is None


@settings(max_examples=300, deadline=None)
@given(
    k=st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(-3, 3)),
    d=st.sampled_from([2, 4, 7, 8, 32, 8192]),
    shift=st.integers(-2, 2),
    at=st.tuples(st.integers(0, 15), st.integers(0, 3), st.integers(0, 7)),
)
def test_split_index_with_a_multiple_of_the_divisor_folds_back(k, d, shift, at):
    """`(x / d) * d + x % d` where simplify drops a multiple of d from the `%` but not
    from the `/` (the chunk offset of a reduce-all over `[S0, 8192]`): the value is x,
    and where both dividends are never negative, the fold gives x itself."""
    chunk = Var("k", lower=0, upper=8)
    x = i * C(k[0]) + j * C(k[1]) + chunk * C(k[2] * d) + C(shift * d)
    expr = Div(x, C(d)) * C(d) + Mod(x, C(d))
    env = {"i": at[0], "j": at[1], "k": at[2]}
    assert evaluate(simplify(expr), env) == evaluate(expr, env)
    if k[2] >= 0 and shift >= 0:
        assert "/" not in print_ir(simplify(expr))


def test_simplify_memo_gives_equal_results_and_keeps_loads_apart():
    a = (i * C(4) + j) / C(4)
    b = (i * C(4) + j) / C(4)  # a second tree, structurally equal
    first, second = simplify(a), simplify(b)
    assert first is second and print_ir(first) == "i"  # from the memo
    done = simplify(i + j)
    assert simplify(done) is done  # already simple: the same object
    # reads are never shared: passes key maps by a Load's or a Reduce's id
    x_buf = Buffer("x", D.FLOAT32, [16])
    one = simplify(Load(x_buf, [i + C(0)]) + FloatImm(0.0))
    two = simplify(Load(x_buf, [i + C(0)]) + FloatImm(0.0))
    assert print_ir(one) == print_ir(two) and one is not two
