"""pd_op.bilinear_interp and pd_op.nearest_interp (cinn_py/ops/interp.py): Paddle's
float32 index rules, the size operands, the library fallback and the errors (the
lowering's odd-shape cases are in op_cases.py; the fixtures check against Paddle)."""

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
ATTRS = {"out_d": -1, "out_h": -1, "out_w": -1, "scale": [], "align_mode": 0}


def _program(op: str, shape, *operands, **attrs):
    program = Program()
    net = Net(program)
    x = net.data("x", shape, F32)
    built = [f(net) if callable(f) else f for f in operands or (None, None, None)]
    out = net.op(op, x, *built, **{**ATTRS, **attrs})
    return program, out


def test_nearest_follows_float32_ratios():
    """26 -> 22 rows: ratio float(26 / 22) times 11 is 12.999999 in float32, so row 11
    reads source row 12, not 13 = 11 * 26 / 22 (Paddle's kernel does the same)."""
    program, _ = _program("nearest_interp", (1, 1, 26, 1), out_h=22, out_w=1, align_corners=False)
    x = np.arange(26, dtype=np.float32).reshape(1, 1, 26, 1)
    (got,) = run_reference(program, {"x": x})
    assert got[0, 0, 11, 0] == 12
    exe = cinn_py.compile(program, target="cuda-emu")
    np.testing.assert_array_equal(np.asarray(next(iter(exe.run({"x": x}).values()))), got)


def test_bilinear_align_corners_keeps_the_corners():
    program, _ = _program("bilinear_interp", (1, 1, 3, 4), out_h=7, out_w=9, align_corners=True)
    x = np.random.default_rng(0).standard_normal((1, 1, 3, 4)).astype(np.float32)
    (got,) = run_reference(program, {"x": x})
    for i, j in ((0, 0), (0, -1), (-1, 0), (-1, -1)):
        assert got[0, 0, i, j] == pytest.approx(x[0, 0, i, j], rel=1e-6)


def test_out_size_operand_gives_the_size():
    program, out = _program(
        "bilinear_interp",
        (1, 2, 5, 7),
        lambda net: net.b.op("pd_op.full_int_array", value=[3, 11], dtype=DataType.INT32),
        None,
        None,
        align_corners=False,
    )
    assert out.type.dims == (1, 2, 3, 11)
    x = np.random.default_rng(1).standard_normal((1, 2, 5, 7)).astype(np.float32)
    (want,) = run_reference(program, {"x": x})
    assert want.shape == (1, 2, 3, 11)
    got = next(iter(cinn_py.compile(program, target="cuda-emu").run({"x": x}).values()))
    assert compare(np.asarray(got), want).ok


def test_scale_tensor_runs_the_library_kernel():
    """A scale tensor sets the ratio at run time: not lowered, still Paddle's numbers."""
    program, out = _program(
        "bilinear_interp",
        (1, 2, 5, 7),
        None,
        None,
        lambda net: net.b.op("pd_op.full", shape=[1], value=1.5, dtype=F32),
        align_corners=False,
    )
    assert out.type.dims == (1, 2, 7, 10)  # one scale for both dims
    x = np.random.default_rng(2).standard_normal((1, 2, 5, 7)).astype(np.float32)
    feeds = {"x": x}
    (want,) = run_reference(program, feeds)
    assert want.shape == (1, 2, 7, 10)
    exe = cinn_py.compile(program, target="cuda-emu")
    got = next(iter(exe.run(feeds).values()))
    assert compare(np.asarray(got), want).ok
    kinds = {op.name: g.kind.value for g in exe.groups for op in g.ops}
    assert kinds["pd_op.bilinear_interp"] == "library"


def test_interp_needs_4d_and_a_positive_size():
    with pytest.raises(ShapeError, match=r"pd_op\.bilinear_interp .*x must be 4-D"):
        _program("bilinear_interp", (1, 5, 7), out_h=3, out_w=3)
    with pytest.raises(ShapeError, match=r"pd_op\.nearest_interp .*output size \[0, 3\]"):
        _program("nearest_interp", (1, 1, 5, 7), out_h=0, out_w=3)
