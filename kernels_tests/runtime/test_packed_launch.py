"""Packed launches: `RuntimeProgram` checks and packs each kernel's launch once per
binding of a scope, and `execute()` only launches.

On `cuda` against the stand-in driver (`backends.stand_in_driver`, no GPU): the packed
launches are byte for byte the ones an unpacked launch makes, no checking function runs
per launch, and a run makes one driver call per kernel plus a constant. On cuda-emu the
packed program computes what NumPy does, run after run with new feeds. tools/bench_host.py
runs (tiny) here too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from cinn_py.backends import cuda_emu, cuda_module, kernel_args, stand_in_driver
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.hlir.grouping import make_group
from cinn_py.pir.parser import parse_program
from cinn_py.runtime.scope import Scope

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "tools", "bench_host.py")


def _load_bench():
    spec = importlib.util.spec_from_file_location("cinn_py_tools_bench_host", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench_host = _load_bench()
KERNELS = 6
NUMPY = {
    "relu": lambda x: np.maximum(x, 0),
    "exp": np.exp,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "abs": np.abs,
}


@pytest.fixture(autouse=True)
def hermetic_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def fake():
    sizes = {f"fn_group_{i}": (8, 8) for i in range(1, 21)}  # each kernel: in, out
    with stand_in_driver.installed(stand_in_driver.StandInDriver(param_sizes=sizes)) as fake:
        yield fake


def _counting(monkeypatch, module, names):
    counts = dict.fromkeys(names, 0)
    for name in names:
        original = getattr(module, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            counts[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    return counts


def _cuda_launches(fake, runtime, scope, packed: bool) -> list[dict]:
    fake.launches.clear()
    if packed:
        runtime.execute(scope)
    else:
        for step in runtime.instructions:
            step.run(scope)  # checked and packed for this one launch
    return [dict(launch) for launch in fake.launches]


def test_packed_launches_are_the_unpacked_ones(fake):
    runtime, scope = bench_host.build(KERNELS)
    assert len(runtime.kernels) == KERNELS
    unpacked = _cuda_launches(fake, runtime, scope, packed=False)
    for _ in range(3):
        assert _cuda_launches(fake, runtime, scope, packed=True) == unpacked
    assert [launch["kernel"] for launch in unpacked] == [k.name for k in runtime.kernels]


def test_execute_makes_no_per_launch_checks(fake, monkeypatch):
    runtime, scope = bench_host.build(KERNELS)
    runtime.execute(scope)  # binds: every check runs here, once per kernel
    counts = _counting(
        monkeypatch, cuda_module, ["check_launch", "_check_args", "pack_args", "launch_dims"]
    )
    packs = _counting(monkeypatch, kernel_args, ["pack_args", "data_pointer"])
    launched = fake.launch_count
    for _ in range(5):
        runtime.execute(scope)
    assert fake.launch_count - launched == 5 * KERNELS
    assert counts == dict.fromkeys(counts, 0)
    assert packs == dict.fromkeys(packs, 0)


def test_a_run_is_one_driver_call_per_kernel_plus_a_constant(fake):
    runtime, scope = bench_host.build(KERNELS)
    runtime.execute(scope)
    before = len(fake.calls)
    runs = 10
    for _ in range(runs):
        runtime.execute(scope)
    per_run = (len(fake.calls) - before) / runs
    assert fake.calls.count("cuLaunchKernel") >= runs * KERNELS
    assert per_run <= KERNELS + 4  # the launches and the context check, nothing per kernel


def test_feeds_copied_in_keep_the_packing_and_a_new_array_repacks(fake, monkeypatch):
    runtime, scope = bench_host.build(KERNELS)
    runtime.execute(scope)
    counts = _counting(monkeypatch, cuda_module, ["pack_args"])
    feed = scope["var_0"]
    feed.set(np.ones(feed.shape, np.float32))  # copied into its own buffer: same pointer
    runtime.execute(scope)
    assert counts["pack_args"] == 0
    first = {int.from_bytes(p, "little") for p in fake.launches[-KERNELS]["params"]}
    new = stand_in_driver.HostDeviceArray(np.zeros(feed.shape, np.float32))
    feed.bind(new)  # a different array: the next run packs again, with its pointer
    runtime.execute(scope)
    assert counts["pack_args"] == KERNELS
    launched = {int.from_bytes(p, "little") for p in fake.launches[-KERNELS]["params"]}
    assert new.host.ctypes.data in launched and new.host.ctypes.data not in first
    runtime.execute(scope)
    assert counts["pack_args"] == KERNELS


def test_a_checking_error_comes_at_bind_not_per_run(fake):
    runtime, scope = bench_host.build(2)
    fake.device_attributes["MAX_BLOCK_DIM_X"] = 1  # a device smaller than the schedule
    cuda_module._state.limits.clear()
    with pytest.raises(ValueError, match="above the device's limit 1"):
        runtime.bind(scope)


def _emu_program(kernels: int):
    program = parse_program(bench_host.program_text(kernels))
    groups = [
        make_group(f"group_{i}", [op], program)
        for i, op in enumerate(program.block)
        if op.name != "pd_op.data"
    ]
    scope = Scope("cuda-emu")
    return PIRCompiler(program, "cuda-emu", scope).build(groups), scope


def test_packed_launches_compute_the_same_on_cuda_emu(monkeypatch):
    runtime, scope = _emu_program(KERNELS)
    counts = None
    rng = np.random.default_rng(0)
    for run in range(3):
        x = rng.standard_normal((4, 64)).astype(np.float32)
        scope["var_0"].set(x)
        runtime.execute(scope)
        if counts is None:
            counts = _counting(monkeypatch, cuda_emu, ["_check_limits", "pack_args"])
        expected = x
        for i in range(KERNELS):
            expected = NUMPY[bench_host.OPS[i % len(bench_host.OPS)]](expected)
        np.testing.assert_allclose(
            scope[f"var_{KERNELS}"].to_numpy(), expected, rtol=1e-5, atol=1e-6, err_msg=str(run)
        )
    assert counts == {"_check_limits": 0, "pack_args": 0}


def test_bench_host_writes_its_json(tmp_path):
    out = tmp_path / "host.json"
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run(
        [sys.executable, BENCH, "--json", str(out), "--runs", "3", "--repeat", "1"],
        check=True,
        env=env,
        capture_output=True,
    )
    figures = json.loads(out.read_text())
    assert figures["us_per_launch"] > 0
    assert figures["us_per_graph_replay"] > 0
    assert figures["kernels"] == 20
