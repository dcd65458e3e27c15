"""tools/bench_e2e.py and tools/model_programs.py without a GPU: the two layers at tiny
sizes compiled for cuda-emu and checked against the reference target through the
tool's own command line, the program texts against the ops Paddle emits for these
blocks (the model fixtures), and the full-size programs built for sm_90 by NVRTC, so
that a GPU session only has to run the bench. The `gpu` test runs it on the GPU."""

from __future__ import annotations

import json
import os
import sys

import pytest

from cinn_py.backends import nvrtc
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.pir.parser import parse_program
from cinn_py.pir.printer import print_program
from kernels_tests.tool_modules import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "models")


bench_e2e = load_tool("bench_e2e")
model_programs = sys.modules["model_programs"]  # bench_e2e imports it from tools/

FIXTURE_OF = {"llama": "llama_decoder", "bert": "bert_layer"}
LIBRARY_CALLS = {
    "llama": {"pd_op.matmul": 9},
    "bert": {"pd_op.fused_gemm_epilogue": 6, "pd_op.matmul": 2},
}
"""q, k, v, scores, context, o (+ gate, up, down for LLaMA; + two FFN for BERT). BERT's
projections have biases, so `fuse_gemm_epilogue` makes each with its bias one call
(its GELU is the erf form, which stays a kernel); the attention products stay matmuls.
LLaMA's projections have no bias."""


def test_the_issue_cases():
    cases = bench_e2e.select_cases(["llama", "bert"], [], small=False)
    assert [(c.name, c.sizes) for c in cases] == [
        ("llama_float16", {"batch": 4, "seq": 512, "hidden": 2048, "heads": 16}),
        ("llama_bfloat16", {"batch": 4, "seq": 512, "hidden": 2048, "heads": 16}),
        ("bert_float16", {"batch": 8, "seq": 384, "hidden": 768, "heads": 12}),
    ]
    llama, bert = cases[0].block(), cases[2].block()
    assert llama.sizes["intermediate"] == 5632 and bert.sizes["intermediate"] == 3072
    assert llama.output.shape == (4, 512, 2048) and bert.output.shape == (8, 384, 768)


@pytest.mark.parametrize("layer", ["llama", "bert"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_program_uses_the_ops_paddle_emits(layer, dtype):
    block = model_programs.BLOCKS[layer](2, 7, 64, 4, dtype=dtype)
    program = parse_program(block.text)
    assert print_program(parse_program(print_program(program))) == print_program(program)
    with open(os.path.join(FIXTURES, FIXTURE_OF[layer], "meta.json"), encoding="utf-8") as f:
        paddle_ops = set(json.load(f)["ops"])
    ops = {op.name for op in program.block}
    assert ops <= paddle_ops, ops - paddle_ops
    feeds, params = block.arrays()
    assert list(feeds) == [t.name for t in block.feeds]
    assert list(params) == [t.name for t in block.params]
    assert sum(a.nbytes for a in params.values()) == block.param_bytes


def test_small_layers_on_cuda_emu_match_the_reference(tmp_path, capsys):
    out = tmp_path / "e2e.json"
    argv = ["--target", "cuda-emu", "--small", "--warmup", "0", "--iters", "2"]
    assert bench_e2e.main([*argv, "--no-torch-compile", "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["timing"].startswith("host wall clock") and record["target"] == "cuda-emu"
    results = {r["case"]: r for r in record["results"]}
    assert list(results) == ["llama_float16", "llama_bfloat16", "bert_float16"]
    for name, r in results.items():
        layer = r["layer"]
        assert "cinn_py_error" not in r, r
        assert r["cinn_py_s"] > 0 and r["cinn_py_runtime_s"] > 0
        assert "within" in r["check"], r["check"]
        if r["checked_against"].startswith("torch"):  # where torch imports: also the reference
            assert "within" in r["torch_vs_reference"]
        else:
            assert r["checked_against"] == "the reference target (NumPy)"
        # Every op but the matmuls in a handful of fused kernels; the matmuls in the library.
        assert 4 <= r["kernels"] <= 12, (name, r["kernels"])
        assert r["library_calls"] == LIBRARY_CALLS[layer], name
        assert 0 < r["arena_bytes"] < r["naive_bytes"]
    table = capsys.readouterr().out
    assert "| llama_bfloat16 | bfloat16 | b2 s7 h64 n4 i256 |" in table
    assert "n/a (not a GPU)" in table and "**FAILED**" not in table


def test_bad_options_are_refused(capsys):
    for argv in (["--cases", "gpt"], ["--dtypes", "int8"], ["--iters", "0"]):
        with pytest.raises(SystemExit) as exit_info:
            bench_e2e.main([*argv, "--target", "cuda-emu", "--small"])
        assert exit_info.value.code == 2
    assert "no layer 'gpt'" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["llama_float16", "llama_bfloat16", "bert_float16"])
def test_full_size_program_builds_for_sm90(name):
    """The very program a GPU session times, through codegen and NVRTC (no GPU needed)."""
    case = {c.name: c for c in bench_e2e.select_cases(["llama", "bert"], [], small=False)}[name]
    stages = PIRCompiler(parse_program(case.block().text), "cuda", arch="sm_90").stages(
        until="codegen"
    )
    assert 4 <= len(stages.fused) <= 12
    assert nvrtc.compile(stages.source.source, "sm_90", name=f"{name}.cu").startswith(b"\x7fELF")


@pytest.mark.gpu
def test_small_layers_on_the_gpu_against_torch(tmp_path):
    torch = pytest.importorskip("torch")
    out = tmp_path / "e2e.json"
    argv = ["--small", "--warmup", "1", "--iters", "3", "--no-torch-compile"]
    assert bench_e2e.main([*argv, "--json", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["target"] == "cuda" and record["timing"].startswith("CUDA events")
    for r in record["results"]:
        assert "cinn_py_error" not in r and r["cinn_py_s"] > 0, r
        if torch.cuda.is_available():
            assert r["checked_against"] == "torch eager (cuda)", r
            assert r["torch_eager_s"] > 0, r
