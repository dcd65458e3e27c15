"""Guards: what a schedule read of a symbolic kernel's dims, so that it can be reused at
other dims it holds for.

A schedule over symbolic extents decides by the dims' values at the signature being
compiled (`ir.dim_values`): how many threads a row of `S0 * 12` rows gets, whether a
tile count fits blockIdx.y, whether isl proves an index in range with `S1` pinned. The
schedule is valid, and the same, at every signature where each of those decisions comes
out the same. So scheduling runs inside `recording()`, which collects a *check* per
decision, and a later signature takes the schedule where every check holds at its dims
(`GuardLog.holds`); `driver.schedule_cache` keeps them. This is the guard mechanism of
PyTorch's symbolic shapes (a guard per branch taken on a size), made for this compiler.

Where the decisions come from, and the check each records:

- `dim_values.concrete(extent)` hands out a `GuardedInt` while recording: an int-like
  value that remembers its expression over the dims. Arithmetic gives more of them;
  a comparison (`<`, `==`, `bool`, ...) records a `Compare` check with its outcome, so
  `threads = min(256, rows)` at rows = 5000 only records `256 < rows`; turning one into
  a plain int (`int`, `operator.index`, `hash`, `str`: a number that goes into the IR,
  a dict key, a message) records that exact value. Anything else (`&`, `bit_length`)
  is a TypeError, so no read escapes unrecorded.
- `isl_domain.IndexDomain` with the dims pinned records each query's answer as a
  `Replay` check that asks the same question again with the new dims pinned.

Both are exact: a check holds at the new dims exactly when the decision comes out the
same there, so a reused schedule is the one the scheduler would make (the tests run
every cache hit against a fresh schedule: `CINN_PY_VERIFY_SCHEDULE_CACHE`).
"""

from __future__ import annotations

import contextlib
import contextvars
import operator
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.expr import Expr

Values = Mapping[str, int]
Tree = Any
"""A GuardedInt's expression: an int, a `Leaf` (an index Expr over the dims), or a
tuple (operator, left, right) / (operator, operand) of trees."""


class UnrecordedRead(TypeError):
    """A GuardedInt used in a way that records nothing (`n & 1`, `n.bit_length()`, a
    float product): a compiler bug, since the decision would escape the guards. Not
    caught by the fallbacks that catch a TypeError (`PIRCompiler` re-raises it)."""


class Check:
    """One recorded decision: `holds(values)` says whether it comes out the same at
    the dims `values` (name -> value)."""

    def holds(self, values: Values) -> bool:  # pragma: no cover - interface
        raise NotImplementedError


class GuardLog:
    """The checks one scheduling recorded, in order; `holds` evaluates them all at new
    dims (with no log recording)."""

    def __init__(self) -> None:
        self.checks: list[Check] = []

    def add(self, check: Check) -> None:
        self.checks.append(check)

    def holds(self, values: Values) -> bool:
        token = _LOG.set(None)
        try:
            return all(check.holds(values) for check in self.checks)
        finally:
            _LOG.reset(token)

    def __len__(self) -> int:
        return len(self.checks)


_LOG: contextvars.ContextVar[GuardLog | None] = contextvars.ContextVar(
    "cinn_py_guard_log", default=None
)
_DERIVE: contextvars.ContextVar[Callable[[Values], Values] | None] = contextvars.ContextVar(
    "cinn_py_guard_derive", default=None
)


@contextlib.contextmanager
def recording(log: GuardLog | None = None) -> Iterator[GuardLog]:
    """Collects the checks of the decisions made inside the block into `log` (a new
    one by default)."""
    log = GuardLog() if log is None else log
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


@contextlib.contextmanager
def derived(derive: Callable[[Values], Values]) -> Iterator[None]:
    """Inside the block the dims bound are `derive(signature's dims)` (an aligned
    variant is scheduled at its aligned length): what is read there is checked at
    `derive(new dims)` (a GuardedInt's `Leaf`, an IndexDomain's replay)."""
    outer = _DERIVE.get()
    combined = derive if outer is None else (lambda values: derive(outer(values)))
    token = _DERIVE.set(combined)
    try:
        yield
    finally:
        _DERIVE.reset(token)


def active() -> bool:
    """Whether decisions are being recorded."""
    return _LOG.get() is not None


def record(check: Check) -> None:
    """Adds `check` to the log being recorded (nothing outside `recording`)."""
    log = _LOG.get()
    if log is not None:
        log.add(check)


def current_derive() -> Callable[[Values], Values] | None:
    """How the dims bound now derive from the signature's (`derived`); None where they
    are the signature's."""
    return _DERIVE.get()


class Leaf:
    """An index expression over the dims, read where the dims bound were
    `derive(signature's)`: a check evaluates it at `derive(new dims)`."""

    __slots__ = ("expr", "derive")

    def __init__(self, expr: Expr, derive: Callable[[Values], Values] | None) -> None:
        self.expr, self.derive = expr, derive

    def value(self, values: Values) -> int:
        return int(evaluate(self.expr, values if self.derive is None else self.derive(values)))

    def __repr__(self) -> str:
        return repr(self.expr)


# ---- GuardedInt ---------------------------------------------------------------------------

_BINARY: dict[str, Callable[[int, int], int]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "//": operator.floordiv,
    "%": operator.mod,
}
_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def value_of(tree: Tree, values: Values) -> int:
    """`tree`'s value at the dims `values`."""
    if isinstance(tree, int):
        return tree
    if isinstance(tree, Leaf):
        return tree.value(values)
    if tree[0] == "neg":
        return -value_of(tree[1], values)
    return _BINARY[tree[0]](value_of(tree[1], values), value_of(tree[2], values))


class Compare(Check):
    """`left <op> right` came out `outcome`."""

    def __init__(self, op: str, left: Tree, right: Tree, outcome: bool) -> None:
        self.op, self.left, self.right, self.outcome = op, left, right, outcome

    def holds(self, values: Values) -> bool:
        try:
            found = _COMPARE[self.op](value_of(self.left, values), value_of(self.right, values))
        except (KeyError, ZeroDivisionError):
            return False
        return found == self.outcome

    def __repr__(self) -> str:
        return f"Compare({self.left!r} {self.op} {self.right!r} is {self.outcome})"


def _arithmetic(op: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """A GuardedInt's `op` and its reflected twin (`__add__`, `__radd__`)."""
    return (
        lambda self, other: self._binary(op, other),
        lambda self, other: self._binary(op, other, True),
    )


def _comparison(op: str) -> Callable[..., Any]:
    return lambda self, other: self._compare(op, other)


class GuardedInt:
    """An int read from the dims being compiled, which records what is decided by it
    (see the module doc). Not an int subclass on purpose: C code reads an int's value
    without asking it, so an escape would go unrecorded."""

    __slots__ = ("tree", "value", "_exact_in")
    dim_guarded = True
    """The mark `ir.expr.as_int` knows one by (expr cannot import this module)."""

    def __init__(self, tree: Tree, value: int) -> None:
        self.tree, self.value = tree, value
        self._exact_in: GuardLog | None = None  # the log its exact check is in

    # -- arithmetic: more GuardedInts
    def _binary(self, op: str, other: Any, swapped: bool = False) -> GuardedInt:
        if isinstance(other, GuardedInt):
            tree, value = other.tree, other.value
        elif isinstance(other, int) and not isinstance(other, bool):
            tree, value = other, other
        else:
            raise UnrecordedRead(f"{op} of a dim-read number and {type(other).__name__}")
        a, b = (tree, value), (self.tree, self.value)
        if not swapped:
            a, b = b, a
        return GuardedInt((op, a[0], b[0]), _BINARY[op](a[1], b[1]))

    __add__, __radd__ = _arithmetic("+")
    __sub__, __rsub__ = _arithmetic("-")
    __mul__, __rmul__ = _arithmetic("*")
    __floordiv__, __rfloordiv__ = _arithmetic("//")
    __mod__, __rmod__ = _arithmetic("%")

    def __neg__(self) -> GuardedInt:
        return GuardedInt(("neg", self.tree), -self.value)

    def __pos__(self) -> GuardedInt:
        return self

    def __abs__(self) -> GuardedInt:
        return self if self >= 0 else -self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # protocol probes (copy, pickle, numpy) say "no"
            raise AttributeError(name)
        raise UnrecordedRead(
            f"{name} of a number read from the dims records nothing: use a comparison, "
            "arithmetic, int() (exact) or dim_guards.pow2_at_least"
        )

    def _unrecorded(self, *_: Any) -> Any:
        raise UnrecordedRead(
            "bit operations, powers and rounding of a number read from the dims record "
            "nothing: use a comparison, arithmetic or int() (exact)"
        )

    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _unrecorded
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __invert__ = _unrecorded
    __pow__ = __rpow__ = __divmod__ = __rdivmod__ = __round__ = _unrecorded

    # -- comparisons: a check each
    def _compare(self, op: str, other: Any) -> bool:
        if isinstance(other, GuardedInt):
            tree, value = other.tree, other.value
        elif isinstance(other, int):
            tree, value = int(other), int(other)
        else:
            return NotImplemented
        outcome = _COMPARE[op](self.value, value)
        record(Compare(op, self.tree, tree, outcome))
        return outcome

    __lt__ = _comparison("<")
    __le__ = _comparison("<=")
    __gt__ = _comparison(">")
    __ge__ = _comparison(">=")
    __eq__ = _comparison("==")  # type: ignore[assignment]
    __ne__ = _comparison("!=")  # type: ignore[assignment]

    def __bool__(self) -> bool:
        return self._compare("!=", 0)

    # -- the value itself: checked exactly
    def exact(self) -> int:
        """The plain value, recorded as a check that it stays this value."""
        log = _LOG.get()
        if log is not None and log is not self._exact_in:  # once a log
            log.add(Compare("==", self.tree, self.value, True))
            self._exact_in = log
        return self.value

    def __index__(self) -> int:
        return self.exact()

    __int__ = __index__

    def __float__(self) -> float:
        return float(self.exact())

    def __truediv__(self, other: Any) -> float:
        return self.exact() / (other.exact() if isinstance(other, GuardedInt) else other)

    def __rtruediv__(self, other: Any) -> float:
        return other / self.exact()

    def __hash__(self) -> int:
        return hash(self.exact())

    def __repr__(self) -> str:
        return repr(self.exact())

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(self.exact(), spec)


def guarded(expr: Expr, value: int) -> GuardedInt | int:
    """`value`, the value of the index expression `expr` at the dims bound, as a
    GuardedInt while recording (a plain int otherwise)."""
    return GuardedInt(Leaf(expr, _DERIVE.get()), value) if active() else value


def pow2_at_least(n: int | GuardedInt, limit: int | None = None) -> int:
    """The least power of two >= n (1 for n <= 1), at most `limit` (a power of two).
    A GuardedInt is doubled up to by comparisons, so only where n lies between powers
    of two below the limit is recorded."""
    if isinstance(n, int):
        power = 1 << (n - 1).bit_length() if n > 1 else 1
        return power if limit is None else min(power, limit)
    power = 1
    while (limit is None or power < limit) and power < n:
        power *= 2
    return power


def pow2_at_most(n: int | GuardedInt) -> int:
    """The greatest power of two <= n (0 for n < 1), recorded as `pow2_at_least` is."""
    if isinstance(n, int):
        return 1 << (n.bit_length() - 1) if n >= 1 else 0
    if n < 1:
        return 0
    power = 1
    while power * 2 <= n:
        power *= 2
    return power


def shown(value: Any) -> str:
    """`value` written for a message, a GuardedInt's number unrecorded (a message is
    no decision)."""
    return str(value.value if isinstance(value, GuardedInt) else value)


def plain(value: Any) -> Any:
    """`value` with a GuardedInt turned into its int (recorded exactly); anything else as
    it is. For the places a number goes into the IR or a configuration."""
    return value.exact() if isinstance(value, GuardedInt) else value
