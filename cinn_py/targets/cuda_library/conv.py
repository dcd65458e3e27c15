"""conv2d, depthwise_conv2d and conv2d_transpose on the device: cuDNN through its
frontend's Python graphs (`cudnn.pygraph`, the `nvidia-cudnn-frontend` package).

The graph is built, its execution plan chosen and its workspace allocated when the
program is built, from the op's static types (`conv_geometry`): tensors are described
in cuDNN's logical NCHW order with the strides of their storage, so NHWC is a
different set of strides, not a copy; the filter is OIHW for both layouts, as Paddle
stores it. A group convolution (depthwise: groups = channels) is a filter of
[K, C / groups, R, S], from which cuDNN takes the group count. conv2d_transpose is the
data gradient of the convolution it transposes (`conv_dgrad`: its input is the
gradient, its filter [C_in, C_out / groups, R, S] is that convolution's [K, C / g, R,
S]). Paddle's paddings (two, four, SAME, VALID) become cuDNN's pre and post paddings by
the reference's own reading (`cinn_py.ops.conv.windows`).

Precision: float16 and bfloat16 with float32 compute, float32 without TF32 (engines
with the TENSOR_CORE numerical note are deselected for float32 unless
CINN_PY_ALLOW_TF32=1), float64 in float64. Other dtypes, and geometries cuDNN does not
support, are left to the host (None from the planner, so the target warns).

Bias and activation: these ops carry neither (Paddle's conv2d has no bias operand); a
bias add and an activation after them are separate ops that fuse into the next kernel,
so each graph holds one convolution. Not capturable: the frontend's plans are not
documented as safe under stream capture (it offers `populate_cuda_graph` instead), so
the call runs between a CUDA graph's segments.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from cinn_py.ops.conv import CHANNEL_LAST, windows
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.operation import Operation
from cinn_py.targets.cuda_library.common import attr, require, static_types

CUDNN_TYPES = {
    DataType.FLOAT32: ("FLOAT", "FLOAT"),
    DataType.FLOAT16: ("HALF", "FLOAT"),
    DataType.BFLOAT16: ("BFLOAT16", "FLOAT"),
    DataType.FLOAT64: ("DOUBLE", "DOUBLE"),
}
"""dtype -> (cuDNN io data type, compute data type)."""


@dataclass(frozen=True)
class ConvGeometry:
    """One convolution as cuDNN sees it: logical NCHW dims and storage strides (in
    elements) of x, the filter and the output, and the window. `transpose`: x is the
    gradient a `conv_dgrad` reads, the output the data gradient it writes."""

    x_dims: tuple[int, ...]
    x_strides: tuple[int, ...]
    w_dims: tuple[int, ...]
    w_strides: tuple[int, ...]
    y_dims: tuple[int, ...]
    y_strides: tuple[int, ...]
    pre_padding: tuple[int, int]
    post_padding: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    transpose: bool


class _Attributes:
    """What `cinn_py.ops.conv.windows` reads, from an op outside any kernel context."""

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.op_def = op.op_def
        self.where = op.where()

    def attr(self, name: str) -> Any:
        return attr(self.op, name)


def _contiguous(dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(math.prod(dims[i + 1 :]) for i in range(len(dims)))


def _nchw(dims: tuple[int, ...], channel_last: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A 4-D activation's logical NCHW dims and the strides of its storage."""
    if not channel_last:
        return dims, _contiguous(dims)
    n, h, w, c = dims
    return (n, c, h, w), (h * w * c, 1, w * c, c)


def conv_geometry(op: Operation) -> ConvGeometry | None:
    """The op's convolution from its static types (None: not a form cuDNN runs here)."""
    types = static_types(op)
    if types is None:
        return None
    x, w, out = types[0], types[1], types[-1]
    if x.rank != 4 or w.rank != 4 or out.rank != 4:
        return None
    channel_last = attr(op, "data_format") in CHANNEL_LAST
    x_dims, x_strides = _nchw(x.dims, channel_last)
    y_dims, y_strides = _nchw(out.dims, channel_last)
    found = windows(_Attributes(op), x_dims[2:], w.dims[2:])
    transpose = op.name == "pd_op.conv2d_transpose"
    # The convolution cuDNN computes maps `image` to `result`; for the transpose, the
    # output (the data gradient) is its image, whose geometry must give back x's size.
    image, result = (y_dims, x_dims) if transpose else (x_dims, y_dims)
    for i, window in enumerate(found):
        if window.pad is None:
            return None
        padded = image[2 + i] + window.pad[0] + window.pad[1] - window.extent
        if padded < 0 or padded // window.stride + 1 != result[2 + i]:
            return None
    if transpose and (w.dims[0] != x_dims[1] or y_dims[1] % w.dims[1]):
        return None
    return ConvGeometry(
        x_dims=x_dims,
        x_strides=x_strides,
        w_dims=w.dims,
        w_strides=_contiguous(w.dims),
        y_dims=y_dims,
        y_strides=y_strides,
        pre_padding=(found[0].pad[0], found[1].pad[0]),
        post_padding=(found[0].pad[1], found[1].pad[1]),
        stride=(found[0].stride, found[1].stride),
        dilation=(found[0].dilation, found[1].dilation),
        transpose=transpose,
    )


_HANDLES: dict[int, Any] = {}
"""device ordinal -> this process's cuDNN handle on it."""


class CudnnConvCall:
    """One convolution as a cuDNN frontend graph (see the module doc)."""

    capturable = False
    where = "device (cuDNN frontend)"

    def __init__(self, op: Operation, geometry: ConvGeometry, dtype: DataType) -> None:
        self.op_name = op.name
        self.geometry = geometry
        cudnn = self._cudnn = require("cudnn", op.name)
        cupy = self._cupy = require("cupy", op.name)
        device = cupy.cuda.runtime.getDevice()
        if device not in _HANDLES:
            _HANDLES[device] = cudnn.create_handle()
        self._handle = _HANDLES[device]
        io_name, compute_name = CUDNN_TYPES[dtype]
        io, compute = cudnn.data_type[io_name], cudnn.data_type[compute_name]
        graph = cudnn.pygraph(
            io_data_type=io,
            intermediate_data_type=compute,
            compute_data_type=compute,
            handle=self._handle,
        )
        g = geometry
        self._x = graph.tensor(name="x", dim=list(g.x_dims), stride=list(g.x_strides), data_type=io)
        self._w = graph.tensor(name="w", dim=list(g.w_dims), stride=list(g.w_strides), data_type=io)
        window = {
            "pre_padding": list(g.pre_padding),
            "post_padding": list(g.post_padding),
            "stride": list(g.stride),
            "dilation": list(g.dilation),
            "compute_data_type": compute,
        }
        if g.transpose:
            self._y = graph.conv_dgrad(loss=self._x, filter=self._w, **window)
        else:
            self._y = graph.conv_fprop(image=self._x, weight=self._w, **window)
        self._y.set_output(True).set_data_type(io)
        self._y.set_dim(list(g.y_dims)).set_stride(list(g.y_strides))
        graph.validate()
        graph.build_operation_graph()
        graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        if dtype is DataType.FLOAT32 and os.environ.get("CINN_PY_ALLOW_TF32") != "1":
            graph.deselect_numeric_notes([cudnn.numerical_note.TENSOR_CORE])
        graph.check_support()
        graph.build_plans()
        self._graph = graph
        self._workspace = cupy.empty(max(int(graph.get_workspace_size()), 1), dtype=np.uint8)

    def __call__(self, inputs: list[Any], outputs: list[Any], stream: Any) -> None:
        out = outputs[0]
        if out is None:
            return
        if stream is None:
            stream = self._cupy.cuda.get_current_stream().ptr
        self._cudnn.set_stream(handle=self._handle, stream=int(stream))
        self._graph.execute(
            {self._x: inputs[0].data.ptr, self._w: inputs[1].data.ptr, self._y: out.data.ptr},
            self._workspace.data.ptr,
            handle=self._handle,
        )

    def __repr__(self) -> str:
        return f"CudnnConvCall({self.op_name}, {self.geometry})"


def _plan(op: Operation) -> CudnnConvCall | None:
    types = static_types(op)
    if types is None:
        return None
    dtypes = {t.data_type for t in types if t is not None}
    (dtype,) = dtypes if len(dtypes) == 1 else (None,)
    geometry = conv_geometry(op)
    if dtype not in CUDNN_TYPES or geometry is None or 0 in geometry.y_dims:
        return None
    if 0 in geometry.x_dims:
        return None
    cudnn = require("cudnn", op.name)
    try:
        return CudnnConvCall(op, geometry, dtype)
    except cudnn.cudnnGraphNotSupportedError:
        return None


ENTRIES = {"pd_op.conv2d": _plan, "pd_op.depthwise_conv2d": _plan, "pd_op.conv2d_transpose": _plan}
