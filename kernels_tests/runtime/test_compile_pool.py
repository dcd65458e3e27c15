"""Parallel compiles (issue 17): a program of more than `UNIT_SIZE` distinct kernels is
split into units compiled side by side in a pool of min(cores, units) threads; results
and errors do not depend on which job finished first, and each unit is its own cache
entry."""

from __future__ import annotations

import threading
import time

import pytest

import cinn_py
from cinn_py.backends import cache, codegen_cuda, stand_in_driver
from cinn_py.driver import compile_pool
from cinn_py.driver.compile_pool import PoolRun, run_jobs
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import CompileError
from cinn_py.runtime.module_set import ModuleSet
from kernels_tests.runtime.test_kernel_sharing import check_against_reference, layers
from kernels_tests.runtime.test_packed_launch import bench_host

WIDTHS = [32, 40, 48, 56, 64, 72]
"""Five layers whose softmaxes differ in width: five distinct kernels."""


@pytest.fixture
def small_units(monkeypatch):
    monkeypatch.setattr(compile_pool, "UNIT_SIZE", 2)
    monkeypatch.setattr(compile_pool, "cores", lambda: 2)


def test_results_come_back_in_job_order_on_min_cores_jobs_threads(monkeypatch):
    monkeypatch.setattr(compile_pool, "cores", lambda: 4)
    names: set[str] = set()

    def job(seconds: float) -> float:
        names.add(threading.current_thread().name)
        time.sleep(seconds)
        return seconds

    assert run_jobs(job, [0.05, 0.01, 0.03]) == [0.05, 0.01, 0.03]
    assert compile_pool.runs[-1] == PoolRun(3, 3)
    assert all(n.startswith("cinn-compile") for n in names)
    assert run_jobs(job, [0.0] * 9) == [0.0] * 9
    assert compile_pool.runs[-1] == PoolRun(9, 4)
    names.clear()
    assert run_jobs(job, [0.0]) == [0.0]  # one job runs inline
    assert compile_pool.runs[-1] == PoolRun(1, 1) and names == {threading.current_thread().name}


def test_the_first_failing_job_in_order_raises(monkeypatch):
    monkeypatch.setattr(compile_pool, "cores", lambda: 3)

    def job(index: int) -> int:
        time.sleep(0.05 if index == 1 else 0.0)  # job 2 fails first
        if index:
            raise CompileError(f"job {index}")
        return index

    with pytest.raises(CompileError, match="^job 1$"):
        run_jobs(job, [0, 1, 2])


def test_many_distinct_kernels_compile_as_units_in_the_pool(small_units, private_cache):
    program = layers(5, WIDTHS)
    before = cache.stats.snapshot()
    exe = cinn_py.compile(program, target="cuda-emu")
    assert compile_pool.runs[-1] == PoolRun(3, 2)  # 5 kernels, 2 a unit: 3 units
    assert (cache.stats.snapshot() - before).misses == 3
    assert cache.info()["kinds"]["cuda-emu"]["entries"] == 3
    module = exe.kernels[0].module
    assert isinstance(module, ModuleSet) and len(module.modules) == 3
    assert all(k.module is module for k in exe.kernels)
    assert exe.cuda_source.count("__global__") == 5  # the program's source stays whole
    check_against_reference(program, exe)


def test_units_are_the_same_whatever_the_cores_or_the_finishing_order(monkeypatch):
    monkeypatch.setattr(compile_pool, "UNIT_SIZE", 2)
    program = layers(5, WIDTHS)
    sources = []
    for cores in (1, 2, 8):
        monkeypatch.setattr(compile_pool, "cores", lambda cores=cores: cores)
        source = PIRCompiler(program, "cuda-emu").stages().source
        sources.append((source.source, [u.source for u in source.units]))
    assert sources[0] == sources[1] == sources[2]
    whole, units = sources[0]
    assert [u.count("__global__") for u in units] == [2, 2, 1]
    for unit in units:  # each self-contained: the runtime header in every one
        assert "CINN_PY_RUNTIME_H" in unit


def test_an_error_in_one_unit_names_its_group(small_units, monkeypatch, private_cache):
    render = codegen_cuda._render_kernel

    def broken(func, name, reserved, prove_in_place=True, fast_math=False):
        text, info, used = render(func, name, reserved, prove_in_place, fast_math)
        if name == "fn_group_5":
            text = text[: text.rindex("}")] + "  oops;\n}"
        return text, info, used

    monkeypatch.setattr(codegen_cuda, "_render_kernel", broken)
    with pytest.raises(CompileError, match=r"^group_5 \(pd_op.max, .*\): g\+\+ rejected"):
        cinn_py.compile(layers(5, WIDTHS), target="cuda-emu")
    assert compile_pool.runs[-1] == PoolRun(5, 2)  # each distinct group alone, in the pool


def test_cuda_units_load_as_one_module_and_capture_one_graph(small_units, private_cache):
    """On cuda (NVRTC, against the stand-in driver): the units' CUBINs are three modules
    in one context, seen as one, so the run is still one CUDA graph."""
    sizes = {f"fn_group_{i}": (8, 8) for i in range(1, 8)}  # each kernel: in, out
    with stand_in_driver.installed(stand_in_driver.StandInDriver(param_sizes=sizes)) as fake:
        runtime, scope = bench_host.build(7)  # relu, exp, tanh, sigmoid, abs, relu, exp
        assert compile_pool.runs[-1] == PoolRun(3, 2)
        assert runtime.distinct_kernels == [f"fn_group_{i}" for i in range(1, 6)]
        module = runtime.kernels[0].module
        assert isinstance(module, ModuleSet) and len(module.modules) == 3
        runtime.cuda_graph = True
        runtime.execute(scope)
        assert runtime.graph_count == 1
        fake.launches.clear()
        for step in runtime.instructions:
            step.run(scope)
        launched = [launch["kernel"] for launch in fake.launches]
        assert len(launched) == 7 and len(set(launched)) == 5
