"""The text `cinn-py` prints (`cinn_py/cli_report.py`): output summaries that count NaN
and inf, the places an output lives, run's status line, sizes and durations."""

from __future__ import annotations

import numpy as np

from cinn_py.cli_report import (
    RunSummary,
    cache_info_text,
    check_line,
    describe,
    duration,
    size,
    status_line,
    where_line,
)
from cinn_py.hlir.group import Group, GroupKind
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.tolerances import compare


def test_describe_counts_nan_and_inf_and_keeps_them_out_of_the_statistics():
    values = np.array([1.0, np.nan, 3.0, np.inf, -np.inf, np.nan], np.float32)
    assert describe(values) == (
        "float32[6] min=1 max=3 mean=2 over 2 finite values, NaN=2, +inf=1, -inf=1"
    )
    assert describe(np.array([0.5, 1.5])) == "float64[2] min=0.5 max=1.5 mean=1, no NaN or inf"
    assert describe(np.full(3, np.nan, np.float16)) == "float16[3] no finite values, NaN=3"
    assert describe(np.array([1 + 1j, complex(np.nan, 0)], np.complex64)) == (
        "complex64[2] mean=1+1j over 1 finite values, NaN=1"
    )


def test_describe_ints_bools_empty_and_bfloat16():
    assert describe(np.array([1, 2, 6], np.int32)) == "int32[3] min=1 max=6 mean=3"
    assert describe(np.array([True, False, True])) == "bool[3] true=2 false=1"
    assert describe(np.zeros((0, 3), np.float32)) == "float32[0, 3] (empty)"
    bits = float32_to_bfloat16(np.array([1.0, -2.0], np.float32))
    assert describe(bits, DataType.BFLOAT16) == (
        "bfloat16[2] min=-2 max=1 mean=-0.5, no NaN or inf"
    )
    assert describe(bits) == "uint16[2] min=16256 max=49152 mean=32704"  # no dtype: bits


def test_where_line_names_the_buffer_and_a_new_number():
    assert where_line("%5", "var_5") == " [var_5]"
    assert where_line("%1", "var_7") == " [var_7: %1 is %7 after the passes]"
    assert where_line("out0", "var_12", 12) == " [var_12: out0 is %12]"
    assert where_line("out0", "var_12", 3) == " [var_12: out0 is %3, %12 after the passes]"
    assert where_line("%1", None) == ""


def test_check_line_says_ok_or_mismatch_with_the_rule():
    want = np.array([1.0, 2.0], np.float32)
    assert check_line("%1", "cuda-emu", compare(want, want)) == (
        "check %1 (cuda-emu vs reference): ok, max abs error 0, max rel error 0; "
        "within float32 tolerance rtol 1e-04, atol 1e-05"
    )
    assert check_line("%2", "cuda", compare(np.array([1, 2]), np.array([1, 3]))).startswith(
        "check %2 (cuda vs reference): MISMATCH, 1 of 2 element(s) differ (int64 compares exactly)"
    )


class Counts:
    def __init__(self, hits, misses, rejected=0):
        self.hits, self.misses, self.rejected = hits, misses, rejected


def test_status_line():
    groups = [Group("group_0", GroupKind.LIBRARY, []), Group("group_1", GroupKind.FUSED, [])]
    summary = RunSummary("cuda-emu", "no GPU: CuPy is not installed", groups, 1, 0.4213, 0.0031)
    summary.cache = Counts(0, 1)
    assert status_line(summary) == (
        "cinn-py: ran on cuda-emu (no GPU: CuPy is not installed): 2 groups (1 fused, "
        "1 library), 1 kernel; compile 421.30 ms, run 3.10 ms; kernel cache: 0 hits, 1 miss"
    )
    summary = RunSummary("cuda", "--target", groups[1:], 3, 1.5, 2e-5, Counts(3, 0, 2))
    assert status_line(summary) == (
        "cinn-py: ran on cuda (--target): 1 group (1 fused), 3 kernels; compile 1.500 s, "
        "run 20 us; kernel cache: 3 hits, 0 misses, 2 damaged entries rebuilt"
    )
    assert status_line(RunSummary("reference", "--target", run_s=0.5)) == (
        "cinn-py: ran on reference (--target): NumPy, op by op: no groups, no kernels; "
        "compile 0 us, run 500.00 ms"
    )


def test_durations_and_sizes():
    assert [duration(s) for s in (4e-7, 0.0123, 12.3456)] == ["0 us", "12.30 ms", "12.346 s"]
    assert [size(n) for n in (0, 1023, 1536, 3 * 2**20, 5 * 2**30)] == [
        "0 B",
        "1023 B",
        "1.5 KiB",
        "3.0 MiB",
        "5.0 GiB",
    ]


def test_cache_info_text():
    info = {
        "folder": "/c",
        "kinds": {"cubin": {"entries": 2, "bytes": 3072}, "emu": {"entries": 1, "bytes": 10}},
        "entries": 3,
        "bytes": 3082,
    }
    assert cache_info_text(info) == (
        "cache folder: /c\n"
        "  cubin     2 entries     3.0 KiB\n"
        "  emu         1 entry        10 B\n"
        "total: 3 entries, 3.0 KiB\n"
    )
