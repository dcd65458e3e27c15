"""The `cinn-py` command.

    cinn-py print     PROGRAM
    cinn-py run       PROGRAM [--feeds F.npz] [--params P.npz] [--fetch %ID ...]
                              [--target cuda|cuda-emu|reference] [--out OUT.npz] [--check]
                              [--profile] [--seed N] [--fast-math] [--schedules FILE]
                              [--no-cache] [-v]
    cinn-py groups    PROGRAM [--dot FILE] [--explain] [--symbolic] [--shape NAME=2x3 ...]
    cinn-py ir        PROGRAM --stage lowered|scheduled [--shape NAME=2x3 ...] [--target T]
                              [--schedules FILE]
    cinn-py dump-cuda PROGRAM [-o DIR] [--header] [--fast-math] [--shape NAME=2x3 ...]
                              [--target T] [--schedules FILE]
    cinn-py perf      PROGRAM [--json] [--fast-math] [--arch sm_90] [--shape NAME=2x3 ...]
                              [--schedules FILE]
    cinn-py cache     info|clear [--kind KIND]
    cinn-py --version

`run` prints each output (`%7: float32[...] min=... [var_7]`), then what `--profile`
and `--check` asked for, and ends with one status line on stderr: the target and why,
groups and kernels, compile and run time, kernel cache hits. A compile that takes more
than about a second shows a progress bar over its stages on stderr when stderr is a
terminal (`cli_progress`); `--no-cache` compiles without the compiled-program cache.
`-v` first prints the compile stages' seconds, the memory plan, the steps and the
compile counts (`compiles: 1 (compiled 1, loaded 0), reused 0, evicted 0; kernel units:
1 compiled, 0 cached`, `driver.compile_stats`).

`dump-cuda` prints the kernels of the one translation unit the compiler builds, each
under its group's heading, the tactic that scheduled it (`// tactic: row`) and its
launch line (as `ir --stage scheduled` does), and refers to the runtime header pasted
above them (`--header` prints it after the kernels); with `-o DIR` it writes a
self-contained `<group>.cu` per fused group instead, header included.

`groups` prints the program after the compiler's passes with each group as a
`cinn_op.group` op; `--dot FILE` also writes it as Graphviz, one cluster per group;
`--explain` adds, after it, why each pair of groups linked by a value was not merged;
`--symbolic` prints before it the symbolic shape analysis (`pir/shape_analysis.py`):
each -1 dim's symbol and where it comes from, the symbolic shapes of the feeds, outputs
and -1-dim values, and the constraints between them; and after it, per fused group,
the dims its kernel takes as arguments (symbolic kernels) or why it has none.

`perf` compiles every kernel for the GPU with NVRTC (no GPU needed), reads registers,
spills and shared memory from ptxas and the instructions from cuobjdump's SASS, and
prints one row per kernel with the bytes it moves and the model's estimate of its share
of copy bandwidth (docs/PERF.md); `--json` prints every figure instead.

`groups`, `ir`, `dump-cuda` and `perf` compile for static shapes: a feed's -1 dims take
the sizes given by `--shape x=2x3`, else 4 (the size `run` gives them in random feeds), with a note.
A value keeps its number through the compiler: `%7` is the buffer `var_7` in the IR and
the CUDA C; an output a pass rewrote (a decomposed softmax) says which number it took.
Errors from bad input print as one readable message and exit with status 2; a
`--check` that finds a mismatch exits with status 1; Ctrl-C exits with status 130.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import time
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import cinn_py
from cinn_py import api
from cinn_py.backends import cache
from cinn_py.backends.codegen_cuda import generate_cuda, runtime_header
from cinn_py.cli_progress import compile_progress
from cinn_py.cli_report import (
    RunSummary,
    annotate_kernels,
    cache_info_text,
    check_line,
    describe,
    explanations_text,
    group_heading,
    launch_line,
    profile_table,
    status_line,
    steps_summary,
    where_line,
)
from cinn_py.driver import program_cache
from cinn_py.driver.pir_compiler import FusedKernel, PIRCompiler, Stages, group_source
from cinn_py.errors import CinnError, LoadError
from cinn_py.hlir.group import GroupKind
from cinn_py.hlir.group_ops import groups_to_dot, groups_to_program
from cinn_py.hlir.op_lowering.lower import symbolic_blocker
from cinn_py.ir.expr import Var
from cinn_py.ir.group_schedule.finish import ScheduleResult
from cinn_py.ir.printer import print_ir
from cinn_py.perf import report as perf_report
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.passes.infer_shapes import has_dynamic_dims
from cinn_py.pir.printer import ValueNames, print_program, value_names
from cinn_py.pir.program import Program
from cinn_py.pir.shape_analysis import analyze_shapes
from cinn_py.pir.types import DenseTensorType
from cinn_py.runtime.feeds import feed_types, parameter_types
from cinn_py.runtime.runtime_program import RuntimeProgram
from cinn_py.targets import COMPILED_TARGETS, REFERENCE, TARGETS, default_target
from cinn_py.tolerances import FAST_MATH, compare

FAST_MATH_HELP = (
    "compute float32 exp, log, sin, cos, tan, pow, tanh and division with CUDA's fast "
    "approximations (--check then uses the fast-math tolerances)"
)
SCHEDULES_HELP = (
    "the schedule database to schedule with (tools/tune.py writes one; default: "
    "$CINN_PY_SCHEDULES/<arch>.json, else the checkout's schedules/<arch>.json)"
)
DYNAMIC_DIM_SIZE = 4
"""The size a -1 dim gets in generated feeds when no --feeds file is given."""

INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as shells report it."""
BROKEN_PIPE = 141
"""The exit status when the reader of stdout went away (128 + SIGPIPE): `... | head`."""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        parser = _make_parser()
        args = parser.parse_args(argv)
        return args.handler(args)
    except KeyboardInterrupt:
        print("cinn-py: interrupted", file=sys.stderr)
        return INTERRUPTED
    except CinnError as error:
        print(f"cinn-py: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        _discard_stdout()
        return BROKEN_PIPE
    except OSError as error:
        print(f"cinn-py: error: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 2


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises nothing more."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # not a file (captured): nothing is flushed to a pipe
        pass


def version() -> str:
    """The installed package's version, else the source tree's `cinn_py.__version__`."""
    try:
        return importlib.metadata.version("cinn_py")
    except importlib.metadata.PackageNotFoundError:
        return cinn_py.__version__


def _make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cinn-py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"cinn-py {version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    show = commands.add_parser("print", help="parse a program and print it back")
    show.add_argument("program", help="program text, model.json, its folder or prefix")
    show.set_defaults(handler=_cmd_print)

    run = commands.add_parser("run", help="run a program and report or save its outputs")
    run.add_argument("program", help="program text, model.json, its folder or prefix")
    run.add_argument("--feeds", help=".npz of inputs by data name (default: random, seeded)")
    run.add_argument("--params", help=".npz of parameters by name (default: the model's)")
    run.add_argument("--fetch", nargs="+", metavar="ID", help="values to fetch: %%ID or outN")
    run.add_argument(
        "--target",
        choices=TARGETS,
        default=None,
        help="where to run (default: cuda where there is a GPU, else cuda-emu)",
    )
    run.add_argument("--out", help="write the outputs to this .npz")
    run.add_argument(
        "--check",
        action="store_true",
        help="also run the reference executor and report the largest error",
    )
    run.add_argument(
        "--profile",
        action="store_true",
        help="run once more, timing each kernel and library op (with its launch)",
    )
    run.add_argument("--seed", type=int, default=0, help="seed for generated feeds/params")
    run.add_argument("--fast-math", action="store_true", help=FAST_MATH_HELP)
    run.add_argument("--schedules", metavar="FILE", help=SCHEDULES_HELP)
    run.add_argument(
        "--no-cuda-graph",
        dest="cuda_graph",
        action="store_false",
        default=None,
        help="on cuda, launch each step instead of replaying CUDA graphs",
    )
    run.add_argument(
        "--no-cache",
        action="store_true",
        help="compile every stage: neither load nor store the compiled program "
        "(CINN_PY_CACHE=0 does the same; kernels still come from the kernel cache)",
    )
    run.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print the seconds of each compile stage, the memory plan's arena and naive "
        "bytes, how the library calls and CUDA graphs run, and the compile counts "
        "(compiled, loaded from the cache, reused; kernel units compiled and cached)",
    )
    run.set_defaults(handler=_cmd_run)

    groups = commands.add_parser("groups", help="print the program with its fused groups")
    groups.add_argument("program", help="program text, model.json, its folder or prefix")
    groups.add_argument("--dot", metavar="FILE", help="also write the groups as Graphviz here")
    groups.add_argument(
        "--explain",
        action="store_true",
        help="also say why each pair of groups linked by a value was not merged",
    )
    groups.add_argument(
        "--symbolic",
        action="store_true",
        help="first print the symbols of the -1 dims, the symbolic shapes and the constraints",
    )
    _add_shape_option(groups)
    groups.set_defaults(handler=_cmd_groups)

    ir = commands.add_parser("ir", help="print the loop IR of every fused group")
    ir.add_argument("program", help="program text, model.json, its folder or prefix")
    ir.add_argument("--stage", choices=("lowered", "scheduled"), required=True)
    _add_compile_options(ir)
    ir.set_defaults(handler=_cmd_ir)

    dump = commands.add_parser("dump-cuda", help="print or write the CUDA C of every group")
    dump.add_argument("program", help="program text, model.json, its folder or prefix")
    dump.add_argument("-o", "--out-dir", help="write one self-contained <group>.cu per group here")
    dump.add_argument(
        "--header",
        action="store_true",
        help="also print the runtime header the kernels use, after them",
    )
    dump.add_argument("--fast-math", action="store_true", help=FAST_MATH_HELP)
    _add_compile_options(dump)
    dump.set_defaults(handler=_cmd_dump_cuda)

    perf = commands.add_parser(
        "perf",
        help="static report per kernel: regs, spills, SASS, bytes, est. %% of copy bandwidth",
    )
    perf.add_argument("program", help="program text, model.json, its folder or prefix")
    perf.add_argument("--json", action="store_true", help="print every figure as JSON")
    perf.add_argument("--fast-math", action="store_true", help=FAST_MATH_HELP)
    perf.add_argument("--schedules", metavar="FILE", help=SCHEDULES_HELP)
    perf.add_argument(
        "--arch", default=perf_report.DEFAULT_ARCH, help="the GPU arch NVRTC builds for"
    )
    _add_shape_option(perf)
    perf.set_defaults(handler=_cmd_perf)

    kept = commands.add_parser("cache", help="show or clear the compiled-program and kernel caches")
    kept.add_argument("action", choices=("info", "clear"))
    kept.add_argument("--kind", help="clear only this kind of entry (a folder `info` lists)")
    kept.set_defaults(handler=_cmd_cache)
    return parser


def _add_shape_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=DIMS",
        help="the shape of feed NAME, e.g. x=2x3 (for its -1 dims; repeatable)",
    )


def _add_compile_options(parser: argparse.ArgumentParser) -> None:
    _add_shape_option(parser)
    parser.add_argument(
        "--target",
        choices=COMPILED_TARGETS,
        default=None,
        help="whose schedule to use (default: the default target where it compiles)",
    )
    parser.add_argument("--schedules", metavar="FILE", help=SCHEDULES_HELP)


def _cmd_print(args: argparse.Namespace) -> int:
    sys.stdout.write(print_program(api.load(args.program)))
    return 0


# ---- run -----------------------------------------------------------------------------------


def symbolic_summary(kernels: Sequence[Any]) -> str:
    """`symbolic kernels: 7 of 8 take -1 dims as arguments (S0, S1)`: how many of a -1
    program's kernels are shared across feed shapes (`docs/SHAPES.md`)."""
    taking = [k for k in kernels if any(a.startswith("=") for a in k.args)]
    dims = sorted({a[1:] for k in taking for a in k.args if a.startswith("=")})
    named = f" ({', '.join(dims)})" if dims else ""
    text = f"symbolic kernels: {len(taking)} of {len(kernels)} take -1 dims as arguments{named}"
    aligned = sum(1 for k in taking if "_aligned" in k.name)
    if aligned:  # `driver/aligned_variants.py`: the vector kernel this shape launched
        text += f"; {aligned} ran as aligned variant(s), with vectors"
    return text


def _cmd_run(args: argparse.Namespace) -> int:
    program = api.load(args.program)
    feeds, params = _inputs(program, args)
    exe, outputs, summary = _compile_and_run(program, feeds, params, args)
    if args.verbose and exe.timings:
        stages = ", ".join(f"{stage} {seconds:.3f}s" for stage, seconds in exe.timings.items())
        print(f"cinn-py: {exe.target}: {len(exe.kernels)} kernel(s); {stages}", file=sys.stderr)
    if args.verbose and exe.memory is not None:
        print(f"cinn-py: memory: {exe.memory.summary()}", file=sys.stderr)
    if args.verbose and exe.runtime_program is not None:
        print(f"cinn-py: steps: {steps_summary(exe.runtime_program)}", file=sys.stderr)
        print(f"cinn-py: {exe.compile_stats.summary()}", file=sys.stderr)
        if has_dynamic_dims(program):
            print(f"cinn-py: {symbolic_summary(exe.kernels)}", file=sys.stderr)
    dtypes = {}
    for name, line, dtype in _output_lines(exe, outputs):
        print(f"{name}: {line}")
        dtypes[name] = dtype
    if args.out:
        np.savez(args.out, **outputs)
    if args.profile:
        _profile(exe.runtime_program, exe.target)
    status = 0
    if args.check:
        expected = api.compile(program, REFERENCE.name).run(feeds, params, args.fetch)
        status = _report_check(outputs, expected, exe.target, dtypes, args.fast_math)
    print(status_line(summary), file=sys.stderr)
    return status


def _inputs(program: Program, args: argparse.Namespace) -> tuple[dict, dict]:
    """The feeds and parameters `run` uses: from `--feeds` / `--params`, else random
    (and the program's own parameters)."""
    rng = np.random.default_rng(args.seed)
    if args.feeds:
        feeds = _bfloat16_bits(read_npz(args.feeds, "--feeds"), feed_types(program))
    else:
        feeds = random_feeds(program, rng)
    if args.params:
        params = _bfloat16_bits(read_npz(args.params, "--params"), parameter_types(program))
    else:
        params = _default_params(program, rng)
    return feeds, params


def _compile_and_run(
    program: Program, feeds: dict, params: dict, args: argparse.Namespace
) -> tuple[api.Executable, dict[str, Any], RunSummary]:
    """Compile for the chosen target and run once, timing both: a compile that the run
    itself makes (a program with -1 dims, a `--fetch` of a value inside a kernel) counts
    as compile time, not run time."""
    summary = RunSummary(*_target(args.target))
    counts = cache.stats.snapshot()
    with program_cache.bypassed(args.no_cache), compile_progress(sys.stderr):
        start = time.perf_counter()
        exe = api.compile(
            program,
            summary.target,
            cuda_graph=getattr(args, "cuda_graph", None),
            fast_math=getattr(args, "fast_math", False),
            schedules=getattr(args, "schedules", None),
        )
        summary.compile_s = time.perf_counter() - start
        before = _runtime(exe)
        start = time.perf_counter()
        outputs = exe.run(feeds, params, args.fetch)
        summary.run_s = time.perf_counter() - start
    runtime = _runtime(exe)
    if runtime is not None and runtime is not before:
        compiled = runtime.timings.get("total", 0.0)
        summary.compile_s += compiled
        summary.run_s = max(summary.run_s - compiled, 0.0)
    if runtime is not None:
        summary.groups, summary.kernels = runtime.groups, len(runtime.kernels)
        summary.cache = cache.stats.snapshot() - counts
    return exe, outputs, summary


def _target(given: str | None) -> tuple[str, str]:
    """The target `run` uses and why: named by `--target`, or what the GPU probe found."""
    if given is not None:
        return given, "--target"
    target = default_target()
    return target.name, target.why_default()


def _runtime(exe: api.Executable) -> RuntimeProgram | None:
    """The executable's latest compile, None on reference or before a dynamic program's
    first run."""
    try:
        return exe.runtime_program
    except CinnError:
        return None


def _output_lines(
    exe: api.Executable, outputs: Mapping[str, Any]
) -> list[tuple[str, str, DataType | None]]:
    """Each output's name, summary and where it lives (`var_7`, and its number after the
    passes), and its declared dtype (a bfloat16 output arrives as uint16 bits)."""
    by_name = dict(zip(exe.output_names, exe.outputs, strict=True))
    by_id = value_names(exe.program)
    numbers = ValueNames(exe.program)
    latest = getattr(exe.runner, "latest", None)  # the compile that ran (not on reference)
    lines = []
    for name, array in outputs.items():
        value = by_name[name] if name in by_name else by_id[name]
        dtype = value.type.data_type if isinstance(value.type, DenseTensorType) else None
        number = numbers.number(value)
        storage = None if latest is None else latest.storage.get(number)
        buffer = storage if isinstance(storage, str) else None
        lines.append((name, describe(array, dtype) + where_line(name, buffer, number), dtype))
    return lines


def _profile(runtime: RuntimeProgram | None, target: str) -> None:
    if runtime is None:
        print("cinn-py: note: --profile: the reference target runs no kernels", file=sys.stderr)
        return
    sys.stdout.write(profile_table(runtime.profile_steps(), target))


def _report_check(
    outputs: Mapping[str, np.ndarray],
    expected: Mapping[str, np.ndarray],
    target: str,
    dtypes: Mapping[str, DataType | None],
    fast_math: bool = False,
) -> int:
    failed = 0
    for name, want in expected.items():
        bfloat16 = "bfloat16" if dtypes.get(name) is DataType.BFLOAT16 else None
        override = FAST_MATH.get(np.asarray(want).dtype.name) if fast_math else None
        result = compare(outputs[name], want, bfloat16, None if bfloat16 else override)
        failed += not result.ok
        print(check_line(name, target, result))
    return 1 if failed else 0


# ---- groups, ir, dump-cuda -------------------------------------------------------------


def _cmd_groups(args: argparse.Namespace) -> int:
    program = api.load(args.program)
    if args.symbolic:
        sys.stdout.write(analyze_shapes(program).report() + "\n")
    compiler = PIRCompiler(
        program, api.default_target(), feed_shapes=_feed_shapes(program, args.shape)
    )
    kernels = args.symbolic and has_dynamic_dims(program)
    stages = compiler.stages(until="scheduled" if kernels else "grouping")
    grouped = groups_to_program(stages.program, stages.groups)
    text = print_program(grouped)
    if args.dot:
        with open(args.dot, "w", encoding="utf-8") as f:
            f.write(groups_to_dot(grouped))
    sys.stdout.write(text)
    if kernels:
        sys.stdout.write("\n" + symbolic_kernels_text(stages, compiler))
    if args.explain:
        sys.stdout.write("\n" + explanations_text(stages.explanations, stages.names))
    _note_renumbered(program, stages)
    return 0


def symbolic_kernels_text(stages: Stages, compiler: PIRCompiler) -> str:
    """Per fused group of a -1 program: the dims its kernel takes as arguments (shared
    by every feed shape of its bucket), or why it is compiled with numbers."""
    lines = ["symbolic kernels:"]
    for kernel in stages.fused:
        func = kernel.scheduled.func
        dims = [arg.name for arg in func.args if isinstance(arg.value, Var)]
        head = f"  {kernel.group.name} ({kernel.scheduled.label}): "
        if dims:
            lines.append(head + "takes " + ", ".join(dims))
            continue
        why = None
        if compiler.symbolic_dims is not None:
            why = symbolic_blocker(kernel.group, compiler.symbolic_dims)
        if why is None:
            why = "its lowering took it only with numbers"
            if kernel.symbolic_fallback is not None:
                why = f"the symbolic schedule or its codegen: {kernel.symbolic_fallback}"
            if not compiler.symbolic:
                why = "CINN_PY_SPECIALIZE is set"
        lines.append(head + "static: " + why)
    return "\n".join(lines) + "\n"


def _cmd_ir(args: argparse.Namespace) -> int:
    program = api.load(args.program)
    stages = _compiler(program, args).stages(until=args.stage)
    renamed = _renumbered(program, stages)
    for kernel in stages.fused:
        if args.stage == "lowered":
            func, launch, tactic = kernel.lowered, "", ""
        else:
            func, launch = kernel.scheduled.func, _launch_of(kernel.scheduled.func)
            tactic = kernel.scheduled.label
        text = group_heading(kernel.group, stages.names, renamed, launch, tactic)
        if kernel.shares is not None:
            text += f"// launches fn_{kernel.shares.group.name} (equal to it up to names)\n"
        text += print_ir(func) + "\n"
        if args.stage == "scheduled":
            text += "".join(f"// {line}\n" for line in str(kernel.scheduled.trace).splitlines())
        print(text)
    _note_library_only(stages)
    return 0


def _launch_of(func: Any) -> str:
    """The launch line of a scheduled function's kernel (codegen decides the dims)."""
    try:
        (info,) = generate_cuda([func]).kernels
    except (CinnError, ValueError) as error:
        return f"launch: unknown (codegen refused the function: {error})"
    return launch_line(info, func)


def _cmd_dump_cuda(args: argparse.Namespace) -> int:
    program = api.load(args.program)
    compiler = _compiler(program, args)
    stages = compiler.stages(until="codegen")
    renamed = _renumbered(program, stages)
    if args.out_dir is None:
        if stages.source is not None:
            sys.stdout.write(_unit_text(stages, renamed, args.header))
    else:
        os.makedirs(args.out_dir, exist_ok=True)
        for kernel in stages.fused:
            path = os.path.join(args.out_dir, f"{kernel.group.name}.cu")
            own = group_source(kernel, compiler.target, compiler.fast_math)
            (info,) = own.kernels
            heading = group_heading(
                kernel.group,
                stages.names,
                renamed,
                launch_line(info, kernel.scheduled.func),
                kernel.scheduled.label,
            )
            text = annotate_kernels(own.source, {info.name: heading})
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.rstrip("\n") + "\n")
            print(f"wrote {path}")
    _note_library_only(stages)
    return 0


def _unit_text(stages: Stages, renamed: Mapping[int, str], with_header: bool) -> str:
    """The translation unit's kernels, each under its heading and launch line, with the
    runtime header replaced by a note where it is pasted (printed after the kernels with
    `with_header`)."""
    source = stages.source
    headings = {
        info.name: group_heading(
            kernel.group,
            stages.names,
            renamed,
            launch_line(info, scheduled.func),
            scheduled.label,
        )
        + _variant_note(kernel, scheduled)
        + "".join(
            f"// {other.group.name} launches {info.name}\n"
            for other in stages.fused
            if other.shares is kernel
        )
        for (kernel, scheduled), info in zip(stages.rendered, source.kernels, strict=True)
    }
    text = annotate_kernels(source.source, headings)
    header = runtime_header().rstrip()
    if header not in text:
        return text.rstrip("\n") + "\n"
    lines = header.count("\n") + 1
    where = "printed after the kernels" if with_header else "`--header` prints it after the kernels"
    note = (
        f"// cinn_py_runtime.h ({lines} lines) is pasted here when compiled: {where}; "
        "`-o DIR` writes self-contained .cu files"
    )
    text = text.replace(header, note, 1).rstrip("\n") + "\n"
    if with_header:
        text += f"\n// ---- the runtime header (pasted above the kernels when compiled) ----\n{header}\n"
    return text


def _variant_note(kernel: FusedKernel, scheduled: ScheduleResult) -> str:
    """The heading line of an aligned variant: when it is launched instead."""
    aligned = kernel.aligned
    if aligned is None or scheduled is not aligned.scheduled:
        return ""
    return (
        f"// aligned variant: launched instead of fn_{kernel.group.name} where "
        f"{aligned.dim} % {aligned.lanes} == 0\n"
    )


def _compiler(program: Program, args: argparse.Namespace) -> PIRCompiler:
    target = args.target or api.default_target()
    return PIRCompiler(
        program,
        target,
        feed_shapes=_feed_shapes(program, args.shape),
        fast_math=getattr(args, "fast_math", False),
        schedules=getattr(args, "schedules", None),
    )


def _renumbered(program: Program, stages: Stages) -> dict[int, str]:
    """For each output of `program` that the passes replaced by a value of another
    number (a decomposed softmax's divide), that number -> the program's `%N`."""
    numbers = ValueNames(program)
    renamed = {}
    for value in program.outputs():
        old = numbers.number(value)
        new = stages.program.renumbered.get(old)
        if old is not None and new is not None:
            number = stages.names.number(new)
            if number != old:
                renamed[number] = f"%{old}"
    return renamed


def _note_renumbered(program: Program, stages: Stages) -> None:
    for number, old in _renumbered(program, stages).items():
        print(
            f"cinn-py: note: the program's output {old} is %{number} after the passes "
            f"(var_{number})",
            file=sys.stderr,
        )


def _feed_shapes(program: Program, given: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """Shapes from `--shape NAME=2x3`, and DYNAMIC_DIM_SIZE for -1 dims of feeds not
    given one (with a note saying so)."""
    types = feed_types(program)
    shapes: dict[str, tuple[int, ...]] = {}
    for item in given:
        name, sep, dims = item.partition("=")
        try:
            shape = tuple(int(d) for d in dims.split("x")) if dims else ()
        except ValueError:
            shape = (-1,)
        if not sep or any(d < 0 for d in shape):
            raise CinnError(f"--shape '{item}': expected NAME=DIMS such as x=2x3 (x= for 0-D)")
        if name not in types:
            raise CinnError(f"--shape '{item}': the program has no feed '{name}'")
        shapes[name] = shape
    for name, type_ in types.items():
        if name not in shapes and not type_.is_static:
            shapes[name] = tuple(DYNAMIC_DIM_SIZE if d < 0 else d for d in type_.dims)
            dims = "x".join(map(str, shapes[name]))
            print(
                f"cinn-py: note: feed '{name}' has -1 dims; compiled as {name}={dims} "
                "(give --shape to choose)",
                file=sys.stderr,
            )
    return shapes


def _note_library_only(stages: Stages) -> None:
    library = [g.name for g in stages.groups if g.kind is not GroupKind.FUSED]
    if library:
        print(
            f"cinn-py: note: {', '.join(library)} run by reference kernels (no generated code)",
            file=sys.stderr,
        )


# ---- perf --------------------------------------------------------------------------------


def _cmd_perf(args: argparse.Namespace) -> int:
    program = api.load(args.program)
    report = perf_report.perf_report(
        program,
        arch=args.arch,
        feed_shapes=_feed_shapes(program, args.shape),
        label=args.program,
        fast_math=args.fast_math,
        schedules=args.schedules,
    )
    sys.stdout.write(perf_report.dumps(report) if args.json else perf_report.report_text(report))
    return 0


# ---- cache -------------------------------------------------------------------------------


def _cmd_cache(args: argparse.Namespace) -> int:
    if args.action == "info":
        sys.stdout.write(cache_info_text(cache.info()))
        return 0
    removed = cache.clear(args.kind)
    what = "entry" if removed == 1 else "entries"
    kind = f" of kind '{args.kind}'" if args.kind else ""
    print(f"removed {removed} {what}{kind} from {cache.cache_dir()}")
    return 0


# ---- inputs ------------------------------------------------------------------------------


def random_feeds(program: Program, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A feed for every data op: normal floats, small ints, random bools; -1 dims get 4."""
    feeds = {}
    for op in program.data_ops():
        result = op.result(0)
        if isinstance(result.type, DenseTensorType):
            feeds[str(op.attr("name"))] = _random_array(result.type, rng)
    return feeds


def _default_params(program: Program, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The program's own parameters; those it lacks (a text program) get random values."""
    params = dict(program.parameters)
    missing = []
    for op in program.parameter_ops():
        name = str(op.attr("parameter_name"))
        if name not in params and isinstance(op.result(0).type, DenseTensorType):
            params[name] = _random_array(op.result(0).type, rng)
            missing.append(name)
    if missing:
        print(
            f"cinn-py: note: no --params; random values for {len(missing)} parameter(s)",
            file=sys.stderr,
        )
    return params


def _random_array(type_: DenseTensorType, rng: np.random.Generator) -> np.ndarray:
    shape = tuple(DYNAMIC_DIM_SIZE if d < 0 else d for d in type_.dims)
    dtype = type_.data_type
    if dtype is DataType.BOOL:
        return rng.random(shape) < 0.5
    if dtype.is_integer:
        return rng.integers(0, 8, size=shape).astype(dtype.numpy)
    if dtype is DataType.BFLOAT16:
        return float32_to_bfloat16(rng.standard_normal(shape).astype(np.float32))
    if dtype.is_complex:
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype.numpy)
    return rng.standard_normal(shape).astype(dtype.numpy)


def read_npz(path: str, option: str) -> dict[str, np.ndarray]:
    """The arrays of the .npz file `path` (given to `option`), by name; a LoadError that
    says what the file is instead (missing, a folder, not a zip archive, a single .npy,
    members that are no arrays)."""
    if not os.path.exists(path):
        raise LoadError(f"{option} {path}: no such file")
    if os.path.isdir(path):
        raise LoadError(f"{option} {path}: is a folder, not a .npz file")
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as f:
            npy = f.read(6) == b"\x93NUMPY"
        hint = "; it is a .npy file (one array): save named arrays with numpy.savez" if npy else ""
        raise LoadError(
            f"{option} {path}: is not a .npz file (a zip archive of .npy arrays, as "
            f"numpy.savez writes){hint}"
        )
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except (ValueError, OSError, KeyError, zipfile.BadZipFile) as error:
        raise LoadError(f"{option} {path}: cannot read its arrays ({error})") from None
    for key, array in arrays.items():
        if not isinstance(array, np.ndarray):
            raise LoadError(f"{option} {path}: its member '{key}' is not a .npy array")
    return arrays


def _bfloat16_bits(
    arrays: dict[str, np.ndarray], types: Mapping[str, DenseTensorType]
) -> dict[str, np.ndarray]:
    """An ml_dtypes bfloat16 array comes back from a .npz as 2-byte void (`V2`): for a
    bfloat16 feed or parameter, its bits as uint16, as cinn_py's arrays hold bfloat16."""
    out = dict(arrays)
    for name, array in arrays.items():
        type_ = types.get(name)
        bfloat16 = type_ is not None and type_.data_type is DataType.BFLOAT16
        if bfloat16 and array.dtype.kind == "V" and array.dtype.itemsize == 2:
            out[name] = array.view(np.uint16)
    return out


if __name__ == "__main__":
    sys.exit(main())
