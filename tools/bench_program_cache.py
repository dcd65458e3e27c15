"""How long a process takes to get a runnable program: cold, with only the kernel cache
warm, and from the compiled-program cache (issue 17).

    python tools/bench_program_cache.py --layers 32 [--json OUT.json]

The program is `--layers` LLaMA decoder layers stacked (tools/model_programs.py's layer,
each with its own parameters; small sizes by default: what is measured is the compiler,
not the kernels). Each case is a fresh process on one cache folder (a temporary one),
so the figures are a second process's, not a warm interpreter's:

    cold           empty caches: every stage, g++ / NVRTC
    kernels warm   CINN_PY_CACHE=0: every stage, the kernels from the kernel cache
                   (what a second process did before the program cache)
    program hit    the compiled program loaded: no pass, grouping, lowering, schedule

`to_runnable_s` is `cinn_py.load` + `cinn_py.compile` in the process; `process_s` the
whole process (interpreter start and imports included); `first_run_s` one run after.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from model_programs import LLAMA_EPSILON, Paddle, Tensor  # noqa: E402

CHILD = """
import json, sys, time
start = time.perf_counter()
import numpy as np, cinn_py
imported = time.perf_counter()
program = cinn_py.load(sys.argv[1])
exe = cinn_py.compile(program, sys.argv[2])
ready = time.perf_counter()
from cinn_py import cli
rng = np.random.default_rng(0)
exe.run(cli.random_feeds(program, rng), cli._default_params(program, rng))
ran = time.perf_counter()
print(json.dumps({"import_s": imported - start, "to_runnable_s": ready - imported,
                  "first_run_s": ran - ready, "kernels": len(exe.kernels),
                  "groups": len(exe.groups), "timings": exe.timings}))
"""


def stacked_llama(
    layers: int, batch: int = 1, seq: int = 16, hidden: int = 64, heads: int = 4
) -> str:
    """The text of `layers` LLaMA decoder layers (float32); parameters are drawn by the
    process that runs it."""
    dtype, head_dim, inter = "float32", hidden // heads, 2 * hidden
    p = Paddle()
    x = p.data(Tensor("hidden_states", (batch, seq, hidden), dtype))
    mask = p.data(Tensor("attention_mask", (batch, 1, seq, seq), dtype))
    cos_t = Tensor("rotary_emb.cos_cached", (1, seq, 1, head_dim), dtype)
    sin_t = Tensor("rotary_emb.sin_cached", (1, seq, 1, head_dim), dtype)
    cos, sin = p.parameter(cos_t), p.parameter(sin_t)
    for layer in range(layers):
        shapes = {
            "input_layernorm.weight": (hidden,),
            "q_proj.weight": (hidden, hidden),
            "k_proj.weight": (hidden, hidden),
            "v_proj.weight": (hidden, hidden),
            "o_proj.weight": (hidden, hidden),
            "post_attention_layernorm.weight": (hidden,),
            "gate_proj.weight": (hidden, inter),
            "up_proj.weight": (hidden, inter),
            "down_proj.weight": (inter, hidden),
        }
        w = {}
        for name, shape in shapes.items():
            tensor = Tensor(f"layers.{layer}.{name}", shape, dtype)
            w[name] = p.parameter(tensor)
        h = p.rms_norm(x, w["input_layernorm.weight"], LLAMA_EPSILON)

        def heads_of(name: str, h=h, w=w) -> object:
            return p.reshape(p.matmul(h, w[name]), (batch, seq, heads, head_dim))

        def rotary(t: object) -> object:
            half = head_dim // 2
            rotated = p.concat_last(
                p.scale(p.slice_last(t, half, 2147483647), -1.0), p.slice_last(t, 0, half)
            )
            return p.add(p.multiply(t, cos), p.multiply(rotated, sin))

        q = p.transpose(rotary(heads_of("q_proj.weight")), (0, 2, 1, 3))
        k = p.transpose(rotary(heads_of("k_proj.weight")), (0, 2, 1, 3))
        v = p.transpose(heads_of("v_proj.weight"), (0, 2, 1, 3))
        scores = p.add(p.scale(p.matmul(q, k, transpose_y=True), 1 / math.sqrt(head_dim)), mask)
        probs = p.softmax(scores)
        context = p.reshape(p.transpose(p.matmul(probs, v), (0, 2, 1, 3)), (batch, seq, hidden))
        h1 = p.add(x, p.matmul(context, w["o_proj.weight"]))
        h2 = p.rms_norm(h1, w["post_attention_layernorm.weight"], LLAMA_EPSILON)
        gate = p.unary("pd_op.silu", p.matmul(h2, w["gate_proj.weight"]))
        up = p.matmul(h2, w["up_proj.weight"])
        x = p.add(h1, p.matmul(p.multiply(gate, up), w["down_proj.weight"]))
    p.fetch(x)
    return p.w.text()


def _child(program: Path, target: str, env: dict[str, str]) -> dict:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(program), target],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_s"] = time.perf_counter() - start
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--target", default="cuda-emu")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    text = stacked_llama(args.layers)
    with tempfile.TemporaryDirectory(prefix="cinn_bench_cache_") as folder:
        program = Path(folder) / "program.pir"
        program.write_text(text)
        env = {"CINN_PY_CACHE_DIR": str(Path(folder) / "cache"), "CINN_PY_CACHE": "1"}
        results = {"layers": args.layers, "target": args.target, "ops": text.count("\n") - 1}
        results["cold"] = _child(program, args.target, env)
        results["kernels_warm"] = _child(program, args.target, {**env, "CINN_PY_CACHE": "0"})
        results["program_hit"] = _child(program, args.target, env)
        entries = list((Path(folder) / "cache" / "program").glob("*.json"))
        results["entry_bytes"] = sum(p.stat().st_size for p in entries)
    for case in ("cold", "kernels_warm", "program_hit"):
        r = results[case]
        print(
            f"{case:13} to runnable {r['to_runnable_s']:7.3f} s   process {r['process_s']:7.3f} s"
            f"   (import {r['import_s']:.3f} s, first run {r['first_run_s']:.3f} s)"
        )
    print(
        f"{results['ops']} ops, {results['cold']['groups']} groups, "
        f"{results['cold']['kernels']} kernels; entry {results['entry_bytes'] / 1024:.0f} KiB"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
