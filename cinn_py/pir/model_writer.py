"""Writes a program as `paddle.jit.save` does: `model.json` + `model.pdiparams`.

The inverse of `model_loader` (whose docstring describes the format), built from its
tables, so a written model loads back to the same program: `load_model(save_model(p,
...))` prints as `p` does. Ops are written in program order with value ids from 1, every
attribute under "A" except `stop_gradient` / `persistable` (under "OA", as Paddle puts
them), `builtin.parameter` in its compressed form, and `base_code.trainable` true.

Why it exists: tools write large saved models (`tools/gen_big_model.py`) from program
text, with no Paddle at hand; no attribute is dropped or converted on the way.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from cinn_py.pir import attributes as A
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.model_loader import (
    _ALLOCATION_TYPES,
    _ELEMENT_TYPES,
    DIALECT_IDS,
    _persistable_names,
)
from cinn_py.pir.operation import Block, Operation
from cinn_py.pir.pdiparams import write_pdiparams
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType, ElementType, NullType, Type, VectorType
from cinn_py.pir.value import Value

VERSION = 4
"""The PIR serialization version written (Paddle 3.3's, the one the loader reads)."""

_DIALECT_OF = {name: key for key, name in DIALECT_IDS.items()}
_ELEMENT_TAGS = {dtype: tag for tag, dtype in _ELEMENT_TYPES.items()}
_ALLOCATION_IDS = {name: key for key, name in _ALLOCATION_TYPES.items()}
_OUTPUT_ATTRIBUTES = ("stop_gradient", "persistable")
"""Attributes Paddle writes under "OA" (the loader reads every key alike)."""


def save_model(
    program: Program,
    path: str | os.PathLike[str],
    params: Mapping[str, np.ndarray] | None = None,
) -> Path:
    """Write `program` to `path` (`.json`, or a path prefix: `dir/model` gives
    `dir/model.json`) and its persistable values to the `.pdiparams` beside it, from
    `params` (default `program.parameters`; bfloat16 as uint16 bit patterns). Returns the
    `.json` path. A persistable value with no array is a ValueError; no `.pdiparams` is
    written for a program without persistable values."""
    given = Path(path)
    json_path = given if given.suffix == ".json" else given.with_name(given.name + ".json")
    arrays = program.parameters if params is None else params
    names = _persistable_names(program)
    missing = sorted(set(names) - set(arrays))
    if missing:
        raise ValueError(f"no array for persistable value(s) {', '.join(missing[:5])}")
    json_path.write_text(json.dumps(model_json(program), separators=(",", ":")))
    if names:
        write_pdiparams(json_path.with_suffix(".pdiparams"), {n: arrays[n] for n in names})
    return json_path


def model_json(program: Program) -> dict[str, Any]:
    """The `model.json` document of `program`."""
    writer = _Writer()
    return {
        "base_code": {"magic": "pir", "trainable": True, "version": VERSION},
        "program": {"regions": [writer.region(program.block)]},
    }


class _Writer:
    """Numbers values from 1, and regions and blocks from 0, in op order (nested ops
    included), as Paddle does."""

    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.regions = 0

    def region(self, block: Block) -> dict[str, Any]:
        index = self.regions
        self.regions += 1
        ops = [self.op(op) for op in block]
        block_json = {"#": f"block_{index}", "args": [], "ops": ops}
        return {"#": f"region_{index}", "blocks": [block_json]}

    def op(self, op: Operation) -> dict[str, Any]:
        if op.name == "builtin.parameter":
            return self._parameter(op)
        encoded: dict[str, Any] = {
            "#": _op_tag(op.name),
            "A": [_named(k, v) for k, v in op.attributes.items() if k not in _OUTPUT_ATTRIBUTES],
            "I": [{"%": self._use(v)} for v in op.operand_values()],
            "O": [self._define(r) for r in op.results],
            "OA": [_named(k, v) for k, v in op.attributes.items() if k in _OUTPUT_ATTRIBUTES],
        }
        if op.regions:
            encoded["regions"] = [self.region(region.blocks[0]) for region in op.regions]
        return encoded

    def _parameter(self, op: Operation) -> dict[str, Any]:
        flags = ("is_distributed", "is_parameter", "need_clip")
        result_flags = ("persistable", "stop_gradient", "trainable")
        known = {*flags, *result_flags, "parameter_name"}
        return {
            "#": "p",
            "A": [*(_flag(op, k) for k in flags), op.attr("parameter_name")],
            "DA": [_named(k, v) for k, v in op.attributes.items() if k not in known],
            "O": self._define(op.result(0)),
            "OA": [_flag(op, k) for k in result_flags],
            "QA": [],
        }

    def _define(self, value: Value) -> dict[str, Any]:
        self.ids[id(value)] = len(self.ids) + 1
        return {"%": self.ids[id(value)], "TT": _type(value.type)}

    def _use(self, value: Value | None) -> int:
        return 0 if value is None else self.ids[id(value)]


def _op_tag(name: str) -> str:
    dialect, _, op = name.partition(".")
    return f"{_DIALECT_OF[dialect]}.{op}" if dialect in _DIALECT_OF else name


def _flag(op: Operation, key: str) -> int:
    """A compressed flag: 1 where the attribute is `[true]` (absent: Paddle's default)."""
    default = [key != "is_distributed" and key != "stop_gradient"]
    return int(op.attr(key, default) == [True])


def _named(name: str, value: A.Attribute) -> dict[str, Any]:
    return {"AT": _attribute(value), "N": name}


def _type(type_: Type) -> dict[str, Any]:
    if isinstance(type_, NullType):
        return {"#": "NULL"}
    if isinstance(type_, ElementType):
        return {"#": _ELEMENT_TAGS[type_.dtype]}
    if isinstance(type_, DenseTensorType):
        lod = [list(level) for level in type_.lod]
        return {
            "#": "0.t_dtensor",
            "D": [_type(type_.dtype), list(type_.dims), type_.layout, lod, type_.offset],
        }
    if isinstance(type_, VectorType):
        return {"#": "0.t_vec", "D": [_type(t) for t in type_.types]}
    raise ValueError(f"cannot write type {type_!r} to model.json")


def _float(tag: str, value: float) -> dict[str, Any]:
    if math.isnan(value):
        return {"#": tag, "VD": "NaN"}
    if math.isinf(value):
        return {"#": tag, "VD": "INF" if value > 0 else "-INF"}
    return {"#": tag, "D": value}


def _place(place: str) -> list[Any]:
    """The text inside `Place(...)` -> [allocation type, device id, custom device type]."""
    name, _, device = place.partition(":")
    if name in _ALLOCATION_IDS:
        return [_ALLOCATION_IDS[name], int(device or 0), ""]
    return [_ALLOCATION_IDS["custom"], int(device or 0), name]


def _dtype_name(dtype: DataType) -> str:
    return "Undefined(ALL_DTYPE)" if dtype is DataType.UNDEFINED else dtype.value


def _attribute(attr: A.Attribute) -> dict[str, Any]:
    value = attr.value
    if isinstance(attr, A.BoolAttribute):
        return {"#": "0.a_bool", "D": value}
    if isinstance(attr, A.Int32Attribute):
        return {"#": "0.a_i32", "D": value}
    if isinstance(attr, A.Int64Attribute):
        return {"#": "0.a_i64", "D": value}
    if isinstance(attr, A.FloatAttribute):
        return _float("0.a_f32", value)
    if isinstance(attr, A.DoubleAttribute):
        return _float("0.a_f64", value)
    if isinstance(attr, A.StrAttribute):
        return {"#": "0.a_str", "D": value}
    if isinstance(attr, A.ArrayAttribute):
        return {"#": "0.a_array", "D": [_attribute(item) for item in value]}
    if isinstance(attr, A.TypeAttribute):
        return {"#": "0.a_type", "D": _type(value)}
    if isinstance(attr, A.IntArrayAttribute):
        return {"#": "1.a_intarray", "D": list(value)}
    if isinstance(attr, A.DataTypeAttribute):
        return {"#": "1.a_dtype", "D": _dtype_name(value)}
    if isinstance(attr, A.PlaceAttribute):
        return {"#": "1.a_place", "D": _place(value)}
    if isinstance(attr, A.DataLayoutAttribute):
        return {"#": "1.a_layout", "D": value}
    raise ValueError(f"cannot write attribute {attr!r} to model.json")
