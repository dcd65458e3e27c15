"""Reads and writes `model.pdiparams`, Paddle's `save_combine` format for parameters.

The file holds tensor records back to back and nothing else: no header, no count, no
names. Record i holds the i-th of the *sorted* persistable names (`sorted()` on str, so
`linear_10` comes before `linear_9`), which is why every function here takes the names
from the program and sorts them itself. A record, little-endian:

    u32 version (0) | u64 lod_level, then per level u64 byte count + bytes |
    u32 tensor version (0) | i32 desc_size | protobuf TensorDesc | raw row-major data

TensorDesc is `{data_type = 1 (varint); repeated int64 dims = 2}`. Paddle writes the
dims unpacked (one tag per dim); a packed field (wire type 2) is read as well, since
protobuf readers must accept both.

NumPy has no bfloat16: bfloat16 tensors come back, and are written from, uint16
arrays of bit patterns (`cinn_py.pir.dtypes.bfloat16_to_float32` widens them).
"""

from __future__ import annotations

import math
import mmap
import os
import struct
from collections.abc import Iterable, Mapping

import numpy as np

from cinn_py.errors import LoadError
from cinn_py.pir.dtypes import DataType

_BF16_BITS = np.dtype("<u2")
"""How a bfloat16 record is held in NumPy: its 16-bit patterns."""

_Buffer = bytes | mmap.mmap
"""A file's contents: mapped, or read where it cannot be mapped."""

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_DATA_TYPE_FIELD, _DIMS_FIELD = 1, 2


class _Corrupt(Exception):
    """Why one record cannot be read; `read_pdiparams` adds the file and the record."""


def read_pdiparams(path: str | os.PathLike[str], names: Iterable[str]) -> dict[str, np.ndarray]:
    """The tensors of a `.pdiparams` file, keyed by name.

    `names` are the model's persistable names in any order; record i is matched to the
    i-th of them sorted. The file must hold exactly one record per name: fewer or more
    means it belongs to another model, and is a LoadError rather than a silent mix-up.
    """
    order = sorted(set(names))
    data = _read_bytes(path)
    try:
        return _read_records(path, data, order)
    finally:
        if isinstance(data, mmap.mmap):
            data.close()


def _read_records(
    path: str | os.PathLike[str], data: _Buffer, order: list[str]
) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    pos = 0
    for index, name in enumerate(order):
        if pos == len(data):
            raise LoadError(
                f"{path}: holds {index} tensor records, but the model has {len(order)} "
                f"persistable values (record {index} would be '{name}')"
            )
        try:
            arrays[name], pos = _read_record(data, pos)
        except _Corrupt as why:
            raise LoadError(f"{path}: record {index} ('{name}'): {why}") from None
    if pos != len(data):
        raise LoadError(
            f"{path}: {len(data) - pos} bytes follow the last of the {len(order)} tensor "
            "records the model names (more records than persistable values?)"
        )
    return arrays


def write_pdiparams(path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray]) -> None:
    """Write `arrays` as Paddle would: one record per name, in sorted-name order.

    A uint16 array is taken as bfloat16 bit patterns (pdiparams has no uint16 type).
    """
    names = sorted(arrays)
    for name in names:  # refused before the file is touched
        _dtype_of(name, np.asarray(arrays[name]))
    with open(path, "wb") as f:
        for name in names:  # a record at a time: a model's parameters run to gigabytes
            f.write(_encode_record(name, np.asarray(arrays[name])))


# -- reading ------------------------------------------------------------------------


def _read_bytes(path: str | os.PathLike[str]) -> _Buffer:
    """The file's bytes, mapped where it can be (not an empty file, nor a pipe): each
    tensor is then copied once, from the page cache into its array, where a read copies
    it twice (0.37 s rather than 0.8 s or more for a 32-layer LLaMA's 786 MiB)."""
    try:
        with open(path, "rb") as f:
            try:
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):
                return f.read()
    except OSError as error:
        raise LoadError(f"{path}: cannot read parameters: {error.strerror}") from None


def _unpack(fmt: str, data: _Buffer, pos: int, what: str) -> tuple[int, int]:
    """One little-endian integer at `pos`, and the position after it."""
    size = struct.calcsize(fmt)
    if pos + size > len(data):
        raise _Corrupt(f"file ends inside the {what}")
    return struct.unpack_from(fmt, data, pos)[0], pos + size


def _read_record(data: _Buffer, pos: int) -> tuple[np.ndarray, int]:
    version, pos = _unpack("<I", data, pos, "record version")
    if version != 0:
        raise _Corrupt(f"record version {version}, expected 0")
    pos = _skip_lod(data, pos)
    tensor_version, pos = _unpack("<I", data, pos, "tensor version")
    if tensor_version != 0:
        raise _Corrupt(f"tensor version {tensor_version}, expected 0")
    desc_size, pos = _unpack("<i", data, pos, "TensorDesc size")
    if desc_size < 0 or pos + desc_size > len(data):
        raise _Corrupt(f"TensorDesc of {desc_size} bytes does not fit in the file")
    dtype, dims = _parse_tensor_desc(data[pos : pos + desc_size])
    pos += desc_size
    return _read_data(data, pos, dtype, dims)


def _skip_lod(data: _Buffer, pos: int) -> int:
    """LoD levels only matter to sequence tensors; parameters have none, so skip them."""
    levels, pos = _unpack("<Q", data, pos, "LoD level count")
    for level in range(levels):
        size, pos = _unpack("<Q", data, pos, f"size of LoD level {level}")
        if pos + size > len(data):
            raise _Corrupt(f"file ends inside LoD level {level}")
        pos += size
    return pos


MAX_RANK = 64
"""NumPy's limit on dims (`np.ndarray` holds at most 64)."""

_MAX_BYTES = 2**62
"""A tensor larger than this (even an empty one, counting its non-zero dims) is no
tensor NumPy or a GPU could hold: the record is corrupt."""


def _read_data(
    data: _Buffer, pos: int, dtype: DataType, dims: tuple[int, ...]
) -> tuple[np.ndarray, int]:
    shape = "x".join(map(str, dims)) or "0-D"
    if len(dims) > MAX_RANK:
        raise _Corrupt(f"a tensor of {len(dims)} dims (NumPy holds at most {MAX_RANK})")
    if math.prod(d for d in dims if d) * dtype.itemsize > _MAX_BYTES:
        raise _Corrupt(f"a {shape[:200]} {dtype.value} tensor is too large to be real")
    count = math.prod(dims)
    nbytes = count * dtype.itemsize
    if pos + nbytes > len(data):
        raise _Corrupt(
            f"file ends inside the data: a {shape} {dtype.value} tensor needs {nbytes} "
            f"bytes, {len(data) - pos} are left"
        )
    stored = _BF16_BITS if dtype is DataType.BFLOAT16 else dtype.numpy.newbyteorder("<")
    # one expression, so that no view of `data` (a mapping, closed after the last record)
    # outlives the copy, even in a traceback
    array = (
        np.frombuffer(data, dtype=stored, count=count, offset=pos)
        .reshape(dims)
        .astype(stored.newbyteorder("="), copy=True)
    )
    return array, pos + nbytes


def _read_varint(buf: bytes, pos: int, end: int | None = None) -> tuple[int, int]:
    end = len(buf) if end is None else end
    value = shift = 0
    while True:
        if pos >= end:
            raise _Corrupt("TensorDesc ends inside a varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift >= 64:
            raise _Corrupt("TensorDesc holds a varint longer than 10 bytes")


def _as_int64(value: int) -> int:
    """Protobuf writes a negative int64 as its 64-bit two's complement (and, as its
    readers do, bits past the 64th of a 10-byte varint are dropped)."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def _parse_tensor_desc(buf: bytes) -> tuple[DataType, tuple[int, ...]]:
    code: int | None = None
    dims: list[int] = []
    pos = 0
    while pos < len(buf):
        key, pos = _read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if field == _DATA_TYPE_FIELD and wire == _VARINT:
            code, pos = _read_varint(buf, pos)
        elif field == _DIMS_FIELD and wire == _VARINT:
            dim, pos = _read_varint(buf, pos)
            dims.append(_as_int64(dim))
        elif field == _DIMS_FIELD and wire == _LENGTH:
            pos = _read_packed_dims(buf, pos, dims)
        else:
            pos = _skip_field(buf, pos, field, wire)
    if code is None:
        raise _Corrupt("TensorDesc has no data_type")
    try:
        dtype = DataType.from_pdiparams_code(code)
    except ValueError:
        raise _Corrupt(f"unknown data type code {code}") from None
    if any(d < 0 for d in dims):
        shown = str(dims) if len(dims) <= 8 else f"[{', '.join(map(str, dims[:8]))}, ...]"
        raise _Corrupt(f"negative dim in {shown}")
    return dtype, tuple(dims)


def _read_packed_dims(buf: bytes, pos: int, dims: list[int]) -> int:
    length, pos = _read_varint(buf, pos)
    end = pos + length
    if end > len(buf):
        raise _Corrupt("TensorDesc ends inside the packed dims")
    while pos < end:
        dim, pos = _read_varint(buf, pos, end)
        dims.append(_as_int64(dim))
    return pos


def _skip_field(buf: bytes, pos: int, field: int, wire: int) -> int:
    """Fields a newer TensorDesc may add are skipped, as protobuf readers do."""
    if wire == _VARINT:
        return _read_varint(buf, pos)[1]
    if wire == _LENGTH:
        length, pos = _read_varint(buf, pos)
        end = pos + length
    elif wire in (_FIXED64, _FIXED32):
        end = pos + (8 if wire == _FIXED64 else 4)
    else:
        raise _Corrupt(f"TensorDesc field {field} has invalid wire type {wire}")
    if end > len(buf):
        raise _Corrupt(f"TensorDesc ends inside field {field}")
    return end


# -- writing ------------------------------------------------------------------------


def _encode_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _dtype_of(name: str, array: np.ndarray) -> DataType:
    if array.dtype == np.uint16:
        return DataType.BFLOAT16
    try:
        return DataType.from_numpy(array.dtype)
    except ValueError:
        raise ValueError(f"parameter '{name}': pdiparams cannot hold {array.dtype}") from None


def _encode_record(name: str, array: np.ndarray) -> bytes:
    dtype = _dtype_of(name, array)
    desc = bytes([_DATA_TYPE_FIELD << 3 | _VARINT]) + _encode_varint(dtype.pdiparams_code)
    for dim in array.shape:
        desc += bytes([_DIMS_FIELD << 3 | _VARINT]) + _encode_varint(dim)
    stored = _BF16_BITS if dtype is DataType.BFLOAT16 else dtype.numpy.newbyteorder("<")
    header = struct.pack("<IQIi", 0, 0, 0, len(desc))
    return header + desc + np.ascontiguousarray(array, dtype=stored).tobytes()
