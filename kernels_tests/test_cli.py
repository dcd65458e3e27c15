"""The `cinn-py` command: print, run, outputs, errors (one line, non-zero exit)."""

from __future__ import annotations

import importlib.metadata
import os
import re
import zipfile

import numpy as np
import pytest

import cinn_py
from cinn_py import cli
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import runtime_header
from cinn_py.cli import main
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.ir.printer import print_ir
from cinn_py.pir.parser import parse_file
from cinn_py.targets.device import gpu_available, no_gpu_reason

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
    assert "cinn-py: steps: 1 kernel(s), 0 library call(s); CUDA graphs off\n" in err


def test_run_verbose_names_what_runs_the_library_calls(capsys):
    code, _, err = run_cli(
        capsys,
        "run",
        os.path.join(MODELS, "mlp"),
        "--target",
        "cuda-emu",
        "--no-cuda-graph",
        "-v",
    )
    assert code == 0
    steps = next(line for line in err.splitlines() if line.startswith("cinn-py: steps:"))
    assert re.fullmatch(
        r"cinn-py: steps: \d+ kernel\(s\), (\d+) library call\(s\) \((\d+) by reference "
        r"kernel, host\); CUDA graphs off",
        steps,
    ), steps


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
    assert err == (
        f"cinn-py: error: target 'cuda' needs a CUDA GPU and CuPy: {no_gpu_reason()}; "
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
"""Two library matmul epilogues (matmul + bias, `fuse_gemm_epilogue`) between fused groups
(the decomposed erf gelu, which cuBLASLt's tanh gelu epilogue is not; the decomposed
softmax)."""
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
        "// inputs %0 (var_0); outputs %7 (var_7)\n"
        f"{zero}\n\n"
    )
    assert zero.startswith("function fn_group_0 (var_0, var_7)\n")
    assert "var_2_tmp[i0_0, i1_0] = Reduce(Max," in zero and "Reduce(sum," in zero
    assert err == ""


def test_ir_scheduled_adds_the_schedule_trace(capsys):
    code, out, _ = run_cli(capsys, "ir", BY_HAND, "--stage", "scheduled", "--target", "cuda-emu")
    assert code == 0
    # the row cache, max, exp (computed once, into registers), sum, normalize: a row each
    assert out.count("thread_bind[blockIdx.x] for") == 5
    assert "\n// cache_read(buffer=var_0, memory_type=local, axes=[1], threads=32, " in out
    assert "\n// fuse(loops=[i_0, i_1]) -> i_0_i_1_fused\n" in out
    assert (
        "\n// factorize_reduction(block=var_2_tmp, threads=32, thread_axis=threadIdx.x, lanes=4)\n"
        in out
    )
    assert "\n// set_buffer(block=var_6_tmp, memory_type=local)\n" in out


def test_ir_of_a_dynamic_program_uses_the_given_shape_or_a_noted_default(capsys, monkeypatch):
    code, out, err = run_cli(capsys, "ir", DYNAMIC, "--stage", "lowered")
    assert code == 0
    # the -1 dim is the kernel argument S0 (symbolic kernels), the row length a number
    assert "serial for (i_0, 0, S0)" in out and "r_0(0:6)" in out
    assert "cinn-py: note: feed 'x' has -1 dims; compiled as x=4x6 (give --shape to choose)" in err
    monkeypatch.setenv("CINN_PY_SPECIALIZE", "1")
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
    assert headings == [  # the decomposed gelu and softmax (the bias adds are epilogues)
        "// group_1 (fused): pd_op.full, pd_op.multiply, pd_op.erf, pd_op.full, "
        "pd_op.add, pd_op.full, pd_op.multiply, pd_op.multiply",
        "// group_3 (fused): pd_op.max, pd_op.subtract, pd_op.full, pd_op.maximum, "
        "pd_op.exp, pd_op.sum, pd_op.full, pd_op.divide, pd_op.multiply",
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


# ---- what a user sees: run's status line, summaries, checks, ids, launches ---------------

SOFTMAX = os.path.join(EXAMPLES, "softmax.pir")
ADD_RELU_MUL = os.path.join(EXAMPLES, "add_relu_mul.pir")
DURATION = r"\d+(\.\d+)? (us|ms|s)"


def _program(tmp_path, body: str, name: str = "p.pir") -> str:
    """A text program of the given op lines (after `{`, before `}`)."""
    path = tmp_path / name
    path.write_text("{\n" + body + "}\n")
    return str(path)


def _data(name: str, shape: str, dtype: str = "float32", short: str = "f32", n: int = 0) -> str:
    dims = shape.replace("x", ",")
    return (
        f'    (%{n}) = "pd_op.data" () {{dtype:{dtype},name:"{name}",place:Place(undefined:0),'
        f"shape:[{dims}],stop_gradient:[true]}} : () -> tensor<{shape}x{short}>\n"
    )


def test_run_ends_with_one_status_line_naming_target_groups_times_and_cache(capsys):
    code, _, err = run_cli(capsys, "run", SOFTMAX, "--target", "cuda-emu")
    assert code == 0
    last = err.splitlines()[-1]
    assert re.fullmatch(
        r"cinn-py: ran on cuda-emu \(--target\): 1 group \(1 fused\), 1 kernel; "
        rf"compile {DURATION}, run {DURATION}; kernel cache: \d+ hits?, \d+ miss(es)?",
        last,
    ), last
    # the same program again in this process: its kernels are taken from the cache
    code, _, err = run_cli(capsys, "run", SOFTMAX, "--target", "cuda-emu")
    assert err.splitlines()[-1].endswith("; kernel cache: 1 hit, 0 misses")


def test_run_status_line_says_why_the_default_target(capsys):
    code, _, err = run_cli(capsys, "run", SOFTMAX)
    assert code == 0
    if gpu_available():
        assert err.splitlines()[-1].startswith("cinn-py: ran on cuda (GPU found: sm_")
    else:
        why = f"cinn-py: ran on cuda-emu (no GPU: {no_gpu_reason()}): 1 group (1 fused), 1 kernel;"
        assert err.splitlines()[-1].startswith(why)


def test_run_status_line_on_reference(capsys):
    code, _, err = run_cli(capsys, "run", SOFTMAX, "--target", "reference")
    assert code == 0
    assert re.fullmatch(
        r"cinn-py: ran on reference \(--target\): NumPy, op by op: no groups, no kernels; "
        rf"compile {DURATION}, run {DURATION}\n",
        err,
    ), err


def test_run_status_line_counts_cache_stats(capsys, monkeypatch):
    from cinn_py.backends import cache

    snapshots = iter([cache.CacheCounts(3, 5, 0), cache.CacheCounts(5, 5, 1)])
    monkeypatch.setattr(cache.stats, "snapshot", lambda: next(snapshots))
    code, _, err = run_cli(capsys, "run", SOFTMAX, "--target", "cuda-emu")
    assert code == 0
    assert err.splitlines()[-1].endswith(
        "; kernel cache: 2 hits, 0 misses, 1 damaged entries rebuilt"
    )


def test_output_summaries_count_nan_and_inf(capsys, tmp_path):
    path = _program(
        tmp_path,
        _data("x", "2x3")
        + '    (%1) = "pd_op.exp" (%0) {stop_gradient:[true]} : (tensor<2x3xf32>) -> '
        "tensor<2x3xf32>\n",
    )
    feeds = tmp_path / "feeds.npz"
    x = np.array([[np.nan, np.inf, -np.inf], [0.0, 1.0, 0.0]], np.float32)
    np.savez(feeds, x=x)
    code, out, _ = run_cli(capsys, "run", path, "--feeds", str(feeds), "--check")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        "%1: float32[2, 3] min=0 max=2.71828 mean=1.17957 over 4 finite values, NaN=1, +inf=1 "
        "[var_1]"
    )
    assert lines[1].startswith("check %1 (cuda-emu vs reference): ok, ") or gpu_available()
    assert lines[1].endswith("; 2 NaN / inf in the same places")


def test_check_names_the_tolerance_and_exact_outputs_say_exact(capsys):
    code, out, _ = run_cli(capsys, "run", SOFTMAX, "--check", "--target", "cuda-emu")
    assert code == 0
    assert re.search(
        r"check %1 \(cuda-emu vs reference\): ok, max abs error \S+, max rel error \S+; "
        r"within float32 tolerance rtol 1e-04, atol 1e-05\n",
        out,
    ), out
    path = os.path.join(ROOT, "kernels_tests", "fixtures", "programs", "reduce_int_bool_sum")
    code, out, _ = run_cli(capsys, "run", os.path.join(path, "program.pir"), "--check")
    assert code == 0
    assert "check %3 (" in out and " vs reference): ok, exact (int64 compares exactly)\n" in out
    assert "check %9 (" in out and "ok, exact (int32 compares exactly)\n" in out


def test_one_value_has_one_id_in_run_groups_ir_and_dump_cuda(capsys):
    """relu(x + y) * w is %5: its buffer var_5 in the IR and the CUDA C."""
    code, out, _ = run_cli(capsys, "run", ADD_RELU_MUL, "--target", "cuda-emu")
    assert out.startswith("%5: float32[256, 1000] ") and out.endswith(" [var_5]\n")
    code, out, _ = run_cli(capsys, "groups", ADD_RELU_MUL)
    assert '(%5) = "pd_op.multiply"' in out and '() = "cf.yield" (%5)' in out
    code, out, _ = run_cli(capsys, "ir", ADD_RELU_MUL, "--stage", "lowered")
    assert "// inputs %0 (var_0), %1 (var_1), %2 (var_2); outputs %5 (var_5)\n" in out
    assert "function fn_group_0 (var_0, var_1, var_2, var_5)" in out
    code, out, _ = run_cli(capsys, "dump-cuda", ADD_RELU_MUL)
    assert "outputs %5 (var_5)\n" in out and "float* var_5)" in out


def test_a_decomposed_output_keeps_its_number_everywhere(capsys):
    """softmax.pir's %1 is decomposed; the multiply that computes it takes its number,
    so %1 is var_1 in run, groups, ir and dump-cuda."""
    code, out, _ = run_cli(capsys, "run", SOFTMAX, "--target", "cuda-emu")
    assert out.startswith("%1: float32[64, 128] ")
    assert out.endswith(" [var_1]\n")
    code, out, err = run_cli(capsys, "groups", SOFTMAX)
    assert '(%1) = "pd_op.multiply"' in out
    assert "note" not in err
    for argv in (["ir", SOFTMAX, "--stage", "lowered"], ["dump-cuda", SOFTMAX]):
        code, out, _ = run_cli(capsys, *argv)
        assert "// inputs %0 (var_0); outputs %1 (var_1)\n" in out


def test_an_output_the_passes_renumber_says_its_new_number_everywhere(capsys, tmp_path):
    """Two equal outputs: CSE keeps %1, so the program's %2 is %1 (var_1) after the
    passes, and every command says so."""
    relu = "(%0) {stop_gradient:[true]} : (tensor<4x8xf32>) -> tensor<4x8xf32>\n"
    path = _program(
        tmp_path,
        _data("x", "4x8") + f'    (%1) = "pd_op.relu" {relu}' + f'    (%2) = "pd_op.relu" {relu}',
    )
    code, out, _ = run_cli(capsys, "run", path, "--target", "cuda-emu")
    assert out.splitlines()[1].startswith("%2: float32[4, 8] ")
    assert out.splitlines()[1].endswith(" [var_1: %2 is %1 after the passes]")
    code, out, err = run_cli(capsys, "groups", path)
    assert '(%1) = "pd_op.relu"' in out
    assert err == "cinn-py: note: the program's output %2 is %1 after the passes (var_1)\n"
    for argv in (["ir", path, "--stage", "lowered"], ["dump-cuda", path]):
        code, out, _ = run_cli(capsys, *argv)
        assert "// inputs %0 (var_0); outputs %1 (var_1, the program's %2)\n" in out


def test_dump_cuda_shows_each_kernels_launch_and_refers_to_the_header(capsys):
    code, out, _ = run_cli(capsys, "dump-cuda", SOFTMAX, "--target", "cuda-emu")
    assert code == 0
    stages = PIRCompiler(parse_file(SOFTMAX), "cuda-emu").stages()
    (info,) = stages.source.kernels
    launch = (
        f"// launch fn_group_0: grid {tuple(info.grid)}, block {tuple(info.block)} "
        f"({np.prod(info.grid) * np.prod(info.block)} threads in all); "
        "shared memory: 0 B dynamic, 0 B in __shared__ arrays\n"
    )
    assert launch + 'extern "C" __global__ void __launch_bounds__(' in out
    assert "template <class T>" not in out  # the runtime header is referred to
    header_lines = runtime_header().rstrip().count("\n") + 1
    assert (
        f"// cinn_py_runtime.h ({header_lines} lines) is pasted here when compiled: `--header` "
        "prints it after the kernels; `-o DIR` writes self-contained .cu files\n"
    ) in out
    code, full, _ = run_cli(capsys, "dump-cuda", SOFTMAX, "--target", "cuda-emu", "--header")
    header = runtime_header().rstrip()
    assert full.count(header) == 1 and full.index(header) > full.index("fn_group_0(")
    assert full.endswith(header + "\n")


def test_launch_lines_count_shared_arrays_in_ir_and_dump(capsys, tmp_path):
    path = _program(
        tmp_path,
        _data("x", "64x96")
        + '    (%1) = "pd_op.transpose" (%0) {perm:[1,0],stop_gradient:[true]} : '
        "(tensor<64x96xf32>) -> tensor<96x64xf32>\n",
    )
    launch = (
        "// launch fn_group_0: grid (6, 1, 1), block (8, 32, 1) (1536 threads in all); "
        "shared memory: 0 B dynamic, 4224 B in __shared__ arrays\n"  # a 32 x 33 float tile
    )
    code, out, _ = run_cli(capsys, "ir", path, "--stage", "scheduled", "--target", "cuda-emu")
    assert code == 0 and launch + "function fn_group_0 (var_0, var_1)\n" in out
    code, out, _ = run_cli(capsys, "dump-cuda", path, "--target", "cuda-emu")
    assert code == 0 and launch + 'extern "C" __global__' in out


def test_dump_cuda_files_keep_the_header_and_show_the_launch(capsys, tmp_path):
    folder = tmp_path / "cu"
    code, _, _ = run_cli(capsys, "dump-cuda", SOFTMAX, "-o", str(folder), "--target", "cuda-emu")
    assert code == 0
    source = (folder / "group_0.cu").read_text()
    assert runtime_header().rstrip() in source
    assert re.search(r"\n// launch fn_group_0: grid .*\nextern \"C\" __global__", source)


def test_run_profile_times_each_kernel_with_its_launch(capsys):
    code, out, _ = run_cli(capsys, "run", EXAMPLE_MLP, "--profile", "--target", "cuda-emu")
    assert code == 0
    lines = out.splitlines()
    start = lines.index("profile (cuda-emu; kernels: emulated: CPU time, not GPU time):")
    rows = lines[start + 1 :]
    assert [row.split()[0] for row in rows] == ["group_0", "group_1", "group_2", "group_3", "total"]
    assert re.fullmatch(
        rf"  group_0  library pd_op.fused_gemm_epilogue \(reference kernel, host\) +{DURATION}",
        rows[0],
    )
    assert re.fullmatch(
        rf"  group_1  fn_group_1  grid \(\d+, 1, 1\) block \(\d+, \d+, 1\)  dynamic shared 0 B +{DURATION}",
        rows[1],
    ), rows[1]


def test_run_profile_on_reference_says_there_is_nothing_to_time(capsys):
    code, out, err = run_cli(capsys, "run", SOFTMAX, "--profile", "--target", "reference")
    assert code == 0 and "profile" not in out
    assert "cinn-py: note: --profile: the reference target runs no kernels\n" in err


def test_version_comes_from_the_package_metadata(capsys, monkeypatch):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"cinn-py {importlib.metadata.version('cinn_py')}\n"

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert cli.version() == cinn_py.__version__


def test_groups_explain_says_why_groups_were_not_merged(capsys):
    code, out, _ = run_cli(capsys, "groups", EXAMPLE_MLP, "--explain")
    assert code == 0
    program, explained = out.split("\nnot fused (--explain):\n")
    assert program.endswith("}\n")
    gemm = "pd_op.fused_gemm_epilogue"
    library = f"{gemm} is a library op (no generated kernel: the target's library call runs it)"
    assert explained.splitlines() == [
        f"  group_0 -> group_1 along %6 ({gemm}, pd_op.multiply): {library}",
        f"  group_1 -> group_2 along %7 (pd_op.multiply, {gemm}): {library}",
        f"  group_2 -> group_3 along %9 ({gemm}, pd_op.max): {library}",
    ]
    code, out, _ = run_cli(capsys, "groups", SOFTMAX, "--explain")
    assert out.endswith("\nnot fused (--explain):\n  nothing: no value links two groups\n")


def test_groups_explain_names_the_row_rule_and_the_cycle(capsys, tmp_path):
    f32, row = "tensor<4x4xf32>", "tensor<4xf32>"
    path = _program(  # x - sum(x, 1): the [4] sums line up with dim 1, another row's sum
        tmp_path,
        _data("x", "4x4")
        + '    (%1) = "pd_op.sum" (%0, <<NULL VALUE>>) {axis:[1],dtype:Undefined,keepdim:false,'
        f"stop_gradient:[true]}} : ({f32}, <<NULL TYPE>>) -> {row}\n"
        f'    (%2) = "pd_op.subtract" (%0, %1) {{stop_gradient:[true]}} : ({f32}, {row}) -> {f32}\n',
    )
    code, out, err = run_cli(capsys, "groups", path, "--explain")
    assert code == 0, err
    assert out.split("\nnot fused (--explain):\n")[1].splitlines() == [
        "  group_0 -> group_1 along %1 (pd_op.sum, pd_op.subtract): row invariant: "
        "pd_op.subtract reads a row value of shape (4,) off its row into [4, 4]",
        "  group_0 | group_1, both reading %0 (pd_op.sum, pd_op.subtract): horizontal fusion "
        "needs both siblings or neither to reduce",
    ]
    keep = "tensor<4x1xf32>"
    path = _program(  # a softmax whose exp feeds a matmul the output adds
        tmp_path,
        _data("x", "4x4")
        + _data("w", "4x4", n=1)
        + f'    (%2) = "pd_op.exp" (%0) {{stop_gradient:[true]}} : ({f32}) -> {f32}\n'
        '    (%3) = "pd_op.sum" (%2, <<NULL VALUE>>) {axis:[1],dtype:Undefined,keepdim:true,'
        f"stop_gradient:[true]}} : ({f32}, <<NULL TYPE>>) -> {keep}\n"
        f'    (%4) = "pd_op.divide" (%2, %3) {{stop_gradient:[true]}} : ({f32}, {keep}) -> {f32}\n'
        '    (%5) = "pd_op.matmul" (%2, %1) {stop_gradient:[true],transpose_x:false,'
        f"transpose_y:false}} : ({f32}, {f32}) -> {f32}\n"
        f'    (%6) = "pd_op.add" (%4, %5) {{stop_gradient:[true]}} : ({f32}, {f32}) -> {f32}\n',
        "cycle.pir",
    )
    code, out, err = run_cli(capsys, "groups", path, "--explain")
    assert code == 0, err
    library = (
        "pd_op.matmul is a library op (no generated kernel: the target's library call runs it)"
    )
    assert out.split("\nnot fused (--explain):\n")[1].splitlines() == [
        f"  group_0 -> group_1 along %2 (pd_op.exp, pd_op.matmul): {library}",
        "  group_0 -> group_2 along %4 (pd_op.divide, pd_op.add): would create a cycle "
        "through group_1 (pd_op.matmul)",
        f"  group_1 -> group_2 along %5 (pd_op.matmul, pd_op.add): {library}",
    ]


def test_ctrl_c_is_one_line_and_status_130(capsys, monkeypatch):
    def interrupted(path):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.api, "load", interrupted)
    code, out, err = run_cli(capsys, "run", SOFTMAX)
    assert (code, out, err) == (130, "", "cinn-py: interrupted\n")


def test_an_unknown_op_suggests_the_nearest_known_one(capsys, tmp_path):
    path = _program(
        tmp_path,
        _data("x", "2") + '    (%1) = "pd_op.rellu" (%0) {} : (tensor<2xf32>) -> tensor<2xf32>\n',
    )
    for target in ("cuda-emu", "reference"):
        code, _, err = run_cli(capsys, "run", path, "--target", target)
        assert code == 2
        assert err == (
            "cinn-py: error: op 'pd_op.rellu' is not an op cinn_py knows; did you mean "
            f"'pd_op.relu'? ({path}:3, op #1, defining %1)\n"
        )


@pytest.mark.parametrize("option", ["--feeds", "--params"])
def test_feeds_and_params_that_are_no_npz_say_what_they_are(capsys, tmp_path, option):
    npy = tmp_path / "x.npy"
    np.save(npy, np.zeros(3))
    text = tmp_path / "x.txt"
    text.write_text("x = 1\n")
    archive = tmp_path / "notes.npz"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("readme.txt", "hello")
    npz = "is not a .npz file (a zip archive of .npy arrays, as numpy.savez writes)"
    cases = {
        str(tmp_path / "missing.npz"): "no such file",
        str(tmp_path): "is a folder, not a .npz file",
        str(text): npz,
        str(npy): npz + "; it is a .npy file (one array): save named arrays with numpy.savez",
        str(archive): "its member 'readme.txt' is not a .npy array",
    }
    for path, why in cases.items():
        code, _, err = run_cli(capsys, "run", SOFTMAX, option, path, "--target", "reference")
        assert (code, err) == (2, f"cinn-py: error: {option} {path}: {why}\n")


def test_bfloat16_feeds_saved_from_ml_dtypes_arrays(capsys, tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = "tensor<4x6xbf16>"
    path = _program(
        tmp_path,
        _data("x", "4x6", "bfloat16", "bf16")
        + f'    (%1) = "pd_op.exp" (%0) {{stop_gradient:[true]}} : ({bf16}) -> {bf16}\n',
    )
    feeds = tmp_path / "feeds.npz"
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    np.savez(feeds, x=x.astype(ml_dtypes.bfloat16))  # NumPy reads it back as void (V2)
    code, out, err = run_cli(capsys, "run", path, "--feeds", str(feeds), "--check")
    assert code == 0, err
    first, check = out.splitlines()
    assert (
        first == "%1: bfloat16[4, 6] min=0.367188 max=2.71875 mean=1.19214, no NaN or inf [var_1]"
    )
    assert check.endswith("within bfloat16 tolerance rtol 2e-02, atol 1e-02")


def test_cache_info_and_clear(capsys, monkeypatch, tmp_path):
    from cinn_py.backends import cache

    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path / "cache"))
    cache.write("cubin", cache.cache_key("a"), ".cubin", b"x" * 3000)
    cache.write("cubin", cache.cache_key("b"), ".cubin", b"y" * 100)
    cache.write("emu", cache.cache_key("c"), ".so", b"z" * 10)
    code, out, _ = run_cli(capsys, "cache", "info")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"cache folder: {tmp_path / 'cache'}"
    assert re.fullmatch(r"  cubin +2 entries +\d\.\d KiB", lines[1]), lines
    assert re.fullmatch(r"  emu +1 entry +\d+ B", lines[2]), lines
    assert re.fullmatch(r"total: 3 entries, \d\.\d KiB", lines[3]), lines
    code, out, _ = run_cli(capsys, "cache", "clear", "--kind", "emu")
    assert out == f"removed 1 entry of kind 'emu' from {tmp_path / 'cache'}\n"
    code, out, _ = run_cli(capsys, "cache", "clear")
    assert out == f"removed 2 entries from {tmp_path / 'cache'}\n"
    code, out, _ = run_cli(capsys, "cache", "info")
    assert out.splitlines()[-1] == "total: 0 entries, 0 B"


def test_cache_clear_of_a_folder_that_refuses_is_one_line(capsys, monkeypatch, tmp_path):
    from pathlib import Path

    from cinn_py.backends import cache

    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path / "cache"))
    cache.write("cubin", cache.cache_key("a"), ".cubin", b"x" * 30)

    def refused(self, missing_ok=False):  # root ignores chmod: a read-only folder, simulated
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", refused)
    code, out, err = run_cli(capsys, "cache", "clear")
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"cannot clear the cache folder {tmp_path / 'cache' / 'cubin'}" in err
    assert "Permission denied" in err and "CINN_PY_CACHE_DIR chooses another" in err


def test_a_reader_that_goes_away_ends_the_command_quietly(capsys, monkeypatch):
    def closed_pipe(args):
        raise BrokenPipeError

    monkeypatch.setattr(cli, "_cmd_print", closed_pipe)  # `cinn-py print ... | head -1`
    code, out, err = run_cli(capsys, "print", SOFTMAX)
    assert (code, out, err) == (141, "", "")
