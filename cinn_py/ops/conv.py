"""Convolutions: conv2d, depthwise_conv2d, conv2d_transpose.

Library ops: no generated kernel and no decomposition; a compiled target runs them by
their reference kernel as a LibraryInstruction (on `cuda` the device libraries come in a
later issue), so they fuse with nothing (pattern NON_FUSIBLE).

Paddle 3.3.1's facts these follow (`ConvInferMeta`, `ConvTransposeInferMeta` and
`UpdatePaddingAndDilation` in phi, probed with the real thing): the filter is OIHW for
both data formats (conv: `[out, in / groups, kh, kw]`; transpose: `[in, out / groups,
kh, kw]`); `paddings` of 2 values pad both sides of each spatial dim, 4 values are
`[top, bottom, left, right]`; `padding_algorithm` "VALID" pads nothing, "SAME" pads
`max((ceil(in / stride) - 1) * stride + k - in, 0)` split low-first and resets the
dilations to 1 (for the transpose too, from the *input* size). A conv's output is
`(in + pads - dilated kernel) / stride + 1`; a transpose's `(in - 1) * stride - pads +
dilated kernel`, plus `output_padding`, or `output_size` when given (`tensor<0xi64>`,
folded to `output_size: []`, when not). A -1 input dim gives a -1 output dim; where
Paddle's build-time answer for one is a wrong constant (a transpose's -1 + output_padding
gives 0), -1 is kept.

Bad geometry is a ShapeError at infer_meta (so verify) time naming the op and why:
channels that do not match the filter and groups, a kernel larger than the padded input.
Paddle is looser in two corners, both refused here: it checks nothing while a channel
dim is -1 only for conv, not for the transpose (here: neither), and its C division lets
a kernel one row larger than the padded input through at stride > 1 (here: refused).

The reference kernels are NumPy im2col + one batched matmul over the groups (a sliding
window view, strided by stride and dilation), accumulating in float64 and rounding once
to the result dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from cinn_py.errors import ShapeError, ShapeVerifyError
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import Int32Attribute, StrAttribute
from cinn_py.pir.op_def import ArrayOf, InferContext, OpDef, attr, operand
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import DYNAMIC, Type
from cinn_py.reference_ops.context import KernelContext

PADDING_ALGORITHMS = ("EXPLICIT", "SAME", "VALID")
CHANNEL_LAST = ("NHWC", "NDHWC")
DATA_FORMATS = ("NCHW", "NHWC", "AnyLayout")

# -- geometry (shared by infer_meta and the kernels) ------------------------------------------


def shape_error(ctx: InferContext | KernelContext, why: str) -> ShapeError:
    """A ShapeError naming the op and where it is: from infer_meta a ShapeVerifyError
    (`invalid pd_op.conv2d (file:3): why`), from a kernel a plain ShapeError."""
    if isinstance(ctx, KernelContext):
        return ctx.shape_error(why)
    return ShapeVerifyError(ctx.op_def.name, why, where=ctx.where)


@dataclass(frozen=True)
class Window:
    """One spatial dim of a convolution: kernel size, stride, dilation and the padding
    before and after (None while the input size it depends on is unknown)."""

    kernel: int
    stride: int
    dilation: int
    pad: tuple[int, int] | None

    @property
    def extent(self) -> int:
        """The dilated kernel's extent."""
        return self.dilation * (self.kernel - 1) + 1


def windows(
    ctx: InferContext | KernelContext, spatial: Sequence[int], kernel: Sequence[int]
) -> list[Window]:
    """Each spatial dim's window: Paddle's `UpdatePaddingAndDilation` over the op's
    strides, paddings, dilations and padding_algorithm. `spatial` are the input's spatial
    dims (-1 if unknown), `kernel` the filter's."""
    rank = len(spatial)
    strides = list(ctx.attr("strides"))
    dilations = list(ctx.attr("dilations"))
    paddings = list(ctx.attr("paddings"))
    algorithm = ctx.attr("padding_algorithm")
    if algorithm not in PADDING_ALGORITHMS:
        raise shape_error(
            ctx, f"padding_algorithm must be one of {list(PADDING_ALGORITHMS)}, got '{algorithm}'"
        )
    for what, values in (("strides", strides), ("dilations", dilations)):
        if len(values) != rank:
            raise shape_error(ctx, f"{what} {values} must hold {rank} values, one per spatial dim")
        if any(v <= 0 for v in values):
            raise shape_error(ctx, f"{what} {values} must be positive")
    if len(paddings) == rank:
        pairs = [(p, p) for p in paddings]
    elif len(paddings) == 2 * rank:
        pairs = [(paddings[2 * i], paddings[2 * i + 1]) for i in range(rank)]
    else:
        raise shape_error(ctx, f"paddings {paddings} must hold {rank} or {2 * rank} values")
    if algorithm == "EXPLICIT" and any(p < 0 for p in paddings):
        raise shape_error(ctx, f"paddings {paddings} must not be negative")
    for k in kernel:
        if k == 0:
            raise shape_error(ctx, f"the filter has an empty spatial dim: kernel {list(kernel)}")
    result = []
    for i in range(rank):
        stride, dilation, pad = strides[i], dilations[i], pairs[i]
        size, k = spatial[i], kernel[i]
        if algorithm == "VALID":
            pad = (0, 0)
        elif algorithm == "SAME":
            dilation = 1
            if size == DYNAMIC or k == DYNAMIC:
                pad = None
            else:
                out = (size + stride - 1) // stride
                total = max((out - 1) * stride + k - size, 0)
                pad = (total // 2, total - total // 2)
        result.append(Window(k, stride, dilation, pad))
    return result


def conv_size(ctx: InferContext | KernelContext, size: int, window: Window, axis: str) -> int:
    """A conv's output size along one spatial dim (-1 if unknown); a ShapeError if the
    dilated kernel is larger than the padded input."""
    if size == DYNAMIC or window.kernel == DYNAMIC or window.pad is None:
        return DYNAMIC
    padded = size + window.pad[0] + window.pad[1]
    if padded < window.extent:
        raise shape_error(
            ctx,
            f"the {axis} kernel ({window.kernel}, dilated to {window.extent}) is larger than "
            f"the padded input ({size} + paddings {window.pad[0]} + {window.pad[1]} = {padded}): "
            "the output would have no elements",
        )
    return (padded - window.extent) // window.stride + 1


def transpose_size(size: int, window: Window) -> int | None:
    """A transposed conv's output size before output_padding / output_size (None if
    unknown; it may come out negative, which the caller refuses)."""
    if size == DYNAMIC or window.kernel == DYNAMIC or window.pad is None:
        return None
    return (size - 1) * window.stride - window.pad[0] - window.pad[1] + window.extent


def _layout(ctx: InferContext | KernelContext) -> bool:
    """Whether the op is channel-last (NHWC); a ShapeError for an unknown data_format."""
    data_format = ctx.attr("data_format")
    if data_format not in DATA_FORMATS:
        raise shape_error(
            ctx, f"data_format must be one of {list(DATA_FORMATS)}, got '{data_format}'"
        )
    return data_format in CHANNEL_LAST


_AXES = ("height", "width")


def _known(*dims: int) -> bool:
    return DYNAMIC not in dims


# -- infer_meta -------------------------------------------------------------------------------


def _check_ranks(ctx: InferContext, x_name: str) -> tuple[Type, Type]:
    x, w = ctx.tensor(x_name), ctx.tensor("filter")
    if x.rank != 4:
        raise shape_error(
            ctx, f"the input must be 4-D (N, C, H, W or N, H, W, C), got dims {im.fmt(x.dims)}"
        )
    if w.rank != 4:
        raise shape_error(ctx, f"the filter must be 4-D (OIHW), got dims {im.fmt(w.dims)}")
    groups = ctx.attr("groups")
    if groups < 1:
        raise shape_error(ctx, f"groups must be at least 1, got {groups}")
    return x, w


def infer_conv(ctx: InferContext) -> list[Type]:
    """ConvInferMeta: `[N, O, OH, OW]` (NHWC: `[N, OH, OW, O]`), the input's dtype."""
    x, w = _check_ranks(ctx, "input")
    channel_last = _layout(ctx)
    groups = ctx.attr("groups")
    channels = x.dims[3] if channel_last else x.dims[1]
    spatial = x.dims[1:3] if channel_last else x.dims[2:4]
    out_channels, filter_channels = w.dims[0], w.dims[1]
    if _known(channels) and channels % groups:
        raise shape_error(
            ctx,
            f"the input's {channels} channels (dims {im.fmt(x.dims)}, {ctx.attr('data_format')}) "
            f"are not divisible by groups {groups}",
        )
    if _known(channels, filter_channels) and filter_channels * groups != channels:
        raise shape_error(
            ctx,
            f"the filter {im.fmt(w.dims)} takes {filter_channels} channels per group, but the "
            f"input's {channels} channels (dims {im.fmt(x.dims)}, {ctx.attr('data_format')}) "
            f"in {groups} groups give {channels // groups}",
        )
    if _known(out_channels) and out_channels % groups:
        raise shape_error(
            ctx,
            f"the filter's {out_channels} output channels (dims {im.fmt(w.dims)}) are not "
            f"divisible by groups {groups}",
        )
    found = windows(ctx, spatial, w.dims[2:])
    sizes = [conv_size(ctx, s, win, a) for s, win, a in zip(spatial, found, _AXES, strict=True)]
    dims = (x.dims[0], *sizes, out_channels) if channel_last else (x.dims[0], out_channels, *sizes)
    return [im.tensor(ctx, x.data_type, dims)]


def infer_conv_transpose(ctx: InferContext) -> list[Type]:
    """Conv2dTransposeInferMeta: `[N, O, OH, OW]` with O = filter dim 1 * groups."""
    x, w = _check_ranks(ctx, "x")
    channel_last = _layout(ctx)
    groups = ctx.attr("groups")
    channels = x.dims[3] if channel_last else x.dims[1]
    spatial = x.dims[1:3] if channel_last else x.dims[2:4]
    if _known(channels, w.dims[0]) and channels != w.dims[0]:
        raise shape_error(
            ctx,
            f"the input's {channels} channels (dims {im.fmt(x.dims)}, {ctx.attr('data_format')}) "
            f"differ from the filter's {w.dims[0]} input channels (dims {im.fmt(w.dims)})",
        )
    if _known(channels) and channels % groups:
        raise shape_error(
            ctx, f"the input's {channels} channels are not divisible by groups {groups}"
        )
    found = windows(ctx, spatial, w.dims[2:])
    padding = list(ctx.attr("output_padding"))
    if padding and len(padding) != 2:
        raise shape_error(ctx, f"output_padding {padding} must hold 2 values or none")
    output_size = im.int_array(ctx, "output_size")
    if output_size and len(output_size) != 2:
        raise shape_error(ctx, f"output_size {output_size} must hold 2 values or none")
    sizes = []
    for i, (size, window) in enumerate(zip(spatial, found, strict=True)):
        base = transpose_size(size, window)
        if base is not None and base <= 0:
            raise shape_error(
                ctx,
                f"the {_AXES[i]} output size (({size} - 1) * stride {window.stride} - paddings "
                f"{window.pad[0]} + {window.pad[1]} + dilated kernel {window.extent} = {base}) "
                "is not positive",
            )
        if output_size:
            want = output_size[i]
            if want is None:
                sizes.append(DYNAMIC)
                continue
            if base is not None and not base <= want < base + window.stride:
                raise shape_error(
                    ctx,
                    f"output_size {output_size}: the {_AXES[i]} size {want} must be in "
                    f"[{base}, {base + window.stride}) for this input, stride and padding",
                )
            sizes.append(want)
        elif padding:
            extra = padding[i]
            if not 0 <= extra < max(window.stride, window.dilation):
                raise shape_error(
                    ctx,
                    f"output_padding {padding}: the {_AXES[i]} value must be in "
                    f"[0, max(stride, dilation)) = [0, {max(window.stride, window.dilation)})",
                )
            sizes.append(DYNAMIC if base is None else base + extra)
        else:
            sizes.append(DYNAMIC if base is None else base)
    out_channels = DYNAMIC if w.dims[1] == DYNAMIC else w.dims[1] * groups
    dims = (x.dims[0], *sizes, out_channels) if channel_last else (x.dims[0], out_channels, *sizes)
    return [im.tensor(ctx, x.data_type, dims)]


# -- reference kernels ------------------------------------------------------------------------


def _nchw(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return x.transpose(0, 3, 1, 2) if _layout(ctx) else x


def _from_nchw(ctx: KernelContext, out: np.ndarray) -> np.ndarray:
    return out.transpose(0, 2, 3, 1) if _layout(ctx) else out


def conv2d(ctx: KernelContext) -> np.ndarray:
    """im2col over a strided sliding-window view, then one matmul per group (batched)."""
    x = _nchw(ctx, ctx.tensor(0)).astype(np.float64)
    w = ctx.tensor(1).astype(np.float64)
    groups = ctx.attr("groups")
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if c != cg * groups or o % groups:
        raise shape_error(
            ctx, f"input channels {c}, filter {list(w.shape)} and groups {groups} do not fit"
        )
    (wh, ww) = windows(ctx, (h, wd), (kh, kw))
    oh, ow = conv_size(ctx, h, wh, "height"), conv_size(ctx, wd, ww, "width")
    padded = np.pad(x, ((0, 0), (0, 0), wh.pad, ww.pad))
    view = sliding_window_view(padded, (wh.extent, ww.extent), axis=(2, 3))
    view = view[
        :, :, : (oh - 1) * wh.stride + 1 : wh.stride, : (ow - 1) * ww.stride + 1 : ww.stride
    ]
    view = view[..., :: wh.dilation, :: ww.dilation]  # n, c, oh, ow, kh, kw
    og = o // groups
    cols = view.reshape(n, groups, cg, oh, ow, kh, kw).transpose(1, 0, 3, 4, 2, 5, 6)
    cols = cols.reshape(groups, n * oh * ow, cg * kh * kw)
    weights = w.reshape(groups, og, cg * kh * kw).transpose(0, 2, 1)
    out = np.matmul(cols, weights)  # groups, n * oh * ow, og
    out = out.reshape(groups, n, oh, ow, og).transpose(1, 0, 4, 2, 3).reshape(n, o, oh, ow)
    return _from_nchw(ctx, out)


def _transpose_out(ctx: KernelContext, spatial: tuple[int, int], found: list[Window]) -> list[int]:
    """The output's spatial size: output_size when given (it may be computed at run
    time), else the padded size plus output_padding."""
    size = ctx.int_list(2, "output_size")
    if size:
        return size
    base = [transpose_size(s, f) or 0 for s, f in zip(spatial, found, strict=True)]
    extra = list(ctx.attr("output_padding")) or [0, 0]
    return [b + e for b, e in zip(base, extra, strict=True)]


def conv2d_transpose(ctx: KernelContext) -> np.ndarray:
    """The gradient of conv2d w.r.t. its input: each input pixel times the filter (one
    batched matmul over the groups), scattered into the full output at stride steps
    (col2im), then cropped by the paddings to the declared size."""
    x = _nchw(ctx, ctx.tensor(0)).astype(np.float64)
    w = ctx.tensor(1).astype(np.float64)
    groups = ctx.attr("groups")
    n, c, h, wd = x.shape
    ci, og, kh, kw = w.shape
    if c != ci or c % groups:
        raise shape_error(
            ctx, f"input channels {c}, filter {list(w.shape)} and groups {groups} do not fit"
        )
    found = windows(ctx, (h, wd), (kh, kw))
    oh, ow = _transpose_out(ctx, (h, wd), found)
    cg = c // groups
    rows = x.reshape(n, groups, cg, h * wd).transpose(1, 0, 3, 2).reshape(groups, n * h * wd, cg)
    cols = np.matmul(rows, w.reshape(groups, cg, og * kh * kw))  # groups, n*h*wd, og*kh*kw
    cols = cols.reshape(groups, n, h, wd, og, kh, kw).transpose(1, 0, 4, 5, 6, 2, 3)
    cols = cols.reshape(n, groups * og, kh, kw, h, wd)
    (wh, ww) = found
    top, left = wh.pad[0], ww.pad[0]
    full_h = max((h - 1) * wh.stride + wh.extent, top + oh)
    full_w = max((wd - 1) * ww.stride + ww.extent, left + ow)
    full = np.zeros((n, groups * og, full_h, full_w))
    for i in range(kh):
        for j in range(kw):
            r, s = i * wh.dilation, j * ww.dilation
            full[
                :,
                :,
                r : r + (h - 1) * wh.stride + 1 : wh.stride,
                s : s + (wd - 1) * ww.stride + 1 : ww.stride,
            ] += cols[:, :, i, j]
    return _from_nchw(ctx, full[:, :, top : top + oh, left : left + ow])


# -- entries ----------------------------------------------------------------------------------

_INTS = ArrayOf(Int32Attribute)


def _conv(name: str, groups_first: bool) -> OpDef:
    """conv2d and depthwise_conv2d: the same op but for the order Paddle declares
    `groups` and `dilations` in."""
    groups = attr("groups", Int32Attribute, 1)
    dilations = attr("dilations", _INTS, [1, 1])
    return OpDef(
        f"pd_op.{name}",
        operands=(operand("input"), operand("filter")),
        attributes=(
            attr("strides", _INTS, [1, 1]),
            attr("paddings", _INTS, [0, 0]),
            attr("padding_algorithm", StrAttribute, "EXPLICIT"),
            *((groups, dilations) if groups_first else (dilations, groups)),
            attr("data_format", StrAttribute, "NCHW"),
        ),
        pattern=OpPatternKind.NON_FUSIBLE,
        infer_meta=infer_conv,
        kernel=conv2d,
        symbolic_meta=sym.conv_shape,
    )


OPS = [
    _conv("conv2d", groups_first=False),
    _conv("depthwise_conv2d", groups_first=True),
    OpDef(
        "pd_op.conv2d_transpose",
        operands=(
            operand("x"),
            operand("filter"),
            operand("output_size", mutable_attr="output_size"),
        ),
        attributes=(
            attr("strides", _INTS, [1, 1]),
            attr("paddings", _INTS, [0, 0]),
            attr("output_padding", _INTS, []),
            attr("padding_algorithm", StrAttribute, "EXPLICIT"),
            attr("groups", Int32Attribute, 1),
            attr("dilations", _INTS, [1, 1]),
            attr("data_format", StrAttribute, "NCHW"),
        ),
        pattern=OpPatternKind.NON_FUSIBLE,
        infer_meta=infer_conv_transpose,
        kernel=conv2d_transpose,
        symbolic_meta=sym.conv_transpose_shape,
    ),
]
