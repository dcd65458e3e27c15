"""A generated test case: a program, the specs of its inputs and how their values are drawn.

`InputSpec.draw` makes one feed from a value *kind* (`normal`, `special`, `halves`,
`extreme`, `positive`, `index`); `FuzzCase.feeds()` draws every input from the case's
seed, so a case is its program text plus a few integers, and prints as the program text
(which is what hypothesis shows for a falsifying example).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program

F32, F16, BF16 = DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16
I32, I64, BOOL = DataType.INT32, DataType.INT64, DataType.BOOL

Shape = tuple[int, ...]

SMALL_INT_BOUND = 20
"""Integer inputs of the `normal` kind lie in [-20, 20]."""

INT_LIMIT = {I32: 2**31 - 1, I64: 2**63 - 1, BOOL: 1}


# ---- inputs and their values ---------------------------------------------------------------


@dataclass(frozen=True)
class InputSpec:
    """One `pd_op.data` input and how its feed is drawn: `kind` is `normal` (standard
    normal floats, ints in [-20, 20], fair bools), `special` (normal with NaN, +-inf and
    +-0 mixed in; ints with 0s and +-1s), `halves` (multiples of 0.5 in [-4, 4]: ties
    for round / floor / compares), `extreme` (the dtype's largest and smallest
    magnitudes, subnormals; ints at their limits), `positive` (|normal| + 0.05: a
    running variance) or `index` (ints in [low, high))."""

    name: str
    shape: Shape
    dtype: DataType
    kind: str = "normal"
    low: int = 0
    high: int = 0

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        shape, dtype = self.shape, self.dtype
        if dtype is BOOL:
            return np.asarray(rng.random(shape) < 0.5)
        if dtype.is_integer:
            return _draw_ints(self, rng)
        values = rng.standard_normal(shape)
        if self.kind == "halves":
            values = rng.integers(-8, 9, size=shape) / 2
        elif self.kind == "positive":
            values = np.abs(values) + 0.05
        elif self.kind in ("special", "extreme") and values.size:
            flat = values.reshape(-1)
            specials = _SPECIAL_FLOATS + (_extreme_floats(dtype) if self.kind == "extreme" else ())
            count = max(1, flat.size // 4)
            flat[rng.integers(0, flat.size, size=count)] = rng.choice(specials, size=count)
        values = np.asarray(values)
        if dtype is BF16:
            return float32_to_bfloat16(values.astype(np.float32)).reshape(shape)
        with np.errstate(over="ignore"):
            return values.astype(dtype.numpy)


_SPECIAL_FLOATS = (np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0)


def _extreme_floats(dtype: DataType) -> tuple[float, ...]:
    if dtype is F16:
        return (65504.0, -65504.0, 6.1e-05, 6e-08, -6e-08, 60000.0, 1e4)
    return (3.3e38, -3.3e38, 1e30, -1e30, 1e-40, -1e-40, 1e-30, 3e9, -3e9, 1e19)


def _draw_ints(spec: InputSpec, rng: np.random.Generator) -> np.ndarray:
    dtype = spec.dtype.numpy
    if spec.kind == "index":
        return rng.integers(spec.low, spec.high, size=spec.shape).astype(dtype)
    values = rng.integers(-SMALL_INT_BOUND, SMALL_INT_BOUND + 1, size=spec.shape)
    if values.size and spec.kind in ("special", "extreme"):
        info = np.iinfo(dtype)
        picks = (0, 1, -1) if spec.kind == "special" else (info.min, info.max, info.min + 1, -1)
        flat = values.reshape(-1).astype(np.int64)
        count = max(1, flat.size // 4)
        flat[rng.integers(0, flat.size, size=count)] = rng.choice(np.array(picks), size=count)
        values = flat.reshape(spec.shape)
    return values.astype(dtype)


def input_bound(spec: InputSpec) -> int | None:
    """The largest magnitude an integer input's feed can hold (None for floats)."""
    if spec.dtype is BOOL:
        return 1
    if not spec.dtype.is_integer:
        return None
    if spec.kind == "index":
        return max(abs(spec.low), abs(spec.high))
    if spec.kind == "extreme":
        return INT_LIMIT[spec.dtype] + 1
    return SMALL_INT_BOUND


# ---- the drawn case ------------------------------------------------------------------------


@dataclass
class FuzzCase:
    """A generated program, its inputs and the seed of its feeds."""

    family: str
    program: Program
    inputs: tuple[InputSpec, ...]
    seed: int
    fixed_feeds: dict[str, np.ndarray] | None = field(default=None, repr=False)
    """Feeds given as they are (a reproducer read back), instead of drawn from `seed`."""
    note: str = ""
    """How the case was compiled where that is not the default (the fuzzer's random
    schedule-database knobs), printed with it."""
    text: str = field(init=False)

    def __post_init__(self) -> None:
        self.text = print_program(self.program)

    def feeds(self) -> dict[str, np.ndarray]:
        """The feeds by data name (bfloat16 as uint16 bit patterns), the same on every call."""
        if self.fixed_feeds is not None:
            return {name: np.array(array) for name, array in self.fixed_feeds.items()}
        rng = np.random.default_rng(self.seed)
        return {spec.name: spec.draw(rng) for spec in self.inputs}

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How hypothesis prints a falsifying example: the program text."""
        printer.text(repr(self))

    def __repr__(self) -> str:
        inputs = ", ".join(
            f"{s.name}: {s.dtype.value}{list(s.shape)} {s.kind}"
            + (f" [{s.low}, {s.high})" if s.kind == "index" else "")
            for s in self.inputs
        )
        note = f", {self.note}" if self.note else ""
        return f"FuzzCase({self.family}, seed={self.seed}, inputs: {inputs}{note})\n{self.text}"
