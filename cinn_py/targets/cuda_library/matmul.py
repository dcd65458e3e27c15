"""matmul, bmm and fused_gemm_epilogue on the device: cuBLASLt through nvmath-python.

The call is planned completely when the program is built: the matmul descriptor, the
three matrix layouts, the heuristic's algorithm and its workspace (allocated once),
from the op's static types alone. A run is one `cublasLtMatmul` on the call's stream
with the arrays' pointers: no allocation, no host synchronisation, so the call is
capturable into a CUDA graph (unless an operand's batch broadcast must be
materialised first, see below).

Why nvmath-python's bindings (`nvmath.bindings.cublasLt`) and not its stateful
`nvmath.linalg.advanced.Matmul`: that object binds operand arrays when it is
constructed and plans against them, but a `LibraryCall` is planned from types before
any array exists; it writes its result into a new array unless `inplace=True` (an
experimental option) with a C operand; and bfloat16 reaches it only as a dtype named
"bfloat16", which CuPy has only with ml_dtypes support. The bindings take pointers and
CUDA data types, so bfloat16's uint16 bit patterns go in as CUDA_R_16BF directly, and
the result is written straight into the output variable.

Row-major as column-major: cuBLASLt is column-major, and a row-major M x N matrix is its
column-major N x M transpose, so out^T = y^T x^T is computed with cuBLASLt's A := y and
B := x. The bias of `fused_gemm_epilogue` (one value per output column, [N]) is then one
value per row of cuBLASLt's D, which is what its BIAS epilogues add. `gemm_geometry`
gives this description as data (`Gemm`), which CI checks by interpreting it over NumPy
buffers (`emulate`) against the reference kernels.

Precision: float32 with float32 compute (CUBLAS_COMPUTE_32F: no TF32 unless
CINN_PY_ALLOW_TF32=1 when the program is built), float16 and bfloat16 with float32
accumulation and float32 alpha / beta, float64 in float64. Integer, bool and mixed-dtype
matmuls have no cuBLASLt form: CuPy computes them as the reference does (int64 / float64
accumulation, then the result dtype), not capturable.

Batch broadcasting: an operand whose batch is a single matrix is read with batch stride
0; one that shares the output's batch dims is strided; any other broadcast (x
[2, 1, M, K] with y [5, K, N]) is copied into a workspace of the output's batch shape,
allocated at plan time, by CuPy before each matmul (then the call is not capturable).
A single matrix y under a batched, untransposed x folds the batch into M (one GEMM).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from cinn_py.pir.dtypes import DataType
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DenseTensorType
from cinn_py.targets.cuda_library import cupy_ops
from cinn_py.targets.cuda_library.common import (
    attr,
    on_stream,
    require,
    static_types,
    to_storage,
    to_values,
)

WORKSPACE_LIMIT = 32 << 20
"""The most workspace a cuBLASLt algorithm may ask for (what cuBLAS suggests on Hopper)."""

MIN_ALIGNMENT = 16
"""The byte alignment promised to the heuristic for every pointer: arena variables are
256-byte aligned, but a fed array need not be."""

EPILOGUES = {"none": "BIAS", "relu": "RELU_BIAS", "gelu": "GELU_BIAS"}
"""fused_gemm_epilogue's activation -> cuBLASLt's epilogue (GELU_BIAS is gelu's tanh
approximation, which the op specifies)."""

CUBLASLT_TYPES = {
    DataType.FLOAT32: ("CUDA_R_32F", "COMPUTE_32F", "CUDA_R_32F"),
    DataType.FLOAT16: ("CUDA_R_16F", "COMPUTE_32F", "CUDA_R_32F"),
    DataType.BFLOAT16: ("CUDA_R_16BF", "COMPUTE_32F", "CUDA_R_32F"),
    DataType.FLOAT64: ("CUDA_R_64F", "COMPUTE_64F", "CUDA_R_64F"),
}
"""dtype -> (CUDA data type of A, B, C, D; compute type; scale type)."""


# -- geometry: the GEMM as cuBLASLt sees it ----------------------------------------------------


@dataclass(frozen=True)
class Matrix:
    """A column-major matrix layout of cuBLASLt: rows, cols, leading dim and the offset
    between batch items (elements; 0: one matrix for every batch item)."""

    rows: int
    cols: int
    ld: int
    batch_stride: int


@dataclass(frozen=True)
class Gemm:
    """D = op(A) @ op(B) per batch item, column-major: A is the op's y, B its x, D the
    output's transpose. `broadcast_x` / `broadcast_y`: the operand's batch shape when it
    must be materialised to the output's `batch` first (None: read in place)."""

    m: int
    n: int
    k: int
    batch_count: int
    transa: bool
    transb: bool
    a: Matrix
    b: Matrix
    d: Matrix
    batch: tuple[int, ...]
    x_matrix: tuple[int, int]
    y_matrix: tuple[int, int]
    broadcast_x: tuple[int, ...] | None = None
    broadcast_y: tuple[int, ...] | None = None

    @property
    def empty(self) -> bool:
        """Nothing to compute (an empty output)."""
        return self.m == 0 or self.n == 0 or self.batch_count == 0


def _gemm(
    rows_x: int,
    cols_x: int,
    rows_y: int,
    cols_y: int,
    tx: bool,
    ty: bool,
    bx: tuple[int, ...],
    by: tuple[int, ...],
) -> Gemm:
    """The GEMM of out[b] = op(x[b]) @ op(y[b]) over row-major x ([..., rows_x, cols_x])
    and y, with batch dims bx and by broadcast against each other."""
    m, k = (cols_x, rows_x) if tx else (rows_x, cols_x)
    n = rows_y if ty else cols_y
    batch = tuple(np.broadcast_shapes(bx, by))
    count = math.prod(batch)
    single_x, single_y = math.prod(bx) == 1, math.prod(by) == 1
    full_x = tuple((1,) * (len(batch) - len(bx)) + tuple(bx)) == batch
    full_y = tuple((1,) * (len(batch) - len(by)) + tuple(by)) == batch
    broadcast_x = None if single_x or full_x else bx
    broadcast_y = None if single_y or full_y else by
    fold = count > 1 and single_y and not single_x and not tx and broadcast_x is None
    rows = m * count if fold else m
    count = 1 if fold else count
    # y row-major [K, N] is column-major N x K (ld N): op N; transposed, [N, K] is K x N: op T
    a = Matrix(k, n, k, 0) if ty else Matrix(n, k, n, 0)
    b = Matrix(rows, k, rows, 0) if tx else Matrix(k, rows, k, 0)
    a_stride = 0 if single_y else k * n
    b_stride = 0 if single_x else rows * k
    return Gemm(
        m=n,
        n=rows,
        k=k,
        batch_count=count,
        transa=ty,
        transb=tx,
        a=Matrix(a.rows, a.cols, a.ld, a_stride if count > 1 else 0),
        b=Matrix(b.rows, b.cols, b.ld, b_stride if count > 1 else 0),
        d=Matrix(n, rows, n, n * rows if count > 1 else 0),
        batch=batch,
        x_matrix=(rows_x, cols_x),
        y_matrix=(rows_y, cols_y),
        broadcast_x=broadcast_x,
        broadcast_y=broadcast_y,
    )


def gemm_geometry(op: Operation) -> Gemm | None:
    """The op's GEMM from its static types (None: a form this table leaves to the host)."""
    types = static_types(op)
    if types is None:
        return None
    x, y = types[0], types[1]
    if op.name == "pd_op.fused_gemm_epilogue":
        out = types[3]  # (x, y, bias, out, reserve_space)
        if out is None or types[4] is not None:
            return None  # a reserve_space to fill (Paddle's backward data): the host's
        tx, ty = bool(attr(op, "trans_x")), bool(attr(op, "trans_y"))
        if y.rank != 2 or x.rank < 2 or out.rank < 1 or (tx and x.rank > 2):
            return None  # a transposed N-D x: left to the host, its layout unsettled
        m = math.prod(out.dims[:-1])
        k = math.prod(x.dims) // m if m else (x.dims[0] if tx else x.dims[-1])
        rows_x, cols_x = (k, m) if tx else (m, k)
        return _gemm(rows_x, cols_x, *y.dims, tx, ty, (), ())
    tx = bool(attr(op, "transpose_x")) and x.rank > 1
    ty = bool(attr(op, "transpose_y")) and y.rank > 1
    xd = (1, *x.dims) if x.rank == 1 else x.dims
    yd = (*y.dims, 1) if y.rank == 1 else y.dims
    return _gemm(xd[-2], xd[-1], yd[-2], yd[-1], tx, ty, tuple(xd[:-2]), tuple(yd[:-2]))


def emulate(gemm: Gemm, x: np.ndarray, y: np.ndarray, bias: np.ndarray | None = None) -> Any:
    """What cuBLASLt computes for `gemm` over contiguous x and y, in float64: the
    column-major layouts read from the flat buffers as cuBLASLt reads them. Returns the
    flat output buffer (the row-major output). For the tests without a GPU."""

    def materialised(array: np.ndarray, shape: tuple[int, ...] | None, matrix) -> np.ndarray:
        if shape is None:
            return array.reshape(-1)
        full = np.broadcast_to(array.reshape(*shape, *matrix), (*gemm.batch, *matrix))
        return np.ascontiguousarray(full).reshape(-1)

    flat_y = materialised(y, gemm.broadcast_y, gemm.y_matrix).astype(np.float64)
    flat_x = materialised(x, gemm.broadcast_x, gemm.x_matrix).astype(np.float64)

    def read(flat: np.ndarray, matrix: Matrix, item: int, transposed: bool) -> np.ndarray:
        start = item * matrix.batch_stride
        r, c = np.meshgrid(np.arange(matrix.rows), np.arange(matrix.cols), indexing="ij")
        view = flat[start + r + c * matrix.ld]
        return view.T if transposed else view

    out = np.zeros(gemm.d.rows * gemm.d.cols * gemm.batch_count)
    for item in range(gemm.batch_count):
        d = read(flat_y, gemm.a, item, gemm.transa) @ read(flat_x, gemm.b, item, gemm.transb)
        if bias is not None:
            d = d + bias.astype(np.float64)[:, None]
        r, c = np.meshgrid(np.arange(gemm.d.rows), np.arange(gemm.d.cols), indexing="ij")
        out[item * gemm.d.batch_stride + r + c * gemm.d.ld] = d
    return out


# -- the cuBLASLt call -------------------------------------------------------------------------

_HANDLES: dict[int, int] = {}
"""device ordinal -> this process's cuBLASLt handle on it."""


def _handle(cupy: ModuleType, lt: ModuleType) -> int:
    device = cupy.cuda.runtime.getDevice()
    if device not in _HANDLES:
        _HANDLES[device] = lt.create()
    return _HANDLES[device]


def _setter(set_attribute, dtype_of):
    """Sets one attribute of a cuBLASLt object from a Python value."""

    def set_(obj: int, name_enum: Any, value: Any) -> None:
        buffer = np.array([value], dtype=dtype_of(name_enum))
        set_attribute(obj, name_enum, buffer.ctypes.data, buffer.itemsize)

    return set_


def _alpha_beta(dtype: DataType) -> tuple[np.ndarray, np.ndarray]:
    scale = np.float64 if dtype is DataType.FLOAT64 else np.float32
    return np.ones(1, scale), np.zeros(1, scale)


class CublasLtCall:
    """One matmul planned with cuBLASLt (see the module doc)."""

    where = "device (cuBLASLt via nvmath-python)"

    def __init__(self, op: Operation, gemm: Gemm, dtype: DataType, epilogue: str | None) -> None:
        self.op_name = op.name
        self.gemm = gemm
        self.capturable = gemm.broadcast_x is None and gemm.broadcast_y is None
        nvmath = require("nvmath", op.name)
        lt = self._lt = require("nvmath.bindings.cublasLt", op.name)
        cublas = require("nvmath.bindings.cublas", op.name)
        self._cupy = cupy = require("cupy", op.name)
        self._bias = epilogue is not None
        if gemm.empty or gemm.k == 0:
            return  # nothing for cuBLASLt: an empty output, or zeros
        data_type, compute, scale = CUBLASLT_TYPES[dtype]
        if dtype is DataType.FLOAT32 and os.environ.get("CINN_PY_ALLOW_TF32") == "1":
            compute = "COMPUTE_32F_FAST_TF32"
        cuda_type = int(nvmath.CudaDataType[data_type])
        self._handle = _handle(cupy, lt)
        self._desc = lt.matmul_desc_create(
            int(cublas.ComputeType[compute]), int(nvmath.CudaDataType[scale])
        )
        set_desc = _setter(lt.matmul_desc_set_attribute, lt.get_matmul_desc_attribute_dtype)
        attrs = lt.MatmulDescAttribute
        operation = cublas.Operation
        set_desc(self._desc, attrs.TRANSA, int(operation.T if gemm.transa else operation.N))
        set_desc(self._desc, attrs.TRANSB, int(operation.T if gemm.transb else operation.N))
        if epilogue is not None:
            set_desc(self._desc, attrs.EPILOGUE, int(lt.Epilogue[epilogue]))
            # The heuristic may look at the bias pointer: a placeholder until the run's.
            self._bias_placeholder = cupy.empty(gemm.m, dtype=_storage(dtype))
            set_desc(self._desc, attrs.BIAS_POINTER, self._bias_placeholder.data.ptr)
        self._set_desc = set_desc
        self._bias_ptr = None
        self._layouts = [self._layout(cuda_type, m) for m in (gemm.a, gemm.b, gemm.d)]
        self._algo, workspace = self._heuristic()
        self._workspace = cupy.empty(max(workspace, 1), dtype=np.uint8)
        self._alpha, self._beta = _alpha_beta(dtype)
        self._x_copy = self._y_copy = None
        if gemm.broadcast_x is not None:
            self._x_copy = cupy.empty((*gemm.batch, *gemm.x_matrix), dtype=_storage(dtype))
        if gemm.broadcast_y is not None:
            self._y_copy = cupy.empty((*gemm.batch, *gemm.y_matrix), dtype=_storage(dtype))

    def _layout(self, cuda_type: int, matrix: Matrix) -> int:
        lt = self._lt
        layout = lt.matrix_layout_create(cuda_type, matrix.rows, matrix.cols, matrix.ld)
        if self.gemm.batch_count > 1:
            set_layout = _setter(
                lt.matrix_layout_set_attribute, lt.get_matrix_layout_attribute_dtype
            )
            attrs = lt.MatrixLayoutAttribute
            set_layout(layout, attrs.BATCH_COUNT, self.gemm.batch_count)
            set_layout(layout, attrs.STRIDED_BATCH_OFFSET, matrix.batch_stride)
        return layout

    def _heuristic(self) -> tuple[Any, int]:
        """The heuristic's best algorithm and its workspace size."""
        lt = self._lt
        preference = lt.matmul_preference_create()
        set_pref = _setter(
            lt.matmul_preference_set_attribute, lt.get_matmul_preference_attribute_dtype
        )
        attrs = lt.MatmulPreferenceAttribute
        set_pref(preference, attrs.MAX_WORKSPACE_BYTES, WORKSPACE_LIMIT)
        for name in ("A", "B", "C", "D"):
            set_pref(preference, getattr(attrs, f"MIN_ALIGNMENT_{name}_BYTES"), MIN_ALIGNMENT)
        results = lt.MatmulHeuristicResult(1)
        found = np.zeros(1, np.int32)
        a, b, d = self._layouts
        try:
            lt.matmul_algo_get_heuristic(
                self._handle, self._desc, a, b, d, d, preference, 1, results.ptr, found.ctypes.data
            )
        finally:
            lt.matmul_preference_destroy(preference)
        if found[0] == 0:
            raise RuntimeError(f"{self.op_name}: cuBLASLt found no algorithm for {self.gemm}")
        self._results = results  # owns the algorithm struct
        algo = results[0]["algo"]
        workspace = int(np.asarray(results[0]["workspace_size"]).reshape(-1)[0])
        return algo, workspace

    def __call__(self, inputs: list[Any], outputs: list[Any], stream: Any) -> None:
        out = outputs[0]
        gemm = self.gemm
        if out is None or gemm.empty:
            return
        cupy = self._cupy
        with on_stream(cupy, stream):
            if gemm.k == 0:  # a sum of nothing (fused GEMMs with K = 0 are not planned)
                out.fill(0)
                return
            x, y = inputs[0], inputs[1]
            if self._x_copy is not None:
                shape = (*gemm.broadcast_x, *gemm.x_matrix)
                self._x_copy[...] = cupy.broadcast_to(x.reshape(shape), self._x_copy.shape)
                x = self._x_copy
            if self._y_copy is not None:
                shape = (*gemm.broadcast_y, *gemm.y_matrix)
                self._y_copy[...] = cupy.broadcast_to(y.reshape(shape), self._y_copy.shape)
                y = self._y_copy
            stream_ptr = cupy.cuda.get_current_stream().ptr
        if self._bias and inputs[2].data.ptr != self._bias_ptr:
            self._bias_ptr = inputs[2].data.ptr
            self._set_desc(self._desc, self._lt.MatmulDescAttribute.BIAS_POINTER, self._bias_ptr)
        a, b, d = self._layouts
        self._lt.matmul(
            self._handle,
            self._desc,
            self._alpha.ctypes.data,
            y.data.ptr,
            a,
            x.data.ptr,
            b,
            self._beta.ctypes.data,
            out.data.ptr,
            d,
            out.data.ptr,
            d,
            self._algo.ctypes.data,
            self._workspace.data.ptr,
            self._workspace.nbytes,
            stream_ptr,
        )

    def __repr__(self) -> str:
        return f"CublasLtCall({self.op_name}, {self.gemm})"


def _storage(dtype: DataType) -> Any:
    return np.uint16 if dtype is DataType.BFLOAT16 else dtype.numpy


# -- integer, bool and mixed dtypes: CuPy, as the reference computes -----------------------------


def matmul_compute(op: Operation, types: list) -> cupy_ops.Compute:
    """The reference's matmul / bmm as array code: transposes, 1-D operands, broadcast
    batch dims, accumulation in float64 (floats) or int64, then the result dtype."""
    x_type, y_type, out_type = types[0], types[1], types[-1]
    tx = bool(attr(op, "transpose_x")) and x_type.rank > 1
    ty = bool(attr(op, "transpose_y")) and y_type.rank > 1

    def compute(xp: ModuleType, inputs: list[Any]) -> list[Any]:
        x = to_values(xp, inputs[0], x_type.data_type)
        y = to_values(xp, inputs[1], y_type.data_type)
        if tx:
            x = xp.swapaxes(x, -1, -2)
        if ty:
            y = xp.swapaxes(y, -1, -2)
        kind = "f" if "f" in (x.dtype.kind, y.dtype.kind) else "i"
        acc = xp.float64 if kind == "f" else xp.int64
        out = xp.matmul(x.astype(acc), y.astype(acc))
        return [to_storage(xp, out, out_type.data_type)]

    return compute


def _plan(op: Operation) -> Any:
    types = static_types(op)
    if types is None:
        return None
    fused = op.name == "pd_op.fused_gemm_epilogue"
    dtypes = {t.data_type for t in types if isinstance(t, DenseTensorType)}
    (dtype,) = dtypes if len(dtypes) == 1 else (None,)
    gemm = gemm_geometry(op)
    if gemm is not None and dtype in CUBLASLT_TYPES:
        epilogue = EPILOGUES.get(str(attr(op, "activation"))) if fused else None
        if fused and (epilogue is None or gemm.k == 0):
            return None
        return CublasLtCall(op, gemm, dtype, epilogue)
    if fused:
        return None  # a fused GEMM of integers: the host's reference kernel
    cupy = require("cupy", op.name)
    return cupy_ops.ArrayCall(op, cupy, matmul_compute(op, types))


ENTRIES = {"pd_op.matmul": _plan, "pd_op.bmm": _plan, "pd_op.fused_gemm_epilogue": _plan}
