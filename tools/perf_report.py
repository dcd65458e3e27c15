"""The static performance report of every benchmark case (tools/bench.py's cases, full
size), no GPU needed: each case's program compiled for sm_90 by NVRTC and read back
from ptxas's report and cuobjdump's SASS (`cinn_py.perf`, docs/PERF.md).

    python tools/perf_report.py [--cases softmax,layer_norm] [--arch sm_90] [--json OUT.json]
                                [--symbolic]

Prints one markdown table, one row per kernel with its case and the case's bytes
against its minimum, headed by the date, NVRTC's version and the model's device; the
table goes into BENCHMARKS.md as it is. `--json` also writes every figure. Needs
cuobjdump and nvdisasm (`pip install -e ".[test]"`); a case that fails is a row saying
why, and the exit status is 1.

`--symbolic` also reports each case's program with -1 rows (`<case> -1 rows`) and, for
a case without parameters, with every dim -1 (`<case> all -1`), compiled for the case's
shape as a feed (symbolic kernels, docs/SHAPES.md): the kernel the signature launches
(an aligned variant where its check holds), read as the static one is. What the static
report says of the two side by side is where a symbolic kernel is slower without a GPU
to time it.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import sys
import time
from pathlib import Path

from cinn_py.errors import CinnError
from cinn_py.perf import dumps, kernel_row, markdown_table, perf_report
from cinn_py.perf.report import COLUMNS, DEFAULT_ARCH, ProgramReport
from cinn_py.pir.parser import parse_program

CASE_COLUMNS = ("case", "x min", *COLUMNS)


def _bench():
    """tools/bench.py as a module (tools/ is not a package)."""
    path = Path(__file__).resolve().parent / "bench.py"
    spec = importlib.util.spec_from_file_location("bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench", module)
    spec.loader.exec_module(module)
    return module


def case_rows(name: str, report: ProgramReport) -> list[dict[str, str]]:
    """The table's rows of one case: each kernel's cells after the case and its bytes."""
    rows = []
    for kernel in report.kernels:
        rows.append({"case": name, "x min": f"{report.over_minimum:.2f}", **kernel_row(kernel)})
    return rows


def programs(bench, case, symbolic: bool) -> list[tuple[str, str]]:
    """(label, program text) of `case` to report: the static program, and with
    `symbolic` its -1 rows and every-dim -1 programs (`tools/bench.py`'s)."""
    found = [(case.name, case.program_text)]
    if symbolic:
        found.append((f"{case.name} -1 rows", bench.dynamic_text(case)))
        every = bench.all_dynamic_text(case)
        if every is not None:
            found.append((f"{case.name} all -1", every))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", action="append", default=[], help="families or case names")
    parser.add_argument("--arch", default=DEFAULT_ARCH, help="the GPU arch NVRTC builds for")
    parser.add_argument("--json", metavar="OUT", help="also write every figure here")
    parser.add_argument(
        "--symbolic",
        action="store_true",
        help="also each case with -1 rows and with every dim -1, at the case's shape",
    )
    args = parser.parse_args(argv)
    bench = _bench()
    try:
        cases = bench.select_cases(args.cases)
    except ValueError as error:
        parser.error(str(error))
    reports, rows, failed = [], [], 0
    for case in cases:
        for label, text in programs(bench, case, args.symbolic):
            start = time.perf_counter()
            shapes = {t.name: t.shape for t in case.inputs if not t.param}
            try:
                report = perf_report(
                    parse_program(text), arch=args.arch, label=label, feed_shapes=shapes
                )
            except CinnError as error:
                failed += 1
                first = (str(error).splitlines() or [""])[0]
                print(f"FAIL {label}: {first}", file=sys.stderr, flush=True)
                rows.append({c: "" for c in CASE_COLUMNS} | {"case": label, "kernel": first})
                continue
            reports.append(report)
            rows.extend(case_rows(label, report))
            seconds = time.perf_counter() - start
            print(f"{label}: {len(report.kernels)} kernel(s), {seconds:.1f} s", file=sys.stderr)
    head = reports[0] if reports else None
    if head is not None:
        print(
            f"Static report, {datetime.date.today().isoformat()}: NVRTC {head.nvrtc}, "
            f"{head.arch}; model: {head.gpu.name}, {head.gpu.dram_bandwidth / 1e12:.1f} TB/s, "
            f"{head.gpu.clock_hz / 1e9:.2f} GHz, {head.gpu.memory_latency_s * 1e9:.0f} ns "
            "memory latency\n"
        )
    sys.stdout.write(markdown_table(rows, CASE_COLUMNS))
    if args.json:
        Path(args.json).write_text(dumps(reports))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
