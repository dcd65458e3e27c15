"""Ops with a region in PIR text: printed as Paddle prints `cinn_op.group`, parsed back
byte for byte, cloned, verified (values scoped to their region)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cinn_py.errors import ParseError, UnsupportedOpError, VerifyError
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.operation import Operation
from cinn_py.pir.parser import parse_program
from cinn_py.pir.printer import print_program
from cinn_py.pir.verifier import verify_program

DATA = Path(__file__).parent / "data"

T = "tensor<4x8xf32>"
DATA_X = (
    '(%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,8]}'
    f" : () -> {T}"
)
GROUPED = "\n".join(
    [
        "{",
        f"    {DATA_X}",
        f'    (%3) = "cinn_op.group" () {{group_name:"group_0",kind:"fused"}} -> {T}, {T} {{',
        f'        (%1) = "pd_op.relu" (%0) {{}} : ({T}) -> {T}',
        f'        (%2) = "pd_op.exp" (%1) {{}} : ({T}) -> {T}',
        f'        () = "cf.yield" (%1, %2) {{}} : ({T}, {T}) -> ',
        "    }",
        f'    (%5) = "pd_op.add" (%3, %4) {{}} : ({T}, {T}) -> {T}',
        "}",
        "",
    ]
)
# %3 and %4: one line names both results of the group.
GROUPED = GROUPED.replace('(%3) = "cinn_op.group"', '(%3, %4) = "cinn_op.group"')


def test_group_text_round_trips_byte_for_byte():
    program = parse_program(GROUPED)
    assert print_program(program) == GROUPED
    verify_program(program)
    group = program.block.ops[1]
    assert group.name == "cinn_op.group"
    assert [op.name for op in group.regions[0].blocks[0]] == ["pd_op.relu", "pd_op.exp", "cf.yield"]
    assert group.attr("group_name") == "group_0" and group.attr("kind") == "fused"
    relu = group.regions[0].blocks[0].ops[0]
    assert relu.operand_value(0) is program.block.ops[0].result(0)
    add = program.block.ops[2]
    assert add.operand_values() == list(group.results)


def test_nested_regions_indent_one_level_deeper_and_keep_the_indent_style():
    text = "\n".join(
        [
            "{",
            f"  {DATA_X}",
            f'  (%3) = "cinn_op.group" () {{group_name:"outer",kind:"fused"}} -> {T} {{',
            f'    (%2) = "cinn_op.group" () {{group_name:"inner",kind:"fused"}} -> {T} {{',
            f'      (%1) = "pd_op.relu" (%0) {{}} : ({T}) -> {T}',
            f'      () = "cf.yield" (%1) {{}} : ({T}) -> ',
            "    }",
            f'    () = "cf.yield" (%2) {{}} : ({T}) -> ',
            "  }",
            "}",
            "",
        ]
    )
    program = parse_program(text)
    assert print_program(program) == text
    verify_program(program)


def test_region_with_no_results_and_no_attributes():
    text = "\n".join(
        [
            "{",
            f"    {DATA_X}",
            '    () = "test.region" () {} ->  {',
            '        () = "builtin.shadow_output" (%0) {output_name:"y"} : (tensor<4x8xf32>) -> ',
            "    }",
            "}",
            "",
        ]
    )
    program = parse_program(text)
    assert print_program(program) == text
    assert len(program.block.ops[1].regions[0].blocks[0]) == 1


def test_clone_copies_regions():
    program = parse_program(GROUPED)
    copy = program.clone()
    assert print_program(copy) == GROUPED
    verify_program(copy)
    old_ops, new_ops = list(program.ops()), list(copy.ops())
    assert [op.name for op in old_ops] == [op.name for op in new_ops]
    assert not {id(op) for op in old_ops} & {id(op) for op in new_ops}
    relu = copy.block.ops[1].regions[0].blocks[0].ops[0]
    assert relu.operand_value(0) is copy.block.ops[0].result(0)
    assert copy.block.ops[2].operand_values() == list(copy.block.ops[1].results)


def test_value_defined_in_a_region_is_not_visible_after_it():
    text = GROUPED.replace('pd_op.add" (%3, %4)', 'pd_op.add" (%3, %1)')
    with pytest.raises(ParseError, match=r"undefined value %1"):
        parse_program(text)


def test_value_numbers_stay_unique_across_regions():
    text = GROUPED.replace('(%5) = "pd_op.add"', '(%1) = "pd_op.add"')
    with pytest.raises(ParseError, match=r"value %1 is defined twice \(first at line 4\)"):
        parse_program(text)


def test_unclosed_region_is_a_parse_error():
    text = GROUPED.split("    }\n")[0]
    with pytest.raises(ParseError, match=r"missing closing '\}' of the region opened at line 3"):
        parse_program(text)


def test_region_op_needs_its_brace():
    text = "{\n" + f'    (%1) = "cinn_op.group" () {{group_name:"g",kind:"fused"}} -> {T}\n' + "}\n"
    with pytest.raises(ParseError, match=r"expected '\{' to open the region of cinn_op.group"):
        parse_program(text)


def test_verifier_checks_the_group_and_its_yield():
    program = parse_program(GROUPED.replace('kind:"fused"', 'kind:"odd"'))
    with pytest.raises(VerifyError, match="kind must be one of fused, library"):
        verify_program(program)
    program = parse_program(GROUPED.replace("(%1, %2) {} : (tensor<4x8xf32>, ", "(%2) {} : ("))
    with pytest.raises(VerifyError, match="yields 1 values but has 2 results"):
        verify_program(program)


def test_verifier_rejects_a_use_of_a_region_value_outside_it():
    program = parse_program(GROUPED)
    inner = program.block.ops[1].regions[0].blocks[0].ops[0].result(0)
    program.block.ops[2].set_operand(1, inner)
    with pytest.raises(VerifyError, match="uses a value before it is defined"):
        verify_program(program)


def test_yield_outside_a_region_fails_verification():
    program = parse_program(
        "{\n" + f"    {DATA_X}\n" + f'    () = "cf.yield" (%0) {{}} : ({T}) -> \n' + "}\n"
    )
    with pytest.raises(VerifyError, match="must end the block of an op's region"):
        verify_program(program)


def test_ops_with_two_regions_do_not_print():
    program = load_model(DATA / "cond")
    assert any(op.name == "pd_op.if" for op in program.block)
    with pytest.raises(UnsupportedOpError, match="pd_op.if.*only ops with one region"):
        print_program(program)
    assert isinstance(program.clone().block.ops[0], Operation)
