"""The op registry: one entry per op owns everything about it (docs/EXTENDING.md)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.cli import main
from cinn_py.errors import UnsupportedOpError
from cinn_py.pir.attributes import BoolAttribute
from cinn_py.pir.op_def import (
    OpDef,
    attr,
    lookup_op_def,
    override_op,
    register_ops,
    registered_ops,
)
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.tolerances import compare

sys.path.insert(0, str(Path(__file__).resolve().parent / "hlir"))
from op_cases import CASES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = [
    op
    for op in registered_ops()
    if op.name.split(".")[0] in ("pd_op", "builtin") and not op.has_trait(Trait.STRUCTURAL)
]


@pytest.mark.parametrize("op_def", ENTRIES, ids=lambda op: op.name)
def test_every_op_has_a_kernel_and_a_compiled_path(op_def: OpDef) -> None:
    if op_def.name == "builtin.constant":
        pytest.skip("builtin.constant runs nowhere yet (the storage plan refuses it)")
    assert op_def.kernel is not None, f"{op_def.name} has no reference kernel"
    assert op_def.compiled_by in ("lowered", "decomposed", "library")


def test_registering_a_name_twice_fails() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register_ops("pd_op", [OpDef("pd_op.relu")])
    assert lookup_op_def("pd_op.relu").kernel is not None


def test_attribute_kinds_are_classes() -> None:
    with pytest.raises(ValueError, match="unknown attribute kind"):
        OpDef("test.op", attributes=(attr("flag", int),))
    with pytest.raises(ValueError, match="unknown attribute kind 'bool'"):
        OpDef("test.op", attributes=(attr("flag", "bool"),))
    with pytest.raises(ValueError, match="is not a Trait"):
        OpDef("test.op", traits=frozenset({OpPatternKind.ELEMENTWISE}))
    assert lookup_op_def("pd_op.gelu").attr_spec("approximate").kind is BoolAttribute


_NAME_SET = re.compile(
    r"""(frozenset\(\{|\(|\{|\[)\s*"(pd_op|builtin|cf|cinn_op)\.\w+",\s*"(pd_op|builtin)\."""
)


def test_no_op_name_sets_outside_the_entries() -> None:
    """Traits replace the sets of op names passes and fusion used to keep."""
    allowed = {ROOT / "cinn_py" / "ops", ROOT / "cinn_py" / "pir" / "dialects"}
    offenders = []
    for path in (ROOT / "cinn_py").rglob("*.py"):
        if any(parent in allowed for parent in path.parents):
            continue
        if _NAME_SET.search(path.read_text()):
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders


UNKNOWN = "\n".join(
    [
        "{",
        '    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",'
        "place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[4],stop_gradient:[true]}"
        " : () -> builtin.tensor<4xf32>",
        '    (%1) = "pd_op.frobnicate" (%0) {stop_gradient:[true]}'
        " : (builtin.tensor<4xf32>) -> builtin.tensor<4xf32>",
        '    (%2) = "pd_op.relu" (%1) {stop_gradient:[true]}'
        " : (builtin.tensor<4xf32>) -> builtin.tensor<4xf32>",
        '    () = "builtin.shadow_output" (%2) {output_name:"out"} : (builtin.tensor<4xf32>) -> ',
        "}",
        "",
    ]
)


@pytest.mark.parametrize(
    ("command", "target"),
    [("dump-cuda", "cuda-emu"), ("run", "cuda-emu"), ("run", "reference")],
)
def test_the_cli_names_an_unknown_op_and_where_it_is_used(
    command: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "unknown.pir"
    path.write_text(UNKNOWN)
    out_dir = ["-o", str(tmp_path / "out")] if command == "dump-cuda" else []
    assert main([command, str(path), "--target", target, *out_dir]) != 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        f"cinn-py: error: op 'pd_op.frobnicate' is not an op cinn_py knows ({path}:3, op #1,"
        " defining %1)"
    ]


@pytest.mark.parametrize("target", ["cuda-emu", "reference"])
def test_an_unknown_op_parses_prints_and_fails_to_compile(target: str) -> None:
    program = parse_program(UNKNOWN)
    assert "pd_op.frobnicate" in cinn_py.pir.print_program(program)
    with pytest.raises(UnsupportedOpError, match="pd_op.frobnicate"):
        cinn_py.compile(program, target)


# -- an op's paths agree --------------------------------------------------------------------

FIXTURE_PROGRAMS = ROOT / "kernels_tests" / "fixtures" / "programs"
MULTI_PATH = [op for op in ENTRIES if op.decompose is not None]
"""Ops with more than one compiled path: the decomposition, and the lowering (where there
is one) or the library call (where the rule leaves the op whole)."""


def _sources(op_def: OpDef) -> list[tuple[str, Callable[[], tuple[Program, dict]]]]:
    """Small programs using the op: its cases in hlir/op_cases.py (the first two, odd
    shapes first), else the Paddle fixture programs that use it."""
    cases = [c for c in CASES if c.op == op_def.name and not c.compiled_only]
    if cases:
        return [(c.id, c.build) for c in cases[:2]]
    found = []
    for path in sorted(FIXTURE_PROGRAMS.glob("*/program.pir")):
        if f'"{op_def.name}"' in path.read_text():
            found.append((path.parent.name, lambda path=path: _fixture(path)))
    return found[:2]


def _fixture(path: Path) -> tuple[Program, dict, dict | None]:
    arrays = []
    for name in ("feeds.npz", "params.npz"):
        if (path.parent / name).exists():
            with np.load(path.parent / name) as data:
                arrays.append(dict(data))
        else:
            arrays.append(None)
    return parse_program(path.read_text()), arrays[0] or {}, arrays[1]


def _run(build: Callable[[], tuple], target: str) -> dict:
    program, feeds, *params = build()
    return cinn_py.compile(program, target).run(feeds, *params)


@pytest.mark.parametrize("op_def", MULTI_PATH, ids=lambda op: op.name)
def test_decomposition_lowering_and_reference_agree(op_def: OpDef) -> None:
    """Compiled on cuda-emu with the decomposition, and without it where a lowering
    exists, both match the reference kernel."""
    sources = _sources(op_def)
    assert sources, f"{op_def.name}: add a case to kernels_tests/hlir/op_cases.py"
    for name, build in sources:
        want = _run(build, "reference")
        runs = {"decomposed": _run(build, "cuda-emu")}
        if op_def.lowering is not None:
            with override_op(op_def.name, decompose=None):
                runs["lowered"] = _run(build, "cuda-emu")
        for path, got in runs.items():
            assert got.keys() == want.keys()
            for key, expected in want.items():
                result = compare(np.asarray(got[key]), np.asarray(expected))
                assert result.ok, f"{op_def.name} {path} on {name}, {key}: {result}"


# -- inference dropout folds away ------------------------------------------------------------

DROPOUT_EVAL = """{{
    (%0) = "pd_op.data" () {{dtype:float32,name:"x",place:Place(undefined:0),shape:[7,33],stop_gradient:[true]}} : () -> tensor<7x33xf32>
    (%1) = "pd_op.relu" (%0) {{stop_gradient:[true]}} : (tensor<7x33xf32>) -> tensor<7x33xf32>
    (%2) = "pd_op.full" () {{dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:0.3}} : () -> tensor<1xf32>
    (%3, %4) = "pd_op.dropout" (%1, <<NULL VALUE>>, %2) {{fix_seed:false,is_test:{is_test},mode:"{mode}",seed:0,stop_gradient:[true,true]}} : (tensor<7x33xf32>, <<NULL TYPE>>, tensor<1xf32>) -> tensor<7x33xf32>, tensor<7x33xu8>
    (%5) = "pd_op.exp" (%3) {{stop_gradient:[true]}} : (tensor<7x33xf32>) -> tensor<7x33xf32>
    () = "builtin.shadow_output" (%5) {{output_name:"out"}} : (tensor<7x33xf32>) -> {mask}
}}
"""
MASK_OUTPUT = """
    () = "builtin.shadow_output" (%4) {output_name:"mask"} : (tensor<7x33xu8>) -> """
MASK_READ = """
    (%6) = "pd_op.cast" (%4) {dtype:float32} : (tensor<7x33xu8>) -> tensor<7x33xf32>
    () = "builtin.shadow_output" (%6) {output_name:"mask"} : (tensor<7x33xf32>) -> """


def _dropout(mode: str, is_test: str = "true", mask: str = "") -> Program:
    return parse_program(DROPOUT_EVAL.format(mode=mode, is_test=is_test, mask=mask))


@pytest.mark.parametrize("mode", ["upscale_in_train", "downgrade_in_infer"])
def test_inference_dropout_folds_into_one_kernel(mode: str) -> None:
    feeds = {"x": np.random.default_rng(7).uniform(-2, 2, (7, 33)).astype(np.float32)}
    exe = cinn_py.compile(_dropout(mode), "cuda-emu")
    (got,) = exe.run(feeds).values()
    assert len(exe.groups) == 1 and len(exe.kernels) == 1
    assert not any(op.name == "pd_op.dropout" for op in exe.groups[0].ops)
    (want,) = cinn_py.compile(_dropout(mode), "reference").run(feeds).values()
    scale = 1.0 if mode == "upscale_in_train" else np.float32(1) - np.float32(0.3)
    np.testing.assert_allclose(want, np.exp(np.maximum(feeds["x"], 0) * scale), rtol=1e-6)
    result = compare(np.asarray(got), want)
    assert result.ok, result


def test_an_inference_dropout_mask_fetched_is_all_ones() -> None:
    """Paddle leaves the mask unwritten in inference; fetched, it is the reference's all
    ones, made by a fill fused with the rest: no library call splits the kernels."""
    feeds = {"x": np.random.default_rng(3).uniform(-2, 2, (7, 33)).astype(np.float32)}
    exe = cinn_py.compile(_dropout("downgrade_in_infer", mask=MASK_OUTPUT), "cuda-emu")
    got = exe.run(feeds)
    assert all(group.kind.value != "library" for group in exe.groups)
    want = cinn_py.compile(_dropout("downgrade_in_infer", mask=MASK_OUTPUT), "reference").run(feeds)
    assert got.keys() == want.keys()
    np.testing.assert_array_equal(got["out1"], np.ones((7, 33), np.uint8))
    np.testing.assert_array_equal(want["out1"], np.ones((7, 33), np.uint8))
    assert compare(np.asarray(got["out0"]), np.asarray(want["out0"])).ok


@pytest.mark.parametrize(
    ("is_test", "mask"), [("true", MASK_READ), ("false", "")], ids=["mask-read", "training"]
)
def test_dropout_stays_whole_when_its_mask_is_read_or_it_trains(is_test: str, mask: str) -> None:
    program = _dropout("upscale_in_train", is_test, mask)
    PassManager().run(program)
    assert any(op.name == "pd_op.dropout" for op in program.block)


# -- docs/OPS.md and the README's op summary ---------------------------------------------------


def test_ops_doc_and_readme_are_up_to_date() -> None:
    """Both are generated from the registry: `python tools/gen_ops_doc.py` rewrites them."""
    sys.path.insert(0, str(ROOT / "tools"))
    import gen_ops_doc  # noqa: PLC0415

    assert gen_ops_doc.OPS_MD.read_text(encoding="utf-8") == gen_ops_doc.ops_md(), (
        "docs/OPS.md is stale: run python tools/gen_ops_doc.py"
    )
    assert gen_ops_doc.README.read_text(encoding="utf-8") == gen_ops_doc.readme(), (
        "README.md's op summary is stale: run python tools/gen_ops_doc.py"
    )
