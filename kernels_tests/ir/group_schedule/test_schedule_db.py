"""The schedule database (`schedule_db`): its file format and errors, where it is found,
the tactics taking its entries (and only entries that fit), the compile API and the
compiled-program cache key, and tools/tune.py writing one that the next compile reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from reduction_programs import lowered

import cinn_py
from cinn_py import cli
from cinn_py.driver import program_cache
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import CinnError, ScheduleDBError
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule, schedule_db
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB, ScheduleKey
from cinn_py.ir.group_schedule.tactics import RowTactic
from cinn_py.perf import binaries
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program
from cinn_py.pir.program import Program
from kernels_tests.tool_modules import load_tool

CUDA = TargetInfo.cuda()
ROW_KEY = ScheduleKey("row", 4, (("cols", 1024), ("rows", 8)))
"""The row tactic's key of a float32 softmax over [7, 1000]."""


def _softmax(shape=(7, 1000)) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=DataType.FLOAT32)
    b.op("pd_op.softmax", x, axis=-1)
    return program


SOFTMAX_TEXT = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[7,1000],stop_gradient:[true]} : () -> tensor<7x1000xf32>
    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<7x1000xf32>) -> tensor<7x1000xf32>
}
"""  # noqa: E501


def _file(entries, **top) -> str:
    data = {"format": 1, "arch": "sm_90", "written": {}, "entries": entries, **top}
    return json.dumps(data)


ENTRY = {"tactic": "row", "itemsize": 4, "bucket": {"rows": 8, "cols": 1024}, "knobs": {}}


def _entry(**changes):
    return {**ENTRY, "knobs": {"threads_per_row": 256, "rows_per_block": 1}, **changes}


# ---- the file -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "schedule database db.json: not JSON (Expecting property name"),
        ("[]", "expected a JSON object, got list"),
        (_file([], format=2), "format 2, this cinn_py reads format 1"),
        (_file([], arch="sm_80"), "arch 'sm_80', expected 'sm_90'"),
        (_file({}), "'entries' must be a list"),
        (_file([_entry(tactic="rows")]), "entry 0: tactic 'rows' is none of grid, column, row"),
        (_file([_entry(itemsize=3)]), "entry 0: itemsize 3 is none of (1, 2, 4, 8)"),
        (_file([_entry(bucket={"rows": 7})]), "entry 0: bucket rows = 7 is not a power of two"),
        (
            _file([_entry(knobs={"lanes": 4})]),
            "row has no knob 'lanes' (its knobs: threads_per_row",
        ),
        (
            _file([_entry(knobs={"threads_per_row": 0, "rows_per_block": 1})]),
            "knob threads_per_row = 0 is not a positive int",
        ),
        (_file([_entry(), _entry()]), "entry 1: a second entry for (row, 4-byte elements"),
    ],
)
def test_a_database_that_cannot_be_used_names_the_file_the_entry_and_why(text, message):
    with pytest.raises(ScheduleDBError) as info:
        schedule_db.parse(text, "db.json", "sm_90")
    assert message in str(info.value)


def test_write_and_load_round_trip(tmp_path):
    db = ScheduleDB("sm_90").with_entry(ROW_KEY, {"threads_per_row": 256, "rows_per_block": 1})
    db = db.with_entry(
        ScheduleKey("flat", 2, (("elements", 1024),)), {"threads": 128, "min_steps": 2}
    )
    path = tmp_path / "sm_90.json"
    db.write(path)
    back = schedule_db.load(path, "sm_90")
    assert dict(back.entries) == dict(db.entries)
    assert back.digest == db.digest and len(back.digest) == 16
    assert ScheduleDB("sm_90").digest == ""  # the empty database: the key of no file
    other = db.with_entry(ROW_KEY, {"threads_per_row": 512, "rows_per_block": 1})
    assert other.digest != db.digest
    noted = db.with_entry(ROW_KEY, db.entries[ROW_KEY], {"score": 0.9})
    assert noted.digest == db.digest  # notes are not what schedules


def test_where_the_database_is_found(tmp_path, monkeypatch):
    monkeypatch.setenv(schedule_db.ENV, str(tmp_path))
    assert len(schedule_db.database_for("sm_90")) == 0  # no file: empty, rules everywhere
    (tmp_path / "sm_90.json").write_text(_file([_entry()]))
    assert schedule_db.database_for("sm_90").lookup(ROW_KEY) == {
        "threads_per_row": 256,
        "rows_per_block": 1,
    }
    monkeypatch.setenv(schedule_db.ENV, "off")
    assert schedule_db.schedules_dir() is None and len(schedule_db.database_for("sm_90")) == 0
    monkeypatch.delenv(schedule_db.ENV)
    assert schedule_db.schedules_dir().name == "schedules"  # the checkout's


def test_a_damaged_database_fails_the_compile_call_with_its_name(tmp_path, monkeypatch):
    (tmp_path / "sm_90.json").write_text('{"format": 1, "arch": "sm_90", "entries": [1]}')
    monkeypatch.setenv(schedule_db.ENV, str(tmp_path))
    with pytest.raises(ScheduleDBError, match=r"sm_90.json: entry 0: expected an object"):
        cinn_py.compile(_softmax(), "cuda-emu")


# ---- the tactics taking entries -----------------------------------------------------------


def test_auto_schedule_takes_an_entry_that_fits_and_the_rules_elsewhere():
    func, pattern = lowered(_softmax())
    assert RowTactic().key(func, pattern) == ROW_KEY
    rules = auto_schedule(func, CUDA, pattern)
    assert rules.tuned is None and rules.launch.threads == 64

    knobs = {"threads_per_row": 256, "rows_per_block": 1}
    tuned = auto_schedule(
        func, CUDA, pattern, schedules=ScheduleDB("sm_90").with_entry(ROW_KEY, knobs)
    )
    assert tuned.tactic == "row" and tuned.tuned == knobs
    assert (tuned.launch.threads, tuned.launch.blocks) == (256, 7)

    # One entry, two functions of its bucket: [7, 999] walks 999 scalars (odd: no
    # vectors), so 1024 threads are among its candidates; [5, 600] walks 150 vectors of
    # 4, at most 256 threads: the entry does not fit, its rules decide.
    wide = {"threads_per_row": 1024, "rows_per_block": 1}
    db = ScheduleDB("sm_90").with_entry(ROW_KEY, wide)
    odd, odd_pattern = lowered(_softmax((7, 999)))
    assert RowTactic().key(odd, odd_pattern) == ROW_KEY
    assert auto_schedule(odd, CUDA, odd_pattern, schedules=db).launch.threads == 1024
    func5, pattern5 = lowered(_softmax((5, 600)))
    assert RowTactic().key(func5, pattern5) == ROW_KEY
    kept = auto_schedule(func5, CUDA, pattern5, schedules=db)
    assert kept.tuned is None
    assert kept.launch == auto_schedule(func5, CUDA, pattern5).launch


def test_a_symbolic_function_is_not_looked_up():
    text = SOFTMAX_TEXT.replace("shape:[7,1000]", "shape:[-1,1000]").replace(
        "tensor<7x1000xf32>", "tensor<-1x1000xf32>"
    )
    knobs = {"threads_per_row": 256, "rows_per_block": 1}
    db = ScheduleDB("sm_90").with_entry(ROW_KEY, knobs)
    compiler = PIRCompiler(
        parse_program(text), "cuda-emu", feed_shapes={"x": [7, 1000]}, schedules=db
    )
    (kernel,) = compiler.stages(until="scheduled").fused
    assert kernel.symbolic_dims_taken and kernel.scheduled.tuned is None


def test_compile_runs_the_tuned_schedule_and_keys_the_program_cache_on_it(tmp_path):
    knobs = {"threads_per_row": 256, "rows_per_block": 1}
    db = ScheduleDB("sm_90").with_entry(ROW_KEY, knobs)
    path = tmp_path / "sm_90.json"
    db.write(path)
    exe = cinn_py.compile(parse_program(SOFTMAX_TEXT), "cuda-emu", schedules=path)
    x = np.random.default_rng(0).standard_normal((7, 1000)).astype(np.float32)
    (got,) = exe.run({"x": x}).values()
    want = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(got, want / want.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    (kernel,) = exe.kernels
    assert kernel.block == (256, 1, 1)

    def key(schedules):
        compiler = PIRCompiler(parse_program(SOFTMAX_TEXT), "cuda-emu", schedules=schedules)
        return program_cache.program_key(compiler)

    assert key(db) != key(ScheduleDB("sm_90"))
    assert key(db) == key(path)


def test_the_cli_says_one_line_for_a_damaged_database(tmp_path):
    (tmp_path / "sm_90.json").write_text("{")
    program = tmp_path / "softmax.pir"
    program.write_text(SOFTMAX_TEXT)
    run = subprocess.run(
        [sys.executable, "-m", "cinn_py.cli", "run", str(program), "--target", "cuda-emu"],
        capture_output=True,
        text=True,
        env={**os.environ, schedule_db.ENV: str(tmp_path)},
    )
    assert run.returncode != 0
    assert "schedule database" in run.stderr and "not JSON" in run.stderr
    assert "Traceback" not in run.stderr


# ---- the tuner ----------------------------------------------------------------------------


@pytest.mark.skipif(not binaries.tools_available()[0], reason=binaries.tools_available()[1])
def test_the_tuner_writes_a_database_the_next_compile_reads(tmp_path, capsys):
    tune = load_tool("tune")
    out = tmp_path / "sm_90.json"
    argv = ["--cases", "softmax", "--dtypes", "float32", "--shapes", "7x1000", "--out", str(out)]
    assert tune.main([*argv, "--all", "--time", "0"]) == 0
    printed = capsys.readouterr().out
    assert "row, 4-byte elements, cols <= 1024, rows <= 8" in printed
    db = schedule_db.load(out, "sm_90")
    assert db.written["by"] == "tools/tune.py" and db.written["ranked_by"].startswith("static")
    (key,) = db.entries
    assert key == ROW_KEY
    knobs = db.entries[key]
    assert db.notes[key]["workloads"] == ["softmax_f32_7x1000"]

    compiler = PIRCompiler(parse_program(SOFTMAX_TEXT), "cuda-emu", schedules=out)
    (kernel,) = compiler.stages(until="scheduled").fused
    assert kernel.scheduled.tuned == knobs
    assert kernel.scheduled.launch.threads == knobs["threads_per_row"] * knobs["rows_per_block"]


def test_the_cli_schedules_with_a_database_file(tmp_path, capsys):
    path = tmp_path / "tuned.json"
    ScheduleDB("sm_90").with_entry(ROW_KEY, {"threads_per_row": 256, "rows_per_block": 1}).write(
        path
    )
    program = tmp_path / "softmax.pir"
    program.write_text(SOFTMAX_TEXT)
    argv = ["ir", str(program), "--stage", "scheduled", "--target", "cuda-emu"]
    assert cli.main([*argv, "--schedules", str(path)]) == 0
    out = capsys.readouterr().out
    assert "// tactic: row, tuned threads_per_row=256 rows_per_block=1" in out
    assert "block (256, 1, 1)" in out
    assert cli.main([*argv, "--schedules", str(tmp_path / "missing.json")]) != 0
    assert "schedule database" in capsys.readouterr().err


class StandInTimer:
    """tools/tune.py's timer interface over made-up times: `seconds(knobs, round)`."""

    rounds = 5

    def __init__(self, seconds):
        self.seconds = seconds
        self.prepared: list = []
        self.sampled = 0
        self.released = 0

    def prepare(self, workload, key, knobs, arch):
        self.prepared.append(knobs)

        def sample():
            self.sampled += 1
            return self.seconds(knobs, self.sampled)

        return sample

    def release(self):
        self.released += 1


def _softmax_kernels(tune):
    bench = tune._bench()
    (case,) = tune.workloads(bench, ["softmax"], ["float32"], [(7, 1000)])
    kernels = tune.kernels_of(case, "sm_90")
    (kernel,) = kernels
    assert kernel.key == ROW_KEY and kernel.rule["threads_per_row"] == 64
    return kernels


def test_the_tuner_ranks_by_the_times_where_it_has_them():
    """The GPU path of tools/tune.py with a stand-in timer: every candidate timed (no
    static report) but the rules' own setting, the fastest against the rules' wins."""
    tune = load_tool("tune")
    kernels = _softmax_kernels(tune)
    fastest = {"threads_per_row": 128, "rows_per_block": 1}
    timer = StandInTimer(
        lambda knobs, n: 1.0 if knobs is None else 0.5 if knobs == fastest else 2.0
    )
    lines = []
    rules, best, trials = tune.tune_key(
        ROW_KEY, kernels, "sm_90", timer, keep=3, say=lines.append, static=False
    )
    assert best.knobs == fastest and best.timed_score(rules) == 0.5
    (own,) = [t for t in trials if t.same_as_rules]
    assert own.knobs == {"threads_per_row": 64, "rows_per_block": 1} and not own.seconds
    assert any(
        "threads_per_row=64, rows_per_block=1" in line and "the rules' own setting" in line
        for line in lines
    )
    candidates = len(kernels[0].candidates)
    assert timer.prepared[0] is None  # the rules first, then the others in ranked order
    others = sorted(str(t.knobs) for t in trials if not t.same_as_rules)
    assert sorted(str(knobs) for knobs in timer.prepared[1:]) == others
    assert len(timer.prepared) == candidates  # the rules once, every other candidate once
    assert timer.sampled == timer.rounds * candidates and timer.released == 1
    assert rules.seconds == [1.0]


def test_the_tuner_interleaves_its_samples_so_a_drift_falls_on_every_trial():
    """A device that gets faster as it warms up: timed one trial after another, the first
    (the rules') would look slowest; sampled in rounds, equal settings tie."""
    tune = load_tool("tune")
    kernels = _softmax_kernels(tune)
    timer = StandInTimer(lambda knobs, n: 1.0 + 10.0 / n)  # every setting the same speed
    rules, best, trials = tune.tune_key(
        ROW_KEY, kernels, "sm_90", timer, keep=3, say=lambda line: None, static=False
    )
    timed = [t for t in trials if t.seconds]
    scores = [t.timed_score(rules) for t in timed]
    assert 0.85 < min(scores) and max(scores) < 1.15, scores  # sequentially: 0.52 and less
    assert all(t.seconds for t in timed)


def test_the_gpu_timer_samples_the_device_alone(tmp_path, monkeypatch):
    """tools/tune.py's GpuTimer against the stand-in driver (no GPU): each trial compiled
    with its database entry, its inputs made once per workload, and a sample is one
    timed launch of a graph of many runs, divided by the runs."""
    from cinn_py.backends import stand_in_driver

    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path))
    tune = load_tool("tune")
    bench = tune._bench()
    kernels = _softmax_kernels(tune)
    timed = []

    class Backend:  # the CudaBackend's interface over the host: each sample 2 ms
        def __init__(self, xp):
            pass

        def device_name(self):
            return "stand-in"

        def synchronize(self):
            pass

        def run_compiled(self, exe, feeds, params):
            return exe.run(feeds, params=params or None)["out0"]

        def time(self, fn, repeat, budget):
            fn()
            timed.append(fn)
            return 2e-3, 1

        def free(self, torch):
            timed.append("free")

    monkeypatch.setattr(bench, "CudaBackend", Backend)
    checked = []

    def check(xp, got, want, dtype, scale):  # the stand-in runs no kernel: nothing to check
        checked.append((got.shape, want.shape, dtype))
        return bench.Check(True, "")

    monkeypatch.setattr(bench, "check", check)
    with stand_in_driver.installed(stand_in_driver.StandInDriver()) as fake:
        timer = tune.GpuTimer(bench, np, repeat=3, budget=0.1)
        timer.target = stand_in_driver.StandInCudaTarget()
        fastest = {"threads_per_row": 128, "rows_per_block": 1}
        sample = timer.prepare(kernels[0].workload, ROW_KEY, fastest, "sm_90")
        rules_sample = timer.prepare(kernels[0].workload, ROW_KEY, None, "sm_90")
        assert len(timer._inputs) == 1 and len(timer._kept) == 2  # one workload's inputs
        assert checked == [((7, 1000), (7, 1000), "float32")] * 2  # each output checked
        graphs_before = fake.graph_launches
        fake.launches.clear()
        seconds = sample()
        assert fake.graph_launches == graphs_before + 1
        runs = round(2e-3 / seconds)
        assert 1 <= runs <= bench.MAX_GRAPH_RUNS
        tuned_blocks = {tuple(launch["block"]) for launch in fake.launches}
        fake.launches.clear()
        rules_sample()
        rules_blocks = {tuple(launch["block"]) for launch in fake.launches}
        timer.release()
    assert timed[-1] == "free" and not timer._kept and not timer._inputs
    assert tuned_blocks == {(128, 1, 1)} and rules_blocks == {(64, 1, 1)}

    wrong = bench.Check(False, "max abs error 0.5")
    monkeypatch.setattr(bench, "check", lambda *args: wrong)
    with stand_in_driver.installed(stand_in_driver.StandInDriver()):
        timer = tune.GpuTimer(bench, np, repeat=3, budget=0.1)
        timer.target = stand_in_driver.StandInCudaTarget()
        with pytest.raises(CinnError, match=r"softmax_f32_7x1000, .*128.*: wrong: max abs error"):
            timer.prepare(kernels[0].workload, ROW_KEY, fastest, "sm_90")


def test_a_setting_wrong_on_the_device_is_never_timed_or_kept():
    tune = load_tool("tune")
    kernels = _softmax_kernels(tune)
    wrong = {"threads_per_row": 128, "rows_per_block": 1}

    class Timer(StandInTimer):
        def prepare(self, workload, key, knobs, arch):
            if knobs == wrong:
                raise CinnError("softmax_f32_7x1000, 128: wrong: max abs error 0.5")
            return super().prepare(workload, key, knobs, arch)

    timer = Timer(lambda knobs, n: 1.0 if knobs is None else 0.9 if knobs == wrong else 1.5)
    lines = []
    rules, best, trials = tune.tune_key(
        ROW_KEY, kernels, "sm_90", timer, keep=3, say=lines.append, static=False
    )
    (bad,) = [t for t in trials if t.knobs == wrong]
    assert "wrong: max abs error" in bad.problem and not bad.seconds
    assert best.knobs != wrong and best.timed_score(rules) == 1.5  # no entry: the rules win
    assert any("128, rows_per_block=1" in line and "dropped: " in line for line in lines)


@pytest.mark.skipif(not binaries.tools_available()[0], reason=binaries.tools_available()[1])
def test_with_a_gpu_the_tuner_times_what_the_model_calls_issue_heavy_but_memory_bound():
    """softmax float16 over rows of 4096: candidates issuing more than half their memory
    time in the model (most of them: 0.44 to 0.62 since its exp is MUFU.EX2 alone; 0.54
    to 0.72 before) are dropped on the static path; with a timer only those past their
    memory time would go, and the model's ties are timed least issue first."""
    tune = load_tool("tune")
    bench = tune._bench()
    (case,) = tune.workloads(bench, ["softmax"], ["float16"], [(8, 4096)])
    kernels = tune.kernels_of(case, "sm_90")
    timer = StandInTimer(lambda knobs, n: 1.0)
    lines = []
    rules, _, trials = tune.tune_key(
        kernels[0].key, kernels, "sm_90", timer, keep=3, say=lines.append
    )
    assert not any("dropped" in line for line in lines), lines
    ranked = [t for t in trials if not t.same_as_rules]
    streaming = [t for t in ranked if (t.knobs or {}).get("stream")]
    shares = [t.issue_share() for t in ranked if t not in streaming]
    assert all(share <= tune.MAX_ISSUE_TIMED for share in shares), shares
    heavy = [share for share in shares if share > tune.MAX_ISSUE]
    assert len(heavy) > len(shares) // 2, shares  # what the static path would drop
    # the rules' launch with the rows' loads evict-first: the model cannot tell it apart
    assert [t.knobs for t in streaming] == [
        {"threads_per_row": 128, "rows_per_block": 1, "stream": 1}
    ]
    assert streaming[0].issue_share() <= tune.MAX_ISSUE
    ranked.sort(key=lambda t: (t.static_score(rules), t.issue_share()))
    assert timer.prepared[0] is None  # the rules, then the model's best, least issue first
    assert timer.prepared[1:4] == [t.knobs for t in ranked[:3]]
    assert {"threads_per_row": 256, "rows_per_block": 1} in timer.prepared  # 0.54 (NVRTC 13.5)
    # and the best of every threads a row and rows a block: the model ties them
    for knob in ("threads_per_row", "rows_per_block"):
        values = {t.knobs[knob] for t in ranked}
        assert {k[knob] for k in timer.prepared[1:]} == values, knob


def test_the_tuner_merges_a_gpu_checks_run_into_the_database(tmp_path, capsys):
    """`tools/tune.py --merge gpu_out/bench.json`: the keys that run tuned lose the entry
    the checkout's file held and take the run's, where it has one; other keys stay."""
    tune = load_tool("tune")
    col_key = ScheduleKey("column", 4, (("cols", 1024), ("rows", 4096)))
    f16_key = ScheduleKey("row", 2, (("cols", 4096), ("rows", 4096)))
    out = tmp_path / "sm_90.json"
    mine = ScheduleDB("sm_90").with_entry(ROW_KEY, {"threads_per_row": 128, "rows_per_block": 1})
    mine.with_entry(col_key, {"threads_y": 4}).write(out)
    run = ScheduleDB(
        "sm_90",
        {f16_key: {"threads_per_row": 256, "rows_per_block": 1}},
        written={"by": "tools/tune.py", "keys": [k.to_json() for k in (ROW_KEY, f16_key)]},
        notes={f16_key: {"score": 0.93, "ranked_by": "timed on NVIDIA H200"}},
    )
    bench_json = tmp_path / "bench.json"
    bench_json.write_text(json.dumps({"cases": [], "tune": run.to_json()}))
    assert tune.main(["--merge", str(bench_json), "--out", str(out)]) == 0
    assert "merged" in capsys.readouterr().out
    merged = schedule_db.load(out, "sm_90")
    assert dict(merged.entries) == {  # ROW_KEY tuned, the rules won: its entry went
        col_key: {"threads_y": 4},
        f16_key: {"threads_per_row": 256, "rows_per_block": 1},
    }
    assert merged.notes[f16_key]["score"] == 0.93
    assert merged.written["merged_from"] == str(bench_json)
    bench_json.write_text('{"tune": {"format": 1, "arch": "sm_80", "entries": []}}')
    assert tune.main(["--merge", str(bench_json), "--out", str(out)]) == 2
    assert "arch 'sm_80', expected 'sm_90'" in capsys.readouterr().err
    bench_json.write_text("not json")
    assert tune.main(["--merge", str(bench_json), "--out", str(out)]) == 2
    assert f"schedule database {bench_json}: not JSON" in capsys.readouterr().err


def test_the_tuner_times_the_best_of_each_kind_of_schedule_and_of_each_knob_value_too():
    """The model cannot price a persistent grid or a prefetch, and ranks memory-bound
    candidates alike: beside the K it ranks first, the tuner times the best-ranked
    candidate of each kind (the knobs it sets), then the best holding a knob value none
    chosen holds (so 256 threads a row is timed even where only 128's settings lead)."""
    tune = load_tool("tune")
    one = {"threads_per_row": 128, "rows_per_block": 1}
    ranked = [
        tune.Trial(one | {"blocks_per_sm": 8}),
        tune.Trial(one | {"blocks_per_sm": 4}),
        tune.Trial(one),
        tune.Trial({"threads_per_row": 64, "rows_per_block": 1}),
        tune.Trial(one | {"blocks_per_sm": 4, "prefetch": 1}),
        tune.Trial({"threads_per_row": 256, "rows_per_block": 1}),
        tune.Trial({"threads_per_row": 256, "rows_per_block": 1, "blocks_per_sm": 4}),
        tune.Trial({"threads_per_row": 32, "rows_per_block": 2}),
        tune.Trial({"threads_per_row": 32, "rows_per_block": 4}),
        tune.Trial({"threads_per_row": 32, "rows_per_block": 8}),
    ]
    chosen = tune.to_time(ranked, keep=2)
    # first 2; kinds: one-block-a-row (2), prefetch (4); values: 64 (3), 256 (5),
    # 32 and rows 2 (7), rows 4 (8), rows 8 (9); 256 with 4 blocks adds no value
    assert [ranked.index(t) for t in chosen] == [0, 1, 2, 3, 4, 5, 7, 8, 9]
    assert tune.to_time(ranked, keep=10) == ranked
    assert tune.to_time(ranked[:1], keep=3) == ranked[:1]
    same = [tune.Trial(one | {"blocks_per_sm": 8}), tune.Trial(one | {"blocks_per_sm": 8})]
    assert len(tune.to_time(same, keep=1)) == 1  # a second of one kind and values: not timed


def test_the_tuner_times_an_arch_only_on_a_gpu_of_that_arch(tmp_path, monkeypatch, capsys):
    """`--arch sm_80` on an H100: its candidates built for sm_80 but timed on sm_90 would
    rank the H100's times; the tuner says so and stops (`--time 0` tunes it statically)."""
    tune = load_tool("tune")
    monkeypatch.setattr(tune, "gpu_timer", lambda *args: StandInTimer(lambda k, n: 1.0))
    monkeypatch.setattr(StandInTimer, "arch", "sm_90", raising=False)
    argv = ["--arch", "sm_80", "--cases", "softmax", "--out", str(tmp_path / "db.json")]
    assert tune.main(argv) == 2
    err = capsys.readouterr().err
    assert "the GPU here is sm_90, not --arch sm_80: tune it statically (--time 0)" in err
    assert not (tmp_path / "db.json").exists()


def test_the_tuners_line_gives_each_workloads_time_against_the_rules():
    """A key's kernels share one entry, scored by their mean: the line also says each
    workload's own ratio, where a setting would win for one op and lose for another."""
    tune = load_tool("tune")
    rules = tune.Trial(None, seconds=[1.0, 2.0, 4.0])
    trial = tune.Trial({"threads_per_row": 256, "rows_per_block": 1}, seconds=[1.1, 1.8, 4.0])
    line = tune._trial_line(trial, rules)
    assert "threads_per_row=256, rows_per_block=1" in line
    assert "timed 1.000 [1.100 0.900 1.000]" in line  # the mean hides both
    one = tune._trial_line(
        tune.Trial({"threads_per_row": 64}, seconds=[0.5]), tune.Trial(None, seconds=[1.0])
    )
    assert "timed 0.500" in one and "[" not in one


@pytest.mark.skipif(not binaries.tools_available()[0], reason=binaries.tools_available()[1])
def test_the_static_reports_are_the_same_from_worker_processes():
    """`static_reports` with 2 processes gives each trial's reports in order, as one
    process does."""
    tune = load_tool("tune")
    bench = tune._bench()
    (case,) = tune.workloads(bench, ["softmax"], ["float16"], [(8, 4096)])
    kernels = tune.kernels_of(case, "sm_90")
    key = kernels[0].key
    trials = [tune.Trial(None), *(tune.Trial(k) for k in kernels[0].candidates[:3])]
    serial = tune.static_reports(key, trials, kernels, "sm_90", jobs=1)
    parallel = tune.static_reports(key, trials, kernels, "sm_90", jobs=2)
    assert [[r.name for r in reports] for reports in parallel] == [
        [r.name for r in reports] for reports in serial
    ]
    for mine, theirs in zip(parallel, serial, strict=True):
        assert [(r.grid, r.block, r.resources) for r in mine] == [
            (r.grid, r.block, r.resources) for r in theirs
        ]
        assert [r.estimate for r in mine] == [r.estimate for r in theirs]
    assert len({(r[0].grid, r[0].block) for r in parallel}) == 4  # 4 settings, 4 launches
    assert not tune._JOBS  # nothing left for a later call


_PARENT = os.getpid()


def _dies_in_a_worker(index):
    """A report job that kills the worker process running it (as a crash would), and
    reports nothing wrong where it runs in the tuner's own process."""
    if os.getpid() != _PARENT:
        os._exit(3)
    return f"job {index} here"


def test_static_reports_are_built_here_when_a_worker_dies(monkeypatch):
    tune = load_tool("tune")
    monkeypatch.setattr(tune, "_report_or_why", _dies_in_a_worker)
    kernels = _softmax_kernels(tune)
    trials = [tune.Trial(None), tune.Trial({"threads_per_row": 128, "rows_per_block": 1})]
    found = tune.static_reports(ROW_KEY, trials, kernels, "sm_90", jobs=2)
    assert found == [["job 0 here"], ["job 1 here"]]
    assert not tune._JOBS
