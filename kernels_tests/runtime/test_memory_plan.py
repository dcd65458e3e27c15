"""The memory plan (`runtime.memory_plan`): live ranges, greedy-by-size offsets, the
overlap checker, the arena the Scope's variables are views of, and its figures.

Every plan a test makes goes through `check_plan` (assign_offsets and plan_memory run
it, and the tests run it again on what a compile kept)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cinn_py
from cinn_py.cli import main
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.parser import parse_file
from cinn_py.runtime.memory_plan import (
    LiveRange,
    MemoryPlan,
    MemoryPlanError,
    align,
    assign_offsets,
    check_plan,
)
from cinn_py.tolerances import compare

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fixture_ops import model_params, program_params  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MODEL_NAMES = sorted(p.parent.name for p in (FIXTURES / "models").glob("*/model.json"))
PROGRAMS = program_params(
    sorted(p.parent.name for p in (FIXTURES / "programs").glob("*/program.pir")), "compiled"
)


def load_npz(path: Path) -> dict[str, np.ndarray]:
    if not path.exists():
        return {}
    with np.load(path) as data:
        return dict(data)


# ---- the checker -------------------------------------------------------------------------


def _plan(alignment: int, *values: tuple[str, int, int, int, int]) -> MemoryPlan:
    """A hand-made plan from (name, nbytes, start, end, offset)."""
    ranges = {n: LiveRange(n, size, s, e) for n, size, s, e, _ in values}
    offsets = {n: o for n, _, _, _, o in values}
    top = max((o + size for _, size, _, _, o in values), default=0)
    return MemoryPlan(alignment, ranges, offsets, top)


def test_check_plan_catches_two_live_values_in_the_same_bytes() -> None:
    plan = _plan(256, ("a", 1024, 0, 2, 0), ("b", 512, 1, 3, 768))
    with pytest.raises(MemoryPlanError, match="a .* and b .* are live together"):
        check_plan(plan)


def test_check_plan_counts_a_shared_step_as_overlap() -> None:
    """A kernel may read its input after writing its output: the value read last by
    step 1 and the one written by step 1 must not share bytes."""
    with pytest.raises(MemoryPlanError, match="live together"):
        check_plan(_plan(256, ("a", 256, 0, 1, 0), ("b", 256, 1, 2, 0)))


def test_check_plan_accepts_reuse_after_death_and_empty_values() -> None:
    check_plan(_plan(256, ("a", 256, 0, 1, 0), ("b", 256, 2, 3, 0), ("e", 0, 0, 3, 0)))


def test_check_plan_catches_misalignment_and_a_block_past_the_arena() -> None:
    with pytest.raises(MemoryPlanError, match="not a multiple of 256"):
        check_plan(_plan(256, ("a", 4, 0, 0, 128)))
    plan = _plan(256, ("a", 512, 0, 0, 0))
    plan.arena_bytes = 256
    with pytest.raises(MemoryPlanError, match="past the arena"):
        check_plan(plan)


# ---- greedy by size ----------------------------------------------------------------------


def test_greedy_by_size_golden_offsets() -> None:
    """Largest first; each at the smallest gap between the blocks of values live with it
    that holds it, else on top. `e` (100 bytes, 256 aligned) fits the 512-byte gap that
    `b`, dead by step 3, leaves between `c` and `d`."""
    plan = assign_offsets(
        [
            LiveRange("a", 1024, 0, 1),
            LiveRange("b", 512, 1, 2),
            LiveRange("c", 1024, 2, 3),
            LiveRange("d", 256, 0, 3),
            LiveRange("e", 100, 3, 3),
        ],
        256,
    )
    assert plan.offsets == {"a": 0, "c": 0, "b": 1024, "d": 1536, "e": 1024}
    assert plan.arena_bytes == 1792
    assert plan.naive_bytes == 1024 + 512 + 1024 + 256 + 256
    check_plan(plan)


def test_plans_do_not_depend_on_the_order_of_the_ranges() -> None:
    ranges = [LiveRange(f"v{i}", 100 * (i % 5) + 1, i % 7, i % 7 + i % 3) for i in range(30)]
    assert assign_offsets(ranges, 256).offsets == assign_offsets(ranges[::-1], 256).offsets


@st.composite
def live_ranges(draw: st.DrawFn) -> list[LiveRange]:
    count = draw(st.integers(0, 40))
    ranges = []
    for i in range(count):
        start = draw(st.integers(0, 20))
        length = draw(st.integers(0, 8))
        nbytes = draw(st.sampled_from([0, 1, 2, 4, 100, 255, 256, 257, 1000, 4096, 10_000]))
        ranges.append(LiveRange(f"v{i}", nbytes, start, start + length))
    return ranges


@settings(max_examples=200, deadline=None)
@given(live_ranges(), st.sampled_from([1, 16, 64, 256]))
def test_random_live_ranges_never_overlap(ranges: list[LiveRange], alignment: int) -> None:
    plan = assign_offsets(ranges, alignment)
    check_plan(plan)
    for value in ranges:  # the brute-force check, independent of check_plan's sweep
        lo, hi = plan.offsets[value.name], plan.offsets[value.name] + value.nbytes
        assert lo % alignment == 0 and hi <= plan.arena_bytes
        for other in ranges:
            if other is value or not value.nbytes or not other.nbytes or not value.meets(other):
                continue
            other_lo = plan.offsets[other.name]
            assert hi <= other_lo or other_lo + other.nbytes <= lo
    assert plan.arena_bytes <= plan.naive_bytes
    peak = max(
        (
            sum(align(r.nbytes, alignment) for r in ranges if r.start <= step <= r.end)
            for step in range(30)
        ),
        default=0,
    )
    assert plan.arena_bytes >= peak


# ---- compiled programs -------------------------------------------------------------------


def _check_arena(exe: cinn_py.Executable) -> None:
    """The compile's plan holds, and each arena variable is the view of the scope's one
    arena at its planned offset (feeds and parameters own their memory)."""
    runtime = exe.runtime_program
    plan = exe.memory
    assert runtime is not None and plan is not None
    check_plan(plan)
    scope = runtime.scope
    base = scope.arena.ctypes.data
    assert base % plan.alignment == 0
    for name, offset in plan.offsets.items():
        array = scope[name].array
        assert array.base is not None
        if array.size:
            assert array.ctypes.data == base + offset, name
    for name in [v for vs in runtime.storage.feeds.values() for v in vs]:
        assert name not in plan.offsets


@pytest.mark.parametrize("name", model_params(MODEL_NAMES, "compiled"))
def test_saved_models_run_from_their_checked_arena(name: str) -> None:
    folder = FIXTURES / "models" / name
    program = load_model(folder)
    exe = cinn_py.compile(program, target="cuda-emu")
    got = exe.run(load_npz(folder / "feeds.npz"))
    _check_arena(exe)
    expected = load_npz(folder / "outputs.npz")
    for i, value in enumerate(program.outputs()):
        dtype = value.type.data_type.value
        result = compare(
            np.asarray(got[f"out{i}"]), expected[f"out{i}"], dtype if dtype == "bfloat16" else None
        )
        assert result.ok, f"{name} out{i}: {result}"


@pytest.mark.parametrize("name", PROGRAMS)
def test_fixture_programs_compile_to_a_checked_arena(name: str) -> None:
    """Every fixture program's plan (its values checked against Paddle's, with this
    plan in place, by test_compiled_fixtures)."""
    folder = FIXTURES / "programs" / name
    exe = cinn_py.compile(parse_file(folder / "program.pir"), target="cuda-emu")
    exe.run(load_npz(folder / "feeds.npz"), load_npz(folder / "params.npz"))
    _check_arena(exe)


TRANSFORMERS = ["transformer_encoder", "bert_layer", "llama_decoder", "gpt2_block", "vit_block"]


@pytest.mark.parametrize("name", [n for n in TRANSFORMERS if n in MODEL_NAMES])
def test_transformer_layer_arena_is_at_most_half_the_naive_sum(name: str) -> None:
    folder = FIXTURES / "models" / name
    exe = cinn_py.compile(load_model(folder), target="cuda-emu")
    exe.run(load_npz(folder / "feeds.npz"))
    plan = exe.memory
    assert plan is not None
    check_plan(plan)
    assert plan.arena_bytes <= plan.naive_bytes / 2, plan.summary()


def test_fetching_an_overwritten_intermediate_gives_its_value() -> None:
    """A value whose bytes a later value takes is compiled again as an output when
    fetched, so it still reads as on `reference`."""
    folder = FIXTURES / "models" / "transformer_encoder"
    program = load_model(folder)
    feeds = load_npz(folder / "feeds.npz")
    exe = cinn_py.compile(program, target="cuda-emu")
    exe.run(feeds)
    plan = exe.memory
    assert plan is not None
    overwritten = [n for n in plan.ranges if n.startswith("var_") and plan.overwritten(n)]
    assert overwritten, plan.offsets
    fetch = [f"%{n.removeprefix('var_')}" for n in overwritten[:3]]
    got = exe.run(feeds, fetch=fetch)
    want = cinn_py.compile(program, target="reference").run(feeds, fetch=fetch)
    for key in fetch:
        assert compare(np.asarray(got[key]), np.asarray(want[key])).ok, key


def test_results_do_not_alias_the_arena() -> None:
    folder = FIXTURES / "models" / "mlp"
    exe = cinn_py.compile(load_model(folder), target="cuda-emu")
    out = exe.run(load_npz(folder / "feeds.npz"))
    arena = exe.runtime_program.scope.arena
    assert not any(np.shares_memory(a, arena) for a in out.values())


@pytest.mark.skipif(
    not os.path.isdir(FIXTURES / "models" / "transformer_encoder"), reason="no such fixture"
)
def test_cli_run_verbose_prints_arena_and_naive_bytes(capsys) -> None:
    code = main(
        ["run", str(FIXTURES / "models" / "transformer_encoder"), "--target", "cuda-emu", "-v"]
    )
    err = capsys.readouterr().err
    assert code == 0
    line = next(line for line in err.splitlines() if line.startswith("cinn-py: memory: "))
    arena, naive = (int(x) for x in re.findall(r"(\d+) bytes", line))
    assert 0 < arena <= naive
