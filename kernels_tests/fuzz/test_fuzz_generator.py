"""Tests of the program fuzzer itself: what it generates, and that it can fail.

- Every family's programs verify, print as text that parses back to the same text, and
  run on the reference executor, the parsed program giving the same outputs as the
  built one (cheap: no compiles, so many examples).
- A known-bad compiler (a kernel or a lowering swapped for another) is caught, and
  hypothesis shrinks the failure to a program of two or three ops; a crash or a Python
  exception of the compiler is a failure.
- Ill-conditioned elements and the compiler's documented numerics (layer_norm's one-pass
  variance) get a wider tolerance, and only they; NaN positions and integers are exact.
- A reproducer folder reruns with `cinn-py run program.pir --feeds feeds.npz --check`.
- Failures of open bugs pass only while their switch is on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import signal

import fuzz_check
import numpy as np
import pytest
from fuzz_bugs import KNOWN_BUGS, KNOWN_SIGNATURES, avoided_bugs
from fuzz_case import FuzzCase, InputSpec
from fuzz_check import FuzzFailure, check_case, family_test, write_reproducer
from fuzz_programs import FAMILIES, MAX_ELEMENTS, op_names, programs
from hypothesis import HealthCheck, given, settings

import cinn_py
from cinn_py import cli
from cinn_py.errors import CompileError
from cinn_py.pir import Builder, DataType, Program, verify_program
from cinn_py.pir import op_def as op_registry
from cinn_py.pir.parser import parse_program
from cinn_py.pir.printer import print_program
from cinn_py.pir.types import DenseTensorType

QUICK = settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_programs_verify_round_trip_and_run_on_reference(family: str) -> None:
    @QUICK
    @given(case=programs(family))
    def check(case: FuzzCase) -> None:
        verify_program(case.program)
        parsed = parse_program(case.text)
        assert str(parsed) == case.text
        feeds = case.feeds()
        assert set(feeds) == {op.attr("name") for op in parsed.data_ops()}
        with np.errstate(all="ignore"):  # NaN and inf inputs are meant
            built = cinn_py.compile(case.program, "reference").run(feeds)
            again = cinn_py.compile(parsed, "reference").run(feeds)
        assert built.keys() == again.keys() and built
        for name, array in built.items():
            assert _same(np.asarray(array), np.asarray(again[name])), name
        for op in case.program.block:
            for value in op.results:
                if isinstance(value.type, DenseTensorType):
                    assert np.prod(value.type.dims) <= MAX_ELEMENTS, op.name

    check()


def _program(build) -> tuple[Program, list[InputSpec]]:
    program = Program()
    b = Builder(program)
    inputs: list[InputSpec] = []

    def data(shape: tuple[int, ...], dtype: DataType = DataType.FLOAT32, kind: str = "normal"):
        spec = InputSpec(f"x{len(inputs)}", shape, dtype, kind)
        inputs.append(spec)
        return b.op("pd_op.data", name=spec.name, shape=list(shape), dtype=dtype)

    build(b, data)
    return program, inputs


def _case(build, family: str = "elementwise", seed: int = 1) -> FuzzCase:
    program, inputs = _program(build)
    return FuzzCase(family, program, tuple(inputs), seed)


def _reference_with(kernel_swap: dict[str, str]):
    """A stand-in for the compiled target: the reference executor with some op kernels
    swapped (a wrong "lowering" that costs no compile)."""

    def run(program, feeds, target):
        with contextlib.ExitStack() as stack:
            for name, other in kernel_swap.items():
                kernel = op_registry.lookup_op_def(other).kernel
                stack.enter_context(op_registry.override_op(name, kernel=kernel))
            return cinn_py.compile(program, "reference").run(feeds)

    return run


def _shrunk_failure(test) -> FuzzFailure:
    with pytest.raises(FuzzFailure) as caught:
        test()
    return caught.value


def test_a_wrong_kernel_is_caught_and_shrunk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        fuzz_check, "run_compiled", _reference_with({"pd_op.maximum": "pd_op.minimum"})
    )
    test = family_test("elementwise", "cuda-emu", settings(QUICK, max_examples=200))
    failure = _shrunk_failure(test)
    assert failure.signature.startswith("mismatch:pd_op.maximum"), failure.report
    names = op_names(failure.case)
    assert "pd_op.maximum" in names and len(names) <= 2, failure.report


COMPILE_BUDGET = 12
"""Programs the shrinking test may compile (each ~0.5 s of g++ on a cold cache); past it a
new program's "compiled" outputs are the reference's, which ends shrinking where it got
to (programs compiled already keep their results, so hypothesis' replay agrees)."""


def test_a_wrong_lowering_is_caught_and_shrunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real pipeline: `add` lowered as `subtract`, compiled and run on cuda-emu."""
    subtract = op_registry.lookup_op_def("pd_op.subtract").lowering
    wrong_add = dataclasses.replace(op_registry.lookup_op_def("pd_op.add"), lowering=subtract)
    monkeypatch.setitem(op_registry._REGISTRY, "pd_op.add", wrong_add)
    compiled, results = fuzz_check.run_compiled, {}

    def budgeted(program, feeds, target):
        key = (print_program(program), tuple((k, v.tobytes()) for k, v in sorted(feeds.items())))
        if key not in results:
            if len(results) >= COMPILE_BUDGET:
                return cinn_py.compile(program, "reference").run(feeds)
            results[key] = compiled(program, feeds, target)
        return results[key]

    monkeypatch.setattr(fuzz_check, "run_compiled", budgeted)
    test = family_test("elementwise", "cuda-emu", settings(QUICK, max_examples=20))
    failure = _shrunk_failure(test)
    assert failure.signature.startswith("mismatch:pd_op.add"), failure.report
    names = op_names(failure.case)
    assert "pd_op.add" in names and len(names) <= 3, failure.report


def test_a_crash_in_the_compiled_program_is_a_failure_not_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def crash(program, feeds, target):
        os.kill(os.getpid(), signal.SIGSEGV)

    monkeypatch.setattr(fuzz_check, "run_compiled", crash)
    case = _case(lambda b, data: b.op("pd_op.relu", data((3, 5))))
    with pytest.raises(FuzzFailure) as caught:
        check_case(case, isolate=True)
    assert caught.value.signature == "crash:killed by SIGSEGV"


def test_a_python_exception_of_the_compiler_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(program, feeds, target):
        raise KeyError("oops")

    monkeypatch.setattr(fuzz_check, "run_compiled", broken)
    case = _case(lambda b, data: b.op("pd_op.relu", data((3, 5))))
    for isolate in (False, True):
        with pytest.raises(FuzzFailure) as caught:
            check_case(case, isolate=isolate)
        assert caught.value.signature.startswith("crash:KeyError"), caught.value.report


def test_only_ill_conditioned_elements_get_a_wider_tolerance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """sin(x * 1e6): one ulp more of x * 1e6 (as another rounding order would give) moves
    sin by up to 0.06, far beyond float32's tolerance, and passes, since the reference
    moves more under the nudge; the product itself 1% off fails."""

    def build(b, data):
        x = data((64,))
        big = b.op("pd_op.scale", x, b.op("pd_op.full", shape=[1], value=1e6), bias=0.0)
        b.op("pd_op.fetch", big, name="out0", col=0)
        b.op("pd_op.fetch", b.op("pd_op.sin", big), name="out1", col=1)

    case = _case(build)
    exact = cinn_py.compile(parse_program(case.text), "reference").run(case.feeds())
    one_ulp_more = np.nextafter(exact["out0"], np.float32(np.inf))
    rounded_otherwise = {"out0": one_ulp_more, "out1": np.sin(one_ulp_more)}
    assert not np.allclose(rounded_otherwise["out1"], exact["out1"], rtol=1e-4, atol=1e-5)
    monkeypatch.setattr(fuzz_check, "run_compiled", lambda p, f, t: rounded_otherwise)
    check_case(case)
    one_percent_off = {**exact, "out0": exact["out0"] * np.float32(1.01)}
    monkeypatch.setattr(fuzz_check, "run_compiled", lambda p, f, t: one_percent_off)
    with pytest.raises(FuzzFailure):
        check_case(case)


def test_layer_norm_is_judged_with_its_documented_one_pass_variance(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rows of 300 + N(0, 1): float32's E[x^2] - E[x]^2 (the compiler's layer_norm, as
    Paddle's CUDA kernel) is off by ~1% of the variance, which the two-pass reference is
    not; that passes, a 1% error elsewhere does not."""

    def build(b, data):
        x = b.op(
            "pd_op.scale", data((7, 256)), b.op("pd_op.full", shape=[1], value=1.0), bias=300.0
        )
        out, _, _ = b.op("pd_op.layer_norm", x, None, None, begin_norm_axis=1)
        b.op("pd_op.fetch", out, name="out0", col=0)
        b.op("pd_op.fetch", x, name="out1", col=1)

    case = _case(build, family="norm")
    check_case(case)  # compiled for cuda-emu
    exact = cinn_py.compile(parse_program(case.text), "reference").run(case.feeds())
    one_percent_off = {**exact, "out1": exact["out1"] * np.float32(1.01)}
    monkeypatch.setattr(fuzz_check, "run_compiled", lambda p, f, t: one_percent_off)
    with pytest.raises(FuzzFailure):
        check_case(case)


def test_rms_norm_is_judged_with_its_documented_float32_mean_of_squares() -> None:
    """The oracle's rms_norm variant computes as the compiled kernels do (float32 mean
    of squares, float32 inverse root): its outputs are the float32 computation's, which
    differ from the float64-accumulating reference's in the last place on some rows."""

    def build(b, data):
        x = b.op(
            "pd_op.scale", data((33, 1000)), b.op("pd_op.full", shape=[1], value=3.0), bias=2.0
        )
        out, invvar = b.op("pd_op.rms_norm", x, None, normalized_shape=[1000], epsilon=1e-5)
        b.op("pd_op.fetch", out, name="out0", col=0)
        b.op("pd_op.fetch", invvar, name="out1", col=1)
        b.op("pd_op.fetch", x, name="out2", col=2)

    case = _case(build, family="norm")
    program = parse_program(case.text)
    exact = cinn_py.compile(program, "reference").run(case.feeds())
    with op_registry.override_op("pd_op.rms_norm", kernel=fuzz_check.float32_rms_norm):
        variant = cinn_py.compile(program, "reference").run(case.feeds())
    out, invvar, x = "out0", "out1", "out2"
    rows = exact[x]
    inverse = np.float32(1) / np.sqrt(
        (rows * rows).mean(axis=1, dtype=np.float32) + np.float32(1e-5)
    )
    np.testing.assert_array_equal(variant[invvar], inverse)
    np.testing.assert_allclose(variant[out], rows * inverse[:, None], rtol=2**-23, atol=0)
    assert not np.array_equal(variant[invvar], exact[invvar])  # float64 accumulation differs
    assert "pd_op.rms_norm" in fuzz_check.NUMERICS_VARIANTS


def test_nan_positions_and_exact_ints_must_match(monkeypatch: pytest.MonkeyPatch) -> None:
    def build(b, data):
        b.op("pd_op.log", data((8,)))
        b.op("pd_op.cast", data((8,)), dtype=DataType.INT32)

    case = _case(build, family="cast")
    exact = cinn_py.compile(parse_program(case.text), "reference").run(case.feeds())
    log, cast = sorted(exact, key=lambda n: int(n[1:]))

    def change(name, fn):
        out = {k: np.array(v) for k, v in exact.items()}
        out[name] = fn(out[name])
        return lambda p, f, t: out

    nan_moved = change(log, lambda a: np.where(np.isnan(a), np.float32(0), np.float32(np.nan)))
    monkeypatch.setattr(fuzz_check, "run_compiled", nan_moved)
    with pytest.raises(FuzzFailure):
        check_case(case)
    monkeypatch.setattr(fuzz_check, "run_compiled", change(cast, lambda a: a + 1))
    with pytest.raises(FuzzFailure):
        check_case(case)


def test_a_reproducer_reruns_with_the_cli(tmp_path, capsys) -> None:
    def build(b, data):
        x = data((7, 33), DataType.BFLOAT16)
        y = data((33,), DataType.FLOAT32, "special")
        s = b.op("pd_op.add", b.op("pd_op.cast", x, dtype=DataType.FLOAT32), y)
        b.op(
            "pd_op.sum",
            s,
            b.op("pd_op.full_int_array", value=[1]),
            keepdim=True,
            dtype=DataType.UNDEFINED,
        )
        b.op("pd_op.cast", s, dtype=DataType.BFLOAT16)

    case = _case(build)
    check_case(case)
    folder = write_reproducer(FuzzFailure("a report", case, "mismatch:example"), tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["failure.txt", "feeds.npz", "program.pir"]
    assert (
        "cinn-py run program.pir --feeds feeds.npz --check" in (folder / "failure.txt").read_text()
    )
    status = cli.main(
        [
            "run",
            str(folder / "program.pir"),
            "--feeds",
            str(folder / "feeds.npz"),
            "--check",
            "--target",
            "cuda-emu",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.count("ok") >= 2, out


def test_failures_of_listed_open_bugs_pass_while_their_switch_is_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(KNOWN_BUGS, "section_conflict", "cuda-emu cannot build it")
    monkeypatch.setitem(
        KNOWN_SIGNATURES, "section_conflict", re.compile(r"^error:CompileError: .*section type")
    )

    def broken(program, feeds, target):
        raise CompileError(
            "g++ rejected the CUDA source (cuda-emu): 'x' causes a section type conflict"
        )

    monkeypatch.setattr(fuzz_check, "run_compiled", broken)
    case = _case(lambda b, data: b.op("pd_op.relu", data((3, 5))))
    monkeypatch.setenv("CINN_PY_FUZZ_AVOID", "section_conflict")
    check_case(case)
    monkeypatch.setenv("CINN_PY_FUZZ_AVOID", "none")
    with pytest.raises(FuzzFailure):
        check_case(case)
    monkeypatch.setenv("CINN_PY_FUZZ_AVOID", "section_conflict")
    with pytest.raises(FuzzFailure):
        check_case(case, allow_known=False)


def test_avoided_bugs_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KNOWN_BUGS, "some_open_bug", "a stand-in switch")
    monkeypatch.delenv("CINN_PY_FUZZ_AVOID", raising=False)
    assert avoided_bugs() == frozenset(KNOWN_BUGS)
    monkeypatch.setenv("CINN_PY_FUZZ_AVOID", "none")
    assert avoided_bugs() == frozenset()
    name = "some_open_bug"
    monkeypatch.setenv("CINN_PY_FUZZ_AVOID", name)
    assert avoided_bugs() == {name}
    monkeypatch.setenv("CINN_PY_FUZZ_AVOID", "no_such_bug")
    with pytest.raises(ValueError, match="no_such_bug"):
        avoided_bugs()
