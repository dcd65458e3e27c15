"""Saved models: model.pdiparams records and model.json programs, read without Paddle.

Three sources of truth: the format as documented (hand-built bytes and JSON), models
that real Paddle 3.3.1 wrote (the committed fixtures, and kernels_tests/pir/data for
encodings the fixtures lack), and what Paddle printed for those same models.
"""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path

import numpy as np
import pytest

import cinn_py.pir  # noqa: F401  (registers the dialects that exist)
from cinn_py.errors import LoadError
from cinn_py.pir import attributes as A
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.model_loader import load_model, model_files
from cinn_py.pir.op_def import lookup_op_def
from cinn_py.pir.pdiparams import read_pdiparams, write_pdiparams
from cinn_py.pir.printer import print_program
from cinn_py.pir.types import DenseTensorType, VectorType
from cinn_py.pir.verifier import verify_program

DATA = Path(__file__).parent / "data"
FIXTURE_MODELS = Path(__file__).parent.parent / "fixtures" / "models"
MODEL_NAMES = ("mlp", "linear_ln_gelu", "transformer_encoder")


# -- model.pdiparams -------------------------------------------------------------------


def _example(dtype: DataType, shape: tuple[int, ...]) -> np.ndarray:
    """Distinct values of `dtype` (bfloat16 as the uint16 bit patterns it is held in)."""
    values = np.linspace(-3.0, 5.0, num=math.prod(shape)).reshape(shape)
    if dtype is DataType.BFLOAT16:
        return float32_to_bfloat16(values.astype(np.float32)).reshape(shape)
    if dtype is DataType.BOOL:
        return values > 0
    if dtype.is_complex:
        return (values + 1j * values.ravel()[::-1].reshape(shape)).astype(dtype.numpy)
    if dtype is DataType.UINT8:
        return np.abs(values).astype(np.uint8)
    return values.astype(dtype.numpy)


PDIPARAMS_DTYPES = [d for d in DataType if d not in (DataType.INDEX, DataType.UNDEFINED)]


@pytest.mark.parametrize("dtype", PDIPARAMS_DTYPES, ids=lambda d: d.value)
@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4)], ids=["0d", "1d", "3d"])
def test_pdiparams_round_trip(tmp_path: Path, dtype: DataType, shape: tuple[int, ...]) -> None:
    arrays = {"w": _example(dtype, shape), "b": _example(dtype, (3,))}
    write_pdiparams(tmp_path / "m.pdiparams", arrays)
    loaded = read_pdiparams(tmp_path / "m.pdiparams", ["w", "b"])
    assert sorted(loaded) == ["b", "w"]
    for name, array in arrays.items():
        assert loaded[name].dtype == array.dtype
        assert loaded[name].shape == array.shape
        np.testing.assert_array_equal(loaded[name], array)


def _record(code: int, dims: list[int], payload: bytes, packed: bool = False) -> bytes:
    """One record built from the format description, independent of write_pdiparams."""
    desc = bytes([0x08, code])
    if packed:
        desc += bytes([0x12, len(dims)] + dims)
    else:
        for dim in dims:
            desc += bytes([0x10, dim])
    return struct.pack("<IQIi", 0, 0, 0, len(desc)) + desc + payload


def test_pdiparams_bytes_match_the_format(tmp_path: Path) -> None:
    weight = np.arange(6, dtype=np.float32).reshape(2, 3)
    write_pdiparams(tmp_path / "m.pdiparams", {"w": weight})
    assert (tmp_path / "m.pdiparams").read_bytes() == _record(5, [2, 3], weight.tobytes())


def test_pdiparams_reads_packed_dims(tmp_path: Path) -> None:
    weight = np.arange(6, dtype=np.int64).reshape(3, 2)
    (tmp_path / "m.pdiparams").write_bytes(_record(3, [3, 2], weight.tobytes(), packed=True))
    np.testing.assert_array_equal(read_pdiparams(tmp_path / "m.pdiparams", ["w"])["w"], weight)


def test_pdiparams_records_follow_sorted_names(tmp_path: Path) -> None:
    # sorted() compares code points: "linear_10" < "linear_9", unlike a natural sort.
    nine, ten = np.zeros((2,), np.float32), np.ones((3,), np.float32)
    write_pdiparams(tmp_path / "m.pdiparams", {"linear_9.w_0": nine, "linear_10.w_0": ten})
    expected = _record(5, [3], ten.tobytes()) + _record(5, [2], nine.tobytes())
    assert (tmp_path / "m.pdiparams").read_bytes() == expected
    loaded = read_pdiparams(tmp_path / "m.pdiparams", ["linear_9.w_0", "linear_10.w_0"])
    np.testing.assert_array_equal(loaded["linear_9.w_0"], nine)
    np.testing.assert_array_equal(loaded["linear_10.w_0"], ten)


def _two_records(tmp_path: Path) -> Path:
    path = tmp_path / "m.pdiparams"
    write_pdiparams(path, {"a": np.ones((2, 2), np.float32), "b": np.ones((4,), np.float64)})
    return path


def test_pdiparams_truncated_data(tmp_path: Path) -> None:
    path = _two_records(tmp_path)
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(
        LoadError, match=r"m\.pdiparams: record 1 \('b'\): file ends inside the data"
    ):
        read_pdiparams(path, ["a", "b"])


def test_pdiparams_truncated_header(tmp_path: Path) -> None:
    path = _two_records(tmp_path)
    first = len(_record(5, [2, 2], bytes(16)))
    path.write_bytes(path.read_bytes()[: first + 10])
    with pytest.raises(LoadError, match=r"record 1 \('b'\): file ends inside the LoD level count"):
        read_pdiparams(path, ["a", "b"])


def test_pdiparams_fewer_records_than_names(tmp_path: Path) -> None:
    path = _two_records(tmp_path)
    with pytest.raises(LoadError, match=r"holds 2 tensor records, but the model has 3 .*'c'"):
        read_pdiparams(path, ["a", "b", "c"])


def test_pdiparams_more_records_than_names(tmp_path: Path) -> None:
    path = _two_records(tmp_path)
    with pytest.raises(LoadError, match=r"bytes follow the last of the 1 tensor records"):
        read_pdiparams(path, ["a"])


@pytest.mark.parametrize(
    ("record", "why"),
    [
        (_record(7, [2], bytes(8)), "unknown data type code 7"),
        (_record(99, [2], bytes(8)), "unknown data type code 99"),
        (struct.pack("<IQIi", 0, 0, 0, 2) + bytes([0x10, 2]) + bytes(8), "no data_type"),
        (struct.pack("<IQIi", 1, 0, 0, 2) + bytes([0x08, 5]), "record version 1"),
        (struct.pack("<IQIi", 0, 0, 3, 2) + bytes([0x08, 5]), "tensor version 3"),
        (struct.pack("<IQIi", 0, 0, 0, 50) + bytes([0x08, 5]), "TensorDesc of 50 bytes"),
        (struct.pack("<IQIi", 0, 0, 0, 2) + bytes([0x08, 0x85]), "ends inside a varint"),
        (struct.pack("<IQIi", 0, 0, 0, 3) + bytes([0x08, 5, 0x17]), "invalid wire type 7"),
        (
            struct.pack("<IQIi", 0, 0, 0, 13) + bytes([0x08, 5, 0x10]) + b"\xff" * 9 + b"\x01",
            "negative dim",
        ),
    ],
    ids=[
        "code7",
        "code99",
        "no-dtype",
        "version",
        "tensor-version",
        "desc-size",
        "varint",
        "wire-type",
        "negative-dim",
    ],
)
def test_pdiparams_corrupt_record(tmp_path: Path, record: bytes, why: str) -> None:
    path = tmp_path / "m.pdiparams"
    path.write_bytes(record)
    with pytest.raises(LoadError, match=rf"m\.pdiparams: record 0 \('w'\): .*{re.escape(why)}"):
        read_pdiparams(path, ["w"])


def test_pdiparams_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="nope.pdiparams: cannot read parameters"):
        read_pdiparams(tmp_path / "nope.pdiparams", ["w"])


# -- model.json built by hand ---------------------------------------------------------------


def _tensor(dims: list[int], element: str = "0.t_f32") -> dict:
    return {"#": "0.t_dtensor", "D": [{"#": element}, dims, "NCHW", [], 0]}


def _attr(name: str, tag: str, data: object) -> dict:
    return {"N": name, "AT": {"#": tag, "D": data}}


_STOP_GRADIENT = [_attr("stop_gradient", "0.a_array", [{"#": "0.a_bool", "D": False}])]


def _data_op(value_id: int, name: str, dims: list[int], element: str = "0.t_f32") -> dict:
    attrs = [
        _attr("name", "0.a_str", name),
        _attr("shape", "1.a_intarray", dims),
        _attr("dtype", "1.a_dtype", "float32"),
        _attr("place", "1.a_place", [0, 0, ""]),
    ]
    outputs = [{"%": value_id, "TT": _tensor(dims, element)}]
    return {"#": "1.data", "A": attrs, "I": [], "O": outputs, "OA": _STOP_GRADIENT}


def _param_op(value_id: int, name: str, dims: list[int]) -> dict:
    result = {"%": value_id, "TT": _tensor(dims)}
    return {"#": "p", "A": [0, 1, 1, name], "DA": [], "O": result, "OA": [1, 0, 1], "QA": []}


def _op(name: str, operands: list[int], results: list[tuple[int, dict]], attrs=()) -> dict:
    return {
        "#": name,
        "A": list(attrs),
        "I": [{"%": i} for i in operands],
        "O": [{"%": i, "TT": t} for i, t in results],
        "OA": _STOP_GRADIENT,
    }


def _document(ops: list[dict], version: object = 4, magic: object = "pir") -> dict:
    block = {"#": "block_0", "args": [], "ops": ops}
    return {
        "base_code": {"magic": magic, "trainable": True, "version": version},
        "program": {"regions": [{"#": "region_0", "blocks": [block]}]},
    }


def _write(folder: Path, ops: list[dict], params: dict | None = None, **base: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.json").write_text(json.dumps(_document(ops, **base)))
    if params is not None:
        write_pdiparams(folder / "model.pdiparams", params)
    return folder / "model.json"


def _small_model(folder: Path) -> Path:
    """x @ w + b, fetched: the shape of what jit.save writes for a Linear."""
    ops = [
        _param_op(1, "linear_0.b_0", [3]),
        _param_op(2, "linear_0.w_0", [4, 3]),
        _data_op(3, "x", [-1, 4]),
        _op(
            "1.matmul",
            [3, 2],
            [(4, _tensor([-1, 3]))],
            [_attr("transpose_x", "0.a_bool", False), _attr("transpose_y", "0.a_bool", False)],
        ),
        _op("1.add", [4, 1], [(5, _tensor([-1, 3]))]),
        _op(
            "1.fetch",
            [5],
            [(6, _tensor([-1, 3]))],
            [_attr("name", "0.a_str", "fetch_name_0"), _attr("col", "0.a_i32", 0)],
        ),
    ]
    params = {
        "linear_0.b_0": np.arange(3, dtype=np.float32),
        "linear_0.w_0": np.arange(12, dtype=np.float32).reshape(4, 3),
    }
    return _write(folder, ops, params)


def test_load_small_model(tmp_path: Path) -> None:
    json_path = _small_model(tmp_path / "m")
    program = load_model(json_path)
    assert program.source == str(json_path)
    assert [op.name for op in program.block] == [
        "builtin.parameter",
        "builtin.parameter",
        "pd_op.data",
        "pd_op.matmul",
        "pd_op.add",
        "pd_op.fetch",
    ]
    assert [r.id_hint for op in program.block for r in op.results] == [None] * 6
    assert [str(op.loc) for op in program.block][1:3] == ["model.json:1", "model.json:2"]
    weight = program.parameter_ops()[1]
    assert weight.attr("parameter_name") == "linear_0.w_0"
    assert weight.attr("trainable") == [True] and weight.attr("stop_gradient") == [False]
    assert weight.result(0).type is DenseTensorType.get(DataType.FLOAT32, [4, 3])
    np.testing.assert_array_equal(program.parameters["linear_0.w_0"], np.arange(12).reshape(4, 3))
    matmul = program.block.ops[3]
    assert matmul.operand_values() == [program.block.ops[2].result(0), weight.result(0)]
    assert program.data_ops()[0].result(0).type.dims == (-1, 4)
    assert program.fetch_ops()[0].attr("col") == 0


@pytest.mark.parametrize("form", ["json", "folder", "prefix"])
def test_path_forms(tmp_path: Path, form: str) -> None:
    json_path = _small_model(tmp_path / "m")
    given = {"json": json_path, "folder": tmp_path / "m", "prefix": tmp_path / "m" / "model"}
    assert model_files(given[form]) == (json_path, tmp_path / "m" / "model.pdiparams")
    assert sorted(load_model(str(given[form])).parameters) == ["linear_0.b_0", "linear_0.w_0"]


def test_folder_with_another_model_name(tmp_path: Path) -> None:
    _small_model(tmp_path / "m")
    for name in ("model.json", "model.pdiparams"):
        (tmp_path / "m" / name).rename(tmp_path / "m" / name.replace("model", "inference"))
    assert model_files(tmp_path / "m")[1] == tmp_path / "m" / "inference.pdiparams"
    assert len(load_model(tmp_path / "m").parameters) == 2


def test_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match=r"nowhere\.json: no such model file"):
        load_model(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(LoadError, match="expected one model .json file in the folder, found none"):
        load_model(tmp_path / "empty")


def test_missing_pdiparams(tmp_path: Path) -> None:
    json_path = _small_model(tmp_path / "m")
    (tmp_path / "m" / "model.pdiparams").unlink()
    with pytest.raises(LoadError, match=r"model\.pdiparams: no such file, but the model has 2"):
        load_model(json_path)


def test_model_without_parameters_needs_no_pdiparams(tmp_path: Path) -> None:
    ops = [_data_op(1, "x", [2]), _op("1.relu", [1], [(2, _tensor([2]))])]
    assert load_model(_write(tmp_path, ops)).parameters == {}


def test_pdiparams_of_another_model(tmp_path: Path) -> None:
    json_path = _small_model(tmp_path / "m")
    write_pdiparams(
        tmp_path / "m" / "model.pdiparams",
        {
            "linear_0.b_0": np.zeros((3,), np.float32),
            "linear_0.w_0": np.zeros((3, 4), np.float32),
        },
    )
    with pytest.raises(LoadError, match=r"'linear_0.w_0' is stored as \[3, 4\] float32, but "):
        load_model(json_path)


def test_persistable_data_is_read_from_pdiparams(tmp_path: Path) -> None:
    data = _data_op(1, "moment", [2])
    data["OA"] = data["OA"] + [_attr("persistable", "0.a_array", [{"#": "0.a_bool", "D": True}])]
    program = load_model(_write(tmp_path, [data], {"moment": np.ones(2, np.float32)}))
    np.testing.assert_array_equal(program.parameters["moment"], [1, 1])


def test_parameter_without_result_flags(tmp_path: Path) -> None:
    """base_code.trainable false: no "OA"; the parameter is still saved and loaded."""
    param = _param_op(1, "w", [2])
    del param["OA"]
    program = load_model(_write(tmp_path, [param], {"w": np.ones(2, np.float32)}))
    assert "persistable" not in program.parameter_ops()[0].attributes
    assert list(program.parameters) == ["w"]


def test_null_operand_and_vectors(tmp_path: Path) -> None:
    vec = {"#": "0.t_vec", "D": [_tensor([2, 1]), _tensor([2, 1])]}
    ops = [
        _data_op(1, "x", [2, 4]),
        _op(
            "1.layer_norm", [1, 0, 0], [(2, _tensor([2, 4])), (3, _tensor([2])), (4, _tensor([2]))]
        ),
        _op("1.split_with_num", [2], [(5, vec)], [_attr("num", "0.a_i32", 2)]),
        _op("0.split", [5], [(6, _tensor([2, 1])), (7, _tensor([2, 1]))]),
        _op("0.combine", [7, 6], [(8, vec)]),
    ]
    program = load_model(_write(tmp_path, ops))
    norm, split_with_num, split, combine = program.block.ops[1:]
    assert norm.operand_values()[1:] == [None, None]
    assert "(%0, <<NULL VALUE>>, <<NULL VALUE>>)" in print_program(program)
    assert isinstance(split_with_num.result(0).type, VectorType)
    assert split.name == "builtin.split" and split.num_results == 2
    assert combine.operand_values() == [split.result(1), split.result(0)]


def test_regions_load_nested_ops(tmp_path: Path) -> None:
    yield_op = {"#": "2.yield", "A": [], "I": [{"%": 2}], "O": [], "OA": []}
    if_op = _op("1.if", [1], [(3, _tensor([2]))])
    if_op["regions"] = [
        {
            "#": "region_1",
            "blocks": [
                {
                    "#": "block_1",
                    "args": [],
                    "ops": [_op("1.relu", [1], [(2, _tensor([2]))]), yield_op],
                }
            ],
        },
    ]
    program = load_model(_write(tmp_path, [_data_op(1, "x", [2], "0.t_bool"), if_op]))
    assert [op.name for op in program.ops()] == ["pd_op.data", "pd_op.if", "pd_op.relu", "cf.yield"]
    assert str(list(program.ops())[3].loc) == "model.json:3"


def test_unknown_op_names_load(tmp_path: Path) -> None:
    ops = [
        _data_op(1, "x", [2]),
        _op("1.no_such_op", [1], [(2, _tensor([2]))]),
        _op("onednn_op.fused", [2], [(3, _tensor([2]))]),
    ]
    program = load_model(_write(tmp_path, ops))
    assert [op.name for op in program.block][1:] == ["pd_op.no_such_op", "onednn_op.fused"]


def _probe_op(*nodes: dict) -> dict:
    """An op with no operands or results holding attributes `a` encoded as `nodes`."""
    return {"#": "1.probe", "A": [{"N": "a", "AT": node} for node in nodes], "I": [], "O": []}


def _probe(tmp_path: Path, node: dict) -> A.Attribute:
    """Load attribute `node` and return it."""
    return load_model(_write(tmp_path, [_probe_op(node)])).block.ops[0].attributes["a"]


F32 = {"#": "0.t_f32"}
ATTRIBUTES = [
    ({"#": "0.a_bool", "D": True}, A.BoolAttribute.get(True)),
    ({"#": "0.a_i32", "D": -7}, A.Int32Attribute.get(-7)),
    ({"#": "0.a_i64", "D": -9000000000}, A.Int64Attribute.get(-9000000000)),
    ({"#": "0.a_index", "D": 5}, A.Int64Attribute.get(5)),
    ({"#": "0.a_f32", "D": 9.999999747378752e-06}, A.FloatAttribute.get(1e-5)),
    ({"#": "0.a_f64", "D": 1}, A.DoubleAttribute.get(1.0)),
    ({"#": "0.a_f64", "VD": "INF"}, A.DoubleAttribute.get(math.inf)),
    ({"#": "0.a_f32", "VD": "-INF"}, A.FloatAttribute.get(-math.inf)),
    ({"#": "0.a_str", "D": "/Linear/"}, A.StrAttribute.get("/Linear/")),
    ({"#": "0.a_tensorname", "D": "x"}, A.StrAttribute.get("x")),
    ({"#": "0.a_array", "D": []}, A.ArrayAttribute.get([])),
    (
        {"#": "0.a_array", "D": [{"#": "0.a_i64", "D": 1}, {"#": "0.a_array", "D": []}]},
        A.ArrayAttribute.get([A.Int64Attribute.get(1), A.ArrayAttribute.get([])]),
    ),
    (
        {"#": "0.a_type", "D": _tensor([2, -1], "0.t_f16")},
        A.TypeAttribute.get(DenseTensorType.get(DataType.FLOAT16, [2, -1])),
    ),
    ({"#": "1.a_intarray", "D": [-1, 16]}, A.IntArrayAttribute.get([-1, 16])),
    ({"#": "1.a_dtype", "D": "bfloat16"}, A.DataTypeAttribute.get(DataType.BFLOAT16)),
    ({"#": "1.a_dtype", "D": "Undefined(ALL_DTYPE)"}, A.DataTypeAttribute.get(DataType.UNDEFINED)),
    ({"#": "1.a_place", "D": [0, 0, ""]}, A.PlaceAttribute.get("undefined:0")),
    ({"#": "1.a_place", "D": [1, 0, ""]}, A.PlaceAttribute.get("cpu")),
    ({"#": "1.a_place", "D": [2, 3, ""]}, A.PlaceAttribute.get("gpu:3")),
    ({"#": "1.a_place", "D": [3, 0, ""]}, A.PlaceAttribute.get("gpu_pinned")),
    ({"#": "1.a_place", "D": [4, 1, ""]}, A.PlaceAttribute.get("xpu:1")),
    ({"#": "1.a_place", "D": [5, 0, ""]}, A.PlaceAttribute.get("xpu_pinned")),
    ({"#": "1.a_place", "D": [7, 0, ""]}, A.PlaceAttribute.get("ipu:0")),
    ({"#": "1.a_place", "D": [9, 1, "npu"]}, A.PlaceAttribute.get("npu:1")),
    ({"#": "1.a_layout", "D": "NHWC"}, A.DataLayoutAttribute.get("NHWC")),
    ({"#": "1.a_scalar", "D": ["float32", 1.5]}, A.FloatAttribute.get(1.5)),
    ({"#": "1.a_scalar", "D": ["int64", 3]}, A.Int64Attribute.get(3)),
    ({"#": "1.a_scalar", "D": ["bool", True]}, A.BoolAttribute.get(True)),
]


@pytest.mark.parametrize(
    ("node", "expected"),
    ATTRIBUTES,
    ids=lambda v: json.dumps(v)[:48] if isinstance(v, dict) else "",
)
def test_attribute_encodings(tmp_path: Path, node: dict, expected: A.Attribute) -> None:
    assert _probe(tmp_path, node) is expected


def test_nan_attribute(tmp_path: Path) -> None:
    loaded = _probe(tmp_path, {"#": "0.a_f64", "VD": "NaN"})
    assert isinstance(loaded, A.DoubleAttribute) and math.isnan(loaded.value)


def _load_error(tmp_path: Path, ops: list[dict], **base: object) -> str:
    with pytest.raises(LoadError) as error:
        load_model(_write(tmp_path, ops, **base))
    return str(error.value)


@pytest.mark.parametrize(
    ("base", "why"),
    [
        ({"magic": "pdmodel"}, "base_code magic is 'pdmodel', expected 'pir'"),
        ({"version": 3}, "PIR serialization version 3 is not supported"),
        ({"version": 5}, "PIR serialization version 5 is not supported"),
    ],
)
def test_base_code_is_checked(tmp_path: Path, base: dict, why: str) -> None:
    assert why in _load_error(tmp_path, [], **base)


def test_not_json(tmp_path: Path) -> None:
    (tmp_path / "model.json").write_text("{not json")
    with pytest.raises(LoadError, match=r"model\.json: not valid JSON"):
        load_model(tmp_path)


X = _data_op(1, "x", [2])


def _relu(name: str = "1.relu", operand: int = 1, result_id: int = 2, result: dict | None = None):
    """An op reading X, to be spoiled one way at a time."""
    return _op(name, [operand], [(result_id, result or _tensor([2]))])


@pytest.mark.parametrize(
    ("op", "why"),
    [
        (_probe_op({"#": "0.a_weird", "D": 1}), "op #1 ('1.probe'): attribute 'a': unknown attr"),
        (_probe_op({"#": "0.a_c64", "D": [1, 2]}), "complex64 attributes (0.a_c64) are not supp"),
        (_probe_op({"#": "0.a_i32", "D": 1.5}), "0.a_i32 must hold an integer, got 1.5"),
        (_probe_op({"#": "0.a_i32", "D": 2**31}), "does not fit an Int32 attribute"),
        (_probe_op({"#": "1.a_dtype", "D": "uint16"}), "data type 'uint16' is not supported"),
        (_probe_op({"#": "0.a_f32", "VD": "?"}), "unknown special value '?'"),
        (_probe_op({"#": "1.a_scalar", "D": ["int8", 1]}), "a_scalar of data type int8 is not"),
        (_probe_op({"#": "0.a_bool", "D": True}, {"#": "0.a_i32", "D": 1}), "'a' appears twice"),
        (_relu(result={"#": "0.t_weird"}), "op #1 ('1.relu'): unknown type tag '0.t_weird'"),
        (_relu(result=_tensor([2], "0.t_f8e5m2")), "0.t_f8e5m2 (float8_e5m2) is not supported"),
        (_relu(result={"#": "1.t_dense_tensor_array"}), "(a tensor array) is not supported"),
        (_relu(result=_tensor([-2])), "invalid tensor dim -2"),
        (_relu(operand=9), "op #1 ('1.relu'): operand #0 uses %9, which no earlier op defines"),
        (_relu(result_id=1), "result #0 redefines value %1"),
        (_relu(name="relu"), "op #1 ('relu'): unknown op encoding 'relu'"),
        (_relu(name="9.relu"), "unknown dialect id '9' in '9.relu'"),
        ({**_relu(), "Z": []}, "unknown op encoding: unexpected keys ['Z']"),
        ({"#": "p", "A": [0, 1, "w"], "O": {}}, "op #1 ('p'): 'A' must be [is_distributed, is_"),
        ({"#": "1.relu", "I": [{"%": 1}], "O": [{"%": 2}], "A": []}, "a result has no 'TT'"),
        ([1, 2], "op #1 ('?'): an op must be a JSON object"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_ops_name_the_op(tmp_path: Path, op: object, why: str) -> None:
    message = _load_error(tmp_path, [X, op])
    assert message.startswith(str(tmp_path / "model.json") + ": ")
    assert why in message


def test_block_arguments_are_refused(tmp_path: Path) -> None:
    loop = _op("1.while", [1], [(2, _tensor([2]))])
    loop["regions"] = [
        {
            "#": "region_1",
            "blocks": [{"#": "block_1", "args": [{"#": -1, "TT": _tensor([2])}], "ops": []}],
        }
    ]
    assert "block 'block_1' has block arguments" in _load_error(tmp_path, [X, loop])


# -- models written by Paddle -----------------------------------------------------------------


def _fixture(name: str) -> Path:
    folder = FIXTURE_MODELS / name
    if not (folder / "model.json").is_file():
        pytest.skip(f"fixture model {name} is not generated yet (tools/gen_paddle_fixtures.py)")
    return folder


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fixture_parameters(name: str) -> None:
    folder = _fixture(name)
    meta = json.loads((folder / "meta.json").read_text())
    program = load_model(folder)
    assert sorted(program.parameters) == sorted(meta["params"])
    reference = np.load(folder / "params.npz")
    for op in program.parameter_ops():
        param_name = op.attr("parameter_name")
        array = program.parameters[param_name]
        assert list(array.shape) == list(op.result(0).type.dims) == meta["params"][param_name][0]
        np.testing.assert_array_equal(array, reference[param_name])


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fixture_inputs_and_outputs(name: str) -> None:
    folder = _fixture(name)
    meta = json.loads((folder / "meta.json").read_text())
    program = load_model(folder / "model.json")
    data = {op.attr("name"): op for op in program.data_ops()}
    assert list(data) == meta["input_names"]
    for input_name, spec in meta["inputs"].items():
        assert data[input_name].attr("shape") == spec["spec_shape"]
        assert list(data[input_name].result(0).type.dims) == spec["spec_shape"]
        assert data[input_name].result(0).type.data_type.value == spec["dtype"]
    fetches = program.fetch_ops()
    assert [op.attr("col") for op in fetches] == list(range(len(meta["outputs"])))
    for op, (shape, dtype) in zip(fetches, meta["outputs"].values(), strict=True):
        fetched = op.operand_value(0).type
        assert fetched.data_type.value == dtype
        assert all(d in (-1, s) for d, s in zip(fetched.dims, shape, strict=True))
    assert sorted({op.name for op in program.ops()}) == meta["ops"]


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fixture_prints_as_paddle_does(name: str) -> None:
    folder = _fixture(name)
    printed = print_program(load_model(folder / "model"))
    assert printed == (folder / "program.pir").read_text()


def test_paddle_model_prints_as_paddle_does() -> None:
    printed = print_program(load_model(DATA / "mixed"))
    assert printed == (DATA / "mixed" / "paddle.pir").read_text()


def test_paddle_model_with_half_and_0d_parameters() -> None:
    program = load_model(DATA / "mixed" / "model")
    reference = np.load(DATA / "mixed" / "params.npz")
    assert {k: v.dtype for k, v in program.parameters.items()} == {
        "mixed_0.w_0": np.float16,
        "mixed_0.w_1": np.uint16,
        "mixed_0.w_2": np.float32,
    }
    assert program.parameters["mixed_0.w_2"].shape == ()
    for name, array in program.parameters.items():
        np.testing.assert_array_equal(array, reference[name])
    ids = program.data_ops()[1]
    assert ids.attr("name") == "ids" and ids.result(0).type.data_type is DataType.INT64


def test_paddle_model_with_nan_and_inf() -> None:
    """Paddle writes these as "VD" (and 3.3.1 cannot load them back itself)."""
    ops = load_model(DATA / "nan_inf").block.ops
    values = [op.attr("value") for op in ops if op.name == "pd_op.full"]
    assert math.isnan(values[0]) and values[1] == -math.inf and values[2] == math.inf
    assert "value:nan" in print_program(load_model(DATA / "nan_inf"))


def test_paddle_model_with_regions() -> None:
    program = load_model(DATA / "cond")
    if_op = next(op for op in program.block if op.name == "pd_op.if")
    assert [len(region.blocks[0]) for region in if_op.regions] == [3, 3]
    assert [op.name for op in if_op.regions[1].blocks[0]][-1] == "cf.yield"


@pytest.mark.skipif(lookup_op_def("pd_op.add") is None, reason="the pd_op dialect is not there yet")
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_fixture_models_verify(name: str) -> None:
    verify_program(load_model(_fixture(name)))
