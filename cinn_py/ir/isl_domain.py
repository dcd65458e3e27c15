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

from collections.abc import Iterable, Sequence

import islpy as isl

from cinn_py.ir import dim_values
from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.visitor import children

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
        innermost = {loop.loop_var.name: loop for loop in loops}
        loop_list = [loop for loop in loops if innermost[loop.loop_var.name] is loop]
        free = _free_vars(
            [x for loop in loop_list for x in (loop.min, loop.extent)] + [*guards, *exprs],
            set(innermost),
        )
        self._pinned = dim_values.current() or {}
        """A symbolic kernel's dims at the signature being compiled (`ir.dim_values`):
        constants here, so `i * S1` and `x / (S1 * 8)` are affine. What is proven then
        holds for that signature, which is the one the kernel is compiled for."""
        free = [v for v in free if v.name not in self._pinned]
        names = [loop.loop_var.name for loop in loop_list] + [v.name for v in free]
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
        for guard in guards:
            try:
                domain = domain & self._condition(guard)
            except NotAffine:
                continue
        self.set: isl.Set = domain

    def always(self, condition: e.Expr) -> bool:
        """Whether `condition` holds at every point of the domain (False when isl cannot
        express it)."""
        try:
            holds = self._condition(condition)
        except NotAffine:
            return False
        return self.set.subtract(holds).is_empty()

    def affine(self, x: e.Expr) -> isl.PwAff:
        """`x` as a piecewise quasi-affine function of the domain's dimensions."""
        if isinstance(x, e.IntImm):
            return self._const(x.value)
        if isinstance(x, e.Var) and x.name in self._pinned:
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
                raise NotAffine(f"product of two non-constants {x!r}")
            return self.affine(x.a) * self.affine(x.b)
        if isinstance(x, (e.Div, e.Mod)) and x.dtype.is_integer:
            divisor = self._constant(x.b)
            if divisor is None or divisor <= 0:
                raise NotAffine(f"division by a non-positive or non-constant {x.b!r}")
            a, b = self.affine(x.a), self._const(divisor)
            return a.tdiv_q(b) if isinstance(x, e.Div) else a.tdiv_r(b)
        raise NotAffine(f"{type(x).__name__} {x!r}")

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
            return var.ge_set(low) & var.lt_set(low + self.affine(loop.extent))
        except NotAffine:
            return isl.Set.universe(self._space)

    def _var(self, pos: int) -> isl.PwAff:
        return isl.PwAff.from_aff(isl.Aff.var_on_domain(self._local, isl.dim_type.set, pos))

    def _const(self, value: int) -> isl.PwAff:
        val = isl.Val.int_from_si(isl.DEFAULT_CONTEXT, value)
        return isl.PwAff.from_aff(isl.Aff.val_on_domain(self._local, val))


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
