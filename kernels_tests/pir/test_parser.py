"""The program-text parser: structure, attribute kinds, both formats, and its errors."""

from __future__ import annotations

import math

import pytest

from cinn_py.errors import ParseError
from cinn_py.pir import attributes as A
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import (
    ATTR_KINDS,
    OpDef,
    Scalar,
    attr,
    attribute_matches,
    kind_from_name,
    lookup_op_def,
    operand,
    register_ops,
)
from cinn_py.pir.parser import parse_file, parse_program
from cinn_py.pir.printer import print_program
from cinn_py.pir.types import DenseTensorType, VectorType, bool_, f32, i64

register_ops(
    "parsetest",
    [
        OpDef(
            "parsetest.data",
            attributes=(
                attr("name", A.StrAttribute),
                attr("shape", A.IntArrayAttribute),
                attr("dtype", A.DataTypeAttribute),
                attr("place", A.PlaceAttribute, "cpu"),
            ),
        ),
        OpDef(
            "parsetest.full",
            attributes=(
                attr("shape", A.IntArrayAttribute),
                attr("value", Scalar),
                attr("dtype", A.DataTypeAttribute),
                attr("place", A.PlaceAttribute, "cpu"),
            ),
        ),
        OpDef(
            "parsetest.layer_norm",
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
            "parsetest.kinds",
            attributes=tuple(
                attr(kind.replace("<", "_").rstrip(">"), kind_from_name(kind))
                for kind in ATTR_KINDS
            ),
        ),
    ],
)


def program_text(*ops: str, indent: int = 4) -> str:
    return "{\n" + "".join(" " * indent + op + "\n" for op in ops) + "}\n"


DATA = '(%0) = "parsetest.data" () {dtype:float32,name:"x",shape:[2,3]} : () -> tensor<2x3xf32>'
RELU = '(%1) = "parsetest.relu" (%0) {} : (tensor<2x3xf32>) -> tensor<2x3xf32>'

PADDLE_TEXT = """\
{
    (%0) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"linear_0.w_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<16x32xf32>
    (%4) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[8,16],stop_gradient:[true]} : () -> tensor<8x16xf32>
    (%5) = "pd_op.data" () {dtype:float32,name:"y",place:Place(undefined:0),shape:[-1,16],stop_gradient:[true]} : () -> tensor<-1x16xf32>
    (%7) = "pd_op.matmul" (%4, %0) {stop_gradient:[false],struct_name:"/Linear/",transpose_x:false,transpose_y:false} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    (%8, %9, %10) = "pd_op.layer_norm" (%7, <<NULL VALUE>>, <<NULL VALUE>>) {begin_norm_axis:1,epsilon:1e-05,stop_gradient:[false,false,false]} : (tensor<8x32xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<8x32xf32>, tensor<8xf32>, tensor<8xf32>
    (%11) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%13) = "pd_op.sum" (%8, %11) {dtype:Undefined,keepdim:true,stop_gradient:[false]} : (tensor<8x32xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    (%17) = "builtin.combine" (%4, %5) {stop_gradient:[true]} : (tensor<8x16xf32>, tensor<-1x16xf32>) -> vec[tensor<8x16xf32>,tensor<-1x16xf32>]
    (%25) = "pd_op.full" () {dtype:float32,place:Place(undefined:0),shape:[],stop_gradient:[true],value:0.5} : () -> tensor<f32>
    (%26) = "pd_op.greater_than" (%4, %25) {stop_gradient:[true]} : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xb>
    () = "builtin.shadow_output" (%13) {output_name:"out"} : (tensor<8x1xf32>) -> 
}
"""  # noqa: W291  (Paddle ends an op with no results with "-> ")

TYPED_TEXT = """\
{
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[-1,-1],stop_gradient:[true]} : () -> builtin.tensor<-1x-1xf32>
    (%1) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Double)2} : () -> builtin.tensor<1xf32>
    (%2) = "pd_op.scale" (%0, %1) {bias:(Float)0,bias_after_scale:true,stop_gradient:[false]} : (builtin.tensor<-1x-1xf32>, builtin.tensor<1xf32>) -> builtin.tensor<-1x-1xf32>
    () = "builtin.shadow_output" (%2) {output_name:"output_0"} : (builtin.tensor<-1x-1xf32>) -> 
}
"""  # noqa: W291


def one_op(op_line: str):
    """The attributes of the single op in a program made of `op_line`."""
    (op,) = parse_program(program_text(op_line)).block.ops
    return op.attributes


# -- structure -----------------------------------------------------------------------------


def test_paddle_text_structure():
    program = parse_program(PADDLE_TEXT, "sample.pir")
    ops = program.block.ops
    assert [op.name for op in ops][:3] == ["builtin.parameter", "pd_op.data", "pd_op.data"]
    assert len(ops) == 11
    assert program.source == "sample.pir"
    assert [op.loc.line for op in ops] == list(range(2, 13))
    assert all(op.loc.file == "sample.pir" for op in ops)
    assert [r.id_hint for r in ops[4].results] == [8, 9, 10]
    layer_norm = ops[4]
    assert layer_norm.operand_value(0) is ops[3].result()
    assert layer_norm.operand_values()[1:] == [None, None]
    assert ops[1].result().type is DenseTensorType.get(f32, [8, 16])
    assert ops[2].result().type.dims == (-1, 16)
    assert ops[7].result().type is VectorType.get([ops[1].result().type, ops[2].result().type])
    assert ops[8].result().type is DenseTensorType.get(f32, [])
    assert ops[9].result().type.dtype is bool_
    assert ops[10].num_results == 0 and ops[10].operand_value(0) is ops[6].result()
    assert ops[1].result().users() == [ops[3], ops[7], ops[9]]
    style = program.text_style
    assert (style.typed, style.indent) == (False, 4)


def test_typed_text_style_and_structure():
    program = parse_program(TYPED_TEXT)
    style = program.text_style
    assert (style.typed, style.tensor_prefix, style.indent) == (True, "builtin", 4)
    assert program.block.ops[2].operand_value(1) is program.block.ops[1].result()
    one_space = parse_program(program_text(DATA.replace("tensor<", "pd_op.tensor<"), indent=1))
    style = one_space.text_style
    assert (style.typed, style.tensor_prefix, style.indent) == (True, "pd_op", 1)


def test_value_numbers_need_not_be_contiguous():
    text = program_text(DATA.replace("%0", "%38"), RELU.replace("%0", "%38").replace("%1", "%2"))
    program = parse_program(text)
    assert [op.result().id_hint for op in program.block] == [38, 2]
    assert print_program(program) == text


def test_empty_program():
    program = parse_program("{\n}\n")
    assert len(program) == 0 and print_program(program) == "{\n}\n"


def test_parse_file(tmp_path):
    path = tmp_path / "prog.pir"
    path.write_text(program_text(DATA, RELU))
    program = parse_file(path)
    assert program.source == str(path)
    assert str(program.block.ops[1].loc) == f"{path}:3"
    path.write_text(program_text(DATA, RELU.replace("%0)", "%9)")))
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert info.value.file == str(path) and info.value.line == 3


def test_parse_file_rejects_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / "bad.pir"
    path.write_bytes(b'{\n    (%0) = "x\xff"\n}\n')
    with pytest.raises(ParseError) as info:
        parse_file(path)
    assert "not UTF-8" in info.value.message
    assert (info.value.line, info.value.col) == (2, 14)


# -- attribute kinds ---------------------------------------------------------------------------


def test_declared_kinds_recover_attribute_types():
    attrs = one_op(
        '(%0) = "parsetest.full" () {dtype:float32,place:Place(cpu),shape:[8,16],'
        "stop_gradient:[true],value:2} : () -> tensor<8x16xf32>"
    )
    assert attrs["shape"] is A.IntArrayAttribute.get([8, 16])
    assert attrs["stop_gradient"] is A.ArrayAttribute.get([A.BoolAttribute.get(True)])
    assert attrs["dtype"] is A.DataTypeAttribute.get(DataType.FLOAT32)
    assert attrs["place"] is A.PlaceAttribute.get("cpu")
    assert attrs["value"] is A.Int64Attribute.get(2)
    norm = one_op(
        '(%0, %1, %2) = "parsetest.layer_norm" (<<NULL VALUE>>, <<NULL VALUE>>, <<NULL VALUE>>) '
        "{begin_norm_axis:1,epsilon:1e-05} : (<<NULL TYPE>>, <<NULL TYPE>>, <<NULL TYPE>>) "
        "-> tensor<8xf32>, tensor<8xf32>, tensor<8xf32>"
    )
    assert norm["epsilon"] is A.FloatAttribute.get(1e-05)
    assert norm["begin_norm_axis"] is A.Int32Attribute.get(1)


@pytest.mark.parametrize(
    "literal, expected",
    [
        ("2", A.Int64Attribute.get(2)),
        ("2.5", A.DoubleAttribute.get(2.5)),
        ("1e-05", A.DoubleAttribute.get(1e-05)),
        ("inf", A.DoubleAttribute.get(float("inf"))),
        ("-0", A.DoubleAttribute.get(-0.0)),
        ("true", A.BoolAttribute.get(True)),
    ],
)
def test_scalar_kind(literal, expected):
    attrs = one_op(
        f'(%0) = "parsetest.full" () {{dtype:float32,shape:[1],value:{literal}}} : () -> tensor<1xf32>'
    )
    assert attrs["value"] is expected


@pytest.mark.parametrize(
    "literal, expected",
    [
        ("true", A.BoolAttribute.get(True)),
        ("7", A.Int32Attribute.get(7)),
        ("8589934592", A.Int64Attribute.get(2**33)),
        ("-0", A.DoubleAttribute.get(-0.0)),
        ("0.353553", A.DoubleAttribute.get(0.353553)),
        ('"s"', A.StrAttribute.get("s")),
        ("float32", A.DataTypeAttribute.get(DataType.FLOAT32)),
        ("Undefined", A.DataTypeAttribute.get(DataType.UNDEFINED)),
        ("NHWC", A.DataLayoutAttribute.get("NHWC")),
        ("Place(gpu:0)", A.PlaceAttribute.get("gpu:0")),
        ("tensor<2xi64>", A.TypeAttribute.get(DenseTensorType.get(i64, [2]))),
        ("[1,2]", A.ArrayAttribute.get([A.Int32Attribute.get(1), A.Int32Attribute.get(2)])),
        ("[]", A.ArrayAttribute.get([])),
    ],
)
def test_undeclared_attributes_are_guessed(literal, expected):
    attrs = one_op(f'() = "mystery.op" () {{key:{literal}}} : () -> ')
    assert attrs["key"] is expected


def test_negative_nan_keeps_its_sign():
    value = one_op('() = "mystery.op" () {key:-nan} : () -> ')["key"].value
    assert math.isnan(value) and math.copysign(1.0, value) == -1.0


def test_every_declared_kind_parses_and_prints_back():
    samples = {
        "bool": "true",
        "int32": "3",
        "int64": "5000000000",
        "float": "0.5",
        "double": "2.5",
        "str": '"s"',
        "type": "tensor<2xf32>",
        "int_array": "[1,2]",
        "data_type": "int64",
        "place": "Place(gpu:0)",
        "data_layout": "NHWC",
        "scalar": "7",
        "array<bool>": "[true]",
        "array<int32>": "[1]",
        "array<int64>": "[2]",
        "array<float>": "[1.5]",
        "array<double>": "[2.5]",
        "array<str>": '["a"]',
        "array": '[1,"b"]',
    }
    assert set(samples) == set(ATTR_KINDS)
    keys = {kind.replace("<", "_").rstrip(">"): kind for kind in ATTR_KINDS}
    body = ",".join(f"{key}:{samples[keys[key]]}" for key in sorted(keys))
    text = program_text(f'() = "parsetest.kinds" () {{{body}}} : () -> ')
    program = parse_program(text)
    attrs = program.block.ops[0].attributes
    for key, kind in keys.items():
        assert attribute_matches(kind_from_name(kind), attrs[key]), (kind, attrs[key])
    assert isinstance(attrs["int32"], A.Int32Attribute)
    assert isinstance(attrs["array_float"].value[0], A.FloatAttribute)
    assert print_program(program) == text


def test_typed_prefixes_win_over_declarations():
    attrs = one_op(
        '(%0) = "parsetest.full" () {dtype:(pd_op.DataType)float32,shape:(pd_op.IntArray)[1],'
        "value:(Double)2} : () -> builtin.tensor<1xf32>"
    )
    assert attrs["value"] is A.DoubleAttribute.get(2.0)
    assert attrs["shape"] is A.IntArrayAttribute.get([1])
    norm = one_op(
        '(%0, %1, %2) = "parsetest.layer_norm" (<<NULL VALUE>>, <<NULL VALUE>>, <<NULL VALUE>>) '
        "{begin_norm_axis:(Int64)1,epsilon:(Double)1} : (<<NULL TYPE>>, <<NULL TYPE>>, <<NULL TYPE>>) "
        "-> builtin.tensor<8xf32>, builtin.tensor<8xf32>, builtin.tensor<8xf32>"
    )
    assert norm["begin_norm_axis"] is A.Int64Attribute.get(1)
    assert norm["epsilon"] is A.DoubleAttribute.get(1.0)
    items = one_op('() = "cinn_op.reduce_max" () {dim:[(Int64)-1],keep_dim:true} : () -> ')
    assert items["dim"] is A.ArrayAttribute.get([A.Int64Attribute.get(-1)])


def test_strings_unescape_only_quotes_as_paddle_prints_them():
    attrs = one_op(r'() = "mystery.op" () {name:"a\"b\c"} : () -> ')
    assert attrs["name"].value == 'a"b\\c'


@pytest.mark.parametrize(
    "op_name, key, literal, expected_class",
    [
        ("pd_op.layer_norm", "epsilon", "1e-05", A.FloatAttribute),
        ("pd_op.full", "shape", "[8,16]", A.IntArrayAttribute),
        ("pd_op.full", "dtype", "float32", A.DataTypeAttribute),
        ("pd_op.data", "place", "Place(cpu)", A.PlaceAttribute),
    ],
)
def test_registered_pd_op_declarations_are_used(op_name, key, literal, expected_class):
    op_def = lookup_op_def(op_name)
    spec = op_def.attr_spec(key) if op_def is not None else None
    if spec is None:
        pytest.skip(f"{op_name} is not declared with attribute '{key}' yet")
    attrs = one_op(f'() = "{op_name}" () {{{key}:{literal}}} : () -> ')
    assert isinstance(attrs[key], expected_class)
    assert attribute_matches(spec.kind, attrs[key])


# -- errors --------------------------------------------------------------------------------


def col_of(line: str, needle: str) -> int:
    """1-based column of `needle` in `line` (the op lines sit after a 4-space indent)."""
    return 4 + line.index(needle) + 1


LAYER_NORM = (
    '(%5, %6, %7) = "parsetest.layer_norm" (%0, <<NULL VALUE>>, <<NULL VALUE>>) '
    "{begin_norm_axis:1,epsilon:1e-05} : (tensor<2x3xf32>, <<NULL TYPE>>, <<NULL TYPE>>) "
    "-> tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>"
)


def bad_op(kind: str, op: str, needle: str, message: str, *, alone: bool = False):
    """An error case: `op` on line 3 after DATA (line 2 if `alone`), the error at `needle`."""
    lines = [op] if alone else [DATA, op]
    line = 2 if alone else 3
    return pytest.param(program_text(*lines), message, line, col_of(op, needle), id=kind)


ERROR_CASES = [
    bad_op("unexpected-character", RELU.replace("{}", "{@}"), "@", "unexpected character '@'"),
    bad_op(
        "expected-token",
        RELU.replace(" = ", " "),
        '"parsetest.relu"',
        "expected '=', found '\"parsetest.relu\"'",
    ),
    bad_op(
        "expected-comma-or-paren",
        RELU.replace("(%0)", "(%0 %0)"),
        "%0)",
        "expected ',' or ')' in the operand list, found '%0'",
    ),
    bad_op(
        "unterminated-string",
        DATA.replace('"x"', '"x'),
        '"x',
        "unterminated string: no closing '\"' on this line",
        alone=True,
    ),
    bad_op(
        "unknown-element-type",
        RELU.replace("-> tensor<2x3xf32>", "-> tensor<2x3xf33>"),
        "f33>",
        "unknown element type 'f33' in tensor type: expected one of b, i8, u8",
    ),
    bad_op(
        "bad-tensor-syntax",
        RELU.replace("(tensor<2x3xf32>)", "(tensor<2x3f32>)"),
        "f32>)",
        "bad tensor type syntax in 'tensor<2x3f32>': expected 'x' after dim 3, found 'f'",
    ),
    bad_op(
        "bad-tensor-character",
        RELU.replace("(tensor<2x3xf32>)", "(tensor<2,3xf32>)"),
        ",3x",
        "bad tensor type syntax: expected '>' to close 'tensor<', found ','",
    ),
    bad_op(
        "unclosed-tensor-type",
        RELU.replace("(tensor<2x3xf32>)", "(tensor<2x3xf32)"),
        ") ->",
        "bad tensor type syntax: expected '>' to close 'tensor<', found ')'",
    ),
    bad_op(
        "unclosed-place",
        DATA.replace("{", "{place:Place(cpu,"),
        ",dtype",
        "expected ')' to close 'Place(', found ','",
        alone=True,
    ),
    bad_op(
        "missing-element-type",
        RELU.replace("(tensor<2x3xf32>)", "(tensor<2x3x>)"),
        ">)",
        "expected an element type such as f32, found '>'",
    ),
    bad_op("undefined-value", RELU.replace("(%0)", "(%7)"), "%7", "undefined value %7"),
    bad_op(
        "value-defined-twice",
        DATA.replace('"x"', '"y"'),
        "%0",
        "value %0 is defined twice (first at line 2)",
    ),
    bad_op(
        "result-count",
        RELU.replace("(%1)", "(%1, %2)"),
        "->",
        "the op names 2 result(s) but lists 1 result type(s)",
    ),
    bad_op(
        "operand-count",
        RELU.replace("(tensor<2x3xf32>) ->", "() ->"),
        "() ->",
        "the op has 1 operand(s) but lists 0 operand type(s)",
    ),
    bad_op(
        "operand-type-mismatch",
        RELU.replace("(tensor<2x3xf32>)", "(tensor<3x2xf32>)"),
        "tensor<3x2xf32>)",
        "operand %0 has type tensor<2x3xf32>, but the operand types list tensor<3x2xf32>",
    ),
    bad_op(
        "null-operand-type-mismatch",
        RELU.replace("(tensor<2x3xf32>)", "(<<NULL TYPE>>)"),
        "<<NULL TYPE>>",
        "operand %0 has type tensor<2x3xf32>, but the operand types list <<NULL TYPE>>",
    ),
    bad_op(
        "declared-kind-float",
        LAYER_NORM.replace("1e-05", '"abc"'),
        '"abc"',
        "attribute 'epsilon' of parsetest.layer_norm: declared float, expected a number, "
        "found '\"abc\"'",
    ),
    bad_op(
        "declared-kind-data-type",
        DATA.replace("float32", "float99"),
        "float99",
        "attribute 'dtype' of parsetest.data: declared data_type, unknown data type 'float99'",
        alone=True,
    ),
    bad_op(
        "declared-kind-int-array",
        DATA.replace("[2,3]", "[2,3.5]"),
        "3.5",
        "expected an integer in the list, found '3.5'",
        alone=True,
    ),
    bad_op(
        "declared-kind-int32-range",
        LAYER_NORM.replace("axis:1", "axis:4294967296"),
        "4294967296",
        "attribute 'begin_norm_axis' of parsetest.layer_norm: declared int32, "
        "4294967296 does not fit an Int32 attribute",
    ),
    bad_op(
        "typed-kind-mismatch",
        LAYER_NORM.replace("1e-05", "(Double)true"),
        "true",
        "attribute 'epsilon' of parsetest.layer_norm: typed (Double), expected a number, "
        "found 'true'",
    ),
    bad_op(
        "undeclared-unknown-word",
        RELU.replace("{}", "{mode:fast}"),
        "fast",
        "attribute 'mode' of parsetest.relu: not declared, cannot tell the kind of 'fast'",
    ),
    bad_op(
        "duplicate-attribute",
        DATA.replace('name:"x"', 'name:"x",name:"y"'),
        'name:"y"',
        "duplicate attribute 'name'",
        alone=True,
    ),
    bad_op(
        "unknown-typed-prefix",
        RELU.replace("{}", "{k:(Foo)1}"),
        "Foo)",
        "unknown typed-attribute prefix '(Foo)': expected one of (Int32), (Int64)",
    ),
    bad_op(
        "unknown-type",
        RELU.replace("-> tensor<2x3xf32>", "-> tensr<2x3xf32>"),
        "tensr",
        "unknown type 'tensr<...>'",
    ),
    bad_op(
        "null-vector-item-type",
        RELU.replace("-> tensor<2x3xf32>", "-> vec[tensor<2x3xf32>,<<NULL TYPE>>]"),
        "<<NULL TYPE>>",
        "a vector item cannot have type <<NULL TYPE>>",
    ),
]


@pytest.mark.parametrize("text, message, line, col", ERROR_CASES)
def test_parse_errors(text, message, line, col):
    with pytest.raises(ParseError) as info:
        parse_program(text, "bad.pir")
    error = info.value
    assert message in error.message
    assert (error.line, error.col) == (line, col), error.message
    assert error.file == "bad.pir"
    assert error.source_line == text.split("\n")[line - 1]


@pytest.mark.parametrize(
    "text, message, line, col",
    [
        pytest.param("", "empty input: expected '{' to start a program", 1, 1, id="empty"),
        pytest.param(" \n\t\n", "empty input", 1, 1, id="only-whitespace"),
        pytest.param(
            program_text(DATA)[:-2],
            "missing closing '}' of the program opened at line 1, col 1: found end of input",
            2,
            5 + len(DATA),
            id="missing-brace",
        ),
        pytest.param(
            "{\n}\n}\n",
            "expected end of input after the program's closing '}', found '}'",
            3,
            1,
            id="text-after-brace",
        ),
        pytest.param("(%0)", "expected '{' to start a program, found '('", 1, 1, id="no-brace"),
        pytest.param(
            "{\n    %0\n}",
            "expected '(' to start an op or '}' to end the program, found '%0'",
            2,
            5,
            id="not-an-op",
        ),
        pytest.param(
            "{\n  (%0 = \n}",
            "expected ',' or ')' in the result list, found '='",
            2,
            7,
            id="result-list",
        ),
        pytest.param("{\n (%\n}", "expected a value number after '%'", 2, 3, id="bare-percent"),
    ],
)
def test_program_level_errors(text, message, line, col):
    with pytest.raises(ParseError) as info:
        parse_program(text)
    assert message in info.value.message
    assert (info.value.line, info.value.col) == (line, col)


def test_error_text_points_at_the_column():
    with pytest.raises(ParseError) as info:
        parse_program(program_text(DATA, RELU.replace("(%0)", "(%7)")), "p.pir")
    first, quoted, caret = str(info.value).split("\n")
    col = col_of(RELU, "%0)")
    assert first == f"p.pir:3:{col}: undefined value %7"
    assert quoted.strip() == RELU.replace("(%0)", "(%7)")
    assert caret.index("^") - 4 == col - 1


def test_deep_nesting_is_a_parse_error():
    deep = "[" * 200 + "]" * 200
    with pytest.raises(ParseError, match="nesting deeper than"):
        parse_program(program_text(f'() = "mystery.op" () {{k:{deep}}} : () -> '))
