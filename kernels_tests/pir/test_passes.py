"""Passes: golden text before/after, and folding that changes no numbers on any fixture."""

from __future__ import annotations

import glob
import json
import os
import sys

import numpy as np
import pytest

import cinn_py
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.pir.printer import print_program
from cinn_py.tolerances import compare

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(ROOT, "kernels_tests", "fixtures", "declared_shape_bugs.json")) as f:
    DECLARED_SHAPE_BUGS: dict[str, str] = json.load(f)
PROGRAMS = sorted(glob.glob(os.path.join(ROOT, "kernels_tests", "fixtures", "programs", "*")))
sys.path.insert(0, os.path.join(ROOT, "kernels_tests"))
from fixture_ops import marks_for  # noqa: E402

PROGRAM_PARAMS = [
    pytest.param(folder, marks=marks_for(folder, "passes"), id=os.path.basename(folder))
    for folder in PROGRAMS
]
"""A fixture whose program uses an op cinn_py does not know yet is xfail(strict)."""

SOFTMAX_BY_HAND_AFTER = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[32,100],stop_gradient:[true]} : () -> tensor<32x100xf32>
    (%2) = "pd_op.max" (%0, <<NULL VALUE>>) {axis:[-1],keepdim:true,stop_gradient:[true]} : (tensor<32x100xf32>, <<NULL TYPE>>) -> tensor<32x1xf32>
    (%3) = "pd_op.subtract" (%0, %2) {stop_gradient:[true]} : (tensor<32x100xf32>, tensor<32x1xf32>) -> tensor<32x100xf32>
    (%4) = "pd_op.exp" (%3) {stop_gradient:[true]} : (tensor<32x100xf32>) -> tensor<32x100xf32>
    (%6) = "pd_op.sum" (%4, <<NULL VALUE>>) {axis:[-1],dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<32x100xf32>, <<NULL TYPE>>) -> tensor<32x1xf32>
    (%7) = "pd_op.divide" (%4, %6) {stop_gradient:[true]} : (tensor<32x100xf32>, tensor<32x1xf32>) -> tensor<32x100xf32>
}
"""  # noqa: E501

SCALARS_BEFORE = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:2.5} : () -> tensor<1xf32>
    (%2) = "pd_op.scale" (%0, %1) {bias:1,bias_after_scale:true,stop_gradient:[true]} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
    (%3) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xi32>
    (%4) = "builtin.combine" (%0, %2) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> vec[tensor<2x3xf32>,tensor<2x3xf32>]
    (%5) = "pd_op.concat" (%4, %3) {stop_gradient:[true]} : (vec[tensor<2x3xf32>,tensor<2x3xf32>], tensor<1xi32>) -> tensor<2x6xf32>
}
"""  # noqa: E501

SCALARS_AFTER = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
    (%2) = "pd_op.scale" (%0, <<NULL VALUE>>) {bias:1,bias_after_scale:true,scale:2.5,stop_gradient:[true]} : (tensor<2x3xf32>, <<NULL TYPE>>) -> tensor<2x3xf32>
    (%4) = "builtin.combine" (%0, %2) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> vec[tensor<2x3xf32>,tensor<2x3xf32>]
    (%5) = "pd_op.concat" (%4, <<NULL VALUE>>) {axis:1,stop_gradient:[true]} : (vec[tensor<2x3xf32>,tensor<2x3xf32>], <<NULL TYPE>>) -> tensor<2x6xf32>
}
"""  # noqa: E501


FOLD_AND_DCE = ("fold_mutable_attributes", "dead_code_elimination")


def test_fold_and_dce_golden_reduce_axes():
    program = cinn_py.load(os.path.join(ROOT, "examples", "softmax_by_hand.pir"))
    manager = PassManager.from_names(FOLD_AND_DCE)
    manager.run(program)
    assert print_program(program) == SOFTMAX_BY_HAND_AFTER
    assert manager.changes == {"fold_mutable_attributes": 2, "dead_code_elimination": 2}


def test_fold_golden_scalars_take_their_declared_kinds():
    program = parse_program(SCALARS_BEFORE)
    PassManager.from_names(FOLD_AND_DCE).run(program)
    assert print_program(program) == SCALARS_AFTER
    scale = program.block.ops[1]
    assert type(scale.attributes["scale"]).__name__ == "FloatAttribute"
    concat = program.block.ops[3]
    assert type(concat.attributes["axis"]).__name__ == "Int64Attribute"


def test_pass_manager_dumps_each_step(tmp_path):
    program = parse_program(SCALARS_BEFORE)
    PassManager.from_names(FOLD_AND_DCE, dump_dir=str(tmp_path)).run(program)
    names = sorted(os.listdir(tmp_path))
    assert names == [
        "00_input.pir",
        "01_fold_mutable_attributes.pir",
        "02_dead_code_elimination.pir",
    ]
    assert (tmp_path / "00_input.pir").read_text() == SCALARS_BEFORE
    assert (tmp_path / "02_dead_code_elimination.pir").read_text() == SCALARS_AFTER


def test_a_pass_dump_that_cannot_be_written_warns_and_the_passes_go_on(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    program = parse_program(SCALARS_BEFORE)
    manager = PassManager.from_names(FOLD_AND_DCE, dump_dir=str(blocker / "dumps"))
    with pytest.warns(RuntimeWarning, match="cannot write the pass dump .*go on without dumps"):
        manager.run(program)
    assert print_program(program) == SCALARS_AFTER


def test_unknown_pass_is_named():
    with pytest.raises(ValueError, match=r"unknown pass\(es\) \['nope'\]"):
        PassManager(passes=("nope",))


@pytest.mark.parametrize("folder", PROGRAM_PARAMS)
def test_passes_change_no_numbers(folder):
    """Folding and DCE on every Paddle fixture: it still verifies, keeps its outputs,
    and the reference executor gives the same numbers before and after."""
    from cinn_py.reference import run_reference

    program = cinn_py.load(os.path.join(folder, "program.pir"))
    with np.load(os.path.join(folder, "feeds.npz")) as data:
        feeds = {k: data[k] for k in data.files}
    params = {}
    if os.path.exists(os.path.join(folder, "params.npz")):
        with np.load(os.path.join(folder, "params.npz")) as data:
            params = {k: data[k] for k in data.files}
    check = os.path.basename(folder) not in DECLARED_SHAPE_BUGS
    before = run_reference(program, feeds, params, check_shapes=check)
    folded = program.clone()
    PassManager().run(folded)
    assert not any(op.name == "pd_op.full_int_array" for op in folded.block)
    after = run_reference(folded, feeds, params, check_shapes=check)
    assert len(before) == len(after)
    for want, got in zip(before, after, strict=True):
        result = compare(got, want)
        assert result.ok, str(result)
