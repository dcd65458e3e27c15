"""Groups as `cinn_op.group` ops: golden text, parse-back, flattening back gives the
same outputs under the reference executor, and the Graphviz picture."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import CompileError
from cinn_py.hlir.group_ops import flatten_groups, groups_to_dot, groups_to_program
from cinn_py.hlir.grouping import group_program, make_group
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.pir.printer import print_program
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import ReferenceExecutor
from cinn_py.tolerances import compare

ROOT = Path(__file__).parent.parent.parent
FIXTURES = ROOT / "kernels_tests" / "fixtures" / "programs"
LOWERABLE = {OpPatternKind.ELEMENTWISE, OpPatternKind.BROADCAST, OpPatternKind.INJECTIVE}

ADD_RELU_MUL_GROUPED = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[256,1000]} : () -> tensor<256x1000xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"y",place:Place(undefined:0),shape:[256,1000]} : () -> tensor<256x1000xf32>
    (%2) = "pd_op.data" () {dtype:float32,name:"w",place:Place(undefined:0),shape:[1000]} : () -> tensor<1000xf32>
    (%6) = "cinn_op.group" () {group_name:"group_0",kind:"fused"} -> tensor<256x1000xf32> {
        (%3) = "pd_op.add" (%0, %1) {} : (tensor<256x1000xf32>, tensor<256x1000xf32>) -> tensor<256x1000xf32>
        (%4) = "pd_op.relu" (%3) {} : (tensor<256x1000xf32>) -> tensor<256x1000xf32>
        (%5) = "pd_op.multiply" (%4, %2) {} : (tensor<256x1000xf32>, tensor<1000xf32>) -> tensor<256x1000xf32>
        () = "cf.yield" (%5) {} : (tensor<256x1000xf32>) -> $
    }
}
""".replace("-> $", "-> ")  # noqa: E501

P = ',is_parameter:[true],need_clip:[true],parameter_name:"NAME",persistable:[true],stop_gradient:[false],trainable:[true]}'  # noqa: E501
MLP_GROUPED = (
    """\
{
    (%0) = "builtin.parameter" () {is_distributed:[false]P_B1 : () -> tensor<3xf32>
    (%1) = "builtin.parameter" () {is_distributed:[false]P_W1 : () -> tensor<8x3xf32>
    (%2) = "builtin.parameter" () {is_distributed:[false]P_B0 : () -> tensor<8xf32>
    (%3) = "builtin.parameter" () {is_distributed:[false]P_W0 : () -> tensor<6x8xf32>
    (%4) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,6],stop_gradient:[true]} : () -> tensor<4x6xf32>
    (%5) = "pd_op.matmul" (%4, %3) {stop_gradient:[false],struct_name:"/Linear/",transpose_x:false,transpose_y:false} : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
    (%11) = "cinn_op.group" () {group_name:"group_0",kind:"fused"} -> tensor<4x8xf32> {
        (%6) = "pd_op.add" (%5, %2) {stop_gradient:[false],struct_name:"/Linear/"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
        (%7) = "pd_op.gelu" (%6) {approximate:false,stop_gradient:[false]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
        () = "cf.yield" (%7) {} : (tensor<4x8xf32>) -> $
    }
    (%8) = "pd_op.matmul" (%11, %1) {stop_gradient:[false],struct_name:"/Linear_1/",transpose_x:false,transpose_y:false} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    (%12) = "cinn_op.group" () {group_name:"group_1",kind:"fused"} -> tensor<4x3xf32> {
        (%9) = "pd_op.add" (%8, %0) {stop_gradient:[false],struct_name:"/Linear_1/"} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
        () = "cf.yield" (%9) {} : (tensor<4x3xf32>) -> $
    }
    (%10) = "pd_op.softmax" (%12) {axis:-1,stop_gradient:[false]} : (tensor<4x3xf32>) -> tensor<4x3xf32>
}
""".replace("P_B1", P.replace("NAME", "linear_1.b_0"))  # noqa: E501
    .replace("P_W1", P.replace("NAME", "linear_1.w_0"))
    .replace("P_B0", P.replace("NAME", "linear_0.b_0"))
    .replace("P_W0", P.replace("NAME", "linear_0.w_0"))
    .replace("-> $", "-> ")
)


def by_trait(op):
    """Fusible by trait, so the golden text does not move with the lowerings."""
    return op.op_def is not None and op.op_def.pattern in LOWERABLE


def compiled_groups(path):
    stages = PIRCompiler(cinn_py.load(path), "cuda-emu").stages(until="grouping")
    return stages.program, stages.groups


def test_add_relu_mul_golden_text():
    program, groups = compiled_groups(ROOT / "examples" / "add_relu_mul.pir")
    grouped = groups_to_program(program, groups)
    assert print_program(grouped) == ADD_RELU_MUL_GROUPED
    verify_program(grouped)


def test_mlp_static_golden_text():
    program = cinn_py.load(FIXTURES / "mlp_static" / "program.pir")
    # Composites kept whole: the softmax stays a library op between the groups.
    PassManager.from_names(["fold_mutable_attributes", "dead_code_elimination"]).run(program)
    fused = [g for g in group_program(program, by_trait) if g.kind.value == "fused"]
    for index, group in enumerate(fused):
        group.name = f"group_{index}"
    grouped = groups_to_program(program, fused)
    assert print_program(grouped) == MLP_GROUPED
    verify_program(grouped)


@pytest.mark.parametrize("text", [ADD_RELU_MUL_GROUPED, MLP_GROUPED], ids=["add_relu_mul", "mlp"])
def test_grouped_text_parses_back(text):
    program = parse_program(text)
    verify_program(program)
    assert print_program(program) == text
    assert print_program(program.clone()) == text


def run_reference(program, feeds, params):
    return ReferenceExecutor(program).run(feeds, params)


@pytest.mark.parametrize("name", ["mlp_static", "attention_block", "layer_norm_3d", "concat_stack"])
def test_flatten_gives_back_an_equivalent_program(name):
    folder = FIXTURES / name
    program, groups = compiled_groups(folder / "program.pir")
    grouped = groups_to_program(program, groups)
    verify_program(grouped)
    assert sum(op.name == "cinn_op.group" for op in grouped.block) == len(groups)
    flat = flatten_groups(parse_program(print_program(grouped)))
    verify_program(flat)
    assert sorted(op.name for op in flat.block) == sorted(op.name for op in program.block)
    with np.load(folder / "feeds.npz") as f:
        feeds = dict(f)
    params = {}
    if (folder / "params.npz").exists():
        with np.load(folder / "params.npz") as f:
            params = dict(f)
    expected = run_reference(program, feeds, params)
    got = run_reference(flat, feeds, params)
    assert len(got) == len(expected)
    # The printed text carries float constants to 6 significant digits (Paddle's %g),
    # so decomposed ops' constants (1/count, sqrt(1/2)) round-trip to within that.
    for a, b in zip(got, expected, strict=True):
        assert compare(np.asarray(a), np.asarray(b), override=(1e-5, 1e-6)).ok


def test_group_outputs_read_outside_are_the_group_results():
    program = parse_program(
        """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4]} : () -> tensor<4xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<4xf32>) -> tensor<4xf32>
    (%2) = "pd_op.exp" (%1) {} : (tensor<4xf32>) -> tensor<4xf32>
    (%3) = "pd_op.softmax" (%1) {axis:-1} : (tensor<4xf32>) -> tensor<4xf32>
    (%4) = "pd_op.add" (%2, %3) {} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
}
"""  # noqa: E501
    )
    ops = program.block.ops
    group = make_group("g", [ops[1], ops[2]], program)
    grouped = groups_to_program(program, [group])
    group_op = grouped.block.ops[1]
    assert [r.type for r in group_op.results] == [v.type for v in group.outputs]
    softmax, add = grouped.block.ops[2:]
    assert softmax.operand_value(0) is group_op.result(0)
    assert add.operand_values() == [group_op.result(1), softmax.result(0)]
    assert grouped.outputs() == [add.result(0)]


def test_a_group_placed_after_an_op_it_reads_that_comes_later_in_the_program():
    program = parse_program(
        """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4]} : () -> tensor<4xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<4xf32>) -> tensor<4xf32>
    (%2) = "pd_op.softmax" (%0) {axis:-1} : (tensor<4xf32>) -> tensor<4xf32>
    (%3) = "pd_op.add" (%1, %2) {} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
}
"""  # noqa: E501
    )
    ops = program.block.ops
    grouped = groups_to_program(program, [make_group("g", [ops[1], ops[3]], program)])
    assert [op.name for op in grouped.block] == ["pd_op.data", "pd_op.softmax", "cinn_op.group"]
    verify_program(grouped)


def test_an_op_in_two_groups_is_refused():
    program, groups = compiled_groups(ROOT / "examples" / "add_relu_mul.pir")
    with pytest.raises(CompileError, match=r"group_0: pd_op.add is in two groups"):
        groups_to_program(program, [groups[0], groups[0]])


ADD_RELU_MUL_DOT = """\
digraph program {
  node [shape=box, fontname="monospace"];
  op0 [label="%0 = pd_op.data\\nx", shape=ellipse];
  op1 [label="%1 = pd_op.data\\ny", shape=ellipse];
  op2 [label="%2 = pd_op.data\\nw", shape=ellipse];
  subgraph cluster_group_0 {
    label="group_0 (fused)";
    op3 [label="%3 = pd_op.add"];
    op4 [label="%4 = pd_op.relu"];
    op5 [label="%5 = pd_op.multiply"];
  }
  op0 -> op3 [label="%0"];
  op1 -> op3 [label="%1"];
  op3 -> op4 [label="%3"];
  op4 -> op5 [label="%4"];
  op2 -> op5 [label="%2"];
}
"""


def test_dot_golden_text():
    program, groups = compiled_groups(ROOT / "examples" / "add_relu_mul.pir")
    assert groups_to_dot(groups_to_program(program, groups)) == ADD_RELU_MUL_DOT


def test_dot_edges_leave_groups_from_the_op_that_computes_the_value():
    dot = groups_to_dot(parse_program(MLP_GROUPED))
    assert 'op0 [label="%0 = builtin.parameter\\nlinear_1.b_0", shape=ellipse];' in dot
    assert "subgraph cluster_group_1 {" in dot and 'label="group_1 (fused)";' in dot
    # gelu (%7, node op7) feeds the second matmul (op8) outside its group.
    assert 'op7 [label="%7 = pd_op.gelu"];' in dot
    assert 'op7 -> op8 [label="%7"];' in dot
    assert 'op9 -> op10 [label="%9"];' in dot
    assert "cf.yield" not in dot and "cinn_op.group" not in dot
