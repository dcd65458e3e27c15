"""The reference executor, op by op, and its handling of feeds, parameters and errors.

The expected numbers for every semantic question (integer division and remainder
signs, rounding, casts, NaN handling, pow, reductions' dtypes, argmax ties, softmax's
clipping, layer_norm, slicing bounds, ...) were printed by Paddle 3.3.1 itself (CPU
wheel, probe scripts in /work/paddle-venv); where Paddle differs from NumPy or from a
guess, the test says so. rms_norm has no CPU kernel in that wheel: its numbers follow
its CUDA kernel's formula. Ops are built with explicit result types, so these tests do
not depend on infer_meta.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cinn_py.errors import FeedError, ShapeError, UnsupportedOpError, VerifyError
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType, VectorType
from cinn_py.pir.value import Value
from cinn_py.reference import ReferenceExecutor, run_reference

NAN, INF = np.nan, np.inf
INT32_MIN = np.iinfo(np.int32).min


def T(short: str, *dims: int) -> DenseTensorType:
    """`T("f32", 2, 3)` is tensor<2x3xf32>."""
    return DenseTensorType.get(DataType.from_short(short), dims)


def type_of(array: np.ndarray) -> DenseTensorType:
    return DenseTensorType.get(DataType.from_numpy(array.dtype), array.shape)


class Prog:
    """A program under construction; feeds are named x0, x1, ... in order."""

    def __init__(self) -> None:
        self.program = Program()
        self.builder = Builder(self.program)
        self.feeds: dict[str, np.ndarray] = {}

    def feed(self, array: np.ndarray, type_: DenseTensorType | None = None) -> Value:
        name = f"x{len(self.feeds)}"
        type_ = type_ or type_of(array)
        self.feeds[name] = array
        attrs = {"name": name, "shape": list(type_.dims), "dtype": type_.data_type}
        return self.op("pd_op.data", [], attrs, type_).result(0)

    def ints(self, values: list[int]) -> Value:
        """A `full_int_array`, the usual producer of a shape or axes operand."""
        attrs = {"value": values, "dtype": DataType.INT64}
        return self.op("pd_op.full_int_array", [], attrs, T("i64", len(values))).result(0)

    def scalar(self, value: float, short: str = "f32") -> Value:
        """A one-element `full`, the usual producer of a Scalar operand."""
        attrs = {"shape": [1], "value": value, "dtype": DataType.from_short(short)}
        return self.op("pd_op.full", [], attrs, T(short, 1)).result(0)

    def op(
        self, name: str, operands: list[Value | None], attrs: dict[str, Any] | None, *types: Any
    ) -> Operation:
        return self.builder.create(name, operands, attrs or {}, list(types))

    def run(self, *fetch: Value, **kw: Any) -> list[np.ndarray]:
        return run_reference(self.program, self.feeds, fetch=list(fetch), **kw)


def run_op(
    name: str, inputs: list[np.ndarray | None], attrs: dict[str, Any] | None, *types: Any
) -> Any:
    """Runs one op on fed inputs (None: a null operand); returns its result(s)."""
    p = Prog()
    operands = [None if a is None else p.feed(a) for a in inputs]
    outs = p.run(*p.op(name, operands, attrs, *types).results)
    return outs[0] if len(outs) == 1 else outs


def f32(*values: Any) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def i32(*values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int32)


def check(got: np.ndarray, want: Any, rtol: float = 1e-6) -> None:
    """Same dtype and shape; floats within `rtol` (NaN where Paddle has NaN), the rest equal."""
    want = np.asarray(want, dtype=got.dtype)
    assert got.shape == want.shape, (got.shape, want)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-7, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


# -- integer and float arithmetic: the sign rules ------------------------------------------

A_INT = i32(7, -7, 7, -7, 5, -5, 0)
B_INT = i32(2, 2, -2, -2, 3, 3, 3)


def test_integer_divide_truncates_toward_zero() -> None:
    check(run_op("pd_op.divide", [A_INT, B_INT], None, T("i32", 7)), [3, -3, -3, 3, 1, -1, 0])


def test_integer_floor_divide_floors() -> None:
    check(run_op("pd_op.floor_divide", [A_INT, B_INT], None, T("i32", 7)), [3, -4, -4, 3, 1, -2, 0])


def test_integer_remainder_takes_the_divisor_sign() -> None:
    check(run_op("pd_op.remainder", [A_INT, B_INT], None, T("i32", 7)), [1, 1, -1, -1, 2, 1, 0])


def test_float_floor_divide_and_remainder() -> None:
    x = f32(7, -7, 7, -7, 5.5, -5.5, 0, -0.0)
    y = f32(2, 2, -2, -2, 3, 3, 3, 3)
    check(run_op("pd_op.floor_divide", [x, y], None, T("f32", 8)), [3, -4, -4, 3, 1, -2, 0, -0.0])
    rest = run_op("pd_op.remainder", [x, y], None, T("f32", 8))
    check(rest, [1, 1, -1, -1, 2.5, 0.5, 0, -0.0])
    assert np.signbit(rest[-1]), "Paddle keeps the dividend's sign on a zero remainder"


def test_float_division_by_zero() -> None:
    x, zero = f32(1, -1, 0), f32(0, 0, 0)
    check(run_op("pd_op.floor_divide", [x, zero], None, T("f32", 3)), [INF, -INF, NAN])
    check(run_op("pd_op.remainder", [x, zero], None, T("f32", 3)), [NAN, NAN, NAN])
    check(run_op("pd_op.divide", [x, zero], None, T("f32", 3)), [INF, -INF, NAN])


def test_binary_ops_broadcast() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = f32(10, 20, 30)
    check(run_op("pd_op.add", [x, y], None, T("f32", 2, 3)), x + y)
    check(run_op("pd_op.subtract", [x, y], None, T("f32", 2, 3)), x - y)
    check(run_op("pd_op.multiply", [x, y[None, :1]], None, T("f32", 2, 3)), x * 10)


def test_integer_add_wraps_like_int32() -> None:
    big = i32(2**31 - 1)
    check(run_op("pd_op.add", [big, i32(1)], None, T("i32", 1)), [INT32_MIN])


def test_maximum_minimum_propagate_nan() -> None:
    x, y = f32(NAN, 1, NAN, 3), f32(1, NAN, NAN, 2)
    check(run_op("pd_op.maximum", [x, y], None, T("f32", 4)), [NAN, NAN, NAN, 3])
    check(run_op("pd_op.minimum", [x, y], None, T("f32", 4)), [NAN, NAN, NAN, 2])


# -- pow, round, cast, scale, clip -------------------------------------------------------------


def test_pow_of_integers_truncates_the_exponent() -> None:
    x = i32(2, -3, 4)
    check(run_op("pd_op.pow", [x], {"y": 2.0}, T("i32", 3)), [4, 9, 16])
    check(run_op("pd_op.pow", [x], {"y": 2.7}, T("i32", 3)), [4, 9, 16])
    check(run_op("pd_op.pow", [x], {"y": 0.5}, T("i32", 3)), [1, 1, 1])


def test_pow_of_floats() -> None:
    check(run_op("pd_op.pow", [f32(-4, 4)], {"y": 0.5}, T("f32", 2)), [NAN, 2])


def test_pow_drops_the_sign_of_infinite_and_zero_bases() -> None:
    """Paddle's `pow` gives pow(-inf, 3) = +inf and pow(-0, -1) = +inf, where C's pow
    (and Paddle's `elementwise_pow`) give -inf for both."""
    x = f32(-INF, -0.0, -2, -INF)
    check(run_op("pd_op.pow", [x], {"y": 3.0}, T("f32", 4)), [INF, 0, -8, INF])
    check(run_op("pd_op.pow", [x], {"y": -1.0}, T("f32", 4)), [0, INF, -0.5, 0])
    check(run_op("pd_op.pow", [x], {"y": 0.5}, T("f32", 4)), [INF, 0, NAN, INF])
    y = f32(3, -1, 0.5, -1.5)
    check(run_op("pd_op.elementwise_pow", [x, y], None, T("f32", 4)), [-INF, -INF, NAN, 0])


def test_elementwise_pow() -> None:
    x, y = i32(2, -3, 4, 3), i32(3, 2, 0, 1)
    check(run_op("pd_op.elementwise_pow", [x, y], None, T("i32", 4)), [8, 9, 1, 3])
    got = run_op("pd_op.elementwise_pow", [f32(2, -8), f32(0.5, 1 / 3)], None, T("f32", 2))
    check(got, [1.4142135, NAN])


def test_round_is_half_to_even_in_paddle_3_3_1() -> None:
    x = f32(0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 1.25, -1.25, 0.125)
    check(
        run_op("pd_op.round", [x], {"decimals": 0}, T("f32", 10)),
        [0, 2, 2, -0.0, -2, -2, 2, 1, -1, 0],
    )
    check(
        run_op("pd_op.round", [x], {"decimals": 1}, T("f32", 10)),
        [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.5, 1.2, -1.2, 0.1],
    )
    check(
        run_op("pd_op.round", [x], {"decimals": 2}, T("f32", 10)),
        [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.5, 1.25, -1.25, 0.12],
    )
    check(
        run_op("pd_op.round", [f32(15, 25, -15, 149)], {"decimals": -1}, T("f32", 4)),
        [20, 20, -20, 150],
    )


def test_cast_float_to_int_truncates_saturates_and_takes_nan_to_zero() -> None:
    x = f32(1.7, -1.7, 2.5, -0.5, 1e10, NAN, INF, -INF)
    check(
        run_op("pd_op.cast", [x], {"dtype": DataType.INT32}, T("i32", 8)),
        [1, -1, 2, 0, 2**31 - 1, 0, 2**31 - 1, INT32_MIN],
    )
    check(
        run_op("pd_op.cast", [f32(-1, 300, 255.9)], {"dtype": DataType.UINT8}, T("u8", 3)),
        [0, 255, 255],
    )


def test_cast_to_bool_and_float16() -> None:
    check(
        run_op("pd_op.cast", [f32(0, -0.0, 0.1, NAN)], {"dtype": DataType.BOOL}, T("b", 4)),
        [False, False, True, True],
    )
    check(
        run_op("pd_op.cast", [i32(0, 2, -1)], {"dtype": DataType.BOOL}, T("b", 3)),
        [False, True, True],
    )
    got = run_op("pd_op.cast", [f32(70000, 1e-8, 0.1)], {"dtype": DataType.FLOAT16}, T("f16", 3))
    check(got, np.array([INF, 0, 0.1], np.float16))


def test_scale_bias_after_and_before() -> None:
    x = f32(1, -3, 4)
    check(
        run_op(
            "pd_op.scale",
            [x, None],
            {"scale": 2.0, "bias": 1.0, "bias_after_scale": True},
            T("f32", 3),
        ),
        [3, -5, 9],
    )
    check(
        run_op(
            "pd_op.scale",
            [x, None],
            {"scale": 2.0, "bias": 1.0, "bias_after_scale": False},
            T("f32", 3),
        ),
        [4, -4, 10],
    )


def test_scale_of_integers_truncates_scale_and_bias() -> None:
    x = i32(1, -3, 4)
    attrs = {"scale": 2.5, "bias": 1.7, "bias_after_scale": True}
    check(run_op("pd_op.scale", [x, None], attrs, T("i32", 3)), [3, -5, 9])
    attrs["bias_after_scale"] = False
    check(run_op("pd_op.scale", [x, None], attrs, T("i32", 3)), [4, -4, 10])


def test_scale_reads_its_factor_from_a_full_operand() -> None:
    p = Prog()
    x = p.feed(f32(1, -3, 4))
    out = p.op(
        "pd_op.scale", [x, p.scalar(2.0)], {"bias": 1.0, "bias_after_scale": True}, T("f32", 3)
    )
    check(p.run(out.result(0))[0], [3, -5, 9])


def test_clip_keeps_nan_and_truncates_integer_bounds() -> None:
    check(
        run_op("pd_op.clip", [f32(NAN, -5, 5), None, None], {"min": -1.0, "max": 1.0}, T("f32", 3)),
        [NAN, -1, 1],
    )
    check(
        run_op("pd_op.clip", [i32(-5, 0, 5), None, None], {"min": -1.5, "max": 2.5}, T("i32", 3)),
        [-1, 0, 2],
    )


# -- unary math and activations -----------------------------------------------------------

XG = f32(-3, -1, -0.5, 0, 0.5, 1, 3)
SPECIAL = f32(NAN, -INF, INF, -0.0)


def test_gelu_exact_and_tanh_forms() -> None:
    check(
        run_op("pd_op.gelu", [XG], {"approximate": False}, T("f32", 7)),
        [-0.004049689, -0.15865526, -0.15426877, 0, 0.34573123, 0.8413447, 2.9959502],
    )
    # Paddle evaluates 1 + tanh(...) in float32 (Eigen's tanh), losing digits near -3.
    check(
        run_op("pd_op.gelu", [XG], {"approximate": True}, T("f32", 7)),
        [-0.003637522, -0.15880796, -0.154286, 0, 0.345714, 0.841192, 2.9963627],
        rtol=1e-4,
    )


@pytest.mark.parametrize(
    ("name", "attrs", "want"),
    [
        ("pd_op.hardswish", {}, [-0.0, -0.33333334, -0.20833333, 0, 0.29166666, 0.6666667, 3]),
        (
            "pd_op.hardsigmoid",
            {"slope": 1 / 6, "offset": 0.5},
            [0, 0.3333333, 0.41666666, 0.5, 0.5833334, 0.6666667, 1],
        ),
        (
            "pd_op.silu",
            {},
            [-0.14227763, -0.26894143, -0.18877034, 0, 0.31122968, 0.7310586, 2.8577223],
        ),
        ("pd_op.leaky_relu", {"negative_slope": 0.1}, [-0.3, -0.1, -0.05, 0, 0.5, 1, 3]),
        ("pd_op.relu6", {}, [0, 0, 0, 0, 0.5, 1, 3]),
        ("pd_op.relu", {}, [0, 0, 0, 0, 0.5, 1, 3]),
    ],
)
def test_activation_values(name: str, attrs: dict[str, Any], want: list[float]) -> None:
    check(run_op(name, [XG], attrs, T("f32", 7)), want)


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("pd_op.relu", [0, 0, INF, 0]),
        ("pd_op.relu6", [NAN, 0, 6, -0.0]),
        ("pd_op.leaky_relu", [NAN, -INF, INF, -0.0]),
        ("pd_op.hardswish", [NAN, NAN, INF, -0.0]),
        ("pd_op.hardsigmoid", [NAN, 0, 1, 0.5]),
        ("pd_op.silu", [NAN, NAN, INF, -0.0]),
        ("pd_op.sigmoid", [NAN, 0, 1, 0.5]),
        ("pd_op.gelu", [NAN, NAN, INF, -0.0]),
        ("pd_op.tanh", [NAN, -1, 1, -0.0]),
        ("pd_op.abs", [NAN, INF, INF, 0]),
        ("pd_op.sign", [NAN, -1, 1, 0]),
        ("pd_op.floor", [NAN, -INF, INF, -0.0]),
    ],
)
def test_activations_on_nan_and_infinities(name: str, want: list[float]) -> None:
    """relu(NaN) is 0 in Paddle (`x > 0 ? x : 0`); the others keep or make NaN."""
    check(run_op(name, [SPECIAL], {}, T("f32", 4)), want)


def test_unary_math() -> None:
    x = f32(0.25, 1, 4)
    for name, fn in [
        ("exp", np.exp),
        ("expm1", np.expm1),
        ("log", np.log),
        ("log1p", np.log1p),
        ("log2", np.log2),
        ("sqrt", np.sqrt),
        ("sin", np.sin),
        ("cos", np.cos),
        ("tan", np.tan),
        ("square", np.square),
        ("ceil", np.ceil),
    ]:
        check(run_op(f"pd_op.{name}", [x], None, T("f32", 3)), fn(x))
    check(run_op("pd_op.rsqrt", [f32(0.25, 4, 0)], None, T("f32", 3)), [2, 0.5, INF])
    check(run_op("pd_op.reciprocal", [x], None, T("f32", 3)), [4, 1, 0.25])
    check(run_op("pd_op.erf", [f32(-1, 0, 0.5)], None, T("f32", 3)), [-0.8427007, 0, 0.5204999])
    check(run_op("pd_op.log", [f32(0, -1)], None, T("f32", 2)), [-INF, NAN])
    check(run_op("pd_op.sign", [i32(-3, 0, 5)], None, T("i32", 3)), [-1, 0, 1])
    check(run_op("pd_op.abs", [i32(-3, 2)], None, T("i32", 2)), [3, 2])


# -- comparisons, logic, where -----------------------------------------------------------------


def test_comparisons_broadcast_to_bool() -> None:
    x = np.array([[1, 2], [3, 4]], np.float32)
    y = f32(2, 2)
    for name, fn in [
        ("equal", np.equal),
        ("not_equal", np.not_equal),
        ("less_than", np.less),
        ("less_equal", np.less_equal),
        ("greater_than", np.greater),
        ("greater_equal", np.greater_equal),
    ]:
        check(run_op(f"pd_op.{name}", [x, y], None, T("b", 2, 2)), fn(x, y))


def test_logic_and_tests() -> None:
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    check(run_op("pd_op.logical_and", [a, b], None, T("b", 4)), [True, False, False, False])
    check(run_op("pd_op.logical_or", [a, b], None, T("b", 4)), [True, True, True, False])
    check(run_op("pd_op.logical_xor", [a, b], None, T("b", 4)), [False, True, True, False])
    check(run_op("pd_op.logical_not", [a], None, T("b", 4)), [False, False, True, True])
    check(run_op("pd_op.isnan", [SPECIAL], None, T("b", 4)), [True, False, False, False])
    check(run_op("pd_op.isinf", [SPECIAL], None, T("b", 4)), [False, True, True, False])
    check(run_op("pd_op.isfinite", [SPECIAL], None, T("b", 4)), [False, False, False, True])


def test_where() -> None:
    cond = np.array([[True, False], [False, True]])
    check(
        run_op("pd_op.where", [cond, f32(1, 2), f32(-1)], None, T("f32", 2, 2)), [[1, -1], [-1, 2]]
    )


# -- reductions ----------------------------------------------------------------------------------


def test_sum_of_int32_and_bool_is_int64() -> None:
    ints = np.array([[1, 0], [3, 4]], np.int32)
    check(run_op("pd_op.sum", [ints, None], {"axis": [], "keepdim": False}, T("i64")), 8)
    flags = np.array([[True, False], [True, True]])
    check(
        run_op("pd_op.sum", [flags, None], {"axis": [1], "keepdim": True}, T("i64", 2, 1)),
        [[1], [2]],
    )


def test_sum_with_int32_dtype_wraps() -> None:
    x = i32(2**31 - 1, 5)
    check(
        run_op("pd_op.sum", [x, None], {"axis": [0], "dtype": DataType.INT32}, T("i32")),
        -2147483644,
    )


def test_sum_axis_from_a_full_int_array_operand() -> None:
    p = Prog()
    x = p.feed(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = p.op("pd_op.sum", [x, p.ints([-1])], {"keepdim": False}, T("f32", 2)).result(0)
    check(p.run(out)[0], [3, 12])


def test_mean_of_integers_truncates_toward_zero() -> None:
    x = np.array([[-1, -2], [-4, -4]], np.int32)
    check(run_op("pd_op.mean", [x, None], {"axis": []}, T("i32")), -2)
    check(run_op("pd_op.mean", [x, None], {"axis": [1]}, T("i32", 2)), [-1, -4])
    check(run_op("pd_op.mean", [np.array([-7, 0], np.int64), None], {"axis": []}, T("i64")), -3)


def test_mean_max_min_prod_of_floats() -> None:
    x = np.array([[1, 2], [3, 4]], np.float32)
    check(run_op("pd_op.mean", [x, None], {"axis": [0]}, T("f32", 2)), [2, 3])
    check(run_op("pd_op.max", [x, None], {"axis": [0, 1], "keepdim": True}, T("f32", 1, 1)), [[4]])
    check(run_op("pd_op.min", [x, None], {"axis": []}, T("f32")), 1)
    check(
        run_op(
            "pd_op.prod",
            [x, None],
            {"axis": [1], "keepdim": False, "reduce_all": False},
            T("f32", 2),
        ),
        [2, 12],
    )
    check(
        run_op(
            "pd_op.prod", [x, None], {"axis": [0], "keepdim": False, "reduce_all": True}, T("f32")
        ),
        24,
    )


def test_max_min_reductions_propagate_nan() -> None:
    x = np.array([[1, NAN, 3], [2, 2, 1]], np.float32)
    check(run_op("pd_op.max", [x, None], {"axis": [1]}, T("f32", 2)), [NAN, 2])
    check(run_op("pd_op.min", [x, None], {"axis": [1]}, T("f32", 2)), [NAN, 1])


def test_float16_sum_accumulates_wider() -> None:
    """Paddle sums float16 in float32: 2048 + 1 + 1 is 2050, not float16's 2048."""
    x = np.array([2048, 1, 1], np.float16)
    check(run_op("pd_op.sum", [x, None], {"axis": []}, T("f16")), np.float16(2050))


def test_all_any() -> None:
    x = np.array([[True, False], [True, True]])
    check(run_op("pd_op.all", [x], {"axis": [1], "keepdim": False}, T("b", 2)), [False, True])
    check(run_op("pd_op.any", [x], {"axis": [], "keepdim": False}, T("b")), True)


def test_argmax_argmin_take_the_first_and_skip_nan() -> None:
    ties = np.array([[1, 3, 3], [2, 2, 2]], np.float32)
    attrs = {"axis": 1, "keepdims": False, "flatten": False, "dtype": DataType.INT64}
    check(run_op("pd_op.argmax", [ties, None], attrs, T("i64", 2)), [1, 0])
    check(
        run_op(
            "pd_op.argmin", [np.array([[1, 1, 3], [2, 2, 2]], np.float32), None], attrs, T("i64", 2)
        ),
        [0, 0],
    )
    nans = np.array([[1, NAN, 3], [NAN, 2, NAN]], np.float32)
    check(run_op("pd_op.argmax", [nans, None], attrs, T("i64", 2)), [2, 1])
    check(run_op("pd_op.argmin", [nans, None], attrs, T("i64", 2)), [0, 1])


def test_argmax_flatten_keepdims_and_int32() -> None:
    x = np.array([[1, 5, 5], [7, 2, 7]], np.float32)
    attrs = {"axis": 0, "keepdims": True, "flatten": True, "dtype": DataType.INT32}
    check(run_op("pd_op.argmax", [x, None], attrs, T("i32", 1, 1)), [[3]])
    attrs = {"axis": 0, "keepdims": False, "flatten": True, "dtype": DataType.INT64}
    check(run_op("pd_op.argmax", [x, None], attrs, T("i64")), 3)


@pytest.mark.parametrize(
    ("exclusive", "reverse", "want"),
    [
        (False, False, [1, 3, 6, 10]),
        (True, False, [0, 1, 3, 6]),
        (False, True, [10, 9, 7, 4]),
        (True, True, [9, 7, 4, 0]),
    ],
)
def test_cumsum(exclusive: bool, reverse: bool, want: list[float]) -> None:
    attrs = {"axis": 0, "flatten": False, "exclusive": exclusive, "reverse": reverse}
    check(run_op("pd_op.cumsum", [f32(1, 2, 3, 4), None], attrs, T("f32", 4)), want)
    check(run_op("pd_op.cumsum", [i32(1, 2, 3, 4), None], attrs, T("i32", 4)), want)


def test_cumsum_flatten() -> None:
    x = np.array([[1, 2], [3, 4]], np.float32)
    attrs = {"axis": -1, "flatten": True}
    check(run_op("pd_op.cumsum", [x, None], attrs, T("f32", 4)), [1, 3, 6, 10])


# -- softmax and normalization ------------------------------------------------------------------


def test_softmax_clips_the_shifted_input_at_minus_64() -> None:
    """Paddle's CPU softmax never gives exactly 0: e**-64 = 1.6e-28."""
    x = np.array([[-100, 0, -65, -63]], np.float32)
    check(
        run_op("pd_op.softmax", [x], {"axis": -1}, T("f32", 1, 4)),
        [[1.6038109e-28, 1, 1.6038109e-28, 4.3596101e-28]],
    )
    check(
        run_op("pd_op.softmax", [np.array([[NAN, 0]], np.float32)], {"axis": -1}, T("f32", 1, 2)),
        [[NAN, NAN]],
    )


def test_log_softmax_floors_at_minus_64() -> None:
    x = np.array([[-100, 0, -65], [-INF, 0, 0]], np.float32)
    check(
        run_op("pd_op.log_softmax", [x], {"axis": 1}, T("f32", 2, 3)),
        [[-64, 0, -64], [-64.693146, -0.6931472, -0.6931472]],
    )
    x = np.array([[-100, 0], [-INF, 0]], np.float32)
    check(
        run_op("pd_op.log_softmax", [x], {"axis": 0}, T("f32", 2, 2)),
        [[0, -0.6931472], [-64, -0.6931472]],
    )
    check(
        run_op("pd_op.log_softmax", [f32(1, 2, 3)], {"axis": 0}, T("f32", 3)),
        [-2.407606, -1.4076059, -0.40760595],
    )


def test_layer_norm_with_scale_and_bias() -> None:
    x = np.array([[1, 2, 3, 4], [2, 4, 6, 9]], np.float32)
    out, mean, variance = run_op(
        "pd_op.layer_norm",
        [x, f32(1, 2, 1, 2), f32(0, 0, 1, 1)],
        {"epsilon": 1e-5, "begin_norm_axis": 1},
        T("f32", 2, 4),
        T("f32", 2),
        T("f32", 2),
    )
    check(
        out,
        [
            [-1.3416355, -0.89442366, 1.4472119, 3.683271],
            [-1.2567564, -0.9667357, 1.2900207, 3.9002073],
        ],
    )
    check(mean, [2.5, 5.25])
    check(variance, [1.25, 6.6875])


def test_layer_norm_without_scale_and_bias() -> None:
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    out, mean, variance = run_op(
        "pd_op.layer_norm",
        [x, None, None],
        {"epsilon": 1e-5, "begin_norm_axis": 1},
        T("f32", 2, 2, 3),
        T("f32", 2),
        T("f32", 2),
    )
    row = [-1.4638476, -0.8783086, -0.29276952, 0.29276952, 0.8783086, 1.4638476]
    check(out, np.array([row, row], np.float32).reshape(2, 2, 3))
    check(mean, [2.5, 8.5])
    check(variance, [2.9166667, 2.9166667])


def test_rms_norm() -> None:
    """No CPU kernel in Paddle 3.3.1; its CUDA kernel: y = x * rsqrt(mean(x^2) + eps) *
    scale, invvar = the rsqrt, over the trailing normalized_shape dims."""
    x = np.array([[1, 2, 2, 4], [3, 0, 0, 4]], np.float32)
    out, invvar = run_op(
        "pd_op.rms_norm",
        [x, f32(1, 2, 1, 0.5)],
        {"normalized_shape": [4], "epsilon": 0.0},
        T("f32", 2, 4),
        T("f32", 2),
    )
    check(invvar, [0.4, 0.4])
    check(out, [[0.4, 1.6, 0.8, 0.8], [1.2, 0, 0, 0.8]])


# -- matmul, embedding, dropout -------------------------------------------------------------------


def test_matmul_vectors_and_transposes() -> None:
    check(run_op("pd_op.matmul", [f32(1, 2), f32(3, 4)], {}, T("f32")), 11)
    y = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    check(run_op("pd_op.matmul", [f32(1, 2), y], {"transpose_x": True}, T("f32", 3)), [9, 12, 15])
    x = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    w = np.array([[1, 0, 1], [0, 1, 1]], np.float32)
    check(
        run_op("pd_op.matmul", [x, w], {"transpose_x": True, "transpose_y": True}, T("f32", 2, 2)),
        [[6, 8], [8, 10]],
    )


def test_matmul_batch_broadcasting_and_bmm() -> None:
    a = np.ones((2, 1, 3, 4), np.float32)
    c = np.ones((5, 4, 6), np.float32)
    check(run_op("pd_op.matmul", [a, c], {}, T("f32", 2, 5, 3, 6)), np.full((2, 5, 3, 6), 4))
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    check(
        run_op("pd_op.bmm", [x, x.transpose(0, 2, 1)], None, T("f32", 2, 2, 2)),
        x @ x.transpose(0, 2, 1),
    )


def test_embedding_zeroes_padding_rows() -> None:
    ids = np.array([[0, 2], [1, 0]], np.int64)
    table = np.arange(6, dtype=np.float32).reshape(3, 2)
    check(
        run_op("pd_op.embedding", [ids, table], {"padding_idx": 0}, T("f32", 2, 2, 2)),
        [[[0, 0], [4, 5]], [[2, 3], [0, 0]]],
    )
    check(
        run_op("pd_op.embedding", [ids[:1], table], {"padding_idx": -1}, T("f32", 1, 2, 2)),
        [[[0, 1], [4, 5]]],
    )


def test_embedding_id_out_of_range() -> None:
    with pytest.raises(ShapeError, match="index 3 is out of range \\[0, 3\\)"):
        run_op("pd_op.embedding", [np.array([3]), np.zeros((3, 2), np.float32)], {}, T("f32", 1, 2))


@pytest.mark.parametrize(
    ("mode", "scaled"), [("upscale_in_train", 1.0), ("downgrade_in_infer", 0.7)]
)
def test_dropout_in_inference(mode: str, scaled: float) -> None:
    attrs = {"p": 0.3, "is_test": True, "mode": mode}
    out, mask = run_op(
        "pd_op.dropout",
        [np.ones((2, 3), np.float32), None, None],
        attrs,
        T("f32", 2, 3),
        T("u8", 2, 3),
    )
    check(out, np.full((2, 3), scaled))
    check(mask, np.ones((2, 3)))


def test_dropout_in_training_is_unsupported() -> None:
    attrs = {"p": 0.3, "is_test": False, "mode": "upscale_in_train"}
    with pytest.raises(UnsupportedOpError, match="is_test=false"):
        run_op("pd_op.dropout", [f32(1), None, None], attrs, T("f32", 1), T("u8", 1))


# -- creation --------------------------------------------------------------------------------------


def test_full_converts_its_value_like_paddle() -> None:
    p = Prog()
    ints = p.op(
        "pd_op.full", [], {"shape": [3], "value": 2.7, "dtype": DataType.INT32}, T("i32", 3)
    )
    neg = p.op(
        "pd_op.full", [], {"shape": [2], "value": -2.7, "dtype": DataType.INT64}, T("i64", 2)
    )
    flags = p.op("pd_op.full", [], {"shape": [2], "value": 0.5, "dtype": DataType.BOOL}, T("b", 2))
    got = p.run(ints.result(0), neg.result(0), flags.result(0))
    check(got[0], [2, 2, 2])
    check(got[1], [-2, -2])
    check(got[2], [True, True])


def test_full_like_and_full_int_array() -> None:
    check(
        run_op(
            "pd_op.full_like",
            [i32(1, 2), None],
            {"value": 3.9, "dtype": DataType.INT32},
            T("i32", 2),
        ),
        [3, 3],
    )
    p = Prog()
    check(p.run(p.ints([4, -1, 0]))[0], np.array([4, -1, 0], np.int64))


def test_assign_copies() -> None:
    x = f32(1, 2)
    out = run_op("pd_op.assign", [x], None, T("f32", 2))
    check(out, [1, 2])
    assert out is not x


# -- shape manipulation ------------------------------------------------------------------------


def test_reshape_zero_copies_and_minus_one_infers() -> None:
    x = np.zeros((2, 3, 4), np.float32)
    assert run_op("pd_op.reshape", [x, None], {"shape": [0, -1]}, T("f32", 2, 12)).shape == (2, 12)
    p = Prog()
    out = p.op("pd_op.reshape", [p.feed(x), p.ints([4, 0, -1])], None, T("f32", 4, 3, 2))
    assert p.run(out.result(0))[0].shape == (4, 3, 2)


def test_reshape_shape_from_a_combine_of_fulls() -> None:
    p = Prog()
    x = p.feed(np.arange(6, dtype=np.float32))
    dims = [p.scalar(2, "i64"), p.scalar(3, "i64")]
    shape = p.op("builtin.combine", dims, None, VectorType.get([T("i64", 1), T("i64", 1)]))
    out = p.op("pd_op.reshape", [x, shape.result(0)], None, T("f32", 2, 3))
    check(p.run(out.result(0))[0], np.arange(6).reshape(2, 3))


def test_squeeze_unsqueeze_flatten() -> None:
    x = np.zeros((2, 3), np.float32)
    assert run_op("pd_op.unsqueeze", [x, None], {"axis": [-1, 0]}, T("f32", 1, 2, 3, 1)).shape == (
        1,
        2,
        3,
        1,
    )
    assert run_op("pd_op.unsqueeze", [x, None], {"axis": [0, 2]}, T("f32", 1, 2, 1, 3)).shape == (
        1,
        2,
        1,
        3,
    )
    y = np.zeros((2, 1, 3), np.float32)
    assert run_op("pd_op.squeeze", [y, None], {"axis": [0, 1]}, T("f32", 2, 3)).shape == (2, 3)
    assert run_op("pd_op.squeeze", [y[None], None], {"axis": []}, T("f32", 2, 3)).shape == (2, 3)
    z = np.zeros((2, 3, 4), np.float32)
    assert run_op(
        "pd_op.flatten", [z], {"start_axis": 1, "stop_axis": -1}, T("f32", 2, 12)
    ).shape == (2, 12)
    assert run_op(
        "pd_op.flatten", [np.float32(3)], {"start_axis": 0, "stop_axis": -1}, T("f32", 1)
    ).shape == (1,)


def test_transpose_expand_tile() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(run_op("pd_op.transpose", [x], {"perm": [1, 0]}, T("f32", 3, 2)), x.T)
    col = np.arange(3, dtype=np.float32).reshape(3, 1)
    check(
        run_op("pd_op.expand", [col, None], {"shape": [2, -1, 4]}, T("f32", 2, 3, 4)),
        np.broadcast_to(col, (2, 3, 4)),
    )
    check(
        run_op(
            "pd_op.tile",
            [np.array([[1, 2]], np.int32), None],
            {"repeat_times": [2, 1, 2]},
            T("i32", 2, 1, 4),
        ),
        [[[1, 2, 1, 2]], [[1, 2, 1, 2]]],
    )


def test_concat_stack_split() -> None:
    p = Prog()
    a, b = p.feed(np.zeros((2, 3), np.float32)), p.feed(np.ones((2, 1), np.float32))
    pair = p.op("builtin.combine", [a, b], None, VectorType.get([T("f32", 2, 3), T("f32", 2, 1)]))
    cat = p.op("pd_op.concat", [pair.result(0), p.scalar(-1, "i32")], None, T("f32", 2, 4))
    parts = VectorType.get([T("f32", 2, 1), T("f32", 2, 2), T("f32", 2, 1)])
    split = p.op(
        "pd_op.split", [cat.result(0), p.ints([1, -1, 1]), p.scalar(1, "i32")], None, parts
    )
    first, middle, last = p.op("builtin.split", [split.result(0)], None, *parts.types).results
    got = p.run(cat.result(0), first, middle, last, split.result(0))
    check(got[0], [[0, 0, 0, 1]] * 2)
    check(got[1], [[0], [0]])
    check(got[2], [[0, 0], [0, 0]])
    check(got[3], [[1], [1]])
    assert isinstance(got[4], list) and len(got[4]) == 3


def test_split_with_num_stack_and_builtin_slice() -> None:
    p = Prog()
    x = p.feed(np.arange(8, dtype=np.float32).reshape(2, 4))
    halves = VectorType.get([T("f32", 2, 2), T("f32", 2, 2)])
    split = p.op("pd_op.split_with_num", [x, None], {"num": 2, "axis": 1}, halves)
    second = p.op("builtin.slice", [split.result(0)], {"index": 1}, T("f32", 2, 2))
    stacked = p.op("pd_op.stack", [split.result(0)], {"axis": 0}, T("f32", 2, 2, 2))
    got = p.run(second.result(0), stacked.result(0))
    check(got[0], [[2, 3], [6, 7]])
    check(got[1], [[[0, 1], [4, 5]], [[2, 3], [6, 7]]])


@pytest.mark.parametrize(
    ("start", "end", "want"),
    [(3, 1, []), (-2, 100, [4, 5]), (-100, 2, [0, 1]), (4, -1, [4]), (6, 8, []), (-1, 0, [])],
)
def test_slice_clamps_like_paddle(start: int, end: int, want: list[float]) -> None:
    x = np.arange(6, dtype=np.float32)
    attrs = {"axes": [0], "starts": [start], "ends": [end], "infer_flags": [1], "decrease_axis": []}
    check(run_op("pd_op.slice", [x, None, None], attrs, T("f32", len(want))), want)


def test_slice_decrease_axis_and_operands() -> None:
    p = Prog()
    x = p.feed(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    attrs = {"axes": [0, 2], "infer_flags": [1, 1], "decrease_axis": [0]}
    out = p.op("pd_op.slice", [x, p.ints([1, -2]), p.ints([2, 2147483647])], attrs, T("f32", 3, 2))
    check(p.run(out.result(0))[0], np.arange(24).reshape(2, 3, 4)[1, :, -2:])


@pytest.mark.parametrize(
    ("start", "end", "stride", "want"),
    [
        (3, -1, -1, []),
        (-1, -7, -1, [5, 4, 3, 2, 1, 0]),
        (5, 0, -2, [5, 3, 1]),
        (10, -10, -1, [5, 4, 3, 2, 1, 0]),
        (-10, 10, 1, [0, 1, 2, 3, 4, 5]),
        (0, 6, 3, [0, 3]),
        (-2, 1, -1, [4, 3, 2]),
        (7, 3, -1, [5, 4]),
        (1, -100, -1, [1, 0]),
        (2147483647, -2147483648, -1, [5, 4, 3, 2, 1, 0]),
    ],
)
def test_strided_slice_like_paddle(start: int, end: int, stride: int, want: list[float]) -> None:
    x = np.arange(6, dtype=np.float32)
    attrs = {"axes": [0], "starts": [start], "ends": [end], "strides": [stride]}
    check(run_op("pd_op.strided_slice", [x, None, None, None], attrs, T("f32", len(want))), want)


def test_gather_along_an_axis() -> None:
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    check(
        run_op("pd_op.gather", [x, i32(2, 0, 2), None], {"axis": 1}, T("f32", 2, 3)),
        [[3, 1, 3], [6, 4, 6]],
    )
    check(run_op("pd_op.gather", [x, i32(-1), None], {"axis": 0}, T("f32", 1, 3)), [[4, 5, 6]])
    with pytest.raises(ShapeError, match="index -3 is out of range \\[-2, 2\\)"):
        run_op("pd_op.gather", [x, i32(-3), None], {"axis": 0}, T("f32", 1, 3))


# -- reduced-precision dtypes ------------------------------------------------------------------


def bf16(*values: float) -> np.ndarray:
    return float32_to_bfloat16(np.array(values, np.float32))


def test_bfloat16_travels_as_bit_patterns_and_rounds_each_op() -> None:
    """1 + 2**-8 is a tie in bfloat16 (7 mantissa bits) and rounds to even: 1."""
    p = Prog()
    x = p.feed(bf16(1.0, 3.0), T("bf16", 2))
    y = p.feed(bf16(2**-8, 3.0), T("bf16", 2))
    total = p.op("pd_op.add", [x, y], None, T("bf16", 2)).result(0)
    square = p.op("pd_op.multiply", [x, x], None, T("bf16", 2)).result(0)
    widened = p.op("pd_op.cast", [total], {"dtype": DataType.FLOAT32}, T("f32", 2)).result(0)
    got = p.run(total, square, widened)
    assert got[0].dtype == np.uint16
    check(bfloat16_to_float32(got[0]), [1, 6])
    check(bfloat16_to_float32(got[1]), [1, 9])
    check(got[2], [1, 6])


def test_float16_rounds_each_op() -> None:
    """2048 + 1 is a tie in float16 and rounds to even: 2048."""
    x = np.array([2048, 1], np.float16)
    got = run_op("pd_op.add", [x, np.array([1, 2**-11], np.float16)], None, T("f16", 2))
    check(got, np.array([2048, 1], np.float16))


# -- the executor: feeds, parameters, fetch, errors -------------------------------------------


def test_default_fetch_is_the_program_outputs() -> None:
    p = Prog()
    x = p.feed(f32(1, 2))
    doubled = p.op("pd_op.scale", [x, None], {"scale": 2.0, "bias": 0.0}, T("f32", 2)).result(0)
    p.op("pd_op.exp", [x], None, T("f32", 2))
    got = run_reference(p.program, p.feeds)
    assert len(got) == 2
    check(got[0], [2, 4])
    p.op("pd_op.fetch", [doubled], {"name": "out", "col": 0}, T("f32", 2))
    got = run_reference(p.program, p.feeds)
    assert len(got) == 1
    check(got[0], [2, 4])


def test_parameters_from_the_program_or_the_caller() -> None:
    p = Prog()
    weight = p.op("builtin.parameter", [], {"parameter_name": "w"}, T("f32", 2)).result(0)
    p.program.parameters["w"] = f32(1, 2)
    check(run_reference(p.program, {}, fetch=[weight])[0], [1, 2])
    check(run_reference(p.program, {}, {"w": f32(5, 6)}, fetch=[weight])[0], [5, 6])
    with pytest.raises(FeedError, match="'w': expected float32 \\[2\\], got float64 \\[2\\]"):
        run_reference(p.program, {}, {"w": np.array([5.0, 6.0])}, fetch=[weight])


def test_set_parameter_then_parameter_reads_it() -> None:
    p = Prog()
    x = p.feed(f32(3, 4))
    p.op("builtin.set_parameter", [x], {"parameter_name": "state"})
    read = p.op("builtin.parameter", [], {"parameter_name": "state"}, T("f32", 2)).result(0)
    p.op("builtin.shadow_output", [read], {"output_name": "out"})
    check(run_reference(p.program, p.feeds)[0], [3, 4])
    assert "state" not in p.program.parameters


def test_missing_parameter() -> None:
    p = Prog()
    p.op("builtin.parameter", [], {"parameter_name": "w"}, T("f32", 2))
    with pytest.raises(FeedError, match="feed 'w'.*missing"):
        run_reference(p.program, {})


def test_feed_errors() -> None:
    p = Prog()
    x = p.feed(f32(1, 2), T("f32", -1))
    p.op("pd_op.exp", [x], None, T("f32", -1))
    check(run_reference(p.program, {"x0": f32(1, 2, 3)})[0], np.exp(f32(1, 2, 3)))
    with pytest.raises(FeedError, match="feed 'x0': expected float32 \\[-1\\], got nothing"):
        run_reference(p.program, {})
    with pytest.raises(FeedError, match="got float64 \\[2\\]"):
        run_reference(p.program, {"x0": np.array([1.0, 2.0])})
    with pytest.raises(FeedError, match="got float32 \\[1, 2\\]"):
        run_reference(p.program, {"x0": np.ones((1, 2), np.float32)})


def test_bfloat16_feed_must_be_bit_patterns() -> None:
    p = Prog()
    p.feed(bf16(1.0), T("bf16", 1))
    with pytest.raises(FeedError, match="bfloat16 \\(uint16 bit patterns\\) \\[1\\]"):
        run_reference(p.program, {"x0": f32(1)})


def test_unsupported_and_undeclared_ops() -> None:
    p = Prog()
    x = p.feed(f32(1))
    p.op("pd_op.no_such_op", [x], None, T("f32", 1))
    with pytest.raises(UnsupportedOpError, match="'pd_op.no_such_op' is not an op cinn_py knows"):
        ReferenceExecutor(p.program)


def test_a_result_that_contradicts_the_declared_type() -> None:
    p = Prog()
    x = p.feed(np.ones((2, 3), np.float32))
    p.op("pd_op.transpose", [x], {"perm": [1, 0]}, T("f32", 2, 3))
    with pytest.raises(
        ShapeError,
        match="pd_op.transpose .*has shape \\[3, 2\\], the program declares tensor<2x3xf32>",
    ):
        run_reference(p.program, p.feeds)
    assert run_reference(p.program, p.feeds, check_shapes=False)[0].shape == (3, 2)


def test_numpy_shape_errors_name_the_op() -> None:
    with pytest.raises(ShapeError, match="pd_op.add"):
        run_op("pd_op.add", [f32(1, 2), f32(1, 2, 3)], None, T("f32", 3))


def test_an_operand_dtype_numpy_cannot_compute() -> None:
    flags = np.array([True, False])
    with pytest.raises(UnsupportedOpError, match="pd_op.subtract.*fails on these operands"):
        run_op("pd_op.subtract", [flags, flags], None, T("b", 2))


def test_a_missing_mutable_attribute() -> None:
    with pytest.raises(VerifyError, match="neither operand #1 nor attribute 'shape'"):
        run_op("pd_op.reshape", [f32(1, 2), None], None, T("f32", 2))


def test_results_never_alias_feeds() -> None:
    x = f32(1, 2)
    out = run_op("pd_op.reshape", [x, None], {"shape": [2]}, T("f32", 2))
    out[0] = 7
    assert x[0] == 1
