"""The static performance report: every kernel of a program, compiled for the GPU by NVRTC
and read back from its machine code, against a simple model of the arch's reference GPU
(an H100 SXM for sm_90, the default).

`perf_report(program)` runs the compiler's stages to the CUDA C for `cuda` (no GPU
needed), compiles the translation unit with NVRTC as the `cuda` target does, adding
`--ptxas-options=-v` for ptxas's resource report, disassembles the CUBIN with
cuobjdump, and for each distinct kernel puts together its resources (`ptxas`), what a
thread executes (`sass`), occupancy and waves (`occupancy`) and the time model
(`model`). `text_table`, `markdown_table` and `to_json` print it. docs/PERF.md says what
every column means.

Bytes: a kernel's *footprint* is the bytes of its buffer arguments, inputs read once
and outputs written once (workspace both): what it moves from DRAM if each byte is
read once, which the time model uses. Its *requested* bytes are what its threads' SASS
loads and stores ask for (widths x executions x threads, guards taken): requested over
footprint above 1 is data read again (through L1 / L2). The program's *minimum* is its
inputs (parameters included) read once and its outputs written once; the kernels'
footprints over it is above 1 where kernels pass intermediates through memory.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_c import static_shape
from cinn_py.backends.codegen_cuda import KernelInfo
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import CinnError
from cinn_py.hlir.group import GroupKind
from cinn_py.hlir.symbolic_dims import SymbolicDims
from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB
from cinn_py.perf.binaries import disassemble
from cinn_py.perf.model import Estimate, estimate
from cinn_py.perf.occupancy import GpuSpec, Occupancy, occupancy, spec_for, waves
from cinn_py.perf.ptxas import Resources, parse_ptxas_log
from cinn_py.perf.sass import SassStats, analyze, parse_sass
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType

DEFAULT_ARCH = "sm_90"


@dataclass
class KernelReport:
    """One distinct kernel: how it is launched, what ptxas gave it, what a thread runs,
    the bytes it moves and the model's estimate."""

    name: str
    groups: list[str]
    """The fused groups that launch it (more than one when equal kernels are shared)."""
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    resources: Resources
    dynamic_shared: int
    sass: SassStats
    footprint_bytes: int
    requested_bytes: int
    occupancy: Occupancy
    waves: float
    inflight_per_sm: int
    estimate: Estimate

    @property
    def threads(self) -> int:
        return math.prod(self.grid) * math.prod(self.block)

    @property
    def shared_bytes(self) -> int:
        return self.resources.static_shared + self.dynamic_shared

    @property
    def reread(self) -> float:
        """Requested bytes over footprint: above 1, data read more than once."""
        return self.requested_bytes / self.footprint_bytes if self.footprint_bytes else 0.0


@dataclass
class ProgramReport:
    """The report of one program: its kernels and its bytes against the minimum."""

    label: str
    arch: str
    nvrtc: str
    gpu: GpuSpec
    kernels: list[KernelReport] = field(default_factory=list)
    minimum_bytes: int = 0
    """The program's inputs read once and outputs written once."""
    library_ops: list[str] = field(default_factory=list)
    """Ops that run as library calls (not in the report: their bytes are not counted)."""

    @property
    def kernel_bytes(self) -> int:
        """Every launch's footprint, each shared kernel counted once per launch."""
        return sum(k.footprint_bytes * len(k.groups) for k in self.kernels)

    @property
    def over_minimum(self) -> float:
        return self.kernel_bytes / self.minimum_bytes if self.minimum_bytes else 0.0


def perf_report(
    program: Program,
    *,
    arch: str = DEFAULT_ARCH,
    feed_shapes: Mapping[str, Sequence[int]] | None = None,
    spec: GpuSpec | None = None,
    label: str = "",
    fast_math: bool = False,
    schedules: ScheduleDB | str | os.PathLike[str] | None = None,
) -> ProgramReport:
    """Compile `program` for `arch` (no GPU needed; with `fast_math`, as
    `cinn_py.compile(..., fast_math=True)` does; with the schedule database
    `schedules`, as `cinn_py.compile(..., schedules=)`) and read its kernels' machine
    code. `spec`: the GPU the figures model (default: `arch`'s reference GPU,
    `occupancy.spec_for`)."""
    spec = spec or spec_for(arch)
    compiler = PIRCompiler(
        program,
        "cuda",
        arch=arch,
        feed_shapes=feed_shapes,
        fast_math=fast_math,
        schedules=schedules,
    )
    stages = compiler.stages(until="codegen")
    report = ProgramReport(label, arch, nvrtc.nvrtc_version(), spec)
    report.minimum_bytes = _minimum_bytes(stages.program)
    report.library_ops = [
        op.name for g in stages.groups if g.kind is not GroupKind.FUSED for op in g.ops
    ]
    if stages.source is None:
        return report
    cubin, log = nvrtc.compile_verbose(stages.source.source, arch, name="perf_report.cu")
    resources = parse_ptxas_log(log)
    functions = parse_sass(disassemble(cubin))
    dims = compiler.symbolic_dims
    for (kernel, scheduled), info in zip(stages.rendered, stages.source.kernels, strict=True):
        aligned = kernel.aligned
        if aligned is not None and (scheduled is aligned.scheduled) != aligned.applies(
            dims.by_name
        ):
            continue  # the kernel of the pair this signature does not launch
        if info.name not in functions or info.name not in resources:
            raise CinnError(f"{info.name}: not in the CUBIN's SASS or ptxas's report")
        launches = [k.group.name for k in stages.fused if k.kernel is kernel]
        report.kernels.append(
            _kernel_report(
                _at_signature(info, dims),
                launches,
                resources[info.name],
                functions[info.name],
                spec,
                dims,
            )
        )
    return report


def _at_signature(info: KernelInfo, dims: SymbolicDims | None) -> KernelInfo:
    """A symbolic kernel's launch at the feed shapes the report is for: its grid's
    expressions (over the kernel's dim arguments) evaluated."""
    if dims is None or all(isinstance(d, int) for d in info.grid):
        return info
    grid = tuple(d if isinstance(d, int) else dims.evaluate(d) for d in info.grid)
    return dataclasses.replace(info, grid=grid)


def _kernel_report(
    info: KernelInfo,
    groups: list[str],
    resources: Resources,
    function: Any,
    spec: GpuSpec,
    dims: SymbolicDims | None = None,
) -> KernelReport:
    threads = math.prod(info.grid) * math.prod(info.block)
    read, written = _argument_bytes(info.args, dims)
    sass = analyze(function, load_bytes_per_thread=read / threads if threads else None)
    requested = (sass.load_bytes + sass.store_bytes) * threads + _lane_zero_bytes(
        sass, info.grid, info.block
    )
    threads_per_block = math.prod(info.block)
    shared = resources.static_shared + info.shared_mem
    fits = occupancy(threads_per_block, resources.registers, shared, spec)
    grid_waves = waves(math.prod(info.grid), fits.blocks_per_sm, spec)
    inflight = sass.inflight_bytes * fits.blocks_per_sm * threads_per_block
    guess = estimate(
        nbytes=read + written,
        instructions_per_thread=sass.instructions,
        threads=threads,
        inflight_per_sm=inflight,
        waves=grid_waves,
        spec=spec,
    )
    return KernelReport(
        name=info.name,
        groups=groups,
        grid=info.grid,
        block=info.block,
        resources=resources,
        dynamic_shared=info.shared_mem,
        sass=sass,
        footprint_bytes=read + written,
        requested_bytes=requested,
        occupancy=fits,
        waves=grid_waves,
        inflight_per_sm=inflight,
        estimate=guess,
    )


def _lane_zero_bytes(
    sass: SassStats, grid: tuple[int, int, int], block: tuple[int, int, int]
) -> int:
    """Bytes of the stores only threadIdx.<axis> == 0 makes: one thread in `block[axis]`."""
    threads = math.prod(grid) * math.prod(block)
    return sum(sass.lane_store_bytes(axis) * (threads // block[k]) for k, axis in enumerate("xyz"))


def _argument_bytes(
    args: Sequence[s.Argument], dims: SymbolicDims | None = None
) -> tuple[int, int]:
    """Bytes the kernel's buffer arguments hold: (read, written), symbolic dims at the
    report's feed shapes. A workspace is both."""
    read = written = 0
    for arg in args:
        if not isinstance(arg.value, e.Buffer):
            continue
        if dims is not None and not all(isinstance(d, e.IntImm) for d in arg.value.shape):
            shape = [
                d.value if isinstance(d, e.IntImm) else dims.evaluate(d) for d in arg.value.shape
            ]
        else:
            shape = list(static_shape(arg.value))
        nbytes = math.prod(shape) * arg.value.dtype.itemsize
        if arg.io is not s.ArgIO.OUTPUT:
            read += nbytes
        if arg.io is not s.ArgIO.INPUT:
            written += nbytes
    return read, written


def _minimum_bytes(program: Program) -> int:
    values = [op.result(0) for op in (*program.data_ops(), *program.parameter_ops())]
    values += program.outputs()
    total = 0
    for value in {id(v): v for v in values}.values():
        type_ = value.type
        if isinstance(type_, DenseTensorType) and type_.is_static:
            total += math.prod(type_.dims) * type_.data_type.itemsize
    return total


# ---- printing ------------------------------------------------------------------------------

COLUMNS = (
    "kernel",
    "grid x block",
    "regs",
    "spills",
    "smem",
    "SASS/thr",
    "ld / st",
    "MB",
    "req/MB",
    "occupancy",
    "waves",
    "issue/mem",
    "est. % copy",
    "limiter",
)


def _widths(counts: Mapping[int, int]) -> str:
    if not counts:
        return "-"
    return "+".join(f"{count}x{width}B" for width, count in sorted(counts.items(), reverse=True))


def _store_widths(sass: SassStats) -> str:
    """The stores by width, then those of lane 0 only: `1x4B@x0` is one 4-byte store
    that only the threads with threadIdx.x == 0 make."""
    lanes = [
        f"{count}x{width}B@{axis}0"
        for (axis, width), count in sorted(
            sass.lane_stores.items(), key=lambda i: (i[0][0], -i[0][1])
        )
    ]
    if not lanes:
        return _widths(sass.stores)
    return "+".join(([_widths(sass.stores)] if sass.stores else []) + lanes)


def _dims(dims: tuple[int, int, int]) -> str:
    shown = list(dims)
    while len(shown) > 1 and shown[-1] == 1:
        shown.pop()
    return "x".join(map(str, shown))


def _megabytes(nbytes: int) -> str:
    megabytes = nbytes / 1e6
    return f"{megabytes:.0f}" if megabytes >= 100 else f"{megabytes:.3g}"


def _percent(fraction: float) -> str:
    return f"{fraction:.0%}" if fraction >= 0.1 else f"{fraction:.1%}"


def kernel_row(kernel: KernelReport) -> dict[str, str]:
    """The table's cells for one kernel (COLUMNS)."""
    res = kernel.resources
    spills = "0" if not res.spills else f"{res.spill_stores}B st/{res.spill_loads}B ld"
    unknown = any(loop.how == "unknown" for loop in kernel.sass.loops)
    return {
        "kernel": kernel.name + (f" (x{len(kernel.groups)})" if len(kernel.groups) > 1 else ""),
        "grid x block": f"{_dims(kernel.grid)} x {_dims(kernel.block)}",
        "regs": str(res.registers),
        "spills": spills,
        "smem": f"{kernel.shared_bytes}B",
        "SASS/thr": f"{kernel.sass.instructions}{'?' if unknown else ''}",
        "ld / st": f"{_widths(kernel.sass.loads)} / {_store_widths(kernel.sass)}",
        "MB": _megabytes(kernel.footprint_bytes),
        "req/MB": f"{kernel.reread:.2f}",
        "occupancy": (
            f"{kernel.occupancy.fraction:.0%} ({kernel.occupancy.blocks_per_sm}/SM, "
            f"{kernel.occupancy.limiter})"
        ),
        "waves": f"{kernel.waves:.2f}",
        "issue/mem": f"{kernel.estimate.issue_over_memory:.2f}",
        "est. % copy": _percent(kernel.estimate.copy_fraction),
        "limiter": kernel.estimate.limiter,
    }


def summary_line(report: ProgramReport) -> str:
    """The program's bytes against its minimum, the device model and the compiler."""
    count = len(report.kernels)
    text = (
        f"{count} kernel(s); kernels move {report.kernel_bytes / 1e6:.4g} MB, the program's "
        f"minimum is {report.minimum_bytes / 1e6:.4g} MB ({report.over_minimum:.2f}x); "
        f"model: {report.gpu.name}, {report.gpu.dram_bandwidth / 1e12:.1f} TB/s, "
        f"{report.gpu.clock_hz / 1e9:.2f} GHz; NVRTC {report.nvrtc}, {report.arch}"
    )
    if report.library_ops:
        text += f"; not counted (library calls): {', '.join(report.library_ops)}"
    return text


def text_table(rows: Sequence[Mapping[str, str]], columns: Sequence[str] = COLUMNS) -> str:
    """Rows as aligned columns under a header."""
    widths = [max(len(c), *(len(row[c]) for row in rows)) for c in columns]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    for row in rows:
        cells = [row[c].ljust(w) for c, w in zip(columns, widths, strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def markdown_table(rows: Sequence[Mapping[str, str]], columns: Sequence[str] = COLUMNS) -> str:
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(row[c] for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def report_text(report: ProgramReport) -> str:
    """`cinn-py perf`'s output: the table, then the summary line."""
    rows = [kernel_row(k) for k in report.kernels]
    table = text_table(rows) if rows else "no kernels: every op runs as a library call\n"
    return table + summary_line(report) + "\n"


def to_json(report: ProgramReport) -> dict[str, Any]:
    """Everything in the report as plain data (`--json`)."""
    return {
        "program": report.label,
        "arch": report.arch,
        "nvrtc": report.nvrtc,
        "gpu": dataclasses.asdict(report.gpu),
        "minimum_bytes": report.minimum_bytes,
        "kernel_bytes": report.kernel_bytes,
        "over_minimum": report.over_minimum,
        "library_ops": report.library_ops,
        "kernels": [_kernel_json(k) for k in report.kernels],
    }


def _kernel_json(kernel: KernelReport) -> dict[str, Any]:
    sass = kernel.sass
    return {
        "name": kernel.name,
        "groups": kernel.groups,
        "grid": list(kernel.grid),
        "block": list(kernel.block),
        "threads": kernel.threads,
        **dataclasses.asdict(kernel.resources),
        "dynamic_shared": kernel.dynamic_shared,
        "sass_per_thread": sass.instructions,
        "sass_static": sass.static_instructions,
        "loops": [dataclasses.asdict(loop) for loop in sass.loops],
        "loads": {str(w): c for w, c in sorted(sass.loads.items())},
        "stores": {str(w): c for w, c in sorted(sass.stores.items())},
        "lane_zero_stores": {f"{axis}:{w}": c for (axis, w), c in sorted(sass.lane_stores.items())},
        "local_bytes_per_thread": sass.local_bytes,
        "inflight_bytes_per_thread": sass.inflight_bytes,
        "inflight_bytes_per_sm": kernel.inflight_per_sm,
        "footprint_bytes": kernel.footprint_bytes,
        "requested_bytes": kernel.requested_bytes,
        "occupancy": dataclasses.asdict(kernel.occupancy),
        "waves": kernel.waves,
        "estimate": {
            **dataclasses.asdict(kernel.estimate),
            "issue_over_memory": kernel.estimate.issue_over_memory,
        },
    }


def dumps(report: ProgramReport | Sequence[ProgramReport]) -> str:
    """The JSON text of one report or a list of them (infinities as null)."""
    data = to_json(report) if isinstance(report, ProgramReport) else [to_json(r) for r in report]
    return json.dumps(_finite(data), indent=2) + "\n"


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
