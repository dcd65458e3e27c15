"""PIR types: element types, dense tensors and vectors of them, uniqued by IrContext.

Construct with `Type.get(...)` class methods (or the module constants `f32`, `i64`,
...); the constructors are private so that no two equal types exist.
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.pir.context import IrContext
from cinn_py.pir.dtypes import DataType

DYNAMIC = -1
"""A dimension whose size is only known at run time (printed as -1)."""


class Type:
    """Base of all types. Immutable; compare with `is` (or `==`, which is the same)."""

    __slots__ = ("__weakref__",)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _init(self, **fields: object) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __reduce__(self):
        raise TypeError("types are uniqued by the IrContext and are not pickled")

    @classmethod
    def _unique(cls, key: tuple, **fields: object) -> Type:
        """The one instance of `cls` for `key`, built with `fields` the first time."""

        def make() -> Type:
            obj = object.__new__(cls)
            obj._init(**fields)
            return obj

        return IrContext.instance().unique(cls, key, make)


class ElementType(Type):
    """A scalar element type: bool, int8..int64, uint8, float16/bfloat16/32/64, complex, index."""

    __slots__ = ("dtype",)
    dtype: DataType

    @classmethod
    def get(cls, dtype: DataType) -> ElementType:
        if dtype is DataType.UNDEFINED:
            raise ValueError("an element type needs a defined dtype")

        return cls._unique((dtype,), dtype=dtype)

    def __repr__(self) -> str:
        return self.dtype.short


class DenseTensorType(Type):
    """A dense tensor: element type and dims (-1 for dynamic; () for 0-D), layout, LoD, offset."""

    __slots__ = ("dtype", "dims", "layout", "lod", "offset")
    dtype: ElementType
    dims: tuple[int, ...]
    layout: str
    lod: tuple[tuple[int, ...], ...]
    offset: int

    @classmethod
    def get(
        cls,
        dtype: ElementType | DataType,
        dims: Sequence[int],
        layout: str = "NCHW",
        lod: Sequence[Sequence[int]] = (),
        offset: int = 0,
    ) -> DenseTensorType:
        elem = ElementType.get(dtype) if isinstance(dtype, DataType) else dtype
        dims_t = tuple(int(d) for d in dims)
        for d in dims_t:
            if d < DYNAMIC:
                raise ValueError(f"invalid tensor dim {d} in {list(dims_t)}")
        lod_t = tuple(tuple(int(x) for x in level) for level in lod)
        key = (elem, dims_t, layout, lod_t, int(offset))
        return cls._unique(
            key, dtype=elem, dims=dims_t, layout=layout, lod=lod_t, offset=int(offset)
        )

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def data_type(self) -> DataType:
        return self.dtype.dtype

    @property
    def is_static(self) -> bool:
        return DYNAMIC not in self.dims

    def with_dims(self, dims: Sequence[int]) -> DenseTensorType:
        return DenseTensorType.get(self.dtype, dims, self.layout, self.lod, self.offset)

    def with_dtype(self, dtype: DataType) -> DenseTensorType:
        return DenseTensorType.get(
            ElementType.get(dtype), self.dims, self.layout, self.lod, self.offset
        )

    def __repr__(self) -> str:
        dims = "".join(f"{d}x" for d in self.dims)
        return f"tensor<{dims}{self.dtype!r}>"


class VectorType(Type):
    """A list of types: what `builtin.combine` makes of Tensor[] operands."""

    __slots__ = ("types",)
    types: tuple[Type, ...]

    @classmethod
    def get(cls, types: Sequence[Type]) -> VectorType:
        types_t = tuple(types)
        return cls._unique((types_t,), types=types_t)

    def __len__(self) -> int:
        return len(self.types)

    def __repr__(self) -> str:
        return "vec[" + ",".join(repr(t) for t in self.types) + "]"


class NullType(Type):
    """What Paddle prints as `<<NULL TYPE>>` for a result an op leaves unmade
    (`pd_op.fused_rms_norm_quant`'s residual_out when no residual is given). A value of
    this type holds nothing: the verifier rejects any use of it and no target allocates
    it. A null operand is None, not a value of this type."""

    __slots__ = ()

    @classmethod
    def get(cls) -> NullType:
        return cls._unique(())

    def __repr__(self) -> str:
        return "<<NULL TYPE>>"


def is_null(type_: Type | None) -> bool:
    """Whether `type_` is the type of a result an op leaves unmade (`NullType`)."""
    return isinstance(type_, NullType)


def tensor(dtype: DataType, *dims: int) -> DenseTensorType:
    """Shorthand: `tensor(DataType.FLOAT32, 8, 16)`."""
    return DenseTensorType.get(dtype, dims)


bool_ = ElementType.get(DataType.BOOL)
i8 = ElementType.get(DataType.INT8)
u8 = ElementType.get(DataType.UINT8)
i16 = ElementType.get(DataType.INT16)
i32 = ElementType.get(DataType.INT32)
i64 = ElementType.get(DataType.INT64)
f16 = ElementType.get(DataType.FLOAT16)
bf16 = ElementType.get(DataType.BFLOAT16)
f32 = ElementType.get(DataType.FLOAT32)
f64 = ElementType.get(DataType.FLOAT64)
c64 = ElementType.get(DataType.COMPLEX64)
c128 = ElementType.get(DataType.COMPLEX128)
index = ElementType.get(DataType.INDEX)
