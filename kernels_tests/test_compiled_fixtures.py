"""Every fixture program and saved model, compiled for cuda-emu, against Paddle's outputs.

The same programs the reference executor is checked on (`test_reference_fixtures.py`)
go through the whole compiler: passes, grouping, op lowering, auto-schedule, CUDA C,
g++ against the emulation header, and the runtime program. Every value Paddle fetched
is pinned as an output, so intermediate values are checked too. Tolerances are
`cinn_py.tolerances`' (the kernels compute float16 / bfloat16 ops in float32 and round
once per op, as the reference does; transcendental functions come from the C library
here and from CUDA's on a GPU).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.parser import parse_file
from cinn_py.pir.printer import value_names
from cinn_py.tolerances import compare

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixture_ops import model_params, program_params  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
PROGRAMS = program_params(
    sorted(p.parent.name for p in (FIXTURES / "programs").glob("*/program.pir")), "compiled"
)
MODELS = model_params(
    sorted(p.parent.name for p in (FIXTURES / "models").glob("*/model.json")), "compiled"
)
"""Every fixture; one whose program uses an op cinn_py does not know yet is an
xfail(strict) naming the ops it needs (fixture_ops.py)."""
SECOND_SHAPES_PROGRAMS = program_params(
    sorted(p.parent.name for p in (FIXTURES / "programs").glob("*/outputs_2.npz")), "compiled"
)
SECOND_SHAPES_MODELS = model_params(
    sorted(p.parent.name for p in (FIXTURES / "models").glob("*/outputs_2.npz")), "compiled"
)
"""Fixtures with -1 dims that Paddle also ran on a second shape set (feeds_2.npz)."""


def load_npz(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        return {}
    with np.load(path) as data:
        return dict(data)


PRINTED_FLOAT64 = (1e-4, 1e-5)
"""Printed programs carry constants to 6 significant digits (Paddle's `%g`), so a float64
result can agree with Paddle's no better than that (as in test_reference_fixtures)."""


def assert_close(got, want, value, what: str, *, printed: bool = False) -> None:
    dtype = value.type.data_type.value
    override = PRINTED_FLOAT64 if printed and dtype == "float64" else None
    result = compare(np.asarray(got), want, dtype if dtype == "bfloat16" else None, override)
    assert result.ok, f"{what}: {result}"


TARGETS = [pytest.param("cuda-emu"), pytest.param("cuda", marks=pytest.mark.gpu)]
"""The same checks on the GPU under the `gpu` marker (skipped where there is none)."""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_fixture_compiled(name: str, target: str) -> None:
    _check_program(name, target, "")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", SECOND_SHAPES_PROGRAMS)
def test_program_fixture_compiled_second_shapes(name: str, target: str) -> None:
    """The same program on its second feed set (other sizes for the -1 dims)."""
    _check_program(name, target, "_2")


@pytest.mark.parametrize("name", SECOND_SHAPES_PROGRAMS)
def test_program_fixture_one_executable_both_shapes(name: str) -> None:
    """One compiled executable runs both shape sets, in turn and back again: its -1 dims
    stay symbolic until each run's feeds give them sizes."""
    _check_program(name, "cuda-emu", "", "_2", "")


def _check_program(name: str, target: str, *suffixes: str) -> None:
    """Compile programs/<name> once and run it on feeds{suffix}.npz for each suffix."""
    folder = FIXTURES / "programs" / name
    program = parse_file(folder / "program.pir")
    names = value_names(program)
    keys = sorted(load_npz(folder / "outputs.npz"), key=lambda k: int(k[1:]))
    program.pinned_outputs = [names[key] for key in keys]
    exe = cinn_py.compile(program, target=target)
    for suffix in suffixes:
        expected = load_npz(folder / f"outputs{suffix}.npz")
        got = exe.run(load_npz(folder / f"feeds{suffix}.npz"), load_npz(folder / "params.npz"))
        # Outputs come back in pinned order (named `out<i>` where the program has fetch ops).
        assert len(got) == len(keys) == len(expected)
        for key, array in zip(keys, got.values(), strict=True):
            what = f"{name}{suffix} {key}"
            assert_close(array, expected[key], names[key], what, printed=True)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", MODELS)
def test_saved_model_compiled(name: str, target: str) -> None:
    _check_model(name, target, "")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", SECOND_SHAPES_MODELS)
def test_saved_model_compiled_second_shapes(name: str, target: str) -> None:
    """A model with -1 dims on its second feed set (feeds_2.npz / outputs_2.npz)."""
    _check_model(name, target, "_2")


@pytest.mark.parametrize("name", SECOND_SHAPES_MODELS)
def test_saved_model_one_executable_both_shapes(name: str) -> None:
    """One compiled executable of a model with -1 dims runs both shape sets, in turn and
    back again."""
    _check_model(name, "cuda-emu", "", "_2", "")


def _check_model(name: str, target: str, *suffixes: str) -> None:
    """Compile models/<name> once and run it on feeds{suffix}.npz for each suffix."""
    folder = FIXTURES / "models" / name
    program = load_model(folder)
    exe = cinn_py.compile(program, target=target)
    for suffix in suffixes:
        expected = load_npz(folder / f"outputs{suffix}.npz")
        got = exe.run(load_npz(folder / f"feeds{suffix}.npz"))
        assert sorted(got) == sorted(expected)
        for i, value in enumerate(program.outputs()):
            assert_close(got[f"out{i}"], expected[f"out{i}"], value, f"{name}{suffix} out{i}")


def test_compiled_fixtures_generate_kernels() -> None:
    """The compiled path really compiles: a fused fixture yields kernels, not only
    library calls."""
    program = parse_file(FIXTURES / "programs" / "broadcast_add" / "program.pir")
    exe = cinn_py.compile(program, target="cuda-emu")
    assert exe.kernels, "no kernel generated"
    assert "__global__" in exe.cuda_source
