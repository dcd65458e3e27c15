"""The report on real kernels: NVRTC builds them for sm_90 (no GPU), cuobjdump reads
them back. Skipped, with the reason, where cuobjdump or nvdisasm is not installed (the
`test` extra installs both). Structural facts only, never timings."""

from __future__ import annotations

import json
import os

import pytest

from cinn_py import api
from cinn_py.cli import main
from cinn_py.perf import binaries, perf_report, report_text
from cinn_py.perf.report import COLUMNS
from kernels_tests.tool_modules import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOFTMAX = os.path.join(ROOT, "examples", "softmax.pir")

available, why = binaries.tools_available()
needs_tools = pytest.mark.skipif(not available, reason=why)


@pytest.fixture(scope="module")
def softmax_report():
    return perf_report(api.load(SOFTMAX), label="softmax")


@needs_tools
def test_softmax_is_one_kernel_without_spills(softmax_report):
    (kernel,) = softmax_report.kernels
    resources = kernel.resources
    assert kernel.name == "fn_group_0" and kernel.groups == ["group_0"]
    assert resources.spills == 0 and resources.stack == 0 and kernel.sass.local_bytes == 0
    assert 8 <= resources.registers <= 64
    assert softmax_report.arch == "sm_90" and softmax_report.nvrtc


@needs_tools
def test_softmax_moves_its_minimum_with_16_byte_accesses(softmax_report):
    (kernel,) = softmax_report.kernels
    assert softmax_report.minimum_bytes == 2 * 64 * 128 * 4  # x read, the result written
    assert softmax_report.kernel_bytes == softmax_report.minimum_bytes
    assert set(kernel.sass.loads) == {16} and set(kernel.sass.stores) == {16}
    assert kernel.requested_bytes == kernel.footprint_bytes  # each byte once
    assert kernel.sass.instructions > 0 and kernel.sass.loops == []


@needs_tools
def test_softmax_occupancy_and_estimate_are_consistent(softmax_report):
    (kernel,) = softmax_report.kernels
    threads = kernel.block[0] * kernel.block[1] * kernel.block[2]
    assert kernel.occupancy.blocks_per_sm * threads <= 2048
    assert kernel.waves == pytest.approx(kernel.grid[0] / (kernel.occupancy.blocks_per_sm * 132))
    assert 0 < kernel.estimate.copy_fraction <= 1
    assert kernel.estimate.limiter in ("memory", "issue", "occupancy", "waves")


@needs_tools
def test_the_table_has_one_row_per_kernel_and_a_summary(softmax_report):
    lines = report_text(softmax_report).splitlines()
    assert lines[0].split()[:2] == ["kernel", "grid"]
    assert lines[1].startswith("fn_group_0 ")
    assert lines[2].startswith("1 kernel(s); kernels move 0.06554 MB") and "(1.00x)" in lines[2]


@needs_tools
def test_cli_perf_prints_the_table_and_json(capsys):
    assert main(["perf", SOFTMAX]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("fn_group_0 ")
    assert main(["perf", SOFTMAX, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (kernel,) = data["kernels"]
    assert data["over_minimum"] == 1.0 and kernel["spill_stores"] == 0
    assert kernel["loads"] == {"16": 1} and kernel["stores"] == {"16": 1}


@needs_tools
def test_cli_perf_for_another_arch_models_that_archs_reference_gpu(capsys):
    """`--arch sm_89`: built for sm_89, scheduled and modelled on an L40S (142 SMs of
    1536 threads: 6 blocks of 256 an SM, where an H100 holds 8)."""
    assert main(["perf", SOFTMAX, "--arch", "sm_89", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["arch"] == "sm_89" and data["gpu"]["name"] == "L40S (sm_89, 142 SMs)"
    (kernel,) = data["kernels"]
    assert kernel["block"] == [32, 8, 1] and kernel["occupancy"]["blocks_per_sm"] == 6
    assert main(["perf", SOFTMAX, "--arch", "sm_80"]) == 0
    assert "model: A100 SXM4 (sm_80, 108 SMs), 1.8 TB/s, 1.41 GHz" in capsys.readouterr().out


@needs_tools
def test_perf_of_a_symbolic_kernel_reads_it_at_the_given_shape(capsys, tmp_path):
    """A -1 program's kernels take their dims as arguments: the report counts bytes and
    the grid at the feed shapes given (`--shape`)."""
    path = tmp_path / "softmax_rows.pir"
    path.write_text(
        "{\n"
        '    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),'
        "shape:[-1,1000],stop_gradient:[true]} : () -> tensor<-1x1000xf32>\n"
        '    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : '
        "(tensor<-1x1000xf32>) -> tensor<-1x1000xf32>\n"
        "}\n"
    )
    assert main(["perf", str(path), "--shape", "x=64x1000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (kernel,) = data["kernels"]
    assert kernel["grid"][0] == 64  # one block a row, the grid from S0 = 64
    assert data["over_minimum"] == 1.0  # 64 x 1000 floats in and out, counted at S0 = 64


def test_cli_perf_on_a_malformed_program_is_one_message(capsys, tmp_path):
    path = tmp_path / "bad.pir"
    path.write_text('{\n    (%0) = "pd_op.data" () {name:"x"} : () -> tensor<2xq9>\n}\n')
    code = main(["perf", str(path)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith(f"cinn-py: error: {path}:2:")
    assert "Traceback" not in captured.err


def test_cli_perf_without_cuobjdump_is_one_line(capsys, monkeypatch):
    def no_files(package):
        raise binaries.importlib.metadata.PackageNotFoundError(package)

    monkeypatch.delenv("CINN_PY_CUOBJDUMP", raising=False)
    monkeypatch.setattr(binaries.importlib.metadata, "files", no_files)
    monkeypatch.setenv("PATH", "")
    binaries.find_tool.cache_clear()
    try:
        code = main(["perf", SOFTMAX])
    finally:
        binaries.find_tool.cache_clear()
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith("cinn-py: error: the static performance report (cinn-py perf) needs ")
    assert "pip install nvidia-cuda-" in err


@needs_tools
def test_perf_report_tool_prints_a_row_per_kernel_of_a_case(capsys):
    tool = load_tool("perf_report")
    assert tool.main(["--cases", "transpose_f32"]) == 0
    out = capsys.readouterr().out
    header, rule, row = out.strip().splitlines()[-3:]
    assert header == "| " + " | ".join(("case", "x min", *COLUMNS)) + " |"
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:3] == ["transpose_f32_8192x8192", "1.00", "fn_group_0"]
    assert cells[COLUMNS.index("spills") + 2] == "0"


@needs_tools
def test_perf_report_tool_reports_the_symbolic_programs_of_a_case(capsys):
    tool = load_tool("perf_report")
    assert tool.main(["--cases", "transpose_f32", "--symbolic"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| transp")]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    assert [c[0] for c in cells] == [
        "transpose_f32_8192x8192",
        "transpose_f32_8192x8192 -1 rows",
        "transpose_f32_8192x8192 all -1",
    ]
    grid = COLUMNS.index("grid x block") + 2
    assert cells[0][grid] == "65536 x 8x32"  # 16-byte vectors: 8 threads a tile row
    assert cells[2][grid] == "256x256 x 32x8"  # tiled over both dims as arguments: scalars
    assert all(c[1] == "1.00" for c in cells)  # the minimum bytes, static or not


ROW_SUM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[256,4096],stop_gradient:[true]} : () -> tensor<256x4096xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<256x4096xf32>, tensor<1xi64>) -> tensor<256xf32>
}"""  # noqa: E501


@needs_tools
def test_a_row_sum_is_stored_by_one_thread_a_row(tmp_path):
    """The row's total leaves the block reduce in every thread; thread 0 of the row
    alone stores it (`1x4B@x0`), so the kernel requests each byte once."""
    path = tmp_path / "row_sum.pir"
    path.write_text(ROW_SUM)
    report = perf_report(api.load(path), label="row_sum")
    (kernel,) = report.kernels
    assert kernel.block[0] >= 32 and kernel.grid[0] == 256
    assert set(kernel.sass.loads) == {16}
    assert kernel.sass.stores == {} and kernel.sass.lane_stores == {("x", 4): 1}
    loads = kernel.sass.load_bytes * kernel.threads
    assert kernel.requested_bytes == loads + 256 * 4
    assert kernel.requested_bytes == kernel.footprint_bytes
    row = report_text(report).splitlines()[1].split()
    assert "1x4B@x0" in row and row[row.index("1x4B@x0") + 2] == "1.00"
