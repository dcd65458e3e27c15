"""The static performance report (`cinn-py perf`, `tools/perf_report.py`): every kernel of
a program compiled by NVRTC and read back from ptxas's report and its SASS, against a
model of the arch's reference GPU (an H100 SXM for sm_90). See docs/PERF.md.

| module | job |
| --- | --- |
| `binaries.py` | cuobjdump and nvdisasm from their wheels; `disassemble(cubin)` |
| `ptxas.py` | ptxas's resource report: registers, spills, stack, static shared memory |
| `sass.py` | SASS parsed; the main path, loop trips, load / store widths, bytes in flight |
| `occupancy.py` | `GpuSpec` (a reference GPU's per-SM facts, one an arch: `spec_for`), blocks per SM, waves |
| `model.py` | issue time against memory time, the estimated share of copy bandwidth |
| `report.py` | `perf_report(program)`, the table and the JSON |
"""

from cinn_py.perf.report import (
    KernelReport,
    ProgramReport,
    dumps,
    kernel_row,
    markdown_table,
    perf_report,
    report_text,
    summary_line,
    text_table,
    to_json,
)

__all__ = [
    "KernelReport",
    "ProgramReport",
    "dumps",
    "kernel_row",
    "markdown_table",
    "perf_report",
    "report_text",
    "summary_line",
    "text_table",
    "to_json",
]
