"""Empty tensors: empty inputs give empty outputs on every target, as Paddle does.

Issue 14 found softmax / log_softmax / layer_norm / rms_norm of a [0, N] batch failing
to compile on cuda-emu, and the reference failing on flatten of [0, 3, 5], on
layer_norm of [0, 8] and on softmax over an empty axis. The `fold_empty_tensors` pass
replaces every op whose results are all empty by fulls, before decomposition (and again
once -1 dims are concrete); the reference computes its reshapes without inferring -1
next to a 0. A max / min over an empty axis has no value: both targets refuse it with a
ShapeError, as Paddle does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import ShapeError
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.pir.value import Value

F32 = DataType.FLOAT32
Make = Callable[[Builder, Value], object]


def _ints(b: Builder, values: list[int]) -> Value:
    return b.op("pd_op.full_int_array", value=values)


def _program(shape: list[int], make: Make, dtype: DataType = F32) -> Program:
    program = Program()
    b = Builder(program)
    make(b, b.op("pd_op.data", name="x", shape=shape, dtype=dtype))
    return program


CASES: dict[str, tuple[list[int], Make]] = {
    "softmax-0x8": ([0, 8], lambda b, x: b.op("pd_op.softmax", x, axis=-1)),
    "softmax-3x0": ([3, 0], lambda b, x: b.op("pd_op.softmax", x, axis=-1)),
    "softmax-3x0-axis0": ([3, 0], lambda b, x: b.op("pd_op.softmax", x, axis=0)),
    "log_softmax-0x8": ([0, 8], lambda b, x: b.op("pd_op.log_softmax", x, axis=-1)),
    "layer_norm-0x8": (
        [0, 8],
        lambda b, x: b.op("pd_op.layer_norm", x, None, None, epsilon=1e-5, begin_norm_axis=1),
    ),
    "layer_norm-3x0": (
        [3, 0],
        lambda b, x: b.op("pd_op.layer_norm", x, None, None, epsilon=1e-5, begin_norm_axis=1),
    ),
    "rms_norm-0x8": (
        [0, 8],
        lambda b, x: b.op("pd_op.rms_norm", x, None, normalized_shape=[8], epsilon=1e-5),
    ),
    "flatten-0x3x5": ([0, 3, 5], lambda b, x: b.op("pd_op.flatten", x, start_axis=1, stop_axis=2)),
    "reshape-0x3x5": ([0, 3, 5], lambda b, x: b.op("pd_op.reshape", x, _ints(b, [0, -1]))),
    "reshape-128x0-copy-dim": (  # found by the fuzzer: a 0 copies 0 from a zero-size x
        [128, 0],
        lambda b, x: b.op("pd_op.reshape", x, _ints(b, [0])),
    ),
    "exp-sum-empty-axis": (
        [3, 0],
        lambda b, x: b.op(
            "pd_op.sum",
            b.op("pd_op.exp", x),
            _ints(b, [1]),
            keepdim=False,
            dtype=DataType.UNDEFINED,
        ),
    ),
    "mean-empty-axis": (
        [3, 0],
        lambda b, x: b.op("pd_op.mean", x, _ints(b, [1]), keepdim=True),
    ),
    "relu-add-0x7": ([0, 7], lambda b, x: b.op("pd_op.add", b.op("pd_op.relu", x), x)),
}


@pytest.mark.parametrize("target", ["reference", "cuda-emu"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_empty_inputs_run_on_every_target(name: str, target: str) -> None:
    shape, make = CASES[name]
    program = _program(shape, make)
    want = cinn_py.compile(program, target="reference").run({"x": np.zeros(shape, np.float32)})
    got = cinn_py.compile(program, target=target).run({"x": np.zeros(shape, np.float32)})
    assert list(got) == list(want)
    for key, expected in want.items():
        assert got[key].shape == expected.shape
        np.testing.assert_array_equal(got[key], expected)


def test_empty_results_are_exactly_as_declared() -> None:
    """Shapes from Paddle 3.3.1 (probed): softmax keeps [3, 0], layer_norm of [0, 8]
    gives [0, 8] and statistics of [0], a sum over an empty axis gives zeros."""
    outs = cinn_py.compile(_program(*CASES["layer_norm-0x8"]), target="cuda-emu").run(
        {"x": np.zeros((0, 8), np.float32)}
    )
    assert [v.shape for v in outs.values()] == [(0, 8), (0,), (0,)]
    outs = cinn_py.compile(_program(*CASES["exp-sum-empty-axis"]), target="cuda-emu").run(
        {"x": np.zeros((3, 0), np.float32)}
    )
    np.testing.assert_array_equal(next(iter(outs.values())), np.zeros(3, np.float32))


def test_the_pass_replaces_ops_with_only_empty_results() -> None:
    program = _program([3, 0], lambda b, x: b.op("pd_op.exp", b.op("pd_op.softmax", x, axis=-1)))
    PassManager().run(program)
    assert print_program(program) == (
        "{\n"
        '    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),'
        "shape:[3,0]} : () -> tensor<3x0xf32>\n"
        '    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[3,0],value:0} : '
        "() -> tensor<3x0xf32>\n"
        "}\n"
    )


def test_a_dynamic_batch_fed_zero_rows() -> None:
    """-1 dims become 0 only at run time: the compiler folds again after specializing."""
    program = parse_program(
        "{\n"
        '    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),'
        "shape:[-1,8],stop_gradient:[true]} : () -> tensor<-1x8xf32>\n"
        '    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : '
        "(tensor<-1x8xf32>) -> tensor<-1x8xf32>\n"
        "}\n"
    )
    exe = cinn_py.compile(program, target="cuda-emu")
    assert exe.run({"x": np.zeros((0, 8), np.float32)})["%1"].shape == (0, 8)
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    want = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(exe.run({"x": x})["%1"], want / want.sum(1, keepdims=True), 1e-6)


@pytest.mark.parametrize("target", ["reference", "cuda-emu"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_and_min_over_an_empty_axis_are_refused(op: str, target: str) -> None:
    """Paddle 3.3.1: "Cannot perform reduction along an axis (0) that has a size of 0"."""
    program = _program([0, 3], lambda b, x: b.op(f"pd_op.{op}", x, _ints(b, [0]), keepdim=False))
    with pytest.raises(ShapeError, match=f"{op} over axis 0, which has size 0, has no value"):
        cinn_py.compile(program, target=target).run({"x": np.zeros((0, 3), np.float32)})


def test_layer_norm_of_empty_rows_with_a_dynamic_bias() -> None:
    """Found by the fuzzer: the decomposition reshaped the bias to the normalized dims
    [1, 0], whose 0 reads as "copy the input's dim" and failed to verify for a -1 bias.
    Rows of no elements give an empty `out`: scale and bias are not applied."""
    program = parse_program(
        "{\n"
        '    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),'
        "shape:[1,1,0]} : () -> tensor<1x1x0xf32>\n"
        '    (%1) = "pd_op.data" () {dtype:float32,name:"b",place:Place(undefined:0),'
        "shape:[-1]} : () -> tensor<-1xf32>\n"
        '    (%2, %3, %4) = "pd_op.layer_norm" (%0, <<NULL VALUE>>, %1) '
        "{begin_norm_axis:1,epsilon:1e-05} : (tensor<1x1x0xf32>, <<NULL TYPE>>, "
        "tensor<-1xf32>) -> tensor<1x1x0xf32>, tensor<1xf32>, tensor<1xf32>\n"
        "}\n"
    )
    feeds = {"x": np.zeros((1, 1, 0), np.float32), "b": np.zeros(0, np.float32)}
    want = cinn_py.compile(program, target="reference").run(feeds)
    got = cinn_py.compile(program, target="cuda-emu").run(feeds)
    assert [v.shape for v in got.values()] == [(1, 1, 0), (1,), (1,)]
    for key, expected in want.items():
        np.testing.assert_array_equal(got[key], expected)  # the statistics are NaN
