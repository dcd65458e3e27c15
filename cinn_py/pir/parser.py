"""Parses the program text Paddle prints, in both of its formats, into a Program.

Paddle 3.x prints attribute values without their types (`epsilon:1e-05`, `value:2`,
`shape:[8,16]`), so each value is first read as a literal and only then given a kind:
the one the op's declaration names (looked up when the op is parsed, so whatever
dialects are registered are used), or, for undeclared attributes, a guess from the
literal's spelling. The older typed format (`(Double)2`, `(pd_op.IntArray)[1]`,
`builtin.tensor<1xf32>`) names the kind itself, and that kind wins.

Most lines are read whole: an op on a line of its own, spaced as the printer writes it
(as Paddle does), is matched by one regular expression, and its attribute block (or each
`key:value` of it) and type lists are read by the token reader from their text alone,
once per distinct text (a 32-layer model repeats a few hundred of them thousands of
times): 0.05 s rather than 0.33 s for that model's 2,883 ops. Any other line, and any
line with something wrong, is read token by token, so errors and their positions are
the same either way.

The style the text was written in (typed or not, tensor prefix, indent) is recorded
on `program.text_style` and each value keeps its number in `id_hint`, so that
printing the parsed program gives back the input byte for byte. The parser checks
what the text alone can tell (values defined once and before use, types and counts
that agree); checking ops against their declarations is the verifier's job.
"""

from __future__ import annotations

import gc
import math
import os
import re
from collections.abc import Callable, Container, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from cinn_py.errors import LoadError, ParseError
from cinn_py.pir.attributes import ArrayAttribute, Attribute
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.lexer import Lexer, Source, Token, TokenKind, binary_data_reason
from cinn_py.pir.op_def import OpDef, kind_from_name, lookup_op_def, make_attribute
from cinn_py.pir.operation import Location, Operation
from cinn_py.pir.printer import print_type
from cinn_py.pir.program import Program, TextStyle
from cinn_py.pir.types import (
    DYNAMIC,
    DenseTensorType,
    ElementType,
    NullType,
    Type,
    VectorType,
    is_null,
)
from cinn_py.pir.value import Value

T = TypeVar("T")

TYPED_PREFIXES = {
    "Int32": "int32",
    "Int64": "int64",
    "Float": "float",
    "Double": "double",
    "pd_op.IntArray": "int_array",
    "pd_op.DataType": "data_type",
    "pd_op.Place": "place",
    "pd_op.DataLayout": "data_layout",
}
"""The typed format's attribute prefixes (`(Int64)2`) and the kinds they name."""

TENSOR_PREFIXES = {"tensor": None, "builtin.tensor": "builtin", "pd_op.tensor": "pd_op"}
"""Spellings of a dense tensor type and the dialect prefix each carries."""

VECTOR_NAMES = frozenset({"vec", "builtin.vec"})

DATA_LAYOUTS = frozenset(
    {
        "NCHW",
        "NHWC",
        "NCDHW",
        "NDHWC",
        "ANY",
        "ONEDNN",
        "SPARSE_COO",
        "SPARSE_CSR",
        "STRIDED",
        "PSTRING_UNION",
    }
)
"""Bare words taken as a DataLayout when no declaration says what an attribute is."""

MAX_NESTING = 64
"""Deepest nesting of lists and vector types; deeper text is an error, not a RecursionError."""

_ELEMENT_NAMES = {d.short: d for d in DataType if d is not DataType.UNDEFINED}
_DTYPE_NAMES = frozenset(d.value for d in DataType)
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_DIGITS = frozenset("0123456789")
_DIM_CHARS = _DIGITS | {"-"}

_NUMBERED = r"%\d{1,18}"
_OPERAND = rf"(?:{_NUMBERED}|<<NULL VALUE>>)"
_PRINTED_OP = re.compile(
    rf"\((?P<results>{_NUMBERED}(?:, {_NUMBERED})*)?\)"
    r' = "(?P<name>[\w.]+)"'
    rf" \((?P<operands>{_OPERAND}(?:, {_OPERAND})*)?\)"
    r' (?P<attributes>\{[^{}"\n]*(?:"[^"\\\n]*"[^{}"\n]*)*\})'
    r" : \((?P<operand_types>[^()\n]*)\)"
    r" ->(?: (?P<result_types>[^ \t\r\n](?:[^\n]*[^ \t\r\n])?))?"
    r"(?=[ \t\r]*(?:\n|\Z))",
    re.ASCII,
)
"""An op without a region on a line of its own, spaced as the printer (and Paddle) write
it: `(%1) = "pd_op.relu" (%0) {k:v} : (tensor<8xf32>) -> tensor<8xf32>`."""

_PRINTED_ATTRIBUTE = re.compile(
    r'([A-Za-z_][\w.]*:(?:\([\w.]+\))?(?:"[^"\\\n]*"|\[[^\[\]{}"\n]*\]|[^,\[\]{}"\n]+))[,}]',
    re.ASCII,
)
"""One `key:value` of an attribute block as the printer writes it, and the comma or
brace after it: a value that is a string, a list of neither lists nor strings, or a
number, word, type or Place; any of them after a `(Prefix)`."""

_OP_FOLLOWS = re.compile(r"[ \t\r\n]*(?:[(}]|\Z)")
"""What may follow such a line for the op to end there: the next op, a closing brace or
the end (a comma or a type on the next line would continue its result types)."""


def parse_program(text: str, file: str = "<string>") -> Program:
    """The Program that `text` describes; a ParseError (file:line:col) if it is malformed."""
    with _collector_paused():
        return _Parser(text, file).parse_program()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off within the block, if it was on. A parse makes tens of
    thousands of objects (ops, values, uses), all alive until it returns, and every few
    hundred of them the collector would look through them, and through all that is
    imported, for garbage there is none of: a fifth of the parse of a 32-layer model in a
    fresh process (0.064 s with it, 0.051 s without)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def parse_type(text: str) -> Type:
    """One type as the printer writes it (`tensor<2x3xf32>`, `vec[...]`, `<<NULL TYPE>>`
    as NullType); a ParseError if `text` is anything else."""
    parser = _Parser(text, "<type>")
    type_ = parser._parse_result_type()
    parser._expect(TokenKind.EOF, " after the type")
    return type_


def parse_attribute(text: str, op_name: str, key: str) -> Attribute:
    """The value of attribute `key` of an `op_name` op as the printer writes it (typed
    or not), read as the parser reads it in a program; a ParseError if it is not one."""
    parser = _Parser(text, "<attribute>")
    literal = parser._parse_literal()
    attribute = parser._attribute(literal, key, op_name, lookup_op_def(op_name))
    parser._expect(TokenKind.EOF, " after the attribute")
    return attribute


def parse_file(path: str | os.PathLike[str]) -> Program:
    """Parse the program text in file `path` (UTF-8; a leading byte-order mark is
    skipped). A file that cannot be read, or holds no text (binary data, UTF-16), is a
    LoadError saying so; text that is not UTF-8 a ParseError at the first bad byte."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise LoadError(f"{name}: cannot read: {error.strerror or error}") from None
    return parse_program(decode_text(data, name), name)


def decode_text(data: bytes, file: str) -> str:
    """The program text in `data`, read from `file` (for the errors; see `parse_file`)."""
    reason = binary_data_reason(data)
    if reason is not None:
        raise LoadError(f"{file}: is not a text program: {reason}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _decode_error(error, file) from None


def _decode_error(error: UnicodeDecodeError, file: str) -> ParseError:
    """A ParseError at the first byte that is not UTF-8 (the column counts characters)."""
    data = error.object
    line_start = data.rfind(b"\n", 0, error.start) + 1
    line_end = data.find(b"\n", error.start)
    source_line = data[line_start : len(data) if line_end < 0 else line_end]
    return ParseError(
        f"the file is not UTF-8 text: byte 0x{data[error.start]:02x} cannot be decoded",
        file=file,
        line=data.count(b"\n", 0, error.start) + 1,
        col=len(data[line_start : error.start].decode("utf-8")) + 1,
        source_line=source_line.decode("utf-8", errors="replace"),
    )


# -- attribute literals ------------------------------------------------------------------


@dataclass(frozen=True)
class _Literal:
    """An attribute value as written, before its kind is known.

    `form`: bool, int, float, str, word (a bare name such as float32 or NCHW), place,
    type, array (value: list of literals) or typed (value: (prefix, literal)).
    """

    form: str
    token: Token
    value: Any

    def describe(self) -> str:
        if self.form == "array":
            return "a list"
        if self.form == "typed":
            return f"'({self.value[0]})...'"
        return self.token.describe()

    @property
    def is_negative_zero(self) -> bool:
        """`-0`: integers have no negative zero, so it can only be a float printed by %g."""
        return self.form == "int" and self.value == 0 and self.token.text.startswith("-")


class _BadValue(Exception):
    """A literal that cannot be an attribute of the kind asked for (becomes a ParseError)."""

    def __init__(self, literal: _Literal, reason: str) -> None:
        super().__init__(reason)
        self.literal = literal
        self.reason = reason


_FORMS = {
    "bool": {"bool"},
    "int32": {"int"},
    "int64": {"int"},
    "float": {"int", "float"},
    "double": {"int", "float"},
    "str": {"str"},
    "type": {"type", "word"},
    "int_array": {"array"},
    "data_type": {"word"},
    "place": {"place"},
    "data_layout": {"word"},
    "scalar": {"bool", "int", "float"},
}
"""For each declared kind, the literal forms that may spell it."""

_EXPECTED = {
    "bool": "true or false",
    "int32": "an integer",
    "int64": "an integer",
    "float": "a number",
    "double": "a number",
    "str": "a quoted string",
    "type": "a type",
    "int_array": "a list of integers",
    "data_type": "a data type such as float32",
    "place": "Place(...)",
    "data_layout": "a data layout such as NCHW",
    "scalar": "a number or a bool",
}

_TOKEN_FORMS = {TokenKind.STRING: "str", TokenKind.PLACE: "place", TokenKind.IDENT: "word"}
"""Literals that are one token, taken as they are (after numbers, bools and types)."""

_GUESSED_KINDS = {
    "bool": "bool",
    "float": "double",
    "str": "str",
    "place": "place",
    "type": "type",
}


def _to_attribute(literal: _Literal, kind: str | None, label: str) -> Attribute:
    """The attribute `literal` spells, of `kind` (None: guess); `label` says where the
    kind came from, for the error message."""
    if literal.form == "typed":
        prefix, inner = literal.value
        return _to_attribute(inner, TYPED_PREFIXES[prefix], f"typed ({prefix})")
    if kind is None:
        return _guess(literal)
    if kind.startswith("array"):
        if literal.form != "array":
            raise _BadValue(literal, f"{label}, expected a list, found {literal.describe()}")
        item_kind = kind[len("array<") : -1] if kind != "array" else None
        return ArrayAttribute.get([_to_attribute(item, item_kind, label) for item in literal.value])
    if literal.form not in _FORMS[kind]:
        raise _BadValue(literal, f"{label}, expected {_EXPECTED[kind]}, found {literal.describe()}")
    return _build(literal, kind, label)


def _guess(literal: _Literal) -> Attribute:
    """An undeclared attribute's kind, from its spelling alone."""
    label = "not declared"
    if literal.form == "array":
        return ArrayAttribute.get([_to_attribute(item, None, label) for item in literal.value])
    if literal.form == "int":
        if literal.is_negative_zero:
            kind = "double"
        else:
            kind = "int32" if -(2**31) <= literal.value < 2**31 else "int64"
    elif literal.form == "word":
        kind = _guess_word_kind(literal)
    else:
        kind = _GUESSED_KINDS[literal.form]
    return _build(literal, kind, label)


def _guess_word_kind(literal: _Literal) -> str:
    word = literal.value
    if word in _DTYPE_NAMES:
        return "data_type"
    if word in DATA_LAYOUTS:
        return "data_layout"
    if word in _ELEMENT_NAMES:
        return "type"
    raise _BadValue(
        literal,
        f"not declared, cannot tell the kind of '{word}': expected a data type such as "
        "float32, a data layout such as NCHW, or an element type such as f32",
    )


def _build(literal: _Literal, kind: str, label: str) -> Attribute:
    try:
        return make_attribute(kind_from_name(kind), _python_value(literal, kind))
    except ValueError as error:
        raise _BadValue(literal, f"{label}, {error}") from None


def _python_value(literal: _Literal, kind: str) -> Any:
    """The Python value `make_attribute(kind, ...)` takes for a literal of a fitting form."""
    if kind == "int_array":
        return [_int_item(item) for item in literal.value]
    if kind == "data_type":
        return DataType.from_name(literal.value)
    if kind == "type" and literal.form == "word":
        return _element_type(literal)
    if literal.form == "int" and (kind in ("float", "double") or literal.is_negative_zero):
        value = float(literal.token.text)
    else:
        value = literal.value
    if kind == "float" and math.isfinite(value) and abs(value) > _FLOAT32_MAX:
        raise ValueError(f"{literal.token.text} is out of float32 range")
    return value


def _int_item(item: _Literal) -> int:
    if item.form != "int":
        raise _BadValue(item, f"expected an integer in the list, found {item.describe()}")
    return item.value


def _element_type(literal: _Literal) -> ElementType:
    if literal.value not in _ELEMENT_NAMES:
        raise ValueError(f"unknown element type '{literal.value}'")
    return ElementType.get(_ELEMENT_NAMES[literal.value])


def _printed_attributes(block: str) -> list[str] | None:
    """The `key:value` texts of attribute block `block` (`{k:v,...}`), if each is as
    `_PRINTED_ATTRIBUTE` takes it; else None."""
    entries: list[str] = []
    pos = 1
    while block != "{}":
        match = _PRINTED_ATTRIBUTE.match(block, pos)
        if match is None:
            return None
        entries.append(match.group(1))
        pos = match.end()
        if block[pos - 1] == "}":
            return entries if pos == len(block) else None
    return entries


# -- the parser -------------------------------------------------------------------------


_Style = tuple[bool, str | None]
"""What a piece of text showed of its style: typed, and the first tensor prefix."""


class _Parser:
    """Recursive descent over the lexer's tokens, with one token of lookahead; an op on a
    line as the printer writes it is read whole (`_read_printed_op`) unless `whole_lines`
    is off (the tests compare the two)."""

    def __init__(self, text: str, file: str, whole_lines: bool = True) -> None:
        self._source = Source(text, file)
        self._lexer = Lexer(self._source)
        self._token = self._lexer.next_token()
        self._values: dict[int, Value] = {}
        self._defined_at: dict[int, int] = {}
        self._typed = False
        self._tensor_prefix: str | None = None
        self._depth = 0
        self._whole_lines = whole_lines
        self._read_alone_cache: dict[tuple[str, str, str, int], tuple[Any, _Style]] = {}

    # -- tokens ------------------------------------------------------------------------
    def _advance(self) -> Token:
        token = self._token
        self._token = self._lexer.next_token()
        return token

    def _at(self, kind: TokenKind) -> bool:
        return self._token.kind is kind

    def _accept(self, kind: TokenKind) -> Token | None:
        return self._advance() if self._at(kind) else None

    def _expect(self, kind: TokenKind, purpose: str = "") -> Token:
        if not self._at(kind):
            raise self._error(f"expected {kind.value}{purpose}, found {self._token.describe()}")
        return self._advance()

    def _error(self, message: str, token: Token | None = None) -> ParseError:
        token = token or self._token
        return self._source.error(message, token.line, token.col)

    def _int(self, text: str, token: Token) -> int:
        try:
            return int(text)
        except ValueError:
            raise self._error(f"integer '{text[:20]}...' has too many digits", token) from None

    def _list(self, parse_item: Callable[[], T], closer: TokenKind, what: str) -> list[T]:
        """Items separated by commas up to `closer` (the opener is already consumed)."""
        items: list[T] = []
        if self._accept(closer):
            return items
        while True:
            items.append(parse_item())
            if self._accept(closer):
                return items
            if not self._accept(TokenKind.COMMA):
                raise self._error(
                    f"expected ',' or {closer.value} in {what}, found {self._token.describe()}"
                )

    @contextmanager
    def _nested(self, opener: Token) -> Iterator[None]:
        self._depth += 1
        if self._depth > MAX_NESTING:
            raise self._error(f"nesting deeper than {MAX_NESTING} levels", opener)
        try:
            yield
        finally:
            self._depth -= 1

    # -- program and ops ---------------------------------------------------------------
    def parse_program(self) -> Program:
        if self._at(TokenKind.EOF):
            raise self._error("empty input: expected '{' to start a program")
        opening = self._expect(TokenKind.LBRACE, " to start a program")
        program = Program()
        program.source = self._source.file
        indent = None
        while not self._accept(TokenKind.RBRACE):
            if self._at(TokenKind.EOF):
                raise self._error(
                    f"missing closing '}}' of the program opened at line {opening.line}, "
                    f"col {opening.col}: found end of input"
                )
            if not self._at(TokenKind.LPAREN):
                raise self._error(
                    "expected '(' to start an op or '}' to end the program, "
                    f"found {self._token.describe()}"
                )
            if indent is None:
                indent = self._token.col - 1
            program.block.append(self._parse_op())
        if not self._at(TokenKind.EOF):
            raise self._error(
                f"expected end of input after the program's closing '}}', "
                f"found {self._token.describe()}"
            )
        program.text_style = TextStyle(
            typed=self._typed,
            tensor_prefix=self._tensor_prefix or "builtin",
            indent=4 if indent is None else indent,
        )
        return program

    def _parse_op(self) -> Operation:
        """`(%r, ...) = "name" (%a, ...) {key:value, ...} : (types) -> types`"""
        if self._whole_lines:
            op = self._read_printed_op()
            if op is not None:
                return op
        start = self._expect(TokenKind.LPAREN)
        names = self._list(self._parse_result_name, TokenKind.RPAREN, "the result list")
        self._expect(TokenKind.EQUAL)
        name = self._expect(TokenKind.STRING, " (the op name)").value
        self._expect(TokenKind.LPAREN, " to open the operand list")
        operands = self._list(self._parse_operand, TokenKind.RPAREN, "the operand list")
        attributes = self._parse_attributes(name)
        has_region = self._at(TokenKind.ARROW)
        if not has_region:
            self._expect(TokenKind.COLON, " (or '->' for an op with a region)")
            self._check_operand_types(operands)
        arrow = self._expect(TokenKind.ARROW)
        result_types = self._parse_result_types()
        if len(result_types) != len(names):
            raise self._error(
                f"the op names {len(names)} result(s) but lists {len(result_types)} result type(s)",
                arrow,
            )
        op = Operation.create(
            name,
            [value for _, value in operands],
            result_types,
            attributes,
            num_regions=1 if has_region else 0,
            loc=Location(self._source.file, start.line),
        )
        if has_region:
            self._parse_region_block(op)
        for number, result in zip(names, op.results, strict=True):
            result.id_hint = number
            self._values[number] = result
        return op

    def _read_printed_op(self) -> Operation | None:
        """The op at the current '(', read whole if its line is as the printer writes it
        (`_PRINTED_OP`) and it is valid; else None, and `_parse_op` reads it token by
        token, which says what is wrong and where.

        Its attributes and lists of types are read by the token reader too, from their
        text alone (`_read_alone`), once per distinct text: a model repeats them layer
        after layer. Nothing changes until the whole op has read well, so the token
        reader can start the op again from its first token."""
        start = self._token
        text = self._source.text
        match = _PRINTED_OP.match(text, start.offset)
        if match is None or _OP_FOLLOWS.match(text, match.end()) is None:
            return None
        results, name, operands, attributes_text, operand_types, result_types = match.groups()
        numbers = [int(n) for n in results[1:].split(", %")] if results else []
        if len(set(numbers)) < len(numbers) or any(n in self._defined_at for n in numbers):
            return None
        values: list[Value | None] = []
        for operand_text in operands.split(", ") if operands else ():
            value = None
            if operand_text[0] == "%":
                value = self._values.get(int(operand_text[1:]))
                if value is None:
                    return None
            values.append(value)
        parts = (
            self._read_printed_attributes(name, attributes_text),
            self._read_alone(":", operand_types, lambda p: p._types_alone(p._parse_type)),
            self._read_alone(
                "->", result_types or "", lambda p: p._types_alone(p._parse_result_type)
            ),
        )
        if None in parts:
            return None
        (attributes, _), (types, _), (result_type_list, _) = parts
        if len(types) != len(values) or len(result_type_list) != len(numbers):
            return None
        for value, type_ in zip(values, types, strict=True):
            if type_ is not (None if value is None or is_null(value.type) else value.type):
                return None
        for _, (typed, prefix) in parts:
            self._typed = self._typed or typed
            self._tensor_prefix = self._tensor_prefix or prefix
        loc = Location(self._source.file, start.line)
        op = Operation.create(name, values, result_type_list, attributes, loc=loc)
        for number, result in zip(numbers, op.results, strict=True):
            self._defined_at[number] = start.line
            result.id_hint = number
            self._values[number] = result
        self._lexer.skip_to(match.end())
        self._token = self._lexer.next_token()
        return op

    def _read_printed_attributes(
        self, op_name: str, text: str
    ) -> tuple[dict[str, Attribute], _Style] | None:
        """The attribute block `text` of an `op_name` op, as `_read_alone` reads it, but
        each `key:value` read alone where they are as the printer writes them: the blocks
        of a model's parameters differ in one name."""
        key = ("{}", op_name, text, self._depth)
        done = self._read_alone_cache.get(key)
        if done is not None:
            return done
        entries = _printed_attributes(text)
        if entries is None:
            return self._read_alone("{}", text, lambda p: p._parse_attributes(op_name), op_name)
        op_def = lookup_op_def(op_name)
        attributes: dict[str, Attribute] = {}
        typed, prefix = False, None
        for entry in entries:
            read = self._read_alone(
                "k:v", entry, lambda p: p._parse_attribute_entry(op_name, op_def), op_name
            )
            if read is None:
                return None
            (name, attribute), (entry_typed, entry_prefix) = read
            if name in attributes:
                return None
            attributes[name] = attribute
            typed, prefix = typed or entry_typed, prefix or entry_prefix
        done = self._read_alone_cache[key] = (attributes, (typed, prefix))
        return done

    def _read_alone(
        self, what: str, text: str, read: Callable[[_Parser], T], op_name: str = ""
    ) -> tuple[T, _Style] | None:
        """`read(parser)` on a parser of `text` alone, which must read all of it, at this
        nesting depth: its result and the style it saw; None where the text is malformed
        (the token reader, in place, then says how). Kept by `what` (the part of an op),
        text, op name (attributes are read by its declaration) and depth.

        Alone, a text reads as it does in place: it ends with a bracket, or just before a
        comma, a closing bracket or the end of its line, and the lexer cuts no token
        differently for what follows it there."""
        key = (what, op_name, text, self._depth)
        done = self._read_alone_cache.get(key)
        if done is None:
            try:
                parser = _Parser(text, self._source.file, whole_lines=False)
                parser._depth = self._depth
                result = read(parser)
                parser._expect(TokenKind.EOF)
            except ParseError:
                return None
            done = self._read_alone_cache[key] = (result, (parser._typed, parser._tensor_prefix))
        return done

    def _types_alone(self, parse_type: Callable[[], T]) -> list[T]:
        """Types separated by commas up to the end of the text (none if it is empty)."""
        if self._at(TokenKind.EOF):
            return []
        types = [parse_type()]
        while self._accept(TokenKind.COMMA):
            types.append(parse_type())
        return types

    def _parse_region_block(self, op: Operation) -> None:
        """`{ op ... }`: the one block of `op`'s region. Values defined inside are not
        visible after the closing brace; values defined before are (as in Paddle)."""
        opening = self._expect(TokenKind.LBRACE, f" to open the region of {op.name}")
        block = op.regions[0].add_block()
        outer = set(self._values)
        with self._nested(opening):
            while not self._accept(TokenKind.RBRACE):
                if self._at(TokenKind.EOF):
                    raise self._error(
                        f"missing closing '}}' of the region opened at line {opening.line}, "
                        f"col {opening.col}: found end of input"
                    )
                if not self._at(TokenKind.LPAREN):
                    raise self._error(
                        "expected '(' to start an op or '}' to end the region, "
                        f"found {self._token.describe()}"
                    )
                block.append(self._parse_op())
        for number in set(self._values) - outer:
            del self._values[number]

    def _parse_result_name(self) -> int:
        token = self._expect(TokenKind.VALUE, " (a result name)")
        number = self._int(token.value, token)
        if number in self._defined_at:
            raise self._error(
                f"value %{number} is defined twice (first at line {self._defined_at[number]})",
                token,
            )
        self._defined_at[number] = token.line
        return number

    def _parse_operand(self) -> tuple[Token, Value | None]:
        token = self._token
        if self._accept(TokenKind.NULL_VALUE):
            return token, None
        self._expect(TokenKind.VALUE, " or '<<NULL VALUE>>' (an operand)")
        value = self._values.get(self._int(token.value, token))
        if value is None:
            raise self._error(f"undefined value {token.text}", token)
        return token, value

    def _check_operand_types(self, operands: list[tuple[Token, Value | None]]) -> None:
        """The operand type list must repeat, one for one, the types of the operands."""
        opening = self._expect(TokenKind.LPAREN, " to open the operand types")
        types = self._list(self._parse_located_type, TokenKind.RPAREN, "the operand types")
        if len(types) != len(operands):
            raise self._error(
                f"the op has {len(operands)} operand(s) but lists {len(types)} operand type(s)",
                opening,
            )
        for (value_token, value), (type_token, type_) in zip(operands, types, strict=True):
            # a use of a null-typed result lists <<NULL TYPE>> too (the verifier rejects it)
            actual = None if value is None or is_null(value.type) else value.type
            if type_ is not actual:
                raise self._error(
                    f"operand {value_token.text} has type {print_type(actual)}, "
                    f"but the operand types list {print_type(type_)}",
                    type_token,
                )

    def _parse_result_types(self) -> list[Type]:
        """The types after `->`: none (the line ends) or a comma-separated list. A result
        typed <<NULL TYPE>> is one the op leaves unmade (`NullType`)."""
        starts = (TokenKind.ANGLE_TYPE, TokenKind.IDENT, TokenKind.NULL_TYPE)
        if self._token.kind not in starts:
            return []
        types = [self._parse_result_type()]
        while self._accept(TokenKind.COMMA):
            types.append(self._parse_result_type())
        return types

    def _parse_result_type(self) -> Type:
        type_ = self._parse_type()
        return NullType.get() if type_ is None else type_

    # -- attributes --------------------------------------------------------------------
    def _parse_attributes(self, op_name: str) -> dict[str, Attribute]:
        self._expect(TokenKind.LBRACE, " to open the attributes")
        op_def = lookup_op_def(op_name)
        attributes: dict[str, Attribute] = {}

        def parse_one() -> None:
            key, attribute = self._parse_attribute_entry(op_name, op_def, attributes)
            attributes[key] = attribute

        self._list(parse_one, TokenKind.RBRACE, "the attributes")
        return attributes

    def _parse_attribute_entry(
        self, op_name: str, op_def: OpDef | None, seen: Container[str] = ()
    ) -> tuple[str, Attribute]:
        """`key:value`, its key not one of `seen`."""
        key = self._expect(TokenKind.IDENT, " (an attribute name)")
        if key.text in seen:
            raise self._error(f"duplicate attribute '{key.text}'", key)
        self._expect(TokenKind.COLON, f" after attribute name '{key.text}'")
        literal = self._parse_literal()
        return key.text, self._attribute(literal, key.text, op_name, op_def)

    def _attribute(
        self, literal: _Literal, key: str, op_name: str, op_def: OpDef | None
    ) -> Attribute:
        spec = op_def.attr_spec(key) if op_def is not None else None
        kind = spec.kind_name if spec is not None else None
        try:
            return _to_attribute(literal, kind, f"declared {kind}" if kind else "not declared")
        except _BadValue as bad:
            raise self._error(
                f"attribute '{key}' of {op_name}: {bad.reason}", bad.literal.token
            ) from None

    def _parse_literal(self) -> _Literal:
        token = self._token
        kind = token.kind
        if kind is TokenKind.LBRACKET:
            return self._parse_list_literal()
        if kind is TokenKind.LPAREN:
            return self._parse_typed_literal()
        if kind is TokenKind.ANGLE_TYPE or (kind is TokenKind.IDENT and token.text in VECTOR_NAMES):
            return _Literal("type", token, self._parse_type())
        if kind is TokenKind.NUMBER:
            self._advance()
            return self._number(token)
        if kind is TokenKind.IDENT and token.text in ("true", "false"):
            self._advance()
            return _Literal("bool", token, token.text == "true")
        if kind in _TOKEN_FORMS:
            self._advance()
            return _Literal(_TOKEN_FORMS[kind], token, token.value)
        raise self._error(f"expected an attribute value, found {token.describe()}")

    def _number(self, token: Token) -> _Literal:
        text = token.text
        if text.lstrip("-").isdigit():
            return _Literal("int", token, self._int(text, token))
        return _Literal("float", token, float(text))

    def _parse_list_literal(self) -> _Literal:
        opener = self._advance()
        with self._nested(opener):
            items = self._list(self._parse_literal, TokenKind.RBRACKET, "a list")
        return _Literal("array", opener, items)

    def _parse_typed_literal(self) -> _Literal:
        """`(Prefix)value` of the typed format; the prefix names the kind."""
        opener = self._advance()
        prefix = self._expect(TokenKind.IDENT, " (an attribute type such as Int64)")
        if prefix.text not in TYPED_PREFIXES:
            known = ", ".join(f"({p})" for p in TYPED_PREFIXES)
            raise self._error(
                f"unknown typed-attribute prefix '({prefix.text})': expected one of {known}",
                prefix,
            )
        self._expect(TokenKind.RPAREN, f" after '({prefix.text}'")
        self._typed = True
        return _Literal("typed", opener, (prefix.text, self._parse_literal()))

    # -- types -------------------------------------------------------------------------
    def _parse_located_type(self) -> tuple[Token, Type | None]:
        token = self._token
        return token, self._parse_type()

    def _parse_non_null_type(self, what: str) -> Type:
        token = self._token
        type_ = self._parse_type()
        if type_ is None:
            raise self._error(f"{what} cannot have type <<NULL TYPE>>", token)
        return type_

    def _parse_type(self) -> Type | None:
        """`tensor<...>` (any prefix), `vec[...]`, an element type, or <<NULL TYPE>> (None)."""
        token = self._token
        if self._accept(TokenKind.NULL_TYPE):
            return None
        if self._accept(TokenKind.ANGLE_TYPE):
            return self._tensor_type(token)
        if token.kind is TokenKind.IDENT and token.text in VECTOR_NAMES:
            return self._parse_vector_type()
        if self._accept(TokenKind.IDENT):
            if token.text in _ELEMENT_NAMES:
                return ElementType.get(_ELEMENT_NAMES[token.text])
            raise self._error(
                f"unknown type '{token.text}': expected tensor<...>, vec[...] or <<NULL TYPE>>",
                token,
            )
        raise self._error(f"expected a type, found {token.describe()}")

    def _parse_vector_type(self) -> VectorType:
        name = self._advance()
        opener = self._expect(TokenKind.LBRACKET, f" after '{name.text}'")
        with self._nested(opener):
            items = self._list(
                lambda: self._parse_non_null_type("a vector item"),
                TokenKind.RBRACKET,
                "a vector type",
            )
        return VectorType.get(items)

    def _tensor_type(self, token: Token) -> DenseTensorType:
        """`tensor<8x-1xf32>`: dims, each followed by 'x', then an element type."""
        name = token.text[: len(token.text) - len(token.value) - 2]
        if name not in TENSOR_PREFIXES:
            raise self._error(
                f"unknown type '{name}<...>': expected tensor<...>, builtin.tensor<...> "
                "or pd_op.tensor<...>",
                token,
            )
        if TENSOR_PREFIXES[name] is not None:
            self._typed = True
            self._tensor_prefix = self._tensor_prefix or TENSOR_PREFIXES[name]
        dims, element = self._tensor_body(token, token.col + len(name) + 1)
        return DenseTensorType.get(element, dims)

    def _tensor_body(self, token: Token, body_col: int) -> tuple[list[int], ElementType]:
        body = token.value
        dims: list[int] = []
        pos = 0
        while pos < len(body) and body[pos] in _DIM_CHARS:
            end = pos + 1
            while end < len(body) and body[end] in _DIGITS:
                end += 1
            dim = self._tensor_dim(token, body[pos:end], body_col + pos)
            if not body.startswith("x", end):
                found = f"'{body[end]}'" if end < len(body) else "'>'"
                raise self._tensor_error(
                    token, f"expected 'x' after dim {dim}, found {found}", body_col + end
                )
            dims.append(dim)
            pos = end + 1
        return dims, self._element_of(token, body[pos:], body_col + pos)

    def _tensor_dim(self, token: Token, text: str, col: int) -> int:
        if text in ("-", ""):
            raise self._tensor_error(token, "expected a dim after '-'", col)
        dim = self._int(text, token)
        if dim < DYNAMIC:
            raise self._tensor_error(
                token, f"dim {dim} is invalid (a size, or -1 for dynamic)", col
            )
        return dim

    def _element_of(self, token: Token, name: str, col: int) -> ElementType:
        if name in _ELEMENT_NAMES:
            return ElementType.get(_ELEMENT_NAMES[name])
        if name.isalnum() and name.isascii() and name[0].isalpha():
            known = ", ".join(_ELEMENT_NAMES)
            raise self._source.error(
                f"unknown element type '{name}' in tensor type: expected one of {known}",
                token.line,
                col,
            )
        found = f"'{name}'" if name else "'>'"
        raise self._tensor_error(token, f"expected an element type such as f32, found {found}", col)

    def _tensor_error(self, token: Token, why: str, col: int) -> ParseError:
        return self._source.error(
            f"bad tensor type syntax in '{token.text}': {why}", token.line, col
        )
