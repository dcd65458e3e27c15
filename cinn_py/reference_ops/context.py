"""What a reference kernel sees, and the dtype rules every kernel shares.

Inside the executor a tensor is a NumPy array of its dtype, except bfloat16, which
NumPy lacks: it is carried as float32 holding values that bfloat16 represents exactly,
so kernels need no special case and rounding happens in one place (`to_dtype`). A
Tensor[] value (`builtin.combine`, `pd_op.split`) is a Python list of arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from cinn_py.errors import FeedError, ShapeError, VerifyError
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16, float_to_int
from cinn_py.pir.op_def import REQUIRED, attr_value
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type

RuntimeValue = np.ndarray | list
"""A tensor (array) or a Tensor[] (list of arrays)."""

Kernel = Callable[["KernelContext"], Any]
"""Computes one op: returns its result (one value), a sequence of results (several), or
None (no results)."""


def storage_dtype(dtype: DataType) -> np.dtype:
    """The NumPy dtype a value of `dtype` is held in inside the executor."""
    return np.dtype(np.float32) if dtype is DataType.BFLOAT16 else dtype.numpy


def compute_dtype(dtype: DataType) -> np.dtype:
    """The dtype an op producing `dtype` computes in, as Paddle does: float16 and
    bfloat16 in float32 (each op's result is rounded back), integers in int64 (the
    wrap-around of a narrower result is the same), others as they are."""
    if dtype in (DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT32):
        return np.dtype(np.float32)
    if dtype.is_integer:
        return np.dtype(np.int64)
    return dtype.numpy


def accumulate_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype sums, products and dot products accumulate in: float64 for floats
    (at least as accurate as Paddle's float32 accumulation), int64 for ints and bools."""
    return np.dtype(np.float64) if dtype.kind == "f" else np.dtype(np.int64)


def to_dtype(array: Any, dtype: DataType) -> np.ndarray:
    """`array` converted to how a `dtype` value is held: floats round to nearest even;
    floats convert to integers by `dtypes.float_to_int` (truncate toward zero, saturate
    to the type's range, NaN -> 0: what the GPU's `cvt.rzi` gives and generated code
    emits on every target); integers wrap; anything nonzero (NaN too) is true; bfloat16
    rounds through its bit pattern."""
    array = np.asarray(array)
    if dtype is DataType.BFLOAT16:
        return bfloat16_to_float32(float32_to_bfloat16(array.astype(np.float32)))
    target = dtype.numpy
    if array.dtype == target:
        return array
    if dtype.is_integer and array.dtype.kind == "f":
        return float_to_int(array, dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return array.astype(target)


def trunc_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """C integer division (toward zero), which Paddle's integer `divide` does; x / 0 is
    0 and INT_MIN / -1 wraps to INT_MIN (NumPy's `//` gives both)."""
    with np.errstate(divide="ignore", over="ignore"):
        quotient = np.floor_divide(x, y)
    inexact = (quotient * y != x) & ((x < 0) != (y < 0)) & (y != 0)
    return quotient + inexact


def to_boundary(array: np.ndarray, dtype: DataType) -> np.ndarray:
    """A value as it leaves the executor: bfloat16 as uint16 bit patterns."""
    return float32_to_bfloat16(array) if dtype is DataType.BFLOAT16 else array


def shape_fits(shape: tuple[int, ...], type_: DenseTensorType) -> bool:
    """Does an array of `shape` fit `type_`? A -1 dim matches any size."""
    return len(shape) == type_.rank and all(
        d in (DYNAMIC, n) for d, n in zip(type_.dims, shape, strict=True)
    )


def boundary_dtype(dtype: DataType) -> np.dtype:
    """The NumPy dtype of a `dtype` array at the API: bfloat16 travels as uint16 bit
    patterns (as Paddle's `.numpy()` gives it and model.pdiparams stores it)."""
    return np.dtype(np.uint16) if dtype is DataType.BFLOAT16 else dtype.numpy


def describe(type_: DenseTensorType) -> str:
    """`float32 [-1, 6]`, the way FeedError shows what a program expects."""
    suffix = " (uint16 bit patterns)" if type_.data_type is DataType.BFLOAT16 else ""
    return f"{type_.data_type.value}{suffix} {list(type_.dims)}"


def check_input(name: str, array: Any, type_: DenseTensorType) -> np.ndarray:
    """A feed or parameter as the executor holds it, after checking it against the
    program's declared type (a -1 dim matches any size)."""
    if array is None:
        raise FeedError(name, describe(type_), "nothing (it is missing)")
    array = np.asarray(array)
    got = f"{array.dtype} {list(array.shape)}"
    if array.dtype != boundary_dtype(type_.data_type):
        raise FeedError(name, describe(type_), got)
    if not shape_fits(array.shape, type_):
        raise FeedError(name, describe(type_), got)
    if type_.data_type is DataType.BFLOAT16:
        return bfloat16_to_float32(array)
    return array


def normalize_axis(axis: int, rank: int, ctx: KernelContext) -> int:
    """`axis` counted from 0 (a negative one from the end); an error naming the op
    when it is out of range."""
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for a rank-{rank} tensor")
    return axis % rank


def check_indices(ctx: KernelContext, index: np.ndarray, low: int, high: int) -> None:
    """Data-dependent indices (gather, embedding) must lie in [low, high)."""
    bad = (index < low) | (index >= high)
    if np.any(bad):
        first = index[bad].reshape(-1)[0]
        raise ctx.shape_error(f"index {first} is out of range [{low}, {high})")


def tensor_type(type_: Type | None, what: str) -> DenseTensorType:
    if not isinstance(type_, DenseTensorType):
        raise VerifyError(what, f"expected a dense tensor type, got {type_!r}")
    return type_


class KernelContext:
    """One op about to run: its operands' runtime values, attributes and result types."""

    def __init__(
        self, op: Operation, operands: list[RuntimeValue | None], runtime: Runtime
    ) -> None:
        self.op = op
        self.operands = operands
        self.runtime = runtime
        """The executor's run state (feeds and parameters), for the ops that read it."""

    def error(self, why: str, operand: str = "") -> VerifyError:
        """The op itself is malformed (a missing operand or attribute, a bad axis)."""
        return VerifyError(self.op.name, why, where=self.op.where(), operand=operand)

    def shape_error(self, why: str) -> ShapeError:
        """The op is well formed but its values do not fit (shapes, indices)."""
        return ShapeError(f"{self.op.name} ({self.op.where()}): {why}")

    # -- operands -----------------------------------------------------------------
    def optional(self, index: int) -> RuntimeValue | None:
        return self.operands[index] if index < len(self.operands) else None

    def tensor(self, index: int) -> np.ndarray:
        value = self.optional(index)
        if not isinstance(value, np.ndarray):
            what = "is missing" if value is None else "must be a tensor, got a vector"
            raise self.error(what, operand=f"#{index}")
        return value

    def tensors(self, index: int) -> list[np.ndarray]:
        """A Tensor[] operand (a single tensor counts as a list of one)."""
        value = self.optional(index)
        if value is None:
            raise self.error("is missing", operand=f"#{index}")
        return [value] if isinstance(value, np.ndarray) else list(value)

    def tensor_in(self, index: int, dtype: np.dtype) -> np.ndarray:
        return self.tensor(index).astype(dtype, copy=False)

    # -- attributes -----------------------------------------------------------------
    def attr(self, name: str) -> Any:
        """The attribute's Python value, else the default its declaration gives."""
        value = attr_value(self.op.op_def, self.op.attributes, name)
        if value is REQUIRED:
            raise self.error(f"needs attribute '{name}'")
        return value

    def declares(self, name: str) -> bool:
        """Whether the op's declaration has attribute `name` (ops of a family differ)."""
        op_def = self.op.op_def
        return op_def is not None and op_def.attr_spec(name) is not None

    def int_list(self, index: int, name: str) -> list[int]:
        """A mutable IntArray (shape, axes, starts): the attribute, else the operand."""
        return _ints(self._mutable(index, name))

    def scalar(self, index: int, name: str) -> Any:
        """A mutable Scalar (scale factor, axis, clip bound): the attribute, else the
        single element of the operand."""
        value = self._mutable(index, name)
        items = value.reshape(-1) if isinstance(value, np.ndarray) else value
        if isinstance(items, (list, np.ndarray)):
            if len(items) != 1:
                raise self.error(f"'{name}' must hold one value, got {len(items)}")
            value = items[0]
        return value.item() if isinstance(value, np.generic) else value

    def _mutable(self, index: int, name: str) -> Any:
        """The attribute if the op has it (after folding, the operand is null), else the
        operand's runtime value. The op's declaration may name the attribute differently."""
        op_def = self.op.op_def
        if op_def is not None and index < len(op_def.operands):
            name = op_def.operands[index].mutable_attr or name
        if name in self.op.attributes:
            return self.op.attributes[name].to_python()
        value = self.optional(index)
        if value is None:
            raise self.error(f"has neither operand #{index} nor attribute '{name}'")
        return value

    # -- results -------------------------------------------------------------------
    def result_type(self, index: int = 0) -> DenseTensorType:
        return tensor_type(self.op.result(index).type, self.op.name)

    def out_dtype(self, index: int = 0) -> DataType:
        return self.result_type(index).data_type

    def compute_dtype(self, index: int = 0) -> np.dtype:
        return compute_dtype(self.out_dtype(index))


def _ints(value: Any) -> list[int]:
    if isinstance(value, np.ndarray):
        return [int(v) for v in value.reshape(-1)]
    if isinstance(value, (list, tuple)):
        return [i for item in value for i in _ints(item)]
    return [int(value)]


class Runtime:
    """Feeds and parameters of one run; `set_parameter` writes here, not to the program."""

    def __init__(
        self, feeds: Mapping[str, Any], params: Mapping[str, Any], program_params: Mapping[str, Any]
    ) -> None:
        self.feeds = feeds
        self.params = params
        self.program_params = program_params
        self.written: dict[str, np.ndarray] = {}
