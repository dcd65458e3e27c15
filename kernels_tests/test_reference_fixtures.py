"""The reference executor against real Paddle 3.3.1, on every committed fixture.

Each program fixture is parsed from Paddle's printed text and run with its feeds and
parameters, as printed and again after the fold pass; every value Paddle fetched
(outputs.npz, keyed by printed id) must match.
Each saved model is loaded from model.json + model.pdiparams (and its printed
program.pir, run with params.npz) and its outputs `out0`, `out1`, ... must match.

Tolerances: float32 and float64 within rtol 1e-4 / atol 1e-5 (the printed programs
carry constants to 6 significant digits, so float64 can do no better); float16 and
bfloat16 within about one unit in their last place; integers and bools exactly.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from cinn_py.pir.dtypes import DataType, bfloat16_to_float32
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.parser import parse_file
from cinn_py.pir.passes.pass_manager import PassManager
from cinn_py.pir.printer import value_names
from cinn_py.pir.types import DenseTensorType
from cinn_py.reference import run_reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixture_ops import model_params, program_params  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
PROGRAMS = sorted(p.parent.name for p in (FIXTURES / "programs").glob("*/program.pir"))
MODELS = sorted(p.parent.name for p in (FIXTURES / "models").glob("*/model.json"))
PROGRAM_PARAMS = program_params(PROGRAMS, "reference")
MODEL_PARAMS = model_params(MODELS, "reference")
"""The same names, a fixture whose program uses an op cinn_py does not know yet marked
xfail(strict) with the ops it needs (fixture_ops.py)."""
SECOND_SHAPES_PROGRAMS = program_params(
    sorted(p.parent.name for p in (FIXTURES / "programs").glob("*/outputs_2.npz")), "reference"
)
SECOND_SHAPES_MODELS = model_params(
    sorted(p.parent.name for p in (FIXTURES / "models").glob("*/outputs_2.npz")), "reference"
)
"""Fixtures with -1 dims that Paddle also ran on a second shape set (feeds_2.npz)."""

DYNAMIC_DIM = re.compile(r"[<x]-1x")
"""A -1 dim in a printed tensor type (`tensor<-1x6xf32>`, `tensor<2x-1xf32>`), as in
tools/gen_paddle_fixtures.py."""


def _declared_dynamic(folder: Path) -> dict[str, list[int]]:
    """The inputs declared with -1 dims: a model's input specs, a program's
    `declared_feed_shapes`."""
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    if "inputs" in meta:
        specs = {name: spec["spec_shape"] for name, spec in meta["inputs"].items()}
    else:
        specs = meta.get("declared_feed_shapes", {})
    return {name: shape for name, shape in specs.items() if -1 in shape}


def _has_dynamic_dims(folder: Path) -> bool:
    """-1 in an input spec or in any printed type (e.g. arange's data-dependent length)."""
    text = (folder / "program.pir").read_text(encoding="utf-8")
    return bool(_declared_dynamic(folder)) or bool(DYNAMIC_DIM.search(text))


DYNAMIC_FIXTURES = sorted(
    f"{kind}/{p.parent.name}"
    for kind in ("programs", "models")
    for p in (FIXTURES / kind).glob("*/program.pir")
    if _has_dynamic_dims(p.parent)
)
"""Every program or model fixture with a -1 dim: each must have a second shape set."""

TOLERANCES = {
    DataType.FLOAT64: (1e-4, 1e-5),
    DataType.FLOAT32: (1e-4, 1e-5),
    DataType.FLOAT16: (1e-3, 1e-3),
    DataType.BFLOAT16: (8e-3, 8e-3),
}
"""(rtol, atol) per result dtype; the rest compare exactly."""

DECLARED_SHAPE_BUGS: dict[str, str] = json.loads(
    (FIXTURES / "declared_shape_bugs.json").read_text(encoding="utf-8")
)
"""Fixtures whose printed types Paddle got wrong: run without the declared-shape check."""


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        return {}
    with np.load(path) as data:
        return dict(data)


def assert_matches(got: np.ndarray, want: np.ndarray, type_: DenseTensorType, what: str) -> None:
    dtype = type_.data_type
    if dtype is DataType.BFLOAT16:
        got, want = bfloat16_to_float32(got), bfloat16_to_float32(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != Paddle's {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != Paddle's {want.dtype}"
    if dtype not in TOLERANCES:
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    rtol, atol = TOLERANCES[dtype]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("folded", [False, True], ids=["as-printed", "folded"])
@pytest.mark.parametrize("name", PROGRAM_PARAMS)
def test_program_fixture(name: str, folded: bool) -> None:
    """As Paddle printed it, and after the default passes: constant shape / axis / factor
    operands folded into attributes (kernels read them from attributes, operands null),
    composites decomposed, constants folded, common subexpressions merged. A fetched
    value a pass replaced is read from its replacement (the pinned outputs follow)."""
    _check_program(name, folded, "")


def _check_program(name: str, folded: bool, suffix: str) -> None:
    """Run programs/<name> on feeds{suffix}.npz and compare with outputs{suffix}.npz."""
    folder = FIXTURES / "programs" / name
    program = parse_file(folder / "program.pir")
    expected = _load_npz(folder / f"outputs{suffix}.npz")
    names = value_names(program)
    keys = sorted(expected, key=lambda k: int(k[1:]))
    fetch = [names[key] for key in keys]
    if folded:
        program.pinned_outputs = list(fetch)
        PassManager(verify=False).run(program)
    got = run_reference(
        program,
        _load_npz(folder / f"feeds{suffix}.npz"),
        _load_npz(folder / "params.npz"),
        program.pinned_outputs if folded else fetch,
        check_shapes=name not in DECLARED_SHAPE_BUGS,
    )
    for key, value, array in zip(keys, fetch, got, strict=True):
        assert_matches(array, expected[key], value.type, f"{name} {key} ({value.owner.name})")


@pytest.mark.parametrize("folded", [False, True], ids=["as-printed", "folded"])
@pytest.mark.parametrize("name", SECOND_SHAPES_PROGRAMS)
def test_program_fixture_second_shapes(name: str, folded: bool) -> None:
    """The same program on the second feed set (other sizes for its -1 dims)."""
    _check_program(name, folded, "_2")


def _check_model_outputs(
    name: str, program, params: dict[str, np.ndarray] | None, suffix: str = ""
) -> None:
    folder = FIXTURES / "models" / name
    expected = _load_npz(folder / f"outputs{suffix}.npz")
    outputs = program.outputs()
    assert len(outputs) == len(expected), (
        f"{name}: {len(outputs)} outputs, Paddle has {len(expected)}"
    )
    got = run_reference(program, _load_npz(folder / f"feeds{suffix}.npz"), params)
    for i, (value, array) in enumerate(zip(outputs, got, strict=True)):
        assert_matches(array, expected[f"out{i}"], value.type, f"{name} out{i}")


@pytest.mark.parametrize("name", MODEL_PARAMS)
def test_saved_model_fixture(name: str) -> None:
    """model.json + model.pdiparams, parameters as the loader read them."""
    _check_model_outputs(name, load_model(FIXTURES / "models" / name), None)


@pytest.mark.parametrize("name", MODEL_PARAMS)
def test_saved_model_printed_program(name: str) -> None:
    """The same model as `load_inference_model` prints it, with params.npz."""
    folder = FIXTURES / "models" / name
    program = parse_file(folder / "program.pir")
    _check_model_outputs(name, program, _load_npz(folder / "params.npz"))


@pytest.mark.parametrize("printed", [False, True], ids=["model-json", "printed"])
@pytest.mark.parametrize("name", SECOND_SHAPES_MODELS)
def test_saved_model_second_shapes(name: str, printed: bool) -> None:
    """A model with -1 dims on its second feed set (feeds_2.npz / outputs_2.npz)."""
    folder = FIXTURES / "models" / name
    if printed:
        program, params = parse_file(folder / "program.pir"), _load_npz(folder / "params.npz")
    else:
        program, params = load_model(folder), None
    _check_model_outputs(name, program, params, "_2")


@pytest.mark.parametrize("fixture", DYNAMIC_FIXTURES)
def test_every_dynamic_fixture_has_a_second_shape_set(fixture: str) -> None:
    """Issue 18: a fixture with -1 dims runs on two shape sets. feeds_2 / outputs_2 exist
    (so the second-shape tests here and in test_compiled_fixtures pick it up), hold the
    same keys as the first set, take another size in every declared -1 dim, and give at
    least one output another shape."""
    folder = FIXTURES / fixture
    assert (folder / "feeds_2.npz").exists() and (folder / "outputs_2.npz").exists(), (
        f"{fixture} has -1 dims but no second shape set: add one in tools/gen_paddle_fixtures.py"
    )
    feeds, feeds_2 = _load_npz(folder / "feeds.npz"), _load_npz(folder / "feeds_2.npz")
    outputs, outputs_2 = _load_npz(folder / "outputs.npz"), _load_npz(folder / "outputs_2.npz")
    assert sorted(feeds_2) == sorted(feeds) and sorted(outputs_2) == sorted(outputs)
    for name, declared in _declared_dynamic(folder).items():
        first, second = feeds[name].shape, feeds_2[name].shape
        assert len(first) == len(second) == len(declared), (name, first, second)
        for axis, dim in enumerate(declared):
            assert dim != -1 or first[axis] != second[axis], (
                f"{fixture} {name}: dim {axis} is {first[axis]} in both shape sets"
            )
    assert any(outputs[k].shape != outputs_2[k].shape for k in outputs), (
        f"{fixture}: the second shape set gives every output its first shape"
    )
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    assert sorted(meta["outputs_2"]) == sorted(outputs)


def test_second_shape_sets_are_the_dynamic_fixtures() -> None:
    """The list above is computed, not empty, and a second set exists only where -1 does."""
    second = sorted(
        f"{kind}/{p.parent.name}"
        for kind in ("programs", "models")
        for p in (FIXTURES / kind).glob("*/outputs_2.npz")
    )
    assert {"programs/dynamic_batch", "programs/op_arange", "models/mlp"} <= set(DYNAMIC_FIXTURES)
    assert second == DYNAMIC_FIXTURES


def test_the_fixtures_are_there() -> None:
    """A moved fixture folder must fail here, not silently parametrize nothing."""
    assert len(PROGRAMS) >= 40 and len(MODELS) >= 3, (PROGRAMS, MODELS)
