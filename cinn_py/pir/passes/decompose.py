"""Decompose composite ops into primitive pd_ops, so that their parts can fuse.

A softmax is a reduction, a broadcast subtract, an exp, a second reduction and a divide;
kept whole it is one opaque kernel, split it lets the elementwise parts fuse with their
neighbours (CINN's "prim" decomposition does the same before fusion). Each rule builds
the primitives at the composite's position, replaces the composite's results and erases
it; the numbers follow `cinn_py/reference_ops` (the oracle): softmax and log_softmax
clip `x - max` at -64 as Paddle's kernel does, mean truncates for integers, layer_norm's
variance is the biased one, computed in one pass as E[x^2] - E[x]^2 (clamped at 0).

float16 and bfloat16 composites are computed in float32 (cast in, cast out), as the
reference and Paddle compute them, so the result is rounded once. Constants are 0-D
`pd_op.full` ops (a 0-D operand broadcasts against any rank, also a 0-D one). A mean
over a dim unknown until run time (-1) has no constant count and stays whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from cinn_py.pir.builder import Builder
from cinn_py.pir.constant import constant_of
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.types import DYNAMIC, DenseTensorType
from cinn_py.pir.value import Value

SOFTMAX_SHIFT_FLOOR = -64.0
"""Paddle clips `x - max(x)` here before `exp` (see reference_ops/nn.py)."""

_SIXTEEN_BIT = (DataType.FLOAT16, DataType.BFLOAT16)


def decompose_composites(program: Program) -> int:
    """Replace every composite op the rules know with primitives; returns how many."""
    decomposed = 0
    for op in list(program.block):
        rule = RULES.get(op.name)
        if rule is None:
            continue
        emit = _Emitter(program, op)
        results = rule(emit, op)
        if results is None:
            continue
        for old, new in zip(op.results, results, strict=True):
            replace_value(program, old, new)
        op.erase()
        decomposed += 1
    return decomposed


def replace_value(program: Program, old: Value, new: Value) -> None:
    """Every use of `old`, its place among the pinned outputs and its printed number
    taken by `new` (recorded in `program.renumbered`), so a fetch of the old number
    still finds it."""
    old.replace_all_uses_with(new)
    if old.id_hint is not None and new.id_hint is None:
        new.id_hint = old.id_hint  # a value made by the pass takes the number it replaces
    if old.id_hint is not None:
        program.renumbered[old.id_hint] = new
    for number, value in program.renumbered.items():
        if value is old:
            program.renumbered[number] = new
    if program.pinned_outputs is not None:
        program.pinned_outputs = [new if v is old else v for v in program.pinned_outputs]


class _Emitter:
    """Builds primitives before the composite `op`, in its compute dtype, carrying its
    location and stop_gradient flag."""

    def __init__(self, program: Program, op: Operation) -> None:
        self.builder = Builder(program)
        self.builder.set_insertion_point(op)
        self.builder.loc = op.loc
        flags = op.attr("stop_gradient")
        self.stop_gradient = None if flags is None else [all(flags)]
        x = op.operand_value(0)
        self.x_type = x.type if x is not None else None

    def op(self, name: str, *operands: Value | None, **attributes: object) -> Value:
        if self.stop_gradient is not None:
            attributes["stop_gradient"] = self.stop_gradient
        result = self.builder.op(name, *operands, **attributes)
        assert not isinstance(result, tuple), f"{name} has one result"
        return result

    def const(self, value: float, dtype: DataType) -> Value:
        return self.op("pd_op.full", shape=[], value=float(value), dtype=dtype)

    def cast(self, x: Value, dtype: DataType) -> Value:
        if _dtype(x) is dtype:
            return x
        return self.op("pd_op.cast", x, dtype=dtype)

    def sum(self, x: Value, axes: Sequence[int], keepdim: bool = True) -> Value:
        return self.op("pd_op.sum", x, None, axis=list(axes), keepdim=keepdim)

    def mean(self, x: Value, axes: Sequence[int], count: int) -> Value:
        """The keepdim mean over `axes`, which hold `count` elements."""
        return self.op("pd_op.divide", self.sum(x, axes), self.const(count, _dtype(x)))


def _dtype(value: Value) -> DataType:
    type_ = value.type
    assert isinstance(type_, DenseTensorType)
    return type_.data_type


def _compute_dtype(value: Value) -> DataType:
    dtype = _dtype(value)
    return DataType.FLOAT32 if dtype in _SIXTEEN_BIT else dtype


def _float_input(op: Operation) -> Value | None:
    x = op.operand_value(0)
    if x is None or not isinstance(x.type, DenseTensorType) or not x.type.data_type.is_float:
        return None
    return x


def _computed_input(emit: _Emitter, op: Operation) -> tuple[Value, DataType] | None:
    """The op's float input cast to its compute dtype, and that dtype; None when the
    input is not a float tensor (the rule then leaves the op whole)."""
    x = _float_input(op)
    if x is None:
        return None
    dtype = _compute_dtype(x)
    return emit.cast(x, dtype), dtype


def _count(dims: Sequence[int]) -> int | None:
    """How many elements `dims` hold; None if one is unknown."""
    if DYNAMIC in dims:
        return None
    return math.prod(dims)


Rule = Callable[[_Emitter, Operation], list[Value] | None]


def _shifted(emit: _Emitter, op: Operation) -> tuple[Value, Value, list[int]] | None:
    """(x in the compute dtype, max(x - max x, -64), the reduced axes) for softmax."""
    operand = _computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    axes = [op.attr("axis", -1)] if xc.type.rank else []
    top = emit.op("pd_op.max", xc, None, axis=axes, keepdim=True)
    diff = emit.op("pd_op.subtract", xc, top)
    shifted = emit.op("pd_op.maximum", diff, emit.const(SOFTMAX_SHIFT_FLOOR, dtype))
    return xc, shifted, axes


def _softmax(emit: _Emitter, op: Operation) -> list[Value] | None:
    parts = _shifted(emit, op)
    if parts is None:
        return None
    _, shifted, axes = parts
    e = emit.op("pd_op.exp", shifted)
    out = emit.op("pd_op.divide", e, emit.sum(e, axes))
    return [emit.cast(out, _dtype(op.result()))]


def _log_softmax(emit: _Emitter, op: Operation) -> list[Value] | None:
    parts = _shifted(emit, op)
    if parts is None:
        return None
    _, shifted, axes = parts
    total = emit.sum(emit.op("pd_op.exp", shifted), axes)
    out = emit.op("pd_op.subtract", shifted, emit.op("pd_op.log", total))
    return [emit.cast(out, _dtype(op.result()))]


def _normalized(emit: _Emitter, x: Value, begin: int) -> tuple[Value, list[int], int] | None:
    """(x in the compute dtype, the normalized axes from `begin` on, their element count)."""
    dims = x.type.dims
    count = _count(dims[begin:])
    if count is None:
        return None
    return emit.cast(x, _compute_dtype(x)), list(range(begin, len(dims))), count


def _leading(emit: _Emitter, stat: Value, begin: int, dtype: DataType) -> Value:
    """A keepdim statistic as the op declares it: only the `begin` leading dims."""
    kept = emit.op("pd_op.reshape", stat, None, shape=[0] * begin)
    return emit.cast(kept, dtype)


def _weight(emit: _Emitter, weight: Value, dims: Sequence[int], dtype: DataType) -> Value:
    """A per-element scale or bias, shaped like the normalized dims, in `dtype`."""
    if weight.type.dims != tuple(dims):
        weight = emit.op("pd_op.reshape", weight, None, shape=list(dims))
    return emit.cast(weight, dtype)


def _layer_norm(emit: _Emitter, op: Operation) -> list[Value] | None:
    x = _float_input(op)
    if x is None:
        return None
    begin = op.attr("begin_norm_axis", 1) % x.type.rank
    parts = _normalized(emit, x, begin)
    if parts is None:
        return None
    xc, axes, count = parts
    dtype = _dtype(xc)
    # Mean and variance in one pass: two sibling sums of x (x and x * x) that the row
    # schedule walks and combines together, variance = E[x^2] - E[x]^2 clamped at 0, as
    # Paddle's own CUDA kernel computes it. Cancellation costs digits of the variance
    # when |mean| is much larger than the deviation (see docs/AUTO_SCHEDULE.md);
    # a layer norm written by hand as mean((x - mean)^2) compiles as written.
    mean = emit.mean(xc, axes, count)
    mean_of_squares = emit.mean(emit.op("pd_op.square", xc), axes, count)
    spread = emit.op("pd_op.subtract", mean_of_squares, emit.op("pd_op.square", mean))
    variance = emit.op("pd_op.maximum", spread, emit.const(0.0, dtype))
    centered = emit.op("pd_op.subtract", xc, mean)
    shifted = emit.op("pd_op.add", variance, emit.const(op.attr("epsilon", 1e-5), dtype))
    out = emit.op("pd_op.multiply", centered, emit.op("pd_op.rsqrt", shifted))
    norm_dims = x.type.dims[begin:]
    scale, bias = op.operand_value(1), op.operand_value(2)
    if count == 0:  # empty rows: `out` is empty, and a reshape to a 0 dim would copy a dim
        scale = bias = None
    if scale is not None:
        out = emit.op("pd_op.multiply", out, _weight(emit, scale, norm_dims, dtype))
    if bias is not None:
        out = emit.op("pd_op.add", out, _weight(emit, bias, norm_dims, dtype))
    return [
        emit.cast(out, _dtype(op.result(0))),
        _leading(emit, mean, begin, _dtype(op.result(1))),
        _leading(emit, variance, begin, _dtype(op.result(2))),
    ]


def _rms_norm(emit: _Emitter, op: Operation) -> list[Value] | None:
    x = _float_input(op)
    if x is None:
        return None
    begin = x.type.rank - len(op.attr("normalized_shape", []))
    parts = _normalized(emit, x, begin)
    if parts is None:
        return None
    xc, axes, count = parts
    dtype = _dtype(xc)
    mean_square = emit.mean(emit.op("pd_op.square", xc), axes, count)
    shifted = emit.op("pd_op.add", mean_square, emit.const(op.attr("epsilon", 1e-5), dtype))
    invvar = emit.op("pd_op.rsqrt", shifted)
    out = emit.op("pd_op.multiply", xc, invvar)
    scale = op.operand_value(1)
    if scale is not None:
        out = emit.op("pd_op.multiply", out, emit.cast(scale, dtype))
    return [
        emit.cast(out, _dtype(op.result(0))),
        _leading(emit, invvar, begin, _dtype(op.result(1))),
    ]


def _gelu(emit: _Emitter, op: Operation) -> list[Value] | None:
    """Exact: x/2 (1 + erf(x / sqrt 2)); approximate: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    operand = _computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    if op.attr("approximate", False):
        cube = emit.op("pd_op.multiply", emit.op("pd_op.multiply", xc, xc), xc)
        inner = emit.op(
            "pd_op.add", xc, emit.op("pd_op.multiply", cube, emit.const(0.044715, dtype))
        )
        scaled = emit.op("pd_op.multiply", inner, emit.const(math.sqrt(2 / math.pi), dtype))
        curve = emit.op("pd_op.tanh", scaled)
    else:
        scaled = emit.op("pd_op.multiply", xc, emit.const(math.sqrt(0.5), dtype))
        curve = emit.op("pd_op.erf", scaled)
    one_plus = emit.op("pd_op.add", curve, emit.const(1.0, dtype))
    out = emit.op("pd_op.multiply", emit.op("pd_op.multiply", xc, one_plus), emit.const(0.5, dtype))
    return [emit.cast(out, _dtype(op.result()))]


def _silu(emit: _Emitter, op: Operation) -> list[Value] | None:
    """x / (1 + exp(-x)), as the reference writes it (silu(-inf) is NaN)."""
    operand = _computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    e = emit.op("pd_op.exp", emit.op("pd_op.multiply", xc, emit.const(-1.0, dtype)))
    out = emit.op("pd_op.divide", xc, emit.op("pd_op.add", e, emit.const(1.0, dtype)))
    return [emit.cast(out, _dtype(op.result()))]


def _hardswish(emit: _Emitter, op: Operation) -> list[Value] | None:
    """x * min(max(x + 3, 0), 6) / 6."""
    operand = _computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    six = emit.const(6.0, dtype)
    shifted = emit.op("pd_op.add", xc, emit.const(3.0, dtype))
    gate = emit.op("pd_op.minimum", emit.op("pd_op.maximum", shifted, emit.const(0.0, dtype)), six)
    out = emit.op("pd_op.divide", emit.op("pd_op.multiply", xc, gate), six)
    return [emit.cast(out, _dtype(op.result()))]


def _hardsigmoid(emit: _Emitter, op: Operation) -> list[Value] | None:
    """min(max(x * slope + offset, 0), 1)."""
    operand = _computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    line = emit.op("pd_op.multiply", xc, emit.const(op.attr("slope", 0.2), dtype))
    line = emit.op("pd_op.add", line, emit.const(op.attr("offset", 0.5), dtype))
    low = emit.op("pd_op.maximum", line, emit.const(0.0, dtype))
    out = emit.op("pd_op.minimum", low, emit.const(1.0, dtype))
    return [emit.cast(out, _dtype(op.result()))]


def _mean(emit: _Emitter, op: Operation) -> list[Value] | None:
    """sum / count. Floats sum in their compute dtype (an empty mean is 0 / 0 = NaN);
    integers in int64 and divide truncating (pd_op.divide of integers does) by at least
    1, then cast back, as the reference does."""
    x = op.operand_value(0)
    if x is None or not isinstance(x.type, DenseTensorType):
        return None
    dtype = x.type.data_type
    if not (dtype.is_float or dtype.is_integer):
        return None
    axes = _reduce_axes(op)
    if axes is None:
        return None
    dims = x.type.dims
    reduced = [a % len(dims) for a in axes] if axes and dims else list(range(len(dims)))
    count = _count([dims[a] for a in set(reduced)])
    if count is None:
        return None
    wide = _compute_dtype(x) if dtype.is_float else DataType.INT64
    keepdim = op.attr("keepdim", False)
    total = emit.sum(emit.cast(x, wide), axes, keepdim)
    divisor = count if dtype.is_float else max(count, 1)
    out = emit.op("pd_op.divide", total, emit.const(divisor, wide))
    return [emit.cast(out, _dtype(op.result()))]


def _reduce_axes(op: Operation) -> list[int] | None:
    """A reduction's axes, from its folded attribute or its constant operand."""
    if "axis" in op.attributes:
        axes = op.attr("axis")
    else:
        operand = op.operand_value(1)
        axes = None if operand is None else constant_of(operand)
    if axes is None:
        return None
    return [int(a) for a in axes] if isinstance(axes, list) else [int(axes)]


RULES: dict[str, Rule] = {
    "pd_op.softmax": _softmax,
    "pd_op.log_softmax": _log_softmax,
    "pd_op.layer_norm": _layer_norm,
    "pd_op.rms_norm": _rms_norm,
    "pd_op.gelu": _gelu,
    "pd_op.silu": _silu,
    "pd_op.hardswish": _hardswish,
    "pd_op.hardsigmoid": _hardsigmoid,
    "pd_op.mean": _mean,
}
"""Each composite op and the rule that decomposes it (None from a rule: left whole)."""

COMPOSITE_OPS = frozenset(RULES)
