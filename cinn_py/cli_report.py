"""What the `cinn-py` command prints, as text: output summaries, `--check` lines, the
`--profile` table, `run`'s closing status line, group headings with buffer names and
launch configurations, fusion explanations and the cache's contents.

Every function here returns text and prints nothing, so the tests compare strings and
`cinn_py/cli.py` decides where each goes (stdout for what was asked, stderr for notes).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cinn_py.backends.codegen_c import array_count
from cinn_py.backends.codegen_cuda import KernelInfo
from cinn_py.hlir.group import Group, GroupKind
from cinn_py.hlir.grouping import FusionExplanation
from cinn_py.hlir.naming import NameTable
from cinn_py.ir.expr import MemoryType
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32
from cinn_py.runtime.instruction import Instruction
from cinn_py.runtime.runtime_program import RuntimeProgram, StepTime
from cinn_py.targets import get_target
from cinn_py.tolerances import Comparison

# ---- outputs ---------------------------------------------------------------------------


def describe(array: Any, dtype: DataType | None = None) -> str:
    """`float32[64, 128] min=... max=... mean=..., no NaN or inf`: dtype, shape and
    what the values are. NaN and infinities are counted, never folded into the
    statistics; a bfloat16 value (`dtype`) held as uint16 bits is read as its values."""
    array = np.asarray(array)
    name = str(array.dtype)
    if dtype is DataType.BFLOAT16 and array.dtype == np.uint16:
        name, array = "bfloat16", bfloat16_to_float32(array)
    text = f"{name}{list(array.shape)}"
    if not array.size:
        return f"{text} (empty)"
    kind = array.dtype.kind
    if kind == "b":
        true = int(np.count_nonzero(array))
        return f"{text} true={true} false={array.size - true}"
    if kind in "iu":
        values = array.astype(np.float64)
        return f"{text} min={values.min():.6g} max={values.max():.6g} mean={values.mean():.6g}"
    if kind not in "fc":
        return text
    finite = np.isfinite(array)
    parts = []
    if finite.any():
        values = array[finite]
        if kind == "c":
            parts.append(f"mean={complex(values.astype(np.complex128).mean()):.6g}")
        else:
            values = values.astype(np.float64)
            parts.append(f"min={values.min():.6g} max={values.max():.6g} mean={values.mean():.6g}")
        if not finite.all():
            parts[-1] += f" over {int(np.count_nonzero(finite))} finite values"
    else:
        parts.append("no finite values")
    return f"{text} {' '.join(parts)}" + _nonfinite(array, finite)


def _nonfinite(array: np.ndarray, finite: np.ndarray) -> str:
    """`, no NaN or inf`, or the count of each kind found."""
    if finite.all():
        return ", no NaN or inf"
    nan = np.isnan(array)
    counts = {"NaN": int(np.count_nonzero(nan))}
    if array.dtype.kind == "c":
        counts["inf"] = int(np.count_nonzero(~finite & ~nan))
    else:
        counts["+inf"] = int(np.count_nonzero(np.isposinf(array)))
        counts["-inf"] = int(np.count_nonzero(np.isneginf(array)))
    return ", " + ", ".join(f"{kind}={n}" for kind, n in counts.items() if n)


def where_line(name: str, buffer: str | None, number: int | None = None) -> str:
    """` [var_7: %1 is %7 after the passes]`: the variable an output was read from, and
    the number it has in `groups`, `ir` and `dump-cuda` when that is not `name`'s.
    `number` is the output's own printed number (for `out0`, the value it fetches)."""
    if buffer is None:
        return ""
    match = re.fullmatch(r"var_(\d+)", buffer)
    if match is None or name == f"%{match.group(1)}":
        return f" [{buffer}]"
    compiled = f"%{match.group(1)}"
    if name.startswith("%") or number is None:
        return f" [{buffer}: {name} is {compiled} after the passes]"
    if f"%{number}" == compiled:
        return f" [{buffer}: {name} is {compiled}]"
    return f" [{buffer}: {name} is %{number}, {compiled} after the passes]"


def check_line(name: str, target: str, result: Comparison) -> str:
    """`check %1 (cuda-emu vs reference): ok, ...`: the comparison and the rule it used."""
    status = "ok" if result.ok else "MISMATCH"
    return f"check {name} ({target} vs reference): {status}, {result}"


# ---- run's status line -----------------------------------------------------------------


@dataclass
class RunSummary:
    """What `cinn-py run` did, for its closing line."""

    target: str
    why: str
    """Why this target: `--target`, or what the GPU probe found."""
    groups: Sequence[Group] = ()
    kernels: int = 0
    compile_s: float = 0.0
    run_s: float = 0.0
    cache: Any = None
    """The kernel cache's counts during the compile (`hits`, `misses`, `rejected`), or
    None where it was not asked (the reference target)."""


def status_line(summary: RunSummary) -> str:
    """`cinn-py: ran on cuda-emu (no GPU: ...): 1 group (1 fused), 1 kernel; compile
    0.421 s, run 3.1 ms; kernel cache: 1 hit, 0 misses`."""
    head = f"cinn-py: ran on {summary.target} ({summary.why})"
    if not get_target(summary.target).compiles:
        work = "NumPy, op by op: no groups, no kernels"
    else:
        work = f"{_groups_count(summary.groups)}, {_plural(summary.kernels, 'kernel')}"
    text = f"{head}: {work}; compile {duration(summary.compile_s)}, run {duration(summary.run_s)}"
    cache = summary.cache
    if cache is not None:
        text += f"; kernel cache: {_plural(cache.hits, 'hit')}, {_plural(cache.misses, 'miss', 'misses')}"
        if cache.rejected:
            text += f", {cache.rejected} damaged entries rebuilt"
    return text


def _groups_count(groups: Sequence[Group]) -> str:
    counts = [(kind.value, sum(g.kind is kind for g in groups)) for kind in GroupKind]
    detail = ", ".join(f"{n} {kind}" for kind, n in counts if n)
    return _plural(len(groups), "group") + (f" ({detail})" if detail else "")


def _plural(n: int, word: str, plural: str = "") -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def duration(seconds: float) -> str:
    """`412 us`, `3.10 ms`, `1.234 s`."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"


# ---- --profile -------------------------------------------------------------------------


def profile_table(times: Sequence[StepTime], target: str) -> str:
    """One line per instruction in execution order (kernels with their launch), and the
    total; the heading says which clock measured the kernels."""
    clock = get_target(target).kernel_clock
    lines = [f"profile ({target}; kernels: {clock}):"]
    rows = []
    for timed in times:
        step = timed.step
        if isinstance(step, Instruction):
            what = f"{step.group}  {step.name}  {launch_dims(step.grid, step.block)}"
            what += f"  dynamic shared {step.shared_mem} B"
        else:
            what = f"{step.group}  library {step.op.name} ({step.call.where})"
        rows.append((what, duration(timed.seconds)))
    rows.append(("total", duration(sum(t.seconds for t in times))))
    width = max(len(what) for what, _ in rows)
    lines.extend(f"  {what.ljust(width)}  {seconds:>9}" for what, seconds in rows)
    return "\n".join(lines) + "\n"


def steps_summary(runtime: RuntimeProgram) -> str:
    """The runtime program's steps for `run -v`: kernels, library calls by what runs
    them, and the CUDA graphs the last run replayed."""
    kernels = f"{len(runtime.kernels)} kernel(s)"
    distinct = len(runtime.distinct_kernels)
    if distinct < len(runtime.kernels):
        kernels += f" ({distinct} distinct)"
    where = Counter(
        step.call.where for step in runtime.instructions if not isinstance(step, Instruction)
    )
    calls = "; ".join(f"{count} by {what}" for what, count in sorted(where.items()))
    library = f"{sum(where.values())} library call(s)" + (f" ({calls})" if calls else "")
    if runtime.cuda_graph:
        graphs = f"CUDA graphs on, {runtime.graph_count} captured"
    else:
        graphs = "CUDA graphs off"
    return f"{kernels}, {library}; {graphs}"


def launch_dims(grid: Sequence[int], block: Sequence[int]) -> str:
    return f"grid {tuple(grid)} block {tuple(block)}"


# ---- groups, IR and CUDA headings --------------------------------------------------------


def group_heading(
    group: Group,
    names: NameTable,
    renamed: Mapping[int, str] | None = None,
    launch: str = "",
    tactic: str = "",
) -> str:
    """The comment lines above a group's IR or kernel: its ops, its inputs and outputs
    as printed (`%7`) with their buffers (`var_7`) and, for a value the passes renumbered,
    the number the input program gave it; then the tactic that scheduled it
    (`// tactic: row`) and its launch line, when given."""
    renamed = renamed or {}

    def value(v: Any) -> str:
        number = names.number(v)
        extra = f", the program's {renamed[number]}" if number in renamed else ""
        return f"%{number} ({names.buffer(v)}{extra})"

    ops = ", ".join(op.name for op in group.ops)
    inputs = ", ".join(value(v) for v in group.inputs) or "-"
    outputs = ", ".join(value(v) for v in group.outputs) or "-"
    text = f"// {group.name} ({group.kind.value}): {ops}\n// inputs {inputs}; outputs {outputs}\n"
    if tactic:
        text += f"// tactic: {tactic}\n"
    return text + (f"// {launch}\n" if launch else "")


def launch_line(info: KernelInfo, func: LoweredFunc | None = None) -> str:
    """`launch fn_group_0: grid (8, 1, 1), block (32, 8, 1) = 2048 threads; shared memory:
    0 B dynamic, 512 B in __shared__ arrays`: how the runtime launches the kernel."""
    if all(isinstance(d, int) for d in info.grid):
        threads = int(np.prod(info.grid)) * int(np.prod(info.block))
        grid, count = str(tuple(info.grid)), f"{threads} threads in all"
    else:  # a symbolic kernel: its grid follows the dims it is launched with
        grid = "(" + ", ".join(str(d) for d in info.grid) + ")"
        count = f"{int(np.prod(info.block))} threads a block"
    text = (
        f"launch {info.name}: grid {grid}, block {tuple(info.block)} "
        f"({count}); shared memory: {info.shared_mem} B dynamic"
    )
    if func is not None:
        text += f", {static_shared_bytes(func)} B in __shared__ arrays"
    return text


def static_shared_bytes(func: LoweredFunc) -> int:
    """The bytes of the kernel's own `__shared__` arrays (the runtime header's block
    reductions keep a little more of their own)."""
    return sum(
        array_count(buffer) * buffer.dtype.itemsize
        for buffer in func.temp_buffers
        if buffer.memory_type is MemoryType.SHARED
    )


def annotate_kernels(source: str, headings: Mapping[str, str]) -> str:
    """`source` with `headings[name]` inserted above the line that defines kernel `name`."""
    for name, heading in headings.items():
        match = re.search(rf"^[^\n]*__global__[^\n]*\b{re.escape(name)}\(", source, re.M)
        if match is not None:
            source = source[: match.start()] + heading + source[match.start() :]
    return source


# ---- --explain ---------------------------------------------------------------------------


def explanations_text(explanations: Sequence[FusionExplanation], names: NameTable) -> str:
    """Why groups linked by a value were not merged, one line each:
    `group_0 -> group_1 along %1 (pd_op.sum -> pd_op.subtract): row invariant: ...`."""
    lines = ["not fused (--explain):"]
    for item in explanations:
        first, second = item.ops
        value = names.printed(item.value)
        if item.kind == "vertical":
            edge = f"{item.first} -> {item.second} along {value}"
        else:
            edge = f"{item.first} | {item.second}, both reading {value}"
        lines.append(f"  {edge} ({first.name}, {second.name}): {item.reason}")
    if not explanations:
        lines.append("  nothing: no value links two groups")
    return "\n".join(lines) + "\n"


# ---- cinn-py cache -----------------------------------------------------------------------


def cache_info_text(info: Mapping[str, Any]) -> str:
    """The cache folder, then entries and bytes per kind and in all."""
    lines = [f"cache folder: {info.get('folder', '?')}"]
    kinds = info.get("kinds") or {}
    width = max((len(kind) for kind in kinds), default=0)
    for kind, counts in kinds.items():
        entries = _plural(counts.get("entries", 0), "entry", "entries")
        lines.append(f"  {kind.ljust(width)}  {entries:>12}  {size(counts.get('bytes', 0)):>10}")
    total = _plural(info.get("entries", 0), "entry", "entries")
    lines.append(f"total: {total}, {size(info.get('bytes', 0))}")
    return "\n".join(lines) + "\n"


def size(n: int) -> str:
    """`512 B`, `4.0 KiB`, `1.5 MiB`, `2.0 GiB`."""
    value = float(n)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
