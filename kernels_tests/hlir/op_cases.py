"""A table of small programs, one per lowered op and configuration, with their feeds.

Each `OpCase` builds a program with `Builder` (data inputs, the op with its attributes;
mutable attributes as the `full` / `full_int_array` / `combine` operands Paddle
writes, which `fold_mutable_attributes` then folds) and deterministic feeds (seeded by
the case id) in ranges where the op is defined and the comparison meaningful. Shapes
cover broadcasting, odd extents (7, 33, 1000: no multiple of 4 or 32), 0-D and
one-element tensors, empty tensors; dtypes float32 and, where the op takes them,
float16, bfloat16, int32 and bool. Cases marked `compiled_only` are too big for the
Python interpreter and are meant for compiled targets.

    for case in CASES:
        program, feeds = case.build()          # feeds by data name; bfloat16 as uint16
        group = fused_group(program)           # after the passes, every op in one group
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cinn_py.hlir.group import Group
from cinn_py.hlir.grouping import make_group
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16, float_to_int
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.pir.value import Value

F32 = DataType.FLOAT32
F16 = DataType.FLOAT16
BF16 = DataType.BFLOAT16
F64 = DataType.FLOAT64
I32 = DataType.INT32
I64 = DataType.INT64
BOOL = DataType.BOOL
FLOATS = (F32, F16, BF16)

Shape = tuple[int, ...]


# ---- values ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Values:
    """How to draw an input: `uniform` in [low, high] (integers: inclusive ints),
    `halves` (multiples of 0.5, for rounding ties), `special` (uniform with NaN, +-inf
    and +-0 mixed in); bool inputs are fair coin flips. `nonzero` keeps magnitudes >= 0.5 (integers: >= 1)."""

    kind: str = "uniform"
    low: float = -3.0
    high: float = 3.0
    nonzero: bool = False

    def draw(self, rng: np.random.Generator, shape: Shape, dtype: DataType) -> np.ndarray:
        if dtype is BOOL:
            return np.asarray(rng.random(shape) < 0.5)
        if dtype.is_integer:
            ints = rng.integers(int(self.low), int(self.high) + 1, size=shape)
            if self.nonzero:
                ints = np.where(ints == 0, 1, ints)
            return ints.astype(dtype.numpy)
        if self.kind == "halves":
            values = rng.integers(int(2 * self.low), int(2 * self.high) + 1, size=shape) / 2
        else:
            values = rng.uniform(self.low, self.high, size=shape)
        if self.nonzero:
            magnitude = np.maximum(np.abs(values), 0.5)
            values = np.where(values < 0, -magnitude, magnitude)
        if self.kind == "special" and values.size:
            flat = values.reshape(-1)
            picks = rng.permutation(flat.size)[: min(flat.size, 5)]
            flat[picks] = [np.nan, np.inf, -np.inf, 0.0, -0.0][: len(picks)]
        return _to_storage(np.asarray(values), dtype)


def _bf16(values: np.ndarray) -> np.ndarray:
    return float32_to_bfloat16(values.astype(np.float32))


def _to_storage(values: np.ndarray, dtype: DataType) -> np.ndarray:
    if dtype is BF16:
        return _bf16(values).reshape(values.shape)
    with np.errstate(over="ignore"):  # edge values beyond float16 are its infinities
        return values.astype(dtype.numpy)


@dataclass(frozen=True)
class Fixed(Values):
    """Hand-picked values, row-major, exactly as many as the shape holds (floats may be
    NaN / inf; integers are taken as written, so int64 extremes survive)."""

    items: tuple[float, ...] = ()

    def draw(self, rng: np.random.Generator, shape: Shape, dtype: DataType) -> np.ndarray:
        if dtype.is_integer:
            return np.array(self.items, dtype=np.int64).astype(dtype.numpy).reshape(shape)
        return _to_storage(np.array(self.items, dtype=np.float64).reshape(shape), dtype)


NORMAL = Values()
SPECIAL = Values("special", -4.0, 4.0)
NONZERO = Values(low=-3.0, high=3.0, nonzero=True)
POSITIVE = Values(low=0.1, high=4.0)
INTS = Values(low=-20, high=20)
INTS_NONZERO = Values(low=-9, high=9, nonzero=True)
BOOLS = Values()


@dataclass(frozen=True)
class Input:
    shape: Shape
    dtype: DataType = F32
    values: Values = NORMAL


# ---- cases -------------------------------------------------------------------------------

Make = Callable[["Net", list[Value]], Any]


@dataclass(frozen=True)
class OpCase:
    """`make(net, inputs)` adds the ops under test on the `pd_op.data` values of
    `inputs` (named x0, x1, ...); the program's outputs are the results nothing reads."""

    id: str
    op: str
    inputs: tuple[Input, ...]
    make: Make = field(repr=False)
    compiled_only: bool = False
    gpu_alternative: Callable[[dict[str, np.ndarray]], list[np.ndarray]] | None = field(
        default=None, repr=False
    )
    """(feeds) -> outputs the GPU may give instead of the reference's, element by element:
    NVRTC contracts `a * b + c` into one FMA (--fmad=true, its default and what Paddle's
    own CUDA kernels get), one rounding where the reference rounds twice."""

    def build(self) -> tuple[Program, dict[str, np.ndarray]]:
        """A fresh program and its feeds (by data name), the same on every call."""
        program = Program()
        net = Net(program)
        data = [net.data(f"x{k}", i.shape, i.dtype) for k, i in enumerate(self.inputs)]
        self.make(net, data)
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        feeds = {f"x{k}": i.values.draw(rng, i.shape, i.dtype) for k, i in enumerate(self.inputs)}
        return program, feeds


class Net:
    """Builder shorthands for the ops and the constant operands Paddle writes."""

    def __init__(self, program: Program) -> None:
        self.b = Builder(program)

    def data(self, name: str, shape: Shape, dtype: DataType) -> Value:
        return self.b.op("pd_op.data", name=name, shape=list(shape), dtype=dtype)

    def op(self, name: str, /, *operands: Value | None, **attrs: Any) -> Any:
        return self.b.op(f"pd_op.{name}", *operands, **attrs)

    def ints(self, values: Sequence[int]) -> Value:
        return self.b.op("pd_op.full_int_array", value=list(values))

    def scalar(self, value: float, dtype: DataType = F32) -> Value:
        return self.b.op("pd_op.full", shape=[1], value=value, dtype=dtype)

    def vec(self, values: Sequence[Value]) -> Value:
        return self.b.create("builtin.combine", list(values)).result()

    def unpack(self, vector: Value) -> Any:
        return self.b.op("builtin.split", vector)

    def item(self, vector: Value, index: int) -> Value:
        return self.b.create("builtin.slice", [vector], {"index": index}).result()


def fused_group(program: Program, name: str = "group_0") -> Group:
    """Runs the default passes, then puts every op but `pd_op.data` into one FUSED group
    (with its reduce pattern, as `make_group` works it out)."""
    PassManager().run(program)
    ops = [op for op in program.block if op.name != "pd_op.data"]
    return make_group(name, ops, program)


CASES: list[OpCase] = []


def case(
    id: str,
    op: str,
    inputs: Sequence[Input],
    make: Make,
    big: bool = False,
    gpu_alternative: Callable[[dict[str, np.ndarray]], list[np.ndarray]] | None = None,
) -> None:
    if any(c.id == id for c in CASES):
        raise ValueError(f"duplicate case id {id}")
    CASES.append(OpCase(id, f"pd_op.{op}", tuple(inputs), make, big, gpu_alternative))


def _tag(dtype: DataType) -> str:
    return dtype.short


def _shape_tag(shape: Shape) -> str:
    return "x".join(map(str, shape)) if shape else "0d"


def call(op: str, **attrs: Any) -> Make:
    """`make` for an op applied to every input, with plain attributes."""
    return lambda net, xs: net.op(op, *xs, **attrs)


# ---- elementwise unary --------------------------------------------------------------------

UNARY_SHAPES: list[tuple[Shape, DataType, bool]] = [
    ((7, 33), F32, False),
    ((), F32, False),
    ((1,), F32, False),
    ((2, 3, 5), F16, False),
    ((7, 33), BF16, False),
    ((1000,), F32, False),
    ((33, 257), F32, True),
    ((3, 1000), F16, True),
]


def unary_cases(
    op: str, values: Values, *, ints: Values | None = None, attrs: dict | None = None, tag: str = ""
) -> None:
    attrs = attrs or {}
    name = f"{op}{tag}"
    for shape, dtype, big in UNARY_SHAPES:
        case(
            f"{name}-{_tag(dtype)}-{_shape_tag(shape)}",
            op,
            [Input(shape, dtype, values)],
            call(op, **attrs),
            big,
        )
    if ints is not None:
        case(f"{name}-i32-7x33", op, [Input((7, 33), I32, ints)], call(op, **attrs))


for _op, _values in [
    ("exp", Values(low=-4, high=4)),
    ("expm1", Values(low=-2, high=2)),
    ("log", Values(low=0.05, high=10)),
    ("log1p", Values(low=-0.9, high=5)),
    ("log2", Values(low=0.05, high=10)),
    ("sqrt", Values(low=0.0, high=10)),
    ("rsqrt", Values(low=0.05, high=10)),
    ("sin", Values(low=-6, high=6)),
    ("cos", Values(low=-6, high=6)),
    ("tan", Values(low=-1.3, high=1.3)),
    ("tanh", Values(low=-4, high=4)),
    ("erf", Values(low=-3, high=3)),
    ("sigmoid", Values(low=-8, high=8)),
    ("silu", Values(low=-8, high=8)),
    ("hardswish", Values(low=-6, high=6)),
]:
    unary_cases(_op, _values)

case("exp-i32-small", "exp", [Input((7, 5), I32, Values(low=-5, high=5))], call("exp"))
case("sqrt-f64-7x5", "sqrt", [Input((7, 5), F64, POSITIVE)], call("sqrt"))
case("sigmoid-special", "sigmoid", [Input((7, 5), F32, SPECIAL)], call("sigmoid"))
case("silu-special", "silu", [Input((7, 5), F32, SPECIAL)], call("silu"))
case("hardswish-special", "hardswish", [Input((7, 5), F32, SPECIAL)], call("hardswish"))

unary_cases("relu", SPECIAL, ints=INTS)
unary_cases("relu6", Values("special", -3, 9), ints=INTS)
unary_cases("abs", SPECIAL, ints=INTS)
unary_cases("sign", SPECIAL, ints=INTS)
unary_cases("floor", Values(low=-5, high=5), ints=INTS)
unary_cases("ceil", Values(low=-5, high=5), ints=INTS)
unary_cases("square", NORMAL, ints=INTS)
unary_cases("reciprocal", NONZERO, ints=INTS_NONZERO)
unary_cases("round", Values("halves", -5, 5), ints=INTS)
unary_cases("round", Values(low=-5, high=5), attrs={"decimals": 2}, tag="_d2")
unary_cases("round", Values(low=-500, high=500), attrs={"decimals": -1}, tag="_dm1")
unary_cases("gelu", Values(low=-4, high=4), attrs={"approximate": False})
unary_cases("gelu", Values(low=-4, high=4), attrs={"approximate": True}, tag="_tanh")
unary_cases("leaky_relu", SPECIAL, attrs={"negative_slope": 0.1})
case("leaky_relu-default", "leaky_relu", [Input((7, 5), F32)], call("leaky_relu"))
unary_cases("hardsigmoid", Values("special", -5, 5), attrs={"slope": 1 / 6, "offset": 0.5})
case("hardsigmoid-default", "hardsigmoid", [Input((7, 5), F32)], call("hardsigmoid"))
unary_cases("pow", POSITIVE, attrs={"y": 2.5})
unary_cases("pow", NORMAL, ints=Values(low=-6, high=6), attrs={"y": 3.0}, tag="_3")
case("pow_special-f32", "pow", [Input((7, 5), F32, SPECIAL)], call("pow", y=-1.0))
case("pow_special3-f32", "pow", [Input((7, 5), F32, SPECIAL)], call("pow", y=3.0))
case("pow_zero-i32", "pow", [Input((7, 5), I32, INTS)], call("pow", y=0.0))
case("pow_neg-i32", "pow", [Input((7, 5), I32, INTS_NONZERO)], call("pow", y=-1.0))

for _dtype in (F32, F16, BF16, I32):
    for _after in (True, False):
        _values = INTS if _dtype is I32 else NORMAL
        case(
            f"scale-{_tag(_dtype)}-{'after' if _after else 'before'}",
            "scale",
            [Input((7, 33), _dtype, _values)],
            lambda net, xs, after=_after: net.op(
                "scale", xs[0], net.scalar(2.5), bias=1.5, bias_after_scale=after
            ),
        )
case(
    "scale-f32-0d",
    "scale",
    [Input((), F32)],
    lambda net, xs: net.op("scale", xs[0], net.scalar(-3.0)),
)

for _dtype, _values, _shape in [
    (F32, SPECIAL, (7, 33)),
    (F16, SPECIAL, (2, 3, 5)),
    (BF16, NORMAL, (7, 33)),
    (I32, INTS, (7, 33)),
    (F32, NORMAL, ()),
]:
    case(
        f"clip-{_tag(_dtype)}-{_shape_tag(_shape)}",
        "clip",
        [Input(_shape, _dtype, _values)],
        lambda net, xs: net.op("clip", xs[0], net.scalar(-1.5), net.scalar(2.0)),
    )

for _src, _dst, _values in [
    (F32, F16, Values(low=-70000, high=70000)),
    (F32, BF16, NORMAL),
    (F32, I32, Values("special", -100, 100)),
    (I32, F32, INTS),
    (F32, BOOL, SPECIAL),
    (BOOL, F32, BOOLS),
    (BOOL, I32, BOOLS),
    (F16, BF16, NORMAL),
    (BF16, F16, NORMAL),
    (BF16, F32, NORMAL),
    (F16, I32, Values(low=-100, high=100)),
    (I32, BOOL, INTS),
    (I32, I64, INTS),
    (I64, F16, Values(low=-3000, high=3000)),
    (F32, F64, NORMAL),
    (F64, F32, NORMAL),
]:
    case(
        f"cast-{_tag(_src)}-{_tag(_dst)}",
        "cast",
        [Input((7, 33), _src, _values)],
        call("cast", dtype=_dst),
    )
case("cast-f32-f16-0d", "cast", [Input((), F32)], call("cast", dtype=F16))

for _op in ("isnan", "isinf", "isfinite"):
    for _dtype, _values in [(F32, SPECIAL), (F16, SPECIAL), (BF16, SPECIAL), (I32, INTS)]:
        case(f"{_op}-{_tag(_dtype)}", _op, [Input((7, 33), _dtype, _values)], call(_op))
    case(f"{_op}-f32-0d", _op, [Input((), F32, SPECIAL)], call(_op))

for _dtype, _values in [(BOOL, BOOLS), (F32, SPECIAL), (I32, Values(low=-2, high=2))]:
    case(
        f"logical_not-{_tag(_dtype)}",
        "logical_not",
        [Input((7, 33), _dtype, _values)],
        call("logical_not"),
    )


# ---- elementwise binary ----------------------------------------------------------------------

BINARY_SHAPES: list[tuple[str, Shape, Shape, bool]] = [
    ("same", (7, 33), (7, 33), False),
    ("bcast", (7, 1), (1, 33), False),
    ("row", (33,), (7, 33), False),
    ("0d_x", (), (7, 33), False),
    ("3d", (5, 1, 3), (4, 1), False),
    ("one", (1,), (1,), False),
    ("0d", (), (), False),
    ("col_big", (64, 1), (64, 1000), True),
]


def binary_cases(
    op: str,
    x: Values,
    y: Values,
    *,
    ints: tuple[Values, Values] | None = None,
    dtypes: Sequence[DataType] = (F16, BF16),
) -> None:
    for tag, xs, ys, big in BINARY_SHAPES:
        case(f"{op}-f32-{tag}", op, [Input(xs, F32, x), Input(ys, F32, y)], call(op), big)
    for dtype in dtypes:
        case(
            f"{op}-{_tag(dtype)}-bcast",
            op,
            [Input((7, 1), dtype, x), Input((7, 33), dtype, y)],
            call(op),
        )
    if ints is not None:
        case(
            f"{op}-i32-bcast",
            op,
            [Input((7, 33), I32, ints[0]), Input((33,), I32, ints[1])],
            call(op),
        )


binary_cases("add", NORMAL, NORMAL, ints=(INTS, INTS))
binary_cases("subtract", NORMAL, NORMAL, ints=(INTS, INTS))
binary_cases("multiply", NORMAL, NORMAL, ints=(INTS, INTS))
binary_cases("divide", NORMAL, NONZERO, ints=(INTS, INTS_NONZERO))
binary_cases("floor_divide", Values(low=-10, high=10), NONZERO, ints=(INTS, INTS_NONZERO))
binary_cases("remainder", Values(low=-10, high=10), NONZERO, ints=(INTS, INTS_NONZERO))
binary_cases("maximum", SPECIAL, SPECIAL, ints=(INTS, INTS))
binary_cases("minimum", SPECIAL, SPECIAL, ints=(INTS, INTS))
binary_cases(
    "elementwise_pow",
    POSITIVE,
    Values(low=-2, high=2),
    ints=(INTS_NONZERO, Values(low=-2, high=4)),
)
case(
    "elementwise_pow-f32-negbase",
    "elementwise_pow",
    [Input((7, 33), F32, SPECIAL), Input((7, 33), F32, Values("halves", -3, 3))],
    call("elementwise_pow"),
)
case(
    "add-i32-wrap",
    "add",
    [Input((7, 5), I32, Values(low=2**30, high=2**31 - 1))] * 2,
    call("add"),
)
case(
    "floor_divide-f32-ties",
    "floor_divide",
    [
        Input((7, 33), F32, Values("halves", -5, 5)),
        Input((7, 33), F32, Values("halves", -2, 2, True)),
    ],
    call("floor_divide"),
)
case(
    "floor_divide-f32-inexact",
    "floor_divide",
    [Input((3, 5), F32, Values(low=1.0, high=1.0)), Input((3, 5), F32, Values(low=0.1, high=0.1))],
    call("floor_divide"),
)
case(
    "remainder-f32-special",
    "remainder",
    [Input((7, 5), F32, SPECIAL), Input((7, 5), F32, NONZERO)],
    call("remainder"),
)

for _op in ("equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal"):
    for tag, xs, ys, big in BINARY_SHAPES:
        if tag in ("same", "bcast", "0d", "col_big"):
            case(
                f"{_op}-f32-{tag}",
                _op,
                [Input(xs, F32, SPECIAL), Input(ys, F32, SPECIAL)],
                call(_op),
                big,
            )
    case(
        f"{_op}-halves",
        _op,
        [
            Input((7, 33), F32, Values("halves", -2, 2)),
            Input((7, 33), F32, Values("halves", -2, 2)),
        ],
        call(_op),
    )
    case(
        f"{_op}-i32",
        _op,
        [Input((7, 33), I32, Values(low=-3, high=3)), Input((33,), I32, Values(low=-3, high=3))],
        call(_op),
    )
    case(f"{_op}-bool", _op, [Input((7, 33), BOOL), Input((7, 1), BOOL)], call(_op))
    case(
        f"{_op}-f16",
        _op,
        [
            Input((7, 33), F16, Values("halves", -2, 2)),
            Input((7, 33), F16, Values("halves", -2, 2)),
        ],
        call(_op),
    )
    case(
        f"{_op}-bf16",
        _op,
        [
            Input((7, 33), BF16, Values("halves", -2, 2)),
            Input((33,), BF16, Values("halves", -2, 2)),
        ],
        call(_op),
    )
    case(
        f"{_op}-i32-f32",
        _op,
        [Input((7, 33), I32, Values(low=-3, high=3)), Input((7, 33), F32, Values("halves", -3, 3))],
        call(_op),
    )

for _op in ("logical_and", "logical_or", "logical_xor"):
    case(f"{_op}-bool-bcast", _op, [Input((7, 33), BOOL), Input((7, 1), BOOL)], call(_op))
    case(f"{_op}-bool-0d", _op, [Input((), BOOL), Input((), BOOL)], call(_op))
    case(
        f"{_op}-i32",
        _op,
        [Input((7, 33), I32, Values(low=-2, high=2)), Input((7, 33), I32, Values(low=-2, high=2))],
        call(_op),
    )
    case(f"{_op}-f32", _op, [Input((7, 33), F32, SPECIAL), Input((33,), F32, SPECIAL)], call(_op))
    case(
        f"{_op}-big",
        _op,
        [Input((33, 257), BOOL), Input((257,), BOOL)],
        call(_op),
        big=True,
    )

for _dtype, _values in [(F32, NORMAL), (F16, NORMAL), (BF16, NORMAL), (I32, INTS), (BOOL, BOOLS)]:
    case(
        f"where-{_tag(_dtype)}",
        "where",
        [Input((7, 33), BOOL), Input((7, 33), _dtype, _values), Input((7, 33), _dtype, _values)],
        call("where"),
    )
case(
    "where-f32cond",
    "where",
    [Input((7, 33), F32, SPECIAL), Input((7, 33), F32), Input((7, 33), F32)],
    call("where"),
)
case("where-0d", "where", [Input((), BOOL), Input(()), Input(())], call("where"))


# ---- creation ---------------------------------------------------------------------------


def _full(shape: Shape, value: float, dtype: DataType) -> Make:
    return lambda net, xs: net.op("full", shape=list(shape), value=value, dtype=dtype)


for _dtype, _value in [(F32, 2.5), (I32, 2.7), (I32, -2.7), (BOOL, 3.0), (F16, 0.1), (BF16, 0.1)]:
    case(f"full-{_tag(_dtype)}-{_value}", "full", [], _full((7, 33), _value, _dtype))
case("full-f32-0d", "full", [], _full((), -1.25, F32))
case("full-f32-empty", "full", [], _full((0, 3), 1.0, F32))
case(
    "full-into-add",
    "full",
    [Input((7, 33))],
    lambda net, xs: net.op("add", xs[0], net.op("full", shape=[7, 33], value=0.5, dtype=F32)),
)
for _dtype, _value in [(F32, 3.0), (I32, -1.5), (BOOL, 1.0), (F16, 1 / 3)]:
    case(
        f"full_like-{_tag(_dtype)}",
        "full_like",
        [Input((7, 33))],
        lambda net, xs, d=_dtype, v=_value: net.op("full_like", xs[0], net.scalar(v), dtype=d),
    )
for _dtype in (I64, I32):
    case(
        f"full_int_array-{_tag(_dtype)}",
        "full_int_array",
        [],
        lambda net, xs, d=_dtype: net.op("full_int_array", value=[3, -1, 7, 0, 2**20], dtype=d),
    )
for _dtype, _values in [(F32, NORMAL), (BOOL, BOOLS), (BF16, NORMAL), (I32, INTS)]:
    case(f"assign-{_tag(_dtype)}", "assign", [Input((7, 33), _dtype, _values)], call("assign"))
case("assign-0d", "assign", [Input(())], call("assign"))


# ---- manipulation ------------------------------------------------------------------------


def _with_ints(op: str, values: Sequence[int], **attrs: Any) -> Make:
    return lambda net, xs: net.op(op, xs[0], net.ints(values), **attrs)


for _id, _shape, _target, _dtype in [
    ("2d", (7, 33), [33, 7], F32),
    ("infer", (4, 6), [2, -1, 3], F32),
    ("copy0", (4, 6), [0, 2, 3], F16),
    ("flat", (2, 3, 5), [-1], BF16),
    ("0d_to_1", (), [1], F32),
    ("1_to_0d", (1,), [], F32),
    ("ones", (7, 1, 33), [7, 33, 1], I32),
    ("bool", (6, 5), [3, 10], BOOL),
    ("big", (33, 1000), [1000, 33], F32),
]:
    case(
        f"reshape-{_id}",
        "reshape",
        [Input(_shape, _dtype, INTS if _dtype is I32 else NORMAL)],
        _with_ints("reshape", _target),
        _id == "big",
    )

for _id, _shape, _axes in [
    ("mid", (7, 1, 33), [1]),
    ("all", (1, 33, 1), []),
    ("neg", (7, 33, 1), [-1]),
    ("keep", (7, 33), [0]),
    ("0d", (), []),
]:
    case(f"squeeze-{_id}", "squeeze", [Input(_shape)], _with_ints("squeeze", _axes))

for _id, _shape, _axes in [("ends", (7, 33), [0, -1]), ("0d", (), [0]), ("mid", (7, 33), [1, 1])]:
    case(f"unsqueeze-{_id}", "unsqueeze", [Input(_shape, F16)], _with_ints("unsqueeze", _axes))

for _id, _shape, _start, _stop in [
    ("mid", (2, 3, 5, 7), 1, 2),
    ("all", (2, 3, 5), 0, -1),
    ("0d", (), 0, -1),
    ("one", (7, 33), 1, 1),
]:
    case(
        f"flatten-{_id}",
        "flatten",
        [Input(_shape, BF16)],
        call("flatten", start_axis=_start, stop_axis=_stop),
    )

for _id, _shape, _perm, _dtype in [
    ("2d", (7, 33), [1, 0], F32),
    ("3d", (2, 3, 5), [2, 0, 1], F16),
    ("neg", (2, 3, 5), [-1, 1, 0], I32),
    ("bool", (7, 33), [1, 0], BOOL),
    ("ones", (1, 7, 1), [2, 1, 0], F32),
    ("big", (33, 1000), [1, 0], F32),
]:
    case(
        f"transpose-{_id}",
        "transpose",
        [Input(_shape, _dtype, INTS if _dtype is I32 else NORMAL)],
        call("transpose", perm=_perm),
        _id == "big",
    )

for _id, _shape, _target, _dtype in [
    ("col", (7, 1), [7, 33], F32),
    ("rank", (33,), [5, 33], BF16),
    ("0d", (), [3, 4], F32),
    ("keep", (7, 1), [-1, 5], I32),
    ("bool", (1, 33), [7, 33], BOOL),
    ("big", (64, 1), [64, 1000], F32),
]:
    case(
        f"expand-{_id}",
        "expand",
        [Input(_shape, _dtype, INTS if _dtype is I32 else NORMAL)],
        _with_ints("expand", _target),
        _id == "big",
    )

for _id, _shape, _repeats, _dtype in [
    ("2d", (7, 3), [2, 3], F32),
    ("rank", (3,), [2, 1, 2], F16),
    ("ones", (1, 5), [4, 1], F32),
    ("0d", (), [3], I32),
]:
    case(
        f"tile-{_id}",
        "tile",
        [Input(_shape, _dtype, INTS if _dtype is I32 else NORMAL)],
        _with_ints("tile", _repeats),
    )


def _concat(axis: int) -> Make:
    return lambda net, xs: net.op("concat", net.vec(xs), net.scalar(axis, I32))


for _id, _shapes, _axis, _dtype in [
    ("cols", [(7, 3), (7, 5), (7, 1)], 1, F32),
    ("rows", [(2, 3), (4, 3)], 0, F16),
    ("neg", [(2, 3, 5), (2, 3, 2)], -1, BF16),
    ("empty", [(7, 0), (7, 3)], 1, F32),
    ("single", [(7, 33)], 0, F32),
    ("bool", [(3, 4), (3, 4)], 0, BOOL),
]:
    case(
        f"concat-{_id}",
        "concat",
        [Input(s, _dtype, BOOLS if _dtype is BOOL else NORMAL) for s in _shapes],
        _concat(_axis),
    )

for _id, _shape, _count, _axis in [
    ("first", (7, 33), 3, 0),
    ("last", (4, 5), 2, -1),
    ("0d", (), 3, 0),
]:
    case(
        f"stack-{_id}",
        "stack",
        [Input(_shape)] * _count,
        lambda net, xs, a=_axis: net.op("stack", net.vec(xs), axis=a),
    )


def _split(sections: list[int], axis: int) -> Make:
    def make(net: Net, xs: list[Value]) -> Any:
        parts = net.op("split", xs[0], net.ints(sections), net.scalar(axis, I32))
        return net.unpack(parts)

    return make


case("split-cols", "split", [Input((7, 33))], _split([10, 20, 3], 1))
case("split-rest", "split", [Input((7, 33), F16)], _split([-1, 2], 0))


def _split_with_num(num: int, axis: int) -> Make:
    def make(net: Net, xs: list[Value]) -> Any:
        return net.unpack(net.op("split_with_num", xs[0], net.scalar(axis, I32), num=num))

    return make


case("split_with_num-rows", "split_with_num", [Input((6, 33), BF16)], _split_with_num(3, 0))
case("split_with_num-neg", "split_with_num", [Input((7, 33), I32, INTS)], _split_with_num(3, -1))


def _slice(axes: list[int], starts: list[int], ends: list[int], decrease: list[int]) -> Make:
    def make(net: Net, xs: list[Value]) -> Any:
        return net.op(
            "slice",
            xs[0],
            net.ints(starts),
            net.ints(ends),
            axes=axes,
            infer_flags=[1] * len(axes),
            decrease_axis=decrease,
        )

    return make


for _id, _args in [
    ("cols", ([1], [2], [30], [])),
    ("clamp", ([0, 1], [-3, 0], [100, -1], [])),
    ("decrease", ([0], [2], [3], [0])),
    ("empty", ([1], [5], [2], [])),
    ("to_0d", ([0, 1], [1, 4], [2, 5], [0, 1])),
]:
    case(f"slice-{_id}", "slice", [Input((7, 33))], _slice(*_args))


def _strided(axes: list[int], starts: list[int], ends: list[int], strides: list[int]) -> Make:
    def make(net: Net, xs: list[Value]) -> Any:
        return net.op(
            "strided_slice",
            xs[0],
            net.ints(starts),
            net.ints(ends),
            net.ints(strides),
            axes=axes,
        )

    return make


for _id, _args in [
    ("step", ([1], [1], [30], [3])),
    ("back", ([1], [30], [2], [-4])),
    ("both", ([0, 1], [-1, 0], [-8, 33], [-2, 5])),
]:
    case(f"strided_slice-{_id}", "strided_slice", [Input((7, 33), F16)], _strided(*_args))


def _gather(axis: int) -> Make:
    return lambda net, xs: net.op("gather", xs[0], xs[1], net.scalar(axis, I32))


for _id, _x, _index, _axis in [
    ("rows", Input((7, 33)), Input((5,), I32, Values(low=-7, high=6)), 0),
    ("cols", Input((7, 33), BF16), Input((4,), I64, Values(low=0, high=32)), 1),
    ("0d", Input((7, 33)), Input((), I64, Values(low=0, high=6)), 0),
    ("0d_out", Input((7,), I32, INTS), Input((), I32, Values(low=-7, high=6)), 0),
]:
    case(f"gather-{_id}", "gather", [_x, _index], _gather(_axis))

for _id, _padding in [("plain", -1), ("padding", 2)]:
    case(
        f"embedding-{_id}",
        "embedding",
        [Input((3, 5), I64, Values(low=0, high=9)), Input((10, 8))],
        call("embedding", padding_idx=_padding),
    )


# ---- several ops and the Tensor[] glue in one group -------------------------------------


def _chain(net: Net, xs: list[Value]) -> Any:
    return net.op("relu", net.op("add", net.op("exp", xs[0]), xs[1]))


case("fused-exp-add-relu", "add", [Input((7, 33)), Input((33,))], _chain)
case(
    "fused-concat-computed",
    "concat",
    [Input((7, 3)), Input((7, 5))],
    lambda net, xs: net.op(
        "concat",
        net.vec([net.op("exp", xs[0]), net.op("scale", xs[1], net.scalar(2.0))]),
        net.scalar(1, I32),
    ),
)


def _split_add(net: Net, xs: list[Value]) -> Any:
    first, second = net.unpack(net.op("split", xs[0], net.ints([4, 4]), net.scalar(1, I32)))
    return net.op("add", first, second)


case("fused-split-add", "split", [Input((7, 8))], _split_add)
case(
    "fused-slice-item",
    "split_with_num",
    [Input((6, 5), F16)],
    lambda net, xs: net.op(
        "relu", net.item(net.op("split_with_num", xs[0], net.scalar(0, I32), num=3), 1)
    ),
)
case(
    "fused-reshape-transpose-add",
    "reshape",
    [Input((4, 6)), Input((3, 8))],
    lambda net, xs: net.op(
        "add", net.op("transpose", net.op("reshape", xs[0], net.ints([8, 3])), perm=[1, 0]), xs[1]
    ),
)
case(
    "fused-f16-chain",
    "cast",
    [Input((7, 33), F16), Input((7, 1), F16)],
    lambda net, xs: net.op("cast", net.op("exp", net.op("subtract", xs[0], xs[1])), dtype=F32),
)
case(
    "fused-two-outputs",
    "multiply",
    [Input((7, 33))],
    lambda net, xs: [
        net.op("sigmoid", net.op("multiply", xs[0], xs[0])),
        net.op("tanh", net.op("multiply", xs[0], xs[0])),
    ],
)
case(
    "fused-gelu-bias",
    "gelu",
    [Input((7, 33), BF16), Input((33,), BF16)],
    lambda net, xs: net.op("gelu", net.op("add", xs[0], xs[1]), approximate=True),
)
case(
    "fused-where-compare",
    "where",
    [Input((7, 33)), Input((7, 33))],
    lambda net, xs: net.op("where", net.op("greater_than", xs[0], xs[1]), xs[0], xs[1]),
)


# ---- reductions --------------------------------------------------------------------------


def _reduce(op: str, axes: Sequence[int], keepdim: bool, **attrs: Any) -> Make:
    """sum/mean/max/min/prod take their axes as a `full_int_array` operand, all/any as an
    attribute."""
    if op in ("all", "any"):
        return lambda net, xs: net.op(op, xs[0], axis=list(axes), keepdim=keepdim, **attrs)
    if op == "sum":
        attrs = {"dtype": DataType.UNDEFINED, **attrs}
    return lambda net, xs: net.op(op, xs[0], net.ints(axes), keepdim=keepdim, **attrs)


REDUCE_SHAPES: list[tuple[Shape, tuple[int, ...], bool]] = [
    ((7, 33), (-1,), False),
    ((7, 33), (0,), False),
    ((7, 33), (), False),
    ((2, 3, 5), (1,), False),
    ((2, 3, 5), (0, 2), False),
    ((2, 3, 5), (-1, 0, 1), False),
    ((1, 33), (0,), False),
    ((7, 1), (1,), False),
    ((), (), False),
    ((1000,), (0,), False),
    ((33, 257), (1,), True),
    ((64, 100), (0,), True),
]

REDUCE_VALUES: dict[str, tuple[Values, Values]] = {
    "sum": (NORMAL, INTS),
    "mean": (NORMAL, INTS),
    "max": (SPECIAL, INTS),
    "min": (SPECIAL, INTS),
    "prod": (Values(low=0.7, high=1.3), Values(low=-2, high=2)),
    "all": (SPECIAL, Values(low=0, high=3)),
    "any": (Values(low=0, high=0.1), Values(low=-1, high=1)),
}


def _axes_tag(axes: Sequence[int]) -> str:
    return "all" if not axes else "_".join(str(a).replace("-", "m") for a in axes)


for _op, (_floats, _ints) in REDUCE_VALUES.items():
    _first = BOOL if _op in ("all", "any") else F32
    _first_values = BOOLS if _first is BOOL else _floats
    for _shape, _axes, _big in REDUCE_SHAPES:
        for _keep in (False, True):
            if _keep and (_big or len(_shape) < 2):
                continue
            case(
                f"{_op}-{_tag(_first)}-{_shape_tag(_shape)}-{_axes_tag(_axes)}"
                + ("-keep" if _keep else ""),
                _op,
                [Input(_shape, _first, _first_values)],
                _reduce(_op, _axes, _keep),
                _big,
            )
    _dtypes = [(F16, _floats), (BF16, _floats), (I32, _ints)]
    if _op in ("sum", "prod", "all", "any"):
        _dtypes.append((BOOL, BOOLS) if _first is not BOOL else (F32, _floats))
    for _dtype, _values in _dtypes:
        for _shape, _axes, _keep in [((7, 33), (-1,), False), ((2, 3, 5), (0, 2), True)]:
            case(
                f"{_op}-{_tag(_dtype)}-{_shape_tag(_shape)}-{_axes_tag(_axes)}"
                + ("-keep" if _keep else ""),
                _op,
                [Input(_shape, _dtype, _values)],
                _reduce(_op, _axes, _keep),
            )
    case(
        f"{_op}-{_tag(_first)}-3x1000-all-keep",
        _op,
        [Input((3, 1000), _first, _first_values)],
        _reduce(_op, (), True),
        True,
    )

case("sum-f32-to-f64", "sum", [Input((7, 33))], _reduce("sum", (1,), False, dtype=F64))
case("sum-i32-to-i32", "sum", [Input((7, 33), I32, INTS)], _reduce("sum", (0,), False, dtype=I32))
case("sum-f32-empty", "sum", [Input((0, 5))], _reduce("sum", (0,), False))
case("mean-f32-empty", "mean", [Input((0, 5))], _reduce("mean", (0,), False))
case("max-f32-nan-rows", "max", [Input((7, 5), F32, SPECIAL)], _reduce("max", (1,), False))
case("min-f32-nan-cols", "min", [Input((7, 5), F32, SPECIAL)], _reduce("min", (0,), False))
case(
    "prod-f32-reduce_all",
    "prod",
    [Input((3, 4), F32, Values(low=0.7, high=1.3))],
    _reduce("prod", (0,), False, reduce_all=True),
)
case(
    "fused-exp-sum",
    "sum",
    [Input((7, 33)), Input((33,))],
    lambda net, xs: net.op(
        "sum", net.op("exp", net.op("subtract", xs[0], xs[1])), net.ints([1]), keepdim=False
    ),
)
case(
    "fused-softmax",
    "max",
    [Input((5, 9))],
    lambda net, xs: net.op(
        "divide",
        net.op("exp", net.op("subtract", xs[0], net.op("max", xs[0], net.ints([1]), keepdim=True))),
        net.op(
            "sum",
            net.op(
                "exp",
                net.op("subtract", xs[0], net.op("max", xs[0], net.ints([1]), keepdim=True)),
            ),
            net.ints([1]),
            keepdim=True,
        ),
    ),
)


# ---- argmax / argmin -----------------------------------------------------------------------


def _arg(op: str, axis: int, flatten: bool, keepdims: bool, dtype: DataType) -> Make:
    """argmax / argmin with the `axis` scalar operand Paddle writes (a `full`, folded)."""
    return lambda net, xs: net.op(
        op, xs[0], net.scalar(axis, I64), flatten=flatten, keepdims=keepdims, dtype=dtype
    )


# (shape, axis, flatten, keepdims): every axis (negative too), flatten, keepdims, 0-D,
# reduced extents 1 / 7 / 33 / 257, rows and columns.
ARG_CONFIGS: list[tuple[Shape, int, bool, bool]] = [
    ((7, 33), -1, False, False),
    ((7, 33), 1, False, True),
    ((7, 33), 0, False, False),
    ((7, 33), -2, False, True),
    ((2, 3, 5), 0, False, False),
    ((2, 3, 5), 1, False, True),
    ((2, 3, 5), -1, False, False),
    ((2, 3, 5), 0, True, False),
    ((2, 3, 5), 0, True, True),
    ((1, 33), 0, False, False),
    ((7, 1), 1, False, True),
    ((1,), 0, False, False),
    ((), 0, False, False),
    ((), -1, False, False),
    ((), 0, True, True),
    ((33, 257), 1, False, False),
    ((257, 7), 0, False, True),
    ((3, 257), 0, True, False),
    ((), -1, False, True),  # keepdims on 0-D without flatten: [1], as Paddle's infer-meta
]
ARG_SMALL = [0, 2, 5, 7, 8, 10, 12, 15]
"""The configs (indices into ARG_CONFIGS) every other input dtype runs."""

ARG_VALUES: dict[DataType, Values] = {
    F32: SPECIAL,  # NaN, +-inf, +-0 mixed in
    F16: Values("halves", -1.0, 1.0),  # five values: many ties
    BF16: SPECIAL,
    I32: Values(low=-2, high=2),  # ties
    I64: INTS,
}


def _arg_tag(axis: int, flatten: bool, keepdims: bool) -> str:
    where = "flat" if flatten else "a" + str(axis).replace("-", "m")
    return where + ("-keep" if keepdims else "")


for _op in ("argmax", "argmin"):
    for _dtype, _values in ARG_VALUES.items():
        _configs = ARG_CONFIGS if _dtype is F32 else [ARG_CONFIGS[k] for k in ARG_SMALL]
        for _k, (_shape, _axis, _flatten, _keep) in enumerate(_configs):
            _out = I64 if _k % 2 == 0 else I32
            case(
                f"{_op}-{_tag(_dtype)}-{_shape_tag(_shape)}-{_arg_tag(_axis, _flatten, _keep)}"
                + f"-{_tag(_out)}",
                _op,
                [Input(_shape, _dtype, _values)],
                _arg(_op, _axis, _flatten, _keep, _out),
            )

NAN, INF = float("nan"), float("inf")
ARG_FLOAT_ROWS = Fixed(
    items=(
        *(NAN, NAN, NAN, NAN),  # all NaN: position 0 for both
        *(NAN, -INF, -INF, 1.0),  # NaN counts as -inf (argmax) / +inf (argmin)
        *(NAN, -INF, NAN, -INF),  # argmax: every value is -inf -> 0
        *(2.0, 2.0, 1.0, 2.0),  # ties: the first
        *(INF, NAN, INF, 0.0),
        *(-0.0, 0.0, -0.0, 0.0),  # -0 == +0: the first
        *(1.0, NAN, 3.0, 3.0),
        *(NAN, INF, NAN, INF),  # argmin: every value is +inf -> 0
    )
)
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1
ARG_I32_ROWS = Fixed(
    items=(
        *(_I32_MIN, _I32_MIN, _I32_MIN),  # argmax starts at the lowest value: position 0
        *(_I32_MAX, _I32_MAX, _I32_MIN),  # argmin starts at the highest: the first MAX
        *(_I32_MIN, 5, 5),
        *(-1, -1, -1),
    )
)
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1
ARG_I64_ROWS = Fixed(items=(_I64_MIN, _I64_MAX, _I64_MIN, 7, _I64_MAX, _I64_MAX))

for _op in ("argmax", "argmin"):
    for _dtype in FLOATS:
        for _axis, _flatten in ((1, False), (0, False), (0, True)):
            case(
                f"{_op}-{_tag(_dtype)}-nan-ties-{_arg_tag(_axis, _flatten, False)}",
                _op,
                [Input((8, 4), _dtype, ARG_FLOAT_ROWS)],
                _arg(_op, _axis, _flatten, False, I64),
            )
    for _axis, _flatten in ((-1, False), (0, False), (0, True)):
        case(
            f"{_op}-i32-extremes-{_arg_tag(_axis, _flatten, False)}",
            _op,
            [Input((4, 3), I32, ARG_I32_ROWS)],
            _arg(_op, _axis, _flatten, False, I32),
        )
    case(
        f"{_op}-i64-extremes",
        _op,
        [Input((2, 3), I64, ARG_I64_ROWS)],
        _arg(_op, 1, False, True, I64),
    )
case(
    "argmax-fused-exp-sub",
    "argmax",
    [Input((7, 33)), Input((33,))],
    lambda net, xs: net.op(
        "argmax",
        net.op("exp", net.op("subtract", xs[0], xs[1])),
        net.scalar(1, I64),
        flatten=False,
        keepdims=False,
        dtype=I64,
    ),
)


# ---- defined numeric semantics: casts, integer overflow, division by zero ------------------
# C leaves these undefined; the IR, the reference and generated code define them the same
# way on every target (`reference_ops/elementwise.py`): float -> int truncates, saturates,
# NaN -> 0; integer arithmetic wraps; x / 0 = x % 0 = 0, INT_MIN / -1 = INT_MIN.

I8, U8, I16 = DataType.INT8, DataType.UINT8, DataType.INT16
CAST_EDGES = Fixed(
    items=(
        *(NAN, INF, -INF, 0.0, -0.0, 0.9, -0.9, -2.5),
        *(127.5, 128.0, -128.9, -129.0, 255.5, 256.0, -1.0, 300.0),
        *(32767.9, 32768.0, -32769.0, 65504.0, 2147483520.0, 2147483648.0, -2147483904.0, 3e9),
        *(-3e9, 9.2e18, 9.3e18, -9.3e18, 1e30, -1e30, 1e38, -100.0),
    )
)
"""NaN, infinities and the edges of every integer type's range (4 x 8)."""


def _contracted_scale_cast(src: DataType, dst: DataType) -> Callable:
    """cast(x * -1.5 + 0.5) with the scale as one float32 FMA (see OpCase.gpu_alternative):
    an H200 gave 4500000256 for x = -3e9 where the reference's two roundings give
    4499999744 (4.5e9 is a tie between two float32s; 4.5e9 + 0.5 is not). float64 holds
    x * -1.5 + 0.5 exactly for every edge value the cast does not saturate."""

    def alternative(feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        x = feeds["x0"]
        x = bfloat16_to_float32(x) if src is BF16 else x.astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            y = (x.astype(np.float64) * -1.5 + 0.5).astype(np.float32)
            if src is F16:  # the scale's result is stored in its dtype before the cast
                y = y.astype(np.float16).astype(np.float32)
            elif src is BF16:
                y = bfloat16_to_float32(float32_to_bfloat16(y))
        return [float_to_int(y, dst)]

    return alternative


for _src in (F32, F16, BF16, F64):
    for _dst in (I8, U8, I16, I32, I64, BOOL):
        case(
            f"cast-edges-{_tag(_src)}-{_tag(_dst)}",
            "cast",
            [Input((4, 8), _src, CAST_EDGES)],
            call("cast", dtype=_dst),
        )
    for _dst in (I8, U8, I32, I64):
        case(
            f"cast-edges-fused-{_tag(_src)}-{_tag(_dst)}",
            "cast",
            [Input((4, 8), _src, CAST_EDGES)],
            lambda net, xs, d=_dst: net.op(
                "cast", net.op("scale", xs[0], net.scalar(-1.5), bias=0.5), dtype=d
            ),
            gpu_alternative=None if _src is F64 else _contracted_scale_cast(_src, _dst),
        )

_I32_EDGES = Fixed(
    items=(
        *(-1073741829, 46341, -46341, 65536, _I32_MAX, _I32_MIN, 3, 0),
        *(-1, 1, 2**30, -(2**30), 123456789, -987654321, _I32_MAX - 1, _I32_MIN + 1),
    )
)
"""int32 values whose squares, sums and products wrap (2 x 8)."""
_I64_EDGES = Fixed(
    items=(
        *(3037000500, -3037000500, 2**32, 2**62, _I64_MAX, _I64_MIN, 3, 0),
        *(-1, 1, 2**40 + 7, -(2**61), 1234567890123, -98765432109876, _I64_MAX - 1, _I64_MIN + 1),
    )
)
for _dtype, _edges in ((I32, _I32_EDGES), (I64, _I64_EDGES)):
    _t = _tag(_dtype)
    _x = [Input((2, 8), _dtype, _edges)]
    case(
        f"sign-square-{_t}",
        "sign",
        _x,
        lambda net, xs: net.op("sign", net.op("multiply", *xs, *xs)),
    )
    case(f"abs-edges-{_t}", "abs", _x, call("abs"))
    case(f"square-edges-{_t}", "square", _x, call("square"))
    case(
        f"abs-fused-negate-{_t}",
        "abs",
        _x,
        lambda net, xs: net.op(
            "abs", net.op("subtract", net.op("scale", xs[0], net.scalar(0.0)), xs[0])
        ),
    )
    case(
        f"scale-wrap-{_t}",
        "scale",
        _x,
        lambda net, xs: net.op("scale", xs[0], net.scalar(3.0), bias=7.0),
    )
    case(
        f"scale-negate-{_t}",
        "scale",
        _x,
        lambda net, xs: net.op("scale", xs[0], net.scalar(-1.0), bias=0.0),
    )
    for _y in (7.0, 31.0, -3.0):
        case(f"pow-edges-{_t}-{int(_y)}", "pow", _x, call("pow", y=_y))
    case(
        f"add-sub-wrap-{_t}",
        "add",
        [Input((2, 8), _dtype, _edges)] * 2,
        lambda net, xs: net.op(
            "subtract", net.op("add", xs[0], xs[1]), net.op("multiply", xs[0], xs[1])
        ),
    )
    case(
        f"sum-wrap-{_t}",
        "sum",
        [Input((2, 8), _dtype, _edges)],
        _reduce("sum", (1,), False, dtype=_dtype),
    )
    case(
        f"prod-wrap-{_t}",
        "prod",
        [Input((2, 8), _dtype, _edges)],
        _reduce("prod", (1,), False),
    )
    case(
        f"sum-wrap-fused-{_t}",
        "sum",
        [Input((2, 8), _dtype, _edges)],
        lambda net, xs, d=_dtype: net.op(
            "sum", net.op("multiply", xs[0], xs[0]), net.ints([1]), keepdim=False, dtype=d
        ),
    )
case(
    "sum-wrap-long-row-i64",
    "sum",
    [Input((2, 4096), I64, Values(low=2**61, high=2**62))],
    _reduce("sum", (1,), False),
)
case(
    "prod-wrap-long-row-i64",
    "prod",
    [Input((2, 4096), I64, Values(low=-(2**20), high=2**20))],
    _reduce("prod", (1,), False),
)
case(
    "sum-wrap-all-i32",
    "sum",
    [Input((64, 1000), I32, Values(low=2**30, high=2**31 - 1))],
    _reduce("sum", (), False, dtype=I32),
    True,
)

_POW_BASES = Fixed(items=(0, 1, -1, 2, -2, 3, 7, -46341, 0, 1, -1, 2, -2, 3, 7, 65536))
_POW_EXPONENTS = Fixed(items=(-1, -2, -3, -1, -3, 0, 11, 2, 0, 31, 32, 31, 33, 40, 100, 2))
for _dtype in (I32, I64):
    case(
        f"elementwise_pow-edges-{_tag(_dtype)}",
        "elementwise_pow",
        [Input((2, 8), _dtype, _POW_BASES), Input((2, 8), _dtype, _POW_EXPONENTS)],
        call("elementwise_pow"),
    )

_DIVIDENDS = {
    I32: Fixed(
        items=(7, -7, 0, _I32_MIN, _I32_MIN, _I32_MAX, 5, -5, 7, -7, _I32_MIN, 1, -1, 9, 0, 3)
    ),
    I64: Fixed(
        items=(7, -7, 0, _I64_MIN, _I64_MIN, _I64_MAX, 5, -5, 7, -7, _I64_MIN, 1, -1, 9, 0, 3)
    ),
}
_DIVISORS = Fixed(items=(0, 0, 0, -1, 0, -1, 2, -2, -2, 2, 1, -1, -1, 0, -1, 3))
"""Zero divisors, INT_MIN / -1, and ordinary signs mixed (2 x 8)."""
for _dtype in (I32, I64):
    _t = _tag(_dtype)
    _xy = [Input((2, 8), _dtype, _DIVIDENDS[_dtype]), Input((2, 8), _dtype, _DIVISORS)]
    for _op in ("divide", "floor_divide", "remainder"):
        case(f"{_op}-edges-{_t}", _op, _xy, call(_op))
        case(
            f"{_op}-edges-fused-{_t}",
            _op,
            _xy,
            lambda net, xs, o=_op: net.op(
                "add", net.op(o, net.op("scale", xs[0], net.scalar(1.0)), xs[1]), xs[0]
            ),
        )
        for _c in (0, -1):
            case(
                f"{_op}-by-const{_c}-{_t}",
                _op,
                _xy[:1],
                lambda net, xs, o=_op, c=_c, d=_dtype: net.op(o, xs[0], net.scalar(c, d)),
            )
    case(
        f"reciprocal-zero-{_t}",
        "reciprocal",
        [Input((2, 8), _dtype, _DIVISORS)],
        call("reciprocal"),
    )
for _dtype in (I8, I16):
    case(
        f"divide-edges-{_tag(_dtype)}",
        "divide",
        [
            Input((2, 8), _dtype, Fixed(items=(-128, -128, 7, -7, 0, 127, -5, 3) * 2)),
            Input((2, 8), _dtype, _DIVISORS),
        ],
        call("divide"),
    )


# ---- shape-made tensors and masks (issue 15: shape.py, masks.py) --------------------------

for _dtype, _diag in [(F32, -1), (F32, 0), (F16, 1), (I32, 2), (BOOL, 0)]:
    for _op in ("tril", "triu"):
        case(
            f"{_op}-{_tag(_dtype)}-d{_diag}",
            _op,
            [Input((3, 7, 33), _dtype, INTS if _dtype is I32 else NORMAL)],
            call(_op, diagonal=_diag),
        )
case("tril-f32-1x1", "tril", [Input((1, 1))], call("tril", diagonal=0))
case("shape64-f32-3x7x33", "shape64", [Input((3, 7, 33))], call("shape64"))
case("shape-f16-1", "shape", [Input((1,), F16)], call("shape"))
case("shape64-i32-0d", "shape64", [Input((), I32, INTS)], call("shape64"))
case(
    "tril-mask-into-add",
    "tril",
    [Input((7, 7)), Input((7, 7))],
    lambda net, xs: net.op("add", xs[1], net.op("tril", xs[0], diagonal=0)),
)
for _id, _shape, _depth, _dtype in [
    ("2d", (3, 7), 5, I64),
    ("1d", (33,), 7, I32),
    ("one", (1,), 3, I64),
]:
    case(
        f"one_hot-{_id}",
        "one_hot",
        [Input(_shape, _dtype, Values(low=0, high=_depth - 1))],
        lambda net, xs, d=_depth: net.op("one_hot", xs[0], net.scalar(d, I32)),
    )
for _id, _x, _index, _axis in [
    ("rows", Input((7, 33)), Input((5,), I64, Values(low=-7, high=6)), 0),
    ("cols", Input((7, 33), F16), Input((3,), I32, Values(low=0, high=32)), 1),
    ("last", Input((3, 1, 33)), Input((7,), I64, Values(low=-33, high=32)), -1),
    ("column", Input((7, 5), I32, INTS), Input((3, 1), I64, Values(low=0, high=6)), 0),
]:
    case(
        f"index_select-{_id}",
        "index_select",
        [_x, _index],
        lambda net, xs, a=_axis: net.op("index_select", xs[0], xs[1], axis=a),
    )


def _arange(start: float, end: float, step: float, dtype: DataType) -> Make:
    return lambda net, xs: net.op(
        "arange",
        net.scalar(start, F64),
        net.scalar(end, F64),
        net.scalar(step, F64),
        dtype=dtype,
    )


for _id, _bounds, _dtype in [
    ("f32", (0.5, 3.7, 0.4), F32),
    ("f32-down", (7.0, -3.0, -0.3), F32),
    ("i64", (1, 34, 3), I64),
    ("i32-down", (33, 0, -1), I32),
    ("one", (0, 1, 1), I64),
]:
    case(f"arange-{_id}", "arange", [], _arange(*_bounds, _dtype))
case(
    "arange-into-multiply",
    "arange",
    [Input((7, 33))],
    lambda net, xs: net.op("multiply", xs[0], _arange(0, 33, 1, F32)(net, xs)),
)
for _dtype, _value in [(F32, 1.5), (I32, 1.0), (BOOL, 1.0)]:
    case(
        f"full_with_tensor-{_tag(_dtype)}",
        "full_with_tensor",
        [],
        lambda net, xs, d=_dtype, v=_value: net.op(
            "full_with_tensor", net.scalar(v), net.ints([7, 33]), dtype=d
        ),
    )
case(
    "full_with_tensor-computed-value",
    "full_with_tensor",
    [Input((1,))],
    lambda net, xs: net.op("full_with_tensor", xs[0], net.ints([3, 7]), dtype=F32),
)
for _id, _x, _y in [
    ("rows", Input((1, 33), I64, INTS), Input((7, 33), I64, INTS)),
    ("rank", Input((33,)), Input((3, 7, 33))),
    ("same", Input((7, 1), F16), Input((7, 1), F16)),
]:
    case(
        f"expand_as-{_id}",
        "expand_as",
        [_x, _y],
        lambda net, xs: net.op("expand_as", xs[0], xs[1], target_shape=[]),
    )


# ---- pooling and interpolation (cinn_py/ops/pool.py, interp.py) ----------------------------


def _pool(kernel: Sequence[int], **attrs: Any) -> Make:
    """pool2d with its kernel size as the `full_int_array` operand Paddle writes."""
    defaults = {"strides": [1, 1], "paddings": [0, 0], "pooling_type": "max"}
    return lambda net, xs: net.op("pool2d", xs[0], net.ints(kernel), **{**defaults, **attrs})


_POOL_CASES: list[tuple[str, Shape, DataType, Make]] = [
    ("max-k3s2p1", (1, 3, 7, 9), F32, _pool([3, 3], strides=[2, 2], paddings=[1, 1])),
    (
        "avg-k3s2p1-excl",
        (1, 3, 7, 9),
        F32,
        _pool([3, 3], strides=[2, 2], paddings=[1, 1], pooling_type="avg"),
    ),
    (
        "avg-k3s2p1-ceil-incl",
        (1, 3, 7, 7),
        F32,
        _pool(
            [3, 3],
            strides=[2, 2],
            paddings=[1, 1],
            pooling_type="avg",
            ceil_mode=True,
            exclusive=False,
        ),
    ),
    ("max-k2s2-ceil", (1, 1, 33, 7), F32, _pool([2, 2], strides=[2, 2], ceil_mode=True)),
    ("avg-k2x3-s1x2", (2, 3, 7, 9), F32, _pool([2, 3], strides=[1, 2], pooling_type="avg")),
    ("max-pad4", (1, 2, 7, 9), F32, _pool([3, 3], strides=[2, 1], paddings=[0, 1, 2, 1])),
    ("avg-adaptive-3x5", (1, 3, 7, 8), F32, _pool([3, 5], pooling_type="avg", adaptive=True)),
    ("max-adaptive-2x3", (1, 3, 7, 9), F32, _pool([2, 3], adaptive=True)),
    ("avg-adaptive-1x1", (2, 3, 7, 9), F32, _pool([1, 1], pooling_type="avg", adaptive=True)),
    # whole-plane max pools take the unrolled window (Paddle's order-dependent fold)
    ("max-global", (2, 3, 5, 7), F32, _pool([3, 3], global_pooling=True)),
    ("max-adaptive-1x1", (1, 3, 7, 7), F32, _pool([1, 1], adaptive=True)),
    (
        "max-nhwc-same",
        (1, 5, 7, 3),
        F32,
        _pool([3, 3], strides=[2, 2], padding_algorithm="SAME", data_format="NHWC"),
    ),
    (
        "avg-nhwc-valid",
        (1, 5, 7, 3),
        F32,
        _pool(
            [2, 2],
            paddings=[1, 1],
            padding_algorithm="VALID",
            data_format="NHWC",
            pooling_type="avg",
        ),
    ),
    ("max-k3s2p1-f16", (1, 3, 7, 9), F16, _pool([3, 3], strides=[2, 2], paddings=[1, 1])),
    # YOLO's SPP: 13 x 13 at stride 1, padding 6 (MAX_UNROLLED_TAPS)
    ("max-k13s1p6", (1, 2, 19, 17), F32, _pool([13, 13], strides=[1, 1], paddings=[6, 6])),
    (
        "avg-k9x13-ceil",
        (1, 3, 17, 15),
        F32,
        _pool([9, 13], strides=[2, 3], paddings=[4, 6], pooling_type="avg", ceil_mode=True),
    ),
    (
        "avg-k3s1p1-bf16",
        (1, 3, 7, 9),
        BF16,
        _pool([3, 3], paddings=[1, 1], pooling_type="avg"),
    ),
    (
        "max-fused",
        (1, 3, 7, 9),
        F32,
        lambda net, xs: net.op(
            "relu",
            net.op(
                "pool2d",
                net.op("scale", xs[0], net.scalar(2.0), bias=-1.0),
                net.ints([3, 3]),
                strides=[2, 2],
                paddings=[1, 1],
                pooling_type="max",
            ),
        ),
    ),
]
for _id, _shape, _dtype, _make in _POOL_CASES:
    case(f"pool2d-{_id}-{_shape_tag(_shape)}", "pool2d", [Input(_shape, _dtype)], _make)


def _interp(op: str, **attrs: Any) -> Make:
    """An interpolation with its three optional operands absent, as F.interpolate prints."""
    defaults = {"out_d": -1, "out_h": -1, "out_w": -1, "scale": [], "align_mode": 0}
    return lambda net, xs: net.op(op, xs[0], None, None, None, **{**defaults, **attrs})


_INTERP_CASES: list[tuple[str, str, Shape, DataType, dict[str, Any]]] = [
    (
        "bilinear_interp",
        "corners-x2",
        (1, 3, 5, 7),
        F32,
        {"scale": [2.0, 2.0], "align_corners": True},
    ),
    (
        "bilinear_interp",
        "half-pixel",
        (1, 3, 5, 7),
        F32,
        {"out_h": 7, "out_w": 3, "align_corners": False},
    ),
    (
        "bilinear_interp",
        "mode1",
        (1, 3, 5, 7),
        F32,
        {"out_h": 9, "out_w": 11, "align_corners": False, "align_mode": 1},
    ),
    (
        "bilinear_interp",
        "down",
        (1, 2, 33, 7),
        F32,
        {"out_h": 7, "out_w": 3, "align_corners": False},
    ),
    (
        "bilinear_interp",
        "nhwc",
        (1, 3, 5, 2),
        F32,
        {"out_h": 7, "out_w": 5, "align_corners": False, "data_format": "NHWC"},
    ),
    (
        "bilinear_interp",
        "scale-1.5",
        (1, 1, 7, 3),
        F32,
        {"scale": [1.5, 2.5], "align_corners": False},
    ),
    ("bilinear_interp", "f16", (1, 3, 5, 7), F16, {"out_h": 9, "out_w": 1, "align_corners": False}),
    ("nearest_interp", "x2", (1, 3, 5, 7), F32, {"scale": [2.0, 2.0], "align_corners": False}),
    (
        "nearest_interp",
        "size",
        (1, 3, 5, 7),
        F32,
        {"out_h": 3, "out_w": 10, "align_corners": False},
    ),
    (
        "nearest_interp",
        "corners",
        (1, 3, 5, 7),
        F32,
        {"out_h": 9, "out_w": 4, "align_corners": True},
    ),
    (
        "nearest_interp",
        "nhwc",
        (1, 10, 6, 3),
        F32,
        {"out_h": 4, "out_w": 7, "data_format": "NHWC", "align_corners": False},
    ),
]
for _op, _id, _shape, _dtype, _attrs in _INTERP_CASES:
    case(f"{_op}-{_id}-{_tag(_dtype)}", _op, [Input(_shape, _dtype)], _interp(_op, **_attrs))


# ---- batch_norm in inference (cinn_py/ops/batch_norm.py): decomposed, one group ------------


def _batch_norm(op: str, data_format: str, affine: bool) -> Make:
    """x, then the running mean and variance, then (affine) scale and bias."""

    def make(net: Net, xs: list[Value]) -> Any:
        scale, bias = (xs[3], xs[4]) if affine else (None, None)
        mode = {"is_test": True, "use_global_stats": True, "epsilon": 1e-3}
        return net.op(op, xs[0], xs[1], xs[2], scale, bias, data_format=data_format, **mode)

    return make


_BATCH_NORM_CASES = [
    # (op, id, x shape, channels, dtype, data_format, affine)
    ("batch_norm", "nchw", (1, 7, 33), 7, F32, "NCHW", True),
    ("batch_norm", "nhwc", (3, 1, 7, 3), 3, F32, "NHWC", False),
    ("batch_norm_", "nchw", (2, 3, 7, 5), 3, F32, "NCHW", True),
    ("batch_norm_", "2d", (33, 7), 7, F16, "NCHW", True),
    ("batch_norm", "nhwc", (1, 5, 3, 7), 7, BF16, "NHWC", True),
]
for _op, _id, _shape, _c, _dtype, _fmt, _affine in _BATCH_NORM_CASES:
    _stats = [Input((_c,)), Input((_c,), values=POSITIVE)]
    _stats += [Input((_c,)), Input((_c,))] if _affine else []
    case(
        f"{_op}-{_id}-{_tag(_dtype)}",
        _op,
        [Input(_shape, _dtype), *_stats],
        _batch_norm(f"{_op}", _fmt, _affine),
    )


# ---- fused ops: swiglu, fused_rms_norm_quant (cinn_py/ops/fused.py) -------------------------


def _swiglu(with_y: bool) -> Make:
    return lambda net, xs: net.op("swiglu", xs[0], xs[1] if with_y else None)


for _shape, _dtype, _with_y in [
    ((7, 33), F32, True),
    ((3, 1, 14), F32, False),
    ((1, 2), F32, False),
    ((33, 7), F16, True),
    ((3, 66), BF16, False),
]:
    case(
        f"swiglu-{'xy' if _with_y else 'halves'}-{_shape_tag(_shape)}-{_tag(_dtype)}",
        "swiglu",
        [Input(_shape, _dtype)] * (2 if _with_y else 1),
        _swiglu(_with_y),
    )


def _fused_rms_norm(begin: int, bias: bool, residual: bool, norm_bias: bool) -> Make:
    """x, norm_weight, then (in this order, where used) bias, residual and norm_bias."""

    def make(net: Net, xs: list[Value]) -> Any:
        rest = iter(xs[2:])
        b = next(rest) if bias else None
        r = next(rest) if residual else None
        nb = next(rest) if norm_bias else None
        return net.op(
            "fused_rms_norm_quant", xs[0], b, r, xs[1], nb, epsilon=1e-5, begin_norm_axis=begin
        )

    return make


for _shape, _begin, _dtype, _bias, _res, _nb in [
    ((7, 33), 1, F32, False, False, False),
    ((3, 7, 5), 1, F32, False, False, True),
    ((3, 7, 5), 2, F32, True, True, True),
    ((1, 33), 1, F16, False, True, False),
    ((7, 3), 0, BF16, False, False, False),
]:
    _cols = (int(np.prod(_shape[_begin:])),)
    _inputs = [Input(_shape, _dtype), Input(_cols, _dtype)]
    _inputs += [Input(_cols, _dtype)] if _bias else []
    _inputs += [Input(_shape, _dtype)] if _res else []
    _inputs += [Input(_cols, _dtype)] if _nb else []
    _flags = "".join(f for f, on in (("b", _bias), ("r", _res), ("n", _nb)) if on) or "plain"
    case(
        f"fused_rms_norm_quant-{_shape_tag(_shape)}-axis{_begin}-{_flags}-{_tag(_dtype)}",
        "fused_rms_norm_quant",
        _inputs,
        _fused_rms_norm(_begin, _bias, _res, _nb),
    )
