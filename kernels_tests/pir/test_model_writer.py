"""cinn_py.pir.model_writer: what it writes is what Paddle wrote. Every saved model in
the fixtures (real Paddle 3.3.1 output: float16 / bfloat16 / 0-D parameters, vectors,
null operands, NaN and infinite attributes, an `if` with two regions) is loaded and
written again: the JSON is Paddle's own (key order aside), the parameter file byte for
byte, and it loads back to the same program."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cinn_py.pir.model_loader import load_model
from cinn_py.pir.model_writer import model_json, save_model
from cinn_py.pir.parser import parse_program
from cinn_py.pir.printer import print_program

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = sorted(
    glob.glob(os.path.join(HERE, "..", "fixtures", "models", "*", "model.json"))
    + glob.glob(os.path.join(HERE, "data", "*", "model.json"))
)


def _sorted(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _sorted(node[key]) for key in sorted(node)}
    if isinstance(node, list):
        return [_sorted(item) for item in node]
    return node


@pytest.mark.parametrize("path", MODELS, ids=lambda p: os.path.basename(os.path.dirname(p)))
def test_paddles_models_are_written_as_paddle_wrote_them(path: str, tmp_path: Path) -> None:
    program = load_model(path)
    with open(path, encoding="utf-8") as f:
        assert _sorted(model_json(program)) == _sorted(json.load(f))
    written = save_model(program, tmp_path / "model")
    assert written == tmp_path / "model.json"
    params = Path(path).with_suffix(".pdiparams")
    if params.is_file():
        assert (tmp_path / "model.pdiparams").read_bytes() == params.read_bytes()
    else:
        assert not (tmp_path / "model.pdiparams").exists()
    again = load_model(written)
    assert sorted(again.parameters) == sorted(program.parameters)
    for name, array in program.parameters.items():
        assert again.parameters[name].dtype == array.dtype
        np.testing.assert_array_equal(again.parameters[name], array)


def test_a_text_program_saves_and_loads_back(tmp_path: Path) -> None:
    text = """{
    (%0) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"w",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<4x2xbf16>
    (%1) = "pd_op.data" () {dtype:bfloat16,name:"x",place:Place(undefined:0),shape:[3,4],stop_gradient:[true]} : () -> tensor<3x4xbf16>
    (%2) = "pd_op.matmul" (%1, %0) {stop_gradient:[false],transpose_x:false,transpose_y:false} : (tensor<3x4xbf16>, tensor<4x2xbf16>) -> tensor<3x2xbf16>
    (%3) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:0.5} : () -> tensor<1xf32>
    (%4) = "pd_op.scale" (%2, %3) {bias:-1e+30,bias_after_scale:true,stop_gradient:[false]} : (tensor<3x2xbf16>, tensor<1xf32>) -> tensor<3x2xbf16>
    (%5) = "pd_op.fetch" (%4) {col:0,name:"fetch_name_0",persistable:[true],stop_gradient:[false]} : (tensor<3x2xbf16>) -> tensor<3x2xbf16>
}
"""
    program = parse_program(text)
    w = np.arange(8, dtype=np.uint16).reshape(4, 2) + 0x3F80
    save_model(program, tmp_path / "m.json", {"w": w})
    loaded = load_model(tmp_path / "m.json")
    assert print_program(loaded) == print_program(program)
    np.testing.assert_array_equal(loaded.parameters["w"], w)
    with pytest.raises(ValueError, match="no array for persistable value"):
        save_model(program, tmp_path / "other", {})
