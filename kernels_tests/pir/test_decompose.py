"""Decomposition of composite ops: golden text, the same numbers as the composite on
edge values and 16-bit floats, and the fusion-preparing pass list on every Paddle
fixture (program and saved model) against Paddle's own outputs."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, float32_to_bfloat16
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.op_def import registered_ops
from cinn_py.pir.parser import parse_file, parse_program
from cinn_py.pir.passes import PASSES, PassManager, decompose_composites
from cinn_py.pir.printer import print_program, value_names
from cinn_py.pir.program import Program
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_reference_fixtures import (  # noqa: E402
    DECLARED_SHAPE_BUGS,
    FIXTURES,
    MODEL_PARAMS,
    PROGRAM_PARAMS,
    _check_model_outputs,
    _load_npz,
    assert_matches,
)

FUSION_PREP = [
    "decompose_composites",
    "constant_folding",
    "common_subexpression_elimination",
    "dead_code_elimination",
]

KEPT_WHOLE = {
    "dynamic_batch": ["pd_op.mean"],
    "op_pool2d": ["pd_op.pool2d"] * 9,
    "resnet_basic_block": ["pd_op.mean"],
    "mobilenetv3_unit": ["pd_op.mean"],
}
"""Fixtures whose composites stay: a mean over a -1 dim has no constant count (the
models' adaptive pools to 1 x 1 over -1 x -1 planes); pool2d over a window (not the whole
plane) is no reduction, and lowers as an unrolled window."""

SOFTMAX_BEFORE = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
    (%1) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
"""  # noqa: E501

SOFTMAX_AFTER = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3],stop_gradient:[true]} : () -> tensor<2x3xf32>
    (%2) = "pd_op.max" (%0, <<NULL VALUE>>) {axis:[-1],keepdim:true,stop_gradient:[true]} : (tensor<2x3xf32>, <<NULL TYPE>>) -> tensor<2x1xf32>
    (%3) = "pd_op.subtract" (%0, %2) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
    (%4) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:-64} : () -> tensor<f32>
    (%5) = "pd_op.maximum" (%3, %4) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    (%6) = "pd_op.exp" (%5) {stop_gradient:[true]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%7) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:1} : () -> tensor<f32>
    (%8) = "pd_op.sum" (%6, <<NULL VALUE>>) {axis:[-1],dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<2x3xf32>, <<NULL TYPE>>) -> tensor<2x1xf32>
    (%9) = "pd_op.divide" (%7, %8) {stop_gradient:[true]} : (tensor<f32>, tensor<2x1xf32>) -> tensor<2x1xf32>
    (%1) = "pd_op.multiply" (%6, %9) {stop_gradient:[true]} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
}
"""  # noqa: E501

SILU_F16_BEFORE = """\
{
    (%0) = "pd_op.data" () {dtype:float16,name:"x",place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf16>
    (%1) = "pd_op.silu" (%0) {stop_gradient:[true]} : (tensor<4xf16>) -> tensor<4xf16>
}
"""  # noqa: E501

SILU_F16_AFTER = """\
{
    (%0) = "pd_op.data" () {dtype:float16,name:"x",place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf16>
    (%2) = "pd_op.cast" (%0) {dtype:float32,stop_gradient:[true]} : (tensor<4xf16>) -> tensor<4xf32>
    (%3) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:-1} : () -> tensor<f32>
    (%4) = "pd_op.multiply" (%2, %3) {stop_gradient:[true]} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    (%5) = "pd_op.exp" (%4) {stop_gradient:[true]} : (tensor<4xf32>) -> tensor<4xf32>
    (%6) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:1} : () -> tensor<f32>
    (%7) = "pd_op.add" (%5, %6) {stop_gradient:[true]} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    (%8) = "pd_op.divide" (%2, %7) {stop_gradient:[true]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    (%1) = "pd_op.cast" (%8) {dtype:float16,stop_gradient:[true]} : (tensor<4xf32>) -> tensor<4xf16>
}
"""  # noqa: E501


@pytest.mark.parametrize(
    ("before", "after"),
    [(SOFTMAX_BEFORE, SOFTMAX_AFTER), (SILU_F16_BEFORE, SILU_F16_AFTER)],
    ids=["softmax", "silu_f16"],
)
def test_decompose_golden(before: str, after: str) -> None:
    program = parse_program(before)
    assert decompose_composites(program) == 1
    verify_program(program)
    assert print_program(program) == after


LAYER_NORM_BEFORE = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3,4],stop_gradient:[true]} : () -> tensor<2x3x4xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"w",place:Place(undefined:0),shape:[12],stop_gradient:[true]} : () -> tensor<12xf32>
    (%2, %3, %4) = "pd_op.layer_norm" (%0, %1, <<NULL VALUE>>) {begin_norm_axis:1,epsilon:1e-05,stop_gradient:[true,true,true]} : (tensor<2x3x4xf32>, tensor<12xf32>, <<NULL TYPE>>) -> tensor<2x3x4xf32>, tensor<2xf32>, tensor<2xf32>
}
"""  # noqa: E501

LAYER_NORM_AFTER = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[2,3,4],stop_gradient:[true]} : () -> tensor<2x3x4xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"w",place:Place(undefined:0),shape:[12],stop_gradient:[true]} : () -> tensor<12xf32>
    (%5) = "pd_op.sum" (%0, <<NULL VALUE>>) {axis:[1,2],dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<2x3x4xf32>, <<NULL TYPE>>) -> tensor<2x1x1xf32>
    (%6) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:12} : () -> tensor<f32>
    (%7) = "pd_op.divide" (%5, %6) {stop_gradient:[true]} : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
    (%8) = "pd_op.square" (%0) {stop_gradient:[true]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    (%9) = "pd_op.sum" (%8, <<NULL VALUE>>) {axis:[1,2],dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<2x3x4xf32>, <<NULL TYPE>>) -> tensor<2x1x1xf32>
    (%10) = "pd_op.divide" (%9, %6) {stop_gradient:[true]} : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
    (%11) = "pd_op.square" (%7) {stop_gradient:[true]} : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
    (%12) = "pd_op.subtract" (%10, %11) {stop_gradient:[true]} : (tensor<2x1x1xf32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
    (%13) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:0} : () -> tensor<f32>
    (%14) = "pd_op.maximum" (%12, %13) {stop_gradient:[true]} : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
    (%15) = "pd_op.subtract" (%0, %7) {stop_gradient:[true]} : (tensor<2x3x4xf32>, tensor<2x1x1xf32>) -> tensor<2x3x4xf32>
    (%16) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:1e-05} : () -> tensor<f32>
    (%17) = "pd_op.add" (%14, %16) {stop_gradient:[true]} : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
    (%18) = "pd_op.rsqrt" (%17) {stop_gradient:[true]} : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
    (%19) = "pd_op.multiply" (%15, %18) {stop_gradient:[true]} : (tensor<2x3x4xf32>, tensor<2x1x1xf32>) -> tensor<2x3x4xf32>
    (%20) = "pd_op.reshape" (%1, <<NULL VALUE>>) {shape:[3,4],stop_gradient:[true]} : (tensor<12xf32>, <<NULL TYPE>>) -> tensor<3x4xf32>
    (%2) = "pd_op.multiply" (%19, %20) {stop_gradient:[true]} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
    (%3) = "pd_op.squeeze" (%7, <<NULL VALUE>>) {axis:[1,2],stop_gradient:[true]} : (tensor<2x1x1xf32>, <<NULL TYPE>>) -> tensor<2xf32>
}
"""  # noqa: E501


COMPOSITE_OPS = frozenset(op.name for op in registered_ops() if op.decompose is not None)


def test_layer_norm_golden_with_cse_and_dce() -> None:
    """Mean and variance in one pass: sum(x) and sum(square(x)) side by side, variance
    = max(E[x^2] - E[x]^2, 0). The 1-D scale is reshaped to the normalized dims; CSE
    merges the two `full(12)`; DCE drops the unused variance output's reshape; the
    pinned mean is reshaped to the declared [2]."""
    program = parse_program(LAYER_NORM_BEFORE)
    layer_norm = program.block.ops[2]
    program.pinned_outputs = [layer_norm.result(0), layer_norm.result(1)]
    before = program.clone()
    manager = PassManager.from_names(FUSION_PREP)
    manager.run(program)
    assert print_program(program) == LAYER_NORM_AFTER
    assert manager.changes == {
        "decompose_composites": 1,
        "constant_folding": 0,
        "common_subexpression_elimination": 1,
        "dead_code_elimination": 1,
    }
    assert_same_numbers(before, program, {"x": _random((2, 3, 4)), "w": _random((12,), seed=1)})


def test_from_names_knows_the_passes_and_the_default_prepares_fusion() -> None:
    assert set(FUSION_PREP) <= set(PASSES)
    assert PassManager().passes == (
        "fold_mutable_attributes",
        "fold_empty_tensors",
        "fuse_gemm_epilogue",
        "decompose_composites",
        "constant_folding",
        "common_subexpression_elimination",
        "dead_code_elimination",
    )
    assert PassManager.from_names(FUSION_PREP).passes == tuple(FUSION_PREP)
    with pytest.raises(ValueError, match=r"unknown pass\(es\) \['decompose'\]"):
        PassManager.from_names(["decompose"])


def _random(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 3).astype(dtype)


EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -3.0, 3.0, 100.0, -100.0])


def _feed(array: np.ndarray, dtype: DataType) -> np.ndarray:
    if dtype is DataType.BFLOAT16:
        return float32_to_bfloat16(array.astype(np.float32))
    return array.astype(dtype.numpy)


def assert_same_numbers(before: Program, after: Program, feeds: dict[str, np.ndarray]) -> None:
    """The composite program and its decomposition agree within the dtype's tolerance."""
    want = run_reference(before, feeds)
    got = run_reference(after, feeds)
    assert len(got) == len(want)
    for value, g, w in zip(after.pinned_outputs, got, want, strict=True):
        dtype = value.type.data_type
        result = compare(g, w, "bfloat16" if dtype is DataType.BFLOAT16 else None)
        assert result.ok, f"{value.owner.name} {dtype.value}: {result}"


CASES = {
    "softmax_axis0": ("pd_op.softmax", {"axis": 0}),
    "softmax_0d": ("pd_op.softmax", {"axis": -1}),
    "log_softmax": ("pd_op.log_softmax", {"axis": -1}),
    "gelu_erf": ("pd_op.gelu", {"approximate": False}),
    "gelu_tanh": ("pd_op.gelu", {"approximate": True}),
    "silu": ("pd_op.silu", {}),
    "hardswish": ("pd_op.hardswish", {}),
    "hardsigmoid": ("pd_op.hardsigmoid", {"slope": 1 / 6, "offset": 0.5}),
    "mean_axis": ("pd_op.mean", {"axis": [1], "keepdim": False}),
    "mean_all_keepdim": ("pd_op.mean", {"axis": [], "keepdim": True}),
    "rms_norm": ("pd_op.rms_norm", {"normalized_shape": [10], "epsilon": 1e-6}),
    "layer_norm": ("pd_op.layer_norm", {"begin_norm_axis": 1, "epsilon": 1e-5}),
}
FLOATS = [DataType.FLOAT32, DataType.FLOAT64, DataType.FLOAT16, DataType.BFLOAT16]


def _composite_program(case: str, dtype: DataType) -> tuple[Program, dict[str, np.ndarray]]:
    """x of shape [3, 10] (0-D for softmax_0d), its composite, and the feeds: edge values
    (NaN, infinities, zeros, large) in row 0 of elementwise ops, random elsewhere."""
    name, attributes = CASES[case]
    shape = [] if case == "softmax_0d" else [3, 10]
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=shape, dtype=dtype)
    array = _random(tuple(shape), "float64")
    if shape and name not in ("pd_op.layer_norm", "pd_op.rms_norm", "pd_op.mean"):
        array[0] = EDGES
    feeds = {"x": _feed(array, dtype)}
    operands: list = [x]
    if name == "pd_op.rms_norm":
        operands.append(b.op("pd_op.data", name="s", shape=[10], dtype=dtype))
        feeds["s"] = _feed(_random((10,), "float64", seed=2), dtype)
    if name == "pd_op.layer_norm":
        stats_dtype = DataType.FLOAT32 if dtype in (DataType.FLOAT16, DataType.BFLOAT16) else dtype
        operands += [b.op("pd_op.data", name=n, shape=[10], dtype=stats_dtype) for n in "sb"]
        feeds["s"] = _feed(_random((10,), "float64", seed=2), stats_dtype)
        feeds["b"] = _feed(_random((10,), "float64", seed=3), stats_dtype)
    if name == "pd_op.mean":
        operands.append(None)
    results = b.op(name, *operands, **attributes)
    program.pinned_outputs = list(results) if isinstance(results, tuple) else [results]
    return program, feeds


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.value)
@pytest.mark.parametrize("case", sorted(CASES))
def test_decomposition_matches_the_composite(case: str, dtype: DataType) -> None:
    """Every rule, every float dtype, edge values included: the decomposed program
    verifies, holds no composite, and gives the composite's numbers."""
    program, feeds = _composite_program(case, dtype)
    decomposed = program.clone()
    assert decompose_composites(decomposed) == 1
    verify_program(decomposed)
    assert not [op.name for op in decomposed.block if op.name in COMPOSITE_OPS]
    assert [v.type for v in decomposed.pinned_outputs] == [v.type for v in program.pinned_outputs]
    assert_same_numbers(program, decomposed, feeds)


@pytest.mark.parametrize("dtype", [DataType.INT32, DataType.INT64])
def test_integer_mean_truncates(dtype: DataType) -> None:
    """sum in int64, a truncating divide, a cast back: -7 / 2 is -3, as the reference says."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[2, 2], dtype=dtype)
    program.pinned_outputs = [b.op("pd_op.mean", x, None, axis=[1])]
    decomposed = program.clone()
    assert decompose_composites(decomposed) == 1
    verify_program(decomposed)
    feeds = {"x": np.array([[-7, 0], [5, 2]], dtype=dtype.numpy)}
    (got,) = run_reference(decomposed, feeds)
    np.testing.assert_array_equal(got, np.array([-3, 3], dtype=dtype.numpy))
    assert_same_numbers(program, decomposed, feeds)


def test_empty_float_mean_is_nan() -> None:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[0, 3], dtype=DataType.FLOAT32)
    program.pinned_outputs = [b.op("pd_op.mean", x, None, axis=[0])]
    decomposed = program.clone()
    decompose_composites(decomposed)
    (got,) = run_reference(decomposed, {"x": np.zeros((0, 3), np.float32)})
    assert got.shape == (3,) and np.isnan(got).all()


def _fixture_fetch(program: Program, folder: Path) -> tuple[list[str], dict[str, np.ndarray]]:
    expected = _load_npz(folder / "outputs.npz")
    names = value_names(program)
    keys = sorted(expected, key=lambda k: int(k[1:]))
    program.pinned_outputs = [names[key] for key in keys]
    return keys, expected


@pytest.mark.parametrize("name", PROGRAM_PARAMS)
def test_fusion_prep_passes_on_program_fixture(name: str) -> None:
    """decompose, fold constants, CSE, DCE (verified after each) on every Paddle program:
    no composite is left and Paddle's fetched values still come out."""
    folder = FIXTURES / "programs" / name
    program = parse_file(folder / "program.pir")
    keys, expected = _fixture_fetch(program, folder)
    PassManager.from_names(FUSION_PREP).run(program)
    left = [op.name for op in program.block if op.name in COMPOSITE_OPS]
    assert left == KEPT_WHOLE.get(name, [])
    got = run_reference(
        program,
        _load_npz(folder / "feeds.npz"),
        _load_npz(folder / "params.npz"),
        program.pinned_outputs,
        check_shapes=name not in DECLARED_SHAPE_BUGS,
    )
    for key, value, array in zip(keys, program.pinned_outputs, got, strict=True):
        assert_matches(array, expected[key], value.type, f"{name} {key}")


@pytest.mark.parametrize("printed", [False, True], ids=["model-json", "printed"])
@pytest.mark.parametrize("name", MODEL_PARAMS)
def test_fusion_prep_passes_on_saved_model(name: str, printed: bool) -> None:
    folder = FIXTURES / "models" / name
    if printed:
        program, params = parse_file(folder / "program.pir"), _load_npz(folder / "params.npz")
    else:
        program, params = load_model(folder), None
    program.pin_outputs()
    PassManager.from_names(FUSION_PREP).run(program)
    left = [op.name for op in program.block if op.name in COMPOSITE_OPS]
    assert left == KEPT_WHOLE.get(name, [])
    _check_model_outputs(name, program, params)
