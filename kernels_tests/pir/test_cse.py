"""Common-subexpression elimination: golden text, and what must never be merged."""

from __future__ import annotations

import numpy as np

from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import eliminate_common_subexpressions
from cinn_py.pir.printer import print_program
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import run_reference

BEFORE = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:1} : () -> tensor<f32>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[false],value:1} : () -> tensor<f32>
    (%3) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:2} : () -> tensor<f32>
    (%4) = "pd_op.add" (%0, %1) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    (%5) = "pd_op.add" (%0, %2) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    (%6) = "pd_op.add" (%0, %3) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    (%7) = "pd_op.add" (%1, %0) {stop_gradient:[true]} : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    (%8) = "pd_op.multiply" (%4, %5) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    (%9) = "pd_op.multiply" (%6, %7) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    (%10) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
    (%11) = "pd_op.fetch" (%8) {col:0,name:"a",stop_gradient:[true]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%12) = "pd_op.fetch" (%9) {col:1,name:"b",stop_gradient:[true]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%13) = "pd_op.fetch" (%10) {col:2,name:"c",stop_gradient:[true]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"""  # noqa: E501

AFTER = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:1} : () -> tensor<f32>
    (%3) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:2} : () -> tensor<f32>
    (%4) = "pd_op.add" (%0, %1) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    (%6) = "pd_op.add" (%0, %3) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    (%7) = "pd_op.add" (%1, %0) {stop_gradient:[true]} : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    (%8) = "pd_op.multiply" (%4, %4) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    (%9) = "pd_op.multiply" (%6, %7) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    (%10) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
    (%11) = "pd_op.fetch" (%8) {col:0,name:"a",stop_gradient:[true]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%12) = "pd_op.fetch" (%9) {col:1,name:"b",stop_gradient:[true]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%13) = "pd_op.fetch" (%10) {col:2,name:"c",stop_gradient:[true]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"""  # noqa: E501


def test_cse_golden() -> None:
    """The two full(1) merge though their stop_gradient differs, and so then do the adds
    reading them; full(2), the add with swapped operands and the second data op (a side
    effect) stay."""
    program = parse_program(BEFORE)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = run_reference(program, {"x": x})
    assert eliminate_common_subexpressions(program) == 2
    verify_program(program)
    assert print_program(program) == AFTER
    got = run_reference(program, {"x": x})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


DROPOUT = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:0.5} : () -> tensor<1xf32>
    (%2, %3) = "pd_op.dropout" (%0, <<NULL VALUE>>, %1) {fix_seed:false,is_test:false,mode:"upscale_in_train",seed:0,stop_gradient:[true,true]} : (tensor<4xf32>, <<NULL TYPE>>, tensor<1xf32>) -> tensor<4xf32>, tensor<4xu8>
    (%4, %5) = "pd_op.dropout" (%0, <<NULL VALUE>>, %1) {fix_seed:false,is_test:false,mode:"upscale_in_train",seed:0,stop_gradient:[true,true]} : (tensor<4xf32>, <<NULL TYPE>>, tensor<1xf32>) -> tensor<4xf32>, tensor<4xu8>
}
"""  # noqa: E501


def test_random_ops_are_not_merged() -> None:
    program = parse_program(DROPOUT)
    assert eliminate_common_subexpressions(program) == 0
    assert print_program(program) == DROPOUT


def test_merged_pinned_output_follows() -> None:
    """A pinned output computed twice is pinned as the surviving value."""
    program = parse_program(BEFORE)
    adds = [op for op in program.block if op.name == "pd_op.add"]
    program.pinned_outputs = [adds[1].result()]
    eliminate_common_subexpressions(program)
    assert program.pinned_outputs == [adds[0].result()]
