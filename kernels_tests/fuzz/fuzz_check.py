"""Differential check of one generated program: reference vs a compiled target.

`check_case(case, target)` prints the program, parses the text back (the program that
runs is the one a reproducer holds), runs it on `reference` and on `target`, and
compares every output with the project's dtype-aware tolerances
(`cinn_py.tolerances`): NaN and inf positions must agree, integers and bools must match
exactly. Any failure raises a `FuzzFailure` carrying a report (the program text, the
error or the mismatching elements) and a signature (`kind:detail`, e.g.
`mismatch:pd_op.sum float32` or `error:ScheduleError: ...`). Each *class* of failure (a
mismatch; an error or crash of one exception type or signal) has its own exception
type, so hypothesis shrinks a ScheduleError and a mismatch apart, but lets a mismatch
shrink to a mismatch at another op (where the bug is).

What is a failure:
- the compiled target raises anything (a crash, a non-cinn_py exception, a
  CompileError, a ScheduleError, ...), except an `UnsupportedOpError` that the
  reference raises too or that `DOCUMENTED_REFUSALS` lists;
- an output differs beyond tolerance (widened where the program is ill-conditioned,
  below);
- the reference rejects the program, or its text does not parse back to itself: a bug
  of the generator or of the printer / parser.

Conditioning: a float32 result may differ from the reference by rounding order and
libm's last bit; an ill-conditioned program (sin of 1e30, a compare of two nearly equal
sums, a quotient by a sum near zero) turns that into a large difference that is no
bug. When outputs differ, the reference is run again on feeds nudged by a few units in
the last place (`NUDGE`); each element's tolerance is widened by SLACK_FACTOR times
how far its reference value moved, and an element whose NaN-ness, infinity or integer
value changes under the nudge is left out of the verdict. Inputs of the `halves` and `index` kinds are never nudged (they hold exact
ties and indices), so rounding ties are still checked exactly.

A program that declares -1 input dims runs twice: at its drawn feeds, then at a second
shape (`second_shape_case`: the -1 dims of each size n >= 2 grown to the next multiple
of 8, or else to n + 2, a size at a time, where the program's types infer and the
reference runs), so its symbolic kernels (dims as kernel
arguments, `docs/SHAPES.md`) meet a second signature.

`isolate=True` runs the compiled side in a forked child, so a crash (SIGSEGV, the
SIGFPE of an integer division by zero, a hang past `CHILD_TIMEOUT`) is a failure of
its own kind that hypothesis can shrink, instead of the end of the process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import faulthandler
import hashlib
import math
import os
import pickle
import re
import signal
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from fuzz_bugs import avoided_bugs, known_failure
from fuzz_case import FuzzCase, InputSpec
from fuzz_programs import op_names, programs
from hypothesis import given, settings

import cinn_py
from cinn_py.driver.tunable import tunable_kernels
from cinn_py.errors import CinnError, UnsupportedOpError
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB
from cinn_py.ops.reduction import reduction
from cinn_py.ops.spatial_norm import group_norm_with, instance_norm_with
from cinn_py.pir.dtypes import bfloat16_to_float32, float32_to_bfloat16
from cinn_py.pir.op_def import override_op, registered_ops
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes.infer_shapes import specialize_shapes
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.pir.types import DYNAMIC, DenseTensorType
from cinn_py.reference_ops import KernelContext
from cinn_py.targets import compiled_target
from cinn_py.tolerances import compare, tolerance

DOCUMENTED_REFUSALS: tuple[tuple[str, str], ...] = ()
"""(op name, message fragment) of UnsupportedOpErrors the compiler documents for
programs the reference runs; each entry names the document that says so. None yet:
ops without a lowering run as library calls instead of being refused."""

NUDGE = {"float32": 2.0**-20, "float16": 2.0**-10, "bfloat16": 2.0**-7}
"""Relative size of the nudge per input dtype (each element moves by 1/2 to 1 of it, up
or down at random): 4 to 8 float32 ulps, about one float16 or bfloat16 ulp."""
NUDGE_ROUNDS = 2
SLACK_FACTOR = 16
"""An element's tolerance is widened by this many times how far the reference moves
under the nudge: a float32 reduction's rounding error can exceed the nudge's effect by
a few times (its error grows with the row length)."""


def one_pass_layer_norm(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """layer_norm with the variance computed in float32 as E[x^2] - E[x]^2 (clamped at 0),
    as the compiler computes it by design (Paddle's CUDA kernel does too; see
    docs/AUTO_SCHEDULE.md), where the reference takes the exact two-pass variance: rows
    whose mean is large next to their spread lose digits there. Which digits depends on
    the order the two float32 means are summed in, which NumPy's (pairwise) and the
    kernel's (a thread's share, then a tree across threads) do not share: under
    `rounding_spread` the variance moves by `summation_spread` of the mean of squares,
    so the slack covers any order (a row of 33 values near 180 and spread 1 had 1.2e-4
    of 0.88 between the two: the fuzzer, 2026-11-28, seed 215)."""
    out, mean, variance = REFERENCE_KERNELS["pd_op.layer_norm"](ctx)
    x = ctx.tensor(0)
    begin = ctx.attr("begin_norm_axis") % x.ndim
    rows = x.astype(np.float32).reshape(int(np.prod(x.shape[:begin])), -1)
    first = rows.mean(axis=1, dtype=np.float32)
    second = (rows * rows).mean(axis=1, dtype=np.float32)
    one_pass = np.maximum(second - first * first, np.float32(0)).astype(np.float64)
    spread = _SPREAD_SIGN * summation_spread(rows.shape[1]) * np.abs(second.astype(np.float64))
    one_pass = np.maximum(one_pass + np.nan_to_num(spread), 0.0)
    eps = ctx.attr("epsilon")
    ratio = np.sqrt((variance.reshape(-1) + eps) / (one_pass + eps))
    bias = ctx.optional(2)
    shift = 0.0 if bias is None else np.asarray(bias, dtype=np.float64).reshape(-1)
    rescaled = shift + (out.reshape(rows.shape) - shift) * ratio[:, None]
    return rescaled.reshape(x.shape), mean, one_pass.reshape(variance.shape)


_SPREAD_SIGN = 0
"""The side (+1, -1, or 0: none) `rounding_spread` moves the float32 variants' sums to."""


@contextlib.contextmanager
def rounding_spread(sign: int) -> Iterator[None]:
    """The float32 variants (NUMERICS_VARIANTS) with each sum moved by `summation_spread`
    of its terms' magnitude to one side: one float32 order's rounding is one sample of
    what another order gives, and an output that is discontinuous in the sum (a floor of
    a quotient by exp of it near an integer: the fuzzer, 2026-11-28) flips only on the
    side it is near. `conditioning` runs the variants unmoved and to either side."""
    global _SPREAD_SIGN
    _SPREAD_SIGN = sign
    try:
        yield
    finally:
        _SPREAD_SIGN = 0


def summation_spread(count: int) -> float:
    """How far, relative to its terms' magnitude, a float32 sum of `count` terms may land
    from another order's: a unit roundoff a level of a pairwise or tree sum, log2(count)
    levels (the typical error of either order is about that; their worst cases are
    rarer)."""
    return float(np.finfo(np.float32).eps) * max(1, math.ceil(math.log2(max(count, 2))))


def float32_rms_norm(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
    """rms_norm with the mean of squares accumulated in float32 and the inverse root in
    float32, as the compiled kernels compute it, where the reference accumulates in
    float64. An output the reference puts exactly on a value (0.5 of a row of halves,
    which the nudge never moves) can be a rounding off it compiled; a negative base
    raised to it is a number in one and NaN in the other (`pow(x3, pow(x2,
    rms_norm(x0)))`, a fuzzer case of 2026-11-27). Float64 inputs as the reference."""
    out, invvar = REFERENCE_KERNELS["pd_op.rms_norm"](ctx)
    x = ctx.tensor(0)
    if x.dtype.kind != "f" or x.dtype.itemsize > 4 or x.size == 0:
        return out, invvar
    begin = x.ndim - len(ctx.attr("normalized_shape"))
    rows = x.astype(np.float32).reshape(int(np.prod(x.shape[:begin])), -1)
    with np.errstate(all="ignore"):
        mean_square = (rows * rows).mean(axis=1, dtype=np.float32)
        mean_square *= np.float32(1 + _SPREAD_SIGN * summation_spread(rows.shape[1]))
        inverse = np.float32(1) / np.sqrt(mean_square + np.float32(ctx.attr("epsilon")))
        ratio = inverse.astype(np.float64) / invvar.reshape(-1)
    ratio = np.where(np.isfinite(ratio), ratio, 1.0)  # a row the reference has as 0 or inf
    rescaled = out.reshape(rows.shape) * ratio[:, None]
    return rescaled.reshape(x.shape), inverse.astype(np.float64).reshape(invvar.shape)


def one_pass_statistics(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's mean and variance as the compiled group_norm / instance_norm compute
    them by design (float32, E[x^2] - E[x]^2 clamped at 0, as layer_norm's)."""
    rows32 = rows.astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        first = rows32.mean(axis=-1, keepdims=True, dtype=np.float32)
        second = (rows32 * rows32).mean(axis=-1, keepdims=True, dtype=np.float32)
    spread = _SPREAD_SIGN * summation_spread(rows.shape[-1]) * np.abs(second.astype(np.float64))
    variance = np.maximum(second - first * first + np.nan_to_num(spread), 0.0)
    return first.astype(np.float64), variance.astype(np.float64)


def _float32_sum(x: np.ndarray, axes: tuple[int, ...] | None, keepdim: bool) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(x, axis=axes, dtype=np.float32, keepdims=keepdim)
        if _SPREAD_SIGN and x.size:
            count = x.size // max(total.size, 1)
            magnitude = np.sum(np.abs(x), axis=axes, dtype=np.float64, keepdims=keepdim)
            moved = total + _SPREAD_SIGN * summation_spread(count) * np.nan_to_num(magnitude)
            total = np.where(np.isfinite(total), moved, total).astype(np.float32)
        return total


def _float32_mean(x: np.ndarray, axes: tuple[int, ...] | None, keepdim: bool) -> np.ndarray:
    total = _float32_sum(x, axes, keepdim)
    count = x.size // max(total.size, 1) if x.size else 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return total / np.float32(count)


def float32_accumulation(
    name: str, reducer: Callable[..., np.ndarray]
) -> Callable[[KernelContext], np.ndarray]:
    """The reference kernel `name` accumulating float32 and 16-bit floats in float32
    (others as the reference does)."""
    in_float32 = reduction(reducer)

    def kernel(ctx: KernelContext) -> np.ndarray:
        x = ctx.tensor(0)
        if x.dtype.kind == "f" and x.dtype.itemsize <= 4:
            return in_float32(ctx)
        return REFERENCE_KERNELS[name](ctx)

    return kernel


REFERENCE_KERNELS = {op.name: op.kernel for op in registered_ops() if op.kernel is not None}
NUMERICS_VARIANTS = {
    "pd_op.layer_norm": one_pass_layer_norm,
    "pd_op.rms_norm": float32_rms_norm,
    "pd_op.group_norm": group_norm_with(one_pass_statistics),
    "pd_op.instance_norm": instance_norm_with(one_pass_statistics),
    "pd_op.sum": float32_accumulation("pd_op.sum", _float32_sum),
    "pd_op.mean": float32_accumulation("pd_op.mean", _float32_mean),
}
"""Reference kernels with the numerics the compiler documents instead of the
reference's (float64 accumulation, two-pass variance): float32 sums and means (what the
compiled kernels accumulate in), layer_norm's one-pass variance, rms_norm's float32
mean of squares. How far they move an output widens its tolerance like the nudge does:
a float32 sum of 129000 terms that cancel to ~1e-4 is off by ~5e-5."""
CHILD_TIMEOUT = 300
"""Seconds a forked compile-and-run may take before it counts as a hang."""

STATS: Counter[str] = Counter()
"""Counts for summaries: `tried:<family>`, `masked:<family>` (examples whose
mismatches were all ill-conditioned), `known:<family>` (failures of open bugs
fuzz_bugs.py lists), `failed:<family>`."""


class FuzzFailure(AssertionError):
    """A program on which the compiled target and the reference disagree (or that
    crashes, or that the generator should not have made)."""

    def __init__(self, report: str, case: FuzzCase, signature: str) -> None:
        super().__init__(report)
        self.report = report
        self.case = case
        self.signature = signature


_FAILURE_TYPES: dict[str, type[FuzzFailure]] = {}


def failure_type(failure_class: str) -> type[FuzzFailure]:
    """The FuzzFailure subclass of `failure_class` (`mismatch`, `error:ScheduleError`,
    `crash:SIGSEGV`, ...): hypothesis tells bugs apart by exception type."""
    cls = _FAILURE_TYPES.get(failure_class)
    if cls is None:
        name = re.sub(r"\W", "_", failure_class)
        cls = type(f"FuzzFailure_{name}", (FuzzFailure,), {})
        _FAILURE_TYPES[failure_class] = cls
    return cls


@dataclass
class RemoteError(Exception):
    """An exception raised in the forked child, by name."""

    type_name: str
    message: str
    trace: str
    is_cinn: bool
    is_unsupported: bool

    def __str__(self) -> str:
        return f"{self.type_name}: {self.message}"


class ChildCrash(Exception):
    """The forked child died by a signal (or hung and was killed)."""


# ---- running -------------------------------------------------------------------------------


KNOBS_ENV = "CINN_PY_FUZZ_KNOBS"
"""`random`: every case also compiles with a random candidate of each kernel's tactic
(`random_schedules`), not only with the rules (tools/fuzz.py --knobs)."""


def knobs_requested() -> bool:
    return os.environ.get(KNOBS_ENV, "") == "random"


def random_schedules(
    program: Program, feeds: Mapping[str, np.ndarray], target: str, seed: int
) -> ScheduleDB:
    """A schedule database giving each kernel of `program` (at the feeds' shapes) one of
    its tactic's `candidates`, drawn from `seed`: what a tuned database may ask of the
    tactics, at the fuzzer's odd shapes. Kernels of one key share the first draw."""
    shapes = {name: np.shape(array) for name, array in feeds.items()}
    rng = np.random.default_rng(seed)
    db = ScheduleDB(compiled_target(target).target_info(None).arch)
    for kernel in tunable_kernels(program, target, feed_shapes=shapes):
        if db.lookup(kernel.key) is None:
            chosen = kernel.candidates[int(rng.integers(len(kernel.candidates)))]
            db = db.with_entry(kernel.key, chosen)
    return db


def run_compiled(
    program: Program,
    feeds: Mapping[str, np.ndarray],
    target: str,
    schedules: ScheduleDB | None = None,
) -> dict[str, np.ndarray]:
    exe = cinn_py.compile(program, target, schedules=schedules)
    return {name: np.asarray(array) for name, array in exe.run(feeds).items()}


def in_child(fn: Callable[[], Any], timeout: int = CHILD_TIMEOUT) -> Any:
    """`fn()` in a forked child: its result, or its exception re-raised as a
    RemoteError, or ChildCrash when the child dies by a signal."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        faulthandler.disable()  # a crash is the parent's to report
        status = 0
        try:
            signal.alarm(timeout)
            payload: Any = ("ok", fn())
        except BaseException as error:  # everything goes back to the parent
            payload = (
                "error",
                type(error).__qualname__,
                str(error),
                traceback.format_exc(),
                isinstance(error, CinnError),
                isinstance(error, UnsupportedOpError),
            )
        try:
            with os.fdopen(write_end, "wb") as pipe:
                pickle.dump(payload, pipe)
        except BaseException:
            status = 3
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        name = signal.Signals(number).name
        if number == signal.SIGALRM:
            raise ChildCrash(f"timeout: no result after {timeout} s")
        raise ChildCrash(f"killed by {name}")
    if not data:
        raise ChildCrash(f"exited with status {os.WEXITSTATUS(status)} and no result")
    payload = pickle.loads(data)
    if payload[0] == "ok":
        return payload[1]
    raise RemoteError(*payload[1:])


# ---- comparing -----------------------------------------------------------------------------


def as_float(array: np.ndarray, dtype: str) -> np.ndarray:
    array = np.asarray(array)
    return bfloat16_to_float32(array) if dtype == "bfloat16" else array


def element_mismatch(
    got: np.ndarray, want: np.ndarray, dtype: str, slack: np.ndarray | None = None
) -> np.ndarray:
    """Per element, whether `got` misses `want` by the rule of `cinn_py.tolerances`
    (same tolerance table; NaN and inf positions must agree; ints and bools exact),
    each element's tolerance widened by `slack` (inf: anything goes there)."""
    got, want = as_float(got, dtype), as_float(want, dtype)
    free = np.zeros(np.shape(want), dtype=bool) if slack is None else np.isinf(slack)
    if want.dtype.kind in "biu":
        return np.asarray(got != want) & ~free
    rtol, atol = tolerance(dtype)
    g, w = got.astype(np.float64), want.astype(np.float64)
    extra = 0.0 if slack is None else np.where(free, 0.0, slack)
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    finite = np.isfinite(g) & np.isfinite(w)
    with np.errstate(invalid="ignore"):
        off = np.abs(g - w) > atol + rtol * np.abs(w) + extra
        inf_differs = ~finite & ~nan_g & ~nan_w & (g != w)
    return ((nan_g != nan_w) | inf_differs | (finite & off)) & ~free


def moved_by(moved: np.ndarray, want: np.ndarray, dtype: str) -> np.ndarray:
    """Per element, how far `moved` is from `want`: the absolute difference, inf where
    NaN-ness, an infinity or an integer changed."""
    m, w = as_float(moved, dtype), as_float(want, dtype)
    if w.dtype.kind in "biu":
        return np.where(m != w, np.inf, 0.0)
    m, w = m.astype(np.float64), w.astype(np.float64)
    finite = np.isfinite(m) & np.isfinite(w)
    same = (m == w) | (np.isnan(m) & np.isnan(w))
    with np.errstate(invalid="ignore"):
        return np.where(finite, np.abs(m - w), np.where(same, 0.0, np.inf))


def nudged(
    case: FuzzCase, feeds: Mapping[str, np.ndarray], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """`feeds` with every float input (but `halves`) moved by ~NUDGE of its value."""
    out = dict(feeds)
    for spec in case.inputs:
        dtype = spec.dtype.value
        if dtype not in NUDGE or spec.kind == "halves":
            continue
        values = as_float(feeds[spec.name], dtype).astype(np.float64)
        sign = rng.choice(np.array([-1.0, 1.0]), size=values.shape)
        factor = 1 + NUDGE[dtype] * sign * rng.uniform(0.5, 1.0, size=values.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            moved = (values * factor).astype(np.float32)
            if dtype == "bfloat16":
                out[spec.name] = float32_to_bfloat16(moved).reshape(values.shape)
            else:
                out[spec.name] = moved.astype(spec.dtype.numpy)
    return out


def sensitivity(
    case: FuzzCase,
    program: Program,
    feeds: Mapping[str, np.ndarray],
    want: Mapping[str, np.ndarray],
    dtypes: Mapping[str, str],
) -> dict[str, np.ndarray]:
    """Per output and element, how far the reference moves when the feeds are nudged
    (the largest move over NUDGE_ROUNDS; inf where NaN-ness, an infinity or an integer
    changes): large where the program is ill-conditioned; how far it is from the same
    program in float64 (`float64_shadow`: its own rounding); and how far it moves with
    the compiler's documented numerics (NUMERICS_VARIANTS)."""
    reference = cinn_py.compile(program, "reference")
    rng = np.random.default_rng(case.seed ^ 0x5EED)
    slack = {name: np.zeros(np.shape(w)) for name, w in want.items()}

    def widen(moved: Mapping[str, np.ndarray]) -> None:
        for name, w in want.items():
            if name in moved and np.shape(moved[name]) == np.shape(w):
                slack[name] = np.maximum(slack[name], moved_by(moved[name], w, dtypes[name]))

    for _ in range(NUDGE_ROUNDS):
        try:
            with np.errstate(all="ignore"):
                widen(reference.run(nudged(case, feeds, rng)))
        except CinnError:  # the nudge broke a precondition: nothing is known
            break
    shadow = float64_shadow(program, feeds, want, dtypes)
    if shadow:
        widen(shadow)
    variants = {op.name for op in program.block} & NUMERICS_VARIANTS.keys()
    if variants:
        with contextlib.ExitStack() as stack:
            for name in variants:
                stack.enter_context(override_op(name, kernel=NUMERICS_VARIANTS[name]))
            for sign in (0, 1, -1):  # NumPy's float32 order, then any order's either side
                with rounding_spread(sign), np.errstate(all="ignore"):
                    widen(cinn_py.compile(program, "reference").run(feeds))
    return slack


_F32_TYPE = re.compile(r"(tensor<(?:[0-9x-]+x)?)f32>")


def float64_shadow(
    program: Program,
    feeds: Mapping[str, np.ndarray],
    want: Mapping[str, np.ndarray],
    dtypes: Mapping[str, str],
) -> dict[str, np.ndarray] | None:
    """The float32 outputs of `program` computed with every float32 value in float64
    (the program's text with float32 types and dtypes made float64, the feeds widened),
    rounded back to float32: how far the float32 reference is from them is its own
    rounding error. A nudge does not move what rounding gets wrong the same way at every
    nudge (`sum(x - mean(x))` over 1000 values near 55: the mean's rounding, times 1000,
    is the whole answer, 1e-3 in float32 around an exact 0), so the slack takes this too.
    None where no output is float32 or the wide program does not run."""
    names = [name for name, dtype in dtypes.items() if dtype == "float32"]
    if not names:
        return None
    text = _F32_TYPE.sub(r"\1f64>", print_program(program)).replace(
        "dtype:float32", "dtype:float64"
    )
    wide_feeds = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in feeds.items()}
    try:
        with np.errstate(all="ignore"):
            got = cinn_py.compile(parse_program(text), "reference").run(wide_feeds)
    except (CinnError, ValueError, TypeError, KeyError):
        return None
    out = {}
    for name in names:
        value = np.asarray(got.get(name))
        if value.shape == np.shape(want[name]) and value.dtype == np.float64:
            out[name] = value.astype(np.float32)
    return out


def describe_mismatch(
    name: str, got: np.ndarray, want: np.ndarray, dtype: str, bad: np.ndarray, limit: int = 8
) -> str:
    g, w = as_float(got, dtype), as_float(want, dtype)
    lines = [
        f"output {name} ({dtype}{list(np.shape(want))}): {int(bad.sum())} of {bad.size} element(s) differ"
    ]
    for index in np.argwhere(bad)[:limit]:
        at = tuple(int(i) for i in index)
        lines.append(f"  at {list(at)}: got {g[at].item()!r}, want {w[at].item()!r}")
    return "\n".join(lines)


# ---- the check -----------------------------------------------------------------------------


def output_dtypes(exe: cinn_py.Executable) -> dict[str, str]:
    dtypes = {}
    for name, value in zip(exe.output_names, exe.outputs, strict=True):
        type_ = value.type
        dtypes[name] = type_.data_type.value if isinstance(type_, DenseTensorType) else "?"
    return dtypes


def output_producers(exe: cinn_py.Executable) -> dict[str, str]:
    """Each output's defining op (through fetch ops)."""
    producers = {}
    for name, value in zip(exe.output_names, exe.outputs, strict=True):
        op = value.defining_op
        if op is not None and op.name == "pd_op.fetch":
            op = op.operand_value(0).defining_op
        producers[name] = op.name if op is not None else "?"
    return producers


def normalize_message(message: str) -> str:
    """The first line of an error with numbers, value ids and names blurred, for
    signatures."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = re.sub(r"%\d+|var_\d+\w*|group_\d+|fn_\w+", "#", first)
    first = re.sub(r"\d+", "N", first)
    return first[:120]


def check_case(
    case: FuzzCase,
    target: str = "cuda-emu",
    *,
    isolate: bool = False,
    ignore: frozenset[str] = frozenset(),
    allow_known: bool = True,
    knobs: bool | None = None,
) -> None:
    """Raise a FuzzFailure unless `target` agrees with the reference on `case`.
    Failures whose signature is in `ignore` pass (long runs skip bugs found already), and
    so do those of open bugs `fuzz_bugs.KNOWN_SIGNATURES` lists, unless not
    `allow_known`. `knobs` (default `CINN_PY_FUZZ_KNOBS=random`): compiled with a random
    candidate of each kernel's tactic instead of the rules (`random_schedules`)."""
    STATS[f"tried:{case.family}"] += 1
    knobs = knobs_requested() if knobs is None else knobs
    try:
        _check(case, target, isolate, knobs)
        second = second_shape_case(case)
        if second is not None:  # -1 dims: the same program at other sizes of them
            STATS[f"second:{case.family}"] += 1
            _check(second, target, isolate, knobs)
    except FuzzFailure as failure:
        if failure.signature in ignore:
            return
        if allow_known and known_failure(failure.signature, avoided_bugs()):
            STATS[f"known:{case.family}"] += 1
            return
        STATS[f"failed:{case.family}"] += 1
        raise


def second_shape_case(case: FuzzCase) -> FuzzCase | None:
    """`case` at other sizes of the input dims its program declares -1: the dims of each
    size n >= 2 grown together (dims of one size are often one symbol; sizes of 1 kept,
    so what broadcasts still does) to the next multiple of 8 (a symbolic kernel's
    aligned variant then runs), or where the reference refuses that to n + 2 (parity
    kept, so a reshape that halves a dim still divides), a size at a time, keeping the
    growths the reference accepts (a -1 dim the program ties to a static one stays):
    symbolic kernels at a second signature. None when no size could grow."""
    declared = {
        op.attr("name"): op.result(0).type.dims
        for op in case.program.data_ops()
        if DYNAMIC in getattr(op.result(0).type, "dims", ())
    }
    sizes = sorted(
        {
            n
            for spec in case.inputs
            if spec.name in declared and len(declared[spec.name]) == len(spec.shape)
            for d, n in zip(declared[spec.name], spec.shape, strict=True)
            if d == DYNAMIC and n >= 2
        }
    )
    inputs = tuple(case.inputs)
    grown = False
    for size in sizes:
        # first to the next multiple of 8 (where a symbolic kernel's aligned variant,
        # vectors over the -1 dim, is the one launched), else by 2
        for target in (size + 8 - size % 8, size + 2):
            trial = tuple(_grown(spec, declared.get(spec.name), size, target) for spec in inputs)
            candidate = FuzzCase(case.family, case.program, trial, case.seed + 1)
            try:
                # valid sizes: the program's types infer (the reference does not check an
                # attribute such as rms_norm's normalized_shape against the feeds), and
                # the reference runs
                specialize_shapes(case.program, {spec.name: spec.shape for spec in trial})
                with np.errstate(all="ignore"):
                    cinn_py.compile(case.program, "reference").run(candidate.feeds())
            except CinnError:
                continue
            inputs, grown = trial, True
            break
    return FuzzCase(case.family, case.program, inputs, case.seed + 1) if grown else None


def _grown(spec: InputSpec, dims: tuple[int, ...] | None, size: int, to: int) -> InputSpec:
    """`spec` with its -1-declared dims of `size` grown to `to`."""
    if dims is None or len(dims) != len(spec.shape):
        return spec
    shape = tuple(
        to if d == DYNAMIC and n == size else n for d, n in zip(dims, spec.shape, strict=True)
    )
    return dataclasses.replace(spec, shape=shape)


def _fail(kind: str, detail: str, case: FuzzCase, body: str) -> FuzzFailure:
    signature = f"{kind}:{detail}"
    failure_class = kind if kind == "mismatch" else f"{kind}:{detail.split(':')[0]}"
    report = "\n".join(
        [
            f"{kind} ({case.family}): {detail}",
            body.rstrip(),
            "",
            "program:",
            case.text.rstrip(),
            "",
            repr(case).splitlines()[0],
        ]
    )
    return failure_type(failure_class)(report, case, signature)


def _check(case: FuzzCase, target: str, isolate: bool, knobs: bool = False) -> None:
    try:
        program = parse_program(case.text)
        reprinted = print_program(program)
    except CinnError as error:
        raise _fail(
            "roundtrip",
            type(error).__name__,
            case,
            f"the printed program does not parse back:\n{error}",
        ) from None
    if reprinted != case.text:
        raise _fail(
            "roundtrip",
            "reprint",
            case,
            "the printed program prints back differently:\n" + reprinted,
        )
    feeds = case.feeds()
    try:
        reference = cinn_py.compile(program, "reference")
        with np.errstate(all="ignore"):  # NaN and inf inputs are meant
            want = reference.run(feeds)
    except CinnError as error:
        raise _fail(
            "generator", type(error).__name__, case, f"the reference rejects the program:\n{error}"
        ) from None
    dtypes = output_dtypes(reference)
    schedules = None
    if knobs:
        try:
            schedules = random_schedules(program, feeds, target, case.seed)
        except CinnError:
            schedules = None  # the compile below reports what the stages refuse
        if schedules is not None:
            tuned = "; ".join(
                f"{key.describe()}: {knobs_}" for key, knobs_ in schedules.entries.items()
            )
            STATS[f"knobs:{case.family}"] += bool(tuned)
            case = dataclasses.replace(case, note=f"knobs: {tuned or 'none'}")

    def compiled() -> dict[str, np.ndarray]:
        if schedules is None:
            return run_compiled(program, feeds, target)
        return run_compiled(program, feeds, target, schedules)

    try:
        got = in_child(compiled) if isolate else compiled()
    except ChildCrash as crash:
        raise _fail("crash", str(crash).split(":")[0], case, str(crash)) from None
    except Exception as error:  # every exception of the compiled side is judged here
        if isinstance(error, RemoteError):
            type_name, message, trace = error.type_name, error.message, error.trace
            unsupported, is_cinn = error.is_unsupported, error.is_cinn
        else:
            type_name, message, trace = type(error).__name__, str(error), traceback.format_exc()
            unsupported, is_cinn = (
                isinstance(error, UnsupportedOpError),
                isinstance(error, CinnError),
            )
        if unsupported and _documented(message):
            return
        kind = "refused" if unsupported else "error" if is_cinn else "crash"
        raise _fail(kind, f"{type_name}: {normalize_message(message)}", case, trace) from None

    missing = sorted(set(want) - set(got))
    if missing:
        raise _fail(
            "mismatch", "missing output", case, f"outputs {missing} missing; got {sorted(got)}"
        )
    failing = {}
    for name, w in want.items():
        g = got[name]
        if np.shape(g) != np.shape(w) or np.asarray(g).dtype != np.asarray(w).dtype:
            raise _fail(
                "mismatch",
                "shape or dtype",
                case,
                f"output {name}: got {np.asarray(g).dtype}{list(np.shape(g))}, want {np.asarray(w).dtype}{list(np.shape(w))}",
            )
        if not compare(g, w, dtypes[name] if dtypes[name] == "bfloat16" else None).ok:
            failing[name] = element_mismatch(g, w, dtypes[name])
    if not failing:
        return
    slack = sensitivity(case, program, feeds, want, dtypes)
    producers = output_producers(reference)
    lines = []
    signature = None
    for name in failing:
        widened = SLACK_FACTOR * slack[name]
        real = element_mismatch(got[name], want[name], dtypes[name], widened)
        if not real.any():
            continue
        lines.append(describe_mismatch(name, got[name], want[name], dtypes[name], real))
        verdict = compare(
            got[name], want[name], dtypes[name] if dtypes[name] == "bfloat16" else None
        )
        rtol, atol = tolerance(dtypes[name])
        scale = np.abs(as_float(want[name], dtypes[name]).astype(np.float64))
        with np.errstate(invalid="ignore"):
            ill = int(np.count_nonzero(widened > atol + rtol * np.nan_to_num(scale)))
        lines.append(
            f"  (whole output: {verdict}; tolerance widened at {ill} ill-conditioned element(s))"
        )
        signature = signature or f"{producers[name]} {dtypes[name]}"
    if signature is None:
        STATS[f"masked:{case.family}"] += 1
        return
    raise _fail("mismatch", signature, case, "\n".join(lines))


def _documented(message: str) -> bool:
    return any(op in message and fragment in message for op, fragment in DOCUMENTED_REFUSALS)


# ---- reproducers ---------------------------------------------------------------------------


def reproducer_name(failure: FuzzFailure) -> str:
    """`<family>-<hash>`, the hash of the signature and the ops of the (minimal) program:
    one folder per distinct failure."""
    key = failure.signature + "|" + " ".join(sorted(set(op_names(failure.case))))
    return f"{failure.case.family}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"


def write_reproducer(
    failure: FuzzFailure, out_dir: str | os.PathLike[str], target: str = "cuda-emu"
) -> Path:
    """`out_dir/<family>-<hash>/` with program.pir, feeds.npz and failure.txt; rerun it
    with `cinn-py run program.pir --feeds feeds.npz --check --target cuda-emu`."""
    folder = Path(out_dir) / reproducer_name(failure)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "program.pir").write_text(failure.case.text)
    np.savez(folder / "feeds.npz", **failure.case.feeds())
    how = f"cinn-py run program.pir --feeds feeds.npz --check --target {target}"
    if failure.case.note.startswith("knobs:"):  # the random database it was compiled with
        case = failure.case
        db = random_schedules(parse_program(case.text), case.feeds(), target, case.seed)
        db.write(folder / "schedules" / f"{db.arch}.json")
        how = f"{KNOBS_ENV}= CINN_PY_SCHEDULES=schedules {how}"
    (folder / "failure.txt").write_text(
        f"signature: {failure.signature}\ntarget: {target}\nrerun: {how}\n\n{failure.report}\n"
    )
    return folder


# ---- hypothesis tests ----------------------------------------------------------------------


def family_test(
    family: str,
    target: str,
    test_settings: settings,
    *,
    isolate: bool = False,
    ignore: frozenset[str] = frozenset(),
    on_failure: Callable[[FuzzFailure], None] | None = None,
    stop_at: float | None = None,
    knobs: bool | None = None,
) -> Callable[[], None]:
    """A hypothesis test over `programs(family)` checked on `target`; call it to run.
    `on_failure` sees every failing example (for each class of failure the last one it
    sees is the minimal one: hypothesis replays it last). Past `stop_at` (a time.time())
    examples pass without running, so a long run ends on time."""

    def check(case: FuzzCase) -> None:
        if stop_at is not None and time.time() > stop_at:
            return
        try:
            check_case(case, target, isolate=isolate, ignore=ignore, knobs=knobs)
        except FuzzFailure as failure:
            if on_failure is not None:
                on_failure(failure)
            raise

    # One example database key per family, target and knobs (they share this code).
    digest = f"{family}|{target}" + ("|knobs" if knobs else "")
    check._hypothesis_internal_add_digest = digest.encode()  # type: ignore[attr-defined]
    return test_settings(given(case=programs(family))(check))


def read_reproducer(folder: str | os.PathLike[str]) -> FuzzCase:
    """The case a reproducer folder holds: its program, its feeds as they are, and its
    inputs' value kinds from failure.txt (`normal` where it does not say)."""
    folder = Path(folder)
    text = (folder / "program.pir").read_text()
    with np.load(folder / "feeds.npz") as data:
        feeds = {name: data[name] for name in data.files}
    report = (folder / "failure.txt").read_text() if (folder / "failure.txt").exists() else ""
    kinds = dict(re.findall(r"(\w+): \w+\[[^\]]*\] (normal|special|halves|extreme|index)", report))
    program = parse_program(text)
    family = folder.name.rsplit("-", 1)[0]
    inputs = []
    for op in program.data_ops():
        name = str(op.attr("name"))
        type_ = op.result(0).tensor_type
        shape = tuple(feeds[name].shape) if name in feeds else tuple(type_.dims)
        inputs.append(InputSpec(name, shape, type_.data_type, kinds.get(name, "normal")))
    return FuzzCase(family, program, tuple(inputs), 0, fixed_feeds=feeds)
