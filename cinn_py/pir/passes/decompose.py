"""Decompose composite ops into primitive pd_ops, so that their parts can fuse.

A softmax is a reduction, a broadcast subtract, an exp, a second reduction and a divide;
kept whole it is one opaque kernel, split it lets the elementwise parts fuse with their
neighbours (CINN's "prim" decomposition does the same before fusion). The rules live in
the op entries (`OpDef.decompose`, in `cinn_py/ops/`); this pass runs them and gives
them an `Emitter`. Each rule builds the primitives at the composite's position and
returns the values replacing its results (None for a result it checked is unused); the
pass replaces them and erases the composite. The numbers follow the op's reference
kernel (the oracle).

float16 and bfloat16 composites are computed in float32 (cast in, cast out), as the
reference and Paddle compute them, so the result is rounded once (`computed_input`).
Constants are 0-D `pd_op.full` ops (a 0-D operand broadcasts against any rank, also a
0-D one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from cinn_py.errors import VerifyError
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import REQUIRED, attr_value
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.types import DYNAMIC, DenseTensorType
from cinn_py.pir.value import Value

_SIXTEEN_BIT = (DataType.FLOAT16, DataType.BFLOAT16)


def decompose_composites(program: Program) -> int:
    """Replace every op whose entry has a decomposition rule with primitives; returns how
    many."""
    decomposed = 0
    for op in list(program.block):
        op_def = op.op_def
        rule = op_def.decompose if op_def is not None else None
        if rule is None:
            continue
        emit = Emitter(program, op)
        results = rule(emit, op)
        if results is None:
            continue
        for old, new in zip(op.results, results, strict=True):
            if new is not None:  # None: unmade (<<NULL TYPE>>) or `Emitter.unused`
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


class Emitter:
    """What a decomposition rule builds with: primitives before the composite `op`,
    carrying its location and stop_gradient flag, and the op's attributes read with the
    declared defaults (`attr`)."""

    def __init__(self, program: Program, op: Operation) -> None:
        self.program = program
        self.composite = op
        self.builder = Builder(program)
        self.builder.set_insertion_point(op)
        self.builder.loc = op.loc
        flags = op.attr("stop_gradient")
        self.stop_gradient = None if flags is None else [all(flags)]
        x = op.operand_value(0)
        self.x_type = x.type if x is not None else None

    def attr(self, name: str) -> object:
        """The composite's attribute `name`, else its declared default."""
        value = attr_value(self.composite.op_def, self.composite.attributes, name)
        if value is REQUIRED:
            raise VerifyError(self.composite.name, f"needs attribute '{name}'")
        return value

    def unused(self, value: Value) -> bool:
        """No op reads `value` and it is not a program output: a rule may leave it
        without a replacement."""
        return value.use_empty() and not any(v is value for v in self.program.outputs())

    def op(self, name: str, *operands: Value | None, **attributes: object) -> Value:
        if self.stop_gradient is not None:
            attributes["stop_gradient"] = self.stop_gradient
        result = self.builder.op(name, *operands, **attributes)
        assert not isinstance(result, tuple), f"{name} has one result"
        return result

    def const(self, value: float, dtype: DataType) -> Value:
        return self.op("pd_op.full", shape=[], value=float(value), dtype=dtype)

    def cast(self, x: Value, dtype: DataType) -> Value:
        if dtype_of(x) is dtype:
            return x
        return self.op("pd_op.cast", x, dtype=dtype)

    def sum(self, x: Value, axes: Sequence[int], keepdim: bool = True) -> Value:
        return self.op("pd_op.sum", x, None, axis=list(axes), keepdim=keepdim)

    def mean(self, x: Value, axes: Sequence[int], count: int) -> Value:
        """The keepdim mean over `axes`, which hold `count` elements."""
        return self.op("pd_op.divide", self.sum(x, axes), self.const(count, dtype_of(x)))


def dtype_of(value: Value) -> DataType:
    type_ = value.type
    assert isinstance(type_, DenseTensorType)
    return type_.data_type


def compute_dtype(value: Value) -> DataType:
    dtype = dtype_of(value)
    return DataType.FLOAT32 if dtype in _SIXTEEN_BIT else dtype


def float_input(op: Operation) -> Value | None:
    x = op.operand_value(0)
    if x is None or not isinstance(x.type, DenseTensorType) or not x.type.data_type.is_float:
        return None
    return x


def computed_input(emit: Emitter, op: Operation) -> tuple[Value, DataType] | None:
    """The op's float input cast to its compute dtype, and that dtype; None when the
    input is not a float tensor (the rule then leaves the op whole)."""
    x = float_input(op)
    if x is None:
        return None
    dtype = compute_dtype(x)
    return emit.cast(x, dtype), dtype


def element_count(dims: Sequence[int]) -> int | None:
    """How many elements `dims` hold; None if one is unknown."""
    if DYNAMIC in dims:
        return None
    return math.prod(dims)


DecomposeRule = Callable[[Emitter, Operation], list[Value | None] | None]
"""Rewrites one op into primitives with an `Emitter`: the values replacing its results
(None for a result that nothing uses: typed <<NULL TYPE>>, or `Emitter.unused`), or None
to leave the op whole."""
