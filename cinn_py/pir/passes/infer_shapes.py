"""Specialise a program to concrete shapes: every -1 dim resolved, every type re-inferred.

Kernels are generated for static shapes, so before lowering the compiler gives each
`pd_op.data` the shape of its feed and re-runs every op's `infer_meta` in program order.
Re-inferring also repairs the result types Paddle itself declares wrongly: where an op
declares `computed_meta` (matmul's batch broadcasting) that is what is inferred, so
types say what the kernels compute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cinn_py.errors import FeedError, ShapeError
from cinn_py.pir.op_def import InferContext, make_attribute
from cinn_py.pir.operation import Operation
from cinn_py.pir.printer import print_type
from cinn_py.pir.program import Program
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type


def specialize_shapes(
    program: Program, feed_shapes: Mapping[str, Sequence[int]] | None = None
) -> Program:
    """A clone of `program` with the feeds' shapes (by `pd_op.data` name) and every result
    type inferred from them. A feed shape that contradicts a declared static dim raises
    FeedError; a dim still unknown afterwards (a data op with -1 dims and no shape given)
    raises ShapeError."""
    shapes = dict(feed_shapes or {})
    copy = program.clone()
    for op in copy.block:
        if op.name == "pd_op.data":
            _specialize_data(op, shapes)
            continue
        op_def = op.op_def
        if op_def is None or op_def.infer_meta is None or op.name in _DECLARED_TYPES:
            continue
        infer = op_def.computed_meta or op_def.infer_meta
        types = infer(InferContext.of(op))
        for result, type_ in zip(op.results, types, strict=True):
            result.type = type_
    return copy


_DECLARED_TYPES = frozenset({"builtin.parameter", "builtin.constant"})
"""Ops whose result type is given, not inferred (a parameter's type is its array's)."""


def has_dynamic_dims(program: Program) -> bool:
    """Whether any value of the program has a -1 dim (so it must be specialised per feed)."""
    return any(_is_dynamic(r.type) for op in program.block for r in op.results)


def _is_dynamic(type_: Type) -> bool:
    if isinstance(type_, DenseTensorType):
        return DYNAMIC in type_.dims
    return any(_is_dynamic(t) for t in getattr(type_, "types", ()))


def _specialize_data(op: Operation, shapes: dict[str, Sequence[int]]) -> None:
    name = op.attr("name")
    declared = op.result(0).tensor_type
    given = shapes.get(name)
    if given is None:
        if DYNAMIC in declared.dims:
            raise ShapeError(
                f"pd_op.data '{name}' is declared {print_type(declared)}: "
                "its -1 dims need a feed shape to compile"
            )
        return
    dims = tuple(int(d) for d in given)
    fits = len(dims) == declared.rank and all(
        d == DYNAMIC or d == g for d, g in zip(declared.dims, dims, strict=True)
    )
    if not fits:
        raise FeedError(name, f"shape {_fmt(declared.dims)}", f"shape {_fmt(dims)}")
    op.set_attribute("shape", make_attribute("int_array", list(dims)))
    op.result(0).type = declared.with_dims(dims)


def _fmt(dims: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"
