"""Generate golden PIR fixtures with real PaddlePaddle for the cinn_py tests.

Why: cinn_py parses the *printed* form of Paddle PIR programs and the
``model.json`` / ``model.pdiparams`` files that ``paddle.jit.save`` writes, and
it must reproduce Paddle's numerics. The only trustworthy source for both the
text format and the expected numbers is Paddle itself, so this script builds
small programs with Paddle, prints them, runs them on CPU, and stores
everything under ``kernels_tests/fixtures/`` where the tests read it.

Paddle is a *tool-only* dependency: it is needed to regenerate the fixtures,
never to import or test cinn_py. The generated files are committed.

How to run (Paddle 3.3.1 CPU build lives in a separate venv here)::

    /work/paddle-venv/bin/python tools/gen_paddle_fixtures.py
    /work/paddle-venv/bin/python tools/gen_paddle_fixtures.py --only attention_block

Elsewhere: ``python -m venv v && v/bin/pip install paddlepaddle`` and run the
script with that interpreter. Never install Paddle into the environment that
runs cinn_py.

Layout written (see kernels_tests/fixtures/README.md):

* ``programs/<name>/``: ``program.pir`` (``str(main)``, captured before the
  executor runs), ``feeds.npz`` (keyed by ``pd_op.data`` name),
  ``params.npz`` (keyed by ``parameter_name``; only if there are parameters),
  ``outputs.npz`` (keyed by printed value id such as ``%24``), ``meta.json``.
* ``models/<name>/``: ``model.json`` + ``model.pdiparams`` from
  ``paddle.jit.save``, ``feeds.npz``, ``outputs.npz`` (``out0``, ...),
  ``params.npz``, ``program.pir`` and ``program_jit_load.pir``, ``meta.json``.

The script is deterministic: fixed seeds, fresh unique-name counters and scopes
per fixture, and ``.npz`` archives written with fixed zip timestamps, so a rerun
rewrites identical files up to float noise of multithreaded kernels.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import struct
import warnings
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Silence Paddle's per-run glog INFO lines; must be set before paddle loads.
os.environ.setdefault("GLOG_minloglevel", "2")

import gen_model_blocks  # noqa: E402  (tools/ is on sys.path when this script runs)
import numpy as np  # noqa: E402
import paddle  # noqa: E402
from gen_model_blocks import BLOCK_MODELS, OP_CASES, make_feed  # noqa: E402
from paddle.base import core  # noqa: E402
from paddle.base import framework as base_framework  # noqa: E402

warnings.filterwarnings("ignore")

F = paddle.nn.functional
Value = Any  # paddle.pir.Value; kept loose because its stubs are incomplete.

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "kernels_tests" / "fixtures"

# Ops that the program fixtures together must contain (printed names).
REQUIRED_OPS: tuple[str, ...] = tuple(
    f"pd_op.{name}"
    for name in """
    data fetch full full_like full_int_array assign scale cast add subtract
    multiply divide floor_divide remainder maximum minimum pow elementwise_pow
    exp expm1 log log1p log2 sqrt rsqrt abs sign floor ceil round sin cos tan
    tanh sigmoid relu relu6 silu gelu erf square reciprocal clip leaky_relu
    hardswish hardsigmoid equal not_equal less_than less_equal greater_than
    greater_equal logical_and logical_or logical_xor logical_not isnan isinf
    isfinite where sum mean max min prod all any argmax argmin cumsum softmax
    log_softmax layer_norm rms_norm transpose reshape squeeze unsqueeze flatten
    expand concat split split_with_num slice strided_slice stack gather tile
    matmul bmm embedding dropout
    """.split()
) + ("builtin.combine", "builtin.split", "builtin.parameter")
# Not listed: paddle.broadcast_to has no op of its own and prints as
# pd_op.expand; zeros_like/ones_like print as pd_op.full_like.


# --------------------------------------------------------------------------
# Deterministic file writing
# --------------------------------------------------------------------------


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write an ``np.load``-compatible .npz with fixed timestamps.

    ``np.savez`` stamps the current time into the zip, which would make every
    regeneration a binary diff; this writes the same container byte-stably.
    """
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as zf:
        for key in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())


def to_json(obj: Any, indent: int = 0) -> str:
    """JSON with one key per line but lists of scalars/lists kept inline.

    ``json.dumps(indent=2)`` puts every shape element on its own line, which
    makes meta.json hard to read and diff.
    """
    pad = "  " * (indent + 1)
    if isinstance(obj, dict) and obj:
        items = [f"{pad}{json.dumps(k)}: {to_json(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(obj, list) and any(isinstance(v, dict) for v in obj):
        items = [pad + to_json(v, indent + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
    return json.dumps(obj)


def save_json(path: Path, obj: dict[str, Any]) -> None:
    """Write readable, order-preserving JSON so diffs stay small."""
    path.write_text(to_json(obj) + "\n")


def shape_dtype(array: np.ndarray) -> list[Any]:
    """The ``[shape, dtype]`` pair used throughout meta.json."""
    return [list(array.shape), str(array.dtype)]


def fresh_dir(path: Path) -> Path:
    """Recreate ``path`` empty so stale files from older runs disappear."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


@contextmanager
def fresh_names() -> Iterator[None]:
    """Reset Paddle's global name counters for one fixture.

    Parameter names (``linear_0.w_0``) come from ``unique_name``; the
    ``struct_name`` attribute (``/Linear_1/``) comes from a separate
    module-global tree in paddle.base.framework. Both must start fresh or the
    printed text would depend on which fixtures ran before (``--only``).
    """
    saved = base_framework._name_struct
    base_framework._name_struct = base_framework.NameStruct()
    try:
        with paddle.utils.unique_name.guard():
            yield
    finally:
        base_framework._name_struct = saved


def case_seed(name: str) -> int:
    """Stable per-fixture seed, independent of which fixtures run (--only)."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


# --------------------------------------------------------------------------
# Printed-program helpers
# --------------------------------------------------------------------------

_RESULT_LINE = re.compile(r'^\s*\(([^)]*)\) = "([^"]+)"')


def printed_results(text: str) -> list[tuple[list[str], str]]:
    """(result ids, op name) for every op line of a printed top block."""
    rows = []
    for line in text.splitlines():
        match = _RESULT_LINE.match(line)
        if match:
            ids = [tok.strip() for tok in match.group(1).split(",") if tok.strip()]
            rows.append((ids, match.group(2)))
    return rows


def value_id(program: Any, value: Value) -> str:
    """Printed id of ``value``: results of top-block ops numbered from %0."""
    counter = 0
    for op in program.global_block().ops:
        for result in op.results():
            if result.is_same(value):
                return f"%{counter}"
            counter += 1
    raise ValueError("value is not a result of a top-block op")


def check_value_id(text: str, vid: str, op_name: str) -> None:
    """Assert the printed program defines ``vid`` on a line of ``op_name``."""
    for ids, name in printed_results(text):
        if vid in ids:
            if name != op_name:
                raise AssertionError(f"{vid} is defined by {name}, expected {op_name}")
            return
    raise AssertionError(f"{vid} not found in printed program")


def op_names(program: Any) -> list[str]:
    """Sorted unique op names of the top block."""
    return sorted({op.name() for op in program.global_block().ops})


def parameter_names(program: Any) -> list[str]:
    """``parameter_name`` of every ``builtin.parameter`` op, in program order."""
    return [
        op.attrs()["parameter_name"]
        for op in program.global_block().ops
        if op.name() == "builtin.parameter"
    ]


# --------------------------------------------------------------------------
# Program fixtures
# --------------------------------------------------------------------------


@dataclass
class Builder:
    """Creates ``pd_op.data`` inputs and remembers the arrays fed to them."""

    rng: np.random.Generator
    feeds: dict[str, np.ndarray] = field(default_factory=dict)
    dynamic_shapes: dict[str, list[int]] = field(default_factory=dict)
    alt_feeds: dict[str, np.ndarray] = field(default_factory=dict)
    param_values: dict[str, np.ndarray] = field(default_factory=dict)

    def data(
        self,
        name: str,
        array: np.ndarray,
        shape: list[int] | None = None,
        alt: np.ndarray | None = None,
    ) -> Value:
        """Declare a data input (``shape`` may hold -1) fed with ``array``.

        ``alt``: a second array of another shape for a ``-1`` input; when any
        input has one, the program also runs on the second feed set
        (``feeds_2.npz``: the ``alt`` arrays, the other inputs as before) and
        its results are written to ``outputs_2.npz``.
        """
        self.feeds[name] = array
        declared = list(array.shape) if shape is None else shape
        if declared != list(array.shape):
            self.dynamic_shapes[name] = declared
        if alt is not None:
            self.alt_feeds[name] = alt
        return paddle.static.data(name, declared, str(array.dtype))

    def alt(self, name: str, array: np.ndarray) -> None:
        """The second-set feed for an input declared earlier (like ``data(..., alt=)``).

        Call it after every first-set array is drawn, so adding a second set to an
        existing fixture leaves its first feeds, parameters and outputs unchanged.
        """
        if name not in self.feeds:
            raise KeyError(f"alt feed for unknown input {name!r}")
        self.alt_feeds[name] = array

    def set_param(self, param: Value, array: np.ndarray) -> None:
        """Overwrite a parameter after the startup program ran (e.g. BatchNorm stats)."""
        self.param_values[param.name] = array

    def uniform(self, shape: tuple[int, ...], low: float = -2.0, high: float = 2.0) -> np.ndarray:
        return self.rng.uniform(low, high, size=shape).astype("float32")

    def ints(self, shape: tuple[int, ...], low: int, high: int, dtype: str = "int32") -> np.ndarray:
        return self.rng.integers(low, high, size=shape).astype(dtype)

    def nonzero_ints(self, shape: tuple[int, ...], bound: int, dtype: str = "int32") -> np.ndarray:
        """Integers in [-bound, -1] U [1, bound]: safe divisors with both signs."""
        mag = self.rng.integers(1, bound + 1, size=shape)
        sign = np.where(self.rng.random(size=shape) < 0.5, -1, 1)
        return (mag * sign).astype(dtype)

    def bools(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.rng.random(size=shape) < 0.5


BuildFn = Callable[[Builder], list[Value]]


@dataclass(frozen=True)
class ProgramCase:
    name: str
    description: str
    build: BuildFn


PROGRAM_CASES: list[ProgramCase] = []


def program_case(name: str, description: str) -> Callable[[BuildFn], BuildFn]:
    """Register a static-graph builder that returns the values to fetch."""

    def register(fn: BuildFn) -> BuildFn:
        PROGRAM_CASES.append(ProgramCase(name, description, fn))
        return fn

    return register


@dataclass
class ProgramFixture:
    """Everything written for one program fixture."""

    text: str
    feeds: dict[str, np.ndarray]
    params: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    ops: list[str]
    description: str
    extra_meta: dict[str, Any] = field(default_factory=dict)
    feeds_2: dict[str, np.ndarray] | None = None
    outputs_2: dict[str, np.ndarray] | None = None


DYNAMIC_DIM = re.compile(r"[<x]-1x")
"""A -1 dim in a printed tensor type (`tensor<-1x6xf32>`, `tensor<2x-1xf32>`); the test
files use the same pattern to require a second shape set."""


def check_second_set(name: str, has_dynamic: bool, second: dict[str, np.ndarray]) -> None:
    """A program with -1 dims needs a second shape set, and one without has none."""
    if has_dynamic and not second:
        raise AssertionError(f"{name}: -1 dims but no second shape set (alt feeds)")
    if second and not has_dynamic:
        raise AssertionError(f"{name}: a second shape set for a program without -1 dims")


def check_dims_differ(name: str, declared: list[int], first: tuple, second: tuple) -> None:
    """The second feed must take another size in every -1 dim of its declared shape."""
    same = [i for i, d in enumerate(declared) if d == -1 and first[i] == second[i]]
    if same or len(first) != len(second):
        raise AssertionError(f"{name}: second shape {second} vs {first}: -1 dims {same} unchanged")


def run_program_case(case: ProgramCase) -> ProgramFixture:
    """Build, print and execute one case in a fresh scope and name space."""
    seed = case_seed(case.name)
    paddle.enable_static()
    paddle.seed(seed)
    main, startup = paddle.static.Program(), paddle.static.Program()
    startup.random_seed = seed
    builder = Builder(np.random.default_rng(seed))
    scope = paddle.static.Scope()
    with fresh_names(), paddle.static.scope_guard(scope):
        with paddle.static.program_guard(main, startup):
            fetches = case.build(builder)
        text = str(main)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        for name, array in builder.param_values.items():
            scope.find_var(name).get_tensor().set(array, paddle.CPUPlace())
        params = {
            name: np.array(scope.find_var(name).get_tensor()) for name in parameter_names(main)
        }
        results = exe.run(main, feed=builder.feeds, fetch_list=fetches)
        feeds_2 = {**builder.feeds, **builder.alt_feeds}
        results_2 = exe.run(main, feed=feeds_2, fetch_list=fetches) if builder.alt_feeds else None
    if str(main) != text:
        raise AssertionError(f"{case.name}: running the executor changed the program")
    check_second_set(case.name, bool(DYNAMIC_DIM.search(text)), builder.alt_feeds)
    for key, declared in builder.dynamic_shapes.items():
        alt = builder.alt_feeds.get(key)
        if alt is None:
            raise AssertionError(f"{case.name}: -1 input {key!r} has no second-set feed")
        check_dims_differ(f"{case.name} {key}", declared, builder.feeds[key].shape, alt.shape)
    outputs: dict[str, np.ndarray] = {}
    for value, result in zip(fetches, results, strict=True):
        vid = value_id(main, value)
        check_value_id(text, vid, value.get_defining_op().name())
        outputs[vid] = np.asarray(result)
        if outputs[vid].dtype == object:
            raise AssertionError(f"{case.name}: Paddle fetched no tensor for {vid}")
    extra: dict[str, Any] = (
        {"declared_feed_shapes": builder.dynamic_shapes} if builder.dynamic_shapes else {}
    )
    fixture = ProgramFixture(
        text, builder.feeds, params, outputs, op_names(main), case.description, extra
    )
    if results_2 is not None:
        fixture.feeds_2 = feeds_2
        fixture.outputs_2 = {vid: np.asarray(r) for vid, r in zip(outputs, results_2, strict=True)}
        extra["feeds_2"] = {k: shape_dtype(v) for k, v in feeds_2.items()}
        extra["outputs_2"] = {k: shape_dtype(v) for k, v in fixture.outputs_2.items()}
    return fixture


def write_program_fixture(out_dir: Path, fixture: ProgramFixture) -> None:
    """Write program.pir / feeds / params / outputs / meta.json."""
    fresh_dir(out_dir)
    (out_dir / "program.pir").write_text(fixture.text)
    save_npz(out_dir / "feeds.npz", fixture.feeds)
    if fixture.params:
        save_npz(out_dir / "params.npz", fixture.params)
    save_npz(out_dir / "outputs.npz", fixture.outputs)
    if fixture.feeds_2 is not None and fixture.outputs_2 is not None:
        save_npz(out_dir / "feeds_2.npz", fixture.feeds_2)
        save_npz(out_dir / "outputs_2.npz", fixture.outputs_2)
    meta = {
        "feeds": {k: shape_dtype(v) for k, v in fixture.feeds.items()},
        "outputs": {k: shape_dtype(v) for k, v in fixture.outputs.items()},
        "params": {k: shape_dtype(v) for k, v in fixture.params.items()},
        "ops": fixture.ops,
        "description": fixture.description,
        **fixture.extra_meta,
    }
    save_json(out_dir / "meta.json", meta)


# ----- elementwise arithmetic ---------------------------------------------


@program_case("binary_arith", "add/subtract/multiply/divide/maximum/minimum on [4,6] float32")
def _binary_arith(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    y = b.data(
        "y", b.uniform((4, 6), 0.5, 2.0) * np.where(b.bools((4, 6)), -1, 1).astype("float32")
    )
    return [x + y, x - y, x * y, x / y, paddle.maximum(x, y), paddle.minimum(x, y)]


@program_case("broadcast_add", "broadcasting add [4,1,6]+[3,1] -> [4,3,6], multiply by a [6] row")
def _broadcast_add(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 1, 6)))
    y = b.data("y", b.uniform((3, 1)))
    r = b.data("r", b.uniform((6,)))
    s = x + y
    return [s, s * r]


@program_case(
    "floor_divide_remainder_int32",
    "floor_divide and remainder on int32 with negative dividends and divisors (sign semantics)",
)
def _floordiv_int(b: Builder) -> list[Value]:
    x = b.data("x", b.ints((4, 6), -20, 21))
    y = b.data("y", b.nonzero_ints((4, 6), 7))
    return [paddle.floor_divide(x, y), paddle.remainder(x, y)]


@program_case(
    "floor_divide_remainder_f32",
    "floor_divide and remainder on float32 with negative dividends and divisors (sign semantics)",
)
def _floordiv_f32(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6), -10.0, 10.0))
    y = b.data("y", b.nonzero_ints((4, 6), 4, "float32") * np.float32(0.75))
    return [paddle.floor_divide(x, y), paddle.remainder(x, y)]


@program_case(
    "pow_family",
    "pow with scalar exponents (pd_op.pow) and tensor exponent (pd_op.elementwise_pow)",
)
def _pow_family(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6), 0.1, 3.0))
    e = b.data("e", b.uniform((4, 6), -1.5, 2.5))
    return [paddle.pow(x, 2.0), paddle.pow(x, 0.5), paddle.pow(x, e), x**e]


# ----- unary math ----------------------------------------------------------


@program_case("exp_log_family", "exp/expm1/log/log1p/log2/sqrt/rsqrt on positive inputs")
def _exp_log(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6), 0.05, 4.0))
    return [
        paddle.exp(x),
        paddle.expm1(x),
        paddle.log(x),
        paddle.log1p(x),
        paddle.log2(x),
        paddle.sqrt(x),
        paddle.rsqrt(x),
    ]


@program_case(
    "sign_rounding", "abs/sign/floor/ceil/round incl. negative values, zero and exact .5 halves"
)
def _sign_rounding(b: Builder) -> list[Value]:
    halves = np.array([-2.5, -1.5, -0.5, 0.0, 0.5, 1.5], dtype="float32")
    x = b.data("x", np.concatenate([halves[None], b.uniform((3, 6), -5.0, 5.0)]))
    return [paddle.abs(x), paddle.sign(x), paddle.floor(x), paddle.ceil(x), paddle.round(x)]


@program_case("trig", "sin/cos/tan/tanh")
def _trig(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6), -1.2, 1.2))
    return [paddle.sin(x), paddle.cos(x), paddle.tan(x), paddle.tanh(x)]


@program_case(
    "activations", "sigmoid/relu/relu6/silu/leaky_relu(0.1)/hardswish/hardsigmoid on [-8,8]"
)
def _activations(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6), -8.0, 8.0))
    return [
        F.sigmoid(x),
        F.relu(x),
        F.relu6(x),
        F.silu(x),
        F.leaky_relu(x, negative_slope=0.1),
        F.hardswish(x),
        F.hardsigmoid(x),
    ]


@program_case("gelu_erf", "gelu exact (approximate=False), gelu tanh (approximate=True), erf")
def _gelu_erf(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6), -4.0, 4.0))
    return [F.gelu(x, approximate=False), F.gelu(x, approximate=True), paddle.erf(x)]


@program_case("square_reciprocal_clip", "square, reciprocal (no zeros), clip to [-0.5, 0.75]")
def _square_reciprocal_clip(b: Builder) -> list[Value]:
    x = b.data(
        "x", b.uniform((4, 6), 0.25, 2.0) * np.where(b.bools((4, 6)), -1, 1).astype("float32")
    )
    return [paddle.square(x), paddle.reciprocal(x), paddle.clip(x, min=-0.5, max=0.75)]


@program_case(
    "scale_assign_cast",
    "scale (bias after/before scale), assign, casts f32->i32 (truncation), i32->f32, f32->bool",
)
def _scale_assign_cast(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6), -3.0, 3.0))
    i = b.data("i", b.ints((4, 6), -9, 10))
    return [
        paddle.scale(x, scale=2.0, bias=1.0, bias_after_scale=True),
        paddle.scale(x, scale=2.0, bias=1.0, bias_after_scale=False),
        paddle.assign(x),
        paddle.cast(x, "int32"),
        paddle.cast(i, "float32"),
        paddle.cast(paddle.round(x), "bool"),
    ]


# ----- comparison / logical ---------------------------------------------------


@program_case(
    "compare_f32", "equal/not_equal/less_than/less_equal/greater_than/greater_equal with ties"
)
def _compare_f32(b: Builder) -> list[Value]:
    x = b.data("x", b.ints((4, 6), -2, 3, "float32"))
    y = b.data("y", b.ints((4, 6), -2, 3, "float32"))
    return [
        paddle.equal(x, y),
        paddle.not_equal(x, y),
        paddle.less_than(x, y),
        paddle.less_equal(x, y),
        paddle.greater_than(x, y),
        paddle.greater_equal(x, y),
    ]


@program_case("compare_int32_broadcast", "int32 comparisons broadcasting [4,6] against [6]")
def _compare_int(b: Builder) -> list[Value]:
    x = b.data("x", b.ints((4, 6), -3, 4))
    y = b.data("y", b.ints((6,), -3, 4))
    return [paddle.equal(x, y), paddle.less_than(x, y), paddle.greater_equal(x, y)]


@program_case("logical_ops", "logical_and/or/xor/not on bool tensors")
def _logical(b: Builder) -> list[Value]:
    p = b.data("p", b.bools((4, 6)))
    q = b.data("q", b.bools((4, 6)))
    return [
        paddle.logical_and(p, q),
        paddle.logical_or(p, q),
        paddle.logical_xor(p, q),
        paddle.logical_not(p),
    ]


@program_case("nan_inf_checks", "isnan/isinf/isfinite with nan, +inf, -inf in the feed")
def _nan_inf(b: Builder) -> list[Value]:
    arr = b.uniform((4, 6))
    arr[0, 0], arr[1, 2], arr[2, 4], arr[3, 5] = np.nan, np.inf, -np.inf, np.nan
    x = b.data("x", arr)
    return [paddle.isnan(x), paddle.isinf(x), paddle.isfinite(x)]


@program_case(
    "where_bool_cond", "where with a bool data condition, and with a comparison condition"
)
def _where(b: Builder) -> list[Value]:
    c = b.data("c", b.bools((4, 6)))
    x = b.data("x", b.uniform((4, 6)))
    y = b.data("y", b.uniform((4, 6)))
    return [paddle.where(c, x, y), paddle.where(x > y, x, paddle.zeros_like(x))]


# ----- reductions --------------------------------------------------------------


@program_case(
    "reduce_multi_axis",
    "sum/mean/max/min/prod over several axes, keepdim True and False, on [2,3,5]",
)
def _reduce_multi_axis(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3, 5), 0.5, 1.5))
    return [
        paddle.sum(x, axis=[0, 2], keepdim=True),
        paddle.mean(x, axis=1),
        paddle.max(x, axis=-1, keepdim=True),
        paddle.min(x, axis=[0, 1]),
        paddle.prod(x, axis=2),
    ]


@program_case("reduce_to_0d", "sum/mean/max/min/prod over all axes -> 0-D")
def _reduce_to_0d(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6), 0.6, 1.4))
    return [paddle.sum(x), paddle.mean(x), paddle.max(x), paddle.min(x), paddle.prod(x)]


@program_case(
    "reduce_int_bool_sum",
    "sum of int32 and bool inputs (default output dtype), sum with explicit dtype",
)
def _reduce_int_bool(b: Builder) -> list[Value]:
    i = b.data("i", b.ints((4, 6), -50, 50))
    p = b.data("p", b.bools((4, 6)))
    return [
        paddle.sum(i),
        paddle.sum(i, axis=1),
        paddle.sum(p, axis=0),
        paddle.sum(i, axis=0, dtype="int32"),
        paddle.sum(i, dtype="float32"),
    ]


@program_case("all_any", "all/any over one axis, all axes, keepdim")
def _all_any(b: Builder) -> list[Value]:
    arr = b.rng.random((4, 6)) < 0.8
    arr[0, :] = True
    p = b.data("p", arr)
    return [
        paddle.all(p, axis=1),
        paddle.any(p, axis=0, keepdim=True),
        paddle.all(p),
        paddle.any(p),
    ]


@program_case(
    "argmax_argmin", "argmax/argmin with keepdim, int32 dtype, default int64, flattened (no axis)"
)
def _argmax_argmin(b: Builder) -> list[Value]:
    x = b.data("x", b.rng.permutation(24).reshape(4, 6).astype("float32"))
    return [
        paddle.argmax(x, axis=1, keepdim=True, dtype="int32"),
        paddle.argmin(x, axis=0),
        paddle.argmax(x),
        paddle.argmin(x, axis=-1, keepdim=True, dtype="int32"),
    ]


@program_case("cumsum_axis", "cumsum on axis 1, on axis 0 of 3-D, flattened (no axis), and int32")
def _cumsum(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    y = b.data("y", b.uniform((2, 3, 5)))
    i = b.data("i", b.ints((4, 6), -5, 6))
    return [
        paddle.cumsum(x, axis=1),
        paddle.cumsum(y, axis=0),
        paddle.cumsum(x),
        paddle.cumsum(i, axis=1),
    ]


# ----- normalization -----------------------------------------------------------


@program_case(
    "softmax_axes", "softmax on last and middle axis, log_softmax on axis 0 and last axis"
)
def _softmax(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3, 5), -3.0, 3.0))
    return [F.softmax(x), F.softmax(x, axis=1), F.log_softmax(x, axis=0), F.log_softmax(x, axis=-1)]


@program_case(
    "layer_norm_3d",
    "LayerNorm([3,5], epsilon=1e-3) on [2,3,5] (begin_norm_axis=1, random weight/bias params) "
    "and functional layer_norm without weight/bias (null operands) on the last axis",
)
def _layer_norm(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3, 5), -2.0, 3.0))
    init = paddle.nn.initializer.Normal(0.0, 1.0)
    ln = paddle.nn.LayerNorm(
        [3, 5],
        epsilon=1e-3,
        weight_attr=paddle.ParamAttr(initializer=init),
        bias_attr=paddle.ParamAttr(initializer=init),
    )
    return [ln(x), F.layer_norm(x, [5])]


# ----- shape manipulation --------------------------------------------------------


@program_case("reshape_family", "reshape with 0 and -1, squeeze, unsqueeze (several axes), flatten")
def _reshape(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3, 5)))
    y = b.data("y", b.uniform((4, 1, 6)))
    return [
        paddle.reshape(x, [0, -1]),
        paddle.reshape(x, [5, -1, 2]),
        paddle.squeeze(y, axis=1),
        paddle.unsqueeze(x, axis=[0, 3]),
        paddle.flatten(x, start_axis=1),
        paddle.flatten(x),
    ]


@program_case("transpose_perm", "transpose with a 3-D permutation and 2-D .T")
def _transpose(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3, 5)))
    y = b.data("y", b.uniform((4, 6)))
    return [paddle.transpose(x, [2, 0, 1]), y.T]


@program_case(
    "expand_broadcast_to",
    "expand [4,1]->[4,6] and with -1, broadcast_to [6]->[3,4,6] (prints pd_op.expand)",
)
def _expand(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 1)))
    r = b.data("r", b.uniform((6,)))
    return [
        paddle.expand(x, [4, 6]),
        paddle.expand(x, [2, -1, 3]),
        paddle.broadcast_to(r, [3, 4, 6]),
    ]


@program_case(
    "concat_stack",
    "concat of 3 inputs on axis 0 and 1, stack on a new middle axis (builtin.combine)",
)
def _concat_stack(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3)))
    y = b.data("y", b.uniform((2, 3)))
    z = b.data("z", b.uniform((2, 3)))
    return [
        paddle.concat([x, y, z], axis=0),
        paddle.concat([x, y, z], axis=1),
        paddle.stack([x, y, z], axis=1),
    ]


@program_case(
    "split_family",
    "split with sections incl. -1 (pd_op.split), split by count (pd_op.split_with_num), builtin.split",
)
def _split(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    a0, a1, a2 = paddle.split(x, [1, -1, 2], axis=1)
    c0, c1, c2 = paddle.split(x, 3, axis=1)
    d0, d1 = paddle.split(x, 2, axis=0)
    return [a0, a1, a2, c0, c2, d1]


@program_case(
    "slice_family",
    "slice with negative starts, integer index (decrease_axis), paddle.slice with axes",
)
def _slice(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    y = b.data("y", b.uniform((2, 3, 5)))
    return [x[1:3, -4:], x[2], x[:, -1], paddle.slice(y, axes=[0, 2], starts=[1, 1], ends=[2, 100])]


@program_case(
    "strided_slice_negative", "strided_slice with stride 2, -1 and -2, and x[:, ::2] indexing"
)
def _strided_slice(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    return [
        paddle.strided_slice(x, axes=[1], starts=[0], ends=[6], strides=[2]),
        paddle.strided_slice(x, axes=[0, 1], starts=[3, 5], ends=[-5, 0], strides=[-1, -2]),
        x[:, ::2],
    ]


@program_case(
    "gather_axis", "gather with an int32 index tensor on axis 1 and an int64 index on axis 0"
)
def _gather(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    i = b.data("i", np.array([5, 0, 2, 2], dtype="int32"))
    j = b.data("j", np.array([3, 1], dtype="int64"))
    return [paddle.gather(x, i, axis=1), paddle.gather(x, j)]


@program_case("tile_repeat", "tile [2,3] with repeat_times [2,1,3] (rank grows) and [2,2]")
def _tile(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3)))
    return [paddle.tile(x, [2, 1, 3]), paddle.tile(x, [2, 2])]


# ----- matmul family -----------------------------------------------------------


@program_case("matmul_transpose_flags", "matmul with transpose_x, transpose_y and both")
def _matmul_flags(b: Builder) -> list[Value]:
    a = b.data("a", b.uniform((6, 4)))
    c = b.data("c", b.uniform((5, 6)))
    return [
        paddle.matmul(a, c, transpose_x=True, transpose_y=True),
        paddle.matmul(a, a, transpose_x=True),
        paddle.matmul(c, c, transpose_y=True),
    ]


@program_case(
    "matmul_batch_broadcast", "matmul [2,1,3,4]@[5,4,6] -> [2,5,3,6] and matrix@vector [4,6]@[6]"
)
def _matmul_batch(b: Builder) -> list[Value]:
    a = b.data("a", b.uniform((2, 1, 3, 4)))
    c = b.data("c", b.uniform((5, 4, 6)))
    m = b.data("m", b.uniform((4, 6)))
    v = b.data("v", b.uniform((6,)))
    return [paddle.matmul(a, c), paddle.matmul(m, v)]


@program_case("bmm_batched", "bmm [3,4,5]@[3,5,2]")
def _bmm(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((3, 4, 5)))
    y = b.data("y", b.uniform((3, 5, 2)))
    return [paddle.bmm(x, y)]


# ----- layers with parameters ------------------------------------------------------


@program_case(
    "linear_params", "paddle.nn.Linear(6,3) + relu: builtin.parameter for weight and bias"
)
def _linear(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    return [F.relu(paddle.nn.Linear(6, 3)(x))]


@program_case(
    "embedding_lookup", "paddle.nn.Embedding(10,4) on int64 ids, plus one with padding_idx=0"
)
def _embedding(b: Builder) -> list[Value]:
    ids = b.data("ids", np.array([[1, 0, 9], [4, 4, 7]], dtype="int64"))
    init = paddle.nn.initializer.Normal(0.0, 1.0)
    emb = paddle.nn.Embedding(10, 4, weight_attr=paddle.ParamAttr(initializer=init))
    pad = paddle.nn.Embedding(10, 4, padding_idx=0, weight_attr=paddle.ParamAttr(initializer=init))
    return [emb(ids), pad(ids)]


@program_case("mlp_static", "Linear-gelu-Linear-softmax chain with parameters")
def _mlp_static(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    h = F.gelu(paddle.nn.Linear(6, 8)(x))
    return [F.softmax(paddle.nn.Linear(8, 3)(h))]


@program_case(
    "dropout_inference",
    "dropout with training=False in upscale_in_train and downscale_in_infer modes",
)
def _dropout(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    return [
        F.dropout(x, p=0.5, training=False),
        F.dropout(x, p=0.25, training=False, mode="downscale_in_infer"),
    ]


# ----- constants, dtypes, shapes -------------------------------------------------


@program_case(
    "full_family",
    "full for int32/int64/float32/float64/bool, zeros_like/ones_like/full_like (pd_op.full_like)",
)
def _full(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((2, 3)))
    i = b.data("i", b.ints((2, 3), -5, 5))
    return [
        paddle.full([2, 3], 7, "int32"),
        paddle.full([2], -3, "int64"),
        paddle.full([2, 3], 0.1, "float32"),
        paddle.full([3], 1.0 / 3.0, "float64"),
        paddle.full([2], True, "bool"),
        paddle.zeros_like(x),
        paddle.ones_like(i),
        paddle.full_like(x, 2.5),
        paddle.full_like(i, -4, dtype="int64"),
        x + paddle.full([3], 1e-7, "float32"),
    ]


@program_case("zero_d_and_one_elem", "0-D data and 1-element tensors broadcasting against [4,6]")
def _zero_d(b: Builder) -> list[Value]:
    s = b.data("s", np.array(1.5, dtype="float32"))
    v = b.data("v", np.array([-2.0], dtype="float32"))
    x = b.data("x", b.uniform((4, 6)))
    return [x + s, x * v, s * 2.0, v + s, paddle.exp(s)]


@program_case(
    "dynamic_batch", "data with a -1 batch dim ([-1,6]) fed with 3 rows, then (feeds_2) 33 rows"
)
def _dynamic(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((3, 6)), shape=[-1, 6])
    w = b.data("w", b.uniform((6,)))
    b.alt("x", b.uniform((33, 6)))
    y = F.relu(x) * w
    return [y, paddle.sum(y, axis=1), paddle.mean(x)]


@program_case(
    "float16_ops",
    "cast to float16, then CPU-supported fp16 ops (scale, exp, transpose, concat, sum), cast back",
)
def _float16(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6), -1.0, 1.0))
    h = paddle.cast(x, "float16")
    t = paddle.transpose(paddle.exp(paddle.scale(h, scale=0.5)), [1, 0])
    c = paddle.concat([t, t], axis=1)
    return [
        paddle.cast(c, "float32"),
        paddle.cast(paddle.sum(h, axis=1), "float32"),
        paddle.cast(h, "float32"),
    ]


@program_case("bfloat16_ops", "bfloat16 cast round trip, plus add/multiply/relu in bfloat16")
def _bfloat16(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    y = b.data("y", b.uniform((4, 6)))
    hx, hy = paddle.cast(x, "bfloat16"), paddle.cast(y, "bfloat16")
    return [paddle.cast(hx, "float32"), paddle.cast(F.relu(hx * hy + hx), "float32")]


@program_case(
    "int64_ops", "int64 data: add/subtract/multiply, floor_divide, max reduction, cast to float32"
)
def _int64(b: Builder) -> list[Value]:
    x = b.data("x", b.ints((4, 6), -1000, 1000, "int64"))
    y = b.data("y", b.nonzero_ints((4, 6), 9, "int64"))
    return [
        x + y,
        x - y,
        x * y,
        paddle.floor_divide(x, y),
        paddle.max(x, axis=1),
        paddle.cast(x, "float32"),
    ]


@program_case(
    "fetch_explicit", "an explicit pd_op.fetch op (paddle._C_ops.fetch) in the printed program"
)
def _fetch(b: Builder) -> list[Value]:
    x = b.data("x", b.uniform((4, 6)))
    y = paddle.tanh(x)
    paddle._C_ops.fetch(y, "fetch_name_0", 0)
    return [y]


@program_case(
    "attention_block",
    "2-head self attention by hand: matmul, reshape, transpose, matmul(transpose_y), scale, "
    "softmax, matmul, transpose, reshape, matmul, add (10+ ops chained)",
)
def _attention(b: Builder) -> list[Value]:
    batch, seq, dim, heads = 2, 5, 8, 2
    x = b.data("x", b.uniform((batch, seq, dim), -1.0, 1.0))
    weights = [b.data(n, b.uniform((dim, dim), -0.5, 0.5)) for n in ("wq", "wk", "wv", "wo")]

    def heads_first(t: Value) -> Value:
        return paddle.transpose(paddle.reshape(t, [batch, seq, heads, dim // heads]), [0, 2, 1, 3])

    q, k, v = (heads_first(paddle.matmul(x, w)) for w in weights[:3])
    scores = paddle.scale(paddle.matmul(q, k, transpose_y=True), scale=(dim // heads) ** -0.5)
    ctx = paddle.matmul(F.softmax(scores, axis=-1), v)
    merged = paddle.reshape(paddle.transpose(ctx, [0, 2, 1, 3]), [batch, seq, dim])
    return [paddle.matmul(merged, weights[3]) + x]


# ----- rms_norm: no CPU kernel, built through the program translator ---------------


def _legacy_var(block: Any, name: str, shape: list[int], persistable: bool = False) -> None:
    var = block.var(name.encode())
    var.set_type(core.VarDesc.VarType.DENSE_TENSOR)
    var.set_shape(shape)
    var.set_dtype(core.VarDesc.VarType.FP32)
    var.set_persistable(persistable)


def _rms_norm_reference(x: np.ndarray, w: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """What Paddle's (GPU-only) rms_norm kernel computes: y = x*rsqrt(mean(x^2)+eps)*w."""
    x64 = x.astype("float64")
    invvar = 1.0 / np.sqrt(np.mean(x64 * x64, axis=-1) + eps)
    y = x64 * invvar[..., None] * w.astype("float64")
    return y.astype("float32"), invvar.astype("float32")


def build_rms_norm_fixture() -> ProgramFixture:
    """pd_op.rms_norm, printed by Paddle, with numpy-reference outputs.

    The CPU build of Paddle 3.3.1 registers no rms_norm kernel, and the static
    Python API refuses to build the op without one ("expected_dtype:" empty).
    The legacy-ProgramDesc translator builds the op without that check, so the
    op is written into a ProgramDesc and translated to PIR; the printed text is
    therefore genuine Paddle output (note the translator adds
    ``persistable:[...]`` attributes). Outputs come from a float64 numpy
    reference since Paddle cannot execute the op on CPU.
    """
    name, eps = "rms_norm", 1e-5
    rng = np.random.default_rng(case_seed(name))
    x = rng.uniform(-2.0, 2.0, size=(4, 6)).astype("float32")
    w = rng.uniform(0.5, 1.5, size=(6,)).astype("float32")
    desc = core.ProgramDesc()
    block = desc.block(0)
    _legacy_var(block, "x", [4, 6])
    _legacy_var(block, "rms_norm_0.w_0", [6], persistable=True)
    _legacy_var(block, "y", [4, 6])
    _legacy_var(block, "invvar", [4])
    op = block.append_op()
    op.set_type("rms_norm")
    op.set_input("x", ["x"])
    op.set_input("scale", ["rms_norm_0.w_0"])
    op.set_output("y", ["y"])
    op.set_output("invvar", ["invvar"])
    op._set_int64s_attr("normalized_shape", [6])
    op._set_float64_attr("epsilon", eps)
    program = core.pir.translate_to_pir(desc)
    text = str(program)
    rms_op = next(o for o in program.global_block().ops if o.name() == "pd_op.rms_norm")
    y, invvar = _rms_norm_reference(x, w, eps)
    outputs = {}
    for result, array in zip(rms_op.results(), (y, invvar), strict=True):
        vid = value_id(program, result)
        check_value_id(text, vid, "pd_op.rms_norm")
        outputs[vid] = array
    return ProgramFixture(
        text=text,
        feeds={"x": x},
        params={"rms_norm_0.w_0": w},
        outputs=outputs,
        ops=op_names(program),
        description="pd_op.rms_norm (normalized_shape=[6], epsilon=1e-5) with a parameter scale; "
        "outputs are (y, invvar); built via the ProgramDesc->PIR translator because the CPU "
        "build has no rms_norm kernel; outputs from a numpy reference",
        extra_meta={
            "outputs_source": "numpy reference (no CPU kernel for pd_op.rms_norm in Paddle 3.3.1)"
        },
    )


# ----- issue 15: per-op fixtures for model blocks (tools/gen_model_blocks.py) ------

for _name, _description, _build in OP_CASES:
    program_case(_name, _description)(_build)


# --------------------------------------------------------------------------
# Saved models (paddle.jit.save)
# --------------------------------------------------------------------------


class MLP(paddle.nn.Layer):
    """Linear-ReLU-Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = paddle.nn.Linear(6, 8)
        self.fc2 = paddle.nn.Linear(8, 3)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


class LinearLnGelu(paddle.nn.Layer):
    """Linear + LayerNorm + GELU."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = paddle.nn.Linear(8, 12)
        init = paddle.nn.initializer.Normal(0.0, 0.5)
        self.ln = paddle.nn.LayerNorm(
            12,
            weight_attr=paddle.ParamAttr(initializer=init),
            bias_attr=paddle.ParamAttr(initializer=init),
        )

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return F.gelu(self.ln(self.fc(x)))


@dataclass(frozen=True)
class ModelCase:
    name: str
    description: str
    make_layer: Callable[[], paddle.nn.Layer]
    input_specs: list[tuple[str, list[int], str]]
    feed_shapes: list[tuple[int, ...]]
    feed_shapes_2: list[tuple[int, ...]] | None = None
    """Second shape set for models with -1 dims (feeds_2.npz / outputs_2.npz)."""
    fills: list[str] | None = None
    """Per input, how to fill it (gen_model_blocks.make_feed); default uniform [-1, 1]."""


MODEL_CASES: list[ModelCase] = [
    ModelCase(
        "mlp",
        "Linear(6,8)-ReLU-Linear(8,3), dynamic batch dim",
        MLP,
        [("x", [-1, 6], "float32")],
        [(4, 6)],
        [(1, 6)],
    ),
    ModelCase(
        "linear_ln_gelu",
        "Linear(8,12) + LayerNorm(12) + GELU on a 3-D input",
        LinearLnGelu,
        [("x", [3, 4, 8], "float32")],
        [(3, 4, 8)],
    ),
    ModelCase(
        "transformer_encoder",
        "paddle.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0), eval",
        lambda: paddle.nn.TransformerEncoderLayer(
            d_model=16, nhead=2, dim_feedforward=32, dropout=0.0
        ),
        [("src", [2, 5, 16], "float32")],
        [(2, 5, 16)],
    ),
]

MODEL_CASES += [
    ModelCase(
        block.name,
        block.description,
        block.make_layer,
        [(i.name, i.spec, i.dtype) for i in block.inputs],
        [i.shape for i in block.inputs],
        [i.shape_2 or i.shape for i in block.inputs]
        if any(i.shape_2 for i in block.inputs)
        else None,
        [i.fill for i in block.inputs],
    )
    for block in BLOCK_MODELS
]

# VarType enum values in TensorDesc.data_type (framework.proto) -> numpy dtype.
_PROTO_DTYPES = {
    0: "bool",
    1: "int16",
    2: "int32",
    3: "int64",
    4: "float16",
    5: "float32",
    6: "float64",
}


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _parse_tensor_desc(buf: bytes) -> tuple[str, list[int]]:
    """Decode ``TensorDesc {data_type = 1; repeated int64 dims = 2}``."""
    pos, dtype, dims = 0, None, []
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field_no, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(buf, pos)
            if field_no == 1:
                dtype = _PROTO_DTYPES[value]
            else:
                dims.append(value - (1 << 64) if value >= 1 << 63 else value)
        elif wire == 2:  # packed dims
            length, pos = _read_varint(buf, pos)
            end = pos + length
            while pos < end:
                value, pos = _read_varint(buf, pos)
                dims.append(value - (1 << 64) if value >= 1 << 63 else value)
        else:
            raise ValueError(f"unexpected wire type {wire} in TensorDesc")
    if dtype is None:
        raise ValueError("TensorDesc without data_type")
    return dtype, dims


def read_pdiparams(path: Path) -> list[np.ndarray]:
    """Parse a save_combine file; independent check of the format cinn_py reads.

    Per tensor: u32 version, u64 lod_level (+ lod data), u32 tensor version,
    i32 desc size, TensorDesc protobuf, raw little-endian data.
    """
    buf, pos, tensors = path.read_bytes(), 0, []
    while pos < len(buf):
        (_version, lod_level) = struct.unpack_from("<IQ", buf, pos)
        pos += 12
        for _ in range(lod_level):
            (size,) = struct.unpack_from("<Q", buf, pos)
            pos += 8 + size
        (_tversion, desc_size) = struct.unpack_from("<Ii", buf, pos)
        pos += 8
        dtype, dims = _parse_tensor_desc(buf[pos : pos + desc_size])
        pos += desc_size
        nbytes = int(np.prod(dims, dtype=np.int64)) * np.dtype(dtype).itemsize
        tensors.append(
            np.frombuffer(buf, dtype=dtype, count=nbytes // np.dtype(dtype).itemsize, offset=pos)
            .reshape(dims)
            .copy()
        )
        pos += nbytes
    return tensors


def _model_feeds(
    case: ModelCase, rng: np.random.Generator, shapes: list[tuple[int, ...]] | None = None
) -> dict[str, np.ndarray]:
    fills = case.fills or ["uniform"] * len(case.input_specs)
    return {
        spec[0]: make_feed(
            gen_model_blocks.InputSpec(spec[0], spec[1], spec[2], shape, None, fill), shape, rng
        )
        for spec, shape, fill in zip(
            case.input_specs, shapes or case.feed_shapes, fills, strict=True
        )
    }


def _as_list(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _check_close(name: str, expected: list[np.ndarray], actual: list[np.ndarray]) -> None:
    if len(expected) != len(actual):
        raise AssertionError(f"{name}: {len(expected)} vs {len(actual)} outputs")
    for want, got in zip(expected, actual, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)


RunSet = tuple[dict[str, np.ndarray], list[np.ndarray]]
"""One shape set: the feeds and the dygraph layer's outputs for them."""


def save_dygraph_model(
    case: ModelCase, out_dir: Path
) -> tuple[list[RunSet], dict[str, np.ndarray]]:
    """jit.save the layer; return (feeds, eval outputs) per shape set and named parameters."""
    dynamic = any(-1 in spec[1] for spec in case.input_specs)
    if dynamic != (case.feed_shapes_2 is not None):
        raise AssertionError(f"{case.name}: a second shape set exactly when a spec has -1")
    for spec, first, second in zip(
        case.input_specs, case.feed_shapes, case.feed_shapes_2 or case.feed_shapes, strict=True
    ):
        if -1 in spec[1]:
            check_dims_differ(f"{case.name} {spec[0]}", spec[1], first, second)
    seed = case_seed(case.name)
    paddle.disable_static()
    with fresh_names():
        paddle.seed(seed)
        layer = case.make_layer()
        layer.eval()
        rng = np.random.default_rng(seed)
        runs: list[RunSet] = []
        for shapes in [case.feed_shapes] + ([case.feed_shapes_2] if case.feed_shapes_2 else []):
            feeds = _model_feeds(case, rng, shapes)
            outs = [
                o.numpy() for o in _as_list(layer(*[paddle.to_tensor(v) for v in feeds.values()]))
            ]
            runs.append((feeds, outs))
        specs = [
            paddle.static.InputSpec(shape, dtype, name=n) for n, shape, dtype in case.input_specs
        ]
        paddle.jit.save(layer, str(out_dir / "model"), input_spec=specs)
        params = {p.name: p.numpy() for p in layer.parameters()}
    return runs, params


def load_and_check(
    case: ModelCase, out_dir: Path, runs: list[RunSet]
) -> tuple[str, str, list[str], list[str]]:
    """Cross-check jit.load and load_inference_model on every shape set; return both
    program texts."""
    prefix = str(out_dir / "model")
    paddle.disable_static()
    loaded = paddle.jit.load(prefix)
    loaded.eval()
    # Print before calling the layer: running it appends a second
    # builtin.shadow_output to the program held by the loaded layer.
    jit_text = str(loaded.program())
    for feeds, outs in runs:
        jit_outs = [
            o.numpy() for o in _as_list(loaded(*[paddle.to_tensor(v) for v in feeds.values()]))
        ]
        _check_close(f"{case.name} jit.load", outs, jit_outs)
    paddle.enable_static()
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe = paddle.static.Executor(paddle.CPUPlace())
        program, feed_names, fetch_values = paddle.static.load_inference_model(prefix, exe)
        text = str(program)
        for feeds, outs in runs:
            inf_outs = exe.run(program, feed=feeds, fetch_list=fetch_values)
            _check_close(
                f"{case.name} load_inference_model", outs, [np.asarray(o) for o in inf_outs]
            )
    return text, jit_text, list(feed_names), op_names(program)


def generate_model(case: ModelCase, out_dir: Path) -> None:
    """Write one saved-model fixture and verify it three ways."""
    fresh_dir(out_dir)
    runs, params = save_dygraph_model(case, out_dir)
    feeds, outs = runs[0]
    written = sorted(p.name for p in out_dir.iterdir())
    if written != ["model.json", "model.pdiparams"]:
        raise AssertionError(f"{case.name}: jit.save wrote {written}")
    stored = read_pdiparams(out_dir / "model.pdiparams")
    order = sorted(params)
    for name, array in zip(order, stored, strict=True):
        np.testing.assert_array_equal(array, params[name], err_msg=f"pdiparams {name}")
    text, jit_text, feed_names, ops = load_and_check(case, out_dir, runs)
    (out_dir / "program.pir").write_text(text)
    (out_dir / "program_jit_load.pir").write_text(jit_text)
    save_npz(out_dir / "feeds.npz", feeds)
    save_npz(out_dir / "outputs.npz", {f"out{i}": o for i, o in enumerate(outs)})
    save_npz(out_dir / "params.npz", params)
    second: dict[str, Any] = {}
    if len(runs) > 1:
        feeds_2, outs_2 = runs[1]
        save_npz(out_dir / "feeds_2.npz", feeds_2)
        save_npz(out_dir / "outputs_2.npz", {f"out{i}": o for i, o in enumerate(outs_2)})
        second = {"outputs_2": {f"out{i}": shape_dtype(o) for i, o in enumerate(outs_2)}}
    inputs: dict[str, Any] = {}
    for n, s, d in case.input_specs:
        inputs[n] = {"spec_shape": s, "dtype": d, "feed_shape": list(feeds[n].shape)}
        if len(runs) > 1:
            inputs[n]["feed_shape_2"] = list(runs[1][0][n].shape)
    meta = {
        "description": case.description,
        "inputs": inputs,
        "input_names": feed_names,
        "outputs": {f"out{i}": shape_dtype(o) for i, o in enumerate(outs)},
        **second,
        "params": {n: shape_dtype(params[n]) for n in order},
        "pdiparams_order": order,
        "ops": ops,
        "program_text": "program.pir",
        "program_text_jit_load": "program_jit_load.pir",
    }
    save_json(out_dir / "meta.json", meta)


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


def all_names() -> list[str]:
    return [c.name for c in PROGRAM_CASES] + ["rms_norm"] + [m.name for m in MODEL_CASES]


def generate_programs(out: Path, only: set[str] | None) -> set[str]:
    """Write program fixtures; return the union of their op names."""
    seen: set[str] = set()
    for case in PROGRAM_CASES:
        if only is None or case.name in only:
            fixture = run_program_case(case)
            write_program_fixture(out / "programs" / case.name, fixture)
            seen.update(fixture.ops)
            print(f"programs/{case.name}: {', '.join(fixture.ops)}")
    if only is None or "rms_norm" in only:
        fixture = build_rms_norm_fixture()
        write_program_fixture(out / "programs" / "rms_norm", fixture)
        seen.update(fixture.ops)
        print(f"programs/rms_norm: {', '.join(fixture.ops)}")
    return seen


def generate_models(out: Path, only: set[str] | None) -> None:
    for case in MODEL_CASES:
        if only is None or case.name in only:
            generate_model(case, out / "models" / case.name)
            print(f"models/{case.name}: written and cross-checked")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture root directory")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=all_names(),
        metavar="NAME",
        help="regenerate only these fixtures (one or more names)",
    )
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    only = set(args.only) if args.only else None
    seen = generate_programs(out, only)
    generate_models(out, only)
    if args.only is None:
        missing = sorted(set(REQUIRED_OPS) - seen)
        if missing:
            raise SystemExit(f"required ops not covered: {missing}")
        print(f"all {len(REQUIRED_OPS)} required ops covered by {len(PROGRAM_CASES) + 1} programs")


if __name__ == "__main__":
    main()
