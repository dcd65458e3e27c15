"""Reduction programs for the group schedules' tests: sibling reductions of one input
over one pattern (one fused group), and that group lowered with its reduce pattern."""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program


def reduction(
    shape: Sequence[int],
    axes: Sequence[int],
    keepdim: bool = False,
    dtype: DataType = DataType.FLOAT32,
    ops: Sequence[str] = ("sum",),
    exp: bool = False,
) -> Program:
    """x (shape, dtype) [-> exp] -> each op of `ops` over `axes`: sibling reductions of
    one pattern, one group."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    if exp:
        x = b.op("pd_op.exp", x)
    for op in ops:
        if op in ("all", "any"):
            b.op(f"pd_op.{op}", x, axis=list(axes), keepdim=keepdim)
        else:
            extra = {"dtype": DataType.UNDEFINED} if op == "sum" else {}
            axes_value = b.op("pd_op.full_int_array", value=list(axes))
            b.op(f"pd_op.{op}", x, axes_value, keepdim=keepdim, **extra)
    return program


def softmax(shape: Sequence[int], dtype: DataType = DataType.FLOAT32) -> Program:
    """x (shape, dtype) -> pd_op.softmax over the last axis: a row group that reads its
    reductions back."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    b.op("pd_op.softmax", x, axis=-1)
    return program


def lowered(program: Program) -> tuple[LoweredFunc, RowPattern | None]:
    """The program's one group, after the default passes, lowered; and its pattern."""
    PassManager().run(program)
    (group,) = group_program(program)
    return lower_group(group, NameTable(program)), group.reduce_pattern
