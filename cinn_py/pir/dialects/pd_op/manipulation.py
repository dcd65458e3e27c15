"""pd_op shape manipulation: reshape and friends, transpose, expand/tile, concat/stack,
split, slicing, gather.

Shapes, axes, sections, starts/ends/strides and repeat counts arrive as mutable-attribute
operands; where they are computed at run time the result keeps its rank and gets -1
dims, as Paddle's InferMeta does. Slicing clamps like Python slices (Paddle 3.3.1 gives
an empty dim, not an error, for an empty range). Paddle has no `pd_op.broadcast_to`:
`paddle.broadcast_to` builds `pd_op.expand`.
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.pir.dialects.pd_op import infer_meta as im
from cinn_py.pir.dialects.pd_op.traits import BROADCAST, INJECTIVE, traits
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type, VectorType

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


OPS = [
    OpDef(
        "pd_op.reshape",
        operands=(operand("x"), operand("shape", mutable_attr="shape")),
        traits=traits(INJECTIVE),
        infer_meta=_infer_reshape,
    ),
    OpDef(
        "pd_op.squeeze",
        operands=(operand("x"), operand("axis", mutable_attr="axis")),
        traits=traits(INJECTIVE),
        infer_meta=_infer_squeeze,
    ),
    OpDef(
        "pd_op.unsqueeze",
        operands=(operand("x"), operand("axis", mutable_attr="axis")),
        traits=traits(INJECTIVE),
        infer_meta=_infer_unsqueeze,
    ),
    OpDef(
        "pd_op.flatten",
        operands=(operand("x"),),
        attributes=(attr("start_axis", "int32", 1), attr("stop_axis", "int32", 1)),
        traits=traits(INJECTIVE),
        infer_meta=_infer_flatten,
    ),
    OpDef(
        "pd_op.transpose",
        operands=(operand("x"),),
        attributes=(attr("perm", "array<int32>"),),
        traits=traits(INJECTIVE),
        infer_meta=_infer_transpose,
    ),
    OpDef(
        "pd_op.expand",
        operands=(operand("x"), operand("shape", mutable_attr="shape")),
        traits=traits(BROADCAST),
        infer_meta=_infer_expand,
    ),
    OpDef(
        "pd_op.tile",
        operands=(operand("x"), operand("repeat_times", mutable_attr="repeat_times")),
        traits=traits(BROADCAST),
        infer_meta=_infer_tile,
    ),
    OpDef(
        "pd_op.concat",
        operands=(
            operand("x", variadic=True),
            operand("axis", mutable_attr="axis", mutable_kind="scalar"),
        ),
        traits=traits(INJECTIVE),
        infer_meta=_infer_concat,
    ),
    OpDef(
        "pd_op.stack",
        operands=(operand("x", variadic=True),),
        attributes=(attr("axis", "int32", 0),),
        traits=traits(INJECTIVE),
        infer_meta=_infer_stack,
    ),
    OpDef(
        "pd_op.split",
        operands=(
            operand("x"),
            operand("sections", mutable_attr="sections"),
            operand("axis", mutable_attr="axis", mutable_kind="scalar"),
        ),
        traits=traits(INJECTIVE),
        infer_meta=_infer_split,
    ),
    OpDef(
        "pd_op.split_with_num",
        operands=(operand("x"), operand("axis", mutable_attr="axis", mutable_kind="scalar")),
        attributes=(attr("num", "int32"),),
        traits=traits(INJECTIVE),
        infer_meta=_infer_split_with_num,
    ),
    OpDef(
        "pd_op.slice",
        operands=(
            operand("input"),
            operand("starts", mutable_attr="starts"),
            operand("ends", mutable_attr="ends"),
        ),
        attributes=(
            attr("axes", "array<int64>"),
            attr("infer_flags", "array<int64>", []),
            attr("decrease_axis", "array<int64>", []),
        ),
        traits=traits(INJECTIVE),
        infer_meta=_infer_slice,
    ),
    OpDef(
        "pd_op.strided_slice",
        operands=(
            operand("x"),
            operand("starts", mutable_attr="starts"),
            operand("ends", mutable_attr="ends"),
            operand("strides", mutable_attr="strides"),
        ),
        attributes=(attr("axes", "array<int32>"),),
        traits=traits(INJECTIVE),
        infer_meta=_infer_strided_slice,
    ),
    OpDef(
        "pd_op.gather",
        operands=(
            operand("x"),
            operand("index"),
            operand("axis", mutable_attr="axis", mutable_kind="scalar"),
        ),
        traits=traits(INJECTIVE),
        infer_meta=_infer_gather,
    ),
]
