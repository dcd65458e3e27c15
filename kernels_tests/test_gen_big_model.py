"""tools/gen_big_model.py: N-layer LLaMA- and BERT-style programs. The text parses and
verifies, ops grow by the same count per layer, the text and the saved model
(model.json + model.pdiparams, as `paddle.jit.save` writes them) are the same program
with the same parameters, and a tiny two-layer model runs on cuda-emu as on the
reference target."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import cinn_py
from cinn_py.pir.printer import print_program
from cinn_py.tolerances import compare
from kernels_tests.tool_modules import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = {"batch": 2, "seq": 8, "hidden": 32, "heads": 2}


gen_big_model = load_tool("gen_big_model")


@pytest.mark.parametrize("kind", ["llama", "bert"])
def test_ops_grow_linearly_and_parameters_are_per_layer(kind, tmp_path):
    counts = [
        gen_big_model.op_count(gen_big_model.program_text(kind, n, **TINY)) for n in (1, 2, 3, 5)
    ]
    per_layer = counts[1] - counts[0]
    assert per_layer > 30
    assert counts == [counts[0] + per_layer * (n - 1) for n in (1, 2, 3, 5)]
    block = gen_big_model.big_model(kind, 3, **TINY)
    path = tmp_path / "model.pir"
    path.write_text(block.text)
    program = cinn_py.load(path)  # parses and verifies
    assert len(program.block) == counts[2]
    names = [op.attr("parameter_name") for op in program.parameter_ops()]
    assert names == [t.name for t in block.params]
    first = "layers.0.q_proj.weight" if kind == "llama" else "layers.0.query.weight"
    assert first in names and first.replace("0", "2") in names
    assert not any(n.startswith("layers.3.") for n in names)
    assert [op.attr("name") for op in program.data_ops()] == ["hidden_states", "attention_mask"]
    (output,) = program.outputs()
    assert output.type.dims == (TINY["batch"], TINY["seq"], TINY["hidden"])


def test_text_and_saved_model_are_one_program(tmp_path):
    argv = ["--kind", "llama", "--layers", "2", "--out", str(tmp_path), "--dtype", "bfloat16"]
    argv += [f"--{k}={v}" for k, v in TINY.items()]
    assert gen_big_model.main(argv) == 0
    meta = json.loads((tmp_path / "meta.json").read_text())
    expected = ["feeds.npz", "model.json", "model.pdiparams", "model.pir", "params.npz"]
    assert meta["files"] == expected and meta["ops"] == 183
    text, saved = cinn_py.load(tmp_path / "model.pir"), cinn_py.load(tmp_path)
    assert print_program(saved) == print_program(text)
    with np.load(tmp_path / "params.npz") as params:
        assert sorted(params.files) == sorted(saved.parameters)
        for name in params.files:
            assert saved.parameters[name].dtype == np.uint16  # bfloat16 bits
            np.testing.assert_array_equal(saved.parameters[name], params[name])
    # distinct random weights per layer
    q0, q1 = (saved.parameters[f"layers.{i}.q_proj.weight"] for i in (0, 1))
    assert not np.array_equal(q0, q1)


def test_bad_options_are_refused(tmp_path, capsys):
    for argv in (["--kind", "gpt"], ["--layers", "0"], ["--hidden", "30", "--heads", "4"]):
        with pytest.raises(SystemExit) as exit_info:
            gen_big_model.main([*argv, "--out", str(tmp_path)])
        assert exit_info.value.code == 2
    assert "must split into 4 heads" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["llama", "bert"])
def test_two_tiny_layers_run_on_cuda_emu_as_on_the_reference(kind, tmp_path):
    block = gen_big_model.big_model(kind, 2, dtype="float32", **TINY)
    gen_big_model.write_model(block, tmp_path, "json", seed=3)
    program = cinn_py.load(tmp_path)  # the saved model, parameters included
    with np.load(tmp_path / "feeds.npz") as f:
        feeds = {name: f[name] for name in f.files}
    want = cinn_py.compile(program, "reference").run(feeds)["out0"]
    exe = cinn_py.compile(program, "cuda-emu")
    got = exe.run(feeds)["out0"]
    assert np.isfinite(want).all() and float(np.abs(want).max()) > 0.1
    result = compare(got, want)
    assert result.ok, str(result)
    fused = len(exe.kernels)
    assert 8 <= fused <= 20, fused
