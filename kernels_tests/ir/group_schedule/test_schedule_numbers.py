"""Scheduled functions compute what the lowered ones compute: both run in the IR
interpreter (which checks every iter var against its range and every access against
its buffer, so a missing guard fails loudly), bit for bit equal, and equal to NumPy
within the dtype's tolerance. Outputs start as NaN / a sentinel, so an element the
schedule skips shows up too."""

from __future__ import annotations

import numpy as np
import pytest
from auto_schedule_funcs import (
    CASES,
    CUDA,
    EMU,
    TINY,
    Case,
    copy_2d,
    inputs_for,
    run_interpreted,
    scale,
)

from cinn_py.ir.group_schedule import auto_schedule
from cinn_py.pir.dtypes import bfloat16_to_float32, float32_to_bfloat16
from cinn_py.tolerances import compare


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_scheduled_equals_lowered_equals_numpy(case: Case):
    lowered = case.make()
    inputs = inputs_for(lowered, np.random.default_rng(0))
    want_ir = run_interpreted(lowered, inputs)
    got = run_interpreted(auto_schedule(lowered, case.target).func, inputs)
    as_values = {
        k: bfloat16_to_float32(v) if v.dtype == np.uint16 else v for k, v in inputs.items()
    }
    expected = case.numpy(as_values)
    for name, value in got.items():
        np.testing.assert_array_equal(value, want_ir[name])
        if value.dtype == np.uint16:
            result = compare(value, float32_to_bfloat16(expected[name]), "bfloat16")
        else:
            result = compare(value, np.asarray(expected[name], value.dtype))
        assert result.ok, f"{name}: {result}"


def test_the_cases_cover_grid_stride_and_guards():
    tiny = auto_schedule(scale(3001), TINY)
    assert tiny.launch is not None and tiny.launch.steps == 6
    assert "if (" in repr(tiny.func)
    emu = auto_schedule(copy_2d((16, 1000)), EMU)
    assert emu.launch is not None and emu.launch.steps == 2


def test_without_its_guard_the_schedule_would_run_out_of_range():
    lowered = scale(999)
    unguarded = auto_schedule(lowered, CUDA).trace.replay(lowered)
    with pytest.raises(IndexError, match=r"block var_1 binds i0_0 = 999, outside \[0, 999\)"):
        run_interpreted(unguarded, inputs_for(lowered, np.random.default_rng(0)))
