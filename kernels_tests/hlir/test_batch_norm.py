"""batch_norm and batch_norm_ in inference: declaration, types, numbers, fusion, refusal.

The reference kernel is checked against the formula at odd shapes (ranks 2 to 5, NCHW
and NHWC, with and without scale and bias, float16 / bfloat16 inputs with float32
statistics), the compiled path (a decomposition into broadcast elementwise ops) against
the reference on cuda-emu, every result included. Paddle's own numbers are the
fixtures' (programs/op_batch_norm_infer, models/resnet_basic_block, mobilenetv3_unit).
"""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import UnsupportedOpError, VerifyError
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16
from cinn_py.pir.op_def import lookup_op_def
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes.infer_shapes import has_dynamic_dims, specialize_shapes
from cinn_py.pir.printer import print_type
from cinn_py.pir.program import Program
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

F32, F16, BF16 = DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16
NAMES = ("pd_op.batch_norm", "pd_op.batch_norm_")
CHANNEL_LAST = ("NHWC", "NDHWC")


@pytest.mark.parametrize("name", NAMES)
def test_declaration_matches_paddle(name):
    """Names and order from Paddle 3.3.1's `get_input_names` / `get_attr_names` /
    `get_output_names`."""
    op_def = lookup_op_def(name)
    assert tuple(o.name for o in op_def.operands) == ("x", "mean", "variance", "scale", "bias")
    assert tuple(o.name for o in op_def.operands if o.optional) == ("scale", "bias")
    assert tuple((a.name, a.kind_name) for a in op_def.attributes) == (
        ("is_test", "bool"),
        ("momentum", "float"),
        ("epsilon", "float"),
        ("data_format", "str"),
        ("use_global_stats", "bool"),
        ("trainable_statistics", "bool"),
    )
    assert op_def.results == (
        "out",
        "mean_out",
        "variance_out",
        "saved_mean",
        "saved_variance",
        "reserve_space",
    )
    assert op_def.compiled_by == "decomposed"


# -- types ----------------------------------------------------------------------------------

PRINTED = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3,7,5],stop_gradient:[true]} : () -> tensor<2x3x7x5xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"mean",place:Place(undefined:0),shape:[3],stop_gradient:[true]} : () -> tensor<3xf32>
    (%2) = "pd_op.data" () {dtype:float32,name:"var",place:Place(undefined:0),shape:[3],stop_gradient:[true]} : () -> tensor<3xf32>
    (%3, %4, %5, %6, %7, %8) = "pd_op.batch_norm_" (%0, %1, %2, <<NULL VALUE>>, <<NULL VALUE>>) {data_format:"NCHW",epsilon:0.0001,is_test:true,momentum:0.9,stop_gradient:[true,true,true,true,true,true],trainable_statistics:false,use_global_stats:true} : (tensor<2x3x7x5xf32>, tensor<3xf32>, tensor<3xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<2x3x7x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<-1xu8>
}
"""


def test_reserve_space_is_minus_one_as_paddle_prints_it_and_empty_once_specialised():
    program = parse_program(PRINTED)
    verify_program(program)
    assert str(program).count("tensor<-1xu8>") == 1  # printed back as Paddle wrote it
    static = specialize_shapes(program)
    verify_program(static)
    (op,) = [op for op in static.block if op.name == "pd_op.batch_norm_"]
    assert [print_type(r.type) for r in op.results] == [
        "tensor<2x3x7x5xf32>",
        *["tensor<3xf32>"] * 4,
        "tensor<0xu8>",
    ]


def test_a_program_with_static_feeds_is_static_and_compiled_at_once():
    program = parse_program(PRINTED)
    assert not has_dynamic_dims(program)
    program.pinned_outputs = [program.block.ops[-1].result(0)]
    exe = cinn_py.compile(program, "cuda-emu")  # compiled here, not on the first run
    assert [g.kind.value for g in exe.groups] == ["fused"]


def test_dynamic_channels_as_paddle_prints_them():
    """Paddle 3.3.1: x `tensor<-1x-1x4x5xf32>`, statistics `tensor<-1xf32>`."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[-1, -1, 4, 5], dtype=F32)
    m = b.op("pd_op.data", name="m", shape=[-1], dtype=F32)
    results = b.op("pd_op.batch_norm", x, m, m, None, None, is_test=True, use_global_stats=True)
    printed = [print_type(r.type) for r in results]
    assert printed == ["tensor<-1x-1x4x5xf32>", *["tensor<-1xf32>"] * 4, "tensor<-1xu8>"]


@pytest.mark.parametrize(
    ("x", "param", "data_format", "message"),
    [
        (
            (2, 3, 4),
            4,
            "NCHW",
            r"operand mean .* has 4 elements, but x \[2, 3, 4\] \(NCHW\) has 3 channels",
        ),
        (
            (2, 3, 4),
            3,
            "NHWC",
            r"operand mean .* has 3 elements, but x \[2, 3, 4\] \(NHWC\) has 4 channels",
        ),
        ((5,), 5, "NCHW", r"operand x .* must have 2 to 5 dims, got \[5\]"),
        ((2, 3), 3, "NWHC", r"data_format must be one of"),
    ],
)
def test_bad_input(x, param, data_format, message):
    program = Program()
    b = Builder(program)
    xv = b.op("pd_op.data", name="x", shape=list(x), dtype=F32)
    p = b.op("pd_op.data", name="p", shape=[param], dtype=F32)
    with pytest.raises(VerifyError, match=message):
        b.op("pd_op.batch_norm_", xv, p, p, p, p, is_test=True, data_format=data_format)


# -- numbers ----------------------------------------------------------------------------------


def _program(name, x_dims, dtype, data_format, affine, epsilon=1e-5, **mode):
    mode = mode or {"is_test": True, "use_global_stats": True}
    channels = x_dims[-1] if data_format in CHANNEL_LAST else x_dims[1]
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(x_dims), dtype=dtype)
    stats = [b.op("pd_op.data", name=n, shape=[channels], dtype=F32) for n in ("m", "v", "s", "b")]
    mean, var, scale, bias = stats if affine else (*stats[:2], None, None)
    b.op(name, x, mean, var, scale, bias, data_format=data_format, epsilon=epsilon, **mode)
    rng = np.random.default_rng(sum(x_dims) + affine)
    xs = rng.uniform(-3, 3, x_dims).astype(np.float32)
    feeds = {
        "x": float32_to_bfloat16(xs) if dtype is BF16 else xs.astype(dtype.numpy),
        "m": rng.uniform(-1, 1, channels).astype(np.float32),
        "v": rng.uniform(0.2, 3, channels).astype(np.float32),
        "s": rng.uniform(-2, 2, channels).astype(np.float32),
        "b": rng.uniform(-1, 1, channels).astype(np.float32),
    }
    return program, feeds


def _formula(feeds, dtype, data_format, affine, epsilon):
    x = feeds["x"]
    x = bfloat16_to_float32(x) if dtype is BF16 else x.astype(np.float64)
    shape = [1] * x.ndim
    shape[x.ndim - 1 if data_format in CHANNEL_LAST else 1] = -1

    def c(name):
        return feeds[name].astype(np.float64).reshape(shape)

    out = (x - c("m")) / np.sqrt(c("v") + epsilon)
    return out * c("s") + c("b") if affine else out


CASES = [
    # (op, x dims, dtype, data_format, affine)
    ("pd_op.batch_norm_", (2, 3, 7, 5), F32, "NCHW", True),
    ("pd_op.batch_norm_", (1, 7, 33, 3), F32, "NHWC", True),
    ("pd_op.batch_norm", (3, 7), F32, "NCHW", True),
    ("pd_op.batch_norm", (3, 7), F32, "NHWC", False),
    ("pd_op.batch_norm", (1, 3, 33), F32, "NCHW", False),
    ("pd_op.batch_norm_", (2, 3, 1, 7, 5), F32, "NCDHW", True),
    ("pd_op.batch_norm_", (1, 5, 3, 7, 3), F32, "NDHWC", True),
    ("pd_op.batch_norm_", (1, 7, 3, 5), F16, "NCHW", True),
    ("pd_op.batch_norm", (2, 5, 3, 7), BF16, "NHWC", True),
]


def _id(case):
    op, dims, dtype, data_format, affine = case
    return f"{op[6:]}-{'x'.join(map(str, dims))}-{dtype.short}-{data_format}-{'affine' if affine else 'plain'}"


def _check(got, want, dtype):
    if dtype is BF16:
        result = compare(bfloat16_to_float32(got), want, "bfloat16")
    else:
        result = compare(got, want, dtype.value)
    assert result.ok, result


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_reference_matches_the_formula(case):
    op, dims, dtype, data_format, affine = case
    program, feeds = _program(op, dims, dtype, data_format, affine, epsilon=1e-3)
    out, mean_out, var_out, saved_mean, saved_var, reserve = run_reference(program, feeds)
    assert out.shape == dims
    _check(out, _formula(feeds, dtype, data_format, affine, 1e-3), dtype)
    np.testing.assert_array_equal(mean_out, feeds["m"])  # the running statistics
    np.testing.assert_array_equal(var_out, feeds["v"])
    np.testing.assert_array_equal(saved_mean, np.zeros_like(feeds["m"]))  # zeros, as Paddle
    np.testing.assert_array_equal(saved_var, np.zeros_like(feeds["v"]))
    assert reserve.shape == (0,) and reserve.dtype == np.uint8


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_compiled_matches_reference_every_result(case):
    """Every result is a program output here (nothing reads them): out from one kernel,
    the running statistics passed through, the saved ones zeros, reserve_space empty."""
    op, dims, dtype, data_format, affine = case
    program, feeds = _program(op, dims, dtype, data_format, affine)
    want = run_reference(program, feeds)
    got = list(cinn_py.compile(program, "cuda-emu").run(feeds).values())
    assert len(got) == 6
    _check(got[0], bfloat16_to_float32(want[0]) if dtype is BF16 else want[0], dtype)
    for g, w in zip(got[1:], want[1:], strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    "mode",
    [
        {"is_test": False, "use_global_stats": True},
        {"is_test": True, "use_global_stats": False},
    ],
    ids=["global-stats", "is-test"],
)
@pytest.mark.parametrize("target", ["reference", "cuda-emu"])
def test_other_inference_modes(mode, target):
    """Paddle's `global_stats = (is_test && !trainable_statistics) || use_global_stats`."""
    program, feeds = _program("pd_op.batch_norm", (2, 3, 5), F32, "NCHW", True, **mode)
    program.pinned_outputs = [
        next(op for op in program.block if op.name == "pd_op.batch_norm").result(0)
    ]
    (got,) = cinn_py.compile(program, target).run(feeds).values()
    _check(got, _formula(feeds, F32, "NCHW", True, 1e-5), F32)


@pytest.mark.parametrize(
    "mode",
    [
        {"is_test": False, "use_global_stats": False},
        {"is_test": True, "trainable_statistics": True, "use_global_stats": False},
    ],
    ids=["train", "trainable-statistics"],
)
@pytest.mark.parametrize("target", ["reference", "cuda-emu"])
def test_training_mode_is_refused_on_every_target(mode, target):
    program, feeds = _program("pd_op.batch_norm_", (2, 3, 5), F32, "NCHW", True, **mode)
    with pytest.raises(UnsupportedOpError, match=r"op 'pd_op.batch_norm_' runs in training mode"):
        cinn_py.compile(program, target).run(feeds)


# -- fusion -----------------------------------------------------------------------------------


@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_conv_batch_norm_relu_is_one_library_call_and_one_kernel(data_format):
    nhwc = data_format == "NHWC"
    x_dims = (2, 7, 9, 3) if nhwc else (2, 3, 7, 9)
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(x_dims), dtype=F32)
    w = b.op("pd_op.data", name="w", shape=[5, 3, 3, 3], dtype=F32)
    stats = [b.op("pd_op.data", name=n, shape=[5], dtype=F32) for n in ("m", "v", "s", "b")]
    conv = b.op("pd_op.conv2d", x, w, paddings=[1, 1], strides=[2, 1], data_format=data_format)
    normed = b.op(
        "pd_op.batch_norm_",
        conv,
        *stats,
        is_test=True,
        use_global_stats=True,
        data_format=data_format,
    )
    out = b.op("pd_op.relu", normed[0])
    program.pinned_outputs = [out]
    rng = np.random.default_rng(3)
    feeds = {
        "x": rng.uniform(-2, 2, x_dims).astype(np.float32),
        "w": rng.uniform(-1, 1, (5, 3, 3, 3)).astype(np.float32),
        "m": rng.uniform(-1, 1, 5).astype(np.float32),
        "v": rng.uniform(0.5, 2, 5).astype(np.float32),
        "s": rng.uniform(-2, 2, 5).astype(np.float32),
        "b": rng.uniform(-1, 1, 5).astype(np.float32),
    }
    exe = cinn_py.compile(program, "cuda-emu")
    (got,) = exe.run(feeds).values()
    (want,) = run_reference(program, feeds)
    result = compare(got, want)
    assert result.ok, result
    steps = [str(s) for s in exe.runner.runtime_program.instructions]
    assert len(steps) == 2, steps
    assert steps[0].startswith("library pd_op.conv2d"), steps
    assert steps[1].startswith("fn_group_"), steps
