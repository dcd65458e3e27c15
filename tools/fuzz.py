"""Run the fuzzers for a long time, in parallel processes, keeping each minimal failure.

    python tools/fuzz.py --minutes 30 [--jobs J] [--out DIR] [--family F ...]
                         [--target cuda-emu|cuda] [--chunk N] [--grace MINUTES] [--knobs]
    python tools/fuzz.py --recheck DIR [--target T]   # which reproducers still fail

Families: the random-program families of kernels_tests/fuzz/fuzz_programs.py
(elementwise, cast, reduce, norm, layout, graph: each program compiled and checked
against the reference) and the pytest fuzzers of the same folder: `inputs`
(test_fuzz_inputs.py: what `cinn_py.load` reads) and `cache` (test_fuzz_cache.py: the
kernel cache), run with CINN_PY_FUZZ=long. Default: all of them. The J jobs (default:
one per CPU) take the families round robin; each is a process with its own hypothesis
example database (DIR/.hypothesis/) and random seed, and runs its families in chunks
of N examples until the time is up (then up to --grace minutes more to finish
shrinking).

Each distinct failure is written once, shrunk, to DIR/<family>-<hash>/: program.pir,
feeds.npz (rerun: `cinn-py run program.pir --feeds feeds.npz --check`) and
failure.txt (the error or the mismatching outputs); for the pytest fuzzers, failure.txt
holds pytest's report with hypothesis' falsifying example. A job skips failures whose
signature it has written already, so one bug does not stop it finding the next.
Compiled programs run in forked children, so a crash (SIGSEGV, SIGFPE) is a failure
like any other. At the end it prints programs tried per family and the failures, and
writes DIR/summary.json. `--recheck DIR` runs every program reproducer of DIR again with
the current compiler and says which still fail (exit status 1 if any does).

`--knobs` (CINN_PY_FUZZ_KNOBS=random) compiles each program with a random one of each
kernel's tunable settings (`Tactic.candidates`, what a schedule database may hold)
instead of the tactics' rules; a reproducer then carries that database in
`schedules/` and its rerun line points CINN_PY_SCHEDULES at it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FUZZ_DIR = ROOT / "kernels_tests" / "fuzz"
PYTEST_FAMILIES = {"inputs": "test_fuzz_inputs.py", "cache": "test_fuzz_cache.py"}
COUNTS = ("tried", "masked", "known", "second")
"""Per family: programs tried, mismatches all ill-conditioned (passed), failures of open
bugs fuzz_bugs.py lists (passed), programs with -1 dims also run at a second shape."""
"""Fuzzers that are pytest files of kernels_tests/fuzz, run whole with the long profile."""


def program_families() -> tuple[str, ...]:
    sys.path.insert(0, str(FUZZ_DIR))
    from fuzz_programs import FAMILIES

    return FAMILIES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, help="how long to fuzz")
    parser.add_argument("--recheck", metavar="DIR", help="rerun the reproducers of DIR")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel processes")
    parser.add_argument("--out", default="fuzz-out", help="where reproducers go (default fuzz-out)")
    parser.add_argument(
        "--family", action="append", default=[], help="a family to run (repeatable; default all)"
    )
    parser.add_argument("--target", default="cuda-emu", choices=("cuda-emu", "cuda"))
    parser.add_argument("--chunk", type=int, default=100, help="examples per hypothesis run")
    parser.add_argument(
        "--grace", type=float, default=10.0, help="minutes past the end allowed for shrinking"
    )
    parser.add_argument(
        "--knobs",
        action="store_true",
        help="compile each case with a random tuned setting of each kernel's tactic",
    )
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stop-at", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.knobs:  # read by fuzz_check in this process and in every worker it starts
        os.environ["CINN_PY_FUZZ_KNOBS"] = "random"  # fuzz_check.KNOBS_ENV
    if args.recheck:
        return recheck(Path(args.recheck), args.target)
    if args.minutes is None:
        parser.error("--minutes (or --recheck) is required")

    known = program_families() + tuple(PYTEST_FAMILIES)
    families = args.family or [
        f for f in known if f not in PYTEST_FAMILIES or (FUZZ_DIR / PYTEST_FAMILIES[f]).exists()
    ]
    unknown = sorted(set(families) - set(known))
    if unknown:
        parser.error(f"unknown families {unknown}; known: {', '.join(known)}")
    out = Path(args.out)
    if args.worker is not None:
        return run_worker(args.worker, families, out, args.target, args.chunk, args.stop_at)
    return run_parent(families, out, args, args.jobs)


# ---- the parent ----------------------------------------------------------------------------


def run_parent(families: list[str], out: Path, args: argparse.Namespace, jobs: int) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob(".worker-*.json"):
        stale.unlink()
    before = {p.name for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")}
    stop_at = time.time() + args.minutes * 60
    kill_at = stop_at + args.grace * 60
    assignments = [families[i::jobs] or [families[i % len(families)]] for i in range(jobs)]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    print(
        f"fuzzing {', '.join(families)} for {args.minutes:g} min with {jobs} job(s) on "
        f"{args.target}; reproducers in {out}",
        flush=True,
    )
    running: dict[int, tuple[subprocess.Popen[bytes], list[str]]] = {}
    restarts = 0

    def start(job: int) -> None:
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--minutes",
            str(args.minutes),
            "--out",
            str(out),
            "--target",
            args.target,
            "--chunk",
            str(args.chunk),
            "--worker",
            str(job),
            "--stop-at",
            str(stop_at),
        ]
        for family in assignments[job]:
            command += ["--family", family]
        log = open(out / f".worker-{job}.log", "ab")  # noqa: SIM115 (closed with the process)
        running[job] = (
            subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log),
            assignments[job],
        )

    for job in range(jobs):
        start(job)
    try:
        while running:
            time.sleep(2)
            for job, (process, _) in list(running.items()):
                code = process.poll()
                if code is None:
                    if time.time() > kill_at:
                        process.kill()
                    continue
                del running[job]
                if code != 0 and time.time() < stop_at:
                    restarts += 1
                    print(f"job {job} exited with status {code}; restarting it", flush=True)
                    start(job)
    except KeyboardInterrupt:
        for process, _ in running.values():
            process.kill()
    summary = collect(out, before, restarts)
    print(summary_text(summary), flush=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return 1 if summary["new"] else 0


def collect(out: Path, before: set[str], restarts: int) -> dict:
    counts: dict[str, dict[str, int]] = {key: {} for key in COUNTS}
    for path in sorted(out.glob(".worker-*.json")):
        data = json.loads(path.read_text())
        for key in COUNTS:
            for family, count in data.get(key, {}).items():
                counts[key][family] = counts[key].get(family, 0) + count
        path.unlink()
    folders = sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith("."))
    failures = []
    for folder in folders:
        text = (folder / "failure.txt").read_text() if (folder / "failure.txt").exists() else ""
        signature = text.splitlines()[0].removeprefix("signature: ") if text else "?"
        failures.append(
            {"folder": str(folder), "signature": signature, "new": folder.name not in before}
        )
    return {
        **counts,
        "failures": failures,
        "new": [f["folder"] for f in failures if f["new"]],
        "restarts": restarts,
    }


def summary_text(summary: dict) -> str:
    lines = [
        f"{'family':<12} {'programs':>9} {'2nd shape':>9} {'ill-cond.':>9} {'known':>6} "
        f"{'failures':>9}"
    ]
    for family in sorted(summary["tried"]):
        count = sum(
            1
            for f in summary["failures"]
            if f["new"] and Path(f["folder"]).name.startswith(family + "-")
        )
        lines.append(
            f"{family:<12} {summary['tried'][family]:>9} "
            f"{summary.get('second', {}).get(family, 0):>9} "
            f"{summary['masked'].get(family, 0):>9} {summary['known'].get(family, 0):>6} "
            f"{count:>9}"
        )
    total = sum(summary["tried"].values())
    lines.append(f"{'total':<12} {total:>9}")
    if summary["restarts"]:
        lines.append(f"{summary['restarts']} job restart(s): see the .worker-*.log files")
    new = [f for f in summary["failures"] if f["new"]]
    lines.append(f"{len(new)} new failure(s)" + (":" if new else ""))
    lines += [f"  {f['folder']}  {f['signature']}" for f in new]
    old = len(summary["failures"]) - len(new)
    if old:
        lines.append(f"({old} reproducer(s) from earlier runs in the same folder)")
    return "\n".join(lines)


def recheck(folder: Path, target: str) -> int:
    """Check every program reproducer under `folder` again; print which still fail."""
    sys.path.insert(0, str(FUZZ_DIR))
    import fuzz_check
    from fuzz_bugs import KNOWN_BUGS, known_failure

    still = 0
    for path in sorted(p.parent for p in folder.glob("*/program.pir")):
        try:
            case = fuzz_check.read_reproducer(path)
            fuzz_check.check_case(case, target, isolate=True, allow_known=False)
            print(f"fixed   {path}")
        except fuzz_check.FuzzFailure as failure:
            still += 1
            switch = known_failure(failure.signature, frozenset(KNOWN_BUGS))
            listed = f"  (open bug {switch})" if switch else ""
            print(f"FAILS   {path}  {failure.signature}{listed}")
    return 1 if still else 0


# ---- a worker ------------------------------------------------------------------------------


class Worker:
    """One job: its families in turn, `chunk` examples at a time, until `stop_at`."""

    def __init__(self, job: int, out: Path, target: str, chunk: int, stop_at: float) -> None:
        self.job = job
        self.out = out
        self.target = target
        self.chunk = chunk
        self.stop_at = stop_at
        self.counts: dict[str, dict[str, int]] = {key: {} for key in COUNTS}
        self.ignore: set[str] = set()
        self.written: set[str] = set()
        previous = out / f".worker-{job}.json"  # a restarted job goes on counting
        if previous.exists():
            self.counts.update(json.loads(previous.read_text()))

    def save(self) -> None:
        """The job's totals so far, for the parent's summary (atomically replaced)."""
        path = self.out / f".worker-{self.job}.json"
        temp = path.with_suffix(".tmp")
        temp.write_text(json.dumps(self.counts))
        os.replace(temp, path)

    def run_programs(self, family: str) -> None:
        import fuzz_check
        from fuzz_config import fuzz_settings
        from hypothesis.database import DirectoryBasedExampleDatabase

        seen: list = []
        database = DirectoryBasedExampleDatabase(
            str(self.out / ".hypothesis" / f"{family}-{self.job}")
        )
        test = fuzz_check.family_test(
            family,
            self.target,
            fuzz_settings(max_examples=self.chunk, database=database),
            isolate=True,
            ignore=frozenset(self.ignore),
            on_failure=seen.append,
            stop_at=self.stop_at,
        )
        before = fuzz_check.STATS.copy()
        try:
            test()
            failures = []
        except Exception as error:  # one FuzzFailure, or a group of distinct ones
            leaves = list(_leaves(error))
            failures = [e for e in leaves if isinstance(e, fuzz_check.FuzzFailure)]
            if len(failures) != len(leaves):
                raise
        for failure in failures:
            folder = fuzz_check.write_reproducer(failure, self.out, self.target)
            if folder.name not in self.written:
                self.written.add(folder.name)
                print(f"[job {self.job}] {failure.signature} -> {folder}", flush=True)
        # The minimal failures' signatures and the first example's of each chunk.
        self.ignore.update(f.signature for f in failures)
        self.ignore.update(f.signature for f in seen[:1])
        stats = fuzz_check.STATS - before
        for key in COUNTS:
            self.add(key, family, stats[f"{key}:{family}"])

    def add(self, key: str, family: str, count: int) -> None:
        self.counts[key][family] = self.counts[key].get(family, 0) + count

    def run_pytest(self, family: str) -> None:
        path = FUZZ_DIR / PYTEST_FAMILIES[family]
        if not path.exists():
            print(f"[job {self.job}] {path} does not exist; skipping {family}", flush=True)
            time.sleep(min(60, max(0, self.stop_at - time.time())))
            return
        env = dict(os.environ, CINN_PY_FUZZ="long", CINN_PY_FUZZ_EXAMPLES=str(self.chunk))
        seed = int.from_bytes(os.urandom(4), "little")
        command = [
            sys.executable, "-m", "pytest", str(path), "-q", "-p", "no:cacheprovider",
            f"--hypothesis-seed={seed}",
        ]  # fmt: skip
        timeout = max(60.0, self.stop_at - time.time() + 600)
        try:
            done = subprocess.run(
                command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
            )
            text, code = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired as expired:
            text, code = f"pytest ran past {timeout:.0f} s\n{expired.stdout or ''}", 1
        passed = sum(int(n) for n in re.findall(r"(\d+) passed", text))
        failed = sum(int(n) for n in re.findall(r"(\d+) failed", text))
        self.add("tried", family, (passed + failed) * self.chunk)
        if code == 0:
            return
        failing = sorted(set(re.findall(r"FAILED (\S+)", text))) or [f"pytest exit status {code}"]
        key = " ".join(failing)
        if key in self.ignore:
            return
        self.ignore.add(key)
        folder = self.out / f"{family}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "failure.txt").write_text(
            f"signature: {key}\nrerun: {' '.join(command)} (with CINN_PY_FUZZ=long)\n\n{text}"
        )
        print(f"[job {self.job}] {key} -> {folder}", flush=True)


def _leaves(error: BaseException):
    """The exceptions of an exception group (hypothesis raises one for several distinct
    failures), or the exception itself."""
    inner = getattr(error, "exceptions", None)
    if inner is None:
        yield error
    else:
        for exception in inner:
            yield from _leaves(exception)


def run_worker(
    job: int, families: list[str], out: Path, target: str, chunk: int, stop_at: float
) -> int:
    sys.path.insert(0, str(FUZZ_DIR))
    os.environ["CINN_PY_FUZZ"] = "long"  # random examples, before fuzz_config is imported
    worker = Worker(job, out, target, chunk, stop_at)
    while time.time() < stop_at:
        for family in families:
            if time.time() >= stop_at:
                break
            if family in PYTEST_FAMILIES:
                worker.run_pytest(family)
            else:
                worker.run_programs(family)
            worker.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
