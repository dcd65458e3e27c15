"""What the package says about itself: its licence, its version, its dependencies (ml_dtypes
for bfloat16 arrays, which feed as they are), and a changelog."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.pir.dtypes import bfloat16_to_float32, float32_to_bfloat16

ROOT = Path(__file__).resolve().parent.parent


def pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_licence_is_apache_2_in_spdx_form_with_its_text():
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text
    project = pyproject()
    assert project["project"]["license"] == "Apache-2.0"
    assert project["project"]["license-files"] == ["LICENSE"]
    assert "setuptools>=77" in project["build-system"]["requires"]  # SPDX license strings


def test_one_version_in_the_metadata_the_package_and_the_changelog():
    version = pyproject()["project"]["version"]
    assert cinn_py.__version__ == version
    assert importlib.metadata.version("cinn_py") == version  # installed from this tree
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in changelog and f"## [{version}]" in changelog


def test_ml_dtypes_is_a_dependency():
    dependencies = pyproject()["project"]["dependencies"]
    assert any(d.startswith("ml_dtypes") for d in dependencies)


BF16_PROGRAM = """{
    (%0) = "pd_op.data" () {dtype:bfloat16,name:"x",place:Place(undefined:0),shape:[4,6],stop_gradient:[true]} : () -> tensor<4x6xbf16>
    (%1) = "pd_op.exp" (%0) {stop_gradient:[true]} : (tensor<4x6xbf16>) -> tensor<4x6xbf16>
}
"""


@pytest.mark.parametrize("target", ["reference", "cuda-emu"])
def test_an_ml_dtypes_bfloat16_array_feeds_as_it_is(tmp_path, target):
    import ml_dtypes

    path = tmp_path / "bf16.pir"
    path.write_text(BF16_PROGRAM)
    exe = cinn_py.compile(cinn_py.load(path), target)
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    got = exe.run({"x": x.astype(ml_dtypes.bfloat16)})["%1"]
    bits = exe.run({"x": float32_to_bfloat16(x)})["%1"]
    assert got.dtype == np.uint16  # outputs are bit patterns, as Paddle gives them
    np.testing.assert_array_equal(got, bits)
    want = np.exp(bfloat16_to_float32(float32_to_bfloat16(x)))
    np.testing.assert_allclose(bfloat16_to_float32(got), want, rtol=1e-2)
