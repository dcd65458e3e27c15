"""Results typed `<<NULL TYPE>>`: what `pd_op.fused_rms_norm_quant` declares its
residual_out when no residual is given. They parse (text and model.json), print back
byte for byte, verify, are never program outputs and never allocated, and using one as
an operand is a VerifyError naming it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import LoadError, ParseError, VerifyError
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.parser import parse_program
from cinn_py.pir.printer import print_program
from cinn_py.pir.types import NullType, is_null
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import run_reference

FIXTURES = Path(__file__).parent.parent / "fixtures"

DATA = (
    '    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),'
    "shape:[3,7,5],stop_gradient:[true]} : () -> tensor<3x7x5xf32>\n"
    '    (%1) = "pd_op.data" () {dtype:float32,name:"w",place:Place(undefined:0),'
    "shape:[5],stop_gradient:[true]} : () -> tensor<5xf32>\n"
)
NORM = (
    '    (%2, %3, %4) = "pd_op.fused_rms_norm_quant" (%0, <<NULL VALUE>>, <<NULL VALUE>>, %1, '
    "<<NULL VALUE>>) {begin_norm_axis:2,epsilon:1e-06,quant_max_bound:0,quant_min_bound:0,"
    "quant_round_type:0,quant_scale:-1,stop_gradient:[true,true,true]} : (tensor<3x7x5xf32>, "
    "<<NULL TYPE>>, <<NULL TYPE>>, tensor<5xf32>, <<NULL TYPE>>) -> tensor<3x7x5xf32>, "
    "<<NULL TYPE>>, tensor<3x7xf32>\n"
)
TEXT = "{\n" + DATA + NORM + "}\n"
USE = '    (%5) = "pd_op.relu" (%3) {stop_gradient:[true]} : (<<NULL TYPE>>) -> tensor<3x7x5xf32>\n'


def test_null_typed_result_parses_prints_and_verifies():
    program = parse_program(TEXT)
    op = list(program.block)[2]
    assert op.result(1).type is NullType.get() and is_null(op.result(1).type)
    assert repr(op.result(1).type) == "<<NULL TYPE>>"
    assert print_program(program) == TEXT
    verify_program(program)


def test_null_typed_result_is_no_output_and_holds_nothing():
    program = parse_program(TEXT)
    op = list(program.block)[2]
    assert program.outputs() == [op.result(0), op.result(2)]
    rng = np.random.default_rng(0)
    feeds = {"x": rng.normal(size=(3, 7, 5)).astype(np.float32), "w": np.ones(5, np.float32)}
    out, inv_var = run_reference(program, feeds)
    assert out.shape == (3, 7, 5) and inv_var.shape == (3, 7)


def test_compiled_program_never_allocates_a_null_typed_result():
    program = parse_program(TEXT)
    exe = cinn_py.compile(program, target="cuda-emu")
    feeds = {"x": np.ones((3, 7, 5), np.float32), "w": np.ones(5, np.float32)}
    got = list(exe.run(feeds).values())
    assert len(got) == 2
    np.testing.assert_allclose(got[0], np.ones((3, 7, 5)), rtol=1e-5)


def test_using_a_null_typed_result_is_a_verify_error_naming_it():
    program = parse_program("{\n" + DATA + NORM + USE + "}\n")
    with pytest.raises(VerifyError) as info:
        verify_program(program)
    message = str(info.value)
    assert "pd_op.relu" in message
    assert "%3 (result #1 'residual_out' of pd_op.fused_rms_norm_quant)" in message
    assert "<<NULL TYPE>>" in message


def test_a_vector_item_still_cannot_be_null():
    text = TEXT.replace(
        "-> tensor<3x7x5xf32>, <<NULL TYPE>>,", "-> vec[<<NULL TYPE>>], <<NULL TYPE>>,"
    )
    with pytest.raises(ParseError, match="a vector item cannot have type <<NULL TYPE>>"):
        parse_program(text)


def test_model_json_null_result_loads_and_prints_as_paddle_does():
    folder = FIXTURES / "models" / "llama_decoder_fused"
    program = load_model(folder / "model.json")
    nulls = [r for op in program.block for r in op.results if is_null(r.type)]
    assert len(nulls) == 2
    assert all(r.owner.name == "pd_op.fused_rms_norm_quant" and r.index == 1 for r in nulls)
    verify_program(program)
    assert "tensor<-1x-1x16xf32>, <<NULL TYPE>>, tensor<-1x-1xf32>" in print_program(program)


def test_model_json_null_type_inside_a_vector_is_refused(tmp_path):
    model = json.loads((FIXTURES / "models" / "llama_decoder_fused" / "model.json").read_text())
    ops = model["program"]["regions"][0]["blocks"][0]["ops"]
    norm = next(op for op in ops if op["#"] == "1.fused_rms_norm_quant")
    norm["O"][1]["TT"] = {"#": "0.t_vec", "D": [{"#": "NULL"}]}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    with pytest.raises(LoadError, match="null type where only an op's result may have one"):
        load_model(path)
