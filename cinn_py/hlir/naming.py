"""Names the compiler gives values, buffers and kernels: C identifiers by construction.

A buffer is named after the value's printed number (`%12` -> `var_12`), so generated
source, IR dumps and the printed program refer to the same thing by the same number.
Names that come from the program itself (feed names, parameter names) never reach
generated source: they only key the Scope.
"""

from __future__ import annotations

import re

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
