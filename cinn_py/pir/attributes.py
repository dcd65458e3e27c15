"""PIR attributes: immutable constant values attached to ops, uniqued by IrContext.

Builtin kinds (Bool, Int32, Int64, Float, Double, Str, Array, Type) and pd_op's
(IntArray, DataType, Place, DataLayout, Scalar). Each kind knows its `kind` name, the
prefix Paddle's typed text format writes before it (`(Int64)`), and its Python value.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from cinn_py.pir.context import IrContext
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.types import Type


def _float_key(value: float) -> tuple:
    """Floats are keyed by their bits, so -0.0 and 0.0 (and NaNs) stay distinct."""
    return ("f", struct.pack("<d", value))


class Attribute:
    """Base of all attributes. `value` is the Python value."""

    __slots__ = ("value", "__weakref__")
    kind: str = "attribute"
    value: Any

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @classmethod
    def _unique(cls, key: tuple, value: Any) -> Attribute:
        def make() -> Attribute:
            obj = object.__new__(cls)
            object.__setattr__(obj, "value", value)
            return obj

        return IrContext.instance().unique(cls, key, make)

    def to_python(self) -> Any:
        """The plain Python value (lists for arrays), for passes and executors."""
        return self.value

    def __reduce__(self):
        raise TypeError("attributes are uniqued by the IrContext and are not pickled")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"


class BoolAttribute(Attribute):
    __slots__ = ()
    kind = "bool"

    @classmethod
    def get(cls, value: bool) -> BoolAttribute:
        return cls._unique((bool(value),), bool(value))


class Int32Attribute(Attribute):
    __slots__ = ()
    kind = "int32"

    @classmethod
    def get(cls, value: int) -> Int32Attribute:
        v = int(value)
        if not -(2**31) <= v < 2**31:
            raise ValueError(f"{v} does not fit an Int32 attribute")
        return cls._unique((v,), v)


class Int64Attribute(Attribute):
    __slots__ = ()
    kind = "int64"

    @classmethod
    def get(cls, value: int) -> Int64Attribute:
        v = int(value)
        if not -(2**63) <= v < 2**63:
            raise ValueError(f"{v} does not fit an Int64 attribute")
        return cls._unique((v,), v)


class FloatAttribute(Attribute):
    """A float32 value (held as the Python float that float32 rounds to)."""

    __slots__ = ()
    kind = "float"

    @classmethod
    def get(cls, value: float) -> FloatAttribute:
        v = float(np.float32(value)) if math.isfinite(value) else float(value)
        return cls._unique(_float_key(v), v)


class DoubleAttribute(Attribute):
    __slots__ = ()
    kind = "double"

    @classmethod
    def get(cls, value: float) -> DoubleAttribute:
        v = float(value)
        return cls._unique(_float_key(v), v)


class StrAttribute(Attribute):
    __slots__ = ()
    kind = "str"

    @classmethod
    def get(cls, value: str) -> StrAttribute:
        return cls._unique((str(value),), str(value))


class ArrayAttribute(Attribute):
    """An ordered list of attributes (possibly of mixed kinds, possibly empty)."""

    __slots__ = ()
    kind = "array"
    value: tuple[Attribute, ...]

    @classmethod
    def get(cls, items: Sequence[Attribute]) -> ArrayAttribute:
        items_t = tuple(items)
        for item in items_t:
            if not isinstance(item, Attribute):
                raise TypeError(f"ArrayAttribute items must be attributes, got {item!r}")
        return cls._unique((items_t,), items_t)

    def to_python(self) -> list:
        return [item.to_python() for item in self.value]

    def __len__(self) -> int:
        return len(self.value)

    def __iter__(self):
        return iter(self.value)


class TypeAttribute(Attribute):
    __slots__ = ()
    kind = "type"
    value: Type

    @classmethod
    def get(cls, value: Type) -> TypeAttribute:
        return cls._unique((value,), value)


class IntArrayAttribute(Attribute):
    """pd_op.IntArray: a list of int64 (shapes, axes)."""

    __slots__ = ()
    kind = "int_array"
    value: tuple[int, ...]

    @classmethod
    def get(cls, values: Sequence[int]) -> IntArrayAttribute:
        v = tuple(int(x) for x in values)
        return cls._unique((v,), v)

    def to_python(self) -> list[int]:
        return list(self.value)


class DataTypeAttribute(Attribute):
    """pd_op.DataType, including `Undefined` (meaning: keep the input's)."""

    __slots__ = ()
    kind = "data_type"
    value: DataType

    @classmethod
    def get(cls, value: DataType) -> DataTypeAttribute:
        return cls._unique((value,), value)


class PlaceAttribute(Attribute):
    """pd_op.Place, held as the text inside `Place(...)`: `cpu`, `undefined:0`, `gpu:0`."""

    __slots__ = ()
    kind = "place"

    @classmethod
    def get(cls, value: str) -> PlaceAttribute:
        return cls._unique((str(value),), str(value))


class DataLayoutAttribute(Attribute):
    """pd_op.DataLayout: `NCHW`, `NHWC`, `ANY`, `UNDEFINED`, ..."""

    __slots__ = ()
    kind = "data_layout"

    @classmethod
    def get(cls, value: str) -> DataLayoutAttribute:
        return cls._unique((str(value),), str(value))


SCALAR_ATTRIBUTES = (BoolAttribute, Int32Attribute, Int64Attribute, FloatAttribute, DoubleAttribute)
"""What pd_op.Scalar may hold. Paddle prints a Scalar as the attribute it wraps, so a
Scalar is not a class of its own here: a declaration of kind `scalar` takes any of these."""


def scalar_attribute(value: Any) -> Attribute:
    """A pd_op.Scalar for a Python number: Int64 for ints, Double for floats, Bool for bools."""
    if isinstance(value, SCALAR_ATTRIBUTES):
        return value
    if isinstance(value, (bool, np.bool_)):
        return BoolAttribute.get(bool(value))
    if isinstance(value, (int, np.integer)):
        return Int64Attribute.get(int(value))
    if isinstance(value, (float, np.floating)):
        return DoubleAttribute.get(float(value))
    raise TypeError(f"a scalar holds a number, got {value!r}")


ATTRIBUTE_KINDS: dict[str, type[Attribute]] = {
    cls.kind: cls
    for cls in (
        BoolAttribute,
        Int32Attribute,
        Int64Attribute,
        FloatAttribute,
        DoubleAttribute,
        StrAttribute,
        ArrayAttribute,
        TypeAttribute,
        IntArrayAttribute,
        DataTypeAttribute,
        PlaceAttribute,
        DataLayoutAttribute,
    )
}


def attr_from_python(value: Any) -> Attribute:
    """A best-guess attribute for a Python value (bool, int, float, str, list, DataType)."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, (bool, np.bool_)):
        return BoolAttribute.get(bool(value))
    if isinstance(value, (int, np.integer)):
        v = int(value)
        return Int32Attribute.get(v) if -(2**31) <= v < 2**31 else Int64Attribute.get(v)
    if isinstance(value, (float, np.floating)):
        return DoubleAttribute.get(float(value))
    if isinstance(value, str):
        return StrAttribute.get(value)
    if isinstance(value, DataType):
        return DataTypeAttribute.get(value)
    if isinstance(value, Type):
        return TypeAttribute.get(value)
    if isinstance(value, (list, tuple)):
        return ArrayAttribute.get([attr_from_python(v) for v in value])
    raise TypeError(f"no attribute for Python value {value!r}")
