"""Constant folding: an elementwise op all of whose operands are `pd_op.full` becomes
one `pd_op.full`.

Decomposition writes constants as 0-D fulls and Paddle's own programs cast and scale
them (`full(2) -> cast -> scale`); folding such chains leaves one constant that the
lowering can inline. The value is computed by the reference kernel of the op itself,
so the folded constant is exactly what running the op gives, and it is folded only
when a `full` reproduces that result bit for bit (a static shape, a finite value that a
double holds exactly); otherwise the op stays. Ops are visited in program order, so a
chain folds in one run. The now-unused fulls are left to dead-code elimination.
"""

from __future__ import annotations

import numpy as np

from cinn_py.pir.builder import Builder
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import replace_value
from cinn_py.pir.program import Program
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import DYNAMIC, DenseTensorType
from cinn_py.reference import run_op


def fold_constants(program: Program) -> int:
    """Fold every elementwise op on fulls into a full; returns how many were folded."""
    folded = 0
    for op in list(program.block):
        if _foldable(op) and _fold(program, op):
            folded += 1
    return folded


def _foldable(op: Operation) -> bool:
    op_def = op.op_def
    if op_def is None or op_def.pattern is not OpPatternKind.ELEMENTWISE:
        return False
    if op_def.has_trait(Trait.NOT_FOLDED) or op_def.kernel is None:
        return False
    if op.regions or op.num_results != 1:
        return False
    type_ = op.result().type
    if not isinstance(type_, DenseTensorType) or DYNAMIC in type_.dims:
        return False
    operands = [v for v in op.operand_values() if v is not None]
    return bool(operands) and all(
        v.defining_op is not None and v.defining_op.name == "pd_op.full" for v in operands
    )


def _fold(program: Program, op: Operation) -> bool:
    """Replace `op` by a full of its value, if one reproduces it exactly."""
    operands = [None if v is None else _value_of(v.defining_op) for v in op.operand_values()]
    (result,) = run_op(op, operands)
    if result.size == 0 or not np.all(np.isfinite(result)):
        return False
    return replace_by_constant(program, op, result, vectors=False) is not None


def replace_by_constant(
    program: Program, op: Operation, array: np.ndarray, *, vectors: bool = True
) -> Operation | None:
    """Replace single-result `op` by a constant producer that makes exactly `array`: a
    `pd_op.full_int_array` for a 1-D integer vector (when `vectors`), else a
    `pd_op.full` of a uniform value. None (and `op` kept) if neither reproduces it bit
    for bit. `specialize_shapes` folds evaluated shape computations with it too."""
    type_ = op.result().type
    builder = Builder(program)
    builder.set_insertion_point(op)
    builder.loc = op.loc
    attributes: dict[str, object] = {"dtype": type_.data_type}
    if "stop_gradient" in op.attributes:
        attributes["stop_gradient"] = op.attr("stop_gradient")
    if vectors and array.ndim == 1 and type_.data_type.is_integer:
        name = "pd_op.full_int_array"
        attributes["value"] = [int(v) for v in array]
    elif array.size > 0 and np.all(np.isfinite(array)):
        name = "pd_op.full"
        attributes["shape"] = list(type_.dims)
        attributes["value"] = float(array.reshape(-1)[0].item())
    else:
        return None
    constant = builder.create(name, (), attributes)
    if not _same_bits(_value_of(constant), array):
        constant.erase()
        return None
    replace_value(program, op.result(), constant.result())
    op.erase()
    return constant


def _value_of(full: Operation) -> np.ndarray:
    (array,) = run_op(full, [])
    return array


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
