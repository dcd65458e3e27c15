"""Shape and layout ops: reshape and friends, transpose, expand / tile, concat / stack,
split, slicing, gather. Values move, none change.

Declarations: shapes, axes, sections, starts/ends/strides and repeat counts arrive as
mutable-attribute operands; where they are computed at run time the result keeps its
rank and gets -1 dims, as Paddle's InferMeta does. Paddle has no `pd_op.broadcast_to`:
`paddle.broadcast_to` builds `pd_op.expand`.

Slicing follows Python's rules, which are Paddle's too (checked against Paddle): a
negative start or end counts from the end, out-of-range bounds clamp, an empty range
gives a zero-size dim (not an error, in Paddle 3.3.1), and a negative stride walks
backwards from a clamped start.

Lowerings: each output element reads one input element at an index computed from its
own (CINN's injective ops). Shapes come from the declared result types (static when
lowering), so reshape, squeeze, unsqueeze and flatten are one rule: the output index,
linearised, read back in the input's shape (`(i0*128 + i1) / 64` after
simplification; `reshaped`, which other families use too). expand and tile broadcast:
dims align from the right, a dim of 1 facing a larger one is read at index 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cinn_py.hlir.op_lowering.compute import (
    Compute,
    Indices,
    Vector,
    broadcast_to,
    index_value,
)
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering
from cinn_py.hlir.op_lowering.scalar import convert
from cinn_py.ir.expr import EQ, LT, Add, Div, Expr, IntImm, Mod, Mul, Select
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import Int32Attribute, Int64Attribute
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import (
    ArrayOf,
    AttrSpec,
    InferContext,
    InferMeta,
    OpDef,
    OperandSpec,
    Scalar,
    attr,
    operand,
)
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type, VectorType
from cinn_py.reference_ops.context import Kernel, KernelContext, check_indices, normalize_axis

# -- declarations -------------------------------------------------------------------------

Dims = tuple[int, ...]


# -- reshape family ----------------------------------------------------------------------


def reshape_dims(ctx: InferContext, in_dims: Sequence[int], shape: Sequence[int]) -> Dims:
    """Paddle's ValidateShape: 0 copies the input dim (stays 0 for a zero-size input),
    one -1 is inferred from the element count."""
    in_size = im.product(in_dims)
    out: list[int] = []
    unknown = None
    for i, s in enumerate(shape):
        if s == -1:
            if unknown is not None:
                raise ctx.error(f"shape {im.fmt(shape)} has more than one -1")
            unknown = i
            out.append(DYNAMIC)
        elif s == 0:
            if in_size == 0:
                out.append(0)
            elif i < len(in_dims):
                out.append(in_dims[i])
            else:
                raise ctx.error(
                    f"shape {im.fmt(shape)} has 0 at index {i}, past the input's rank "
                    f"{len(in_dims)} (only a zero-size input allows that)"
                )
        elif s > 0:
            out.append(s)
        else:
            raise ctx.error(f"shape {im.fmt(shape)} has a negative size {s} other than -1")
    known = [d for i, d in enumerate(out) if i != unknown]
    if DYNAMIC in known or in_size == DYNAMIC:
        return tuple(out)
    capacity = im.product(known)
    if unknown is not None:
        if in_size == 0:
            nonzero_in = im.product([d for d in in_dims if d != 0])
            nonzero_out = im.product([d for d in known if d != 0])
            out[unknown] = nonzero_in // nonzero_out if 0 in shape else 0
        elif in_size % capacity:
            raise ctx.error(
                f"cannot reshape {im.fmt(in_dims)} ({in_size} elements) to {im.fmt(shape)}: "
                f"{in_size} is not divisible by {capacity}"
            )
        else:
            out[unknown] = in_size // capacity
    elif capacity != in_size:
        raise ctx.error(
            f"cannot reshape {im.fmt(in_dims)} ({in_size} elements) to {im.fmt(shape)} "
            f"({capacity} elements)"
        )
    return tuple(out)


def _infer_reshape(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    shape = im.int_array(ctx, "shape")
    if None not in shape:
        return [x.with_dims(reshape_dims(ctx, x.dims, shape))]
    # Partly computed at run time: Paddle takes the entries as they are, copying 0s.
    out = []
    for i, s in enumerate(shape):
        if s is None or s == -1:
            out.append(DYNAMIC)
        elif s == 0:
            if i >= x.rank:
                raise ctx.error(f"shape has 0 at index {i}, past the input's rank {x.rank}")
            out.append(x.dims[i])
        elif s > 0:
            out.append(s)
        else:
            raise ctx.error(f"shape has a negative size {s} other than -1")
    return [x.with_dims(out)]


def _infer_squeeze(ctx: InferContext) -> list[Type]:
    """SqueezeInferMeta: named dims of size 1 (or -1) go; no axes squeezes every 1."""
    x = ctx.tensor("x")
    axes = im.int_array(ctx, "axis")
    rank = x.rank
    if None in axes:
        return [x.with_dims((DYNAMIC,) * max(rank - len(axes), 0))]
    if not axes:
        return [x.with_dims(tuple(d for d in x.dims if d != 1))]
    drop: set[int] = set()
    for axis in axes:
        if rank == 0:
            if axis not in (-1, 0):
                raise ctx.error(f"axis {axis} is out of range for a 0-D tensor (expected -1 or 0)")
            continue
        index = im.normalize_axis(ctx, axis, rank)
        if x.dims[index] in (1, DYNAMIC):
            drop.add(index)
    return [x.with_dims(tuple(d for i, d in enumerate(x.dims) if i not in drop))]


def _infer_unsqueeze(ctx: InferContext) -> list[Type]:
    """UnsqueezeInferMeta (GetUnsqueezeShape): axes insert 1s one after another."""
    x = ctx.tensor("x")
    axes = im.int_array(ctx, "axis")
    if None in axes:
        return [x.with_dims((DYNAMIC,) * (x.rank + len(axes)))]
    out_rank = x.rank + len(axes)
    marks = [0] * (out_rank + 1)
    cur_rank = x.rank
    for axis in axes:
        cur = axis + cur_rank + 1 if axis < 0 else axis
        if not 0 <= cur <= cur_rank:
            raise ctx.error(
                f"unsqueeze axis {axis} is out of range [{-cur_rank - 1}, {cur_rank}] "
                f"for a rank-{cur_rank} tensor"
            )
        for i in range(cur_rank, cur - 1, -1):
            if marks[i] == 1:
                marks[i + 1], marks[i] = 1, 0
        marks[cur] = 1
        cur_rank += 1
    source = iter(x.dims)
    return [x.with_dims(tuple(1 if m else next(source) for m in marks[:out_rank]))]


def _infer_flatten(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    start, stop = ctx.attr("start_axis"), ctx.attr("stop_axis")
    if x.rank == 0:
        for axis in (start, stop):
            im.normalize_axis(ctx, axis, 0, "flatten axis")
        return [x.with_dims((1,))]
    start = im.normalize_axis(ctx, start, x.rank, "start_axis")
    stop = im.normalize_axis(ctx, stop, x.rank, "stop_axis")
    if stop < start:
        raise ctx.error(f"stop_axis {stop} is before start_axis {start}")
    merged = im.product(x.dims[start : stop + 1])
    return [x.with_dims(x.dims[:start] + (merged,) + x.dims[stop + 1 :])]


def _infer_transpose(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    perm = ctx.attr("perm")
    if len(perm) > x.rank:
        raise ctx.error(f"perm {perm} is longer than the input's rank {x.rank}")
    out = list(x.dims)
    seen: set[int] = set()
    for i, axis in enumerate(perm):
        index = im.normalize_axis(ctx, axis, x.rank, "perm entry")
        if index in seen:
            raise ctx.error(f"perm {perm} names axis {index} more than once")
        seen.add(index)
        out[i] = x.dims[index]
    return [x.with_dims(out)]


# -- broadcasting copies -------------------------------------------------------------------


def _infer_expand(ctx: InferContext) -> list[Type]:
    """ExpandInferMeta: -1 keeps the input dim; new leading dims are prepended; an
    empty shape keeps x as it is."""
    x = ctx.tensor("x")
    shape = im.int_array(ctx, "shape")
    if not shape:
        return [x]
    if len(shape) < x.rank:
        raise ctx.error(f"shape has {len(shape)} entries, fewer than the input's rank {x.rank}")
    offset = len(shape) - x.rank
    out = []
    for i, s in enumerate(shape):
        source = x.dims[i - offset] if i >= offset else None
        if s is None:
            out.append(DYNAMIC)
        elif s == -1:
            out.append(DYNAMIC if source is None else source)
        elif s < 0:
            raise ctx.error(f"shape has a negative size {s} other than -1")
        else:
            if source not in (None, 1, DYNAMIC, s):
                raise ctx.error(
                    f"cannot expand {im.fmt(x.dims)} to {im.fmt([DYNAMIC if v is None else v for v in shape])}: "
                    f"dim {source} is neither 1 nor {s}"
                )
            out.append(s)
    return [x.with_dims(out)]


def _infer_tile(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    repeats = im.int_array(ctx, "repeat_times")
    rank = max(x.rank, len(repeats))
    dims = (1,) * (rank - x.rank) + x.dims
    reps = [1] * (rank - len(repeats)) + repeats
    out = []
    for d, r in zip(dims, reps, strict=True):
        if r is not None and r < -1:
            raise ctx.error(f"repeat_times has a negative count {r}")
        out.append(DYNAMIC if d == DYNAMIC or r is None or r == -1 else d * r)
    return [x.with_dims(out)]


# -- joining and splitting -----------------------------------------------------------------


def _join_dims(ctx: InferContext, inputs: Sequence[DenseTensorType], axis: int | None) -> list[int]:
    """ComputeAndCheckShape: all inputs agree off `axis` (unknown dims take a known one);
    along `axis` the sizes add up."""
    first = inputs[0].dims
    out = list(first)
    for n, t in enumerate(inputs[1:], 1):
        if t.rank != len(first):
            raise ctx.error(
                f"input 0 has dims {im.fmt(first)} but input {n} has dims {im.fmt(t.dims)}: ranks differ"
            )
        for j, d in enumerate(t.dims):
            if j == axis:
                out[j] = DYNAMIC if DYNAMIC in (out[j], d) else out[j] + d
                continue
            if d != DYNAMIC and first[j] != DYNAMIC and d != first[j]:
                raise ctx.error(
                    f"dim {j} differs: input 0 has dims {im.fmt(first)}, input {n} has {im.fmt(t.dims)}"
                )
            if out[j] == DYNAMIC:
                out[j] = d
    return out


def _infer_concat(ctx: InferContext) -> list[Type]:
    inputs = ctx.tensors("x")
    if not inputs:
        raise ctx.error("needs at least one input", operand="x")
    first = inputs[0]
    axis = im.int_scalar(ctx, "axis")
    if axis is None:
        return [first.with_dims((DYNAMIC,) * first.rank)]
    if first.rank == 0:
        raise ctx.error("cannot concatenate 0-D tensors")
    index = im.normalize_axis(ctx, axis, first.rank)
    return [first.with_dims(_join_dims(ctx, inputs, index))]


def _infer_stack(ctx: InferContext) -> list[Type]:
    inputs = ctx.tensors("x")
    if not inputs:
        raise ctx.error("needs at least one input", operand="x")
    dims = _join_dims(ctx, inputs, None)
    index = im.normalize_axis(ctx, ctx.attr("axis"), len(dims) + 1)
    return [inputs[0].with_dims(dims[:index] + [len(inputs)] + dims[index:])]


def _unknown_parts(x: DenseTensorType, count: int) -> list[Type]:
    return [VectorType.get([x.with_dims((DYNAMIC,) * x.rank)] * count)]


def _parts(x: DenseTensorType, axis: int, sizes: Sequence[int]) -> list[Type]:
    return [VectorType.get([x.with_dims(x.dims[:axis] + (s,) + x.dims[axis + 1 :]) for s in sizes])]


def _infer_split(ctx: InferContext) -> list[Type]:
    """SplitInferMeta: one -1 section takes the rest; unknown pieces give -1 dims."""
    x = ctx.tensor("x")
    if x.rank == 0:
        raise ctx.error("cannot split a 0-D tensor", operand="x")
    sections = im.int_array(ctx, "sections")
    axis = im.int_scalar(ctx, "axis")
    if axis is None:
        return _unknown_parts(x, len(sections))
    index = im.normalize_axis(ctx, axis, x.rank)
    total = x.dims[index]
    if None in sections:
        return _unknown_parts(x, len(sections))
    if total == DYNAMIC:
        return _parts(x, index, [DYNAMIC] * len(sections))
    rest = [i for i, s in enumerate(sections) if s == -1]
    if len(rest) > 1 or any(s < -1 for s in sections):
        raise ctx.error(f"sections {sections} may hold one -1 and otherwise sizes >= 0")
    known = sum(s for s in sections if s != -1)
    sizes = list(sections)
    if rest:
        if known >= total:
            raise ctx.error(
                f"sections {sections} leave nothing for the -1 section of dim {index} (size {total})"
            )
        sizes[rest[0]] = total - known
    elif known != total:
        raise ctx.error(f"sections {sections} add up to {known}, not dim {index}'s size {total}")
    return _parts(x, index, sizes)


def _infer_split_with_num(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    if x.rank == 0:
        raise ctx.error("cannot split a 0-D tensor", operand="x")
    num = ctx.attr("num")
    if not 0 < num <= im.MAX_INT_ARRAY:
        raise ctx.error(f"num must be in [1, {im.MAX_INT_ARRAY}], got {num}")
    axis = im.int_scalar(ctx, "axis")
    if axis is None:
        return _unknown_parts(x, num)
    index = im.normalize_axis(ctx, axis, x.rank)
    total = x.dims[index]
    if total == DYNAMIC:
        return _parts(x, index, [DYNAMIC] * num)
    if total % num:
        raise ctx.error(f"dim {index} (size {total}) does not split evenly into {num} parts")
    return _parts(x, index, [total // num] * num)


# -- slicing and gathering ---------------------------------------------------------------


def _slice_len(start: int, end: int, step: int, size: int) -> int:
    """Elements of range start:end:step over `size`, clamped as Python clamps slices."""
    return len(range(*slice(start, end, step).indices(size)))


def _infer_slice(ctx: InferContext) -> list[Type]:
    """SliceRawInferMeta; starts/ends computed at run time count as -1 (as Paddle has it),
    so only `infer_flags` of -1 makes such an axis unknown."""
    x = ctx.tensor("input")
    axes = ctx.attr("axes")
    starts = im.int_array(ctx, "starts")
    ends = im.int_array(ctx, "ends")
    infer_flags = ctx.attr("infer_flags") or [1] * len(axes)
    exact = None not in starts and None not in ends
    if None in starts:
        starts = [-1] * len(starts)
    if None in ends:
        ends = [-1] * len(ends)
    if len(starts) != len(axes) or len(ends) != len(axes):
        raise ctx.error(f"axes {axes}, starts {starts} and ends {ends} differ in length")
    if len(infer_flags) != len(axes):
        raise ctx.error(f"infer_flags {infer_flags} and axes {axes} differ in length")
    dims = list(x.dims)
    for i, axis in enumerate(axes):
        axis = max(0, axis + x.rank) if axis < 0 else axis
        if axis >= x.rank:
            raise ctx.error(f"axis {axes[i]} is out of range for a rank-{x.rank} tensor")
        if infer_flags[i] == -1 or x.dims[axis] == DYNAMIC:
            dims[axis] = DYNAMIC
        else:
            dims[axis] = _slice_len(starts[i], ends[i], 1, x.dims[axis])
    decrease = ctx.attr("decrease_axis")
    for axis in decrease:
        if not 0 <= axis < x.rank:
            raise ctx.error(f"decrease_axis {decrease} is out of range for a rank-{x.rank} tensor")
        if exact and dims[axis] not in (1, DYNAMIC):
            raise ctx.error(
                f"decrease_axis drops dim {axis}, whose slice has size {dims[axis]}, not 1"
            )
    return [x.with_dims(tuple(d for i, d in enumerate(dims) if i not in decrease))]


def _infer_strided_slice(ctx: InferContext) -> list[Type]:
    """StridedSliceInferMeta: Python slice semantics, negative strides included; any
    start/end/stride computed at run time makes every dim unknown (as in Paddle)."""
    x = ctx.tensor("x")
    axes = ctx.attr("axes")
    starts = im.int_array(ctx, "starts")
    ends = im.int_array(ctx, "ends")
    strides = im.int_array(ctx, "strides")
    if not len(axes) == len(starts) == len(ends) == len(strides):
        raise ctx.error(
            f"axes {axes}, starts, ends and strides differ in length "
            f"({len(axes)}, {len(starts)}, {len(ends)}, {len(strides)})"
        )
    for axis in axes:
        if not 0 <= axis < x.rank:
            raise ctx.error(f"axis {axis} is out of range [0, {x.rank})")
    if None in starts or None in ends or None in strides:
        return [x.with_dims((DYNAMIC,) * x.rank)]
    dims = list(x.dims)
    for axis, start, end, stride in zip(axes, starts, ends, strides, strict=True):
        if stride == 0:
            raise ctx.error(f"stride 0 on axis {axis}")
        if x.dims[axis] != DYNAMIC:
            dims[axis] = _slice_len(start, end, stride, x.dims[axis])
    return [x.with_dims(dims)]


def _infer_gather(ctx: InferContext) -> list[Type]:
    """GatherInferMeta. An axis computed at run time is taken as 0 (Paddle's guess)."""
    x, index = ctx.tensor("x"), ctx.tensor("index")
    if index.rank == 2:
        if index.dims[1] not in (1, DYNAMIC):
            raise ctx.error(f"a 2-D index must have dims [n, 1], got {im.fmt(index.dims)}")
    elif index.rank > 2:
        raise ctx.error(f"index must be 0-D, 1-D or [n, 1], got {im.fmt(index.dims)}")
    axis = im.int_scalar(ctx, "axis")
    if axis is not None and not -x.rank <= axis < x.rank:
        raise ctx.error(f"axis {axis} is out of range [{-x.rank}, {x.rank})")
    a = 0 if axis is None else axis % x.rank
    if index.rank == 0:
        dims = () if x.rank == 1 else x.dims[:a] + x.dims[a + 1 :]
    else:
        dims = x.dims[:a] + (index.dims[0],) + x.dims[a + 1 :]
    return [x.with_dims(dims)]


# -- reference kernels --------------------------------------------------------------------


def transpose(ctx: KernelContext) -> np.ndarray:
    return np.transpose(ctx.tensor(0), ctx.attr("perm"))


def reshape(ctx: KernelContext) -> np.ndarray:
    """A 0 in `shape` copies the input's dim at that position (it stays 0 for a
    zero-size input, as Paddle's ValidateShape has it); one -1 is inferred."""
    x = ctx.tensor(0)
    shape = ctx.int_list(1, "shape")
    if x.size:
        shape = [x.shape[i] if size == 0 and i < x.ndim else size for i, size in enumerate(shape)]
    return _reshaped_array(ctx, x, shape)


def _reshaped_array(ctx: KernelContext, x: np.ndarray, shape: list[int]) -> np.ndarray:
    """`x.reshape(shape)`; NumPy cannot infer a -1 next to a 0 dim, so for a zero-size
    `x` the -1 takes the declared result's dim (0 where that is dynamic too)."""
    if x.size == 0 and -1 in shape:
        declared = ctx.result_type().dims
        if len(declared) == len(shape):
            shape = [max(d, 0) if s == -1 else s for s, d in zip(shape, declared, strict=True)]
        else:
            shape = [0 if s == -1 else s for s in shape]
    return x.reshape(shape)


def squeeze(ctx: KernelContext) -> np.ndarray:
    """The listed axes that have size 1 (all size-1 axes if none is listed); a listed
    axis of another size stays, as in Paddle."""
    x = ctx.tensor(0)
    axes = {normalize_axis(a, x.ndim, ctx) for a in ctx.int_list(1, "axis")} if x.ndim else set()
    drop = tuple(i for i, size in enumerate(x.shape) if size == 1 and (not axes or i in axes))
    return np.squeeze(x, axis=drop)


def unsqueeze(ctx: KernelContext) -> np.ndarray:
    """Inserts size-1 axes one after another, each axis counted in the shape so far
    (a negative one from its end, +1), as Paddle's GetUnsqueezeShape does."""
    x = ctx.tensor(0)
    shape = list(x.shape)
    for axis in ctx.int_list(1, "axis"):
        rank = len(shape)
        position = axis + rank + 1 if axis < 0 else axis
        if not 0 <= position <= rank:
            raise ctx.error(f"axis {axis} is out of range for a rank-{rank} tensor")
        shape.insert(position, 1)
    return x.reshape(shape)


def flatten(ctx: KernelContext) -> np.ndarray:
    x = ctx.tensor(0)
    if x.ndim == 0:
        return x.reshape(1)
    start = normalize_axis(ctx.attr("start_axis"), x.ndim, ctx)
    stop = normalize_axis(ctx.attr("stop_axis"), x.ndim, ctx)
    flat = math.prod(x.shape[start : stop + 1])  # explicit: NumPy cannot infer -1 at size 0
    return x.reshape(x.shape[:start] + (flat,) + x.shape[stop + 1 :])


def expand(ctx: KernelContext) -> np.ndarray:
    """Broadcast to `shape`; a -1 keeps the input's (right-aligned) dim."""
    x = ctx.tensor(0)
    shape = ctx.int_list(1, "shape")
    offset = len(shape) - x.ndim
    if offset < 0:
        raise ctx.shape_error(f"cannot expand rank {x.ndim} to shape {shape}")
    target = [x.shape[i - offset] if size == -1 else size for i, size in enumerate(shape)]
    return np.broadcast_to(x, target)


def concat(ctx: KernelContext) -> np.ndarray:
    items = ctx.tensors(0)
    axis = normalize_axis(int(ctx.scalar(1, "axis")), items[0].ndim, ctx)
    return np.concatenate(items, axis=axis)


def stack(ctx: KernelContext) -> np.ndarray:
    items = ctx.tensors(0)
    axis = normalize_axis(ctx.attr("axis"), items[0].ndim + 1, ctx)
    return np.stack(items, axis=axis)


def split(ctx: KernelContext) -> list[np.ndarray]:
    """Sections along `axis`; one section may be -1 (the rest)."""
    x = ctx.tensor(0)
    axis = normalize_axis(int(ctx.scalar(2, "axis")), x.ndim, ctx)
    sections = ctx.int_list(1, "sections")
    if sections.count(-1) == 1:
        sections[sections.index(-1)] = x.shape[axis] - (sum(sections) + 1)
    if sum(sections) != x.shape[axis] or min(sections, default=0) < 0:
        raise ctx.shape_error(f"sections {sections} do not split a dim of {x.shape[axis]}")
    return np.split(x, np.cumsum(sections)[:-1], axis=axis)


def split_with_num(ctx: KernelContext) -> list[np.ndarray]:
    x = ctx.tensor(0)
    axis = normalize_axis(int(ctx.scalar(1, "axis")), x.ndim, ctx)
    return np.split(x, ctx.attr("num"), axis=axis)


def _sliced(
    ctx: KernelContext,
    x: np.ndarray,
    axes: list[int],
    starts: list[int],
    ends: list[int],
    strides: list[int],
) -> np.ndarray:
    if not len(axes) == len(starts) == len(ends) == len(strides):
        raise ctx.error(
            f"axes {axes}, starts {starts}, ends {ends}, strides {strides} differ in length"
        )
    index = [slice(None)] * x.ndim
    for axis, start, end, stride in zip(axes, starts, ends, strides, strict=True):
        if stride == 0:
            raise ctx.error("a stride of 0")
        index[normalize_axis(axis, x.ndim, ctx)] = slice(start, end, stride)
    return x[tuple(index)]


def slice_kernel(ctx: KernelContext) -> np.ndarray:
    """Step-1 slices of `axes`; `decrease_axis` then drops those (size-1) axes."""
    x = ctx.tensor(0)
    axes = ctx.attr("axes")
    out = _sliced(ctx, x, axes, ctx.int_list(1, "starts"), ctx.int_list(2, "ends"), [1] * len(axes))
    decrease = tuple(normalize_axis(a, x.ndim, ctx) for a in ctx.attr("decrease_axis"))
    if any(out.shape[a] != 1 for a in decrease):
        raise ctx.shape_error(f"decrease_axis {list(decrease)} of shape {list(out.shape)}")
    return np.squeeze(out, axis=decrease)


def strided_slice(ctx: KernelContext) -> np.ndarray:
    x = ctx.tensor(0)
    return _sliced(
        ctx,
        x,
        ctx.attr("axes"),
        ctx.int_list(1, "starts"),
        ctx.int_list(2, "ends"),
        ctx.int_list(3, "strides"),
    )


def gather(ctx: KernelContext) -> np.ndarray:
    """Rows `index` of `x` along `axis`. As in Paddle, a negative index counts from the
    end and one outside [-size, size) is an error."""
    x, index = ctx.tensor(0), ctx.tensor(1)
    axis = normalize_axis(int(ctx.scalar(2, "axis")), x.ndim, ctx)
    check_indices(ctx, index, -x.shape[axis], x.shape[axis])
    return np.take(x, index.astype(np.int64), axis=axis)


def tile(ctx: KernelContext) -> np.ndarray:
    return np.tile(ctx.tensor(0), ctx.int_list(1, "repeat_times"))


# -- lowerings ----------------------------------------------------------------------------


def strides(shape: Sequence[Any]) -> list[Any]:
    """Row-major element strides of `shape` (ints, or index Exprs where a dim is
    symbolic)."""
    out: list[Any] = []
    step: Any = 1
    for extent in reversed(shape):
        out.append(step)
        if isinstance(step, int) and isinstance(extent, int):
            step *= extent
        elif not (isinstance(extent, int) and extent == 1):
            step = extent if isinstance(step, int) and step == 1 else extent * step
    return out[::-1]


def reshaped(x: Compute, shape: tuple[int, ...], index_dtype: DataType) -> Compute:
    """`x`'s elements in row-major order, read as a tensor of `shape`."""
    if x.shape == shape:
        return x
    out_strides, in_strides = strides(shape), strides(x.shape)

    def element(idx: Indices) -> Expr:
        linear: Expr = IntImm(0, index_dtype)
        for index, stride in zip(idx, out_strides, strict=True):
            term = index if _is_unit(stride) else Mul(index, index_value(stride, index_dtype))
            linear = term if _is_zero(linear) else Add(linear, term)
        indices: list[Expr] = []
        for k, (extent, stride) in enumerate(zip(x.shape, in_strides, strict=True)):
            index = linear if _is_unit(stride) else Div(linear, index_value(stride, index_dtype))
            indices.append(index if k == 0 else Mod(index, index_value(extent, index_dtype)))
        return x(indices)

    return Compute(x.dtype, shape, element)


def _is_unit(stride: Any) -> bool:
    return isinstance(stride, int) and stride == 1


def _is_zero(x: Expr) -> bool:
    return isinstance(x, IntImm) and x.value == 0


def _lower_reshape(ctx: LowerContext) -> Compute:
    return reshaped(ctx.input(0), ctx.out_shape(), ctx.index_dtype)


def _lower_transpose(ctx: LowerContext) -> Compute:
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


def _lower_concat(ctx: LowerContext) -> Compute:
    """Pieces along `axis`: the output index picks the piece by a chain of selects."""
    items = ctx.inputs(0)
    shape, dtype = ctx.out_shape(), ctx.out_dtype()
    axis = ctx.normalize_axis(int(ctx.scalar(1, "axis")), len(shape))
    pieces: list[tuple[int, Compute]] = []
    offset = 0
    for item in items:
        if not isinstance(item.shape[axis], int) or item.shape[axis]:
            pieces.append((offset, item))
        offset += item.shape[axis]

    def element(idx: Indices) -> Expr:
        i = idx[axis]

        def read(start: int, item: Compute) -> Expr:
            return convert(item(_replace(idx, axis, _shifted(i, -start))), dtype)

        result = read(*pieces[-1])
        for start, item in reversed(pieces[:-1]):
            end = index_value(start + item.shape[axis], i.dtype)
            result = Select(LT(i, end), read(start, item), result)
        return result

    return Compute(dtype, shape, element)


def _lower_stack(ctx: LowerContext) -> Compute:
    """Tensor k of the list at index k of the new `axis`."""
    items = ctx.inputs(0)
    shape, dtype = ctx.out_shape(), ctx.out_dtype()
    axis = ctx.normalize_axis(ctx.attr("axis"), len(shape))

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
        # x's dims (symbolic ones included) but the split axis's, which is the piece's
        shape = tuple(type_.dims[axis] if d == axis else n for d, n in enumerate(x.shape))
        out.append(_piece(x, axis, offset, shape))
        offset += type_.dims[axis]
    if offset != x.shape[axis]:
        raise ctx.shape_error(f"the parts cover {offset} of dim {axis} (size {x.shape[axis]})")
    return out


def _piece(x: Compute, axis: int, offset: int, shape: tuple[Any, ...]) -> Compute:
    def element(idx: Indices) -> Expr:
        return x(_replace(idx, axis, _shifted(idx[axis], offset)))

    return Compute(x.dtype, shape, element)


def _lower_split(ctx: LowerContext) -> Vector:
    x = ctx.input(0)
    return _pieces(ctx, x, ctx.normalize_axis(int(ctx.scalar(2, "axis")), x.rank))


def _lower_split_with_num(ctx: LowerContext) -> Vector:
    x = ctx.input(0)
    return _pieces(ctx, x, ctx.normalize_axis(int(ctx.scalar(1, "axis")), x.rank))


def _slice_ranges(
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


def _lower_slice(ctx: LowerContext) -> Compute:
    """Step-1 slices; `decrease_axis` drops those (size-1) axes."""
    x = ctx.input(0)
    axes = ctx.attr("axes")
    ranges = _slice_ranges(
        ctx, x, axes, ctx.int_list(1, "starts"), ctx.int_list(2, "ends"), [1] * len(axes)
    )
    dropped = {ctx.normalize_axis(a, x.rank) for a in ctx.attr("decrease_axis")}
    return _slice_compute(ctx, x, ranges, dropped)


def _lower_strided_slice(ctx: LowerContext) -> Compute:
    x = ctx.input(0)
    ranges = _slice_ranges(
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


def _lower_gather(ctx: LowerContext) -> Compute:
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


def _lower_expand(ctx: LowerContext) -> Compute:
    return broadcast_to(ctx.input(0), ctx.out_shape())


def _lower_tile(ctx: LowerContext) -> Compute:
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


# -- entries -------------------------------------------------------------------------------


def _injective(
    name: str,
    operands: tuple[OperandSpec, ...],
    infer: InferMeta,
    kernel: Kernel,
    lower: Callable[[LowerContext], Compute | Vector],
    *,
    attributes: tuple[AttrSpec, ...] = (),
    pattern: OpPatternKind = OpPatternKind.INJECTIVE,
    traits: frozenset[Trait] = frozenset(),
    symbolic_meta: sym.Rule | None = None,
    symbolic_value: sym.ValueRule | None = None,
    symbolic: bool = False,
) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=operands,
        attributes=attributes,
        pattern=pattern,
        traits=traits,
        infer_meta=infer,
        kernel=kernel,
        lowering=OpLowering(lower, symbolic=symbolic),
        symbolic_meta=symbolic_meta,
        symbolic_value=symbolic_value,
    )


_RESHAPE = frozenset({Trait.RESHAPE})

OPS = [
    _injective(
        "reshape",
        (operand("x"), operand("shape", mutable_attr="shape")),
        _infer_reshape,
        reshape,
        _lower_reshape,
        traits=_RESHAPE,
        symbolic_meta=sym.reshape_shape,
        symbolic_value=sym.pass_through_value,
        symbolic=True,
    ),
    _injective(
        "squeeze",
        (operand("x"), operand("axis", mutable_attr="axis")),
        _infer_squeeze,
        squeeze,
        _lower_reshape,
        traits=_RESHAPE,
        symbolic_meta=sym.squeeze_shape,
        symbolic_value=sym.pass_through_value,
        symbolic=True,
    ),
    _injective(
        "unsqueeze",
        (operand("x"), operand("axis", mutable_attr="axis")),
        _infer_unsqueeze,
        unsqueeze,
        _lower_reshape,
        traits=_RESHAPE,
        symbolic_meta=sym.unsqueeze_shape,
        symbolic_value=sym.pass_through_value,
        symbolic=True,
    ),
    _injective(
        "flatten",
        (operand("x"),),
        _infer_flatten,
        flatten,
        _lower_reshape,
        attributes=(attr("start_axis", Int32Attribute, 1), attr("stop_axis", Int32Attribute, 1)),
        traits=_RESHAPE,
        symbolic_meta=sym.flatten_shape,
        symbolic=True,
    ),
    _injective(
        "transpose",
        (operand("x"),),
        _infer_transpose,
        transpose,
        _lower_transpose,
        attributes=(attr("perm", ArrayOf(Int32Attribute)),),
        symbolic_meta=sym.transpose_shape,
        symbolic=True,
    ),
    _injective(
        "expand",
        (operand("x"), operand("shape", mutable_attr="shape")),
        _infer_expand,
        expand,
        _lower_expand,
        pattern=OpPatternKind.BROADCAST,
        symbolic_meta=sym.expand_shape,
        symbolic=True,
    ),
    _injective(
        "tile",
        (operand("x"), operand("repeat_times", mutable_attr="repeat_times")),
        _infer_tile,
        tile,
        _lower_tile,
        pattern=OpPatternKind.BROADCAST,
        symbolic_meta=sym.tile_shape,
    ),
    _injective(
        "concat",
        (operand("x", variadic=True), operand("axis", mutable_attr="axis", mutable_kind=Scalar)),
        _infer_concat,
        concat,
        _lower_concat,
        symbolic_meta=sym.concat_shape,
        symbolic_value=sym.stack_value,
        symbolic=True,
    ),
    _injective(
        "stack",
        (operand("x", variadic=True),),
        _infer_stack,
        stack,
        _lower_stack,
        attributes=(attr("axis", Int32Attribute, 0),),
        symbolic_meta=sym.stack_shape,
        symbolic_value=sym.stack_value,
    ),
    _injective(
        "split",
        (
            operand("x"),
            operand("sections", mutable_attr="sections"),
            operand("axis", mutable_attr="axis", mutable_kind=Scalar),
        ),
        _infer_split,
        split,
        _lower_split,
        symbolic_meta=sym.split_sections_shape,
        symbolic=True,
    ),
    _injective(
        "split_with_num",
        (operand("x"), operand("axis", mutable_attr="axis", mutable_kind=Scalar)),
        _infer_split_with_num,
        split_with_num,
        _lower_split_with_num,
        attributes=(attr("num", Int32Attribute),),
        symbolic_meta=sym.split_with_num_shape,
        symbolic=True,
    ),
    _injective(
        "slice",
        (
            operand("input"),
            operand("starts", mutable_attr="starts"),
            operand("ends", mutable_attr="ends"),
        ),
        _infer_slice,
        slice_kernel,
        _lower_slice,
        attributes=(
            attr("axes", ArrayOf(Int64Attribute)),
            attr("infer_flags", ArrayOf(Int64Attribute), []),
            attr("decrease_axis", ArrayOf(Int64Attribute), []),
        ),
        symbolic_meta=sym.slice_shape,
        symbolic_value=sym.slice_value,
        symbolic=True,
    ),
    _injective(
        "strided_slice",
        (
            operand("x"),
            operand("starts", mutable_attr="starts"),
            operand("ends", mutable_attr="ends"),
            operand("strides", mutable_attr="strides"),
        ),
        _infer_strided_slice,
        strided_slice,
        _lower_strided_slice,
        attributes=(attr("axes", ArrayOf(Int32Attribute)),),
        symbolic_meta=sym.strided_slice_shape,
    ),
    _injective(
        "gather",
        (
            operand("x"),
            operand("index"),
            operand("axis", mutable_attr="axis", mutable_kind=Scalar),
        ),
        _infer_gather,
        gather,
        _lower_gather,
        symbolic_meta=sym.gather_shape,
    ),
]
