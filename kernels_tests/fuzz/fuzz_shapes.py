"""Dtypes, dims and shape helpers of the program generator (`fuzz_programs.py`).

The helpers that draw take the generator (`maker`: `pick`, `integer`, `chance`), so
every choice they make shrinks like the generator's own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from cinn_py.pir.dtypes import DataType

F32, F16, BF16 = DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16
I32, I64, BOOL = DataType.INT32, DataType.INT64, DataType.BOOL
FLOATS = (F32, F16, BF16)
INTS = (I32, I64)
CAST_DTYPES = (F32, F16, BF16, I32, I64, BOOL)

DIMS = (1, 2, 3, 5, 7, 8, 33, 64, 128, 129, 256, 1000)
LONG_DIMS = (4097, 40000, 65536)
"""Now and then a dim this long: rows past the row schedule's register cache, few long
rows (the grid schedule and the long-row split)."""
MAX_ELEMENTS = 1 << 17
"""No tensor of a program holds more (an example's cost is its compile: ~1 s)."""
MAX_MATMUL_FLOPS = 1 << 22

Shape = tuple[int, ...]


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def fit(dims: Shape) -> Shape:
    """`dims` with the largest dims stepped down through DIMS until the tensor holds at
    most MAX_ELEMENTS (counting a 0 dim as 1: broadcasting may turn it into one)."""
    out = list(dims)
    while numel([max(d, 1) for d in out]) > MAX_ELEMENTS:
        short = [k for k in range(len(out)) if out[k] not in LONG_DIMS and out[k] > 1]
        i = max(short or range(len(out)), key=lambda k: out[k])
        smaller = [d for d in DIMS if d < out[i]]
        out[i] = smaller[-1] if smaller else 1
    return tuple(out)


def broadcast(a: Shape, b: Shape) -> Shape | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def narrow(shape: Shape, maker: Any) -> Shape:
    """A shape that broadcasts into `shape`: leading dims dropped, some dims set to 1."""
    drop = maker.integer(0, len(shape)) if maker.chance(40) else 0
    kept = list(shape[drop:])
    for i in range(len(kept)):
        if maker.chance(25):
            kept[i] = 1
    return tuple(kept)


def widen(shape: Shape, maker: Any) -> Shape:
    """A shape `shape` broadcasts into: its 1s widened, maybe a new leading dim (callers
    check the size)."""
    out = [maker.pick(DIMS[:8]) if d == 1 and maker.chance(60) else d for d in shape]
    if maker.chance(40) or not shape:
        out.insert(0, maker.pick((3, 2, 7, 1)))
    return tuple(out)


def normalized(axes: Sequence[int], rank: int) -> list[int]:
    return sorted({a % rank for a in axes}) if rank else []


def reshape_target(shape: Shape, maker: Any) -> list[int]:
    """A `reshape` shape for `shape`: everything flat, two dims merged, a dim split into
    factors, 1s added or dropped; with a 0 (copy the dim) or -1 (inferred) sometimes."""
    dims = list(shape)
    size = numel(dims)
    how = maker.pick(("merge", "split", "flat", "ones", "drop_ones"))
    if how == "merge" and len(dims) >= 2:
        i = maker.integer(0, len(dims) - 2)
        dims[i : i + 2] = [dims[i] * dims[i + 1]]
    elif how == "split" and dims:
        i = maker.integer(0, len(dims) - 1)
        factors = [f for f in (2, 3, 5, 8, 11, 4) if dims[i] % f == 0 and dims[i] > f]
        if factors:
            f = maker.pick(factors)
            dims[i : i + 1] = [f, dims[i] // f]
    elif how == "flat":
        dims = [size]
    elif how == "ones":
        dims.insert(maker.integer(0, len(dims)), 1)
    elif how == "drop_ones":
        dims = [d for d in dims if d != 1]
    if size and dims and maker.chance(30):
        dims[maker.integer(0, len(dims) - 1)] = -1
    if size and dims and maker.chance(15):
        i = maker.integer(0, min(len(dims), len(shape)) - 1) if min(len(dims), len(shape)) else None
        if i is not None and dims[i] == shape[i]:
            dims[i] = 0
    return dims
