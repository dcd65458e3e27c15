"""Symbolic dims (CINN's DimExpr): what a -1 dim is, in terms of the feeds' dims.

A `DimExpr` is immutable and hashable, and is always built in canonical form, so two
equal expressions compare equal (`==`) and hash alike: constants are folded, sums and
products are flattened into a polynomial over *atoms* (symbols, floor-divs, maxes,
mins, broadcasts) with like terms combined and terms sorted, `x*1` and `x+0` vanish, and a
floor-div by a factor every term holds is divided out (`(S0*4)//4` is `S0`).

    S0 = Sym(0)                     # prints S0
    S0 * 4 + 1                      # Add: S0*4+1
    (S0 + 1) // 2                   # FloorDiv: (S0+1)//2
    dim_max(S0, Sym(1))             # Max: max(S0,S1)
    dim_min(S0, 8)                  # Min: min(S0,8)
    broadcast(S0, Sym(1))           # Broadcast: the one of them that is not 1
    (S0 * 4 // 4).evaluate({S0: 7}) # 7

Build expressions with the operators and `const`, `dim_max`, `dim_min`, `broadcast`; the node
classes are for matching on (`isinstance(e, Sym)`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

Namer = Callable[["Sym"], str]
"""How a printout names a symbol (default: `S0`); the feed errors name it `x.shape[1]`."""


class DimExpr:
    """Base of the symbolic dim nodes; see the module doc."""

    __slots__ = ()

    def __add__(self, other: DimExpr | int) -> DimExpr:
        return _from_poly(_poly_add(_poly(self), _poly(as_dim(other))))

    __radd__ = __add__

    def __sub__(self, other: DimExpr | int) -> DimExpr:
        return self + as_dim(other) * -1

    def __rsub__(self, other: int) -> DimExpr:
        return as_dim(other) - self

    def __mul__(self, other: DimExpr | int) -> DimExpr:
        return _from_poly(_poly_mul(_poly(self), _poly(as_dim(other))))

    __rmul__ = __mul__

    def __floordiv__(self, other: DimExpr | int) -> DimExpr:
        return floor_div(self, as_dim(other))

    def __rfloordiv__(self, other: int) -> DimExpr:
        return floor_div(as_dim(other), self)

    @property
    def is_const(self) -> bool:
        return isinstance(self, Const)

    def symbols(self) -> set[Sym]:
        """The symbols the expression reads."""
        found: set[Sym] = set()
        _collect(self, found)
        return found

    def evaluate(self, binding: Mapping[Sym, int]) -> int:
        """The value for `binding` (every symbol read must be bound: KeyError otherwise)."""
        return self.substitute({s: Const(v) for s, v in binding.items()}).value_or_raise()

    def value_or_raise(self) -> int:
        if not isinstance(self, Const):
            raise KeyError(f"{self} has unbound symbols")
        return self.value

    def substitute(self, mapping: Mapping[Sym, DimExpr]) -> DimExpr:
        """The expression with symbols replaced (and simplified again)."""
        return _substitute(self, mapping)

    def to_str(self, namer: Namer | None = None) -> str:
        return _print(self, namer or (lambda s: s.name))

    def __str__(self) -> str:
        return self.to_str()


@dataclass(frozen=True, slots=True)
class Const(DimExpr):
    value: int

    def __repr__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Sym(DimExpr):
    """A symbol `S<index>`: a feed's -1 dim or a dim no rule models."""

    index: int

    @property
    def name(self) -> str:
        return f"S{self.index}"

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Add(DimExpr):
    """A sum of at least two terms (products or atoms), the constant last."""

    terms: tuple[DimExpr, ...]

    def __repr__(self) -> str:
        return self.to_str()


@dataclass(frozen=True, slots=True)
class Mul(DimExpr):
    """A product of atoms (sorted) and an integer coefficient other than 1, last."""

    factors: tuple[DimExpr, ...]

    def __repr__(self) -> str:
        return self.to_str()


@dataclass(frozen=True, slots=True)
class FloorDiv(DimExpr):
    num: DimExpr
    den: DimExpr

    def __repr__(self) -> str:
        return self.to_str()


@dataclass(frozen=True, slots=True)
class Max(DimExpr):
    args: tuple[DimExpr, ...]

    def __repr__(self) -> str:
        return self.to_str()


@dataclass(frozen=True, slots=True)
class Min(DimExpr):
    args: tuple[DimExpr, ...]

    def __repr__(self) -> str:
        return self.to_str()


@dataclass(frozen=True, slots=True)
class Broadcast(DimExpr):
    """The broadcast of dims that must each be equal or 1: the one that is not 1."""

    args: tuple[DimExpr, ...]

    def __repr__(self) -> str:
        return self.to_str()


def const(value: int) -> Const:
    return Const(int(value))


def as_dim(value: DimExpr | int) -> DimExpr:
    if isinstance(value, DimExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a dim is an int or a DimExpr, not {type(value).__name__}")
    return Const(value)


# ---- canonical form: a polynomial over atoms ------------------------------------------

Monomial = tuple[DimExpr, ...]
"""Atoms multiplied, sorted, with repeats (S0*S0)."""
Poly = dict[Monomial, int]
"""Monomial -> coefficient; the constant term is the empty monomial."""


def _key(expr: DimExpr) -> tuple:
    """The order terms and factors are kept in: symbols by index, then other atoms."""
    if isinstance(expr, Sym):
        return (0, expr.index, "")
    if isinstance(expr, Const):
        return (3, expr.value, "")
    return (1, 0, _print(expr, lambda s: f"S{s.index:09d}"))


def _poly(expr: DimExpr) -> Poly:
    if isinstance(expr, Const):
        return {(): expr.value} if expr.value else {}
    if isinstance(expr, Add):
        out: Poly = {}
        for term in expr.terms:
            out = _poly_add(out, _poly(term))
        return out
    if isinstance(expr, Mul):
        out = {(): 1}
        for factor in expr.factors:
            out = _poly_mul(out, _poly(factor))
        return out
    return {(expr,): 1}


def _poly_add(a: Poly, b: Poly) -> Poly:
    out = dict(a)
    for mono, coef in b.items():
        total = out.get(mono, 0) + coef
        if total:
            out[mono] = total
        else:
            out.pop(mono, None)
    return out


def _poly_mul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            mono = tuple(sorted(ma + mb, key=_key))
            out = _poly_add(out, {mono: ca * cb})
    return out


def _term(mono: Monomial, coef: int) -> DimExpr:
    if not mono:
        return Const(coef)
    if coef == 1 and len(mono) == 1:
        return mono[0]
    return Mul(mono + ((Const(coef),) if coef != 1 else ()))


def _from_poly(poly: Poly) -> DimExpr:
    if not poly:
        return Const(0)
    monos = sorted(poly, key=lambda m: (not m, [_key(a) for a in m]))
    terms = tuple(_term(m, poly[m]) for m in monos)
    return terms[0] if len(terms) == 1 else Add(terms)


def floor_div(num: DimExpr, den: DimExpr) -> DimExpr:
    """`num // den`, divided out where `den` is a factor of every term of `num`."""
    if isinstance(den, Const):
        if den.value == 0:
            raise ZeroDivisionError(f"{num} // 0")
        if den.value == 1:
            return num
        if isinstance(num, Const):
            return Const(num.value // den.value)
    den_poly = _poly(den)
    if len(den_poly) == 1:
        ((den_mono, den_coef),) = den_poly.items()
        quotient: Poly = {}
        for mono, coef in _poly(num).items():
            rest = _remove(mono, den_mono)
            if rest is None or coef % den_coef:
                break
            quotient[rest] = coef // den_coef
        else:
            return _from_poly(quotient)
        reduced = _cancel(_poly(num), den_mono, den_coef)
        if reduced is not None:
            return floor_div(*reduced)
    if num == den:
        return Const(1)
    return FloorDiv(num, den)


def _cancel(num: Poly, den_mono: Monomial, den_coef: int) -> tuple[DimExpr, DimExpr] | None:
    """`num` and the monomial divisor with their common factor divided out (exact for a
    floor-div: (a*k)//(b*k) == a//b for k > 0), None if they have none."""
    if den_coef <= 0 or not num:
        return None
    common = list(den_mono)
    for mono in num:
        common = [a for a in common if a in mono and mono.count(a) >= common.count(a)]
    g = den_coef
    for coef in num.values():
        g = math.gcd(g, coef)
    if not common and g == 1:
        return None
    num_out = {_remove(m, tuple(common)): c // g for m, c in num.items()}
    den_out = {_remove(den_mono, tuple(common)): den_coef // g}
    return _from_poly(num_out), _from_poly(den_out)


def _remove(mono: Monomial, factor: Monomial) -> Monomial | None:
    """`mono` without the atoms of `factor`, None if it lacks one."""
    rest = list(mono)
    for atom in factor:
        if atom not in rest:
            return None
        rest.remove(atom)
    return tuple(rest)


def dim_max(*args: DimExpr | int) -> DimExpr:
    """The largest of `args` (nested maxes flattened, constants folded, repeats dropped,
    and of two args that differ by a constant the smaller dropped)."""
    flat: list[DimExpr] = []
    for arg in map(as_dim, args):
        flat.extend(arg.args if isinstance(arg, Max) else (arg,))
    consts = [a.value for a in flat if isinstance(a, Const)]
    rest = _drop_dominated(flat, keep_larger=True)
    if consts and max(consts) <= 0 and any(map(_non_negative, rest)):
        consts = []  # dims are never negative: max(S0, 0) is S0
    items = rest + ([Const(max(consts))] if consts else [])
    if not items:
        raise ValueError("max of nothing")
    return items[0] if len(items) == 1 else Max(tuple(items))


def dim_min(*args: DimExpr | int) -> DimExpr:
    """The smallest of `args` (nested mins flattened, constants folded, repeats dropped,
    and of two args that differ by a constant the larger dropped). `min(S0, 8)` stays
    symbolic; `min(S0, 0)` is 0, dims being never negative."""
    flat: list[DimExpr] = []
    for arg in map(as_dim, args):
        flat.extend(arg.args if isinstance(arg, Min) else (arg,))
    consts = [a.value for a in flat if isinstance(a, Const)]
    rest = _drop_dominated(flat, keep_larger=False)
    if consts and min(consts) <= 0 and all(map(_non_negative, rest)):
        rest = []  # dims are never negative: min(S0, 0) is 0
    items = rest + ([Const(min(consts))] if consts else [])
    if not items:
        raise ValueError("min of nothing")
    return items[0] if len(items) == 1 else Min(tuple(items))


def _drop_dominated(flat: list[DimExpr], keep_larger: bool) -> list[DimExpr]:
    """The non-constant args, sorted, without repeats and without those another arg
    beats by a constant (`S0+1` beats `S0` for a max, `S0` beats `S0+1` for a min)."""
    rest = sorted({a for a in flat if not isinstance(a, Const)}, key=_key)
    kept: list[DimExpr] = []
    for a in rest:
        beaten = False
        for b in rest:
            if a is b:
                continue
            diff = b - a
            if isinstance(diff, Const) and (diff.value > 0 if keep_larger else diff.value < 0):
                beaten = True
                break
        if not beaten:
            kept.append(a)
    return kept


def _non_negative(expr: DimExpr) -> bool:
    """Whether `expr` is >= 0 whatever its symbols (dims) are."""
    if isinstance(expr, Const):
        return expr.value >= 0
    if isinstance(expr, Max):
        return any(map(_non_negative, expr.args))
    return all(map(_non_negative, _children(expr)))


def broadcast(*args: DimExpr | int) -> DimExpr:
    """The broadcast of dims: 1 gives way, equal dims are one, a constant other than 1
    is the answer (the others must equal it or be 1: the caller records that). Two
    different constants other than 1 cannot broadcast: ValueError."""
    flat: list[DimExpr] = []
    for arg in map(as_dim, args):
        flat.extend(arg.args if isinstance(arg, Broadcast) else (arg,))
    consts = {a.value for a in flat if isinstance(a, Const) and a.value != 1}
    if len(consts) > 1:
        raise ValueError(f"dims {sorted(consts)} do not broadcast")
    if consts:
        return Const(consts.pop())
    rest = sorted({a for a in flat if not isinstance(a, Const)}, key=_key)
    if not rest:
        return Const(1)
    return rest[0] if len(rest) == 1 else Broadcast(tuple(rest))


# ---- walking, substitution, printing ---------------------------------------------------


def _children(expr: DimExpr) -> Iterable[DimExpr]:
    if isinstance(expr, Add):
        return expr.terms
    if isinstance(expr, Mul):
        return expr.factors
    if isinstance(expr, FloorDiv):
        return (expr.num, expr.den)
    if isinstance(expr, (Max, Min, Broadcast)):
        return expr.args
    return ()


def _collect(expr: DimExpr, found: set[Sym]) -> None:
    if isinstance(expr, Sym):
        found.add(expr)
    for child in _children(expr):
        _collect(child, found)


def _substitute(expr: DimExpr, mapping: Mapping[Sym, DimExpr]) -> DimExpr:
    if isinstance(expr, Sym):
        return mapping.get(expr, expr)
    if isinstance(expr, Const):
        return expr
    parts = [_substitute(c, mapping) for c in _children(expr)]
    if isinstance(expr, Add):
        return _from_poly(_sum(parts))
    if isinstance(expr, Mul):
        out: Poly = {(): 1}
        for part in parts:
            out = _poly_mul(out, _poly(part))
        return _from_poly(out)
    if isinstance(expr, FloorDiv):
        return floor_div(parts[0], parts[1])
    if isinstance(expr, Max):
        return dim_max(*parts)
    if isinstance(expr, Min):
        return dim_min(*parts)
    return broadcast(*parts)


def _sum(parts: Iterable[DimExpr]) -> Poly:
    out: Poly = {}
    for part in parts:
        out = _poly_add(out, _poly(part))
    return out


def _print(expr: DimExpr, namer: Namer) -> str:
    if isinstance(expr, Sym):
        return namer(expr)
    if isinstance(expr, Const):
        return str(expr.value)
    if isinstance(expr, Add):
        text = _print(expr.terms[0], namer)
        for term in expr.terms[1:]:
            part = _print(term, namer)
            text += part if part.startswith("-") else "+" + part
        return text
    if isinstance(expr, Mul):
        factors = list(expr.factors)
        sign = ""
        if isinstance(factors[-1], Const) and factors[-1].value < 0:
            sign, coef = "-", -factors[-1].value
            factors = factors[:-1] + ([Const(coef)] if coef != 1 else [])
        return sign + "*".join(_wrap(f, namer) for f in factors)
    if isinstance(expr, FloorDiv):
        return f"{_wrap(expr.num, namer)}//{_wrap(expr.den, namer)}"
    name = "max" if isinstance(expr, Max) else "min" if isinstance(expr, Min) else "broadcast"
    return f"{name}(" + ",".join(_print(a, namer) for a in _children(expr)) + ")"


def _wrap(expr: DimExpr, namer: Namer) -> str:
    text = _print(expr, namer)
    return f"({text})" if isinstance(expr, (Add, Mul, FloorDiv)) else text
