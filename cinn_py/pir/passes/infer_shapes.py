"""Specialise a program to concrete shapes: every -1 dim resolved, every type re-inferred.

Kernels are generated for static shapes, so before lowering the compiler gives each
`pd_op.data` the shape of its feed and re-runs every op's `infer_meta` in program order.
Re-inferring also repairs the one result type Paddle itself declares wrongly:
Paddle 3.3.1's matmul takes the batch dims of the longer operand instead of
broadcasting them (`[2,1,3,4] @ [5,4,6]` is declared `2x1x3x6`, the kernel computes
`2x5x3x6`), so matmul's batch dims are broadcast here as its kernel does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cinn_py.errors import FeedError, ShapeError
from cinn_py.pir.dialects.pd_op import infer_meta as im
from cinn_py.pir.op_def import InferContext
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
        ctx = InferContext.of(op)
        types = _infer_matmul(ctx) if op.name == "pd_op.matmul" else op_def.infer_meta(ctx)
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
    op.set_attribute("shape", list(dims))
    op.result(0).type = declared.with_dims(dims)


def _fmt(dims: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def _infer_matmul(ctx: InferContext) -> list[Type]:
    """matmul's result with its batch dims broadcast (numpy.matmul's rule, what the
    kernel computes), unlike Paddle's declared type."""
    x, y = ctx.tensor("x"), ctx.tensor("y")
    op_def = ctx.op_def
    (declared,) = op_def.infer_meta(ctx)
    if x.rank < 3 and y.rank < 3:
        return [declared]
    xd = (1,) + x.dims if x.rank == 1 else x.dims
    yd = y.dims + (1,) if y.rank == 1 else y.dims
    batch = im.broadcast_shapes(ctx, xd[:-2], yd[:-2])
    kept = (x.rank > 1) + (y.rank > 1)  # m and n, unless an operand was a vector
    tail = declared.dims[declared.rank - kept :]
    return [declared.with_dims(tuple(batch) + tuple(tail))]
