"""The `cinn-py` command.

    cinn-py print     PROGRAM
    cinn-py run       PROGRAM [--feeds F.npz] [--params P.npz] [--fetch %ID ...]
                              [--target cuda|cuda-emu|reference] [--out OUT.npz] [--check] [-v]
    cinn-py groups    PROGRAM [--dot FILE] [--shape NAME=2x3 ...]
    cinn-py ir        PROGRAM --stage lowered|scheduled [--shape NAME=2x3 ...] [--target T]
    cinn-py dump-cuda PROGRAM [-o DIR] [--shape NAME=2x3 ...] [--target T]

`dump-cuda` prints the one translation unit the compiler builds (every fused group's
kernel, the groups listed at its top); with `-o DIR` it writes a self-contained
`<group>.cu` per fused group instead.

`groups` prints the program after the compiler's passes with each group as a
`cinn_op.group` op; `--dot FILE` also writes it as Graphviz, one cluster per group.

`groups`, `ir` and `dump-cuda` compile for static shapes: a feed's -1 dims take the sizes given by
`--shape x=2x3`, else 4 (the size `run` gives them in random feeds), with a note.
Errors from bad input print as one readable message and exit with status 2; a
`--check` that finds a mismatch exits with status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

import numpy as np

from cinn_py import api
from cinn_py.errors import CinnError, FeedError
from cinn_py.hlir.group import GroupKind
from cinn_py.hlir.group_ops import groups_to_dot, groups_to_program
from cinn_py.hlir.pir_compiler import PIRCompiler, Stages, group_heading, group_source
from cinn_py.ir.printer import print_ir
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType
from cinn_py.runtime.feeds import feed_types
from cinn_py.runtime.scope import RUNTIME_TARGETS
from cinn_py.tolerances import compare

DYNAMIC_DIM_SIZE = 4
"""The size a -1 dim gets in generated feeds when no --feeds file is given."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _make_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CinnError as error:
        print(f"cinn-py: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"cinn-py: error: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 2


def _make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cinn-py", description=__doc__.split("\n\n")[0])
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
        choices=api.TARGETS,
        default=None,
        help="where to run (default: cuda where there is a GPU, else cuda-emu)",
    )
    run.add_argument("--out", help="write the outputs to this .npz")
    run.add_argument(
        "--check",
        action="store_true",
        help="also run the reference executor and report the largest error",
    )
    run.add_argument("--seed", type=int, default=0, help="seed for generated feeds/params")
    run.add_argument(
        "-v", "--verbose", action="store_true", help="print the seconds of each compile stage"
    )
    run.set_defaults(handler=_cmd_run)

    groups = commands.add_parser("groups", help="print the program with its fused groups")
    groups.add_argument("program", help="program text, model.json, its folder or prefix")
    groups.add_argument("--dot", metavar="FILE", help="also write the groups as Graphviz here")
    groups.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=DIMS",
        help="the shape of feed NAME, e.g. x=2x3 (for its -1 dims; repeatable)",
    )
    groups.set_defaults(handler=_cmd_groups)

    ir = commands.add_parser("ir", help="print the loop IR of every fused group")
    ir.add_argument("program", help="program text, model.json, its folder or prefix")
    ir.add_argument("--stage", choices=("lowered", "scheduled"), required=True)
    _add_compile_options(ir)
    ir.set_defaults(handler=_cmd_ir)

    dump = commands.add_parser("dump-cuda", help="print or write the CUDA C of every group")
    dump.add_argument("program", help="program text, model.json, its folder or prefix")
    dump.add_argument("-o", "--out-dir", help="write one self-contained <group>.cu per group here")
    _add_compile_options(dump)
    dump.set_defaults(handler=_cmd_dump_cuda)
    return parser


def _add_compile_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=DIMS",
        help="the shape of feed NAME, e.g. x=2x3 (for its -1 dims; repeatable)",
    )
    parser.add_argument(
        "--target",
        choices=RUNTIME_TARGETS,
        default=None,
        help="whose schedule to use (default: the default target where it compiles)",
    )


def _cmd_print(args: argparse.Namespace) -> int:
    sys.stdout.write(print_program(api.load(args.program)))
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    program = api.load(args.program)
    rng = np.random.default_rng(args.seed)
    feeds = _read_npz(args.feeds) if args.feeds else random_feeds(program, rng)
    params = _read_npz(args.params) if args.params else _default_params(program, rng)
    exe = api.compile(program, args.target)
    outputs = exe.run(feeds, params, args.fetch)
    if args.verbose and exe.timings:
        stages = ", ".join(f"{stage} {seconds:.3f}s" for stage, seconds in exe.timings.items())
        print(f"cinn-py: {exe.target}: {len(exe.kernels)} kernel(s); {stages}", file=sys.stderr)
    for name, array in outputs.items():
        print(f"{name}: {_describe(array)}")
    if args.out:
        np.savez(args.out, **outputs)
    if args.check:
        expected = api.compile(program, "reference").run(feeds, params, args.fetch)
        return _report_check(outputs, expected, exe.target)
    return 0


def _cmd_groups(args: argparse.Namespace) -> int:
    program = api.load(args.program)
    compiler = PIRCompiler(
        program, api.default_target(), feed_shapes=_feed_shapes(program, args.shape)
    )
    stages = compiler.stages(until="grouping")
    grouped = groups_to_program(stages.program, stages.groups)
    text = print_program(grouped)
    if args.dot:
        with open(args.dot, "w", encoding="utf-8") as f:
            f.write(groups_to_dot(grouped))
    sys.stdout.write(text)
    return 0


def _cmd_ir(args: argparse.Namespace) -> int:
    program = api.load(args.program)
    stages = _compiler(program, args).stages(until=args.stage)
    for kernel in stages.fused:
        func = kernel.lowered if args.stage == "lowered" else kernel.scheduled.func
        text = group_heading(kernel.group, stages.program) + print_ir(func) + "\n"
        if args.stage == "scheduled":
            text += "".join(f"// {line}\n" for line in str(kernel.scheduled.trace).splitlines())
        print(text)
    _note_library_only(stages)
    return 0


def _cmd_dump_cuda(args: argparse.Namespace) -> int:
    program = api.load(args.program)
    stages = _compiler(program, args).stages(until="codegen")
    if args.out_dir is None:
        if stages.source is not None:
            headings = "".join(group_heading(k.group, stages.program) for k in stages.fused)
            sys.stdout.write(headings + stages.source.source.rstrip("\n") + "\n")
    else:
        os.makedirs(args.out_dir, exist_ok=True)
        for kernel in stages.fused:
            path = os.path.join(args.out_dir, f"{kernel.group.name}.cu")
            text = group_heading(kernel.group, stages.program) + group_source(kernel).source
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.rstrip("\n") + "\n")
            print(f"wrote {path}")
    _note_library_only(stages)
    return 0


def _compiler(program: Program, args: argparse.Namespace) -> PIRCompiler:
    target = args.target or api.default_target()
    return PIRCompiler(program, target, feed_shapes=_feed_shapes(program, args.shape))


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


def _read_npz(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except (ValueError, OSError) as error:
        raise FeedError(path, "a readable .npz file", str(error)) from None


def _describe(array: np.ndarray) -> str:
    text = f"{array.dtype}{list(array.shape)}"
    if array.size and array.dtype.kind in "fiub":
        values = array.astype(np.float64)
        finite = values[np.isfinite(values)]
        if finite.size:
            text += f" min={finite.min():.6g} max={finite.max():.6g} mean={finite.mean():.6g}"
    return text


def _report_check(
    outputs: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray], target: str
) -> int:
    failed = 0
    for name, want in expected.items():
        result = compare(outputs[name], want)
        status = "ok" if result.ok else "MISMATCH"
        failed += not result.ok
        print(f"check {name} ({target} vs reference): {status}, {result}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
