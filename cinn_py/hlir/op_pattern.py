"""Op pattern kinds and reduction patterns: what fusion and the group schedule ask of an op.

`OpPatternKind` is CINN's classification (`paddle/cinn/hlir/framework/op.h`, defined in
`pir/traits.py`), read from the pattern of the op's entry. argmax / argmin are
NonFusible in Paddle but compile here as index-carrying reductions, so their entries
say REDUCTION.

`ReducePattern` is what a reduction computes per "row": its input shape S and the
reduced dims A. The kept dims index the rows, the reduced dims the columns of a row.
A group's schedule (one thread block per row) is valid when every value in the group
that depends on a reduction result is *full* (shape S, read at its own element) or a
*row* value (S with A set to 1, or S without A: one element per row), and every
reduction-dependent operand is read at the consumer's own row (`row_aligned`).
`cinn_py/hlir/grouping.py` merges groups only when that holds; docs/FUSION.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cinn_py.ir.row_pattern import RowPattern
from cinn_py.pir.constant import constant_of
from cinn_py.pir.op_def import REQUIRED, attr_value
from cinn_py.pir.operation import Operation
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import DenseTensorType


def op_pattern_kind(op: Operation) -> OpPatternKind:
    """The op's kind: its entry's pattern; NON_FUSIBLE for ops with a side effect, ops
    without a pattern and undeclared ops."""
    op_def = op.op_def
    if op_def is None or op_def.pattern is None or op_def.has_trait(Trait.SIDE_EFFECT):
        return OpPatternKind.NON_FUSIBLE
    return op_def.pattern


@dataclass(frozen=True)
class ReducePattern(RowPattern):
    """What a reduction group computes per 'row': input shape S, reduced dims A (sorted,
    normalized, may be any dims, not only trailing). The shape facts (kept, rows, cols,
    keepdim / dropped row forms, innermost, `is_row`) are the group schedule's
    `RowPattern`, so the schedule takes a group's pattern as it is; this adds what
    fusion asks (`is_full`, `row_aligned`)."""

    @classmethod
    def of(cls, shape: tuple[int, ...] | list[int], axes: tuple[int, ...] | list[int]):
        """The pattern of reducing `axes` (non-negative) of `shape`."""
        return cls(tuple(shape), tuple(axes))

    def is_full(self, shape: tuple[int, ...]) -> bool:
        """A value with one element per input element."""
        return tuple(shape) == self.shape

    def row_aligned(self, operand_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> bool:
        """Whether numpy's right-aligned broadcast of a reduction-dependent operand into
        `out_shape` (full or row form) reads the operand at the consumer's own row.

        The operand is padded on the left with 1s to the output's rank. Into a full
        output: a full operand (elementwise), or one with 1 at every reduced dim and S's
        extent at every kept dim (the keepdim row, or a dropped row whose dims happen to
        line up, as for a reduction over leading dims). Into a row output: the padded
        operand equals the output shape."""
        operand, out = tuple(operand_shape), tuple(out_shape)
        if len(operand) > len(out):
            return False
        padded = (1,) * (len(out) - len(operand)) + operand
        if self.is_full(out):
            if padded == self.shape:
                return True
            return all(padded[d] == 1 for d in self.axes) and all(
                padded[d] == self.shape[d] for d in self.kept
            )
        if self.is_row(out):
            return padded == out
        return False

    def __str__(self) -> str:
        shape = "x".join(str(d) for d in self.shape) or "0-D"
        return f"reduce {shape} over {list(self.axes)}"


def static_shape(value) -> tuple[int, ...] | None:
    """A tensor value's dims when all are known, else None."""
    type_ = getattr(value, "type", None)
    if not isinstance(type_, DenseTensorType) or any(d < 0 for d in type_.dims):
        return None
    return tuple(type_.dims)


def static_numel(value) -> int | None:
    """A tensor value's element count when all its dims are known, else None."""
    shape = static_shape(value)
    return None if shape is None else math.prod(shape)


def reduce_pattern(op: Operation) -> ReducePattern | None:
    """The pattern of a reduction op (sum, mean, max, min, prod, all, any, argmax,
    argmin) with a static input shape, axes picked as the lowering and the reference
    pick them; None for any other op, a 0-D input, a dynamic shape or axes unknown
    before run time."""
    op_def = op.op_def
    if op_def is None or not (op_def.traits & _REDUCTION_TRAITS):
        return None
    x = op.operand_value(0) if op.num_operands else None
    shape = static_shape(x)
    if not shape:  # None (unknown) or () (a 0-D input reduces to itself)
        return None
    rank = len(shape)
    if op_def.has_trait(Trait.ARG_REDUCTION):
        if _attr(op, "flatten"):
            return ReducePattern.of(shape, range(rank))
        axis = _mutable(op, 1, "axis")
        if isinstance(axis, list):
            if len(axis) != 1:
                return None
            axis = axis[0]
        axes = [axis] if axis is not None else None
    elif op_def.has_trait(Trait.AXIS_ATTRIBUTE_REDUCTION):
        axes = _attr(op, "axis")
    else:
        axes = _mutable(op, 1, "axis")
        if axes is not None and not isinstance(axes, list):
            axes = [axes]
        if op_def.attr_spec("reduce_all") and _attr(op, "reduce_all"):
            axes = []
    if axes is None:
        return None
    if not axes:
        return ReducePattern.of(shape, range(rank))
    normalized = set()
    for a in axes:
        a = int(a)
        if not -rank <= a < rank:
            return None
        normalized.add(a % rank)
    return ReducePattern.of(shape, sorted(normalized))


def _attr(op: Operation, name: str) -> object:
    """The op's attribute `name`, else its declared default (None for a required one
    that is missing)."""
    value = attr_value(op.op_def, op.attributes, name)
    return None if value is REQUIRED else value


_REDUCTION_TRAITS = frozenset(
    {Trait.ARG_REDUCTION, Trait.AXIS_OPERAND_REDUCTION, Trait.AXIS_ATTRIBUTE_REDUCTION}
)


def is_reduction(op: Operation) -> bool:
    """A reduction op lowering generates (sum, mean, max, min, prod, all, any, argmax,
    argmin): its entry names where its axes come from. Grouping puts each in a FUSED
    group of its own."""
    op_def = op.op_def
    return op_def is not None and bool(op_def.traits & _REDUCTION_TRAITS)


def is_arg_reduction(op: Operation) -> bool:
    op_def = op.op_def
    return op_def is not None and op_def.has_trait(Trait.ARG_REDUCTION)


def is_reshape(op: Operation) -> bool:
    op_def = op.op_def
    return op_def is not None and op_def.has_trait(Trait.RESHAPE)


def _mutable(op: Operation, index: int, name: str):
    """A mutable attribute: the folded attribute, else the constant its operand holds,
    else None (known only at run time)."""
    if name in op.attributes:
        return op.attr(name)
    value = op.operand_value(index) if index < op.num_operands else None
    return None if value is None else constant_of(value)
