"""tools/bench_compile.py: `--quick` runs every kind of measurement (cold compiles in
fresh processes, the second process on a warm cache, grouping alone) and writes them
all; kernels that differ only in names count as one distinct kernel."""

from __future__ import annotations

import json
import os

from kernels_tests.tool_modules import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


bench_compile = load_tool("bench_compile")

KERNEL = """extern "C" __global__ void fn_group_{g}(const float* __restrict__ var_{a},
    float* __restrict__ var_{b}) {{
  const float var_{a}_local = var_{a}[threadIdx.x];
  var_{b}[threadIdx.x] = var_{a}_local * 2.0f;
}}
"""


def test_kernels_equal_but_for_names_are_one_distinct_kernel():
    first = KERNEL.format(g=3, a=12, b=40)
    renamed = KERNEL.format(g=19, a=7, b=113)
    swapped = KERNEL.format(g=3, a=40, b=12).replace("2.0f", "3.0f")
    assert bench_compile.normalise_kernel(first) == bench_compile.normalise_kernel(renamed)
    assert bench_compile.kernel_sources("// header\n" + first + renamed) == [first, renamed]
    assert bench_compile.distinct_kernels("// header\n" + first + renamed) == 1
    assert bench_compile.distinct_kernels(first + renamed + swapped) == 2


def test_quick_run_writes_every_figure(tmp_path, capsys):
    out = tmp_path / "compile.json"
    assert (
        bench_compile.main(
            ["--quick", "--targets", "cuda", "--grouping-layers", "2", "--json", str(out)]
        )
        == 0
    )
    record = json.loads(out.read_text())
    for key in ("date", "machine", "load_average_before", "load_average_after", "sizes"):
        assert key in record, key
    assert record["quick"] and record["layers"] == [1, 2] and record["targets"] == ["cuda"]
    rows = {(r["kind"], r["layers"], r["target"]): r for r in record["compile"]}
    assert list(rows) == [("llama", 1, "cuda"), ("llama", 2, "cuda")]
    for row in rows.values():
        assert "error" not in row, row
        assert list(row["stages_s"]) == list(bench_compile.STAGES)
        assert all(s >= 0 for s in row["stages_s"].values())
        assert row["total_s"] >= sum(row["stages_s"].values()) * 0.999
        assert row["stages_s"]["compile"] > 0 and row["cubin_bytes"] > 0
        assert 0 < row["distinct_kernels"] <= row["kernels"] < row["groups"]
        assert 0 < row["ops_compiled"] <= row["ops"]
    assert rows[("llama", 2, "cuda")]["ops"] > rows[("llama", 1, "cuda")]["ops"]
    (second,) = record["second_process"]
    assert second["layers"] == 2 and second["target"] == "cuda"
    assert 0 < second["load_and_compile_s"] < second["process_s"]
    assert [r["layers"] for r in record["grouping"]] == [2]
    (grouping,) = record["grouping"]
    assert grouping["grouping_s"] > 0 and grouping["groups"] > 0
    assert 0 < grouping["ops_after_passes"] < grouping["ops"]
    assert {"distinct_kernels_cuda", "second_process_cuda_s"} <= set(record["issue_targets"])
    table = capsys.readouterr().out
    assert "| llama | 2 | cuda |" in table and "Grouping alone" in table


def test_a_measurement_past_its_timeout_is_recorded_not_waited_for(tmp_path):
    runner = bench_compile.Runner(tmp_path, timeout=0.01, verbose=False)
    path = runner.program("llama", 1, bench_compile.QUICK_SIZES)
    spec = {"task": "grouping", "path": path, "repeat": 1}
    assert runner.run(spec, tmp_path) == {"error": "did not finish in 0.01 s"}
