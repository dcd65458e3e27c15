"""Malformed text gives a ParseError, never another exception.

Valid programs are mutated (characters deleted, inserted, replaced, the text cut
short) and parsed: the parser must either succeed (and the program must then print)
or raise a ParseError whose line and column lie inside the text.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cinn_py.errors import ParseError
from cinn_py.pir.op_def import ATTR_KINDS, OpDef, attr, kind_from_name, operand, register_ops
from cinn_py.pir.parser import parse_program
from cinn_py.pir.printer import print_program

register_ops(
    "fuzztest",
    [
        OpDef(
            "fuzztest.every_kind",
            operands=(operand("x", optional=True), operand("y", optional=True)),
            attributes=tuple(
                attr(kind.replace("<", "_").rstrip(">"), kind_from_name(kind))
                for kind in ATTR_KINDS
            ),
            results=("out", "aux"),
        ),
    ],
)

UNTYPED = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"a\\"b",place:Place(undefined:0),shape:[-1,16],stop_gradient:[true]} : () -> tensor<-1x16xf32>
    (%1) = "builtin.parameter" () {parameter_name:"w",persistable:[true],stop_gradient:[false]} : () -> tensor<16xbf16>
    (%2, %3) = "fuzztest.every_kind" (%0, <<NULL VALUE>>) {array:[1,"b"],array_bool:[true],array_double:[2.5],array_float:[1.5],array_int32:[1],array_int64:[2],array_str:["a"],bool:true,data_layout:NHWC,data_type:int64,double:-nan,float:1e-05,int32:3,int64:5000000000,int_array:[1,2],place:Place(gpu:0),scalar:-0,str:"s",type:tensor<2xf32>} : (tensor<-1x16xf32>, <<NULL TYPE>>) -> tensor<f32>, tensor<2x3xb>
    (%4) = "builtin.combine" (%0, %0) {} : (tensor<-1x16xf32>, tensor<-1x16xf32>) -> vec[tensor<-1x16xf32>,tensor<-1x16xf32>]
    () = "builtin.shadow_output" (%2) {output_name:"out"} : (tensor<f32>) -> 
}
"""  # noqa: W291  (Paddle ends an op with no results with "-> ")

TYPED = """{
 (%0) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],value:(Double)2} : () -> builtin.tensor<1xf32>
 (%7, %8) = "fuzztest.every_kind" (%0, %0) {array_int64:[(Int64)-1],data_layout:(pd_op.DataLayout)NCHW,float:(Float)0,int32:(Int32)1} : (builtin.tensor<1xf32>, builtin.tensor<1xf32>) -> builtin.tensor<1xf32>, vec[builtin.tensor<1xi64>]
}
"""

BASES = [UNTYPED, TYPED]

PUNCTUATION = list('{}()[]<>,:=%"-.x0123456789abefilnstu \n\t\\')


def parses_or_raises_parse_error(text: str) -> None:
    try:
        program = parse_program(text, "fuzz.pir")
    except ParseError as error:
        lines = text.split("\n")
        assert 1 <= error.line <= len(lines)
        assert 1 <= error.col <= len(lines[error.line - 1]) + 1
        assert error.source_line == lines[error.line - 1]
        return
    print_program(program)


def test_bases_are_valid():
    for text in BASES:
        assert print_program(parse_program(text)) == text


@pytest.mark.parametrize("base", BASES, ids=["untyped", "typed"])
def test_every_truncation_and_single_deletion(base):
    for cut in range(len(base)):
        parses_or_raises_parse_error(base[:cut])
        parses_or_raises_parse_error(base[:cut] + base[cut + 1 :])


@st.composite
def mutated_texts(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(BASES))
    characters = st.sampled_from(PUNCTUATION) | st.characters()
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        if action == "delete":
            text = text[:pos] + text[pos + 1 :]
        elif action == "insert":
            text = text[:pos] + draw(characters) + text[pos:]
        elif action == "replace":
            text = text[:pos] + draw(characters) + text[pos + 1 :]
        else:
            end = draw(st.integers(pos, min(len(text), pos + 40)))
            text = text[:end] + text[pos:end] + text[end:]
    return text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_texts())
def test_mutated_text_parses_or_raises_parse_error(text):
    parses_or_raises_parse_error(text)
