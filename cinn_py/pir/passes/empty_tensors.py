"""Empty tensors fold away: an op whose every result has a zero-size dim becomes one
`pd_op.full` per result (with the result's type), so nothing downstream computes them.

An empty tensor holds no values, so any op producing only empty tensors is a constant
whatever its operands hold. Folding such ops first keeps every later stage free of
empty-tensor cases that have nothing to compute but plenty to trip over: a softmax of
a [3, 0] batch decomposes into a max over an empty axis (which has no value), a
layer_norm of [0, 8] into reductions of zero rows whose register temps no schedule
places. Paddle gives empty results for all of these; so do the folded fulls.

An op with a non-empty result is left alone even if it reads empty tensors: a sum over
an empty axis is its identity (zeros), a max over one is an error the op reports
itself. Feeds (`pd_op.data`), parameters, the ops that declare outputs and the vector
ops (`builtin.combine` / `split`) stay; their values are not dense tensors or are not
the program's to replace. Dynamic dims are not known to be empty: the compiler runs
the pass again after `specialize_shapes` has made them concrete.
"""

from __future__ import annotations

from cinn_py.pir.builder import Builder
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import replace_value
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait
from cinn_py.pir.types import DYNAMIC, DenseTensorType


def fold_empty_tensors(program: Program) -> int:
    """Replace every op whose results are all empty dense tensors by fulls; returns how
    many ops were replaced (the ops they read are left to dead-code elimination)."""
    folded = 0
    for op in list(program.block):
        if _all_results_empty(op):
            _replace_by_fulls(program, op)
            folded += 1
    return folded


def _all_results_empty(op: Operation) -> bool:
    op_def = op.op_def
    if op_def is not None and op_def.has_trait(Trait.KEEPS_EMPTY):
        return False
    if op.regions or not op.results:
        return False
    for result in op.results:
        type_ = result.type
        if not isinstance(type_, DenseTensorType) or DYNAMIC in type_.dims:
            return False
        if 0 not in type_.dims:
            return False
    return True


def _replace_by_fulls(program: Program, op: Operation) -> None:
    builder = Builder(program)
    builder.set_insertion_point(op)
    builder.loc = op.loc
    for result in op.results:
        type_ = result.type
        attributes: dict[str, object] = {
            "shape": list(type_.dims),
            "value": 0.0,
            "dtype": type_.data_type,
        }
        if "stop_gradient" in op.attributes:
            attributes["stop_gradient"] = [True]
        full = builder.create("pd_op.full", (), attributes)
        replace_value(program, result, full.result())
    op.erase()
