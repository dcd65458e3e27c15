"""Round trip: printing a parsed program gives back the text byte for byte.

Checked on every program Paddle printed for the fixtures (tools/gen_paddle_fixtures.py)
and on samples written out here: Paddle 3.x text with the spellings that are easy to
get wrong (`-nan`, `-0`, `1e+20`, a quote in a string, a null operand) and the older
typed format in the variants Paddle printed it (builtin./pd_op. tensor prefixes,
indents of 4, 1 and 0, value numbers with gaps).
"""

from __future__ import annotations

import os
from glob import glob

import pytest

from cinn_py.pir.parser import parse_file, parse_program
from cinn_py.pir.printer import print_program

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures")
FIXTURE_FILES = sorted(
    glob(os.path.join(FIXTURES, "programs", "*", "program.pir"))
    + glob(os.path.join(FIXTURES, "models", "*", "*.pir"))
)
NO_FIXTURES = pytest.param(
    None,
    marks=pytest.mark.skip(
        reason="no kernels_tests/fixtures/*/*/*.pir yet: generate them with "
        "tools/gen_paddle_fixtures.py (needs Paddle)"
    ),
    id="no-fixtures",
)


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=os.path.relpath(p, FIXTURES)) for p in FIXTURE_FILES] or [NO_FIXTURES],
)
def test_fixture_program_round_trips(path):
    """Fixtures hold `str(program)` exactly as Paddle printed it."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert print_program(parse_file(path)) == text


PADDLE_3_TEXT = r"""{
    (%0) = "pd_op.data" () {dtype:float32,name:"a\"b\c",place:Place(undefined:0),shape:[8,16],stop_gradient:[true]} : () -> tensor<8x16xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"im",place:Place(undefined:0),shape:[1,3,8,8],stop_gradient:[true]} : () -> tensor<1x3x8x8xf32>
    (%2) = "pd_op.data" () {dtype:float32,name:"w",place:Place(undefined:0),shape:[4,3,3,3],stop_gradient:[true]} : () -> tensor<4x3x3x3xf32>
    (%3) = "pd_op.gelu" (%0) {approximate:false,stop_gradient:[true]} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    (%4) = "pd_op.cast" (%0) {dtype:bool,stop_gradient:[true]} : (tensor<8x16xf32>) -> tensor<8x16xb>
    (%5) = "pd_op.full" () {dtype:float32,place:Place(undefined:0),shape:[1],stop_gradient:[true],value:-nan} : () -> tensor<1xf32>
    (%6) = "pd_op.full" () {dtype:float32,place:Place(undefined:0),shape:[1],stop_gradient:[true],value:nan} : () -> tensor<1xf32>
    (%7) = "pd_op.full" () {dtype:float32,place:Place(undefined:0),shape:[1],stop_gradient:[true],value:1e+20} : () -> tensor<1xf32>
    (%8) = "pd_op.full" () {dtype:float32,place:Place(undefined:0),shape:[1],stop_gradient:[true],value:1e-20} : () -> tensor<1xf32>
    (%9) = "pd_op.full" () {dtype:float32,place:Place(undefined:0),shape:[1],stop_gradient:[true],value:-0} : () -> tensor<1xf32>
    (%10) = "pd_op.full" () {dtype:float32,place:Place(undefined:0),shape:[1],stop_gradient:[true],value:1.23457e+08} : () -> tensor<1xf32>
    (%11) = "pd_op.full" () {dtype:bool,place:Place(undefined:0),shape:[1],stop_gradient:[true],value:3} : () -> tensor<1xb>
    (%12) = "pd_op.full" () {dtype:int64,place:Place(undefined:0),shape:[1],stop_gradient:[true],value:1.09951e+12} : () -> tensor<1xi64>
    (%15) = "pd_op.conv2d" (%1, %2) {data_format:"NHWC",dilations:[1,1],groups:1,padding_algorithm:"EXPLICIT",paddings:[0,0],stop_gradient:[true],strides:[1,1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x1x6x4xf32>
    (%16) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:0.1} : () -> tensor<1xf32>
    (%17, %18) = "pd_op.dropout" (%0, <<NULL VALUE>>, %16) {fix_seed:false,is_test:false,mode:"upscale_in_train",seed:0,stop_gradient:[true,true]} : (tensor<8x16xf32>, <<NULL TYPE>>, tensor<1xf32>) -> tensor<8x16xf32>, tensor<8x16xu8>
}
"""
"""Printed by Paddle 3.3.1 (the fixtures' Paddle), trimmed."""

TYPED_BUILTIN_PREFIX = """{
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[-1,-1],stop_gradient:[true]} : () -> builtin.tensor<-1x-1xf32>
    (%1) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Double)2} : () -> builtin.tensor<1xf32>
    (%2) = "pd_op.scale" (%0, %1) {bias:(Float)0,bias_after_scale:true,stop_gradient:[false]} : (builtin.tensor<-1x-1xf32>, builtin.tensor<1xf32>) -> builtin.tensor<-1x-1xf32>
    (%3) = "pd_op.data" () {dtype:(pd_op.DataType)float64,name:"_jst.0.args.0",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[4,5,6],stop_gradient:[false]} : () -> builtin.tensor<4x5x6xf64>
    (%4) = "pd_op.full_int_array" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),stop_gradient:[true],value:[(Int64)2,(Int64)1,(Int64)2]} : () -> builtin.tensor<3xi64>
    (%5) = "pd_op.full" () {dtype:(pd_op.DataType)int32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Double)1} : () -> builtin.tensor<1xi32>
    (%6) = "pd_op.split" (%3, %4, %5) {stop_gradient:[false]} : (builtin.tensor<4x5x6xf64>, builtin.tensor<3xi64>, builtin.tensor<1xi32>) -> vec[builtin.tensor<4x2x6xf64>,builtin.tensor<4x1x6xf64>,builtin.tensor<4x2x6xf64>]
    (%7, %8, %9) = "builtin.split" (%6) {stop_gradient:[false,false,false]} : (vec[builtin.tensor<4x2x6xf64>,builtin.tensor<4x1x6xf64>,builtin.tensor<4x2x6xf64>]) -> builtin.tensor<4x2x6xf64>, builtin.tensor<4x1x6xf64>, builtin.tensor<4x2x6xf64>
    (%10) = "builtin.combine" (%7, %9) {stop_gradient:[false]} : (builtin.tensor<4x2x6xf64>, builtin.tensor<4x2x6xf64>) -> vec[builtin.tensor<4x2x6xf64>,builtin.tensor<4x2x6xf64>]
    (%11) = "pd_op.concat" (%10, %5) {stop_gradient:[false]} : (vec[builtin.tensor<4x2x6xf64>,builtin.tensor<4x2x6xf64>], builtin.tensor<1xi32>) -> builtin.tensor<4x4x6xf64>
    (%12) = "pd_op.assign_value_" (%1) {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(undefined:0),shape:[(Int32)2,(Int32)2],stop_gradient:[true],values:[(Double)3,(Double)3,(Double)3,(Double)3]} : (builtin.tensor<1xf32>) -> builtin.tensor<1xf32>
    (%13) = "pd_op.conv2d" (%3, %3) {data_format:(pd_op.DataLayout)NCHW,stop_gradient:[false]} : (builtin.tensor<4x5x6xf64>, builtin.tensor<4x5x6xf64>) -> builtin.tensor<4x5x6xf64>
    () = "builtin.shadow_output" (%2) {output_name:"output_0"} : (builtin.tensor<-1x-1xf32>) -> 
}
"""  # noqa: W291  (Paddle ends an op with no results with "-> ")

TYPED_GAPS_AND_BF16 = """{
    (%2) = "builtin.parameter" () {parameter_name:"linear_0.w_0",persistable:[true],stop_gradient:[false]} : () -> builtin.tensor<8192x28672xbf16>
    (%38) = "pd_op.data" () {dtype:(pd_op.DataType)bfloat16,name:"linear_0.tmp_0",persistable:[false],place:(pd_op.Place)Place(gpu:0),shape:(pd_op.IntArray)[4096,1,28672],stop_gradient:[false]} : () -> builtin.tensor<4096x1x28672xbf16>
    (%50) = "pd_op.matmul" (%38, %2) {persistable:[false],stop_gradient:[false],transpose_x:false,transpose_y:true} : (builtin.tensor<4096x1x28672xbf16>, builtin.tensor<8192x28672xbf16>) -> builtin.tensor<4096x1x8192xbf16>
    (%57) = "pd_op.c_allreduce_sum_" (%50) {event_to_record:"event_7989",events_to_wait:[],execution_stream:"auto_parallel_mp",force_record_event:false,persistable:[false],ring_id:(Int32)36,stop_gradient:[false],use_calc_stream:true,use_model_parallel:true} : (builtin.tensor<4096x1x8192xbf16>) -> builtin.tensor<4096x1x8192xbf16>
    (%64) = "pd_op.full" () {dtype:(pd_op.DataType)int32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Float)0} : () -> builtin.tensor<1xi32>
    (%65) = "pd_op.split_with_num" (%57, %64) {num:(Int32)2,persistable:[false],stop_gradient:[false]} : (builtin.tensor<4096x1x8192xbf16>, builtin.tensor<1xi32>) -> vec[builtin.tensor<2048x1x8192xbf16>,builtin.tensor<2048x1x8192xbf16>]
    (%66) = "builtin.slice" (%65) {index:(Int32)0,persistable:[false],stop_gradient:[false]} : (vec[builtin.tensor<2048x1x8192xbf16>,builtin.tensor<2048x1x8192xbf16>]) -> builtin.tensor<2048x1x8192xbf16>
}
"""

TYPED_PD_OP_PREFIX_INDENT_1 = """{
 (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"_jst.0.x.0",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[64,128],stop_gradient:[false]} : () -> pd_op.tensor<64x128xf32>
 (%1) = "cinn_op.reduce_max" (%0) {dim:[(Int64)-1],keep_dim:true,stop_gradient:[false]} : (pd_op.tensor<64x128xf32>) -> pd_op.tensor<64x1xf32>
 (%2) = "pd_op.subtract" (%0, %1) {stop_gradient:[false]} : (pd_op.tensor<64x128xf32>, pd_op.tensor<64x1xf32>) -> pd_op.tensor<64x128xf32>
 (%3) = "pd_op.exp" (%2) {stop_gradient:[false]} : (pd_op.tensor<64x128xf32>) -> pd_op.tensor<64x128xf32>
}
"""

TYPED_INDENT_0 = """{
(%0) = "pd_op.data" () {dtype:(pd_op.DataType)float64,name:"_jst.0.args.0",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[5,1,4,5],stop_gradient:[false]} : () -> builtin.tensor<5x1x4x5xf64>
(%1) = "pd_op.data" () {dtype:(pd_op.DataType)float64,name:"_jst.0.args.1",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[5,2,4,5],stop_gradient:[false]} : () -> builtin.tensor<5x2x4x5xf64>
(%3) = "pd_op.full" () {dtype:(pd_op.DataType)int32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Double)1} : () -> builtin.tensor<1xi32>
(%4) = "builtin.combine" (%0, %1) {stop_gradient:[false]} : (builtin.tensor<5x1x4x5xf64>, builtin.tensor<5x2x4x5xf64>) -> vec[builtin.tensor<5x1x4x5xf64>,builtin.tensor<5x2x4x5xf64>]
(%5) = "pd_op.concat" (%4, %3) {stop_gradient:[false]} : (vec[builtin.tensor<5x1x4x5xf64>,builtin.tensor<5x2x4x5xf64>], builtin.tensor<1xi32>) -> builtin.tensor<5x3x4x5xf64>
}
"""

SAMPLES = {
    "paddle-3": PADDLE_3_TEXT,
    "typed-builtin-prefix": TYPED_BUILTIN_PREFIX,
    "typed-gaps-and-bf16": TYPED_GAPS_AND_BF16,
    "typed-pd_op-prefix-indent-1": TYPED_PD_OP_PREFIX_INDENT_1,
    "typed-indent-0": TYPED_INDENT_0,
}


@pytest.mark.parametrize("text", SAMPLES.values(), ids=SAMPLES.keys())
def test_sample_round_trips(text):
    assert print_program(parse_program(text)) == text


@pytest.mark.parametrize(
    "name, typed, prefix, indent",
    [
        ("paddle-3", False, "builtin", 4),
        ("typed-builtin-prefix", True, "builtin", 4),
        ("typed-pd_op-prefix-indent-1", True, "pd_op", 1),
        ("typed-indent-0", True, "builtin", 0),
    ],
)
def test_sample_style_is_recorded(name, typed, prefix, indent):
    style = parse_program(SAMPLES[name]).text_style
    assert (style.typed, style.indent) == (typed, indent)
    if typed:
        assert style.tensor_prefix == prefix
