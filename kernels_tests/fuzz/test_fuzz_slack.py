"""The program fuzzer's tolerance for ill-conditioned outputs (`fuzz_check.sensitivity`):
what rounding makes of a float32 answer is widened around, found from the reference's
own distance to the same program in float64 (`float64_shadow`)."""

from __future__ import annotations

import numpy as np
from fuzz_check import float64_shadow

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
