"""Feeds and parameters at the API: conversions (NumPy, DLPack, scalars, bfloat16 bits)
and every FeedError, with its message."""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py.errors import FeedError
from cinn_py.pir.parser import parse_program
from cinn_py.runtime.feeds import check_feeds, check_params, feed_types, to_array

PROGRAM = parse_program("""{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,6],stop_gradient:[true]} : () -> tensor<-1x6xf32>
    (%1) = "pd_op.data" () {dtype:bfloat16,name:"b",place:Place(undefined:0),shape:[6],stop_gradient:[true]} : () -> tensor<6xbf16>
    (%2) = "builtin.parameter" () {parameter_name:"w",stop_gradient:[false]} : () -> tensor<6xf32>
    (%3) = "pd_op.cast" (%1) {dtype:float32,stop_gradient:[true]} : (tensor<6xbf16>) -> tensor<6xf32>
    (%4) = "pd_op.multiply" (%0, %3) {stop_gradient:[true]} : (tensor<-1x6xf32>, tensor<6xf32>) -> tensor<-1x6xf32>
    (%5) = "pd_op.add" (%4, %2) {stop_gradient:[true]} : (tensor<-1x6xf32>, tensor<6xf32>) -> tensor<-1x6xf32>
}
""")


def feeds(**changes):
    base = {"x": np.zeros((3, 6), np.float32), "b": np.zeros(6, np.uint16)}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def test_feeds_come_back_checked_in_program_order():
    checked = check_feeds(PROGRAM, {"b": np.ones(6, np.uint16), "x": np.ones((5, 6), np.float32)})
    assert list(checked) == ["x", "b"] and list(feed_types(PROGRAM)) == ["x", "b"]
    assert checked["x"].shape == (5, 6)  # a -1 dim takes any size


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            feeds(x=np.zeros((3, 6), np.float64)),
            r"feed 'x': expected float32 \[-1, 6\], got float64 \[3, 6\]",
        ),
        (
            feeds(x=np.zeros((3, 7), np.float32)),
            r"feed 'x': expected float32 \[-1, 6\], got float32 \[3, 7\]",
        ),
        (
            feeds(x=np.zeros(6, np.float32)),
            r"feed 'x': expected float32 \[-1, 6\], got float32 \[6\]",
        ),
        (
            feeds(b=np.zeros(6, np.float32)),
            r"feed 'b': expected bfloat16 \(uint16 bit patterns\) \[6\], got float32 \[6\]",
        ),
        (feeds(x=None), r"feed 'x': expected float32 \[-1, 6\], got nothing \(it is missing\)"),
        (
            feeds(y=np.zeros(1)),
            r"feed 'y': expected one of the program's feeds \(x, b\), got an unknown name",
        ),
        (feeds(x=object()), r"feed 'x': expected a NumPy, CuPy or DLPack array, got object"),
    ],
)
def test_feed_errors_name_the_feed_with_expected_and_got(given, message):
    with pytest.raises(FeedError, match=message):
        check_feeds(PROGRAM, given)


def test_parameters_are_checked_and_unknown_ones_refused():
    assert check_params(PROGRAM, None) == {}
    w = np.ones(6, np.float32)
    assert check_params(PROGRAM, {"w": w})["w"] is w
    with pytest.raises(FeedError, match=r"feed 'w': expected float32 \[6\], got float32 \[2, 3\]"):
        check_params(PROGRAM, {"w": w.reshape(2, 3)})
    with pytest.raises(
        FeedError, match=r"feed 'v': expected one of the program's parameters \(w\)"
    ):
        check_params(PROGRAM, {"v": w})


class DLPackOnly:
    """An array that offers nothing but the DLPack protocol (as torch or jax arrays do)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_scalars_and_lists_become_numpy():
    source = np.arange(6, dtype=np.float32).reshape(1, 6)
    converted = to_array("x", DLPackOnly(source))
    assert isinstance(converted, np.ndarray)
    np.testing.assert_array_equal(converted, source)
    assert np.shares_memory(converted, source)  # no copy on the host
    assert to_array("s", 2.5).dtype == np.float64 and to_array("l", [1, 2]).shape == (2,)
    checked = check_feeds(PROGRAM, feeds(x=DLPackOnly(np.ones((2, 6), np.float32))))
    assert checked["x"].shape == (2, 6)


def test_ml_dtypes_bfloat16_is_taken_as_its_bits():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    values = np.array([1.0, -2.0, 0.5, 3.0, 0.0, 8.0], dtype=ml_dtypes.bfloat16)
    checked = check_feeds(PROGRAM, feeds(b=values))
    assert checked["b"].dtype == np.uint16
    np.testing.assert_array_equal(checked["b"], values.view(np.uint16))


class RaisingArray:
    """An object whose conversion to an array fails, as a broken array-like would."""

    def __array__(self, *args, **kwargs):
        raise RuntimeError("cannot convert")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            [[1, 2], [3]],
            r"feed 'x': expected a rectangular list of numbers, got a ragged list "
            r"\(its rows differ in length\)",
        ),
        ([[1, "a"]], r"feed 'x': expected numbers or bools, got a list holding strings"),
        ([[None, 1.0]], r"feed 'x': expected numbers or bools, got a list holding None, float"),
        ([[object()]], r"feed 'x': expected numbers or bools, got a list holding object"),
        ([[2**70]], r"got a list holding integers too large for int64"),
        ([RaisingArray()], r"got a list NumPy cannot convert \(cannot convert\)"),
        ("abc", r"feed 'x': expected a NumPy, CuPy or DLPack array, got str"),
        ({1, 2}, r"feed 'x': expected a NumPy, CuPy or DLPack array, got set"),
        (np.array([object()] * 6), r"feed 'x': expected float32 \[-1, 6\], got object \[6\]"),
        (np.array([["a"] * 6]), r"feed 'x': expected float32 \[-1, 6\], got str \[1, 6\]"),
        (2.5, r"feed 'x': expected float32 \[-1, 6\], got float64 \[\]"),
        (np.zeros((2, 6), np.complex64), r"got complex64 \[2, 6\]"),
        (np.zeros((2, 6), ">f8"), r"got big-endian float64 \[2, 6\]"),
    ],
)
def test_python_values_that_are_no_tensor_are_feed_errors(value, message):
    with pytest.raises(FeedError, match=message):
        check_feeds(PROGRAM, feeds(x=value))


def test_feeds_and_params_must_be_mappings():
    with pytest.raises(
        FeedError, match=r"feed '<feeds>': expected a dict of arrays keyed by name, got a list"
    ):
        check_feeds(PROGRAM, [np.zeros((3, 6), np.float32)])
    with pytest.raises(FeedError, match=r"feed '<params>': expected a dict .*, got a tuple"):
        check_params(PROGRAM, ("w",))
    with pytest.raises(FeedError, match=r"feed 'x': .* got nothing \(it is missing\)"):
        check_feeds(PROGRAM, None)


def test_a_byte_swapped_array_of_the_right_type_is_taken():
    x = np.arange(12, dtype=">f4").reshape(2, 6)
    checked = check_feeds(PROGRAM, feeds(x=x))["x"]
    assert checked.dtype == np.float32 and checked.dtype.isnative
    np.testing.assert_array_equal(checked, x)


def test_rectangular_lists_of_the_right_kind_work():
    checked = check_params(PROGRAM, {"w": np.asarray([1.0] * 6, np.float32)})
    assert checked["w"].shape == (6,)
    assert to_array("x", [[True, False]]).dtype == np.bool_
