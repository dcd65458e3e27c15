"""What every tactic's schedule ends with: the result and the finishing passes.

A tactic (`tactics.py`) applies IRSchedule primitives, traced; `finish_schedule` then
runs the passes that are not primitives, the same for every tactic: 0-D blocks placed
on the bound axes, the iter values of blocks that combine across threads (or store a
register temp) clamped into range, the bound guards, and the barrier check. The
`ScheduleResult` holds the finished function, the trace that replays to it, the launch
and the name of the tactic that made it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cinn_py.ir import expr as e
from cinn_py.ir.bound_guards import ScopedStmtMutator, insert_bound_guards
from cinn_py.ir.expr import IntImm, MemoryType, Var
from cinn_py.ir.group_schedule.launch_config import LaunchConfig
from cinn_py.ir.group_schedule.reduce_schedule import find_reduces
from cinn_py.ir.isl_domain import IndexDomain
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule import Trace
from cinn_py.ir.schedule.analysis import single_store, substitute, taken_names, unwrap, var_names
from cinn_py.ir.schedule.thread_sync import check_barriers
from cinn_py.ir.simplify import simplify
from cinn_py.ir.stmt import (
    BindInfo,
    Block,
    For,
    ForType,
    IfThenElse,
    LoweredFunc,
    ScheduleBlockRealize,
    Stmt,
)
from cinn_py.ir.visitor import Mutator, nodes


@dataclass(frozen=True)
class ScheduleResult:
    """A scheduled function, ready for codegen, the primitives that made it, and the
    tactic that chose them.

    `trace` replays on the lowered function to the schedule before its finishing passes
    (0-D block placement, bound guards); `replay` runs both and gives `func` again.
    """

    func: LoweredFunc
    trace: Trace
    launch: LaunchConfig | None
    """The shared configuration (None when no block has a loop to bind)."""
    tactic: str
    """The name of the tactic that scheduled the function (`tactics.TACTICS`: "grid",
    "column", "row", "tile" or "flat"), shown by the dumps and `cinn-py ir`."""
    tuned: dict[str, int] | None = None
    """The knobs a schedule database gave the tactic (`schedule_db`); None where its
    rules decided."""

    @property
    def label(self) -> str:
        """The tactic, with the database's knobs where it used some: what the dumps,
        `cinn-py ir` and `dump-cuda` headings say ("row, tuned threads_per_row=256
        rows_per_block=1")."""
        if not self.tuned:
            return self.tactic
        return f"{self.tactic}, tuned " + " ".join(f"{k}={v}" for k, v in self.tuned.items())

    def replay(self, lowered: LoweredFunc) -> LoweredFunc:
        return finish_schedule(self.trace.replay(lowered))


def finish_schedule(func: LoweredFunc) -> LoweredFunc:
    """The passes after the primitives: 0-D blocks placed on the bound axes, the iter
    values of blocks that combine across threads clamped into range, then the bound
    guards; and the check that shared memory has its barriers (`check_barriers`:
    ScheduleError for a race a missing `sync_threads` leaves, or a misplaced barrier)."""
    func = insert_bound_guards(_clamp_cross_thread_blocks(_place_scalar_blocks(func)))
    check_barriers(func)
    return func


# ---- 0-D blocks -------------------------------------------------------------------------


def _place_scalar_blocks(func: LoweredFunc) -> LoweredFunc:
    """Wraps each loop-less block in unit loops bound to every axis the function binds
    (blockIdx before threadIdx), so that one thread of one block runs it."""
    bound = _bound_axes(func)
    if not bound:
        return func
    order = sorted(bound, key=lambda b: (b.value.startswith("thread"), b.value))
    taken = taken_names(func)
    body = _WrapScalars(order, taken).visit(func.body)
    if body is func.body:
        return func
    return LoweredFunc(func.name, func.args, body, func.temp_buffers)


def _bound_axes(func: LoweredFunc) -> set[BindInfo]:
    """The axes the function binds: a loop's, or a cross-thread combine's (a 0-D row sum
    binds threadIdx.x in its Reduce alone)."""
    bound = set()
    for node in nodes(func.body):
        if isinstance(node, For) and node.bind_info is not None:
            bound.add(node.bind_info)
        elif isinstance(node, e.Reduction) and node.thread_axis is not None:
            bound.add(BindInfo(node.thread_axis))
    return bound


class _WrapScalars(Mutator):
    """Wraps the realizes that no loop encloses (0-D blocks) in bound unit loops, named
    `<block>_block_x`, `<block>_thread_x` (made unique against `taken`)."""

    def __init__(self, axes: list[BindInfo], taken: set[str]) -> None:
        self.axes = axes
        self.taken = taken
        self.loop_depth = 0

    def visit_For(self, node: For) -> For:
        self.loop_depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self.loop_depth -= 1

    def visit_ScheduleBlockRealize(self, node: ScheduleBlockRealize) -> Stmt:
        if node.schedule_block.name == "root" or self.loop_depth:
            return self.generic_visit(node)
        body: Stmt = node
        axes = self.axes
        if _needs_clamp(node):  # every thread takes part, or reads its register: block 0
            axes = [axis for axis in axes if axis.value.startswith("block")]
        for axis in reversed(axes):
            base = f"{node.schedule_block.name}_{axis.value.replace('Idx.', '_')}"
            var = Var(fresh_name(base, self.taken), lower=0, upper=1)
            inner = body if body is node else Block([body])
            body = For(var, 0, 1, ForType.SERIAL, inner, axis)
        return body


def _reduces_across_threads(node: ScheduleBlockRealize) -> bool:
    return any(r.thread_axis is not None for r in find_reduces(node.schedule_block.body))


def _needs_clamp(node: ScheduleBlockRealize) -> bool:
    """A block that combines across threads (a guard would keep threads from its
    barriers), or one that stores a register temp: a thread past the end then holds the
    last element's value for the combine blocks after it, which read the register
    clamped too (guarded, it would hold garbage there and a clamped combine would store
    that garbage over the last element). Its register is its own, so recomputing an
    element in range is free of races. A register array along a row walk
    (`keep_in_registers`, with array dims) is guarded instead: each element is its own
    thread's, and the reads past the end are masked."""
    if _reduces_across_threads(node):
        return True
    store = single_store(node.schedule_block)
    if store is None or store.tensor.memory_type is not MemoryType.LOCAL:
        return False
    return not getattr(store.tensor, "array_dims", ())


# ---- blocks that combine across threads ---------------------------------------------------


def _clamp_cross_thread_blocks(func: LoweredFunc) -> LoweredFunc:
    """Every block holding a cross-thread Reduce (or storing a register temp, see
    `_needs_clamp`) whose iter values the enclosing loops may carry out of range gets
    them clamped instead, so that `insert_bound_guards` proves them in range and puts no
    `if` around the combine, whose barriers wait for every thread of the block. A thread
    past the end then computes an element in range and stores it again, bit for bit the
    value its owner stores: the threads that combine share their iter values (a loop
    bound to the combine's axis cannot enclose the block), so they fold the same element.

    The clamp is of the block's element as a whole, not of each iter value alone
    (`clamped_iter_values`): a row cache (`cache_read`) clamps the fused row
    `min(row, rows - 1)`, so a warp past the last row holds the last row's values, and
    the block must then name that row too. Clamping `(r / 3, r % 3)` dim by dim would
    name `(1, 0)` for r = 6 of 6 rows and store the last row's sum there."""
    body = _Clamper().visit(func.body)
    if body is func.body:
        return func
    return LoweredFunc(func.name, func.args, body, func.temp_buffers)


class _Clamper(ScopedStmtMutator):
    """Clamps the iter values of the blocks that combine across threads or store a
    register temp."""

    def visit_IfThenElse(self, node: IfThenElse) -> Stmt:
        clamped = self._clamp_symbolic_guard(node)
        return super().visit_IfThenElse(node) if clamped is None else clamped

    def _clamp_symbolic_guard(self, node: IfThenElse) -> Stmt | None:
        """A symbolic extent's guard right around a block that needs the clamp
        (`split(..., guard_at_block=True)` of symbolic outputs, `o * 32 + lane < K`):
        its iter var ranges are no numbers to clamp to, so the guard itself is turned
        into the clamp. The thread var `lane` of the guarded index is replaced in the
        block's iter values by `min(lane, K - 1 - o * 32)`: a lane past the end names the
        last element, and reaches the combine's barriers with the others. Only where the
        loops prove `o * 32 <= K - 1` (at the dims being compiled); else None, and the
        guard stays (codegen then refuses a combine under it)."""
        cond = node.condition
        inner = unwrap(node.true_case)
        if node.false_case is not None or not isinstance(cond, e.LT):
            return None
        if not isinstance(inner, ScheduleBlockRealize) or not _needs_clamp(inner):
            return None
        if isinstance(cond.b, IntImm):
            return None  # constant ranges: the clamp of the iter values below
        names = var_names(cond.a)
        for loop in self.loops:
            axis = loop.bind_info
            var = loop.loop_var
            if axis is None or not axis.value.startswith("thread") or var.name not in names:
                continue
            rest = simplify(cond.a - var)
            if var.name in var_names(rest):
                continue  # the thread var is not a term of its own
            last = simplify(cond.b - IntImm(1, cond.b.dtype) - rest)
            domain = IndexDomain(self.loops, self.guards, [last])
            if not domain.always(last.ge(IntImm(0, last.dtype))):
                return None
            mapping = {var.name: e.Min(var, last)}
            values = [simplify(substitute(v, mapping)) for v in inner.iter_values]
            return ScheduleBlockRealize(values, inner.schedule_block)
        return None

    def visit_ScheduleBlockRealize(self, node: ScheduleBlockRealize) -> Stmt:
        if node.schedule_block.name == "root":
            return self.generic_visit(node)
        if not _needs_clamp(node):
            return node
        domain = IndexDomain(self.loops, self.guards, node.iter_values)
        values = clamped_iter_values(node.schedule_block.iter_vars, node.iter_values, domain)
        if all(a is b for a, b in zip(values, node.iter_values, strict=True)):
            return node
        return ScheduleBlockRealize(values, node.schedule_block)


def clamped_iter_values(
    iter_vars: Sequence[Var], values: Sequence[e.Expr], domain: IndexDomain
) -> list[e.Expr]:
    """`values` (bound to `iter_vars`) where every point of `domain` names an element in
    range: unchanged where `domain` proves them in range; else, for iter vars over
    `[0, extent)`, the row-major offset of the element clamped to `[0, count - 1]` and
    split back into its dims, so that a point past the end names the last element (as a
    row cache's `min(row, rows - 1)` does); iter vars with another range are clamped
    one by one."""
    values = list(values)
    out = [
        i
        for i, (iv, value) in enumerate(zip(iter_vars, values, strict=True))
        if not _in_range(iv, value, domain)
    ]
    if not out:
        return values
    extents = [iv.upper if iv.lower in (None, 0) else None for iv in iter_vars]
    if len(values) == 1 or any(n is None for n in extents):
        for i in out:
            values[i] = _clamp_one(iter_vars[i], values[i], domain)
        return values
    dtype = values[0].dtype
    strides = [math.prod(extents[k + 1 :]) for k in range(len(extents))]
    offset: e.Expr = IntImm(0, dtype)
    for value, stride in zip(values, strides, strict=True):
        value = value if value.dtype is dtype else e.Cast(dtype, value)
        offset = offset + value * IntImm(stride, dtype)
    offset = simplify(offset)
    count = math.prod(extents)
    if not domain.always(offset.ge(IntImm(0, dtype))):
        offset = e.Max(offset, IntImm(0, dtype))
    if not domain.always(offset.le(IntImm(count - 1, dtype))):
        offset = e.Min(offset, IntImm(count - 1, dtype))
    clamped = []
    for k, value in enumerate(values):
        if extents[k] == 1:
            part: e.Expr = IntImm(0, dtype)
        else:
            part = offset if strides[k] == 1 else e.Div(offset, IntImm(strides[k], dtype))
            if k > 0:
                part = e.Mod(part, IntImm(extents[k], dtype))
        part = simplify(part)
        clamped.append(part if part.dtype is value.dtype else e.Cast(value.dtype, part))
    return clamped


def _in_range(iv: Var, value: e.Expr, domain: IndexDomain) -> bool:
    if iv.lower is not None and not domain.always(value.ge(IntImm(iv.lower, value.dtype))):
        return False
    return iv.upper is None or domain.always(value.le(IntImm(iv.upper - 1, value.dtype)))


def _clamp_one(iv: Var, value: e.Expr, domain: IndexDomain) -> e.Expr:
    """`value` clamped into `iv`'s range where `domain` does not prove it in range."""
    if iv.lower is not None:
        lower = IntImm(iv.lower, value.dtype)
        if not domain.always(value.ge(lower)):
            value = e.Max(value, lower)
    if iv.upper is not None:
        last = IntImm(iv.upper - 1, value.dtype)
        if not domain.always(value.le(last)):
            value = e.Min(value, last)
    return value
