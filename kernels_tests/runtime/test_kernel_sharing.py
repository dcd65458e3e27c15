"""Identical kernels shared (issue 17): groups whose scheduled functions are equal up to
names launch one kernel, rendered once in the translation unit and compiled once, each
Instruction with its own variables, workspace and in-place pairs."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import cache
from cinn_py.cli import main, random_feeds
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.ir.visitor import canonical_key
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare


def layers(count: int, widths: list[int] | None = None, rows: int = 16) -> Program:
    """`count` layers of matmul -> softmax -> tanh (the matmul a library call between
    the fused groups); all of one width unless `widths` gives each layer's."""
    widths = widths or [32] * (count + 1)
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[rows, widths[0]], dtype=DataType.FLOAT32)
    for i in range(count):
        w = b.op(
            "pd_op.data", name=f"w{i}", shape=[widths[i], widths[i + 1]], dtype=DataType.FLOAT32
        )
        x = b.op("pd_op.tanh", b.op("pd_op.softmax", b.op("pd_op.matmul", x, w), axis=-1))
    return program


def check_against_reference(program: Program, exe) -> None:
    feeds = random_feeds(program, np.random.default_rng(7))
    got = list(exe.run(feeds).values())
    want = run_reference(program, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert compare(np.asarray(g), np.asarray(w)).ok


def scheduled(program: Program):
    return PIRCompiler(program, "cuda-emu").stages(until="scheduled").fused


def test_canonical_key_is_structure_up_to_names():
    one, two, three = (k.scheduled.func for k in scheduled(layers(3)))
    assert one.name != two.name and one.args[0].name != two.args[0].name
    assert canonical_key(one) == canonical_key(two) == canonical_key(three)
    assert canonical_key(one) != canonical_key(one.body)  # the function's own parts count
    wider = scheduled(layers(1, [32, 48]))[0].scheduled.func  # another extent
    assert canonical_key(wider) != canonical_key(one)
    half = Program()  # the same layer in float16
    b = Builder(half)
    x = b.op("pd_op.data", name="x", shape=[16, 32], dtype=DataType.FLOAT16)
    w = b.op("pd_op.data", name="w0", shape=[32, 32], dtype=DataType.FLOAT16)
    b.op("pd_op.tanh", b.op("pd_op.softmax", b.op("pd_op.matmul", x, w), axis=-1))
    assert canonical_key(scheduled(half)[0].scheduled.func) != canonical_key(one)


def test_canonical_key_needs_a_one_to_one_renaming():
    from cinn_py.ir.expr import Add, Buffer, IntImm, Load, Var
    from cinn_py.ir.stmt import ArgIO, Argument, LoweredFunc, Store

    def func(a: str, b: str, out: str) -> LoweredFunc:
        i = Var("i", DataType.INT32)
        bufs = {n: Buffer(n, DataType.FLOAT32, [IntImm(4)]) for n in {a, b, out}}
        value = Add(Load(bufs[a], [i]), Load(bufs[b], [i]))
        args = [Argument(bufs[n]) for n in dict.fromkeys([a, b])] + [
            Argument(bufs[out], ArgIO.OUTPUT)
        ]
        return LoweredFunc("f", args, Store(bufs[out], value, [i]))

    assert canonical_key(func("x", "y", "z")) == canonical_key(func("p", "q", "r"))
    # x + x is not x + y: a renaming may not merge two names
    assert canonical_key(func("x", "x", "z")) != canonical_key(func("x", "y", "z"))


def test_identical_layers_compile_to_one_kernel():
    program = layers(4)
    exe = cinn_py.compile(program, target="cuda-emu")
    runtime = exe.runtime_program
    fused = [g.name for g in exe.groups if g.kind.value == "fused"]
    assert fused == ["group_1", "group_3", "group_5", "group_7"]
    assert [k.group for k in exe.kernels] == fused  # one launch per group
    assert runtime.distinct_kernels == ["fn_group_1"]
    assert [k.name for k in exe.kernels] == ["fn_group_1"] * 4
    assert len({k.args for k in exe.kernels}) == 4  # each launch its own variables
    assert len({id(k.module) for k in exe.kernels}) == 1
    assert exe.cuda_source.count("__global__") == 1
    check_against_reference(program, exe)


def test_different_layers_keep_their_own_kernels():
    program = layers(3, [32, 40, 48, 56])  # each softmax of its own width
    exe = cinn_py.compile(program, target="cuda-emu")
    assert exe.runtime_program.distinct_kernels == ["fn_group_1", "fn_group_3", "fn_group_5"]
    assert exe.cuda_source.count("__global__") == 3
    check_against_reference(program, exe)


def test_shared_grid_reductions_keep_their_own_workspace():
    """Two reduce-alls of one shape share a kernel; each instruction owns the partials
    and counters (a shared counter would let one launch see the other's blocks)."""
    program = Program()
    b = Builder(program)
    axes = b.op("pd_op.full_int_array", value=[0, 1])
    for name in ("x", "y"):
        v = b.op("pd_op.data", name=name, shape=[129, 257], dtype=DataType.FLOAT32)
        b.op("pd_op.sum", v, axes, keepdim=False, dtype=DataType.UNDEFINED)
    exe = cinn_py.compile(program, target="cuda-emu")
    first, second = exe.kernels
    assert first.name == second.name and first.workspace
    assert exe.runtime_program.distinct_kernels == [first.name]
    arrays = [[k.workspace_array(w, "cuda-emu") for w in k.workspace] for k in exe.kernels]
    assert all(a is not b for a, b in zip(*arrays, strict=True))
    check_against_reference(program, exe)


def test_shared_kernels_declare_in_place_pairs_of_their_own_variables():
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[16, 32], dtype=DataType.FLOAT32)
    w = b.op("pd_op.data", name="w", shape=[32, 32], dtype=DataType.FLOAT32)
    for _ in range(3):
        x = b.op("pd_op.exp", b.op("pd_op.matmul", x, w))
    exe = cinn_py.compile(program, target="cuda-emu")
    assert len(exe.runtime_program.distinct_kernels) == 1 and len(exe.kernels) == 3
    for kernel in exe.kernels:
        assert kernel.in_place, kernel
        assert all(a in kernel.args and b in kernel.outputs for a, b in kernel.in_place)
    assert len({k.in_place for k in exe.kernels}) == 3
    check_against_reference(program, exe)


def test_the_cache_holds_one_entry_per_distinct_kernel(private_cache):
    before = cache.stats.snapshot()
    cinn_py.compile(layers(4), target="cuda-emu")
    assert (cache.stats.snapshot() - before).misses == 1
    assert cache.info()["kinds"]["cuda-emu"]["entries"] == 1


def test_dumps_and_the_cli_say_which_groups_share_a_kernel(tmp_path, monkeypatch, capsys):
    program = layers(3)
    path = tmp_path / "layers.pir"
    path.write_text(print_program(program))
    monkeypatch.setenv("CINN_PY_DUMP_DIR", str(tmp_path / "dumps"))
    PIRCompiler(program, "cuda-emu").build()
    (folder,) = (tmp_path / "dumps").iterdir()
    assert (folder / "kernels.txt").read_text() == (
        "group_1 launches fn_group_1\ngroup_3 launches fn_group_1\ngroup_5 launches fn_group_1\n"
    )
    monkeypatch.delenv("CINN_PY_DUMP_DIR")
    assert main(["dump-cuda", str(path), "--target", "cuda-emu"]) == 0
    out = capsys.readouterr().out
    assert out.count("__global__") == 1
    assert "// group_3 launches fn_group_1\n// group_5 launches fn_group_1\n" in out
    assert main(["ir", str(path), "--stage", "scheduled", "--target", "cuda-emu"]) == 0
    out = capsys.readouterr().out
    assert out.count("launches fn_group_1 (equal to it up to names)") == 2
    assert main(["run", str(path), "--target", "cuda-emu", "-v"]) == 0
    assert "cinn-py: steps: 3 kernel(s) (1 distinct), 3 library call(s)" in capsys.readouterr().err


@pytest.mark.parametrize("count", [1, 6])
def test_layers_match_the_reference_whatever_their_count(count):
    program = layers(count)
    exe = cinn_py.compile(program, target="cuda-emu")
    assert len(exe.runtime_program.distinct_kernels) == 1
    check_against_reference(program, exe)
