"""pd_op.swiglu and pd_op.fused_rms_norm_quant beyond the op table (op_cases.py): the
semantics Paddle 3.3.1 showed when probed, the residual path compiled, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import UnsupportedOpError, VerifyError
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference

F32 = DataType.FLOAT32


def _norm(shape, cols, bias=False, residual=False, **attrs):
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=F32)
    w = b.op("pd_op.data", name="w", shape=[cols], dtype=F32)
    bv = b.op("pd_op.data", name="b", shape=[cols], dtype=F32) if bias else None
    r = b.op("pd_op.data", name="r", shape=list(shape), dtype=F32) if residual else None
    attrs = {"epsilon": 1e-6, "begin_norm_axis": len(shape) - 1, **attrs}
    out, residual_out, inv_var = b.op("pd_op.fused_rms_norm_quant", x, bv, r, w, None, **attrs)
    program.pinned_outputs = [out, inv_var] + ([residual_out] if residual else [])
    return program


def _feeds(shape, cols):
    rng = np.random.default_rng(5)
    return {
        "x": rng.normal(size=shape).astype(np.float32),
        "w": rng.normal(size=cols).astype(np.float32),
        "b": rng.normal(size=cols).astype(np.float32),
        "r": rng.normal(size=shape).astype(np.float32),
    }


def _rms(x, w):
    return x / np.sqrt(np.mean(x.astype(np.float64) ** 2, -1, keepdims=True) + 1e-6) * w


def test_bias_without_residual_is_ignored_as_paddle_does():
    feeds = _feeds((3, 7, 33), 33)
    out, _ = run_reference(_norm((3, 7, 33), 33, bias=True), feeds)
    np.testing.assert_allclose(out, _rms(feeds["x"], feeds["w"]), rtol=1e-5, atol=1e-6)


def test_residual_and_bias_added_first_compiled():
    program = _norm((7, 33), 33, bias=True, residual=True)
    feeds = _feeds((7, 33), 33)
    summed = feeds["x"] + feeds["r"] + feeds["b"]
    out, inv_var, residual_out = run_reference(program, feeds)
    np.testing.assert_allclose(residual_out, summed, rtol=1e-6)
    np.testing.assert_allclose(out, _rms(summed, feeds["w"]), rtol=1e-5, atol=1e-6)
    exe = cinn_py.compile(program, target="cuda-emu")
    assert all(g.kind.value == "fused" for g in exe.groups)
    for got, want in zip(exe.run(feeds).values(), (out, inv_var, residual_out), strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_norm_of_no_rows_is_empty():
    """x of 0 rows (found by the attention fuzzer: the reference kernel's reshape to
    (0, -1) raised)."""
    program = _norm((0, 1), 1, residual=True)
    feeds = {k: v for k, v in _feeds((0, 1), 1).items() if k != "b"}
    want = run_reference(program, feeds)
    assert [w.shape for w in want] == [(0, 1), (0,), (0, 1)]
    got = cinn_py.compile(program, target="cuda-emu").run(feeds).values()
    assert [np.asarray(g).shape for g in got] == [(0, 1), (0,), (0, 1)]


@pytest.mark.parametrize("shape", [(0, 3, 5), (2, 0, 5), (0, 3, 256, 5)])
def test_statistics_of_an_empty_x_keep_their_dims(shape):
    """inv_var of an empty x keeps x's leading dims (found by the attention fuzzer: the
    decomposition reshaped it with [0, 0, 0], which copies dims only from a tensor with
    elements, so an empty one gave [0, 0, 0] for [0, 3, 256])."""
    program = _norm(shape, 5)
    feeds = {k: v for k, v in _feeds(shape, 5).items() if k in ("x", "w")}
    want = run_reference(program, feeds)
    assert [w.shape for w in want] == [shape, shape[:-1]]
    got = cinn_py.compile(program, target="cuda-emu").run(feeds).values()
    assert [np.asarray(g).shape for g in got] == [shape, shape[:-1]]


def test_quantized_norm_is_unsupported():
    program = _norm((3, 5), 5, quant_scale=2.0)
    with pytest.raises(UnsupportedOpError, match="quantizes its output to int8"):
        run_reference(program, _feeds((3, 5), 5))
    with pytest.raises(UnsupportedOpError, match="pd_op.fused_rms_norm_quant"):
        PassManager().run(program)


def test_norm_weight_of_the_wrong_size_is_a_verify_error():
    with pytest.raises(VerifyError, match=r"norm_weight.*has 4 elements.*\[5\] hold 5"):
        _norm((3, 5), 4)


def test_swiglu_halves_odd_last_dim_is_a_verify_error():
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[3, 7], dtype=F32)
    with pytest.raises(VerifyError, match="pd_op.swiglu.*odd size 7"):
        b.op("pd_op.swiglu", x, None)


def test_swiglu_with_mismatched_y_is_a_verify_error():
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[3, 8], dtype=F32)
    y = b.op("pd_op.data", name="y", shape=[3, 4], dtype=F32)
    with pytest.raises(VerifyError, match="pd_op.swiglu"):
        b.op("pd_op.swiglu", x, y)
