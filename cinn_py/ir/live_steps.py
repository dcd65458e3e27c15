"""How many steps of a masked reduction's outer axis can contribute anything.

A reduction over a symbolic dim (a sequence of length `S0`) is lowered over the dim's
bucket (`ir.buckets.REDUCE_BUCKETS`: a static bound, so that every length in
the bucket shares the kernel), its body `Select(r < S0, x, identity)`. Scheduled, the
axis is split across threads: `for (o = 0; o < 512; ++o) acc += (o * 32 + t < S0) ?
x[...] : 0`. At S0 = 8193 in the bucket (8192, 16384] half of those steps are masked:
they load nothing but still cost their compares, and the loop cannot end early.

`live_extent` reads the mask and gives the loop's end as an expression over the
kernel's scalar arguments, `min(512, (S0 + 31) / 32)`: every step past it has
`o * 32 + t >= S0` whatever the other (non-negative) terms are, so its body is the
Reduce's identity and leaving it out changes nothing, bit for bit. The mask stays in
the body for the last, partial step. Codegen then emits the loop to that end.

Which masks: a conjunct `A < B` (or `A / d < B` with a positive constant d: for
`A >= 0` that is `A < B * d`) of the body's Select, whose false value is the Reduce's
init (its identity), with A affine in the axis with a positive coefficient c, every
other term of A a Var known to be non-negative and B made of the kernel's dims and
constants. A term under a step (a thread's offset in it, coefficient below c) is
dropped, so the end is the same for every thread; a term of a step or more, known
where the loop starts (a grid chunk's offset, not another axis of the Reduce), is moved
to B, so a chunk wholly past the length ends at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.ir import expr as e
from cinn_py.ir.dim_values import is_dim_name
from cinn_py.ir.schedule.analysis import var_names
from cinn_py.ir.schedule.loop_transformation import static_factor
from cinn_py.ir.simplify import affine_terms, reads_values, simplify
from cinn_py.ir.visitor import structural_equal


def live_extent(nodes: Sequence[e.Reduce], axis: e.Var) -> e.Expr | None:
    """The end of `axis` (a reduce axis from 0 of every Reduce in `nodes`, which share
    one loop) past which every node's body is masked off, as `min(upper, end)`; None
    where some node's body is not masked along the axis."""
    if axis.lower != 0 or axis.upper is None:
        return None
    inner = frozenset(v.name for node in nodes for v in node.reduce_axis if v.name != axis.name)
    ends = []
    for node in nodes:
        end = _node_end(node, axis, inner)
        if end is None:
            return None
        ends.append(end)
    if all(isinstance(end, e.IntImm) and end.value >= axis.upper for end in ends):
        return None  # no mask ends the loop early
    live = ends[0]
    for end in ends[1:]:
        live = e.Max(live, end)
    return simplify(e.Min(e.IntImm(axis.upper, axis.dtype), live))


def _node_end(node: e.Reduce, axis: e.Var, inner: frozenset[str]) -> e.Expr | None:
    """The smallest end any of the body's masks gives: each conjunct of each Select
    around the value whose false value is the identity masks on its own (a grid chunk's
    bound around a symbolic length's mask, `A < 2**27 ? (A / 64 < S0 ? x : 0) : 0`)."""
    ends = []
    body = node.body
    while isinstance(body, e.Select) and structural_equal(body.false_value, node.init):
        for mask in _conjuncts(body.condition):
            end = _mask_end(mask, axis, inner)
            if end is not None:
                ends.append(end)
        body = body.true_value
    if not ends:
        return None
    ends = [end for end in ends if not (isinstance(end, e.IntImm) and end.value >= axis.upper)]
    if not ends:  # only masks past the loop's end (a grid's last chunk): the full loop
        return e.IntImm(axis.upper, axis.dtype)
    least = ends[0]
    for end in ends[1:]:
        least = e.Min(least, end)
    return least


def _conjuncts(cond: e.Expr) -> list[e.Expr]:
    if isinstance(cond, e.And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


def _mask_end(mask: e.Expr, axis: e.Var, inner: frozenset[str]) -> e.Expr | None:
    """For `mask` = `A < B`: an end such that every step `axis >= end` has `A >= B`;
    None if the mask is not of the form the module docstring describes. `inner`: the
    names of the Reduces' other axes (not yet known where the loop starts)."""
    if not isinstance(mask, e.LT):
        return None
    lhs, rhs = mask.a, mask.b
    dtype = axis.dtype
    if lhs.dtype is not dtype or rhs.dtype is not dtype or not _uniform(rhs):
        return None
    if isinstance(lhs, e.Div) and isinstance(lhs.b, e.IntImm) and lhs.b.value > 0:
        lhs, rhs = lhs.a, rhs * lhs.b  # A / d < B <=> A < B * d, for A >= 0
    terms, const = affine_terms(lhs)
    coeff = next((c for t, c in terms if isinstance(t, e.Var) and t.name == axis.name), 0)
    if coeff <= 0 or const < 0:
        return None
    for term, c in terms:
        if isinstance(term, e.Var) and term.name == axis.name:
            continue
        if not (isinstance(term, e.Var) and c > 0 and term.lower is not None and term.lower >= 0):
            return None  # a term that might be negative: the axis alone bounds nothing
        if c >= coeff and term.name not in inner:
            # A whole step or more (a grid chunk's offset): known where the loop starts,
            # kept, so that a chunk past the length runs no step at all.
            rhs = rhs - term * e.IntImm(c, dtype)
        # else dropped: at least 0, it only makes A larger (a thread's offset in a step)
    # Steps with coeff * axis >= rhs have A >= rhs: masked. The end is ceil(rhs /
    # coeff); C's division truncates toward 0, which for a negative rhs gives an end at
    # least the true one: never too early.
    rhs = simplify(rhs)
    if coeff == 1:
        return rhs
    if static_factor(rhs) % coeff == 0:  # S0 * 8192 steps of 1024: S0 * 8, exactly
        return simplify(rhs / e.IntImm(coeff, dtype))
    return simplify((rhs + e.IntImm(coeff - 1, dtype)) / e.IntImm(coeff, dtype))


def _uniform(x: e.Expr) -> bool:
    """Whether `x` reads only the kernel's dims and constants (the same in every thread)."""
    return not reads_values(x) and all(is_dim_name(name) for name in var_names(x))
