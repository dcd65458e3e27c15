"""Host cost per kernel launch on `cuda`, measured against the stand-in driver (no GPU).

A program of 20 small kernels (a chain of elementwise ops on a [4, 64] float32 feed,
each op its own group, so each is its own kernel) is compiled for `cuda` with NVRTC and
built against `cinn_py.backends.stand_in_driver` (its launches only count, so what is
timed is cinn_py's own Python per launch: finding the arrays, packing, checking, the
driver call through its bindings' argument handling as far as the stand-in goes).
`execute()` runs many times; the figure is the best of `--repeat` rounds of
`--runs` executes, divided by the launches.

    python tools/bench_host.py [--json OUT.json] [--runs 2000] [--repeat 5]

writes `{"us_per_launch": ..., "us_per_graph_replay": ..., "us_per_run": ...}`.
`us_per_graph_replay` is the host time of one `execute()` of the same 20 kernels with
`cuda_graph` on: the graph is captured on the first run, so each timed run is one
`cuGraphLaunch` (and the Python around it). `us_per_run` is the host time of one
`CompiledProgram.run` (what `exe.run` does: the feeds checked and bound, the program
executed, its output handed back) of a program with `FEEDS` feeds (a LLaMA layer's
count: its input and twelve weights) added up by 12 kernels, the same arrays every run.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from cinn_py.backends import stand_in_driver
from cinn_py.driver.compiled import CompiledProgram
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.hlir.grouping import make_group
from cinn_py.pir.parser import parse_program
from cinn_py.runtime.scope import Scope

KERNELS = 20
OPS = ["relu", "exp", "tanh", "sigmoid", "abs"]
FEEDS = 13


def program_text(kernels: int = KERNELS) -> str:
    t = "tensor<4x64xf32>"
    lines = [
        '    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),'
        f"shape:[4,64]}} : () -> {t}"
    ]
    for i in range(kernels):
        op = OPS[i % len(OPS)]
        lines.append(f'    (%{i + 1}) = "pd_op.{op}" (%{i}) {{}} : ({t}) -> {t}')
    return "{\n" + "\n".join(lines) + "\n}\n"


def build(kernels: int = KERNELS):
    """The runtime program and its scope, over the stand-in target (call inside
    `stand_in_driver.installed`)."""
    program = parse_program(program_text(kernels))
    groups = [
        make_group(f"group_{i}", [op], program)
        for i, op in enumerate(program.block)
        if op.name != "pd_op.data"
    ]
    target = stand_in_driver.StandInCudaTarget()
    scope = Scope(target)
    runtime = PIRCompiler(program, target, scope).build(groups)
    scope["var_0"].set(np.linspace(-1, 1, 256, dtype=np.float32).reshape(4, 64))
    return runtime, scope


def _best(runtime, scope, runs: int, repeat: int) -> float:
    """The best of `repeat` rounds of `runs` executes, in seconds per execute."""
    runtime.execute(scope)  # warm: binding, packing, capture are not timed
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(runs):
            runtime.execute(scope)
        best = min(best, time.perf_counter() - start)
    return best / runs


def feeds_program_text(feeds: int = FEEDS) -> str:
    """x0 + x1 + ... over `feeds` [4, 64] float32 feeds, one add a kernel."""
    t = "tensor<4x64xf32>"
    lines = [
        f'    (%{i}) = "pd_op.data" () {{dtype:float32,name:"x{i}",place:Place(undefined:0),'
        f"shape:[4,64]}} : () -> {t}"
        for i in range(feeds)
    ]
    total = 0
    for i in range(1, feeds):
        lines.append(
            f'    (%{feeds + i - 1}) = "pd_op.add" (%{total}, %{i}) {{}} : ({t}, {t}) -> {t}'
        )
        total = feeds + i - 1
    return "{\n" + "\n".join(lines) + "\n}\n"


def _best_run(runs: int, repeat: int) -> float:
    """The best of `repeat` rounds of `runs` `CompiledProgram.run`s, seconds per run."""
    program = parse_program(feeds_program_text())
    runner = CompiledProgram(program, stand_in_driver.StandInCudaTarget())
    ones = np.ones((4, 64), np.float32)
    feeds = {f"x{i}": stand_in_driver.HostDeviceArray(ones.copy()) for i in range(FEEDS)}
    values = program.outputs()
    runner.run(feeds, None, values, copy_to_host=False)  # warm: the compile, the binding
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(runs):
            runner.run(feeds, None, values, copy_to_host=False)
        best = min(best, time.perf_counter() - start)
    return best / runs


def measure(runs: int, repeat: int) -> dict:
    fake = stand_in_driver.StandInDriver(record=False)
    with stand_in_driver.installed(fake):
        runtime, scope = build()
        launches = len(runtime.kernels)
        per_run = _best(runtime, scope, runs, repeat)
        graphed, graph_scope = build()
        graphed.cuda_graph = True
        per_replay = _best(graphed, graph_scope, runs, repeat)
        assert graphed.graph_count == 1, "the 20 kernels should be one graph"
        per_compiled_run = _best_run(runs, repeat)
    return {
        "us_per_launch": per_run / launches * 1e6,
        "us_per_graph_replay": per_replay * 1e6,
        "us_per_run": per_compiled_run * 1e6,
        "run_feeds": FEEDS,
        "kernels": launches,
        "graph_replay_kernels": launches,
        "runs": runs,
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "python": platform.python_version(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    result = measure(args.runs, args.repeat)
    print(
        f"{result['kernels']} kernels: {result['us_per_launch']:.2f} us of host time per "
        f"launch; a graph replay of all {result['graph_replay_kernels']}: "
        f"{result['us_per_graph_replay']:.2f} us; a run of {result['run_feeds']} feeds: "
        f"{result['us_per_run']:.2f} us (stand-in driver)"
    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    main()
