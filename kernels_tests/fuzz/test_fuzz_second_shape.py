"""The fuzzer's second shape (`fuzz_check.second_shape_case`): -1 dims grow to the next
multiple of 8, where a symbolic kernel's aligned variant is the one launched, or by 2
where the program refuses that; sizes of 1 and static dims stay."""

from __future__ import annotations

from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program
from kernels_tests.fuzz.fuzz_case import FuzzCase, InputSpec
from kernels_tests.fuzz.fuzz_check import second_shape_case

ADD = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1],stop_gradient:[true]} : () -> tensor<-1x-1xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"y",place:Place(undefined:0),shape:[-1,5],stop_gradient:[true]} : () -> tensor<-1x5xf32>
    (%2) = "pd_op.exp" (%0) {stop_gradient:[true]} : (tensor<-1x-1xf32>) -> tensor<-1x-1xf32>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (tensor<-1x-1xf32>) ->
    () = "builtin.shadow_output" (%1) {output_name:"out2"} : (tensor<-1x5xf32>) ->
}
"""

# a reshape to [-1, 6]: the element count must stay a multiple of 6
RESHAPE = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1],stop_gradient:[true]} : () -> tensor<-1xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1,6]} : () -> tensor<2xi64>
    (%2) = "pd_op.reshape" (%0, %1) {stop_gradient:[true]} : (tensor<-1xf32>, tensor<2xi64>) -> tensor<-1x6xf32>
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (tensor<-1x6xf32>) ->
}
"""


def case(text: str, *specs: InputSpec) -> FuzzCase:
    return FuzzCase("test", parse_program(text), specs, 0)


def test_dims_grow_to_the_next_multiple_of_8_and_ones_stay():
    first = case(
        ADD,
        InputSpec("x", (3, 1), DataType.FLOAT32),
        InputSpec("y", (3, 5), DataType.FLOAT32),
    )
    second = second_shape_case(first)
    assert [spec.shape for spec in second.inputs] == [(8, 1), (8, 5)]


def test_only_growths_the_program_accepts_are_kept():
    first = case(RESHAPE, InputSpec("x", (18,), DataType.FLOAT32))
    second = second_shape_case(first)  # 24 elements reshape to [4, 6]: accepted
    assert second.inputs[0].shape == (24,)
    odd = case(RESHAPE, InputSpec("x", (12,), DataType.FLOAT32))
    # 16 is no multiple of 6, 14 neither: no growth the reference accepts
    assert second_shape_case(odd) is None
