"""Op pattern kinds and reduction patterns: what fusion and the group schedule ask of an op.

`OpPatternKind` is CINN's classification (`paddle/cinn/hlir/framework/op.h`), read from
the one pattern trait every pd_op declaration carries (`pir/dialects/pd_op/traits.py`).
argmax / argmin are declared NonFusible (Paddle's kernels) but compile here as
index-carrying reductions, so they are REDUCTION.

`ReducePattern` is what a reduction computes per "row": its input shape S and the
reduced dims A. The kept dims index the rows, the reduced dims the columns of a row.
A group's schedule (one thread block per row) is valid when every value in the group
that depends on a reduction result is *full* (shape S, read at its own element) or a
*row* value (S with A set to 1, or S without A: one element per row), and every
reduction-dependent operand is read at the consumer's own row (`row_aligned`).
`cinn_py/hlir/grouping.py` merges groups only when that holds; docs/FUSION.md.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from cinn_py.ir.row_pattern import RowPattern
from cinn_py.pir.constant import constant_of
from cinn_py.pir.dialects.pd_op import traits as pd_traits
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DenseTensorType


class OpPatternKind(enum.Enum):
    """CINN's op pattern kinds, weakest coupling first."""

    ELEMENTWISE = "ElementWise"
    """out[i] depends on in[i] only (numpy broadcasting of operands allowed)."""
    BROADCAST = "Broadcast"
    """out[i] reads in[f(i)], f dropping or clamping dims (expand)."""
    INJECTIVE = "Injective"
    """out[i] reads one input element at an index computed from i (reshape, transpose, ...)."""
    REDUCTION = "Reduction"
    """out[i] combines the input elements along the reduced dims (sum, max, argmax, ...)."""
    OUT_FUSIBLE = "OutFusible"
    """A composite with its own schedule (matmul, softmax kept whole)."""
    NON_FUSIBLE = "NonFusible"
    """Fuses with nothing (data, fetch, random ops, scans, undeclared ops)."""


_BY_TRAIT = {kind.value: kind for kind in OpPatternKind}

VECTOR_OPS = frozenset({"builtin.combine", "builtin.split", "builtin.slice"})
"""Glue that packs or unpacks Tensor[] values: moves no data, so Injective."""

ARG_REDUCTIONS = frozenset({"pd_op.argmax", "pd_op.argmin"})
"""Index-carrying reductions (axis a Scalar operand, `flatten`, `keepdims`)."""

AXIS_OPERAND_REDUCTIONS = frozenset(
    {"pd_op.sum", "pd_op.mean", "pd_op.max", "pd_op.min", "pd_op.prod"}
)
"""Reductions whose axes are a mutable IntArray operand (folded to attribute `axis`)."""

AXIS_ATTRIBUTE_REDUCTIONS = frozenset({"pd_op.all", "pd_op.any"})
"""Reductions whose axes are a plain `axis` attribute."""

RESHAPES = frozenset({"pd_op.reshape", "pd_op.squeeze", "pd_op.unsqueeze", "pd_op.flatten"})
"""Injective ops that only relabel dims: one taking a row form to a row form keeps every
element at its row."""


def op_pattern_kind(op: Operation) -> OpPatternKind:
    """The op's kind: builtin combine / split / slice are INJECTIVE, argmax / argmin
    REDUCTION, a declared op its pattern trait, anything else (glue, undeclared ops)
    NON_FUSIBLE."""
    if op.name in VECTOR_OPS:
        return OpPatternKind.INJECTIVE
    if op.name in ARG_REDUCTIONS:
        return OpPatternKind.REDUCTION
    op_def = op.op_def
    if op_def is None or pd_traits.SIDE_EFFECT in op_def.traits:
        return OpPatternKind.NON_FUSIBLE
    for trait in op_def.traits:
        kind = _BY_TRAIT.get(trait)
        if kind is not None:
            return kind
    return OpPatternKind.NON_FUSIBLE


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


def reduce_pattern(op: Operation) -> ReducePattern | None:
    """The pattern of a reduction op (sum, mean, max, min, prod, all, any, argmax,
    argmin) with a static input shape, axes picked as the lowering and the reference
    pick them; None for any other op, a 0-D input, a dynamic shape or axes unknown
    before run time."""
    if op.name not in AXIS_OPERAND_REDUCTIONS | AXIS_ATTRIBUTE_REDUCTIONS | ARG_REDUCTIONS:
        return None
    x = op.operand_value(0) if op.num_operands else None
    shape = static_shape(x)
    if not shape:  # None (unknown) or () (a 0-D input reduces to itself)
        return None
    rank = len(shape)
    if op.name in ARG_REDUCTIONS:
        if op.attr("flatten", False):
            return ReducePattern.of(shape, range(rank))
        axis = _mutable(op, 1, "axis")
        if isinstance(axis, list):
            if len(axis) != 1:
                return None
            axis = axis[0]
        axes = [axis] if axis is not None else None
    elif op.name in AXIS_ATTRIBUTE_REDUCTIONS:
        axes = op.attr("axis", [])
    else:
        axes = _mutable(op, 1, "axis")
        if axes is not None and not isinstance(axes, list):
            axes = [axes]
        if op.attr("reduce_all", False):
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


def _mutable(op: Operation, index: int, name: str):
    """A mutable attribute: the folded attribute, else the constant its operand holds,
    else None (known only at run time)."""
    if name in op.attributes:
        return op.attr(name)
    value = op.operand_value(index) if index < op.num_operands else None
    return None if value is None else constant_of(value)
