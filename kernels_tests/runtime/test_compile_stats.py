"""Compile counts (`driver.compile_stats`) and the bound on the compiles a CompiledProgram
holds (`max_shapes`): compiles per feed shape, reuses, program-cache loads, kernel units
compiled or cached, eviction, `cinn-py run -v`, bad bounds."""

from __future__ import annotations

import gc
import re
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.cli import main
from cinn_py.driver import compile_stats, program_cache
from cinn_py.driver.compile_stats import CompileStats
from cinn_py.driver.compiled import CompiledProgram
from cinn_py.errors import CinnError

ROOT = Path(__file__).resolve().parents[2]
DYNAMIC = ROOT / "kernels_tests" / "fixtures" / "programs" / "dynamic_batch" / "program.pir"
SOFTMAX = ROOT / "examples" / "softmax_by_hand.pir"

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_api import expected, program, x_of  # noqa: E402  (the same -1 program)


def run_rows(exe: cinn_py.Executable, rows: int) -> None:
    x = x_of(rows)
    np.testing.assert_allclose(exe.run({"x": x})["%4"], expected(x), rtol=1e-5, atol=1e-6)


def counts(stats: CompileStats) -> tuple[int, ...]:
    """compiled, loaded, reused, evicted."""
    return stats.compiled, stats.loaded, stats.reused, stats.evicted


@pytest.fixture
def no_bound_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(compile_stats.MAX_SHAPES_ENV, raising=False)


@pytest.fixture
def program_cache_on(private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The compiled-program cache on, in the test's own cache folder."""
    monkeypatch.setenv(program_cache.SWITCH_ENV, "1")
    monkeypatch.delenv(program_cache.LIMIT_ENV, raising=False)
    monkeypatch.delenv("CINN_PY_DUMP_DIR", raising=False)
    return private_cache


def test_a_dynamic_program_compiles_once_per_shape_and_counts_reuses(private_cache, no_bound_env):
    exe = cinn_py.compile(program(), "cuda-emu")
    assert exe.compile_count == 0 and counts(exe.compile_stats) == (0, 0, 0, 0)
    for rows in (3, 5, 7):
        run_rows(exe, rows)
    run_rows(exe, 5)
    stats = exe.compile_stats
    assert exe.compile_count == stats.compiles == 3
    assert counts(stats) == (3, 0, 1, 0)
    # a cold kernel cache: the kernel takes the -1 dim as an argument (symbolic
    # kernels), so the three shapes share one unit, built once
    assert (stats.kernel_units_compiled, stats.kernel_units_cached) == (1, 2)
    assert exe.runner.max_shapes == compile_stats.DEFAULT_MAX_SHAPES == 32
    # the same program again: every stage runs, but the kernels come from the kernel cache
    again = cinn_py.compile(program(), "cuda-emu")
    run_rows(again, 7)
    assert counts(again.compile_stats) == (1, 0, 0, 0)
    assert (again.compile_stats.kernel_units_compiled, again.compile_stats.kernel_units_cached) == (
        0,
        1,
    )


def test_a_static_program_compiles_once_when_compiled():
    exe = cinn_py.compile(program(dynamic=False), "cuda-emu")
    assert exe.compile_count == 1 and counts(exe.compile_stats) == (1, 0, 0, 0)
    assert exe.compile_stats.kernel_units_compiled + exe.compile_stats.kernel_units_cached == 1
    run_rows(exe, 5)
    run_rows(exe, 5)
    assert exe.compile_count == 1 and counts(exe.compile_stats) == (1, 0, 2, 0)


def test_reference_compiles_nothing():
    exe = cinn_py.compile(program(), "reference")
    run_rows(exe, 3)
    assert exe.compile_count == 0 and exe.compile_stats == CompileStats()


def test_a_fetch_inside_a_kernel_is_a_compile_kept_with_its_shape(no_bound_env):
    exe = cinn_py.compile(program(), "cuda-emu", max_shapes=1)
    x = x_of(3)
    for _ in range(2):
        got = exe.run({"x": x}, fetch=["%2", "%4"])
        np.testing.assert_array_equal(got["%2"], np.maximum(x, 0))
        np.testing.assert_allclose(got["%4"], expected(x), rtol=1e-5, atol=1e-6)
    # the plain compile and the one with %2 pinned: both stay (one shape), reused after
    assert counts(exe.compile_stats) == (2, 0, 1, 0)
    run_rows(exe, 4)  # a new shape drops both compiles of the old one
    assert counts(exe.compile_stats) == (3, 0, 1, 2)


def test_the_program_cache_load_counts_as_loaded(program_cache_on, no_bound_env):
    first = CompiledProgram(program(dynamic=False), "cuda-emu")
    assert counts(first.stats) == (1, 0, 0, 0) and first.compile_count == 1
    assert (first.stats.kernel_units_compiled, first.stats.kernel_units_cached) == (1, 0)
    # a fresh CompiledProgram on the same program and cache folder: loaded, no stage run
    static = program(dynamic=False)
    second = CompiledProgram(static, "cuda-emu")
    assert counts(second.stats) == (0, 1, 0, 0) and second.compile_count == 1
    assert (second.stats.kernel_units_compiled, second.stats.kernel_units_cached) == (0, 1)
    assert program_cache.LOAD_TIMING in second.runtime_program.timings
    x = x_of(5)
    (got,) = second.run({"x": x}, None, static.outputs())
    np.testing.assert_allclose(got, expected(x), rtol=1e-5, atol=1e-6)


def _drop_and_check_freed(exe: cinn_py.Executable) -> None:
    """Run shapes 3, 5 (bound 2), keep weak references to the compile of 3, run 7: that
    compile is dropped and freed (its scope and runtime program with it)."""
    run_rows(exe, 3)
    runtime = exe.runtime_program
    gone = [weakref.ref(runtime), weakref.ref(runtime.scope)]
    del runtime
    run_rows(exe, 5)
    assert all(ref() is not None for ref in gone)
    run_rows(exe, 7)
    gc.collect()
    assert [ref() for ref in gone] == [None, None]
    assert exe.compile_stats.evicted == 1
    assert exe.runtime_program.scope["var_4"].shape == (7, 6)  # the latest stays


def test_max_shapes_evicts_the_least_recently_run_shape(no_bound_env):
    exe = cinn_py.compile(program(), "cuda-emu", max_shapes=2)
    assert exe.runner.max_shapes == 2
    _drop_and_check_freed(exe)
    assert counts(exe.compile_stats) == (3, 0, 0, 1)
    run_rows(exe, 7)  # held: reused
    run_rows(exe, 3)  # dropped: compiled again (drops 5, the least recently run)
    assert counts(exe.compile_stats) == (4, 0, 1, 2) and exe.compile_count == 4
    assert exe.runtime_program.scope["var_4"].shape == (3, 6)
    run_rows(exe, 7)  # still held
    run_rows(exe, 5)
    assert counts(exe.compile_stats) == (5, 0, 2, 3)


def test_an_evicted_shape_comes_back_from_the_program_cache(program_cache_on, no_bound_env):
    exe = cinn_py.compile(program(), "cuda-emu", max_shapes=2)
    _drop_and_check_freed(exe)
    run_rows(exe, 3)
    assert counts(exe.compile_stats) == (3, 1, 0, 2) and exe.compile_count == 4


def test_the_environment_sets_the_default_bound(monkeypatch):
    monkeypatch.setenv(compile_stats.MAX_SHAPES_ENV, "1")
    exe = cinn_py.compile(program(), "cuda-emu")
    assert exe.runner.max_shapes == 1
    run_rows(exe, 3)
    run_rows(exe, 4)
    assert counts(exe.compile_stats) == (2, 0, 0, 1)
    assert cinn_py.compile(program(), "cuda-emu", max_shapes=5).runner.max_shapes == 5


@pytest.mark.parametrize("target", ["cuda-emu", "reference"])
@pytest.mark.parametrize(
    ("bound", "message"),
    [
        (0, r"max_shapes=0: a compiled program must keep at least 1 compiled feed shape"),
        (-3, r"max_shapes=-3: a compiled program must keep at least 1"),
        (2.5, r"max_shapes=2.5: expected a whole number of feed shapes >= 1"),
        (True, r"max_shapes=True: expected a whole number"),
    ],
)
def test_a_bad_max_shapes_is_a_clear_error(no_bound_env, target, bound, message):
    with pytest.raises(CinnError, match=message):
        cinn_py.compile(program(), target, max_shapes=bound)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0", r"CINN_PY_MAX_SHAPES=0: a compiled program must keep at least 1"),
        ("many", r"CINN_PY_MAX_SHAPES='many': expected a whole number of feed shapes >= 1"),
    ],
)
def test_a_bad_environment_bound_is_a_clear_error(monkeypatch, text, message):
    monkeypatch.setenv(compile_stats.MAX_SHAPES_ENV, text)
    with pytest.raises(CinnError, match=message):
        CompiledProgram(program(), "cuda-emu")
    assert CompiledProgram(program(), "cuda-emu", max_shapes=np.int64(3)).max_shapes == 3


# ---- cinn-py run -v ----------------------------------------------------------------------------

COMPILES = re.compile(
    r"cinn-py: compiles: (\d+) \(compiled (\d+), loaded (\d+)\), reused (\d+), evicted (\d+); "
    r"kernel units: (\d+) compiled, (\d+) cached(?:; schedules: (\d+) made, (\d+) reused)?"
)


def _compiles_line(err: str) -> tuple[int, ...]:
    lines = [COMPILES.fullmatch(line) for line in err.splitlines()]
    found = [tuple(int(g or 0) for g in m.groups()) for m in lines if m is not None]
    assert len(found) == 1, err
    return found[0][:7]


def _schedules(err: str) -> tuple[int, int]:
    """(made, reused) of the compile counts line's schedules (0, 0 where it has none)."""
    lines = [COMPILES.fullmatch(line) for line in err.splitlines()]
    (found,) = [m for m in lines if m is not None]
    return int(found.group(8) or 0), int(found.group(9) or 0)


def test_run_verbose_prints_the_compile_counts(capsys, private_cache, no_bound_env):
    assert main(["run", str(DYNAMIC), "--target", "cuda-emu", "-v"]) == 0
    out, err = capsys.readouterr()
    # a -1 program: compiled on its run, one kernel unit, from a cold kernel cache
    assert _compiles_line(err) == (1, 1, 0, 0, 0, 1, 0)
    # its two kernels scheduled, and the row sum's aligned variant tried (its output
    # [S0] has the -1 dim innermost)
    assert _schedules(err) == (3, 0)
    assert err.startswith("cinn-py: cuda-emu: ") and " total " in err.splitlines()[0]
    # dynamic_batch: x[-1, 6]; both kernels take the -1 dim as their argument S0
    assert "cinn-py: symbolic kernels: 2 of 2 take -1 dims as arguments (S0)\n" in err
    assert main(["run", str(DYNAMIC), "--target", "cuda-emu", "--verbose"]) == 0
    out_again, err = capsys.readouterr()
    assert out_again == out and _compiles_line(err) == (1, 1, 0, 0, 0, 0, 1)
    # without -v: no compile counts, and the output is the same
    assert main(["run", str(DYNAMIC), "--target", "cuda-emu"]) == 0
    plain_out, err = capsys.readouterr()
    assert plain_out == out and "compiles:" not in err
    assert len(err.splitlines()) == 1 and err.startswith("cinn-py: ran on cuda-emu")


def test_run_verbose_counts_a_program_cache_load(capsys, program_cache_on, no_bound_env):
    assert main(["run", str(SOFTMAX), "--target", "cuda-emu", "-v"]) == 0
    _, err = capsys.readouterr()
    # a static program: compiled by `compile`, its run reuses it
    assert _compiles_line(err) == (1, 1, 0, 1, 0, 1, 0)
    assert _schedules(err) == (0, 0)  # nothing said of schedules without -1 dims
    assert "symbolic kernels" not in err  # nothing to say without -1 dims
    assert main(["run", str(SOFTMAX), "--target", "cuda-emu", "-v"]) == 0
    _, err = capsys.readouterr()
    assert _compiles_line(err) == (1, 0, 1, 1, 0, 0, 1)
    assert "cache_load " in err.splitlines()[0]


def test_specialized_kernels_compile_once_per_shape(private_cache, no_bound_env, monkeypatch):
    """CINN_PY_SPECIALIZE=1: every -1 dim compiled in, one kernel unit per shape."""
    monkeypatch.setenv("CINN_PY_SPECIALIZE", "1")
    exe = cinn_py.compile(program(), "cuda-emu")
    for rows in (3, 5, 7):
        run_rows(exe, rows)
    stats = exe.compile_stats
    assert (stats.kernel_units_compiled, stats.kernel_units_cached) == (3, 0)


SOFTMAX_F16 = """\
{
    (%0) = "pd_op.data" () {dtype:float16,name:"x",place:Place(undefined:0),shape:[-1,-1],stop_gradient:[true]} : () -> tensor<-1x-1xf16>
    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<-1x-1xf16>) -> tensor<-1x-1xf16>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (tensor<-1x-1xf16>) ->
}
"""


@pytest.mark.parametrize(("cols", "aligned"), [(64, True), (63, False)])
def test_run_verbose_says_when_an_aligned_variant_ran(
    capsys, tmp_path, private_cache, no_bound_env, cols, aligned
):
    program = tmp_path / "softmax.pir"
    program.write_text(SOFTMAX_F16)
    feeds = tmp_path / "feeds.npz"
    np.savez(feeds, x=np.random.default_rng(0).random((3, cols)).astype(np.float16))
    assert main(["run", str(program), "--feeds", str(feeds), "--target", "cuda-emu", "-v"]) == 0
    _, err = capsys.readouterr()
    line = "cinn-py: symbolic kernels: 1 of 1 take -1 dims as arguments (S0, S1)"
    variant = "; 1 ran as aligned variant(s), with vectors"
    assert f"{line}{variant if aligned else ''}\n" in err


# ---- one arena for every feed shape -------------------------------------------------------


def test_feed_shapes_share_one_arena_that_grows_when_it_must(private_cache, no_bound_env):
    """Each compile's intermediates are views of one arena (`runtime.arena_pool`), as
    large as the largest a compile needed: alternating shapes give the right numbers
    (a run rewrites what it reads), and a compile bound before the arena grew moves
    onto the new one at its next run."""
    model = cinn_py.load(ROOT / "kernels_tests" / "fixtures" / "models" / "llama_decoder")
    reference = cinn_py.compile(model, "reference")
    shapes = [(2, 7), (4, 300), (1, 3), (2, 7), (3, 100), (4, 300)]

    def feeds(batch, seq):
        rng = np.random.default_rng(batch * 1000 + seq)
        return {"hidden": rng.standard_normal((batch, seq, 16), dtype=np.float32)}

    alone = {}
    for shape in set(shapes):  # each shape's own arena, compiled alone
        exe = cinn_py.compile(model, "cuda-emu")
        exe.run(feeds(*shape))
        alone[shape] = exe.arena_bytes
    assert alone[(4, 300)] > alone[(3, 100)] > alone[(2, 7)] > 0

    exe = cinn_py.compile(model, "cuda-emu")
    pool = exe.runner.arena_pool
    for done, shape in enumerate(shapes, 1):
        got = exe.run(feeds(*shape))["out0"]
        want = reference.run(feeds(*shape))["out0"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert exe.arena_bytes == max(alone[s] for s in shapes[:done])
    assert exe.arena_bytes == max(alone.values())
    assert pool.grown == 2  # for (2, 7), then for (4, 300): the others fit
    scopes = [c.scope for variants in exe.runner._compiled.values() for c in variants.values()]
    assert len(scopes) == 4 and all(s.arena is pool.buffer for s in scopes)
