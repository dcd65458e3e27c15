"""The `cuda` target's device table (`cinn_py.targets.cuda_library`), without a GPU:

- every op that can end up as a LIBRARY group on `cuda` has a device entry (the table
  is checked against the op registry, so a new library op must get one or be listed
  with the reason it runs on the host);
- the CuPy implementations, run with NumPy as their array module, give the reference
  kernels' results exactly, over odd shapes and every dtype (the only check they get
  without a GPU);
- the matmul's cuBLASLt description (column-major layouts, transposes, batch strides,
  folding, broadcast copies), interpreted over NumPy buffers, gives the reference's
  numbers; the convolutions' cuDNN geometry is checked field by field;
- a planner whose GPU package is missing names it and the `gpu` extra.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from cinn_py.errors import HostFallbackWarning, MissingLibraryError
from cinn_py.hlir.op_lowering.context import any_dtype, numeric
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.op_def import registered_ops
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait
from cinn_py.pir.types import DenseTensorType, is_null
from cinn_py.targets import CUDA, cuda_library
from cinn_py.targets.cuda_library import conv, cupy_ops, matmul
from cinn_py.targets.library_call import HostLibraryCall

# -- the table against the registry ---------------------------------------------------------

REFUSED_FORMS = {
    "pd_op.dropout": "inference dropout whose mask an op computes with stays whole",
    "pd_op.max_pool2d_with_index": "its positions are read: the rule leaves it whole",
    "pd_op.pool2d": "windows of more than MAX_UNROLLED_TAPS taps that are not whole planes",
    "pd_op.argmax": "bool input or a zero extent: the lowering refuses them",
    "pd_op.argmin": "bool input or a zero extent: the lowering refuses them",
}
"""Ops that compile as kernels or decompose, but whose rule or lowering refuses forms
a static float program has: they need a device entry too."""

HOST_ONLY = {
    **{
        name: "its rule refuses only non-float input (or -1 dims, specialised first)"
        for name in (
            "pd_op.softmax",
            "pd_op.log_softmax",
            "pd_op.layer_norm",
            "pd_op.rms_norm",
            "pd_op.batch_norm",
            "pd_op.batch_norm_",
            "pd_op.group_norm",
            "pd_op.instance_norm",
            "pd_op.swiglu",
            "pd_op.fused_rms_norm_quant",
        )
    },
    "pd_op.einsum": "its rule refuses only bool operands (or two -1 sizes in one reshape)",
    "pd_op.bilinear_interp": "refused for non-float input or a scale_tensor operand",
    "pd_op.nearest_interp": "refused for non-float input or a scale_tensor operand",
}
"""Ops that can become LIBRARY groups only in forms no real program has: they run by
their reference kernel on the host, with a HostFallbackWarning (no device entry yet)."""


def _computing(op_def) -> bool:
    return op_def.kernel is not None and not (
        op_def.has_trait(Trait.GLUE) or op_def.has_trait(Trait.VECTOR)
    )


def library_only_ops() -> set[str]:
    """Ops with a reference kernel and neither lowering nor decomposition: always LIBRARY."""
    return {
        d.name
        for d in registered_ops()
        if _computing(d) and d.lowering is None and d.decompose is None
    }


def refusable_ops() -> set[str]:
    """Ops that become LIBRARY groups when a rule refuses: a decomposition with no
    lowering behind it, or a lowering whose `accepts` is more than a dtype check."""
    found = set()
    for d in registered_ops():
        if not _computing(d):
            continue
        if d.decompose is not None and d.lowering is None:
            found.add(d.name)
        if d.lowering is not None and d.lowering.accepts not in (any_dtype, numeric):
            found.add(d.name)
    return found


def test_every_library_op_has_a_device_entry() -> None:
    needed = library_only_ops() | set(REFUSED_FORMS)
    missing = sorted(needed - set(cuda_library.TABLE))
    assert not missing, f"library ops with no device entry in cuda_library: {missing}"


def test_every_refusable_op_is_classified() -> None:
    """A new op that can fall back to a library call must get an entry or a reason."""
    unclassified = sorted(refusable_ops() - set(REFUSED_FORMS) - set(HOST_ONLY))
    assert not unclassified, (
        f"ops whose rules can refuse, neither in REFUSED_FORMS nor in HOST_ONLY: {unclassified}"
    )
    assert not set(HOST_ONLY) & set(cuda_library.TABLE), "HOST_ONLY ops that have entries"
    assert set(REFUSED_FORMS) <= refusable_ops()


def test_the_coverage_test_fails_without_an_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    table = dict(cuda_library.TABLE)
    del table["pd_op.topk"]
    monkeypatch.setattr(cuda_library, "TABLE", table)
    with pytest.raises(AssertionError, match=r"pd_op\.topk"):
        test_every_library_op_has_a_device_entry()


def test_plan_without_an_entry_is_none() -> None:
    program, op = build("pd_op.exp", [np.zeros(3, np.float32)])
    assert cuda_library.plan(op) is None


# -- building one op ------------------------------------------------------------------------


def build(
    name: str, arrays: list[np.ndarray | None], results: list | None = None, **attrs: Any
) -> tuple[Program, Operation]:
    """A program of data ops feeding one op `name` (result types inferred unless given)."""
    program = Program()
    builder = Builder(program)
    operands = []
    for index, array in enumerate(arrays):
        if array is None:
            operands.append(None)
            continue
        dtype = DataType.from_numpy(array.dtype)
        type_ = DenseTensorType.get(dtype, array.shape)
        attributes = {"name": f"x{index}", "shape": list(array.shape), "dtype": dtype}
        operands.append(builder.create("pd_op.data", [], attributes, [type_]).result(0))
    op = builder.create(name, operands, attrs, results)
    return program, op


def storage_of(type_: DenseTensorType) -> np.dtype:
    return np.dtype(np.uint16) if type_.data_type is DataType.BFLOAT16 else type_.data_type.numpy


def run_both(op: Operation, inputs: list[np.ndarray | None]) -> tuple[list, list]:
    """(device code on NumPy, reference kernel) results of `op` over storage arrays."""
    call = cupy_ops.plan_with(op, np)
    assert call is not None, f"{op.name} was not planned"
    results = []
    for caller in (call, HostLibraryCall(op)):
        outputs = [np.empty(r.type.dims, storage_of(r.type)) for r in op.results]
        caller([None if a is None else a.copy() for a in inputs], outputs, None)
        results.append(outputs)
    return results[0], results[1]


def assert_same(got: list, want: list) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


SHAPES = [(1,), (3,), (7,), (33,), (129,), (1000,), (3, 7), (7, 33), (129, 3), (2, 3, 7)]
DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "uint8", "bool"]


def sample(shape: tuple[int, ...], dtype: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(what the op is built with, its storage array): values with many ties, and for
    floats NaN, infinities and signed zeros."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        values = rng.integers(0, 2, shape).astype(bool)
        return values, values
    if dtype in ("int8", "uint8", "int32", "int64"):
        info = np.iinfo(dtype)
        values = rng.integers(max(info.min, -5), min(info.max, 5), shape).astype(dtype)
        if values.size > 2:
            values.reshape(-1)[0], values.reshape(-1)[-1] = info.min, info.max
        return values, values
    values = rng.integers(-4, 4, shape).astype(np.float32) / 2
    flat = values.reshape(-1)
    special = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan]
    for i, v in enumerate(special[: max(flat.size // 5, 0)]):
        flat[(i * 7) % flat.size] = v
    if dtype == "bfloat16":
        bits = float32_to_bfloat16(values)
        return bits, bits
    cast = values.astype(dtype)
    return cast, cast


def build_bf16(name: str, storage: list[np.ndarray], dtypes: list[str], **attrs: Any):
    """`build` with bfloat16 operands typed as bfloat16 (their arrays are uint16 bits)."""
    program = Program()
    builder = Builder(program)
    operands = []
    for index, (array, dtype) in enumerate(zip(storage, dtypes, strict=True)):
        data_type = DataType.BFLOAT16 if dtype == "bfloat16" else DataType.from_numpy(array.dtype)
        type_ = DenseTensorType.get(data_type, array.shape)
        attributes = {"name": f"x{index}", "shape": list(array.shape), "dtype": data_type}
        operands.append(builder.create("pd_op.data", [], attributes, [type_]).result(0))
    return program, builder.create(name, operands, attrs)


def check(name: str, arrays: list[np.ndarray], dtypes: list[str], **attrs: Any) -> None:
    _, op = build_bf16(name, arrays, dtypes, **attrs)
    got, want = run_both(op, arrays)
    assert_same(got, want)


# -- the CuPy ops on NumPy against the reference --------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_cumsum(shape, dtype) -> None:
    x, _ = sample(shape, dtype, 1)
    for axis in sorted({0, -1, len(shape) - 1}):
        for exclusive in (False, True):
            for reverse in (False, True):
                check(
                    "pd_op.cumsum",
                    [x],
                    [dtype],
                    axis=axis,
                    exclusive=exclusive,
                    reverse=reverse,
                )
    check("pd_op.cumsum", [x], [dtype], axis=0, flatten=True, reverse=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_argsort(shape, dtype) -> None:
    x, _ = sample(shape, dtype, 2)
    for axis in sorted({0, -1}):
        for descending in (False, True):
            check("pd_op.argsort", [x], [dtype], axis=axis, descending=descending)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_topk(shape, dtype) -> None:
    x, _ = sample(shape, dtype, 3)
    for axis in sorted({0, -1}):
        size = shape[axis]
        for k in sorted({1, min(3, size), size}):
            for largest in (True, False):
                check("pd_op.topk", [x], [dtype], k=k, axis=axis, largest=largest)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1,), (7,), (33, 3), (3, 129), (2, 3, 7)])
@pytest.mark.parametrize("name", ["pd_op.argmax", "pd_op.argmin"])
def test_arg_extremes(name, shape, dtype) -> None:
    x, _ = sample(shape, dtype, 4)
    for axis in sorted({0, -1}):
        for keepdims in (False, True):
            for out in (DataType.INT64, DataType.INT32):
                check(name, [x], [dtype], axis=axis, keepdims=keepdims, dtype=out)
    check(name, [x], [dtype], axis=0, flatten=True, keepdims=True, dtype=DataType.INT64)


def test_zero_d_sorts() -> None:
    x = np.array(2.5, np.float32)
    check("pd_op.argsort", [x], ["float32"])
    check("pd_op.topk", [x], ["float32"], k=1)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("mode", ["downgrade_in_infer", "upscale_in_train"])
def test_inference_dropout(mode, dtype) -> None:
    x, _ = sample((7, 33), dtype, 5)
    check("pd_op.dropout", [x], [dtype], p=0.3, is_test=True, mode=mode)


POOLS = [
    # (input NCHW shape, attributes)
    ((1, 2, 17, 19), dict(kernel_size=[15, 15], strides=[1, 1], paddings=[0, 0])),
    ((2, 3, 20, 16), dict(kernel_size=[14, 13], strides=[3, 2], paddings=[2, 1], ceil_mode=True)),
    ((1, 1, 33, 33), dict(kernel_size=[17, 11], strides=[4, 4], paddings=[3, 3, 1, 2])),
    ((1, 3, 31, 29), dict(kernel_size=[5, 7], adaptive=True)),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("shape,attrs", POOLS)
def test_pool2d(shape, attrs, dtype) -> None:
    x, _ = sample(shape, dtype, 6)
    for kind in ("max", "avg"):
        for exclusive in (True, False):
            check("pd_op.pool2d", [x], [dtype], pooling_type=kind, exclusive=exclusive, **attrs)
    nhwc = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    check("pd_op.pool2d", [nhwc], [dtype], pooling_type="avg", data_format="NHWC", **attrs)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape,attrs", POOLS)
def test_max_pool2d_with_index(shape, attrs, dtype) -> None:
    x, _ = sample(shape, dtype, 7)
    attrs = {k: v for k, v in attrs.items() if k != "paddings" or len(v) == 2}
    check("pd_op.max_pool2d_with_index", [x], [dtype], **attrs)


# -- matmul: the cuBLASLt description, interpreted ------------------------------------------------

MATMULS = [
    # x dims, y dims, transpose_x, transpose_y
    ((3, 7), (7, 5), False, False),
    ((7, 3), (7, 5), True, False),
    ((3, 7), (5, 7), False, True),
    ((7, 3), (5, 7), True, True),
    ((7,), (7, 5), False, False),
    ((3, 7), (7,), False, False),
    ((7,), (7,), True, True),
    ((2, 3, 7), (7, 5), False, False),  # y single: folded into M
    ((2, 7, 3), (7, 5), True, False),  # transposed x: batch stride 0 for y
    ((3, 7), (4, 7, 5), False, False),  # x single: batch stride 0
    ((2, 3, 3, 7), (2, 3, 5, 7), False, True),
    ((2, 1, 3, 7), (5, 7, 6), False, False),  # partial broadcast: x copied to the batch
    ((1, 4, 7, 3), (2, 1, 5, 7), True, True),  # both copied
    ((1, 1, 3, 7), (2, 2, 7, 5), False, False),  # x single through ones
    ((33, 129), (129, 1), False, False),
]


@pytest.mark.parametrize("xd,yd,tx,ty", MATMULS)
def test_cublaslt_description_computes_matmul(xd, yd, tx, ty) -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal(xd).astype(np.float32)
    y = rng.standard_normal(yd).astype(np.float32)
    computed = np.matmul(
        np.swapaxes(x, -1, -2) if tx and x.ndim > 1 else x,
        np.swapaxes(y, -1, -2) if ty and y.ndim > 1 else y,
    ).shape  # what specialize_shapes declares (Paddle's infer-meta differs, see nn.py)
    result = DenseTensorType.get(DataType.FLOAT32, computed)
    _, op = build("pd_op.matmul", [x, y], [result], transpose_x=tx, transpose_y=ty)
    gemm = matmul.gemm_geometry(op)
    assert gemm is not None
    want = HostLibraryCall(op)
    out = np.empty(op.results[0].type.dims, np.float32)
    want([x, y], [out], None)
    got = matmul.emulate(gemm, x, y)
    np.testing.assert_allclose(got.reshape(out.shape), out, rtol=1e-5, atol=1e-5)


def test_matmul_folds_a_single_y_into_m() -> None:
    _, op = build("pd_op.matmul", [np.zeros((2, 3, 7), np.float32), np.zeros((7, 5), np.float32)])
    gemm = matmul.gemm_geometry(op)
    assert (gemm.m, gemm.n, gemm.k, gemm.batch_count) == (5, 6, 7, 1)


def test_bmm_description() -> None:
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((4, 3, 7)), rng.standard_normal((4, 7, 5))
    _, op = build("pd_op.bmm", [x, y])
    gemm = matmul.gemm_geometry(op)
    assert gemm.batch_count == 4 and gemm.a.batch_stride == 35 and gemm.b.batch_stride == 21
    np.testing.assert_allclose(matmul.emulate(gemm, x, y).reshape(4, 3, 5), x @ y, rtol=1e-12)


@pytest.mark.parametrize("tx,ty", [(False, False), (True, False), (False, True), (True, True)])
def test_fused_gemm_description_with_bias(tx, ty) -> None:
    """fused_gemm_epilogue's GEMM (x's leading dims flattened into M, y 2-D) and its
    bias, one value per output column: one per row of cuBLASLt's D."""
    rng = np.random.default_rng(10)
    m, k, n = 6, 7, 5
    x = rng.standard_normal((k, m) if tx else (m, k))
    y = rng.standard_normal((n, k) if ty else (k, n))
    bias = rng.standard_normal(n)
    gemm = matmul._gemm(*x.shape, *y.shape, tx, ty, (), ())
    want = (x.T if tx else x) @ (y.T if ty else y) + bias
    got = matmul.emulate(gemm, x, y, bias).reshape(m, n)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert gemm.m == n and gemm.d.rows == n


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "bool"])
def test_integer_matmul_as_array_code(dtype) -> None:
    x, _ = sample((2, 3, 7), dtype, 11)
    y, _ = sample((7, 5), dtype, 12)
    _, op = build("pd_op.matmul", [x, y], transpose_x=False)
    compute = matmul.matmul_compute(op, [v.type for v in [*op.operand_values(), *op.results]])
    call = cupy_ops.ArrayCall(op, np, compute)
    got = np.empty(op.results[0].type.dims, storage_of(op.results[0].type))
    want = np.empty_like(got)
    call([x, y], [got], None)
    HostLibraryCall(op)([x, y], [want], None)
    np.testing.assert_array_equal(got, want)


# -- convolutions: the cuDNN geometry -------------------------------------------------------------


def test_conv_geometry_nchw_with_four_paddings() -> None:
    x, w = np.zeros((2, 4, 9, 11), np.float32), np.zeros((6, 2, 3, 5), np.float32)
    _, op = build(
        "pd_op.conv2d", [x, w], strides=[2, 1], paddings=[1, 2, 0, 3], dilations=[1, 2], groups=2
    )
    g = conv.conv_geometry(op)
    assert g.x_dims == (2, 4, 9, 11) and g.x_strides == (396, 99, 11, 1)
    assert g.w_dims == (6, 2, 3, 5) and g.y_dims == op.results[0].type.dims
    assert (g.pre_padding, g.post_padding) == ((1, 0), (2, 3))
    assert g.stride == (2, 1) and g.dilation == (1, 2) and not g.transpose


def test_conv_geometry_nhwc_is_strides() -> None:
    x, w = np.zeros((2, 9, 11, 4), np.float32), np.zeros((4, 1, 3, 3), np.float32)
    _, op = build(
        "pd_op.depthwise_conv2d", [x, w], groups=4, data_format="NHWC", padding_algorithm="SAME"
    )
    g = conv.conv_geometry(op)
    assert g.x_dims == (2, 4, 9, 11) and g.x_strides == (396, 1, 44, 4)
    assert g.y_dims == (2, 4, 9, 11) and g.y_strides == (396, 1, 44, 4)
    assert (g.pre_padding, g.post_padding) == ((1, 1), (1, 1))


def test_conv_transpose_geometry_is_a_data_gradient() -> None:
    x, w = np.zeros((1, 4, 5, 6), np.float32), np.zeros((4, 3, 3, 3), np.float32)
    _, op = build(
        "pd_op.conv2d_transpose",
        [x, w],
        strides=[2, 2],
        paddings=[1, 1],
        output_padding=[1, 0],
        output_size=[],
        groups=2,
        dilations=[1, 1],
    )
    g = conv.conv_geometry(op)
    assert g.transpose and g.x_dims == (1, 4, 5, 6) and g.w_dims == (4, 3, 3, 3)
    assert g.y_dims == (1, 6, 10, 11)


# -- missing packages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "module,package,name,arrays",
    [
        ("nvmath", "nvmath-python", "pd_op.matmul", [(3, 7), (7, 5)]),
        ("cudnn", "nvidia-cudnn-frontend", "pd_op.conv2d", [(1, 2, 5, 5), (3, 2, 3, 3)]),
        ("cupy", "cupy-cuda13x", "pd_op.argsort", [(7,)]),
    ],
)
def test_a_missing_package_names_itself_and_the_extra(
    monkeypatch: pytest.MonkeyPatch, module, package, name, arrays
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # `import module` raises ImportError
    _, op = build(name, [np.zeros(s, np.float32) for s in arrays])
    with pytest.raises(MissingLibraryError) as raised:
        cuda_library.plan(op)
    message = str(raised.value)
    assert f"'{package}'" in message and "cinn_py[gpu]" in message and name in message


def test_fused_gemm_epilogue_as_the_pass_makes_it_gets_a_cublaslt_geometry() -> None:
    """The pass's op has no reserve_space (`<<NULL TYPE>>`): it is a plain GEMM with a
    bias; one whose reserve_space is typed (Paddle's backward data, which cuBLASLt's
    plain epilogues do not write) is left to the host's reference kernel, which fills it."""
    rng = np.random.default_rng(11)
    x, y, bias = rng.standard_normal((2, 3, 7)), rng.standard_normal((7, 5)), np.ones(5)
    _, op = build("pd_op.fused_gemm_epilogue", [x, y, bias], activation="relu")
    assert is_null(op.results[1].type)
    gemm = matmul.gemm_geometry(op)
    assert gemm is not None and (gemm.m, gemm.n, gemm.k, gemm.batch_count) == (5, 6, 7, 1)
    out = op.results[0].type
    _, typed = build(
        "pd_op.fused_gemm_epilogue", [x, y, bias], results=[out, out], activation="relu"
    )
    assert not is_null(typed.results[1].type)
    assert matmul.gemm_geometry(typed) is None
    assert matmul._plan(typed) is None  # the host fallback, before any GPU package


def test_cuda_plans_the_table_entry_or_warns_and_falls_back_to_the_host(monkeypatch) -> None:
    """`CudaTarget.plan_library_op`: the device table's call where it has one; else the
    reference kernel on the host with copies, and a HostFallbackWarning naming the op."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    _, op = build("pd_op.cumsum", [x, None], axis=1)
    entry = object()
    monkeypatch.setattr(cuda_library, "plan", lambda planned: entry)
    assert CUDA.plan_library_op(op) is entry
    monkeypatch.setattr(cuda_library, "plan", lambda planned: None)
    with pytest.warns(HostFallbackWarning, match=r"pd_op\.cumsum has no device entry"):
        call = CUDA.plan_library_op(op)
    assert isinstance(call, HostLibraryCall) and not call.capturable
    assert call.where == "reference kernel, host, with copies"
