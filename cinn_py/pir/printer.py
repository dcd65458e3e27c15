"""Prints a Program as Paddle 3.x prints it, byte for byte.

Two styles (`TextStyle`): Paddle 3.x's text, where attribute values carry no type
(`value:2`, `dtype:float32`, `tensor<8x16xf32>`), and the older typed text
(`(Double)2`, `(pd_op.DataType)float32`, `builtin.tensor<8x16xf32>`). Values print
with the number they were parsed with when they have one, else with fresh numbers.
"""

from __future__ import annotations

import math

from cinn_py.errors import UnsupportedOpError
from cinn_py.pir import attributes as A
from cinn_py.pir.operation import Block, Operation
from cinn_py.pir.program import Program, TextStyle
from cinn_py.pir.types import DenseTensorType, ElementType, NullType, Type, VectorType
from cinn_py.pir.value import Value

NULL_VALUE = "<<NULL VALUE>>"
NULL_TYPE = "<<NULL TYPE>>"


def format_float(value: float) -> str:
    """A float as C++'s `ostream << x` prints it: 6 significant digits, %g style."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:g}"


def quote(text: str) -> str:
    """`text` in double quotes as Paddle prints strings and op names: only `"` is escaped
    (`"a\\"b\\c"`; so a string ending in a backslash is ambiguous in Paddle's text). The
    lexer undoes exactly this, so parsed strings print back byte for byte."""
    return '"' + text.replace('"', '\\"') + '"'


def print_type(type_: Type | None, style: TextStyle | None = None) -> str:
    style = style or TextStyle()
    if type_ is None or isinstance(type_, NullType):
        return NULL_TYPE
    if isinstance(type_, ElementType):
        return type_.dtype.short
    if isinstance(type_, DenseTensorType):
        dims = "".join(f"{d}x" for d in type_.dims)
        prefix = f"{style.tensor_prefix}." if style.typed else ""
        return f"{prefix}tensor<{dims}{type_.dtype.dtype.short}>"
    if isinstance(type_, VectorType):
        # Paddle prints `vec[...]` without a dialect prefix in both formats.
        return "vec[" + ",".join(print_type(t, style) for t in type_.types) + "]"
    raise TypeError(f"cannot print type {type_!r}")


def print_attribute(attribute: A.Attribute, style: TextStyle | None = None) -> str:
    style = style or TextStyle()
    typed = style.typed
    if isinstance(attribute, A.BoolAttribute):
        return "true" if attribute.value else "false"
    if isinstance(attribute, A.Int32Attribute):
        return f"(Int32){attribute.value}" if typed else str(attribute.value)
    if isinstance(attribute, A.Int64Attribute):
        return f"(Int64){attribute.value}" if typed else str(attribute.value)
    if isinstance(attribute, A.FloatAttribute):
        return ("(Float)" if typed else "") + format_float(attribute.value)
    if isinstance(attribute, A.DoubleAttribute):
        return ("(Double)" if typed else "") + format_float(attribute.value)
    if isinstance(attribute, A.StrAttribute):
        return quote(attribute.value)
    if isinstance(attribute, A.ArrayAttribute):
        return "[" + ",".join(print_attribute(a, style) for a in attribute.value) + "]"
    if isinstance(attribute, A.TypeAttribute):
        return print_type(attribute.value, style)
    if isinstance(attribute, A.IntArrayAttribute):
        body = "[" + ",".join(str(v) for v in attribute.value) + "]"
        return ("(pd_op.IntArray)" if typed else "") + body
    if isinstance(attribute, A.DataTypeAttribute):
        return ("(pd_op.DataType)" if typed else "") + attribute.value.value
    if isinstance(attribute, A.PlaceAttribute):
        return ("(pd_op.Place)" if typed else "") + f"Place({attribute.value})"
    if isinstance(attribute, A.DataLayoutAttribute):
        return ("(pd_op.DataLayout)" if typed else "") + attribute.value
    raise TypeError(f"cannot print attribute {attribute!r}")


class ValueNames:
    """Numbers values for printing: a value's parsed number if it is free, else a new one."""

    def __init__(self, program: Program) -> None:
        self._names: dict[int, int] = {}
        taken = {v.id_hint for op in program.ops() for v in op.results if v.id_hint is not None}
        taken |= set(program.renumbered)  # a replaced value's number never names another
        self._next = 0
        used: set[int] = set()
        for op in program.ops():
            for value in op.results:
                hint = value.id_hint
                if hint is not None and hint not in used:
                    self._names[id(value)] = hint
                    used.add(hint)
        self._taken = taken | used
        for op in program.ops():
            for value in op.results:
                if id(value) not in self._names:
                    while self._next in self._taken:
                        self._next += 1
                    self._names[id(value)] = self._next
                    self._taken.add(self._next)

    def __call__(self, value: Value | None) -> str:
        if value is None:
            return NULL_VALUE
        number = self._names.get(id(value))
        return f"%{number}" if number is not None else "%<undefined>"

    def number(self, value: Value) -> int | None:
        return self._names.get(id(value))


def print_op(op: Operation, names: ValueNames, style: TextStyle) -> str:
    """One op without regions on one line; an op with a region (`cinn_op.group`,
    `pd_op.if`'s shape) as Paddle prints it: no operand types, ` {`, then its block."""
    results = ", ".join(names(r) for r in op.results)
    operands = ", ".join(names(v) for v in op.operand_values())
    attrs = ",".join(
        f"{key}:{print_attribute(op.attributes[key], style)}" for key in sorted(op.attributes)
    )
    result_types = ", ".join(print_type(r.type, style) for r in op.results)
    head = f"({results}) = {quote(op.name)} ({operands}) {{{attrs}}}"
    if op.regions:
        return f"{head} -> {result_types} {{"
    operand_types = ", ".join(
        print_type(v.type if v is not None else None, style) for v in op.operand_values()
    )
    return f"{head} : ({operand_types}) -> {result_types}"


def print_block_lines(
    block: Block, names: ValueNames, style: TextStyle, depth: int = 1
) -> list[str]:
    """The lines of `block`'s ops, indented `depth` levels; nested regions one deeper."""
    pad = " " * (style.indent * depth)
    lines = []
    for op in block:
        lines.append(pad + print_op(op, names, style))
        if not op.regions:
            continue
        if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
            raise UnsupportedOpError(
                op.name, op.where(), "cannot be printed (only ops with one region of one block)"
            )
        lines.extend(print_block_lines(op.regions[0].blocks[0], names, style, depth + 1))
        lines.append(pad + "}")
    return lines


def print_program(program: Program, style: TextStyle | None = None) -> str:
    """The program's text, as `str(program)` gives it in Paddle (ends with a newline)."""
    style = style or program.text_style
    names = ValueNames(program)
    lines = ["{", *print_block_lines(program.block, names, style), "}"]
    return "\n".join(lines) + "\n"


def value_names(program: Program) -> dict[str, Value]:
    """`%N` -> value, as the printer numbers them (for `--fetch %N` and outputs keys)."""
    names = ValueNames(program)
    return {f"%{names.number(v)}": v for op in program.ops() for v in op.results}
