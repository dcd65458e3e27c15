"""`pd_op.fused_gemm_epilogue` and the `fuse_gemm_epilogue` pass that forms it.

The op: its reference kernel against a NumPy formula (x's leading dims flattened into M,
transposes, the three float dtypes, each activation, one rounding at the end), and its
verifier. The pass: golden text for a matmul + add + relu chain, the chains it must leave
alone, and, on cuda-emu, compiled programs against `reference`, fetching the matmul's
value included (pinned, so that compile keeps the matmul).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import cinn_py
from cinn_py.cli import main
from cinn_py.errors import VerifyError
from cinn_py.pir.dtypes import bfloat16_to_float32, float32_to_bfloat16
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.pir.printer import print_program
from cinn_py.pir.verifier import verify_program
from cinn_py.tolerances import compare

SPELLING = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int32": "i32"}
FLOATS = ("float32", "float16", "bfloat16")


def tensor(shape: tuple[int, ...], dtype: str) -> str:
    return "tensor<" + "x".join([*map(str, shape), SPELLING[dtype]]) + ">"


def data(number: int, name: str, shape: tuple[int, ...], dtype: str) -> str:
    dims = ",".join(map(str, shape))
    return (
        f'    (%{number}) = "pd_op.data" () {{dtype:{dtype},name:"{name}",'
        f"place:Place(undefined:0),shape:[{dims}],stop_gradient:[true]}} : () -> "
        f"{tensor(shape, dtype)}\n"
    )


def gemm_text(
    xs: tuple[int, ...],
    ys: tuple[int, ...],
    bs: tuple[int, ...],
    out: tuple[int, ...],
    dtype: str = "float32",
    *,
    trans_x: bool = False,
    trans_y: bool = False,
    activation: str = "none",
    reserve: str = "<<NULL TYPE>>",
    bias_dtype: str | None = None,
) -> str:
    """x, y, bias fed; one fused_gemm_epilogue as Paddle prints it."""
    bias_dtype = bias_dtype or dtype
    flags = f"trans_x:{str(trans_x).lower()},trans_y:{str(trans_y).lower()}"
    types = f"({tensor(xs, dtype)}, {tensor(ys, dtype)}, {tensor(bs, bias_dtype)})"
    return (
        "{\n"
        + data(0, "x", xs, dtype)
        + data(1, "y", ys, dtype)
        + data(2, "bias", bs, bias_dtype)
        + f'    (%3, %4) = "pd_op.fused_gemm_epilogue" (%0, %1, %2) {{activation:"{activation}",'
        f"stop_gradient:[true],{flags}}} : {types} -> {tensor(out, dtype)}, {reserve}\n"
        "}\n"
    )


def feed(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    values = rng.uniform(-1, 1, shape).astype(np.float32)
    return float32_to_bfloat16(values) if dtype == "bfloat16" else values.astype(dtype)


def wide(array: np.ndarray, dtype: str) -> np.ndarray:
    """A fed or fetched array as float64 (bfloat16 comes as uint16 bits)."""
    return (bfloat16_to_float32(array) if dtype == "bfloat16" else array).astype(np.float64)


def rounded(values: np.ndarray, dtype: str) -> np.ndarray:
    """float64 values rounded once into `dtype` (bfloat16 as uint16 bits)."""
    if dtype == "bfloat16":
        return float32_to_bfloat16(values.astype(np.float32))
    return values.astype(dtype)


def gelu_tanh(v: np.ndarray) -> np.ndarray:
    return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))


ACTIVATIONS = {"none": lambda v: v, "relu": lambda v: np.maximum(v, 0), "gelu": gelu_tanh}


def formula(x, y, bias, *, trans_x=False, trans_y=False, activation="none") -> np.ndarray:
    """act(x @ y + bias) in float64, x's leading dims flattened into the rows of M."""
    if trans_x:
        x = x.T
    if trans_y:
        y = y.T
    rows = x.reshape(-1, x.shape[-1]) @ y + bias
    return ACTIVATIONS[activation](rows).reshape(x.shape[:-1] + (y.shape[1],))


# -- the op's reference kernel -------------------------------------------------------------

SHAPES = [(1, 3, 5), (3, 7, 1), (7, 5, 3), (33, 17, 9), (129, 11, 33)]
"""(M, K, N), odd sizes."""
LAYOUTS = [  # (leading dims of x, trans_x, trans_y): trans_x needs a 2-D x
    ((), False, False),
    ((), True, False),
    ((), False, True),
    ((), True, True),
    ((3,), False, False),
    ((3,), False, True),
    ((2, 1), False, False),
]


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("lead", "trans_x", "trans_y"), LAYOUTS, ids=str)
@pytest.mark.parametrize(("m", "k", "n"), SHAPES, ids=str)
def test_reference_kernel_matches_the_formula(m, k, n, lead, trans_x, trans_y, dtype, activation):
    xs = (k, m) if trans_x else (*lead, m, k)
    ys = (n, k) if trans_y else (k, n)
    out = (*lead, m, n)
    text = gemm_text(
        xs, ys, (n,), out, dtype, trans_x=trans_x, trans_y=trans_y, activation=activation
    )
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    feeds = {"x": feed(rng, xs, dtype), "y": feed(rng, ys, dtype), "bias": feed(rng, (n,), dtype)}
    got = cinn_py.compile(parse_program(text), "reference").run(feeds)["%3"]
    args = [wide(feeds[name], dtype) for name in ("x", "y", "bias")]
    want = rounded(formula(*args, trans_x=trans_x, trans_y=trans_y, activation=activation), dtype)
    assert got.shape == out
    result = compare(got, want, "bfloat16" if dtype == "bfloat16" else None)
    assert result.ok, str(result)


def test_the_result_is_rounded_once():
    """float16: 1 * 2048 + 1 * 1 = 2049 rounds (to even) to 2048 on its own, but plus the
    bias 1 it is 2050 exactly; a matmul and an add would give 2048 + 1 -> 2048."""
    text = gemm_text((1, 2), (2, 1), (1,), (1, 1), "float16")
    feeds = {
        "x": np.ones((1, 2), np.float16),
        "y": np.array([[2048], [1]], np.float16),
        "bias": np.ones(1, np.float16),
    }
    got = cinn_py.compile(parse_program(text), "reference").run(feeds)["%3"]
    assert got.dtype == np.float16 and got[0, 0] == 2050


def test_gelu_is_the_tanh_form_of_the_gelu_op():
    """activation "gelu" computes what `gelu {approximate: true}` does, to the bit (x @ I
    + 0 is x exactly, so both round one gelu of the same values)."""
    text = gemm_text((7, 3), (3, 3), (3,), (7, 3), activation="gelu")
    x = np.linspace(-4, 4, 21, dtype=np.float32).reshape(7, 3)
    feeds = {"x": x, "y": np.eye(3, dtype=np.float32), "bias": np.zeros(3, np.float32)}
    fused = cinn_py.compile(parse_program(text), "reference").run(feeds)["%3"]
    gelu = (
        "{\n"
        + data(0, "x", (7, 3), "float32")
        + '    (%1) = "pd_op.gelu" (%0) {approximate:true,stop_gradient:[true]} : '
        "(tensor<7x3xf32>) -> tensor<7x3xf32>\n}\n"
    )
    alone = cinn_py.compile(parse_program(gelu), "reference").run({"x": x})["%1"]
    assert np.array_equal(fused, alone)


def test_paddle_form_with_a_reserve_space_parses_prints_and_runs():
    """Paddle's builder gives relu and gelu a reserve_space typed like out; it holds the
    activation's input here (cuBLASLt's GELU_AUX)."""
    text = gemm_text((7, 5), (5, 3), (3,), (7, 3), activation="gelu", reserve="tensor<7x3xf32>")
    program = parse_program(text)
    verify_program(program)
    assert print_program(program) == text
    rng = np.random.default_rng(5)
    feeds = {
        name: feed(rng, s, "float32") for name, s in (("x", (7, 5)), ("y", (5, 3)), ("bias", (3,)))
    }
    want = cinn_py.compile(program, "reference").run(feeds)
    args = [wide(feeds[name], "float32") for name in ("x", "y", "bias")]
    assert compare(want["%4"], formula(*args).astype(np.float32)).ok
    got = cinn_py.compile(program, "cuda-emu").run(feeds)
    assert list(got) == list(want) == ["%3", "%4"]
    for key in want:
        assert compare(got[key], want[key]).ok


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"xs": (5,), "out": (3,)}, "needs x of rank >= 2"),
        ({"ys": (1, 5, 3)}, "needs a 2-D y"),
        ({"bs": (7, 3)}, r"must be 1-D \[N\]"),
        ({"bs": (4,)}, "has 4 values for N = 3 columns"),
        ({"ys": (4, 3)}, "inner dims differ"),
        ({"activation": "tanh"}, "activation must be one of none, relu, gelu"),
        ({"dtype": "int32"}, "needs a float tensor, got int32"),
        ({"xs": (2, 5, 7), "trans_x": True, "out": (2, 7, 3)}, "trans_x needs a 2-D x"),
        ({"reserve": "tensor<7x3xf32>"}, 'makes no reserve_space with activation "none"'),
    ],
)
def test_verifier_rejects(change, message):
    args = {"xs": (7, 5), "ys": (5, 3), "bs": (3,), "out": (7, 3), **change}
    shapes = [args.pop(key) for key in ("xs", "ys", "bs", "out")]
    with pytest.raises(VerifyError, match=message):
        verify_program(parse_program(gemm_text(*shapes, **args)))


def test_verifier_rejects_mixed_dtypes():
    text = gemm_text((7, 5), (5, 3), (3,), (7, 3), bias_dtype="float16")
    with pytest.raises(VerifyError, match="must have x's dtype float32, got float16"):
        verify_program(parse_program(text))


# -- the pass ------------------------------------------------------------------------------


def chain(
    x: tuple[int, ...] = (7, 5),
    w: tuple[int, ...] = (5, 3),
    b: tuple[int, ...] = (3,),
    out: tuple[int, ...] = (7, 3),
    dtype: str = "float32",
    *,
    bias_first: bool = False,
) -> str:
    """x @ w + b, then relu, as Paddle prints a Linear and a ReLU."""
    tx, tw, tb, to = (tensor(s, dtype) for s in (x, w, b, out))
    mm = tensor(x[:-1] + w[-1:], dtype)
    add = (
        f"(%2, %3) {{stop_gradient:[false]}} : ({tb}, {mm})"
        if bias_first
        else (f"(%3, %2) {{stop_gradient:[false]}} : ({mm}, {tb})")
    )
    return (
        "{\n"
        + data(0, "x", x, dtype)
        + f'    (%1) = "builtin.parameter" () {{parameter_name:"w",stop_gradient:[false]}} : () -> {tw}\n'
        + f'    (%2) = "builtin.parameter" () {{parameter_name:"b",stop_gradient:[false]}} : () -> {tb}\n'
        + f'    (%3) = "pd_op.matmul" (%0, %1) {{stop_gradient:[false],transpose_x:false,'
        f"transpose_y:false}} : ({tx}, {tw}) -> {mm}\n"
        + f'    (%4) = "pd_op.add" {add} -> {to}\n'
        + f'    (%5) = "pd_op.relu" (%4) {{stop_gradient:[false]}} : ({to}) -> {to}\n'
        + "}\n"
    )


CHAIN = chain()

FUSED_CHAIN = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[7,5],stop_gradient:[true]} : () -> tensor<7x5xf32>
    (%1) = "builtin.parameter" () {parameter_name:"w",stop_gradient:[false]} : () -> tensor<5x3xf32>
    (%2) = "builtin.parameter" () {parameter_name:"b",stop_gradient:[false]} : () -> tensor<3xf32>
    (%5, %3) = "pd_op.fused_gemm_epilogue" (%0, %1, %2) {activation:"relu",stop_gradient:[false],trans_x:false,trans_y:false} : (tensor<7x5xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<7x3xf32>, <<NULL TYPE>>
}
"""
"""The relu's value %5 is now the fused op's out (the reserve_space it does not make
prints with the next free number)."""


def fused(text: str, pinned: tuple[str, ...] | None = None):
    program = parse_program(text)
    if pinned is not None:
        numbers = {f"%{r.id_hint}": r for op in program.block for r in op.results}
        program.pinned_outputs = [numbers[name] for name in pinned]
    manager = PassManager.from_names(["fuse_gemm_epilogue"])
    manager.run(program)
    return program, manager.changes["fuse_gemm_epilogue"]


def ops_of(program) -> list[str]:
    return [op.name.removeprefix("pd_op.") for op in program.block if op.name.startswith("pd_op.")]


def test_matmul_add_relu_becomes_one_op():
    program, count = fused(CHAIN)
    assert count == 1
    assert print_program(program) == FUSED_CHAIN


@pytest.mark.parametrize(
    ("edit", "activation", "left"),
    [
        (('"pd_op.relu" (%4) {', '"pd_op.gelu" (%4) {approximate:true,'), "gelu", []),
        (('"pd_op.relu" (%4) {', '"pd_op.gelu" (%4) {approximate:false,'), "none", ["gelu"]),
        (('"pd_op.relu" (%4) {', '"pd_op.gelu" (%4) {'), "none", ["gelu"]),  # erf by default
        (('"pd_op.relu" (%4)', '"pd_op.tanh" (%4)'), "none", ["tanh"]),
    ],
)
def test_which_activations_fuse(edit, activation, left):
    program, count = fused(CHAIN.replace(*edit))
    assert count == 1
    assert ops_of(program) == ["data", "fused_gemm_epilogue", *left]
    (op,) = [op for op in program.block if op.name == "pd_op.fused_gemm_epilogue"]
    assert op.attr("activation") == activation


def test_a_bias_first_sum_fuses():
    program, count = fused(chain(bias_first=True))
    assert count == 1 and ops_of(program) == ["data", "fused_gemm_epilogue"]


def test_a_broadcastable_bias_is_reshaped_and_transposes_carry_over():
    text = (
        CHAIN.replace("tensor<3xf32>", "tensor<1x3xf32>")
        .replace("transpose_y:false", "transpose_y:true")
        .replace("tensor<5x3xf32>", "tensor<3x5xf32>")
    )
    program, count = fused(text)
    assert count == 1
    assert ops_of(program) == ["data", "reshape", "fused_gemm_epilogue"]
    (op,) = [op for op in program.block if op.name == "pd_op.fused_gemm_epilogue"]
    assert op.attr("trans_y") is True and op.operand_value(2).type.dims == (3,)


@pytest.mark.parametrize(
    "shapes",
    [
        {"b": (7, 3)},  # bias [M, N] is no per-column bias
        {"b": (1,)},  # one value for every column
        {"b": (1, 1, 3), "out": (1, 7, 3)},  # would make the result 3-D
        {"x": (2, 7, 5), "w": (2, 5, 3), "out": (2, 7, 3)},  # a batched y
        {"dtype": "int32"},
    ],
    ids=["bias-MxN", "bias-1", "bias-rank3", "batched-y", "int32"],
)
def test_chains_that_are_not_a_gemm_epilogue_stay(shapes):
    text = chain(**shapes)
    verify_program(parse_program(text))
    program, count = fused(text)
    assert count == 0
    assert ops_of(program) == ["data", "matmul", "add", "relu"]


def test_a_batched_transposed_x_stays():
    text = (
        CHAIN.replace("tensor<7x5xf32>", "tensor<2x5x7xf32>")
        .replace("shape:[7,5]", "shape:[2,5,7]")
        .replace("transpose_x:false", "transpose_x:true")
        .replace("tensor<7x3xf32>", "tensor<2x7x3xf32>")
    )
    verify_program(parse_program(text))
    assert fused(text)[1] == 0


def test_a_batched_x_with_a_dynamic_m_fuses():
    text = (
        CHAIN.replace("tensor<7x5xf32>", "tensor<2x-1x5xf32>")
        .replace("shape:[7,5]", "shape:[2,-1,5]")
        .replace("tensor<7x3xf32>", "tensor<2x-1x3xf32>")
    )
    assert fused(text)[1] == 1


EXTRA_USE = '    (%6) = "pd_op.exp" ({}) {{stop_gradient:[false]}} : (tensor<7x3xf32>) -> tensor<7x3xf32>\n}}\n'


def test_a_matmul_read_elsewhere_stays():
    program, count = fused(CHAIN.removesuffix("}\n") + EXTRA_USE.format("%3"))
    assert count == 0
    assert ops_of(program) == ["data", "matmul", "add", "relu", "exp"]


def test_a_sum_read_elsewhere_fuses_without_the_activation():
    program, count = fused(CHAIN.removesuffix("}\n") + EXTRA_USE.format("%4"))
    assert count == 1
    assert ops_of(program) == ["data", "fused_gemm_epilogue", "relu", "exp"]


@pytest.mark.parametrize(
    ("pinned", "expected"),
    [
        (("%5", "%3"), ["data", "matmul", "add", "relu"]),
        (("%5", "%4"), ["data", "fused_gemm_epilogue", "relu"]),
        (("%5",), ["data", "fused_gemm_epilogue"]),
    ],
)
def test_pinned_outputs_are_kept(pinned, expected):
    program, _ = fused(CHAIN, pinned)
    assert ops_of(program) == expected
    assert len(program.outputs()) == len(pinned)


def test_reference_runs_the_program_as_written_and_groups_show_the_fused_op(tmp_path, capsys):
    path = tmp_path / "linear.pir"
    path.write_text(CHAIN)
    assert main(["groups", str(path)]) == 0
    out = capsys.readouterr().out
    assert '"pd_op.fused_gemm_epilogue"' in out and '"pd_op.matmul"' not in out


# -- end to end on cuda-emu ----------------------------------------------------------------

LINEAR_BLOCK = """{{
    (%0) = "pd_op.data" () {{dtype:{dtype},name:"x",place:Place(undefined:0),shape:[2,33,17],stop_gradient:[true]}} : () -> tensor<2x33x17x{t}>
    (%1) = "builtin.parameter" () {{parameter_name:"w",stop_gradient:[false]}} : () -> tensor<17x9x{t}>
    (%2) = "builtin.parameter" () {{parameter_name:"b",stop_gradient:[false]}} : () -> tensor<9x{t}>
    (%3) = "pd_op.matmul" (%0, %1) {{stop_gradient:[false],transpose_x:false,transpose_y:false}} : (tensor<2x33x17x{t}>, tensor<17x9x{t}>) -> tensor<2x33x9x{t}>
    (%4) = "pd_op.add" (%3, %2) {{stop_gradient:[false]}} : (tensor<2x33x9x{t}>, tensor<9x{t}>) -> tensor<2x33x9x{t}>
    (%5) = {act} (%4) {{{attrs}stop_gradient:[false]}} : (tensor<2x33x9x{t}>) -> tensor<2x33x9x{t}>
    (%6) = "pd_op.tanh" (%5) {{stop_gradient:[false]}} : (tensor<2x33x9x{t}>) -> tensor<2x33x9x{t}>
}}
"""

BLOCK_ACTIVATIONS = {
    "relu": ('"pd_op.relu"', "", "relu"),
    "gelu_tanh": ('"pd_op.gelu"', "approximate:true,", "gelu"),
    "gelu_erf": ('"pd_op.gelu"', "approximate:false,", "none"),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", list(BLOCK_ACTIVATIONS))
def test_compiled_linear_blocks_match_reference(act, dtype):
    name, attrs, fused_as = BLOCK_ACTIVATIONS[act]
    text = LINEAR_BLOCK.format(dtype=dtype, t=SPELLING[dtype], act=name, attrs=attrs)
    rng = np.random.default_rng(7)
    feeds = {"x": feed(rng, (2, 33, 17), dtype)}
    params = {"w": feed(rng, (17, 9), dtype), "b": feed(rng, (9,), dtype)}
    exe = cinn_py.compile(parse_program(text), "cuda-emu")
    want = cinn_py.compile(parse_program(text), "reference").run(feeds, params)
    got = exe.run(feeds, params)
    ops = [op for group in exe.groups for op in group.ops]
    (op,) = [op for op in ops if op.name == "pd_op.fused_gemm_epilogue"]
    assert op.attr("activation") == fused_as
    assert not any(op.name == "pd_op.matmul" for op in ops)
    result = compare(got["%6"], want["%6"], "bfloat16" if dtype == "bfloat16" else None)
    assert result.ok, str(result)


def test_fetching_the_matmul_keeps_it_in_that_compile():
    text = LINEAR_BLOCK.format(dtype="float32", t="f32", act='"pd_op.relu"', attrs="")
    rng = np.random.default_rng(11)
    feeds = {"x": feed(rng, (2, 33, 17), "float32")}
    params = {"w": feed(rng, (17, 9), "float32"), "b": feed(rng, (9,), "float32")}
    exe = cinn_py.compile(parse_program(text), "cuda-emu")
    exe.run(feeds, params)
    assert any(op.name == "pd_op.fused_gemm_epilogue" for g in exe.groups for op in g.ops)
    got = exe.run(feeds, params, fetch=["%3", "%4", "%6"])
    names = [op.name for g in exe.groups for op in g.ops]
    assert "pd_op.matmul" in names and "pd_op.fused_gemm_epilogue" not in names
    want = cinn_py.compile(parse_program(text), "reference").run(
        feeds, params, fetch=["%3", "%4", "%6"]
    )
    for key in ("%3", "%4", "%6"):
        assert compare(got[key], want[key]).ok, key
    assert np.allclose(got["%3"], feeds["x"].astype(np.float64) @ params["w"], rtol=1e-5, atol=1e-5)


def test_a_dynamic_m_is_compiled_per_shape():
    text = (
        CHAIN.replace("tensor<7x5xf32>", "tensor<-1x5xf32>")
        .replace("shape:[7,5]", "shape:[-1,5]")
        .replace("tensor<7x3xf32>", "tensor<-1x3xf32>")
    )
    rng = np.random.default_rng(13)
    params = {"w": feed(rng, (5, 3), "float32"), "b": feed(rng, (3,), "float32")}
    exe = cinn_py.compile(parse_program(text), "cuda-emu")
    reference = cinn_py.compile(parse_program(text), "reference")
    for rows in (1, 9, 0):
        feeds = {"x": feed(rng, (rows, 5), "float32")}
        got, want = exe.run(feeds, params)["%5"], reference.run(feeds, params)["%5"]
        assert got.shape == (rows, 3) and compare(got, want).ok
        assert [op.name for g in exe.groups for op in g.ops] == ["pd_op.fused_gemm_epilogue"]
