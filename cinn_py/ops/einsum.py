"""pd_op.einsum: `paddle.einsum(equation, *operands)`.

Paddle 3.3.1 prints it with its operands packed by a `builtin.combine` (a Tensor[]),
the `equation` attribute and three results, kept as Paddle declares them: the output,
an "inner cache" vector (one `tensor<0xf32>` per operand in a program built by static
graph code, one 0-D `tensor<f32>` in a saved model) and an "xshape" vector typed like
the operands; either vector may be unpacked by a `builtin.split`. The reference kernel is
`numpy.einsum`, floats accumulated in float64 and rounded once; it gives zero-filled
inner caches and copies of the operands as xshape.

Compiled, an einsum of one or two operands decomposes into the primitives matmul works
with: a sum over each label that only one operand has and the output lacks, a
transpose of each operand to [batch, free, contracted] (or to [batch, contracted, free],
which matmul's transpose flags take as they are), reshapes that merge each group of
labels into one dim when a group is not exactly one label, one batched matmul, and the
reshape and transpose back to the output's labels. `bhqd,bhkd->bhqk` is one matmul with
`transpose_y`; `ij->ji` one transpose. An ellipsis stands for the dims that the labels
leave, right-aligned and broadcast as numpy does. An equation with a label repeated in
one operand (a diagonal) or with more than two operands is an UnsupportedOpError on the
compiled targets; a reshape that would need two run-time (-1) sizes in one shape leaves
the op whole, run by its reference kernel.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cinn_py.errors import UnsupportedOpError
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import StrAttribute
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import Emitter, compute_dtype, dtype_of
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type, VectorType
from cinn_py.pir.value import Value
from cinn_py.reference_ops.context import KernelContext

_LETTERS = frozenset(string.ascii_letters)
_ELLIPSIS_BASE = 0x2460
"""Ellipsis dims become the labels chr(_ELLIPSIS_BASE + i) (no letter can clash)."""


@dataclass(frozen=True)
class Equation:
    """An equation with its ellipses expanded into labels of their own: one label string
    per operand and the output's."""

    inputs: tuple[str, ...]
    output: str

    def repeated(self) -> str | None:
        """A label some operand holds twice (a diagonal), if any."""
        for labels in self.inputs:
            for label in labels:
                if labels.count(label) > 1:
                    return label
        return None


def parse_equation(equation: str, ranks: Sequence[int]) -> Equation:
    """The labels of `equation` for operands of `ranks`; a ValueError says what is wrong."""
    text = equation.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    if "->" in rhs or any(c not in _LETTERS and c not in ",." for c in lhs + rhs):
        raise ValueError("an equation holds letters, ',', '...' and one '->'")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"names {len(terms)} operand(s), the op has {len(ranks)}")
    widths = [_ellipsis_width(term, rank) for term, rank in zip(terms, ranks, strict=True)]
    ellipsis = max(widths, default=0)
    inputs = tuple(
        _expand(term, width, ellipsis) for term, width in zip(terms, widths, strict=True)
    )
    if arrow:
        if rhs.count("...") > 1 or "." in rhs.replace("...", ""):
            raise ValueError(f"the output '{rhs}' has a malformed ellipsis")
        output = _expand(rhs, ellipsis, ellipsis) if "..." in rhs else rhs
    else:
        every = "".join(terms)
        once = sorted(c for c in set(every) if c in _LETTERS and every.count(c) == 1)
        output = _expand("...", ellipsis, ellipsis) + "".join(once)
    known = set("".join(inputs))
    for label in output:
        if output.count(label) > 1:
            raise ValueError(f"the output repeats label '{label}'")
        if label not in known:
            raise ValueError(f"the output label '{label}' is in no operand")
    return Equation(inputs, output)


def _ellipsis_width(term: str, rank: int) -> int:
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"operand labels '{term}' have a malformed ellipsis")
    named = len(term.replace("...", ""))
    if "..." not in term:
        if named != rank:
            raise ValueError(f"operand labels '{term}' name {named} dims of a rank-{rank} tensor")
        return 0
    if named > rank:
        raise ValueError(f"operand labels '{term}' name {named} dims of a rank-{rank} tensor")
    return rank - named


def _expand(term: str, width: int, ellipsis: int) -> str:
    dims = "".join(chr(_ELLIPSIS_BASE + i) for i in range(ellipsis - width, ellipsis))
    return term.replace("...", dims)


def _label_sizes(equation: Equation, shapes: Sequence[Sequence[int]]) -> dict[str, int]:
    """Each label's size; an ellipsis dim of size 1 broadcasts. ValueError on a clash."""
    sizes: dict[str, int] = {}
    for labels, dims in zip(equation.inputs, shapes, strict=True):
        for label, dim in zip(labels, dims, strict=True):
            seen = sizes.get(label, dim)
            if DYNAMIC in (seen, dim) or seen == dim:
                sizes[label] = dim if seen == DYNAMIC else seen
            elif label not in _LETTERS and 1 in (seen, dim):
                sizes[label] = max(seen, dim)
            else:
                name = label if label in _LETTERS else "an ellipsis dim"
                raise ValueError(f"label {name} has sizes {seen} and {dim}")
    return sizes


# -- declaration ----------------------------------------------------------------------------


def _parsed(ctx: InferContext) -> tuple[list[DenseTensorType], Equation, dict[str, int]]:
    types = ctx.tensors("x")
    try:
        equation = parse_equation(ctx.attr("equation"), [t.rank for t in types])
        sizes = _label_sizes(equation, [t.dims for t in types])
    except ValueError as error:
        raise ctx.error(f"equation '{ctx.attr('equation')}': {error}") from None
    return types, equation, sizes


def _results(ctx: InferContext, cache_dims: tuple[int, ...]) -> list[Type]:
    types, equation, sizes = _parsed(ctx)
    out = im.tensor(ctx, types[0].data_type, [sizes[label] for label in equation.output])
    cache = DenseTensorType.get(DataType.FLOAT32, cache_dims)
    return [out, VectorType.get([cache] * len(types)), VectorType.get(types)]


def _infer_einsum(ctx: InferContext) -> list[Type]:
    """Paddle leaves the inner cache's dims unset: a program built in static mode
    declares each `tensor<0xf32>`, a saved model 0-D `tensor<f32>`. Both hold nothing;
    the declared form is kept (`tensor<0xf32>` for a new op)."""
    declared = ctx.declared[1] if ctx.declared and len(ctx.declared) > 1 else None
    zero_d = isinstance(declared, VectorType) and all(
        isinstance(t, DenseTensorType) and t.rank == 0 for t in declared.types
    )
    return _results(ctx, () if zero_d and declared.types else (0,))


def _einsum_kernel(ctx: KernelContext) -> tuple[np.ndarray, list, list]:
    xs = ctx.tensors(0)
    wide = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in xs]
    try:
        out = np.einsum(ctx.attr("equation"), *wide)
    except ValueError as error:
        raise ctx.shape_error(f"equation '{ctx.attr('equation')}': {error}") from None
    cache_type = ctx.op.result(1).type
    assert isinstance(cache_type, VectorType)
    cache = [
        np.zeros([max(d, 0) for d in t.dims], np.float32)
        for t in cache_type.types
        if isinstance(t, DenseTensorType)
    ]
    return out, cache, [x.copy() for x in xs]


# -- decomposition --------------------------------------------------------------------------


def _unsupported(op: Operation, why: str) -> UnsupportedOpError:
    return UnsupportedOpError(
        op.name, op.where(), f"cannot lower equation '{op.attr('equation')}': {why}"
    )


def _shape(dims: Sequence[int], copied: int) -> list[int] | None:
    """A reshape target: `copied` leading dims copied (0), then `dims`, at most one of
    them unknown (-1); None when two are."""
    if list(dims).count(DYNAMIC) > 1:
        return None
    return [0] * copied + list(dims)


def _merged(sizes: dict[str, int], group: Sequence[str]) -> int:
    return (
        DYNAMIC if any(sizes[g] == DYNAMIC for g in group) else math.prod(sizes[g] for g in group)
    )


@dataclass
class _Side:
    """How one matmul operand is arranged: its transpose (None: none), matmul's flag, and
    the reshape merging its two label groups (None: none)."""

    perm: list[int] | None
    flag: bool
    reshape: list[int] | None


def _side(
    labels: str, batch: list[str], first: list[str], second: list[str], sizes: dict[str, int]
) -> _Side | None:
    """Arrange an operand as [batch, first, second] for matmul (or [batch, second, first]
    with the transpose flag); None if its reshape needs two unknown sizes."""
    straight, swapped = batch + first + second, batch + second + first
    perm, flag = None, False
    if list(labels) == swapped and list(labels) != straight:
        flag = True
    elif list(labels) != straight:
        perm = [labels.index(label) for label in straight]
    reshape = None
    if len(first) != 1 or len(second) != 1:
        groups = (second, first) if flag else (first, second)
        reshape = _shape([_merged(sizes, g) for g in groups], len(batch))
        if reshape is None:
            return None
    return _Side(perm, flag, reshape)


def _emit_side(emit: Emitter, x: Value, side: _Side) -> Value:
    if side.perm is not None:
        x = emit.op("pd_op.transpose", x, perm=side.perm)
    if side.reshape is not None:
        x = emit.op("pd_op.reshape", x, None, shape=side.reshape)
    return x


def _sum_private(emit: Emitter, x: Value, labels: str, keep: set[str]) -> tuple[Value, str]:
    """Sum away the labels nothing else has (not the other operand, not the output)."""
    axes = [i for i, label in enumerate(labels) if label not in keep]
    if not axes:
        return x, labels
    summed = emit.sum(x, axes, keepdim=False)
    return summed, "".join(label for label in labels if label in keep)


def _permute(emit: Emitter, x: Value, labels: str, output: str) -> Value:
    if labels == output:
        return x
    return emit.op("pd_op.transpose", x, perm=[labels.index(label) for label in output])


def _contract(emit: Emitter, equation: Equation, xs: list[Value]) -> Value | None:
    output = equation.output
    sizes = _label_sizes(equation, [x.type.dims for x in xs])
    if len(xs) == 1:
        x, labels = _sum_private(emit, xs[0], equation.inputs[0], set(output))
        return _permute(emit, x, labels, output)
    (lx, ly) = equation.inputs
    batch = [c for c in lx if c in ly and c in output]
    contracted = [c for c in lx if c in ly and c not in output]
    free_x = [c for c in lx if c not in ly and c in output]
    free_y = [c for c in ly if c not in lx and c in output]
    kept_x = "".join(c for c in lx if c in ly or c in output)
    kept_y = "".join(c for c in ly if c in lx or c in output)
    side_x = _side(kept_x, batch, free_x, contracted, sizes)
    side_y = _side(kept_y, batch, contracted, free_y, sizes)
    merged = len(free_x) != 1 or len(free_y) != 1
    back = _shape([sizes[c] for c in free_x + free_y], len(batch)) if merged else []
    if side_x is None or side_y is None or back is None:
        return None
    x, _ = _sum_private(emit, xs[0], lx, set(ly) | set(output))
    y, _ = _sum_private(emit, xs[1], ly, set(lx) | set(output))
    product = emit.op(
        "pd_op.matmul",
        _emit_side(emit, x, side_x),
        _emit_side(emit, y, side_y),
        transpose_x=side_x.flag,
        transpose_y=side_y.flag,
    )
    if merged:
        product = emit.op("pd_op.reshape", product, None, shape=back)
    return _permute(emit, product, "".join(batch + free_x + free_y), output)


def _decompose_einsum(emit: Emitter, op: Operation) -> list[Value | None] | None:
    packed = op.operand_value(0)
    producer = packed.defining_op if packed is not None else None
    if producer is None or producer.name != "builtin.combine":
        return None
    xs = list(producer.operand_values())
    if len(xs) > 2:
        raise _unsupported(op, f"it has {len(xs)} operands (at most 2 lower)")
    types = [x.type for x in xs]
    if not all(isinstance(t, DenseTensorType) for t in types):
        return None
    equation = parse_equation(op.attr("equation"), [t.rank for t in types])
    label = equation.repeated()
    if label is not None:
        raise _unsupported(op, f"label '{label}' repeats in one operand (a diagonal)")
    dtype = types[0].data_type
    if not (dtype.is_float or dtype.is_integer):
        return None
    compute = [emit.cast(x, compute_dtype(x)) for x in xs]
    out = _contract(emit, equation, compute)
    if out is None:
        return None
    cache_type = op.result(1).type
    assert isinstance(cache_type, VectorType)
    caches = [
        emit.op("pd_op.full", shape=[max(d, 0) for d in t.dims], value=0.0, dtype=DataType.FLOAT32)
        for t in cache_type.types
        if isinstance(t, DenseTensorType)
    ]
    cache = emit.builder.op("builtin.combine", *caches)
    xshape = packed if packed.type is op.result(2).type else emit.builder.op("builtin.combine", *xs)
    return [emit.cast(out, dtype_of(op.result(0))), cache, xshape]


OPS = [
    OpDef(
        "pd_op.einsum",
        operands=(operand("x", variadic=True),),
        attributes=(attr("equation", StrAttribute),),
        results=("out", "inner_cache", "xshape"),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_einsum,
        kernel=_einsum_kernel,
        decompose=_decompose_einsum,
        symbolic_meta=sym.einsum_shape(parse_equation),
    ),
]
