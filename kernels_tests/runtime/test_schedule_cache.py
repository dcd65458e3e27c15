"""The schedule cache (`driver.schedule_cache`): a program with -1 dims schedules each
kernel once per bucket of shapes, and takes a kept schedule only where every decision
it was made by comes out the same (`ir.dim_guards`). The test suite runs with
`CINN_PY_VERIFY_SCHEDULE_CACHE=1`: every schedule taken from a cache here is also
checked against a fresh one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.driver import schedule_cache
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.driver.schedule_cache import GuardMissed, ScheduleCache, rename_schedule
from cinn_py.ir import dim_guards
from cinn_py.ir.dim_values import concrete, current
from cinn_py.ir.expr import Var
from cinn_py.ir.group_schedule import auto_schedule
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.visitor import canonical_key
from cinn_py.pir.parser import parse_program
from kernels_tests.runtime.test_kernel_sharing import layers

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

ROW_SUM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,4096],stop_gradient:[true]} : () -> tensor<-1x4096xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%2) = "pd_op.sum" (%0, %1) {dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<-1x4096xf32>, tensor<1xi64>) -> tensor<-1xf32>
}"""


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A private kernel cache, symbolic kernels, no compiled-program cache."""
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CINN_PY_CACHE", "0")
    monkeypatch.delenv("CINN_PY_SPECIALIZE", raising=False)


def _llama_feeds(batch: int, seq: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    meta = json.loads((FIXTURES / "models" / "llama_decoder" / "meta.json").read_text())
    return {
        name: rng.standard_normal([batch, seq, *info["spec_shape"][2:]]).astype(info["dtype"])
        for name, info in meta["inputs"].items()
    }


def test_a_new_shape_of_a_bucket_schedules_nothing(fresh):
    exe = cinn_py.compile(cinn_py.load(FIXTURES / "models" / "llama_decoder"), "cuda-emu")
    reference = cinn_py.compile(exe.program, "reference")
    rng = np.random.default_rng(3)
    stats = exe.compile_stats
    made = []
    # (2, 7), (8, 7), (3, 64): one bucket (sequences (1, 128]); (5, 511): the next
    for batch, seq in [(2, 7), (8, 7), (3, 64), (5, 511), (6, 1000)]:
        feeds = _llama_feeds(batch, seq, rng)
        got, want = exe.run(feeds), reference.run(feeds)
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=2e-5)
        made.append(stats.schedules_made)
    kernels = len(exe.runtime_program.distinct_kernels)
    assert made[0] >= kernels  # every kernel, and the variants tried
    assert made[1] == made[2] == made[0]  # the bucket's later shapes: nothing scheduled
    assert made[3] > made[2] and made[4] == made[3]  # a new bucket, then its second shape
    assert stats.schedules_reused >= 3 * kernels
    assert stats.compiles == 5 and stats.kernel_units_compiled == 2
    # and the second shape of each bucket took the kept translation unit as it was
    assert exe.runner.schedule_cache.stats.sources_reused == 3


def test_a_decision_that_changes_within_a_bucket_makes_a_schedule_of_its_own(fresh):
    """A row sum over [-1, 4096]: one row is scheduled apart from many (a decision on
    `S0 != 1`), so 1000 rows after 1 makes a schedule, and each later count takes the
    kept one its guards hold for."""
    exe = cinn_py.compile(parse_program(ROW_SUM), "cuda-emu")
    stats = exe.compile_stats
    seen = []
    for rows in [1, 1000, 2, 999, 3, 4]:
        x = np.random.default_rng(rows).standard_normal((rows, 4096)).astype(np.float32)
        (got,) = exe.run({"x": x}).values()
        np.testing.assert_allclose(got, x.sum(-1), rtol=1e-4, atol=1e-3)
        seen.append((stats.schedules_made, stats.schedules_reused))
    # 1 row: the sum and its aligned variant made; 1000: the sum again (its variant is
    # the same); then every count finds its schedule
    assert seen == [(2, 0), (3, 1), (3, 3), (3, 5), (3, 7), (3, 9)]


def _cache_get(cache: ScheduleCache, func, values, make, key=None):
    return cache.get("schedule", func, key, values, make, lambda r, old, new: r)


@pytest.fixture
def row_function():
    """A lowered function over [S0, 128] (softmax rows: `S0` is a kernel argument)."""
    text = ROW_SUM.replace("4096", "128")
    compiler = PIRCompiler(parse_program(text), "cuda-emu", feed_shapes={"x": (6, 128)})
    (kernel,) = compiler.stages(until="lowered").fused
    assert any(isinstance(a.value, Var) for a in kernel.lowered.args)
    return kernel.lowered


def test_a_kept_result_is_taken_exactly_where_its_guards_hold(row_function):
    rows = Var("S0", row_function.args[-1].value.dtype, 1)
    cache = ScheduleCache()
    made = []

    def make():
        count = concrete(rows)
        if dim_guards.active():  # not when verify makes it again
            made.append(count.value)
        return "few" if count <= 8 else "many"  # one check: S0 <= 8

    answers = [_cache_get(cache, row_function, {"S0": n}, make) for n in [3, 100, 8, 9, 1, 5000]]
    assert answers == ["few", "many", "few", "many", "few", "many"]
    assert made == [3, 100]  # one result for each side of the check
    assert (cache.stats.hits, cache.stats.misses) == (4, 2)


def test_verify_mode_catches_a_decision_taken_without_a_guard(row_function, monkeypatch):
    monkeypatch.setenv(schedule_cache.VERIFY_ENV, "1")
    cache = ScheduleCache()

    def make():  # reads the dims behind the guards' back
        return "few" if current()["S0"] <= 8 else "many"

    assert _cache_get(cache, row_function, {"S0": 3}, make) == "few"
    with pytest.raises(GuardMissed, match=r"made at \{'S0': 100\}: a decision was taken"):
        _cache_get(cache, row_function, {"S0": 100}, make)
    monkeypatch.setenv(schedule_cache.VERIFY_ENV, "0")
    assert _cache_get(cache, row_function, {"S0": 100}, make) == "few"  # what it guards


def test_the_cache_keeps_at_most_max_entries(row_function, monkeypatch):
    monkeypatch.setenv(schedule_cache.VERIFY_ENV, "0")  # the results differ on purpose
    cache = ScheduleCache(max_entries=2)
    for key in range(5):
        _cache_get(cache, row_function, {"S0": 4}, lambda key=key: key, key=key)
    assert cache.stats.misses == 5
    assert _cache_get(cache, row_function, {"S0": 4}, lambda: "again", key=4) == 4
    assert _cache_get(cache, row_function, {"S0": 4}, lambda: "again", key=0) == "again"


def test_a_kept_schedule_is_renamed_for_a_function_equal_up_to_names():
    kernels = PIRCompiler(layers(2), "cuda-emu").stages(until="lowered").fused
    (first, second), pattern = [k.lowered for k in kernels], kernels[0].group.reduce_pattern
    assert first.name != second.name and canonical_key(first) == canonical_key(second)
    target = TargetInfo.cuda()
    cache = ScheduleCache()

    def get(func):
        return cache.get(
            "schedule",
            func,
            None,
            {},
            lambda: auto_schedule(func, target, pattern),
            rename_schedule,
        )

    one, two = get(first), get(second)
    assert (cache.stats.hits, cache.stats.misses) == (1, 1)
    assert two.func.name == second.name
    assert [a.name for a in two.func.args] == [a.name for a in second.args]
    assert canonical_key(two.func) == canonical_key(one.func)
    assert canonical_key(two.func) == canonical_key(auto_schedule(second, target, pattern).func)


def test_specialized_compiles_take_no_kept_schedule(fresh, monkeypatch):
    monkeypatch.setenv("CINN_PY_SPECIALIZE", "1")
    exe = cinn_py.compile(parse_program(ROW_SUM), "cuda-emu")
    for rows in [3, 5]:
        exe.run({"x": np.ones((rows, 4096), np.float32)})
    assert (exe.compile_stats.schedules_made, exe.compile_stats.schedules_reused) == (0, 0)
