"""pd_op.group_norm and pd_op.instance_norm (cinn_py/ops/spatial_norm.py): the reference
against the formulas, the decomposition compiled on cuda-emu against the reference at odd
shapes, and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import Net

import cinn_py
from cinn_py.errors import ShapeError
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

F32 = DataType.FLOAT32


def _program(op: str, shape, channels: int, affine: bool, **attrs):
    program = Program()
    net = Net(program)
    x = net.data("x", shape, F32)
    scale = net.data("scale", (channels,), F32) if affine else None
    bias = net.data("bias", (channels,), F32) if affine else None
    results = net.op(op, x, scale, bias, **attrs)
    program.pinned_outputs = list(results)
    return program


def _feeds(shape, channels: int, affine: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    feeds = {"x": (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)}
    if affine:
        feeds["scale"] = rng.standard_normal(channels).astype(np.float32)
        feeds["bias"] = rng.standard_normal(channels).astype(np.float32)
    return feeds


def _check_compiled(program, feeds) -> None:
    want = run_reference(program, feeds)
    exe = cinn_py.compile(program, target="cuda-emu")
    got = list(exe.run(feeds).values())
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        result = compare(np.asarray(g), w)
        assert result.ok, f"result {i}: {result}"
    assert all(g.kind.value == "fused" for g in exe.groups if g.ops)


@pytest.mark.parametrize(
    ("shape", "groups", "data_format", "affine"),
    [
        ((3, 6, 7, 5), 3, "NCHW", True),
        ((1, 6, 33, 1), 2, "NCHW", False),
        ((2, 7, 3), 7, "NCHW", True),
        ((3, 5, 7, 6), 2, "NHWC", True),
    ],
)
def test_group_norm(shape, groups, data_format, affine):
    channels = shape[-1] if data_format == "NHWC" else shape[1]
    program = _program(
        "group_norm", shape, channels, affine, groups=groups, epsilon=1e-5, data_format=data_format
    )
    feeds = _feeds(shape, channels, affine)
    y, mean, variance = run_reference(program, feeds)
    x = feeds["x"].astype(np.float64)
    planes = np.moveaxis(x, -1, 1) if data_format == "NHWC" else x
    rows = planes.reshape(shape[0], groups, -1)
    np.testing.assert_allclose(mean, rows.mean(-1), rtol=1e-5)
    np.testing.assert_allclose(variance, rows.var(-1), rtol=1e-5)
    want = (rows - rows.mean(-1, keepdims=True)) / np.sqrt(rows.var(-1, keepdims=True) + 1e-5)
    want = want.reshape(planes.shape)
    if affine:
        per_channel = [1, channels] + [1] * (len(shape) - 2)
        want = want * feeds["scale"].reshape(per_channel) + feeds["bias"].reshape(per_channel)
    want = np.moveaxis(want, 1, -1) if data_format == "NHWC" else want
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    _check_compiled(program, feeds)


@pytest.mark.parametrize(("shape", "affine"), [((3, 5, 7, 9), True), ((2, 3, 33), False)])
def test_instance_norm(shape, affine):
    program = _program("instance_norm", shape, shape[1], affine, epsilon=1e-3)
    feeds = _feeds(shape, shape[1], affine, seed=1)
    y, saved_mean, saved_variance = run_reference(program, feeds)
    rows = feeds["x"].astype(np.float64).reshape(shape[0] * shape[1], -1)
    np.testing.assert_allclose(saved_mean, rows.mean(-1), rtol=1e-5)
    # Paddle saves 1 / sqrt(variance + epsilon), not the variance
    np.testing.assert_allclose(saved_variance, 1 / np.sqrt(rows.var(-1) + 1e-3), rtol=1e-5)
    assert y.shape == shape
    _check_compiled(program, feeds)


def test_groups_must_divide_the_channels():
    with pytest.raises(
        ShapeError, match=r"pd_op\.group_norm .*groups 4 must divide the 6 channels"
    ):
        _program("group_norm", (2, 6, 3, 3), 6, False, groups=4)
    with pytest.raises(
        ShapeError, match=r"pd_op\.group_norm .*groups 3 must divide the 4 channels"
    ):
        _program("group_norm", (2, 3, 3, 4), 4, False, groups=3, data_format="NHWC")


def test_scale_must_hold_one_value_per_channel():
    program = Program()
    net = Net(program)
    x = net.data("x", (2, 6, 3, 3), F32)
    scale = net.data("scale", (4,), F32)
    with pytest.raises(ShapeError, match=r"pd_op\.instance_norm .*scale has 4 elements for 6"):
        net.op("instance_norm", x, scale, None)
