"""Algebraic simplification of the AST, mostly of index arithmetic.

`simplify` rewrites bottom up:

* constant folding: integers wrap to their dtype's width; division and remainder
  follow C (truncate toward zero, remainder with the dividend's sign), with the IR's
  defined cases (a zero divisor gives 0, INT_MIN / -1 wraps); a float converted to an
  integer truncates, saturates and takes NaN to 0 (`dtypes.float_to_int`); floats are
  computed in their own precision (float32 / float16 through NumPy, bfloat16 rounded
  from float32); float division by a zero constant is left alone;
* identities: `x*1`, `x/1`, `x-0` for every type; `x+0`, `x*0`, `x-x`, `x%1` for
  integers; `min(x, x)`, `max(x, x)`; `select` with a constant condition or equal
  branches; `!`, `and`, `or` of constants; an `if` with a constant condition;
* affine canonical form of integer sums: `c1*t1 + c2*t2 + ... + c`, like terms
  combined, terms sorted (Vars by name first, then other terms by their text),
  `(x / c) * c + x % c` merged back into `x`;
* division and remainder by a positive constant using the Vars' bounds (`lower <=
  v < upper`): `(i*4 + j) / 4 -> i` and `(i*4 + j) % 4 -> j` when `0 <= j < 4`,
  `(x / a) / b -> x / (a*b)`, `(x % a) % b -> x % b` when `b` divides `a`, `x % c
  -> x` when `0 <= x < c`; and comparisons, min and max decided by bounds.

The bound-based division rules require the dividend to be provably non-negative,
where C's truncation and floor division agree (CINN's index arithmetic is on
non-negative values); otherwise only exact rules (`(c*x) / c -> x`) apply. Integer
overflow inside index expressions is assumed not to happen. Value arithmetic (on
what a Load, Call, Reduce or float conversion gives) wraps, as the reference's does:
the affine canonical form is still exact modulo 2**bits, but rules that need the
mathematical value (`(c*x) / c -> x`, `x + 1 > x`) apply to it only where it cannot
wrap (`_exact`).
"""

from __future__ import annotations

import numpy as np

from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.operators import OPERATORS, c_div
from cinn_py.ir.printer import print_ir
from cinn_py.ir.visitor import Mutator, structural_equal, structural_key
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16, float_to_int

Bounds = tuple[int, int]


_MEMO: dict[tuple, e.Expr | None] = {}
"""Simplified index arithmetic by the structural key of what was simplified (None: it
was simplified already). Simplification is a function of the tree alone (Vars by name,
dtype and bounds, in the key), and the scheduler simplifies the same index expressions
over and over: every substitution of a split or a fuse re-simplifies each expression
it touches (a third of the host stages' time for the LLaMA fixture). Cleared when it
grows past `_MEMO_LIMIT` entries."""
_MEMO_LIMIT = 200_000
_ARITHMETIC = (
    e.IntImm,
    e.UIntImm,
    e.FloatImm,
    e.Var,
    e.BinaryOp,
    e.Not,
    e.Select,
    e.Cast,
)
"""The node kinds of the expressions the memo takes. Loads and Reduces are left out:
passes key maps by their `id` (a Reduce's hoisted accumulator, a redirected read), so
two of them must not become one object."""


def _arithmetic(node: e.Expr) -> bool:
    if not isinstance(node, _ARITHMETIC):
        return False
    return all(
        _arithmetic(child)
        for value in node.field_values()
        for child in (value if isinstance(value, tuple) else (value,))
        if isinstance(child, e.IrNode)
    )


def simplify(node: e.IrNode) -> e.IrNode:
    """`node` simplified; the same object when nothing changed."""
    if not isinstance(node, e.Expr) or not _arithmetic(node):
        return _Simplifier().visit(node)
    key = structural_key(node)
    if key in _MEMO:
        found = _MEMO[key]
        return node if found is None else found
    result = _Simplifier().visit(node)
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[key] = None if structural_equal(result, node) else result
    return node if result is node else result


class _Simplifier(Mutator):
    def visit(self, node: e.IrNode) -> e.IrNode:
        node = self.generic_visit(node)
        if isinstance(node, e.Expr):
            return _rewrite(node)
        if isinstance(node, s.IfThenElse) and _is_const(node.condition):
            if node.condition.value:
                return node.true_case
            return node.false_case if node.false_case is not None else s.Block(())
        return node


def _is_const(x: e.IrNode) -> bool:
    return isinstance(x, (e.IntImm, e.UIntImm, e.FloatImm))


def _int_const(x: e.Expr) -> int | None:
    return x.value if isinstance(x, e.IntImm) else None


def _wrap(value: int, dtype: DataType) -> int:
    """`value` wrapped to `dtype`'s width (two's complement; uint8 unsigned)."""
    bits = 8 * dtype.itemsize
    value &= (1 << bits) - 1
    if dtype is DataType.UINT8:
        return value
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _float(value: float, dtype: DataType) -> float:
    if dtype is DataType.BFLOAT16:
        bits = float32_to_bfloat16(np.array([value], dtype=np.float32))
        return float(bfloat16_to_float32(bits)[0])
    if dtype is DataType.FLOAT64:
        return value
    return float(dtype.numpy.type(value))


def _fold(node: e.BinaryOp) -> e.Expr | None:
    """A binary node of two constants as a constant (`operators.OPERATORS`' value,
    wrapped or rounded to the dtype); None where folding would hide something: a float
    divided by zero (left for the GPU's IEEE answer), a float `%`."""
    a, b, dtype = node.a.value, node.b.value, node.a.dtype
    op = OPERATORS[type(node)]
    if isinstance(node, (e.CmpOp, e.LogicalOp)):
        return e.UIntImm(bool(op.integer(a, b)))
    if isinstance(node, (e.Div, e.Mod)) and b == 0 and not dtype.is_integer:
        return None
    if dtype.is_integer:
        return e.make_const(_wrap(op.integer(a, b), dtype), dtype)
    if not dtype.is_float or op.real is None:
        return None
    fa, fb = _float(a, dtype), _float(b, dtype)
    with np.errstate(all="ignore"):
        return e.FloatImm(_float(op.real(fa, fb), dtype), dtype)


def _rewrite(node: e.Expr) -> e.Expr:
    if isinstance(node, e.Cast):
        return _rewrite_cast(node)
    if isinstance(node, e.Not):
        return e.UIntImm(not node.value.value) if _is_const(node.value) else node
    if isinstance(node, e.Select):
        if _is_const(node.condition):
            return node.true_value if node.condition.value else node.false_value
        if structural_equal(node.true_value, node.false_value):
            return node.true_value
        return node
    if not isinstance(node, e.BinaryOp) or node.lanes != 1:
        return node
    if _is_const(node.a) and _is_const(node.b):
        folded = _fold(node)
        if folded is not None:
            return folded
    if node.a.dtype.is_integer and node.a.dtype is not DataType.UINT8:
        return _rewrite_int(node)
    if node.a.dtype.is_float:
        return _rewrite_float(node)
    return node


def _rewrite_cast(node: e.Cast) -> e.Expr:
    value = node.value
    if value.dtype is node.dtype:
        return value
    if _is_const(value) and value.lanes == 1:
        v = value.value
        if node.dtype is DataType.BOOL:
            return e.UIntImm(bool(v))
        if node.dtype.is_integer:
            if value.dtype.is_float:
                return e.make_const(int(float_to_int(v, node.dtype)), node.dtype)
            return e.make_const(_wrap(int(v), node.dtype), node.dtype)
        if node.dtype.is_float:
            return e.FloatImm(_float(float(v), node.dtype), node.dtype)
    return node


def _rewrite_float(node: e.BinaryOp) -> e.Expr:
    def is_value(x: e.Expr, v: float) -> bool:
        return isinstance(x, e.FloatImm) and x.value == v

    if isinstance(node, (e.Mul, e.Div)) and is_value(node.b, 1.0):
        return node.a
    if isinstance(node, e.Mul) and is_value(node.a, 1.0):
        return node.b
    if isinstance(node, e.Sub) and is_value(node.b, 0.0):
        return node.a
    if isinstance(node, (e.Min, e.Max)) and structural_equal(node.a, node.b):
        return node.a
    return node


# ---- integers -----------------------------------------------------------------------


def _rewrite_int(node: e.BinaryOp) -> e.Expr:
    if isinstance(node, (e.Add, e.Sub, e.Mul)):
        return _build(_affine(node), node.dtype)
    c = _int_const(node.b)
    if isinstance(node, e.Div) and c is not None and c > 0:
        return _div(node, c)
    if isinstance(node, e.Mod) and c is not None and c > 0:
        return _mod(node, c)
    if isinstance(node, (e.Min, e.Max)):
        return _min_max(node)
    if isinstance(node, e.CmpOp):
        return _compare(node)
    return node


Terms = dict[tuple, tuple[e.Expr, int]]


def _affine(x: e.Expr) -> tuple[Terms, int]:
    """`x` as `sum(coeff * term) + const`; anything not a sum or a product by a
    constant is a term of its own."""
    if isinstance(x, e.IntImm):
        return {}, x.value
    if isinstance(x, (e.Add, e.Sub)):
        ta, ca = _affine(x.a)
        tb, cb = _affine(x.b)
        sign = 1 if isinstance(x, e.Add) else -1
        return _add_terms(ta, tb, sign), ca + sign * cb
    if isinstance(x, e.Mul):
        for factor, other in ((x.b, x.a), (x.a, x.b)):
            k = _int_const(factor)
            if k is not None:
                terms, const = _affine(other)
                return {key: (t, c * k) for key, (t, c) in terms.items()}, const * k
    return {structural_key(x): (x, 1)}, 0


def affine_terms(x: e.Expr) -> tuple[list[tuple[e.Expr, int]], int]:
    """`x` as `(terms, const)` with `x == sum(coeff * term) + const` (terms with their
    coefficients; a term is a Var or any expression that is not a sum or a product by
    a constant), like terms combined."""
    terms, const = _affine(x)
    return [(t, c) for t, c in terms.values() if c != 0], const


def _add_terms(a: Terms, b: Terms, sign: int) -> Terms:
    out = dict(a)
    for key, (t, c) in b.items():
        prev = out.get(key, (t, 0))[1]
        out[key] = (t, prev + sign * c)
    return out


def _merge_div_mod(terms: Terms, const: int) -> tuple[Terms, int]:
    """`k*c * (x / c) + k * (x % c)` is `k * x` (true for C semantics on any sign), and
    so is `k * ((x / d) * d) + k * (x % d)` for a divisor d that is no constant (a
    symbolic dim: a flat index split into a row and a column of symbolic length)."""
    for key, (t, k) in terms.items():
        if not isinstance(t, e.Mod) or k == 0:
            continue
        c = _int_const(t.b)
        if c is None:
            rest = _merge_symbolic_div_mod(terms, key, t, k)
            if rest is None:
                continue
            inner, inner_const = _affine(t.a)
            scaled = {kk: (tt, cc * k) for kk, (tt, cc) in inner.items()}
            return _merge_div_mod(_add_terms(rest, scaled, 1), const + inner_const * k)
        div_key = structural_key(e.Div(t.a, t.b))
        div = terms.get(div_key)
        if div is None:
            div_key = _shifted_partner(terms, t, k, c)
            div = None if div_key is None else terms[div_key]
        if div is None or div[1] != k * c:
            continue
        rest = {kk: tc for kk, tc in terms.items() if kk not in (key, div_key)}
        inner, inner_const = _affine(div[0].a)
        scaled = {kk: (tt, cc * k) for kk, (tt, cc) in inner.items()}
        return _merge_div_mod(_add_terms(rest, scaled, 1), const + inner_const * k)
    return terms, const


def _shifted_partner(terms: Terms, mod: e.Mod, k: int, c: int) -> tuple | None:
    """The key of a term `k*c * (x / c)` whose x is `mod`'s dividend y plus a multiple
    of c, both never negative (`(x / c) * c + y % c` is x then: `x % c` was simplified
    to `y % c`, dropping the multiple, which the quotient keeps); None where none is."""
    if not _never_negative(mod.a):
        return None
    y_terms, y_const = _affine(mod.a)
    for key, (t, coefficient) in terms.items():
        if not isinstance(t, e.Div) or coefficient != k * c or _int_const(t.b) != c:
            continue
        x_terms, x_const = _affine(t.a)
        difference = _add_terms(x_terms, y_terms, -1)
        if (x_const - y_const) % c or any(v % c for _, v in difference.values()):
            continue
        if _never_negative(t.a):
            return key
    return None


def _never_negative(x: e.Expr) -> bool:
    low = lower_bound(x)
    return low is not None and low >= 0


def _merge_symbolic_div_mod(terms: Terms, key: tuple, mod: e.Mod, k: int) -> Terms | None:
    """The terms without `mod` = `x % d` and its partner `(x / d) * d` (either operand
    order, the same coefficient k), or None where the partner is missing. Only for
    index arithmetic (d reads no value): the IR defines `x / 0` and `x % 0` as 0, and a
    symbolic d that is 0 leaves nothing to index."""
    if reads_values(mod.b):
        return None
    div = e.Div(mod.a, mod.b)
    for partner in (e.Mul(div, mod.b), e.Mul(mod.b, div)):
        partner_key = structural_key(partner)
        found = terms.get(partner_key)
        if found is not None and found[1] == k:
            return {kk: tc for kk, tc in terms.items() if kk not in (key, partner_key)}
    return None


def _order(item: tuple[e.Expr, int]) -> tuple:
    t = item[0]
    return (0, t.name, "") if isinstance(t, e.Var) else (1, "", print_ir(t))


def _build(affine: tuple[Terms, int], dtype: DataType) -> e.Expr:
    terms, const = _merge_div_mod(*affine)
    # Coefficients wrap like the constant (exact modulo 2**bits, as the arithmetic is).
    wrapped = ((t, _wrap(c, dtype)) for t, c in terms.values())
    items = sorted(((t, c) for t, c in wrapped if c != 0), key=_order)
    const = _wrap(const, dtype)
    result: e.Expr | None = None
    for t, c in items:
        if result is None:
            result = t if c == 1 else e.Mul(t, e.IntImm(c, dtype))
        elif c < 0 and _wrap(-c, dtype) == c:  # the type's minimum: no -c to subtract
            result = e.Add(result, e.Mul(t, e.IntImm(c, dtype)))
        else:
            term = t if abs(c) == 1 else e.Mul(t, e.IntImm(abs(c), dtype))
            result = e.Add(result, term) if c > 0 else e.Sub(result, term)
    if result is None:
        return e.IntImm(const, dtype)
    if const > 0:
        return e.Add(result, e.IntImm(const, dtype))
    if const < 0:
        return e.Sub(result, e.IntImm(-const, dtype))
    return result


def bounds(x: e.Expr) -> Bounds | None:
    """Inclusive constant bounds of an integer expression, from its Vars' bounds."""
    if isinstance(x, e.IntImm):
        return x.value, x.value
    if isinstance(x, e.Var):
        if x.lower is None or x.upper is None:
            return None
        return x.lower, x.upper - 1
    if isinstance(x, (e.Add, e.Sub, e.Mul, e.Min, e.Max)):
        a, b = bounds(x.a), bounds(x.b)
        if a is None or b is None:
            return None
        if isinstance(x, e.Add):
            return a[0] + b[0], a[1] + b[1]
        if isinstance(x, e.Sub):
            return a[0] - b[1], a[1] - b[0]
        if isinstance(x, e.Min):
            return min(a[0], b[0]), min(a[1], b[1])
        if isinstance(x, e.Max):
            return max(a[0], b[0]), max(a[1], b[1])
        products = [p * q for p in a for q in b]
        return min(products), max(products)
    if isinstance(x, (e.Div, e.Mod)):
        c = _int_const(x.b)
        a = bounds(x.a)
        if c is None or c <= 0 or a is None:
            return None
        if isinstance(x, e.Div):
            return c_div(a[0], c), c_div(a[1], c)
        if a[0] >= 0:
            return (a[0], a[1]) if a[1] < c else (0, c - 1)
        return (-(c - 1), c - 1) if a[1] > 0 else (-(c - 1), 0)
    return None


def lower_bound(x: e.Expr) -> int | None:
    """A constant an integer expression is never below, from its Vars' lower bounds
    alone (a symbolic dim `S0` is at least 1, and has no upper bound); None when none is
    known. `(S0 + 31) / 32` is at least 1: a divisor that is never 0 or -1."""
    if isinstance(x, e.IntImm):
        return x.value
    if isinstance(x, e.Var):
        return x.lower
    if isinstance(x, (e.Add, e.Mul, e.Min, e.Max)):
        a, b = lower_bound(x.a), lower_bound(x.b)
        if isinstance(x, e.Max):
            known = [v for v in (a, b) if v is not None]
            return max(known) if known else None
        if a is None or b is None:
            return None
        if isinstance(x, e.Add):
            return a + b
        if isinstance(x, e.Min):
            return min(a, b)
        return a * b if a >= 0 and b >= 0 else None
    if isinstance(x, e.Div):
        c, a = _int_const(x.b), lower_bound(x.a)
        if c is None or c <= 0 or a is None or a < 0:
            return None
        return a // c
    return None


def _split(x: e.Expr, c: int) -> tuple[e.Expr, e.Expr, Bounds | None] | None:
    """`x` as `q*c + r` with `r`'s bounds, when `x` is provably non-negative."""
    x_bounds = bounds(x)
    terms, const = _affine(x)
    q_terms = {k: (t, v // c) for k, (t, v) in terms.items() if v % c == 0}
    r_terms = {k: tv for k, tv in terms.items() if tv[1] % c != 0}
    dtype = x.dtype
    r = _build((r_terms, const % c), dtype)
    q = _build((q_terms, const // c), dtype)
    if x_bounds is None or x_bounds[0] < 0:
        return None
    return q, r, bounds(r)


def reads_values(
    x: e.Expr,
    value_vars: frozenset[str] = frozenset(),
    memo: dict[int, tuple[e.Expr, bool]] | None = None,
) -> bool:
    """Whether `x` computes on values (what a Load, Call, Reduce or float conversion
    gives, or a Var named in `value_vars`), not only on loop and iter vars and
    constants (index arithmetic, which is assumed not to overflow). `memo` (by node
    `id`) keeps a walk over a shared DAG linear; it holds each node with its answer, so
    an id that a collected node's successor reuses (codegen builds expressions as it
    goes: a loop's end, a vector load's mask) is not taken for it."""
    if memo is not None:
        hit = memo.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
    if isinstance(x, (e.Load, e.Call, e.Reduction)):
        found = True
    elif isinstance(x, e.Var):
        found = x.name in value_vars
    elif isinstance(x, e.Cast) and not (x.value.dtype.is_integer or x.value.dtype is DataType.BOOL):
        found = True
    else:
        children = (
            item
            for f in x.field_values()
            for item in (f if isinstance(f, tuple) else (f,))
            if isinstance(item, e.Expr)
        )
        found = any(reads_values(child, value_vars, memo) for child in children)
    if memo is not None:
        memo[id(x)] = (x, found)
    return found


def _exact(x: e.Expr) -> bool:
    """Whether `x`'s value is the mathematical value of its affine form: index
    arithmetic (assumed not to overflow), or a form that is one value term as it is
    (its own value, whatever wrapped inside it). Value arithmetic beyond that may wrap
    (the form is then exact modulo 2**bits only)."""
    terms, const = _affine(x)
    if not any(reads_values(t) for t, _ in terms.values()):
        return True
    return const == 0 and [c for _, c in terms.values() if c != 0] == [1]


def _div(node: e.Div, c: int) -> e.Expr:
    x, dtype = node.a, node.dtype
    if c == 1:
        return x
    inner = _int_const(x.b) if isinstance(x, e.Div) else None
    if inner is not None and inner > 0 and inner * c < 1 << (8 * dtype.itemsize - 1):
        return _div(e.Div(x.a, e.IntImm(inner * c, dtype)), inner * c)
    terms, const = _affine(x)
    if all(v % c == 0 for _, v in terms.values()) and const % c == 0 and _exact(x):
        return _build(({k: (t, v // c) for k, (t, v) in terms.items()}, const // c), dtype)
    split = _split(x, c)
    if split is not None:
        q, r, rb = split
        if rb is not None and rb[0] >= 0 and rb[0] // c == rb[1] // c:
            return _plus(q, rb[0] // c)
    return node


def _plus(x: e.Expr, k: int) -> e.Expr:
    terms, const = _affine(x)
    return _build((terms, const + k), x.dtype)


def _mod(node: e.Mod, c: int) -> e.Expr:
    x, dtype = node.a, node.dtype
    if c == 1:
        return e.IntImm(0, dtype)
    inner = _int_const(x.b) if isinstance(x, e.Mod) else None
    if inner is not None and inner > 0 and inner % c == 0:
        return _mod(e.Mod(x.a, node.b), c)
    terms, const = _affine(x)
    if all(v % c == 0 for _, v in terms.values()) and const % c == 0 and _exact(x):
        return e.IntImm(0, dtype)
    xb = bounds(x)
    if xb is not None and 0 <= xb[0] and xb[1] < c:
        return x
    split = _split(x, c)
    if split is not None:
        _, r, rb = split
        if rb is not None and rb[0] >= 0:
            if rb[0] // c == rb[1] // c:
                return _plus(r, -(rb[0] // c) * c)
            if not structural_equal(r, x):
                return e.Mod(r, node.b)
    return node


def _difference(a: e.Expr, b: e.Expr) -> Bounds | None:
    """Bounds of `a - b` computed exactly, when neither side may wrap."""
    if not (_exact(a) and _exact(b)):
        return None
    ta, ca = _affine(a)
    tb, cb = _affine(b)
    return bounds(_build((_add_terms(ta, tb, -1), ca - cb), a.dtype))


def _min_max(node: e.BinaryOp) -> e.Expr:
    if structural_equal(node.a, node.b):
        return node.a
    d = _difference(node.a, node.b)
    if d is None:
        return node
    a_smaller = d[1] <= 0
    if not a_smaller and d[0] < 0:
        return node
    if isinstance(node, e.Min):
        return node.a if a_smaller else node.b
    return node.b if a_smaller else node.a


def _compare(node: e.CmpOp) -> e.Expr:
    d = _difference(node.a, node.b)
    if d is None:
        return node
    lo, hi = d
    decided = {
        e.EQ: (lo == hi == 0, lo > 0 or hi < 0),
        e.NE: (lo > 0 or hi < 0, lo == hi == 0),
        e.LT: (hi < 0, lo >= 0),
        e.LE: (hi <= 0, lo > 0),
        e.GT: (lo > 0, hi <= 0),
        e.GE: (lo >= 0, hi < 0),
    }[type(node)]
    if decided[0]:
        return e.UIntImm(True)
    if decided[1]:
        return e.UIntImm(False)
    return node
