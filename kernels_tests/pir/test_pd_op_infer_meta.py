"""pd_op shape and dtype inference, built with the Builder as a user would.

Paddle-exactness is pinned case by case in test_pd_op_paddle_golden.py; these tests
read as a specification: broadcasting, reductions, reshape, matmul, slicing, split,
normalization, mutable attributes in each of their forms, and the error messages.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys

import pytest

from cinn_py.errors import VerifyError
from cinn_py.pir import Builder, Program, lookup_op_def, registered_op_names, verify_program
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes import fold_mutable_attributes
from cinn_py.pir.types import DenseTensorType, VectorType

F32, F16, BF16, F64 = DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT64
I32, I64, BOOL, U8 = DataType.INT32, DataType.INT64, DataType.BOOL, DataType.UINT8

REQUIRED_OPS = """
data fetch full full_like full_int_array assign scale cast add subtract multiply divide
floor_divide remainder maximum minimum pow elementwise_pow exp expm1 log log1p log2 sqrt
rsqrt abs sign floor ceil round sin cos tan tanh sigmoid relu relu6 silu gelu erf square
reciprocal clip leaky_relu hardswish hardsigmoid equal not_equal less_than less_equal
greater_than greater_equal logical_and logical_or logical_xor logical_not isnan isinf
isfinite where sum mean max min prod all any argmax argmin cumsum softmax log_softmax
layer_norm rms_norm transpose reshape squeeze unsqueeze flatten expand concat split
split_with_num slice strided_slice stack gather tile matmul bmm embedding dropout
""".split()
"""The ops the dialect must declare. Paddle 3.3.1 has no pd_op.broadcast_to:
paddle.broadcast_to builds pd_op.expand (and _C_ops has no broadcast_to)."""


class Net:
    """A program under construction, with one-line helpers for inputs and constants."""

    def __init__(self) -> None:
        self.program = Program()
        self.b = Builder(self.program)
        self._count = 0

    def data(self, dims, dtype=F32):
        self._count += 1
        return self.b.op("pd_op.data", name=f"x{self._count}", shape=list(dims), dtype=dtype)

    def ints(self, values):
        return self.b.op("pd_op.full_int_array", value=list(values))

    def scalar(self, value, dtype=I32):
        return self.b.op("pd_op.full", shape=[1], value=value, dtype=dtype)

    def vec(self, *values):
        return self.b.create("builtin.combine", list(values)).result()

    def op(self, op_name, /, *operands, **attrs):
        return self.b.op(f"pd_op.{op_name}", *operands, **attrs)

    def create(self, op_name, /, operands, **attrs) -> Operation:
        return self.b.create(f"pd_op.{op_name}", list(operands), attrs)


def dims(value) -> tuple[int, ...]:
    return value.type.dims


def dtype(value) -> DataType:
    return value.type.data_type


# -- registration ----------------------------------------------------------------------


def test_every_required_op_is_registered_with_infer_meta():
    registered = set(registered_op_names())
    missing = [n for n in REQUIRED_OPS if f"pd_op.{n}" not in registered]
    assert not missing
    for name in REQUIRED_OPS:
        assert lookup_op_def(f"pd_op.{name}").infer_meta is not None, name
    assert lookup_op_def("pd_op.broadcast_to") is None


def test_builder_programs_verify():
    net = Net()
    x = net.data([-1, 16])
    w = net.data([16, 4])
    h = net.op("matmul", x, w)
    h = net.op("add", h, net.data([4]))
    h = net.op("relu", h)
    s = net.op("sum", h, net.ints([1]), keepdim=True)
    out = net.op("divide", h, s)
    net.op("fetch", out, name="out", col=0)
    verify_program(net.program)
    assert dims(out) == (-1, 4)


def test_verifier_rejects_a_result_type_that_disagrees():
    net = Net()
    x = net.data([8, 16])
    wrong = DenseTensorType.get(F32, [8, 15])
    net.b.create("pd_op.relu", [x], {}, [wrong])
    with pytest.raises(VerifyError, match=r"result #0 has type tensor<8x15xf32>"):
        verify_program(net.program)


# -- elementwise -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "y", "out"),
    [
        ([8, 16], [16], (8, 16)),
        ([8, 1], [1, 16], (8, 16)),
        ([8, 16], [], (8, 16)),
        ([4, 1, 8], [3, 1], (4, 3, 8)),
        ([-1, 16], [8, 16], (8, 16)),  # -1 against n > 1 is n
        ([-1, 16], [1, 16], (-1, 16)),  # -1 against 1 stays -1
        ([-1, 1], [1, 16], (-1, 16)),
        ([5], [-1, 1, 1], (-1, 1, 5)),
        ([2, 0], [1], (2, 0)),
    ],
)
def test_broadcasting(x, y, out):
    net = Net()
    assert dims(net.op("add", net.data(x), net.data(y))) == out


def test_broadcast_mismatch_is_an_error():
    net = Net()
    with pytest.raises(VerifyError, match=r"cannot broadcast x \[2, 3\] with y \[3, 3\]"):
        net.op("multiply", net.data([2, 3]), net.data([3, 3]))


def test_result_dtypes():
    net = Net()
    x, i = net.data([4, 5]), net.data([4, 5], I32)
    assert dtype(net.op("add", i, i)) is I32
    for name in ("equal", "less_than", "greater_equal"):
        assert dtype(net.op(name, x, x)) is BOOL
    assert dtype(net.op("logical_and", x, x)) is BOOL
    for name in ("isnan", "isinf", "isfinite", "logical_not"):
        assert dtype(net.op(name, x)) is BOOL
    assert dtype(net.op("cast", x, dtype=F16)) is F16
    c = net.data([3], DataType.COMPLEX64)
    assert dtype(net.op("abs", c)) is F32


def test_ops_with_attributes_keep_the_input_type():
    net = Net()
    x = net.data([4, -1])
    for result in (
        net.op("scale", x, net.scalar(2.0, F32), bias=1.0, bias_after_scale=False),
        net.op("clip", x, net.scalar(-1.0, F32), net.scalar(1.0, F32)),
        net.op("pow", x, y=3.0),
        net.op("leaky_relu", x, negative_slope=0.1),
        net.op("gelu", x, approximate=True),
        net.op("hardsigmoid", x, slope=0.2, offset=0.5),
        net.op("round", x, decimals=2),
        net.op("relu6", x),
        net.op("hardswish", x),
    ):
        assert result.type is x.type
    verify_program(net.program)


def test_where_needs_equal_shapes():
    net = Net()
    cond, x = net.data([-1, 5], BOOL), net.data([4, 5])
    assert dims(net.op("where", cond, x, net.data([4, 5]))) == (4, 5)
    with pytest.raises(VerifyError, match="condition and x must have the same dims"):
        net.op("where", net.data([4, 1], BOOL), x, x)


# -- creation ---------------------------------------------------------------------------


def test_creation_ops():
    net = Net()
    x = net.data([-1, 3], F16)
    assert x.type is DenseTensorType.get(F16, [-1, 3])
    assert net.op("full", shape=[2, 3], value=1.5).type is DenseTensorType.get(F32, [2, 3])
    assert dims(net.op("full", shape=[], value=0, dtype=I64)) == ()
    assert net.ints([1, 2, 3]).type is DenseTensorType.get(I64, [3])
    assert net.op("full_like", x, net.scalar(0.0, F32)).type is x.type
    assert dtype(net.op("full_like", x, net.scalar(0.0, F32), dtype=I32)) is I32
    assert net.op("assign", x).type is x.type
    assert net.op("fetch", x, name="out", col=0).type is x.type
    with pytest.raises(VerifyError, match="negative size -1"):
        net.op("full", shape=[-1, 3], value=0.0)


# -- reductions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("axes", "keepdim", "out"),
    [
        ([1], False, (4, 6)),
        ([1], True, (4, 1, 6)),
        ([-1], False, (4, 5)),
        ([0, 2], False, (5,)),
        ([0, -1], True, (1, 5, 1)),
        ([], False, ()),  # an empty axis list reduces everything
        ([], True, (1, 1, 1)),
        ([0, 1, 2], False, ()),
    ],
)
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
def test_reduce_axes(name, axes, keepdim, out):
    net = Net()
    assert dims(net.op(name, net.data([4, 5, 6]), net.ints(axes), keepdim=keepdim)) == out


def test_sum_dtype():
    net = Net()
    axis = net.ints([1])
    promoted = {BOOL: I64, I32: I64, I64: I64, F16: F16, DataType.INT8: DataType.INT8, U8: U8}
    for source, result in promoted.items():
        assert dtype(net.op("sum", net.data([4, 5], source), axis)) is result
    assert dtype(net.op("sum", net.data([4, 5], I32), axis, dtype=F32)) is F32
    assert dtype(net.op("mean", net.data([4, 5], I32), axis)) is I32  # Paddle keeps it


def test_prod_reduce_all_and_all_any():
    net = Net()
    x, p = net.data([4, 5, 6]), net.data([4, 6], BOOL)
    assert dims(net.op("prod", x, net.ints([1]), keepdim=False, reduce_all=True)) == ()
    assert dims(net.op("prod", x, net.ints([1]), keepdim=True, reduce_all=False)) == (4, 1, 6)
    assert net.op("all", p, axis=[1]).type is DenseTensorType.get(BOOL, [4])
    assert net.op("any", p, axis=[], keepdim=True).type is DenseTensorType.get(BOOL, [1, 1])
    assert dims(net.op("all", p)) == ()


def test_reduce_with_axes_known_only_at_run_time():
    net = Net()
    x = net.data([4, 5, 6])
    axes = net.data([2], I64)  # a computed tensor of two axes
    assert dims(net.op("sum", x, axes)) == (-1,)
    assert dims(net.op("mean", x, axes, keepdim=True)) == (-1, -1, -1)
    unknown_count = net.data([-1], I64)
    assert dims(net.op("max", x, unknown_count)) == (-1, -1)


def test_reduce_errors():
    net = Net()
    x = net.data([4, 5])
    with pytest.raises(VerifyError, match=r"reduce axis 2 is out of range \[-2, 2\)"):
        net.op("sum", x, net.ints([2]))
    with pytest.raises(VerifyError, match="more than once"):
        net.op("mean", x, net.ints([0, -2]))


def test_argmax_argmin():
    net = Net()
    x = net.data([4, 5, 6])
    assert net.op("argmax", x, net.scalar(1, I64)).type is DenseTensorType.get(I64, [4, 6])
    assert dims(net.op("argmin", x, net.scalar(-1, I64), keepdims=True)) == (4, 5, 1)
    assert dims(net.op("argmax", x, net.scalar(0, I64), flatten=True)) == ()
    assert dims(net.op("argmax", x, net.scalar(0, I64), flatten=True, keepdims=True)) == (1, 1, 1)
    assert dtype(net.op("argmin", x, net.scalar(1, I64), dtype=I32)) is I32
    assert dims(net.op("argmax", x, net.data([1], I64))) == (-1, -1)
    with pytest.raises(VerifyError, match="dtype must be int32 or int64"):
        net.op("argmax", x, net.scalar(1, I64), dtype=F32)


def test_cumsum():
    net = Net()
    x = net.data([4, 5])
    assert net.op("cumsum", x, net.scalar(1)).type is x.type
    assert dims(net.op("cumsum", x, net.scalar(0), flatten=True, exclusive=True, reverse=True)) == (
        20,
    )
    assert dims(net.op("cumsum", net.data([-1, 5]), net.scalar(0), flatten=True)) == (-1,)
    with pytest.raises(VerifyError, match="axis 2 is out of range"):
        net.op("cumsum", x, net.scalar(2))


# -- reshape family -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "shape", "out"),
    [
        ([8, 16], [0, -1, 4], (8, 4, 4)),  # 0 copies the input dim, -1 is inferred
        ([8, 16], [-1], (128,)),
        ([8, 16], [2, 2, 2, 16], (2, 2, 2, 16)),
        ([-1, 16], [0, 4, 4], (-1, 4, 4)),
        ([-1, 16], [-1, 4], (-1, 4)),
        ([-1, 16], [0, -1], (-1, -1)),
        ([1, 1], [], ()),
        ([], [-1], (1,)),
        ([8, 0], [-1, 4], (0, 4)),
    ],
)
def test_reshape(x, shape, out):
    net = Net()
    assert dims(net.op("reshape", net.data(x), net.ints(shape))) == out


def test_reshape_errors():
    net = Net()
    x = net.data([8, 16])
    with pytest.raises(
        VerifyError, match=r"cannot reshape \[8, 16\] \(128 elements\) to \[7, 16\]"
    ):
        net.op("reshape", x, net.ints([7, 16]))
    with pytest.raises(VerifyError, match="not divisible by 3"):
        net.op("reshape", x, net.ints([3, -1]))
    with pytest.raises(VerifyError, match="more than one -1"):
        net.op("reshape", x, net.ints([-1, -1]))


def test_reshape_with_a_shape_partly_known():
    net = Net()
    x = net.data([8, 16])
    batch = net.data([], I64)  # e.g. a slice of pd_op.shape64
    shape = net.op("stack", net.vec(batch, net.op("full", shape=[], value=4, dtype=I64)), axis=0)
    assert dims(net.op("reshape", x, shape)) == (-1, 4)
    assert dims(net.op("reshape", x, net.data([3], I64))) == (-1, -1, -1)


def test_squeeze_unsqueeze_flatten():
    net = Net()
    x = net.data([1, 4, 1])
    assert dims(net.op("squeeze", x, net.ints([]))) == (4,)
    assert dims(net.op("squeeze", x, net.ints([0]))) == (4, 1)
    assert dims(net.op("squeeze", x, net.ints([1]))) == (1, 4, 1)  # not size 1: kept
    assert dims(net.op("squeeze", net.data([-1, 4]), net.ints([0]))) == (4,)
    y = net.data([4, 5])
    assert dims(net.op("unsqueeze", y, net.ints([0, 1]))) == (1, 1, 4, 5)
    assert dims(net.op("unsqueeze", y, net.ints([1, -1]))) == (4, 1, 5, 1)
    assert dims(net.op("unsqueeze", net.data([]), net.ints([0]))) == (1,)
    z = net.data([2, -1, 4])
    assert dims(net.op("flatten", z, start_axis=0, stop_axis=0)) == (2, -1, 4)
    assert dims(net.op("flatten", net.data([2, 3, 4]), start_axis=1, stop_axis=2)) == (2, 12)
    assert dims(net.op("flatten", z, start_axis=1, stop_axis=-1)) == (2, -1)
    assert dims(net.op("flatten", net.data([]), start_axis=0, stop_axis=-1)) == (1,)
    with pytest.raises(VerifyError, match="out of range"):
        net.op("squeeze", x, net.ints([3]))
    with pytest.raises(VerifyError, match="stop_axis 1 is before start_axis 2"):
        net.op("flatten", net.data([2, 3, 4]), start_axis=2, stop_axis=1)


def test_transpose():
    net = Net()
    x = net.data([2, 3, 4])
    assert dims(net.op("transpose", x, perm=[2, 0, 1])) == (4, 2, 3)
    assert dims(net.op("transpose", x, perm=[-1, 0, 1])) == (4, 2, 3)
    with pytest.raises(VerifyError, match="names axis 0 more than once"):
        net.op("transpose", x, perm=[0, 0, 1])


def test_expand_and_tile():
    net = Net()
    x = net.data([8, 1])
    assert dims(net.op("expand", x, net.ints([2, 8, 16]))) == (2, 8, 16)  # rank grows
    assert dims(net.op("expand", x, net.ints([-1, 16]))) == (8, 16)  # -1 keeps
    assert dims(net.op("expand", net.data([-1, 16]), net.ints([4, 16]))) == (4, 16)
    assert dims(net.op("expand", x, net.data([2], I64))) == (-1, -1)
    with pytest.raises(VerifyError, match="fewer than the input's rank"):
        net.op("expand", x, net.ints([16]))
    y = net.data([8, 16])
    assert dims(net.op("tile", y, net.ints([2, 1]))) == (16, 16)
    assert dims(net.op("tile", y, net.ints([2, 1, 3]))) == (2, 8, 48)
    assert dims(net.op("tile", net.data([-1, 16]), net.ints([2]))) == (-1, 32)


# -- concat, stack, split -------------------------------------------------------------------


def test_concat():
    net = Net()
    a, b = net.data([8, 16]), net.data([8, 4])
    assert dims(net.op("concat", net.vec(a, b), net.scalar(1))) == (8, 20)
    assert dims(net.op("concat", net.vec(a, b), net.scalar(-1))) == (8, 20)
    c = net.data([-1, 16])
    assert dims(net.op("concat", net.vec(c, a), net.scalar(0))) == (-1, 16)
    assert dims(net.op("concat", net.vec(net.data([8, -1]), b), net.scalar(1))) == (8, -1)
    assert dims(net.op("concat", net.vec(a, b), net.data([1], I32))) == (-1, -1)
    with pytest.raises(VerifyError, match="ranks differ"):
        net.op("concat", net.vec(a, net.data([8, 4, 1])), net.scalar(1))
    with pytest.raises(VerifyError, match="dim 1 differs"):
        net.op("concat", net.vec(a, b), net.scalar(0))


def test_stack():
    net = Net()
    a = net.data([8, 16])
    assert dims(net.op("stack", net.vec(a, net.data([-1, 16])), axis=1)) == (8, 2, 16)
    assert dims(net.op("stack", net.vec(a, a, a), axis=-1)) == (8, 16, 3)
    with pytest.raises(VerifyError, match="out of range"):
        net.op("stack", net.vec(a, a), axis=3)


def test_split_gives_a_vector():
    net = Net()
    x = net.data([8, 16])
    parts = net.op("split", x, net.ints([4, -1, 4]), net.scalar(1))
    f = DenseTensorType.get
    assert parts.type is VectorType.get([f(F32, [8, 4]), f(F32, [8, 8]), f(F32, [8, 4])])
    pieces = net.b.create("builtin.split", [parts]).results
    assert [dims(p) for p in pieces] == [(8, 4), (8, 8), (8, 4)]
    halves = net.op("split_with_num", x, net.scalar(0), num=2)
    assert [t.dims for t in halves.type.types] == [(4, 16), (4, 16)]
    unknown = net.op("split", net.data([-1, 16]), net.ints([4, -1]), net.scalar(0))
    assert [t.dims for t in unknown.type.types] == [(-1, 16), (-1, 16)]
    verify_program(net.program)
    with pytest.raises(VerifyError, match=r"add up to 8, not dim 1's size 16"):
        net.op("split", x, net.ints([4, 4]), net.scalar(1))
    with pytest.raises(VerifyError, match="does not split evenly into 3 parts"):
        net.op("split_with_num", x, net.scalar(1), num=3)


# -- slicing and gathering -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("axes", "starts", "ends", "decrease", "out"),
    [
        ([0], [2], [5], [], (3, 16)),
        ([0, 1], [2, 3], [5, 100], [], (3, 13)),  # ends are clamped
        ([1], [-4], [-1], [], (8, 3)),  # negative indices count from the end
        ([0], [1], [2], [0], (16,)),  # decrease_axis drops the sliced dim
        ([0], [-1], [2**31 - 1], [0], (16,)),
        ([1], [5], [2], [], (8, 0)),  # an empty range is an empty dim
        ([-1], [2], [4], [], (8, 2)),
    ],
)
def test_slice(axes, starts, ends, decrease, out):
    net = Net()
    x = net.data([8, 16])
    result = net.op(
        "slice",
        x,
        net.ints(starts),
        net.ints(ends),
        axes=axes,
        infer_flags=[1] * len(axes),
        decrease_axis=decrease,
    )
    assert dims(result) == out


def test_slice_of_unknown_sizes():
    net = Net()
    x = net.data([-1, 16])
    assert dims(net.op("slice", x, net.ints([1]), net.ints([3]), axes=[0], infer_flags=[1])) == (
        -1,
        16,
    )
    y = net.data([8, 16])
    starts = net.data([1], I64)
    assert dims(net.op("slice", y, starts, net.ints([5]), axes=[0], infer_flags=[-1])) == (-1, 16)


@pytest.mark.parametrize(
    ("starts", "ends", "strides", "out"),
    [
        ([2, 0], [5, 2**31 - 1], [1, 2], (3, 8)),
        ([7, 15], [1, 3], [-1, 2], (6, 0)),  # negative stride; an empty range
        ([-1, 0], [-(2**31), 16], [-1, 3], (8, 6)),  # reverse the whole axis
        ([-1, 0], [-100, 16], [-3, 1], (3, 16)),
    ],
)
def test_strided_slice(starts, ends, strides, out):
    net = Net()
    x = net.data([8, 16])
    result = net.op(
        "strided_slice", x, net.ints(starts), net.ints(ends), net.ints(strides), axes=[0, 1]
    )
    assert dims(result) == out


def test_strided_slice_errors():
    net = Net()
    x = net.data([8, 16])
    with pytest.raises(VerifyError, match="stride 0 on axis 0"):
        net.op("strided_slice", x, net.ints([0]), net.ints([4]), net.ints([0]), axes=[0])


def test_gather():
    net = Net()
    x, idx = net.data([8, 16, 4]), net.data([5], I64)
    assert dims(net.op("gather", x, idx, net.scalar(1))) == (8, 5, 4)
    assert dims(net.op("gather", x, idx, net.scalar(-1))) == (8, 16, 5)
    assert dims(net.op("gather", x, net.data([], I64), net.scalar(0))) == (16, 4)
    assert dims(net.op("gather", x, net.data([5, 1], I64), net.scalar(0))) == (5, 16, 4)
    with pytest.raises(VerifyError, match="index must be 0-D, 1-D or"):
        net.op("gather", x, net.data([2, 3, 1], I64), net.scalar(0))


# -- nn -------------------------------------------------------------------------------


def test_softmax_axes():
    net = Net()
    x = net.data([4, 5])
    assert net.op("softmax", x, axis=0).type is x.type
    assert net.op("log_softmax", x).type is x.type
    with pytest.raises(VerifyError, match=r"axis 2 is out of range \[-2, 2\)"):
        net.op("softmax", x, axis=2)


def test_layer_norm():
    net = Net()
    x = net.data([4, 8, 16])
    out, mean, var = net.op("layer_norm", x, net.data([16]), net.data([16]), begin_norm_axis=2)
    assert out.type is x.type
    assert mean.type is DenseTensorType.get(F32, [4, 8])  # the leading dims, not flattened
    assert var.type is mean.type
    _, mean, _ = net.op("layer_norm", x, None, None, begin_norm_axis=1)
    assert dims(mean) == (4,)
    _, mean, _ = net.op("layer_norm", net.data([4, 8, 16], BF16), None, None, begin_norm_axis=2)
    assert dtype(mean) is F32  # statistics of 16-bit floats are float32
    verify_program(net.program)
    with pytest.raises(VerifyError, match=r"begin_norm_axis 0 must be in \[1, 3\)"):
        net.op("layer_norm", x, None, None, begin_norm_axis=0)
    with pytest.raises(VerifyError, match="operand scale .*: must be 1-D"):
        net.op("layer_norm", x, net.data([8, 16]), None, begin_norm_axis=1)


def test_rms_norm():
    net = Net()
    x = net.data([4, 8, 16], F16)
    y, invvar = net.op("rms_norm", x, net.data([16], F16), normalized_shape=[16])
    assert y.type is x.type
    assert invvar.type is DenseTensorType.get(F32, [4, 8])
    _, invvar = net.op("rms_norm", x, None, normalized_shape=[8, 16])
    assert dims(invvar) == (4,)
    with pytest.raises(VerifyError, match="does not match the trailing dims"):
        net.op("rms_norm", x, None, normalized_shape=[15])


def test_dropout_and_embedding():
    net = Net()
    x = net.data([2, -1, 4])
    out, mask = net.op("dropout", x, None, net.scalar(0.5, F32), mode="upscale_in_train")
    assert out.type is x.type
    assert mask.type is DenseTensorType.get(U8, [2, -1, 4])
    verify_program(net.program)
    net.op("dropout", x, None, net.scalar(0.5, F32), mode="sometimes")
    with pytest.raises(VerifyError, match="mode must be one of"):
        verify_program(net.program)
    net = Net()
    table = net.data([10, 8], F16)
    looked_up = net.op("embedding", net.data([2, 3], I64), table, padding_idx=0)
    assert looked_up.type is DenseTensorType.get(F16, [2, 3, 8])
    assert dims(net.op("embedding", net.data([], I64), table)) == (8,)


@pytest.mark.parametrize(
    ("x", "y", "tx", "ty", "out"),
    [
        ([8, 16], [16, 4], False, False, (8, 4)),
        ([8, 16], [4, 16], False, True, (8, 4)),
        ([16, 8], [16, 4], True, False, (8, 4)),
        ([16], [16, 4], False, False, (4,)),  # a 1-D x is a row, dropped again
        ([8, 16], [16], False, False, (8,)),
        ([16], [16], False, False, ()),
        ([2, 8, 16], [16, 4], False, False, (2, 8, 4)),
        ([1, 8, 16], [3, 16, 4], False, False, (3, 8, 4)),  # batch dims broadcast
        ([-1, 8, 16], [3, 16, 4], False, False, (3, 8, 4)),
        ([2, 1, 8, 16], [3, 16, 4], False, False, (2, 1, 8, 4)),  # Paddle: higher rank wins
        ([-1, 16], [16, -1], False, False, (-1, -1)),
    ],
)
def test_matmul(x, y, tx, ty, out):
    net = Net()
    assert dims(net.op("matmul", net.data(x), net.data(y), transpose_x=tx, transpose_y=ty)) == out


def test_matmul_and_bmm_errors():
    net = Net()
    with pytest.raises(
        VerifyError, match=r"inner dims differ: x \[8, 16\] .* K=16, y \[15, 4\] .* K=15"
    ):
        net.op("matmul", net.data([8, 16]), net.data([15, 4]))
    with pytest.raises(VerifyError, match="rank >= 1"):
        net.op("matmul", net.data([]), net.data([3]))
    assert dims(net.op("bmm", net.data([-1, 8, 16]), net.data([4, 16, 2]))) == (4, 8, 2)
    with pytest.raises(VerifyError, match="x's width 16 is not y's height 15"):
        net.op("bmm", net.data([4, 8, 16]), net.data([4, 15, 2]))
    with pytest.raises(VerifyError, match="needs 3-D operands"):
        net.op("bmm", net.data([8, 16]), net.data([16, 2]))


# -- mutable attributes in each form ------------------------------------------------------


def test_folded_attributes_infer_like_their_operands():
    net = Net()
    x = net.data([4, 5, 6])
    s = net.op("sum", x, net.ints([1]))
    r = net.op("reshape", x, net.ints([0, -1]))
    c = net.op("concat", net.vec(x, x), net.scalar(2))
    t = net.op("transpose", c, perm=[2, 1, 0])
    net.op("fetch", s, name="s", col=0)
    net.op("fetch", r, name="r", col=1)
    net.op("fetch", t, name="t", col=2)
    before = [op.results[0].type for op in net.program.block if op.name.startswith("pd_op.")]
    assert fold_mutable_attributes(net.program) == 3
    verify_program(net.program)
    reduce_op = next(op for op in net.program.block if op.name == "pd_op.sum")
    assert reduce_op.operand_value(1) is None and reduce_op.attr("axis") == [1]
    after = [op.results[0].type for op in net.program.block if op.name.startswith("pd_op.")]
    assert after == before


def test_attribute_instead_of_an_operand():
    net = Net()
    x = net.data([4, 5])
    assert dims(net.create("sum", [x, None], axis=[0]).result()) == (5,)
    assert dims(net.create("concat", [net.vec(x, x), None], axis=1).result()) == (4, 10)
    with pytest.raises(VerifyError, match="operand axis .*: is missing"):
        net.create("sum", [x, None])


def test_combine_of_constants_is_a_known_shape():
    net = Net()
    x = net.data([8, 16])
    shape = net.vec(net.scalar(4, I64), net.scalar(-1, I64))
    assert dims(net.op("reshape", x, shape)) == (4, 32)


# -- real Paddle programs ------------------------------------------------------------------

_FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
_PROGRAMS = sorted(
    glob.glob(os.path.join(_FIXTURES, "programs", "*", "program.pir"))
    + glob.glob(os.path.join(_FIXTURES, "models", "*", "*.pir"))
)
_HAVE_PARSER = importlib.util.find_spec("cinn_py.pir.parser") is not None


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fixture_ops import marks_for  # noqa: E402


@pytest.mark.skipif(not _HAVE_PARSER, reason="cinn_py.pir.parser is not written yet")
@pytest.mark.skipif(not _PROGRAMS, reason="no fixture programs under kernels_tests/fixtures")
@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=marks_for(p, "verify"), id=os.path.relpath(p, _FIXTURES))
        for p in _PROGRAMS
    ],
)
def test_paddle_fixture_programs_verify(path):
    """Every op of every program real Paddle printed is declared and verifies: operand
    counts, attribute kinds and the result types Paddle inferred."""
    from cinn_py.pir.parser import parse_program

    with open(path, encoding="utf-8") as f:
        program = parse_program(f.read(), path)
    undeclared = sorted({op.name for op in program.ops() if lookup_op_def(op.name) is None})
    assert not undeclared
    verify_program(program)
