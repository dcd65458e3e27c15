"""Symbolic dims for lowering: which dims of a specialised program's values are the
program's -1 dims, as expressions the kernels take as arguments.

A program with -1 dims is still specialised to each feed signature (`specialize_shapes`)
and its host-side stages run per signature, but its *kernels* need not be: lowering
writes a dim that comes from a -1 feed dim as a Var (`S0`, `S1`, ...) read from a kernel
argument instead of the number it has in this signature, so two signatures give the same
kernel source and the kernel cache (keyed by source) compiles it once. That is correct by
construction: every source is produced by a pipeline run for the exact signature it runs
at, so whatever a stage decided from a concrete number is either visible in the source
(and then sources differ and nothing is shared) or holds for this signature; the dims'
values are the launch's arguments.

Where the dims come from: `pir.shape_analysis` gives each value of the program *before*
specialisation its symbolic shape (a DimExpr per dim); `specialize_shapes(..., origins=)`
says which original value each specialised one copies. A dim is symbolic only where its
expression, evaluated at this signature, equals the specialised type's dim, so a value
the analysis does not model (or that a pass after specialisation made) is simply static.

Two rules keep shared kernels valid across signatures:
- A symbol some broadcast may stretch (one in a BROADCAST constraint) is the constant 1
  when fed 1 (its own "bucket"): a dim of 1 broadcasts, and a kernel written for a dim
  that does not would read wrong elements. So `broadcast(S0, S1)` with neither fed 1 is
  S0 (equal: the feeds were checked). Other symbols are Vars at any value, 1 included.
- Only ops whose lowering says it handles Expr dims (`OpLowering.symbolic`) are lowered
  symbolically; a group with any other op is lowered with this signature's numbers.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cinn_py.errors import ShapeError
from cinn_py.ir.buckets import BUCKET_LIMIT, bucket_bound
from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.expr import Add, Div, Expr, IntImm, Max, Min, Mul, Var
from cinn_py.pir import dim_expr as d
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.shape_analysis import Kind, ShapeAnalysis
from cinn_py.pir.types import DenseTensorType
from cinn_py.pir.value import Value

Dim = int | Expr
"""A lowered dim: a number, or an index expression over the symbols' Vars."""

SYMBOL_LOWER_BOUND = 1
"""Every symbol a kernel reads is at least 1 (a symbol that may broadcast is at least 2:
fed 1, it is the constant 1)."""


@dataclass
class SymbolicDims:
    """The symbolic shapes of one specialised program's values and the signature's
    values of their symbols (the kernels' dim arguments)."""

    shapes: dict[int, tuple[d.DimExpr, ...]]
    """By id of a specialised value: its dims over the symbols still free (symbols of
    value 1 substituted by 1), only for values whose dims all check out."""
    binding: dict[d.Sym, int]
    """The value of each free symbol at this signature."""
    _vars: dict[tuple[d.Sym, DataType], Var] = field(default_factory=dict)

    def is_symbolic(self, value: Value) -> bool:
        """Whether some dim of `value` reads a symbol."""
        shape = self.shapes.get(id(value))
        return shape is not None and any(not dim.is_const for dim in shape)

    def var(self, symbol: d.Sym, dtype: DataType) -> Var:
        """The kernel argument holding `symbol` (one Var per symbol and index dtype)."""
        key = (symbol, dtype)
        found = self._vars.get(key)
        if found is None:
            found = self._vars[key] = Var(symbol.name, dtype, SYMBOL_LOWER_BOUND)
        return found

    def lowered_dims(self, value: Value, dtype: DataType) -> tuple[Dim, ...] | None:
        """The value's dims as lowering writes them: ints, and index expressions of
        `dtype` for symbolic ones; None when the value has no symbolic shape."""
        shape = self.shapes.get(id(value))
        if shape is None:
            return None
        return tuple(self.to_expr(dim, dtype) for dim in shape)

    def to_expr(self, dim: d.DimExpr, dtype: DataType) -> Dim:
        """`dim` as an int (a constant) or an index expression of `dtype`."""
        if isinstance(dim, d.Const):
            return dim.value
        return _convert(dim, lambda s: self.var(s, dtype), dtype)

    def reduce_bound(self, extent: Expr, limit: int = BUCKET_LIMIT) -> int:
        """The bucket bound (`REDUCE_BUCKETS`, then powers of two up to `limit`) of a
        symbolic extent's value at this signature; ShapeError past the largest."""
        value = self.evaluate(extent)
        bound = bucket_bound(value, limit)
        if bound is not None:
            return bound
        raise ShapeError(
            f"a reduction over {extent!r} = {value}: longer than the largest bucket "
            f"({limit}), compiled for its length"
        )

    @functools.cached_property
    def by_name(self) -> dict[str, int]:
        """Each free symbol's value by its Var's name (`S0`): a kernel's dim arguments,
        and what schedules decide by (`ir.dim_values.bound_dims`)."""
        return {symbol.name: value for symbol, value in self.binding.items()}

    def evaluate(self, expr: Expr) -> int:
        """An index expression over the symbols' Vars (a launch's grid) at this
        signature."""
        return int(evaluate(expr, self.by_name))


def build_symbolic_dims(
    analysis: ShapeAnalysis,
    feed_shapes: Mapping[str, Sequence[int]],
    origins: Mapping[int, Value],
    specialized: Sequence[Value],
) -> SymbolicDims:
    """The symbolic dims of the `specialized` values (each copying `origins[id(v)]` of
    the program `analysis` was made of) at the feeds' shapes `feed_shapes`."""
    binding: dict[d.Sym, int] = {}
    for symbol, (feed, axis) in analysis.feed_symbols().items():
        dims = feed_shapes.get(feed)
        if dims is not None and axis < len(dims):
            root = analysis.find(symbol)
            if isinstance(root, d.Sym):
                binding.setdefault(root, int(dims[axis]))
    broadcasting = _broadcasting_symbols(analysis)
    ones = {s: d.Const(1) for s, v in binding.items() if v == 1 and s in broadcasting}
    free = {s: v for s, v in binding.items() if s not in ones}
    shapes: dict[int, tuple[d.DimExpr, ...]] = {}
    for value in specialized:
        origin = origins.get(id(value))
        type_ = value.type
        if origin is None or not isinstance(type_, DenseTensorType):
            continue
        shape = analysis.shape(origin)
        if shape is None or len(shape) != len(type_.dims):
            continue
        resolved = tuple(_resolve(dim.substitute(ones)) for dim in shape)
        if all(_checks(dim, free, want) for dim, want in zip(resolved, type_.dims, strict=True)):
            shapes[id(value)] = resolved
    return SymbolicDims(shapes, free)


def _broadcasting_symbols(analysis: ShapeAnalysis) -> set[d.Sym]:
    """The symbols (representatives) a broadcast may stretch: those in a BROADCAST
    constraint. Only these are specialised when fed 1."""
    found: set[d.Sym] = set()
    for constraint in analysis.constraints:
        if constraint.kind is Kind.BROADCAST:
            for side in (constraint.lhs, constraint.rhs):
                found |= analysis.canon(side).symbols()
    return found


def _checks(dim: d.DimExpr, binding: Mapping[d.Sym, int], want: int) -> bool:
    """Whether `dim` only reads bound symbols and evaluates to `want`."""
    if not dim.symbols() <= set(binding):
        return False
    try:
        return dim.evaluate(binding) == want
    except (KeyError, ValueError, ZeroDivisionError):
        return False


def _fold(dim: d.DimExpr, leaf: Callable[[d.DimExpr], Any], node: Callable[..., Any]) -> Any:
    """Bottom-up over a DimExpr: `leaf(dim)` for a constant or a symbol, else
    `node(dim, children)` with the children folded first."""
    if isinstance(dim, (d.Const, d.Sym)):
        return leaf(dim)
    return node(dim, [_fold(child, leaf, node) for child in d._children(dim)])


def _resolve(dim: d.DimExpr) -> d.DimExpr:
    """`dim` with each `broadcast(a, b, ...)` replaced by its first operand: with no
    symbol of value 1 left, the operands are equal (the feeds were checked against the
    program's broadcast constraints)."""

    def node(dim: d.DimExpr, kids: list[d.DimExpr]) -> d.DimExpr:
        if isinstance(dim, d.Broadcast):
            return kids[0]
        if isinstance(dim, d.FloorDiv):
            return kids[0] // kids[1]
        if isinstance(dim, d.Max):
            return d.dim_max(*kids)
        if isinstance(dim, d.Min):
            return d.dim_min(*kids)
        combine = operator.add if isinstance(dim, d.Add) else operator.mul
        return functools.reduce(combine, kids)

    return _fold(dim, lambda leaf: leaf, node)


def _convert(dim: d.DimExpr, var_of: Callable[[d.Sym], Var], dtype: DataType) -> Expr:
    """A DimExpr as an IR index expression (dims are never negative, so floor-div is
    C's division)."""

    def leaf(dim: d.DimExpr) -> Expr:
        return IntImm(dim.value, dtype) if isinstance(dim, d.Const) else var_of(dim)

    def node(dim: d.DimExpr, kids: list[Expr]) -> Expr:
        if isinstance(dim, d.FloorDiv):
            return Div(kids[0], kids[1])
        combine = {d.Add: Add, d.Mul: Mul, d.Max: Max, d.Min: Min}.get(type(dim))
        if combine is None:
            raise ValueError(f"cannot lower the dim {dim}")
        return functools.reduce(combine, kids)

    return _fold(dim, leaf, node)
