"""split, fuse and reorder: primitives that change the loops, not what they compute.

Each takes the current function and loop names and returns the new function (and the
names of the loops it made). New loop variables get bounds `0 <= v < extent` so that
the simplifier can reduce the `/` and `%` the primitives put into iter_values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cinn_py.errors import ScheduleError
from cinn_py.ir.dim_values import concrete
from cinn_py.ir.expr import Expr, IntImm, Mul, Var, as_int
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import (
    UNKNOWN_BLOCK,
    Path,
    block_names,
    const_extent,
    find_loop,
    replace,
    starts_at_zero,
    substitute_stmt,
    taken_names,
    unwrap,
    walk,
)
from cinn_py.ir.simplify import simplify
from cinn_py.ir.stmt import Block, For, ForType, IfThenElse, LoweredFunc, Stmt


def check_plain(loop: For, primitive: str) -> None:
    """Split and fuse rebuild a loop as serial loops from 0: they refuse a loop that is
    bound, vectorized, unrolled or not starting at 0 (schedule those after)."""
    name, block = loop.loop_var.name, block_names(loop)
    if loop.bind_info is not None:
        raise ScheduleError(
            primitive,
            block,
            f"loop {name} is bound to {loop.bind_info.value}; bind after {primitive}",
        )
    if loop.for_type is not ForType.SERIAL:
        raise ScheduleError(primitive, block, f"loop {name} is {loop.for_type.value}, not serial")
    if not starts_at_zero(loop):
        raise ScheduleError(primitive, block, f"loop {name} does not start at 0")


def bounded_var(name: str, like: Var, extent: Expr) -> Var:
    """A loop var of `like`'s dtype, bounded by a positive constant extent (by 0 below
    only, for a symbolic extent, as lowering's loop vars are)."""
    if isinstance(extent, IntImm) and extent.value > 0:
        return Var(name, like.dtype, 0, extent.value)
    if not isinstance(extent, IntImm):
        return Var(name, like.dtype, 0)
    return Var(name, like.dtype)


def _resolve_factors(factors: Sequence[int], extent: int, loop: For) -> list[int]:
    """The factors with the -1 (if any) inferred: the smallest value, at least 1, whose
    product with the others covers `extent`."""
    block, name = block_names(loop), loop.loop_var.name
    items = [as_int(f) for f in factors]
    if not items:
        raise ScheduleError("split", block, f"no factors given for loop {name}")
    for f in items:
        if not isinstance(f, int) or isinstance(f, bool):
            raise ScheduleError("split", block, f"factor {f!r} is not an int")
        if f == 0 or f < -1:
            raise ScheduleError("split", block, f"factor {f} of {items} is not positive")
    if items.count(-1) > 1:
        raise ScheduleError(
            "split", block, f"factors {items} have more than one -1 (only one can be inferred)"
        )
    known = math.prod(f for f in items if f != -1)
    if -1 in items:
        items[items.index(-1)] = max(1, -(-extent // known))
    total = math.prod(items)
    if total < extent:
        raise ScheduleError(
            "split",
            block,
            f"factors {list(factors)} cover {total} iterations, fewer than the extent "
            f"{extent} of loop {name}",
        )
    return items


def split(
    func: LoweredFunc, loop_name: str, factors: Sequence[int], guard_at_block: bool = False
) -> tuple[LoweredFunc, list[str]]:
    """Splits loop `loop_name` into nested loops `<name>_0`, `<name>_1`, ... with extents
    `factors` (outermost first); the old variable becomes `((v0 * f1) + v1) * f2 + ...`.
    A product above the extent is kept as is (the bound-guard pass cuts the excess).
    `guard_at_block` only matters for a symbolic extent (`_split_symbolic`)."""
    loop, _ = find_loop(func, loop_name, "split")
    check_plain(loop, "split")
    if not isinstance(loop.extent, IntImm):
        return _split_symbolic(func, loop, factors, guard_at_block)
    sizes = _resolve_factors(factors, const_extent(loop, "split"), loop)
    taken = taken_names(func)
    new_vars = [
        bounded_var(
            fresh_name(f"{loop_name}_{k}", taken), loop.loop_var, IntImm(f, loop.loop_var.dtype)
        )
        for k, f in enumerate(sizes)
    ]
    value: Expr = new_vars[0]
    for var, size in zip(new_vars[1:], sizes[1:], strict=True):
        value = value * size + var
    body = substitute_stmt(loop.body, {loop_name: value})
    for k in reversed(range(len(new_vars))):
        inner = body if k == len(new_vars) - 1 else Block([body])
        body = For(new_vars[k], 0, sizes[k], ForType.SERIAL, inner)
    return replace(func, loop, body), [v.name for v in new_vars]


def _split_symbolic(
    func: LoweredFunc, loop: For, factors: Sequence[int], guard_at_block: bool = False
) -> tuple[LoweredFunc, list[str]]:
    """`split` of a loop whose extent is an expression (a symbolic dim): the one -1
    factor becomes `ceil(extent / product of the others)`, an expression too, and the
    body runs under `if (value < extent)`, since the bound-guard pass sees only constant
    iter var ranges.

    `guard_at_block`: that `if` goes around the block instead, inside every loop of a
    perfect nest in the body (a predicate of the block, as TVM's). The condition does
    not read those loops' vars, so it means the same; the loops stay perfectly nested,
    which the tile schedule needs to reorder and fuse the two split dims of a transpose,
    and a barrier between tile loops is never under it."""
    block, name = block_names(loop), loop.loop_var.name
    items = [as_int(f) for f in factors]
    if any(not isinstance(f, int) or isinstance(f, bool) or (f != -1 and f < 1) for f in items):
        raise ScheduleError(
            "split",
            block,
            f"loop {name} has the symbolic extent {loop.extent!r}: give positive int "
            f"factors with exactly one -1, got {items}",
        )
    if items.count(-1) != 1:
        # All constant: a walk to a bound the extent stays under (a row of symbolic
        # length walked to its bucket's bound, in a constant number of steps that a
        # register cache can unroll), checked at the dims being compiled.
        value = concrete(loop.extent)
        if items.count(-1) or value is None or value > math.prod(items):
            raise ScheduleError(
                "split",
                block,
                f"loop {name} has the symbolic extent {loop.extent!r}: give positive int "
                f"factors with exactly one -1, or constant factors covering its value, "
                f"got {items}",
            )
    known = math.prod(f for f in items if f != -1)
    dtype = loop.loop_var.dtype
    extent = loop.extent
    exact = -1 in items and static_factor(extent) % known == 0  # e.g. S0 * 16 split by 4
    if exact:
        outer = simplify(extent / IntImm(known, dtype)) if known != 1 else extent
    else:
        outer = simplify((extent + (known - 1)) / IntImm(known, dtype))
    sizes: list[Expr | int] = [outer if f == -1 else f for f in items]
    taken = taken_names(func)
    new_vars = [
        bounded_var(
            fresh_name(f"{loop.loop_var.name}_{k}", taken),
            loop.loop_var,
            size if isinstance(size, Expr) else IntImm(size, dtype),
        )
        for k, size in enumerate(sizes)
    ]
    value: Expr = new_vars[0]
    for var, size in zip(new_vars[1:], sizes[1:], strict=True):
        value = value * size + var
    body: Stmt = substitute_stmt(loop.body, {name: value})
    # The guard sits around the innermost loops whose extents multiply to a divisor of
    # the extent's constant factor: `(S1 / 8) * 8` split [-1, T, 8] is guarded by
    # `o * T + t < S1 / 8` around the loop of 8 (which vectorize then takes whole).
    whole, suffix = 1, len(new_vars)
    while suffix > 1 and static_factor(extent) % (whole * items[suffix - 1]) == 0:
        whole *= items[suffix - 1]
        suffix -= 1
    if not exact and suffix == len(new_vars):
        if guard_at_block:
            body = _guard_innermost(body, value.lt(extent))
        else:
            body = IfThenElse(value.lt(extent), body)
    for k in reversed(range(len(new_vars))):
        inner = body if k == len(new_vars) - 1 else Block([body])
        body = For(new_vars[k], 0, sizes[k], ForType.SERIAL, inner)
        if not exact and k == suffix and suffix < len(new_vars):
            prefix: Expr = new_vars[0]
            for var, size in zip(new_vars[1:suffix], sizes[1:suffix], strict=True):
                prefix = prefix * size + var
            body = IfThenElse(prefix.lt(simplify(extent / IntImm(whole, dtype))), body)
    return replace(func, loop, body), [v.name for v in new_vars]


def _guard_innermost(body: Stmt, condition: Expr) -> Stmt:
    """`body` with `condition` around what its perfect nest of serial loops holds."""
    inner = unwrap(body)
    if isinstance(inner, For) and inner.for_type is ForType.SERIAL and inner.bind_info is None:
        nested = _guard_innermost(inner.body, condition)
        return For(inner.loop_var, inner.min, inner.extent, inner.for_type, Block([nested]))
    return IfThenElse(condition, body)


def static_factor(extent: Expr) -> int:
    """The constant factor an extent is a multiple of, whatever its symbols' values:
    16 for `S0 * 16`, 8 for `(S0 * 4) * (S1 * 2)`, 1 for a sum or a quotient."""
    if isinstance(extent, IntImm):
        return extent.value
    if isinstance(extent, Mul):
        return static_factor(extent.a) * static_factor(extent.b)
    return 1


def _distinct(func: LoweredFunc, names: Sequence[str], primitive: str) -> list[tuple[For, Path]]:
    if not names:
        raise ScheduleError(primitive, UNKNOWN_BLOCK, "no loops given")
    found = [find_loop(func, name, primitive) for name in names]
    dup = sorted({n for n in names if list(names).count(n) > 1})
    if dup:
        raise ScheduleError(
            primitive, block_names(found[0][0]), f"loop {', '.join(dup)} is given more than once"
        )
    return found


def fuse(func: LoweredFunc, loop_names: Sequence[str]) -> tuple[LoweredFunc, str]:
    """Fuses consecutive perfectly nested loops (outermost first) into one loop named
    `<a>_<b>_..._fused` whose extent is the product; loop k becomes
    `(fused / (extents after k)) % extent_k` (simplified: no `%` on the outermost, no `/`
    on the innermost). A single loop is returned unchanged."""
    loops = [loop for loop, _ in _distinct(func, loop_names, "fuse")]
    if len(loops) == 1:
        return func, loops[0].loop_var.name
    for loop in loops:
        check_plain(loop, "fuse")
    for outer, inner in zip(loops, loops[1:], strict=False):
        body = unwrap(outer.body)
        if body is inner:
            continue
        o, i = outer.loop_var.name, inner.loop_var.name
        if not any(node is inner for node, _ in walk(outer.body)):
            where = f"loop {i} is not inside loop {o}"
        elif isinstance(body, For):
            where = f"loop {i} is not directly inside loop {o}"
        else:
            where = f"the body of loop {o} holds more than loop {i}"
        raise ScheduleError(
            "fuse", block_names(outer), where + " (fuse needs consecutive, perfectly nested loops)"
        )
    dtype = loops[0].loop_var.dtype
    extent = loops[0].extent
    for loop in loops[1:]:
        extent = simplify(extent * loop.extent)
    fused_name = fresh_name(
        "_".join(loop.loop_var.name for loop in loops) + "_fused", taken_names(func)
    )
    fused = bounded_var(fused_name, loops[0].loop_var, extent)
    mapping: dict[str, Expr] = {}
    stride: Expr = IntImm(1, dtype)
    for k in reversed(range(len(loops))):
        value: Expr = fused / stride if k < len(loops) - 1 else fused
        if k > 0:
            value = value % loops[k].extent
        mapping[loops[k].loop_var.name] = value
        stride = simplify(stride * loops[k].extent)
    body = substitute_stmt(loops[-1].body, mapping)
    return replace(func, loops[0], For(fused, 0, extent, ForType.SERIAL, body)), fused_name


def reorder(func: LoweredFunc, loop_names: Sequence[str]) -> LoweredFunc:
    """Puts the given loops of one perfect nest into the given order (outermost first).
    They keep the set of nest positions they held; loops of the nest between them that
    are not given stay where they are. Loops keep their kind and binding."""
    found = _distinct(func, loop_names, "reorder")
    given = [loop for loop, _ in found]
    outermost, outer_path = min(found, key=lambda lp: len(lp[1]))
    for loop, path in found:
        if loop is not outermost and not any(p is outermost for p in path):
            raise ScheduleError(
                "reorder",
                block_names(outermost),
                f"loops {outermost.loop_var.name} and {loop.loop_var.name} are not in one loop nest",
            )
    depth = max(len(path) for _, path in found)
    chain = [outermost]
    while not any(chain[-1] is loop for loop, path in found if len(path) == depth):
        body = unwrap(chain[-1].body)
        if not isinstance(body, For):
            raise ScheduleError(
                "reorder",
                block_names(outermost),
                f"the body of loop {chain[-1].loop_var.name} is not a single loop "
                f"(reorder needs a perfect nest from {outermost.loop_var.name} down)",
            )
        chain.append(body)
    positions = [k for k, loop in enumerate(chain) if any(loop is g for g in given)]
    if len(positions) != len(given):
        missing = [g.loop_var.name for g in given if not any(g is c for c in chain)]
        raise ScheduleError(
            "reorder",
            block_names(outermost),
            f"loop {', '.join(missing)} is not on the perfect nest from "
            f"{outermost.loop_var.name} to {chain[-1].loop_var.name}",
        )
    placed = dict(zip(positions, given, strict=True))
    new = None
    for k in reversed(range(len(chain))):
        src = placed.get(k, chain[k])
        if k == len(chain) - 1:
            body = chain[k].body
        else:
            body = Block([new]) if isinstance(chain[k].body, Block) else new
        new = For(src.loop_var, src.min, src.extent, src.for_type, body, src.bind_info)
    return replace(func, outermost, new)
