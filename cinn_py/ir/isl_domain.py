"""The integer points a statement runs at, as an isl set, and index expressions over it.

A statement inside a loop nest runs once per point of the nest's iteration domain:
each enclosing `For` contributes `min <= v < min + extent`, each enclosing `if` its
condition. Index arithmetic in the AST is quasi-affine (sums, products by constants,
`/` and `%` by positive constants, min, max), which is exactly what isl (Presburger
arithmetic, through islpy) decides exactly: "does `x < 100` hold at every point?" is
"is the set of points where `x >= 100` empty?". That is the question the bound guard
pass asks; `IndexDomain` answers it.

Division and remainder follow C (truncation toward zero, remainder with the
dividend's sign) through isl's `tdiv_q` / `tdiv_r`, so no sign assumption is needed.
Anything isl cannot express (a Load, a float, a product of two variables) makes an
expression non-affine: a condition over it is never proven, a loop bound or guard
over it adds no constraint. Both errors point the same way: a guard is kept.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import islpy as isl

from cinn_py.ir import dim_guards, dim_values
from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.visitor import children, structural_key

_CMP_SETS = {
    e.LT: "lt_set",
    e.LE: "le_set",
    e.GT: "gt_set",
    e.GE: "ge_set",
    e.EQ: "eq_set",
    e.NE: "ne_set",
}


class NotAffine(Exception):
    """An expression outside quasi-affine integer arithmetic."""


class IndexDomain:
    """The iteration domain of a statement: one isl dimension per variable.

    `loops` are the enclosing loops, outermost first (a loop var shadowed by an inner
    loop of the same name contributes only the inner range); `guards` the conditions
    of the enclosing `if`s that hold at the statement; `exprs` the expressions that
    will be asked about, so that the variables they use that no loop defines (block
    iter vars, symbolic sizes) get a dimension of their own, bounded by the Var's
    `lower` / `upper` where those are known.
    """

    def __init__(
        self, loops: Sequence[s.For], guards: Sequence[e.Expr] = (), exprs: Sequence[e.Expr] = ()
    ) -> None:
        self._args = _DomainArgs(tuple(loops), tuple(guards), tuple(exprs))
        self._pins = dim_values.current() or {}
        """A symbolic kernel's dims at the signature being compiled (`ir.dim_values`):
        constants in the domain, so `i * S1` and `x / (S1 * 8)` are affine. What is
        proven then holds for that signature, which is the one the kernel is compiled
        for. While guards are recorded (`ir.dim_guards`), a question is first asked with
        the dims free (`_Domain` without pins: true there is true at any dims, no guard);
        an answer that needed the pins is recorded as a check that asks it again."""
        self._pinned: _Domain | None = None
        self._free: _Domain | None = None

    def _pinned_domain(self) -> _Domain:
        if self._pinned is None:
            self._pinned = _Domain(*self._args.inputs(), pins=self._pins)
        return self._pinned

    def _free_domain(self) -> _Domain:
        if not self._pins:
            return self._pinned_domain()
        if self._free is None:
            self._free = _Domain(*self._args.inputs(), pins={})
        return self._free

    def always(self, condition: e.Expr) -> bool:
        """Whether `condition` holds at every point of the domain (False when isl cannot
        express it)."""
        recording = bool(self._pins) and dim_guards.active()
        if recording:
            free = self._free_domain()
            if free.always(condition):
                return True
            if not free.reads_dims and not _dim_vars([condition]):
                return False  # nothing here reads a dim: the pins would change nothing
        domain = self._pinned_domain()
        answer = domain.always(condition)
        if recording and domain.pins_read:
            dim_guards.record(_Replay(self._args, "always", condition, answer))
        return answer

    def bounds(self, x: e.Expr) -> tuple[int, int] | None:
        """The least and greatest value of `x` over the domain; None where one is
        unbounded. NotAffine where isl cannot express `x`."""
        domain = self._pinned_domain()
        try:
            answer: object = domain.bounds(x)
        except NotAffine:
            answer = NotAffine
        if domain.pins_read and dim_guards.active():
            dim_guards.record(_Replay(self._args, "bounds", x, answer))
        if answer is NotAffine:
            raise NotAffine(f"{x!r}")
        return answer  # type: ignore[return-value]

    def affine(self, x: e.Expr) -> isl.PwAff:
        """`x` as a piecewise quasi-affine function of the domain's dimensions (with the
        dims pinned: unrecorded, for tests)."""
        return self._pinned_domain().affine(x)


class _Domain:
    """An IndexDomain built, with the dims `pins` as constants (none: the dims free,
    with opaque terms for what is not affine in them, `_opaque_terms`)."""

    def __init__(
        self,
        loops: Sequence[s.For],
        guards: Sequence[e.Expr],
        exprs: Sequence[e.Expr],
        pins: dict[str, int],
    ) -> None:
        innermost = {loop.loop_var.name: loop for loop in loops}
        loop_list = [loop for loop in loops if innermost[loop.loop_var.name] is loop]
        asked = [x for loop in loop_list for x in (loop.min, loop.extent)] + [*guards, *exprs]
        free = _free_vars(asked, set(innermost))
        self._pinned = pins
        self.pins_read = False
        """Whether a pinned dim's value was read (then an answer holds at these dims)."""
        self.reads_dims = any(dim_values.is_dim_name(v.name) for v in free)
        """Whether a dim (`S0`, a kernel's argument) is among the domain's variables."""
        free = [v for v in free if v.name not in self._pinned]
        self._opaque: dict[tuple, str] = {}
        """With the dims free (none pinned): each product of dims (`S0 * S1`) and each
        division by a non-constant (`x / S1`, `x % S1`) in the domain's expressions, by
        structural key, to a dimension of its own (`_opaque_terms`)."""
        terms = [] if self._pinned else _opaque_terms(asked)
        for k, term in enumerate(terms):
            self._opaque[structural_key(term)] = f"__opaque{k}"
        names = [loop.loop_var.name for loop in loop_list] + [v.name for v in free]
        names += list(self._opaque.values())
        space = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=names)
        self._space = space
        self._local = isl.LocalSpace.from_space(space)
        self._dims = {name: self._var(i) for i, name in enumerate(names)}
        domain = isl.Set.universe(space)
        for loop in loop_list:
            domain = domain & self._loop_range(loop)
        for var in free:
            dim = self._dims[var.name]
            if var.lower is not None:
                domain = domain & dim.ge_set(self._const(var.lower))
            if var.upper is not None:
                domain = domain & dim.lt_set(self._const(var.upper))
        for term in terms:
            domain = domain & self._opaque_range(term, domain)
        for guard in guards:
            try:
                domain = domain & self._condition(guard)
            except NotAffine:
                continue
        self.set: isl.Set = domain

    def always(self, condition: e.Expr) -> bool:
        try:
            holds = self._condition(condition)
        except NotAffine:
            return False
        return self.set.subtract(holds).is_empty()

    def bounds(self, x: e.Expr) -> tuple[int, int] | None:
        values = self.affine(x).intersect_domain(self.set)
        low, high = values.min_val(), values.max_val()
        return (low.to_python(), high.to_python()) if low.is_int() and high.is_int() else None

    def affine(self, x: e.Expr) -> isl.PwAff:
        """`x` as a piecewise quasi-affine function of the domain's dimensions."""
        if isinstance(x, e.IntImm):
            return self._const(x.value)
        if isinstance(x, e.Var) and x.name in self._pinned:
            self.pins_read = True
            return self._const(self._pinned[x.name])
        if isinstance(x, e.Var) and x.dtype.is_integer:
            dim = self._dims.get(x.name)
            if dim is None:
                raise NotAffine(f"{x.name} is no dimension of this domain")
            return dim
        if isinstance(x, e.Cast) and x.dtype.is_integer and x.value.dtype.is_integer:
            # Index casts between int32 and int64; overflow is assumed not to happen, as
            # everywhere in index arithmetic.
            return self.affine(x.value)
        if isinstance(x, (e.Add, e.Sub, e.Min, e.Max)) and x.dtype.is_integer:
            a, b = self.affine(x.a), self.affine(x.b)
            if isinstance(x, e.Add):
                return a + b
            if isinstance(x, e.Sub):
                return a - b
            return a.min(b) if isinstance(x, e.Min) else a.max(b)
        if isinstance(x, e.Mul) and x.dtype.is_integer:
            if self._constant(x.a) is None and self._constant(x.b) is None:
                found = self._opaque_dim(x)
                if found is None:
                    raise NotAffine(f"product of two non-constants {x!r}")
                coefficient, _ = _monomial(x)  # type: ignore[misc]
                return found * self._const(coefficient)
            return self.affine(x.a) * self.affine(x.b)
        if isinstance(x, (e.Div, e.Mod)) and x.dtype.is_integer:
            divisor = self._constant(x.b)
            if divisor is None and self._opaque:
                found = self._opaque_dim(x)
                if found is not None:
                    return found
            if divisor is None or divisor <= 0:
                raise NotAffine(f"division by a non-positive or non-constant {x.b!r}")
            a, b = self.affine(x.a), self._const(divisor)
            return a.tdiv_q(b) if isinstance(x, e.Div) else a.tdiv_r(b)
        raise NotAffine(f"{type(x).__name__} {x!r}")

    def _opaque_dim(self, x: e.Expr) -> isl.PwAff | None:
        """The dimension of an opaque term (`_opaque_terms`); a product by its monomial
        (`2 * S0 * S1` is 2 x the dimension of `S0 * S1`)."""
        if not self._opaque:
            return None
        if isinstance(x, e.Mul):
            found = _monomial(x)
            if found is None:
                return None
            x = _monomial_expr(found[1])
        name = self._opaque.get(structural_key(x))
        return None if name is None else self._dims[name]

    def _constant(self, x: e.Expr) -> int | None:
        """`x`'s value where it is a constant (an IntImm, or arithmetic over pinned
        dims), else None."""
        if isinstance(x, e.IntImm):
            return x.value
        if not self._pinned:
            return None
        names = {v.name for v in _free_vars([x], set())}
        if not names or not names <= set(self._pinned):
            return None
        self.pins_read = True
        try:
            value = evaluate(x, self._pinned)
        except (KeyError, TypeError, ZeroDivisionError):
            return None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def _condition(self, c: e.Expr) -> isl.Set:
        if isinstance(c, e.UIntImm):
            return isl.Set.universe(self._space) if c.value else isl.Set.empty(self._space)
        if isinstance(c, (e.And, e.Or)):
            a, b = self._condition(c.a), self._condition(c.b)
            return a & b if isinstance(c, e.And) else a | b
        if isinstance(c, e.Not):
            return isl.Set.universe(self._space).subtract(self._condition(c.value))
        method = _CMP_SETS.get(type(c))
        if method is None or not c.a.dtype.is_integer:
            raise NotAffine(f"condition {c!r}")
        return getattr(self.affine(c.a), method)(self.affine(c.b))

    def _loop_range(self, loop: s.For) -> isl.Set:
        var = self._dims[loop.loop_var.name]
        try:
            low = self.affine(loop.min)
        except NotAffine:
            return isl.Set.universe(self._space)
        try:
            return var.ge_set(low) & var.lt_set(low + self.affine(loop.extent))
        except NotAffine:
            return var.ge_set(low)

    def _opaque_range(self, term: e.Expr, domain: isl.Set) -> isl.Set:
        """What is known of an opaque term's dimension: a product of dims is at least
        the product of their lower bounds; with a divisor d >= 1 and a dividend x >= 0
        (C semantics), 0 <= x / d <= x and 0 <= x % d <= min(x, d - 1). Nothing where
        that cannot be shown (the dimension then takes any value: still sound)."""
        dim = self._dims[self._opaque[structural_key(term)]]
        universe = isl.Set.universe(self._space)
        if isinstance(term, e.Mul):
            coefficient, dims = _monomial(term)  # type: ignore[misc]
            lows = [v.lower for v in dims]
            if any(low is None or low < 0 for low in lows):
                return universe
            return dim.ge_set(self._const(math.prod(lows)))  # type: ignore[arg-type]
        try:
            x, d = self.affine(term.a), self.affine(term.b)  # type: ignore[attr-defined]
        except NotAffine:
            return universe
        if not domain.subtract(d.ge_set(self._const(1))).is_empty():
            return universe
        zero = self._const(0)
        known = dim.ge_set(zero) & dim.le_set(x)
        if isinstance(term, e.Mod):
            known = known & dim.le_set(d - self._const(1))
        return x.lt_set(zero) | known

    def _var(self, pos: int) -> isl.PwAff:
        return isl.PwAff.from_aff(isl.Aff.var_on_domain(self._local, isl.dim_type.set, pos))

    def _const(self, value: int) -> isl.PwAff:
        val = isl.Val.int_from_si(isl.DEFAULT_CONTEXT, value)
        return isl.PwAff.from_aff(isl.Aff.val_on_domain(self._local, val))


class _DomainArgs:
    """What an IndexDomain was built from, to build it again at other dims (the last
    one built is kept: a replay asks one domain several questions)."""

    def __init__(self, loops: tuple, guards: tuple, exprs: tuple) -> None:
        self.loops, self.guards, self.exprs = loops, guards, exprs
        self.derive = dim_guards.current_derive()
        self._built: tuple[tuple, IndexDomain] | None = None

    def inputs(self) -> tuple[tuple, tuple, tuple]:
        return self.loops, self.guards, self.exprs

    def domain(self, values: dim_guards.Values) -> IndexDomain:
        values = values if self.derive is None else self.derive(values)
        key = tuple(sorted(values.items()))
        if self._built is None or self._built[0] != key:
            with dim_values.bound_dims(values):
                self._built = (key, IndexDomain(self.loops, self.guards, self.exprs))
        return self._built[1]


class _Replay(dim_guards.Check):
    """An IndexDomain answer given with the dims pinned: the same question asked with
    other dims pinned must give the same answer."""

    def __init__(self, args: _DomainArgs, query: str, x: e.Expr, answer: object) -> None:
        self.args, self.query, self.x, self.answer = args, query, x, answer

    def holds(self, values: dim_guards.Values) -> bool:
        domain = self.args.domain(values)
        if self.query == "always":
            return domain.always(self.x) == self.answer
        try:
            return domain.bounds(self.x) == self.answer
        except NotAffine:
            return self.answer is NotAffine


def _monomial(x: e.Expr) -> tuple[int, tuple[e.Var, ...]] | None:
    """A product of integer constants and dims (`(S0 * 2) * S1`) as (coefficient, the
    dim Vars in name order); None for anything else."""
    coefficient, dims, stack = 1, [], [x]
    while stack:
        node = stack.pop()
        if isinstance(node, e.Mul):
            stack += [node.a, node.b]
        elif isinstance(node, e.IntImm):
            coefficient *= node.value
        elif isinstance(node, e.Var) and dim_values.is_dim_name(node.name):
            dims.append(node)
        else:
            return None
    return (coefficient, tuple(sorted(dims, key=lambda v: v.name))) if len(dims) >= 2 else None


def _monomial_expr(dims: tuple[e.Var, ...]) -> e.Expr:
    """The product of `dims`, in a fixed order: the key of their opaque dimension."""
    out: e.Expr = dims[0]
    for var in dims[1:]:
        out = e.Mul(out, var)
    return out


def _opaque_terms(exprs: Iterable[e.Expr]) -> list[e.Expr]:
    """The terms of `exprs` that isl cannot express with the dims free, each given a
    dimension of its own: products of two or more dims (as their monomial, so that
    `S0 * S1` and `(S0 * 2) * S1` share one) and integer divisions and remainders by a
    non-constant; innermost first (a dividend may hold another), each once."""
    seen: set[tuple] = set()
    out: list[e.Expr] = []

    def visit(node: e.Expr) -> None:
        if isinstance(node, e.Mul):
            found = _monomial(node)
            if found is not None:
                term = _monomial_expr(found[1])
                if (key := structural_key(term)) not in seen:
                    seen.add(key)
                    out.append(term)
                return
        for child in children(node):
            if isinstance(child, e.Expr):
                visit(child)
        if (
            isinstance(node, (e.Div, e.Mod))
            and node.dtype.is_integer
            and not isinstance(node.b, e.IntImm)
            and (key := structural_key(node)) not in seen
        ):
            seen.add(key)
            out.append(node)

    for x in exprs:
        visit(x)
    return out


def _dim_vars(exprs: Iterable[e.Expr]) -> bool:
    """Whether a dim Var (`ir.dim_values.is_dim_name`) occurs in `exprs`."""
    return any(dim_values.is_dim_name(v.name) for v in _free_vars(exprs, set()))


def _free_vars(exprs: Iterable[e.Expr], bound: set[str]) -> list[e.Var]:
    """The integer Vars in `exprs` whose names are not in `bound`, first use first."""
    seen: dict[str, e.Var] = {}
    stack = list(reversed(list(exprs)))
    while stack:
        node = stack.pop()
        if isinstance(node, e.Var):
            if node.dtype.is_integer and node.name not in bound:
                seen.setdefault(node.name, node)
            continue
        stack.extend(reversed(children(node)))
    return list(seen.values())
