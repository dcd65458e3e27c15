"""Feeds read in place: a feed already in the target's memory, C-contiguous and aligned
for the kernels' 16-byte accesses, is held by its variable as it is (no copy); any
other feed is copied into the variable's own buffer, and a variable that held a
caller's array never writes into it.

cuda-emu's memory is the host's, so NumPy feeds exercise the path in CI; on `cuda`
(against the stand-in driver) a device array's pointer goes straight into the launches.
"""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py import api
from cinn_py.backends import stand_in_driver
from cinn_py.pir.parser import parse_program

PROGRAM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[7,33]} : () -> tensor<7x33xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"y",place:Place(undefined:0),shape:[7,33]} : () -> tensor<7x33xf32>
    (%2) = "pd_op.multiply" (%0, %1) {} : (tensor<7x33xf32>, tensor<7x33xf32>) -> tensor<7x33xf32>
    (%3) = "pd_op.exp" (%2) {} : (tensor<7x33xf32>) -> tensor<7x33xf32>
}
"""


@pytest.fixture(autouse=True, scope="module")
def hermetic_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CINN_PY_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield


def _aligned(shape, fill: float, offset: int = 0) -> np.ndarray:
    """A float32 array whose data starts `offset` bytes past a 64-byte boundary."""
    count = int(np.prod(shape))
    raw = np.empty(count * 4 + 128, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    array = raw[start : start + count * 4].view(np.float32).reshape(shape)
    array[...] = fill
    return array


def _feed_array(exe, name: str):
    compiled = exe.runner.latest
    (variable,) = compiled.runtime.storage.feeds[name]
    return compiled.scope[variable]


def test_an_aligned_contiguous_feed_is_read_where_it_is():
    exe = api.compile(parse_program(PROGRAM), "cuda-emu")
    x, y = _aligned((7, 33), 0.5), _aligned((7, 33), 2.0)
    (out,) = exe.run({"x": x, "y": y}).values()
    np.testing.assert_allclose(out, np.exp(x * y), rtol=1e-6)
    variable = _feed_array(exe, "x")
    assert variable.external and variable.array is x
    x[...] = -1.0  # the caller's array is the feed: the next run reads the new values
    (out,) = exe.run({"x": x, "y": y}).values()
    np.testing.assert_allclose(out, np.exp(-2.0 * np.ones((7, 33))), rtol=1e-6)
    assert np.all(x == -1.0) and np.all(y == 2.0)  # never written


@pytest.mark.parametrize(
    "make",
    [
        lambda: _aligned((7, 66), 0.25)[:, ::2],  # not contiguous
        lambda: _aligned((7, 33), 0.25, offset=4),  # 4 bytes past a 16-byte boundary
        lambda: np.asfortranarray(_aligned((7, 33), 0.25)),  # column-major
    ],
    ids=["strided", "misaligned", "fortran"],
)
def test_other_feeds_are_copied_and_the_results_match(make):
    exe = api.compile(parse_program(PROGRAM), "cuda-emu")
    x = make()
    y = _aligned((7, 33), 3.0)
    (out,) = exe.run({"x": x, "y": y}).values()
    np.testing.assert_allclose(out, np.exp(np.asarray(x, np.float32) * 3.0), rtol=1e-6)
    variable = _feed_array(exe, "x")
    assert not variable.external and not np.shares_memory(variable.array, x)


def test_a_copy_after_an_in_place_run_never_writes_into_the_earlier_callers_array():
    exe = api.compile(parse_program(PROGRAM), "cuda-emu")
    first = _aligned((7, 33), 1.0)
    y = _aligned((7, 33), 1.0)
    exe.run({"x": first, "y": y})
    strided = _aligned((7, 66), 5.0)[:, ::2]
    (out,) = exe.run({"x": strided, "y": y}).values()
    np.testing.assert_allclose(out, np.exp(np.full((7, 33), 5.0)), rtol=1e-6)
    assert np.all(first == 1.0)
    assert not _feed_array(exe, "x").external


def test_a_feed_whose_variable_a_step_writes_is_copied():
    exe = api.compile(parse_program(PROGRAM), "cuda-emu")
    compiled = exe.runner.latest
    (x_variable,) = compiled.runtime.storage.feeds["x"]
    compiled.written = compiled.written | {x_variable}
    x, y = _aligned((7, 33), 1.0), _aligned((7, 33), 1.0)
    exe.run({"x": x, "y": y})
    assert not _feed_array(exe, "x").external
    assert _feed_array(exe, "y").external


def test_a_device_feed_goes_into_the_launches_on_cuda():
    sizes = {"fn_group_0": (8, 8, 8)}
    with stand_in_driver.installed(stand_in_driver.StandInDriver(param_sizes=sizes)) as fake:
        runner = api.CompiledProgram(parse_program(PROGRAM), stand_in_driver.StandInCudaTarget())
        x = stand_in_driver.HostDeviceArray(_aligned((7, 33), 1.0))
        y = stand_in_driver.HostDeviceArray(_aligned((7, 33), 2.0))
        runner.run({"x": x, "y": y}, None, [])
        pointers = {int.from_bytes(p, "little") for p in fake.launches[-1]["params"]}
        assert {x.host.ctypes.data, y.host.ctypes.data} <= pointers
        strided = stand_in_driver.HostDeviceArray(_aligned((7, 66), 1.0)[:, ::2])
        runner.run({"x": strided, "y": y}, None, [])
        pointers = {int.from_bytes(p, "little") for p in fake.launches[-1]["params"]}
        assert strided.host.ctypes.data not in pointers and y.host.ctypes.data in pointers


WEIGHTED = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[7,33]} : () -> tensor<7x33xf32>
    (%1) = "builtin.parameter" () {parameter_name:"w",stop_gradient:[false]} : () -> tensor<33xf32>
    (%2) = "pd_op.multiply" (%0, %1) {} : (tensor<7x33xf32>, tensor<33xf32>) -> tensor<7x33xf32>
    (%3) = "pd_op.exp" (%2) {} : (tensor<7x33xf32>) -> tensor<7x33xf32>
}
"""


def _weighted():
    program = parse_program(WEIGHTED)
    program.parameters["w"] = np.full(33, 0.25, np.float32)
    return api.compile(program, "cuda-emu")


def _param_variable(exe, name: str):
    compiled = exe.runner.latest
    (variable,) = compiled.runtime.storage.parameters[name]
    return compiled.scope[variable]


def test_a_given_parameter_is_read_where_it_is_and_the_programs_own_comes_back():
    exe = _weighted()
    x, w = _aligned((7, 33), 1.0), _aligned((33,), 2.0)
    (out,) = exe.run({"x": x}, params={"w": w}).values()
    np.testing.assert_allclose(out, np.exp(np.full((7, 33), 2.0)), rtol=1e-6)
    variable = _param_variable(exe, "w")
    assert variable.external and variable.array is w  # no copy of the weights
    generation = exe.runner.latest.scope.generation
    w[...] = 3.0  # the same array again: nothing rebound, the new values read
    (out,) = exe.run({"x": x}, params={"w": w}).values()
    np.testing.assert_allclose(out, np.exp(np.full((7, 33), 3.0)), rtol=1e-6)
    assert exe.runner.latest.scope.generation == generation
    (out,) = exe.run({"x": x}).values()  # no params: the program's own weights, copied
    np.testing.assert_allclose(out, np.exp(np.full((7, 33), 0.25)), rtol=1e-6)
    assert not _param_variable(exe, "w").external and np.all(w == 3.0)


def test_a_misaligned_parameter_is_copied():
    exe = _weighted()
    x = _aligned((7, 33), 1.0)
    w = _aligned((33,), 0.5, offset=4)
    (out,) = exe.run({"x": x}, params={"w": w}).values()
    np.testing.assert_allclose(out, np.exp(np.full((7, 33), 0.5)), rtol=1e-6)
    assert not _param_variable(exe, "w").external
