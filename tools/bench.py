"""GPU benchmarks: cinn_py's kernels against a device-to-device copy, CuPy and PyTorch.

Every figure comes from the same run on the same device: the copy bandwidth (a
device-to-device `cudaMemcpyAsync` of 1 GiB, counting bytes read plus bytes written),
then each case, a Paddle PIR program written as the text Paddle prints, compiled by
cinn_py for `cuda` and timed as its runtime program alone (feeds already on the device,
no host copies), and the same computation in PyTorch eager, `torch.compile` and CuPy.
Effective bandwidth = bytes the computation must move (its inputs, weights included,
read once, its outputs written once) / median time; `of copy` divides it by the copy
bandwidth, `of same-size copy` by a copy kernel's moving the case's own bytes, timed the
same way (the ceiling at that size: on an H200 a 67 MB copy reaches 86% of the 1 GiB
copy's bandwidth). Before timing, every output is checked against PyTorch eager's
(NumPy-style float64 reference computed on the device where PyTorch is missing) with dtype-aware
tolerances; a wrong cinn_py output fails its row (and the exit status) loudly.

    pip install -e ".[gpu]" && python tools/bench.py [--cases softmax,layer_norm] [--list]
        [--repeat 50] [--budget 2] [--json OUT.json] [--tiny] [--no-torch-compile]
    python tools/bench.py --smoke [--cases ...]     # no GPU: tiny shapes on cuda-emu

Cases (`--list` prints them with their byte counts): add_relu_mul (64M float32),
softmax / layer_norm (scale and bias) / rms_norm (scale) over the last axis of
[4096, 4096] and [16384, 8192] in float32 and float16, transpose ([8192, 8192] perm
[1, 0], float32 and float16: the tile schedule), reduce_sum_rows (axis -1) and
reduce_sum_cols (axis 0) and reduce_sum_all (every axis, to 0-D: the grid schedule) of
[8192, 8192] float32. `--cases` takes families, case names
or name prefixes (`softmax_f16`), comma-separated.

Needs a CUDA GPU with CuPy; PyTorch and Triton are optional (their columns then say
`n/a (why)`). Times are medians of up to `--repeat` samples after warm-up, each sample
a batch of back-to-back calls between two CUDA events; a sample count is cut so that
one measurement takes about `--budget` seconds (cinn_py's library ops run on the host).
Rows are printed as they finish and `--json` is rewritten after every case, so a run
cut short keeps what it measured. The whole run takes a few minutes, most of it
torch.compile's compiles; run it per family (`--cases softmax`) where time is short.

`--smoke` runs every case at tiny shapes ([4, 33] / [3, 40]) on `cuda-emu` (or
`--target`) against NumPy float64 references, without PyTorch, GPU or timing, and
compiles each case's full-size program for the GPU (sm_90) with NVRTC, so CI exercises
the very programs a GPU session times. `--tiny` runs the timed bench at those tiny
shapes: with `--target cuda-emu` it tries the whole script on the CPU (its numbers say
nothing about a GPU).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.util
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import cinn_py
from cinn_py.hlir.group import GroupKind
from cinn_py.pir.parser import parse_program
from cinn_py.targets.device import gpu_available
from cinn_py.tolerances import FAST_MATH, TOLERANCES, tolerance

EPSILON = 1e-5
"""layer_norm's and rms_norm's epsilon, as Paddle's layers default it."""

SMOKE_ARCH = "sm_90"
"""The GPU arch `--smoke` compiles the full-size programs for (H100 / H200)."""

# ---- the cases ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Tensor:
    """An input or output of a case: a feed (`pd_op.data`), a parameter or a result."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    param: bool = False

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * np.dtype(self.dtype).itemsize


_SHORT = {"float32": "f32", "float16": "f16"}


def _ty(shape: Sequence[int], dtype: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + _SHORT[dtype] + ">"  # 0-D: tensor<f32>


def _dims(shape: Sequence[int]) -> str:
    return ",".join(str(d) for d in shape)


def _data(n: int, t: Tensor) -> str:
    return (
        f'    (%{n}) = "pd_op.data" () {{dtype:{t.dtype},name:"{t.name}",'
        f"place:Place(undefined:0),shape:[{_dims(t.shape)}],stop_gradient:[true]}} "
        f": () -> {_ty(t.shape, t.dtype)}"
    )


def _parameter(n: int, t: Tensor) -> str:
    return (
        f'    (%{n}) = "builtin.parameter" () {{is_distributed:[false],is_parameter:[true],'
        f'need_clip:[true],parameter_name:"{t.name}",persistable:[true],stop_gradient:[false],'
        f"trainable:[true]}} : () -> {_ty(t.shape, t.dtype)}"
    )


def _fetch(n: int, source: int, t: Tensor) -> str:
    ty = _ty(t.shape, t.dtype)
    return (
        f'    (%{n}) = "pd_op.fetch" (%{source}) {{col:0,name:"fetch_name_0",'
        f"stop_gradient:[true]}} : ({ty}) -> {ty}"
    )


def _program(lines: Sequence[str]) -> str:
    return "{\n" + "\n".join(lines) + "\n}\n"


@dataclass(frozen=True)
class Family:
    """One computation at any shape and dtype: its program text, its tensors, a reference
    written with array-module ops (NumPy or CuPy: the CuPy baseline is this with float32
    accumulation), and the same in PyTorch."""

    name: str
    description: str
    bytes_model: str
    inputs: Callable[[tuple[int, ...], str], list[Tensor]]
    output: Callable[[tuple[int, ...], str], Tensor]
    program: Callable[[tuple[int, ...], str], str]
    reference: Callable[..., Any]
    """(xp, accumulate dtype, *input arrays) -> output array, in the input's dtype."""
    torch: Callable[[Any], Callable[..., Any]]
    """torch module -> the function of tensors (eager, and what torch.compile compiles)."""
    tolerance_scale: float = 1.0
    """Widens the absolute tolerance where rounding order alone moves results further."""


@dataclass(frozen=True)
class Case:
    family: Family
    shape: tuple[int, ...]
    dtype: str
    smoke_shape: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"{self.family.name}_{_SHORT[self.dtype]}_{'x'.join(map(str, self.shape))}"

    def at(self, shape: tuple[int, ...]) -> Case:
        return Case(self.family, shape, self.dtype, self.smoke_shape)

    @property
    def inputs(self) -> list[Tensor]:
        return self.family.inputs(self.shape, self.dtype)

    @property
    def output(self) -> Tensor:
        return self.family.output(self.shape, self.dtype)

    @property
    def program_text(self) -> str:
        return self.family.program(self.shape, self.dtype)

    @property
    def nbytes(self) -> int:
        """Bytes that must move: every input (weights included) read once, the output
        written once."""
        return sum(t.nbytes for t in self.inputs) + self.output.nbytes


# -- add_relu_mul: relu(x + y) * w over one long vector


def _arm_inputs(shape: tuple[int, ...], dtype: str) -> list[Tensor]:
    return [Tensor(n, shape, dtype) for n in ("x", "y", "w")]


def _arm_program(shape: tuple[int, ...], dtype: str) -> str:
    x, y, w = _arm_inputs(shape, dtype)
    ty = _ty(shape, dtype)
    return _program(
        [
            _data(0, x),
            _data(1, y),
            _data(2, w),
            f'    (%3) = "pd_op.add" (%0, %1) {{stop_gradient:[true]}} : ({ty}, {ty}) -> {ty}',
            f'    (%4) = "pd_op.relu" (%3) {{stop_gradient:[true]}} : ({ty}) -> {ty}',
            f'    (%5) = "pd_op.multiply" (%4, %2) {{stop_gradient:[true]}} : ({ty}, {ty}) -> {ty}',
            _fetch(6, 5, Tensor("out", shape, dtype)),
        ]
    )


def _arm_reference(xp: Any, acc: Any, x: Any, y: Any, w: Any) -> Any:
    s = x.astype(acc, copy=False) + y.astype(acc, copy=False)
    return (xp.maximum(s, 0) * w.astype(acc, copy=False)).astype(x.dtype, copy=False)


def _arm_torch(torch: Any) -> Callable[..., Any]:
    return lambda x, y, w: torch.relu(x + y) * w


# -- softmax over the last axis


def _rows_input(shape: tuple[int, ...], dtype: str) -> list[Tensor]:
    return [Tensor("x", shape, dtype)]


def _same_output(shape: tuple[int, ...], dtype: str) -> Tensor:
    return Tensor("out", shape, dtype)


def _softmax_program(shape: tuple[int, ...], dtype: str) -> str:
    (x,) = _rows_input(shape, dtype)
    ty = _ty(shape, dtype)
    return _program(
        [
            _data(0, x),
            f'    (%1) = "pd_op.softmax" (%0) {{axis:-1,stop_gradient:[true]}} : ({ty}) -> {ty}',
            _fetch(2, 1, _same_output(shape, dtype)),
        ]
    )


def _softmax_reference(xp: Any, acc: Any, x: Any) -> Any:
    xa = x.astype(acc, copy=False)
    e = xp.exp(xa - xa.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype, copy=False)


def _softmax_torch(torch: Any) -> Callable[..., Any]:
    return lambda x: torch.softmax(x, dim=-1)


# -- layer_norm over the last axis, with scale and bias (paddle.nn.LayerNorm(C))


def _ln_inputs(shape: tuple[int, ...], dtype: str) -> list[Tensor]:
    width = shape[-1:]
    return [
        Tensor("x", shape, dtype),
        Tensor("layer_norm_0.w_0", width, dtype, param=True),
        Tensor("layer_norm_0.b_0", width, dtype, param=True),
    ]


def _ln_program(shape: tuple[int, ...], dtype: str) -> str:
    x, w, b = _ln_inputs(shape, dtype)
    rows = len(shape) - 1
    ty, stats = _ty(shape, dtype), _ty(shape[:rows], "float32")
    width = _ty(shape[-1:], dtype)
    return _program(
        [
            _parameter(0, b),
            _parameter(1, w),
            _data(2, x),
            f'    (%3, %4, %5) = "pd_op.layer_norm" (%2, %1, %0) {{begin_norm_axis:{rows},'
            f'epsilon:1e-05,stop_gradient:[false,false,false],struct_name:"/LayerNorm/"}} '
            f": ({ty}, {width}, {width}) -> {ty}, {stats}, {stats}",
            _fetch(6, 3, _same_output(shape, dtype)),
        ]
    )


def _ln_reference(xp: Any, acc: Any, x: Any, w: Any, b: Any) -> Any:
    xa = x.astype(acc, copy=False)
    mean = xa.mean(axis=-1, keepdims=True)
    centered = xa - mean
    variance = (centered * centered).mean(axis=-1, keepdims=True)
    out = centered / xp.sqrt(variance + EPSILON)
    out = out * w.astype(acc, copy=False) + b.astype(acc, copy=False)
    return out.astype(x.dtype, copy=False)


def _ln_torch(torch: Any) -> Callable[..., Any]:
    layer_norm = torch.nn.functional.layer_norm
    return lambda x, w, b: layer_norm(x, (x.shape[-1],), w, b, EPSILON)


# -- rms_norm over the last axis, with scale (paddle.incubate.nn.functional.rms_norm)


def _rms_inputs(shape: tuple[int, ...], dtype: str) -> list[Tensor]:
    return [Tensor("x", shape, dtype), Tensor("rms_norm_0.w_0", shape[-1:], dtype, param=True)]


def _rms_program(shape: tuple[int, ...], dtype: str) -> str:
    x, w = _rms_inputs(shape, dtype)
    rows = len(shape) - 1
    ty, invvar = _ty(shape, dtype), _ty(shape[:rows], "float32")
    return _program(
        [
            _data(0, x),
            _parameter(1, w),
            f'    (%2, %3) = "pd_op.rms_norm" (%0, %1) {{epsilon:1e-05,'
            f"normalized_shape:[{shape[-1]}],persistable:[false,false],"
            f"stop_gradient:[false,false]}} : ({ty}, {_ty(shape[-1:], dtype)}) -> {ty}, {invvar}",
            _fetch(4, 2, _same_output(shape, dtype)),
        ]
    )


def _rms_reference(xp: Any, acc: Any, x: Any, w: Any) -> Any:
    xa = x.astype(acc, copy=False)
    inverse = 1 / xp.sqrt((xa * xa).mean(axis=-1, keepdims=True) + EPSILON)
    return (xa * inverse * w.astype(acc, copy=False)).astype(x.dtype, copy=False)


def _rms_torch(torch: Any) -> Callable[..., Any]:
    functional = torch.nn.functional
    if hasattr(functional, "rms_norm"):  # torch >= 2.4
        return lambda x, w: functional.rms_norm(x, (x.shape[-1],), w, EPSILON)

    def rms_norm(x: Any, w: Any) -> Any:  # what torch's own composite does
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPSILON)).to(x.dtype) * w

    return rms_norm


# -- reduce_sum of a matrix over one axis


# -- transpose of a matrix (the tile schedule: 32 x 32 tiles through shared memory)


def _transposed_output(shape: tuple[int, ...], dtype: str) -> Tensor:
    return Tensor("out", tuple(reversed(shape)), dtype)


def _transpose_program(shape: tuple[int, ...], dtype: str) -> str:
    (x,) = _rows_input(shape, dtype)
    out = _transposed_output(shape, dtype)
    return _program(
        [
            _data(0, x),
            f'    (%1) = "pd_op.transpose" (%0) {{perm:[1,0],stop_gradient:[true]}} : '
            f"({_ty(shape, dtype)}) -> {_ty(out.shape, dtype)}",
            _fetch(2, 1, out),
        ]
    )


def _transpose_reference(xp: Any, acc: Any, x: Any) -> Any:
    return xp.ascontiguousarray(x.T)


def _transpose_torch(torch: Any) -> Callable[..., Any]:
    return lambda x: x.t().contiguous()


def _sum_program(axis: int | None) -> Callable[[tuple[int, ...], str], str]:
    """sum over `axis`, or over every axis (to 0-D) for None."""

    def program(shape: tuple[int, ...], dtype: str) -> str:
        (x,) = _rows_input(shape, dtype)
        out = _sum_output(axis)(shape, dtype)
        ty, out_ty = _ty(shape, dtype), _ty(out.shape, dtype)
        axes = list(range(len(shape))) if axis is None else [axis]
        value, n = ",".join(map(str, axes)), len(axes)
        return _program(
            [
                _data(0, x),
                '    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),'
                f"stop_gradient:[true],value:[{value}]}} : () -> tensor<{n}xi64>",
                '    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:false,'
                f"stop_gradient:[true]}} : ({ty}, tensor<{n}xi64>) -> {out_ty}",
                _fetch(3, 2, out),
            ]
        )

    return program


def _sum_output(axis: int | None) -> Callable[[tuple[int, ...], str], Tensor]:
    def output(shape: tuple[int, ...], dtype: str) -> Tensor:
        if axis is None:
            return Tensor("out", (), dtype)
        kept = tuple(d for i, d in enumerate(shape) if i != axis % len(shape))
        return Tensor("out", kept, dtype)

    return output


def _sum_reference(axis: int | None) -> Callable[..., Any]:
    def reference(xp: Any, acc: Any, x: Any) -> Any:
        return xp.asarray(x.astype(acc, copy=False).sum(axis=axis)).astype(x.dtype, copy=False)

    return reference


def _sum_torch(axis: int | None) -> Callable[[Any], Callable[..., Any]]:
    def factory(torch: Any) -> Callable[..., Any]:
        if axis is None:
            return lambda x: torch.sum(x)
        return lambda x: torch.sum(x, dim=axis)

    return factory


_SUM_TOLERANCE = 4.0
"""A float32 sum of 8192 unit-normal terms differs by up to ~1e-3 between summation
orders (cinn_py's one-thread-per-output loop against PyTorch's tree): 4x the float32
atol of 1e-5 x the largest |sum| (~360) leaves room for it."""

_SUM_ALL_TOLERANCE = 64.0
"""A float32 sum of 64M unit-normal terms (|sum| ~ 8192) against PyTorch's: each order
rounds ~sqrt(n) partial sums, ~1e-3 relative between orders at worst; 64x the float32
tolerance of the one value leaves room for it."""

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in [
        Family(
            "add_relu_mul",
            "relu(x + y) * w, elementwise (the issue-4 chain)",
            "3 reads + 1 write of N elements: 4 * N * itemsize",
            _arm_inputs,
            _same_output,
            _arm_program,
            _arm_reference,
            _arm_torch,
        ),
        Family(
            "softmax",
            "pd_op.softmax over the last axis",
            "x read + out written: 2 * R * C * itemsize",
            _rows_input,
            _same_output,
            _softmax_program,
            _softmax_reference,
            _softmax_torch,
        ),
        Family(
            "layer_norm",
            "pd_op.layer_norm over the last axis with scale and bias (mean, variance unfetched)",
            "x read + out written + scale, bias read: (2 * R * C + 2 * C) * itemsize",
            _ln_inputs,
            _same_output,
            _ln_program,
            _ln_reference,
            _ln_torch,
        ),
        Family(
            "rms_norm",
            "pd_op.rms_norm over the last axis with scale (invvar unfetched)",
            "x read + out written + scale read: (2 * R * C + C) * itemsize",
            _rms_inputs,
            _same_output,
            _rms_program,
            _rms_reference,
            _rms_torch,
        ),
        Family(
            "transpose",
            "pd_op.transpose of a matrix, perm [1, 0] (32 x 32 tiles in shared memory)",
            "x read + out written: 2 * R * C * itemsize",
            _rows_input,
            _transposed_output,
            _transpose_program,
            _transpose_reference,
            _transpose_torch,
        ),
        Family(
            "reduce_sum_rows",
            "pd_op.sum over axis -1 (one sum per row)",
            "x read + one value per row written: (R * C + R) * itemsize",
            _rows_input,
            _sum_output(-1),
            _sum_program(-1),
            _sum_reference(-1),
            _sum_torch(-1),
            _SUM_TOLERANCE,
        ),
        Family(
            "reduce_sum_cols",
            "pd_op.sum over axis 0 (one sum per column)",
            "x read + one value per column written: (R * C + C) * itemsize",
            _rows_input,
            _sum_output(0),
            _sum_program(0),
            _sum_reference(0),
            _sum_torch(0),
            _SUM_TOLERANCE,
        ),
        Family(
            "reduce_sum_all",
            "pd_op.sum over every axis to 0-D (the grid schedule: blocks per chunk, then "
            "the last block to finish folds the partials)",
            "x read + one value written: (R * C + 1) * itemsize",
            _rows_input,
            _sum_output(None),
            _sum_program(None),
            _sum_reference(None),
            _sum_torch(None),
            _SUM_ALL_TOLERANCE,
        ),
    ]
}


def _cases() -> list[Case]:
    cases = [Case(FAMILIES["add_relu_mul"], (64 * 2**20,), "float32", (1000,))]
    for family in ("softmax", "layer_norm", "rms_norm"):
        for dtype in ("float32", "float16"):
            cases.append(Case(FAMILIES[family], (4096, 4096), dtype, (4, 33)))
            cases.append(Case(FAMILIES[family], (16384, 8192), dtype, (3, 40)))
    for dtype in ("float32", "float16"):
        cases.append(Case(FAMILIES["transpose"], (8192, 8192), dtype, (40, 70)))
    cases.append(Case(FAMILIES["reduce_sum_rows"], (8192, 8192), "float32", (4, 33)))
    cases.append(Case(FAMILIES["reduce_sum_cols"], (8192, 8192), "float32", (3, 40)))
    # Smoke shape long enough (33153 elements) that cuda-emu takes the grid schedule too.
    cases.append(Case(FAMILIES["reduce_sum_all"], (8192, 8192), "float32", (129, 257)))
    return cases


CASES: dict[str, Case] = {case.name: case for case in _cases()}


def select_cases(selectors: Sequence[str]) -> list[Case]:
    """The cases named by `selectors` (families, case names or name prefixes; each may be
    a comma-separated list), in the bench's order; all of them for none."""
    wanted = [s.strip() for item in selectors for s in item.split(",") if s.strip()]
    if not wanted:
        return list(CASES.values())
    chosen: set[str] = set()
    for selector in wanted:
        hits = [
            name
            for name, case in CASES.items()
            if selector in (name, case.family.name) or name.startswith(selector + "_")
        ]
        if not hits:
            known = ", ".join([*FAMILIES, *CASES])
            raise ValueError(f"no case matches '{selector}'; families and cases: {known}")
        chosen.update(hits)
    return [case for name, case in CASES.items() if name in chosen]


def list_cases() -> str:
    lines = ["| case | family | shape | dtype | bytes moved | smoke shape |", "| --- " * 6 + "|"]
    for case in CASES.values():
        lines.append(
            f"| {case.name} | {case.family.name} | {list(case.shape)} | {case.dtype} | "
            f"{case.nbytes:,} | {list(case.smoke_shape)} |"
        )
    lines.append("")
    for family in FAMILIES.values():
        lines.append(f"{family.name}: {family.description}; bytes = {family.bytes_model}")
    return "\n".join(lines)


# ---- checking --------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    ok: bool
    message: str


def check(
    xp: Any, got: Any, want: Any, dtype: str, scale: float = 1.0, pre_scaled: bool = False
) -> Check:
    """`got` against `want` with the float tolerance of `dtype`: |got - want| <= rtol *
    |want| + atol * max|want| (atol taken relative to the output's magnitude, so that a
    softmax of values ~1e-4 is not waved through by float16's atol of 1e-3)."""
    got = xp.asarray(got)
    if tuple(got.shape) != tuple(want.shape):
        return Check(False, f"shape {list(got.shape)} != expected {list(want.shape)}")
    if str(got.dtype) != dtype:
        return Check(False, f"dtype {got.dtype} != expected {dtype}")
    g = got.astype(xp.float64).ravel()
    w = want.astype(xp.float64).ravel()
    if not g.size:
        return Check(True, "empty")
    finite = xp.isfinite(g) & xp.isfinite(w)
    if not bool(finite.all()):
        bad = int((~finite).sum())
        return Check(False, f"{bad} non-finite value(s) (none expected)")
    rtol, atol = tolerance(dtype)
    magnitude = xp.abs(w)
    atol *= scale * max(float(magnitude.max()), float(np.finfo(np.float64).tiny))
    err = xp.abs(g - w)
    excess = err - (atol + rtol * magnitude)
    worst = int(excess.argmax())
    message = f"max abs error {float(err.max()):.3g} (rtol {rtol:g}, atol {atol:.3g})"
    if excess[worst] <= 0:
        return Check(True, message)
    where = [int(i) for i in np.unravel_index(worst, tuple(got.shape))]
    failing = int((excess > 0).sum())
    return Check(
        False,
        f"{message}; {failing} element(s) out of tolerance, the worst at {where}: "
        f"got {float(g[worst]):.6g}, want {float(w[worst]):.6g}",
    )


# ---- where the arrays live -------------------------------------------------------------


class HostBackend:
    """NumPy arrays, the cuda-emu (or reference) target, wall-clock timing: for --smoke
    and for trying the timed bench without a GPU."""

    def __init__(self, target: str) -> None:
        self.xp = np
        self.target = target

    def device_name(self) -> str:
        return f"CPU {platform.machine()} (cinn_py target {self.target}; not a GPU figure)"

    def versions(self) -> dict[str, str]:
        return {"numpy": np.__version__}

    def synchronize(self) -> None:
        pass

    def to_torch(self, torch: Any, array: Any) -> Any:
        return torch.from_numpy(np.ascontiguousarray(array))

    def from_torch(self, tensor: Any) -> Any:
        return tensor.detach().cpu().numpy()

    def run_compiled(self, exe: Any, feeds: dict[str, Any], params: dict[str, Any]) -> Any:
        return exe.run(feeds, params=params or None)["out0"]

    def time(self, fn: Callable[[], Any], repeat: int, budget: float) -> tuple[float, int]:
        """Median seconds per call and the number of samples."""
        once = _estimate(fn, self.synchronize)
        samples = []
        for _ in range(_sample_count(once, repeat, budget)):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
        return statistics.median(samples), len(samples)

    def copy_bandwidth(self, repeat: int, budget: float, nbytes: int = 2**26) -> float:
        src = np.ones(nbytes // 4, dtype=np.float32)
        dst = np.empty_like(src)
        seconds, _ = self.time(lambda: np.copyto(dst, src), repeat, budget)
        return 2 * nbytes / seconds

    def same_size_copy(self, moved: int, repeat: int, budget: float) -> dict[str, Any]:
        """A host copy moving `moved` bytes (half read, half written): `copy_same_size_s`."""
        src = np.ones(max(1, moved // 8), dtype=np.float32)
        dst = np.empty_like(src)
        seconds, _ = self.time(lambda: np.copyto(dst, src), repeat, budget)
        return {"copy_same_size_s": seconds * moved / (2 * src.nbytes)}

    def free(self, torch: Any) -> None:
        pass


def gpu_name(cp: Any) -> str:
    """The name of CuPy's device 0 (tools/bench_e2e.py's too)."""
    name = cp.cuda.runtime.getDeviceProperties(0)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def gpu_versions(cp: Any) -> dict[str, str]:
    """CuPy's and the CUDA runtime's versions, for a benchmark's heading."""
    runtime = cp.cuda.runtime.runtimeGetVersion()
    return {"cupy": cp.__version__, "CUDA runtime": f"{runtime // 1000}.{runtime % 1000 // 10}"}


class CudaBackend:
    """CuPy arrays on the GPU, the cuda target, CUDA-event timing on CuPy's current stream
    (the legacy default stream, which PyTorch's default stream also is)."""

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.xp = cp
        self.target = "cuda"
        self._same_size: dict[int, dict[str, Any]] = {}

    def device_name(self) -> str:
        return gpu_name(self.cp)

    def versions(self) -> dict[str, str]:
        return gpu_versions(self.cp)

    def synchronize(self) -> None:
        self.cp.cuda.Device().synchronize()

    def to_torch(self, torch: Any, array: Any) -> Any:
        try:
            return torch.from_dlpack(array)
        except Exception:  # an older CuPy / PyTorch pair: the CUDA array interface
            return torch.as_tensor(array, device="cuda")

    def from_torch(self, tensor: Any) -> Any:
        return self.cp.array(tensor)  # a copy: PyTorch's allocator may reuse the tensor's memory

    def run_compiled(self, exe: Any, feeds: dict[str, Any], params: dict[str, Any]) -> Any:
        return exe.run(feeds, params=params or None, copy_to_host=False)["out0"]

    def time(self, fn: Callable[[], Any], repeat: int, budget: float) -> tuple[float, int]:
        """Median seconds per call (CUDA events around a batch of calls) and the number of
        samples. The first call (torch.compile's compile, caches) is not timed."""
        cp = self.cp
        once = _estimate(fn, self.synchronize)
        batch = 10 if once < 1e-3 else 1
        if once < 0.05:
            for _ in range(3):
                fn()
        self.synchronize()
        samples = []
        for _ in range(_sample_count(once * batch, repeat, budget)):
            begin, end = cp.cuda.Event(), cp.cuda.Event()
            begin.record()
            for _ in range(batch):
                fn()
            end.record()
            end.synchronize()
            samples.append(cp.cuda.get_elapsed_time(begin, end) / 1e3 / batch)
        return statistics.median(samples), len(samples)

    def copy_bandwidth(self, repeat: int, budget: float, nbytes: int = 2**30) -> float:
        """Device-to-device copy bandwidth in bytes/s (read + write)."""
        cp = self.cp
        src = cp.ones(nbytes // 4, dtype=cp.float32)
        dst = cp.empty_like(src)
        seconds, _ = self.time(
            lambda: dst.data.copy_from_device_async(src.data, nbytes), repeat, budget
        )
        return 2 * nbytes / seconds

    def same_size_copy(self, moved: int, repeat: int, budget: float) -> dict[str, Any]:
        """A copy kernel moving a case's `moved` bytes (half read, half written), timed as
        cinn_py is: `copy_same_size_s` (launches queued ten at a time) and
        `copy_same_size_device_s` (a CUDA graph of many launches, per launch). The
        ceiling at that size: a small copy loses the launch's ramp and the last wave's
        tail too (on an H200, 2026-11-27, 86% of the 1 GiB copy's bandwidth at 67 MB,
        92% at 134 MB). Measured once a size (`_same_size`)."""
        if moved in self._same_size:
            return self._same_size[moved]
        cp = self.cp
        kernel = cp.RawKernel(SAME_SIZE_COPY_SOURCE, "same_size_copy")
        vectors = max(1, moved // 32)  # 16-byte vectors read (and as many written)
        src = cp.ones(vectors * 4, dtype=cp.float32)
        dst = cp.empty_like(src)
        blocks = (vectors + 255) // 256
        args = (src, dst, cp.int64(vectors))

        def launch() -> None:
            kernel((blocks,), (256,), args)

        scale = moved / (32 * vectors)  # the bytes a case moves over the bytes copied
        seconds, _ = self.time(launch, repeat, budget)
        figures = {"copy_same_size_s": seconds * scale}
        runs = graph_runs(_estimate(launch, self.synchronize))
        stream = cp.cuda.Stream()
        with stream:
            stream.begin_capture()
            for _ in range(runs):
                launch()
            graph = stream.end_capture()
        graph.upload()
        seconds, _ = self.time(graph.launch, repeat, budget)
        figures["copy_same_size_device_s"] = seconds / runs * scale
        self._same_size[moved] = figures
        return figures

    def free(self, torch: Any) -> None:
        self.cp.get_default_memory_pool().free_all_blocks()
        if torch is not None:
            torch.cuda.empty_cache()


Backend = HostBackend | CudaBackend


SAME_SIZE_COPY_SOURCE = r"""
extern "C" __global__ void same_size_copy(const float4* __restrict__ src,
                                          float4* __restrict__ dst, long long vectors) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < vectors) dst[i] = __ldg(src + i);
}
"""
"""The same-size copy's kernel: one 16-byte load and one 16-byte store a thread, the
fastest copy at these sizes (on an H200 it beat cudaMemcpyAsync and torch's copy_ by 3
to 13% from 67 MB to 1 GB, 2026-11-27)."""

DEVICE_GRAPH_SECONDS = 2e-3
"""About how long one launch of `device_runner`'s graph runs: long enough that the
launch's host cost (microseconds) is lost in it."""
MAX_GRAPH_RUNS = 1000


def device_runner(
    runtime: Any, synchronize: Callable[[], None]
) -> tuple[Callable[[], None], int] | None:
    """A function launching the program `runs` times over in one CUDA graph
    (`RuntimeProgram.repeated_graph`), and `runs`: a timed launch divided by `runs` is
    the device's time per run alone, without the host's (`cinn_py device ms`; the
    tuner's samples). `runs` fills about DEVICE_GRAPH_SECONDS. None where the program
    cannot be recorded (a library call that synchronises; a target without graphs)."""
    try:
        probe = runtime.repeated_graph(1)
    except cinn_py.CinnError:
        return None
    runs = graph_runs(_estimate(probe, synchronize))  # once: the launch's host cost too
    return runtime.repeated_graph(runs), runs


def graph_runs(once: float) -> int:
    """Runs of something taking `once` seconds (an upper bound) that fill a CUDA graph
    of about DEVICE_GRAPH_SECONDS, at most MAX_GRAPH_RUNS."""
    return max(1, min(MAX_GRAPH_RUNS, round(DEVICE_GRAPH_SECONDS / max(once, 1e-7))))


def _estimate(fn: Callable[[], Any], synchronize: Callable[[], None]) -> float:
    """Seconds one call of `fn` takes, by the wall clock, after a first call (which
    compiles, fills caches) unless that first call alone took over a second."""
    start = time.perf_counter()
    fn()
    synchronize()
    first = time.perf_counter() - start
    if first > 1.0:
        return first
    start = time.perf_counter()
    fn()
    synchronize()
    return time.perf_counter() - start


def _sample_count(seconds_per_sample: float, repeat: int, budget: float) -> int:
    """`repeat` samples, fewer where they would take longer than `budget`, at least 3."""
    return max(3, min(repeat, int(budget / max(seconds_per_sample, 1e-9))))


def make_inputs(case: Case, xp: Any, seed: int = 0) -> list[Any]:
    """Standard-normal arrays (drawn in float32, then cast) for every input of `case`."""
    rng = xp.random.default_rng(seed)
    return [
        rng.standard_normal(t.shape, dtype=xp.float32).astype(t.dtype, copy=False)
        for t in case.inputs
    ]


def _split(case: Case, arrays: Sequence[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    feeds = {t.name: a for t, a in zip(case.inputs, arrays, strict=True) if not t.param}
    params = {t.name: a for t, a in zip(case.inputs, arrays, strict=True) if t.param}
    return feeds, params


def compile_case(case: Case, target: str, fast_math: bool = False) -> Any:
    return cinn_py.compile(parse_program(case.program_text), target=target, fast_math=fast_math)


_LEADING = re.compile(r"tensor<(\d+)x(?=[-\d])")


def dynamic_text(case: Case) -> str:
    """`case`'s program with the leading dim of its feeds -1 (the rows, as a batch or a
    sequence would be), in every tensor type of rank 2 or more that starts with it and
    in the feeds' `shape` attributes: compiled for the same feeds, its kernels take the
    rows as an argument (symbolic kernels, `docs/SHAPES.md`). Parameters keep their
    types (a -1 parameter is not a program), and a rank-1 value of the rows' length
    stays declared static, so its rows are a constant again."""
    rows = next(t.shape[0] for t in case.inputs if not t.param and t.shape)
    out = []
    for line in case.program_text.splitlines():
        if '"pd_op.data"' in line:
            line = line.replace(f"shape:[{rows},", "shape:[-1,")
        if '"builtin.parameter"' not in line:
            line = _LEADING.sub(lambda m: "tensor<-1x" if int(m[1]) == rows else m[0], line)
        out.append(line)
    return "\n".join(out) + "\n"


def compile_dynamic(case: Case, target: str) -> Any:
    return cinn_py.compile(parse_program(dynamic_text(case)), target=target)


def all_dynamic_text(case: Case) -> str | None:
    """`case`'s program with every dim of every value -1 (rows of a symbolic length
    too: a softmax over a -1 sequence; its kernels come as a scalar kernel and an
    aligned variant, `driver/aligned_variants.py`), or None for a case with parameters
    (their dims are static, and tie the feeds' dims to them)."""
    if any(t.param for t in case.inputs):
        return None
    return case.family.program(tuple(-1 for _ in case.shape), case.dtype)


def compile_all_dynamic(case: Case, target: str) -> Any | None:
    text = all_dynamic_text(case)
    return None if text is None else cinn_py.compile(parse_program(text), target=target)


def symbolic_kernels(exe: Any) -> int:
    """How many of the last compile's kernels take symbolic dims (`=S0` arguments)."""
    return sum(1 for k in exe.kernels if any(a.startswith("=") for a in k.args))


def describe_groups(exe: Any) -> str:
    """How the program ran: its kernels and the ops left to library calls."""
    fused = [g for g in exe.groups if g.kind is GroupKind.FUSED]
    library = [op.name for g in exe.groups if g.kind is not GroupKind.FUSED for op in g.ops]
    text = f"{len(fused)} kernel(s)"
    return text + (f", library: {', '.join(library)}" if library else "")


def _short(error: BaseException) -> str:
    first = (str(error).strip().splitlines() or [""])[0]
    first = first if len(first) <= 100 else first[:97] + "..."
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


# ---- --smoke -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SmokeResult:
    case: str
    ok: bool
    message: str


def smoke_case(
    case: Case,
    target: str = "cuda-emu",
    nvrtc: bool = True,
    symbolic: bool = False,
    fast_math: bool = False,
) -> SmokeResult:
    """`case` at its smoke shape on `target` against the NumPy float64 reference, then its
    full-size program through the passes, lowering and codegen for the GPU, with NVRTC.
    With `symbolic`, the program with -1 rows (`dynamic_text`) instead; with
    `fast_math`, also compiled with `fast_math=True` (checked at the fast-math
    tolerance)."""
    tiny = case.at(case.smoke_shape)
    try:
        exe = compile_dynamic(tiny, target) if symbolic else compile_case(tiny, target)
        arrays = make_inputs(tiny, np)
        feeds, params = _split(tiny, arrays)
        got = exe.run(feeds, params=params or None)["out0"]
        want = tiny.family.reference(np, np.float64, *arrays)
        result = check(np, got, want, tiny.dtype, tiny.family.tolerance_scale)
        if not result.ok:
            return SmokeResult(case.name, False, f"wrong at {list(tiny.shape)}: {result.message}")
        parts = [f"{list(tiny.shape)} {target}: {describe_groups(exe)}; {result.message}"]
        if symbolic:
            parts.append(f"{symbolic_kernels(exe)} symbolic kernel(s)")
            every = compile_all_dynamic(tiny, target)
            if every is not None:
                got = every.run(feeds, params=params or None)["out0"]
                checked = check(np, got, want, tiny.dtype, tiny.family.tolerance_scale)
                if not checked.ok:
                    return SmokeResult(
                        case.name,
                        False,
                        f"every dim -1: wrong at {list(tiny.shape)}: {checked.message}",
                    )
                parts.append(f"every dim -1: {symbolic_kernels(every)} symbolic kernel(s) ok")
        if fast_math:
            fast = compile_case(tiny, target, fast_math=True)
            got = fast.run(feeds, params=params or None)["out0"]
            scale = tiny.family.tolerance_scale * FAST_MATH_SCALE
            checked = check(np, got, want, tiny.dtype, scale)
            if not checked.ok:
                return SmokeResult(
                    case.name, False, f"fast_math: wrong at {list(tiny.shape)}: {checked.message}"
                )
            parts.append("fast_math ok")
        if nvrtc:
            parts.append(gpu_codegen(case))
        return SmokeResult(case.name, True, "; ".join(parts))
    except Exception as error:
        detail = traceback.format_exc(limit=-3)
        return SmokeResult(case.name, False, f"{_short(error)}\n{detail}")


def gpu_codegen(case: Case, arch: str = SMOKE_ARCH) -> str:
    """Compile `case`'s full-size program for the GPU as far as a CUBIN (no GPU needed)."""
    from cinn_py.backends import nvrtc
    from cinn_py.driver.pir_compiler import PIRCompiler

    start = time.perf_counter()
    compiler = PIRCompiler(parse_program(case.program_text), "cuda", arch=arch)
    stages = compiler.stages(until="codegen")
    if stages.source is None:
        return f"full size: no kernel to build for {arch}"
    cubin = nvrtc.compile(stages.source.source, arch, name=f"{case.name}.cu")
    if not cubin.startswith(b"\x7fELF"):
        raise RuntimeError(f"NVRTC gave no CUBIN for {case.name}")
    seconds = time.perf_counter() - start
    return f"full size: {len(stages.fused)} kernel(s) built for {arch} ({seconds:.1f} s)"


def run_smoke(
    cases: Sequence[Case],
    target: str,
    nvrtc: bool,
    symbolic: bool = False,
    fast_math: bool = False,
) -> int:
    failures = 0
    for case in cases:
        result = smoke_case(case, target, nvrtc, symbolic, fast_math)
        failures += not result.ok
        print(f"{'ok  ' if result.ok else 'FAIL'} {result.case}: {result.message}", flush=True)
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


# ---- the timed bench -------------------------------------------------------------------

BASELINES = ("torch_eager", "torch_compile", "cupy")


@dataclass
class Options:
    repeat: int = 50
    budget: float = 2.0
    torch_compile: bool = True
    symbolic: bool = False
    """Also time the program with -1 rows (symbolic kernels) against the static one, and
    where the case has no parameters with every dim -1 (rows of symbolic length)."""
    fast_math: bool = False
    """Also time the program compiled with `fast_math=True`, checked at the fast-math
    tolerance (`FAST_MATH_SCALE` times the case's)."""


FAST_MATH_SCALE = FAST_MATH["float32"][0] / TOLERANCES["float32"][0]
"""How much wider the check of a fast-math run is than the case's own: float32's rtol
against `cinn_py.tolerances.FAST_MATH`'s (20x)."""


def run_case(case: Case, backend: Backend, torch: Any, options: Options) -> dict[str, Any]:
    """Check, then time, cinn_py and each baseline on `case`. Every failure is caught and
    recorded (`<impl>_error`), so one case never costs the others their figures."""
    xp = backend.xp
    result: dict[str, Any] = {
        "case": case.name,
        "family": case.family.name,
        "shape": list(case.shape),
        "dtype": case.dtype,
        "bytes": case.nbytes,
    }
    arrays = make_inputs(case, xp)
    feeds, params = _split(case, arrays)

    targs: list[Any] = []
    torch_fn: Callable[..., Any] | None = None
    if torch is None:
        result["torch_eager_error"] = result["torch_compile_error"] = "torch not installed"
    else:
        try:
            targs = [backend.to_torch(torch, a) for a in arrays]
            torch_fn = case.family.torch(torch)
            want = backend.from_torch(torch_fn(*targs))
            result["checked_against"] = "torch eager"
        except Exception as error:
            result["torch_eager_error"] = _short(error)
            result["torch_compile_error"] = "torch eager failed"
            torch_fn = None
    if torch_fn is None:
        want = case.family.reference(xp, xp.float64, *arrays)
        result["checked_against"] = "a float64 reference (no torch eager)"

    def measure(
        key: str, setup: Callable[[], tuple[Callable[[], Any], Any]], widen: float = 1.0
    ) -> None:
        """`setup()` gives the function to time and its first output, checked first (at
        `widen` times the case's tolerance). A compiled program's run (`ProgramRun`) is
        also timed on the device alone, on a GPU (`time_device`)."""
        try:
            fn, output = setup()
            scale = case.family.tolerance_scale * widen
            verdict = check(xp, output, want, case.dtype, scale)
            if not verdict.ok:
                result[f"{key}_error"] = f"wrong: {verdict.message}"
                return
            seconds, samples = backend.time(fn, options.repeat, options.budget)
            result[f"{key}_s"] = seconds
            result[f"{key}_samples"] = samples
            if isinstance(fn, ProgramRun) and isinstance(backend, CudaBackend):
                time_device(result, key, backend, fn.runtime, options)
        except Exception as error:
            result[f"{key}_error"] = _short(error)
            if key == "cinn_py":
                traceback.print_exc()

    def cinn() -> tuple[Callable[[], Any], Any]:
        exe = compile_case(case, backend.target)
        result["groups"] = describe_groups(exe)
        result["compile_stages_s"] = exe.timings
        output = backend.run_compiled(exe, feeds, params)
        return ProgramRun(exe.runtime_program), output

    measure("cinn_py", cinn)
    if "cinn_py_error" in result:
        print(f"ERROR: {case.name}: cinn_py: {result['cinn_py_error']}", file=sys.stderr)
    try:
        result.update(backend.same_size_copy(case.nbytes, options.repeat, options.budget))
    except Exception as error:
        result["copy_same_size_error"] = _short(error)

    def symbolic() -> tuple[Callable[[], Any], Any]:
        exe = compile_dynamic(case, backend.target)
        output = backend.run_compiled(exe, feeds, params)
        result["symbolic_kernels"] = symbolic_kernels(exe)
        return ProgramRun(exe.runtime_program), output

    def every_dim() -> tuple[Callable[[], Any], Any]:
        exe = compile_all_dynamic(case, backend.target)
        output = backend.run_compiled(exe, feeds, params)
        result["symbolic_all_kernels"] = [k.name for k in exe.kernels]
        return ProgramRun(exe.runtime_program), output

    def fast() -> tuple[Callable[[], Any], Any]:
        exe = compile_case(case, backend.target, fast_math=True)
        output = backend.run_compiled(exe, feeds, params)
        return ProgramRun(exe.runtime_program), output

    if options.fast_math:
        measure("cinn_py_fast_math", fast, FAST_MATH_SCALE)
    if options.symbolic:
        measure("cinn_py_symbolic", symbolic)
        if all_dynamic_text(case) is not None:
            measure("cinn_py_symbolic_all", every_dim)

    if torch_fn is not None:
        eager = torch_fn
        measure("torch_eager", lambda: (lambda: eager(*targs), want))
        if not options.torch_compile:
            result["torch_compile_error"] = "skipped: --no-torch-compile"
        elif isinstance(backend, CudaBackend) and importlib.util.find_spec("triton") is None:
            result["torch_compile_error"] = "triton not installed"
        else:

            def compiled() -> tuple[Callable[[], Any], Any]:
                # A fresh cache per case: no recompile limit, no dims made dynamic.
                importlib.import_module("torch._dynamo").reset()
                fn = torch.compile(case.family.torch(torch), dynamic=False)
                output = backend.from_torch(fn(*targs))  # the first call compiles
                return (lambda: fn(*targs)), output

            measure("torch_compile", compiled)

    def cupy() -> tuple[Callable[[], Any], Any]:
        fn = case.family.reference
        return (lambda: fn(xp, xp.float32, *arrays)), fn(xp, xp.float32, *arrays)

    measure("cupy", cupy)
    return result


@dataclass(frozen=True)
class ProgramRun:
    """One `execute()` of a compiled program: what `measure` times for cinn_py, and
    whose runtime it also times on the device alone."""

    runtime: Any

    def __call__(self) -> None:
        self.runtime.execute(self.runtime.scope)


def time_device(
    result: dict[str, Any], key: str, backend: Backend, runtime: Any, options: Options
) -> None:
    """`<key>_device_s`: the device's time per run alone (`device_runner`; the runs a
    graph holds in `<key>_graph_runs`), beside `<key>_s` (`execute()` from Python,
    launches queued ten at a time): where they differ, the host's launch path, not the
    kernels, set the execute figure. The variants' ratios (fast math, symbolic) are
    taken from these where both sides have one."""
    try:
        graphed = device_runner(runtime, backend.synchronize)
        if graphed is None:
            result[f"{key}_device_error"] = "the program cannot be recorded into a CUDA graph"
            return
        launch, runs = graphed
        seconds, _ = backend.time(launch, options.repeat, options.budget)
        result[f"{key}_device_s"] = seconds / runs
        result[f"{key}_graph_runs"] = runs
    except Exception as error:
        result[f"{key}_device_error"] = _short(error)


def device_row(result: dict[str, Any], copy_bw: float) -> str:
    """execute() against the device alone (a CUDA graph of many runs), same run."""
    device = result.get("cinn_py_device_s")
    if device is None or "cinn_py_s" not in result:
        return (
            f"| {result['case']} | {_cell(result, 'cinn_py')} | "
            f"{_cell(result, 'cinn_py_device')} | | | |"
        )
    runs = result["cinn_py_graph_runs"]
    return (
        f"| {result['case']} | {_ms(result['cinn_py_s'])} | {_ms(device)} ({runs} runs) | "
        f"{result['bytes'] / device / copy_bw:.1%} | "
        f"{same_size_cell(result, 'copy_same_size_device', device)} | "
        f"{result['cinn_py_s'] / device:.2f}x |"
    )


def same_size_cell(result: dict[str, Any], key: str, seconds: float) -> str:
    """`seconds` against the same-size copy's time `<key>_s` (its bandwidth over the
    copy's): `n/a (why)` where the copy was not measured."""
    if f"{key}_s" not in result:
        return "n/a" if "copy_same_size_error" not in result else _cell(result, "copy_same_size")
    return f"{result[f'{key}_s'] / seconds:.1%}"


def _cell(result: dict[str, Any], key: str) -> str:
    if f"{key}_s" in result:
        return _ms(result[f"{key}_s"])
    return f"n/a ({result.get(f'{key}_error', 'not run')})".replace("|", "/")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g}"


def _number(x: float) -> str:
    """Whole numbers from 100 up, three significant digits below."""
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def row(result: dict[str, Any], copy_bw: float) -> str:
    """The case's row of the main table."""
    head = f"| {result['case']} | {_number(result['bytes'] / 1e6)} |"
    if "cinn_py_s" not in result:
        error = result.get("cinn_py_error", "not run").replace("|", "/")
        return head + f" **FAILED**: {error} | | | | | | | {result.get('groups', '')} |"
    t = result["cinn_py_s"]
    bw = result["bytes"] / t
    ratios = []
    for key in BASELINES:
        ratios.append(
            f"{result[f'{key}_s'] / t:.2f}x" if f"{key}_s" in result else _cell(result, key)
        )
    return (
        head + f" {_ms(t)} | {_number(bw / 1e9)} | {bw / copy_bw:.1%} | "
        f"{same_size_cell(result, 'copy_same_size', t)} | "
        f"{' | '.join(ratios)} | {result.get('groups', '')} |"
    )


def ratio_cell(result: dict[str, Any], key: str, base: str = "cinn_py", empty: str = "") -> str:
    """`key`'s time over `base`'s: of the device times where both have one (said so),
    else of the execute times (`empty` where either is missing)."""
    for suffix, note in (("_device_s", " (device)"), ("_s", "")):
        if f"{key}{suffix}" in result and f"{base}{suffix}" in result:
            return f"{result[f'{key}{suffix}'] / result[f'{base}{suffix}']:.2f}x{note}"
    return empty


def fast_math_row(result: dict[str, Any]) -> str:
    """The case compiled with `fast_math=True` (`--fast-math`) against the precise one,
    same run."""
    precise, fast = _cell(result, "cinn_py"), _cell(result, "cinn_py_fast_math")
    ratio = ratio_cell(result, "cinn_py_fast_math", empty="n/a")
    return f"| {result['case']} | {precise} | {fast} | {ratio} |"


def symbolic_row(result: dict[str, Any]) -> str:
    """The case with -1 rows (`--symbolic`) against the static program, same run."""
    static, dynamic = _cell(result, "cinn_py"), _cell(result, "cinn_py_symbolic")
    ratio = ratio_cell(result, "cinn_py_symbolic")
    kernels = result.get("symbolic_kernels")
    note = "" if kernels is None else f" ({kernels} symbolic kernel(s))"
    every = "n/a (parameters)"
    if "cinn_py_symbolic_all_s" in result or "cinn_py_symbolic_all_error" in result:
        every = _cell(result, "cinn_py_symbolic_all")
        names = result.get("symbolic_all_kernels") or []
        if any(name.rsplit("_", 1)[-1].startswith("aligned") for name in names):
            every += " (aligned variant)"
    every_ratio = ratio_cell(result, "cinn_py_symbolic_all")
    return f"| {result['case']} | {static} | {dynamic}{note} | {ratio} | {every} | {every_ratio} |"


def baseline_row(result: dict[str, Any], copy_bw: float) -> str:
    cells = []
    for key in BASELINES:
        if f"{key}_s" in result:
            t = result[f"{key}_s"]
            cells.append(f"{_ms(t)} ({result['bytes'] / t / copy_bw:.1%})")
        else:
            cells.append(_cell(result, key))
    return f"| {result['case']} | {' | '.join(cells)} |"


def report(
    results: Sequence[dict[str, Any]], copy_bw: float, device: str, versions: dict[str, str]
) -> str:
    today = datetime.date.today().isoformat()
    copy_what = "host memcpy" if device.startswith("CPU") else "device-to-device cudaMemcpyAsync"
    stack = ", ".join(f"{k} {v}" for k, v in versions.items())
    lines = [
        f"### {device}, {today}",
        "",
        f"Copy bandwidth {_number(copy_bw / 1e9)} GB/s ({copy_what}, read + write); {stack}.",
        "",
        "| case | MB moved | cinn_py ms | GB/s | of copy | of same-size copy | vs torch eager "
        "| vs torch.compile | vs CuPy | cinn_py ran as |",
        "| --- " * 10 + "|",
        *(row(r, copy_bw) for r in results),
        "",
        "(ratios: the baseline's time / cinn_py's; > 1: cinn_py is faster. Same-size copy: "
        "a copy kernel moving the case's bytes, timed the same way: the ceiling at that "
        "size, where the launch's ramp and the last wave's tail cost a copy too)",
        "",
        "| case | torch eager ms (of copy) | torch.compile ms (of copy) | CuPy ms (of copy) |",
        "| --- " * 4 + "|",
        *(baseline_row(r, copy_bw) for r in results),
        "",
    ]
    lines += _variant_table(
        results,
        "cinn_py_device",
        "| case | cinn_py ms (execute) | device ms (CUDA graph) | of copy "
        "| of same-size copy | execute / device |",
        lambda r: device_row(r, copy_bw),
        "(device: the program recorded many runs over into one CUDA graph, the graph's time "
        "divided by the runs: the kernels alone, without the host's launch path)",
    )
    lines += _variant_table(
        results,
        "cinn_py_fast_math",
        "| case | precise ms | fast_math ms | fast / precise |",
        fast_math_row,
    )
    lines += _variant_table(
        results,
        "cinn_py_symbolic",
        "| case | static ms | -1 rows ms (symbolic kernels) | symbolic / static "
        "| every dim -1 ms | every dim -1 / static |",
        symbolic_row,
    )
    for r in results:
        stages = r.get("compile_stages_s") or {}
        timing = ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in stages.items())
        if timing:
            lines.append(f"- {r['case']}: compile {timing}; checked against {r['checked_against']}")
    return "\n".join(lines)


def _variant_table(
    results: Sequence[dict[str, Any]],
    key: str,
    header: str,
    row_of: Callable[[dict[str, Any]], str],
    note: str = "",
) -> list[str]:
    """The lines of one optional measurement's table (the results with `<key>_s` or
    `<key>_error`), none where no result has it."""
    chosen = [r for r in results if f"{key}_s" in r or f"{key}_error" in r]
    if not chosen:
        return []
    columns = header.count("|") - 1
    return [
        header,
        "| --- " * columns + "|",
        *map(row_of, chosen),
        "",
        *([note, ""] if note else []),
    ]


def _versions(backend: Backend, torch: Any) -> dict[str, str]:
    versions = {"cinn_py": _commit(), **backend.versions()}
    if torch is None:
        versions["torch"] = "not installed"
        return versions
    versions["torch"] = torch.__version__
    try:
        import triton

        versions["triton"] = triton.__version__
    except ImportError:
        versions["triton"] = "not installed"
    return versions


def _commit() -> str:
    """The checkout's commit (with `+` when the tree has changes), or `?` without git."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        git = ["git", "-C", root]
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True)
        dirty = subprocess.run([*git, "status", "--porcelain"], capture_output=True)
    except OSError:
        return "?"
    if head.returncode:
        return "?"
    return head.stdout.decode().strip() + ("+" if dirty.stdout.strip() else "")


def run_bench(cases: Sequence[Case], backend: Backend, torch: Any, options: Options, out: Any):
    device = backend.device_name()
    copy_bw = backend.copy_bandwidth(options.repeat, options.budget)
    versions = _versions(backend, torch)
    print(f"{device}: copy bandwidth {copy_bw / 1e9:.0f} GB/s", file=sys.stderr, flush=True)
    results: list[dict[str, Any]] = []
    for i, case in enumerate(cases, 1):
        start = time.perf_counter()
        results.append(run_case(case, backend, torch, options))
        gc.collect()
        backend.free(torch)
        print(
            f"[{i}/{len(cases)} {time.perf_counter() - start:.0f} s] {row(results[-1], copy_bw)}",
            file=sys.stderr,
            flush=True,
        )
        if out:
            with open(out, "w", encoding="utf-8") as f:
                record = {"device": device, "copy_bw": copy_bw, "versions": versions}
                json.dump({**record, "results": results}, f, indent=2)
    print(report(results, copy_bw, device, versions))
    return results


# ---- the command line --------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--cases",
        action="append",
        default=[],
        metavar="LIST",
        help="comma-separated families, case names or name prefixes (default: all)",
    )
    parser.add_argument("--case", action="append", default=[], help="same as --cases")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--smoke", action="store_true", help="tiny shapes, NumPy references")
    parser.add_argument(
        "--target",
        choices=["cuda", "cuda-emu", "reference"],
        help="cinn_py's target (default: cuda; cuda-emu for --smoke)",
    )
    parser.add_argument("--tiny", action="store_true", help="time the cases at the smoke shapes")
    parser.add_argument("--no-nvrtc", action="store_true", help="--smoke: skip the NVRTC builds")
    parser.add_argument("--repeat", type=int, default=50, help="samples per measurement (max)")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--no-torch-compile", action="store_true")
    parser.add_argument("--json", help="also write the raw figures here (after every case)")
    parser.add_argument(
        "--symbolic",
        action="store_true",
        help="also run each case with -1 rows (symbolic kernels), and with every dim -1 "
        "where it has no parameters: timed against the static program in the same run; "
        "with --smoke, checked instead of it",
    )
    parser.add_argument(
        "--fast-math",
        action="store_true",
        help="also run each case compiled with fast_math=True: timed against the precise "
        "program in the same run; with --smoke, checked (at the fast-math tolerance) too",
    )
    args = parser.parse_args(argv)

    try:
        cases = select_cases(args.cases + args.case)
    except ValueError as error:
        parser.error(str(error))
    if args.list:
        print(list_cases())
        return 0
    if args.smoke:
        return run_smoke(
            cases, args.target or "cuda-emu", not args.no_nvrtc, args.symbolic, args.fast_math
        )
    if args.tiny:
        cases = [case.at(case.smoke_shape) for case in cases]

    target = args.target or "cuda"
    backend: Backend
    if target == "cuda":
        if not gpu_available():
            print("tools/bench.py needs CuPy and a CUDA GPU (or --smoke)", file=sys.stderr)
            return 2
        import cupy

        backend = CudaBackend(cupy)
    elif target == "cuda-emu":
        backend = HostBackend(target)
    else:
        parser.error("the timed bench runs on cuda or cuda-emu (reference: use --smoke)")
    try:
        import torch
    except ImportError:
        torch = None
    options = Options(
        args.repeat, args.budget, not args.no_torch_compile, args.symbolic, args.fast_math
    )
    results = run_bench(cases, backend, torch, options, args.json)
    failed = [r["case"] for r in results if "cinn_py_s" not in r]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
