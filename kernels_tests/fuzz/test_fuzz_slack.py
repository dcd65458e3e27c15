"""The program fuzzer's tolerance for ill-conditioned outputs (`fuzz_check.sensitivity`):
what rounding makes of a float32 answer is widened around, found from the reference's
own distance to the same program in float64 (`float64_shadow`)."""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_case import FuzzCase, InputSpec
from fuzz_check import FuzzFailure, check_case, float64_shadow

import cinn_py
from cinn_py.pir.parser import parse_program

# sum(x - mean(x)) over rows of 1000 values near 55: exactly 0 for every x; in float32
# the mean's rounding, times 1000, is the whole answer (found by tools/fuzz.py --knobs,
# 2026-11-27: the compiled kernel's 3e-3 against the reference's -8e-4, both rounding).
CENTERED_SUM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[3,1000]} : () -> tensor<3x1000xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-1]} : () -> tensor<1xi64>
    (%2) = "pd_op.mean" (%0, %1) {keepdim:true} : (tensor<3x1000xf32>, tensor<1xi64>) -> tensor<3x1xf32>
    (%3) = "pd_op.subtract" (%0, %2) {} : (tensor<3x1000xf32>, tensor<3x1xf32>) -> tensor<3x1000xf32>
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-1]} : () -> tensor<1xi64>
    (%5) = "pd_op.sum" (%3, %4) {dtype:Undefined,keepdim:false} : (tensor<3x1000xf32>, tensor<1xi64>) -> tensor<3xf32>
}"""


def test_the_float64_shadow_measures_the_references_own_rounding():
    program = parse_program(CENTERED_SUM)
    x = (55 + np.random.default_rng(3).standard_normal((3, 1000))).astype(np.float32)
    want = cinn_py.compile(program, "reference").run({"x": x})
    (name,) = want
    shadow = float64_shadow(program, {"x": x}, want, {name: "float32"})
    assert shadow is not None and shadow[name].dtype == np.float32
    assert np.all(np.abs(shadow[name]) < 1e-6)  # the exact answer, 0, near enough
    assert np.max(np.abs(want[name])) > 1e-5  # the float32 reference's rounding: the slack
    assert float64_shadow(program, {"x": x}, want, {name: "float16"}) is None


def test_a_program_the_float64_text_cannot_run_gives_no_shadow():
    program = parse_program(CENTERED_SUM)
    x = np.ones((3, 1000), np.float32)
    assert (
        float64_shadow(program, {"y": x}, {"%5": np.zeros(3, np.float32)}, {"%5": "float32"})
        is None
    )


# Two programs the fuzzer flagged on 2026-11-28 that were rounding, not bugs; each drawn
# from its seed (the feeds of `FuzzCase.feeds`). A layer_norm of |x - sum(x)|: rows of 33
# values near 180 with a spread of 1, whose one-pass variance (E[x^2] - E[x]^2 in
# float32, by design) keeps the digits its summation order leaves: 1.2e-4 of 0.88
# between the kernel's order and NumPy's.
ONE_PASS_VARIANCE = (
    "norm",
    215,
    """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x0",place:Place(undefined:0),shape:[1000,33]} : () -> tensor<1000x33xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[0,1]} : () -> tensor<2xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:true} : (tensor<1000x33xf32>, tensor<2xi64>) -> tensor<1x1xf32>
    (%3) = "pd_op.subtract" (%0, %2) {} : (tensor<1000x33xf32>, tensor<1x1xf32>) -> tensor<1000x33xf32>
    (%4) = "pd_op.abs" (%3) {} : (tensor<1000x33xf32>) -> tensor<1000x33xf32>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-1]} : () -> tensor<1xi64>
    (%6) = "pd_op.min" (%3, %5) {keepdim:true} : (tensor<1000x33xf32>, tensor<1xi64>) -> tensor<1000x1xf32>
    (%7) = "pd_op.add" (%3, %6) {} : (tensor<1000x33xf32>, tensor<1000x1xf32>) -> tensor<1000x33xf32>
    (%8) = "pd_op.square" (%7) {} : (tensor<1000x33xf32>) -> tensor<1000x33xf32>
    (%9) = "pd_op.data" () {dtype:float32,name:"x1",place:Place(undefined:0),shape:[33]} : () -> tensor<33xf32>
    (%10, %11, %12) = "pd_op.layer_norm" (%4, %9, <<NULL VALUE>>) {begin_norm_axis:1,epsilon:0.1} : (tensor<1000x33xf32>, tensor<33xf32>, <<NULL TYPE>>) -> tensor<1000x33xf32>, tensor<1000xf32>, tensor<1000xf32>
}""",
)

# floor(x / exp(x * sum over a column of 64)): the float32 sum's rounding moves the
# quotient across an integer (-203 against -202) where NumPy's order did not.
FLOOR_OF_A_SUM = (
    "reduce",
    2,
    """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x0",place:Place(undefined:0),shape:[1,5]} : () -> tensor<1x5xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<1x5xf32>) -> tensor<1x5xf32>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[5]} : () -> tensor<1xi64>
    (%3) = "pd_op.reshape" (%0, %2) {} : (tensor<1x5xf32>, tensor<1xi64>) -> tensor<5xf32>
    (%4) = "pd_op.data" () {dtype:float32,name:"x1",place:Place(undefined:0),shape:[0,1000]} : () -> tensor<0x1000xf32>
    (%5) = "pd_op.data" () {dtype:float32,name:"x2",place:Place(undefined:0),shape:[3,64,256]} : () -> tensor<3x64x256xf32>
    (%6) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-2]} : () -> tensor<1xi64>
    (%7) = "pd_op.sum" (%5, %6) {dtype:Undefined,keepdim:true} : (tensor<3x64x256xf32>, tensor<1xi64>) -> tensor<3x1x256xf32>
    (%8) = "pd_op.multiply" (%5, %7) {} : (tensor<3x64x256xf32>, tensor<3x1x256xf32>) -> tensor<3x64x256xf32>
    (%9) = "pd_op.exp" (%8) {} : (tensor<3x64x256xf32>) -> tensor<3x64x256xf32>
    (%10) = "pd_op.rsqrt" (%0) {} : (tensor<1x5xf32>) -> tensor<1x5xf32>
    (%11) = "pd_op.floor_divide" (%5, %9) {} : (tensor<3x64x256xf32>, tensor<3x64x256xf32>) -> tensor<3x64x256xf32>
    (%12) = "pd_op.sigmoid" (%5) {} : (tensor<3x64x256xf32>) -> tensor<3x64x256xf32>
}""",
)


def _drawn(family: str, seed: int, text: str) -> FuzzCase:
    program = parse_program(text)
    inputs = tuple(
        InputSpec(
            str(op.attr("name")), op.result(0).tensor_type.dims, op.result(0).tensor_type.data_type
        )
        for op in program.data_ops()
    )
    return FuzzCase(family, program, inputs, seed)


@pytest.mark.parametrize("found", [ONE_PASS_VARIANCE, FLOOR_OF_A_SUM], ids=["variance", "floor"])
def test_a_float32_sums_order_is_within_the_slack(found, monkeypatch):
    """The float32 variants' sums moved by `summation_spread` either way cover another
    order's rounding; unmoved (NumPy's order alone), both cases fail."""
    case = _drawn(*found)
    check_case(case, isolate=False, knobs=False)
    monkeypatch.setattr("fuzz_check.summation_spread", lambda count: 0.0)
    with pytest.raises(FuzzFailure, match="mismatch"):
        check_case(case, isolate=False, knobs=False)
