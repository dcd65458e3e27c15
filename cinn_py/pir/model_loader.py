"""Loads a model saved by `paddle.jit.save` (`model.json` + `model.pdiparams`), no Paddle.

`model.json` is Paddle's PIR serialization (format version 4 in Paddle 3.3):

    {"base_code": {"magic": "pir", "version": 4, "trainable": true},
     "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [],
                                                          "ops": [OP, ...]}]}]}}

An OP is `{"#": "<dialect id>.<op>", "I": [{"%": id}], "O": [{"%": id, "TT": TYPE}],
"A": [{"N": name, "AT": ATTR}], "OA": [...]}` with dialect ids 0 builtin, 1 pd_op, 2 cf,
3 custom_op, 4 pd_dist. Value ids count from 1; operand id 0 is a null operand.
`"OA"` holds stop_gradient / persistable (written only when base_code.trainable).
Control-flow ops carry `"regions"` shaped like the program's. `builtin.parameter` is
compressed to `{"#": "p", "A": [is_distributed, is_parameter, need_clip, name],
"OA": [persistable, stop_gradient, trainable], "DA": [...], "QA": [...], "O": VALUE}`
(flags as 0/1; one result, not a list).

A TYPE or ATTR is `{"#": "<dialect id>.<tag>", "D": data}`; the tags are in the tables
below. Float attributes that are NaN or infinite have `"VD": "NaN" | "INF" | "-INF"`
instead of `"D"` (Paddle 3.3.1 writes these but cannot read them back itself).

A result typed `{"#": "NULL"}` (printed `<<NULL TYPE>>`) is one the op leaves unmade
(`NullType`). Types come from the file, never from op declarations, so a model loads
whether or not its ops are declared; undeclared ops fail later, where something needs
to run them.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cinn_py.errors import LoadError
from cinn_py.pir import attributes as A
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.lexer import binary_data_reason
from cinn_py.pir.operation import Block, Location, Operation
from cinn_py.pir.pdiparams import read_pdiparams
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType, ElementType, NullType, Type, VectorType
from cinn_py.pir.value import Value

SUPPORTED_VERSIONS = frozenset({4})
"""PIR serialization versions read here. Paddle upgrades older files with patches
(op and attribute changes) that cinn_py does not replay, so those are refused."""

DIALECT_IDS = {"0": "builtin", "1": "pd_op", "2": "cf", "3": "custom_op", "4": "pd_dist"}
"""Paddle's DialectIdMap. A dialect missing from it is written by its full name."""


def _show(value: Any, limit: int = 80) -> str:
    """`repr(value)` cut to `limit` characters: file content an error message quotes."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _cut(text: str, limit: int = 60) -> str:
    """A string from the file (a tag), cut to `limit` characters, unquoted."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


_OP_KEYS = frozenset({"#", "I", "O", "A", "OA", "DA", "QA", "regions"})
_PARAMETER_KEYS = frozenset({"#", "O", "A", "OA", "DA", "QA"})


class _Bad(Exception):
    """What is wrong inside one op; the reader adds the file and the op's index."""


def load_model(path: str | os.PathLike[str]) -> Program:
    """The program of a saved model, with its parameters in `program.parameters`.

    `path` is the `.json` file, its folder, or the path prefix given to `jit.save`
    (`dir/model` for `dir/model.json` + `dir/model.pdiparams`). A model without
    persistable values may lack the `.pdiparams` file.
    """
    json_path, params_path = model_files(path)
    document = _read_json(json_path)
    _check_base_code(document, json_path)
    program = Program()
    program.source = str(json_path)
    _ProgramReader(json_path).read_program(document.get("program"), program)
    program.parameters = _load_parameters(program, params_path)
    return program


def model_files(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The `.json` and `.pdiparams` files that `path` names (see `load_model`)."""
    given = Path(path)
    if given.is_dir():
        json_path = _json_in_folder(given)
    elif given.suffix == ".json":
        json_path = given
    else:
        json_path = given.with_name(given.name + ".json")
    if not json_path.is_file():
        raise LoadError(f"{json_path}: no such model file")
    return json_path, json_path.with_suffix(".pdiparams")


def _json_in_folder(folder: Path) -> Path:
    """`model.json` (jit.save's usual name), else the folder's only `.json` file."""
    if (folder / "model.json").is_file():
        return folder / "model.json"
    found = sorted(folder.glob("*.json"))
    if len(found) != 1:
        names = ", ".join(p.name for p in found) or "none"
        raise LoadError(f"{folder}: expected one model .json file in the folder, found {names}")
    return found[0]


MAX_JSON_NESTING = 200
"""Deepest nesting of JSON arrays and objects read. Paddle's models nest 13 levels, and 6
more per level of control flow; deeper is an error, checked before the reader (which
recurses on types, attributes and regions) or Python's JSON decoder could overflow."""


def _read_json(json_path: Path) -> dict[str, Any]:
    try:
        data = json_path.read_bytes()
    except OSError as error:
        raise LoadError(f"{json_path}: cannot read: {error.strerror or error}") from None
    reason = binary_data_reason(data)
    if reason is not None:
        raise LoadError(f"{json_path}: is not a JSON model file: {reason}")
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise LoadError(
            f"{json_path}: not valid JSON: byte 0x{error.object[error.start]:02x} at offset "
            f"{error.start} is not UTF-8"
        ) from None
    except RecursionError:
        raise _too_deep(json_path) from None
    except ValueError as error:  # JSONDecodeError, or an integer of over 4300 digits
        raise LoadError(f"{json_path}: not valid JSON: {error}") from None
    if _nesting(document) > MAX_JSON_NESTING:
        raise _too_deep(json_path)
    if not isinstance(document, dict):
        raise LoadError(f"{json_path}: not a Paddle PIR model (the top level is not an object)")
    return document


def _too_deep(json_path: Path) -> LoadError:
    return LoadError(
        f"{json_path}: JSON nested more than {MAX_JSON_NESTING} levels deep, which cinn_py "
        "does not read (Paddle's models nest 13 levels, and 6 more per level of control flow)"
    )


def _nesting(document: Any) -> int:
    """How deep arrays and objects nest in `document` (a scalar: 0), without recursion."""
    deepest = 0
    stack = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_JSON_NESTING:
            stack.extend((child, depth + 1) for child in node if isinstance(child, (dict, list)))
    return deepest


def _check_base_code(document: dict[str, Any], json_path: Path) -> None:
    base = document.get("base_code")
    if not isinstance(base, dict):
        raise LoadError(f"{json_path}: not a Paddle PIR model (no 'base_code')")
    if base.get("magic") != "pir":
        raise LoadError(
            f"{json_path}: base_code magic is {_show(base.get('magic'))}, expected 'pir'"
        )
    version = base.get("version")
    if not isinstance(version, int) or version not in SUPPORTED_VERSIONS:
        known = ", ".join(map(str, sorted(SUPPORTED_VERSIONS)))
        raise LoadError(
            f"{json_path}: PIR serialization version {_show(version)} is not supported "
            f"(cinn_py reads version {known}, as written by Paddle 3.3)"
        )


# -- the program ------------------------------------------------------------------------


class _ProgramReader:
    """Decodes ops in file order, mapping each value id to the value made for it.

    Ops are numbered in file order (nested ops included) from 0: the number is the
    op's `Location` line and the `op #N` of every error about it.
    """

    def __init__(self, json_path: Path) -> None:
        self.json_path = json_path
        self.values: dict[int, Value] = {}
        self.op_count = 0

    def read_program(self, program_json: Any, program: Program) -> None:
        try:
            regions = _get(program_json, "regions", list, "the program")
            if len(regions) != 1:
                raise _Bad(f"the program has {len(regions)} regions, expected 1")
            blocks = _get(regions[0], "blocks", list, "the program's region")
            if len(blocks) != 1:
                raise _Bad(f"the program's region has {len(blocks)} blocks, expected 1")
        except _Bad as why:
            raise LoadError(f"{self.json_path}: {why}") from None
        self.read_block(blocks[0], program.block)

    def read_block(self, block_json: Any, block: Block) -> None:
        try:
            ops = _get(block_json, "ops", list, "a block")
            _check_no_block_args(block_json)
        except _Bad as why:
            raise LoadError(f"{self.json_path}: {why}") from None
        for op_json in ops:
            block.append(self.read_op(op_json))

    def read_op(self, op_json: Any) -> Operation:
        index = self.op_count
        self.op_count += 1
        name = op_json.get("#") if isinstance(op_json, dict) else None
        label = name if isinstance(name, str) else "?"
        try:
            if not isinstance(op_json, dict):
                raise _Bad(f"an op must be a JSON object, got {_show(op_json)}")
            if name == "p":
                return self._read_parameter(op_json, index)
            return self._read_generic(op_json, index)
        except _Bad as why:
            raise LoadError(f"{self.json_path}: op #{index} ({_show(label)}): {why}") from None

    def _location(self, index: int) -> Location:
        return Location(self.json_path.name, index)

    def _read_generic(self, op_json: dict[str, Any], index: int) -> Operation:
        _check_keys(op_json, _OP_KEYS)
        name = _op_name(_get(op_json, "#", str, "the op"))
        operands = [self._operand(i, o) for i, o in enumerate(_get(op_json, "I", list, "the op"))]
        results = _get(op_json, "O", list, "the op")
        attributes = _named_attributes(op_json, ("A", "OA", "DA", "QA"))
        regions = op_json.get("regions", [])
        if not isinstance(regions, list):
            raise _Bad("'regions' must be a list")
        op = Operation.create(
            name,
            operands,
            [_result_type(r) for r in results],
            attributes,
            num_regions=len(regions),
            loc=self._location(index),
        )
        self._define(op, results)
        for region_json, region in zip(regions, op.regions, strict=True):
            for block_json in _get(region_json, "blocks", list, "a region"):
                self.read_block(block_json, region.add_block())
        return op

    def _read_parameter(self, op_json: dict[str, Any], index: int) -> Operation:
        """`builtin.parameter`, compressed: its flags and name by position, not by key."""
        _check_keys(op_json, _PARAMETER_KEYS)
        flags = _get(op_json, "A", list, "the parameter op")
        if len(flags) != 4 or not isinstance(flags[3], str):
            raise _Bad(
                f"'A' must be [is_distributed, is_parameter, need_clip, name], got {_show(flags)}"
            )
        attributes: dict[str, A.Attribute] = {
            key: _flag(key, value)
            for key, value in zip(
                ("is_distributed", "is_parameter", "need_clip"), flags[:3], strict=True
            )
        }
        attributes["parameter_name"] = A.StrAttribute.get(flags[3])
        if "OA" in op_json:
            result_flags = _get(op_json, "OA", list, "the parameter op")
            if len(result_flags) != 3:
                raise _Bad(
                    f"'OA' must be [persistable, stop_gradient, trainable], got {_show(result_flags)}"
                )
            for key, value in zip(
                ("persistable", "stop_gradient", "trainable"), result_flags, strict=True
            ):
                attributes[key] = _flag(key, value)
        _merge(attributes, _named_attributes(op_json, ("DA", "QA")))
        result = _get(op_json, "O", dict, "the parameter op")
        op = Operation.create(
            "builtin.parameter",
            (),
            [_result_type(result, null_ok=False)],
            attributes,
            loc=self._location(index),
        )
        self._define(op, [result])
        return op

    def _operand(self, position: int, operand_json: Any) -> Value | None:
        value_id = _get(operand_json, "%", int, f"operand #{position}")
        if value_id == 0:
            return None
        if value_id not in self.values:
            raise _Bad(f"operand #{position} uses %{value_id}, which no earlier op defines")
        return self.values[value_id]

    def _define(self, op: Operation, results_json: list[Any]) -> None:
        """Record each result under its file id. The ids are not kept as printed numbers:
        Paddle numbers a loaded program from %0 in op order, and so does our printer."""
        for result, result_json in zip(op.results, results_json, strict=True):
            value_id = result_json.get("%")
            if value_id is None:
                continue
            if not isinstance(value_id, int) or value_id <= 0:
                raise _Bad(f"result #{result.index} has invalid value id {_show(value_id)}")
            if value_id in self.values:
                raise _Bad(f"result #{result.index} redefines value %{value_id}")
            self.values[value_id] = result


def _check_keys(op_json: dict[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(op_json) - allowed)
    if unknown:
        raise _Bad(f"unknown op encoding: unexpected keys {unknown}")


def _check_no_block_args(block_json: dict[str, Any]) -> None:
    """cinn_py blocks have no arguments (Paddle's `while` bodies do)."""
    if block_json.get("args") or block_json.get("kwargs"):
        raise _Bad(
            f"block {_show(block_json.get('#'))} has block arguments, which cinn_py does not support"
        )


def _op_name(encoded: str) -> str:
    """`1.matmul` -> `pd_op.matmul`; a name whose dialect has no id is written in full."""
    dialect, dot, op = encoded.partition(".")
    if not dot or not dialect or not op:
        raise _Bad(f"unknown op encoding {_show(encoded)}")
    if dialect in DIALECT_IDS:
        return f"{DIALECT_IDS[dialect]}.{op}"
    if not dialect.isidentifier():
        raise _Bad(f"unknown dialect id {_show(dialect)} in {_show(encoded)}")
    return encoded


def _result_type(result_json: Any, null_ok: bool = True) -> Type:
    """A result's type; `{"#": "NULL"}` (Paddle's <<NULL TYPE>>) is a result the op leaves
    unmade, which only an op's result may be."""
    node = _get(result_json, "TT", dict, "a result")
    if null_ok and node.get("#") == "NULL":
        return NullType.get()
    return _parse_type(node)


def _flag(key: str, value: Any) -> A.ArrayAttribute:
    """A compressed 0/1 flag, held as Paddle holds it: `[true]` (an array of one bool)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Bad(f"flag '{key}' must be 0 or 1, got {_show(value)}")
    return A.ArrayAttribute.get([A.BoolAttribute.get(value != 0)])


def _named_attributes(op_json: dict[str, Any], keys: tuple[str, ...]) -> dict[str, A.Attribute]:
    attributes: dict[str, A.Attribute] = {}
    for key in keys:
        entries = op_json.get(key, [])
        if not isinstance(entries, list):
            raise _Bad(f"'{key}' must be a list of attributes, got {_show(entries)}")
        for entry in entries:
            name = _get(entry, "N", str, f"an attribute in '{key}'")
            node = _get(entry, "AT", dict, f"attribute {_show(name)}")
            try:
                parsed = _parse_attribute(node)
            except _Bad as why:
                raise _Bad(f"attribute {_show(name)}: {why}") from None
            _merge(attributes, {name: parsed})
    return attributes


def _merge(attributes: dict[str, A.Attribute], more: dict[str, A.Attribute]) -> None:
    for name, value in more.items():
        if name in attributes:
            raise _Bad(f"attribute {_show(name)} appears twice")
        attributes[name] = value


def _get(node: Any, key: str, kind: type, what: str) -> Any:
    """`node[key]`, checked to be a `kind`: the one guard against malformed JSON."""
    if not isinstance(node, dict) or key not in node:
        raise _Bad(f"{what} has no '{key}'")
    value = node[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Bad(f"'{key}' of {what} must be {_KIND_NAMES[kind]}, got {_show(value)}")
    return value


_KIND_NAMES = {int: "an integer", str: "a string", list: "a list", dict: "an object"}


# -- types --------------------------------------------------------------------------


_ELEMENT_TYPES = {
    "0.t_bool": DataType.BOOL,
    "0.t_i8": DataType.INT8,
    "0.t_ui8": DataType.UINT8,
    "0.t_i16": DataType.INT16,
    "0.t_i32": DataType.INT32,
    "0.t_i64": DataType.INT64,
    "0.t_f16": DataType.FLOAT16,
    "0.t_bf16": DataType.BFLOAT16,
    "0.t_f32": DataType.FLOAT32,
    "0.t_f64": DataType.FLOAT64,
    "0.t_c64": DataType.COMPLEX64,
    "0.t_c128": DataType.COMPLEX128,
    "0.t_index": DataType.INDEX,
}

_UNSUPPORTED_TYPES = {
    "0.t_undefined": "an undefined element type",
    "0.t_f8e4m3fn": "float8_e4m3fn",
    "0.t_f8e5m2": "float8_e5m2",
    "1.t_dense_tensor_array": "a tensor array",
    "1.t_selected_rows": "selected rows",
    "1.t_sparse_coo_tensor": "a sparse COO tensor",
    "1.t_sparse_csr_tensor": "a sparse CSR tensor",
    "2.t_stack": "a control-flow stack",
    "2.t_inlet": "a control-flow inlet",
    "2.t_outlet": "a control-flow outlet",
    "4.t_dist_dtensor": "a distributed tensor",
}


def _parse_type(node: dict[str, Any]) -> Type:
    tag = _get(node, "#", str, "a type")
    if tag in _ELEMENT_TYPES:
        return ElementType.get(_ELEMENT_TYPES[tag])
    if tag == "0.t_dtensor":
        return _parse_dense_tensor(_get(node, "D", list, f"type {tag}"))
    if tag == "0.t_vec":
        return VectorType.get(
            [_parse_type(_as_node(t)) for t in _get(node, "D", list, f"type {tag}")]
        )
    if tag == "NULL":
        raise _Bad("has a null type where only an op's result may have one")
    if tag in _UNSUPPORTED_TYPES:
        raise _Bad(f"type {tag} ({_UNSUPPORTED_TYPES[tag]}) is not supported by cinn_py")
    raise _Bad(f"unknown type tag {_show(tag)}")


def _as_node(item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise _Bad(f"expected a type or attribute object, got {_show(item)}")
    return item


def _parse_dense_tensor(data: list[Any]) -> DenseTensorType:
    """`[element type, dims, layout, lod, offset]`; a -1 dim is dynamic."""
    if len(data) != 5:
        raise _Bad(f"t_dtensor data must be [dtype, dims, layout, lod, offset], got {_show(data)}")
    element, dims, layout, lod, offset = data
    dtype = _parse_type(_as_node(element))
    if not isinstance(dtype, ElementType):
        raise _Bad(f"t_dtensor element type must be a scalar type, got {_show(dtype)}")
    if not _is_int_list(dims) or not isinstance(layout, str) or not isinstance(offset, int):
        raise _Bad(f"t_dtensor data must be [dtype, dims, layout, lod, offset], got {_show(data)}")
    if not isinstance(lod, list) or not all(_is_int_list(level) for level in lod):
        raise _Bad(f"t_dtensor lod must be a list of integer lists, got {_show(lod)}")
    try:
        return DenseTensorType.get(dtype, dims, layout, lod, offset)
    except ValueError as error:
        raise _Bad(str(error)) from None


def _is_int_list(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    )


# -- attributes ---------------------------------------------------------------------


def _data(node: dict[str, Any]) -> Any:
    if "D" not in node:
        raise _Bad(f"{node.get('#')} has no data ('D')")
    return node["D"]


def _int_data(node: dict[str, Any]) -> int:
    value = _data(node)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Bad(f"{_cut(node['#'])} must hold an integer, got {_show(value)}")
    return value


_NON_FINITE = {"NaN": math.nan, "NAN": math.nan, "INF": math.inf, "-INF": -math.inf}
"""The `"VD"` spellings of floats JSON cannot hold (Paddle writes NaN, reads NAN)."""


def _float_data(node: dict[str, Any]) -> float:
    if "VD" in node:
        if not isinstance(node["VD"], str) or node["VD"] not in _NON_FINITE:
            raise _Bad(f"{_cut(node['#'])} has unknown special value {_show(node['VD'])}")
        return _NON_FINITE[node["VD"]]
    value = _data(node)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _Bad(f"{_cut(node['#'])} must hold a number, got {_show(value)}")
    return float(value)


def _bool_attr(node: dict[str, Any]) -> A.Attribute:
    value = _data(node)
    if not isinstance(value, bool):
        raise _Bad(f"{_cut(node['#'])} must hold true or false, got {_show(value)}")
    return A.BoolAttribute.get(value)


def _str_attr(node: dict[str, Any]) -> A.Attribute:
    value = _data(node)
    if not isinstance(value, str):
        raise _Bad(f"{_cut(node['#'])} must hold a string, got {_show(value)}")
    return A.StrAttribute.get(value)


def _array_attr(node: dict[str, Any]) -> A.Attribute:
    items = _data(node)
    if not isinstance(items, list):
        raise _Bad(f"0.a_array must hold a list, got {_show(items)}")
    return A.ArrayAttribute.get([_parse_attribute(_as_node(item)) for item in items])


def _int_array_attr(node: dict[str, Any]) -> A.Attribute:
    values = _data(node)
    if not _is_int_list(values):
        raise _Bad(f"1.a_intarray must hold a list of integers, got {_show(values)}")
    return A.IntArrayAttribute.get(values)


def _type_attr(node: dict[str, Any]) -> A.Attribute:
    return A.TypeAttribute.get(_parse_type(_as_node(_data(node))))


_PHI_DTYPES = {
    "Undefined(ALL_DTYPE)": DataType.UNDEFINED,
    **{d.value: d for d in DataType if d not in (DataType.UNDEFINED, DataType.INDEX)},
}
"""phi's DataTypeToString spellings cinn_py has a DataType for (not uint16/32/64,
float8, pstring)."""


def _data_type(spelling: Any) -> DataType:
    if not isinstance(spelling, str) or spelling not in _PHI_DTYPES:
        raise _Bad(f"data type {_show(spelling)} is not supported by cinn_py")
    return _PHI_DTYPES[spelling]


def _dtype_attr(node: dict[str, Any]) -> A.Attribute:
    return A.DataTypeAttribute.get(_data_type(_data(node)))


_ALLOCATION_TYPES = {
    0: "undefined",
    1: "cpu",
    2: "gpu",
    3: "gpu_pinned",
    4: "xpu",
    5: "xpu_pinned",
    7: "ipu",
    9: "custom",
}
_NO_DEVICE_ID = frozenset({"cpu", "gpu_pinned", "xpu_pinned"})


def _place_attr(node: dict[str, Any]) -> A.Attribute:
    """`[allocation type, device id, custom device type]` -> the text inside `Place(...)`,
    as Paddle prints it: `cpu`, `gpu:0`, `undefined:0`, `npu:1` for a custom device."""
    data = _data(node)
    if not (
        isinstance(data, list)
        and len(data) == 3
        and _is_int_list(data[:2])
        and isinstance(data[2], str)
    ):
        raise _Bad(f"1.a_place must hold [type, device id, device type], got {_show(data)}")
    kind, device, custom = data
    if kind not in _ALLOCATION_TYPES:
        raise _Bad(f"unknown place allocation type {kind}")
    name = custom if _ALLOCATION_TYPES[kind] == "custom" else _ALLOCATION_TYPES[kind]
    return A.PlaceAttribute.get(name if name in _NO_DEVICE_ID else f"{name}:{device}")


def _scalar_attr(node: dict[str, Any]) -> A.Attribute:
    """pd_op.Scalar: `[dtype, value]`, loaded as the plain attribute Paddle prints."""
    data = _data(node)
    makers: dict[str, Callable[[Any], A.Attribute]] = {
        "bool": A.BoolAttribute.get,
        "int32": A.Int32Attribute.get,
        "int64": A.Int64Attribute.get,
        "float32": A.FloatAttribute.get,
        "float64": A.DoubleAttribute.get,
    }
    if not (isinstance(data, list) and len(data) == 2 and isinstance(data[0], str)):
        raise _Bad(f"1.a_scalar must hold [dtype, value], got {_show(data)}")
    if data[0] not in makers:
        raise _Bad(f"1.a_scalar of data type {_cut(data[0])} is not supported by cinn_py")
    value = data[1]
    if data[0] == "bool" and not isinstance(value, bool):
        raise _Bad(f"1.a_scalar {_show(data)} must hold true or false")
    if data[0] != "bool" and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        raise _Bad(f"1.a_scalar {_show(data)} must hold a number")
    return makers[data[0]](value)


_ATTRIBUTE_PARSERS: dict[str, Callable[[dict[str, Any]], A.Attribute]] = {
    "0.a_bool": _bool_attr,
    "0.a_i32": lambda node: A.Int32Attribute.get(_int_data(node)),
    "0.a_i64": lambda node: A.Int64Attribute.get(_int_data(node)),
    "0.a_index": lambda node: A.Int64Attribute.get(_int_data(node)),
    "0.a_f32": lambda node: A.FloatAttribute.get(_float_data(node)),
    "0.a_f64": lambda node: A.DoubleAttribute.get(_float_data(node)),
    "0.a_str": _str_attr,
    "0.a_tensorname": _str_attr,
    "0.a_array": _array_attr,
    "0.a_type": _type_attr,
    "1.a_intarray": _int_array_attr,
    "1.a_dtype": _dtype_attr,
    "1.a_place": _place_attr,
    "1.a_layout": lambda node: A.DataLayoutAttribute.get(_str_attr(node).value),
    "1.a_scalar": _scalar_attr,
}
"""Index and tensor-name attributes print like Int64 and Str ones, so they load as those."""

_UNSUPPORTED_ATTRIBUTES = {
    "0.a_c64": "complex64",
    "0.a_c128": "complex128",
    "4.a_process_mesh": "distributed",
    "4.a_tensor_dist": "distributed",
    "4.a_op_dist": "distributed",
}


def _parse_attribute(node: dict[str, Any]) -> A.Attribute:
    tag = _get(node, "#", str, "an attribute")
    parser = _ATTRIBUTE_PARSERS.get(tag)
    if parser is not None:
        try:
            return parser(node)
        except ValueError as error:  # out of range for the attribute's width
            raise _Bad(f"{tag}: {error}") from None
    if tag in _UNSUPPORTED_ATTRIBUTES:
        raise _Bad(
            f"{_UNSUPPORTED_ATTRIBUTES[tag]} attributes ({tag}) are not supported by cinn_py"
        )
    raise _Bad(f"unknown attribute type tag {_show(tag)}")


# -- parameters -----------------------------------------------------------------------


def _persistable_names(program: Program) -> dict[str, Type]:
    """What `paddle.jit.save` wrote to `.pdiparams`: persistable parameters (all of them
    when the file has no "OA" flags) and persistable data values, with their types."""
    names: dict[str, Type] = {}
    for op in program.ops():
        if op.name == "builtin.parameter" and op.attr("persistable", [True]) == [True]:
            names[op.attr("parameter_name")] = op.result(0).type
        elif op.name == "pd_op.data" and op.attr("persistable") == [True]:
            names[op.attr("name")] = op.result(0).type
    return names


def _load_parameters(program: Program, params_path: Path) -> dict[str, np.ndarray]:
    expected = _persistable_names(program)
    if not params_path.is_file():
        if expected:
            shown = ", ".join(sorted(expected)[:3]) + (", ..." if len(expected) > 3 else "")
            raise LoadError(
                f"{params_path}: no such file, but the model has {len(expected)} "
                f"persistable values ({shown})"
            )
        return {}
    arrays = read_pdiparams(params_path, expected)
    for name, type_ in expected.items():
        _check_parameter(params_path, name, type_, arrays[name])
    return arrays


def _check_parameter(params_path: Path, name: str, type_: Type, array: np.ndarray) -> None:
    """A record whose shape or dtype differs from the program's type means the file
    belongs to another model; better said now than as wrong numbers later."""
    if not isinstance(type_, DenseTensorType):
        raise LoadError(
            f"{params_path}: {_show(name)} has type {_show(type_)} in the program, not a tensor"
        )
    dtype = type_.data_type
    stored = np.dtype(np.uint16) if dtype is DataType.BFLOAT16 else dtype.numpy
    shape_ok = len(array.shape) == type_.rank and all(
        d in (-1, s) for d, s in zip(type_.dims, array.shape, strict=True)
    )
    if not shape_ok or array.dtype != stored:
        raise LoadError(
            f"{params_path}: {_show(name)} is stored as {list(array.shape)} {array.dtype}, but the "
            f"program declares {_show(type_)}"
        )
