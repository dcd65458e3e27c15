"""Time the cuda-emu target on a row softmax, pinned to one CPU core.

The kernel is the test suite's (kernels_tests/cuda/kernels/softmax.cu): a [64, 1024]
float32 softmax, one block of 256 threads per row, warp shuffles and a shared-memory
block reduction.  The module is compiled (or taken from the cache) before timing, so the
figure is the emulator's run time: 64 blocks x 256 fibers, each through 4 block barriers
and 20 warp shuffles.

    pip install -e . && python tools/bench_emu.py [--repeat 5] [--context-switch asm|ucontext|both]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from cinn_py.backends import cuda_emu

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "kernels_tests" / "cuda" / "kernels" / "softmax.cu"
ROWS, COLS, THREADS = 64, 1024, 256


def bench(context_switch: str, repeat: int) -> float:
    """The best of `repeat` launches, in seconds; checks the result once."""
    module = cuda_emu.compile(KERNEL.read_text(), check=False, context_switch=context_switch)
    x = np.random.default_rng(0).standard_normal((ROWS, COLS), dtype=np.float32)
    y = np.zeros_like(x)
    args = [x, y, np.int32(COLS)]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        module.launch("softmax_rows", (ROWS, 1, 1), (THREADS, 1, 1), args)
        times.append(time.perf_counter() - start)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    error = float(np.abs(y - want).max())
    if error > 1e-5:
        raise SystemExit(f"wrong softmax: max abs error {error:.3g}")
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--context-switch", choices=["asm", "ucontext", "both"], default="both")
    options = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    switches = ["asm", "ucontext"] if options.context_switch == "both" else [options.context_switch]
    for switch in switches:
        if switch == "asm" and cuda_emu.default_context_switch() != "asm":
            continue
        seconds = bench(switch, options.repeat)
        print(
            f"softmax [{ROWS}, {COLS}] float32, {THREADS} threads/block, "
            f"context switch {switch}: {seconds * 1e3:.1f} ms"
        )


if __name__ == "__main__":
    main()
