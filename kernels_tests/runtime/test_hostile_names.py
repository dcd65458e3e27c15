"""Names a user controls (hand-made group names, program file names) reach kernel names
and dump files only as bounded C identifiers, and hand-made groups that cannot be
compiled are a CompileError naming the group. A dump that cannot be written warns and
never fails the compile."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from cinn_py.driver import BuildScope
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.dump import DumpDir
from cinn_py.errors import CompileError
from cinn_py.hlir.group import Group, GroupKind
from cinn_py.hlir.grouping import make_group
from cinn_py.hlir.naming import MAX_NAME_LENGTH, bounded_name, unique_group_names
from cinn_py.pir import Builder, DataType, Program

RELU_TAN_1 = np.float32(np.maximum(np.tan(np.float32(1.0)), 0))
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def seed_program() -> Program:
    """The README's seed shape: full, then tan and relu."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.full", shape=[8, 16], value=1.0, dtype=DataType.FLOAT32)
    b.op("pd_op.relu", b.op("pd_op.tan", x))
    return program


def build_and_run(program: Program, groups: list[Group]):
    scope = BuildScope("cuda-emu", program)
    runtime = PIRCompiler(program, "cuda-emu", scope).build(groups)
    runtime.execute()
    return runtime, scope["var_2"].to_numpy()


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["g-1", "g 2"], ["g_1", "g_2"]),
        (["same", "same"], ["same", "same_1"]),
        (["9lives", "grüppe/../x"], ["_9lives", "gr_ppe____x"]),
        (["x" * 500, "x" * 500], None),
    ],
)
def test_group_names_become_unique_identifiers_and_the_kernels_run(names, expected):
    program = seed_program()
    full_op, *chain = program.block
    groups = [make_group(names[0], [full_op], program), make_group(names[1], chain, program)]
    runtime, out = build_and_run(program, groups)
    assert (out == RELU_TAN_1).all()  # two groups named alike once ran one kernel twice
    got = [g.name for g in runtime.groups]
    if expected is not None:
        assert got == expected
    assert len(set(got)) == 2
    for name in got:
        assert IDENTIFIER.fullmatch(name) and len(name) <= MAX_NAME_LENGTH
        assert f"fn_{name}(" in runtime.cuda_source
    assert [g.name for g in groups] == names  # the caller's groups are not changed


def test_well_named_groups_are_kept_as_they_are():
    program = seed_program()
    groups = [make_group("group_0", list(program.block), program)]
    assert unique_group_names(groups)[0] is groups[0]


def test_long_names_stay_distinct_when_bounded():
    a, b = "k" * 100 + "a", "k" * 100 + "b"
    assert bounded_name(a) != bounded_name(b)
    assert len(bounded_name(a)) == MAX_NAME_LENGTH and bounded_name("short") == "short"


def test_hand_made_groups_that_cannot_compile_are_compile_errors():
    program, other = seed_program(), seed_program()
    ops = list(program.block)
    with pytest.raises(CompileError, match=r"group 'g' has no ops"):
        make_group("g", [], program)
    with pytest.raises(
        CompileError, match=r"group 'g' holds pd_op.full \(.*\), which is not an op of the"
    ):
        make_group("g", list(other.block), program)
    compiler = PIRCompiler(program, "cuda-emu")
    with pytest.raises(CompileError, match=r"pd_op.tan \(.*\) is in two groups: 'a' and 'b'"):
        compiler.build([make_group("a", ops, program), make_group("b", ops[1:], program)])
    with pytest.raises(CompileError, match=r"groups must be a list of Group, got Group"):
        compiler.build(make_group("a", ops, program))
    with pytest.raises(CompileError, match=r"groups must be a list of Group, got str"):
        compiler.build(["a"])
    with pytest.raises(CompileError, match=r"group 'a' has no ops"):
        compiler.build([Group("a", GroupKind.FUSED, [])])


def test_a_long_program_file_name_is_dumped_under_a_bounded_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("CINN_PY_DUMP_DIR", str(tmp_path / "dumps"))
    program = seed_program()
    program.source = str(tmp_path / ("a" * 300 + ".pir"))
    full_op, *chain = program.block
    groups = [make_group("b" * 300, [full_op], program), make_group("c", chain, program)]
    build_and_run(program, groups)
    (folder,) = (tmp_path / "dumps").iterdir()
    assert folder.name.startswith("000_") and len(folder.name) <= 4 + MAX_NAME_LENGTH
    names = [p.name for p in folder.iterdir()]
    assert "c.cu" in names and all(len(name) < 100 for name in names)


def test_a_dump_that_cannot_be_written_warns_and_the_compile_goes_on(monkeypatch, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    monkeypatch.setenv("CINN_PY_DUMP_DIR", str(blocker / "dumps"))  # a folder in a file
    program = seed_program()
    with pytest.warns(RuntimeWarning, match=r"CINN_PY_DUMP_DIR: cannot write .*not dumped"):
        _, out = build_and_run(program, [make_group("g", list(program.block), program)])
    assert (out == RELU_TAN_1).all()


def test_a_dump_file_that_cannot_be_written_turns_dumping_off(tmp_path):
    dump = DumpDir(tmp_path / "gone")  # the folder vanished after it was made
    with pytest.warns(RuntimeWarning, match=r"cannot write"):
        dump.write("groups.txt", "text")
    assert not dump.enabled
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dump.write("more.txt", "text")  # once off, silent
