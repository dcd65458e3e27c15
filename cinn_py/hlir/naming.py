"""Names the compiler gives values, buffers and kernels: C identifiers by construction.

A buffer is named after the value's printed number (`%12` -> `var_12`), so generated
source, IR dumps and the printed program refer to the same thing by the same number.
Names that come from the program itself (feed names, parameter names) never reach
generated source: they only key the Scope. Group names, which name kernels (`fn_<group>`)
and dump files, are made C identifiers of bounded length and unique
(`unique_group_names`) before any stage uses them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence

from cinn_py.hlir.group import Group
from cinn_py.ir.names import fresh_name
from cinn_py.pir.printer import ValueNames
from cinn_py.pir.program import Program
from cinn_py.pir.value import Value

_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")


def sanitize_identifier(text: str, taken: set[str] | None = None) -> str:
    """`text` as a C identifier (`[A-Za-z_][A-Za-z0-9_]*`), made unique against `taken`
    (which it is added to). Characters outside the set become `_`; a leading digit or an
    empty result gets a `_` prefix; a clash gets `_1`, `_2`, ..."""
    name = _NOT_IDENT.sub("_", text)
    if not name or name[0].isdigit():
        name = "_" + name
    return name if taken is None else fresh_name(name, taken)


MAX_NAME_LENGTH = 64
"""Longest group name (and dump label): a kernel name, and a file name with a suffix,
stay well under the file systems' 255 bytes."""


def bounded_name(text: str, limit: int = MAX_NAME_LENGTH) -> str:
    """`text` itself when it has at most `limit` characters, else its first ones, `_` and
    8 hex digits of its hash, `limit` characters in all (distinct long names stay distinct)."""
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{text[: limit - 9]}_{digest}"


def unique_group_names(groups: Sequence[Group]) -> list[Group]:
    """`groups`, each whose name is not a C identifier of at most MAX_NAME_LENGTH
    characters, or repeats an earlier one, replaced by a copy renamed so that it is
    (`g-1` -> `g_1`, a second `same` -> `same_1`). Groups already well named are kept as
    they are (the same objects)."""
    taken: set[str] = set()
    named = []
    for group in groups:
        base = bounded_name(sanitize_identifier(str(group.name)), MAX_NAME_LENGTH - 4)
        name = fresh_name(base, taken)
        named.append(group if name == group.name else dataclasses.replace(group, name=name))
    return named


class NameTable:
    """The compiler's names for one program's values: `var_<N>` for the value printed `%N`."""

    def __init__(self, program: Program) -> None:
        self._numbers = ValueNames(program)

    def number(self, value: Value) -> int:
        number = self._numbers.number(value)
        if number is None:
            raise KeyError(f"{value!r} is not a value of this program")
        return number

    def buffer(self, value: Value) -> str:
        """The buffer (and Scope variable) name of `value`: `var_<N>`."""
        return f"var_{self.number(value)}"

    def printed(self, value: Value) -> str:
        """`%N`, as the printer shows `value`."""
        return f"%{self.number(value)}"
