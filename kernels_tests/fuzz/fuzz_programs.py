"""Hypothesis strategies for random, valid PIR programs over the registered ops.

`programs(family)` draws a `FuzzCase` (`fuzz_case.py`): a program built with `Builder`
as a list of steps, each an *emitter* of the family's menu (a unary op, a broadcasting
binary op, a reduction that reads its own statistic back, a layer_norm, a reshape, ...)
applied to values of the program so far (so values get several consumers and diamonds
form) or to new `pd_op.data` inputs (`x0`, `x1`, ...), plus a feed seed and a value kind
per input. The program's outputs are the values nothing reads (or, in the `graph`
family, sometimes `pd_op.fetch` ops of those and of some intermediates). Now and then
some input dims are declared -1 (`with_dynamic_dims`).

Families (`FAMILIES`): `elementwise` (unary / binary chains with broadcasting of size-1
and missing leading dims, compares, where, scale, clip, full constants), `cast` (casts
across float32 / float16 / bfloat16 / int32 / int64 / bool with NaN, inf and extreme
values), `reduce` (sum, mean, max, min, prod, all, any, argmax, argmin over random axes
with keepdim, size-1 axes, reduce-all, statistics read back and reduced again, sibling
reductions, of transposed / expanded / sliced values), `norm` (softmax, log_softmax,
layer_norm, rms_norm amid elementwise ops), `layout` (the steps of `fuzz_layout.py`),
`graph` (all of them, matmul, diamonds, fetched intermediates), `spatial` (pooling,
interp, batch / group / instance norm and convs over NCHW / NHWC images:
`fuzz_spatial.py`) and `attention` (einsum, swiglu, fused_rms_norm_quant, topk /
argsort, arange, expand_as: `fuzz_attention.py`).

Shapes (`fuzz_shapes.py`): ranks 0-4, dims drawn from `DIMS` (row counts that are not
multiples of 8), now and then a long dim or an empty (0) dim, every tensor at most
`MAX_ELEMENTS` elements so that an example costs about one compile. Every choice
shrinks towards the simplest program: fewer steps (each step is a list element, deleted
whole), the first emitter and op of each menu, the first value, small dims, seed 0.

Patterns that trip open compiler bugs are steered around by the switches of
`fuzz_bugs.py` (each call site says which).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fuzz_attention import AttentionSteps
from fuzz_bugs import avoided_bugs
from fuzz_case import INT_LIMIT, FuzzCase, InputSpec, input_bound
from fuzz_layout import LayoutSteps
from fuzz_shapes import (
    BOOL,
    CAST_DTYPES,
    DIMS,
    F32,
    FLOATS,
    I32,
    I64,
    INTS,
    LONG_DIMS,
    MAX_ELEMENTS,
    MAX_MATMUL_FLOPS,
    Shape,
    broadcast,
    fit,
    narrow,
    normalized,
    numel,
    widen,
)
from fuzz_spatial import SpatialSteps
from hypothesis import strategies as st

from cinn_py.errors import CinnError
from cinn_py.pir.attributes import IntArrayAttribute
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, make_attribute
from cinn_py.pir.program import Program
from cinn_py.pir.types import DYNAMIC, DenseTensorType
from cinn_py.pir.value import Value
from cinn_py.pir.verifier import verify_program

# ---- the generator -----------------------------------------------------------------------


@dataclass
class Tensor:
    """A value of the program being built, with the largest magnitude it can hold when
    it is an integer (`bound`, tracked so integer ops stay clear of overflow)."""

    value: Value
    bound: int | None = None

    @property
    def type(self) -> DenseTensorType:
        type_ = self.value.type
        assert isinstance(type_, DenseTensorType)
        return type_

    @property
    def shape(self) -> Shape:
        return tuple(self.type.dims)

    @property
    def dtype(self) -> DataType:
        return self.type.data_type

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


class Maker(LayoutSteps, SpatialSteps, AttentionSteps):
    """Builds one program from hypothesis draws. Emitters (`emit_*`) add ops; each
    keeps the program valid by construction (shapes that broadcast, axes in range,
    indices inside their dim)."""

    def __init__(
        self, draw: Callable[[st.SearchStrategy[Any]], Any], family: str, avoid: frozenset[str]
    ) -> None:
        self._draw = draw
        self.family = family
        self.avoid = avoid
        self.program = Program()
        self.b = Builder(self.program)
        self.pool: list[Tensor] = []
        self.inputs: list[InputSpec] = []
        self.input_kinds = INPUT_KINDS[family]
        self.secondary: dict[int, bool] = {}
        """id() of results that are outputs only when fetched -> whether `finish` may
        fetch them (batch_norm's statistics, pooling positions, einsum's caches, ...)."""

    # -- drawing ---------------------------------------------------------------------------

    def pick(self, options: Sequence[Any]) -> Any:
        """One of `options`; shrinks towards the first."""
        return self._draw(st.sampled_from(list(options)))

    def integer(self, low: int, high: int) -> int:
        return self._draw(st.integers(low, high))

    def chance(self, percent: int) -> bool:
        """True with `percent`% probability; shrinks towards False."""
        return self._draw(st.integers(0, 99)) >= 100 - percent

    def avoided(self, bug: str) -> bool:
        """Whether the open bug `bug` (a `fuzz_bugs.KNOWN_BUGS` switch) is steered around."""
        return bug in self.avoid

    # -- values ----------------------------------------------------------------------------

    def op(self, op_name: str, /, *operands: Value | None, **attrs: Any) -> Any:
        return self.b.op(f"pd_op.{op_name}", *operands, **attrs)

    def add(self, value: Value, bound: int | None = None) -> Tensor:
        tensor = Tensor(value, bound)
        self.pool.append(tensor)
        return tensor

    def ints(self, values: Sequence[int]) -> Value:
        return self.op("full_int_array", value=[int(v) for v in values])

    def scalar(self, value: float, dtype: DataType = F32) -> Value:
        return self.op("full", shape=[1], value=float(value), dtype=dtype)

    def shape(self, min_rank: int = 0, max_rank: int = 4, allow_empty: bool = True) -> Shape:
        ranks = [r for r in (2, 1, 3, 2, 3, 4, 1, 0) if min_rank <= r <= max_rank] or [min_rank]
        rank = self.pick(ranks)
        dims = [self.pick(DIMS) for _ in range(rank)]
        if rank and rank <= 2 and self.chance(6):
            dims[self.integer(0, rank - 1)] = self.pick(LONG_DIMS)
        if allow_empty and rank and self.chance(4):
            dims[self.integer(0, rank - 1)] = 0
        return fit(tuple(dims))

    def dtype(self, options: Sequence[DataType] = FLOATS) -> DataType:
        return self.pick(options)

    def new_input(
        self, shape: Shape, dtype: DataType, kind: str | None = None, **index: int
    ) -> Tensor:
        if kind is None:
            kind = self.pick(self.input_kinds)
        if dtype is BOOL or (kind == "halves" and dtype.is_integer):
            kind = "normal"
        name = f"x{len(self.inputs)}"
        spec = InputSpec(name, tuple(shape), dtype, kind, index.get("low", 0), index.get("high", 0))
        self.inputs.append(spec)
        value = self.op("data", name=name, shape=list(shape), dtype=dtype)
        return self.add(value, input_bound(spec))

    def tensor(
        self,
        accept: Callable[[Tensor], bool] = lambda t: True,
        dtypes: Sequence[DataType] = FLOATS,
        shape: Callable[[], Shape] | None = None,
        fresh: int = 25,
    ) -> Tensor:
        """A value of the program that `accept`s, or (`fresh`% of the time, or when none
        does) a new input of one of `dtypes`, shaped by `shape` (default: drawn)."""
        candidates = [t for t in self.pool if t.dtype in dtypes and accept(t)]
        if candidates and not self.chance(fresh):
            return self.pick(candidates)
        for _ in range(4):
            dims = shape() if shape is not None else self.shape()
            made = self.new_input(dims, self.dtype(dtypes))
            if accept(made):
                return made
        return made

    def partner(
        self, x: Tensor, *, same_shape: bool = False, dtype: DataType | None = None
    ) -> Tensor:
        """A second operand for `x` of `dtype` (default x's) that broadcasts with it, the
        result no larger than MAX_ELEMENTS: a value of the program, a new input with
        leading dims dropped and / or dims set to 1 (or x's 1s widened), or a constant."""
        dtype = dtype or x.dtype

        def fits(t: Tensor) -> bool:
            if same_shape:
                return t.shape == x.shape
            out = broadcast(x.shape, t.shape)
            return out is not None and numel(out) <= MAX_ELEMENTS

        candidates = [t for t in self.pool if t.dtype is dtype and t is not x and fits(t)]
        how = self.pick(("pool", "input", "input", "constant", "wider"))
        if how == "pool" and candidates:
            return self.pick(candidates)
        if how == "constant" and not same_shape:
            shape = self.pick(((), (1,), x.shape))
            return self.constant(shape, dtype)
        if how == "wider" and not same_shape:
            wider = widen(x.shape, self)
            if numel(wider) <= MAX_ELEMENTS:
                return self.new_input(wider, dtype)
        shape = x.shape if same_shape else narrow(x.shape, self)
        return self.new_input(shape, dtype)

    def constant(self, shape: Shape, dtype: DataType) -> Tensor:
        if dtype is BOOL:
            value = self.pick((1.0, 0.0))
        elif dtype.is_integer:
            value = self.pick((2.0, -3.0, 0.0, 1.0, 7.0, 2.7))
        else:
            # 2.0: elementwise_pow(2, y) renders exp2 (codegen_c.power_of_two)
            value = self.pick(
                (0.5, -2.0, 0.0, 1.0, 3.25, 1e30, float("inf"), float("nan"), -0.0, 2.0)
            )
        bound = int(abs(value)) + 1 if dtype.is_integer else (1 if dtype is BOOL else None)
        return self.add(self.op("full", shape=list(shape), value=value, dtype=dtype), bound)

    # -- elementwise -----------------------------------------------------------------------

    def emit_unary(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, *INTS, BOOL))
        if x.dtype is BOOL:
            self.add(self.op("logical_not", x.value), 1)
            return
        names = FLOAT_UNARY if x.dtype in FLOATS else INT_UNARY
        self.unary(self.pick(names), x)

    def unary(self, name: str, x: Tensor) -> Tensor:
        is_int = x.dtype.is_integer
        bound = x.bound
        if name in ("isnan", "isinf", "isfinite", "logical_not"):
            return self.add(self.op(name, x.value), 1)
        if name == "scale":
            factor = self.pick((2.0, -0.5, 1.5, 0.0, 3.0, -1.0))
            bias = self.pick((0.0, 1.0, -2.5, 0.25))
            after = not self.chance(30)
            if is_int:
                bound = abs(int(factor)) * (x.bound + abs(int(bias))) + abs(int(bias))
            value = self.op(
                "scale", x.value, self.scalar(factor), bias=bias, bias_after_scale=after
            )
            return self.add(value, bound)
        if name == "clip":
            low, high = sorted(
                (self.pick((-1.5, -3.0, 0.0, 2.0)), self.pick((2.0, 0.5, 10.0, -1.0)))
            )
            value = self.op("clip", x.value, self.scalar(low), self.scalar(high))
            return self.add(value, max(abs(int(low)), abs(int(high))) if is_int else None)
        if name == "pow":
            exponent = self.pick((2.0, 3.0, 0.5, -1.0, 2.5, 0.0, -2.0))
            if is_int:
                power = int(exponent)
                bound = 1 if power < 0 else x.bound**power
            return self.add(self.op("pow", x.value, y=exponent), bound)
        if name == "round":
            return self.add(self.op("round", x.value, decimals=self.pick((0, 1, 2, -1))), bound)
        if name == "leaky_relu":
            slope = self.pick((0.02, 0.1, 0.5, 2.0))
            return self.add(self.op("leaky_relu", x.value, negative_slope=slope))
        if name == "hardsigmoid":
            slope, offset = self.pick(((0.2, 0.5), (0.166667, 0.5), (0.5, 0.0)))
            return self.add(self.op("hardsigmoid", x.value, slope=slope, offset=offset))
        if name == "gelu":
            return self.add(self.op("gelu", x.value, approximate=self.chance(50)))
        if is_int:
            if name == "square":
                bound = x.bound**2
            elif name == "abs":
                bound = x.bound
            elif name == "reciprocal":
                bound = 1
            elif name == "sign":
                bound = 1
            elif name == "relu6":
                bound = 6
        return self.add(self.op(name, x.value), bound)

    def emit_binary(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, *FLOATS, *INTS))
        self.binary(self.pick(ARITHMETIC), x, self.partner(x))

    def binary(self, name: str, x: Tensor, y: Tensor) -> Tensor:
        if self.chance(30):
            x, y = y, x
        bound = None
        if x.dtype.is_integer:
            bx, by = x.bound or 0, y.bound or 0
            if name in ("divide", "floor_divide", "remainder"):
                # zero divisors and INT_MIN / -1 included: both targets define them
                bound = by if name == "remainder" else (x.bound or 0) + 1
            elif name == "elementwise_pow":
                bound = bx ** min(by, 64) if bx > 1 else 1
            elif name in ("add", "subtract"):
                bound = bx + by
            elif name == "multiply":
                bound = bx * by
            else:
                bound = max(bx, by)
        return self.add(self.op(name, x.value, y.value), bound)

    def emit_compare(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, *INTS, BOOL))
        self.add(self.op(self.pick(COMPARE), x.value, self.partner(x).value), 1)

    def emit_logical(self) -> None:
        x = self.tensor(dtypes=(BOOL, BOOL, F32, I32))
        self.add(self.op(self.pick(LOGICAL), x.value, self.partner(x).value), 1)

    def emit_where(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, *INTS, BOOL))
        how = self.pick(("compare", "input", "isnan"))
        if how == "compare" and x.dtype is not BOOL:
            other = self.partner(x)
            if broadcast(x.shape, other.shape) == x.shape:
                cond = self.op(self.pick(COMPARE), x.value, other.value)
            else:
                cond = self.new_input(x.shape, BOOL).value
        elif how == "isnan" and x.dtype in FLOATS:
            cond = self.op("isnan", x.value)
        else:
            cond = self.new_input(x.shape, BOOL).value
        y = self.partner(x, same_shape=True) if not self.chance(25) else self.full_like(x)
        bound = max(x.bound or 0, y.bound or 0) if x.dtype.is_integer else None
        first, second = (x, y) if not self.chance(30) else (y, x)
        self.add(self.op("where", cond, first.value, second.value), bound)

    def full_like(self, x: Tensor) -> Tensor:
        value = self.pick((0.0, 1.0, -2.5)) if x.dtype is not BOOL else 1.0
        out = self.op("full_like", x.value, self.scalar(value), dtype=x.dtype)
        return self.add(out, 3 if x.dtype.is_integer or x.dtype is BOOL else None)

    def emit_constant(self) -> None:
        x = self.tensor(dtypes=(*FLOATS, *INTS))
        shape = self.pick(((), (1,), x.shape))
        c = self.constant(shape, x.dtype)
        self.binary(self.pick(ARITHMETIC[:5]), x, c)

    # -- casts -----------------------------------------------------------------------------

    def emit_cast(self) -> None:
        x = self.tensor(dtypes=CAST_DTYPES)
        target = self.pick([d for d in CAST_DTYPES if d is not x.dtype])
        self.cast(x, target)

    def cast(self, x: Tensor, target: DataType) -> Tensor:
        bound = None
        if target is BOOL:
            bound = 1
        elif target.is_integer:
            bound = x.bound if x.dtype.is_integer else INT_LIMIT[target] + 1
        return self.add(self.op("cast", x.value, dtype=target), bound)

    # -- reductions ------------------------------------------------------------------------

    def axes(self, rank: int, allow_all: bool = True) -> list[int]:
        """Reduced axes: every one ([], or all listed), the last, the first, or a random
        subset; sometimes negative."""
        if rank == 0:
            return []
        how = self.pick(("last", "subset", "first", "all", "listed_all"))
        if how == "all" and allow_all:
            return []
        if how == "listed_all":
            axes = list(range(rank))
        elif how == "last":
            axes = [rank - 1]
        elif how == "first":
            axes = [0]
        else:
            axes = sorted(a for a in range(rank) if self.chance(50)) or [self.integer(0, rank - 1)]
        if self.chance(30):
            axes = [a - rank for a in axes]
        return axes

    def emit_reduce(self) -> None:
        name = self.pick(REDUCE_OPS)
        dtypes = {
            "all": (BOOL, BOOL, F32, I32),
            "any": (BOOL, BOOL, F32, I32),
            "sum": (*FLOATS, *INTS, BOOL),
            "prod": (*FLOATS, *INTS),
        }.get(name, (*FLOATS, *INTS))
        x = self.tensor(dtypes=dtypes)
        self.reduce(name, x, self.axes(x.rank), self.chance(50))

    def reduce(self, name: str, x: Tensor, axes: list[int], keepdim: bool) -> Tensor | None:
        reduced = [x.shape[a] for a in normalized(axes, x.rank)] if axes else list(x.shape)
        count = numel(reduced)
        if name in ("max", "min") and count == 0 and x.size == 0:
            name = "sum"
        if name in ("max", "min") and 0 in reduced:
            name = "sum"  # a max over nothing has no identity (NumPy raises)
        if name in ("all", "any"):
            out = self.op(name, x.value, axis=list(axes), keepdim=keepdim)
            return self.add(out, 1)
        bound = None
        if x.dtype.is_integer or x.dtype is BOOL:
            b = x.bound or 1
            if name == "prod":
                bound = 1 if (x.bound or 1) <= 1 else b ** max(count, 1)
            elif name == "sum":
                bound = b * max(count, 1)
            else:
                bound = b
        elif name == "prod":
            x = self.tame(x)
        attrs: dict[str, Any] = {"keepdim": keepdim}
        if name == "sum":
            attrs["dtype"] = DataType.UNDEFINED
            if x.dtype is I32 and self.chance(20):
                attrs["dtype"] = I32
        if name == "prod" and self.chance(15):
            attrs["reduce_all"] = True
        return self.add(self.op(name, x.value, self.ints(axes), **attrs), bound)

    def emit_siblings(self) -> None:
        """Two reductions of one value (one walk when their axes agree), maybe combined."""
        x = self.tensor(lambda t: t.rank >= 1 and t.size > 0, dtypes=FLOATS)
        if x.rank == 0 or x.size == 0:
            return
        axes = self.axes(x.rank)
        keepdim = self.chance(50)
        first = self.reduce(self.pick(("sum", "max", "mean", "min")), x, axes, keepdim)
        other = axes if self.chance(60) else self.axes(x.rank)
        source = x if self.chance(60) else self.unary(self.pick(("square", "exp", "abs")), x)
        second = self.reduce(self.pick(("sum", "max", "mean", "min")), source, other, keepdim)
        if first and second and first.dtype is second.dtype:
            if broadcast(first.shape, second.shape) is not None and self.chance(60):
                self.binary(self.pick(("subtract", "add", "multiply")), first, second)

    def tame(self, x: Tensor) -> Tensor:
        """Values in [0.7, 1.3] (NaN stays NaN), for products of many elements: partial
        products of float32 would otherwise overflow where the reference's float64
        ones do not."""
        squashed = self.op("sigmoid", x.value)
        return self.add(self.op("scale", squashed, self.scalar(0.6), bias=0.7))

    def emit_argreduce(self) -> None:
        x = self.tensor(lambda t: t.size > 0, dtypes=(*FLOATS, *INTS))
        if x.size == 0:
            return
        axis = self.integer(-max(x.rank, 1), max(x.rank, 1) - 1)
        out = self.op(
            self.pick(("argmax", "argmin")),
            x.value,
            self.scalar(axis, I64),
            keepdims=self.chance(40),
            flatten=self.chance(20),
            dtype=self.pick((I64, I32)),
        )
        self.add(out, x.size)

    def emit_readback(self) -> None:
        """A statistic read back by its own input: x - stat(x, axes, keepdim) (or
        x / stat, ...), maybe through a unary op, then reduced again."""
        x = self.tensor(lambda t: t.rank >= 1 and t.size > 0, dtypes=FLOATS)
        if x.rank == 0 or x.size == 0:
            return
        axes = self.axes(x.rank, allow_all=False)
        stat = self.reduce(self.pick(("mean", "max", "sum", "min")), x, axes, keepdim=True)
        assert stat is not None
        combined = self.binary(
            self.pick(("subtract", "subtract", "divide", "multiply", "add")), x, stat
        )
        if self.chance(50):
            combined = self.unary(self.pick(("exp", "square", "abs", "tanh")), combined)
        if self.chance(70):
            again = axes if self.chance(60) else self.axes(combined.rank)
            self.reduce(self.pick(("sum", "mean", "max", "min")), combined, again, self.chance(50))

    # -- composites ------------------------------------------------------------------------

    def emit_norm(self) -> None:
        name = self.pick(("softmax", "layer_norm", "log_softmax", "rms_norm"))
        min_rank = 2 if name in ("layer_norm", "rms_norm") else 0
        x = self.tensor(
            lambda t: t.rank >= min_rank, dtypes=FLOATS, shape=lambda: self.shape(min_rank)
        )
        if x.rank < min_rank:
            return
        if name in ("softmax", "log_softmax"):
            axis = self.integer(-max(x.rank, 1), max(x.rank, 1) - 1)
            self.add(self.op(name, x.value, axis=axis))
            return
        begin = self.integer(1, x.rank - 1)
        width = numel(x.shape[begin:])
        epsilon = self.pick((1e-5, 1e-3, 0.1))
        if name == "layer_norm":
            scale = self.new_input((width,), x.dtype).value if self.chance(50) else None
            bias = self.new_input((width,), x.dtype).value if self.chance(50) else None
            out, mean, variance = self.op(
                "layer_norm", x.value, scale, bias, epsilon=epsilon, begin_norm_axis=begin
            )
            for value in (out, mean, variance):
                self.add(value)
            return
        normalized_shape = list(x.shape[begin:])
        scale = self.new_input(tuple(normalized_shape), x.dtype).value if self.chance(50) else None
        y, invvar = self.op(
            "rms_norm", x.value, scale, normalized_shape=normalized_shape, epsilon=epsilon
        )
        self.add(y)
        self.add(invvar)

    def emit_matmul(self) -> None:
        x = self.tensor(lambda t: t.rank in (1, 2, 3) and t.size > 0, dtypes=FLOATS)
        if x.rank not in (1, 2, 3):
            return
        transpose_x = x.rank >= 2 and self.chance(25)
        k = x.shape[-2] if transpose_x else x.shape[-1]
        m = numel(x.shape) // max(k, 1)
        n = self.pick((1, 3, 8, 33, 64))
        if m * k * n > MAX_MATMUL_FLOPS or max(k, m) * n > MAX_ELEMENTS:
            n = 1
        transpose_y = self.chance(25)
        y_shape: Shape = (n, k) if transpose_y else (k, n)
        if x.rank == 3 and self.chance(40) and x.shape[0] * k * n <= MAX_ELEMENTS:
            y_shape = (x.shape[0], *y_shape)
        if self.chance(10):
            y_shape, transpose_y = (k,), False
        y = self.new_input(y_shape, x.dtype)
        first, second = (x, y)
        out = self.op(
            "matmul", first.value, second.value, transpose_x=transpose_x, transpose_y=transpose_y
        )
        self.add(out)

    # -- graph shape -----------------------------------------------------------------------

    def emit_diamond(self) -> None:
        """Two branches from one value joined again."""
        x = self.tensor(dtypes=FLOATS)
        left = self.unary(self.pick(FLOAT_UNARY[:12]), x)
        right = self.unary(self.pick(FLOAT_UNARY[:12]), x)
        if left.dtype is right.dtype and broadcast(left.shape, right.shape) is not None:
            self.binary(self.pick(ARITHMETIC[:6]), left, right)

    def dynamic_dims(self) -> dict[str, set[int]]:
        """Dims of the inputs to declare -1 (compiled on the first run for the feeds'
        shapes, after `specialize_shapes`), now and then."""
        marks: dict[str, set[int]] = {}
        if not self.chance(25):
            return marks
        for spec in self.inputs:
            if spec.shape and spec.kind != "index" and self.chance(60):
                dims = {i for i in range(len(spec.shape)) if self.chance(50)}
                if dims:
                    marks[spec.name] = dims
        return marks

    def finish(self) -> None:
        """At least one op; in the `graph` family, sometimes fetch ops for the outputs and
        for some intermediates (values several ops read, each then a group output too).
        Where steps made secondary results (`self.secondary`), fetch ops for the other
        outputs and some of those, so that the rest are results nothing reads."""
        if not any(op.name != "pd_op.data" for op in self.program.block):
            x = self.tensor(dtypes=FLOATS)
            self.unary("relu", x)
        outputs = self.program.outputs()
        if self.secondary:
            main = [v for v in outputs if id(v) not in self.secondary]
            extra = [v for v in outputs if self.secondary.get(id(v)) and self.chance(30)]
            if not main and not extra:
                extra = [next(v for v in outputs if self.secondary.get(id(v)))]
            self.fetch(main + extra)
            return
        if self.family != "graph" or not self.chance(30):
            return
        inner = [
            t.value
            for t in self.pool
            if t.value.defining_op.name != "pd_op.data" and not t.value.use_empty()
        ]
        self.fetch(list(outputs) + [v for v in inner if self.chance(30)])

    def fetch(self, values: list[Value]) -> None:
        for col, value in enumerate(values):
            self.op("fetch", value, name=f"out{col}", col=col)


# ---- shapes ----------------------------------------------------------------------------------

FLOAT_UNARY = (
    "relu", "exp", "tanh", "sigmoid", "abs", "square", "sqrt", "log", "sin", "cos", "floor",
    "ceil", "round", "sign", "expm1", "log1p", "log2", "rsqrt", "reciprocal", "erf", "silu",
    "relu6", "hardswish", "tan", "gelu", "leaky_relu", "hardsigmoid", "pow", "scale", "clip",
    "isnan", "isinf", "isfinite", "logical_not",
)  # fmt: skip
INT_UNARY = (
    "relu", "abs", "sign", "square", "floor", "ceil", "round", "scale", "clip", "pow", "relu6",
    "reciprocal", "logical_not", "isnan", "isinf", "isfinite",
)  # fmt: skip
ARITHMETIC = (
    "add", "subtract", "multiply", "maximum", "minimum", "divide", "floor_divide", "remainder",
    "elementwise_pow",
)  # fmt: skip
COMPARE = ("less_than", "equal", "not_equal", "less_equal", "greater_than", "greater_equal")
LOGICAL = ("logical_and", "logical_or", "logical_xor")
REDUCE_OPS = ("sum", "max", "mean", "min", "prod", "all", "any")

INPUT_KINDS: dict[str, tuple[str, ...]] = {
    "elementwise": ("normal",) * 5 + ("special", "special", "halves", "extreme"),
    "cast": ("normal", "special", "extreme", "halves"),
    "reduce": ("normal",) * 5 + ("special", "halves"),
    "norm": ("normal",) * 5 + ("special",),
    "layout": ("normal",) * 4 + ("special",),
    "graph": ("normal",) * 6 + ("special", "halves"),
    "spatial": ("normal",) * 5 + ("special", "halves"),
    "attention": ("normal",) * 5 + ("special", "halves"),
}
"""Value kinds of new inputs per family. Extremes stay out of accumulating families: a
float32 sum of 1e38s overflows where the reference's float64 one does not."""

_LAYOUT = (
    "emit_reshape", "emit_transpose", "emit_slice", "emit_concat", "emit_split",
    "emit_squeeze", "emit_expand", "emit_gather", "emit_strided_slice", "emit_flatten",
    "emit_stack", "emit_embedding", "emit_tril", "emit_index_select", "emit_one_hot",
)  # fmt: skip

MENUS: dict[str, tuple[str, ...]] = {
    "elementwise": ("emit_unary", "emit_binary") * 3
    + ("emit_compare", "emit_where", "emit_constant", "emit_logical", "emit_cast", "emit_diamond"),
    "cast": ("emit_cast",) * 5 + ("emit_unary", "emit_binary", "emit_compare", "emit_where"),
    "reduce": ("emit_reduce", "emit_readback") * 2
    + ("emit_argreduce", "emit_unary", "emit_binary", "emit_compare", "emit_siblings")
    + ("emit_transpose", "emit_expand", "emit_reshape", "emit_slice"),
    "norm": ("emit_norm",) * 3 + ("emit_unary", "emit_binary", "emit_reduce", "emit_readback"),
    "layout": _LAYOUT + ("emit_unary", "emit_binary", "emit_reduce", "emit_readback"),
    "graph": (
        "emit_binary", "emit_unary", "emit_matmul", "emit_diamond", "emit_reduce",
        "emit_readback", "emit_norm", "emit_cast", "emit_where", "emit_compare",
        "emit_argreduce", "emit_matmul", "emit_siblings", "emit_embedding",
    ) + _LAYOUT,
    "spatial": (
        "emit_pool2d", "emit_interp", "emit_pool2d", "emit_batch_norm", "emit_spatial_norm",
        "emit_activation", "emit_conv", "emit_residual", "emit_max_pool_index", "emit_interp",
        "emit_pool2d", "emit_squeeze_excite", "emit_layout_swap", "emit_activation",
    ),
    "attention": (
        "emit_einsum", "emit_attention", "emit_swiglu", "emit_rms_norm_quant", "emit_sort",
        "emit_einsum", "emit_positions", "emit_expand_as", "emit_norm", "emit_unary",
        "emit_binary", "emit_matmul", "emit_reduce",
    ),
}  # fmt: skip
"""Each family's emitters; repeats weight them, the first is what a program shrinks to."""

FAMILIES: tuple[str, ...] = tuple(MENUS)

MAX_STEPS = {
    "elementwise": 8, "cast": 6, "reduce": 8, "norm": 6, "layout": 9, "graph": 12,
    "spatial": 7, "attention": 7,
}  # fmt: skip


@st.composite
def _step(draw: Callable[[st.SearchStrategy[Any]], Any], maker: Maker, menu: Sequence[str]) -> str:
    """One step of `maker`'s program: an emitter of `menu`, drawing through `draw`."""
    outer, maker._draw = maker._draw, draw
    try:
        emitter = draw(st.sampled_from(menu))
        getattr(maker, emitter)()
    finally:
        maker._draw = outer
    return emitter


@st.composite
def programs(
    draw: Callable[[st.SearchStrategy[Any]], Any], family: str, avoid: frozenset[str] | None = None
) -> FuzzCase:
    """A random valid program of `family` with its feed seed (see the module docstring);
    `avoid` defaults to the switches of `fuzz_bugs.avoided_bugs()`."""
    maker = Maker(draw, family, avoided_bugs() if avoid is None else avoid)
    # Each step is a list element, so the shrinker can delete any step whole.
    draw(st.lists(_step(maker, MENUS[family]), min_size=1, max_size=MAX_STEPS[family]))
    maker.finish()
    program = with_dynamic_dims(maker.program, maker.dynamic_dims()) or maker.program
    seed = draw(st.integers(0, 2**32 - 1))
    return FuzzCase(family, program, tuple(maker.inputs), seed)


def with_dynamic_dims(program: Program, marks: dict[str, set[int]]) -> Program | None:
    """A copy of `program` whose inputs declare the dims `marks` names as -1, every
    result type inferred again (as Paddle would have declared them); None when there is
    nothing to mark or some op's declaration cannot take the unknown dims."""
    if not marks:
        return None
    copy = program.clone()
    try:
        for op in copy.block:
            if op.name == "pd_op.data":
                declared = op.result(0).tensor_type
                dims = [
                    DYNAMIC if i in marks.get(op.attr("name"), ()) else d
                    for i, d in enumerate(declared.dims)
                ]
                op.set_attribute("shape", make_attribute(IntArrayAttribute, dims))
                op.result(0).type = declared.with_dims(tuple(dims))
                continue
            op_def = op.op_def
            if op_def is None or op_def.infer_meta is None:
                continue
            if op.name == "pd_op.squeeze" and DYNAMIC in op.operand_value(0).tensor_type.dims:
                return None  # whether a -1 dim is squeezed is known only at run time
            for result, type_ in zip(
                op.results, op_def.infer_meta(InferContext.of(op)), strict=True
            ):
                result.type = type_
        verify_program(copy)
    except CinnError:
        return None
    return copy


def op_names(case: FuzzCase) -> list[str]:
    """The ops of `case`'s program, in order (data inputs and constants left out)."""
    skip = {"pd_op.data", "pd_op.full_int_array", "pd_op.fetch"}
    return [op.name for op in case.program.block if op.name not in skip]


__all__ = ["DIMS", "FAMILIES", "MAX_ELEMENTS", "Maker", "op_names", "programs"]
