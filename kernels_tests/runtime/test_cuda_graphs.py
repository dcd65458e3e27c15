"""CUDA graphs: `RuntimeProgram` with `cuda_graph` records runs of capturable steps into
graphs once per binding and replays them.

On `cuda` against the stand-in driver (`backends.stand_in_driver`, no GPU): the first
run captures (on a private stream, nothing launched), every later run is one
`cuGraphLaunch` per graph on the caller's stream, replaying byte for byte the launches
an unpacked run makes; a library call that may not be captured splits the graph and
runs between the pieces; a new feed array captures again; a failed capture leaves no
graph behind. On cuda-emu the same API runs the steps in order.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

from cinn_py import api
from cinn_py.backends import cuda_module, stand_in_driver
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import CinnError
from cinn_py.hlir.group import GroupKind
from cinn_py.hlir.grouping import make_group
from cinn_py.pir.parser import parse_program
from cinn_py.runtime.scope import Scope
from kernels_tests.runtime.test_packed_launch import KERNELS, NUMPY, bench_host

OK = stand_in_driver.OK


@pytest.fixture(autouse=True, scope="module")
def hermetic_cache(tmp_path_factory):
    """One kernel cache for the module: its programs compile once, not once a test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CINN_PY_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture
def fake():
    sizes = {f"fn_group_{i}": (8, 8) for i in range(1, 21)}  # each kernel: in, out
    with stand_in_driver.installed(stand_in_driver.StandInDriver(param_sizes=sizes)) as fake:
        yield fake


def _graphed(kernels: int = KERNELS):
    runtime, scope = bench_host.build(kernels)
    runtime.cuda_graph = True
    return runtime, scope


def _unpacked(fake, runtime, scope) -> list[dict]:
    fake.launches.clear()
    for step in runtime.instructions:
        step.run(scope)
    return [_launch(launch) for launch in fake.launches]


def _launch(launch: dict) -> dict:
    """A launch without where it ran from (stream, graph, context)."""
    return {k: v for k, v in launch.items() if k not in ("stream", "graph", "context")}


def test_first_run_captures_and_later_runs_replay_one_graph(fake):
    runtime, scope = _graphed()
    unpacked = _unpacked(fake, runtime, scope)
    fake.launches.clear()
    fake.calls.clear()
    runtime.execute(scope)
    assert runtime.graph_count == 1
    assert fake.calls.count("cuStreamBeginCapture") == 1
    assert fake.calls.count("cuGraphInstantiate") == 1
    assert fake.graph_launches == 1
    assert [_launch(launch) for launch in fake.launches] == unpacked
    capture_stream = int(cuda_module._state.capture_streams[0x1000])
    assert all(launch["stream"] != capture_stream for launch in fake.launches)
    for run in range(3):
        fake.calls.clear()
        fake.launches.clear()
        runtime.execute(scope)
        assert fake.calls.count("cuLaunchKernel") == 0, run
        assert fake.calls.count("cuGraphLaunch") == 1, run
        assert "cuStreamBeginCapture" not in fake.calls, run
        assert [_launch(launch) for launch in fake.launches] == unpacked
    assert fake.graph_launches == 4


def test_replay_goes_on_the_callers_stream(fake):
    runtime, scope = _graphed()
    runtime.execute(scope, stream=0x4242)
    assert {launch["stream"] for launch in fake.launches} == {0x4242}

    class TorchLikeStream:
        cuda_stream = 0x4343

    fake.launches.clear()
    runtime.execute(scope, stream=TorchLikeStream())
    assert {launch["stream"] for launch in fake.launches} == {0x4343}


def test_without_graphs_each_step_launches(fake):
    runtime, scope = bench_host.build(KERNELS)
    assert runtime.cuda_graph is False
    runtime.execute(scope)
    runtime.execute(scope)
    assert runtime.graph_count == 0
    assert fake.graph_launches == 0
    assert fake.calls.count("cuLaunchKernel") == 2 * KERNELS


def test_a_new_feed_array_captures_again_and_the_same_one_does_not(fake):
    runtime, scope = _graphed()
    runtime.execute(scope)
    feed = scope["var_0"]
    feed.set(np.ones(feed.shape, np.float32))  # copied into its buffer: same pointers
    runtime.execute(scope)
    assert fake.calls.count("cuStreamBeginCapture") == 1
    new = stand_in_driver.HostDeviceArray(np.zeros(feed.shape, np.float32))
    feed.adopt(new)
    fake.launches.clear()
    runtime.execute(scope)
    assert fake.calls.count("cuStreamBeginCapture") == 2
    first = {int.from_bytes(p, "little") for p in fake.launches[0]["params"]}
    assert new.host.ctypes.data in first
    feed.adopt(stand_in_driver.HostDeviceArray(new.host))  # the same bytes, another object
    runtime.execute(scope)
    assert fake.calls.count("cuStreamBeginCapture") == 2


def test_a_failed_capture_ends_it_and_raises(fake):
    runtime, scope = _graphed()
    fake.fail["cuGraphInstantiate"] = stand_in_driver.INVALID_VALUE
    with pytest.raises(CinnError, match="cuGraphInstantiate failed"):
        runtime.execute(scope)
    assert fake.capturing == {}  # the capture was ended
    assert fake.graphs == {}  # and its graph freed
    del fake.fail["cuGraphInstantiate"]
    runtime.execute(scope)
    assert runtime.graph_count == 1


def test_a_failing_step_during_capture_ends_the_capture(fake, monkeypatch):
    runtime, scope = _graphed()
    runtime.bind(scope)
    runtime._binding = None
    fake.fail["cuLaunchKernel"] = stand_in_driver.INVALID_VALUE
    with pytest.raises(CinnError, match="cuLaunchKernel"):
        runtime.execute(scope)
    assert fake.capturing == {} and fake.graphs == {}


def test_graphs_are_freed_with_their_binding(fake):
    runtime, scope = _graphed()
    runtime.execute(scope)
    assert len(fake.executables) == 1
    runtime._binding = None
    gc.collect()
    assert fake.executables == {}
    assert "cuGraphExecDestroy" in fake.calls


LIBRARY_PROGRAM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,8]} : () -> tensor<4x8xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    (%2) = "pd_op.exp" (%1) {} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    (%3) = "pd_op.cumsum" (%2, <<NULL VALUE>>) {axis:1,exclusive:false,flatten:false,reverse:false} : (tensor<4x8xf32>, <<NULL TYPE>>) -> tensor<4x8xf32>
    (%4) = "pd_op.tanh" (%3) {} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    (%5) = "pd_op.abs" (%4) {} : (tensor<4x8xf32>) -> tensor<4x8xf32>
}
"""


def _library_program(target):
    program = parse_program(LIBRARY_PROGRAM)
    groups = [
        make_group(
            f"group_{i}",
            [op],
            program,
            GroupKind.LIBRARY if op.name == "pd_op.cumsum" else GroupKind.FUSED,
        )
        for i, op in enumerate(program.block)
        if op.name != "pd_op.data"
    ]
    scope = Scope(target)
    runtime = PIRCompiler(program, target, scope).build(groups)
    runtime.cuda_graph = True
    return runtime, scope


def test_a_library_call_that_cannot_be_captured_runs_between_two_graphs(fake):
    runtime, scope = _library_program(stand_in_driver.StandInCudaTarget())
    x = np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8)
    scope["var_0"].set(x)
    library = [s for s in runtime.instructions if not hasattr(s, "module")]
    assert [s.op.name for s in library] == ["pd_op.cumsum"] and not library[0].capturable
    runtime.execute(scope)
    assert runtime.graph_count == 2
    fake.calls.clear()
    runtime.execute(scope)
    assert fake.calls.count("cuGraphLaunch") == 2 and "cuLaunchKernel" not in fake.calls
    # The library call ran on the host arrays between the graphs (the stand-in runs no
    # kernels, so its operand is whatever the arena held; its result must be the cumsum
    # of that).
    operand = scope[library[0].reads()[0]].to_numpy()
    np.testing.assert_allclose(
        scope[library[0].writes()[0]].to_numpy(), np.cumsum(operand, axis=1), rtol=1e-6
    )


def test_cuda_emu_runs_the_steps_in_order_with_graphs_asked_for():
    runtime, scope = _library_program("cuda-emu")
    x = np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8)
    scope["var_0"].set(x)
    runtime.execute(scope)
    assert runtime.graph_count == 0
    expected = np.abs(np.tanh(np.cumsum(np.exp(np.maximum(x, 0)), axis=1)))
    np.testing.assert_allclose(scope["var_5"].to_numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cuda_graph", [None, True, False])
def test_compile_option_on_cuda_emu(cuda_graph):
    program = parse_program(LIBRARY_PROGRAM)
    exe = api.compile(program, "cuda-emu", cuda_graph=cuda_graph)
    assert exe.runner.cuda_graph is bool(cuda_graph)  # default off: cuda-emu has none
    x = np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8)
    (out,) = exe.run({"x": x}).values()
    expected = np.abs(np.tanh(np.cumsum(np.exp(np.maximum(x, 0)), axis=1)))
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_cuda_graphs_are_on_by_default_for_cuda(fake):
    program = parse_program(bench_host.program_text(KERNELS))
    runner = api.CompiledProgram(program, stand_in_driver.StandInCudaTarget())
    assert runner.cuda_graph is True
    assert runner.runtime_program.cuda_graph is True
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(4, 64)
    runner.run({"x": x}, None, [])  # one fused kernel: nothing worth a graph
    assert runner.runtime_program.graph_count == 0 and fake.launch_count == 1
    off = api.CompiledProgram(program, stand_in_driver.StandInCudaTarget(), cuda_graph=False)
    assert off.runtime_program.cuda_graph is False


def test_graph_replay_host_cost_is_reported_by_bench_host():
    figures = bench_host.measure(runs=20, repeat=1)
    assert figures["us_per_graph_replay"] > 0
    assert figures["graph_replay_kernels"] == 20
    assert figures["us_per_run"] > figures["us_per_graph_replay"] and figures["run_feeds"] == 13
    assert NUMPY  # the packed-launch tests' oracle, shared


# ---- RuntimeProgram.repeated_graph: the program N times in one graph (for timing) ------


def test_repeated_graph_replays_the_whole_program_times_over(fake):
    runtime, scope = bench_host.build(3)  # three kernels, graphs off for execute
    unpacked = _unpacked(fake, runtime, scope)
    assert len(unpacked) == 3
    repeated = runtime.repeated_graph(4, scope)
    assert repeated.times == 4
    fake.calls.clear()
    fake.launches.clear()
    repeated(0x4242)
    assert fake.calls.count("cuGraphLaunch") == 1 and "cuLaunchKernel" not in fake.calls
    assert [_launch(launch) for launch in fake.launches] == unpacked * 4
    assert {launch["stream"] for launch in fake.launches} == {0x4242}
    repeated()  # again, on CuPy's current stream: no new capture
    assert fake.calls.count("cuStreamBeginCapture") == 0
    assert len(fake.launches) == 24


def test_repeated_graph_of_a_single_kernel_program(fake):
    runtime, scope = bench_host.build(1)
    runtime.cuda_graph = True  # a single launch is never graphed by execute
    runtime.execute(scope)
    assert runtime.graph_count == 0
    fake.launches.clear()
    runtime.repeated_graph(10, scope)()
    assert len(fake.launches) == 10 and fake.graph_launches == 1


def test_repeated_graph_refuses_what_it_cannot_record(fake):
    runtime, scope = _library_program(stand_in_driver.StandInCudaTarget())
    with pytest.raises(CinnError, match=r"cannot be captured into a CUDA graph: .*cumsum"):
        runtime.repeated_graph(2, scope)
    runtime, scope = bench_host.build(2)
    with pytest.raises(CinnError, match="times must be >= 1, not 0"):
        runtime.repeated_graph(0, scope)
    emu, emu_scope = _library_program("cuda-emu")
    with pytest.raises(CinnError, match="does not capture CUDA graphs"):
        emu.repeated_graph(2, emu_scope)
