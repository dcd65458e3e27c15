"""Which accesses of a vectorized loop are contiguous, and which conditions hold for all
of its lanes alike: the proofs that let codegen turn a loop of L lanes into one vector
load or store per buffer.

A vectorized loop `for (v, 0, L)` may become vector accesses only where that is what
the scalar loop means. `lane_form` writes an integer expression as `base + stride * v`
with `base` free of `v` and a known multiple of some `m`, by structure: sums, products
by constants, and `/` or `%` by a constant `C` where the lanes cannot cross a multiple
of `C` (`stride * (L - 1) < gcd(m, C)`, with `base` provably non-negative, as C's
truncating division needs). An access whose flat offset has stride 1 and a base that
is a multiple of L touches L consecutive elements starting at an L-aligned offset:
with 16-byte aligned buffers, one aligned vector access. A condition is uniform when
it does not depend on the lane, or compares `base + v < n` (or `>=`) with `base` and
`n` multiples of L.

`plan_vector_loop` applies these proofs to a whole loop and says what to emit, or
returns None when the loop must stay a scalar loop over its lanes (always correct).
Accesses to register arrays (local buffers: a thread's own registers, `x_local[s * V +
v]`) are never vector accesses: registers need no vector transaction, so they stay
lane-by-lane moves in the unrolled lane loop, and the global accesses around them
still become vector loads and stores (the row schedule's register fill: one 16-byte
load, V register moves).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from cinn_py.backends.codegen_c import flat_index, is_on_chip
from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import has_reduce, outermost_reductions, unwrap, var_names
from cinn_py.ir.simplify import bounds, simplify
from cinn_py.ir.visitor import Mutator, nodes, structural_equal, structural_key


@dataclass(frozen=True)
class LaneForm:
    """`base + stride * lane` for every lane; `base` is a multiple of `multiple`
    (0: `base` is 0)."""

    base: e.Expr
    stride: int
    multiple: int


class _Substitute(Mutator):
    def __init__(self, mapping: Mapping[str, e.Expr]) -> None:
        self.mapping = mapping

    def visit_Var(self, node: e.Var) -> e.Expr:
        return self.mapping.get(node.name, node)


def substitute(node: e.Expr, mapping: Mapping[str, e.Expr]) -> e.Expr:
    """`node` with each Var named in `mapping` replaced (no simplification)."""
    return _Substitute(mapping).visit(node) if mapping else node


def mentions(node: e.IrNode, name: str) -> bool:
    """Whether `node` reads the Var named `name`."""
    return any(isinstance(n, e.Var) and n.name == name for n in nodes(node))


def _non_negative(x: e.Expr) -> bool:
    found = bounds(x)
    return found is not None and found[0] >= 0


def lane_form(x: e.Expr, lane: str, lanes: int) -> LaneForm | None:
    """`x` as `base + stride * lane` over the lanes `0 <= lane < lanes`, or None when its
    structure does not prove one."""
    if isinstance(x, e.IntImm):
        return LaneForm(x, 0, abs(x.value))
    if isinstance(x, e.Var) and x.name == lane:
        return LaneForm(e.IntImm(0, x.dtype), 1, 0)
    if isinstance(x, (e.Add, e.Sub)):
        a, b = lane_form(x.a, lane, lanes), lane_form(x.b, lane, lanes)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(x, e.Add) else -1
        base = type(x)(a.base, b.base)
        return LaneForm(base, a.stride + sign * b.stride, math.gcd(a.multiple, b.multiple))
    if isinstance(x, e.Mul):
        return _mul(x, lane, lanes)
    if isinstance(x, e.Cast) and x.dtype.is_integer and x.value.dtype.is_integer:
        # A widening index cast (flat offsets of large buffers are int64); index
        # arithmetic is assumed not to overflow, as everywhere in the IR.
        f = lane_form(x.value, lane, lanes)
        if f is None or x.dtype.itemsize < x.value.dtype.itemsize:
            return None
        return LaneForm(e.Cast(x.dtype, f.base), f.stride, f.multiple)
    if isinstance(x, (e.Div, e.Mod)) and isinstance(x.b, e.IntImm) and x.b.value > 0:
        return _div_mod(x, lane, lanes)
    return None if mentions(x, lane) else LaneForm(x, 0, 1)


def _mul(x: e.Mul, lane: str, lanes: int) -> LaneForm | None:
    a, b = lane_form(x.a, lane, lanes), lane_form(x.b, lane, lanes)
    if a is None or b is None:
        return None
    for factor, other in ((x.b, a), (x.a, b)):
        if isinstance(factor, e.IntImm):
            k = factor.value
            return LaneForm(other.base * factor, other.stride * k, other.multiple * abs(k))
    if a.stride or b.stride:
        return None
    return LaneForm(e.Mul(a.base, b.base), 0, a.multiple * b.multiple)


def _div_mod(x: e.Div | e.Mod, lane: str, lanes: int) -> LaneForm | None:
    """Without the lane, exact whatever the sign: (c*k) / c == k, and (m*k) % c is a
    multiple of gcd(m, c). With it: base % c is a multiple h of gcd(m, c), at most c - h,
    so the lanes stay below the next multiple of c when stride * (lanes - 1) < h (and
    base >= 0, where C's truncation is floor)."""
    c = x.b.value
    f = lane_form(x.a, lane, lanes)
    if f is None:
        return None
    h = math.gcd(f.multiple, c)
    if f.stride and (f.stride < 0 or f.stride * (lanes - 1) >= h or not _non_negative(f.base)):
        return None
    if isinstance(x, e.Div):
        return LaneForm(e.Div(f.base, x.b), 0, f.multiple // c if f.multiple % c == 0 else 1)
    return LaneForm(e.Mod(f.base, x.b), f.stride, h)


def _divides(lanes: int, multiple: int) -> bool:
    return multiple % lanes == 0


def contiguous_base(offset: e.Expr, lane: str, lanes: int) -> e.Expr | None:
    """The offset of lane 0 when `offset` is `base + lane` with `base` a multiple of
    `lanes` (so the lanes are one aligned run), else None."""
    for candidate in (simplify(offset), offset):
        form = lane_form(candidate, lane, lanes)
        if form is not None and form.stride == 1 and _divides(lanes, form.multiple):
            return simplify(form.base)
    return None


def is_uniform(cond: e.Expr, lane: str, lanes: int) -> bool:
    """Does `cond` have the same value for every lane?"""
    if not mentions(cond, lane):
        return True
    if isinstance(cond, (e.And, e.Or)):
        return is_uniform(cond.a, lane, lanes) and is_uniform(cond.b, lane, lanes)
    if isinstance(cond, e.Not):
        return is_uniform(cond.value, lane, lanes)
    if not isinstance(cond, e.CmpOp):
        return False
    a, b = cond.a, cond.b
    kind = type(cond)
    if kind in (e.GT, e.LE):  # b < a, b >= a
        a, b, kind = b, a, e.LT if kind is e.GT else e.GE
    fa, fb = lane_form(a, lane, lanes), lane_form(b, lane, lanes)
    if fa is not None and fb is not None and fa.stride == fb.stride == 0:
        return True
    if kind not in (e.LT, e.GE):
        return False
    if isinstance(a, e.Div) and isinstance(a.b, e.IntImm) and isinstance(b, e.IntImm):
        # x / c < n  <=>  x < n * c  for x >= 0 and c > 0 (and likewise >=).
        if a.b.value > 0 and _non_negative(a.a):
            return is_uniform(kind(a.a, b * a.b), lane, lanes)
    return (
        fa is not None
        and fb is not None
        and fa.stride == 1
        and fb.stride == 0
        and _divides(lanes, fa.multiple)
        and _divides(lanes, fb.multiple)
    )


@dataclass
class RealizePlan:
    """How one ScheduleBlockRealize of a vectorized loop renders: the stores that become
    one vector store (by `id`, with the lane-0 offset) and the loads that become one
    vector load each (their offsets, and which Load nodes read which)."""

    vector_stores: dict[int, e.Expr] = field(default_factory=dict)
    loads: list[tuple[str, e.Expr]] = field(default_factory=list)
    load_slots: dict[int, int] = field(default_factory=dict)


@dataclass
class VectorPlan:
    """A vectorized loop that renders as vector accesses: the conditions inside it at
    lane 0 (by `id` of their IfThenElse) and a plan per realize (by `id`)."""

    lane: e.Var
    lanes: int
    conditions: dict[int, e.Expr] = field(default_factory=dict)
    realizes: dict[int, RealizePlan] = field(default_factory=dict)


class _NotVectorizable(Exception):
    """The loop's body holds something a vector rendering cannot keep the meaning of."""


def _reads(node: e.IrNode) -> set[str]:
    """The buffers `node` reads, by name."""
    return {e.storage_name(n.tensor) for n in nodes(node) if isinstance(n, e.Load)}


def _writes(node: e.IrNode) -> list[str]:
    """The buffer of each Store under `node`, by name (one a store)."""
    return [e.storage_name(n.tensor) for n in nodes(node) if isinstance(n, s.Store)]


def _unconditional_loads(x: e.Expr, out: list[e.Load]) -> None:
    """The Loads of `x` that every evaluation of `x` performs (not those under a
    Select's branches or the right side of `&&` / `||`, nor inside another Load's
    indices, which stay scalar)."""
    if isinstance(x, e.Load):
        out.append(x)
        return
    if isinstance(x, e.Select):
        _unconditional_loads(x.condition, out)
        return
    if isinstance(x, (e.And, e.Or)):
        _unconditional_loads(x.a, out)
        return
    for value in x.field_values():
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            if isinstance(item, e.Expr):
                _unconditional_loads(item, out)


class _Planner:
    def __init__(self, loop: s.For, loop_vars: Mapping[str, e.Var]) -> None:
        self.lane = loop.loop_var.name
        self.lanes = loop.extent.value
        lane_var = e.Var(self.lane, loop.loop_var.dtype, 0, self.lanes)
        self.known: dict[str, e.Expr] = {**loop_vars, self.lane: lane_var}
        self.plan = VectorPlan(lane_var, self.lanes)

    def stmt(self, node: e.IrNode, mapping: dict[str, e.Expr]) -> None:
        if isinstance(node, s.Block):
            for child in node.stmts:
                self.stmt(child, mapping)
        elif isinstance(node, s.IfThenElse):
            cond = substitute(node.condition, mapping)
            if not is_uniform(cond, self.lane, self.lanes):
                raise _NotVectorizable
            zero = e.IntImm(0, self.plan.lane.dtype)
            self.plan.conditions[id(node)] = simplify(substitute(cond, {self.lane: zero}))
            self.stmt(node.true_case, mapping)
            if node.false_case is not None:
                self.stmt(node.false_case, mapping)
        elif isinstance(node, s.ScheduleBlockRealize):
            self.realize(node, mapping)
        else:
            raise _NotVectorizable

    def realize(self, node: s.ScheduleBlockRealize, mapping: dict[str, e.Expr]) -> None:
        block = node.schedule_block
        inner = dict(mapping)
        for var, value in zip(block.iter_vars, node.iter_values, strict=True):
            inner[var.name] = substitute(value, mapping)
        body = block.body
        stores = body.stmts if isinstance(body, s.Block) else (body,)
        if not all(isinstance(x, s.Store) for x in stores):
            raise _NotVectorizable
        if any(has_reduce(x.value) for x in stores):
            raise _NotVectorizable  # lanes of a reduction: `plan_lane_reductions`
        plan = RealizePlan()
        slots: dict[tuple, int] = {}
        for store in stores:
            base = None if is_on_chip(store.tensor) else self.contiguous(store, inner)
            if base is not None:
                plan.vector_stores[id(store)] = base
            loads: list[e.Load] = []
            _unconditional_loads(store.value, loads)
            for load in loads:
                if is_on_chip(load.tensor):
                    continue  # a register move per lane
                base = self.contiguous(load, inner)
                if base is None:
                    continue
                key = (e.storage_name(load.tensor), structural_key(base))
                if key not in slots:
                    slots[key] = len(plan.loads)
                    plan.loads.append((e.storage_name(load.tensor), base))
                plan.load_slots[id(load)] = slots[key]
        self.plan.realizes[id(node)] = plan

    def contiguous(self, node: e.Load | s.Store, mapping: dict[str, e.Expr]) -> e.Expr | None:
        offset = substitute(flat_index(node.tensor, node.indices), mapping)
        return contiguous_base(offset, self.lane, self.lanes)


def plan_vector_loop(loop: s.For, loop_vars: Mapping[str, e.Var]) -> VectorPlan | None:
    """The vector rendering of vectorized loop `loop`, or None where it must stay
    scalar. `loop_vars` are the enclosing loops' variables with their ranges as bounds
    (what proves index expressions non-negative)."""
    if not (isinstance(loop.min, e.IntImm) and loop.min.value == 0) or loop.extent.value < 2:
        return None
    writes = _writes(loop.body)
    if _reads(loop.body) & set(writes) or len(set(writes)) < len(writes):
        return None
    planner = _Planner(loop, loop_vars)
    try:
        planner.stmt(loop.body, dict(planner.known))
    except _NotVectorizable:
        return None
    return planner.plan


def body_loads(x: e.Expr, every_step: bool) -> list[e.Load]:
    """The Loads of a Reduce body, outside another Load's indices and nested Reduces
    (whose own axes are not in scope before the lane loop); with `every_step`, only
    those evaluated on every step (not under a Select's branches or the right side of
    `&&` / `||`). Always in the same order for the same structure."""
    found: list[e.Load] = []

    def walk(node: e.Expr) -> None:
        if isinstance(node, e.Load):
            found.append(node)
        elif every_step and isinstance(node, e.Select):
            walk(node.condition)
        elif every_step and isinstance(node, (e.And, e.Or)):
            walk(node.a)
        elif not isinstance(node, e.Reduction):
            for value in node.field_values():
                for item in value if isinstance(value, tuple) else (value,):
                    if isinstance(item, e.Expr):
                        walk(item)

    walk(x)
    return found


@dataclass(frozen=True)
class LaneReductions:
    """A vectorized loop of V lanes around one block storing a cross-thread Reduce whose
    body is a serial partial (the column schedule's V neighbouring outputs a thread),
    written out lane by lane: `realize` is the block with lane k's store after lane
    k - 1's (its iter vars renamed per lane), so codegen folds every lane's partial in
    one walk (`emit_partials_together`) and combines them in one exchange
    (`emit_fused_cross_thread_reductions`). `partials` are the lanes' partial Reduces
    in lane order; `runs` the positions, in `body_loads(body, True)` order, of the
    global loads whose V lanes read one aligned run of V elements: one vector load a
    step. `guarded`: every partial's body is `Select(mask, value, identity)` under one
    mask the same for every lane (a column split over TY threads that TY does not
    divide), so the vector loads go under one branch a step and fold `value`."""

    realize: s.ScheduleBlockRealize
    partials: tuple[e.Reduce, ...]
    runs: tuple[int, ...]
    guarded: bool


def plan_lane_reductions(loop: s.For, loop_vars: Mapping[str, e.Var]) -> LaneReductions | None:
    """The lane-by-lane rendering of vectorized loop `loop` around one block whose single
    Store holds a cross-thread Reduce of a serial Reduce, or None (the loop then runs its
    lanes one after another, each with its own walk and exchange: always correct). The
    lanes are independent: no lane reads the buffer the block stores."""
    if not (isinstance(loop.min, e.IntImm) and loop.min.value == 0):
        return None
    lanes = loop.extent.value if isinstance(loop.extent, e.IntImm) else 0
    realize = unwrap(loop.body)
    if lanes not in (2, 4, 8, 16) or not isinstance(realize, s.ScheduleBlockRealize):
        return None
    block = realize.schedule_block
    store = unwrap(block.body)
    if not isinstance(store, s.Store):
        return None
    combines = outermost_reductions(store.value)  # a mean's sum under its division, say
    if len(combines) != 1:
        return None
    (combine,) = combines
    if not (isinstance(combine, e.Reduce) and combine.thread_axis is not None):
        return None
    partial = combine.body
    if not (isinstance(partial, e.Reduce) and partial.thread_axis is None):
        return None
    if e.storage_name(store.tensor) in _reads(store.value):
        return None
    lane = loop.loop_var.name
    lane_var = e.Var(lane, loop.loop_var.dtype, 0, lanes)
    known: dict[str, e.Expr] = {**loop_vars, lane: lane_var}
    symbolic = {
        var.name: substitute(value, known)
        for var, value in zip(block.iter_vars, realize.iter_values, strict=True)
    }
    body = substitute(partial.body, symbolic)
    guarded = False
    if isinstance(body, e.Select) and structural_equal(body.false_value, partial.init):
        guarded = is_uniform(body.condition, lane, lanes)
    runs = []
    for position, load in enumerate(body_loads(body.true_value if guarded else body, True)):
        if is_on_chip(load.tensor) or load.dtype.itemsize * lanes > 16:
            continue
        offset = flat_index(load.tensor, load.indices)
        base = contiguous_base(offset, lane, lanes)
        if base is not None and lane not in var_names(base):
            runs.append(position)
    iter_vars: list[e.Var] = []
    iter_values: list[e.Expr] = []
    stores: list[s.Stmt] = []
    partials: list[e.Reduce] = []
    taken = {*loop_vars, lane, *var_names(store.value), *(v.name for v in block.iter_vars)}
    for k in range(lanes):
        at_lane = {lane: e.IntImm(k, loop.loop_var.dtype)}
        renamed: dict[str, e.Expr] = {}
        for var, value in zip(block.iter_vars, realize.iter_values, strict=True):
            name = fresh_name(f"{var.name}_lane{k}", taken)
            fresh = e.Var(name, var.dtype, var.lower, var.upper)
            renamed[var.name] = fresh
            iter_vars.append(fresh)
            iter_values.append(substitute(value, at_lane))
        value = substitute(store.value, renamed)
        indices = [substitute(i, renamed) for i in store.indices]
        stores.append(s.Store(store.tensor, value, indices))
        partials.append(outermost_reductions(value)[0].body)
    lanes_block = s.ScheduleBlock(
        iter_vars,
        block.read_buffers,
        block.write_buffers,
        block.name,
        s.Block(stores),
        block.attrs,
    )
    return LaneReductions(
        s.ScheduleBlockRealize(iter_values, lanes_block), tuple(partials), tuple(runs), guarded
    )
