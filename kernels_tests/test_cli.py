"""The `cinn-py` command: print, run, outputs, errors (one line, non-zero exit)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from cinn_py.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
MODELS = os.path.join(ROOT, "kernels_tests", "fixtures", "models")


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_print_gives_back_the_text(capsys):
    path = os.path.join(EXAMPLES, "softmax_by_hand.pir")
    code, out, _ = run_cli(capsys, "print", path)
    assert code == 0
    with open(path, encoding="utf-8") as f:
        assert out == f.read()


def test_run_text_program_writes_outputs_by_value_id(capsys, tmp_path):
    x = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float32)
    feeds = tmp_path / "feeds.npz"
    np.savez(feeds, x=x)
    out = tmp_path / "out.npz"
    code, stdout, _ = run_cli(
        capsys,
        "run",
        os.path.join(EXAMPLES, "softmax.pir"),
        "--feeds",
        str(feeds),
        "--target",
        "reference",
        "--out",
        str(out),
    )
    assert code == 0
    assert stdout.startswith("%1: float32[64, 128]")
    with np.load(out) as data:
        assert data.files == ["%1"]
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        np.testing.assert_allclose(data["%1"], e / e.sum(axis=-1, keepdims=True), rtol=1e-5)


def test_run_check_reports_errors(capsys):
    code, stdout, _ = run_cli(capsys, "run", os.path.join(EXAMPLES, "softmax.pir"), "--check")
    assert code == 0
    assert "check %1 (reference vs reference): ok, max abs error 0" in stdout


def test_run_fetch_picks_values(capsys):
    code, stdout, _ = run_cli(
        capsys, "run", os.path.join(EXAMPLES, "softmax_by_hand.pir"), "--fetch", "%2", "%7"
    )
    assert code == 0
    assert [line.split(":")[0] for line in stdout.splitlines()] == ["%2", "%7"]
    assert stdout.splitlines()[0].startswith("%2: float32[32, 1]")


@pytest.mark.skipif(not os.path.isdir(os.path.join(MODELS, "mlp")), reason="no mlp fixture")
def test_run_saved_model_names_outputs_out0(capsys, tmp_path):
    model = os.path.join(MODELS, "mlp")
    out = tmp_path / "out.npz"
    code, stdout, _ = run_cli(
        capsys, "run", model, "--feeds", os.path.join(model, "feeds.npz"), "--out", str(out)
    )
    assert code == 0 and stdout.startswith("out0: float32")
    with np.load(out) as got, np.load(os.path.join(model, "outputs.npz")) as want:
        np.testing.assert_allclose(got["out0"], want["out0"], rtol=1e-4, atol=1e-5)


def _write(tmp_path, text: str) -> str:
    path = tmp_path / "p.pir"
    path.write_text(text)
    return str(path)


def test_parse_error_is_one_readable_message(capsys, tmp_path):
    path = _write(tmp_path, '{\n    (%0) = "pd_op.data" () {name:"x"} : () -> tensor<2xq9>\n}\n')
    code, out, err = run_cli(capsys, "print", path)
    assert code == 2 and out == ""
    assert err.startswith(f"cinn-py: error: {path}:2:")
    assert "Traceback" not in err


def test_unsupported_op_names_op_and_place(capsys, tmp_path):
    text = (
        "{\n"
        '    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),'
        "shape:[2],stop_gradient:[true]} : () -> tensor<2xf32>\n"
        '    (%1) = "pd_op.frobnicate" (%0) {} : (tensor<2xf32>) -> tensor<2xf32>\n'
        "}\n"
    )
    code, _, err = run_cli(capsys, "run", _write(tmp_path, text))
    assert code == 2
    assert "op 'pd_op.frobnicate'" in err and "p.pir:3" in err


def test_wrong_feed_shape(capsys, tmp_path):
    feeds = tmp_path / "feeds.npz"
    np.savez(feeds, x=np.zeros((3, 3), np.float32))
    code, _, err = run_cli(
        capsys, "run", os.path.join(EXAMPLES, "softmax.pir"), "--feeds", str(feeds)
    )
    assert code == 2
    assert err.startswith("cinn-py: error: feed 'x': expected")


def test_unimplemented_target_says_so(capsys):
    code, _, err = run_cli(
        capsys, "run", os.path.join(EXAMPLES, "softmax.pir"), "--target", "cuda-emu"
    )
    assert code == 2
    assert "target 'cuda-emu' is not implemented yet; available: reference" in err


def test_missing_file(capsys):
    code, _, err = run_cli(capsys, "print", "/nonexistent/prog.pir")
    assert code == 2 and "/nonexistent/prog.pir" in err


def test_unknown_fetch(capsys):
    code, _, err = run_cli(capsys, "run", os.path.join(EXAMPLES, "softmax.pir"), "--fetch", "%99")
    assert code == 2 and "cannot fetch '%99'" in err
