"""The generator's layout steps: reshape, transpose, slice, strided_slice, concat, stack,
split, squeeze / unsqueeze, expand / tile, gather, embedding, flatten, tril / triu,
index_select, one_hot.

A mixin of `fuzz_programs.Maker` (it uses the generator's drawing and value helpers);
each step keeps the program valid by construction: shapes that hold the same elements,
axes in range, slices clamped as Python clamps them, indices inside their dim.
"""

from __future__ import annotations

from typing import Any

from fuzz_shapes import (
    BOOL,
    FLOATS,
    I32,
    I64,
    MAX_ELEMENTS,
    Shape,
    numel,
    reshape_target,
    widen,
)
from hypothesis import strategies as st


class LayoutSteps:
    """Layout emitters, mixed into `fuzz_programs.Maker`."""

    # Provided by Maker.
    pick: Any
    integer: Any
    chance: Any
    tensor: Any
    shape: Any
    op: Any
    ints: Any
    scalar: Any
    add: Any
    new_input: Any
    partner: Any
    unary: Any
    b: Any
    _draw: Any

    def emit_reshape(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, I32, BOOL))
        target = reshape_target(x.shape, self)
        self.add(self.op("reshape", x.value, self.ints(target)), x.bound)

    def emit_transpose(self) -> None:
        x = self.tensor(lambda t: t.rank >= 2, dtypes=(*FLOATS, I32), shape=lambda: self.shape(2))
        perm = list(self._draw(st.permutations(list(range(x.rank)))))
        if self.chance(20):
            perm = [p - x.rank for p in perm]
        self.add(self.op("transpose", x.value, perm=perm), x.bound)

    def emit_slice(self) -> None:
        x = self.tensor(lambda t: t.rank >= 1, dtypes=(*FLOATS, I32), shape=lambda: self.shape(1))
        if x.rank == 0:
            return
        axes = sorted({self.integer(0, x.rank - 1) for _ in range(self.integer(1, x.rank))})
        starts, ends, decrease = [], [], []
        for axis in axes:
            d = x.shape[axis]
            start = self.pick((0, 1, d // 2, -1, -d, d + 3))
            end = self.pick((d, -1, d // 2 + 1, 10**6, 1, start + 1))
            starts.append(start)
            ends.append(end)
            if len(range(*slice(start, end).indices(d))) == 1 and self.chance(40):
                decrease.append(axis)
        out = self.op(
            "slice",
            x.value,
            self.ints(starts),
            self.ints(ends),
            axes=axes,
            infer_flags=[1] * len(axes),
            decrease_axis=decrease,
        )
        self.add(out, x.bound)

    def emit_strided_slice(self) -> None:
        x = self.tensor(lambda t: t.rank >= 1, dtypes=(*FLOATS, I32), shape=lambda: self.shape(1))
        if x.rank == 0:
            return
        axes = sorted({self.integer(0, x.rank - 1) for _ in range(self.integer(1, x.rank))})
        starts, ends, strides = [], [], []
        for axis in axes:
            d = x.shape[axis]
            stride = self.pick((2, 1, 3, -1, -2, 5))
            if stride > 0:
                starts.append(self.pick((0, 1, -d, d // 3)))
                ends.append(self.pick((d, 10**6, -1, d // 2 + 1)))
            else:
                starts.append(self.pick((-1, d - 1, 10**6, d // 2)))
                ends.append(self.pick((-(10**6), 0, -d - 1, 1)))
            strides.append(stride)
        out = self.op(
            "strided_slice",
            x.value,
            self.ints(starts),
            self.ints(ends),
            self.ints(strides),
            axes=axes,
        )
        self.add(out, x.bound)

    def emit_concat(self) -> None:
        x = self.tensor(
            lambda t: t.rank >= 1, dtypes=(*FLOATS, I32, BOOL), shape=lambda: self.shape(1)
        )
        if x.rank == 0:
            return
        axis = self.integer(0, x.rank - 1)
        parts = [x]
        for _ in range(self.integer(1, 2)):
            how = self.pick(("input", "same", "computed"))
            if how == "same":
                parts.append(x)
            elif how == "computed" and x.dtype in FLOATS:
                parts.append(self.unary(self.pick(("exp", "relu", "scale")), x))
            else:
                dims = list(x.shape)
                dims[axis] = self.pick((1, 3, 8, 0, 33))
                if numel(dims) <= MAX_ELEMENTS:
                    parts.append(self.new_input(tuple(dims), x.dtype))
        if self.chance(30):
            parts.reverse()
        total = sum(numel(p.shape) for p in parts)
        if total > MAX_ELEMENTS:
            parts = parts[:1]
        vector = self.b.create("builtin.combine", [p.value for p in parts]).result()
        axis_value = axis - x.rank if self.chance(30) else axis
        bound = max((p.bound or 0) for p in parts) if x.dtype.is_integer else None
        self.add(self.op("concat", vector, self.scalar(axis_value, I32)), bound)

    def emit_stack(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, I32))
        count = self.integer(2, 3)
        if x.size * count > MAX_ELEMENTS:
            return
        parts = [x] + [self.partner(x, same_shape=True) for _ in range(count - 1)]
        vector = self.b.create("builtin.combine", [p.value for p in parts]).result()
        axis = self.integer(-(x.rank + 1), x.rank)
        bound = max((p.bound or 0) for p in parts) if x.dtype.is_integer else None
        self.add(self.op("stack", vector, axis=axis), bound)

    def emit_split(self) -> None:
        x = self.tensor(
            lambda t: t.rank >= 1 and max(t.shape) >= 2,
            dtypes=(*FLOATS, I32),
            shape=lambda: self.shape(1),
        )
        splittable = [a for a in range(x.rank) if x.shape[a] >= 2]
        if not splittable:
            return
        axis = self.pick(splittable)
        d = x.shape[axis]
        divisors = [n for n in (2, 3, 4, 8) if d % n == 0]
        if divisors and self.chance(40):
            vector = self.op(
                "split_with_num", x.value, self.scalar(axis, I32), num=self.pick(divisors)
            )
        else:
            first = self.integer(1, d - 1)
            sections = [first, -1] if self.chance(50) else [first, d - first]
            if d - first >= 2 and self.chance(30):
                sections = [first, 1, d - first - 1]
            axis_value = axis - x.rank if self.chance(30) else axis
            vector = self.op("split", x.value, self.ints(sections), self.scalar(axis_value, I32))
        pieces = self.b.op("builtin.split", vector)
        for piece in pieces if isinstance(pieces, tuple) else (pieces,):
            self.add(piece, x.bound)

    def emit_squeeze(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, I32, BOOL))
        if self.chance(50) or x.rank == 0:
            axes = [self.integer(-x.rank - 1, x.rank)]
            if self.chance(30):
                axes.append(self.integer(-x.rank - 2, x.rank + 1))
            self.add(self.op("unsqueeze", x.value, self.ints(axes)), x.bound)
            return
        ones = [a for a in range(x.rank) if x.shape[a] == 1]
        axes = [a for a in range(x.rank) if a in ones and self.chance(60)]
        if self.chance(20):
            axes.append(self.integer(0, x.rank - 1))
        self.add(self.op("squeeze", x.value, self.ints(sorted(set(axes)))), x.bound)

    def emit_expand(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, I32, BOOL))
        if self.chance(40):
            repeats = [self.pick((1, 2, 3)) for _ in range(self.integer(1, x.rank + 1))]
            reps = [1] * (x.rank - len(repeats)) + repeats
            out_dims = [
                d * r for d, r in zip((1,) * (len(reps) - x.rank) + x.shape, reps, strict=True)
            ]
            if numel(out_dims) <= MAX_ELEMENTS:
                self.add(self.op("tile", x.value, self.ints(repeats)), x.bound)
            return
        target = list(widen(x.shape, self))
        if numel(target) > MAX_ELEMENTS:
            return
        offset = len(target) - x.rank
        for i in range(offset, len(target)):
            if target[i] == x.shape[i - offset] and self.chance(30):
                target[i] = -1
        self.add(self.op("expand", x.value, self.ints(target)), x.bound)

    def emit_gather(self) -> None:
        x = self.tensor(
            lambda t: t.rank >= 1 and t.size > 0,
            dtypes=(*FLOATS, I32),
            shape=lambda: self.shape(1, allow_empty=False),
        )
        if x.rank == 0 or x.size == 0:
            return
        axis = self.integer(0, x.rank - 1)
        d = x.shape[axis]
        index_shape: Shape = () if self.chance(15) else (self.pick((3, 1, 7, 33, 64)),)
        if numel(x.shape) // d * max(numel(index_shape), 1) > MAX_ELEMENTS:
            index_shape = (1,)
        index = self.new_input(index_shape, self.pick((I64, I32)), "index", low=-d, high=d)
        axis_value = axis - x.rank if self.chance(30) else axis
        self.add(self.op("gather", x.value, index.value, self.scalar(axis_value, I32)), x.bound)

    def emit_embedding(self) -> None:
        """Rows of a table by id (lowered as a gather), ids drawn in range, sometimes a
        padding id whose rows are zero."""
        rows, width = self.pick((7, 33, 1, 64)), self.pick((8, 3, 33, 64))
        table = self.tensor(
            lambda t: t.shape == (rows, width), dtypes=FLOATS, shape=lambda: (rows, width)
        )
        if table.shape != (rows, width):
            return
        ids_shape = self.pick(((5,), (3, 7), (), (2, 0)))
        ids = self.new_input(ids_shape, self.pick((I64, I32)), "index", low=0, high=rows)
        padding = self.pick((-1, 0, rows - 1))
        self.add(self.op("embedding", ids.value, table.value, padding_idx=padding))

    def emit_flatten(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, I32))
        rank = max(x.rank, 1)
        start = self.integer(0, rank - 1)
        stop = self.integer(start, rank - 1)
        if x.rank and self.chance(30):
            stop -= rank
        self.add(self.op("flatten", x.value, start_axis=start, stop_axis=stop), x.bound)

    def emit_tril(self) -> None:
        """tril / triu over the last two dims (batched when the rank is higher), with a
        diagonal inside, at and past the matrix's edges."""
        x = self.tensor(
            lambda t: t.rank >= 2, dtypes=(*FLOATS, I32, BOOL), shape=lambda: self.shape(2)
        )
        if x.rank < 2:
            return
        rows, cols = x.shape[-2:]
        diagonal = self.pick((0, 1, -1, 2, -2, cols, -rows))
        name = self.pick(("tril", "triu"))
        self.add(self.op(name, x.value, diagonal=diagonal), x.bound)

    def emit_index_select(self) -> None:
        """Rows along an axis by index (negative indices included, as Paddle allows)."""
        x = self.tensor(
            lambda t: t.rank >= 1 and t.size > 0,
            dtypes=(*FLOATS, I32),
            shape=lambda: self.shape(1, allow_empty=False),
        )
        if x.rank == 0 or x.size == 0:
            return
        axis = self.integer(0, x.rank - 1)
        d = x.shape[axis]
        count = self.pick((1, 3, 7, 33))
        if numel(x.shape) // d * count > MAX_ELEMENTS:
            count = 1
        index = self.new_input((count,), self.pick((I64, I32)), "index", low=-d, high=d)
        axis_value = axis - x.rank if self.chance(30) else axis
        self.add(self.op("index_select", x.value, index.value, axis=axis_value), x.bound)

    def emit_one_hot(self) -> None:
        """One-hot rows of class ids drawn in range: a float32 tensor one dim longer."""
        classes = self.pick((1, 3, 7, 33))
        ids_shape = self.pick(((5,), (3, 7), (), (1,)))
        if numel(ids_shape) * classes > MAX_ELEMENTS:
            ids_shape = (1,)
        ids = self.new_input(ids_shape, self.pick((I64, I32)), "index", low=0, high=classes)
        self.add(self.op("one_hot", ids.value, self.scalar(classes, I32)))
