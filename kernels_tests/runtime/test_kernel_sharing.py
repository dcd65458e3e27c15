"""Identical kernels shared (issue 17): groups whose scheduled functions are equal up to
names launch one kernel, rendered once in the translation unit and compiled once, each
Instruction with its own variables, workspace and in-place pairs."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import cache
from cinn_py.cli import main, random_feeds
from cinn_py.driver import kernel_dedup, pir_compiler
from cinn_py.driver.kernel_dedup import Renaming
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.ir.group_schedule import auto_schedule
from cinn_py.ir.visitor import canonical_key, structural_key
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare
from kernels_tests.tool_modules import load_tool


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


# ---- one schedule per class of equal lowered functions ---------------------------------------

gen_big_model = load_tool("gen_big_model")
TINY = {"seq": 16, "hidden": 64, "heads": 2}
"""Model sizes small enough to schedule every group of a few layers twice in a test."""


def big_model(kind: str, layers: int) -> Program:
    return parse_program(gen_big_model.program_text(kind, layers, **TINY))


def counted_schedules(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions `PIRCompiler` asks `auto_schedule` for, by name, from now on."""
    calls: list[str] = []

    def counting(func, target, pattern=None, **options):
        calls.append(func.name)
        return auto_schedule(func, target, pattern, **options)

    monkeypatch.setattr(pir_compiler, "auto_schedule", counting)
    return calls


@pytest.mark.parametrize(("kind", "few"), [("llama", 1), ("bert", 2)])
def test_eight_layers_schedule_as_many_functions_as_a_few(kind, few, monkeypatch):
    """Scheduling runs once per distinct lowered function: as often for 8 layers as for
    1 (BERT: 2, its first layer's softmax also adds the mask made before it)."""
    calls = counted_schedules(monkeypatch)
    small = PIRCompiler(big_model(kind, few), "cuda-emu").stages(until="scheduled")
    scheduled = list(calls)
    calls.clear()
    eight = PIRCompiler(big_model(kind, 8), "cuda-emu").stages(until="scheduled")
    assert len(calls) == len(scheduled) == len(small.distinct) == len(eight.distinct)
    assert len(eight.fused) > 3 * len(small.fused)
    assert all(k.scheduled is not None for k in eight.fused)


@pytest.mark.parametrize("kind", ["llama", "bert"])
def test_a_shared_schedule_is_the_one_the_group_gets_alone(kind, monkeypatch):
    """Every group that took another's schedule renamed has exactly the function and the
    trace scheduling it alone gives (its own buffers, loops and temps), and its trace
    replays on its own lowered function to that function."""
    calls = counted_schedules(monkeypatch)
    compiler = PIRCompiler(big_model(kind, 3), "cuda", arch="sm_90")
    stages = compiler.stages(until="scheduled")
    assert len(calls) < len(stages.fused)
    target = compiler.target_info()
    for kernel in stages.fused:
        alone = auto_schedule(kernel.lowered, target, kernel.group.reduce_pattern)
        assert structural_key(kernel.scheduled.func) == structural_key(alone.func)
        assert str(kernel.scheduled.trace) == str(alone.trace)
        assert kernel.scheduled.launch == alone.launch
        assert kernel.scheduled.tactic == alone.tactic
        replayed = kernel.scheduled.replay(kernel.lowered)
        assert structural_key(replayed) == structural_key(kernel.scheduled.func)
    names = {k.scheduled.func.name for k in stages.fused}
    assert len(names) == len(stages.fused)  # each its own fn_<group>


def test_the_renaming_follows_the_names_the_scheduler_makes():
    renaming = Renaming(
        ["fn_group_1", "var_2", "var_2_tmp", "i_0"], ["fn_group_5", "var_9", "var_9_tmp", "i_0"]
    )
    assert renaming("var_2") == "var_9" and renaming("i_0") == "i_0"
    assert renaming("var_2_local") == "var_9_local"
    assert renaming("var_2_tmp_shared_0") == "var_9_tmp_shared_0"
    assert renaming("fn_group_1_semaphore") == "fn_group_5_semaphore"
    assert renaming("var_2_local_i0_var_2_local_i1_fused") == "var_9_local_i0_var_9_local_i1_fused"
    assert renaming("var_20") == "var_20" and renaming("grid_row") == "grid_row"
    assert renaming.one_to_one
    clash = Renaming(["var_2"], ["var_9"])
    assert clash("var_2") == "var_9" and clash("var_9") == "var_9"  # two names, one name
    assert not clash.one_to_one


def test_a_renaming_that_is_not_one_to_one_schedules_the_group_itself(monkeypatch):
    calls = counted_schedules(monkeypatch)
    monkeypatch.setattr(kernel_dedup, "renamed_schedule", lambda *args: None)
    stages = PIRCompiler(layers(4), "cuda-emu").stages(until="scheduled")
    assert len(calls) == 4
    assert [k.kernel.group.name for k in stages.fused] == ["group_1"] * 4


def test_transposed_inputs_are_tiled_in_reading_order_whatever_their_names(monkeypatch):
    """Layers adding two transposed inputs: where the second input's number has one digit
    more (`var_9`, `var_10`), its name sorts first; the tile schedule takes the inputs in
    the order the group reads them, so every layer gets one schedule and one kernel."""
    program = Program()
    b = Builder(program)
    for i in range(3):  # so that a layer reads var_9 and var_10
        b.op("pd_op.data", name=f"unused{i}", shape=[1], dtype=DataType.FLOAT32)
    x = b.op("pd_op.data", name="x", shape=[64, 64], dtype=DataType.FLOAT32)
    w = b.op("pd_op.data", name="w", shape=[64, 64], dtype=DataType.FLOAT32)
    for i in range(3):
        y = b.op("pd_op.data", name=f"y{i}", shape=[64, 64], dtype=DataType.FLOAT32)
        t = b.op("pd_op.transpose", x, perm=[1, 0])
        x = b.op("pd_op.matmul", b.op("pd_op.add", t, b.op("pd_op.transpose", y, perm=[1, 0])), w)
    calls = counted_schedules(monkeypatch)
    compiler = PIRCompiler(program, "cuda-emu")
    stages = compiler.stages(until="scheduled")
    inputs = [[a.name for a in k.lowered.args[:2]] for k in stages.fused]
    assert any(sorted(names) != names for names in inputs)  # the orders differ somewhere
    assert len(calls) == 1 and len(stages.distinct) == 1
    for kernel, names in zip(stages.fused, inputs, strict=True):
        alone = auto_schedule(kernel.lowered, compiler.target_info(), kernel.group.reduce_pattern)
        tiled = [s.inputs[1][1] for s in alone.trace if s.primitive == "cache_tile"]
        assert tiled == names
        assert str(kernel.scheduled.trace) == str(alone.trace)
