"""TE-style computes: a tensor described by how to compute any one of its elements.

A `Compute` is a shape, a dtype and `fcompute(indices) -> Expr`: the expression of the
element at `indices` (index expressions, usually built from a block's iter vars).
Lowering an op builds its result's Compute from its operands' Computes by calling
them at the indices it needs, so a consumer *inlines* its producers: `relu(add(x, y))`
becomes one expression over loads of `x` and `y`. A tensor that lives in memory (a
group input, or a stored value) is a `placeholder`: its fcompute is a load.

Loads are where index expressions end up, so that is where they are simplified: a
load's indices are run through `cinn_py.ir.simplify`, and an index into a dim of
extent 1 is the constant 0 (the only valid index there), which is what turns a
broadcast read into `x[i0, 0]` and a reshape into affine div/mod by constants.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cinn_py.ir.expr import Buffer, Expr, IntImm, Load
from cinn_py.ir.simplify import simplify
from cinn_py.pir.dtypes import DataType

Indices = tuple[Expr, ...]
FCompute = Callable[[Indices], Expr]


@dataclass(frozen=True)
class Compute:
    """A tensor of `dtype` and static `shape` whose element at `indices` is
    `fcompute(indices)`."""

    dtype: DataType
    shape: tuple[int, ...]
    fcompute: FCompute

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __call__(self, indices: Sequence[Expr]) -> Expr:
        """The element at `indices` (one index expression per dim)."""
        items = tuple(indices)
        if len(items) != len(self.shape):
            raise ValueError(f"{len(items)} indices for a compute of rank {len(self.shape)}")
        value = self.fcompute(items)
        if value.dtype is not self.dtype:
            raise TypeError(
                f"a compute of {self.dtype.value} produced a {value.dtype.value} expression"
            )
        return value


Vector = list[Compute]
"""A Tensor[] value (`builtin.combine`, `pd_op.split`): its tensors' computes."""

Lowered = Compute | Vector
"""What a value lowers to."""


def load(buffer: Buffer, indices: Sequence[Expr]) -> Load:
    """A load of `buffer` with simplified indices; dims of extent 1 read index 0."""
    items = []
    for extent, index in zip(buffer.shape, indices, strict=True):
        if isinstance(extent, IntImm) and extent.value == 1:
            items.append(IntImm(0, index.dtype))
        else:
            items.append(simplify(index))
    return Load(buffer, items)


def placeholder(buffer: Buffer) -> Compute:
    """The Compute of a tensor held in `buffer`: its elements are loads."""
    shape = tuple(int(e.value) if isinstance(e, IntImm) else e for e in buffer.shape)
    return Compute(buffer.dtype, shape, lambda indices: load(buffer, indices))


# Broadcasting: reading a tensor at the indices of a larger output (binary ops, expand,
# tile). Dims align from the right (NumPy's and Paddle's rule); a dim of 1 facing a
# larger one is read at index 0, so a [64, 1] operand of a [64, 128] result reads `x[i0, 0]`.


def broadcast_indices(
    shape: tuple[int, ...], out_shape: tuple[int, ...], indices: Indices
) -> Indices:
    """The indices of a `shape` tensor broadcast to `out_shape`, read at `indices`."""
    offset = len(out_shape) - len(shape)
    out: list[Expr] = []
    for k, extent in enumerate(shape):
        index = indices[k + offset]
        out.append(IntImm(0, index.dtype) if _is_one(extent) else index)
    return tuple(out)


def _is_one(extent: int | Expr) -> bool:
    return isinstance(extent, int) and extent == 1


def index_value(extent: int | Expr, dtype: DataType) -> Expr:
    """A dim (or a number computed from dims) as an index expression of `dtype`."""
    return IntImm(extent, dtype) if isinstance(extent, int) else extent


def broadcast_to(x: Compute, out_shape: tuple[int, ...]) -> Compute:
    """`x` read as a tensor of `out_shape`."""
    if x.shape == out_shape:
        return x
    return Compute(x.dtype, out_shape, lambda idx: x(broadcast_indices(x.shape, out_shape, idx)))
