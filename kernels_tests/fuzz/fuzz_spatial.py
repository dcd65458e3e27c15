"""The generator's spatial steps: 4-D images (NCHW and NHWC) through pool2d,
max_pool2d_with_index, bilinear / nearest interp, batch_norm in inference, group_norm /
instance_norm, conv2d / depthwise_conv2d / conv2d_transpose, with activations, residual
adds, per-channel affines, squeeze-excite gates and NCHW <-> NHWC transposes between
them.

A mixin of `fuzz_programs.Maker`. Images have odd dims (`SPATIAL_DIMS`) and at most
`IMAGE_ELEMENTS` elements, so that an upsampling or a transposed conv stays under
`MAX_ELEMENTS`. Each step is valid by construction: a window's geometry is checked with
the op's own rules (`cinn_py.ops.pool.pool_windows`, the conv output formulas) and falls
back to a 1 x 1 window when it does not fit; group counts divide the channels; the
running variance of batch_norm is drawn positive (the `positive` input kind). Results
that are no image (batch_norm's statistics, group_norm's mean and variance,
max_pool2d_with_index's positions) are *secondary*: the program fetches its images and
only some of those (`Maker.finish`), so the decompositions' "result nobody reads" paths
run too.
"""

from __future__ import annotations

from typing import Any

from fuzz_shapes import F32, FLOATS, MAX_ELEMENTS, Shape, numel

from cinn_py.errors import ShapeError
from cinn_py.ops.pool import pool_windows

SPATIAL_DIMS = (1, 3, 5, 7, 9, 33)
IMAGE_ELEMENTS = 1 << 14
"""The largest image a step draws (x4 upsampled, still under MAX_ELEMENTS)."""
IMAGE_DTYPES = (F32, F32, F32, *FLOATS[1:])
LAYOUTS = ("NCHW", "NHWC")
ACTIVATIONS = (
    "relu", "hardswish", "hardsigmoid", "sigmoid", "silu", "relu6", "leaky_relu", "gelu",
    "tanh", "abs", "exp",
)  # fmt: skip


def channel_axis(data_format: str) -> int:
    return 3 if data_format == "NHWC" else 1


def spatial_axes(data_format: str) -> tuple[int, int]:
    return (1, 2) if data_format == "NHWC" else (2, 3)


class SpatialSteps:
    """Spatial emitters, mixed into `fuzz_programs.Maker`."""

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
    reduce: Any
    secondary: Any
    pool: Any
    avoided: Any
    b: Any

    # -- values ----------------------------------------------------------------------------

    def image_shape(self) -> Shape:
        dims = [self.pick((1, 3, 2, 5))] + [self.pick(SPATIAL_DIMS) for _ in range(3)]
        while numel(dims) > IMAGE_ELEMENTS:
            i = max(range(4), key=lambda k: dims[k])
            dims[i] = max(d for d in SPATIAL_DIMS if d < dims[i])
        return tuple(dims)

    def image(self, limit: int = IMAGE_ELEMENTS) -> Any:
        """A 4-D float value of the program (no empty dims, at most `limit` elements) or
        a new image input."""

        def fits(t: Any) -> bool:
            return t.rank == 4 and 0 < t.size <= limit

        return self.tensor(fits, dtypes=IMAGE_DTYPES, shape=self.image_shape)

    def channel_input(self, channels: int, kind: str = "normal") -> Any:
        """A per-channel operand ([C], float32 as Paddle keeps statistics and weights)."""
        return self.new_input((channels,), F32, kind)

    def keep(self, value: Any, fetch: bool = True) -> None:
        """A secondary result: an output only when fetched (sometimes, if `fetch`)."""
        self.secondary[id(value)] = fetch

    # -- pooling ---------------------------------------------------------------------------

    def window(self, sizes: tuple[int, int]) -> dict[str, Any]:
        """Random explicit-window pooling attributes for `sizes` (H, W), checked with
        pool2d's own geometry; a 1 x 1 window when they do not fit."""
        kernel = [self.integer(1, 7), self.integer(1, 7)]
        if self.chance(40):
            kernel[1] = kernel[0]
        strides = [self.pick((1, 2, 3, k)) for k in kernel]
        algorithm = self.pick(("EXPLICIT", "EXPLICIT", "SAME", "VALID"))
        pads = [self.integer(0, k - 1) for k in kernel]
        if self.chance(30):
            pads = [self.integer(0, k - 1) for k in kernel for _ in (0, 1)]
        if self.chance(5):  # windows in the padding only
            per_value = kernel if len(pads) == 2 else [k for k in kernel for _ in (0, 1)]
            pads = [p + k for p, k in zip(pads, per_value, strict=True)]
        attrs = dict(
            kernel=kernel,
            strides=strides,
            paddings=pads,
            padding_algorithm=algorithm,
            ceil_mode=self.chance(30),
        )
        try:
            pool_windows(
                "pd_op.pool2d",
                "fuzz",
                sizes,
                kernel,
                strides,
                pads,
                algorithm=algorithm,
                ceil_mode=attrs["ceil_mode"],
            )
        except ShapeError:
            attrs.update(kernel=[1, 1], paddings=[0, 0], padding_algorithm="EXPLICIT")
        return attrs

    def emit_pool2d(self) -> None:
        x = self.image()
        data_format = self.pick(LAYOUTS)
        h, w = (x.shape[a] for a in spatial_axes(data_format))
        mode = self.pick(("window", "window", "window", "global", "adaptive", "adaptive_one"))
        attrs: dict[str, Any] = dict(
            strides=[1, 1],
            paddings=[0, 0],
            ceil_mode=False,
            exclusive=not self.chance(30),
            data_format=data_format,
            pooling_type=self.pick(("max", "avg")),
            global_pooling=False,
            adaptive=False,
            padding_algorithm="EXPLICIT",
        )
        if mode == "window":
            geometry = self.window((h, w))
            kernel = geometry.pop("kernel")
            attrs.update(geometry)
        elif mode == "global":
            kernel = [self.pick((1, 3, h)), self.pick((1, 3, w))]
            attrs["global_pooling"] = True
        else:
            kernel = [1, 1]
            if mode == "adaptive":
                kernel = [self.pick((2, 3, 1, 5, h, 7)), self.pick((2, 3, 1, 5, w, 7))]
            attrs["adaptive"] = True
        self.add(self.op("pool2d", x.value, self.ints(kernel), **attrs))

    def emit_max_pool_index(self) -> None:
        """max_pool2d_with_index (NCHW): its positions fetched only sometimes."""
        x = self.image()
        h, w = x.shape[2:]
        mode = self.pick(("window", "adaptive", "global"))
        attrs: dict[str, Any] = dict(
            strides=[1, 1], paddings=[0, 0], global_pooling=False, adaptive=False, ceil_mode=False
        )
        if mode == "window":
            geometry = self.window((h, w))
            if geometry["padding_algorithm"] != "EXPLICIT":  # the op has no such attribute
                geometry.update(kernel=[1, 1], paddings=[0, 0])
            del geometry["padding_algorithm"]
            attrs.update(geometry)
            attrs["kernel_size"] = attrs.pop("kernel")
        elif mode == "adaptive":
            attrs.update(kernel_size=[self.pick((1, 3, 2, h)), self.pick((1, 3, 2, w))])
            attrs["adaptive"] = True
        else:
            attrs.update(kernel_size=[h, w], global_pooling=True)
        out, mask = self.op("max_pool2d_with_index", x.value, **attrs)
        self.add(out)
        self.keep(mask)

    # -- interpolation ---------------------------------------------------------------------

    def emit_interp(self) -> None:
        x = self.image(limit=IMAGE_ELEMENTS // 4)
        data_format = self.pick(LAYOUTS)
        h, w = (x.shape[a] for a in spatial_axes(data_format))
        name = self.pick(("bilinear_interp", "nearest_interp"))
        attrs: dict[str, Any] = dict(
            data_format=data_format,
            out_d=-1,
            out_h=-1,
            out_w=-1,
            scale=[],
            interp_method=name.split("_")[0],
            align_corners=self.chance(35 if name == "bilinear_interp" else 10),
            align_mode=self.pick((0, 1)) if name == "bilinear_interp" else 0,
        )
        scales = [self.pick((2.0, 0.5, 1.5, 3.0, 0.7, 1.0)) for _ in (h, w)]
        if self.chance(30):
            scales[1] = scales[0]
        if self.chance(50) and all(int(d * s) >= 1 for d, s in zip((h, w), scales, strict=True)):
            attrs["scale"] = scales
            out_h, out_w = int(h * scales[0]), int(w * scales[1])
        else:
            out_h = self.pick((3, 1, 2 * h, 5, h, 9, 33, max(h // 2, 1)))
            out_w = self.pick((3, 1, 2 * w, 7, w, 9, 33, max(w // 2, 1)))
            attrs.update(out_h=out_h, out_w=out_w)
        if x.size // (h * w) * out_h * out_w > MAX_ELEMENTS:
            return
        self.add(self.op(name, x.value, None, None, None, **attrs))

    # -- normalization ---------------------------------------------------------------------

    def emit_batch_norm(self) -> None:
        """batch_norm(_) in inference over random running statistics (the variance
        positive), with or without scale and bias; its other five results secondary."""
        x = self.image()
        data_format = self.pick(LAYOUTS)
        channels = x.shape[channel_axis(data_format)]
        mean = self.channel_input(channels)
        variance = self.channel_input(channels, "positive")
        scale = self.channel_input(channels) if self.chance(70) else None
        bias = self.channel_input(channels) if self.chance(70) else None
        is_test, use_global = self.pick(((True, True), (True, False), (False, True)))
        results = self.op(
            self.pick(("batch_norm_", "batch_norm")),
            x.value,
            mean.value,
            variance.value,
            None if scale is None else scale.value,
            None if bias is None else bias.value,
            is_test=is_test,
            momentum=0.9,
            epsilon=self.pick((1e-5, 1e-3, 1e-4, 0.5)),
            data_format=data_format,
            use_global_stats=use_global,
            trainable_statistics=False,
        )
        self.add(results[0])
        for index, value in enumerate(results[1:], start=1):
            self.keep(value, fetch=index < 5)  # reserve_space (tensor<-1xu8>) never

    def emit_spatial_norm(self) -> None:
        """group_norm (NCHW / NHWC, groups dividing the channels) or instance_norm, with
        or without scale and bias; their statistics secondary."""
        x = self.image()
        name = self.pick(("group_norm", "instance_norm"))
        data_format = self.pick(LAYOUTS) if name == "group_norm" else "NCHW"
        channels = x.shape[channel_axis(data_format)]
        scale = self.channel_input(channels) if self.chance(60) else None
        bias = self.channel_input(channels) if self.chance(60) else None
        attrs: dict[str, Any] = {"epsilon": self.pick((1e-5, 1e-3, 0.1))}
        if name == "group_norm":
            divisors = [g for g in range(1, channels + 1) if channels % g == 0]
            attrs.update(groups=self.pick(divisors), data_format=data_format)
        y, first, second = self.op(
            name,
            x.value,
            None if scale is None else scale.value,
            None if bias is None else bias.value,
            **attrs,
        )
        self.add(y)
        self.keep(first)
        self.keep(second)

    # -- convolution -----------------------------------------------------------------------

    def emit_conv(self) -> None:
        """conv2d, depthwise_conv2d or conv2d_transpose (library ops: kernel boundaries)
        with small filters, groups, strides, dilations and paddings that fit."""
        x = self.image(limit=IMAGE_ELEMENTS // 4)
        name = self.pick(("conv2d", "depthwise_conv2d", "conv2d_transpose"))
        data_format = self.pick(LAYOUTS)
        channels = x.shape[channel_axis(data_format)]
        sizes = [x.shape[a] for a in spatial_axes(data_format)]
        kernel = [self.pick((1, 3, 2, 5)) for _ in sizes]
        strides = [self.pick((1, 2)) for _ in sizes]
        dilations = [self.pick((1, 1, 2)) for _ in sizes]
        pads = [self.integer(0, 2) for _ in sizes]
        if self.chance(30):
            pads = [self.integer(0, 2) for _ in range(4)]
        algorithm = self.pick(("EXPLICIT", "EXPLICIT", "SAME", "VALID"))
        pairs = [(p, p) for p in pads] if len(pads) == 2 else [tuple(pads[:2]), tuple(pads[2:])]
        transpose = name == "conv2d_transpose"
        out_sizes = []
        for d, size in enumerate(sizes):
            stride, dilation, pad = strides[d], dilations[d], pairs[d]
            if algorithm == "VALID":
                pad = (0, 0)
            elif algorithm == "SAME":
                dilation = 1
                total = max(((size + stride - 1) // stride - 1) * stride + kernel[d] - size, 0)
                pad = (total // 2, total - total // 2)
            extent = dilation * (kernel[d] - 1) + 1
            if transpose:
                out = (size - 1) * stride - sum(pad) + extent
            else:
                out = (size + sum(pad) - extent) // stride + 1 if size + sum(pad) >= extent else 0
            out_sizes.append(out)
        if min(out_sizes) <= 0:  # does not fit: a 1 x 1 filter, no padding
            kernel, pads, algorithm = [1, 1], [0, 0], "EXPLICIT"
            out_sizes = [
                (s - 1) * st + 1 if transpose else (s - 1) // st + 1
                for s, st in zip(sizes, strides, strict=True)
            ]
        divisors = [g for g in range(1, channels + 1) if channels % g == 0]
        if name == "depthwise_conv2d":
            groups = channels
            out_channels = channels * self.pick((1, 2))
            filter_shape = (out_channels, 1, *kernel)
        elif transpose:
            groups = self.pick(divisors) if self.chance(30) else 1
            per_group = self.pick((1, 2, 3))
            out_channels = per_group * groups
            filter_shape = (channels, per_group, *kernel)
        else:
            groups = self.pick(divisors) if self.chance(30) else 1
            out_channels = groups * self.pick((1, 2, 3))
            filter_shape = (out_channels, channels // groups, *kernel)
        if x.shape[0] * out_channels * numel(out_sizes) > MAX_ELEMENTS:
            return
        attrs: dict[str, Any] = dict(
            strides=strides,
            paddings=pads,
            padding_algorithm=algorithm,
            groups=groups,
            dilations=dilations,
            data_format=data_format,
        )
        weight = self.new_input(filter_shape, x.dtype)
        if transpose:
            extra = [0 if self.chance(70) else self.integer(0, max(s, d) - 1)
                     for s, d in zip(strides, dilations, strict=True)]  # fmt: skip
            if algorithm == "SAME" or not any(extra):
                extra = []
            attrs["output_padding"] = extra
            out = self.op(name, x.value, weight.value, self.ints([]), **attrs)
        else:
            out = self.op(name, x.value, weight.value, **attrs)
        self.add(out)

    # -- between them ----------------------------------------------------------------------

    def emit_activation(self) -> None:
        self.unary(self.pick(ACTIVATIONS), self.image())

    def emit_residual(self) -> None:
        """x + y of two images of one shape (a residual), or x op a per-channel
        [C, 1, 1] / [C] operand."""
        x = self.image()
        if self.chance(60):
            same = [
                t for t in self.pool if t.shape == x.shape and t.dtype is x.dtype and t is not x
            ]
            y = self.pick(same) if same and self.chance(70) else self.new_input(x.shape, x.dtype)
            self.binary(self.pick(("add", "add", "multiply", "subtract", "maximum")), x, y)
            return
        data_format = self.pick(LAYOUTS)
        channels = x.shape[channel_axis(data_format)]
        shape = (channels,) if data_format == "NHWC" else (channels, 1, 1)
        y = self.new_input(shape, x.dtype)
        self.binary(self.pick(("add", "multiply", "subtract")), x, y)

    def emit_squeeze_excite(self) -> None:
        """x * sigmoid(mean over H, W (keepdim)): a reduction read back by its input."""
        x = self.image()
        axes = list(spatial_axes(self.pick(LAYOUTS)))
        stat = self.reduce(self.pick(("mean", "max")), x, axes, keepdim=True)
        gate = self.unary(self.pick(("sigmoid", "hardsigmoid", "relu")), stat)
        self.binary("multiply", x, gate)

    def emit_layout_swap(self) -> None:
        x = self.image()
        perm = self.pick(([0, 2, 3, 1], [0, 3, 1, 2], [0, 1, 3, 2]))
        self.add(self.op("transpose", x.value, perm=perm))
