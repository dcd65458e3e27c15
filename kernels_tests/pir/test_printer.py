"""Printer golden tests: programs built with Builder print exactly as Paddle prints them."""

from __future__ import annotations

import pytest

from cinn_py.pir import attributes as A
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import ArrayOf, OpDef, Scalar, attr, operand, register_ops
from cinn_py.pir.parser import parse_program
from cinn_py.pir.printer import format_float, print_attribute, print_program, print_type
from cinn_py.pir.program import Program, TextStyle
from cinn_py.pir.types import VectorType, bool_, f32, tensor

register_ops(
    "printtest",
    [
        OpDef(
            "printtest.data",
            attributes=(
                attr("name", A.StrAttribute),
                attr("shape", A.IntArrayAttribute),
                attr("dtype", A.DataTypeAttribute),
                attr("place", A.PlaceAttribute),
            ),
        ),
        OpDef(
            "printtest.full",
            attributes=(
                attr("shape", A.IntArrayAttribute),
                attr("value", Scalar),
                attr("dtype", A.DataTypeAttribute),
                attr("place", A.PlaceAttribute),
            ),
        ),
        OpDef(
            "printtest.layer_norm",
            operands=(
                operand("x"),
                operand("scale", optional=True),
                operand("bias", optional=True),
            ),
            attributes=(
                attr("epsilon", A.FloatAttribute),
                attr("begin_norm_axis", A.Int32Attribute),
            ),
            results=("out", "mean", "variance"),
        ),
        OpDef(
            "printtest.reduce",
            operands=(operand("x"),),
            attributes=(attr("axis", ArrayOf(A.Int64Attribute)), attr("keepdim", A.BoolAttribute)),
        ),
    ],
)

F32 = DataType.FLOAT32


def build_program() -> Program:
    """One op of each shape Paddle prints: parameter, data, scalars, null operands,
    several results, a vector, a 0-D and a bool tensor, and an op with no results."""
    program = Program()
    b = Builder(program)
    w = b.create(
        "builtin.parameter",
        attributes={
            "parameter_name": "linear_0.w_0",
            "persistable": [True],
            "stop_gradient": [False],
        },
        result_types=[tensor(F32, 16, 32)],
    ).result()
    x = b.create(
        "printtest.data",
        attributes={
            "name": "x",
            "shape": [8, 16],
            "dtype": F32,
            "place": "undefined:0",
            "stop_gradient": [True],
        },
        result_types=[tensor(F32, 8, 16)],
    ).result()
    y = b.create(
        "printtest.data",
        attributes={
            "name": "y",
            "shape": [-1, 16],
            "dtype": F32,
            "place": "undefined:0",
        },
        result_types=[tensor(F32, -1, 16)],
    ).result()
    half = b.create(
        "printtest.full",
        attributes={
            "shape": [],
            "value": 0.5,
            "dtype": F32,
            "place": "cpu",
        },
        result_types=[tensor(F32)],
    ).result()
    b.create(
        "printtest.full",
        attributes={
            "shape": [1],
            "value": 2,
            "dtype": DataType.INT64,
            "place": "cpu",
        },
        result_types=[tensor(DataType.INT64, 1)],
    )
    b.create(
        "printtest.layer_norm",
        [w, None, None],
        {
            "epsilon": 1e-05,
            "begin_norm_axis": 1,
            "stop_gradient": [False, False, False],
        },
        result_types=[tensor(F32, 16, 32), tensor(F32, 16), tensor(F32, 16)],
    )
    b.create(
        "printtest.reduce", [x], {"axis": [-1], "keepdim": True}, result_types=[tensor(F32, 8, 1)]
    )
    b.create("builtin.combine", [x, y], {"stop_gradient": [True]})
    greater = b.create(
        "printtest.greater_than",
        [x, half],
        {"stop_gradient": [True]},
        result_types=[tensor(DataType.BOOL, 8, 16)],
    ).result()
    b.create("builtin.shadow_output", [greater], {"output_name": "out"})
    return program


PADDLE_STYLE = """\
{
    (%0) = "builtin.parameter" () {parameter_name:"linear_0.w_0",persistable:[true],stop_gradient:[false]} : () -> tensor<16x32xf32>
    (%1) = "printtest.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[8,16],stop_gradient:[true]} : () -> tensor<8x16xf32>
    (%2) = "printtest.data" () {dtype:float32,name:"y",place:Place(undefined:0),shape:[-1,16]} : () -> tensor<-1x16xf32>
    (%3) = "printtest.full" () {dtype:float32,place:Place(cpu),shape:[],value:0.5} : () -> tensor<f32>
    (%4) = "printtest.full" () {dtype:int64,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xi64>
    (%5, %6, %7) = "printtest.layer_norm" (%0, <<NULL VALUE>>, <<NULL VALUE>>) {begin_norm_axis:1,epsilon:1e-05,stop_gradient:[false,false,false]} : (tensor<16x32xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<16x32xf32>, tensor<16xf32>, tensor<16xf32>
    (%8) = "printtest.reduce" (%1) {axis:[-1],keepdim:true} : (tensor<8x16xf32>) -> tensor<8x1xf32>
    (%9) = "builtin.combine" (%1, %2) {stop_gradient:[true]} : (tensor<8x16xf32>, tensor<-1x16xf32>) -> vec[tensor<8x16xf32>,tensor<-1x16xf32>]
    (%10) = "printtest.greater_than" (%1, %3) {stop_gradient:[true]} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xb>
    () = "builtin.shadow_output" (%10) {output_name:"out"} : (tensor<8x16xb>) -> 
}
"""  # noqa: W291  (Paddle ends an op with no results with "-> ")

TYPED_STYLE = """\
{
 (%0) = "builtin.parameter" () {parameter_name:"linear_0.w_0",persistable:[true],stop_gradient:[false]} : () -> pd_op.tensor<16x32xf32>
 (%1) = "printtest.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[8,16],stop_gradient:[true]} : () -> pd_op.tensor<8x16xf32>
 (%2) = "printtest.data" () {dtype:(pd_op.DataType)float32,name:"y",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[-1,16]} : () -> pd_op.tensor<-1x16xf32>
 (%3) = "printtest.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[],value:(Double)0.5} : () -> pd_op.tensor<f32>
 (%4) = "printtest.full" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],value:(Int64)2} : () -> pd_op.tensor<1xi64>
 (%5, %6, %7) = "printtest.layer_norm" (%0, <<NULL VALUE>>, <<NULL VALUE>>) {begin_norm_axis:(Int32)1,epsilon:(Float)1e-05,stop_gradient:[false,false,false]} : (pd_op.tensor<16x32xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> pd_op.tensor<16x32xf32>, pd_op.tensor<16xf32>, pd_op.tensor<16xf32>
 (%8) = "printtest.reduce" (%1) {axis:[(Int64)-1],keepdim:true} : (pd_op.tensor<8x16xf32>) -> pd_op.tensor<8x1xf32>
 (%9) = "builtin.combine" (%1, %2) {stop_gradient:[true]} : (pd_op.tensor<8x16xf32>, pd_op.tensor<-1x16xf32>) -> vec[pd_op.tensor<8x16xf32>,pd_op.tensor<-1x16xf32>]
 (%10) = "printtest.greater_than" (%1, %3) {stop_gradient:[true]} : (pd_op.tensor<8x16xf32>, pd_op.tensor<f32>) -> pd_op.tensor<8x16xb>
 () = "builtin.shadow_output" (%10) {output_name:"out"} : (pd_op.tensor<8x16xb>) -> 
}
"""  # noqa: W291


def test_builder_program_prints_as_paddle_does():
    assert print_program(build_program()) == PADDLE_STYLE


def test_builder_program_prints_in_the_typed_style():
    style = TextStyle(typed=True, tensor_prefix="pd_op", indent=1)
    assert print_program(build_program(), style) == TYPED_STYLE


@pytest.mark.parametrize("text", [PADDLE_STYLE, TYPED_STYLE], ids=["paddle", "typed"])
def test_golden_text_parses_back_to_itself(text):
    assert print_program(parse_program(text)) == text


def test_parsed_value_numbers_are_kept():
    program = build_program()
    for index, op in enumerate(program.block):
        for result in op.results:
            result.id_hint = 100 + 2 * index + result.index
    text = print_program(program)
    assert text.splitlines()[1].startswith("    (%100) = ")
    assert '"printtest.layer_norm" (%100, ' in text
    assert "(%110, %111, %112) = " in text


@pytest.mark.parametrize(
    "value, text",
    [
        (1e-05, "1e-05"),
        (0.35355339059327373, "0.353553"),
        (2.5, "2.5"),
        (1.0, "1"),
        (0.0, "0"),
        (-0.0, "-0"),
        (-4.0, "-4"),
        (100000.0, "100000"),
        (1e6, "1e+06"),
        (123456789.0, "1.23457e+08"),
        (1e20, "1e+20"),
        (1e-20, "1e-20"),
        (0.1, "0.1"),
        (1 / 3, "0.333333"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
        (float("nan"), "nan"),
        (-float("nan"), "-nan"),
    ],
)
def test_floats_print_like_cpp_ostream(value, text):
    assert format_float(value) == text


def test_float_attributes_print_their_float32_value():
    assert print_attribute(A.FloatAttribute.get(0.1)) == "0.1"
    assert print_attribute(A.FloatAttribute.get(1e-05)) == "1e-05"
    assert (
        print_attribute(A.DoubleAttribute.get(1 / 3), TextStyle(typed=True)) == "(Double)0.333333"
    )


def test_strings_escape_only_quotes_as_paddle_does():
    assert print_attribute(A.StrAttribute.get('a"b\\c')) == r'"a\"b\c"'


def test_types_in_both_styles():
    vec = VectorType.get([tensor(F32, 2), tensor(DataType.BOOL)])
    assert print_type(vec) == "vec[tensor<2xf32>,tensor<b>]"
    assert print_type(vec, TextStyle(typed=True)) == "vec[builtin.tensor<2xf32>,builtin.tensor<b>]"
    assert print_type(None) == "<<NULL TYPE>>"
    assert print_type(f32) == "f32" and print_type(bool_) == "b"
