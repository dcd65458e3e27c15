"""pd_op.pool2d and pd_op.max_pool2d_with_index (cinn_py/ops/pool.py): the reference
kernel against a plain loop over Paddle's formulas, the compiled paths (unrolled window,
decomposition into mean / max, library fallback) against the reference on cuda-emu at
odd shapes, and the errors for windows that do not fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from op_cases import Net

import cinn_py
from cinn_py.errors import ShapeError
from cinn_py.hlir.grouping import group_program
from cinn_py.ops.pool import FLT_MAX
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

F32 = DataType.FLOAT32


def _pool_program(shape, kernel, **attrs) -> tuple[Program, object]:
    program = Program()
    net = Net(program)
    x = net.data("x", shape, F32)
    defaults = {"strides": [1, 1], "paddings": [0, 0], "pooling_type": "max"}
    out = net.op("pool2d", x, net.ints(kernel), **{**defaults, **attrs})
    return program, out


def _loop_pool(x, kernel, strides, pads, kind, exclusive, ceil_mode):
    """Paddle's CPU Pool2dFunctor written as loops (NCHW, explicit 2-value paddings)."""
    n, c, h, w = x.shape
    outs = []
    for d, size in enumerate((h, w)):
        span = size - kernel[d] + 2 * pads[d] + (strides[d] - 1 if ceil_mode else 0)
        outs.append(span // strides[d] + 1)
    y = np.zeros((n, c, *outs), dtype=np.float64)
    for i in range(outs[0]):
        hs = i * strides[0] - pads[0]
        he, hs = min(hs + kernel[0], h), max(hs, 0)
        for j in range(outs[1]):
            ws = j * strides[1] - pads[1]
            we, ws = min(ws + kernel[1], w), max(ws, 0)
            window = x[:, :, hs:he, ws:we].reshape(n, c, -1)
            if kind == "max":
                y[:, :, i, j] = window.max(-1) if window.shape[-1] else -FLT_MAX
            else:
                count = (he - hs) * (we - ws) if exclusive else kernel[0] * kernel[1]
                y[:, :, i, j] = window.sum(-1) / count
    return y


@pytest.mark.parametrize(
    ("shape", "kernel", "strides", "pads", "kind", "exclusive", "ceil_mode"),
    [
        ((2, 3, 7, 9), [3, 3], [2, 2], [1, 1], "max", True, False),
        ((2, 3, 7, 9), [3, 3], [2, 2], [1, 1], "avg", True, True),
        ((1, 3, 7, 7), [3, 2], [2, 3], [1, 0], "avg", False, True),
        ((1, 1, 33, 7), [5, 1], [3, 1], [2, 0], "max", True, True),
    ],
)
def test_reference_matches_a_loop(shape, kernel, strides, pads, kind, exclusive, ceil_mode):
    program, out = _pool_program(
        shape,
        kernel,
        strides=strides,
        paddings=pads,
        pooling_type=kind,
        exclusive=exclusive,
        ceil_mode=ceil_mode,
    )
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    (got,) = run_reference(program, {"x": x})
    want = _loop_pool(x.astype(np.float64), kernel, strides, pads, kind, exclusive, ceil_mode)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _adaptive_loop(x, out_size, kind):
    n, c, h, w = x.shape
    y = np.zeros((n, c, *out_size))
    for i in range(out_size[0]):
        hs, he = (i * h) // out_size[0], math.ceil((i + 1) * h / out_size[0])
        for j in range(out_size[1]):
            ws, we = (j * w) // out_size[1], math.ceil((j + 1) * w / out_size[1])
            window = x[:, :, hs:he, ws:we]
            y[:, :, i, j] = window.max((2, 3)) if kind == "max" else window.mean((2, 3))
    return y


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("out_size", [[3, 5], [7, 2], [1, 3]])
def test_adaptive_bins(kind, out_size):
    program, _ = _pool_program((1, 3, 7, 9), out_size, pooling_type=kind, adaptive=True)
    x = np.random.default_rng(1).standard_normal((1, 3, 7, 9)).astype(np.float32)
    (got,) = run_reference(program, {"x": x})
    np.testing.assert_allclose(got, _adaptive_loop(x, out_size, kind), rtol=1e-5, atol=1e-6)
    exe = cinn_py.compile(program, target="cuda-emu")
    (compiled,) = exe.run({"x": x}).values()
    assert compare(np.asarray(compiled), got).ok


def _with_index_program(shape, kernel, *, fetch_mask: bool, **attrs):
    program = Program()
    net = Net(program)
    x = net.data("x", shape, F32)
    defaults = {"strides": [1, 1], "paddings": [0, 0]}
    out, mask = net.op("max_pool2d_with_index", x, kernel_size=kernel, **{**defaults, **attrs})
    program.pinned_outputs = [out, mask] if fetch_mask else [out]
    return program, out, mask


def test_max_pool_with_index_positions():
    """The first strictly larger value wins; its position is h * W + w in the plane."""
    program, _, _ = _with_index_program(
        (1, 1, 3, 5), [2, 2], fetch_mask=True, strides=[1, 2], paddings=[0, 1]
    )
    x = np.array([[[[1, 5, 5, 0, 2], [3, 5, 1, 1, 2], [0, 0, 9, 9, 9]]]], dtype=np.float32)
    out, mask = run_reference(program, {"x": x})
    np.testing.assert_array_equal(out[0, 0], [[3, 5, 2], [3, 9, 9]])
    np.testing.assert_array_equal(mask[0, 0], [[5, 1, 4], [5, 12, 13]])
    assert mask.dtype == np.int32


@pytest.mark.parametrize(
    ("kernel", "attrs"),
    [([3, 3], {"adaptive": True}), ([1, 1], {"adaptive": True}), ([3, 2], {"strides": [2, 2]})],
)
def test_max_pool_with_index_compiles_without_its_positions(kernel, attrs):
    """Positions nobody fetches: the op becomes a generated max pool (or a max)."""
    program, _, _ = _with_index_program((2, 3, 7, 9), kernel, fetch_mask=False, **attrs)
    x = np.random.default_rng(2).standard_normal((2, 3, 7, 9)).astype(np.float32)
    (want,) = run_reference(program, {"x": x})
    exe = cinn_py.compile(program, target="cuda-emu")
    (got,) = exe.run({"x": x}).values()
    assert compare(np.asarray(got), want).ok
    assert all(g.kind.value != "library" for g in exe.groups), [g.kind for g in exe.groups]


def test_max_pool_with_index_positions_run_the_library_kernel():
    program, _, _ = _with_index_program((2, 3, 7, 9), [3, 3], fetch_mask=True, adaptive=True)
    x = np.random.default_rng(3).standard_normal((2, 3, 7, 9)).astype(np.float32)
    want = run_reference(program, {"x": x})
    got = list(cinn_py.compile(program, target="cuda-emu").run({"x": x}).values())
    np.testing.assert_array_equal(got[1], want[1])
    assert compare(np.asarray(got[0]), want[0]).ok


def test_global_pooling_decomposes_into_a_reduction():
    program, _ = _pool_program((2, 3, 7, 9), [3, 3], pooling_type="avg", global_pooling=True)
    PassManager().run(program)
    names = [op.name for op in program.block]
    assert names == ["pd_op.data", "pd_op.sum", "pd_op.full", "pd_op.divide"]


def test_global_pooling_over_unknown_dims_is_a_mean():
    """A -1 plane has no static count: pd_op.mean, divided once shapes are specialized."""
    program, _ = _pool_program((-1, 3, -1, -1), [1, 1], pooling_type="avg", adaptive=True)
    PassManager().run(program)
    assert [op.name for op in program.block] == ["pd_op.data", "pd_op.mean"]
    x = np.random.default_rng(5).standard_normal((2, 3, 7, 9)).astype(np.float32)
    got = next(iter(cinn_py.compile(program, target="cuda-emu").run({"x": x}).values()))
    np.testing.assert_allclose(np.asarray(got), x.mean((2, 3), keepdims=True), rtol=1e-5)


def test_window_pooling_is_one_generated_kernel_with_its_consumer():
    program = Program()
    net = Net(program)
    x = net.data("x", (1, 3, 7, 9), F32)
    pooled = net.op("pool2d", x, net.ints([3, 3]), strides=[2, 2], paddings=[1, 1])
    net.op("relu", pooled)
    PassManager().run(program)
    groups = [g for g in group_program(program) if g.ops]
    assert len(groups) == 1
    assert [op.name for op in groups[0].ops] == ["pd_op.pool2d", "pd_op.relu"]


def _chained_pools(specs, shape=(2, 3, 12, 13)):
    """x -> a pool2d per (kernel, kind) of `specs` (SAME padding, stride 1) -> relu."""
    program = Program()
    net = Net(program)
    value = net.data("x", shape, F32)
    for kernel, kind in specs:
        value = net.op(
            "pool2d",
            value,
            net.ints(kernel),
            strides=[1, 1],
            paddings=[0, 0],
            pooling_type=kind,
            padding_algorithm="SAME",
        )
    net.op("relu", value)
    return program


@pytest.mark.parametrize(
    ("specs", "groups"),
    [
        # 3 x 3 after 3 x 3: 81 copies of x's expression an output, one kernel
        ((((3, 3), "max"), ((3, 3), "avg")), [["pool2d", "pool2d", "relu"]]),
        # 5 x 5 after 5 x 5 would be 625: the chain splits after the first pool
        ((((5, 5), "max"), ((5, 5), "max")), [["pool2d"], ["pool2d", "relu"]]),
        # 25, then 9 * 12 = 108 fuse; 25 * 9 = 225 does not
        (
            (((5, 5), "max"), ((3, 3), "avg"), ((2, 6), "avg"), ((5, 5), "max")),
            [["pool2d"], ["pool2d", "pool2d"], ["pool2d", "relu"]],
        ),
    ],
)
def test_chained_windows_fuse_while_their_taps_multiply_to_at_most_169(specs, groups):
    """Each tap of a window inlines its producer's expression again: four chained pools
    (25 * 9 * 12 * 25 copies) were megabytes of CUDA C and timed out on cuda-emu."""
    program = _chained_pools(specs)
    x = np.random.default_rng(6).standard_normal((2, 3, 12, 13)).astype(np.float32)
    (want,) = run_reference(program, {"x": x})
    exe = cinn_py.compile(program, target="cuda-emu")
    fused = [[op.name.removeprefix("pd_op.") for op in g.ops] for g in exe.groups if g.ops]
    assert fused == groups
    (got,) = exe.run({"x": x}).values()
    assert compare(np.asarray(got), want).ok
    assert len(exe.cuda_source) < 200_000


def test_a_split_window_chain_is_explained():
    from cinn_py.hlir.grouping import explain_grouping

    program = _chained_pools((((5, 5), "max"), ((5, 5), "avg")))
    PassManager().run(program)
    (explanation,) = [e for e in explain_grouping(program).explanations if e.kind == "vertical"]
    assert explanation.reason == (
        "inlined copies: the merged kernel would write out a value that pd_op.pool2d "
        "(op #1) computes or reads 625 times (at most 169: chained windows and values "
        "read twice multiply)"
    )


def test_large_windows_run_the_library_kernel():
    """A 14 x 13 window (182 taps) is past the unrolled-window limit: library, still right."""
    program, _ = _pool_program((1, 2, 15, 15), [14, 13], pooling_type="avg")
    x = np.random.default_rng(4).standard_normal((1, 2, 15, 15)).astype(np.float32)
    (want,) = run_reference(program, {"x": x})
    exe = cinn_py.compile(program, target="cuda-emu")
    (got,) = exe.run({"x": x}).values()
    assert compare(np.asarray(got), want).ok
    assert [g.kind.value for g in exe.groups if g.ops] == ["library"]


def test_a_window_larger_than_the_padded_input_is_a_shape_error():
    with pytest.raises(ShapeError, match=r"pd_op\.pool2d .*larger than the padded input 2"):
        _pool_program((1, 1, 2, 2), [5, 5])
    with pytest.raises(ShapeError, match=r"pd_op\.max_pool2d_with_index .*not positive"):
        _with_index_program((1, 1, 2, 9), [4, 2], fetch_mask=True)


def test_kernel_size_of_the_wrong_length_is_a_shape_error():
    with pytest.raises(ShapeError, match=r"pd_op\.pool2d .*kernel_size \[3, 3, 3\] must hold 2"):
        _pool_program((1, 1, 7, 7), [3, 3, 3])
    with pytest.raises(ShapeError, match=r"pd_op\.pool2d .*x must be 4-D"):
        _pool_program((1, 7, 7), [3, 3])


def test_paddle_truncates_the_output_size():
    """(2 - 3) / 2 + 1 is 1 in C: a 3-wide window with stride 2 over 2 elements fits."""
    program, out = _pool_program((1, 1, 2, 2), [3, 3], strides=[2, 2])
    assert out.type.dims == (1, 1, 1, 1)


@pytest.mark.parametrize(
    ("shape", "kernel", "strides", "pads", "ceil_mode", "adaptive"),
    [
        ((1, 2, 7, 9), [3, 3], [2, 2], [1, 1], False, False),
        ((2, 1, 5, 5), [3, 2], [1, 2], [2, 1], True, False),
        ((1, 1, 1, 1), [1, 1], [1, 1], [1, 1], False, False),
        ((1, 3, 7, 33), [3, 5], [3, 2], [1, 2], True, False),
        ((1, 2, 7, 5), [3, 2], [1, 1], [0, 0], False, True),
    ],
)
def test_compiled_max_pool_keeps_nan_and_inf_as_paddle(
    shape, kernel, strides, pads, ceil_mode, adaptive
):
    """Paddle folds `y = y > x ? y : x` from -FLT_MAX over a window's valid taps: NaN
    survives only as the last valid tap, -inf windows give -FLT_MAX, windows of padding
    only give -FLT_MAX. The compiled max reads padding taps as a valid tap of their
    window (not a -FLT_MAX that would replace a NaN): every element must match."""
    program, _ = _pool_program(
        shape,
        kernel,
        strides=strides,
        paddings=pads,
        ceil_mode=ceil_mode,
        adaptive=adaptive,
        exclusive=True,
    )
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    special = rng.random(shape)
    x[special < 0.15] = np.nan
    x[(special >= 0.15) & (special < 0.25)] = -np.inf
    x[(special >= 0.25) & (special < 0.3)] = np.inf
    (want,) = run_reference(program, {"x": x})
    (got,) = cinn_py.compile(program, target="cuda-emu").run({"x": x}).values()
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
    if shape == (1, 1, 1, 1):  # windows of padding only
        assert (want == -FLT_MAX).sum() >= 1


@pytest.mark.parametrize(
    ("kernel", "attrs"),
    [([1, 1], {}), ([2, 3], {"strides": [1, 2], "paddings": [1, 1]}), ([1, 1], {"adaptive": True})],
)
def test_max_pool_with_index_without_positions_lets_no_nan_through(kernel, attrs):
    """max_pool2d_with_index keeps the first strictly larger value from -FLT_MAX: NaN and
    -inf never win (found by the spatial fuzzer: its decomposition into pool2d / max,
    whose folds let NaN through, gave NaN where Paddle gives -FLT_MAX)."""
    shape = (1, 2, 5, 7)
    program, _, _ = _with_index_program(shape, kernel, fetch_mask=False, **attrs)
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(np.float32)
    special = rng.random(shape)
    x[special < 0.3] = np.nan
    x[(special >= 0.3) & (special < 0.4)] = -np.inf
    x[0, 1] = np.nan  # a plane of NaN only
    (want,) = run_reference(program, {"x": x})
    assert not np.isnan(want).any() and (want == -FLT_MAX).any()
    (got,) = cinn_py.compile(program, target="cuda-emu").run({"x": x}).values()
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("attrs", [{"global_pooling": True}, {"adaptive": True}])
def test_whole_plane_max_pool_keeps_nan_and_inf_as_paddle(attrs):
    """Not a max reduction: Paddle's order-dependent fold, on the unrolled window."""
    program, _ = _pool_program((1, 2, 1, 3), [1, 1], **attrs)
    x = np.array([[[[np.nan, 1, 2]], [[-np.inf, -np.inf, -np.inf]]]], np.float32)
    (want,) = run_reference(program, {"x": x})
    np.testing.assert_array_equal(want.reshape(-1), [2, -FLT_MAX])
    (got,) = cinn_py.compile(program, target="cuda-emu").run({"x": x}).values()
    np.testing.assert_array_equal(np.asarray(got), want)


def test_max_pool_windows_in_the_padding_only_are_the_fold_start():
    """paddings >= kernel (Paddle allows it): windows with no valid tap in either dim
    give -FLT_MAX; the clamped taps must not read a real element there."""
    program, _ = _pool_program(
        (2, 5, 3, 3), [4, 5], strides=[3, 5], paddings=[5, 9], data_format="NHWC"
    )
    x = np.random.default_rng(5).standard_normal((2, 5, 3, 3)).astype(np.float32)
    (want,) = run_reference(program, {"x": x})
    assert (want == -FLT_MAX).any() and (want != -FLT_MAX).any()
    (got,) = cinn_py.compile(program, target="cuda-emu").run({"x": x}).values()
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize(
    ("shape", "attrs", "dtype"),
    [
        ((2, 3, 7, 9), {"global_pooling": True}, F32),
        ((1, 4, 33, 5), {"adaptive": True}, F32),
        ((3, 1, 1, 1), {"global_pooling": True}, F32),
        ((2, 7, 9, 3), {"global_pooling": True, "data_format": "NHWC"}, F32),
        ((1, 3, 5, 7), {"adaptive": True}, DataType.FLOAT16),
    ],
)
def test_whole_plane_max_pools_are_one_kernel_with_paddles_fold(shape, attrs, dtype):
    """Any plane size: two max reductions (the last NaN's position, then the max past
    it) in one generated kernel, exactly Paddle's order-dependent fold: NaN only when
    the plane ends in NaN, -FLT_MAX for planes of -inf, the max after the last NaN (-inf
    where only -inf follows it)."""
    program = Program()
    net = Net(program)
    x = net.data("x", shape, dtype)
    net.op("pool2d", x, net.ints([1, 1]), pooling_type="max", **attrs)
    rng = np.random.default_rng(9)
    host = rng.standard_normal(shape).astype(np.float32)
    special = rng.random(shape)
    host[special < 0.1] = np.nan
    host[(special >= 0.1) & (special < 0.2)] = -np.inf
    flat = host.reshape(shape[0], -1) if "data_format" in attrs else None
    if flat is None:
        host[0, 0, -1, -1] = np.nan  # a plane that ends in NaN
        host[-1, -1] = -np.inf  # a plane of -inf
        if shape[1] > 1:  # a NaN, then only -inf: the reset fold gives -inf, not -FLT_MAX
            host[0, 1] = -np.inf
            host[0, 1, 0, 0] = np.nan
    feeds = {"x": host.astype(np.float16) if dtype is DataType.FLOAT16 else host}
    exe = cinn_py.compile(program, target="cuda-emu")
    assert [group.kind.value for group in exe.groups] == ["fused"]
    assert len(exe.kernels) == 1
    (got,) = exe.run(feeds).values()
    (want,) = run_reference(program, feeds)
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
    if flat is None and shape[2] * shape[3] > 1:
        assert np.isnan(want.reshape(shape[0], shape[1])[0, 0])
        if shape[1] > 1:
            assert want.reshape(shape[0], shape[1])[0, 1] == -np.inf
