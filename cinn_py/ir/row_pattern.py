"""The shape facts of a reduction over a row: which dims are reduced, how many rows,
how long each row is. Fusion's `ReducePattern` extends `RowPattern`, the row schedule
takes it, and `cache_read`'s `RowWalk` adds how the threads walk a row."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cinn_py.ir.dim_guards import GuardedInt


@dataclass(frozen=True)
class RowPattern:
    """What every reduction of a group reduces: dims `axes` of `shape` (stored as a
    tuple of ints and as sorted, distinct dims). Fusion's `ReducePattern` extends it."""

    shape: tuple[int, ...]
    axes: tuple[int, ...]

    def __post_init__(self) -> None:
        shape = tuple(d if isinstance(d, GuardedInt) else int(d) for d in self.shape)
        axes = tuple(sorted({int(a) for a in self.axes}))
        if any(not 0 <= a < len(shape) for a in axes):
            raise ValueError(f"axes {axes} out of range for shape {shape}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "axes", axes)

    @property
    def kept(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(self.shape)) if d not in self.axes)

    @property
    def rows(self) -> int:
        return math.prod(self.shape[d] for d in self.kept)

    @property
    def cols(self) -> int:
        return math.prod(self.shape[d] for d in self.axes)

    @property
    def keepdim_shape(self) -> tuple[int, ...]:
        return tuple(1 if d in self.axes else n for d, n in enumerate(self.shape))

    @property
    def dropped_shape(self) -> tuple[int, ...]:
        return tuple(self.shape[d] for d in self.kept)

    @property
    def innermost(self) -> bool:
        """The reduced dims are the trailing ones (a row of contiguous elements)."""
        n = len(self.shape)
        return self.axes == tuple(range(n - len(self.axes), n))

    def is_row(self, shape: tuple[int, ...]) -> bool:
        """A value with one element per row (keepdim or dropped form)."""
        return tuple(shape) in (self.keepdim_shape, self.dropped_shape)
