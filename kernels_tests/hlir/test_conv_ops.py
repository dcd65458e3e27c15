"""conv2d, depthwise_conv2d and conv2d_transpose: declarations, shapes, errors, numbers.

The reference kernels (im2col + a batched matmul; col2im for the transpose) are checked
against direct loops written from the definitions at odd shapes (1, 3, 7, 33 wide, odd
channel counts, groups, strides, dilations, every padding form, NCHW and NHWC), and the
compiled path (a library call on cuda-emu, with the ops after it fused) against the
reference executor. Paddle's own numbers are the fixtures' (test_*_fixtures.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import ShapeError
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16
from cinn_py.pir.op_def import lookup_op_def
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes.infer_shapes import specialize_shapes
from cinn_py.pir.printer import print_type
from cinn_py.pir.program import Program
from cinn_py.pir.traits import OpPatternKind
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

F32 = DataType.FLOAT32

# -- declarations -----------------------------------------------------------------------------

PADDLE_SIGNATURES = {
    "pd_op.conv2d": (
        ("input", "filter"),
        (
            ("strides", "array<int32>"),
            ("paddings", "array<int32>"),
            ("padding_algorithm", "str"),
            ("dilations", "array<int32>"),
            ("groups", "int32"),
            ("data_format", "str"),
        ),
    ),
    "pd_op.depthwise_conv2d": (
        ("input", "filter"),
        (
            ("strides", "array<int32>"),
            ("paddings", "array<int32>"),
            ("padding_algorithm", "str"),
            ("groups", "int32"),
            ("dilations", "array<int32>"),
            ("data_format", "str"),
        ),
    ),
    "pd_op.conv2d_transpose": (
        ("x", "filter", "output_size"),
        (
            ("strides", "array<int32>"),
            ("paddings", "array<int32>"),
            ("output_padding", "array<int32>"),
            ("padding_algorithm", "str"),
            ("groups", "int32"),
            ("dilations", "array<int32>"),
            ("data_format", "str"),
        ),
    ),
}
"""Operand and attribute names in Paddle 3.3.1's order (`get_input_names`,
`get_attr_names` of ops built in static PIR mode)."""


@pytest.mark.parametrize("name", sorted(PADDLE_SIGNATURES))
def test_declaration_matches_paddle_and_runs_as_a_library_call(name):
    operands, attributes = PADDLE_SIGNATURES[name]
    op_def = lookup_op_def(name)
    assert tuple(o.name for o in op_def.operands) == operands
    assert tuple((a.name, a.kind_name) for a in op_def.attributes) == attributes
    assert op_def.results == ("out",)
    assert op_def.compiled_by == "library"
    assert op_def.pattern is OpPatternKind.NON_FUSIBLE
    mutable = tuple(o.name for o in op_def.operands if o.mutable_attr)
    assert mutable == (("output_size",) if name == "pd_op.conv2d_transpose" else ())


# -- shapes as Paddle prints them -----------------------------------------------------------


def _program(lines: list[str]) -> Program:
    return parse_program("{\n" + "\n".join(f"    {line}" for line in lines) + "\n}\n")


def _data(number: int, name: str, dims: str) -> str:
    shape = ",".join(dims.split("x"))
    return (
        f'(%{number}) = "pd_op.data" () {{dtype:float32,name:"{name}",place:Place(undefined:0),'
        f"shape:[{shape}],stop_gradient:[true]}} : () -> tensor<{dims}xf32>"
    )


def test_dynamic_dims_as_paddle_prints_them():
    """Paddle 3.3.1 printed these lines (a -1 input dim gives a -1 output dim; SAME
    pads from the input size, unknown here). The transpose's height is printed 0 by
    Paddle (-1 + output_padding 1), a wrong constant: cinn_py infers -1 there, and
    accepts Paddle's line."""
    program = _program(
        [
            _data(0, "x", "-1x-1x-1x9"),
            _data(1, "w", "3x4x3x3"),
            _data(2, "xt", "-1x4x-1x6"),
            _data(3, "wt", "4x2x3x3"),
            '(%4) = "pd_op.conv2d" (%0, %1) {data_format:"NCHW",dilations:[1,1],groups:1,'
            'padding_algorithm:"EXPLICIT",paddings:[1,1],stop_gradient:[true],strides:[2,2]} '
            ": (tensor<-1x-1x-1x9xf32>, tensor<3x4x3x3xf32>) -> tensor<-1x3x-1x5xf32>",
            '(%5) = "pd_op.conv2d" (%0, %1) {data_format:"NCHW",dilations:[1,1],groups:1,'
            'padding_algorithm:"SAME",paddings:[1,1],stop_gradient:[true],strides:[2,2]} '
            ": (tensor<-1x-1x-1x9xf32>, tensor<3x4x3x3xf32>) -> tensor<-1x3x-1x5xf32>",
            '(%6) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],'
            "value:[]} : () -> tensor<0xi64>",
            '(%7) = "pd_op.conv2d_transpose" (%2, %3, %6) {data_format:"NCHW",dilations:[1,1],'
            'groups:1,output_padding:[1,1],padding_algorithm:"EXPLICIT",paddings:[1,1],'
            "stop_gradient:[true],strides:[2,2]} : (tensor<-1x4x-1x6xf32>, tensor<4x2x3x3xf32>, "
            "tensor<0xi64>) -> tensor<-1x2x0x12xf32>",
        ]
    )
    cinn_py.pir.verifier.verify_program(program)
    static = specialize_shapes(program, {"x": (2, 4, 11, 9), "xt": (1, 4, 5, 6)})
    types = {op.name + str(i): print_type(op.result(0).type) for i, op in enumerate(static.block)}
    assert types["pd_op.conv2d4"] == "tensor<2x3x6x5xf32>"
    assert types["pd_op.conv2d5"] == "tensor<2x3x6x5xf32>"
    assert types["pd_op.conv2d_transpose7"] == "tensor<1x2x10x12xf32>"


def _build(op: str, x_dims, w_dims, *, output_size=None, **attrs):
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(x_dims), dtype=F32)
    w = b.op("pd_op.data", name="w", shape=list(w_dims), dtype=F32)
    if op == "pd_op.conv2d_transpose":
        size = b.op("pd_op.full_int_array", value=list(output_size or []))
        return program, b.op(op, x, w, size, **attrs)
    return program, b.op(op, x, w, **attrs)


@pytest.mark.parametrize(
    ("op", "x", "w", "attrs", "out"),
    [
        (
            "pd_op.conv2d",
            (1, 4, 7, 7),
            (3, 4, 3, 3),
            {"paddings": [0, 1, 2, 1], "strides": [2, 2]},
            (1, 3, 3, 4),
        ),
        (
            "pd_op.conv2d",
            (1, 4, 7, 7),
            (3, 4, 3, 3),
            {"padding_algorithm": "SAME", "strides": [2, 2]},
            (1, 3, 4, 4),
        ),
        (
            "pd_op.conv2d",
            (1, 4, 7, 7),
            (3, 4, 3, 3),
            {"padding_algorithm": "VALID", "paddings": [5, 5], "dilations": [2, 2]},
            (1, 3, 3, 3),
        ),
        (
            "pd_op.conv2d",
            (2, 7, 5, 4),
            (3, 4, 3, 3),
            {"paddings": [1, 1], "data_format": "NHWC"},
            (2, 7, 5, 3),
        ),
        (
            "pd_op.conv2d",
            (1, 6, 33, 1),
            (9, 2, 3, 1),
            {"groups": 3, "strides": [3, 1]},
            (1, 9, 11, 1),
        ),
        ("pd_op.depthwise_conv2d", (2, 3, 7, 7), (6, 1, 3, 3), {"groups": 3}, (2, 6, 5, 5)),
        (
            "pd_op.conv2d_transpose",
            (1, 4, 3, 5),
            (4, 2, 3, 3),
            {"strides": [2, 2], "paddings": [1, 1], "output_padding": [1, 1]},
            (1, 2, 6, 10),
        ),
        (
            "pd_op.conv2d_transpose",
            (1, 4, 3, 5),
            (4, 1, 3, 3),
            {"strides": [2, 2], "groups": 2},
            (1, 2, 7, 11),
        ),
        (
            "pd_op.conv2d_transpose",
            (1, 3, 5, 4),
            (4, 2, 3, 3),
            {"data_format": "NHWC", "dilations": [2, 2]},
            (1, 7, 9, 2),
        ),
        (
            "pd_op.conv2d_transpose",
            (1, 4, 3, 5),
            (4, 2, 3, 3),
            {"padding_algorithm": "SAME", "strides": [2, 2]},
            (1, 2, 5, 9),
        ),
    ],
)
def test_result_shapes(op, x, w, attrs, out):
    _, result = _build(op, x, w, **attrs)
    assert result.type.dims == out


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "x", "w", "attrs", "message"),
    [
        (
            "pd_op.conv2d",
            (1, 5, 7, 7),
            (4, 2, 3, 3),
            {"groups": 2},
            r"input's 5 channels .* are not divisible by groups 2",
        ),
        (
            "pd_op.conv2d",
            (1, 4, 7, 7),
            (3, 3, 3, 3),
            {},
            r"filter \[3, 3, 3, 3\] takes 3 channels per group, but the input's 4 channels .* in 1 groups give 4",
        ),
        (
            "pd_op.conv2d",
            (1, 7, 5, 4),
            (3, 2, 3, 3),
            {"groups": 2, "data_format": "NHWC"},
            r"filter \[3, 2, 3, 3\] takes 2 channels per group, but the input's 4 channels \(dims \[1, 7, 5, 4\], NHWC\) in 2 groups give 2|output channels",
        ),
        (
            "pd_op.conv2d",
            (1, 4, 7, 7),
            (3, 2, 3, 3),
            {"groups": 2},
            r"filter's 3 output channels \(dims \[3, 2, 3, 3\]\) are not divisible by groups 2",
        ),
        (
            "pd_op.depthwise_conv2d",
            (1, 3, 7, 7),
            (3, 3, 3, 3),
            {"groups": 3},
            r"takes 3 channels per group, but the input's 3 channels",
        ),
        (
            "pd_op.conv2d",
            (1, 4, 2, 7),
            (3, 4, 5, 3),
            {},
            r"the height kernel \(5, dilated to 5\) is larger than the padded input \(2 \+ paddings 0 \+ 0 = 2\)",
        ),
        (
            "pd_op.conv2d",
            (1, 4, 7, 4),
            (3, 4, 3, 3),
            {"dilations": [1, 2], "paddings": [0, 0]},
            r"the width kernel \(3, dilated to 5\) is larger than the padded input \(4 \+ paddings 0 \+ 0 = 4\)",
        ),
        (
            "pd_op.conv2d",
            (1, 4, 7, 7),
            (3, 4, 3, 3),
            {"paddings": [1, 1, 1]},
            r"paddings \[1, 1, 1\] must hold 2 or 4 values",
        ),
        (
            "pd_op.conv2d",
            (1, 4, 7, 7),
            (3, 4, 3, 3),
            {"strides": [0, 1]},
            r"strides \[0, 1\] must be positive",
        ),
        (
            "pd_op.conv2d",
            (1, 4, 7, 7),
            (3, 4, 3, 3),
            {"padding_algorithm": "FULL"},
            r"padding_algorithm must be one of",
        ),
        ("pd_op.conv2d", (4, 7, 7), (3, 4, 3, 3), {}, r"the input must be 4-D"),
        (
            "pd_op.conv2d_transpose",
            (1, 4, 3, 5),
            (3, 2, 3, 3),
            {},
            r"the input's 4 channels .* differ from the filter's 3 input channels",
        ),
        (
            "pd_op.conv2d_transpose",
            (1, 3, 3, 5),
            (3, 2, 3, 3),
            {"groups": 2},
            r"the input's 3 channels are not divisible by groups 2",
        ),
        (
            "pd_op.conv2d_transpose",
            (1, 4, 1, 5),
            (4, 2, 1, 3),
            {"paddings": [1, 1]},
            r"the height output size .* = -1\) is not positive",
        ),
        (
            "pd_op.conv2d_transpose",
            (1, 4, 3, 5),
            (4, 2, 3, 3),
            {"strides": [2, 2], "output_padding": [2, 0]},
            r"output_padding \[2, 0\]: the height value must be in \[0, max\(stride, dilation\)\) = \[0, 2\)",
        ),
    ],
)
def test_bad_geometry_is_a_shape_error_naming_the_op(op, x, w, attrs, message):
    with pytest.raises(ShapeError, match=rf"^invalid {op} \(building {op}\): .*{message}"):
        _build(op, x, w, **attrs)


def test_transpose_output_size_out_of_range():
    with pytest.raises(
        ShapeError, match=r"output_size \[9, 10\]: the height size 9 must be in \[5, 7\)"
    ):
        _build(
            "pd_op.conv2d_transpose",
            (1, 4, 3, 5),
            (4, 2, 3, 3),
            strides=[2, 2],
            paddings=[1, 1],
            output_size=[9, 10],
        )


def test_shape_error_at_verify_time_names_the_line():
    program = _program(
        [
            _data(0, "x", "1x5x7x7"),
            _data(1, "w", "3x4x3x3"),
            '(%2) = "pd_op.conv2d" (%0, %1) {data_format:"NCHW",dilations:[1,1],groups:1,'
            'padding_algorithm:"EXPLICIT",paddings:[1,1],stop_gradient:[true],strides:[1,1]} '
            ": (tensor<1x5x7x7xf32>, tensor<3x4x3x3xf32>) -> tensor<1x3x7x7xf32>",
        ]
    )
    with pytest.raises(
        ShapeError,
        match=r"^invalid pd_op.conv2d \(<string>:4, .*\): the filter \[3, 4, 3, 3\] takes 4",
    ):
        cinn_py.pir.verifier.verify_program(program)


# -- reference kernels against loops written from the definitions ---------------------------


def _pads(x_hw, k, strides, paddings, dilations, algorithm):
    """[(top, bottom), (left, right)] and the dilations, as Paddle resolves them."""
    if algorithm == "VALID":
        return [(0, 0), (0, 0)], dilations
    if algorithm == "SAME":
        pads = []
        for size, kk, s in zip(x_hw, k, strides, strict=True):
            total = max((-(-size // s) - 1) * s + kk - size, 0)
            pads.append((total // 2, total - total // 2))
        return pads, [1, 1]
    if len(paddings) == 2:
        return [(paddings[0],) * 2, (paddings[1],) * 2], dilations
    return [tuple(paddings[0:2]), tuple(paddings[2:4])], dilations


def direct_conv(x, w, strides, paddings, dilations, groups, algorithm="EXPLICIT", nhwc=False):
    """out[n, o, i, j] = sum over the group's channels and the kernel of x at
    (i * stride - pad + kernel offset * dilation), zero outside."""
    x = x.astype(np.float64).transpose(0, 3, 1, 2) if nhwc else x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    (pt, pb), (pl, pr) = (
        pads := _pads((h, wd), (kh, kw), strides, paddings, dilations, algorithm)
    )[0]
    dh, dw = pads[1]
    oh = (h + pt + pb - (dh * (kh - 1) + 1)) // strides[0] + 1
    ow = (wd + pl + pr - (dw * (kw - 1) + 1)) // strides[1] + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, s = i * strides[0] - pt + a * dh, j * strides[1] - pl + b * dw
                    if 0 <= r < h and 0 <= s < wd:
                        for g in range(groups):
                            xs = x[:, g * cg : (g + 1) * cg, r, s]  # n, cg
                            ws = w[g * og : (g + 1) * og, :, a, b]  # og, cg
                            out[:, g * og : (g + 1) * og, i, j] += xs @ ws.T
    return out.transpose(0, 2, 3, 1) if nhwc else out


def direct_conv_transpose(
    x, w, strides, paddings, dilations, groups, out_hw, algorithm="EXPLICIT", nhwc=False
):
    """Every input pixel scatters x[n, c, i, j] * w[c, o] to (i * stride - pad + kernel
    offset * dilation) of the output, kept where that lies inside it."""
    x = x.astype(np.float64).transpose(0, 3, 1, 2) if nhwc else x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    pads, (dh, dw) = _pads((h, wd), (kh, kw), strides, paddings, dilations, algorithm)
    cg = c // groups
    out = np.zeros((n, og * groups, *out_hw))
    for i in range(h):
        for j in range(wd):
            for a in range(kh):
                for b in range(kw):
                    r = i * strides[0] - pads[0][0] + a * dh
                    s = j * strides[1] - pads[1][0] + b * dw
                    if 0 <= r < out_hw[0] and 0 <= s < out_hw[1]:
                        for g in range(groups):
                            xs = x[:, g * cg : (g + 1) * cg, i, j]
                            ws = w[g * cg : (g + 1) * cg, :, a, b]  # cg, og
                            out[:, g * og : (g + 1) * og, r, s] += xs @ ws
    return out.transpose(0, 2, 3, 1) if nhwc else out


CONV_CASES = [
    # (op, x dims, filter dims, attributes)
    ("pd_op.conv2d", (1, 3, 7, 7), (5, 3, 3, 3), {"paddings": [1, 1]}),
    ("pd_op.conv2d", (2, 3, 33, 7), (1, 3, 3, 1), {"paddings": [0, 1, 2, 1], "strides": [2, 3]}),
    (
        "pd_op.conv2d",
        (1, 1, 33, 33),
        (3, 1, 5, 3),
        {"padding_algorithm": "SAME", "strides": [2, 3]},
    ),
    (
        "pd_op.conv2d",
        (3, 4, 7, 9),
        (3, 4, 3, 3),
        {"padding_algorithm": "VALID", "dilations": [2, 3]},
    ),
    (
        "pd_op.conv2d",
        (1, 6, 7, 7),
        (9, 2, 3, 3),
        {"groups": 3, "paddings": [2, 2], "dilations": [2, 2]},
    ),
    ("pd_op.conv2d", (2, 7, 5, 3), (7, 3, 3, 1), {"data_format": "NHWC", "paddings": [1, 0]}),
    (
        "pd_op.conv2d",
        (1, 7, 33, 6),
        (3, 2, 1, 1),
        {"data_format": "NHWC", "groups": 3, "strides": [3, 2]},
    ),
    ("pd_op.depthwise_conv2d", (2, 3, 7, 7), (3, 1, 3, 3), {"groups": 3, "paddings": [1, 1]}),
    (
        "pd_op.depthwise_conv2d",
        (1, 3, 33, 7),
        (6, 1, 3, 3),
        {"groups": 3, "padding_algorithm": "SAME", "strides": [2, 2]},
    ),
    (
        "pd_op.depthwise_conv2d",
        (1, 7, 5, 3),
        (3, 1, 3, 3),
        {"groups": 3, "data_format": "NHWC", "paddings": [1, 1]},
    ),
]

TRANSPOSE_CASES = [
    (
        "pd_op.conv2d_transpose",
        (1, 3, 7, 5),
        (3, 5, 3, 3),
        {"strides": [2, 2], "paddings": [1, 1], "output_padding": [1, 1]},
    ),
    ("pd_op.conv2d_transpose", (2, 4, 3, 7), (4, 1, 3, 3), {"strides": [2, 3], "groups": 2}),
    (
        "pd_op.conv2d_transpose",
        (1, 3, 1, 33),
        (3, 3, 3, 1),
        {"dilations": [2, 1], "paddings": [0, 1, 0, 0]},
    ),
    (
        "pd_op.conv2d_transpose",
        (1, 5, 7, 3),
        (3, 2, 3, 3),
        {"data_format": "NHWC", "strides": [2, 2], "paddings": [1, 1]},
    ),
    (
        "pd_op.conv2d_transpose",
        (1, 4, 3, 5),
        (4, 2, 3, 3),
        {"padding_algorithm": "SAME", "strides": [2, 2]},
    ),
    (
        "pd_op.conv2d_transpose",
        (1, 4, 3, 5),
        (4, 2, 3, 3),
        {"strides": [2, 2], "paddings": [1, 1], "output_size": [6, 10]},
    ),
]


def _attrs(attrs):
    full = {"strides": [1, 1], "paddings": [0, 0], "dilations": [1, 1], "groups": 1}
    full.update(attrs)
    return full


def _feeds(x_dims, w_dims, seed):
    rng = np.random.default_rng(seed)
    return {
        "x": rng.uniform(-2, 2, x_dims).astype(np.float32),
        "w": rng.uniform(-1, 1, w_dims).astype(np.float32),
    }


def _ids(cases):
    return [
        f"{op.split('.')[1]}-{'x'.join(map(str, x))}-{i}" for i, (op, x, _, _) in enumerate(cases)
    ]


@pytest.mark.parametrize(
    ("op", "x_dims", "w_dims", "attrs"),
    CONV_CASES + TRANSPOSE_CASES,
    ids=_ids(CONV_CASES + TRANSPOSE_CASES),
)
def test_reference_kernel_matches_the_definition(op, x_dims, w_dims, attrs):
    program, result = _build(op, x_dims, w_dims, **attrs)
    feeds = _feeds(x_dims, w_dims, len(x_dims) + sum(w_dims))
    (got,) = run_reference(program, feeds)
    a = _attrs(attrs)
    nhwc = a.get("data_format") == "NHWC"
    algorithm = a.get("padding_algorithm", "EXPLICIT")
    geometry = (a["strides"], a["paddings"], a["dilations"], a["groups"])
    if op == "pd_op.conv2d_transpose":
        out_hw = result.type.dims[1:3] if nhwc else result.type.dims[2:4]
        want = direct_conv_transpose(feeds["x"], feeds["w"], *geometry, out_hw, algorithm, nhwc)
    else:
        want = direct_conv(feeds["x"], feeds["w"], *geometry, algorithm, nhwc)
    assert got.shape == result.type.dims == want.shape
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT64])
def test_reference_kernel_rounds_once_to_the_result_dtype(dtype):
    """Accumulated in float64, rounded once: a float16 result is exactly the
    definition's value rounded (bfloat16 travels as bit patterns)."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[1, 3, 7, 7], dtype=dtype)
    w = b.op("pd_op.data", name="w", shape=[2, 3, 3, 3], dtype=dtype)
    out = b.op("pd_op.conv2d", x, w, paddings=[1, 1])
    assert out.type.data_type is dtype
    feeds = _feeds((1, 3, 7, 7), (2, 3, 3, 3), 5)
    if dtype is DataType.BFLOAT16:
        feeds = {k: float32_to_bfloat16(v) for k, v in feeds.items()}
        values = {k: bfloat16_to_float32(v) for k, v in feeds.items()}
    else:
        feeds = values = {k: v.astype(dtype.numpy) for k, v in feeds.items()}
    (got,) = run_reference(program, feeds)
    want = direct_conv(values["x"], values["w"], [1, 1], [1, 1], [1, 1], 1)
    if dtype is DataType.BFLOAT16:
        assert compare(bfloat16_to_float32(got), want, "bfloat16").ok
    elif dtype is DataType.FLOAT64:  # the sums run in another order
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, want.astype(dtype.numpy))


# -- compiled (cuda-emu) against the reference ----------------------------------------------


COMPILED_CASES = [CONV_CASES[i] for i in (1, 4, 6, 8)] + [TRANSPOSE_CASES[i] for i in (1, 3)]


@pytest.mark.parametrize(
    ("op", "x_dims", "w_dims", "attrs"), COMPILED_CASES, ids=_ids(COMPILED_CASES)
)
def test_compiled_matches_reference_with_the_ops_after_it_fused(op, x_dims, w_dims, attrs):
    """The conv as a library call, then a per-channel bias and relu: one kernel."""
    program, out = _build(op, x_dims, w_dims, **attrs)
    b = Builder(program)
    nhwc = attrs.get("data_format") == "NHWC"
    channels = out.type.dims[3] if nhwc else out.type.dims[1]
    bias = b.op("pd_op.data", name="bias", shape=[channels], dtype=F32)
    shape = b.op("pd_op.full_int_array", value=[1, 1, 1, -1] if nhwc else [1, -1, 1, 1])
    b.op("pd_op.relu", b.op("pd_op.add", out, b.op("pd_op.reshape", bias, shape)))
    feeds = _feeds(x_dims, w_dims, 7)
    feeds["bias"] = np.linspace(-1, 1, channels, dtype=np.float32)
    want = run_reference(program, feeds)
    exe = cinn_py.compile(program, "cuda-emu")
    got = list(exe.run(feeds).values())
    assert len(got) == len(want) == 1
    result = compare(got[0], want[0])
    assert result.ok, result
    steps = [str(s) for s in exe.runner.runtime_program.instructions]
    assert [s.startswith("library") for s in steps] == [True, False], steps
    assert op in steps[0]


@pytest.mark.parametrize("target", ["reference", "cuda-emu"])
def test_dynamic_transpose_with_output_padding_runs(target):
    """Declared `-1` heights (Paddle prints 0 for -1 + output_padding): the kernel sizes
    its output from the feed, as the specialised program does."""
    program, out = _build(
        "pd_op.conv2d_transpose",
        (1, 4, -1, 5),
        (4, 2, 3, 3),
        strides=[2, 2],
        paddings=[1, 1],
        output_padding=[1, 1],
    )
    assert out.type.dims == (1, 2, -1, 10)
    feeds = _feeds((1, 4, 3, 5), (4, 2, 3, 3), 11)
    (got,) = cinn_py.compile(program, target).run(feeds).values()
    want = direct_conv_transpose(feeds["x"], feeds["w"], [2, 2], [1, 1], [1, 1], 1, (6, 10))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
