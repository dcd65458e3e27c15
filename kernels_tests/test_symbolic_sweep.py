"""Issue 18's sweep: LLaMA- and BERT-style layers with -1 batch and sequence, run at
sequence 1, 7, 64, 100, 511, 512 and 1000 and batch 1 to 8 on cuda-emu, each result
against the reference target, with the kernel compiles at or below the buckets touched.

The buckets this sweep touches: a sequence of 1 (a softmax row of one element is
scheduled apart), [2, 128] and (128, 1024] (`ir.buckets.REDUCE_BUCKETS`); the
batch is a dim no broadcast stretches, so it has no bucket of its own. That is 3
translation units, each compiled once, whatever the order of the shapes.

Also: every fixture with -1 dims lowers all its fused groups with symbolic dims where
any dim is symbolic (the list of exceptions is written here, with why).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.hlir.op_lowering.lower import symbolic_blocker
from cinn_py.ir.expr import Var
from cinn_py.pir.parser import parse_file

FIXTURES = Path(__file__).resolve().parent / "fixtures"

SWEEP = [(1, 1), (2, 7), (3, 64), (4, 100), (5, 511), (6, 512), (7, 1000), (8, 7)]
"""(batch, sequence): every sequence length of the issue, every batch from 1 to 8."""


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CINN_PY_SPECIALIZE", raising=False)


def _feeds(model: str, batch: int, seq: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    meta = json.loads((FIXTURES / "models" / model / "meta.json").read_text())
    feeds = {}
    for name, info in meta["inputs"].items():
        shape = [batch, seq, *info["spec_shape"][2:]]
        if info["dtype"].startswith("int"):  # a padding mask: ones, a few zeros
            feeds[name] = (rng.random(shape) > 0.2).astype(info["dtype"])
        else:
            feeds[name] = rng.standard_normal(shape).astype(info["dtype"])
    return feeds


@pytest.mark.parametrize("model", ["llama_decoder", "bert_layer"])
def test_sweep_matches_the_reference_with_a_compile_per_bucket(private_cache, model):
    program = cinn_py.load(FIXTURES / "models" / model)
    exe = cinn_py.compile(program, "cuda-emu")
    reference = cinn_py.compile(program, "reference")
    rng = np.random.default_rng(18)
    for batch, seq in SWEEP:
        feeds = _feeds(model, batch, seq, rng)
        got, want = exe.run(feeds), reference.run(feeds)
        for name, value in want.items():
            np.testing.assert_allclose(
                got[name], value, rtol=1e-4, atol=2e-5, err_msg=f"{model} {batch}x{seq} {name}"
            )
    stats = exe.compile_stats
    assert stats.kernel_units_compiled == 3, stats  # seq 1, [2, 128], (128, 1024]
    assert stats.kernel_units_cached == len(SWEEP) - 3
    # and only a bucket's first shape schedules (`driver.schedule_cache`)
    assert stats.schedules_reused > 1.5 * stats.schedules_made, stats
    assert exe.runner.schedule_cache.stats.sources_reused == len(SWEEP) - 3


def test_specialized_sweep_compiles_every_shape(private_cache, monkeypatch):
    """CINN_PY_SPECIALIZE=1, for comparison: a unit per shape."""
    monkeypatch.setenv("CINN_PY_SPECIALIZE", "1")
    exe = cinn_py.compile(cinn_py.load(FIXTURES / "models" / "llama_decoder"), "cuda-emu")
    rng = np.random.default_rng(1)
    shapes = [(2, 7), (3, 5), (2, 100)]
    for batch, seq in shapes:
        exe.run(_feeds("llama_decoder", batch, seq, rng))
    assert exe.compile_stats.kernel_units_compiled == len(shapes)


STATIC_GROUPS = {
    # op_arange: its lengths come from fed values, compiled in (`DataDependentShape`).
    ("programs", "op_arange"): 6,
    # batch_norm's statistics and the [C]-shaped parameters: no -1 dim reaches them.
    ("programs", "op_batch_norm_infer"): 9,
    # the shape computations' own small groups, over static dims only.
    ("programs", "op_shape_slice_expand"): 2,
}
"""Fused groups of a -1 fixture lowered with static dims: all for "no dim is symbolic"."""


def _dynamic_fixtures() -> list[tuple[str, str]]:
    return [
        (kind, folder.name)
        for kind in ("models", "programs")
        for folder in sorted((FIXTURES / kind).iterdir())
        if (folder / "feeds_2.npz").exists()
    ]


@pytest.mark.parametrize(("kind", "name"), _dynamic_fixtures())
def test_every_dynamic_fixture_lowers_symbolically(private_cache, kind, name):
    folder = FIXTURES / kind / name
    program = cinn_py.load(folder) if kind == "models" else parse_file(folder / "program.pir")
    feeds = dict(np.load(folder / "feeds.npz"))
    small = {k: v for k, v in feeds.items() if v.size <= 1}  # an arange's fed bounds
    compiler = PIRCompiler(
        program, "cuda-emu", feed_shapes={k: v.shape for k, v in feeds.items()}, feed_values=small
    )
    stages = compiler.stages(until="scheduled")
    static = []
    for kernel in stages.fused:
        if not any(isinstance(arg.value, Var) for arg in kernel.lowered.args):
            why = symbolic_blocker(kernel.group, compiler.symbolic_dims)
            assert why == "no dim is symbolic", (kernel.group.name, why)
            static.append(kernel.group.name)
    assert len(static) == STATIC_GROUPS.get((kind, name), 0), static
