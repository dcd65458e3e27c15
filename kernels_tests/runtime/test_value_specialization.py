"""Results whose shape depends on feed *values* (an arange whose bounds are fed): the
compiled program is specialised on those feeds' values, once per distinct value, and
every result matches the reference."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes.infer_shapes import DataDependentShape, specialize_shapes

PROGRAM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"start",place:Place(undefined:0),shape:[],stop_gradient:[true]} : () -> tensor<f32>
    (%1) = "pd_op.data" () {dtype:float32,name:"end",place:Place(undefined:0),shape:[],stop_gradient:[true]} : () -> tensor<f32>
    (%2) = "pd_op.data" () {dtype:float32,name:"step",place:Place(undefined:0),shape:[],stop_gradient:[true]} : () -> tensor<f32>
    (%3) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1],stop_gradient:[true]} : () -> tensor<-1xf32>
    (%4) = "pd_op.arange" (%0, %1, %2) {dtype:float32,place:Place(undefined:0),stop_gradient:[true]} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<-1xf32>
    (%5) = "pd_op.exp" (%4) {stop_gradient:[true]} : (tensor<-1xf32>) -> tensor<-1xf32>
    (%6) = "pd_op.relu" (%3) {stop_gradient:[true]} : (tensor<-1xf32>) -> tensor<-1xf32>
}
"""


def _feeds(start: float, end: float, step: float, n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(n)
    return {
        "start": np.array(start, np.float32),
        "end": np.array(end, np.float32),
        "step": np.array(step, np.float32),
        "x": rng.standard_normal(n).astype(np.float32),
    }


def test_fed_bounds_compile_once_per_value():
    program = parse_program(PROGRAM)
    exe = cinn_py.compile(program, "cuda-emu")
    reference = cinn_py.compile(program, "reference")
    cases = [(1.0, 7.5, 0.75, 7), (0.0, 3.0, 1.0, 33), (1.0, 7.5, 0.75, 3), (-2.0, 1.0, 0.5, 7)]
    for case in cases:
        feeds = _feeds(*case)
        got, want = exe.run(feeds), reference.run(feeds)
        assert got.keys() == want.keys()
        for key in want:
            assert got[key].shape == want[key].shape, (case, key)
            np.testing.assert_allclose(got[key], want[key], rtol=1e-6, atol=1e-6)
    assert got["%5"].shape == (6,)
    # shapes x of 7 and 33, bounds (1, 7.5, 0.75) twice: 4 runs, 4 distinct (shape, value) keys
    assert len(exe.runner._compiled) == 4
    exe.run(_feeds(1.0, 7.5, 0.75, 7))
    assert len(exe.runner._compiled) == 4


def test_specialize_shapes_names_the_op_and_the_feeds():
    program = parse_program(PROGRAM)
    with pytest.raises(DataDependentShape) as raised:
        specialize_shapes(program, {"start": (), "end": (), "step": (), "x": (5,)})
    assert raised.value.feeds == ("end", "start", "step")
    assert str(raised.value) == (
        "pd_op.arange (<string>:6, op #4, defining %4): its result tensor<-1xf32> has a "
        "shape that depends on the values of feeds 'end', 'start', 'step', not only on "
        "their shapes"
    )


def test_feed_values_become_constants():
    program = parse_program(PROGRAM)
    shapes = {"start": (), "end": (), "step": (), "x": (5,)}
    values = {k: v for k, v in _feeds(0.0, 4.0, 1.0, 5).items() if k != "x"}
    specialized = specialize_shapes(program, shapes, values)
    types = [str(op.result().type) for op in specialized.block if op.name == "pd_op.arange"]
    assert [op.name for op in specialized.block].count("pd_op.data") == 1
    assert len(types) <= 1  # a 4-element arange of constants may be folded to a constant
    assert specialized.block.ops[-2].result().type.dims == (4,)
