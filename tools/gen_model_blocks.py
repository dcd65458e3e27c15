"""Model-block and per-op fixtures for issue 15, imported by gen_paddle_fixtures.py.

Two kinds of cases live here, both written with real Paddle 3.3.1 by
``tools/gen_paddle_fixtures.py`` (run that script, not this module):

* ``OP_CASES``: static-graph programs for single ops at several attribute
  settings and odd shapes (1, 3, 7, 33), written to ``programs/op_<name>/``
  like every other program fixture. Builders receive the generator's
  ``Builder``; ``b.data(..., alt=array)`` (or ``b.alt(name, array)`` once the
  first-set arrays are drawn) gives a second feed for a ``-1`` input (recorded as ``feeds_2.npz`` / ``outputs_2.npz``), and
  ``b.set_param(param, array)`` overwrites a parameter after the startup
  program ran (BatchNorm running statistics, so inference is not identity).
* ``BLOCK_MODELS``: real model blocks written the way Paddle users write them
  (``paddle.nn`` layers and ``paddle.nn.functional`` in eval mode), saved with
  ``paddle.jit.save`` to ``models/<name>/`` with ``-1`` batch / sequence dims
  (``InputSpec`` with ``None``) and outputs for two shape sets.

Shapes are tiny on purpose (hidden 16, two heads) so the committed files stay
small. Everything is seeded per fixture by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import paddle
from paddle.incubate.nn import functional as IF

F = paddle.nn.functional
Value = Any
Builder = Any  # gen_paddle_fixtures.Builder (kept loose to avoid a circular import)

# --------------------------------------------------------------------------
# Per-op program cases
# --------------------------------------------------------------------------

OP_CASES: list[tuple[str, str, Callable[[Builder], list[Value]]]] = []


def op_case(name: str, description: str) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        OP_CASES.append((name, description, fn))
        return fn

    return register


def _distinct(b: Builder, shape: tuple[int, ...]) -> np.ndarray:
    """Float32 values without ties (a permutation, scaled), for sort / topk."""
    n = int(np.prod(shape))
    return (b.rng.permutation(n).reshape(shape).astype("float32") - n / 2) * np.float32(0.25)


@op_case(
    "op_arange",
    "arange with float start/end/step (printed as float64 full operands), int64 default, "
    "a single end, and start/end/step from 0-D data tensors (result -1): 9 and 33 elements, "
    "then (feeds_2) 14 and 7",
)
def _op_arange(b: Builder) -> list[Value]:
    start = b.data("start", np.array(1.0, dtype="float32"))
    end = b.data("end", np.array(7.5, dtype="float32"))
    step = b.data("step", np.array(0.75, dtype="float32"))
    n = b.data("n", np.array(33, dtype="int64"))
    b.alt("start", np.array(-2.0, dtype="float32"))
    b.alt("end", np.array(3.0, dtype="float32"))
    b.alt("step", np.array(0.375, dtype="float32"))
    b.alt("n", np.array(7, dtype="int64"))
    return [
        paddle.arange(0.5, 3.7, 0.4),
        paddle.arange(-3.0, 1.0, 0.5, dtype="float32"),
        paddle.arange(1, 8, 2),
        paddle.arange(7),
        paddle.arange(start, end, step),
        paddle.arange(0, n, 1, dtype="int64"),
    ]


@op_case(
    "op_shape_slice_expand",
    "paddle.shape of a [-1,-1,5] input (pd_op.shape64), slices of it feeding expand, "
    "reshape, full_with_tensor (paddle.full with tensor dims) and arange; fed [3,7,5] "
    "and [1,33,5]",
)
def _op_shape(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((3, 7, 5)), shape=[-1, -1, 5], alt=b.uniform((1, 33, 5)))
    r = b.data("r", b.uniform((1, 1, 5)))
    s = paddle.shape(x)
    batch, seq = s[0], s[1]
    return [
        paddle.expand(r, [batch, seq, 5]),
        paddle.reshape(x, [batch * seq, 5]),
        paddle.reshape(x, [0, -1]),
        paddle.full([batch, seq], 1.5),
        paddle.ones([seq, seq], dtype="int32"),
        paddle.arange(seq),
        paddle.expand(r, [batch, -1, -1]) * paddle.cast(seq, "float32"),
    ]


@op_case(
    "op_tril_triu", "tril/triu with diagonal -1, 0, 1 on [7,5] f32, batched [3,4,4] int32, bool"
)
def _op_tril_triu(b: Builder) -> list[Value]:
    m = b.data("m", b.uniform((7, 5)))
    k = b.data("k", b.ints((3, 4, 4), -9, 10))
    out = []
    for diagonal in (-1, 0, 1):
        out += [paddle.tril(m, diagonal), paddle.triu(m, diagonal)]
    return out + [paddle.tril(k, 1), paddle.triu(k, -1), paddle.tril(paddle.ones([5, 5], "bool"))]


@op_case("op_tril_triu_f16", "tril/triu on float16 (cast from float32), diagonal 0 and 1")
def _op_tril_f16(b: Builder) -> list[Value]:
    h = paddle.cast(b.data("x", b.uniform((3, 7, 7))), "float16")
    return [paddle.tril(h), paddle.triu(h, 1)]


@op_case("op_one_hot", "one_hot of int64 ids [3,7] (5 classes), int32 ids [33] (7 classes), [1]")
def _op_one_hot(b: Builder) -> list[Value]:
    ids = b.data("ids", b.ints((3, 7), 0, 5, "int64"))
    ids32 = b.data("ids32", b.ints((33,), 0, 7, "int32"))
    one = b.data("one", np.array([2], dtype="int64"))
    return [F.one_hot(ids, 5), F.one_hot(ids32, 7), F.one_hot(one, 3)]


@op_case(
    "op_index_select", "index_select on axis 0 (int64 index), axis 1 (int32), axis -1, repeats"
)
def _op_index_select(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((7, 5)))
    y = b.data("y", b.uniform((3, 1, 33)))
    i64 = b.data("i64", np.array([6, 0, 3, 3, 1], dtype="int64"))
    i32 = b.data("i32", np.array([4, 0, 2], dtype="int32"))
    last = b.data("last", np.array([32, 0, 16, 31, 7, 7, 1], dtype="int64"))
    return [
        paddle.index_select(x, i64, axis=0),
        paddle.index_select(x, i32, axis=1),
        paddle.index_select(y, last, axis=-1),
    ]


@op_case(
    "op_einsum",
    "einsum with the equations models use: bhqd,bhkd->bhqk; bhqk,bhkd->bhqd; bij,bjk->bik; ij->ji",
)
def _op_einsum(b: Builder) -> list[Value]:
    q = b.data("q", b.uniform((2, 3, 7, 5)))
    k = b.data("k", b.uniform((2, 3, 1, 5)))
    p = b.data("p", b.uniform((2, 3, 7, 1)))
    x = b.data("x", b.uniform((3, 7, 5)))
    y = b.data("y", b.uniform((3, 5, 1)))
    m = b.data("m", b.uniform((7, 33)))
    return [
        paddle.einsum("bhqd,bhkd->bhqk", q, k),
        paddle.einsum("bhqk,bhkd->bhqd", p, k),
        paddle.einsum("bij,bjk->bik", x, y),
        paddle.einsum("ij->ji", m),
    ]


@op_case(
    "op_topk",
    "topk largest/smallest, axis -1/0/1, k=1 and k=3; sorted=False fetched only through a sort "
    "of its values (Paddle leaves their order unspecified)",
)
def _op_topk(b: Builder) -> list[Value]:
    x = b.data("x", _distinct(b, (3, 7)))
    y = b.data("y", _distinct(b, (2, 33, 3)))
    v0, i0 = paddle.topk(x, 3)
    v1, i1 = paddle.topk(x, 2, axis=0, largest=False)
    v2, i2 = paddle.topk(y, 1, axis=1)
    v3, _ = paddle.topk(y, 3, axis=1, largest=False, sorted=False)
    return [v0, i0, v1, i1, v2, i2, paddle.sort(v3, axis=1)]


@op_case(
    "op_sort_argsort",
    "sort / argsort ascending and descending on axis -1, 0 and 1 (no ties), float32 and int64",
)
def _op_sort(b: Builder) -> list[Value]:
    x = b.data("x", _distinct(b, (3, 7)))
    y = b.data("y", _distinct(b, (2, 33, 3)))
    k = b.data("k", b.rng.permutation(33).astype("int64"))
    return [
        paddle.sort(x),
        paddle.sort(x, axis=0, descending=True),
        paddle.argsort(x, descending=True),
        paddle.argsort(y, axis=1),
        paddle.sort(y, axis=1, descending=True),
        paddle.argsort(k),
        paddle.sort(k, descending=True),
    ]


@op_case(
    "op_conv2d",
    "conv2d (functional, weights fed): stride 1/2, explicit paddings [1,1] and [0,1,2,1], "
    "'SAME', 'VALID', dilation 2, groups 2, NHWC, 1x1 and a 7x7 input with 3 channels",
)
def _op_conv2d(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((1, 4, 7, 7)))
    w = b.data("w", b.uniform((3, 4, 3, 3), -0.5, 0.5))
    wg = b.data("wg", b.uniform((6, 2, 3, 3), -0.5, 0.5))
    w1 = b.data("w1", b.uniform((5, 4, 1, 1), -0.5, 0.5))
    bias = b.data("bias", b.uniform((3,)))
    xh = b.data("xh", b.uniform((2, 7, 5, 4)))
    return [
        F.conv2d(x, w, bias, stride=1, padding=1),
        F.conv2d(x, w, stride=2, padding=[0, 1, 2, 1]),
        F.conv2d(x, w, stride=2, padding="SAME"),
        F.conv2d(x, w, padding="VALID", dilation=2),
        F.conv2d(x, wg, stride=[1, 2], padding=1, groups=2),
        F.conv2d(x, w1),
        F.conv2d(xh, w, padding=1, data_format="NHWC"),
    ]


@op_case(
    "op_depthwise_conv2d",
    "depthwise conv (groups == in channels) stride 1 pad 1, stride 2 'SAME', channel "
    "multiplier 2, NHWC",
)
def _op_depthwise(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3, 7, 7)))
    w = b.data("w", b.uniform((3, 1, 3, 3), -0.5, 0.5))
    w2 = b.data("w2", b.uniform((6, 1, 3, 3), -0.5, 0.5))
    xh = b.data("xh", b.uniform((1, 5, 7, 3)))
    return [
        F.conv2d(x, w, padding=1, groups=3),
        F.conv2d(x, w, stride=2, padding="SAME", groups=3),
        F.conv2d(x, w2, padding=0, groups=3),
        F.conv2d(xh, w, padding=1, groups=3, data_format="NHWC"),
    ]


@op_case(
    "op_conv2d_transpose",
    "conv2d_transpose stride 2 pad 1 output_padding 1, stride 1 pad 0, groups 2, dilation 2, "
    "and with output_size",
)
def _op_conv_t(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((1, 4, 3, 5)))
    w = b.data("w", b.uniform((4, 2, 3, 3), -0.5, 0.5))
    wg = b.data("wg", b.uniform((4, 1, 3, 3), -0.5, 0.5))
    return [
        F.conv2d_transpose(x, w, stride=2, padding=1, output_padding=1),
        F.conv2d_transpose(x, w),
        F.conv2d_transpose(x, wg, stride=2, groups=2),
        F.conv2d_transpose(x, w, dilation=2, padding=1),
        F.conv2d_transpose(x, w, stride=2, padding=1, output_size=[6, 10]),
    ]


@op_case(
    "op_batch_norm_infer",
    "BatchNorm2D in eval (batch_norm_, 6 results incl. the u8 reserve space) with non-trivial "
    "running statistics, NCHW and NHWC; BatchNorm1D on [3,7]; functional batch_norm training=False; "
    "batch and spatial dims -1: x [2,3,7,5] / xh [1,5,7,3] / v [3,7], then (feeds_2) "
    "[3,3,1,33] / [3,7,5,3] / [1,7]",
)
def _op_batch_norm(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3, 7, 5)), shape=[-1, 3, -1, -1])
    xh = b.data("xh", b.uniform((1, 5, 7, 3)), shape=[-1, -1, -1, 3])
    v = b.data("v", b.uniform((3, 7)), shape=[-1, 7])
    mean = b.data("mean", b.uniform((3,), -0.5, 0.5))
    var = b.data("var", b.uniform((3,), 0.5, 2.0))
    out = []
    for layer, inp in (
        (paddle.nn.BatchNorm2D(3), x),
        (paddle.nn.BatchNorm2D(3, epsilon=1e-3, data_format="NHWC"), xh),
        (paddle.nn.BatchNorm1D(7), v),
    ):
        layer.eval()
        n = layer._mean.shape[0]
        b.set_param(layer._mean, b.uniform((n,), -0.5, 0.5))
        b.set_param(layer._variance, b.uniform((n,), 0.5, 2.0))
        b.set_param(layer.weight, b.uniform((n,), 0.5, 1.5))
        b.set_param(layer.bias, b.uniform((n,), -0.5, 0.5))
        out.append(layer(inp))
    out.append(F.batch_norm(x, mean, var, training=False, epsilon=1e-4))
    b.alt("x", b.uniform((3, 3, 1, 33)))
    b.alt("xh", b.uniform((3, 7, 5, 3)))
    b.alt("v", b.uniform((1, 7)))
    return out


@op_case(
    "op_pool2d",
    "max/avg pool kernel 3 stride 2 pad 1, ceil_mode, exclusive=False, kernel 2 no pad, "
    "global (adaptive 1), adaptive avg 3x3 and adaptive max (max_pool2d_with_index), NHWC",
)
def _op_pool2d(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3, 7, 7)))
    xh = b.data("xh", b.uniform((1, 5, 7, 3)))
    return [
        F.max_pool2d(x, 3, 2, 1),
        F.avg_pool2d(x, 3, 2, 1),
        F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, exclusive=False),
        F.max_pool2d(x, 2, ceil_mode=True),
        F.avg_pool2d(x, [2, 3], [1, 2]),
        F.adaptive_avg_pool2d(x, 1),
        F.adaptive_avg_pool2d(x, 3),
        F.adaptive_max_pool2d(x, 3),
        F.max_pool2d(xh, 3, 2, "SAME", data_format="NHWC"),
        F.avg_pool2d(xh, 2, 1, "VALID", data_format="NHWC"),
    ]


@op_case(
    "op_group_instance_norm",
    "GroupNorm(2 groups, 6 ch) and GroupNorm(1) with random affine, InstanceNorm2D, "
    "functional instance_norm without weights",
)
def _op_group_norm(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 6, 3, 7)))
    init = paddle.ParamAttr(initializer=paddle.nn.initializer.Normal(0.0, 1.0))
    return [
        paddle.nn.GroupNorm(2, 6, weight_attr=init, bias_attr=init)(x),
        paddle.nn.GroupNorm(1, 6, epsilon=1e-3)(x),
        paddle.nn.InstanceNorm2D(6, weight_attr=init, bias_attr=init)(x),
        F.instance_norm(x),
    ]


@op_case(
    "op_interp",
    "bilinear (align_corners True/False, align_mode 0/1, size and scale_factor, NHWC) and "
    "nearest (scale 2, size) interpolation",
)
def _op_interp(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((1, 3, 5, 7)))
    xh = b.data("xh", b.uniform((1, 3, 5, 2)))
    return [
        F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
        F.interpolate(x, size=[7, 3], mode="bilinear", align_corners=False),
        F.interpolate(x, size=[9, 11], mode="bilinear", align_corners=False, align_mode=1),
        F.interpolate(xh, size=[7, 5], mode="bilinear", data_format="NHWC"),
        F.interpolate(x, scale_factor=2, mode="nearest"),
        F.interpolate(x, size=[3, 10], mode="nearest"),
    ]


@op_case(
    "op_swiglu",
    "incubate swiglu with one input (split in halves) on [3,7,10] and [1,2], and with two "
    "inputs (the CPU kernel has no float16)",
)
def _op_swiglu(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((3, 7, 10), -4.0, 4.0))
    y = b.data("y", b.uniform((3, 7, 10)))
    z = b.data("z", b.uniform((1, 2), -4.0, 4.0))
    return [IF.swiglu(x), IF.swiglu(x, y), IF.swiglu(z)]


@op_case(
    "op_fused_rms_norm",
    "incubate fused_rms_norm (prints pd_op.fused_rms_norm_quant, one result <<NULL TYPE>>): "
    "begin_norm_axis 2 and 1, with a bias, with a residual (residual_out fetched)",
)
def _op_fused_rms_norm(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((3, 7, 5)))
    w = b.data("w", b.uniform((5,), 0.5, 1.5))
    w2 = b.data("w2", b.uniform((35,), 0.5, 1.5))
    bias = b.data("bias", b.uniform((5,), -0.5, 0.5))
    res = b.data("res", b.uniform((3, 7, 5)))
    # The Python API returns (out, residual_out); without a residual, residual_out is the
    # <<NULL TYPE>> result. inv_var (result 2) is not fetched: the CPU kernel leaves it
    # uninitialized (fetching it gives None).
    y0, _ = IF.fused_rms_norm(x, w, None, 1e-6, 2)
    y1, _ = IF.fused_rms_norm(x, w2, None, 1e-5, 1)
    y2, _ = IF.fused_rms_norm(x, w, bias, 1e-6, 2)
    y3, res_out = IF.fused_rms_norm(x, w, None, 1e-6, 2, residual=res)
    return [y0, y1, y2, y3, res_out]


@op_case(
    "op_dropout_eval",
    "dropout in eval: nn.Dropout(0.1).eval() on [-1,7] input, F.dropout(training=False) with "
    "axis, nn.Dropout(p=0) in train mode",
)
def _op_dropout(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((3, 7)), shape=[-1, 7], alt=b.uniform((1, 7)))
    d = paddle.nn.Dropout(0.1)
    d.eval()
    return [d(x), F.dropout(x, 0.3, axis=1, training=False), paddle.nn.Dropout(0.0)(x) + 1.0]


# --------------------------------------------------------------------------
# Model blocks
# --------------------------------------------------------------------------

HIDDEN, HEADS, HEAD_DIM, FFN = 16, 2, 8, 24


def _normal(std: float = 0.3) -> paddle.ParamAttr:
    return paddle.ParamAttr(initializer=paddle.nn.initializer.Normal(0.0, std))


class RMSNorm(paddle.nn.Layer):
    """LLaMA RMSNorm by hand (pow, mean, rsqrt) or with incubate fused_rms_norm."""

    def __init__(self, dim: int, fused: bool, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = self.create_parameter(
            [dim], default_initializer=paddle.nn.initializer.Uniform(0.5, 1.5)
        )
        self.fused, self.eps = fused, eps

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        if self.fused:
            return IF.fused_rms_norm(x, self.weight, None, self.eps, x.ndim - 1)[0]
        variance = x.pow(2).mean(-1, keepdim=True)
        return paddle.rsqrt(variance + self.eps) * x * self.weight


def rotate_half(x: paddle.Tensor) -> paddle.Tensor:
    half = x.shape[-1] // 2
    return paddle.concat([-x[..., half:], x[..., :half]], axis=-1)


def rope_tables(seq_len: Any, dim: int) -> tuple[paddle.Tensor, paddle.Tensor]:
    """cos/sin tables [seq, dim] from arange (float positions, inverse frequencies)."""
    inv_freq = 1.0 / (10000.0 ** (paddle.arange(0, dim, 2, dtype="float32") / dim))
    t = paddle.arange(seq_len, dtype="float32")
    freqs = paddle.unsqueeze(t, 1) * paddle.unsqueeze(inv_freq, 0)
    emb = paddle.concat([freqs, freqs], axis=-1)
    return paddle.cos(emb), paddle.sin(emb)


class LlamaDecoderLayer(paddle.nn.Layer):
    """One LLaMA decoder layer: pre-RMSNorm, rotary q/k, causal softmax attention, SwiGLU.

    ``variant`` picks how the pieces are written: ``hand`` (RMSNorm by hand, tril mask,
    silu(gate) * up), ``fused`` (fused_rms_norm, arange-comparison mask, incubate swiglu),
    ``sdpa`` (F.scaled_dot_product_attention(is_causal=True)), ``einsum`` (einsum for the
    attention products, triu mask).
    """

    def __init__(self, variant: str) -> None:
        super().__init__()
        self.variant = variant
        fused = variant == "fused"
        self.input_layernorm = RMSNorm(HIDDEN, fused)
        self.post_attention_layernorm = RMSNorm(HIDDEN, fused)
        lin = lambda i, o: paddle.nn.Linear(i, o, weight_attr=_normal(), bias_attr=False)  # noqa: E731
        self.q_proj, self.k_proj = lin(HIDDEN, HIDDEN), lin(HIDDEN, HIDDEN)
        self.v_proj, self.o_proj = lin(HIDDEN, HIDDEN), lin(HIDDEN, HIDDEN)
        self.gate_proj, self.up_proj = lin(HIDDEN, FFN), lin(HIDDEN, FFN)
        self.down_proj = lin(FFN, HIDDEN)

    def causal_scores(self, q: paddle.Tensor, k: paddle.Tensor, seq: Any) -> paddle.Tensor:
        """q, k: [b, h, s, d] -> masked scores [b, h, s, s]."""
        scale = 1.0 / math.sqrt(HEAD_DIM)
        if self.variant == "einsum":
            scores = paddle.einsum("bhqd,bhkd->bhqk", q, k) * scale
            mask = paddle.triu(paddle.full([seq, seq], float("-inf"), "float32"), diagonal=1)
            return scores + mask
        scores = paddle.matmul(q, k, transpose_y=True) * scale
        if self.variant == "fused":
            pos = paddle.arange(seq)
            allowed = paddle.unsqueeze(pos, 1) >= paddle.unsqueeze(pos, 0)
        else:
            allowed = paddle.tril(paddle.ones([seq, seq], dtype="bool"))
        return paddle.where(allowed, scores, paddle.full_like(scores, -1e9))

    def forward(self, hidden: paddle.Tensor) -> paddle.Tensor:
        batch, seq = hidden.shape[0], hidden.shape[1]
        x = self.input_layernorm(hidden)
        shape = [batch, seq, HEADS, HEAD_DIM]
        q = self.q_proj(x).reshape(shape)
        k = self.k_proj(x).reshape(shape)
        v = self.v_proj(x).reshape(shape)
        cos, sin = rope_tables(seq, HEAD_DIM)  # [s, d]
        cos, sin = cos.unsqueeze([0, 2]), sin.unsqueeze([0, 2])  # [1, s, 1, d]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if self.variant == "sdpa":
            ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [b, s, h, d]
        else:
            q, k, v = (t.transpose([0, 2, 1, 3]) for t in (q, k, v))
            probs = F.softmax(self.causal_scores(q, k, seq), axis=-1)
            if self.variant == "einsum":
                ctx = paddle.einsum("bhqk,bhkd->bhqd", probs, v)
            else:
                ctx = paddle.matmul(probs, v)
            ctx = ctx.transpose([0, 2, 1, 3])
        hidden = hidden + self.o_proj(ctx.reshape([batch, seq, HIDDEN]))
        x = self.post_attention_layernorm(hidden)
        if self.variant == "fused":
            mlp = IF.swiglu(self.gate_proj(x), self.up_proj(x))
        else:
            mlp = F.silu(self.gate_proj(x)) * self.up_proj(x)
        return hidden + self.down_proj(mlp)


class GPT2Block(paddle.nn.Layer):
    """GPT-2 block: LN, fused c_attn split in q/k/v, causal additive mask, gelu tanh MLP."""

    def __init__(self) -> None:
        super().__init__()
        init = _normal()
        self.ln_1 = paddle.nn.LayerNorm(HIDDEN, weight_attr=_normal(), bias_attr=_normal(0.1))
        self.c_attn = paddle.nn.Linear(HIDDEN, 3 * HIDDEN, weight_attr=init)
        self.c_proj = paddle.nn.Linear(HIDDEN, HIDDEN, weight_attr=init)
        self.ln_2 = paddle.nn.LayerNorm(HIDDEN, weight_attr=_normal(), bias_attr=_normal(0.1))
        self.c_fc = paddle.nn.Linear(HIDDEN, 4 * HIDDEN, weight_attr=init)
        self.mlp_proj = paddle.nn.Linear(4 * HIDDEN, HIDDEN, weight_attr=init)
        self.attn_dropout = paddle.nn.Dropout(0.1)
        self.resid_dropout = paddle.nn.Dropout(0.1)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        batch, seq = x.shape[0], x.shape[1]
        q, k, v = paddle.split(self.c_attn(self.ln_1(x)), 3, axis=-1)
        q, k, v = (
            t.reshape([batch, seq, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3]) for t in (q, k, v)
        )
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM)
        causal = paddle.tril(paddle.ones([seq, seq], dtype="float32"))
        scores = scores + (1.0 - causal) * -10000.0
        probs = self.attn_dropout(F.softmax(scores, axis=-1))
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([batch, seq, HIDDEN])
        x = x + self.resid_dropout(self.c_proj(ctx))
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate=True)
        return x + self.resid_dropout(self.mlp_proj(h))


class BertLayer(paddle.nn.Layer):
    """BERT encoder layer (post-LN) with a [batch, seq] padding mask fed as an input."""

    def __init__(self) -> None:
        super().__init__()
        init = _normal()
        self.query = paddle.nn.Linear(HIDDEN, HIDDEN, weight_attr=init)
        self.key = paddle.nn.Linear(HIDDEN, HIDDEN, weight_attr=init)
        self.value = paddle.nn.Linear(HIDDEN, HIDDEN, weight_attr=init)
        self.dense = paddle.nn.Linear(HIDDEN, HIDDEN, weight_attr=init)
        self.ln1 = paddle.nn.LayerNorm(HIDDEN, epsilon=1e-12)
        self.intermediate = paddle.nn.Linear(HIDDEN, FFN, weight_attr=init)
        self.output = paddle.nn.Linear(FFN, HIDDEN, weight_attr=init)
        self.ln2 = paddle.nn.LayerNorm(HIDDEN, epsilon=1e-12)
        self.dropout = paddle.nn.Dropout(0.1)

    def forward(self, x: paddle.Tensor, attention_mask: paddle.Tensor) -> paddle.Tensor:
        batch, seq = x.shape[0], x.shape[1]

        def heads(t: paddle.Tensor) -> paddle.Tensor:
            return t.reshape([batch, seq, HEADS, HEAD_DIM]).transpose([0, 2, 1, 3])

        q, k, v = heads(self.query(x)), heads(self.key(x)), heads(self.value(x))
        extended = (1.0 - attention_mask.unsqueeze([1, 2]).astype("float32")) * -10000.0
        scores = paddle.matmul(q, k, transpose_y=True) / math.sqrt(HEAD_DIM) + extended
        probs = self.dropout(F.softmax(scores, axis=-1))
        ctx = paddle.matmul(probs, v).transpose([0, 2, 1, 3]).reshape([batch, seq, HIDDEN])
        x = self.ln1(x + self.dropout(self.dense(ctx)))
        return self.ln2(x + self.dropout(self.output(F.gelu(self.intermediate(x)))))


class BertEmbeddings(paddle.nn.Layer):
    """Word + position (arange) + token-type embeddings, LayerNorm, dropout."""

    def __init__(self) -> None:
        super().__init__()
        init = _normal(1.0)
        self.word_embeddings = paddle.nn.Embedding(30, HIDDEN, padding_idx=0, weight_attr=init)
        self.position_embeddings = paddle.nn.Embedding(16, HIDDEN, weight_attr=init)
        self.token_type_embeddings = paddle.nn.Embedding(2, HIDDEN, weight_attr=init)
        self.layer_norm = paddle.nn.LayerNorm(HIDDEN, epsilon=1e-12)
        self.dropout = paddle.nn.Dropout(0.1)

    def forward(self, input_ids: paddle.Tensor) -> paddle.Tensor:
        seq = input_ids.shape[1]
        position_ids = paddle.arange(seq, dtype="int64").unsqueeze(0).expand_as(input_ids)
        token_type_ids = paddle.zeros_like(input_ids)
        emb = (
            self.word_embeddings(input_ids)
            + self.position_embeddings(position_ids)
            + self.token_type_embeddings(token_type_ids)
        )
        return self.dropout(self.layer_norm(emb))


class ViT(paddle.nn.Layer):
    """Tiny ViT: conv2d patch embedding, class token expanded with x.shape[0], position
    embedding, one pre-LN block (paddle.nn.MultiHeadAttention, gelu MLP), head."""

    def __init__(self) -> None:
        super().__init__()
        self.patch_embed = paddle.nn.Conv2D(3, HIDDEN, kernel_size=4, stride=4)
        init = paddle.nn.initializer.Normal(0.0, 1.0)
        self.cls_token = self.create_parameter([1, 1, HIDDEN], default_initializer=init)
        self.pos_embed = self.create_parameter([1, 5, HIDDEN], default_initializer=init)
        self.norm1 = paddle.nn.LayerNorm(HIDDEN, epsilon=1e-6)
        self.attn = paddle.nn.MultiHeadAttention(HIDDEN, HEADS)
        self.norm2 = paddle.nn.LayerNorm(HIDDEN, epsilon=1e-6)
        self.fc1 = paddle.nn.Linear(HIDDEN, FFN)
        self.fc2 = paddle.nn.Linear(FFN, HIDDEN)
        self.norm = paddle.nn.LayerNorm(HIDDEN, epsilon=1e-6)
        self.head = paddle.nn.Linear(HIDDEN, 5)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        x = self.patch_embed(x).flatten(2).transpose([0, 2, 1])  # [b, 4, 16]
        cls = self.cls_token.expand([x.shape[0], -1, -1])
        x = paddle.concat([cls, x], axis=1) + self.pos_embed
        h = self.norm1(x)
        x = x + self.attn(h, h, h)
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return self.head(self.norm(x)[:, 0])


def _bn(channels: int) -> paddle.nn.BatchNorm2D:
    return paddle.nn.BatchNorm2D(channels)


class BasicBlock(paddle.nn.Layer):
    """ResNet basic block (stride 2, 1x1 downsample) + adaptive avg pool + linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = paddle.nn.Conv2D(4, 8, 3, stride=2, padding=1, bias_attr=False)
        self.bn1 = _bn(8)
        self.conv2 = paddle.nn.Conv2D(8, 8, 3, padding=1, bias_attr=False)
        self.bn2 = _bn(8)
        self.downsample = paddle.nn.Sequential(
            paddle.nn.Conv2D(4, 8, 1, stride=2, bias_attr=False), _bn(8)
        )
        self.pool = paddle.nn.AdaptiveAvgPool2D(1)
        self.fc = paddle.nn.Linear(8, 5)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = F.relu(out + self.downsample(x))
        return self.fc(paddle.flatten(self.pool(out), 1))


class MobileNetV3Unit(paddle.nn.Layer):
    """Inverted residual: 1x1 expand + BN + hardswish, depthwise 3x3 + BN + hardswish,
    squeeze-excite (adaptive avg pool, 1x1 relu, 1x1 hardsigmoid), 1x1 project + BN, residual."""

    def __init__(self) -> None:
        super().__init__()
        self.expand = paddle.nn.Conv2D(8, 16, 1, bias_attr=False)
        self.bn1 = _bn(16)
        self.depthwise = paddle.nn.Conv2D(16, 16, 3, padding=1, groups=16, bias_attr=False)
        self.bn2 = _bn(16)
        self.se_pool = paddle.nn.AdaptiveAvgPool2D(1)
        self.se_reduce = paddle.nn.Conv2D(16, 4, 1)
        self.se_expand = paddle.nn.Conv2D(4, 16, 1)
        self.project = paddle.nn.Conv2D(16, 8, 1, bias_attr=False)
        self.bn3 = _bn(8)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        h = F.hardswish(self.bn1(self.expand(x)))
        h = F.hardswish(self.bn2(self.depthwise(h)))
        s = F.hardsigmoid(self.se_expand(F.relu(self.se_reduce(self.se_pool(h)))))
        return x + self.bn3(self.project(h * s))


class MixerHead(paddle.nn.Layer):
    """MLP-Mixer block (token mixing over 4 patches, channel mixing) and a classification
    head returning log_softmax, argmax and top_k(3) values and indices."""

    def __init__(self) -> None:
        super().__init__()
        tokens, channels = 4, 8
        self.norm1 = paddle.nn.LayerNorm(channels)
        self.token_fc1 = paddle.nn.Linear(tokens, 8)
        self.token_fc2 = paddle.nn.Linear(8, tokens)
        self.norm2 = paddle.nn.LayerNorm(channels)
        self.channel_fc1 = paddle.nn.Linear(channels, 16)
        self.channel_fc2 = paddle.nn.Linear(16, channels)
        self.norm = paddle.nn.LayerNorm(channels)
        self.head = paddle.nn.Linear(channels, 6, weight_attr=_normal(1.0))

    def forward(self, x: paddle.Tensor) -> tuple[paddle.Tensor, ...]:
        t = self.norm1(x).transpose([0, 2, 1])
        x = x + self.token_fc2(F.gelu(self.token_fc1(t))).transpose([0, 2, 1])
        x = x + self.channel_fc2(F.gelu(self.channel_fc1(self.norm2(x))))
        logits = self.head(self.norm(x).mean(axis=1))
        values, indices = paddle.topk(logits, 3)
        return F.log_softmax(logits, axis=-1), paddle.argmax(logits, axis=-1), values, indices


def _randomize_bn(layer: paddle.nn.Layer, rng: np.random.Generator) -> None:
    """Give every BatchNorm non-trivial running stats and affine params (eval uses them)."""
    for sub in layer.sublayers(include_self=True):
        if isinstance(sub, paddle.nn.layer.norm._BatchNormBase):
            n = sub._mean.shape[0]
            sub._mean.set_value(rng.uniform(-0.5, 0.5, n).astype("float32"))
            sub._variance.set_value(rng.uniform(0.5, 2.0, n).astype("float32"))
            sub.weight.set_value(rng.uniform(0.5, 1.5, n).astype("float32"))
            sub.bias.set_value(rng.uniform(-0.5, 0.5, n).astype("float32"))


def with_bn_stats(cls: type) -> Callable[[], paddle.nn.Layer]:
    def make() -> paddle.nn.Layer:
        layer = cls()
        _randomize_bn(layer, np.random.default_rng(7))
        return layer

    return make


@dataclass(frozen=True)
class InputSpec:
    """One model input: name, spec shape (-1 = None), dtype, the two feed shapes, and
    how to fill it: ``uniform`` in [-1, 1], ``ids:<high>`` int ids in [0, high),
    ``mask`` a 0/1 padding mask (1 = keep; each row keeps a prefix)."""

    name: str
    spec: list[int]
    dtype: str
    shape: tuple[int, ...]
    shape_2: tuple[int, ...] | None = None
    fill: str = "uniform"


@dataclass(frozen=True)
class BlockModel:
    name: str
    description: str
    make_layer: Callable[[], paddle.nn.Layer]
    inputs: list[InputSpec]


def make_feed(spec: InputSpec, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if spec.fill == "uniform":
        return rng.uniform(-1.0, 1.0, size=shape).astype(spec.dtype)
    if spec.fill.startswith("ids:"):
        return rng.integers(0, int(spec.fill[4:]), size=shape).astype(spec.dtype)
    if spec.fill == "mask":
        lengths = rng.integers(1, shape[1] + 1, size=shape[0])
        lengths[0] = shape[1]
        return (np.arange(shape[1])[None, :] < lengths[:, None]).astype(spec.dtype)
    raise ValueError(spec.fill)


def _seq_input(name: str = "hidden") -> list[InputSpec]:
    return [InputSpec(name, [-1, -1, HIDDEN], "float32", (2, 7, HIDDEN), (3, 5, HIDDEN))]


BLOCK_MODELS: list[BlockModel] = [
    BlockModel(
        "llama_decoder",
        "LLaMA decoder layer by hand: RMSNorm (pow/mean/rsqrt), rotary embedding from arange "
        "cos/sin tables (slice halves, concat), q/k/v/o Linear, causal mask tril(ones bool) + "
        "where, softmax, SwiGLU silu(gate)*up, residuals; hidden 16, 2 heads",
        lambda: LlamaDecoderLayer("hand"),
        _seq_input(),
    ),
    BlockModel(
        "llama_decoder_fused",
        "LLaMA decoder layer with incubate fused_rms_norm, causal mask from arange comparisons, "
        "incubate swiglu(gate, up)",
        lambda: LlamaDecoderLayer("fused"),
        _seq_input(),
    ),
    BlockModel(
        "llama_decoder_sdpa",
        "LLaMA decoder layer with F.scaled_dot_product_attention(is_causal=True) (hand RMSNorm, "
        "hand SwiGLU)",
        lambda: LlamaDecoderLayer("sdpa"),
        _seq_input(),
    ),
    BlockModel(
        "llama_decoder_einsum",
        "LLaMA decoder layer with paddle.einsum for both attention products and an additive "
        "triu(full(-inf), 1) mask",
        lambda: LlamaDecoderLayer("einsum"),
        _seq_input(),
    ),
    BlockModel(
        "gpt2_block",
        "GPT-2 block: LayerNorm, c_attn Linear split in q/k/v, causal additive mask "
        "(1 - tril(ones)) * -1e4, softmax, gelu tanh MLP, nn.Dropout in eval, residuals",
        GPT2Block,
        _seq_input("x"),
    ),
    BlockModel(
        "bert_layer",
        "BERT encoder layer (post-LN, gelu) with an int64 [batch, seq] padding mask input "
        "turned into an additive mask",
        BertLayer,
        _seq_input("x") + [InputSpec("attention_mask", [-1, -1], "int64", (2, 7), (3, 5), "mask")],
    ),
    BlockModel(
        "bert_embeddings",
        "BERT embeddings: int64 token ids, position ids from arange(seq) expanded, "
        "token types zeros_like, three Embedding lookups, LayerNorm, dropout",
        BertEmbeddings,
        [InputSpec("input_ids", [-1, -1], "int64", (2, 7), (3, 5), "ids:30")],
    ),
    BlockModel(
        "vit_block",
        "ViT: Conv2D(3,16,4,stride 4) patch embedding on 8x8 images, class token expanded "
        "with x.shape[0], position embedding, pre-LN block with nn.MultiHeadAttention, gelu MLP, "
        "head on the class token",
        ViT,
        [InputSpec("x", [-1, 3, 8, 8], "float32", (2, 3, 8, 8), (3, 3, 8, 8))],
    ),
    BlockModel(
        "resnet_basic_block",
        "ResNet basic block: conv3x3 stride 2 + BatchNorm2D (eval, random running stats) + relu, "
        "conv3x3 + BN, 1x1 stride-2 downsample + BN, residual, relu, AdaptiveAvgPool2D(1), "
        "flatten, Linear; batch, height and width are -1",
        with_bn_stats(BasicBlock),
        [InputSpec("x", [-1, 4, -1, -1], "float32", (2, 4, 9, 9), (3, 4, 7, 7))],
    ),
    BlockModel(
        "mobilenetv3_unit",
        "MobileNetV3 unit: 1x1 expand + BN + hardswish, depthwise 3x3 + BN + hardswish, "
        "squeeze-excite (adaptive avg pool, 1x1 conv relu, 1x1 conv hardsigmoid, multiply), "
        "1x1 project + BN, residual; batch, height and width are -1",
        with_bn_stats(MobileNetV3Unit),
        [InputSpec("x", [-1, 8, -1, -1], "float32", (2, 8, 7, 7), (3, 8, 5, 5))],
    ),
    BlockModel(
        "mixer_head",
        "MLP-Mixer block over [batch, 4 tokens, 8 channels] and a classification head: "
        "log_softmax, argmax and top_k(3) values/indices as four outputs",
        MixerHead,
        [InputSpec("x", [-1, 4, 8], "float32", (2, 4, 8), (3, 4, 8))],
    ),
]
