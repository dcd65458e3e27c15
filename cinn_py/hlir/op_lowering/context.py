"""What one op's lowering sees, and how a lowering is declared.

`LowerContext` mirrors the reference executor's `KernelContext`: the op, its operands
(as Computes instead of arrays), attributes read the same way (a mutable-attribute
operand is read from the attribute `fold_mutable_attributes` set), and the declared
result types, whose static shapes and dtypes the lowering produces.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from cinn_py.errors import ShapeError, UnsupportedOpError
from cinn_py.hlir.op_lowering.compute import Compute, Lowered, Vector
from cinn_py.ir.expr import IntImm
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import REQUIRED, attr_value
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DenseTensorType, Type, VectorType
from cinn_py.pir.value import Value


class LowerContext:
    """One op being lowered: operand Computes, attributes, result types."""

    def __init__(
        self,
        op: Operation,
        operands: Sequence[Lowered | None],
        index_dtype: DataType,
        numbers: Iterator[int] | None = None,
        dims_of: Callable[[Value], tuple[Any, ...] | None] | None = None,
        reduce_bound: Callable[..., int] | None = None,
    ) -> None:
        self.op = op
        self._dims_of = dims_of
        self._reduce_bound = reduce_bound
        """A value's symbolic dims (ints and index Exprs) in a symbolic lowering."""
        self.operands = list(operands)
        self.index_dtype = index_dtype
        """The dtype of every index expression in the function (int32 or int64)."""
        self.numbers = numbers if numbers is not None else itertools.count()
        """Numbers for the Vars a lowering introduces (reduce axes), shared by every op
        of a function so that their names are unique in it."""

    def fresh_name(self, prefix: str) -> str:
        """`<prefix>_<n>`, unique among the names drawn from this context's numbers."""
        return f"{prefix}_{next(self.numbers)}"

    def error(self, why: str) -> UnsupportedOpError:
        return UnsupportedOpError(self.op.name, self.op.where(), why)

    def shape_error(self, why: str) -> ShapeError:
        return ShapeError(f"{self.op.name} ({self.op.where()}): {why}")

    # -- operands -----------------------------------------------------------------------
    def input(self, index: int) -> Compute:
        value = self.operands[index] if index < len(self.operands) else None
        if not isinstance(value, Compute):
            what = "is missing" if value is None else "is a Tensor[], expected a tensor"
            raise self.error(f"operand #{index} {what}")
        return value

    def inputs(self, index: int) -> Vector:
        """A Tensor[] operand (a single tensor counts as a list of one)."""
        value = self.operands[index] if index < len(self.operands) else None
        if value is None:
            raise self.error(f"operand #{index} is missing")
        return [value] if isinstance(value, Compute) else list(value)

    # -- attributes ----------------------------------------------------------------------
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
        """A folded mutable IntArray (shape, axes, starts)."""
        return [int(v) for v in _flatten(self._mutable(index, name))]

    def scalar(self, index: int, name: str) -> Any:
        """A folded mutable Scalar (scale factor, axis, clip bound)."""
        value = self._mutable(index, name)
        if isinstance(value, (list, tuple)):
            items = _flatten(value)
            if len(items) != 1:
                raise self.error(f"'{name}' must hold one value, got {len(items)}")
            value = items[0]
        return value

    def _mutable(self, index: int, name: str) -> Any:
        op_def = self.op.op_def
        if op_def is not None and index < len(op_def.operands):
            name = op_def.operands[index].mutable_attr or name
        if name not in self.op.attributes:
            raise self.error(f"needs '{name}' folded into an attribute")
        return self.op.attributes[name].to_python()

    # -- results -------------------------------------------------------------------------
    def result_type(self, index: int = 0) -> Type:
        return self.op.result(index).type

    def out_type(self, index: int = 0) -> DenseTensorType:
        type_ = self.result_type(index)
        if not isinstance(type_, DenseTensorType):
            raise self.error(f"result #{index} is not a tensor")
        return type_

    def out_shape(self, index: int = 0) -> tuple[Any, ...]:
        """The result's dims: ints, with index Exprs for symbolic dims where the group
        is lowered symbolically (only lowerings marked `OpLowering.symbolic` see those)."""
        type_ = self.out_type(index)
        if self._dims_of is not None:
            dims = self._dims_of(self.op.result(index))
            if dims is not None:
                return dims
        return type_.dims

    def reduce_bound(self, extent: Any, limit: int | None = None) -> int:
        """The static bound a reduction over the symbolic dim `extent` iterates to (its
        bucket's: `ir.buckets.REDUCE_BUCKETS`), the steps past the dim masked off.
        Only in a symbolic lowering; a ShapeError past the largest bucket (`limit`:
        `ir.buckets.bucket_bound`'s)."""
        if self._reduce_bound is None:
            raise self.shape_error(f"a reduction over the symbolic dim {extent!r}")
        if limit is None:
            return self._reduce_bound(extent)
        return self._reduce_bound(extent, limit)

    def out_dtype(self, index: int = 0) -> DataType:
        return self.out_type(index).data_type

    def vector_types(self, index: int = 0) -> list[DenseTensorType]:
        type_ = self.result_type(index)
        if not isinstance(type_, VectorType):
            raise self.error(f"result #{index} is not a Tensor[]")
        return list(type_.types)

    # -- index expressions -----------------------------------------------------------------
    def index(self, value: int) -> IntImm:
        """An index constant of the function's index dtype."""
        return IntImm(value, self.index_dtype)

    def normalize_axis(self, axis: int, rank: int) -> int:
        if rank == 0 and axis in (-1, 0):
            return 0
        if not -rank <= axis < rank:
            raise self.error(f"axis {axis} is out of range for a rank-{rank} tensor")
        return axis % rank


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _flatten(item)]
    return [value]


LowerFn = Callable[[LowerContext], Lowered | list[Lowered]]
"""Lowers one op: its result's Compute (a list of Computes for a Tensor[] result), or
a list with one entry per result for an op with several."""

Accepts = Callable[[Operation], bool]


def _tensor_dtypes(op: Operation) -> list[DataType]:
    dtypes = []
    for value in [*op.operand_values(), *op.results]:
        if value is None:
            continue
        types = value.type.types if isinstance(value.type, VectorType) else (value.type,)
        dtypes.extend(t.data_type for t in types if isinstance(t, DenseTensorType))
    return dtypes


def any_dtype(op: Operation) -> bool:
    """Ops that move or compare values: every real dtype, bool included."""
    return not any(d.is_complex or d is DataType.UNDEFINED for d in _tensor_dtypes(op))


def numeric(op: Operation) -> bool:
    """Arithmetic: integers and floats, no bool."""
    return all(d.is_float or d.is_integer for d in _tensor_dtypes(op))


@dataclass(frozen=True)
class OpLowering:
    """How one op lowers (`lower`) and for which operand and result dtypes (`accepts`)."""

    lower: LowerFn
    accepts: Accepts = any_dtype
    symbolic: bool = False
    """Whether `lower` handles symbolic dims (index Exprs in its operands' and result's
    shapes, `hlir.symbolic_dims`): only then is its group lowered symbolically."""
