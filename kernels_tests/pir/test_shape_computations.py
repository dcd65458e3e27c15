"""Shapes a program computes (shape64 -> slice -> stack -> expand / reshape /
full_with_tensor / arange) become constants in `specialize_shapes`, and the ops that make
tensors from them, with their bad inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import ShapeError, VerifyError
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.pir.passes.infer_shapes import MAX_EVALUATED, specialize_shapes
from cinn_py.pir.types import DYNAMIC
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import run_reference

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _program(*lines: str):
    program = parse_program("{\n" + "\n".join(f"    {line}" for line in lines) + "\n}\n")
    verify_program(program)
    return program


def _data(number: int, name: str, dims: str, dtype: str = "float32", short: str = "f32") -> str:
    shape = "[" + dims.replace("x", ",") + "]" if dims else "[]"
    type_ = f"tensor<{dims}x{short}>" if dims else f"tensor<{short}>"
    return (
        f'(%{number}) = "pd_op.data" () {{dtype:{dtype},name:"{name}",'
        f"place:Place(undefined:0),shape:{shape},stop_gradient:[true]}} : () -> {type_}"
    )


def _ints(number: int, values: str) -> str:
    count = values.count(",") + 1
    return (
        f'(%{number}) = "pd_op.full_int_array" () {{dtype:int64,place:Place(cpu),'
        f"stop_gradient:[true],value:[{values}]}} : () -> tensor<{count}xi64>"
    )


def _full(
    number: int, value: float, dtype: str = "int64", short: str = "i64", shape: str = ""
) -> str:
    dims = f"[{shape}]" if shape else "[]"
    type_ = f"tensor<{shape}x{short}>" if shape else f"tensor<{short}>"
    return (
        f'(%{number}) = "pd_op.full" () {{dtype:{dtype},place:Place(cpu),shape:{dims},'
        f"stop_gradient:[true],value:{value}}} : () -> {type_}"
    )


def _dim(number: int, shape: int, rank: int, axis: int, first: int) -> list[str]:
    """`x.shape[axis]`: two full_int_arrays and a slice of the shape value %shape."""
    return [
        _ints(first, str(axis)),
        _ints(first + 1, str(axis + 1)),
        f'(%{number}) = "pd_op.slice" (%{shape}, %{first}, %{first + 1}) {{axes:[0],'
        "decrease_axis:[0],infer_flags:[1],stop_gradient:[true]} : "
        f"(tensor<{rank}xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<i64>",
    ]


STATIC_EXPAND = _program(
    _data(0, "x", "3x5"),
    _data(1, "r", "1x5"),
    '(%2) = "pd_op.shape64" (%0) {stop_gradient:[true]} : (tensor<3x5xf32>) -> tensor<2xi64>',
    *_dim(3, 2, 2, 0, 4),
    _full(6, -1),
    '(%7) = "builtin.combine" (%3, %6) {stop_gradient:[true]} : (tensor<i64>, tensor<i64>) '
    "-> vec[tensor<i64>,tensor<i64>]",
    '(%8) = "pd_op.stack" (%7) {axis:0,stop_gradient:[true]} : '
    "(vec[tensor<i64>,tensor<i64>]) -> tensor<2xi64>",
    '(%9) = "pd_op.expand" (%1, %8) {stop_gradient:[true]} : '
    "(tensor<1x5xf32>, tensor<2xi64>) -> tensor<-1x5xf32>",
    '(%10) = "pd_op.add" (%9, %0) {stop_gradient:[true]} : '
    "(tensor<-1x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>",
)
"""A static program whose expand Paddle printed with a -1 dim (its shape is computed)."""


def _specialized(program, shapes=None):
    return specialize_shapes(PassManager().run(program.clone()), shapes)


def test_shape_chain_becomes_constants_and_attributes():
    program = cinn_py.load(FIXTURES / "programs" / "op_shape_slice_expand" / "program.pir")
    static = _specialized(program, {"x": (3, 7, 5), "r": (1, 1, 5)})
    PassManager.from_names(["dead_code_elimination"]).run(static)
    names = [op.name for op in static.block]
    for gone in ("pd_op.shape64", "pd_op.slice", "pd_op.stack", "builtin.combine"):
        assert gone not in names
    assert all(DYNAMIC not in r.type.dims for op in static.block for r in op.results)
    expands = [op for op in static.block if op.name == "pd_op.expand"]
    assert [op.attr("shape") for op in expands] == [[3, 7, 5], [3, -1, -1]]
    assert all(op.operand_value(1) is None for op in expands)  # folded into the attribute
    # arange(0, x.shape[1]) of int64 is small enough to be evaluated itself
    (positions,) = [op for op in static.block if op.result(0).id_hint == 30]
    assert positions.attr("value") == list(range(7))
    fill = [op for op in static.block if op.name == "pd_op.full_with_tensor"]
    assert [op.attr("shape") for op in fill] == [[3, 7]]
    (ones,) = [op for op in static.block if op.result(0).id_hint == 27]  # small int32: evaluated
    assert (ones.name, ones.attr("shape"), ones.attr("value")) == ("pd_op.full", [7, 7], 1.0)


def test_expand_printed_dynamic_in_a_static_program_compiles():
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    r = np.linspace(-1, 1, 5, dtype=np.float32).reshape(1, 5)
    want = run_reference(STATIC_EXPAND, {"x": x, "r": r})
    got = cinn_py.compile(STATIC_EXPAND, target="cuda-emu").run({"x": x, "r": r})
    np.testing.assert_allclose(list(got.values())[-1], want[-1], rtol=1e-6)
    static = _specialized(STATIC_EXPAND)
    assert next(op for op in static.block if op.name == "pd_op.expand").attr("shape") == [3, -1]


def test_data_tensors_are_never_evaluated():
    """A slice of an integer feed reads data: it stays an op, whatever its size."""
    program = _program(
        _data(0, "ids", "4", "int64", "i64"),
        *_dim(1, 0, 4, 0, 2),
    )
    static = _specialized(program)
    assert "pd_op.slice" in [op.name for op in static.block]


def test_large_shape_values_are_not_evaluated():
    """A shape value of more than MAX_EVALUATED elements is left to run time."""
    rank = MAX_EVALUATED + 1
    dims = "x".join(["1"] * rank)
    program = _program(
        _data(0, "x", dims),
        f'(%1) = "pd_op.shape64" (%0) {{stop_gradient:[true]}} : (tensor<{dims}xf32>) '
        f"-> tensor<{rank}xi64>",
    )
    assert "pd_op.shape64" in [op.name for op in _specialized(program).block]


def _arange(start: float, end: float, step: float, dtype: str = "int64", short: str = "i64"):
    return _program(
        _full(0, start, "float64", "f64", "1"),
        _full(1, end, "float64", "f64", "1"),
        _full(2, step, "float64", "f64", "1"),
        f'(%3) = "pd_op.arange" (%0, %1, %2) {{dtype:{dtype},place:Place(undefined:0),'
        "stop_gradient:[true]} : (tensor<1xf64>, tensor<1xf64>, tensor<1xf64>) "
        f"-> tensor<-1x{short}>",
    )


def test_arange_lengths_follow_paddle():
    """Length in the result's dtype (float32: 3.2 / 0.4 is 8, not 9 as in double); bounds
    of an integer arange truncate; a step of the wrong sign gives an empty tensor."""
    for bounds, dtype, want in [
        ((0.5, 3.7, 0.4), ("float32", "f32"), 8),
        ((1, 8, 2), ("int64", "i64"), 4),
        ((0.5, 5.9, 1.7), ("int32", "i32"), 5),
        ((5, 0, 1), ("int64", "i64"), 0),
        ((0, 5, -1), ("float32", "f32"), 0),
    ]:
        program = _arange(*bounds, *dtype)
        arange = specialize_shapes(program).block.ops[-1]
        assert arange.result().type.dims == (want,), bounds
        assert run_reference(program, {})[-1].shape == (want,), bounds


def test_arange_step_zero_is_an_error():
    with pytest.raises(VerifyError, match=r"pd_op\.arange.*step must not be 0"):
        _arange(0, 5, 0)
    with pytest.raises(VerifyError, match=r"pd_op\.arange.*step must not be 0"):
        _arange(0.5, 2.9, 0.3, "int32", "i32")  # the step truncates to 0, as in Paddle


def test_arange_step_zero_from_a_feed_is_an_error():
    program = _program(
        _data(0, "step", ""),
        _full(1, 0, "float32", "f32", "1"),
        _full(2, 5, "float32", "f32", "1"),
        '(%3) = "pd_op.arange" (%1, %2, %0) {dtype:float32,place:Place(undefined:0),'
        "stop_gradient:[true]} : (tensor<1xf32>, tensor<1xf32>, tensor<f32>) -> tensor<-1xf32>",
    )
    with pytest.raises(ShapeError, match=r"pd_op\.arange.*step must not be 0"):
        run_reference(program, {"step": np.float32(0)})


def test_one_hot_index_out_of_range():
    program = _program(
        _data(0, "ids", "3", "int64", "i64"),
        _full(1, 5, "int32", "i32", "1"),
        '(%2) = "pd_op.one_hot" (%0, %1) {stop_gradient:[true]} : '
        "(tensor<3xi64>, tensor<1xi32>) -> tensor<3x5xf32>",
    )
    for bad in (5, -1):
        ids = np.array([0, bad, 2], dtype=np.int64)
        with pytest.raises(
            ShapeError, match=rf"pd_op\.one_hot.*index {bad} is out of range \[0, 5\)"
        ):
            run_reference(program, {"ids": ids})


def test_index_select_index_out_of_range():
    program = _program(
        _data(0, "x", "3x4"),
        _data(1, "i", "2", "int64", "i64"),
        '(%2) = "pd_op.index_select" (%0, %1) {axis:0,stop_gradient:[true]} : '
        "(tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>",
    )
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = run_reference(program, {"x": x, "i": np.array([-1, 0])})[-1]
    np.testing.assert_array_equal(out, x[[2, 0]])  # negative counts from the end
    for bad in (3, -4):
        with pytest.raises(
            ShapeError, match=rf"pd_op\.index_select.*index {bad} is out of range \[-3, 3\)"
        ):
            run_reference(program, {"x": x, "i": np.array([0, bad])})


def test_index_select_needs_a_vector_index():
    with pytest.raises(VerifyError, match=r"pd_op\.index_select.*1-D or \[n, 1\]"):
        _program(
            _data(0, "x", "3x4"),
            _data(1, "i", "1x2", "int64", "i64"),
            '(%2) = "pd_op.index_select" (%0, %1) {axis:0,stop_gradient:[true]} : '
            "(tensor<3x4xf32>, tensor<1x2xi64>) -> tensor<1x4xf32>",
        )


def test_tril_needs_rank_two():
    with pytest.raises(VerifyError, match=r"pd_op\.tril.*rank at least 2"):
        _program(
            _data(0, "x", "3"),
            '(%1) = "pd_op.tril" (%0) {diagonal:0,stop_gradient:[true]} : '
            "(tensor<3xf32>) -> tensor<3xf32>",
        )


def test_tril_mask_fuses_with_its_add():
    program = _program(
        _data(0, "x", "7x7"),
        _full(1, 1, "float32", "f32", "7,7").replace("tensor<7,7x", "tensor<7x7x"),
        '(%2) = "pd_op.tril" (%1) {diagonal:0,stop_gradient:[true]} : '
        "(tensor<7x7xf32>) -> tensor<7x7xf32>",
        '(%3) = "pd_op.add" (%0, %2) {stop_gradient:[true]} : '
        "(tensor<7x7xf32>, tensor<7x7xf32>) -> tensor<7x7xf32>",
    )
    exe = cinn_py.compile(program, target="cuda-emu")
    assert len(exe.kernels) == 1
    x = np.arange(49, dtype=np.float32).reshape(7, 7)
    np.testing.assert_array_equal(
        list(exe.run({"x": x}).values())[-1], x + np.tril(np.ones((7, 7)))
    )
