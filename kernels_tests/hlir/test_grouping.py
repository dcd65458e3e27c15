"""Placeholder grouping: connected lowerable ops, never a cycle through a library op."""

from pathlib import Path

import pytest

import cinn_py
from cinn_py.hlir.group import GroupKind, describe_groups
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager

FIXTURES = Path(__file__).parent.parent / "fixtures" / "programs"
LOWERABLE = {"ElementWise", "Broadcast", "Injective"}


def by_trait(op):
    """Grouping's fusibility stand-in: independent of which lowerings exist."""
    return op.op_def is not None and bool(op.op_def.traits & LOWERABLE)


def groups_text(program):
    PassManager().run(program)
    return describe_groups(group_program(program, by_trait), NameTable(program).printed)


def test_mlp_groups_around_library_matmuls():
    program = cinn_py.load(FIXTURES / "mlp_static" / "program.pir")
    assert groups_text(program) == "\n".join(
        [
            "group_0 library [pd_op.matmul] (%4, %3) -> (%5)",
            "group_1 fused [pd_op.add, pd_op.gelu] (%5, %2) -> (%7)",
            "group_2 library [pd_op.matmul] (%7, %1) -> (%8)",
            "group_3 fused [pd_op.add] (%8, %0) -> (%9)",
            "group_4 library [pd_op.softmax] (%9) -> (%10)",
        ]
    )


CYCLE = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,4],stop_gradient:[true]} : () -> tensor<4x4xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    (%2) = "pd_op.matmul" (%1, %1) {transpose_x:false,transpose_y:false} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    (%3) = "pd_op.exp" (%1) {} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    (%4) = "pd_op.add" (%3, %2) {} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
}
"""


def test_no_group_closes_a_cycle_through_a_library_op():
    # relu -> matmul -> add and relu -> exp -> add: relu, exp and add in one group would
    # have to run before and after the matmul. exp joins relu; add stays apart.
    program = parse_program(CYCLE)
    assert groups_text(program) == "\n".join(
        [
            "group_0 fused [pd_op.relu, pd_op.exp] (%0) -> (%1, %3)",
            "group_1 library [pd_op.matmul] (%1) -> (%2)",
            "group_2 fused [pd_op.add] (%3, %2) -> (%4)",
        ]
    )


def test_vector_glue_joins_the_group_it_serves():
    program = cinn_py.load(FIXTURES / "split_family" / "program.pir")
    PassManager().run(program)
    groups = group_program(program, by_trait)
    assert all(g.kind is GroupKind.FUSED for g in groups)
    names = [[op.name for op in g.ops] for g in groups]
    assert any("builtin.split" in ops and "pd_op.split" in ops for ops in names)
    for group in groups:  # inputs and outputs are tensors, never Tensor[] values
        assert all(v.type.__class__.__name__ == "DenseTensorType" for v in group.inputs)
        assert all(v.type.__class__.__name__ == "DenseTensorType" for v in group.outputs)


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir()))
def test_groups_are_in_dependency_order_and_cover_every_op(fixture):
    program = cinn_py.load(FIXTURES / fixture / "program.pir")
    PassManager().run(program)
    groups = group_program(program, by_trait)
    defined = {
        id(r)
        for op in program.block
        if op.name in ("pd_op.data", "builtin.parameter", "builtin.constant")
        for r in op.results
    }
    grouped = set()
    for group in groups:
        for value in group.inputs:
            producer = value.defining_op
            assert id(value) in defined or producer.name.startswith("builtin."), (
                f"{group.name} reads {value!r} before it is computed"
            )
        for op in group.ops:
            grouped.add(id(op))
            defined.update(id(r) for r in op.results)
        if group.kind is GroupKind.LIBRARY:
            assert len(group.ops) == 1
    computing = [
        op
        for op in program.block
        if op.name.startswith("pd_op.") and op.name not in ("pd_op.data", "pd_op.fetch")
    ]
    assert all(id(op) in grouped for op in computing)
