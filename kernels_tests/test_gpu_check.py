"""tools/gpu_check.sh, the one device call of a GPU session, checked without a GPU: its
steps fit the 8 minutes a call may take, the bench cases it names exist, and a run here
skips the GPU steps at once, runs the tiny programs on cuda-emu and writes summary.txt."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from cinn_py.backends import cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tools", "gpu_check.sh")
STEPS = ["setup", "device", "tiny", "tests", "bench", "e2e", "torch_compile", "tune", "ncu"]
GPU_STEPS = ["tests", "bench", "e2e", "torch_compile", "tune", "ncu"]

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("timeout") is None,
    reason="needs bash and coreutils' timeout",
)


def _text() -> str:
    with open(SCRIPT, encoding="utf-8") as f:
        return f.read()


def _setting(name: str) -> str:
    match = re.search(rf"^{name}=(\"[^\"]*\"|'[^']*'|\S+)", _text(), re.M)
    assert match, f"{name}= not found in tools/gpu_check.sh"
    return match.group(1).strip("\"'")


def _steps() -> list[tuple[str, int]]:
    match = re.search(r"^STEPS=\(([^)]*)\)", _text(), re.M)
    assert match, "STEPS=(...) not found in tools/gpu_check.sh"
    return [(name, int(seconds)) for name, seconds in re.findall(r"(\w+):(\d+)", match.group(1))]


def _bench_cases() -> set[str]:
    spec = importlib.util.spec_from_file_location(
        "cinn_py_tools_bench_gpu_check", os.path.join(ROOT, "tools", "bench.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return set(module.CASES)


def test_steps_fit_one_device_call():
    steps = _steps()
    assert [name for name, _ in steps] == STEPS
    assert all(seconds > 0 for _, seconds in steps)
    total, grace = int(_setting("TOTAL_LIMIT")), int(_setting("KILL_GRACE"))
    # Every step killed at its limit, then after its grace, still ends within the total,
    # and the total within 8 minutes.
    assert sum(seconds + grace for _, seconds in steps) <= total <= 8 * 60


def test_list_prints_the_steps():
    listed = subprocess.run(
        ["bash", SCRIPT, "--list"], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    assert re.findall(r"^(\w+)\s+(\d+) s$", listed, re.M) == [
        (name, str(seconds)) for name, seconds in _steps()
    ]


def test_named_cases_are_bench_cases():
    cases = _bench_cases()
    compiled = _setting("TORCH_COMPILE_CASES").split(",")
    profiled = _setting("NCU_CASES").split()
    assert len(compiled) == 3 and set(compiled) <= cases
    assert len(profiled) == 4 and set(profiled) <= cases
    for prefix in ("softmax_f16", "layer_norm_f32", "transpose_f16", "reduce_sum_all"):
        assert any(name.startswith(prefix) for name in profiled), prefix


def test_unknown_step_is_refused(tmp_path):
    run = subprocess.run(
        ["bash", SCRIPT, "no_such_step"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "OUT": str(tmp_path), "GPU_CHECK_NO_GPU": "1"},
    )
    assert run.returncode == 2 and "no step 'no_such_step'" in run.stderr


def test_run_without_gpu_skips_gpu_steps(tmp_path):
    out = tmp_path / "out"
    env = {
        **os.environ,
        "OUT": str(out),
        "PYTHON": sys.executable,
        "GPU_CHECK_NO_GPU": "1",  # also on a machine with a GPU: never the GPU steps here
        "CINN_PY_CACHE_DIR": str(cache.cache_dir()),
    }
    start = time.monotonic()
    run = subprocess.run(
        ["bash", SCRIPT], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT
    )
    took = time.monotonic() - start
    summary = (out / "summary.txt").read_text()
    assert run.returncode == 3, run.stdout + run.stderr  # 3: nothing failed, some skipped
    assert took < 60, summary
    rows = dict(re.findall(r"^(\w+)\s+(ok|SKIPPED|FAILED|TIMEOUT)\b", summary, re.M))
    assert rows == {
        **dict.fromkeys(["setup", "device", "tiny"], "ok"),
        **dict.fromkeys(GPU_STEPS, "SKIPPED"),
    }, summary
    assert "GPU: NONE (GPU_CHECK_NO_GPU=1)" in summary
    tiny = (out / "tiny.txt").read_text()
    assert "NO GPU" in tiny and "--target cuda-emu" in tiny
    assert tiny.count("(cuda-emu vs reference): ok") >= 2, tiny
    # The device tool brings back 8 files at most, no folders needed.
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= 8 and all(p.parent == out for p in files), files
