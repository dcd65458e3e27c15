"""Broadcasting: reading a tensor at the indices of a larger output (binary ops, expand,
tile).

Dims align from the right (NumPy's and Paddle's rule); a dim of 1 facing a larger one
is read at index 0, so a [64, 1] operand of a [64, 128] result reads `x[i0, 0]`.
"""

from __future__ import annotations

from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering
from cinn_py.ir.expr import Expr, IntImm


def broadcast_indices(
    shape: tuple[int, ...], out_shape: tuple[int, ...], indices: Indices
) -> Indices:
    """The indices of a `shape` tensor broadcast to `out_shape`, read at `indices`."""
    offset = len(out_shape) - len(shape)
    out: list[Expr] = []
    for k, extent in enumerate(shape):
        index = indices[k + offset]
        out.append(IntImm(0, index.dtype) if extent == 1 else index)
    return tuple(out)


def broadcast_to(x: Compute, out_shape: tuple[int, ...]) -> Compute:
    """`x` read as a tensor of `out_shape`."""
    if x.shape == out_shape:
        return x
    return Compute(x.dtype, out_shape, lambda idx: x(broadcast_indices(x.shape, out_shape, idx)))


def _expand(ctx: LowerContext) -> Compute:
    return broadcast_to(ctx.input(0), ctx.out_shape())


def _tile(ctx: LowerContext) -> Compute:
    """Repeats: output index `i` reads `i % d` of a dim of size `d` (index 0 for d = 1);
    `x` gets leading dims of 1 up to the output's rank."""
    x, out_shape = ctx.input(0), ctx.out_shape()
    offset = len(out_shape) - x.rank

    def element(idx: Indices) -> Expr:
        indices: list[Expr] = []
        for k, extent in enumerate(x.shape):
            index = idx[k + offset]
            if extent == 1:
                indices.append(IntImm(0, index.dtype))
            elif out_shape[k + offset] == extent:
                indices.append(index)
            else:
                indices.append(index % IntImm(extent, index.dtype))
        return x(indices)

    return Compute(x.dtype, out_shape, element)


LOWERINGS: dict[str, OpLowering] = {
    "pd_op.expand": OpLowering(_expand),
    "pd_op.tile": OpLowering(_tile),
}
