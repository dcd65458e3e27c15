"""Library ops in CuPy on the device: cumsum, argsort, topk, argmax / argmin (the forms
lowering refuses), inference dropout whose mask is computed with, and the pools whose
windows are too large to unroll (pool2d) or whose positions are read
(max_pool2d_with_index).

Each op is array code over an array module `xp` that follows the op's reference kernel
step for step, with the same accumulation dtypes, so that it gives the reference's
numbers: on the device `xp` is CuPy, in the tests without a GPU it is NumPy
(`plan_with(op, numpy)`), which is how CI checks this code. bfloat16 arrives as uint16
bit patterns: values are widened to float32 to compute or compare, and a result that is
a gather of the input (sorted values, top k) gathers the bit patterns themselves.

None of these calls is capturable: CuPy allocates their temporaries (sort buffers,
scan outputs) from its pool, which a CUDA graph cannot record.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from cinn_py.ops.pool import op_windows, pool_planes
from cinn_py.pir.constant import constant_of
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DenseTensorType
from cinn_py.reference_ops.context import compute_dtype
from cinn_py.targets.cuda_library.common import (
    attr,
    mutable_scalar,
    on_stream,
    require,
    static_types,
    store,
    to_storage,
    to_values,
)

Compute = Callable[[ModuleType, list[Any]], list[Any]]
"""(xp, inputs) -> one array per result, in the result's storage dtype."""


class ArrayCall:
    """A library op as array code on `xp`, run on the call's stream (see the module doc)."""

    capturable = False

    def __init__(self, op: Operation, xp: ModuleType, compute: Compute) -> None:
        self.op_name = op.name
        self.xp = xp
        self.where = "device (CuPy)" if xp is not np else "host (NumPy, the device code's test)"
        self._compute = compute

    def __call__(self, inputs: list[Any], outputs: list[Any], stream: Any) -> None:
        with on_stream(self.xp, stream), np.errstate(all="ignore"):  # NaN and inf as they come
            for out, value in zip(outputs, self._compute(self.xp, inputs), strict=True):
                store(out, value)

    def __repr__(self) -> str:
        return f"ArrayCall({self.op_name})"


def plan_with(op: Operation, xp: ModuleType) -> ArrayCall | None:
    """`op`'s call as array code on `xp` (None: a form of the op this table leaves to
    the host: a dynamic shape, an axis or k only the run knows)."""
    types = static_types(op)
    planner = _PLANNERS.get(op.name)
    if types is None or planner is None:
        return None
    compute = planner(op, types)
    return None if compute is None else ArrayCall(op, xp, compute)


def _on_cupy(op: Operation) -> ArrayCall | None:
    return plan_with(op, require("cupy", op.name))


def _axis(axis: int, rank: int) -> int:
    return axis % rank if rank else 0


def _flat_axis(op: Operation, x_type: DenseTensorType) -> tuple[bool, int] | None:
    """(flatten, axis) of an op with a `flatten` attribute and an axis operand (#1)
    (cumsum, argmax, argmin): a 0-D input is flattened, its axis 0; None when the axis
    is not known at build time."""
    flatten = bool(attr(op, "flatten")) or x_type.rank == 0
    axis = 0 if flatten else mutable_scalar(op, 1, "axis")
    if axis is None:
        return None
    return flatten, _axis(int(axis), 1 if flatten else x_type.rank)


def _dtype(type_: DenseTensorType | None) -> DataType:
    assert type_ is not None
    return type_.data_type


def _accumulator(xp: ModuleType, values: Any) -> Any:
    """The reference's accumulation dtype: float64 for floats, int64 otherwise."""
    return xp.float64 if values.dtype.kind == "f" else xp.int64


def _keys(xp: ModuleType, array: Any, dtype: DataType) -> Any:
    """What to compare: bfloat16 as float32 values, bool as uint8 (the same order)."""
    values = to_values(xp, array, dtype)
    return values.astype(xp.uint8) if values.dtype == np.bool_ else values


# -- cumsum ---------------------------------------------------------------------------------


def _cumsum(op: Operation, types: list) -> Compute | None:
    x_type, out_type = types[0], types[-1]
    found = _flat_axis(op, x_type)
    if found is None:
        return None
    flatten, axis = found
    exclusive, reverse = bool(attr(op, "exclusive")), bool(attr(op, "reverse"))

    def compute(xp: ModuleType, inputs: list[Any]) -> list[Any]:
        x = to_values(xp, inputs[0], x_type.data_type)
        if flatten:
            x = x.reshape(-1)
        if reverse:
            x = xp.flip(x, axis)
        out = xp.cumsum(x, axis=axis, dtype=_accumulator(xp, x))
        if exclusive:
            shifted = xp.zeros_like(out)
            body = [slice(None)] * out.ndim
            body[axis] = slice(1, None)
            head = [slice(None)] * out.ndim
            head[axis] = slice(0, -1)
            shifted[tuple(body)] = out[tuple(head)]
            out = shifted
        if reverse:
            out = xp.flip(out, axis)
        return [to_storage(xp, out, out_type.data_type)]

    return compute


# -- argsort, topk ----------------------------------------------------------------------------


def stable_order(xp: ModuleType, keys: Any, axis: int, descending: bool) -> Any:
    """The reference's order (`cinn_py.ops.sort.stable_order`): ties in index order, NaN
    as the largest value. CuPy's sort is always stable and puts NaN last, as NumPy's."""
    kind = "stable" if xp is np else None

    def argsort(a: Any) -> Any:
        return xp.argsort(a, axis=axis, kind=kind)

    if not descending:
        return argsort(keys)
    n = keys.shape[axis]
    return (n - 1) - xp.flip(argsort(xp.flip(keys, axis)), axis)


def _sorted(op: Operation, types: list, descending: bool, count: int | None) -> Compute:
    """Values and int64 indices of the first `count` (all: None) along the axis."""
    x_type = types[0]
    dtype = x_type.data_type
    axis = _axis(int(attr(op, "axis")), x_type.rank)

    def compute(xp: ModuleType, inputs: list[Any]) -> list[Any]:
        x = inputs[0]
        if x.ndim == 0:
            return [x.copy(), xp.zeros((), xp.int64)]
        order = stable_order(xp, _keys(xp, x, dtype), axis, descending)
        if count is not None:
            head = [slice(None)] * x.ndim
            head[axis] = slice(0, count)
            order = order[tuple(head)]
        return [xp.take_along_axis(x, order, axis), order.astype(xp.int64)]

    return compute


def _argsort(op: Operation, types: list) -> Compute:
    return _sorted(op, types, bool(attr(op, "descending")), None)


def _topk(op: Operation, types: list) -> Compute:
    """k from the result's static dims (what infer_meta made of the folded k)."""
    x_type, out_type = types[0], types[2]
    count = None
    if x_type.rank:
        count = out_type.dims[_axis(int(attr(op, "axis")), x_type.rank)]
    return _sorted(op, types, bool(attr(op, "largest")), count)


# -- argmax, argmin ---------------------------------------------------------------------------


def _arg_extreme(largest: bool) -> Callable[[Operation, list], Compute | None]:
    def planner(op: Operation, types: list) -> Compute | None:
        x_type, out_type = types[0], types[-1]
        found = _flat_axis(op, x_type)
        if found is None:
            return None
        flatten, axis = found
        keepdims = bool(attr(op, "keepdims"))

        def compute(xp: ModuleType, inputs: list[Any]) -> list[Any]:
            x = _keys(xp, inputs[0], x_type.data_type)
            if x.dtype.kind == "f":  # NaN never wins
                x = xp.where(xp.isnan(x), -xp.inf if largest else xp.inf, x)
            pick = xp.argmax if largest else xp.argmin
            if flatten:
                found = pick(x.reshape(-1), axis=0)
                return [found.astype(out_type.data_type.numpy).reshape(out_type.dims)]
            found = pick(x, axis=axis, keepdims=keepdims)
            return [found.astype(out_type.data_type.numpy)]

        return compute

    return planner


# -- dropout (inference) ------------------------------------------------------------------------


def _dropout(op: Operation, types: list) -> Compute | None:
    """The reference's inference dropout: x, or x * (1 - p) in float32 (float64 for
    float64), and an all-ones mask. Training is no op of this table (the reference
    refuses it too)."""
    if not attr(op, "is_test"):
        return None
    x_type, out_type = types[0], types[-2]
    upscale = attr(op, "mode") == "upscale_in_train"
    p = attr(op, "p") if "p" in op.attributes else None
    if p is None and not upscale:
        operand = op.operand_value(2) if op.num_operands > 2 else None
        constant = None if operand is None else constant_of(operand)
        if constant is None or np.asarray(constant).size != 1:
            return None
        p = np.asarray(constant).reshape(-1)[0]
    keep = None if upscale else np.float32(1) - np.float32(p)

    def compute(xp: ModuleType, inputs: list[Any]) -> list[Any]:
        x = to_values(xp, inputs[0], x_type.data_type)
        x = x.astype(compute_dtype(out_type.data_type), copy=False)
        mask = xp.ones(x.shape, dtype=xp.uint8)
        out = x if keep is None else x * keep
        return [to_storage(xp, out, out_type.data_type), mask]

    return compute


# -- pools ----------------------------------------------------------------------------------------


def _pool2d(op: Operation, types: list) -> Compute | None:
    """The reference's tap-by-tap fold (`cinn_py.ops.pool.pool_planes`) on the device."""
    x_type, out_type = types[0], types[-1]
    if "kernel_size" in op.attributes:
        ksize = [int(k) for k in op.attributes["kernel_size"].to_python()]
    else:
        operand = op.operand_value(1) if op.num_operands > 1 else None
        constant = None if operand is None else constant_of(operand)
        if constant is None:
            return None
        ksize = [int(k) for k in np.asarray(constant).reshape(-1)]
    kind = attr(op, "pooling_type")
    if kind not in ("max", "avg"):
        return None
    windows, last = op_windows(op.op_def, op.attributes, op.where(), x_type.dims, ksize)
    exclusive = bool(attr(op, "exclusive"))
    dtype = compute_dtype(out_type.data_type)

    def compute(xp: ModuleType, inputs: list[Any]) -> list[Any]:
        x = to_values(xp, inputs[0], x_type.data_type).astype(dtype)
        planes = xp.moveaxis(x, -1, 1) if last else x
        out, _ = pool_planes(planes, windows, kind, exclusive, xp)
        out = xp.moveaxis(out, 1, -1) if last else out
        return [to_storage(xp, out, out_type.data_type)]

    return compute


def _max_pool_with_index(op: Operation, types: list) -> Compute | None:
    x_type, out_type = types[0], types[1]
    ksize = [int(k) for k in attr(op, "kernel_size")]
    windows, _ = op_windows(op.op_def, op.attributes, op.where(), x_type.dims, ksize)
    dtype = compute_dtype(out_type.data_type)

    def compute(xp: ModuleType, inputs: list[Any]) -> list[Any]:
        x = to_values(xp, inputs[0], x_type.data_type).astype(dtype)
        out, index = pool_planes(x, windows, "max_index", False, xp)
        return [to_storage(xp, out, out_type.data_type), index]

    return compute


_PLANNERS: dict[str, Callable[[Operation, list], Compute | None]] = {
    "pd_op.cumsum": _cumsum,
    "pd_op.argsort": _argsort,
    "pd_op.topk": _topk,
    "pd_op.argmax": _arg_extreme(largest=True),
    "pd_op.argmin": _arg_extreme(largest=False),
    "pd_op.dropout": _dropout,
    "pd_op.pool2d": _pool2d,
    "pd_op.max_pool2d_with_index": _max_pool_with_index,
}

ENTRIES = {name: _on_cupy for name in _PLANNERS}
