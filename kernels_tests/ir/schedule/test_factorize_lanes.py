"""factorize_reduction with vector lanes: each thread folds runs of V consecutive
elements, `(r_o * T + r_t) * V + r_v`; golden IR, values kept (interpreter), the trace,
and the refusal of a bad `lanes`. V = 1 is the plain strided walk (its goldens live in
test_reduction_primitives.py)."""

from __future__ import annotations

import numpy as np
import pytest
from test_reduction_primitives import lowered

from cinn_py.errors import ScheduleError
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.visitor import structural_equal

# 70 cols, 32 threads x 2 lanes: 2 steps (128 positions), the last one guarded
FACTORIZED_V2 = "Reduce(sum across threadIdx.x, Reduce(sum, select((((((r_0_o * 32) + r_0_t) * 2) + r_0_v) < 70), var_0[i0_0, (((r_0_o * 64) + (r_0_t * 2)) + r_0_v)], 0.00000000f),0.00000000f),0.00000000f)"  # noqa: E501
# 32 threads x 4 lanes >= 70: one step, no step loop, the lanes alone
FACTORIZED_ONE_STEP = "Reduce(sum across threadIdx.x, Reduce(sum, select((((r_0_t * 4) + r_0_v) < 70), var_0[i0_0, ((r_0_t * 4) + r_0_v)], 0.00000000f),0.00000000f),0.00000000f)"  # noqa: E501


@pytest.mark.parametrize(
    ("threads", "lanes", "golden"), [(32, 2, FACTORIZED_V2), (32, 4, FACTORIZED_ONE_STEP)]
)
def test_factorize_with_lanes_golden_and_same_values(threads, lanes, golden):
    func = lowered()
    sch = IRSchedule(func)
    sch.factorize_reduction("var_2_tmp", threads, lanes=lanes)
    assert f"var_2_tmp[i0_0, i1_0] = {golden}" in print_ir(sch.func)
    assert str(sch.trace) == (
        f"factorize_reduction(block=var_2_tmp, threads={threads}, thread_axis=threadIdx.x, "
        f"lanes={lanes})"
    )
    assert structural_equal(sch.trace.replay(func), sch.func)
    x = np.random.default_rng(1).uniform(0.5, 1.5, (3, 70)).astype(np.float32)
    before, after = np.zeros((3, 70), np.float32), np.zeros((3, 70), np.float32)
    run_function(func, {"var_0": x, "var_3": before})
    run_function(sch.func, {"var_0": x, "var_3": after})
    np.testing.assert_allclose(after, x / x.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(after, before, rtol=1e-6)  # another summation order only


def test_one_lane_is_the_strided_walk_node_for_node():
    """lanes=1 builds the very IR (and trace) of a call without it."""
    plain, lanes_1 = IRSchedule(lowered()), IRSchedule(lowered())
    plain.factorize_reduction("var_2_tmp", 32)
    lanes_1.factorize_reduction("var_2_tmp", 32, lanes=1)
    assert structural_equal(plain.func, lanes_1.func)
    assert str(lanes_1.trace) == (
        "factorize_reduction(block=var_2_tmp, threads=32, thread_axis=threadIdx.x)"
    )


@pytest.mark.parametrize("lanes", [0, -4, 2.0, True])
def test_factorize_refuses_bad_lanes(lanes):
    sch = IRSchedule(lowered())
    with pytest.raises(ScheduleError, match=f"lanes must be a positive int, got {lanes!r}"):
        sch.factorize_reduction("var_2_tmp", 32, lanes=lanes)
