"""tools/bench.py's cases, without a GPU: each at tiny shapes on cuda-emu against NumPy
(its `--smoke` mode), and its full-size program built for sm_90 by NVRTC, so the programs
a GPU session times are exercised here; the timed path runs once on cuda-emu."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from cinn_py.pir.parser import parse_program
from cinn_py.pir.printer import print_program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "tools", "bench.py")


def _load_bench():
    spec = importlib.util.spec_from_file_location("cinn_py_tools_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = _load_bench()


@pytest.mark.parametrize("name", list(bench.CASES))
def test_case_passes_smoke(name):
    result = bench.smoke_case(bench.CASES[name], "cuda-emu")
    assert result.ok, result.message


def test_the_issue_cases_are_all_there():
    assert list(bench.CASES) == [
        "add_relu_mul_f32_67108864",
        *(
            f"{family}_{dtype}_{shape}"
            for family in ("softmax", "layer_norm", "rms_norm")
            for dtype in ("f32", "f16")
            for shape in ("4096x4096", "16384x8192")
        ),
        "transpose_f32_8192x8192",
        "transpose_f16_8192x8192",
        "reduce_sum_rows_f32_8192x8192",
        "reduce_sum_cols_f32_8192x8192",
        "reduce_sum_all_f32_8192x8192",
    ]


def test_program_texts_print_back_as_written():
    for case in bench.CASES.values():
        for sized in (case, case.at(case.smoke_shape)):
            assert print_program(parse_program(sized.program_text)) == sized.program_text


def test_bytes_moved():
    cases = bench.CASES
    assert cases["add_relu_mul_f32_67108864"].nbytes == 4 * 2**26 * 4
    assert cases["softmax_f16_16384x8192"].nbytes == 2 * 16384 * 8192 * 2
    assert cases["layer_norm_f16_4096x4096"].nbytes == (2 * 4096 * 4096 + 2 * 4096) * 2
    assert cases["rms_norm_f32_16384x8192"].nbytes == (2 * 16384 * 8192 + 8192) * 4
    assert cases["reduce_sum_rows_f32_8192x8192"].nbytes == (8192 * 8192 + 8192) * 4
    assert cases["reduce_sum_cols_f32_8192x8192"].nbytes == (8192 * 8192 + 8192) * 4


def test_cases_are_chosen_by_family_name_or_prefix():
    names = [
        c.name for c in bench.select_cases(["reduce_sum,softmax_f16", "rms_norm_f32_4096x4096"])
    ]
    assert names == [
        "softmax_f16_4096x4096",
        "softmax_f16_16384x8192",
        "rms_norm_f32_4096x4096",
        "reduce_sum_rows_f32_8192x8192",
        "reduce_sum_cols_f32_8192x8192",
        "reduce_sum_all_f32_8192x8192",
    ]
    assert len(bench.select_cases([])) == len(bench.CASES)
    with pytest.raises(ValueError, match="no case matches 'softmax_f64'"):
        bench.select_cases(["softmax_f64"])


def test_check_scales_atol_to_the_output():
    """A float16 softmax of 4096 columns (values ~2.4e-4) that came out all zeros is
    within float16's plain atol of 1e-3, and must still fail."""
    want = np.full((2, 4096), 1 / 4096, dtype=np.float16)
    assert not bench.check(np, np.zeros_like(want), want, "float16").ok
    assert not bench.check(np, want.astype(np.float32), want, "float16").ok  # wrong dtype
    assert bench.check(np, want, want, "float16").ok


def test_command_line_lists_and_smokes():
    listed = subprocess.run(
        [sys.executable, BENCH, "--list"], capture_output=True, text=True, check=True
    ).stdout
    assert all(name in listed for name in bench.CASES)
    smoke = subprocess.run(
        [sys.executable, BENCH, "--smoke", "--no-nvrtc", "--cases", "add_relu_mul,rms_norm_f16"],
        capture_output=True,
        text=True,
    )
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert smoke.stdout.splitlines()[-1] == "3 passed, 0 failed"


def test_timed_bench_runs_on_cuda_emu(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = bench.main(
        [
            *("--target", "cuda-emu", "--tiny", "--repeat", "3", "--budget", "0.01"),
            *("--cases", "softmax_f16_4096x4096,reduce_sum_cols", "--no-torch-compile"),
            *("--json", str(out)),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "| softmax_f16_4x33 |" in printed and "| reduce_sum_cols_f32_3x40 |" in printed
    results = json.loads(out.read_text())["results"]
    assert [r["case"] for r in results] == ["softmax_f16_4x33", "reduce_sum_cols_f32_3x40"]
    assert all(r["cinn_py_s"] > 0 and r["cupy_s"] > 0 for r in results)


@pytest.mark.parametrize("name", ["softmax_f32_4096x4096", "rms_norm_f16_16384x8192"])
def test_symbolic_variant_passes_smoke_with_symbolic_kernels(name):
    """`--symbolic`: the case with -1 rows, right against NumPy, its kernel taking the
    rows as an argument."""
    case = bench.CASES[name]
    text = bench.dynamic_text(case)
    assert '"pd_op.data"' in text and "shape:[-1," in text and "tensor<-1x" in text
    result = bench.smoke_case(case, nvrtc=False, symbolic=True)
    assert result.ok, result.message
    assert "1 symbolic kernel(s)" in result.message


def _tiny_timed_bench(tmp_path, capsys, case: str, flag: str) -> tuple[str, dict]:
    """tools/bench.py timed on cuda-emu at the tiny shapes for one case with `flag`: what
    it printed, and the case's JSON result."""
    out = tmp_path / "bench.json"
    code = bench.main(
        [
            *("--target", "cuda-emu", "--tiny", "--repeat", "3", "--budget", "0.01"),
            *("--cases", case, "--no-torch-compile", flag, "--json", str(out)),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    (result,) = json.loads(out.read_text())["results"]
    return printed, result


def test_timed_bench_compares_symbolic_kernels(tmp_path, capsys):
    printed, result = _tiny_timed_bench(tmp_path, capsys, "layer_norm_f32_4096x4096", "--symbolic")
    assert "| case | static ms | -1 rows ms (symbolic kernels) | symbolic / static |" in printed
    assert result["cinn_py_symbolic_s"] > 0 and result["symbolic_kernels"] == 1


def test_fast_math_variant_is_checked_and_timed(tmp_path, capsys):
    """`--fast-math`: each case compiled with `fast_math=True` too, checked at the wider
    tolerance and timed next to the precise program (smoke: checked only)."""
    result = bench.smoke_case(bench.CASES["softmax_f16_4096x4096"], nvrtc=False, fast_math=True)
    assert result.ok and result.message.endswith("fast_math ok"), result.message
    printed, timed = _tiny_timed_bench(tmp_path, capsys, "softmax_f32_4096x4096", "--fast-math")
    assert "| case | precise ms | fast_math ms | fast / precise |" in printed
    assert timed["cinn_py_fast_math_s"] > 0


def test_a_wrong_cinn_py_output_fails_its_row(monkeypatch, capsys):
    def over_columns(
        case, target, fast_math=False
    ):  # softmax over the other axis: same shape, wrong values
        program = parse_program(case.program_text.replace("axis:-1", "axis:0"))
        return bench.cinn_py.compile(program, target=target)

    monkeypatch.setattr(bench, "compile_case", over_columns)
    case = bench.CASES["softmax_f32_4096x4096"]
    result = bench.smoke_case(case, nvrtc=False)
    assert not result.ok and "out of tolerance" in result.message
    code = bench.main(
        [
            *("--target", "cuda-emu", "--tiny", "--cases", case.name),
            *("--repeat", "3", "--budget", "0.01", "--no-torch-compile"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert "| softmax_f32_4x33 | 0.00106 | **FAILED**: wrong: max abs error" in captured.out
    assert "ERROR: softmax_f32_4x33: cinn_py: wrong" in captured.err


def test_device_runner_records_many_runs_into_one_graph():
    """`device_runner` (the bench's `device ms`, the tuner's samples) over the stand-in
    driver: one graph launch runs the program `runs` times; a program that cannot be
    recorded (cuda-emu) gives None."""
    from cinn_py.backends import stand_in_driver
    from kernels_tests.tool_modules import load_tool

    bench_host = load_tool("bench_host")
    with stand_in_driver.installed(stand_in_driver.StandInDriver()) as fake:
        runtime, scope = bench_host.build(2)
        runtime.scope = scope
        launch, runs = bench.device_runner(runtime, lambda: None)
        assert 1 <= runs <= bench.MAX_GRAPH_RUNS
        fake.calls.clear()
        before = fake.launch_count
        launch()
        assert fake.calls.count("cuGraphLaunch") == 1 and "cuLaunchKernel" not in fake.calls
        assert fake.launch_count - before == 2 * runs
    exe = bench.compile_case(bench.CASES["softmax_f32_4096x4096"].at((3, 7)), "cuda-emu")
    exe.run({"x": np.ones((3, 7), np.float32)})
    assert bench.device_runner(exe.runtime_program, lambda: None) is None


def test_the_device_table_sets_execute_against_the_graph():
    result = {
        "case": "softmax_f16_4096x4096",
        "bytes": 67_108_864,
        "cinn_py_s": 20e-6,
        "cinn_py_device_s": 16e-6,
        "cinn_py_graph_runs": 125,
        "copy_same_size_s": 19e-6,
        "copy_same_size_device_s": 17.6e-6,
    }
    text = bench.report([result], copy_bw=4.2e12, device="NVIDIA H200", versions={})
    header = (
        "| case | cinn_py ms (execute) | device ms (CUDA graph) | of copy | of same-size copy |"
    )
    assert header in text
    assert "| softmax_f16_4096x4096 | 0.02 | 0.016 (125 runs) | 99.9% | 110.0% | 1.25x |" in text
    # the main table: execute against the same-size copy's execute-style time
    assert "| 0.02 | 3355 | 79.9% | 95.0% |" in text
    failed = {**result, "cinn_py_device_error": "the program cannot be recorded"}
    del failed["cinn_py_device_s"]
    row = bench.device_row(failed, 4.2e12)
    assert "n/a (the program cannot be recorded)" in row
    no_copy = {k: v for k, v in result.items() if not k.startswith("copy_same_size")}
    assert "| 99.9% | n/a | 1.25x |" in bench.device_row(no_copy, 4.2e12)
    no_copy["copy_same_size_error"] = "RawKernel: no GPU"
    assert "| 79.9% | n/a (RawKernel: no GPU) |" in bench.row(no_copy, 4.2e12)


def test_the_same_size_copy_moves_the_case_bytes_on_the_host():
    """HostBackend's same-size copy: a time for the case's bytes (a copy of half of
    them), so that `of same-size copy` is measured on --tiny runs too."""
    figures = bench.HostBackend("cuda-emu").same_size_copy(4 * 33 * 4 * 2, 3, 0.01)
    assert set(figures) == {"copy_same_size_s"} and figures["copy_same_size_s"] > 0


def test_variant_ratios_come_from_device_times_where_both_have_one():
    result = {
        "case": "softmax_f16_4096x4096",
        "cinn_py_s": 21e-6,
        "cinn_py_fast_math_s": 19.3e-6,
        "cinn_py_symbolic_s": 22e-6,
    }
    assert bench.fast_math_row(result).endswith("| 0.92x |")  # execute times only
    result.update(cinn_py_device_s=16e-6, cinn_py_fast_math_device_s=16e-6)
    assert bench.fast_math_row(result).endswith("| 1.00x (device) |")
    assert "| 1.05x |" in bench.symbolic_row(result)  # no device time for the variant
    assert bench.ratio_cell({"cinn_py_s": 1.0}, "cinn_py_fast_math", empty="n/a") == "n/a"
