"""GPU benchmarks: cinn_py's kernels against a device-to-device copy, CuPy and PyTorch.

Every figure comes from the same run on the same device: the copy bandwidth (a
`cudaMemcpy` device-to-device of a large buffer, counting bytes read plus bytes
written), then each case compiled by cinn_py for `cuda` and timed as its runtime
program alone (feeds already on the device, no host copies), and the same computation
in CuPy, PyTorch eager and `torch.compile`. Effective bandwidth = bytes the computation
must move (its inputs read once, its outputs written once) / time.

    pip install -e ".[gpu]" && python tools/bench.py [--case add_relu_mul] [--repeat 50]
        [--json OUT.json]

Needs a CUDA GPU with CuPy; PyTorch and Triton are optional (their columns are left
empty without them). Times are medians of `--repeat` runs after warm-up, measured with
CUDA events around a batch of back-to-back launches.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import cinn_py
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program


@dataclass
class Case:
    """One computation: a PIR program and the same thing written for each baseline."""

    name: str
    build: Callable[[], Program]
    feeds: Callable[[Any], dict[str, Any]]
    """Device arrays by feed name, made with the given array module (cupy)."""
    bytes_moved: int
    cupy: Callable[..., Any]
    torch: Callable[..., Any]
    notes: list[str] = field(default_factory=list)


def add_relu_mul(elements: int = 64 * 2**20) -> Case:
    """The issue's chain: `relu(x + y) * w` over 64M float32 elements (3 reads, 1 write)."""

    def build() -> Program:
        program = Program()
        b = Builder(program)
        x, y, w = (
            b.op("pd_op.data", name=n, shape=[elements], dtype=DataType.FLOAT32)
            for n in ("x", "y", "w")
        )
        b.op("pd_op.multiply", b.op("pd_op.relu", b.op("pd_op.add", x, y)), w)
        return program

    def feeds(cp: Any) -> dict[str, Any]:
        rng = cp.random.default_rng(0)
        return {n: rng.standard_normal(elements, dtype=cp.float32) for n in ("x", "y", "w")}

    return Case(
        name="add_relu_mul",
        build=build,
        feeds=feeds,
        bytes_moved=4 * elements * 4,
        cupy=lambda cp, x, y, w: cp.multiply(cp.maximum(x + y, 0), w),
        torch=lambda torch, x, y, w: torch.relu(x + y) * w,
    )


CASES = {"add_relu_mul": add_relu_mul}


def time_gpu(cp: Any, fn: Callable[[], Any], repeat: int, batch: int = 10) -> float:
    """Median seconds per call of `fn`, timed with CUDA events over `batch` calls."""
    for _ in range(3):
        fn()
    cp.cuda.Device().synchronize()
    samples = []
    for _ in range(repeat):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(batch):
            fn()
        stop.record()
        stop.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, stop) / 1e3 / batch)
    return statistics.median(samples)


def copy_bandwidth(cp: Any, repeat: int, nbytes: int = 2**30) -> float:
    """Device-to-device copy bandwidth in bytes/s (read + write)."""
    src = cp.ones(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    seconds = time_gpu(cp, lambda: dst.data.copy_from_device(src.data, nbytes), repeat)
    return 2 * nbytes / seconds


def run_case(case: Case, cp: Any, torch: Any, repeat: int) -> dict[str, Any]:
    program = case.build()
    exe = cinn_py.compile(program, target="cuda")
    feeds = case.feeds(cp)
    outs = exe.run(feeds, copy_to_host=False)
    runtime = exe.runtime_program
    got = next(iter(outs.values()))
    args = [feeds[k] for k in sorted(feeds, key=list(feeds).index)]
    want = case.cupy(cp, *args)
    np.testing.assert_allclose(cp.asnumpy(got), cp.asnumpy(want), rtol=1e-5, atol=1e-6)

    result: dict[str, Any] = {
        "case": case.name,
        "bytes": case.bytes_moved,
        "kernels": len(exe.kernels),
        "compile_stages_s": exe.timings,
        "cinn_py_s": time_gpu(cp, lambda: runtime.execute(runtime.scope), repeat),
        "cupy_s": time_gpu(cp, lambda: case.cupy(cp, *args), repeat),
    }
    if torch is not None:
        targs = [torch.from_dlpack(a) for a in args]
        result["torch_eager_s"] = time_gpu(cp, lambda: case.torch(torch, *targs), repeat)
        try:
            compiled = torch.compile(lambda *a: case.torch(torch, *a))
            result["torch_compile_s"] = time_gpu(cp, lambda: compiled(*targs), repeat)
        except Exception as error:  # torch.compile needs Triton and a working toolchain
            result["torch_compile_error"] = f"{type(error).__name__}: {error}"
    return result


def report(results: list[dict[str, Any]], copy_bw: float, device: str) -> str:
    lines = [
        f"device: {device}; copy bandwidth {copy_bw / 1e9:.0f} GB/s (D2D, read + write)",
        "",
        "| case | cinn_py ms | GB/s | of copy | vs CuPy | vs torch eager | vs torch.compile |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        t = r["cinn_py_s"]
        bw = r["bytes"] / t

        def ratio(key: str, t: float = t, r: dict[str, Any] = r) -> str:
            return f"{r[key] / t:.2f}x" if key in r else "n/a"

        lines.append(
            f"| {r['case']} | {t * 1e3:.3f} | {bw / 1e9:.0f} | {bw / copy_bw:.1%} | "
            f"{ratio('cupy_s')} | {ratio('torch_eager_s')} | {ratio('torch_compile_s')} |"
        )
    lines.append("")
    lines.append("(ratios > 1: cinn_py is faster)")
    for r in results:
        stages = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in r["compile_stages_s"].items())
        lines.append(f"{r['case']}: {r['kernels']} kernel(s); compile: {stages}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--json", help="also write the raw figures here")
    args = parser.parse_args(argv)
    try:
        import cupy as cp
    except ImportError:
        print("tools/bench.py needs CuPy and a CUDA GPU", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        torch = None
    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    copy_bw = copy_bandwidth(cp, args.repeat)
    results = [run_case(CASES[name](), cp, torch, args.repeat) for name in args.case or CASES]
    print(report(results, copy_bw, device))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"device": device, "copy_bw": copy_bw, "results": results}, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
