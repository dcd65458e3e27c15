"""Tokens of Paddle's program text, each with the line and column where it starts.

Paddle's printer writes a few compound spellings that are easiest to take whole:
`tensor<8x16xf32>` (its body runs digits and letters together), `Place(gpu:0)`, and
the `<<NULL VALUE>>` / `<<NULL TYPE>>` markers. The lexer hands each of these to the
parser as one token, so the parser stays LL(1) and the lexer needs no modes. Tokens
are made on demand, so errors come out in the order they appear in the text.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from cinn_py.errors import ParseError


class TokenKind(enum.Enum):
    """A token's kind; the value is how an error message names it."""

    LBRACE = "'{'"
    RBRACE = "'}'"
    LPAREN = "'('"
    RPAREN = "')'"
    LBRACKET = "'['"
    RBRACKET = "']'"
    COMMA = "','"
    COLON = "':'"
    EQUAL = "'='"
    ARROW = "'->'"
    VALUE = "a value such as %0"
    STRING = "a quoted string"
    NUMBER = "a number"
    IDENT = "a name"
    ANGLE_TYPE = "a tensor type"
    PLACE = "Place(...)"
    NULL_VALUE = "'<<NULL VALUE>>'"
    NULL_TYPE = "'<<NULL TYPE>>'"
    EOF = "end of input"


@dataclass(frozen=True)
class Token:
    """One token. `text` is its spelling; `value` its payload: a string's contents, the
    body of `tensor<...>` or `Place(...)`, the digits of `%N`, else the spelling;
    `offset` where it starts in the text."""

    kind: TokenKind
    text: str
    line: int
    col: int
    value: str
    offset: int

    def describe(self) -> str:
        """The token as an error message quotes it."""
        if self.kind is TokenKind.EOF:
            return "end of input"
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return f"'{text}'"


class Source:
    """The text being parsed, kept by line so that errors can quote the offending one."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.lines = text.split("\n")

    def error(self, message: str, line: int, col: int) -> ParseError:
        source_line = self.lines[line - 1] if 1 <= line <= len(self.lines) else ""
        return ParseError(message, file=self.file, line=line, col=col, source_line=source_line)


_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_MAGICS = (
    (b"PK\x03\x04", "a zip archive (an .npz?)"),
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"\x7fELF", "an ELF executable or library"),
    (b"\x89PNG", "a PNG image"),
    (b"\x1f\x8b", "gzip-compressed data"),
)
_CONTROL_BYTES = frozenset(range(32)) - {ord("\t"), ord("\n"), ord("\r"), ord("\f"), ord("\v")}


def binary_data_reason(data: bytes) -> str | None:
    """Why `data` is no text at all, as an error message ends: `it looks like binary data
    (a NUL byte at offset 12)`, `it is UTF-16 text (...)`; None for text, UTF-8 or not
    (invalid UTF-8 or a stray control character in text is better pointed at by line and
    column)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return f"it is {encoding} text (it starts with a byte-order mark); cinn_py reads UTF-8"
    head = data[:64]
    if len(head) >= 4 and (
        head[0::2].count(0) == len(head[0::2]) or head[1::2].count(0) == len(head[1::2])
    ):
        return "it looks like UTF-16 text (every other byte is NUL); cinn_py reads UTF-8"
    for magic, what in _MAGICS:
        if data.startswith(magic):
            return f"it looks like {what}"
    nul = data.find(0)
    if nul >= 0:
        return f"it looks like binary data (a NUL byte at offset {nul})"
    sample = data[:4096]
    controls = [offset for offset, byte in enumerate(sample) if byte in _CONTROL_BYTES]
    if len(controls) * 100 > len(sample):  # one stray control byte is a typo, not binary
        first = controls[0]
        return (
            f"it looks like binary data ({len(controls)} control bytes in its first "
            f"{len(sample)}, the first 0x{sample[first]:02x} at offset {first})"
        )
    return None


_PUNCTUATION = {
    "{": TokenKind.LBRACE,
    "}": TokenKind.RBRACE,
    "(": TokenKind.LPAREN,
    ")": TokenKind.RPAREN,
    "[": TokenKind.LBRACKET,
    "]": TokenKind.RBRACKET,
    ",": TokenKind.COMMA,
    ":": TokenKind.COLON,
    "=": TokenKind.EQUAL,
}
_NULL_MARKERS = {"<<NULL VALUE>>": TokenKind.NULL_VALUE, "<<NULL TYPE>>": TokenKind.NULL_TYPE}
_WHITESPACE = " \t\r\n"

_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|(?:inf|nan)(?![\w.]))", re.ASCII)
_IDENT = re.compile(r"[A-Za-z_][\w.]*", re.ASCII)
_VALUE = re.compile(r"%(\d+)", re.ASCII)
_ANGLE_BODY = re.compile(r"[\w-]*", re.ASCII)
_PLACE_BODY = re.compile(r"[\w:]*", re.ASCII)


class Lexer:
    """Cuts a Source into tokens, one `next_token()` at a time."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._text = source.text
        self._pos = 0
        self._line = 1
        self._line_start = 0
        self._end_of_last = (1, 1)

    def next_token(self) -> Token:
        """The next token; at the end, an EOF token placed just after the last one, so
        that 'found end of input' errors point at a line that has text."""
        self._skip_whitespace()
        if self._pos >= len(self._text):
            return Token(TokenKind.EOF, "", *self._end_of_last, "", len(self._text))
        token = self._lex_token(self._line, self._pos - self._line_start + 1)
        self._pos += len(token.text)
        self._end_of_last = (token.line, token.col + len(token.text))
        return token

    def skip_to(self, offset: int) -> None:
        """Go on from `offset`, on the line of the last token: the parser has read the
        text up to there itself, ending with a token, and the next token follows it."""
        self._end_of_last = (self._line, offset - self._line_start + 1)
        self._pos = offset

    def _skip_whitespace(self) -> None:
        text = self._text
        while self._pos < len(text) and text[self._pos] in _WHITESPACE:
            if text[self._pos] == "\n":
                self._line += 1
                self._line_start = self._pos + 1
            self._pos += 1

    def _error(self, message: str, line: int, col: int) -> ParseError:
        return self._source.error(message, line, col)

    def _lex_token(self, line: int, col: int) -> Token:
        text, pos = self._text, self._pos
        char = text[pos]
        if char in _PUNCTUATION:
            return Token(_PUNCTUATION[char], char, line, col, char, pos)
        if char == '"':
            return self._lex_string(line, col)
        if char == "<":
            return self._lex_null_marker(line, col)
        if text.startswith("->", pos):
            return Token(TokenKind.ARROW, "->", line, col, "->", pos)
        if char == "%":
            match = _VALUE.match(text, pos)
            if match is None:
                raise self._error("expected a value number after '%'", line, col)
            return Token(TokenKind.VALUE, match.group(), line, col, match.group(1), pos)
        match = _NUMBER.match(text, pos)
        if match is not None:
            return Token(TokenKind.NUMBER, match.group(), line, col, match.group(), pos)
        match = _IDENT.match(text, pos)
        if match is not None:
            return self._lex_word(match.group(), line, col)
        raise self._error(f"unexpected character {char!r}", line, col)

    def _lex_string(self, line: int, col: int) -> Token:
        """A string; `\\"` is its only escape, as Paddle escapes nothing else."""
        text, start = self._text, self._pos
        chars: list[str] = []
        i = start + 1
        while i < len(text) and text[i] != "\n":
            if text[i] == "\\" and text.startswith('"', i + 1):
                chars.append('"')
                i += 2
            elif text[i] == '"':
                return Token(
                    TokenKind.STRING, text[start : i + 1], line, col, "".join(chars), self._pos
                )
            else:
                chars.append(text[i])
                i += 1
        raise self._error("unterminated string: no closing '\"' on this line", line, col)

    def _lex_null_marker(self, line: int, col: int) -> Token:
        for spelling, kind in _NULL_MARKERS.items():
            if self._text.startswith(spelling, self._pos):
                return Token(kind, spelling, line, col, spelling, self._pos)
        raise self._error("unexpected character '<'", line, col)

    def _lex_word(self, word: str, line: int, col: int) -> Token:
        """A name, or the whole of `name<...>` (a tensor type) or `Place(...)`."""
        after = self._pos + len(word)
        if self._text.startswith("<", after):
            return self._lex_angle_type(word, after + 1, line, col)
        if word == "Place" and self._text.startswith("(", after):
            return self._lex_place(after + 1, line, col)
        return Token(TokenKind.IDENT, word, line, col, word, self._pos)

    def _lex_angle_type(self, word: str, body_start: int, line: int, col: int) -> Token:
        """`word<body>`; the body (`8x-1xf32`) is split up by the parser."""
        end = _ANGLE_BODY.match(self._text, body_start).end()
        if not self._text.startswith(">", end):
            raise self._error(
                f"bad tensor type syntax: expected '>' to close '{word}<', "
                f"found {self._describe_char(end)}",
                line,
                col + end - self._pos,
            )
        body = self._text[body_start:end]
        return Token(
            TokenKind.ANGLE_TYPE, self._text[self._pos : end + 1], line, col, body, self._pos
        )

    def _lex_place(self, body_start: int, line: int, col: int) -> Token:
        """`Place(cpu)`, `Place(gpu:0)`, `Place(undefined:0)`."""
        end = _PLACE_BODY.match(self._text, body_start).end()
        if not self._text.startswith(")", end):
            raise self._error(
                f"expected ')' to close 'Place(', found {self._describe_char(end)}",
                line,
                col + end - self._pos,
            )
        body = self._text[body_start:end]
        return Token(TokenKind.PLACE, self._text[self._pos : end + 1], line, col, body, self._pos)

    def _describe_char(self, index: int) -> str:
        if index >= len(self._text):
            return "end of input"
        char = self._text[index]
        return "end of line" if char == "\n" else repr(char)
