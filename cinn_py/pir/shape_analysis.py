"""Symbolic shape analysis (CINN's shape dialect, first piece of issue 18).

Every -1 dim of a `pd_op.data` feed gets a symbol (`S0 = x.shape[0]`); the ops are walked
in program order and each tensor value's dims computed as `DimExpr`s. Broadcasting,
matmul's contracting dims, concat's other dims and reshape's element count add
*constraints* between them: equalities, "equal or one is 1" for a broadcast, and
"divides" where a reshape's -1 dim is a floor-div. Equalities between symbols join
them in a union-find, so `S3 == S1` makes S1 stand for both from then on.

Shapes the program computes are evaluated symbolically: `shape` / `shape64` of a
tensor is a *shape value* whose elements are its dims, and slices, stacks, combines,
casts, arithmetic and `full_int_array` of those stay shape values, read by reshape,
expand, full_with_tensor and arange. An op no rule models gets a fresh symbol for each
-1 dim of its declared type ("unknown: from pd_op.arange (%12)"), never an error.

The rules are the ops' own: an entry's `symbolic_meta` (a `Rule`: its results' shapes)
and `symbolic_value` (a `ValueRule`: its result as a shape value) name functions of this
module, as `infer_meta` names those of `infer_meta.py`. An entry without `symbolic_meta`
is covered by its pattern (ELEMENTWISE broadcasts) or trait (PROGRAM_OUTPUT passes its
operand through), or gets fresh symbols.

`check_feed_constraints(program, feed_shapes)` evaluates the constraints for the
feeds' dims and raises `FeedConstraintError` (a FeedError) naming the feeds, their
dims and the op that requires it: what `CompiledProgram` does before it compiles a
new feed shape. `cinn-py groups --symbolic` prints `ShapeAnalysis.report()`.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cinn_py.errors import FeedConstraintError
from cinn_py.pir.constant import constant_of
from cinn_py.pir.dim_expr import (
    Const,
    DimExpr,
    FloorDiv,
    Sym,
    broadcast,
    const,
    dim_max,
    dim_min,
)
from cinn_py.pir.op_def import REQUIRED, InferContext, attr_value
from cinn_py.pir.operation import Operation
from cinn_py.pir.printer import ValueNames
from cinn_py.pir.program import Program
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import DYNAMIC, DenseTensorType, VectorType
from cinn_py.pir.value import Value

Shape = tuple[DimExpr, ...]

_UNBOUNDED_END = 2**31 - 1
"""A slice end at or past this means "to the end" (Paddle writes INT_MAX, or INT64_MAX)."""


class Kind(enum.Enum):
    """What a constraint requires of its two sides."""

    EQUAL = "=="
    BROADCAST = "broadcastable"
    """Equal, or one of them is 1."""
    DIVIDES = "divides"
    """lhs divides rhs (a reshape's -1 dim)."""


@dataclass(frozen=True)
class Constraint:
    kind: Kind
    lhs: DimExpr
    rhs: DimExpr
    op: str
    """The op that requires it and its result (`pd_op.add (%85)`)."""
    why: str

    def holds(self, binding: Mapping[Sym, int]) -> bool | None:
        """Whether it holds for `binding`; None where a symbol it reads is unbound."""
        if not (self.lhs.symbols() | self.rhs.symbols()) <= binding.keys():
            return None
        try:
            a, b = self.lhs.evaluate(binding), self.rhs.evaluate(binding)
        except (ValueError, ZeroDivisionError):
            return None  # a broadcast inside that an earlier constraint refuses
        if self.kind is Kind.EQUAL:
            return a == b
        if self.kind is Kind.BROADCAST:
            return a == b or 1 in (a, b)
        return a != 0 and b % a == 0

    def describe(self, namer: Callable[[Sym], str] | None = None) -> str:
        lhs, rhs = self.lhs.to_str(namer), self.rhs.to_str(namer)
        if self.kind is Kind.BROADCAST:
            return f"{lhs} == {rhs} or one of them is 1"
        if self.kind is Kind.DIVIDES:
            return f"{lhs} divides {rhs}"
        return f"{lhs} == {rhs}"

    def __str__(self) -> str:
        return f"{self.describe()}  [{self.op}: {self.why}]"


@dataclass(frozen=True)
class SymbolSource:
    """Where a symbol comes from: a feed's dim, or an op no rule models."""

    feed: str | None
    axis: int | None
    note: str

    def __str__(self) -> str:
        return self.note


class _Unmodeled(Exception):
    """A rule met something it does not model: the op's -1 dims become fresh symbols."""


class ShapeAnalysis:
    """The symbols, each value's symbolic shape and the constraints of one program."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.names = ValueNames(program)
        self.symbols: dict[Sym, SymbolSource] = {}
        self.constraints: list[Constraint] = []
        self._shapes: dict[int, Shape] = {}
        self._values: dict[int, Shape] = {}
        """Shape values: the elements of an integer tensor the program computes from shapes."""
        self._vectors: dict[int, list[Shape | None]] = {}
        self._parent: dict[Sym, DimExpr] = {}
        self._feeds: set[int] = set()
        for op in program.block:
            self._visit(op)

    # ---- queries ---------------------------------------------------------------------

    def shape(self, value: Value) -> Shape | None:
        """The value's dims (symbols replaced by their representatives), None for a
        value that is not a tensor."""
        shape = self._shapes.get(id(value))
        return None if shape is None else tuple(self.canon(d) for d in shape)

    def shape_value(self, value: Value) -> Shape | None:
        """The elements of an integer tensor computed from shapes, if known."""
        return self._values.get(id(value))

    def find(self, symbol: Sym) -> DimExpr:
        """The representative of `symbol`'s class (a symbol or a constant)."""
        parent = self._parent.get(symbol)
        if parent is None:
            return symbol
        if isinstance(parent, Sym):
            root = self.find(parent)
            self._parent[symbol] = root
            return root
        return parent

    def canon(self, expr: DimExpr) -> DimExpr:
        symbols = expr.symbols()
        if not symbols:
            return expr
        return expr.substitute({s: self.find(s) for s in symbols})

    def feed_symbols(self) -> dict[Sym, tuple[str, int]]:
        return {
            s: (src.feed, src.axis)
            for s, src in self.symbols.items()
            if src.feed is not None and src.axis is not None
        }

    def check(self, feed_shapes: Mapping[str, Sequence[int]]) -> None:
        """Raise FeedConstraintError for the first constraint the feeds' dims break."""
        binding: dict[Sym, int] = {}
        for symbol, (feed, axis) in self.feed_symbols().items():
            dims = feed_shapes.get(feed)
            if dims is not None and axis < len(dims):
                binding[symbol] = int(dims[axis])
        for constraint in self.constraints:
            if constraint.holds(binding) is False:
                raise self._violation(constraint, binding, feed_shapes)

    def _violation(
        self,
        constraint: Constraint,
        binding: Mapping[Sym, int],
        feed_shapes: Mapping[str, Sequence[int]],
    ) -> FeedConstraintError:
        sources = self.feed_symbols()

        def name(symbol: Sym) -> str:
            feed, axis = sources[symbol]
            return f"{feed}.shape[{axis}]"

        def side(expr: DimExpr) -> str:
            text = expr.to_str(name)
            return text if expr.is_const else f"{text} ({expr.evaluate(binding)})"

        feeds: dict[str, tuple[int, ...]] = {}
        for expr in (constraint.lhs, constraint.rhs):
            for symbol in sorted(expr.symbols(), key=lambda s: s.index):
                feed = sources[symbol][0]
                feeds.setdefault(feed, tuple(int(d) for d in feed_shapes[feed]))
        lhs, rhs = side(constraint.lhs), side(constraint.rhs)
        if constraint.kind is Kind.EQUAL:
            needs = f"{lhs} == {rhs}"
        elif constraint.kind is Kind.BROADCAST:
            needs = f"{lhs} == {rhs}, or one of them 1"
        else:
            needs = f"{lhs} to divide {rhs}"
        return FeedConstraintError(feeds, f"{constraint.op} requires {needs} ({constraint.why})")

    def report(self) -> str:
        """The symbols (where each comes from, and its representative), the symbolic
        shapes of the feeds, the outputs and every value with a -1 dim, and the
        constraints: what `cinn-py groups --symbolic` prints."""
        lines = ["symbols:"]
        for symbol, source in self.symbols.items():
            rep = self.find(symbol)
            same = f"  (same as {rep})" if rep != symbol else ""
            lines.append(f"  {symbol} = {source}{same}")
        if not self.symbols:
            lines.append("  none: every dim is static")
        lines.append("shapes:")
        outputs = {id(v) for v in self.program.outputs()}
        for op in self.program.block:
            for result in op.results:
                shape = self.shape(result)
                if shape is None:
                    continue
                dynamic = DYNAMIC in result.type.dims
                if dynamic or id(result) in self._feeds or id(result) in outputs:
                    dims = ", ".join(str(d) for d in shape)
                    lines.append(f"  {self.names(result)} = {op.name}: [{dims}]")
        lines.append("constraints:")
        lines.extend(f"  {c}" for c in self.constraints)
        if not self.constraints:
            lines.append("  none")
        return "\n".join(lines) + "\n"

    # ---- the walk --------------------------------------------------------------------

    def _visit(self, op: Operation) -> None:
        op_def = op.op_def
        rule = (op_def is not None and op_def.symbolic_meta) or _generic_rule(op)
        shapes: list[Shape | None] = []
        if rule is not None:
            try:
                shapes = list(rule(self, op) or [])
            except (_Unmodeled, KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
                shapes = []  # unmodeled, or malformed past what the verifier checks
        for i, result in enumerate(op.results):
            got = shapes[i] if i < len(shapes) else None
            if isinstance(result.type, DenseTensorType):
                self._shapes[id(result)] = self._settle(op, result, got)
            elif isinstance(result.type, VectorType) and id(result) not in self._vectors:
                self._vectors[id(result)] = [None] * len(result.type.types)
        if op.num_results == 1 and isinstance(op.result().type, DenseTensorType):
            try:
                value = _value_rule(self, op)
            except (_Unmodeled, KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
                value = None
            if value is not None:
                self._values[id(op.result())] = tuple(value)

    def _settle(self, op: Operation, result: Value, got: Shape | None) -> Shape:
        """The result's dims: the rule's, reconciled with the declared type (a static
        declared dim binds the rule's expression to it); a -1 dim no rule gave is a
        fresh symbol."""
        declared = result.type.dims
        if got is None or len(got) != len(declared):
            return tuple(
                self._fresh(op, result, i) if d == DYNAMIC else Const(d)
                for i, d in enumerate(declared)
            )
        out = []
        for i, (d, e) in enumerate(zip(declared, got, strict=True)):
            e = self.canon(e)
            if d != DYNAMIC and e != Const(d) and e.symbols():
                self.require(Kind.EQUAL, e, Const(d), op, f"its declared dim {i} is {d}")
                e = Const(d)
            out.append(e)
        return tuple(out)

    def _fresh(self, op: Operation, result: Value, axis: int) -> Sym:
        symbol = Sym(len(self.symbols))
        where = f"{self.names(result)}.shape[{axis}]"
        self.symbols[symbol] = SymbolSource(None, None, f"unknown: from {op.name} ({where})")
        return symbol

    def feed(self, op: Operation) -> Shape | None:
        """A feed's dims: a symbol for each -1 dim, named after the feed's dim."""
        result = op.result()
        if not isinstance(result.type, DenseTensorType):
            return None
        name = str(op.attr("name"))
        dims: list[DimExpr] = []
        for axis, d in enumerate(result.type.dims):
            if d == DYNAMIC:
                symbol = Sym(len(self.symbols))
                self.symbols[symbol] = SymbolSource(name, axis, f"{name}.shape[{axis}]")
                dims.append(symbol)
            else:
                dims.append(Const(d))
        self._feeds.add(id(result))
        return tuple(dims)

    def require(self, kind: Kind, lhs: DimExpr, rhs: DimExpr, op: Operation, why: str) -> None:
        """Record a constraint (unless it holds trivially); an equality with a symbol
        side joins the symbol's class."""
        lhs, rhs = self.canon(lhs), self.canon(rhs)
        if lhs == rhs or (kind is Kind.BROADCAST and Const(1) in (lhs, rhs)):
            return
        if kind is Kind.DIVIDES and (lhs == Const(1) or _divides(lhs, rhs)):
            return
        if not (lhs.symbols() or rhs.symbols()):
            raise _Unmodeled(f"constants {lhs} and {rhs} break {kind.value}")
        where = f"{op.name} ({', '.join(self.names(r) for r in op.results)})"
        self.constraints.append(Constraint(kind, lhs, rhs, where, why))
        if kind is Kind.EQUAL:
            self._join(lhs, rhs)

    def _join(self, a: DimExpr, b: DimExpr) -> None:
        if isinstance(b, Sym) and not isinstance(a, Sym):
            a, b = b, a
        if not isinstance(a, Sym):
            return
        if isinstance(b, Sym):
            low, high = sorted((a, b), key=lambda s: s.index)
            self._parent[high] = low
        elif isinstance(b, Const) or (self.symbols[a].feed is None and a not in b.symbols()):
            self._parent[a] = b

    # ---- helpers for the rules -------------------------------------------------------

    def operand_shape(self, op: Operation, index: int) -> Shape:
        value = op.operand_value(index)
        shape = None if value is None else self.shape(value)
        if shape is None:
            raise _Unmodeled("operand has no shape")
        return shape

    def vector(self, op: Operation, index: int) -> list[Shape]:
        value = op.operand_value(index)
        items = None if value is None else self._vectors.get(id(value))
        if items is None:
            if value is not None and id(value) in self._shapes:
                return [self.shape(value)]
            raise _Unmodeled("operand is not a vector of shapes")
        if any(item is None for item in items):
            raise _Unmodeled("a vector item has no shape")
        return [tuple(self.canon(d) for d in item) for item in items]

    def ints(self, op: Operation, key: str) -> list[DimExpr]:
        """A mutable IntArray / Scalar operand as dims: its folded attribute, its
        constant, or the shape value it reads."""
        spec = op.op_def.operands[op.op_def.operand_index(key)]
        if spec.mutable_attr and spec.mutable_attr in op.attributes:
            return _as_dims(op.attributes[spec.mutable_attr].to_python())
        value = op.operand_value(op.op_def.operand_index(key))
        if value is None:
            raise _Unmodeled(f"no {key}")
        known = self._values.get(id(value))
        if known is not None:
            return [self.canon(d) for d in known]
        return _as_dims(constant_of(value))

    def broadcast_shapes(self, op: Operation, shapes: Sequence[Shape]) -> Shape:
        rank = max(len(s) for s in shapes)
        padded = [(Const(1),) * (rank - len(s)) + tuple(s) for s in shapes]
        out = []
        for axis in range(rank):
            dims = [s[axis] for s in padded]
            for other in dims[1:]:
                self.require(Kind.BROADCAST, dims[0], other, op, f"broadcast at axis {axis}")
            try:
                out.append(broadcast(*dims))
            except ValueError as error:
                raise _Unmodeled(str(error)) from None
        return tuple(out)


def _divides(lhs: DimExpr, rhs: DimExpr) -> bool:
    """Whether `lhs` divides `rhs` whatever the symbols are: (rhs // lhs) * lhs == rhs."""
    quotient = rhs // lhs
    return not isinstance(quotient, FloorDiv) and quotient * lhs == rhs


def _as_dims(constant: object) -> list[DimExpr]:
    if constant is None:
        raise _Unmodeled("not a constant")
    items = constant if isinstance(constant, (list, tuple)) else [constant]
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(_as_dims(item))
            continue
        number = float(item)
        if not math.isfinite(number) or not number.is_integer():
            raise _Unmodeled(f"{item} is not an integer")
        out.append(const(int(number)))
    return out


def _product(dims: Sequence[DimExpr]) -> DimExpr:
    out: DimExpr = Const(1)
    for d in dims:
        out = out * d
    return out


def _attr(op: Operation, name: str, default: object = None) -> object:
    """The attribute's value, else its declared default, else `default`."""
    value = attr_value(op.op_def, op.attributes, name)
    return default if value is REQUIRED else value


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise _Unmodeled(f"axis {axis} out of range")
    return axis + rank if axis < 0 else axis


# ---- tensor rules: op -> its results' shapes -----------------------------------------

Rule = Callable[[ShapeAnalysis, Operation], "Sequence[Shape | None] | None"]
"""An op's `symbolic_meta`: its results' shapes (None for a result it does not model;
`_Unmodeled` and malformed ops: the declared dims, each -1 a fresh symbol). The rules
below are set in the ops' entries (`cinn_py/ops/`), as infer_meta functions are."""


def feed_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape | None]:
    """pd_op.data: a symbol for each -1 dim (`S0 = x.shape[0]`)."""
    return [sa.feed(op)]


def same_as_first(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    return [sa.operand_shape(op, 0)] * op.num_results


def _elementwise(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    shapes = []
    for spec, value in zip(op.op_def.operands, op.operand_values(), strict=False):
        if spec.mutable_attr is None and value is not None and id(value) in sa._shapes:
            shapes.append(sa.shape(value))
    if not shapes:
        raise _Unmodeled("no tensor operand")
    return [sa.broadcast_shapes(op, shapes)]


def _generic_rule(op: Operation) -> Rule | None:
    op_def = op.op_def
    if op_def is not None and op_def.pattern is OpPatternKind.ELEMENTWISE:
        return _elementwise
    if op_def is not None and op_def.has_trait(Trait.PROGRAM_OUTPUT):
        return same_as_first
    return None


def matmul_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x, y = list(sa.operand_shape(op, 0)), list(sa.operand_shape(op, 1))
    if not x or not y:
        raise _Unmodeled("0-D matmul operand")
    x_vec, y_vec = len(x) == 1, len(y) == 1
    x = [Const(1), *x] if x_vec else x
    y = [*y, Const(1)] if y_vec else y
    if op.attr("transpose_x", False):
        x[-2], x[-1] = x[-1], x[-2]
    if op.attr("transpose_y", False):
        y[-2], y[-1] = y[-1], y[-2]
    sa.require(Kind.EQUAL, x[-1], y[-2], op, "matmul's contracting dims")
    batch = sa.broadcast_shapes(op, [tuple(x[:-2]), tuple(y[:-2])]) if len(x) + len(y) > 4 else ()
    out = [*batch, *(() if x_vec else (x[-2],)), *(() if y_vec else (y[-1],))]
    return [tuple(out)]


def reshape_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x = sa.operand_shape(op, 0)
    target = sa.ints(op, "shape")
    if Const(0) in x:
        # An empty input: Paddle reads a 0 of the shape as a 0 dim, not a copy, and
        # infers -1 from the nonzero dims (`manipulation.reshape_dims`); no element
        # count to keep. Left to the static rule at each signature.
        raise _Unmodeled("reshape of a tensor with a 0 dim")
    out: list[DimExpr] = []
    inferred = None
    for i, t in enumerate(target):
        if t == Const(0):
            if i >= len(x):
                raise _Unmodeled("reshape's 0 past the input's rank")
            out.append(x[i])
        elif t == Const(-1):
            inferred = i
            out.append(Const(-1))
        else:
            out.append(t)
    total = _product(x)
    if inferred is None:
        sa.require(Kind.EQUAL, _product(out), total, op, "reshape keeps the element count")
        return [tuple(out)]
    known = _product(out[:inferred] + out[inferred + 1 :])
    sa.require(Kind.DIVIDES, known, total, op, "reshape's -1 dim")
    out[inferred] = total // known
    return [tuple(out)]


def transpose_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x = sa.operand_shape(op, 0)
    return [tuple(x[_axis(p, len(x))] for p in op.attr("perm"))]


def unsqueeze_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x = list(sa.operand_shape(op, 0))
    for axis in (d.value_or_raise() for d in sa.ints(op, "axis")):
        at = axis + len(x) + 1 if axis < 0 else axis
        if not 0 <= at <= len(x):
            raise _Unmodeled("unsqueeze axis out of range")
        x.insert(at, Const(1))
    return [tuple(x), *([None] * (op.num_results - 1))]


def squeeze_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x = sa.operand_shape(op, 0)
    axes = {_axis(d.value_or_raise(), len(x)) for d in sa.ints(op, "axis")}
    if not axes:
        if not all(isinstance(d, Const) for d in x):
            raise _Unmodeled("squeeze of every 1: which dims are 1 is not known")
        axes = {i for i, d in enumerate(x) if d == Const(1)}
    return [tuple(d for i, d in enumerate(x) if i not in axes or d != Const(1))]


def concat_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    shapes = sa.vector(op, 0)
    (axis_dim,) = sa.ints(op, "axis")
    axis = _axis(axis_dim.value_or_raise(), len(shapes[0]))
    first = shapes[0]
    for other in shapes[1:]:
        if len(other) != len(first):
            raise _Unmodeled("concat of different ranks")
        for i, (a, b) in enumerate(zip(first, other, strict=True)):
            if i != axis:
                sa.require(Kind.EQUAL, a, b, op, f"concat's dim {i}")
    total: DimExpr = Const(0)
    for shape in shapes:
        total = total + shape[axis]
    return [tuple(total if i == axis else d for i, d in enumerate(first))]


def _slice_extent(dim: DimExpr, start: int, end: int) -> DimExpr:
    """How many of `dim` elements `[start, end)` holds, clamped as Paddle clamps: a
    negative index counts from the end, an index past either end is clamped, an end at
    or past `_UNBOUNDED_END` means "to the end". On a symbolic dim this is exact, with
    `min` / `max` where the clamp depends on the dim (`[0, 8)` of S0 is `min(S0,8)`)."""
    if isinstance(dim, Const):
        return Const(len(range(dim.value)[slice(start, end)]))
    unbounded = end >= _UNBOUNDED_END
    if start >= 0:
        if unbounded:
            return dim_max(dim - start, 0)
        if end >= 0:
            return Const(0) if end <= start else dim_min(dim_max(dim - start, 0), end - start)
        return dim_max(dim + end - start, 0)
    if unbounded:
        return dim_min(-start, dim)
    if end < 0:
        return Const(0) if end <= start else dim_max(dim_min(dim, -start) + end, 0)
    return dim_max(dim_min(end, dim) - dim_max(dim + start, 0), 0)


def _strided_extent(dim: DimExpr, start: int, end: int, step: int) -> DimExpr:
    """`len(range(dim)[start:end:step])` (strided_slice: Python's slice semantics)."""
    if step == 0:
        raise _Unmodeled("a zero step")
    if isinstance(dim, Const):
        return Const(len(range(*slice(start, end, step).indices(dim.value))))
    if step > 0:
        extent = _slice_extent(dim, start, end)
        return extent if step == 1 else (extent + step - 1) // step
    # backwards: positions start' down to end' (exclusive), written one up: a = start'+1,
    # b = end'+1, each clamped into [0, dim]
    a = dim_min(start + 1, dim) if start >= 0 else dim_max(dim + start + 1, 0)
    if end <= -_UNBOUNDED_END:
        b: DimExpr = Const(0)
    else:
        b = dim_min(end + 1, dim) if end >= 0 else dim_max(dim + end + 1, 0)
    extent = a if b == Const(0) else dim_max(a - b, 0)
    return extent if step == -1 else (extent - step - 1) // -step


def slice_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x = list(sa.operand_shape(op, 0))
    starts = [d.value_or_raise() for d in sa.ints(op, "starts")]
    ends = [d.value_or_raise() for d in sa.ints(op, "ends")]
    axes = [_axis(a, len(x)) for a in op.attr("axes")]
    for axis, start, end in zip(axes, starts, ends, strict=True):
        x[axis] = _slice_extent(x[axis], start, end)
    drop = {_axis(a, len(x)) for a in op.attr("decrease_axis") or ()}
    return [tuple(d for i, d in enumerate(x) if i not in drop)]


def stack_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    shapes = sa.vector(op, 0)
    axis = op.attr("axis", 0)
    first = list(shapes[0])
    at = axis + len(first) + 1 if axis < 0 else axis
    first.insert(at, Const(len(shapes)))
    return [tuple(first)]


def from_shape_operand(key: str) -> Rule:
    def rule(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
        return [tuple(sa.ints(op, key))]

    return rule


def expand_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x = sa.operand_shape(op, 0)
    target = sa.ints(op, "shape")
    if len(target) < len(x):
        raise _Unmodeled("expand to a lower rank")
    padded = (None,) * (len(target) - len(x)) + tuple(x)
    out = []
    for i, (d, t) in enumerate(zip(padded, target, strict=True)):
        if t == Const(-1):
            if d is None:
                raise _Unmodeled("expand's -1 on a new dim")
            out.append(d)
            continue
        if d is not None:
            sa.require(Kind.BROADCAST, d, t, op, f"expand's dim {i}")
        out.append(t)
    return [tuple(out)]


def expand_as_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """The target's shape (operand y, else `target_shape`), each of x's dims (aligned
    right) broadcasting to the target's: a symbol of x fed 1 must be the constant 1 in
    the kernels (`hlir.symbolic_dims`), or they would read x past its one row."""
    if op.operand_value(1) is not None:
        target = tuple(sa.operand_shape(op, 1))
    else:
        target = tuple(_as_dims(op.attr("target_shape")))
    x = sa.operand_shape(op, 0)
    if len(target) < len(x):
        raise _Unmodeled("expand_as to a lower rank")
    for i, d in enumerate(x):
        at = len(target) - len(x) + i
        sa.require(Kind.BROADCAST, d, target[at], op, f"expand_as's dim {at}")
    return [target]


def arange_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    try:
        (start,), (end,), (step,) = (sa.ints(op, k) for k in ("start", "end", "step"))
    except _Unmodeled:
        (computed,) = op.op_def.infer_meta(InferContext.of(op))  # constant float bounds
        if not computed.is_static:
            raise
        return [tuple(map(Const, computed.dims))]
    if not isinstance(step, Const) or step.value <= 0:
        raise _Unmodeled("arange with a symbolic or negative step")
    return [(dim_max((end - start + step.value - 1) // step.value, 0),)]


def reduce_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x = sa.operand_shape(op, 0)
    if op.op_def.has_trait(Trait.AXIS_OPERAND_REDUCTION):
        listed = [d.value_or_raise() for d in sa.ints(op, "axis")]
    else:
        listed = list(op.attr("axis") or ())
    axes = {_axis(a, len(x)) for a in listed}
    keep = bool(op.attr("keepdim", False))
    if not axes:
        axes = set(range(len(x)))
    out = [Const(1) if i in axes else d for i, d in enumerate(x) if keep or i not in axes]
    return [tuple(out)]


def embedding_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x, w = sa.operand_shape(op, 0), sa.operand_shape(op, 1)
    return [(*x, w[-1])]


def flatten_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    x = sa.operand_shape(op, 0)
    if not x:
        return [(Const(1),)]
    start, stop = _axis(op.attr("start_axis"), len(x)), _axis(op.attr("stop_axis"), len(x))
    return [(*x[:start], _product(x[start : stop + 1]), *x[stop + 1 :])]


def split_with_num_shape(sa: ShapeAnalysis, op: Operation) -> None:
    x = sa.operand_shape(op, 0)
    (axis_dim,) = sa.ints(op, "axis")
    axis = _axis(axis_dim.value_or_raise(), len(x))
    num = int(op.attr("num"))
    sa.require(Kind.DIVIDES, Const(num), x[axis], op, f"split into {num}")
    part = tuple(x[axis] // num if i == axis else d for i, d in enumerate(x))
    sa._vectors[id(op.result())] = [part] * num


def combine_shape(sa: ShapeAnalysis, op: Operation) -> None:
    sa._vectors[id(op.result())] = [
        None if v is None else sa._shapes.get(id(v)) for v in op.operand_values()
    ]


def split_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape | None]:
    value = op.operand_value(0)
    items = None if value is None else sa._vectors.get(id(value))
    return list(items or [])


def norm_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape | None]:
    """layer_norm / fused_rms_norm_quant: out (and residual_out) like x, the statistics
    over the dims before begin_norm_axis."""
    x = sa.operand_shape(op, 0)
    begin = _axis(op.attr("begin_norm_axis"), len(x))
    out: list[Shape | None] = []
    for result in op.results:
        dims = getattr(result.type, "dims", None)
        out.append(x if dims is not None and len(dims) == len(x) else x[:begin])
    return out


def conv_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """conv2d / depthwise_conv2d (NCHW or NHWC, the filter OIHW):
    [N, O, (H + pads - dilated kernel) // stride + 1, ...] (SAME: (H + stride - 1) // stride)."""
    x, w = sa.operand_shape(op, 0), sa.operand_shape(op, 1)
    layout = _attr(op, "data_format", "NCHW")
    if layout not in ("NCHW", "NHWC", "AnyLayout") or len(x) != 4 or len(w) != 4:
        raise _Unmodeled("conv layout")
    last = layout == "NHWC"
    strides, dilations = list(_attr(op, "strides")), list(_attr(op, "dilations"))
    paddings, algorithm = list(_attr(op, "paddings")), _attr(op, "padding_algorithm", "EXPLICIT")
    pairs = (
        [(p, p) for p in paddings]
        if len(paddings) == 2
        else list(zip(paddings[::2], paddings[1::2], strict=True))
    )
    sizes = []
    for i in range(2):
        size, kernel = x[1 + i if last else 2 + i], w[2 + i]
        if algorithm == "SAME":
            sizes.append((size + strides[i] - 1) // strides[i])
            continue
        pad = (0, 0) if algorithm == "VALID" else pairs[i]
        extent = (kernel - 1) * dilations[i] + 1
        sizes.append((size + pad[0] + pad[1] - extent) // strides[i] + 1)
    return [(x[0], *sizes, w[0]) if last else (x[0], w[0], *sizes)]


def conv_transpose_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """conv2d_transpose (NCHW or NHWC, the filter [C, O/groups, kh, kw]): each spatial dim
    `(H - 1) * stride - pads + dilated kernel` (+ output_padding), or output_size's;
    the channels the filter's dim 1 times groups."""
    x, w = sa.operand_shape(op, 0), sa.operand_shape(op, 1)
    layout = _attr(op, "data_format", "NCHW")
    if layout not in ("NCHW", "NHWC", "AnyLayout") or len(x) != 4 or len(w) != 4:
        raise _Unmodeled("conv layout")
    last = layout == "NHWC"
    algorithm = _attr(op, "padding_algorithm", "EXPLICIT")
    if algorithm == "SAME":
        raise _Unmodeled("a transposed conv with SAME padding")
    strides, dilations = list(_attr(op, "strides")), list(_attr(op, "dilations"))
    paddings = list(_attr(op, "paddings"))
    pairs = (
        [(p, p) for p in paddings]
        if len(paddings) == 2
        else list(zip(paddings[::2], paddings[1::2], strict=True))
    )
    given = "output_size" in op.attributes or op.operand_value(2) is not None
    output_size = sa.ints(op, "output_size") if given else []
    extra = list(_attr(op, "output_padding") or ()) or [0, 0]
    sizes: list[DimExpr] = []
    for i in range(2):
        if output_size:
            sizes.append(output_size[i])
            continue
        size = x[1 + i if last else 2 + i]
        pad = (0, 0) if algorithm == "VALID" else pairs[i]
        extent = (w[2 + i] - 1) * dilations[i] + 1
        sizes.append((size - 1) * strides[i] - pad[0] - pad[1] + extent + extra[i])
    channels = w[1] * int(_attr(op, "groups", 1))
    return [(x[0], *sizes, channels) if last else (x[0], channels, *sizes)]


def batch_norm_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape | None]:
    """out like x; the statistics [C] (x's channel dim), the reserve space as computed
    (empty)."""
    x = sa.operand_shape(op, 0)
    channels = x[-1] if _attr(op, "data_format", "NCHW") in ("NHWC", "NLC") else x[1]
    meta = op.op_def.computed_meta
    computed = list(meta(InferContext.of(op))) if meta is not None else []
    out: list[Shape | None] = [x]
    for i in range(1, op.num_results):
        t = computed[i] if i < len(computed) else None
        if i <= 4:
            out.append((channels,))
        elif isinstance(t, DenseTensorType) and t.is_static:
            out.append(tuple(map(Const, t.dims)))
        else:
            out.append(None)
    return out


def rank_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """shape / shape64: [rank of the input]."""
    return [(Const(len(sa.operand_shape(op, 0))),)]


def swiglu_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """swiglu: with y, x's dims (y's must equal them); without, x's last dim split in
    halves."""
    x = sa.operand_shape(op, 0)
    if op.operand_value(1) is not None:
        y = sa.operand_shape(op, 1)
        if len(y) != len(x):
            raise _Unmodeled("swiglu's x and y differ in rank")
        for i, (a, b) in enumerate(zip(x, y, strict=True)):
            sa.require(Kind.EQUAL, a, b, op, f"swiglu's x and y at axis {i}")
        return [tuple(sa.canon(d) for d in x)]
    if not x:
        raise _Unmodeled("swiglu of a 0-D x")
    sa.require(Kind.DIVIDES, Const(2), x[-1], op, "swiglu splits the last dim in halves")
    return [(*x[:-1], x[-1] // 2)]


def strided_slice_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """strided_slice with constant starts, ends and strides (Python's slice semantics,
    negative strides included)."""
    x = list(sa.operand_shape(op, 0))
    starts, ends, strides = (
        [d.value_or_raise() for d in sa.ints(op, key)] for key in ("starts", "ends", "strides")
    )
    axes = [_axis(a, len(x)) for a in _attr(op, "axes")]
    for axis, start, end, step in zip(axes, starts, ends, strides, strict=True):
        x[axis] = _strided_extent(x[axis], start, end, step)
    return [tuple(x)]


def einsum_shape(parse: Callable[[str, Sequence[int]], Any]) -> Rule:
    """einsum, with the op's own equation parser (`parse(equation, ranks)` -> labels per
    operand and the output's, ellipses expanded): each output label's dim from the
    operands holding it. A letter two operands (or one twice) hold must be equal there;
    an ellipsis dim broadcasts."""

    def rule(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
        shapes = sa.vector(op, 0)
        equation = parse(str(_attr(op, "equation")), [len(s) for s in shapes])
        sizes: dict[str, DimExpr] = {}
        for labels, dims in zip(equation.inputs, shapes, strict=True):
            for label, dim in zip(labels, dims, strict=True):
                seen = sizes.get(label)
                if seen is None:
                    sizes[label] = dim
                elif label.isascii() and label.isalpha():
                    sa.require(Kind.EQUAL, seen, dim, op, f"einsum's label {label}")
                else:
                    sa.require(Kind.BROADCAST, seen, dim, op, "einsum's ellipsis dims")
                    try:
                        sizes[label] = broadcast(seen, dim)
                    except ValueError as error:
                        raise _Unmodeled(str(error)) from None
        out = tuple(sa.canon(sizes[label]) for label in equation.output)
        if op.num_results == 3:  # inner_cache (as declared: it holds nothing), xshape
            cache = op.result(1).type
            if isinstance(cache, VectorType):
                sa._vectors[id(op.result(1))] = [
                    tuple(map(Const, t.dims))
                    if isinstance(t, DenseTensorType) and t.is_static
                    else None
                    for t in cache.types
                ]
            sa._vectors[id(op.result(2))] = list(shapes)
        return [out]

    return rule


def topk_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """topk: values and indices, the axis's dim k."""
    x = sa.operand_shape(op, 0)
    if not x:
        return [x, x]
    (k,) = sa.ints(op, "k")
    axis = _axis(_attr(op, "axis", -1), len(x))
    out = tuple(k if i == axis else d for i, d in enumerate(x))
    return [out, out]


def arg_min_max_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """argmax / argmin: the axis dropped (1 with keepdims); flatten: over every dim, 0-D
    (or all 1s with keepdims)."""
    x = sa.operand_shape(op, 0)
    keep, flatten = bool(_attr(op, "keepdims", False)), bool(_attr(op, "flatten", False))
    if flatten:
        return [(Const(1),) * len(x) if keep else ()]
    (axis_dim,) = sa.ints(op, "axis")
    axis = _axis(axis_dim.value_or_raise(), len(x))
    return [tuple(Const(1) if i == axis else d for i, d in enumerate(x) if keep or i != axis)]


def _pool_extent(
    size: DimExpr, k: int, s: int, before: int, after: int, *, ceil_mode: bool, algorithm: str
) -> DimExpr:
    if s <= 0 or k <= 0:
        raise _Unmodeled("a pool window or stride that is not positive")
    if algorithm == "SAME":
        out = (size + s - 1) // s
        if not ceil_mode:
            return out
        # the SAME pads, then ceil_mode's extra stride - 1, as Paddle's kernel has them
        pads = dim_max((out - 1) * s + k - size, 0)
        return (size - k + pads + s - 1) // s + 1
    if algorithm == "VALID":
        before = after = 0
    offset = before + after - k + (s - 1 if ceil_mode else 0)
    # Paddle truncates: a window that overhangs a small input by less than a stride
    # still gives one output (a span of -stride or less it refuses)
    span = size + offset if offset >= 0 or s == 1 else dim_max(size + offset, 0)
    return span // s + 1


def pool_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """pool2d / max_pool2d_with_index (NCHW or NHWC): each spatial dim
    `(H + pads - kernel (+ stride - 1 with ceil_mode)) // stride + 1` (SAME:
    `(H + stride - 1) // stride`); adaptive: the kernel size itself, global: 1."""
    x = list(sa.operand_shape(op, 0))
    if len(x) != 4:
        raise _Unmodeled("pool of a tensor that is not 4-D")
    spec = op.op_def.attr_spec
    last = spec("data_format") is not None and _attr(op, "data_format", "NCHW") == "NHWC"
    spatial = (1, 2) if last else (2, 3)
    if op.op_def.operands[-1].name == "kernel_size":
        ksize = [d.value_or_raise() for d in sa.ints(op, "kernel_size")]
    else:
        ksize = [int(k) for k in _attr(op, "kernel_size")]
    strides, paddings = list(_attr(op, "strides")), list(_attr(op, "paddings"))
    pads = [p for p in paddings for _ in (0, 1)] if len(paddings) == 2 else paddings
    if len(ksize) != 2 or len(strides) != 2 or len(pads) != 4:
        raise _Unmodeled("pool attributes of the wrong length")
    algorithm = _attr(op, "padding_algorithm", "EXPLICIT") if spec("padding_algorithm") else ""
    for i, d in enumerate(spatial):
        if _attr(op, "global_pooling", False):
            x[d] = Const(1)
        elif _attr(op, "adaptive", False):
            x[d] = Const(ksize[i])
        else:
            x[d] = _pool_extent(
                x[d],
                ksize[i],
                strides[i],
                pads[2 * i],
                pads[2 * i + 1],
                ceil_mode=bool(_attr(op, "ceil_mode", False)),
                algorithm=algorithm,
            )
    return [tuple(x)] * op.num_results


def gather_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """gather: the axis's dim becomes the index's length (a 0-D index drops it)."""
    x, index = sa.operand_shape(op, 0), sa.operand_shape(op, 1)
    (axis_dim,) = sa.ints(op, "axis")
    axis = _axis(axis_dim.value_or_raise(), len(x))
    if not index:
        return [() if len(x) == 1 else x[:axis] + x[axis + 1 :]]
    return [(*x[:axis], index[0], *x[axis + 1 :])]


def index_select_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """index_select: the axis's dim becomes the (1-D) index's length."""
    x, index = sa.operand_shape(op, 0), sa.operand_shape(op, 1)
    axis = _axis(_attr(op, "axis", 0), len(x))
    if len(index) != 1:
        raise _Unmodeled("index_select's index is not 1-D")
    return [(*x[:axis], index[0], *x[axis + 1 :])]


def cumsum_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """cumsum: x's dims; flatten: 1-D of all its elements."""
    x = sa.operand_shape(op, 0)
    return [(_product(x),) if _attr(op, "flatten", False) else x]


def tile_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """tile: each dim times its repeat count (missing ones 1, on either side)."""
    x = sa.operand_shape(op, 0)
    repeats = sa.ints(op, "repeat_times")
    rank = max(len(x), len(repeats))
    dims = (Const(1),) * (rank - len(x)) + tuple(x)
    reps = [Const(1)] * (rank - len(repeats)) + list(repeats)
    if any(isinstance(r, Const) and r.value < 0 for r in reps):
        raise _Unmodeled("tile's repeat count is negative")
    return [tuple(d * r for d, r in zip(dims, reps, strict=True))]


def one_hot_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """one_hot: x's dims and the number of classes."""
    (depth,) = sa.ints(op, "num_classes")
    return [(*sa.operand_shape(op, 0), depth)]


def split_sections_shape(sa: ShapeAnalysis, op: Operation) -> None:
    """split (sections): the pieces along the axis; one -1 section takes the rest."""
    x = sa.operand_shape(op, 0)
    (axis_dim,) = sa.ints(op, "axis")
    axis = _axis(axis_dim.value_or_raise(), len(x))
    sections = sa.ints(op, "sections")
    rest = [i for i, s in enumerate(sections) if s == Const(-1)]
    if len(rest) > 1:
        raise _Unmodeled("split with two -1 sections")
    known = Const(0)
    for i, s in enumerate(sections):
        if i not in rest:
            known = known + s
    sizes = list(sections)
    if rest:
        sizes[rest[0]] = x[axis] - known
    else:
        sa.require(Kind.EQUAL, known, x[axis], op, "split's sections add up to the dim")
    sa._vectors[id(op.result())] = [
        tuple(size if i == axis else d for i, d in enumerate(x)) for size in sizes
    ]


def interp_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """bilinear_interp / nearest_interp: H and W from a constant (or shape-value) size,
    else `out_h` / `out_w`, or a scale that is a whole number or a small binary fraction
    (`(H*num)//den`, exact as Paddle's float32 product is)."""
    x = list(sa.operand_shape(op, 0))
    if len(x) != 4:
        raise _Unmodeled("interp of a tensor that is not 4-D")
    spatial = (1, 2) if _attr(op, "data_format", "NCHW") == "NHWC" else (2, 3)
    sizes: list[DimExpr] | None = None
    for key in ("size_tensor", "out_size"):
        value = op.operand_value(op.op_def.operand_index(key))
        if value is None:
            continue
        known = sa._values.get(id(value))
        if known is None:
            defining = value.defining_op
            if defining is not None and defining.op_def is not None:
                if defining.op_def.variadic_operands:  # a combine of 0-D sizes
                    parts = [sa._values.get(id(v)) for v in defining.operand_values()]
                    if all(p is not None for p in parts):
                        known = tuple(d for p in parts for d in p)
        sizes = list(known) if known is not None else _as_dims(constant_of(value))
        break
    if sizes is None:
        if op.operand_value(op.op_def.operand_index("scale_tensor")) is not None:
            raise _Unmodeled("a scale computed at run time")
        scale = [float(v) for v in _attr(op, "scale") or ()]
        if scale and min(scale) > 0:
            scales = scale * 2 if len(scale) == 1 else scale[:2]
            sizes = [_scaled_dim(x[d], f) for d, f in zip(spatial, scales, strict=True)]
        else:
            sizes = [Const(int(_attr(op, "out_h"))), Const(int(_attr(op, "out_w")))]
    if len(sizes) != 2:
        raise _Unmodeled("interp sizes that are not 2")
    for d, size in zip(spatial, sizes, strict=True):
        x[d] = size
    return [tuple(x)]


def _scaled_dim(dim: DimExpr, scale: float) -> DimExpr:
    """int(dim * scale), for a scale that a float32 holds exactly as num / 2**j."""
    from fractions import Fraction

    fraction = Fraction(scale)
    if fraction.denominator > 64 or float(fraction) != float(np.float32(scale)):
        raise _Unmodeled(f"the scale {scale} is not a small binary fraction")
    return (dim * fraction.numerator) // fraction.denominator


def stats_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape]:
    """group_norm / instance_norm / rms_norm: y like x, then the statistics: group_norm
    [N, groups], instance_norm [N*C], rms_norm the dims before the normalized ones."""
    x = sa.operand_shape(op, 0)
    spec = op.op_def.attr_spec
    if spec("groups") is not None:
        stats: Shape = (x[0], Const(int(_attr(op, "groups"))))
    elif spec("normalized_shape") is not None:
        stats = x[: len(x) - len(_attr(op, "normalized_shape"))]
    else:
        stats = (x[0] * x[1],)
    return [x, *([stats] * (op.num_results - 1))]


def gemm_epilogue_shape(sa: ShapeAnalysis, op: Operation) -> list[Shape | None]:
    """fused_gemm_epilogue: x's leading dims and [M, N] (reserve_space alike)."""
    x, y = list(sa.operand_shape(op, 0)), list(sa.operand_shape(op, 1))
    if len(x) < 2 or len(y) != 2:
        raise _Unmodeled("fused_gemm_epilogue ranks")
    m, kx = (x[-1], x[-2]) if _attr(op, "trans_x", False) else (x[-2], x[-1])
    ky, n = (y[1], y[0]) if _attr(op, "trans_y", False) else (y[0], y[1])
    sa.require(Kind.EQUAL, kx, ky, op, "matmul's contracting dims")
    out = (*x[:-2], m, n)
    return [out, out]


# ---- shape values: integer tensors computed from shapes ------------------------------


ValueRule = Callable[[ShapeAnalysis, Operation], "list[DimExpr] | None"]
"""An op's `symbolic_value`: the elements of its result as a shape value, None where it
is not one (a SHAPE_ONLY op's is its operand's shape, whatever its entry says)."""


def _value_rule(sa: ShapeAnalysis, op: Operation) -> list[DimExpr] | None:
    op_def = op.op_def
    if op_def is None:
        return None
    if op_def.has_trait(Trait.SHAPE_ONLY):
        return list(sa.operand_shape(op, 0))
    rule = op_def.symbolic_value
    return None if rule is None else rule(sa, op)


def _source(sa: ShapeAnalysis, op: Operation) -> Shape | None:
    """The shape value the op's first operand holds, if it is one."""
    operands = [v for v in op.operand_values() if v is not None]
    return sa._values.get(id(operands[0])) if operands else None


def full_value(sa: ShapeAnalysis, op: Operation) -> list[DimExpr] | None:
    """full_int_array / full: an integer constant of rank 0 or 1."""
    result = op.result().type
    if not result.data_type.is_integer or len(result.dims) > 1:
        return None
    return _as_dims(constant_of(op.result()))


def slice_value(sa: ShapeAnalysis, op: Operation) -> list[DimExpr] | None:
    """A slice along axis 0 of a shape value, constant starts and ends."""
    source = _source(sa, op)
    if source is None:
        return None
    starts = [d.value_or_raise() for d in sa.ints(op, "starts")]
    ends = [d.value_or_raise() for d in sa.ints(op, "ends")]
    if list(op.attr("axes")) != [0]:
        return None
    return list(source[slice(starts[0], min(ends[0], len(source)))])


def stack_value(sa: ShapeAnalysis, op: Operation) -> list[DimExpr] | None:
    """stack / concat of shape values packed by a combine: their elements in order."""
    operands = [v for v in op.operand_values() if v is not None]
    combine = operands[0].defining_op if operands else None
    combine_def = None if combine is None else combine.op_def
    if combine_def is None or not (
        combine_def.variadic_operands and combine_def.has_trait(Trait.VECTOR)
    ):
        return None  # not packed by builtin.combine: the only VECTOR op of any operands
    items = [sa._values.get(id(v)) for v in combine.operand_values() if v is not None]
    if any(item is None for item in items):
        return None
    return [d for item in items for d in item]


def pass_through_value(sa: ShapeAnalysis, op: Operation) -> list[DimExpr] | None:
    """cast, assign, reshape, squeeze, unsqueeze: the operand's elements unchanged."""
    source = _source(sa, op)
    return None if source is None else list(source)


def scale_value(sa: ShapeAnalysis, op: Operation) -> list[DimExpr] | None:
    """x * scale + bias (or (x + bias) * scale) of each element."""
    source = _source(sa, op)
    if source is None:
        return None
    (scale,) = sa.ints(op, "scale")
    bias = _as_dims(op.attr("bias", 0.0))[0]
    if op.attr("bias_after_scale", True):
        return [d * scale + bias for d in source]
    return [(d + bias) * scale for d in source]


def arithmetic_value(fn: Callable[[DimExpr, DimExpr], DimExpr]) -> ValueRule:
    """A binary op of two shape values, element by element (a 1-element side broadcast):
    add (`a + b`), subtract, multiply, floor_divide, maximum (`dim_max`)."""

    def rule(sa: ShapeAnalysis, op: Operation) -> list[DimExpr] | None:
        operands = [v for v in op.operand_values() if v is not None]
        source = _source(sa, op)
        if source is None or len(operands) != 2:
            return None
        other = sa._values.get(id(operands[1]))
        if other is None:
            return None
        if len(source) == 1 or len(other) == 1:
            n = max(len(source), len(other))
            source, other = source * (n // len(source)), other * (n // len(other))
        return [fn(a, b) for a, b in zip(source, other, strict=True)]

    return rule


# ---- the public entry points ---------------------------------------------------------


def analyze_shapes(program: Program) -> ShapeAnalysis:
    """The program's symbols, symbolic shapes and constraints."""
    return ShapeAnalysis(program)


def check_feed_constraints(
    program: Program,
    feed_shapes: Mapping[str, Sequence[int]],
    analysis: ShapeAnalysis | None = None,
) -> None:
    """Raise FeedConstraintError (a FeedError) if the feeds' dims break a constraint
    the program implies: two dims that must be equal (or broadcast), a reshape that
    does not divide. `analysis`: `analyze_shapes(program)`, when the caller keeps it."""
    (analysis or analyze_shapes(program)).check(feed_shapes)
