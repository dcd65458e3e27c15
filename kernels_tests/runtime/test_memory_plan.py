"""The memory plan (`runtime.memory_plan`): live ranges, greedy-by-size offsets, in-place
pairs, the overlap checker, the arena the Scope's variables are views of, and its
figures.

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
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.hlir.grouping import make_group
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.parser import parse_file, parse_program
from cinn_py.pir.types import DenseTensorType
from cinn_py.runtime.memory_plan import (
    InPlace,
    LiveRange,
    MemoryPlan,
    MemoryPlanError,
    align,
    assign_offsets,
    check_plan,
    plan_memory,
)
from cinn_py.runtime.scope import Scope
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


# ---- in place ----------------------------------------------------------------------------


def test_an_in_place_output_takes_its_dying_input_s_offset() -> None:
    """a dies at step 1, where b is written: b at a's offset, and c (live throughout)
    beside them: two blocks where three values would need three without the pair."""
    ranges = [LiveRange("a", 256, 0, 1), LiveRange("b", 256, 1, 2), LiveRange("c", 256, 0, 2)]
    plain = assign_offsets(ranges, 256)
    plan = assign_offsets(ranges, 256, [InPlace("a", "b", 1)])
    assert plan.offsets["a"] == plan.offsets["b"] != plan.offsets["c"]
    assert plan.in_place == (InPlace("a", "b", 1),)
    assert (plan.arena_bytes, plain.arena_bytes) == (512, 768)
    assert plan.overwritten("a") and not plan.overwritten("b")
    assert "1 in place" in plan.summary()


def test_a_chain_of_in_place_pairs_is_one_block() -> None:
    ranges = [LiveRange(f"v{i}", 1000, i, i + 1) for i in range(6)]
    pairs = [InPlace(f"v{i}", f"v{i + 1}", i + 1) for i in range(5)]
    plan = assign_offsets(ranges, 256, pairs)
    assert set(plan.offsets.values()) == {0} and plan.arena_bytes == 1024
    assert assign_offsets(ranges, 256).arena_bytes == 2048
    assert [plan.overwritten(f"v{i}") for i in range(6)] == [True] * 5 + [False]


@pytest.mark.parametrize(
    ("ranges", "pair"),
    [
        # the input is read again at step 2
        ([("a", 256, 0, 2), ("b", 256, 1, 2)], InPlace("a", "b", 1)),
        # sizes differ
        ([("a", 256, 0, 1), ("b", 128, 1, 2)], InPlace("a", "b", 1)),
        # the output is written before the pair's step
        ([("a", 256, 0, 1), ("b", 256, 0, 2)], InPlace("a", "b", 1)),
        # empty values
        ([("a", 0, 0, 1), ("b", 0, 1, 2)], InPlace("a", "b", 1)),
        # the input is outside the arena (a feed)
        ([("b", 256, 1, 2)], InPlace("a", "b", 1)),
    ],
)
def test_pairs_that_are_not_allowed_are_not_taken(ranges, pair: InPlace) -> None:
    plan = assign_offsets([LiveRange(*r) for r in ranges], 256, [pair])
    assert plan.in_place == () and plan.declared == {pair}


def test_an_input_goes_to_one_output_and_an_output_takes_one_input() -> None:
    ranges = [
        LiveRange("a", 256, 0, 1),
        LiveRange("w", 256, 0, 1),
        LiveRange("b", 256, 1, 2),
        LiveRange("c", 256, 1, 2),
    ]
    pairs = [InPlace("a", "b", 1), InPlace("a", "c", 1), InPlace("w", "b", 1)]
    plan = assign_offsets(ranges, 256, pairs)
    assert plan.in_place == (InPlace("a", "b", 1),)
    assert len(set(plan.offsets.values())) == 3


def _in_place_plan(*values, pairs=(), declared=None) -> MemoryPlan:
    plan = _plan(256, *values)
    plan.in_place = tuple(pairs)
    plan.declared = frozenset(pairs if declared is None else declared)
    return plan


def test_check_plan_accepts_a_declared_in_place_pair() -> None:
    check_plan(
        _in_place_plan(("a", 256, 0, 1, 0), ("b", 256, 1, 2, 0), pairs=[InPlace("a", "b", 1)])
    )


@pytest.mark.parametrize(
    ("values", "pair", "declared", "why"),
    [
        ((("a", 256, 0, 1, 0), ("b", 256, 1, 2, 0)), None, None, "live together"),
        ((("a", 256, 0, 1, 0), ("b", 256, 1, 2, 0)), InPlace("a", "b", 1), (), "not declared"),
        ((("a", 256, 0, 2, 0), ("b", 256, 1, 2, 0)), InPlace("a", "b", 1), None, "until step 2"),
        ((("a", 256, 0, 1, 0), ("b", 128, 1, 2, 0)), InPlace("a", "b", 1), None, "256 bytes"),
        ((("a", 256, 0, 1, 0), ("b", 256, 1, 2, 256)), InPlace("a", "b", 1), None, "offset"),
        ((("a", 256, 0, 1, 0), ("b", 256, 1, 2, 0)), InPlace("a", "b", 2), None, "until step 1"),
        ((("b", 256, 1, 2, 0),), InPlace("a", "b", 1), None, "outside the arena"),
    ],
)
def test_check_plan_rejects_bad_in_place_pairs(values, pair, declared, why) -> None:
    pairs = [] if pair is None else [pair]
    with pytest.raises(MemoryPlanError, match=why):
        check_plan(_in_place_plan(*values, pairs=pairs, declared=declared))


def test_check_plan_rejects_an_output_in_two_pairs() -> None:
    pairs = [InPlace("a", "c", 1), InPlace("b", "c", 1)]
    plan = _in_place_plan(
        ("a", 256, 0, 1, 0), ("b", 256, 0, 1, 0), ("c", 256, 1, 2, 0), pairs=pairs
    )
    with pytest.raises(MemoryPlanError, match="more than one pair"):
        check_plan(plan)


def test_a_pair_that_stays_in_place_still_overlaps_nothing_else() -> None:
    """The pair's exemption is for its two values only: a third value in those bytes
    at the pair's step is an overlap."""
    plan = _in_place_plan(
        ("a", 256, 0, 1, 0),
        ("b", 256, 1, 2, 0),
        ("c", 256, 1, 1, 0),
        pairs=[InPlace("a", "b", 1)],
    )
    with pytest.raises(MemoryPlanError, match="live together"):
        check_plan(plan)


def test_plan_memory_takes_pairs_only_where_the_input_dies() -> None:
    """Steps: 0 writes a (from the feed x); 1 writes b over a; 2 writes c over b, but b
    is a program output, so c gets its own bytes; x is a feed, outside."""
    t = DenseTensorType.get(DataType.FLOAT32, (64,))
    steps = [(["x"], ["a"]), (["a"], ["b"]), (["b"], ["c"])]
    pairs = [[("x", "a")], [("a", "b")], [("b", "c")]]
    plan = plan_memory(steps, dict.fromkeys("xabc", t), ["x"], ["b", "c"], 256, pairs)
    assert plan.in_place == (InPlace("a", "b", 1),)
    assert plan.offsets["a"] == plan.offsets["b"] != plan.offsets["c"]
    assert plan.outside == ("x",)


@st.composite
def in_place_cases(draw: st.DrawFn) -> tuple[list[LiveRange], list[InPlace]]:
    ranges = draw(live_ranges())
    pairs = []
    for _ in range(draw(st.integers(0, 20))):
        if not ranges:
            break
        x, y = draw(st.sampled_from(ranges)), draw(st.sampled_from(ranges))
        step = draw(st.sampled_from([x.end, y.start, x.start]))
        pairs.append(InPlace(x.name, y.name, step))
    # also pairs made to be eligible: y written where x dies, same size
    for x in ranges[: draw(st.integers(0, len(ranges)))]:
        y = LiveRange(f"{x.name}_next", x.nbytes, x.end, x.end + draw(st.integers(0, 4)))
        ranges.append(y)
        pairs.append(InPlace(x.name, y.name, x.end))
    return ranges, pairs


@settings(max_examples=200, deadline=None)
@given(in_place_cases(), st.sampled_from([1, 64, 256]))
def test_random_in_place_plans_share_bytes_only_within_a_pair(case, alignment: int) -> None:
    ranges, pairs = case
    plan = assign_offsets(ranges, alignment, pairs)
    check_plan(plan)
    taken = {(p.input, p.output) for p in plan.in_place}
    assert {(p.input, p.output, p.step) for p in plan.in_place} <= {
        (p.input, p.output, p.step) for p in pairs
    }
    for value in ranges:  # brute force: overlapping live values are a taken pair
        lo, hi = plan.offsets[value.name], plan.offsets[value.name] + value.nbytes
        for other in ranges:
            if other is value or not value.nbytes or not other.nbytes or not value.meets(other):
                continue
            other_lo = plan.offsets[other.name]
            if not (hi <= other_lo or other_lo + other.nbytes <= lo):
                pair = (
                    (value.name, other.name)
                    if value.start < other.start
                    else (other.name, value.name)
                )
                assert pair in taken, (value, other)
    assert plan.arena_bytes <= assign_offsets(ranges, alignment).arena_bytes


# ---- a chain of elementwise kernels ----------------------------------------------------------

CHAIN_OPS = ["relu", "exp", "tanh", "sigmoid", "abs", "scale"]


def _chain_text(shape: tuple[int, ...], kernels: int) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    dims = ",".join(map(str, shape))
    lines = [
        f'    (%0) = "pd_op.data" () {{dtype:float32,name:"x",place:Place(undefined:0),'
        f"shape:[{dims}]}} : () -> {t}"
    ]
    for i in range(kernels):
        op = CHAIN_OPS[i % 5]
        lines.append(f'    (%{i + 1}) = "pd_op.{op}" (%{i}) {{}} : ({t}) -> {t}')
    return "{\n" + "\n".join(lines) + "\n}\n"


@pytest.mark.parametrize("shape", [(1,), (3,), (7,), (33,), (129,), (1000,), (3, 7, 33)])
def test_a_chain_of_elementwise_kernels_runs_in_place(shape) -> None:
    """One group per op (each its own kernel, as tools/bench_host.py makes them): every
    kernel but the first (whose input is the feed) writes over its input, so the arena
    is one value's block where it was two, and the results are NumPy's."""
    kernels = 6
    program = parse_program(_chain_text(shape, kernels))
    groups = [
        make_group(f"group_{i}", [op], program)
        for i, op in enumerate(program.block)
        if op.name != "pd_op.data"
    ]
    scope = Scope("cuda-emu")
    runtime = PIRCompiler(program, "cuda-emu", scope).build(groups)
    plan = runtime.memory
    assert plan is not None
    check_plan(plan)
    assert len(plan.in_place) == kernels - 1, plan.in_place
    block = align(int(np.prod(shape)) * 4, plan.alignment)
    without = assign_offsets(plan.ranges.values(), plan.alignment)
    assert (plan.arena_bytes, without.arena_bytes) == (block, 2 * block)
    x = np.linspace(-2, 2, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    scope["var_0"].set(x)
    runtime.execute(scope)
    got = scope[f"var_{kernels}"].to_numpy()
    want = cinn_py.compile(program, target="reference").run({"x": x})[f"%{kernels}"]
    assert compare(got, np.asarray(want)).ok


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


@pytest.mark.parametrize("name", ["gpt2_block", "resnet_basic_block", "llama_decoder"])
def test_fetching_a_value_overwritten_in_place_gives_its_value(name: str) -> None:
    """The input of an in-place pair is overwritten by its output: fetched, the program
    compiles again with it pinned (so it is no pair's input) and it reads as on
    `reference`."""
    folder = FIXTURES / "models" / name
    if not folder.is_dir():
        pytest.skip(f"no fixture {name}")
    program = load_model(folder)
    feeds = load_npz(folder / "feeds.npz")
    exe = cinn_py.compile(program, target="cuda-emu")
    exe.run(feeds)
    plan = exe.memory
    assert plan is not None and plan.in_place, plan.summary()
    inputs = [p.input for p in plan.in_place if p.input.startswith("var_")]
    assert inputs and all(plan.overwritten(n) for n in inputs)
    fetch = [f"%{n.removeprefix('var_')}" for n in inputs]
    got = exe.run(feeds, fetch=fetch)
    want = cinn_py.compile(program, target="reference").run(feeds, fetch=fetch)
    for key in fetch:
        assert compare(np.asarray(got[key]), np.asarray(want[key])).ok, key
