"""Ops that make tensors from attributes (full, full_like, full_int_array) and assign.

A constant is converted as `np.full` converts it (`scalar.const`): rounded to a float
dtype, truncated for integers (2.7 -> 2), nonzero for bool. full_like reads only its
operand's shape, never its data.
"""

from __future__ import annotations

from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering
from cinn_py.hlir.op_lowering.scalar import const
from cinn_py.ir.expr import EQ, Expr, IntImm, Select


def _filled(ctx: LowerContext, value: float) -> Compute:
    dtype = ctx.out_dtype()
    constant = const(value, dtype)
    return Compute(dtype, ctx.out_shape(), lambda idx: constant)


def _full(ctx: LowerContext) -> Compute:
    return _filled(ctx, ctx.attr("value"))


def _full_like(ctx: LowerContext) -> Compute:
    return _filled(ctx, ctx.scalar(1, "value"))


def _full_int_array(ctx: LowerContext) -> Compute:
    """A 1-D tensor of the listed values: a select on the index."""
    dtype = ctx.out_dtype()
    values = [const(v, dtype) for v in ctx.attr("value")]

    def element(idx: Indices) -> Expr:
        (i,) = idx
        result = values[-1]
        for position in range(len(values) - 2, -1, -1):
            result = Select(EQ(i, IntImm(position, i.dtype)), values[position], result)
        return result

    return Compute(dtype, ctx.out_shape(), element)


def _assign(ctx: LowerContext) -> Compute:
    return ctx.input(0)


LOWERINGS: dict[str, OpLowering] = {
    "pd_op.full": OpLowering(_full),
    "pd_op.full_like": OpLowering(_full_like),
    "pd_op.full_int_array": OpLowering(_full_int_array),
    "pd_op.assign": OpLowering(_assign),
}
