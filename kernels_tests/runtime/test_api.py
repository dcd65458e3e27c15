"""`cinn_py.compile` / `Executable.run` on cuda-emu: outputs as on reference, feeds and
parameters checked, dynamic shapes compiled per signature, any value fetchable."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.api import default_target
from cinn_py.errors import CinnError, FeedError
from cinn_py.pir.parser import parse_program
from cinn_py.targets.device import gpu_available
from cinn_py.tolerances import compare

TEXT = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,6],stop_gradient:[true]} : () -> tensor<-1x6xf32>
    (%1) = "builtin.parameter" () {parameter_name:"w",stop_gradient:[false]} : () -> tensor<6xf32>
    (%2) = "pd_op.relu" (%0) {stop_gradient:[true]} : (tensor<-1x6xf32>) -> tensor<-1x6xf32>
    (%3) = "pd_op.multiply" (%2, %1) {stop_gradient:[true]} : (tensor<-1x6xf32>, tensor<6xf32>) -> tensor<-1x6xf32>
    (%4) = "pd_op.tanh" (%3) {stop_gradient:[true]} : (tensor<-1x6xf32>) -> tensor<-1x6xf32>
}
"""
W = np.linspace(-1, 1, 6, dtype=np.float32)


def program(dynamic: bool = True):
    text = TEXT if dynamic else TEXT.replace("-1", "5")
    prog = parse_program(text)
    prog.parameters["w"] = W
    return prog


def x_of(rows: int) -> np.ndarray:
    return np.random.default_rng(rows).standard_normal((rows, 6)).astype(np.float32)


def expected(x: np.ndarray, w: np.ndarray = W) -> np.ndarray:
    return np.tanh(np.maximum(x, 0) * w)


def test_default_target_is_cuda_emu_without_a_gpu():
    assert default_target() == ("cuda" if gpu_available() else "cuda-emu")
    if not gpu_available():
        with pytest.raises(CinnError, match="target 'cuda' needs a CUDA GPU and CuPy"):
            cinn_py.compile(program(), "cuda")
    with pytest.raises(CinnError, match="unknown target 'tpu'"):
        cinn_py.compile(program(), "tpu")


def test_static_program_compiles_at_once_and_runs_like_the_reference():
    exe = cinn_py.compile(program(dynamic=False), "cuda-emu")
    assert [g.name for g in exe.groups] == ["group_0"] and len(exe.kernels) == 1
    assert exe.kernels[0].name == "fn_group_0" and "fn_group_0" in exe.cuda_source
    assert exe.timings["total"] > 0
    x = x_of(5)
    got = exe.run({"x": x})
    want = cinn_py.compile(program(dynamic=False), "reference").run({"x": x})
    assert list(got) == list(want) == ["%4"]
    assert isinstance(got["%4"], np.ndarray) and compare(got["%4"], want["%4"]).ok


def test_outputs_are_fresh_copies():
    exe = cinn_py.compile(program(dynamic=False), "cuda-emu")
    x = x_of(5)
    first = exe.run({"x": x})["%4"]
    first[...] = 42
    second = exe.run({"x": x})["%4"]
    assert second is not first and compare(second, expected(x)).ok
    assert exe.run({"x": x}, copy_to_host=False)["%4"] is not second


def test_dynamic_program_compiles_per_feed_shape_and_reuses_compiles():
    exe = cinn_py.compile(program(), "cuda-emu")
    with pytest.raises(CinnError, match="compiled per feed shape: run it once first"):
        _ = exe.groups
    for rows in (3, 7):
        assert compare(exe.run({"x": x_of(rows)})["%4"], expected(x_of(rows))).ok
    seven = exe.runtime_program
    assert seven.scope["var_4"].shape == (7, 6)
    exe.run({"x": x_of(3)})
    three = exe.runtime_program
    assert three is not seven and three.scope["var_4"].shape == (3, 6)
    exe.run({"x": x_of(7)})
    assert exe.runtime_program is seven  # compiled once per shape
    assert compare(exe.run({"x": x_of(0)})["%4"], np.zeros((0, 6), np.float32)).ok


def test_params_override_the_programs_own_for_one_run():
    exe = cinn_py.compile(program(), "cuda-emu")
    x = x_of(4)
    other = np.full(6, 0.25, np.float32)
    assert compare(exe.run({"x": x}, params={"w": other})["%4"], expected(x, other)).ok
    assert compare(exe.run({"x": x})["%4"], expected(x)).ok
    bare = program()
    bare.parameters.clear()
    exe = cinn_py.compile(bare, "cuda-emu")
    assert compare(exe.run({"x": x}, {"w": other})["%4"], expected(x, other)).ok
    with pytest.raises(FeedError, match=r"feed 'w': expected float32 \[6\], got nothing"):
        exe.run({"x": x})


@pytest.mark.parametrize("target", ["cuda-emu", "reference"])
def test_feed_errors_are_the_same_on_every_target(target):
    exe = cinn_py.compile(program(dynamic=False), target)
    x = x_of(5)
    cases = [
        ({"x": x[:4]}, None, r"feed 'x': expected float32 \[5, 6\], got float32 \[4, 6\]"),
        ({"x": x.astype(np.float64)}, None, r"expected float32 \[5, 6\], got float64 \[5, 6\]"),
        ({}, None, r"feed 'x': expected float32 \[5, 6\], got nothing \(it is missing\)"),
        ({"x": x, "z": x}, None, r"feed 'z': expected one of the program's feeds \(x\)"),
        ({"x": x}, {"v": W}, r"feed 'v': expected one of the program's parameters \(w\)"),
        ({"x": x}, {"w": W[:3]}, r"feed 'w': expected float32 \[6\], got float32 \[3\]"),
    ]
    for feeds, params, message in cases:
        with pytest.raises(FeedError, match=message):
            exe.run(feeds, params)


def test_fetching_a_value_inside_a_kernel_compiles_it_as_an_output():
    exe = cinn_py.compile(program(dynamic=False), "cuda-emu")
    plain = exe.runtime_program
    x = x_of(5)
    got = exe.run({"x": x}, fetch=["%2", "%4", "%0"])
    assert list(got) == ["%2", "%4", "%0"]
    np.testing.assert_array_equal(got["%2"], np.maximum(x, 0))
    np.testing.assert_array_equal(got["%0"], x)
    assert exe.runtime_program is not plain  # %2 pinned: another compile
    exe.run({"x": x}, fetch=["%0", "%4"])
    assert exe.runtime_program is plain  # feeds and outputs need none
    with pytest.raises(CinnError, match="cannot fetch '%99'"):
        exe.run({"x": x}, fetch=["%99"])
