"""The hand-written CUDA kernels that every target runs, and what each must compute.

A `KernelCase` is one launch of one kernel of `kernels/*.cu` (real CUDA C++, compiled
by NVRTC for the GPU and by g++ for cuda-emu) together with a NumPy oracle.  The table
is plain data, so the cuda-emu tests and the GPU tests run the same cases the same way:

    source = case.source()                                 # the .cu file's text
    args = case.make_args(np.random.default_rng(seed))     # arrays and NumPy scalars
    before = snapshot(args)                                # copies, for the oracle
    module.launch(case.kernel, case.grid, case.block, args, shared_mem=case.shared_mem)
    assert case.check(args, before) == []                  # [] when every output matches

`expected(before)` maps an argument index to the array it must hold after the launch.
Outputs compare by `tolerance`: None for cinn_py.tolerances' default for the expected
array's dtype (exact for integers), a dtype name ("bfloat16" for arrays of uint16
bfloat16 bit patterns), or an explicit (rtol, atol).

Kernels with deliberate bugs (kernels/diagnostics.cu) are not here: what a GPU does with
them is undefined, and only the emulator's tests run them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cinn_py.pir.dtypes import bfloat16_to_float32, float32_to_bfloat16
from cinn_py.tolerances import compare

KERNEL_DIR = Path(__file__).with_name("kernels")

Args = list[Any]
Tolerance = str | tuple[float, float] | None


@dataclass(frozen=True)
class KernelCase:
    """One launch: which kernel, its launch shape, its arguments and its oracle."""

    name: str
    file: str
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    make_args: Callable[[np.random.Generator], Args]
    expected: Callable[[Args], dict[int, np.ndarray]]
    shared_mem: int = 0
    tolerance: Tolerance = None

    def source(self) -> str:
        return (KERNEL_DIR / self.file).read_text(encoding="utf-8")

    def check(self, args: Args, before: Args) -> list[str]:
        """One line per output that does not match its oracle; empty when all do."""
        problems = []
        for index, want in self.expected(before).items():
            got = np.asarray(args[index])
            ok, detail = _matches(got, want, self.tolerance)
            if not ok:
                problems.append(f"{self.name}: argument #{index}: {detail}")
        return problems


def snapshot(args: Sequence[Any]) -> Args:
    """Copies of the array arguments (scalars as they are), taken before a launch."""
    return [arg.copy() if isinstance(arg, np.ndarray) else arg for arg in args]


def _matches(got: np.ndarray, want: np.ndarray, tolerance: Tolerance) -> tuple[bool, str]:
    if isinstance(tolerance, tuple):
        comparison = compare(got, want, override=tolerance)
    else:
        comparison = compare(got, want, tolerance)
    return comparison.ok, str(comparison)


def _blocks(n: int, block: int) -> int:
    return -(-n // block)


# ---- oracles of warp shuffles, from the CUDA Programming Guide's definitions ---------------


def _shfl_idx(lane: np.ndarray, src: np.ndarray, width: int = 32) -> np.ndarray:
    """__shfl_sync: lane `src % width` of the caller's group of `width` lanes."""
    return (lane // width) * width + src % width


def _shfl_up(lane: np.ndarray, delta: int, width: int = 32) -> np.ndarray:
    """__shfl_up_sync: lane - delta, or the caller itself below its group's start."""
    return np.where(lane % width >= delta, lane - delta, lane)


def _shfl_down(lane: np.ndarray, delta: int, width: int = 32) -> np.ndarray:
    """__shfl_down_sync: lane + delta, or the caller itself past its group's end."""
    return np.where(lane % width + delta < width, lane + delta, lane)


def _shfl_xor(lane: np.ndarray, mask: int, width: int = 32) -> np.ndarray:
    """__shfl_xor_sync: lane ^ mask, or the caller itself if that is in a later group."""
    src = lane ^ mask
    return np.where(src // width > lane // width, lane, src)


def _per_warp(values: np.ndarray, source_lane: np.ndarray) -> np.ndarray:
    """values[warp base + source_lane] for each thread (linear order)."""
    base = np.arange(values.size) // 32 * 32
    return values[base + source_lane]


def _ballot(bits: np.ndarray, member: np.ndarray) -> np.ndarray:
    """Each warp's ballot of `bits` over its `member` lanes, repeated for every thread."""
    lane = np.arange(bits.size) % 32
    words = (
        np.where((bits != 0) & member, 1, 0).astype(np.uint64) << lane.astype(np.uint64)
    ).reshape(-1, 32)
    # int64: the case mixes ballots with -1 (NumPy 2's promotion refuses -1 as uint32)
    return np.repeat(np.bitwise_or.reduce(words, axis=1), 32).astype(np.int64)


# ---- arguments and oracles of each case -----------------------------------------------------


def _vector_add_args(rng: np.random.Generator) -> Args:
    n = 1000
    a, b = rng.standard_normal((2, n), dtype=np.float32)
    return [a, b, np.zeros(n, np.float32), np.int32(n)]


def _transpose_args(rng: np.random.Generator) -> Args:
    x = rng.standard_normal((70, 100), dtype=np.float32)
    return [x, np.zeros((100, 70), np.float32), np.int32(70), np.int32(100)]


def _softmax_args(rng: np.random.Generator) -> Args:
    x = rng.standard_normal((6, 1000), dtype=np.float32) * 4
    return [x, np.zeros_like(x), np.int32(1000)]


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def _column_sum_args(rng: np.random.Generator) -> Args:
    x = rng.standard_normal((123, 77), dtype=np.float32)
    return [x, np.zeros(77, np.float32), np.int32(123), np.int32(77)]


def _histogram_args(rng: np.random.Generator) -> Args:
    values = rng.integers(0, 100, 5000, dtype=np.int32)
    return [values, np.int32(values.size), np.zeros(100, np.uint32), np.int32(100)]


def _half_axpy_args(rng: np.random.Generator) -> Args:
    a, b = rng.standard_normal((2, 777)).astype(np.float16)
    return [a, b, np.zeros(777, np.float16), np.float32(1.5), np.int32(777)]


def _half_axpy(before: Args) -> dict[int, np.ndarray]:
    a, b, alpha = before[0].astype(np.float64), before[1].astype(np.float64), before[3]
    return {2: (np.float64(np.float16(alpha)) * a + b).astype(np.float16)}


def _half_pairs_args(rng: np.random.Generator) -> Args:
    a, b = rng.standard_normal((2, 600)).astype(np.float16)
    return [a, b, np.zeros(600, np.float16), np.int32(300)]


def _warp_butterfly_sum(
    x: np.ndarray, dtype_round: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """Lane 0's result of the butterfly v += shfl_xor(v, 16 .. 1), rounding each add."""
    v = x.astype(np.float64).reshape(-1, 32)
    lane = np.arange(32)
    for offset in (16, 8, 4, 2, 1):
        v = dtype_round(v + v[:, lane ^ offset])
    return v[:, 0].astype(np.float32)


def _half_small_ints(rng: np.random.Generator) -> Args:
    return [rng.integers(0, 4, 500).astype(np.float16), np.zeros(1, np.float16), np.int32(500)]


def _bf16(values: np.ndarray) -> np.ndarray:
    return float32_to_bfloat16(np.asarray(values, np.float32))


def _bf16_round(values: np.ndarray) -> np.ndarray:
    return bfloat16_to_float32(_bf16(values)).astype(np.float64)


def _bf16_axpy_args(rng: np.random.Generator) -> Args:
    a, b = (_bf16(v) for v in rng.standard_normal((2, 777)))
    return [a, b, np.zeros(777, np.uint16), np.float32(1.5), np.int32(777)]


def _bf16_axpy(before: Args) -> dict[int, np.ndarray]:
    a, b = (bfloat16_to_float32(v).astype(np.float64) for v in before[:2])
    alpha = bfloat16_to_float32(_bf16(np.float32(before[3]))).astype(np.float64)
    return {2: _bf16(alpha * a + b)}


def _bf16_pairs_args(rng: np.random.Generator) -> Args:
    a, b = (_bf16(v) for v in rng.standard_normal((2, 600)))
    return [a, b, np.zeros(600, np.uint16), np.int32(300)]


def _bf16_pairs(before: Args) -> dict[int, np.ndarray]:
    a, b = (bfloat16_to_float32(v).astype(np.float64) for v in before[:2])
    return {2: _bf16(a * b)}


def _dynamic_reverse_args(rng: np.random.Generator) -> Args:
    x = rng.standard_normal(1000, dtype=np.float32)
    return [x, np.zeros_like(x), np.int32(1000)]


def _dynamic_reverse(before: Args) -> dict[int, np.ndarray]:
    x = before[0]
    segments = [x[i : i + 256][::-1] for i in range(0, x.size, 256)]
    return {1: np.concatenate(segments)}


def _shared_views(before: Args) -> dict[int, np.ndarray]:
    bits = before[0].view(np.uint32)
    return {1: bits[np.arange(bits.size) ^ 1]}


def _coordinates(before: Args) -> dict[int, np.ndarray]:
    grid, block = (3, 4, 2), (4, 3, 5)
    rows = []
    for bz, by, bx in np.ndindex(grid[2], grid[1], grid[0]):
        for tz, ty, tx in np.ndindex(block[2], block[1], block[0]):
            linear = tx + block[0] * (ty + block[1] * tz)
            packed = [g[0] | g[1] << 8 | g[2] << 16 for g in (grid, block)]
            rows.append([bx, by, bz, tx, ty, tz, linear % 32, linear, *packed])
    return {0: np.array(rows, np.int32).reshape(-1)}


def _warp_ops_args(rng: np.random.Generator) -> Args:
    v = rng.integers(0, 1000, 64, dtype=np.int32)
    v[(v == 500) | (v == 777)] += 1
    v[4] = 500  # __any_sync is true in warp 0 only
    v[32 + 9] = 777  # __all_sync is false in warp 1 only
    return [v, np.zeros(64 * 16, np.int32)]


def _warp_ops(before: Args) -> dict[int, np.ndarray]:
    v = before[0]
    lane = np.arange(64) % 32
    out = np.empty((64, 16), np.int64)
    out[:, 0] = _per_warp(v, _shfl_idx(lane, (lane * 7 + 3) % 32))
    out[:, 1] = _per_warp(v, _shfl_idx(lane, lane + 5, 16))
    out[:, 2] = _per_warp(v, _shfl_up(lane, 3))
    out[:, 3] = _per_warp(v, _shfl_up(lane, 2, 8))
    out[:, 4] = _per_warp(v, _shfl_down(lane, 5))
    out[:, 5] = _per_warp(v, _shfl_down(lane, 3, 16))
    out[:, 6] = _per_warp(v, _shfl_xor(lane, 9))
    out[:, 7] = _per_warp(v, _shfl_xor(lane, 6, 8))
    out[:, 8] = _per_warp(v, _shfl_xor(lane, 20, 16))
    out[:, 9] = _ballot(v & 1, np.ones(64, bool))
    thirds = lane % 3 == 0
    out[:, 10] = np.where(thirds, _ballot(v & 2, thirds), -1)
    any_hit = _ballot(v == 500, lane < 20) != 0
    out[:, 11] = np.where(lane < 20, any_hit, -1)
    all_members = lane >= 8
    all_ok = _ballot(v != 777, all_members) == _ballot(np.ones(64, bool), all_members)
    out[:, 12] = np.where(all_members, all_ok, -1)
    out[:, 13] = 0xFFFFFFFF
    out[:, 14] = _per_warp(v, np.where(lane < 16, 15 - lane, 47 - lane))
    out[:, 15] = v.reshape(-1, 8).sum(axis=1).repeat(8)
    return {1: out.astype(np.uint32).view(np.int32).reshape(-1)}


def _warp_types_args(rng: np.random.Generator) -> Args:
    v = rng.integers(0, 1000, 64, dtype=np.int32)
    return [
        v,
        np.zeros(64, np.float32),
        np.zeros(64, np.float64),
        np.zeros(64, np.int64),
        np.zeros(64, np.uint32),
    ]


def _warp_types(before: Args) -> dict[int, np.ndarray]:
    v = before[0].astype(np.int64)
    lane = np.arange(64) % 32
    hashed = (v * 2654435761) % 2**32
    return {
        1: _per_warp(v * 0.5, _shfl_idx(lane, (lane + 1) % 32)).astype(np.float32),
        2: _per_warp(v * 0.25, _shfl_xor(lane, 3)),
        3: _per_warp(v << 33, _shfl_down(lane, 2)),
        4: _per_warp(hashed, _shfl_up(lane, 1)).astype(np.uint32),
    }


def _warp_partial_args(rng: np.random.Generator) -> Args:
    return [rng.integers(0, 1000, 48, dtype=np.int32), np.zeros(96, np.int32)]


def _warp_partial(before: Args) -> dict[int, np.ndarray]:
    v = before[0]
    sums = v.reshape(-1, 16).sum(axis=1).repeat(16)
    ballot = np.where(np.arange(48) < 32, 0xFFFFFFFF, 0x0000FFFF)
    return {1: np.stack([sums, ballot.astype(np.uint32).view(np.int32)], axis=1).reshape(-1)}


def _atomics_args(rng: np.random.Generator) -> Args:
    n = 1000
    values = rng.integers(0, 1000, n, dtype=np.int32)
    i32 = np.array([0, 0, -(2**31), 2**31 - 1, -1, 0, 0, 1], np.int32)
    u32 = np.array([0, 0, 0, 2**32 - 1, 2**32 - 1, 0, 0, 0, 0], np.uint32)
    u64 = np.array([0, 0, 2**64 - 1, 2**64 - 1, 0, 0, 0], np.uint64)
    i64 = np.array([-(2**63), 2**63 - 1], np.int64)
    slots = rng.standard_normal(n, dtype=np.float32)
    return [
        values, np.int32(n), i32, u32, u64, i64,
        np.zeros(1, np.float32), np.zeros(1, np.float64),
        np.zeros(1, np.uint32), np.zeros(n, np.int32), slots, np.zeros(n, np.float32),
    ]  # fmt: skip


def _atomics(before: Args) -> dict[int, np.ndarray]:
    v = before[0].astype(np.int64)
    n = v.size
    u = (v * 2654435761) % 2**32
    w = [(int(x) << 20) | i for i, x in enumerate(u)]
    product = 1
    for x in v:
        product = product * (2 * int(x) + 1) % 2**32
    and64 = np.bitwise_and.reduce(np.array(w, np.uint64) | np.uint64(0x100000))
    dec = 0
    for _ in range(n):
        dec = 9 if dec == 0 or dec > 9 else dec - 1
    i32 = [v.sum(), -v.sum(), v.max(), v.min(), np.bitwise_and.reduce(v | 0x40),
           np.bitwise_or.reduce(v), np.bitwise_xor.reduce(v), product]  # fmt: skip
    u32 = [u.sum(), -u.sum(), u.max(), u.min(), np.bitwise_and.reduce(u | 0x10000),
           np.bitwise_or.reduce(u), np.bitwise_xor.reduce(u), n % 16, dec]  # fmt: skip
    u64 = [sum(w), max(w), min(w), int(and64), np.bitwise_or.reduce(np.array(w, np.uint64)),
           np.bitwise_xor.reduce(np.array(w, np.uint64)), sum(w)]  # fmt: skip
    return {
        2: (np.array(i32, np.int64) % 2**32).astype(np.uint32).view(np.int32),
        3: (np.array(u32, np.int64) % 2**32).astype(np.uint32),
        4: np.array([int(x) % 2**64 for x in u64], np.uint64),
        5: np.array([v.max() - 500, v.min() - 500], np.int64),
        6: np.array([v.sum() * 0.25], np.float32),
        7: np.array([v.sum() * 0.25], np.float64),
        8: np.array([n], np.uint32),
        9: np.ones(n, np.int32),
        10: (v * 0.5).astype(np.float32),
        11: before[10],
    }


def _shared_scopes_args(rng: np.random.Generator) -> Args:
    return [rng.standard_normal(64, dtype=np.float32), np.zeros(128, np.float32)]


def _shared_scopes(before: Args) -> dict[int, np.ndarray]:
    x = before[0].astype(np.float64)
    acc = sum(x[::-1] + r for r in range(3))
    return {1: (np.concatenate([acc * 2, acc]) * 3).astype(np.float32)}


def _float_math_args(rng: np.random.Generator) -> Args:
    n = 200
    x = rng.uniform(0.1, 4.0, n).astype(np.float32)
    y = rng.uniform(-3.0, 3.0, n).astype(np.float32)
    y[:8] = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.0, -0.0]  # rounding ties and signed zeros
    return [x, y, np.zeros(n * 30, np.float32), np.int32(n)]


def _round_half_away(v: np.ndarray) -> np.ndarray:
    """C's round(): halfway cases away from zero (NumPy's round goes to even)."""
    return np.copysign(np.floor(np.abs(v) + 0.5), v)


def _float_math(before: Args) -> dict[int, np.ndarray]:
    x, y = before[0].astype(np.float64), before[1].astype(np.float64)
    erf = np.vectorize(math.erf)(y)
    columns = [
        np.exp(y), np.exp(y), np.log(x), np.log(x), np.exp2(y), np.log2(x), 1 / np.sqrt(x),
        np.sqrt(x), np.tanh(y), erf, np.fmax(x, y), np.fmin(x, y), x**y, x**y, y / x,
        np.clip(y, 0, 1), np.sin(y), np.cos(y), np.abs(y), np.floor(y), np.ceil(y),
        _round_half_away(y), np.rint(y), np.trunc(y), np.copysign(x, y), x * y + 1, x * y - 1,
        (y == 0).astype(np.float64), np.ones_like(y), x + y,
    ]  # fmt: skip
    return {2: np.stack(columns, axis=1).astype(np.float32).reshape(-1)}


def _double_math_args(rng: np.random.Generator) -> Args:
    n = 200
    x = rng.uniform(0.1, 4.0, n)
    y = rng.uniform(-3.0, 3.0, n)
    y[:4] = [-2.5, -0.5, 0.5, 2.5]
    return [x, y, np.zeros(n * 14), np.int32(n)]


def _double_math(before: Args) -> dict[int, np.ndarray]:
    x, y = before[0], before[1]
    columns = [
        np.exp(y), np.log(x), np.sqrt(x), 1 / np.sqrt(x), np.tanh(y), np.vectorize(math.erf)(y),
        x**y, np.fmax(x, y), np.fmin(x, y), np.floor(y), _round_half_away(y), x * y + 0.5, -y,
        np.maximum(x, y),
    ]  # fmt: skip
    return {2: np.stack(columns, axis=1).reshape(-1)}


def _bits_args(rng: np.random.Generator) -> Args:
    n = 300
    a = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    a[:5] = [0, -1, 1, -(2**31), 2**31 - 1]
    quads = rng.integers(0, 10, n).astype(np.float32)
    return [a, np.zeros(n * 16, np.int32), np.zeros(14, np.int32), quads,
            np.zeros(n // 4, np.float32), np.int32(n)]  # fmt: skip


def _bits(before: Args) -> dict[int, np.ndarray]:
    v = before[0].astype(np.int64)
    u = v % 2**32
    bits = [[int(b) for b in format(int(x), "032b")] for x in u]
    popc = np.array([sum(b) for b in bits])
    clz = np.array([b.index(1) if 1 in b else 32 for b in bits])
    ffs = np.array([b[::-1].index(1) + 1 if 1 in b else 0 for b in bits])
    brev = np.array([int(format(int(x), "032b")[::-1], 2) for x in u])
    mantissa = ((v & 0x007FFFFF) | 0x3F800000).astype(np.uint32).view(np.float32)
    doubled = (mantissa * np.float32(2)).view(np.int32).astype(np.int64)
    wide = (u << 20) | u
    columns = [
        popc, clz, ffs, brev, doubled, u, np.minimum(v, 1000), np.maximum(v, -1000),
        np.minimum(u, 123456789), np.maximum(u, 7), np.minimum(v * 3, 5000000000) >> 1,
        (v * 0x12345678) >> 32, (u * 0x9ABCDEF0) >> 32,
        np.array([bin(int(w)).count("1") for w in wide]), 32 + clz,
        np.rint((v.astype(np.float32) * np.float32(0.5)).astype(np.float64)),
    ]  # fmt: skip
    out = np.stack([np.asarray(c, np.int64) for c in columns], axis=1) % 2**32
    quads = before[3].reshape(-1, 4)
    sums = quads[:, 3] * 1000 + quads[:, 2] * 100 + quads[:, 1] * 10 + quads[:, 0]
    layout = [16, 16, 8, 12, 4, 16, 3, 4, 16, 4, 16, 8, 32, 12]
    return {
        1: out.astype(np.uint32).view(np.int32).reshape(-1),
        2: np.array(layout, np.int32),
        4: sums.astype(np.float32),
    }


CASES: tuple[KernelCase, ...] = (
    KernelCase("vector_add", "vector_add.cu", "vector_add", (4, 1, 1), (256, 1, 1),
               _vector_add_args, lambda b: {2: b[0] + b[1]}),
    KernelCase("transpose_tiled", "transpose.cu", "transpose_tiled", (4, 3, 1), (32, 8, 1),
               _transpose_args, lambda b: {1: b[0].T.copy()}),
    KernelCase("softmax_rows_256", "softmax.cu", "softmax_rows", (6, 1, 1), (256, 1, 1),
               _softmax_args, lambda b: {1: _softmax(b[0])}),
    KernelCase("softmax_rows_96", "softmax.cu", "softmax_rows", (6, 1, 1), (96, 1, 1),
               _softmax_args, lambda b: {1: _softmax(b[0])}),
    KernelCase("column_sum", "column_reduce.cu", "column_sum", (_blocks(77, 32), 1, 1),
               (32, 8, 1), _column_sum_args,
               lambda b: {1: b[0].astype(np.float64).sum(axis=0).astype(np.float32)}),
    KernelCase("histogram", "histogram.cu", "histogram", (8, 1, 1), (128, 1, 1),
               _histogram_args,
               lambda b: {2: np.bincount(b[0], minlength=100).astype(np.uint32)}),
    KernelCase("half_axpy", "fp16.cu", "half_axpy", (_blocks(777, 256), 1, 1), (256, 1, 1),
               _half_axpy_args, _half_axpy),
    KernelCase("half2_mul", "fp16.cu", "half2_mul", (2, 1, 1), (256, 1, 1), _half_pairs_args,
               lambda b: {2: (b[0].astype(np.float64) * b[1]).astype(np.float16)}),
    KernelCase("half_warp_sum", "fp16.cu", "half_warp_sum", (2, 1, 1), (256, 1, 1),
               lambda rng: [rng.standard_normal(512).astype(np.float16), np.zeros(16, np.float32)],
               lambda b: {1: _warp_butterfly_sum(b[0], lambda v: v.astype(np.float16).astype(np.float64))},
               tolerance="float16"),
    KernelCase("half_atomic_add", "fp16.cu", "half_atomic_add", (2, 1, 1), (256, 1, 1),
               _half_small_ints, lambda b: {1: np.array([b[0].sum(dtype=np.float64)], np.float16)}),
    KernelCase("bf16_axpy", "bf16.cu", "bf16_axpy", (_blocks(777, 256), 1, 1), (256, 1, 1),
               _bf16_axpy_args, _bf16_axpy, tolerance="bfloat16"),
    KernelCase("bf162_mul", "bf16.cu", "bf162_mul", (2, 1, 1), (256, 1, 1), _bf16_pairs_args,
               _bf16_pairs, tolerance="bfloat16"),
    KernelCase("bf16_warp_sum", "bf16.cu", "bf16_warp_sum", (2, 1, 1), (256, 1, 1),
               lambda rng: [_bf16(rng.standard_normal(512)), np.zeros(16, np.float32)],
               lambda b: {1: _warp_butterfly_sum(bfloat16_to_float32(b[0]), _bf16_round)},
               tolerance=(2e-2, 2e-2)),
    KernelCase("bf16_atomic_add", "bf16.cu", "bf16_atomic_add", (1, 1, 1), (256, 1, 1),
               lambda rng: [_bf16(rng.integers(0, 3, 100)), np.zeros(1, np.uint16), np.int32(100)],
               lambda b: {1: _bf16(bfloat16_to_float32(b[0]).sum(keepdims=True))},
               tolerance="bfloat16"),
    KernelCase("dynamic_shared_reverse", "dynamic_shared.cu", "reverse_segments",
               (_blocks(1000, 256), 1, 1), (256, 1, 1), _dynamic_reverse_args, _dynamic_reverse,
               shared_mem=256 * 4),
    KernelCase("dynamic_shared_views", "dynamic_shared.cu", "shared_views", (3, 1, 1),
               (256, 1, 1),
               lambda rng: [rng.standard_normal(768, dtype=np.float32), np.zeros(768, np.uint32)],
               _shared_views, shared_mem=256 * 4),
    KernelCase("grid3d_coordinates", "grid3d.cu", "coordinates", (3, 4, 2), (4, 3, 5),
               lambda rng: [np.full(24 * 60 * 10, -1, np.int32)], _coordinates),
    KernelCase("warp_ops", "warp_intrinsics.cu", "warp_ops", (1, 1, 1), (16, 4, 1),
               _warp_ops_args, _warp_ops),
    KernelCase("warp_shuffle_types", "warp_intrinsics.cu", "warp_shuffle_types", (1, 1, 1),
               (64, 1, 1), _warp_types_args, _warp_types),
    KernelCase("warp_partial", "warp_intrinsics.cu", "warp_partial", (1, 1, 1), (48, 1, 1),
               _warp_partial_args, _warp_partial),
    KernelCase("atomics_all", "atomics.cu", "atomics_all", (4, 1, 1), (256, 1, 1),
               _atomics_args, _atomics),
    KernelCase("shared_scopes", "shared_scopes.cu", "shared_in_scopes", (2, 1, 1), (64, 1, 1),
               _shared_scopes_args, _shared_scopes),
    KernelCase("float_math", "math_intrinsics.cu", "float_math", (2, 1, 1), (128, 1, 1),
               _float_math_args, _float_math),
    KernelCase("double_math", "math_intrinsics.cu", "double_math", (2, 1, 1), (128, 1, 1),
               _double_math_args, _double_math),
    KernelCase("bits_and_types", "math_intrinsics.cu", "bits_and_types", (3, 1, 1), (128, 1, 1),
               _bits_args, _bits),
)  # fmt: skip
"""Every case, in a stable order (pytest ids are the names)."""

FILES: tuple[str, ...] = tuple(dict.fromkeys(case.file for case in CASES))
"""The kernel files the cases use, each to be compiled once per target."""
