"""Hostile and malformed input files give the documented error, naming the file and why,
or work: deep JSON, corrupt pdiparams records, binary or non-UTF-8 program files, and
escapes in strings and op names printing back byte for byte."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import LoadError, ParseError, VerifyError
from cinn_py.pir.model_loader import MAX_JSON_NESTING, load_model
from cinn_py.pir.parser import parse_file, parse_program
from cinn_py.pir.pdiparams import MAX_RANK, read_pdiparams, write_pdiparams
from cinn_py.pir.printer import print_program
from cinn_py.pir.verifier import verify_program

EXAMPLE = Path(__file__).parents[2] / "examples" / "add_relu_mul.pir"
FIXTURE_MODEL = Path(__file__).parents[1] / "fixtures" / "models" / "mlp"


# -- model.json ----------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [MAX_JSON_NESTING + 1, 5_000, 200_000])
def test_deep_json_is_a_load_error_naming_the_limit(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "model.json"
    path.write_text("[" * depth + "]" * depth)
    with pytest.raises(LoadError, match=rf"model\.json: JSON nested more than {MAX_JSON_NESTING}"):
        load_model(path)


def test_deep_json_inside_a_real_model_is_refused(tmp_path: Path) -> None:
    document = json.loads((FIXTURE_MODEL / "model.json").read_text())
    deep: object = 1
    for _ in range(MAX_JSON_NESTING):
        deep = {"#": "0.a_array", "D": [deep]}
    document["program"]["regions"][0]["blocks"][0]["ops"][0]["A"].append({"N": "d", "AT": deep})
    (tmp_path / "model.json").write_text(json.dumps(document))
    with pytest.raises(LoadError, match=r"nested more than"):
        load_model(tmp_path)


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"\x00\x01\x02{", r"is not a JSON model file: it looks like binary data \(a NUL byte at"),
        ('{"a": 1}'.encode("utf-16"), r"is not a JSON model file: it is UTF-16 text"),
        (b'{"a": "\xe9"}', r"not valid JSON: byte 0xe9 at offset 7 is not UTF-8"),
        (b'{"a": ' + b"1" * 5000 + b"}", r"not valid JSON: Exceeds the limit"),
    ],
    ids=["binary", "utf16", "latin1", "huge-int"],
)
def test_model_json_that_is_no_json_text(tmp_path: Path, data: bytes, why: str) -> None:
    (tmp_path / "model.json").write_bytes(data)
    with pytest.raises(LoadError, match=rf"model\.json: {why}"):
        load_model(tmp_path)


# -- model.pdiparams -------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def _record(code: int, dims: list[int], payload: bytes = b"") -> bytes:
    desc = bytes([0x08]) + _varint(code)
    for dim in dims:
        desc += bytes([0x10]) + _varint(dim)
    return struct.pack("<IQIi", 0, 0, 0, len(desc)) + desc + payload


@pytest.mark.parametrize(
    ("record", "why"),
    [
        (_record(5, [1] * 300, bytes(4)), f"a tensor of 300 dims (NumPy holds at most {MAX_RANK})"),
        (_record(5, [0] * (MAX_RANK + 1)), f"a tensor of {MAX_RANK + 1} dims"),
        (_record(5, [2**40, 2**40]), "a 1099511627776x1099511627776 float32 tensor is too large"),
        (_record(5, [0, 2**62]), "tensor is too large to be real"),
        (_record(5, [-3]), "negative dim in [-3]"),
        (  # a 10-byte varint's bits past the 64th are dropped: 2**63 - 1
            struct.pack("<IQIi", 0, 0, 0, 13) + bytes([0x08, 5, 0x10]) + b"\xff" * 9 + b"\x02",
            "a 9223372036854775807 float32 tensor is too large",
        ),
        (_record(2**40, [1], bytes(4)), "unknown data type code 1099511627776"),
        (_record(5, [4], bytes(3)), "file ends inside the data: a 4 float32 tensor needs 16"),
    ],
    ids=["300-dims", "65-dims", "huge", "overflow", "negative", "wide-varint", "code", "short"],
)
def test_corrupt_pdiparams_records_name_the_file_and_record(
    tmp_path: Path, record: bytes, why: str
) -> None:
    path = tmp_path / "m.pdiparams"
    path.write_bytes(record)
    with pytest.raises(LoadError) as error:
        read_pdiparams(path, ["w"])
    assert str(error.value).startswith(f"{path}: record 0 ('w'): ")
    assert why in str(error.value)


def test_pdiparams_of_the_wrong_record_count_through_load(tmp_path: Path) -> None:
    for name in ("model.json", "model.pdiparams"):
        (tmp_path / name).write_bytes((FIXTURE_MODEL / name).read_bytes())
    names = sorted(load_model(tmp_path).parameters)
    write_pdiparams(tmp_path / "model.pdiparams", {names[0]: np.zeros(1, np.float32)})
    with pytest.raises(LoadError, match=r"model\.pdiparams: holds 1 tensor records, but the model"):
        cinn_py.load(tmp_path)


# -- program text ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"PK\x03\x04" + bytes(40), r"it looks like a zip archive \(an \.npz\?\)"),
        (b"{\n    (%0) = \x00", r"it looks like binary data \(a NUL byte at offset 13\)"),
        (bytes(range(1, 32)) * 4, r"it looks like binary data \(\d+ control bytes in its first"),
        ("{\n}\n".encode("utf-16"), r"it is UTF-16 text \(it starts with a byte-order mark\)"),
        ("{\n}\n".encode("utf-16-le"), r"it looks like UTF-16 text \(every other byte is NUL\)"),
    ],
    ids=["npz", "nul", "control-bytes", "utf16-bom", "utf16-no-bom"],
)
def test_binary_files_are_no_text_program(tmp_path: Path, data: bytes, why: str) -> None:
    path = tmp_path / "prog.pir"
    path.write_bytes(data)
    with pytest.raises(LoadError, match=rf"prog\.pir: is not a text program: {why}"):
        cinn_py.load(path)


def test_an_npz_and_random_bytes_are_no_text_program(tmp_path: Path) -> None:
    np.savez(tmp_path / "arrays.npz", a=np.zeros(3))
    with pytest.raises(LoadError, match=r"arrays\.npz: is not a text program: it looks like a zip"):
        cinn_py.load(tmp_path / "arrays.npz")
    (tmp_path / "random.pir").write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(LoadError, match=r"random\.pir: is not a text program: it looks like bin"):
        cinn_py.load(tmp_path / "random.pir")


def test_non_utf8_text_points_at_the_byte(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace('name:"x"', 'name:"é"')
    path = tmp_path / "latin1.pir"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ParseError) as error:
        cinn_py.load(path)
    assert error.value.line == 2 and "byte 0xe9 cannot be decoded" in error.value.message
    assert error.value.source_line[error.value.col - 1] == "\ufffd"


def test_a_utf8_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "bom.pir"
    path.write_bytes(b"\xef\xbb\xbf" + EXAMPLE.read_bytes())
    assert print_program(parse_file(path)) == EXAMPLE.read_text()


def test_a_stray_control_character_is_a_parse_error_at_it() -> None:
    with pytest.raises(ParseError, match=r"<string>:1:2: unexpected character '\\x1b'"):
        parse_program("{\x1b}")


@pytest.mark.parametrize("thing", [None, 3, ["a.pir"]], ids=["none", "int", "list"])
def test_load_of_what_is_no_path(thing: object) -> None:
    with pytest.raises(LoadError, match=r"cannot load a \w+: expected a path or a Program"):
        cinn_py.load(thing)


def test_load_takes_a_program_and_bytes_paths() -> None:
    program = cinn_py.load(bytes(EXAMPLE))
    assert cinn_py.load(program) is program


# -- escapes print back byte for byte -------------------------------------------------------

ESCAPES = [
    r'"pd_op.fo\"o"',  # a quote in an op name
    r'"a\"b"',
    r'"a\\b"',  # backslashes other than before a quote are themselves
    r'"a\nb\t\u00e9"',
    r'"a\\\"b"',  # \ then \" : the string holds a\"b
    '"é☃\U0001f600"',
    r'"\"\"\""',
    '""',
]


@pytest.mark.parametrize("spelling", ESCAPES)
def test_strings_and_op_names_print_back_byte_for_byte(spelling: str) -> None:
    as_string = (
        "{\n"
        f'    (%0) = "pd_op.probe" () {{s:{spelling}}} : () -> tensor<f32>\n'
        f"    (%1) = {spelling} (%0) {{}} : (tensor<f32>) -> tensor<f32>\n"
        "}\n"
    )
    program = parse_program(as_string)
    assert print_program(program) == as_string
    assert print_program(parse_program(print_program(program))) == as_string


# -- messages stay readable ------------------------------------------------------------------


def test_a_parse_error_in_a_long_line_quotes_a_window_around_the_column() -> None:
    line = '    (%0) = "pd_op.probe" () {a:[' + "1," * 300 + "?" + ",2" * 300 + "]} : () -> f32"
    with pytest.raises(ParseError) as error:
        parse_program("{\n" + line + "\n}\n")
    assert error.value.source_line == line  # the whole line stays on the error
    message = str(error.value)
    assert len(message) < 400
    _, shown, caret = message.split("\n")
    assert shown.startswith("    ...") and shown.endswith("...")
    assert shown[caret.index("^")] == "?" == line[error.value.col - 1]


def test_load_errors_quote_values_from_the_file_cut_short(tmp_path: Path) -> None:
    document = json.loads((FIXTURE_MODEL / "model.json").read_text())
    ops = document["program"]["regions"][0]["blocks"][0]["ops"]
    ops[0]["A"] = list(range(100_000))
    ops.insert(1, {"#": "1." + "x" * 100_000, "I": [], "O": [], "A": [{"N": "a", "AT": {}}]})
    (tmp_path / "model.json").write_text(json.dumps(document))
    with pytest.raises(LoadError) as error:
        load_model(tmp_path)
    assert len(str(error.value)) < 400
    assert "'A' must be [is_distributed, is_parameter, need_clip, name], got [0, 1, 2" in str(
        error.value
    )


# -- well-formed programs the verifier refuses (found by the op fuzzer) ---------------------


def _probe(*lines: str) -> str:
    return "{\n" + "".join(f"    {line}\n" for line in lines) + "}\n"


X0 = '(%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[]} : () -> tensor<f32>'
XN = '(%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,4]} : () -> tensor<-1x4xf32>'


def _full(value: str) -> str:
    return (
        f'(%1) = "pd_op.full" () {{dtype:float32,place:Place(cpu),shape:[1],value:{value}}} '
        ": () -> tensor<1xf32>"
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            _probe(
                XN,
                _full("nan"),
                '(%2) = "pd_op.concat" (%0, %1) {} : (tensor<-1x4xf32>, tensor<1xf32>) -> tensor<f32>',
            ),
            "invalid pd_op.concat operand axis .*: must be an integer, got nan",
        ),
        (
            _probe(
                XN,
                _full("inf"),
                '(%2) = "pd_op.argmax" (%0, %1) {dtype:int64,flatten:false,keepdims:false} : (tensor<-1x4xf32>, tensor<1xf32>) -> tensor<i64>',
            ),
            "operand axis .*: must be an integer, got inf",
        ),
        (
            _probe(
                X0,
                _full("0"),
                '(%2) = "pd_op.split_with_num" (%0, %1) {num:2} : (tensor<f32>, tensor<1xf32>) -> vec[tensor<f32>]',
            ),
            "operand x .*: cannot split a 0-D tensor",
        ),
        (
            _probe(
                XN,
                '(%1) = "pd_op.data" () {dtype:int32,name:"a",place:Place(undefined:0),shape:[]} : () -> tensor<i32>',
                '(%2) = "pd_op.split_with_num" (%0, %1) {num:2147483647} : (tensor<-1x4xf32>, tensor<i32>) -> vec[tensor<f32>]',
            ),
            r"num must be in \[1, 4096\], got 2147483647",
        ),
        (
            _probe(
                XN,
                '(%1) = "pd_op.data" () {dtype:int64,name:"s",place:Place(undefined:0),shape:[1099511627776]} : () -> tensor<1099511627776xi64>',
                '(%2) = "pd_op.reshape" (%0, %1) {} : (tensor<-1x4xf32>, tensor<1099511627776xi64>) -> tensor<f32>',
            ),
            "operand shape .*: holds 1099511627776 elements, more than an IntArray operand may",
        ),
        (
            _probe(
                XN,
                _full("2.5"),
                '(%2) = "pd_op.reshape" (%0, %1) {} : (tensor<-1x4xf32>, tensor<1xf32>) -> tensor<f32>',
            ),
            "operand shape .*: must hold integers, got 2.5",
        ),
    ],
    ids=["nan-axis", "inf-axis", "split-0d", "huge-num", "huge-int-array", "fraction-shape"],
)
def test_hostile_operands_are_verify_errors(text: str, why: str) -> None:
    with pytest.raises(VerifyError, match=why):
        verify_program(parse_program(text))
