"""Sorting: argsort (which `paddle.sort` prints too: Paddle 3.3.1 has no pd_op.sort) and
topk. Library ops: compiled targets run them by their reference kernels.

Both give the values and their int64 indices. The order follows Paddle 3.3.1's CPU
kernels, probed: NaN counts as larger than every number (last ascending, first
descending, and `topk(largest=True)` takes NaN first), and equal values come in index
order, descending too (a stable sort, which is what Paddle's gives on short rows and for
`stable=True`; on long rows its std::sort / std::partial_sort order ties in an order of
its own, which a program cannot rely on). `topk(sorted=False)` returns them sorted, one
of the orders Paddle allows.
"""

from __future__ import annotations

import numpy as np

from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import BoolAttribute, Int32Attribute
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, Scalar, attr, operand
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import DYNAMIC, Type
from cinn_py.reference_ops.context import KernelContext


def stable_order(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Indices sorting `x` along `axis`: ties in index order, NaN as the largest value."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # Sorting the reversed row ascending and reversing the result keeps NaN first and
    # equal values in index order, with no negation (which would overflow INT_MIN).
    n = x.shape[axis]
    flipped = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    return n - 1 - flipped


def _axis(ctx: InferContext | KernelContext, rank: int) -> int:
    axis = ctx.attr("axis")
    if rank == 0 and axis in (-1, 0):
        return 0
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range [{-rank}, {rank}) for a rank-{rank} x")
    return axis % rank


# -- argsort ------------------------------------------------------------------------------


def _infer_argsort(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    _axis(ctx, x.rank)
    return [x, x.with_dtype(DataType.INT64)]


def _argsort_kernel(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
    x = ctx.tensor(0)
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    axis = _axis(ctx, x.ndim)
    order = stable_order(x, axis, ctx.attr("descending"))
    return np.take_along_axis(x, order, axis), order.astype(np.int64)


# -- topk ---------------------------------------------------------------------------------


def _infer_topk(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    k = im.int_scalar(ctx, "k")
    if x.rank == 0:
        return [x, x.with_dtype(DataType.INT64)]
    axis = _axis(ctx, x.rank)
    size = x.dims[axis]
    if k is not None and (k < 0 or (size != DYNAMIC and k > size)):
        raise ctx.error(f"k {k} is out of range [0, {size}] for axis {axis} of {im.fmt(x.dims)}")
    dims = list(x.dims)
    dims[axis] = DYNAMIC if k is None else k
    out = x.with_dims(dims)
    return [out, out.with_dtype(DataType.INT64)]


def _topk_kernel(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
    x = ctx.tensor(0)
    k = int(ctx.scalar(1, "k"))
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    axis = _axis(ctx, x.ndim)
    if not 0 <= k <= x.shape[axis]:
        raise ctx.shape_error(f"k {k} is out of range [0, {x.shape[axis]}] for axis {axis}")
    order = stable_order(x, axis, descending=ctx.attr("largest"))
    order = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, order, axis), order.astype(np.int64)


OPS = [
    OpDef(
        "pd_op.argsort",
        operands=(operand("x"),),
        attributes=(
            attr("axis", Int32Attribute, -1),
            attr("descending", BoolAttribute, False),
            attr("stable", BoolAttribute, False),
        ),
        results=("out", "indices"),
        pattern=OpPatternKind.NON_FUSIBLE,
        infer_meta=_infer_argsort,
        kernel=_argsort_kernel,
        symbolic_meta=sym.same_as_first,
    ),
    OpDef(
        "pd_op.topk",
        operands=(operand("x"), operand("k", mutable_attr="k", mutable_kind=Scalar)),
        attributes=(
            attr("axis", Int32Attribute, -1),
            attr("largest", BoolAttribute, True),
            attr("sorted", BoolAttribute, True),
        ),
        results=("out", "indices"),
        pattern=OpPatternKind.NON_FUSIBLE,
        infer_meta=_infer_topk,
        kernel=_topk_kernel,
        symbolic_meta=sym.topk_shape,
    ),
]
