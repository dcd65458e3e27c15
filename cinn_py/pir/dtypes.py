"""The element data types, with every spelling Paddle uses for each in one table.

Paddle spells one dtype five ways: in the printed type (`f32`), in a DataType
attribute (`float32`), in model.json (`0.t_f32`), in model.pdiparams (code 5) and in
NumPy. Keeping them in one row per dtype means no module converts between them ad hoc.
"""

from __future__ import annotations

import enum

import numpy as np


class DataType(enum.Enum):
    """An element type. `value` is Paddle's DataType attribute spelling."""

    BOOL = "bool"
    INT8 = "int8"
    UINT8 = "uint8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT16 = "float16"
    BFLOAT16 = "bfloat16"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    COMPLEX64 = "complex64"
    COMPLEX128 = "complex128"
    INDEX = "index"
    UNDEFINED = "Undefined"

    @property
    def short(self) -> str:
        """The spelling inside a printed tensor type: `f32` in `tensor<2xf32>`."""
        return _SHORT[self]

    @property
    def pdiparams_code(self) -> int:
        """The `data_type` code of a TensorDesc in model.pdiparams."""
        return _PDIPARAMS_CODE[self]

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype holding values of this type (bfloat16 has none: see below)."""
        if self is DataType.BFLOAT16:
            raise TypeError("NumPy has no bfloat16; use cinn_py.pir.dtypes.bfloat16_to_float32")
        return _NUMPY_DTYPES[self]

    @property
    def is_float(self) -> bool:
        return self in (DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT32, DataType.FLOAT64)

    @property
    def is_integer(self) -> bool:
        return self in (
            DataType.INT8,
            DataType.UINT8,
            DataType.INT16,
            DataType.INT32,
            DataType.INT64,
            DataType.INDEX,
        )

    @property
    def is_complex(self) -> bool:
        return self in (DataType.COMPLEX64, DataType.COMPLEX128)

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE[self]

    @staticmethod
    def from_short(short: str) -> DataType:
        try:
            return _FROM_SHORT[short]
        except KeyError:
            raise ValueError(f"unknown element type '{short}'") from None

    @staticmethod
    def from_name(name: str) -> DataType:
        """From the DataType attribute spelling (`float32`, `Undefined`)."""
        try:
            return DataType(name)
        except ValueError:
            raise ValueError(f"unknown data type '{name}'") from None

    @staticmethod
    def from_pdiparams_code(code: int) -> DataType:
        try:
            return _FROM_PDIPARAMS[code]
        except KeyError:
            raise ValueError(f"unknown pdiparams data type code {code}") from None

    @staticmethod
    def from_numpy(dtype: np.dtype | type | str) -> DataType:
        dt = np.dtype(dtype)
        for key, name in _NUMPY.items():
            if key is not DataType.INDEX and np.dtype(name) == dt:
                return key
        raise ValueError(f"no PIR data type for NumPy dtype {dt}")


_SHORT = {
    DataType.BOOL: "b",
    DataType.INT8: "i8",
    DataType.UINT8: "u8",
    DataType.INT16: "i16",
    DataType.INT32: "i32",
    DataType.INT64: "i64",
    DataType.FLOAT16: "f16",
    DataType.BFLOAT16: "bf16",
    DataType.FLOAT32: "f32",
    DataType.FLOAT64: "f64",
    DataType.COMPLEX64: "c64",
    DataType.COMPLEX128: "c128",
    DataType.INDEX: "index",
    DataType.UNDEFINED: "undefined",
}
_FROM_SHORT = {v: k for k, v in _SHORT.items() if k is not DataType.UNDEFINED}

_PDIPARAMS_CODE = {
    DataType.BOOL: 0,
    DataType.INT16: 1,
    DataType.INT32: 2,
    DataType.INT64: 3,
    DataType.FLOAT16: 4,
    DataType.FLOAT32: 5,
    DataType.FLOAT64: 6,
    DataType.UINT8: 20,
    DataType.INT8: 21,
    DataType.BFLOAT16: 22,
    DataType.COMPLEX64: 23,
    DataType.COMPLEX128: 24,
}
_FROM_PDIPARAMS = {v: k for k, v in _PDIPARAMS_CODE.items()}

_NUMPY = {
    DataType.BOOL: "bool",
    DataType.INT8: "int8",
    DataType.UINT8: "uint8",
    DataType.INT16: "int16",
    DataType.INT32: "int32",
    DataType.INT64: "int64",
    DataType.FLOAT16: "float16",
    DataType.FLOAT32: "float32",
    DataType.FLOAT64: "float64",
    DataType.COMPLEX64: "complex64",
    DataType.COMPLEX128: "complex128",
    DataType.INDEX: "int64",
}
_NUMPY_DTYPES = {data_type: np.dtype(name) for data_type, name in _NUMPY.items()}
"""`DataType.numpy`'s answers, made once (it is asked on every run's feed checks)."""

_ITEMSIZE = {
    DataType.BOOL: 1,
    DataType.INT8: 1,
    DataType.UINT8: 1,
    DataType.INT16: 2,
    DataType.INT32: 4,
    DataType.INT64: 8,
    DataType.FLOAT16: 2,
    DataType.BFLOAT16: 2,
    DataType.FLOAT32: 4,
    DataType.FLOAT64: 8,
    DataType.COMPLEX64: 8,
    DataType.COMPLEX128: 16,
    DataType.INDEX: 8,
    DataType.UNDEFINED: 0,
}


def bfloat16_to_float32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 values held as uint16 bit patterns, widened exactly to float32."""
    # Arithmetic on a 0-D array gives a NumPy scalar: asarray keeps an array.
    return np.asarray(np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def float32_to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 rounded to nearest-even bfloat16, returned as uint16 bit patterns."""
    values = np.asarray(values, dtype=np.float32)
    # ascontiguousarray makes a 0-D array 1-D: reshape keeps the input's shape.
    bits = np.ascontiguousarray(values).reshape(values.shape).view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    out = np.asarray((bits + rounding) >> 16).astype(np.uint16)
    nan = np.isnan(values)
    if np.any(nan):
        out = np.where(nan, np.uint16(0x7FC0), out)
    return out


def float_to_int(values: np.ndarray | float, dtype: DataType) -> np.ndarray:
    """Floats converted to the integer `dtype` by the one rule every stage uses (the
    reference executor, the IR interpreter, constant folding, generated code): truncate
    toward zero, saturate to the type's range, NaN -> 0. That is PTX's `cvt.rzi` (the
    GPU's own conversion) and Rust's `as`; C's `static_cast` leaves out-of-range values
    and NaN undefined (x86 gives the type's minimum, or wraps narrow types)."""
    target = dtype.numpy
    info = np.iinfo(target)
    floats = np.trunc(np.asarray(values, dtype=np.float64))  # every float holds exactly
    # The limits are powers of two (the max + 1), exact in float64.
    low, high = float(info.min), float(info.max) + 1.0
    inside = (floats >= low) & (floats < high)  # false for NaN
    out = np.where(inside, floats, 0.0).astype(target)
    out = np.where(floats >= high, info.max, out)
    return np.asarray(np.where(floats < low, info.min, out).astype(target))
