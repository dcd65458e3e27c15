"""Every device entry of the `cuda` target's library table (`cinn_py.targets.cuda_library`)
on the GPU against the op's reference kernel: matmul / bmm / fused_gemm_epilogue through
cuBLASLt (every float dtype, transposes, 1-D operands, batch broadcasting, epilogues),
convolutions through cuDNN (strides, paddings, dilations, groups, NHWC, transposed),
and the CuPy ops (cumsum, argsort, topk, argmax / argmin, dropout, pools) over odd
shapes and every dtype. Each call runs on a stream of its own and writes into output
arrays prefilled with garbage, as the arena's variables would be. Needs CuPy and the
`gpu` extra's libraries (the root conftest skips these without a GPU):

    pip install -e '.[gpu]' && python -m pytest kernels_tests -m gpu
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.op_def import lookup_op_def
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType
from cinn_py.targets import cuda_library
from cinn_py.targets.library_call import HostLibraryCall
from cinn_py.tolerances import compare

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp() -> Any:
    return pytest.importorskip("cupy")


FLOATS = ["float32", "float16", "bfloat16", "float64"]


def data_type(dtype: str) -> DataType:
    return DataType.BFLOAT16 if dtype == "bfloat16" else DataType.from_numpy(np.dtype(dtype))


def storage(dtype: str) -> np.dtype:
    return np.dtype(np.uint16) if dtype == "bfloat16" else np.dtype(dtype)


def values(shape: tuple[int, ...], dtype: str, seed: int, scale: float = 1.0) -> np.ndarray:
    """Storage arrays: normal floats (bfloat16 as bits), small ints with ties, bools."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(storage(dtype)).kind in "iu" and dtype != "bfloat16":
        return rng.integers(-5 if np.dtype(dtype).kind == "i" else 0, 6, shape).astype(dtype)
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    return float32_to_bfloat16(x) if dtype == "bfloat16" else x.astype(dtype)


def build(
    name: str, arrays: list[np.ndarray], dtypes: list[str], results: list | None = None, **attrs
) -> Operation:
    program = Program()
    builder = Builder(program)
    operands = []
    for index, (array, dtype) in enumerate(zip(arrays, dtypes, strict=True)):
        type_ = DenseTensorType.get(data_type(dtype), array.shape)
        attributes = {"name": f"x{index}", "shape": list(array.shape), "dtype": data_type(dtype)}
        operands.append(builder.create("pd_op.data", [], attributes, [type_]).result(0))
    return builder.create(name, operands, attrs, results)


def run(cp, op: Operation, arrays: list[np.ndarray]) -> tuple[list, list, Any]:
    """(device results, reference results, the call) of `op` over storage arrays."""
    call = cuda_library.plan(op)
    assert call is not None and call.where.startswith("device"), f"{op.name}: {call!r}"
    # an absent result (a NullType reserve_space) is None, as the runtime passes it
    kinds = [
        (r.type.dims, storage(_name(r.type.data_type))) if hasattr(r.type, "dims") else None
        for r in op.results
    ]
    device_out = [None if k is None else cp.empty(*k) for k in kinds]
    for out in device_out:
        if out is not None:  # garbage: the call must write every element
            out.reshape(-1).view(np.uint8)[...] = 0x7B
    device_in = [cp.asarray(a) for a in arrays]
    cp.cuda.Device().synchronize()  # the uploads and fills, queued elsewhere, are done
    stream = cp.cuda.Stream(non_blocking=True)
    call(device_in, device_out, stream.ptr)
    stream.synchronize()
    host_out = [None if k is None else np.empty(*k) for k in kinds]
    HostLibraryCall(op)([a.copy() for a in arrays], host_out, None)
    present = [i for i, k in enumerate(kinds) if k is not None]
    return [cp.asnumpy(device_out[i]) for i in present], [host_out[i] for i in present], call


def _name(dtype: DataType) -> str:
    return "bfloat16" if dtype is DataType.BFLOAT16 else str(dtype.numpy)


def assert_close(got: list, want: list, dtypes: list[str], override=None) -> None:
    for g, w, d in zip(got, want, dtypes, strict=True):
        result = compare(g, w, d if d == "bfloat16" else None, override)
        assert result.ok, result


def gemm_tolerance(dtype: str, k: int) -> tuple[float, float]:
    """float32 accumulation against the reference's float64, over K terms."""
    eps = {"float32": 1.2e-7, "float64": 2.3e-16, "float16": 4.9e-4, "bfloat16": 3.9e-3}[dtype]
    return (max(4 * eps, 1e-6 * k), 4 * eps * k + 1e-6)


# -- matmul, bmm, fused_gemm_epilogue ------------------------------------------------------

MATMULS = [
    ((3, 7), (7, 5), False, False),
    ((7, 3), (7, 5), True, False),
    ((3, 7), (5, 7), False, True),
    ((7, 3), (5, 7), True, True),
    ((7,), (7, 5), False, False),
    ((3, 7), (7,), False, False),
    ((129,), (129,), False, False),
    ((2, 33, 129), (129, 65), False, False),
    ((2, 129, 33), (129, 65), True, False),
    ((33, 129), (4, 129, 65), False, False),
    ((2, 3, 33, 17), (2, 3, 65, 17), False, True),
    ((2, 1, 3, 7), (5, 7, 6), False, False),
    ((1, 4, 7, 3), (2, 1, 5, 7), True, True),
    ((1000, 64), (64, 1), False, False),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("xd,yd,tx,ty", MATMULS)
def test_matmul(cp, xd, yd, tx, ty, dtype) -> None:
    x, y = values(xd, dtype, 1), values(yd, dtype, 2)
    shape_x = np.empty(xd)
    shape_y = np.empty(yd)
    computed = np.matmul(
        np.swapaxes(shape_x, -1, -2) if tx and len(xd) > 1 else shape_x,
        np.swapaxes(shape_y, -1, -2) if ty and len(yd) > 1 else shape_y,
    ).shape
    result = DenseTensorType.get(data_type(dtype), computed)
    op = build("pd_op.matmul", [x, y], [dtype] * 2, [result], transpose_x=tx, transpose_y=ty)
    got, want, call = run(cp, op, [x, y])
    k = xd[-2] if tx and len(xd) > 1 else xd[-1]
    assert_close(got, want, [dtype], gemm_tolerance(dtype, k))
    copies = call.gemm.broadcast_x is not None or call.gemm.broadcast_y is not None
    assert call.capturable == (not copies)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_integer_matmul(cp, dtype) -> None:
    x, y = values((2, 3, 7), dtype, 3), values((7, 5), dtype, 4)
    op = build("pd_op.matmul", [x, y], [dtype] * 2)
    got, want, call = run(cp, op, [x, y])
    np.testing.assert_array_equal(got[0], want[0])
    assert not call.capturable


@pytest.mark.parametrize("dtype", FLOATS)
def test_bmm(cp, dtype) -> None:
    x, y = values((4, 33, 17), dtype, 5), values((4, 17, 65), dtype, 6)
    op = build("pd_op.bmm", [x, y], [dtype] * 2)
    got, want, call = run(cp, op, [x, y])
    assert_close(got, want, [dtype], gemm_tolerance(dtype, 17))
    assert call.capturable


def test_matmul_with_an_empty_inner_dim_writes_zeros(cp) -> None:
    x, y = values((3, 0), "float32", 7), values((0, 5), "float32", 8)
    op = build("pd_op.matmul", [x, y], ["float32"] * 2)
    got, want, _ = run(cp, op, [x, y])
    np.testing.assert_array_equal(got[0], want[0])


def test_matmul_writes_into_a_view_of_an_arena(cp) -> None:
    """The output is a view at an offset of one big allocation, as the memory plan's."""
    x, y = values((33, 17), "float32", 9), values((17, 5), "float32", 10)
    op = build("pd_op.matmul", [x, y], ["float32"] * 2)
    call = cuda_library.plan(op)
    arena = cp.zeros(4096, dtype=np.uint8)
    out = arena[256 : 256 + 33 * 5 * 4].view(np.float32).reshape(33, 5)
    call([cp.asarray(x), cp.asarray(y)], [out], cp.cuda.get_current_stream().ptr)
    np.testing.assert_allclose(cp.asnumpy(out), x @ y, rtol=1e-5, atol=1e-5)
    assert int(arena[:256].sum()) == 0 and int(arena[256 + 33 * 5 * 4 :].sum()) == 0


@pytest.mark.skipif(
    lookup_op_def("pd_op.fused_gemm_epilogue") is None, reason="no pd_op.fused_gemm_epilogue"
)
@pytest.mark.parametrize("activation", ["none", "relu", "gelu"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize(
    "xd,yd,tx,ty",
    [
        ((33, 17), (17, 65), False, False),
        ((2, 5, 17), (65, 17), False, True),
        ((17, 33), (17, 65), True, False),
    ],
)
def test_fused_gemm_epilogue(cp, xd, yd, tx, ty, dtype, activation) -> None:
    n = yd[0] if ty else yd[1]
    x, y, bias = values(xd, dtype, 11), values(yd, dtype, 12), values((n,), dtype, 13)
    op = build(
        "pd_op.fused_gemm_epilogue",
        [x, y, bias],
        [dtype] * 3,
        trans_x=tx,
        trans_y=ty,
        activation=activation,
    )
    got, want, call = run(cp, op, [x, y, bias])
    assert_close(got, want, [dtype], gemm_tolerance(dtype, 17))
    assert call.capturable and "cuBLASLt" in call.where


# -- convolutions ----------------------------------------------------------------------------

CONVS = [
    # op, x NCHW, filter, attributes
    ("pd_op.conv2d", (2, 4, 9, 11), (6, 4, 3, 3), {}),
    ("pd_op.conv2d", (1, 3, 17, 13), (5, 3, 3, 5), dict(strides=[2, 1], paddings=[1, 2])),
    ("pd_op.conv2d", (1, 4, 16, 16), (8, 2, 3, 3), dict(groups=2, dilations=[2, 2])),
    ("pd_op.conv2d", (1, 3, 15, 15), (4, 3, 4, 4), dict(paddings=[1, 2, 0, 3], strides=[3, 2])),
    ("pd_op.conv2d", (2, 3, 14, 15), (4, 3, 3, 3), dict(padding_algorithm="SAME", strides=[2, 2])),
    ("pd_op.depthwise_conv2d", (1, 8, 13, 13), (8, 1, 3, 3), dict(groups=8, paddings=[1, 1])),
    ("pd_op.conv2d_transpose", (1, 4, 5, 6), (4, 3, 3, 3), dict(strides=[2, 2], paddings=[1, 1])),
    (
        "pd_op.conv2d_transpose",
        (2, 4, 5, 6),
        (4, 2, 3, 3),
        dict(strides=[2, 2], paddings=[1, 1], output_padding=[1, 1], groups=2),
    ),
]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,xd,wd,attrs", CONVS)
def test_conv(cp, name, xd, wd, attrs, dtype, layout) -> None:
    x, w = values(xd, dtype, 14), values(wd, dtype, 15, scale=0.5)
    if layout == "NHWC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    extra = {"output_size": []} if name == "pd_op.conv2d_transpose" else {}
    op = build(name, [x, w], [dtype] * 2, data_format=layout, **attrs, **extra)
    got, want, call = run(cp, op, [x, w])
    k = int(np.prod(wd[1:])) * (wd[0] if name == "pd_op.conv2d_transpose" else 1)
    assert_close(got, want, [dtype], gemm_tolerance(dtype, k))
    assert "cuDNN" in call.where


# -- the CuPy ops ------------------------------------------------------------------------------

SHAPES = [(1,), (7,), (1000,), (3, 33), (129, 3)]
ALL = [*FLOATS, "int32", "int64", "int8", "uint8", "bool"]


def exact(got: list, want: list) -> None:
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", SHAPES)
def test_sorts(cp, shape, dtype) -> None:
    x = values(shape, dtype, 16)
    if dtype not in ("bool",) and x.size > 3:
        x.reshape(-1)[1] = x.reshape(-1)[2]  # a tie
        if dtype in ("float32", "float16", "float64"):
            x.reshape(-1)[0] = np.nan
    for descending in (False, True):
        op = build("pd_op.argsort", [x], [dtype], axis=0, descending=descending)
        exact(*run(cp, op, [x])[:2])
    for largest in (True, False):
        op = build("pd_op.topk", [x], [dtype], k=min(3, shape[-1]), axis=-1, largest=largest)
        exact(*run(cp, op, [x])[:2])
    for name in ("pd_op.argmax", "pd_op.argmin"):
        op = build(name, [x], [dtype], axis=-1, keepdims=False, dtype=DataType.INT64)
        exact(*run(cp, op, [x])[:2])


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", SHAPES)
def test_cumsum(cp, shape, dtype) -> None:
    x = values(shape, dtype, 17)
    for exclusive, reverse in ((False, False), (True, True)):
        op = build("pd_op.cumsum", [x], [dtype], axis=-1, exclusive=exclusive, reverse=reverse)
        got, want, _ = run(cp, op, [x])
        if dtype in FLOATS:
            assert_close(got, want, [dtype])
        else:
            exact(got, want)


@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_and_pools(cp, dtype) -> None:
    x = values((2, 3, 20, 17), dtype, 18)
    op = build("pd_op.dropout", [x], [dtype], p=0.25, is_test=True, mode="downgrade_in_infer")
    got, want, _ = run(cp, op, [x])
    assert_close(got, want, [dtype, "uint8"])
    for kind in ("max", "avg"):
        op = build(
            "pd_op.pool2d", [x], [dtype], kernel_size=[15, 13], strides=[2, 1], pooling_type=kind
        )
        got, want, _ = run(cp, op, [x])
        assert_close(got, want, [dtype])
    op = build("pd_op.max_pool2d_with_index", [x], [dtype], kernel_size=[3, 3], strides=[2, 2])
    got, want, _ = run(cp, op, [x])
    assert_close(got, want, [dtype, "int32"])
