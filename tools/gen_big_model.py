"""Whole models of N layers as Paddle programs, for issue 17's compile benchmarks and
tests: LLaMA-style (N decoder layers) or BERT-style (N encoder layers), as the program
text Paddle 3.x prints and / or as a `paddle.jit.save` model (model.json +
model.pdiparams) that `cinn_py.load(DIR)` reads, with random parameters.

    python tools/gen_big_model.py --layers 32 --kind llama --out /tmp/llama32
    python tools/gen_big_model.py --layers 4 --kind bert --hidden 768 --heads 12 --format json --out m

The layers are `tools/model_programs.py`'s (its docstring says which ops and why),
stacked: each layer's output is the next one's input, every layer takes the same mask
(BERT's additive mask is made once, before the first layer, as BertModel does), and the
last layer's output is fetched. Parameters are named per layer, `layers.{i}.q_proj.weight`
(`layers.{i}.query.weight` for BERT), each layer with its own random values (and LLaMA's
rotary cos / sin tables per layer, as each PaddleNLP attention layer caches its own).

What DIR gets (`--format`; `both` is the default):

    text   model.pir (the program text), params.npz (parameters by name)
    json   model.json + model.pdiparams (written by `cinn_py.pir.model_writer` from the
           parsed text, so both forms are the same program)
    both   all of the above
    always feeds.npz (the feeds by name: hidden_states, attention_mask) and meta.json
           (kind, layers, sizes, dtype, op count, parameter bytes, files)

bfloat16 arrays are uint16 bit patterns, as cinn_py takes them. Python: `program_text`,
`big_model` (the Block: text, feeds, parameters, `arrays(seed)`), `write_model`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_programs  # noqa: E402 (tools/ is not a package)

from cinn_py.pir.model_writer import save_model  # noqa: E402
from cinn_py.pir.parser import parse_program  # noqa: E402

KINDS = tuple(model_programs.KINDS)
FORMATS = ("text", "json", "both")
DEFAULT_SIZES = {"batch": 1, "seq": 128, "hidden": 1024, "heads": 8}
"""Small enough to write 32 layers quickly (25 MiB of float16 parameters a LLaMA layer),
large enough for the kernels to be the real ones."""


def param_name(index: int, name: str) -> str:
    """A layer's parameter as the whole model names it."""
    return f"layers.{index}.{name}"


def big_model(
    kind: str = "llama",
    layers: int = 1,
    *,
    batch: int = DEFAULT_SIZES["batch"],
    seq: int = DEFAULT_SIZES["seq"],
    hidden: int = DEFAULT_SIZES["hidden"],
    heads: int = DEFAULT_SIZES["heads"],
    intermediate: int | None = None,
    dtype: str = "float16",
) -> model_programs.Block:
    """`layers` layers of `kind` ("llama" or "bert") stacked into one program (see the
    module's docstring); `intermediate` defaults to the layer's own rule (LLaMA 8/3
    hidden rounded up to 256, BERT 4 hidden)."""
    if kind not in model_programs.KINDS:
        raise ValueError(f"no model kind {kind!r} (known: {', '.join(KINDS)})")
    parts = model_programs.KINDS[kind](batch, seq, hidden, heads, intermediate, dtype)
    return model_programs.write_layers(parts, layers, param_name, f"{kind}_{layers}_layers")


def program_text(kind: str = "llama", layers: int = 1, **sizes: object) -> str:
    """The program text of `big_model(kind, layers, **sizes)`."""
    return big_model(kind, layers, **sizes).text  # type: ignore[arg-type]


def write_model(
    block: model_programs.Block, out: str | os.PathLike[str], fmt: str = "both", seed: int = 0
) -> list[Path]:
    """Write `block` into the folder `out` in format `fmt` (see the module's docstring),
    parameters and feeds drawn with `seed`; returns the files written."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    feeds, params = block.arrays(seed)
    written = [folder / "feeds.npz"]
    np.savez(written[0], **feeds)
    if fmt in ("text", "both"):
        (folder / "model.pir").write_text(block.text)
        np.savez(folder / "params.npz", **params)
        written += [folder / "model.pir", folder / "params.npz"]
    if fmt in ("json", "both"):
        json_path = save_model(parse_program(block.text, "model.pir"), folder / "model", params)
        written += [json_path, json_path.with_suffix(".pdiparams")]
    meta = {
        "name": block.name,
        "dtype": block.dtype,
        "sizes": block.sizes,
        "ops": op_count(block.text),
        "param_bytes": block.param_bytes,
        "feeds": {t.name: [list(t.shape), t.dtype] for t in block.feeds},
        "output": [list(block.output.shape), block.output.dtype],
        "seed": seed,
        "files": sorted(p.name for p in written),
    }
    (folder / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return [*written, folder / "meta.json"]


def op_count(text: str) -> int:
    """The ops of a program's text (one a line, as Paddle prints them)."""
    return sum(1 for line in text.splitlines() if '" (' in line and ") = " in line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=KINDS, default="llama")
    parser.add_argument("--layers", type=int, default=1)
    for name, value in DEFAULT_SIZES.items():
        parser.add_argument(f"--{name}", type=int, default=value)
    parser.add_argument("--intermediate", type=int, default=None)
    parser.add_argument("--dtype", choices=("float16", "bfloat16", "float32"), default="float16")
    parser.add_argument("--format", choices=FORMATS, default="both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="the folder to write into")
    args = parser.parse_args(argv)
    if args.layers < 1:
        parser.error("--layers must be at least 1")
    try:
        block = big_model(
            args.kind,
            args.layers,
            batch=args.batch,
            seq=args.seq,
            hidden=args.hidden,
            heads=args.heads,
            intermediate=args.intermediate,
            dtype=args.dtype,
        )
    except ValueError as error:
        parser.error(str(error))
    files = write_model(block, args.out, args.format, args.seed)
    mib = block.param_bytes / 2**20
    print(
        f"{block.name}: {op_count(block.text)} ops, {len(block.params)} parameters "
        f"({mib:.1f} MiB), {block.dtype}; wrote {', '.join(str(p) for p in files)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
