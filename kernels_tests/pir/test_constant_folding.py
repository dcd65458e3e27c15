"""Constant folding: golden text, exactness, and what is left alone."""

from __future__ import annotations

import numpy as np

from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager, fold_constants
from cinn_py.pir.printer import print_program
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import run_reference

BEFORE = """\
{
    (%0) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:2} : () -> tensor<1xf32>
    (%1) = "pd_op.cast" (%0) {dtype:float64,stop_gradient:[true]} : (tensor<1xf32>) -> tensor<1xf64>
    (%2) = "pd_op.full" () {dtype:float64,place:Place(cpu),shape:[],stop_gradient:[true],value:0.5} : () -> tensor<f64>
    (%3) = "pd_op.scale" (%1, %2) {bias:1,bias_after_scale:true,stop_gradient:[true]} : (tensor<1xf64>, tensor<f64>) -> tensor<1xf64>
    (%4) = "pd_op.full" () {dtype:float64,place:Place(cpu),shape:[2],stop_gradient:[true],value:3} : () -> tensor<2xf64>
    (%5) = "pd_op.divide" (%4, %3) {stop_gradient:[true]} : (tensor<2xf64>, tensor<1xf64>) -> tensor<2xf64>
    (%6) = "pd_op.data" () {dtype:float64,name:"x",place:Place(undefined:0),shape:[2],stop_gradient:[true]} : () -> tensor<2xf64>
    (%7) = "pd_op.multiply" (%6, %5) {stop_gradient:[true]} : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    (%8) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:0} : () -> tensor<f32>
    (%9) = "pd_op.divide" (%8, %8) {stop_gradient:[true]} : (tensor<f32>, tensor<f32>) -> tensor<f32>
    (%10) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[],stop_gradient:[true],value:4611686018427387904} : () -> tensor<i64>
    (%11) = "pd_op.scale" (%10, <<NULL VALUE>>) {bias:1,bias_after_scale:true,scale:1,stop_gradient:[true]} : (tensor<i64>, <<NULL TYPE>>) -> tensor<i64>
    (%12) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[],stop_gradient:[true],value:-7} : () -> tensor<i32>
    (%13) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[],stop_gradient:[true],value:2} : () -> tensor<i32>
    (%14) = "pd_op.divide" (%12, %13) {stop_gradient:[true]} : (tensor<i32>, tensor<i32>) -> tensor<i32>
    (%15) = "pd_op.less_than" (%12, %13) {stop_gradient:[true]} : (tensor<i32>, tensor<i32>) -> tensor<b>
}
"""  # noqa: E501

AFTER = """\
{
    (%5) = "pd_op.full" () {dtype:float64,place:Place(cpu),shape:[2],stop_gradient:[true],value:1.5} : () -> tensor<2xf64>
    (%6) = "pd_op.data" () {dtype:float64,name:"x",place:Place(undefined:0),shape:[2],stop_gradient:[true]} : () -> tensor<2xf64>
    (%7) = "pd_op.multiply" (%6, %5) {stop_gradient:[true]} : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
    (%8) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:0} : () -> tensor<f32>
    (%9) = "pd_op.divide" (%8, %8) {stop_gradient:[true]} : (tensor<f32>, tensor<f32>) -> tensor<f32>
    (%10) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[],stop_gradient:[true],value:4.61169e+18} : () -> tensor<i64>
    (%11) = "pd_op.scale" (%10, <<NULL VALUE>>) {bias:1,bias_after_scale:true,scale:1,stop_gradient:[true]} : (tensor<i64>, <<NULL TYPE>>) -> tensor<i64>
    (%14) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[],stop_gradient:[true],value:-3} : () -> tensor<i32>
    (%15) = "pd_op.full" () {dtype:bool,place:Place(cpu),shape:[],stop_gradient:[true],value:1} : () -> tensor<b>
}
"""  # noqa: E501


def _outputs(program):
    return [program.block.ops[i].result() for i in (7, 9, 11, 14, 15)]


def test_constant_folding_golden() -> None:
    """cast -> scale -> divide folds in one run into full(1.5); 0/0 (NaN), a 2**62 + 1 no
    double holds, stay; the integer divide truncates (-7 / 2 = -3) as its kernel does; a
    compare folds to a bool full. DCE then drops the orphaned fulls."""
    program = parse_program(BEFORE)
    program.pinned_outputs = _outputs(program)
    feeds = {"x": np.array([1.0, -2.0])}
    want = run_reference(program, feeds)
    assert fold_constants(program) == 5
    verify_program(program)
    PassManager.from_names(["dead_code_elimination"]).run(program)
    assert print_program(program) == AFTER
    got = run_reference(program, feeds)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_nothing_to_fold_changes_nothing() -> None:
    text = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2],stop_gradient:[true]} : () -> tensor<2xf32>
    (%1) = "pd_op.exp" (%0) {stop_gradient:[true]} : (tensor<2xf32>) -> tensor<2xf32>
}
"""  # noqa: E501
    program = parse_program(text)
    assert fold_constants(program) == 0
    assert print_program(program) == text
