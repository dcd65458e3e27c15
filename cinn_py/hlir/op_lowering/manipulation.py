"""Shape and layout ops: each output element reads one input element at an index
computed from its own (CINN's injective ops), and the builtin Tensor[] glue.

Shapes come from the declared result types (static when lowering), so reshape,
squeeze, unsqueeze and flatten are one rule: the output index, linearised, read back
in the input's shape (`(i0*128 + i1) / 64` after simplification). Slicing follows
Python's rules (`slice(start, end, step).indices(size)`), as the reference does.
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.hlir.op_lowering.compute import Compute, Indices, Vector
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering
from cinn_py.hlir.op_lowering.scalar import const, convert
from cinn_py.ir.expr import EQ, LT, Add, Div, Expr, IntImm, Mod, Mul, Select
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.types import DenseTensorType


def strides(shape: Sequence[int]) -> list[int]:
    """Row-major element strides of `shape`."""
    out, step = [], 1
    for extent in reversed(shape):
        out.append(step)
        step *= extent
    return out[::-1]


def reshaped(x: Compute, shape: tuple[int, ...], index_dtype: DataType) -> Compute:
    """`x`'s elements in row-major order, read as a tensor of `shape`."""
    if x.shape == shape:
        return x
    out_strides, in_strides = strides(shape), strides(x.shape)

    def element(idx: Indices) -> Expr:
        linear: Expr = IntImm(0, index_dtype)
        for index, stride in zip(idx, out_strides, strict=True):
            term = index if stride == 1 else Mul(index, IntImm(stride, index_dtype))
            linear = term if _is_zero(linear) else Add(linear, term)
        indices: list[Expr] = []
        for k, (extent, stride) in enumerate(zip(x.shape, in_strides, strict=True)):
            index = linear if stride == 1 else Div(linear, IntImm(stride, index_dtype))
            indices.append(index if k == 0 else Mod(index, IntImm(extent, index_dtype)))
        return x(indices)

    return Compute(x.dtype, shape, element)


def _is_zero(x: Expr) -> bool:
    return isinstance(x, IntImm) and x.value == 0


def _reshape_like(ctx: LowerContext) -> Compute:
    return reshaped(ctx.input(0), ctx.out_shape(), ctx.index_dtype)


def _transpose(ctx: LowerContext) -> Compute:
    """Output dim k is input dim perm[k]."""
    x = ctx.input(0)
    perm = [ctx.normalize_axis(p, x.rank) for p in ctx.attr("perm")]

    def element(idx: Indices) -> Expr:
        indices: list[Expr] = list(idx)
        for k, axis in enumerate(perm):
            indices[axis] = idx[k]
        return x(indices)

    return Compute(x.dtype, ctx.out_shape(), element)


def _replace(idx: Indices, axis: int, index: Expr) -> list[Expr]:
    out = list(idx)
    out[axis] = index
    return out


def _shifted(index: Expr, offset: int) -> Expr:
    return index if offset == 0 else Add(index, IntImm(offset, index.dtype))


def _concat(ctx: LowerContext) -> Compute:
    """Pieces along `axis`: the output index picks the piece by a chain of selects."""
    items = ctx.inputs(0)
    shape, dtype = ctx.out_shape(), ctx.out_dtype()
    axis = ctx.normalize_axis(int(ctx.scalar(1, "axis")), len(shape))
    pieces: list[tuple[int, Compute]] = []
    offset = 0
    for item in items:
        if item.shape[axis]:
            pieces.append((offset, item))
        offset += item.shape[axis]

    def element(idx: Indices) -> Expr:
        i = idx[axis]

        def read(start: int, item: Compute) -> Expr:
            return convert(item(_replace(idx, axis, _shifted(i, -start))), dtype)

        result = read(*pieces[-1])
        for start, item in reversed(pieces[:-1]):
            end = IntImm(start + item.shape[axis], i.dtype)
            result = Select(LT(i, end), read(start, item), result)
        return result

    return Compute(dtype, shape, element)


def _stack(ctx: LowerContext) -> Compute:
    """Tensor k of the list at index k of the new `axis`."""
    items = ctx.inputs(0)
    shape, dtype = ctx.out_shape(), ctx.out_dtype()
    axis = ctx.normalize_axis(ctx.attr("axis", 0), len(shape))

    def element(idx: Indices) -> Expr:
        i = idx[axis]
        rest = list(idx[:axis]) + list(idx[axis + 1 :])
        result = convert(items[-1](rest), dtype)
        for k in range(len(items) - 2, -1, -1):
            result = Select(EQ(i, IntImm(k, i.dtype)), convert(items[k](rest), dtype), result)
        return result

    return Compute(dtype, shape, element)


def _pieces(ctx: LowerContext, x: Compute, axis: int) -> Vector:
    """The consecutive parts of `x` along `axis` whose types the Tensor[] result lists."""
    out: Vector = []
    offset = 0
    for type_ in ctx.vector_types():
        out.append(_piece(x, axis, offset, type_))
        offset += type_.dims[axis]
    if offset != x.shape[axis]:
        raise ctx.shape_error(f"the parts cover {offset} of dim {axis} (size {x.shape[axis]})")
    return out


def _piece(x: Compute, axis: int, offset: int, type_: DenseTensorType) -> Compute:
    def element(idx: Indices) -> Expr:
        return x(_replace(idx, axis, _shifted(idx[axis], offset)))

    return Compute(x.dtype, type_.dims, element)


def _split(ctx: LowerContext) -> Vector:
    x = ctx.input(0)
    return _pieces(ctx, x, ctx.normalize_axis(int(ctx.scalar(2, "axis")), x.rank))


def _split_with_num(ctx: LowerContext) -> Vector:
    x = ctx.input(0)
    return _pieces(ctx, x, ctx.normalize_axis(int(ctx.scalar(1, "axis")), x.rank))


def _sliced(
    ctx: LowerContext,
    x: Compute,
    axes: list[int],
    starts: list[int],
    ends: list[int],
    steps: list[int],
) -> dict[int, tuple[int, int]]:
    """Per sliced axis: (first index, step), as Python's slice clamps them."""
    if not len(axes) == len(starts) == len(ends) == len(steps):
        raise ctx.error(
            f"axes {axes}, starts {starts}, ends {ends}, strides {steps} differ in length"
        )
    out = {}
    for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
        if step == 0:
            raise ctx.error("a stride of 0")
        a = ctx.normalize_axis(axis, x.rank)
        first, _, step = slice(start, end, step).indices(x.shape[a])
        out[a] = (first, step)
    return out


def _slice(ctx: LowerContext) -> Compute:
    """Step-1 slices; `decrease_axis` drops those (size-1) axes."""
    x = ctx.input(0)
    axes = ctx.attr("axes")
    ranges = _sliced(
        ctx, x, axes, ctx.int_list(1, "starts"), ctx.int_list(2, "ends"), [1] * len(axes)
    )
    dropped = {ctx.normalize_axis(a, x.rank) for a in ctx.attr("decrease_axis", [])}
    return _slice_compute(ctx, x, ranges, dropped)


def _strided_slice(ctx: LowerContext) -> Compute:
    x = ctx.input(0)
    ranges = _sliced(
        ctx,
        x,
        ctx.attr("axes"),
        ctx.int_list(1, "starts"),
        ctx.int_list(2, "ends"),
        ctx.int_list(3, "strides"),
    )
    return _slice_compute(ctx, x, ranges, set())


def _slice_compute(
    ctx: LowerContext, x: Compute, ranges: dict[int, tuple[int, int]], dropped: set[int]
) -> Compute:
    index_dtype = ctx.index_dtype

    def element(idx: Indices) -> Expr:
        source = iter(idx)
        indices: list[Expr] = []
        for a in range(x.rank):
            first, step = ranges.get(a, (0, 1))
            if a in dropped:
                indices.append(IntImm(first, index_dtype))
                continue
            index = next(source)
            if step != 1:
                index = Mul(index, IntImm(step, index.dtype))
            indices.append(_shifted(index, first))
        return x(indices)

    return Compute(x.dtype, ctx.out_shape(), element)


def _row(ctx: LowerContext, value: Expr, size: int) -> Expr:
    """A data-dependent index as an index expression; negative counts from the end."""
    index = convert(value, ctx.index_dtype)
    return Select(LT(index, ctx.index(0)), Add(index, ctx.index(size)), index)


def _gather(ctx: LowerContext) -> Compute:
    """Rows `index` of `x` along `axis`; a 0-D index drops the axis, an [n, 1] index
    reads its column 0."""
    x, index = ctx.input(0), ctx.input(1)
    axis = ctx.normalize_axis(int(ctx.scalar(2, "axis")), x.rank)

    def element(idx: Indices) -> Expr:
        if index.rank == 0:
            row = _row(ctx, index(()), x.shape[axis])
            return x([*idx[:axis], row, *idx[axis:]])
        position = [idx[axis]] + [ctx.index(0)] * (index.rank - 1)
        row = _row(ctx, index(position), x.shape[axis])
        return x(_replace(idx, axis, row))

    return Compute(x.dtype, ctx.out_shape(), element)


def _embedding(ctx: LowerContext) -> Compute:
    """Rows of `weight` by id; rows whose id is `padding_idx` are zero (a negative
    padding_idx never matches: ids are never negative)."""
    ids, weight = ctx.input(0), ctx.input(1)
    padding = int(ctx.attr("padding_idx", -1))

    def element(idx: Indices) -> Expr:
        key = ids(idx[:-1])
        row = weight([convert(key, ctx.index_dtype), idx[-1]])
        if padding < 0:
            return row
        return Select(EQ(key, const(padding, key.dtype)), const(0, weight.dtype), row)

    return Compute(weight.dtype, ctx.out_shape(), element)


def _combine(ctx: LowerContext) -> Vector:
    return [ctx.input(i) for i in range(len(ctx.operands))]


def _unpack(ctx: LowerContext) -> Vector:
    """builtin.split: one result per tensor of the vector."""
    return ctx.inputs(0)


def _item(ctx: LowerContext) -> Compute:
    return ctx.inputs(0)[int(ctx.attr("index"))]


LOWERINGS: dict[str, OpLowering] = {
    "pd_op.reshape": OpLowering(_reshape_like),
    "pd_op.squeeze": OpLowering(_reshape_like),
    "pd_op.unsqueeze": OpLowering(_reshape_like),
    "pd_op.flatten": OpLowering(_reshape_like),
    "pd_op.transpose": OpLowering(_transpose),
    "pd_op.concat": OpLowering(_concat),
    "pd_op.stack": OpLowering(_stack),
    "pd_op.split": OpLowering(_split),
    "pd_op.split_with_num": OpLowering(_split_with_num),
    "pd_op.slice": OpLowering(_slice),
    "pd_op.strided_slice": OpLowering(_strided_slice),
    "pd_op.gather": OpLowering(_gather),
    "pd_op.embedding": OpLowering(_embedding),
    "builtin.combine": OpLowering(_combine),
    "builtin.split": OpLowering(_unpack),
    "builtin.slice": OpLowering(_item),
}
