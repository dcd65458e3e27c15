"""Shape and layout ops: values move, none change.

Slicing follows Python's rules, which are Paddle's too (checked against Paddle): a
negative start or end counts from the end, out-of-range bounds clamp, an empty range
gives a zero-size dim, and a negative stride walks backwards from a clamped start.
"""

from __future__ import annotations

import math

import numpy as np

from cinn_py.reference_ops.context import Kernel, KernelContext
from cinn_py.reference_ops.reduction import normalize_axis


def transpose(ctx: KernelContext) -> np.ndarray:
    return np.transpose(ctx.tensor(0), ctx.attr("perm"))


def reshape(ctx: KernelContext) -> np.ndarray:
    """A 0 in `shape` copies the input's dim at that position (it stays 0 for a
    zero-size input, as Paddle's ValidateShape has it); one -1 is inferred."""
    x = ctx.tensor(0)
    shape = ctx.int_list(1, "shape")
    if x.size:
        shape = [x.shape[i] if size == 0 and i < x.ndim else size for i, size in enumerate(shape)]
    return _reshaped(ctx, x, shape)


def _reshaped(ctx: KernelContext, x: np.ndarray, shape: list[int]) -> np.ndarray:
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
    start = normalize_axis(ctx.attr("start_axis", 1), x.ndim, ctx)
    stop = normalize_axis(ctx.attr("stop_axis", 1), x.ndim, ctx)
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
    axis = normalize_axis(ctx.attr("axis", 0), items[0].ndim + 1, ctx)
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
    decrease = tuple(normalize_axis(a, x.ndim, ctx) for a in ctx.attr("decrease_axis", []))
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


def check_indices(ctx: KernelContext, index: np.ndarray, low: int, high: int) -> None:
    bad = (index < low) | (index >= high)
    if np.any(bad):
        first = index[bad].reshape(-1)[0]
        raise ctx.shape_error(f"index {first} is out of range [{low}, {high})")


def tile(ctx: KernelContext) -> np.ndarray:
    return np.tile(ctx.tensor(0), ctx.int_list(1, "repeat_times"))


KERNELS: dict[str, Kernel] = {
    "pd_op.transpose": transpose,
    "pd_op.reshape": reshape,
    "pd_op.squeeze": squeeze,
    "pd_op.unsqueeze": unsqueeze,
    "pd_op.flatten": flatten,
    "pd_op.expand": expand,
    "pd_op.concat": concat,
    "pd_op.stack": stack,
    "pd_op.split": split,
    "pd_op.split_with_num": split_with_num,
    "pd_op.slice": slice_kernel,
    "pd_op.strided_slice": strided_slice,
    "pd_op.gather": gather,
    "pd_op.tile": tile,
}
