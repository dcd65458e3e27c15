"""Fuzz of what `cinn_py.load` reads: program text, model.json and model.pdiparams.

Valid inputs (the fixture programs and models, the examples) are mutated and loaded.
`cinn_py.load` may succeed or raise what it documents: ParseError (malformed text),
LoadError (a file that is no program, a malformed model or parameter file) or
VerifyError (a program that reads but breaks an op's declaration). Anything else
(IndexError, KeyError, ValueError, RecursionError, UnicodeDecodeError, MemoryError from
a giant allocation) is a bug. A program that loads must print, and its text must parse
back and print the same.

- Text: character edits (deletions, insertions of any character, control characters
  and quotes, duplicated spans), token edits (numbers, dims, element types, op names,
  value ids swapped for hostile ones), line edits (deleted, duplicated, swapped), and
  byte edits of the file (invalid UTF-8, NUL, byte-order marks, truncation).
- model.json: edits of the decoded document at a random node: a value of another type,
  a deleted key or item, an unknown key, a duplicated or swapped item, a tag or name
  from elsewhere in the corpus, an interesting integer, nesting up to thousands deep;
  and the JSON text cut short.
- model.pdiparams: truncation, byte flips, interesting u32 / i32 / u64 values written
  over the record headers and TensorDesc, inserted, deleted and duplicated spans.
- Every declared op: a well-formed program whose last op is any registered op, its
  operands data values of random types (or constants, for operands that hold an
  attribute), its attributes random values of their declared kinds: the verifier and the
  op's infer_meta may only refuse it with a VerifyError.

Error messages must stay readable (under MAX_MESSAGE characters), and the address space
is capped while these tests run, so that a giant allocation fails the test with a
MemoryError instead of waking the OOM killer.

CI runs each fuzzer with a fixed seed (hypothesis `derandomize`) for a bounded number of
examples, plus a few fresh random ones (the `_fresh` twins). `CINN_PY_FUZZ_EXAMPLES=N`
runs every fuzzer for N random examples instead and skips the twins (`tools/fuzz.py`
uses it for long runs), e.g.

    CINN_PY_FUZZ_EXAMPLES=20000 python -m pytest kernels_tests/fuzz/test_fuzz_inputs.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cinn_py
from cinn_py.errors import LoadError, ParseError, UnsupportedOpError, VerifyError
from cinn_py.pir.attributes import IntArrayAttribute
from cinn_py.pir.op_def import REQUIRED, lookup_op_def, registered_op_names
from cinn_py.pir.parser import parse_program
from cinn_py.pir.pdiparams import _read_record as read_record
from cinn_py.pir.printer import print_program
from cinn_py.pir.verifier import verify_program

FUZZ_ENV = "CINN_PY_FUZZ_EXAMPLES"
"""Examples per fuzzer for a long run (random, not derandomized); unset: the CI budget."""

LONG_RUN = int(os.environ.get(FUZZ_ENV) or 0)
FRESH_EXAMPLES = 10
"""Random examples each CI run adds to the fixed-seed ones."""

ROOT = Path(__file__).parents[2]
TESTS = ROOT / "kernels_tests"
LOAD_ERRORS = (ParseError, LoadError, VerifyError)
"""What `cinn_py.load` documents it raises."""
MAX_MESSAGE = 1500
"""Longest error message: errors quote a window of the offending line, cut values."""


def _settings(examples: int, fresh: bool = False) -> settings:
    """A fixed seed and `examples` examples in CI (`fresh`: a few random ones); with
    CINN_PY_FUZZ_EXAMPLES, that many random examples."""
    if LONG_RUN:
        examples, derandomize = LONG_RUN, False
    else:
        examples, derandomize = (FRESH_EXAMPLES if fresh else examples), not fresh
    return settings(
        max_examples=examples,
        derandomize=derandomize,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


fresh = pytest.mark.skipif(bool(LONG_RUN), reason=f"{FUZZ_ENV} runs only random examples")
"""Marks the few-fresh-examples twin of a fuzz test, redundant in a long run."""


@pytest.fixture(scope="module", autouse=True)
def bounded_memory() -> Iterator[None]:
    """A giant allocation must be a MemoryError that fails the test, not the OOM killer
    on a shared machine: while these tests run, the address space is capped at what the
    process already holds plus 4 GiB (Linux; elsewhere nothing is capped)."""
    try:
        import resource

        with open("/proc/self/statm") as f:
            held = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = held + (4 << 30)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz_inputs")


def _loads_or_documented_error(path: Path) -> cinn_py.pir.Program | None:
    """`cinn_py.load(path)`, or None when it raises a documented error (whose message
    must then be short enough to read)."""
    try:
        return cinn_py.load(path)
    except LOAD_ERRORS as error:
        message = str(error)
        assert message and len(message) < MAX_MESSAGE, f"unreadable error: {message[:500]!r}"
        return None


def _prints_and_reparses(program: cinn_py.pir.Program, reparse: bool = True) -> None:
    try:
        text = print_program(program)
    except UnsupportedOpError:  # ops with several regions load but do not print
        return
    if reparse:
        assert print_program(parse_program(text, "printed.pir")) == text


# -- program text --------------------------------------------------------------------------

TYPED_BASE = """{
 (%0) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[2,3],stop_gradient:[true],value:(Double)2} : () -> builtin.tensor<2x3xf32>
 (%1) = "pd_op.relu" (%0) {stop_gradient:[true]} : (builtin.tensor<2x3xf32>) -> builtin.tensor<2x3xf32>
 (%2) = "builtin.combine" (%0, %1) {} : (builtin.tensor<2x3xf32>, builtin.tensor<2x3xf32>) -> vec[builtin.tensor<2x3xf32>,builtin.tensor<2x3xf32>]
}
"""

TEXT_BASES = [
    *(
        p.read_text()
        for p in sorted(
            [
                *(TESTS / "fixtures" / "programs").glob("*/program.pir"),
                *(TESTS / "fixtures" / "models").glob("*/program*.pir"),
                *(ROOT / "examples").glob("*.pir"),
                TESTS / "pir" / "data" / "mixed" / "paddle.pir",
            ]
        )
    ),
    TYPED_BASE,
]

PUNCTUATION = list('{}()[]<>,:=%"-.x0123456789abefilnstu \n\t\\')
HOSTILE_CHARACTERS = ["\x00", "\x1b", "\x7f", "\ufeff", "\u2028", "\ud800", "é", "\U0001f600"]
HOSTILE_TOKENS = [
    "-1",
    "0",
    "-0",
    "2147483648",
    "-9223372036854775809",
    "9" * 30,
    "1e400",
    "-nan",
    "inf",
    "1.5",
    "x-1",
    "x0",
    "x" + "9" * 19,
    "f32",
    "bf16",
    "b",
    "index",
    "c64",
    "i64",
    "vec[",
    "<<NULL VALUE>>",
    "<<NULL TYPE>>",
    "%0",
    "%99999",
    '"pd_op.fo\\"o"',
    '"pd_op.relu"',
    '"pd_op.matmul"',
    '"builtin.combine"',
    '"cinn_op.group"',
    "[" * 70,
    "tensor<>",
    "Place(gpu:0)",
    "(Int64)",
    "(Double)",
    "float64",
    "true",
]


def _token_spans(text: str) -> list[tuple[int, int]]:
    """Start and end of every run of word characters or a quoted string, roughly: where
    token edits replace something."""
    spans, i = [], 0
    while i < len(text):
        if text[i].isalnum() or text[i] in "_-%.":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] in "_-%."):
                j += 1
            spans.append((i, j))
            i = j
        elif text[i] == '"':
            j = text.find('"', i + 1)
            j = len(text) if j < 0 else j + 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def _declared_by_cinn_py(name: str) -> bool:
    """An op of cinn_py's own registry, not one a test registered for itself (test_core's
    `coretest.*`, present when that module was imported first: its reshape takes any
    shape, which this fuzzing would rightly find)."""
    infer = lookup_op_def(name).infer_meta
    module = getattr(getattr(infer, "func", infer), "__module__", None) or "cinn_py"
    return module.startswith("cinn_py")


OP_NAMES = sorted(n for n in registered_op_names() if _declared_by_cinn_py(n))
SEMANTIC_TOKENS = [
    # (what a token looks like, what may replace it): edits that keep the text parsing,
    # so the verifier and every op's infer_meta see hostile programs.
    (
        re.compile(r"(?<![%\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])"),
        st.sampled_from(
            [
                "0",
                "-1",
                "1",
                "2",
                "3",
                "-2",
                "-3",
                "7",
                "64",
                "1e-05",
                "-0",
                "0.5",
                "2147483647",
                "2147483648",
                "9223372036854775807",
                "-9223372036854775808",
                "1e+30",
                "nan",
                "-inf",
            ]
        ),
    ),
    (
        re.compile(r"(?<=tensor<)[\w-]*(?=>)"),
        st.builds(
            lambda dims, element: "".join(f"{d}x" for d in dims) + element,
            st.lists(st.sampled_from([-1, 0, 1, 2, 3, 4, 8, 1 << 40]), max_size=5),
            st.sampled_from(["f32", "f16", "bf16", "f64", "i32", "i64", "b", "i8", "u8", "c64"]),
        ),
    ),
    (re.compile(r'(?<== )"[\w.]+"'), st.sampled_from([f'"{name}"' for name in OP_NAMES])),
    (re.compile(r"%\d+"), st.integers(0, 40).map(lambda n: f"%{n}")),
    (
        re.compile(r"\b(?:float32|float16|bfloat16|float64|int32|int64|bool|int8|uint8)\b"),
        st.sampled_from(
            [
                "float32",
                "float16",
                "bfloat16",
                "float64",
                "int32",
                "int64",
                "bool",
                "int8",
                "uint8",
                "int16",
                "complex64",
                "Undefined",
            ]
        ),
    ),
    (re.compile(r"\b(?:true|false)\b"), st.sampled_from(["true", "false"])),
    (
        re.compile(r"\[[-\d,]*\]"),
        st.lists(st.integers(-3, 5), max_size=6).map(
            lambda items: "[" + ",".join(map(str, items)) + "]"
        ),
    ),
]


def _semantic_edit(draw: st.DrawFn, text: str) -> str:
    """One token replaced by another of its kind: a number, a tensor type's body, an op
    name (any registered op), a value id, a data type, a bool or an integer list."""
    pattern, replacements = draw(st.sampled_from(SEMANTIC_TOKENS))
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    match = draw(st.sampled_from(matches))
    return text[: match.start()] + draw(replacements) + text[match.end() :]


@st.composite
def mutated_texts(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(TEXT_BASES))
    if draw(st.booleans()):  # edits that mostly keep the text parsing
        for _ in range(draw(st.integers(1, 3))):
            text = _semantic_edit(draw, text)
        return text
    characters = (
        st.sampled_from(PUNCTUATION) | st.sampled_from(HOSTILE_CHARACTERS) | st.characters()
    )
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["char", "char", "token", "token", "line", "span", "deep"]))
        if action == "char":
            pos = draw(st.integers(0, len(text)))
            kind = draw(st.sampled_from(["delete", "insert", "replace"]))
            new = "" if kind == "delete" else draw(characters)
            text = text[:pos] + new + text[pos + (kind != "insert") :]
        elif action == "token":
            spans = _token_spans(text)
            if spans:
                start, end = draw(st.sampled_from(spans))
                other = draw(st.sampled_from(spans))
                new = draw(st.sampled_from(HOSTILE_TOKENS) | st.just(text[other[0] : other[1]]))
                text = text[:start] + new + text[end:]
        elif action == "line":
            lines = text.split("\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            kind = draw(st.sampled_from(["delete", "duplicate", "swap"]))
            if kind == "delete":
                del lines[i]
            elif kind == "duplicate":
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif action == "span":
            pos = draw(st.integers(0, len(text)))
            end = draw(st.integers(pos, min(len(text), pos + 60)))
            text = text[:end] + text[pos:end] + text[end:]
        else:  # nesting far past the parser's limit
            pos = draw(st.integers(0, len(text)))
            depth = draw(st.integers(1, 3000))
            opener = draw(st.sampled_from(["[", "vec[", "{", "("]))
            text = text[:pos] + opener * depth + text[pos:]
    return text


@st.composite
def program_files(draw: st.DrawFn) -> bytes:
    """A mutated text, encoded, and sometimes spoiled as bytes."""
    data = draw(mutated_texts()).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 3)) == 0:
        pos = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["byte", "truncate", "bom", "utf16"]))
        if kind == "byte":
            data = data[:pos] + bytes([draw(st.integers(0, 255))]) + data[pos:]
        elif kind == "truncate":
            data = data[:pos]
        elif kind == "bom":
            data = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"])) + data
        else:
            data = data.decode("utf-8", "replace").encode("utf-16-le")
    return data


def check_program_file(scratch: Path, data: bytes) -> None:
    path = scratch / "program.pir"
    path.write_bytes(data)
    program = _loads_or_documented_error(path)
    if program is not None:
        _prints_and_reparses(program)


def test_every_text_base_loads_and_prints_back_exactly(scratch: Path) -> None:
    for text in TEXT_BASES:
        path = scratch / "base.pir"
        path.write_text(text)
        assert print_program(cinn_py.load(path)) == text


@_settings(600)
@given(data=program_files())
def test_mutated_program_text(scratch: Path, data: bytes) -> None:
    check_program_file(scratch, data)


@fresh
@_settings(600, fresh=True)
@given(data=program_files())
def test_mutated_program_text_fresh(scratch: Path, data: bytes) -> None:
    check_program_file(scratch, data)


# -- model.json -----------------------------------------------------------------------------

MODEL_FOLDERS = sorted(
    [*(TESTS / "fixtures" / "models").iterdir(), *(TESTS / "pir" / "data").iterdir()]
)
MODEL_FOLDERS = [f for f in MODEL_FOLDERS if (f / "model.json").is_file()]
MODEL_TEXTS = {f.name: (f / "model.json").read_text() for f in MODEL_FOLDERS}
MODEL_PARAMS = {
    f.name: (f / "model.pdiparams").read_bytes()
    for f in MODEL_FOLDERS
    if (f / "model.pdiparams").is_file()
}


def _strings(node: Any, found: set[str]) -> set[str]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            found.add(item)
    return found


CORPUS_STRINGS = sorted(
    set().union(*(_strings(json.loads(t), set()) for t in MODEL_TEXTS.values()))
    | {"0.t_vec", "0.t_dtensor", "0.a_array", "0.a_type", "1.a_scalar", "NaN", "INF", "p", "%"}
)
INTERESTING_INTS = [-(2**63) - 1, -(2**63), -(2**31), -2, -1, 0, 1, 2, 3, 4, 5, 2**31, 2**63, 2**64]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(INTERESTING_INTS),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(CORPUS_STRINGS),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(CORPUS_STRINGS) | st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=8,
)


def _paths(document: Any) -> list[tuple[Any, ...]]:
    """The path (keys and indexes) of every node below the top, without recursion."""
    paths, stack = [], [((), document)]
    while stack:
        path, node = stack.pop()
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in children:
            paths.append((*path, key))
            if isinstance(child, (dict, list)):
                stack.append(((*path, key), child))
    return sorted(paths, key=repr)


def _mutate_json(draw: st.DrawFn, document: Any, nests: list[tuple[str, str]]) -> None:
    """One edit of `document` in place. Deep nesting is too deep for `json.dumps`: it
    leaves a marker string, and `nests` gets (marker, the nested JSON text)."""
    paths = _paths(document)
    path = draw(st.sampled_from(paths))
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    key, value = path[-1], parent[path[-1]]
    action = draw(
        st.sampled_from(
            [
                "replace",
                "replace",
                "delete",
                "unknown_key",
                "duplicate",
                "swap",
                "corpus",
                "int",
                "nest",
            ]
        )
    )
    if action == "replace":
        parent[key] = draw(json_values)
    elif action == "delete":
        del parent[key]
    elif action == "unknown_key" and isinstance(value, dict):
        value[draw(st.sampled_from(CORPUS_STRINGS))] = draw(json_values)
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(value)))
    elif action == "swap" and isinstance(parent, list) and len(parent) > 1:
        other = draw(st.integers(0, len(parent) - 1))
        parent[key], parent[other] = parent[other], parent[key]
    elif action == "corpus":
        parent[key] = draw(st.sampled_from(CORPUS_STRINGS))
    elif action == "int":
        parent[key] = draw(st.sampled_from(INTERESTING_INTS))
    elif action == "nest":
        depth = draw(st.sampled_from([1, 2, 5, 50, 150, 199, 250, 2000]))
        wrapper = draw(st.sampled_from(["list", "array_attr", "vec_type"]))
        opener = {
            "list": "[",
            "array_attr": '{"#": "0.a_array", "D": [',
            "vec_type": '{"#": "0.t_vec", "D": [',
        }[wrapper]
        closer = "]" if wrapper == "list" else "]}"
        marker = f"\x00nest{len(nests)}"
        nests.append((marker, opener * depth + json.dumps(value) + closer * depth))
        parent[key] = marker


@dataclass
class ModelCase:
    name: str
    json_text: str
    params: bytes | None


@st.composite
def mutated_models(draw: st.DrawFn) -> ModelCase:
    name = draw(st.sampled_from(sorted(MODEL_TEXTS)))
    document = json.loads(MODEL_TEXTS[name])
    nests: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(1, 3))):
        if isinstance(document, (dict, list)) and document:
            _mutate_json(draw, document, nests)
    text = json.dumps(document)
    for marker, nested in reversed(nests):
        text = text.replace(json.dumps(marker), nested)
    if draw(st.integers(0, 7)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return ModelCase(name, text, MODEL_PARAMS.get(name))


def _write_model(folder: Path, json_text: str | bytes, params: bytes | None) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    data = json_text.encode("utf-8") if isinstance(json_text, str) else json_text
    (folder / "model.json").write_bytes(data)
    if params is not None:
        (folder / "model.pdiparams").write_bytes(params)
    return folder


def check_model(scratch: Path, case: ModelCase) -> None:
    folder = _write_model(scratch / "model", case.json_text, case.params)
    program = _loads_or_documented_error(folder)
    if program is not None:  # strings from JSON may hold what Paddle's text cannot
        _prints_and_reparses(program, reparse=False)


def test_every_model_base_loads(scratch: Path) -> None:
    for name, text in MODEL_TEXTS.items():
        cinn_py.load(_write_model(scratch / "model", text, MODEL_PARAMS.get(name)))


@_settings(300)
@given(case=mutated_models())
def test_mutated_model_json(scratch: Path, case: ModelCase) -> None:
    check_model(scratch, case)


@fresh
@_settings(300, fresh=True)
@given(case=mutated_models())
def test_mutated_model_json_fresh(scratch: Path, case: ModelCase) -> None:
    check_model(scratch, case)


# -- model.pdiparams ------------------------------------------------------------------------

PARAM_MODELS = sorted(MODEL_PARAMS)


def _record_offsets(data: bytes) -> list[int]:
    """Where each record's header fields, TensorDesc bytes and data start: where edits
    bite (jit.save writes no LoD, so the TensorDesc size is at +16)."""
    offsets, pos = [], 0
    while pos < len(data):
        desc = struct.unpack_from("<i", data, pos + 16)[0]
        offsets += [pos, pos + 4, pos + 12, pos + 16, *range(pos + 20, pos + 21 + desc)]
        pos = read_record(data, pos)[1]
    return offsets


HOT_OFFSETS = {name: _record_offsets(data) for name, data in MODEL_PARAMS.items()}

INTERESTING_WORDS = [
    struct.pack("<I", 0xFFFFFFFF),
    struct.pack("<i", -1),
    struct.pack("<i", 2**31 - 1),
    struct.pack("<I", 1),
    struct.pack("<Q", 2**63),
    struct.pack("<Q", 2**64 - 1),
    struct.pack("<Q", 1),
    b"\xff" * 10,
    b"\x80" * 11,
    bytes([0x10, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
    bytes([0x12, 0x7F]),
]


@st.composite
def mutated_params(draw: st.DrawFn) -> ModelCase:
    name = draw(st.sampled_from(PARAM_MODELS))
    data = bytearray(MODEL_PARAMS[name])
    hot = HOT_OFFSETS[name]
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.sampled_from(hot) | st.integers(0, len(data)))
        action = draw(
            st.sampled_from(["truncate", "byte", "word", "insert", "delete", "duplicate", "append"])
        )
        if action == "truncate":
            del data[pos:]
        elif action == "byte" and pos < len(data):
            data[pos] = draw(st.integers(0, 255))
        elif action == "word":
            data[pos : pos + 4] = draw(st.sampled_from(INTERESTING_WORDS))
        elif action == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif action == "delete":
            del data[pos : pos + draw(st.integers(1, 64))]
        elif action == "duplicate":
            end = min(len(data), pos + draw(st.integers(1, 128)))
            data[end:end] = data[pos:end]
        else:
            data += draw(st.binary(min_size=1, max_size=64))
    return ModelCase(name, MODEL_TEXTS[name], bytes(data))


def check_params(scratch: Path, case: ModelCase) -> None:
    folder = _write_model(scratch / "params", case.json_text, case.params)
    try:
        cinn_py.load(folder)
    except LoadError as error:
        assert "model.pdiparams" in str(error)


@_settings(300)
@given(case=mutated_params())
def test_mutated_pdiparams(scratch: Path, case: ModelCase) -> None:
    check_params(scratch, case)


@fresh
@_settings(300, fresh=True)
@given(case=mutated_params())
def test_mutated_pdiparams_fresh(scratch: Path, case: ModelCase) -> None:
    check_params(scratch, case)


# -- every declared op, with hostile operands and attributes ---------------------------------

ELEMENTS = ["f32", "f16", "bf16", "f64", "i32", "i64", "b", "i8", "u8", "c64"]
DTYPE_WORDS = [
    "float32",
    "float16",
    "bfloat16",
    "float64",
    "int32",
    "int64",
    "bool",
    "int8",
    "uint8",
    "complex64",
    "Undefined",
]
tensor_types = st.builds(
    lambda dims, element: "tensor<" + "".join(f"{d}x" for d in dims) + element + ">",
    st.lists(st.sampled_from([-1, 0, 1, 2, 3, 5]), max_size=4),
    st.sampled_from(ELEMENTS),
)
small_ints = st.sampled_from([-4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 2147483647, -2147483648])
int_lists = st.lists(small_ints, max_size=5).map(lambda v: "[" + ",".join(map(str, v)) + "]")
floats = st.sampled_from(["0", "1", "-1", "2.5", "1e-05", "-0", "nan", "inf", "-inf", "1e+30"])
ATTRIBUTE_LITERALS: dict[str, st.SearchStrategy[str]] = {
    "bool": st.sampled_from(["true", "false"]),
    "int32": small_ints.map(str),
    "int64": st.sampled_from([-1, 0, 1, 3, 2**40, -(2**63)]).map(str) | small_ints.map(str),
    "float": floats,
    "double": floats,
    "str": st.sampled_from(['""', '"x"', '"NCHW"', '"mean"', '"tanh"', '"a\\"b"']),
    "type": tensor_types | st.sampled_from(ELEMENTS),
    "int_array": int_lists,
    "data_type": st.sampled_from(DTYPE_WORDS),
    "place": st.sampled_from(["Place(cpu)", "Place(gpu:0)", "Place(undefined:0)"]),
    "data_layout": st.sampled_from(["NCHW", "NHWC", "ANY"]),
    "scalar": floats | small_ints.map(str) | st.sampled_from(["true"]),
    "array<bool>": st.lists(st.sampled_from(["true", "false"]), max_size=3).map(
        lambda v: "[" + ",".join(v) + "]"
    ),
    "array<int32>": int_lists,
    "array<int64>": int_lists,
    "array<float>": st.lists(floats, max_size=3).map(lambda v: "[" + ",".join(v) + "]"),
    "array<double>": st.lists(floats, max_size=3).map(lambda v: "[" + ",".join(v) + "]"),
    "array<str>": st.lists(st.sampled_from(['"a"', '""']), max_size=3).map(
        lambda v: "[" + ",".join(v) + "]"
    ),
    "array": int_lists,
}
PROBED_OPS = [
    name
    for name in OP_NAMES
    if not name.startswith(("cf.", "cinn_op.")) and name != "builtin.module"
]


@st.composite
def op_probes(draw: st.DrawFn) -> str:
    """A program whose last op is any declared op, its operands `pd_op.data` values (or
    constants, for operands that hold an attribute) of random types, its attributes random
    values of their declared kinds, its result types random: a well-formed text the
    verifier, and the op's infer_meta, must judge with at most a VerifyError."""
    op_def = lookup_op_def(draw(st.sampled_from(PROBED_OPS)))
    lines: list[str] = []
    types: dict[str, str] = {}

    def define(op: str, attrs: str, type_: str, operands: str = "", operand_types: str = "") -> str:
        name = f"%{len(lines)}"
        lines.append(
            f'    ({name}) = "{op}" ({operands}) {{{attrs}}} : ({operand_types}) -> {type_}'
        )
        types[name] = type_
        return name

    def tensor_value(spec: Any) -> str:
        if spec.mutable_attr is not None and draw(st.booleans()):
            if spec.mutable_kind is IntArrayAttribute:
                values = draw(int_lists)
                count = values.count(",") + (values != "[]")
                return define(
                    "pd_op.full_int_array",
                    f"dtype:int64,place:Place(cpu),value:{values}",
                    f"tensor<{count}xi64>",
                )
            value = draw(floats)
            return define(
                "pd_op.full",
                f"dtype:float32,place:Place(cpu),shape:[1],value:{value}",
                "tensor<1xf32>",
            )
        type_ = draw(tensor_types)
        dims = type_[len("tensor<") : -1].split("x")[:-1]
        dtype = {
            "f32": "float32",
            "f16": "float16",
            "bf16": "bfloat16",
            "f64": "float64",
            "i32": "int32",
            "i64": "int64",
            "b": "bool",
            "i8": "int8",
            "u8": "uint8",
            "c64": "complex64",
        }[type_[len("tensor<") : -1].split("x")[-1]]
        return define(
            "pd_op.data",
            f'dtype:{dtype},name:"x{len(lines)}",place:Place(undefined:0),shape:[{",".join(dims)}]',
            type_,
        )

    operands: list[str] = []
    specs = list(op_def.operands)
    if op_def.variadic_operands:
        specs = specs * draw(st.integers(0, 3))
    for spec in specs:
        if spec.optional and draw(st.booleans()):
            operands.append("<<NULL VALUE>>")
        elif spec.variadic:
            items = [tensor_value(spec) for _ in range(draw(st.integers(0, 3)))]
            vec = "vec[" + ",".join(types[i] for i in items) + "]"
            operands.append(
                define(
                    "builtin.combine", "", vec, ", ".join(items), ", ".join(types[i] for i in items)
                )
            )
        else:
            operands.append(tensor_value(spec))
    attrs = []
    for spec in op_def.attributes:
        if draw(st.integers(0, 5)) or spec.default is REQUIRED and draw(st.booleans()):
            attrs.append(f"{spec.name}:{draw(ATTRIBUTE_LITERALS[spec.kind_name])}")
    results = len(op_def.results) if not op_def.variadic_results else draw(st.integers(0, 3))
    result_types = [draw(tensor_types) for _ in range(results)]
    names = ", ".join(f"%{len(lines) + i}" for i in range(results))
    operand_types = ", ".join("<<NULL TYPE>>" if o.startswith("<") else types[o] for o in operands)
    lines.append(
        f'    ({names}) = "{op_def.name}" ({", ".join(operands)}) {{{",".join(sorted(attrs))}}} '
        f": ({operand_types}) -> {', '.join(result_types)}"
    )
    return "{\n" + "\n".join(lines) + "\n}\n"


def check_op_probe(text: str) -> None:
    try:
        program = parse_program(text, "probe.pir")
        verify_program(program)
    except (ParseError, VerifyError) as error:
        assert len(str(error)) < MAX_MESSAGE
        return
    _prints_and_reparses(program)


@_settings(800)
@given(text=op_probes())
def test_every_declared_op_with_hostile_operands(text: str) -> None:
    check_op_probe(text)


@fresh
@_settings(800, fresh=True)
@given(text=op_probes())
def test_every_declared_op_with_hostile_operands_fresh(text: str) -> None:
    check_op_probe(text)
