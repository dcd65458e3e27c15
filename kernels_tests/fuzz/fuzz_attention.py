"""The generator's attention steps: einsum (decomposed into transpose / reshape /
matmul), a scaled-dot-product attention written with two einsums and a softmax,
swiglu and fused_rms_norm_quant (decomposed), topk and argsort (library ops), arange
positions added to a value, expand_as.

A mixin of `fuzz_programs.Maker`, like `fuzz_layout.py`. Each step is valid by
construction: every einsum label gets one size shared by its operands; swiglu without y
splits an even last dim; norm weights hold the normalized dims' product; k is inside
its dim. The results Paddle prints but models never read (einsum's inner cache and
xshape vectors, unpacked by `builtin.split` as Paddle prints them, and
fused_rms_norm_quant's inv_var) are secondary (`Maker.finish` fetches the rest).
"""

from __future__ import annotations

from typing import Any

from fuzz_shapes import F32, FLOATS, I32, I64, MAX_ELEMENTS, Shape, numel

from cinn_py.pir.dtypes import DataType

LABEL_DIMS = (3, 1, 5, 7, 8, 33)
EQUATIONS = (
    "bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "bij,bjk->bik", "ij->ji", "ij,jk->ik",
    "bqhd->bhqd", "i,j->ij", "ij,ij->i", "...d,de->...e", "bij->bi", "ij,j->i",
    "bhqd,bkhd->bhqk", "ij->", "bi,bi->b",
)  # fmt: skip
"""Equations the compiled einsum decomposes (no repeated label, one or two operands)."""


class AttentionSteps:
    """Attention-block emitters, mixed into `fuzz_programs.Maker`."""

    # Provided by Maker.
    pick: Any
    integer: Any
    chance: Any
    tensor: Any
    op: Any
    ints: Any
    scalar: Any
    add: Any
    new_input: Any
    unary: Any
    binary: Any
    secondary: Any
    pool: Any
    shape: Any
    b: Any

    def einsum(self, equation: str, operands: list[Any]) -> Any:
        """`equation` over `operands` as Paddle prints it: the operands combined, the
        cache and xshape vectors split (both secondary, never fetched)."""
        vector = self.b.create("builtin.combine", [t.value for t in operands]).result()
        out, cache, xshape = self.op("einsum", vector, equation=equation)
        for packed in (cache, xshape):
            pieces = self.b.op("builtin.split", packed)
            for piece in pieces if isinstance(pieces, tuple) else (pieces,):
                self.secondary[id(piece)] = False
        return self.add(out)

    def emit_einsum(self) -> None:
        equation = self.pick(EQUATIONS)
        inputs, output = equation.split("->")
        terms = inputs.split(",")
        ellipsis = tuple(self.pick(LABEL_DIMS[:4]) for _ in range(self.integer(0, 2)))
        first_rank = len(terms[0].replace("...", "")) + (len(ellipsis) if "..." in terms[0] else 0)
        dtype = self.pick((F32, F32, *FLOATS[1:]))
        sizes: dict[str, int] = {}
        candidates = [
            t for t in self.pool if t.dtype is dtype and t.rank == first_rank and t.size > 0
        ]
        first = self.pick(candidates) if candidates and not self.chance(40) else None
        if first is not None:
            labels = terms[0].replace("...", "")
            if "..." in terms[0]:
                ellipsis = first.shape[: len(ellipsis)]
            for label, dim in zip(labels, first.shape[first.rank - len(labels) :], strict=True):
                sizes[label] = dim
        for label in equation:
            if label.isalpha() and label not in sizes:
                sizes[label] = self.pick(LABEL_DIMS)

        def shape_of(term: str) -> Shape:
            lead = ellipsis if "..." in term else ()
            return (*lead, *(sizes[c] for c in term.replace("...", "")))

        shapes = [shape_of(t) for t in terms] + [shape_of(output)]
        if any(numel(s) > MAX_ELEMENTS for s in shapes):
            return
        if numel(shapes[0]) * max((numel(s) for s in shapes[1:]), default=1) > 1 << 24:
            return  # keeps the reference's float64 einsum quick
        operands = [first or self.new_input(shapes[0], dtype)]
        operands += [self.new_input(s, dtype) for s in shapes[1:-1]]
        self.einsum(equation, operands)

    def emit_attention(self) -> None:
        """softmax(q k^T * scale (+ mask)) v, the products written as einsums."""
        b, h = self.pick((1, 2, 3)), self.pick((1, 3, 2))
        s, t, d = self.pick((7, 1, 5, 33)), self.pick((7, 1, 9, 33)), self.pick((8, 5, 3, 33))
        dtype = self.pick((F32, F32, *FLOATS[1:]))
        q = self.tensor(
            lambda x: x.shape == (b, h, s, d), dtypes=(dtype,), shape=lambda: (b, h, s, d)
        )
        k = self.new_input((b, h, t, d), dtype)
        v = self.new_input((b, h, t, d), dtype)
        scores = self.einsum("bhqd,bhkd->bhqk", [q, k])
        scaled = self.op("scale", scores.value, self.scalar(float(f"{d**-0.5:.4g}")), bias=0.0)
        scaled = self.add(scaled)
        if self.chance(40):
            mask = self.new_input(self.pick(((1, 1, s, t), (b, 1, 1, t), (s, t))), dtype)
            scaled = self.binary("add", scaled, mask)
        probs = self.add(self.op("softmax", scaled.value, axis=-1))
        self.einsum("bhqk,bhkd->bhqd", [probs, v])

    def emit_swiglu(self) -> None:
        if self.chance(40):
            x = self.tensor(lambda t: t.rank >= 1, dtypes=FLOATS, shape=lambda: self.shape(1))
            y = self.new_input(x.shape, x.dtype)
            self.add(self.op("swiglu", x.value, y.value))
            return
        x = self.tensor(
            lambda t: t.rank >= 1 and t.shape[-1] % 2 == 0,
            dtypes=FLOATS,
            shape=lambda: (*self.shape(0, 2), self.pick((2, 10, 6, 66, 16))),
        )
        if x.rank == 0 or x.shape[-1] % 2:
            return
        self.add(self.op("swiglu", x.value, None))

    def emit_rms_norm_quant(self) -> None:
        """fused_rms_norm_quant: bias and residual (a residual added first), norm_weight
        and norm_bias over the dims from begin_norm_axis."""
        x = self.tensor(lambda t: t.rank >= 2, dtypes=FLOATS, shape=lambda: self.shape(2))
        if x.rank < 2:
            return
        begin = self.integer(1, x.rank - 1)
        cols = numel(x.shape[begin:])
        residual = self.new_input(x.shape, x.dtype) if self.chance(40) else None
        bias = (
            self.new_input((cols,), x.dtype) if residual is not None and self.chance(50) else None
        )
        weight = self.new_input((cols,), x.dtype)
        norm_bias = self.new_input((cols,), x.dtype) if self.chance(40) else None
        out, residual_out, inv_var = self.op(
            "fused_rms_norm_quant",
            x.value,
            None if bias is None else bias.value,
            None if residual is None else residual.value,
            weight.value,
            None if norm_bias is None else norm_bias.value,
            epsilon=self.pick((1e-6, 1e-5, 0.1)),
            begin_norm_axis=begin,
            quant_scale=-1.0,
            quant_round_type=0,
            quant_max_bound=0.0,
            quant_min_bound=0.0,
        )
        self.add(out)
        if residual is not None:
            self.add(residual_out)
        self.secondary[id(inv_var)] = True

    def emit_sort(self) -> None:
        """topk (k from a `full`, as Paddle prints it) or argsort; indices secondary."""
        x = self.tensor(
            lambda t: t.rank >= 1 and t.size > 0,
            dtypes=(*FLOATS, I32, I64),
            shape=lambda: self.shape(1, allow_empty=False),
        )
        if x.rank == 0 or x.size == 0:
            return
        axis = self.integer(-x.rank, x.rank - 1)
        if self.chance(50):
            k = self.integer(1, min(x.shape[axis], 5))
            values, indices = self.op(
                "topk",
                x.value,
                self.op("full", shape=[1], value=float(k), dtype=I32),
                axis=axis,
                largest=not self.chance(30),
                sorted=not self.chance(20),
            )
        else:
            values, indices = self.op(
                "argsort",
                x.value,
                axis=axis,
                descending=self.chance(40),
                stable=self.chance(30),
            )
        self.add(values, x.bound)
        self.secondary[id(indices)] = True

    def emit_positions(self) -> None:
        """arange (float64 `full` bounds, as Paddle prints them) along x's last dim,
        added to x: the count is exact (the end half a step past the last value)."""
        x = self.tensor(
            lambda t: t.rank >= 1 and t.size > 0,
            dtypes=(F32,),
            shape=lambda: self.shape(1, allow_empty=False),
        )
        if x.rank == 0 or x.size == 0:
            return
        count = x.shape[-1]
        start, step = self.pick((0.0, 0.5, -3.0)), self.pick((1.0, 0.25, -2.0, 0.5))
        end = start + (count - 0.5) * step

        def bound(value: float) -> Any:
            return self.op("full", shape=[1], value=value, dtype=DataType.FLOAT64)

        positions = self.op("arange", bound(start), bound(end), bound(step), dtype=F32)
        self.binary("add", x, self.add(positions))

    def emit_expand_as(self) -> None:
        """expand_as of a narrowed value to the shape of another (target_shape given)."""
        y = self.tensor(
            lambda t: t.rank >= 1 and t.size > 0,
            dtypes=FLOATS,
            shape=lambda: self.shape(1, allow_empty=False),
        )
        if y.rank == 0 or y.size == 0:
            return
        small = tuple(d if self.chance(50) else 1 for d in y.shape[self.integer(0, y.rank - 1) :])
        x = self.new_input(small, y.dtype)
        self.add(self.op("expand_as", x.value, y.value, target_shape=list(y.shape)))
