"""The values of a symbolic kernel's dims at the signature being compiled.

A schedule over symbolic extents (`S0 * 16` rows) transforms loops with the
expressions, but classifies blocks (full-shaped, one value per row, ...) and picks
configurations by numbers, as it does for a static function. `PIRCompiler` runs the
scheduler inside `bound_dims(values)`; `concrete(extent)` then gives any extent's value.

Taking decisions from the values is safe because the compiler runs per signature and a
kernel is shared only where its source comes out equal (`hlir.symbolic_dims`): a
decision that differs shows in the source, one that does not is valid for both.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Mapping

from cinn_py.ir import dim_guards
from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.expr import Expr, IntImm

_VALUES: contextvars.ContextVar[Mapping[str, int] | None] = contextvars.ContextVar(
    "cinn_py_dim_values", default=None
)


@contextlib.contextmanager
def bound_dims(values: Mapping[str, int] | None) -> Iterator[None]:
    """Makes `values` (dim Var name -> value) what `concrete` reads, inside the block."""
    token = _VALUES.set(dict(values) if values else None)
    try:
        yield
    finally:
        _VALUES.reset(token)


@contextlib.contextmanager
def bound_derived(derive: Callable[[Mapping[str, int]], Mapping[str, int]]) -> Iterator[None]:
    """Binds `derive(the bound dims)` inside the block (an aligned variant is scheduled
    at its aligned length), and has what is read there checked at `derive(new dims)`
    (`dim_guards.derived`)."""
    with bound_dims(derive(current() or {})), dim_guards.derived(derive):
        yield


def concrete(extent: Expr) -> int | None:
    """`extent`'s value: a constant's, or a symbolic extent's at the bound dims; None
    when it reads dims none are bound for. While a schedule's decisions are recorded
    (`ir.dim_guards`), a symbolic extent's value is a GuardedInt, which records what is
    decided by it."""
    if isinstance(extent, IntImm):
        return extent.value
    values = _VALUES.get()
    if values is None:
        return None
    try:
        value = int(evaluate(extent, values))
    except (KeyError, TypeError):
        return None
    return dim_guards.guarded(extent, value)  # type: ignore[return-value]


def current() -> Mapping[str, int] | None:
    """The bound dims (name -> value), None outside `bound_dims`."""
    return _VALUES.get()


def is_dim_name(name: str) -> bool:
    """Whether `name` is a symbolic dim's, a kernel's scalar argument (`S<k>`; no loop,
    iter or buffer name has that form)."""
    return name[:1] == "S" and name[1:].isdigit()
