"""Whole model layers as Paddle PIR program text, at any size: issue 16's end-to-end bench.

`llama_decoder(...)` and `bert_layer(...)` return a `Block`: the program as the text
Paddle 3.x prints for the layer written the usual way in a float16 / bfloat16 model
(`model.to(dtype)`, static input shapes), its feeds and parameters, and `arrays(seed)`
that draws their values. The op sequences follow the model fixtures
(kernels_tests/fixtures/models/llama_decoder and bert_layer, written by real Paddle
3.3.1), with static shapes instead of -1 dims (so no shape64 / slice / stack chains):

* LLaMA decoder layer (pre-norm): RMSNorm as PaddleNLP writes it (cast to float32,
  pow 2, mean, + epsilon, rsqrt, multiply, cast back, times the weight); q / k / v
  projections without bias; rotary embedding with rotate_half (slice the halves, scale
  -1, concat) against cos / sin tables held as parameters (PaddleNLP's cos_cached /
  sin_cached buffers, persistable, so `builtin.parameter` in a saved program); scores
  q k^T / sqrt(head_dim) plus an additive causal mask fed as `attention_mask` [batch, 1,
  seq, seq] (0 on and below the diagonal, -1e4 above, as a model's
  `_prepare_decoder_attention_mask` hands it over); softmax in float32 (PaddleNLP's
  `F.softmax(..., dtype="float32")`: a cast, softmax, a cast back); o projection and
  residual; RMSNorm; SwiGLU MLP silu(gate) * up, down; residual.
* BERT layer (post-norm, as the bert_layer fixture): q / k / v Linear with bias, the
  int64 [batch, seq] padding mask made additive ((1 - mask) * -1e4), softmax,
  dropout in eval (is_test), o Linear, dropout, residual, LayerNorm (epsilon 1e-12),
  Linear, exact GELU, Linear, dropout, residual, LayerNorm.

Each layer is written from its `LayerKind` (`llama_kind`, `bert_kind`: feeds, one
layer's parameters, a prologue and the layer itself) by `write_layers`, which also
stacks N of them, each one's output the next one's input (`tools/gen_big_model.py`);
BERT's additive mask is made once, by the prologue, before the first layer.

Weights are drawn as a trained layer holds them (std 1 / sqrt(fan_in), norm weights
near 1, small biases) so float16 activations stay near unit scale. bfloat16 arrays are
uint16 bit patterns, as cinn_py takes them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from cinn_py.pir.dtypes import DataType, float32_to_bfloat16

MASK_VALUE = -1e4
"""The additive mask's value at masked positions (both layers)."""

ROPE_THETA = 10000.0
LLAMA_EPSILON = 1e-6
BERT_EPSILON = 1e-12


@dataclass(frozen=True)
class Tensor:
    """A feed (`pd_op.data`) or a parameter (`builtin.parameter`) of a block."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * DataType.from_name(self.dtype).itemsize


@dataclass
class Block:
    """A layer's program text, its feeds and parameters (in program order), how to draw
    their values, and what it is."""

    name: str
    dtype: str
    text: str
    feeds: list[Tensor]
    params: list[Tensor]
    output: Tensor
    sizes: dict[str, int]
    draw: dict[str, Callable[[np.random.Generator, Tensor], np.ndarray]] = field(repr=False)
    """Per tensor name, (rng, tensor) -> float64 / int64 values (cast by `arrays`)."""

    def arrays(self, seed: int = 0) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """(feeds, params) as NumPy arrays in their dtypes (bfloat16 as uint16 bits)."""
        rng = np.random.default_rng(seed)
        feeds = {t.name: _cast(self.draw[t.name](rng, t), t.dtype) for t in self.feeds}
        params = {t.name: _cast(self.draw[t.name](rng, t), t.dtype) for t in self.params}
        return feeds, params

    @property
    def param_bytes(self) -> int:
        return sum(t.nbytes for t in self.params)


def _cast(values: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":
        return float32_to_bfloat16(values.astype(np.float32))
    return np.ascontiguousarray(values.astype(DataType.from_name(dtype).numpy))


# ---- writing the text --------------------------------------------------------------------


@dataclass(frozen=True)
class V:
    """A value of the program being written: its printed id and type."""

    id: int
    shape: tuple[int, ...]
    dtype: str
    vec: str = ""
    """The printed type of a `builtin.combine` result (then shape and dtype are unused)."""

    @property
    def type(self) -> str:
        return self.vec or _ty(self.shape, self.dtype)


class Raw(str):
    """An attribute printed as it is: a Place, a quoted string, a dtype name."""


def _ty(shape: Sequence[int], dtype: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + DataType.from_name(dtype).short + ">"


def _attr(value: object) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.17g}"  # Paddle prints 6 digits; the parser reads any
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_attr(v) for v in value) + "]"
    return str(value)


def _quoted(s: str) -> Raw:
    return Raw(f'"{s}"')


_CPU = Raw("Place(cpu)")
_DEVICE = Raw("Place(undefined:0)")


class Writer:
    """Appends ops as Paddle prints them (attributes in alphabetical order, as Paddle's
    printer has them, `stop_gradient` included) and returns their results."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def ops(
        self,
        name: str,
        operands: Sequence[V | None],
        attrs: dict[str, object],
        results: Sequence[tuple[Sequence[int], str] | str],
    ) -> list[V]:
        """`results`: (shape, dtype) per tensor result, or a printed `vec[...]` type.
        A None operand prints as Paddle's `<<NULL VALUE>>` (an absent optional input)."""
        outs = []
        for r in results:
            shape, dtype = ((), "") if isinstance(r, str) else r
            outs.append(V(self.count, tuple(shape), dtype, r if isinstance(r, str) else ""))
            self.count += 1
        constant = name in ("pd_op.full", "pd_op.full_int_array")
        merged = {**attrs, "stop_gradient": [constant] * len(results)}
        body = ",".join(f"{k}:{_attr(merged[k])}" for k in sorted(merged))
        args = ", ".join("<<NULL VALUE>>" if v is None else f"%{v.id}" for v in operands)
        types = ", ".join("<<NULL TYPE>>" if v is None else v.type for v in operands)
        self.lines.append(
            f'    ({", ".join(f"%{o.id}" for o in outs)}) = "{name}" ({args}) {{{body}}} : '
            f"({types}) -> {', '.join(o.type for o in outs)}"
        )
        return outs

    def op(
        self,
        name: str,
        operands: Sequence[V | None],
        attrs: dict[str, object],
        shape: Sequence[int],
        dtype: str,
    ) -> V:
        return self.ops(name, operands, attrs, [(shape, dtype)])[0]

    def text(self) -> str:
        return "{\n" + "\n".join(self.lines) + "\n}\n"


class Paddle:
    """The Paddle ops the layers use, each written as Paddle prints it."""

    def __init__(self) -> None:
        self.w = Writer()

    def parameter(self, t: Tensor) -> V:
        attrs = {
            "is_distributed": [False],
            "is_parameter": [True],
            "need_clip": [True],
            "parameter_name": _quoted(t.name),
            "persistable": [True],
            "trainable": [True],
        }
        return self.w.op("builtin.parameter", [], attrs, t.shape, t.dtype)

    def data(self, t: Tensor) -> V:
        attrs = {"dtype": Raw(t.dtype), "name": _quoted(t.name), "place": _DEVICE}
        return self.w.op("pd_op.data", [], {**attrs, "shape": list(t.shape)}, t.shape, t.dtype)

    def full(self, value: float, dtype: str = "float32") -> V:
        attrs = {"dtype": Raw(dtype), "place": _CPU, "shape": [1], "value": float(value)}
        return self.w.op("pd_op.full", [], attrs, (1,), dtype)

    def int_array(self, values: Sequence[int]) -> V:
        attrs = {"dtype": Raw("int64"), "place": _CPU, "value": [int(v) for v in values]}
        return self.w.op("pd_op.full_int_array", [], attrs, (len(values),), "int64")

    def unary(self, name: str, x: V, attrs: dict[str, object] | None = None) -> V:
        return self.w.op(name, [x], attrs or {}, x.shape, x.dtype)

    def cast(self, x: V, dtype: str) -> V:
        return self.w.op("pd_op.cast", [x], {"dtype": Raw(dtype)}, x.shape, dtype)

    def binary(self, name: str, x: V, y: V) -> V:
        return self.w.op(name, [x, y], {}, np.broadcast_shapes(x.shape, y.shape), x.dtype)

    def add(self, x: V, y: V) -> V:
        return self.binary("pd_op.add", x, y)

    def multiply(self, x: V, y: V) -> V:
        return self.binary("pd_op.multiply", x, y)

    def scale(self, x: V, scale: float, bias: float = 0.0) -> V:
        attrs = {"bias": float(bias), "bias_after_scale": True}
        return self.w.op("pd_op.scale", [x, self.full(scale)], attrs, x.shape, x.dtype)

    def matmul(self, x: V, y: V, transpose_y: bool = False) -> V:
        n = y.shape[-2] if transpose_y else y.shape[-1]
        batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
        attrs = {"transpose_x": False, "transpose_y": transpose_y}
        return self.w.op("pd_op.matmul", [x, y], attrs, (*batch, x.shape[-2], n), x.dtype)

    def linear(self, x: V, weight: V, bias: V | None = None) -> V:
        out = self.matmul(x, weight)
        return out if bias is None else self.add(out, bias)

    def reshape(self, x: V, shape: Sequence[int]) -> V:
        return self.w.op("pd_op.reshape", [x, self.int_array(shape)], {}, shape, x.dtype)

    def transpose(self, x: V, perm: Sequence[int]) -> V:
        shape = [x.shape[p] for p in perm]
        return self.w.op("pd_op.transpose", [x], {"perm": list(perm)}, shape, x.dtype)

    def unsqueeze(self, x: V, axes: Sequence[int]) -> V:
        shape = list(x.shape)
        for a in axes:
            shape.insert(a, 1)
        return self.w.op("pd_op.unsqueeze", [x, self.int_array(axes)], {}, shape, x.dtype)

    def slice_last(self, x: V, start: int, end: int) -> V:
        """x[..., start:end]; Paddle prints an open end as 2147483647."""
        axis = len(x.shape) - 1
        stop = min(end, x.shape[axis])
        attrs = {"axes": [axis], "decrease_axis": [], "infer_flags": [1]}
        operands = [x, self.int_array([start]), self.int_array([end])]
        return self.w.op("pd_op.slice", operands, attrs, (*x.shape[:-1], stop - start), x.dtype)

    def concat_last(self, a: V, b: V) -> V:
        axis = self.full(-1, "int32")
        vec = "vec[" + ",".join((a.type, b.type)) + "]"
        combined = self.w.ops("builtin.combine", [a, b], {}, [vec])[0]
        shape = (*a.shape[:-1], a.shape[-1] + b.shape[-1])
        return self.w.op("pd_op.concat", [combined, axis], {}, shape, a.dtype)

    def softmax(self, x: V) -> V:
        return self.unary("pd_op.softmax", x, {"axis": -1})

    def dropout_eval(self, x: V, p: float = 0.1) -> V:
        """nn.Dropout in eval mode: the identity, printed with its (unused) mask."""
        attrs = {"fix_seed": False, "is_test": True, "mode": _quoted("upscale_in_train"), "seed": 0}
        results = [(x.shape, x.dtype), (x.shape, "uint8")]
        return self.w.ops("pd_op.dropout", [x, None, self.full(p)], attrs, results)[0]

    def layer_norm(self, x: V, weight: V, bias: V, epsilon: float) -> V:
        attrs = {"begin_norm_axis": len(x.shape) - 1, "epsilon": epsilon}
        stats = (x.shape[:-1], "float32")
        return self.w.ops(
            "pd_op.layer_norm", [x, weight, bias], attrs, [(x.shape, x.dtype), stats, stats]
        )[0]

    def rms_norm(self, x: V, weight: V, epsilon: float) -> V:
        """PaddleNLP's LlamaRMSNorm: the variance in float32, the product cast back, then
        the weight."""
        xf = self.cast(x, "float32")
        squared = self.unary("pd_op.pow", xf, {"y": 2.0})
        axis = self.int_array([-1])
        mean = self.w.op(
            "pd_op.mean", [squared, axis], {"keepdim": True}, (*x.shape[:-1], 1), "float32"
        )
        inv = self.unary("pd_op.rsqrt", self.scale(mean, 1.0, epsilon))
        return self.multiply(self.cast(self.multiply(inv, xf), x.dtype), weight)

    def fetch(self, x: V) -> V:
        attrs = {"col": 0, "name": _quoted("fetch_name_0"), "persistable": [True]}
        return self.w.op("pd_op.fetch", [x], attrs, x.shape, x.dtype)


# ---- value drawing -----------------------------------------------------------------------


def _normal(std: float, mean: float = 0.0) -> Callable[[np.random.Generator, Tensor], np.ndarray]:
    return lambda rng, t: mean + std * rng.standard_normal(t.shape)


def _weight(rng: np.random.Generator, t: Tensor) -> np.ndarray:
    return rng.standard_normal(t.shape) / math.sqrt(t.shape[0])


def _causal_mask(rng: np.random.Generator, t: Tensor) -> np.ndarray:
    seq = t.shape[-1]
    mask = np.triu(np.full((seq, seq), MASK_VALUE), 1)
    return np.broadcast_to(mask, t.shape).copy()


def _padding_mask(rng: np.random.Generator, t: Tensor) -> np.ndarray:
    """1 for tokens, 0 for padding: each sequence padded past a random length (at least
    half), the first one not at all."""
    batch, seq = t.shape
    lengths = rng.integers((seq + 1) // 2, seq + 1, size=batch)
    lengths[0] = seq
    return (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)


def rope_tables(
    seq: int, head_dim: int, theta: float = ROPE_THETA
) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of LLaMA's rotary embedding, [seq, head_dim] (the halves repeated)."""
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.outer(np.arange(seq, dtype=np.float64), inv_freq)
    angles = np.concatenate([angles, angles], axis=-1)
    return np.cos(angles), np.sin(angles)


# ---- the layers ------------------------------------------------------------------------------


@dataclass
class LayerKind:
    """A layer cut into the parts a program of one or many layers is written from: the
    feeds, one layer's parameters (named as in a lone layer), the `prologue` that turns
    the feed values into the first layer's input and what every layer also takes (the
    mask), and the `layer` itself, which maps (writer, input, shared, weights by name)
    to its output, the next layer's input."""

    name: str
    dtype: str
    feeds: list[Tensor]
    params: list[Tensor]
    prologue: Callable[[Paddle, list[V]], tuple[V, list[V]]]
    layer: Callable[[Paddle, V, list[V], dict[str, V]], V]
    sizes: dict[str, int]
    draw: dict[str, Callable[[np.random.Generator, Tensor], np.ndarray]] = field(repr=False)


def _own_name(index: int, name: str) -> str:
    return name


def write_layers(
    kind: LayerKind,
    layers: int = 1,
    param_name: Callable[[int, str], str] = _own_name,
    name: str | None = None,
) -> Block:
    """`layers` layers of `kind` stacked (each one's output the next one's input), the
    last one's output fetched: every parameter first (layer by layer, renamed by
    `param_name(layer index, name)`), then the feeds, the prologue and the layers."""
    if layers < 1:
        raise ValueError(f"a program needs at least one layer, got {layers}")
    p = Paddle()
    params = [
        Tensor(param_name(i, t.name), t.shape, t.dtype) for i in range(layers) for t in kind.params
    ]
    values = {t.name: p.parameter(t) for t in params}
    x, shared = kind.prologue(p, [p.data(t) for t in kind.feeds])
    for i in range(layers):
        x = kind.layer(p, x, shared, {t.name: values[param_name(i, t.name)] for t in kind.params})
    p.fetch(x)
    draw = {t.name: kind.draw[t.name] for t in kind.feeds}
    for i in range(layers):
        draw.update({param_name(i, t.name): kind.draw[t.name] for t in kind.params})
    output = Tensor("out0", x.shape, kind.dtype)
    return Block(
        name or kind.name,
        kind.dtype,
        p.w.text(),
        list(kind.feeds),
        params,
        output,
        dict(kind.sizes),
        draw,
    )


def llama_kind(
    batch: int = 4,
    seq: int = 512,
    hidden: int = 2048,
    heads: int = 16,
    intermediate: int | None = None,
    dtype: str = "float16",
) -> LayerKind:
    """The LLaMA decoder layer's parts (see `llama_decoder`)."""
    if hidden % heads or (hidden // heads) % 2:
        raise ValueError(f"hidden {hidden} must split into {heads} heads of even size")
    head_dim = hidden // heads
    inter = intermediate or -(-(8 * hidden // 3) // 256) * 256
    params = [
        Tensor("input_layernorm.weight", (hidden,), dtype),
        Tensor("q_proj.weight", (hidden, hidden), dtype),
        Tensor("k_proj.weight", (hidden, hidden), dtype),
        Tensor("v_proj.weight", (hidden, hidden), dtype),
        Tensor("o_proj.weight", (hidden, hidden), dtype),
        Tensor("rotary_emb.cos_cached", (1, seq, 1, head_dim), dtype),
        Tensor("rotary_emb.sin_cached", (1, seq, 1, head_dim), dtype),
        Tensor("post_attention_layernorm.weight", (hidden,), dtype),
        Tensor("gate_proj.weight", (hidden, inter), dtype),
        Tensor("up_proj.weight", (hidden, inter), dtype),
        Tensor("down_proj.weight", (inter, hidden), dtype),
    ]
    feeds = [
        Tensor("hidden_states", (batch, seq, hidden), dtype),
        Tensor("attention_mask", (batch, 1, seq, seq), dtype),
    ]

    def prologue(p: Paddle, data: list[V]) -> tuple[V, list[V]]:
        x, mask = data
        return x, [mask]

    def layer(p: Paddle, x: V, shared: list[V], w: dict[str, V]) -> V:
        (mask,) = shared
        h = p.rms_norm(x, w["input_layernorm.weight"], LLAMA_EPSILON)

        def heads_of(name: str) -> V:
            return p.reshape(p.matmul(h, w[name]), (batch, seq, heads, head_dim))

        def rotary(t: V) -> V:
            half = head_dim // 2
            rotated = p.concat_last(
                p.scale(p.slice_last(t, half, 2147483647), -1.0), p.slice_last(t, 0, half)
            )
            return p.add(
                p.multiply(t, w["rotary_emb.cos_cached"]),
                p.multiply(rotated, w["rotary_emb.sin_cached"]),
            )

        q = p.transpose(rotary(heads_of("q_proj.weight")), (0, 2, 1, 3))
        k = p.transpose(rotary(heads_of("k_proj.weight")), (0, 2, 1, 3))
        v = p.transpose(heads_of("v_proj.weight"), (0, 2, 1, 3))
        scores = p.add(p.scale(p.matmul(q, k, transpose_y=True), 1.0 / math.sqrt(head_dim)), mask)
        probs = p.cast(p.softmax(p.cast(scores, "float32")), dtype)
        context = p.reshape(p.transpose(p.matmul(probs, v), (0, 2, 1, 3)), (batch, seq, hidden))
        h1 = p.add(x, p.matmul(context, w["o_proj.weight"]))

        h2 = p.rms_norm(h1, w["post_attention_layernorm.weight"], LLAMA_EPSILON)
        gate = p.unary("pd_op.silu", p.matmul(h2, w["gate_proj.weight"]))
        up = p.matmul(h2, w["up_proj.weight"])
        return p.add(h1, p.matmul(p.multiply(gate, up), w["down_proj.weight"]))

    cos, sin = rope_tables(seq, head_dim)
    draw = {
        "hidden_states": _normal(1.0),
        "attention_mask": _causal_mask,
        "rotary_emb.cos_cached": lambda rng, t: cos.reshape(t.shape),
        "rotary_emb.sin_cached": lambda rng, t: sin.reshape(t.shape),
        "input_layernorm.weight": _normal(0.1, 1.0),
        "post_attention_layernorm.weight": _normal(0.1, 1.0),
    }
    draw.update({t.name: _weight for t in params if t.name not in draw})
    sizes = dict(batch=batch, seq=seq, hidden=hidden, heads=heads, intermediate=inter)
    return LayerKind("llama_decoder", dtype, feeds, params, prologue, layer, sizes, draw)


def llama_decoder(
    batch: int = 4,
    seq: int = 512,
    hidden: int = 2048,
    heads: int = 16,
    intermediate: int | None = None,
    dtype: str = "float16",
) -> Block:
    """A LLaMA decoder layer (see the module's docstring); `intermediate` defaults to
    LLaMA's 8/3 * hidden rounded up to a multiple of 256 (5632 for 2048, TinyLlama's)."""
    return write_layers(llama_kind(batch, seq, hidden, heads, intermediate, dtype))


def bert_kind(
    batch: int = 8,
    seq: int = 384,
    hidden: int = 768,
    heads: int = 12,
    intermediate: int | None = None,
    dtype: str = "float16",
) -> LayerKind:
    """The BERT layer's parts (see `bert_layer`). The additive mask is made once, in the
    prologue, and taken by every layer, as BertModel hands it to its encoder."""
    if hidden % heads:
        raise ValueError(f"hidden {hidden} must split into {heads} heads")
    head_dim = hidden // heads
    inter = intermediate or 4 * hidden
    params: list[Tensor] = []
    for name, fan_in, fan_out in (
        ("query", hidden, hidden),
        ("key", hidden, hidden),
        ("value", hidden, hidden),
        ("attention_output", hidden, hidden),
        ("intermediate", hidden, inter),
        ("output", inter, hidden),
    ):
        params += [Tensor(f"{name}.weight", (fan_in, fan_out), dtype)]
        params += [Tensor(f"{name}.bias", (fan_out,), dtype)]
    for name in ("attention_layernorm", "output_layernorm"):
        params += [
            Tensor(f"{name}.weight", (hidden,), dtype),
            Tensor(f"{name}.bias", (hidden,), dtype),
        ]
    feeds = [
        Tensor("hidden_states", (batch, seq, hidden), dtype),
        Tensor("attention_mask", (batch, seq), "int64"),
    ]

    def prologue(p: Paddle, data: list[V]) -> tuple[V, list[V]]:
        x, mask = data
        ones = p.cast(p.unsqueeze(mask, (1, 2)), dtype)
        return x, [p.scale(p.scale(ones, -1.0, 1.0), MASK_VALUE)]

    def layer(p: Paddle, x: V, shared: list[V], w: dict[str, V]) -> V:
        (additive,) = shared

        def linear(t: V, name: str) -> V:
            return p.linear(t, w[f"{name}.weight"], w[f"{name}.bias"])

        def heads_of(name: str) -> V:
            shaped = p.reshape(linear(x, name), (batch, seq, heads, head_dim))
            return p.transpose(shaped, (0, 2, 1, 3))

        q, k, v = heads_of("query"), heads_of("key"), heads_of("value")
        scores = p.add(
            p.scale(p.matmul(q, k, transpose_y=True), 1.0 / math.sqrt(head_dim)), additive
        )
        probs = p.dropout_eval(p.softmax(scores))
        context = p.reshape(p.transpose(p.matmul(probs, v), (0, 2, 1, 3)), (batch, seq, hidden))
        attended = p.dropout_eval(linear(context, "attention_output"))
        h = p.layer_norm(
            p.add(x, attended),
            w["attention_layernorm.weight"],
            w["attention_layernorm.bias"],
            BERT_EPSILON,
        )
        ffn = p.unary("pd_op.gelu", linear(h, "intermediate"), {"approximate": False})
        ffn = p.dropout_eval(linear(ffn, "output"))
        return p.layer_norm(
            p.add(h, ffn), w["output_layernorm.weight"], w["output_layernorm.bias"], BERT_EPSILON
        )

    draw = {
        "hidden_states": _normal(1.0),
        "attention_mask": _padding_mask,
        "attention_layernorm.weight": _normal(0.1, 1.0),
        "output_layernorm.weight": _normal(0.1, 1.0),
    }
    draw.update({t.name: _normal(0.1) for t in params if t.name.endswith(".bias")})
    draw.update({t.name: _weight for t in params if t.name not in draw})
    sizes = dict(batch=batch, seq=seq, hidden=hidden, heads=heads, intermediate=inter)
    return LayerKind("bert_layer", dtype, feeds, params, prologue, layer, sizes, draw)


def bert_layer(
    batch: int = 8,
    seq: int = 384,
    hidden: int = 768,
    heads: int = 12,
    intermediate: int | None = None,
    dtype: str = "float16",
) -> Block:
    """A BERT encoder layer (see the module's docstring); `intermediate` defaults to
    4 * hidden (BERT-base: 768, 12 heads, 3072)."""
    return write_layers(bert_kind(batch, seq, hidden, heads, intermediate, dtype))


BLOCKS: dict[str, Callable[..., Block]] = {"llama": llama_decoder, "bert": bert_layer}
"""The layers by their short name (`tools/bench_e2e.py --cases`)."""

KINDS: dict[str, Callable[..., LayerKind]] = {"llama": llama_kind, "bert": bert_kind}
"""Their parts, for programs of many layers (`tools/gen_big_model.py`)."""
