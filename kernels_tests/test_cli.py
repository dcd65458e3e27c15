"""The `cinn-py` command: print, run, outputs, errors (one line, non-zero exit)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from cinn_py.backends import nvrtc
from cinn_py.cli import main
from cinn_py.hlir.pir_compiler import PIRCompiler
from cinn_py.ir.printer import print_ir
from cinn_py.pir.parser import parse_file
from cinn_py.runtime.device import gpu_available

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
MODELS = os.path.join(ROOT, "kernels_tests", "fixtures", "models")


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_print_gives_back_the_text(capsys):
    path = os.path.join(EXAMPLES, "softmax_by_hand.pir")
    code, out, _ = run_cli(capsys, "print", path)
    assert code == 0
    with open(path, encoding="utf-8") as f:
        assert out == f.read()


def test_run_text_program_writes_outputs_by_value_id(capsys, tmp_path):
    x = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float32)
    feeds = tmp_path / "feeds.npz"
    np.savez(feeds, x=x)
    out = tmp_path / "out.npz"
    code, stdout, _ = run_cli(
        capsys,
        "run",
        os.path.join(EXAMPLES, "softmax.pir"),
        "--feeds",
        str(feeds),
        "--target",
        "reference",
        "--out",
        str(out),
    )
    assert code == 0
    assert stdout.startswith("%1: float32[64, 128]")
    with np.load(out) as data:
        assert data.files == ["%1"]
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        np.testing.assert_allclose(data["%1"], e / e.sum(axis=-1, keepdims=True), rtol=1e-5)


def test_run_check_reports_errors(capsys):
    code, stdout, _ = run_cli(
        capsys, "run", os.path.join(EXAMPLES, "softmax.pir"), "--check", "--target", "reference"
    )
    assert code == 0
    assert "check %1 (reference vs reference): ok, max abs error 0" in stdout


def test_run_cuda_emu_check_and_stage_timings(capsys):
    code, stdout, err = run_cli(
        capsys,
        "run",
        os.path.join(EXAMPLES, "softmax_by_hand.pir"),
        "--target",
        "cuda-emu",
        "--check",
        "-v",
    )
    assert code == 0
    assert stdout.startswith("%7: float32[32, 100]")
    assert "check %7 (cuda-emu vs reference): ok, max abs error" in stdout
    assert err.startswith("cinn-py: cuda-emu: 1 kernel(s); passes ")  # softmax by hand: one kernel
    assert "compile " in err and "total " in err


def test_run_defaults_to_a_compiled_target(capsys):
    code, stdout, _ = run_cli(capsys, "run", os.path.join(EXAMPLES, "softmax.pir"), "--check")
    assert code == 0
    target = "cuda" if gpu_available() else "cuda-emu"
    assert f"check %1 ({target} vs reference): ok" in stdout


def test_run_fetch_picks_values(capsys):
    code, stdout, _ = run_cli(
        capsys, "run", os.path.join(EXAMPLES, "softmax_by_hand.pir"), "--fetch", "%2", "%7"
    )
    assert code == 0
    assert [line.split(":")[0] for line in stdout.splitlines()] == ["%2", "%7"]
    assert stdout.splitlines()[0].startswith("%2: float32[32, 1]")


@pytest.mark.skipif(not os.path.isdir(os.path.join(MODELS, "mlp")), reason="no mlp fixture")
def test_run_saved_model_names_outputs_out0(capsys, tmp_path):
    model = os.path.join(MODELS, "mlp")
    out = tmp_path / "out.npz"
    code, stdout, _ = run_cli(
        capsys, "run", model, "--feeds", os.path.join(model, "feeds.npz"), "--out", str(out)
    )
    assert code == 0 and stdout.startswith("out0: float32")
    with np.load(out) as got, np.load(os.path.join(model, "outputs.npz")) as want:
        np.testing.assert_allclose(got["out0"], want["out0"], rtol=1e-4, atol=1e-5)


def _write(tmp_path, text: str) -> str:
    path = tmp_path / "p.pir"
    path.write_text(text)
    return str(path)


def test_parse_error_is_one_readable_message(capsys, tmp_path):
    path = _write(tmp_path, '{\n    (%0) = "pd_op.data" () {name:"x"} : () -> tensor<2xq9>\n}\n')
    code, out, err = run_cli(capsys, "print", path)
    assert code == 2 and out == ""
    assert err.startswith(f"cinn-py: error: {path}:2:")
    assert "Traceback" not in err


def test_unsupported_op_names_op_and_place(capsys, tmp_path):
    text = (
        "{\n"
        '    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),'
        "shape:[2],stop_gradient:[true]} : () -> tensor<2xf32>\n"
        '    (%1) = "pd_op.frobnicate" (%0) {} : (tensor<2xf32>) -> tensor<2xf32>\n'
        "}\n"
    )
    code, _, err = run_cli(capsys, "run", _write(tmp_path, text))
    assert code == 2
    assert "op 'pd_op.frobnicate'" in err and "p.pir:3" in err


def test_wrong_feed_shape(capsys, tmp_path):
    feeds = tmp_path / "feeds.npz"
    np.savez(feeds, x=np.zeros((3, 3), np.float32))
    code, _, err = run_cli(
        capsys, "run", os.path.join(EXAMPLES, "softmax.pir"), "--feeds", str(feeds)
    )
    assert code == 2
    assert err.startswith("cinn-py: error: feed 'x': expected")


@pytest.mark.skipif(gpu_available(), reason="there is a GPU here")
def test_cuda_target_without_a_gpu_says_so(capsys):
    code, _, err = run_cli(capsys, "run", os.path.join(EXAMPLES, "softmax.pir"), "--target", "cuda")
    assert code == 2
    assert err == "cinn-py: error: target 'cuda' needs a CUDA GPU and CuPy, and found none; " + (
        "use cuda-emu\n"
    )


def test_missing_file(capsys):
    code, _, err = run_cli(capsys, "print", "/nonexistent/prog.pir")
    assert code == 2 and "/nonexistent/prog.pir" in err


def test_unknown_fetch(capsys):
    code, _, err = run_cli(capsys, "run", os.path.join(EXAMPLES, "softmax.pir"), "--fetch", "%99")
    assert code == 2 and "cannot fetch '%99'" in err


BY_HAND = os.path.join(EXAMPLES, "softmax_by_hand.pir")
EXAMPLE_MLP = os.path.join(
    ROOT, "kernels_tests", "fixtures", "programs", "mlp_static", "program.pir"
)
"""Two library matmuls between fused groups (bias + gelu; bias + the decomposed softmax)."""
DYNAMIC = os.path.join(
    ROOT, "kernels_tests", "fixtures", "programs", "dynamic_batch", "program.pir"
)


def test_ir_lowered_prints_each_fused_groups_function_under_its_heading(capsys):
    code, out, err = run_cli(capsys, "ir", BY_HAND, "--stage", "lowered", "--target", "cuda-emu")
    assert code == 0
    stages = PIRCompiler(parse_file(BY_HAND), "cuda-emu").stages(until="lowered")
    assert [k.group.name for k in stages.fused] == ["group_0"]  # the softmax fuses whole
    (zero,) = (print_ir(k.lowered) for k in stages.fused)
    assert out == (
        "// group_0 (fused): pd_op.max, pd_op.subtract, pd_op.exp, pd_op.sum, pd_op.divide\n"
        "// inputs %0; outputs %7\n"
        f"{zero}\n\n"
    )
    assert zero.startswith("function fn_group_0 (var_0, var_7)\n")
    assert "var_2_tmp[i0_0, i1_0] = Reduce(Max," in zero and "Reduce(sum," in zero
    assert err == ""


def test_ir_scheduled_adds_the_schedule_trace(capsys):
    code, out, _ = run_cli(capsys, "ir", BY_HAND, "--stage", "scheduled", "--target", "cuda-emu")
    assert code == 0
    # the row cache, max, sum, normalize: one row each
    assert out.count("thread_bind[blockIdx.x] for") == 4
    assert "\n// cache_read(buffer=var_0, memory_type=local, axes=[1], threads=32, " in out
    assert "\n// fuse(loops=[i_0, i_1]) -> i_0_i_1_fused\n" in out
    assert (
        "\n// factorize_reduction(block=var_2_tmp, threads=32, thread_axis=threadIdx.x, lanes=4)\n"
        in out
    )
    assert "\n// set_buffer(block=var_6_tmp, memory_type=local)\n" in out


def test_ir_of_a_dynamic_program_uses_the_given_shape_or_a_noted_default(capsys):
    code, out, err = run_cli(capsys, "ir", DYNAMIC, "--stage", "lowered")
    assert code == 0
    assert "serial for (i_0, 0, 4)" in out and "r_0(0:6)" in out
    assert "cinn-py: note: feed 'x' has -1 dims; compiled as x=4x6 (give --shape to choose)" in err
    code, out, err = run_cli(capsys, "ir", DYNAMIC, "--stage", "lowered", "--shape", "x=3x6")
    assert code == 0 and "serial for (i_0, 0, 3)" in out and "has -1 dims" not in err


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ("x=3xq", "--shape 'x=3xq': expected NAME=DIMS such as x=2x3 (x= for 0-D)"),
        ("x3x6", "--shape 'x3x6': expected NAME=DIMS"),
        ("y=3x6", "--shape 'y=3x6': the program has no feed 'y'"),
        ("x=3x5", "feed 'x': expected shape [-1, 6], got shape [3, 5]"),
    ],
)
def test_bad_shapes_are_one_line_errors(capsys, shape, message):
    code, _, err = run_cli(capsys, "ir", DYNAMIC, "--stage", "lowered", "--shape", shape)
    assert code == 2
    assert err.startswith("cinn-py: error: " + message) and err.count("\n") == 1


def test_dump_cuda_prints_the_one_translation_unit(capsys):
    code, out, _ = run_cli(capsys, "dump-cuda", EXAMPLE_MLP, "--target", "cuda-emu")
    assert code == 0
    headings = [line for line in out.splitlines() if line.startswith("// group_")]
    assert headings == [  # the decomposed gelu and softmax, each fused with its bias add
        "// group_1 (fused): pd_op.add, pd_op.full, pd_op.multiply, pd_op.erf, pd_op.full, "
        "pd_op.add, pd_op.multiply, pd_op.full, pd_op.multiply",
        "// group_3 (fused): pd_op.add, pd_op.max, pd_op.subtract, pd_op.full, pd_op.maximum, "
        "pd_op.exp, pd_op.sum, pd_op.divide",
    ]
    assert out.count("__global__") == 2 and out.endswith("}\n")
    assert out.index("fn_group_1(") < out.index("fn_group_3(")


def test_dump_cuda_writes_sources_nvrtc_compiles_as_they_are(capsys, tmp_path):
    folder = tmp_path / "cu"
    code, out, _ = run_cli(capsys, "dump-cuda", EXAMPLE_MLP, "-o", str(folder), "--target", "cuda")
    assert code == 0
    names = ["group_1.cu", "group_3.cu"]
    assert sorted(p.name for p in folder.iterdir()) == names
    assert out == "".join(f"wrote {folder / name}\n" for name in names)
    for path in sorted(folder.iterdir()):
        source = path.read_text()
        assert f"fn_{path.stem}(" in source
        for arch in ("sm_80", "sm_90"):
            assert nvrtc.compile(source, arch, name=path.name).startswith(b"\x7fELF")


def test_groups_prints_the_program_with_cinn_op_group_ops(capsys, tmp_path):
    path = os.path.join(EXAMPLES, "add_relu_mul.pir")
    dot = tmp_path / "groups.dot"
    code, out, err = run_cli(capsys, "groups", path, "--dot", str(dot))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[4] == (
        '    (%6) = "cinn_op.group" () {group_name:"group_0",kind:"fused"} '
        "-> tensor<256x1000xf32> {"
    )
    assert lines[-3:] == [
        '        () = "cf.yield" (%5) {} : (tensor<256x1000xf32>) -> ',
        "    }",
        "}",
    ]
    assert str(parse_program_text(out)) == out
    text = dot.read_text()
    assert text.startswith("digraph program {\n") and "subgraph cluster_group_0 {" in text
    assert 'label="group_0 (fused)";' in text and 'op3 -> op4 [label="%3"];' in text


def parse_program_text(text):
    from cinn_py.pir.parser import parse_program

    return parse_program(text)


def test_groups_of_a_dynamic_program_take_shapes(capsys):
    path = os.path.join(ROOT, "kernels_tests", "fixtures", "programs", "dynamic_batch")
    code, out, err = run_cli(
        capsys, "groups", os.path.join(path, "program.pir"), "--shape", "x=3x6"
    )
    assert code == 0, err
    assert "cinn_op.group" in out and "tensor<3x" in out and "-1x" not in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["groups", "missing.pir"], "missing.pir: no such program file"),
        (["groups", "EX/add_relu_mul.pir", "--shape", "q=2"], "the program has no feed 'q'"),
        (["groups", "EX/add_relu_mul.pir", "--dot", "/no/such/dir/g.dot"], "No such file"),
    ],
)
def test_groups_errors_are_one_line_exit_2(capsys, argv, message):
    argv = [a.replace("EX", EXAMPLES) for a in argv]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("cinn-py: error: ") and message in err and err.count("\n") == 1
