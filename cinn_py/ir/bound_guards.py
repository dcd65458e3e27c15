"""Bounds guards: an `if` around each schedule block instance that could run out of range.

Schedules are free to cover more points than a block has: `split(100, [-1, 32])`
makes 4 x 32 = 128 iterations for 100 elements, and a launch configuration shared by
blocks of different sizes runs the smaller ones over the larger one's grid. Each
block's iter vars carry their range (`lower <= iv < upper`); this pass asks isl, for
every iter var, whether its bound value stays in that range at every point of the
enclosing loops (and `if`s), and guards the block instance with exactly the
conditions it cannot prove:

    serial for (i_0, 0, 4)
      serial for (i_1, 0, 32)
        if (((i_0 * 32) + i_1) < 100) {
          ScheduleBlock(var_1) { i0 = axis.bind(((i_0 * 32) + i_1)) ... }
        }

An exact split or fuse gets no guard. The conditions are the iter values as bound
(`value >= lower`, then `value < upper`, iter var by iter var), And-ed. Because
enclosing `if`s constrain the domain, running the pass twice adds nothing.

Loop bounds that are not affine in the enclosing loop vars (a Load, a product of
variables) leave their loop var unconstrained, so conditions over it are never
proven and the guard is kept: conservative, never wrong. Symbolic sizes (Vars no loop
defines) are dimensions bounded by their Var's `lower` / `upper` where known.
"""

from __future__ import annotations

import functools

from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.isl_domain import IndexDomain
from cinn_py.ir.visitor import Mutator


def insert_bound_guards(func: s.LoweredFunc) -> s.LoweredFunc:
    """`func` with every schedule block instance that may leave its iter vars' ranges
    wrapped in `IfThenElse(cond, realize)`; the same object when none needs one."""
    body = _Guarder().visit(func.body)
    if body is func.body:
        return func
    return s.LoweredFunc(func.name, func.args, body, func.temp_buffers)


def guard_conditions(
    realize: s.ScheduleBlockRealize, loops: list[s.For], guards: list[e.Expr]
) -> list[e.Expr]:
    """The range conditions of `realize`'s iter vars that do not hold everywhere in the
    domain of `loops` (outermost first) under `guards`, in iter var order."""
    block = realize.schedule_block
    wanted: list[e.Expr] = []
    for iv, value in zip(block.iter_vars, realize.iter_values, strict=True):
        if iv.lower is not None:
            wanted.append(value.ge(e.IntImm(iv.lower, value.dtype)))
        if iv.upper is not None:
            wanted.append(value.lt(e.IntImm(iv.upper, value.dtype)))
    if not wanted:
        return []
    domain = IndexDomain(loops, guards, realize.iter_values)
    return [c for c in wanted if not domain.always(c)]


class ScopedStmtMutator(Mutator):
    """Walks statements keeping the enclosing loops and `if` conditions in scope (what
    an `IndexDomain` of a block instance is built from); expressions are left alone."""

    def __init__(self) -> None:
        self.loops: list[s.For] = []
        self.guards: list[e.Expr] = []

    def visit(self, node: e.IrNode) -> e.IrNode:
        # Expressions hold no statements: nothing to guard inside them.
        return node if isinstance(node, e.Expr) else super().visit(node)

    def visit_For(self, node: s.For) -> s.Stmt:
        self.loops.append(node)
        try:
            body = self.visit(node.body)
        finally:
            self.loops.pop()
        if body is node.body:
            return node
        return s.For(node.loop_var, node.min, node.extent, node.for_type, body, node.bind_info)

    def visit_IfThenElse(self, node: s.IfThenElse) -> s.Stmt:
        true_case = self._under(node.condition, node.true_case)
        false_case = node.false_case
        if false_case is not None:
            false_case = self._under(e.Not(node.condition), false_case)
        if true_case is node.true_case and false_case is node.false_case:
            return node
        return s.IfThenElse(node.condition, true_case, false_case)

    def _under(self, condition: e.Expr, stmt: s.Stmt | e.Expr) -> s.Stmt | e.Expr:
        self.guards.append(condition)
        try:
            return self.visit(stmt)
        finally:
            self.guards.pop()


class _Guarder(ScopedStmtMutator):
    """Wraps each block instance that may leave its iter vars' ranges in an `if`."""

    def visit_ScheduleBlockRealize(self, node: s.ScheduleBlockRealize) -> s.Stmt:
        block = node.schedule_block
        body = self.visit(block.body)
        realize = node
        if body is not block.body:
            new_block = s.ScheduleBlock(
                block.iter_vars,
                block.read_buffers,
                block.write_buffers,
                block.name,
                body,
                block.attrs,
            )
            realize = s.ScheduleBlockRealize(node.iter_values, new_block)
        conditions = guard_conditions(node, self.loops, self.guards)
        if not conditions:
            return realize
        return s.IfThenElse(functools.reduce(e.And, conditions), realize)
