"""The tuner: `schedules/<arch>.json` from the static report, and from CUDA events on a GPU.

    python tools/tune.py [--cases softmax,transpose] [--dtypes float32,float16]
                         [--shapes 4096x4096,...] [--arch sm_90] [--out FILE]
                         [--time K] [--min-gain 0.02] [--all] [--list]

For each workload (a family of tools/bench.py at each of its tuning shapes and dtypes:
row reductions (softmax, layer_norm, rms_norm, reduce_sum_rows), column reductions,
reduce-all, elementwise, transpose) the tuner compiles the program with the tactics'
rules, and for every kernel asks its tactic for the key a schedule database files it
under (`Tactic.key`: tactic, narrowest element size, shape bucket) and the settings it
can take (`Tactic.candidates`). Kernels of one key (softmax and layer_norm of one
shape and dtype share the row tactic's key) are tuned together, over the candidates
they all take:

1. each candidate is compiled for `--arch` by NVRTC as the only entry of a database
   (`cinn_py.perf.perf_report(..., schedules=)`) and read back: candidates with spills,
   or issuing more than half their memory time where the rules' do not (with a GPU to
   time on: more than their memory time), are dropped;
2. the rest are ranked by the static model's time summed over the key's kernels,
   each against the rules' (`score`: 1.0 is the rules' time), ties by the least
   issue / memory time; the rules' own setting is not ranked (it is the baseline);
3. with a GPU (`--time K`, default 3 there, 0 elsewhere) the best K, the best of
   each kind of schedule not among them (`to_time`: a persistent grid, one that
   prefetches: what the model cannot price), the best holding each knob value none of
   those holds (every threads a row, ...: the model ranks memory-bound candidates
   alike) and the rules' are compiled for `cuda`
   and timed on the device alone (`GpuTimer`: a CUDA graph of many runs between CUDA
   events) in interleaved rounds (`time_trials`), and the times rank them instead. Where cuobjdump / nvdisasm are missing (a device image without
   the `test` extra), step 1 and 2 are skipped and every candidate is timed.

A key gets an entry where its winner beats the rules by `--min-gain` (default 2%) or
more, else none (the rules stay, and an entry the file held for it goes); `--all`
writes every key's winner, the rules' own choice included. Other keys' entries in the
file are kept. The file records how it was ranked (`written`), and each entry the
workloads, the rules' knobs and the scores. The tactics read it on the next compile
(docs/AUTO_SCHEDULE.md, "The schedule database"); `CINN_PY_SCHEDULES` points them to
another folder, or `off`.

Matrix multiplications are not tuned here: they are cuBLASLt calls (nvmath-python),
whose own heuristics choose the algorithm and fuse the epilogue.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import multiprocessing
import os
import statistics
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cinn_py.backends import nvrtc
from cinn_py.driver.tunable import tunable_kernels
from cinn_py.errors import CinnError, ScheduleDBError
from cinn_py.ir.group_schedule.schedule_db import (
    ScheduleDB,
    ScheduleKey,
    key_from_json,
    load,
    parse,
    schedules_dir,
)
from cinn_py.perf import binaries, perf_report
from cinn_py.perf.occupancy import spec_for
from cinn_py.perf.report import DEFAULT_ARCH, KernelReport
from cinn_py.pir.parser import parse_program
from cinn_py.targets.device import gpu_facts

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf_report import _bench  # noqa: E402  (tools/ is not a package)

MAX_ISSUE = 0.5
"""Without a GPU, a candidate issuing more than this fraction of its memory time is
dropped (where the rules' choice does not: then it only has to do no worse)."""
MAX_ISSUE_TIMED = 1.0
"""With a GPU to time on, only candidates the model has issuing longer than their
memory time are dropped: the first timed run (H200, 2026-11-27) found every float16
[4096, 4096] row candidate but the rules' own at 0.64 to 0.92 and dropped, so the key
the GPU most needed to rank had nothing left to time."""

TUNE_SHAPES: dict[str, list[tuple[int, ...]]] = {
    "add_relu_mul": [(2**20,), (2**24,), (64 * 2**20,)],
    "softmax": [(4096, 1024), (4096, 4096), (16384, 8192), (1024, 32768)],
    "layer_norm": [(4096, 1024), (4096, 4096), (16384, 8192)],
    "rms_norm": [(4096, 1024), (4096, 4096), (16384, 8192)],
    "transpose": [(4096, 4096), (8192, 8192)],
    "reduce_sum_rows": [(8192, 8192), (65536, 256)],
    "reduce_sum_cols": [(8192, 8192), (1024, 4096)],
    "reduce_sum_all": [(8192, 8192), (1024, 1024)],
}
"""The shapes each family is tuned at (the bench's among them)."""

DTYPES = ("float32", "float16")


@dataclass
class Kernel:
    """One kernel of a workload to tune: where it is, its tactic's key and settings."""

    workload: Any
    """A tools/bench.py Case at a tuning shape."""
    group: str
    key: ScheduleKey
    candidates: list[dict[str, int]]
    rule: dict[str, int]
    """What the tactic's rules decided (`Tactic.knobs`), for the record."""


@dataclass
class Trial:
    """One candidate of a key over the key's kernels."""

    knobs: dict[str, int] | None
    """None: the rules."""
    reports: list[KernelReport | None] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    """Measured times (a GPU), one per kernel's workload."""
    problem: str = ""
    same_as_rules: bool = False
    """The rules' own setting for every kernel of the key: not ranked or timed again (it
    is the baseline; timing it twice only measures the noise)."""

    def static_score(self, rules: Trial) -> float:
        """The model's time over the rules', averaged over the kernels (1.0: the rules)."""
        mine = [r.estimate.time_s if r else None for r in self.reports]
        return _mean_ratio(mine, [r.estimate.time_s if r else None for r in rules.reports])

    def issue_share(self) -> float:
        """The largest issue / memory time of its kernels (0 without reports): between
        candidates the model times alike (all memory-bound), the one issuing least
        goes first."""
        return max((r.estimate.issue_over_memory for r in self.reports if r), default=0.0)

    def timed_score(self, rules: Trial) -> float:
        """The measured time over the rules', averaged over the kernels."""
        return _mean_ratio(self.seconds, rules.seconds)


def _mean_ratio(mine: Sequence[float | None], theirs: Sequence[float | None]) -> float:
    """The mean of mine / theirs over the pairs both have (inf for none)."""
    ratios = [a / b for a, b in zip(mine, theirs, strict=True) if a is not None and b]
    return sum(ratios) / len(ratios) if ratios else math.inf


def workloads(bench: Any, families: Sequence[str], dtypes: Sequence[str], shapes: Any) -> list:
    """The bench's cases at every tuning shape of `families` (all for none), in `dtypes`."""
    chosen = list(families) or list(TUNE_SHAPES)
    found = []
    for name in chosen:
        if name not in bench.FAMILIES:
            raise SystemExit(f"tune.py: no family '{name}'; families: {', '.join(TUNE_SHAPES)}")
        family = bench.FAMILIES[name]
        for shape in shapes or TUNE_SHAPES.get(name, []):
            for dtype in dtypes:
                found.append(bench.Case(family, tuple(shape), dtype, tuple(shape)))
    return found


def kernels_of(case: Any, arch: str) -> list[Kernel]:
    """The kernels of `case` a tactic can tune, with the rules' schedule."""
    program = parse_program(case.program_text)
    return [
        Kernel(case, k.group, k.key, k.candidates, k.rule)
        for k in tunable_kernels(program, "cuda", arch=arch)
    ]


def _report(case: Any, group: str, arch: str, db: ScheduleDB) -> KernelReport:
    report = perf_report(parse_program(case.program_text), arch=arch, schedules=db)
    for kernel in report.kernels:
        if group in kernel.groups:
            return kernel
    raise CinnError(f"{case.name}: no kernel of group {group} in the report")


_JOBS: list[tuple[Any, str, str, ScheduleDB]] = []
"""The reports `static_reports` asks its worker processes for (inherited by fork)."""


def _report_or_why(index: int) -> KernelReport | str:
    """`_report` of job `index`, or why it failed (a str: exceptions do not always
    survive pickling back from a worker)."""
    try:
        return _report(*_JOBS[index])
    except CinnError as error:
        return " ".join(str(error).split())[:120]


def _in_workers(jobs: int) -> list[KernelReport | str] | None:
    """Every job of `_JOBS` built by `jobs` forked worker processes, or None where one
    died. The workers inherit the jobs and the device probe's cached answer: they build
    with NVRTC and read with cuobjdump, never calling the CUDA driver, so a GPU timer's
    context in this process is no concern of theirs."""
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(min(jobs, len(_JOBS)), mp_context=context) as pool:
            return list(pool.map(_report_or_why, range(len(_JOBS))))
    except BrokenProcessPool:
        return None


def static_reports(
    key: ScheduleKey, trials: Sequence[Trial], kernels: Sequence[Kernel], arch: str, jobs: int
) -> list[list[KernelReport | str]]:
    """Each trial's report of each kernel (a str where it failed), built by `jobs`
    processes: a key has dozens of candidates over several kernels, each an NVRTC
    build read back with cuobjdump (about 0.3 s), which one process would take
    minutes over."""
    _JOBS[:] = [
        (
            kernel.workload,
            kernel.group,
            arch,
            ScheduleDB(arch)
            if trial.knobs is None
            else ScheduleDB(arch).with_entry(key, trial.knobs),
        )
        for trial in trials
        for kernel in kernels
    ]
    try:
        flat = _in_workers(jobs) if jobs > 1 and len(_JOBS) > 1 else None
        if flat is None:  # one job, one process, or a worker died: build them here
            flat = [_report_or_why(i) for i in range(len(_JOBS))]
    finally:
        _JOBS.clear()
    width = len(kernels)
    return [flat[i : i + width] for i in range(0, len(flat), width)]


def _bad(
    report: KernelReport | None, rules: KernelReport | None, max_issue: float = MAX_ISSUE
) -> str:
    """Why the static report rules a candidate out ("" where it does not)."""
    if report is None:
        return "did not compile"
    if report.resources.spills:
        return f"{report.resources.spills} bytes spilled"
    issue = report.estimate.issue_over_memory
    if issue > max_issue and (rules is None or issue > rules.estimate.issue_over_memory):
        return f"issue / memory {issue:.2f}"
    return ""


def tune_key(
    key: ScheduleKey,
    kernels: list[Kernel],
    arch: str,
    timer: Any,
    keep: int,
    say: Any,
    static: bool = True,
    jobs: int = 1,
) -> tuple[Trial, Trial, list[Trial]]:
    """The rules' trial, the winner and every trial of `key` over its kernels. Without
    the static report (`static` False: no cuobjdump here) every candidate is timed.
    `jobs`: processes building the static reports."""
    common = [c for c in kernels[0].candidates if all(c in k.candidates for k in kernels)]
    max_issue = MAX_ISSUE if timer is None else MAX_ISSUE_TIMED
    rules = Trial(None)
    trials = [Trial(knobs, same_as_rules=_is_rules(knobs, kernels)) for knobs in common]
    if static:
        ranked = [rules, *(t for t in trials if not t.same_as_rules)]
        found = static_reports(key, ranked, kernels, arch, jobs)
        failed = [r for r in found[0] if isinstance(r, str)]
        if failed:  # no static ranking for this key: time every candidate
            say(f"    rules' report failed ({failed[0]}): all timed")
            static = False
            if timer is None:
                return rules, rules, []
        else:
            rules.reports = list(found[0])
            for trial, reports in zip(ranked[1:], found[1:], strict=True):
                problems = [r for r in reports if isinstance(r, str)]
                trial.reports = [None if isinstance(r, str) else r for r in reports]
                trial.problem = problems[0] if problems else ""
                for mine, theirs in zip(trial.reports, rules.reports, strict=True):
                    trial.problem = trial.problem or _bad(mine, theirs, max_issue)
    good = sorted(
        (t for t in trials if not t.problem and not t.same_as_rules),
        key=lambda t: (t.static_score(rules), t.issue_share(), _order(t)),
    )
    if not static:
        keep = len(good)
    if timer is not None and good:
        good = to_time(good, keep)
        time_trials(timer, [rules, *good], kernels, key, arch)
        if rules.problem:  # nothing to rank against (the GPU tests should have failed too)
            say(f"    the rules' own schedule: {rules.problem}")
            good = []
        good = sorted((t for t in good if not t.problem), key=lambda t: t.timed_score(rules))
    best = good[0] if good else rules
    for trial in trials:
        say(_trial_line(trial, rules))
    return rules, best, trials


def to_time(ranked: Sequence[Trial], keep: int) -> list[Trial]:
    """The trials to time, of `ranked` (the static model's order): its first `keep`, then
    the first of each kind of schedule not among them (a kind: the knobs a candidate
    sets, so a persistent grid, `blocks_per_sm`, and one that prefetches, `prefetch`,
    are kinds of their own), then the first holding a knob's value none chosen holds
    (every threads a row, rows a block, lanes ... the key's candidates take). The model
    prices bytes, instructions and waves, not what those change (blocks launched once,
    loads in flight across a block reduce's barriers, registers for occupancy): it ranks
    every memory-bound candidate alike, so ranked alone the ties' order would pick which
    reach the GPU. The H200's tune step of 2026-11-27 timed three settings of 128
    threads a row and none of 256 with one block a row."""
    chosen = list(ranked[:keep])
    kinds = {frozenset(t.knobs or ()) for t in chosen}
    for trial in ranked[keep:]:
        kind = frozenset(trial.knobs or ())
        if kind not in kinds:
            chosen.append(trial)
            kinds.add(kind)
    values = {item for t in chosen for item in (t.knobs or {}).items()}
    for trial in ranked[keep:]:
        new = set((trial.knobs or {}).items()) - values
        if new and all(trial is not t for t in chosen):
            chosen.append(trial)
            values |= new
    place = {id(t): i for i, t in enumerate(ranked)}
    return sorted(chosen, key=lambda t: place[id(t)])


def _is_rules(knobs: dict[str, int], kernels: Sequence[Kernel]) -> bool:
    """Whether `knobs` is what the rules chose for every one of `kernels`."""
    return all(all(k.rule.get(name) == value for name, value in knobs.items()) for k in kernels)


def time_trials(
    timer: Any, trials: Sequence[Trial], kernels: Sequence[Kernel], key: ScheduleKey, arch: str
) -> None:
    """Each trial's time on each kernel's workload (`Trial.seconds`): every one prepared
    first (`timer.prepare`: compiled, inputs made, the output checked; a trial whose
    output is wrong gets its `problem` and no time), then sampled in `timer.rounds` rounds
    that each visit every trial in turn (every other round in reverse order), and the
    median of its rounds kept. Interleaving makes slow drifts (clocks, the allocator,
    the first-timed trial's warm-up) fall on every trial alike: timed one after another,
    a trial could score 30% off its own setting (H200, 2026-11-27)."""
    prepared, samplers = [], []
    for trial in trials:
        try:
            samplers.append([timer.prepare(k.workload, key, trial.knobs, arch) for k in kernels])
            prepared.append(trial)
        except CinnError as error:  # a wrong answer on the device: never timed, never kept
            trial.problem = " ".join(str(error).split())[:160]
    trials = prepared
    samples: list[list[list[float]]] = [[[] for _ in kernels] for _ in trials]
    order = list(zip(samplers, samples, strict=True))
    for _ in range(timer.rounds):
        for mine, theirs in order:
            for sample, into in zip(mine, theirs, strict=True):
                into.append(sample())
        order.reverse()  # no trial always first, or always after the same one
    for trial, theirs in zip(trials, samples, strict=True):
        trial.seconds = [statistics.median(times) for times in theirs]
    timer.release()


def _order(trial: Trial) -> tuple[int, ...]:
    """Ties go to smaller blocks and fewer steps: a stable, explainable choice."""
    return tuple(sorted(trial.knobs.values())) if trial.knobs else ()


def _trial_line(trial: Trial, rules: Trial) -> str:
    knobs = ", ".join(f"{k}={v}" for k, v in (trial.knobs or {}).items()) or "rules"
    if trial.same_as_rules:
        return f"    {knobs:40s} the rules' own setting"
    if trial.problem:
        return f"    {knobs:40s} dropped: {trial.problem}"
    parts = [f"static {trial.static_score(rules):.3f}"] if trial.reports else []
    if trial.seconds:
        parts.append(f"timed {trial.timed_score(rules):.3f}")
        if 1 < len(trial.seconds) == len(rules.seconds):  # each workload's: they may differ
            each = (
                f"{mine / theirs:.3f}" if theirs else "-"
                for mine, theirs in zip(trial.seconds, rules.seconds, strict=True)
            )
            parts.append(f"[{' '.join(each)}]")
    est = ", ".join(
        f"{r.estimate.copy_fraction:.0%} {r.estimate.limiter}" for r in trial.reports if r
    )
    return f"    {knobs:40s} {' '.join(parts)}  ({est})"


class GpuTimer:
    """Times a workload compiled with one database entry on the GPU, the device alone:
    the compiled program recorded `runs` times over into one CUDA graph
    (`RuntimeProgram.repeated_graph`), launched between two CUDA events. Timing
    `exe.run` from Python would time the host (feed checks and a launch: tens of
    microseconds) wherever the kernel is shorter, which made a 2 MB reduction's
    candidates all tie in the first timed run. Where the program cannot be recorded, its
    `execute()` is timed (tools/bench.py's timing)."""

    rounds = 5
    """Samples each trial gets, interleaved with the others' (`time_trials`)."""
    target: Any = "cuda"
    """What the workloads compile for (a test gives the stand-in driver's target)."""

    def __init__(self, bench: Any, cp: Any, repeat: int, budget: float) -> None:
        import cinn_py

        self.bench, self.cp, self.cinn_py = bench, cp, cinn_py
        self.backend = bench.CudaBackend(cp)
        self.device = self.backend.device_name()
        facts = gpu_facts()
        self.arch = facts.arch if facts else DEFAULT_ARCH
        """What the GPU here is: the arch `--arch` must name to be timed here."""
        self.repeat, self.budget = repeat, budget
        self._inputs: dict[str, tuple[dict[str, Any], dict[str, Any], Any]] = {}
        self._kept: list[Any] = []

    def prepare(self, case: Any, key: ScheduleKey, knobs: dict[str, int] | None, arch: str) -> Any:
        """A function giving one sample of `case` with `knobs` for `key` (None: the
        rules): seconds per run of the program. Its output is checked first against the
        family's float64 reference (tools/bench.py's check): a setting that computes
        a wrong answer on the device raises CinnError, and is never timed or kept."""
        db = ScheduleDB(arch) if knobs is None else ScheduleDB(arch).with_entry(key, knobs)
        exe = self.cinn_py.compile(parse_program(case.program_text), self.target, schedules=db)
        if case.name not in self._inputs:
            arrays = self.bench.make_inputs(case, self.cp)
            want = case.family.reference(self.cp, self.cp.float64, *arrays)
            self._inputs[case.name] = (*self.bench._split(case, arrays), want)
        feeds, params, want = self._inputs[case.name]
        output = self.backend.run_compiled(exe, feeds, params)  # binds the scope to the feeds
        verdict = self.bench.check(self.cp, output, want, case.dtype, case.family.tolerance_scale)
        if not verdict.ok:
            raise CinnError(f"{case.name}, {knobs or 'the rules'}: wrong: {verdict.message}")
        runtime = exe.runtime_program
        self._kept.append(exe)
        graphed = self.bench.device_runner(runtime, self.backend.synchronize)
        if graphed is None:
            return lambda: self.backend.time(
                lambda: runtime.execute(runtime.scope), self.repeat, self.budget
            )[0]
        launch, runs = graphed
        # a sample: the median of a few launches of the graph (each `runs` runs)
        return lambda: self.backend.time(launch, 3, self.budget)[0] / runs

    def release(self) -> None:
        """Drop the compiled programs and inputs of the key just timed."""
        self._inputs.clear()
        self._kept.clear()
        self.backend.free(None)


def merge(source: Path, out: Path, arch: str) -> ScheduleDB:
    """`out` with what the run that wrote `source` found: every key it tuned
    (`written.keys`) loses the entry `out` held, then takes the run's entry if it has
    one. `source` is a database, or a JSON object holding one under "tune" (the GPU
    check's bench.json). `written` becomes the run's, with where it came from."""
    text = source.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None  # `parse` says where
    if isinstance(data, dict) and "tune" in data:
        text = json.dumps(data["tune"])
    theirs = parse(text, str(source), arch)
    mine = load(out, arch) if out.exists() else ScheduleDB(arch)
    keys = theirs.written.get("keys", [])
    if not isinstance(keys, list):
        raise ScheduleDBError(str(source), "'written.keys' must be a list of keys")
    tuned = {key_from_json(row, str(source)) for row in keys}
    entries = {k: v for k, v in mine.entries.items() if k not in tuned}
    notes = {k: v for k, v in mine.notes.items() if k not in tuned}
    entries.update(theirs.entries)
    notes.update(theirs.notes)
    written = {**theirs.written, "merged_from": str(source)}
    db = ScheduleDB(arch, entries, str(out), written, notes)
    db.write(out)
    return db


def _written(
    ranked_by: str, done: Sequence[ScheduleKey], by_key: Mapping[ScheduleKey, list[Kernel]]
) -> dict[str, Any]:
    """The file's record of the run so far: how it ranked, the keys it tuned (what
    `merge` replaces) and their workloads."""
    return {
        "by": "tools/tune.py",
        "date": datetime.date.today().isoformat(),
        "nvrtc": nvrtc.nvrtc_version(),
        "ranked_by": ranked_by,
        "keys_tuned": len(done),
        "keys": [key.to_json() for key in done],
        "workloads": sorted({k.workload.name for key in done for k in by_key[key]}),
    }


def gpu_timer(bench: Any, repeat: int, budget: float) -> GpuTimer | None:
    """The GPU timer, or None without a GPU (or CuPy)."""
    try:
        import cupy as cp
    except ImportError:
        return None
    from cinn_py.targets.device import gpu_available

    if not gpu_available():
        return None
    return GpuTimer(bench, cp, repeat, budget)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="", help="families, comma-separated (default all)")
    parser.add_argument("--dtypes", default=",".join(DTYPES))
    parser.add_argument("--shapes", default="", help="e.g. 4096x4096,64x1000 (default per family)")
    parser.add_argument("--arch", default=DEFAULT_ARCH)
    parser.add_argument("--out", default="", help="default <schedules folder>/<arch>.json")
    parser.add_argument("--time", type=int, default=None, help="candidates timed a key (GPU)")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--budget", type=float, default=0.5)
    parser.add_argument("--min-gain", type=float, default=0.02)
    parser.add_argument("--all", action="store_true", help="an entry for every key")
    parser.add_argument("--list", action="store_true", help="list the workloads and keys")
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="processes building the static reports (default: every CPU)",
    )
    parser.add_argument(
        "--merge",
        metavar="FILE",
        help="merge a database another run wrote (a GPU check's bench.json: its 'tune') "
        "into --out, and tune nothing",
    )
    args = parser.parse_args(argv)
    out = (
        Path(args.out) if args.out else (schedules_dir() or Path("schedules")) / f"{args.arch}.json"
    )
    if args.merge:
        try:
            db = merge(Path(args.merge), out, args.arch)
        except (CinnError, OSError, ValueError) as error:
            print(f"tools/tune.py: {error}", file=sys.stderr)
            return 2
        print(f"merged {args.merge} into {out}: {len(db)} entries")
        return 0

    bench = _bench()
    families = [f.strip() for f in args.cases.split(",") if f.strip()]
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    shapes = [tuple(int(n) for n in s.split("x")) for s in args.shapes.split(",") if s.strip()]
    timer = None if args.time == 0 else gpu_timer(bench, args.repeat, args.budget)
    here = timer.arch if timer is not None else args.arch
    if here != args.arch:  # the times would be another GPU's
        print(
            f"tools/tune.py: the GPU here is {here}, not --arch {args.arch}: tune it "
            "statically (--time 0) or on a GPU of that arch",
            file=sys.stderr,
        )
        return 2
    keep = 3 if args.time is None else args.time
    static, why = binaries.tools_available()
    if not static and timer is None:
        print(f"tools/tune.py: no static report ({why}) and no GPU to time on", file=sys.stderr)
        return 2
    if not static:
        print(f"no static report ({why}): every candidate is timed")

    by_key: dict[ScheduleKey, list[Kernel]] = {}
    for case in workloads(bench, families, dtypes, shapes):
        try:
            found = kernels_of(case, args.arch)
        except CinnError as error:
            print(f"{case.name}: skipped ({' '.join(str(error).split())[:160]})")
            continue
        for kernel in found:
            by_key.setdefault(kernel.key, []).append(kernel)
            print(
                f"{case.name}: {kernel.group} -> {kernel.key.describe()}, "
                f"{len(kernel.candidates)} candidates, rules {kernel.rule}"
            )
    if args.list:
        return 0

    db = load(out, args.arch) if out.exists() else ScheduleDB(args.arch)
    ranked_by = f"static model (cinn_py.perf, {spec_for(args.arch).name})"
    if timer is not None:
        ranked_by = f"CUDA events on {timer.device}" + ("" if static else ", no static filter")
    done: list[ScheduleKey] = []
    for key, kernels in by_key.items():
        print(f"{key.describe()}: {', '.join(k.workload.name for k in kernels)}")
        rules, best, _ = tune_key(key, kernels, args.arch, timer, keep, print, static, args.jobs)
        score = best.timed_score(rules) if best.seconds else best.static_score(rules)
        gain = 1 - score
        entries = dict(db.entries)
        notes = dict(db.notes)
        entries.pop(key, None)
        notes.pop(key, None)
        if best.knobs is not None and (args.all or gain >= args.min_gain):
            entries[key] = best.knobs
            notes[key] = {
                "workloads": [k.workload.name for k in kernels],
                "rules": kernels[0].rule,
                "score": round(score, 4),
                "ranked_by": f"timed on {timer.device}" if best.seconds else "static",
                "date": datetime.date.today().isoformat(),
            }
            print(f"  -> {best.knobs} (score {score:.3f} of the rules')")
        else:
            print("  -> the rules")
        done.append(key)
        # written after every key: a run stopped by a time limit keeps the keys it did
        db = ScheduleDB(args.arch, entries, str(out), _written(ranked_by, done, by_key), notes)
        db.write(out)
    if not done:  # no kernel a tactic can tune: the file says so
        db = ScheduleDB(args.arch, db.entries, str(out), _written(ranked_by, [], {}), db.notes)
        db.write(out)
    print(f"wrote {out}: {len(db)} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
