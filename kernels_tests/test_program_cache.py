"""The compiled-program cache (`driver.program_cache`): a second process gets its
RuntimeProgram without passes, grouping, lowering or scheduling; keys, damage, races,
unwritable folders, the switch, the size bound, the CLI; the CLI's progress bar."""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py import cli
from cinn_py.backends import cache
from cinn_py.cli_progress import StageBar, compile_progress
from cinn_py.driver import pir_compiler, program_cache
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import CacheWarning
from cinn_py.pir.passes import PassManager

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "kernels_tests" / "fixtures" / "programs"
MLP = PROGRAMS / "mlp_static"
"""Parameters, two matmuls (library calls or a fused epilogue), a decomposed softmax
(a renumbered output), a reduction."""
DYNAMIC = PROGRAMS / "dynamic_batch"


@pytest.fixture
def program_dir(private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The program cache on, in the test's own cache folder; its entries' folder."""
    monkeypatch.setenv(program_cache.SWITCH_ENV, "1")
    monkeypatch.delenv(program_cache.LIMIT_ENV, raising=False)
    monkeypatch.delenv("CINN_PY_DUMP_DIR", raising=False)
    return private_cache / program_cache.KIND


def _arrays(folder: Path, name: str) -> dict[str, np.ndarray]:
    path = folder / f"{name}.npz"
    return dict(np.load(path)) if path.exists() else {}


def _run(folder: Path, feeds_name: str = "feeds") -> tuple[cinn_py.Executable, dict]:
    program = cinn_py.load(str(folder / "program.pir"))
    exe = cinn_py.compile(program, "cuda-emu")
    outputs = exe.run(_arrays(folder, feeds_name), _arrays(folder, "params") or None)
    return exe, outputs


def _entries(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    entries = folder.glob(f"*{program_cache.SUFFIX}")
    return sorted(p for p in entries if not p.name.startswith(cache.TEMP_PREFIX))


def _forbid_compile_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every compile stage raises: a hit must run none of them."""

    def boom(*args, **kwargs):
        raise AssertionError("a compile stage ran on a cache hit")

    monkeypatch.setattr(PIRCompiler, "stages", boom)
    monkeypatch.setattr(PIRCompiler, "build", boom)
    monkeypatch.setattr(PassManager, "run", boom)
    for name in ("explain_grouping", "lower_group", "auto_schedule", "specialize_shapes"):
        monkeypatch.setattr(pir_compiler, name, boom)


# ---- hits ------------------------------------------------------------------------------------


SECOND_PROCESS = textwrap.dedent(
    """
    import sys, numpy as np, cinn_py
    from cinn_py.driver import pir_compiler
    from cinn_py.driver.pir_compiler import PIRCompiler
    from cinn_py.pir.passes import PassManager

    def boom(*args, **kwargs):
        raise AssertionError("a compile stage ran on a cache hit")

    if sys.argv[2] == "forbid":
        PIRCompiler.stages = PIRCompiler.build = PassManager.run = boom
        for name in ("explain_grouping", "lower_group", "auto_schedule", "specialize_shapes"):
            setattr(pir_compiler, name, boom)
    folder = sys.argv[1]
    program = cinn_py.load(folder + "/program.pir")
    exe = cinn_py.compile(program, "cuda-emu")
    feeds = dict(np.load(folder + "/feeds.npz"))
    params = dict(np.load(folder + "/params.npz"))
    outputs = exe.run(feeds, params)
    np.savez(sys.argv[3], **outputs)
    print(sorted(exe.timings))
    """
)


def _python(*args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", SECOND_PROCESS, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
        **kwargs,
    )


def test_a_second_process_loads_the_program_without_any_compile_stage(program_dir, tmp_path):
    first = _python(str(MLP), "allow", str(tmp_path / "first.npz"))
    assert first.returncode == 0, first.stderr
    assert "'passes'" in first.stdout and len(_entries(program_dir)) == 1
    second = _python(str(MLP), "forbid", str(tmp_path / "second.npz"))
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "['cache_load', 'total']"
    one, two = np.load(tmp_path / "first.npz"), np.load(tmp_path / "second.npz")
    assert sorted(one) == sorted(two)
    for name in one:
        np.testing.assert_array_equal(one[name], two[name])  # bit for bit


def test_a_hit_runs_no_stage_and_says_so_in_the_timings(program_dir, monkeypatch):
    fresh, expected = _run(MLP)
    assert "passes" in fresh.timings
    before = program_cache.stats.snapshot()
    _forbid_compile_stages(monkeypatch)
    exe, outputs = _run(MLP)
    assert set(exe.timings) == {"cache_load", "total"}
    assert (program_cache.stats.snapshot() - before).hits == 1
    for name in expected:
        np.testing.assert_array_equal(outputs[name], expected[name])
    assert [str(k) for k in exe.kernels] == [str(k) for k in fresh.kernels]
    assert [repr(g) for g in exe.groups] == [repr(g) for g in fresh.groups]
    assert exe.cuda_source == fresh.cuda_source
    assert exe.memory.offsets == fresh.memory.offsets


@pytest.mark.parametrize(
    "name",
    [
        "mlp_static",
        "concat_stack",
        "split_family",
        "attention_block",
        "op_topk",
        "op_conv2d",
        "fetch_explicit",
        "softmax_axes",
    ],
)
def test_a_loaded_program_is_the_compiled_one(program_dir, monkeypatch, name):
    """What an entry rebuilds describes itself exactly as the compile it came from
    (instructions, groups, storage, memory, program, ids), and runs to the same bits."""
    folder = PROGRAMS / name
    if not (folder / "program.pir").exists():
        pytest.skip(f"no fixture {name}")
    fresh, expected = _run(folder)
    if fresh.runner.dynamic:
        pytest.skip("compiled per feed shape")
    _forbid_compile_stages(monkeypatch)
    exe, outputs = _run(folder)
    assert set(exe.timings) == {"cache_load", "total"}
    for key in expected:
        np.testing.assert_array_equal(outputs[key], expected[key])
    monkeypatch.undo()
    described = [
        program_cache.describe("k", e.runtime_program) for e in (fresh, exe) if e is not None
    ]
    for document in described:
        document.pop("timings")
    assert described[0] == described[1]


# ---- keys ------------------------------------------------------------------------------------


def _key(program, target="cuda-emu", **kwargs) -> str:
    return program_cache.program_key(pir_compiler.PIRCompiler(program, target, **kwargs))


def test_the_key_covers_text_shapes_values_target_outputs_and_version(monkeypatch):
    program = cinn_py.load(str(DYNAMIC / "program.pir"))
    base = _key(program, feed_shapes={"x": (3, 6)})
    assert base == _key(program, feed_shapes={"x": (3, 6)})
    assert base != _key(program, feed_shapes={"x": (4, 6)})
    assert base != _key(program, "cuda", feed_shapes={"x": (3, 6)})
    assert base != _key(program, feed_shapes={"x": (3, 6)}, feed_values={"w": np.ones(6)})
    assert base != _key(program, feed_shapes={"x": (3, 6)}, arch="sm_80")
    text = str(program).replace('"pd_op.relu"', '"pd_op.sigmoid"')
    assert base != _key(cinn_py.pir.parser.parse_program(text), feed_shapes={"x": (3, 6)})
    pinned = pir_compiler.numbered_clone(program, program.outputs()[:1])
    assert base != _key(pinned, feed_shapes={"x": (3, 6)})
    monkeypatch.setattr(cinn_py, "__version__", "99.0")
    assert base != _key(program, feed_shapes={"x": (3, 6)})
    monkeypatch.undo()
    monkeypatch.setattr(program_cache, "code_digest", lambda: "another compiler")
    assert base != _key(program, feed_shapes={"x": (3, 6)})


def test_each_feed_shape_gets_its_own_entry(program_dir):
    program = cinn_py.load(str(DYNAMIC / "program.pir"))
    exe = cinn_py.compile(program, "cuda-emu")
    for rows in (2, 5):
        exe.run({"x": np.ones((rows, 6), np.float32), "w": np.ones(6, np.float32)})
    assert len(_entries(program_dir)) == 2
    again = cinn_py.compile(program, "cuda-emu")
    out = again.run({"x": np.ones((5, 6), np.float32), "w": np.ones(6, np.float32)})
    assert "cache_load" in again.timings
    np.testing.assert_array_equal(next(iter(out.values())), np.full(5, 6.0, np.float32))


# ---- damage ----------------------------------------------------------------------------------


def _damage_flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x01
    path.write_bytes(bytes(data))


def _damage_truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _damage_empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize("damage", [_damage_flip, _damage_truncate, _damage_empty])
def test_a_damaged_entry_is_warned_about_removed_and_compiled_again(
    program_dir, monkeypatch, damage
):
    _, expected = _run(MLP)
    [entry] = _entries(program_dir)
    damage(entry)
    with pytest.warns(CacheWarning, match=str(entry.name)):
        exe, outputs = _run(MLP)
    assert "passes" in exe.timings  # compiled, not loaded
    for name in expected:
        np.testing.assert_array_equal(outputs[name], expected[name])
    [again] = _entries(program_dir)
    assert cache.read_entry(again, again.stem) is not None  # rewritten, sound


def test_another_programs_entry_under_this_name_is_not_trusted(program_dir):
    _run(MLP)
    _run(PROGRAMS / "concat_stack")
    mlp_key = program_cache.program_key(
        pir_compiler.PIRCompiler(
            pir_compiler.numbered_clone(cinn_py.load(str(MLP / "program.pir"))), "cuda-emu"
        )
    )
    mine = program_dir / f"{mlp_key}{program_cache.SUFFIX}"
    other = next(p for p in _entries(program_dir) if p != mine)
    mine.write_bytes(other.read_bytes())
    with pytest.warns(CacheWarning, match="another key"):
        exe, _ = _run(MLP)
    assert "passes" in exe.timings


def test_a_sealed_entry_that_describes_no_program_is_rejected(program_dir):
    _run(MLP)
    [entry] = _entries(program_dir)
    document = json.loads(cache.read_entry(entry, entry.stem))
    document["instructions"][0]["kind"] = "kernel"
    document["instructions"][0].pop("args", None)
    document["storage"]["variables"][0][3] = "tensor<1x1xf64>"  # the wrong type
    cache.write_entry(entry, entry.stem, json.dumps(document).encode())
    with pytest.warns(CacheWarning, match="does not describe a compiled program"):
        exe, _ = _run(MLP)
    assert "passes" in exe.timings
    [again] = _entries(program_dir)
    assert json.loads(cache.read_entry(again, again.stem))["storage"]["variables"][0][3] != (
        "tensor<1x1xf64>"
    )


def test_an_entry_is_json_never_code(program_dir):
    _run(MLP)
    [entry] = _entries(program_dir)
    document = json.loads(cache.read_entry(entry, entry.stem).decode("utf-8"))
    assert document["format"] == program_cache.FORMAT and document["key"] == entry.stem
    assert document["target"] == "cuda-emu" and document["cuda_source"].strip()


# ---- concurrency, kills ----------------------------------------------------------------------


def test_two_processes_compiling_one_program_at_once_both_succeed_and_write_one_entry(
    program_dir, tmp_path
):
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SECOND_PROCESS, str(MLP), "allow", str(tmp_path / f"{i}.npz")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        assert "CacheWarning" not in err
    assert len(_entries(program_dir)) == 1
    assert not [p for p in program_dir.iterdir() if p.name.startswith(cache.TEMP_PREFIX)]
    one, two = np.load(tmp_path / "0.npz"), np.load(tmp_path / "1.npz")
    for name in one:
        np.testing.assert_array_equal(one[name], two[name])


KILLED_WRITER = textwrap.dedent(
    """
    import os, sys, time, numpy as np, cinn_py
    real = os.replace
    def slow_replace(src, dst):
        if str(dst).endswith(".json"):
            print("writing", flush=True)
            time.sleep(60)
        real(src, dst)
    os.replace = slow_replace
    cinn_py.compile(cinn_py.load(sys.argv[1] + "/program.pir"), "cuda-emu")
    """
)


def test_a_compile_killed_while_writing_leaves_no_entry(program_dir):
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(MLP)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "writing"
        temporary = [p for p in program_dir.iterdir() if p.name.startswith(cache.TEMP_PREFIX)]
        assert temporary  # the whole entry is in a temporary file, not yet in place
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    assert _entries(program_dir) == []
    exe, _ = _run(MLP)  # compiled again, and stored
    assert "passes" in exe.timings and len(_entries(program_dir)) == 1


# ---- unwritable folders, the switch ------------------------------------------------------------


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC, errno.EACCES])
def test_a_folder_that_cannot_be_written_warns_and_compiles_uncached(
    program_dir, monkeypatch, code
):
    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    _run(MLP)  # the kernels are cached; then the program entries cannot be written
    for entry in _entries(program_dir):
        entry.unlink()
    monkeypatch.setattr(program_cache, "_lock", refuse)  # its lock file cannot be made
    with pytest.warns(CacheWarning) as caught:
        exe, outputs = _run(MLP)
    message = " ".join(str(w.message) for w in caught)
    assert str(program_dir.parent) in message and "CINN_PY_CACHE_DIR" in message
    assert os.strerror(code) in message
    assert "passes" in exe.timings and outputs
    assert _entries(program_dir) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_warns_and_compiles_uncached(program_dir):
    _run(MLP)  # kernels cached; then the program entries' folder is made read-only
    for entry in _entries(program_dir):
        entry.unlink()
    program_dir.chmod(0o555)
    try:
        with pytest.warns(CacheWarning, match="CINN_PY_CACHE_DIR"):
            exe, outputs = _run(MLP)
    finally:
        program_dir.chmod(0o755)
    assert "passes" in exe.timings and outputs


def test_cinn_py_cache_0_bypasses_the_program_cache(program_dir, monkeypatch):
    monkeypatch.setenv(program_cache.SWITCH_ENV, "0")
    for _ in range(2):
        exe, _ = _run(MLP)
        assert "passes" in exe.timings
    assert _entries(program_dir) == []


def test_a_dump_runs_every_stage(program_dir, monkeypatch, tmp_path):
    _run(MLP)
    monkeypatch.setenv("CINN_PY_DUMP_DIR", str(tmp_path / "dump"))
    exe, _ = _run(MLP)
    assert "passes" in exe.timings
    assert list((tmp_path / "dump").glob("*/groups.txt"))


# ---- the size bound ----------------------------------------------------------------------------


def test_least_recently_used_entries_go_first(program_dir):
    program_dir.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for age, name in enumerate(["c", "b", "a"]):  # a oldest
        path = program_dir / f"{name}{program_cache.SUFFIX}"
        path.write_bytes(b"x" * 100)
        os.utime(path, (now - 100 * age, now - 100 * age))
    os.utime(program_dir / f"a{program_cache.SUFFIX}")  # a hit touches it
    assert program_cache.evict(200) == 1
    assert [p.stem for p in _entries(program_dir)] == ["a", "c"]
    writing = program_dir / f"{cache.TEMP_PREFIX}d{program_cache.SUFFIX}"
    writing.write_bytes(b"x" * 1000)  # a writer's temporary file is no entry
    assert program_cache.evict(200) == 0 and writing.exists()
    assert program_cache.evict(0, keep=program_dir / f"c{program_cache.SUFFIX}") == 1
    assert [p.stem for p in _entries(program_dir)] == ["c"]


def test_a_store_evicts_past_the_bound_but_keeps_its_own_entry(program_dir, monkeypatch):
    monkeypatch.setenv(program_cache.LIMIT_ENV, "0")
    _run(MLP)
    [first] = _entries(program_dir)
    _run(PROGRAMS / "concat_stack")
    [second] = _entries(program_dir)
    assert first != second


def test_a_hit_touches_its_entry(program_dir):
    _run(MLP)
    [entry] = _entries(program_dir)
    os.utime(entry, (1, 1))
    _run(MLP)
    assert entry.stat().st_mtime > 1


# ---- the CLI -----------------------------------------------------------------------------------


def test_cache_info_lists_program_entries_and_clear_removes_them(program_dir, capsys):
    _run(MLP)
    assert cli.main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "  program " in out and ".locks" not in out
    assert cli.main(["cache", "clear", "--kind", "program"]) == 0
    assert "removed 1 entry of kind 'program'" in capsys.readouterr().out
    assert _entries(program_dir) == []


def test_run_no_cache_neither_loads_nor_stores(program_dir, capsys):
    program = str(MLP / "program.pir")
    assert cli.main(["run", program, "--target", "cuda-emu", "--no-cache", "-v"]) == 0
    assert _entries(program_dir) == []
    assert cli.main(["run", program, "--target", "cuda-emu", "-v"]) == 0
    assert "passes" in capsys.readouterr().err
    assert len(_entries(program_dir)) == 1
    assert cli.main(["run", program, "--target", "cuda-emu", "-v"]) == 0
    assert "cache_load" in capsys.readouterr().err
    assert cli.main(["run", program, "--target", "cuda-emu", "--no-cache", "-v"]) == 0
    assert "passes" in capsys.readouterr().err


def test_the_default_folder_honours_xdg_cache_home(monkeypatch, tmp_path):
    if sys.platform != "linux":
        pytest.skip("XDG_CACHE_HOME is the Linux rule")
    monkeypatch.delenv("CINN_PY_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "cinn_py"
    assert program_cache.entry_path("k").parent == tmp_path / "xdg" / "cinn_py" / "program"


# ---- the progress bar --------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_shows_on_a_terminal_after_its_delay():
    stream = FakeTerminal()
    with compile_progress(stream, delay=0.0) as bar:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert isinstance(bar, StageBar)
            pir_compiler.PIRCompiler(cinn_py.load(str(MLP / "program.pir")), "cuda-emu").build()
    text = stream.getvalue()
    assert "cinn-py: compiling" in text and "scheduling" in text and "6/6" in text


def test_no_progress_bar_off_a_terminal_or_for_a_quick_compile():
    quiet = io.StringIO()
    with compile_progress(quiet, delay=0.0) as bar:
        assert bar is None
        pir_compiler.PIRCompiler(cinn_py.load(str(MLP / "program.pir")), "cuda-emu").build()
    assert quiet.getvalue() == ""
    quick = FakeTerminal()
    with compile_progress(quick, delay=3600.0):
        pir_compiler.PIRCompiler(cinn_py.load(str(MLP / "program.pir")), "cuda-emu").build()
    assert quick.getvalue() == ""


def test_run_draws_the_bar_on_a_terminal_stderr(program_dir, monkeypatch, capsys):
    terminal = FakeTerminal()
    monkeypatch.setattr("cinn_py.cli_progress.DELAY_S", 0.0)
    monkeypatch.setattr(sys, "stderr", terminal)
    program = str(MLP / "program.pir")
    assert cli.main(["run", program, "--target", "cuda-emu", "--no-cache"]) == 0
    assert "cinn-py: compiling" in terminal.getvalue()


def test_a_split_program_is_stored_as_its_units_and_reloads_them_from_the_kernel_cache(
    program_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program of more distinct kernels than a unit holds is compiled as several
    units; its entry keeps them, and a hit compiles the same units under the same names:
    kernel-cache hits only, no compile stage."""
    from cinn_py.driver import compile_pool
    from cinn_py.runtime.module_set import ModuleSet
    from kernels_tests.runtime.test_compile_pool import WIDTHS
    from kernels_tests.runtime.test_kernel_sharing import check_against_reference, layers

    monkeypatch.setattr(compile_pool, "UNIT_SIZE", 2)
    program = layers(5, WIDTHS)
    first = cinn_py.compile(program, "cuda-emu")
    assert len(first.runtime_program.cuda_units) == 3
    assert len(_entries(program_dir)) == 1
    _forbid_compile_stages(monkeypatch)
    before = cache.stats.snapshot()
    again = cinn_py.compile(layers(5, WIDTHS), "cuda-emu")
    counts = cache.stats.snapshot() - before
    assert "cache_load" in again.timings
    assert counts.misses == 0 and counts.hits >= 3
    assert again.runtime_program.cuda_units == first.runtime_program.cuda_units
    module = again.kernels[0].module
    assert isinstance(module, ModuleSet) and len(module.modules) == 3
    check_against_reference(program, again)


def test_the_key_says_whether_dims_are_kernel_arguments(monkeypatch):
    """A program compiled with symbolic kernels and one compiled with CINN_PY_SPECIALIZE=1
    are different programs: neither is loaded for the other."""
    program = cinn_py.load(
        Path(__file__).parent / "fixtures" / "programs" / "dynamic_batch" / "program.pir"
    )
    monkeypatch.delenv("CINN_PY_SPECIALIZE", raising=False)
    symbolic = program_cache.program_key(
        PIRCompiler(program, "cuda-emu", feed_shapes={"x": (3, 6)})
    )
    monkeypatch.setenv("CINN_PY_SPECIALIZE", "1")
    specialized = program_cache.program_key(
        PIRCompiler(program, "cuda-emu", feed_shapes={"x": (3, 6)})
    )
    assert symbolic != specialized
