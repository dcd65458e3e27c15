"""The symbolic shape analysis: symbols for -1 dims, symbolic shapes through the ops and
the shapes a program computes, constraints, and the FeedError for feeds that break them
(before any kernel compiles)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.cli import main
from cinn_py.errors import FeedConstraintError, FeedError
from cinn_py.pir.dim_expr import Const, Sym, broadcast
from cinn_py.pir.parser import parse_program
from cinn_py.pir.shape_analysis import Kind, analyze_shapes, check_feed_constraints
from cinn_py.pir.types import DYNAMIC

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parents[0] / "fixtures"
ATTENTION = HERE / "data" / "symbolic" / "attention_mask.pir"
"""x [-1, -1, 16] split into 2 heads, scores x x^T plus a fed mask [-1, 1, -1, -1]."""
RESHAPE = HERE / "data" / "symbolic" / "reshape_split.pir"
"""x [-1, -1, 6] reshaped to [0, -1, 4]."""

S0, S1, S2, S3, S4 = (Sym(i) for i in range(5))


def _by_number(program):
    analysis = analyze_shapes(program)
    values = {analysis.names(r): r for op in program.block for r in op.results}
    return analysis, values


def _dynamic_fixtures() -> list[Path]:
    found = []
    for path in sorted(FIXTURES.glob("*/*/program.pir")):
        if "x-1" in path.read_text() or "<-1" in path.read_text():
            found.append(path.parent)
    return found


def test_llama_layer_with_batch_and_sequence_symbols():
    program = cinn_py.load(FIXTURES / "models" / "llama_decoder" / "program.pir")
    analysis, v = _by_number(program)
    assert {str(s): str(src) for s, src in analysis.symbols.items()} == {
        "S0": "hidden.shape[0]",
        "S1": "hidden.shape[1]",
    }
    assert analysis.shape(v["%9"]) == (S0, S1, Const(16))  # the feed
    assert analysis.shape_value(v["%10"]) == (S0, S1, Const(16))  # shape64
    assert analysis.shape_value(v["%30"]) == (S0, S1, Const(2), Const(8))  # stacked shape
    for q_k_v in ("%31", "%37", "%43"):  # reshaped to heads
        assert analysis.shape(v[q_k_v]) == (S0, S1, Const(2), Const(8))
    assert analysis.shape(v["%57"]) == (S1,)  # arange(0, seq)
    assert analysis.shape(v["%100"]) == (S0, Const(2), S1, Const(8))  # q transposed
    assert analysis.shape(v["%103"]) == (S0, Const(2), S1, S1)  # scores
    assert analysis.shape(v["%109"]) == (S1, S1)  # the causal mask, from [seq, seq]
    assert analysis.shape(v["%127"]) == (S0, Const(2), S1, S1)  # masked scores
    assert analysis.shape(v["%129"]) == (S0, Const(2), S1, Const(8))  # attention out
    assert analysis.shape(v["%151"]) == (S0, S1, Const(16))  # the output
    assert analysis.constraints == []  # every dim derives from hidden's


def test_fed_mask_must_broadcast_with_the_sequence():
    analysis, v = _by_number(cinn_py.load(ATTENTION))
    assert [str(src) for src in analysis.symbols.values()] == [
        "x.shape[0]",
        "x.shape[1]",
        "mask.shape[0]",
        "mask.shape[2]",
        "mask.shape[3]",
    ]
    assert analysis.shape(v["%15"]) == (S0, Const(2), S1, S1)
    assert analysis.shape(v["%18"]) == (
        broadcast(S0, S2),
        Const(2),
        broadcast(S1, S3),
        broadcast(S1, S4),
    )
    added = [(c.kind, c.lhs, c.rhs) for c in analysis.constraints if c.op == "pd_op.add (%18)"]
    assert added == [
        (Kind.BROADCAST, S0, S2),
        (Kind.BROADCAST, S1, S3),
        (Kind.BROADCAST, S1, S4),
    ]
    for mask in ((4, 1, 7, 7), (1, 1, 7, 7), (4, 1, 1, 7), (4, 1, 7, 1)):
        check_feed_constraints(analysis.program, {"x": (4, 7, 16), "mask": mask}, analysis)


def test_mismatched_feeds_name_both_feeds_the_dims_and_the_op():
    program = cinn_py.load(ATTENTION)
    with pytest.raises(FeedConstraintError) as caught:
        check_feed_constraints(program, {"x": (4, 7, 16), "mask": (4, 1, 8, 7)})
    assert str(caught.value) == (
        "feeds 'x' [4, 7, 16] and 'mask' [4, 1, 8, 7]: pd_op.add (%18) requires "
        "x.shape[1] (7) == mask.shape[2] (8), or one of them 1 (broadcast at axis 2)"
    )
    assert isinstance(caught.value, FeedError)
    assert caught.value.feeds == {"x": (4, 7, 16), "mask": (4, 1, 8, 7)}
    with pytest.raises(FeedError, match=r"x.shape\[0\] \(4\) == mask.shape\[0\] \(3\)"):
        check_feed_constraints(program, {"x": (4, 7, 16), "mask": (3, 1, 7, 7)})


def test_the_run_refuses_such_feeds_before_compiling():
    exe = cinn_py.compile(cinn_py.load(ATTENTION), target="cuda-emu")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 7, 16)).astype(np.float32)
    with pytest.raises(FeedError, match=r"pd_op.add \(%18\) requires x.shape\[1\] \(7\)"):
        exe.run({"x": x, "mask": np.zeros((2, 1, 7, 8), np.float32)})
    assert exe.runner._compiled == {}  # nothing compiled for the bad feeds
    mask = np.zeros((2, 1, 7, 7), np.float32)
    (got,) = exe.run({"x": x, "mask": mask}).values()
    (want,) = (
        cinn_py.compile(cinn_py.load(ATTENTION), target="reference")
        .run({"x": x, "mask": mask})
        .values()
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


EMPTY_RESHAPE = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,-1,0]} : () -> tensor<-1x-1x0xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[1,0]} : () -> tensor<2xi64>
    (%2) = "pd_op.reshape" (%0, %1) {} : (tensor<-1x-1x0xf32>, tensor<2xi64>) -> tensor<1x-1xf32>
    (%3) = "pd_op.fetch" (%2) {col:0,name:"out0"} : (tensor<1x-1xf32>) -> tensor<1x-1xf32>
}
"""


def test_reshape_of_an_empty_tensor_keeps_no_element_count():
    """A 0 in reshape's shape is a 0 dim for an empty input, not a copy (found by the
    layout fuzzer: the analysis required x.shape[1] == 0 and refused x [1, 1, 0])."""
    program = parse_program(EMPTY_RESHAPE)
    analysis, v = _by_number(program)
    assert not analysis.constraints
    for shape in [(1, 1, 0), (2, 3, 0)]:
        check_feed_constraints(program, {"x": shape}, analysis)
        (got,) = (
            cinn_py.compile(program, "cuda-emu").run({"x": np.zeros(shape, np.float32)}).values()
        )
        assert got.shape == (1, 0)


def test_reshape_that_does_not_divide():
    program = cinn_py.load(RESHAPE)
    analysis, v = _by_number(program)
    assert analysis.shape(v["%2"]) == (S0, (S1 * 3) // 2, Const(4))
    (constraint,) = analysis.constraints
    assert (constraint.kind, str(constraint.lhs), str(constraint.rhs)) == (
        Kind.DIVIDES,
        "S0*4",
        "S0*S1*6",
    )
    check_feed_constraints(program, {"x": (3, 2, 6)}, analysis)
    with pytest.raises(FeedConstraintError) as caught:
        check_feed_constraints(program, {"x": (2, 3, 6)}, analysis)
    assert str(caught.value) == (
        "feed 'x' [2, 3, 6]: pd_op.reshape (%2) requires x.shape[0]*4 (8) to divide "
        "x.shape[0]*x.shape[1]*6 (36) (reshape's -1 dim)"
    )
    exe = cinn_py.compile(program, target="cuda-emu")
    with pytest.raises(FeedError, match="to divide"):
        exe.run({"x": np.ones((2, 3, 6), np.float32)})


def _program(*lines: str):
    return parse_program("{\n" + "\n".join(f"    {line}" for line in lines) + "\n}\n")


def _data(n: int, name: str, dims: str) -> str:
    shape = dims.replace("x", ",")
    return (
        f'(%{n}) = "pd_op.data" () {{dtype:float32,name:"{name}",place:Place(undefined:0),'
        f"shape:[{shape}],stop_gradient:[false]}} : () -> tensor<{dims}xf32>"
    )


def test_equal_symbols_join_one_class():
    program = _program(
        _data(0, "a", "-1x-1"),
        _data(1, "b", "-1x8"),
        '(%2) = "pd_op.matmul" (%0, %1) {transpose_x:false,transpose_y:false} : '
        "(tensor<-1x-1xf32>, tensor<-1x8xf32>) -> tensor<-1x8xf32>",
        '(%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[2,-1]} : '
        "() -> tensor<2xi64>",
        '(%4) = "pd_op.reshape" (%0, %3) {} : (tensor<-1x-1xf32>, tensor<2xi64>) '
        "-> tensor<2x-1xf32>",
    )
    analysis, v = _by_number(program)
    assert analysis.find(S2) == S1  # b.shape[0] joins a.shape[1]
    assert analysis.shape(v["%1"]) == (S1, Const(8))
    assert analysis.shape(v["%4"]) == (Const(2), (S0 * S1) // 2)
    report = analysis.report()
    assert "  S2 = b.shape[0]  (same as S1)\n" in report
    assert "  S1 == S2  [pd_op.matmul (%2): matmul's contracting dims]\n" in report
    with pytest.raises(FeedError, match=r"requires a.shape\[1\] \(5\) == b.shape\[0\] \(6\)"):
        analysis.check({"a": (3, 5), "b": (6, 8)})
    with pytest.raises(FeedError, match=r"2 to divide a.shape\[0\]\*a.shape\[1\] \(15\)"):
        analysis.check({"a": (3, 5), "b": (5, 8)})


def test_a_static_declared_dim_binds_the_expression():
    program = _program(
        _data(0, "x", "-1x4"),
        '(%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-1,8]} : '
        "() -> tensor<2xi64>",
        '(%2) = "pd_op.reshape" (%0, %1) {} : (tensor<-1x4xf32>, tensor<2xi64>) -> tensor<6x8xf32>',
    )
    analysis, v = _by_number(program)
    assert analysis.shape(v["%2"]) == (Const(6), Const(8))
    assert [str(c) for c in analysis.constraints] == [
        "8 divides S0*4  [pd_op.reshape (%2): reshape's -1 dim]",
        "S0//2 == 6  [pd_op.reshape (%2): its declared dim 0 is 6]",
    ]
    analysis.check({"x": (12, 4)})
    with pytest.raises(FeedError, match=r"x.shape\[0\]//2 \(5\) == 6"):
        analysis.check({"x": (10, 4)})


def test_unknown_ops_give_fresh_symbols():
    program = cinn_py.load(FIXTURES / "programs" / "op_arange" / "program.pir")
    analysis = analyze_shapes(program)
    unknown = [str(src) for src in analysis.symbols.values() if src.feed is None]
    assert unknown == [  # bounds fed at run time: the length depends on values
        "unknown: from pd_op.arange (%20.shape[0])",
        "unknown: from pd_op.arange (%23.shape[0])",
    ]


@pytest.mark.parametrize("folder", _dynamic_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_dynamic_fixture_is_analyzed_and_its_feeds_pass(folder):
    programs = [cinn_py.load(folder / "program.pir")]
    if (folder / "model.json").exists():
        programs.append(cinn_py.load(folder))
    for program in programs:
        analysis = analyze_shapes(program)
        for op in program.block:
            for result in op.results:
                shape = analysis.shape(result)
                if shape is not None:
                    assert len(shape) == len(result.type.dims)
                    for dim, declared in zip(shape, result.type.dims, strict=True):
                        assert declared == DYNAMIC or dim == Const(declared)
        for feeds in ("feeds.npz", "feeds_2.npz"):
            if (folder / feeds).exists():
                with np.load(folder / feeds) as arrays:
                    analysis.check({name: arrays[name].shape for name in arrays.files})


def test_groups_symbolic_prints_symbols_shapes_and_constraints(capsys):
    assert main(["groups", "--symbolic", str(ATTENTION)]) == 0
    out = capsys.readouterr().out
    symbolic, groups = out.split("\n\n", 1)
    lines = symbolic.splitlines()
    assert lines[:6] == [
        "symbols:",
        "  S0 = x.shape[0]",
        "  S1 = x.shape[1]",
        "  S2 = mask.shape[0]",
        "  S3 = mask.shape[2]",
        "  S4 = mask.shape[3]",
    ]
    assert "  %1 = pd_op.data: [S2, 1, S3, S4]" in lines
    assert "  %15 = pd_op.matmul: [S0, 2, S1, S1]" in lines
    assert "  %23 = pd_op.reshape: [broadcast(S0,S2), broadcast(S1,S3), 16]" in lines
    assert "constraints:" in lines
    assert "  S1 == S3 or one of them is 1  [pd_op.add (%18): broadcast at axis 2]" in lines
    assert '"cinn_op.group"' in groups
    # after the groups: which kernels take which dims (the attention softmax's row
    # reads the mask's dims too)
    assert groups.endswith(
        "symbolic kernels:\n"
        "  group_0 (flat): takes S0, S1\n"
        "  group_2 (row): takes S0, S1, S2, S3, S4\n"
        "  group_4 (flat): takes S0, S1\n"
    )
    assert main(["groups", str(ATTENTION)]) == 0
    plain = capsys.readouterr().out
    assert "symbols:" not in plain and "symbolic kernels" not in plain


def test_a_static_program_has_no_symbols():
    analysis = analyze_shapes(cinn_py.load(FIXTURES / "programs" / "broadcast_add" / "program.pir"))
    assert analysis.symbols == {} and analysis.constraints == []
    assert "  none: every dim is static" in analysis.report()
