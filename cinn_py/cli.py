"""The `cinn-py` command.

    cinn-py print PROGRAM
    cinn-py run   PROGRAM [--feeds F.npz] [--params P.npz] [--fetch %ID ...]
                          [--target cuda|cuda-emu|reference] [--out OUT.npz] [--check]

Errors from bad input print as one readable message and exit with status 2; a
`--check` that finds a mismatch exits with status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence

import numpy as np

from cinn_py import api
from cinn_py.errors import CinnError, FeedError
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType
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
        help=f"where to run (default: {api.default_target()})",
    )
    run.add_argument("--out", help="write the outputs to this .npz")
    run.add_argument(
        "--check",
        action="store_true",
        help="also run the reference executor and report the largest error",
    )
    run.add_argument("--seed", type=int, default=0, help="seed for generated feeds/params")
    run.set_defaults(handler=_cmd_run)
    return parser


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
    for name, array in outputs.items():
        print(f"{name}: {_describe(array)}")
    if args.out:
        np.savez(args.out, **outputs)
    if args.check:
        expected = api.compile(program, "reference").run(feeds, params, args.fetch)
        return _report_check(outputs, expected, exe.target)
    return 0


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
