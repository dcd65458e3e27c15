"""Every case of op_cases.py lowered and run by the IR interpreter, against the reference.

Each program's ops go into one FUSED group (after the passes), the group is lowered
(inlined, and with every op stored), and the interpreter's outputs are compared with
`run_reference` under the dtype-aware tolerances of `cinn_py.tolerances`.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES, OpCase, fused_group

from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.interpreter import run_function, storage_dtype
from cinn_py.pir.dtypes import DataType
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

SMALL = [c for c in CASES if not c.compiled_only]


def _params(cases: list[OpCase]) -> list:
    return [pytest.param(c, id=c.id) for c in cases]


def run_lowered(case: OpCase, *, inline: bool) -> None:
    program, feeds = case.build()
    group = fused_group(program)
    want = dict(zip(map(id, program.outputs()), run_reference(program, feeds), strict=True))
    names = NameTable(program)
    func = lower_group(group, names, inline=inline)
    data_names = {id(op.result(0)): op.attr("name") for op in program.data_ops()}
    buffers = {names.buffer(v): feeds[data_names[id(v)]] for v in group.inputs}
    outputs = {}
    for value in group.outputs:
        type_ = value.type
        outputs[id(value)] = np.zeros(type_.dims, dtype=storage_dtype(type_.data_type))
        buffers[names.buffer(value)] = outputs[id(value)]
    run_function(func, buffers)
    assert set(outputs) == set(want)
    for value in group.outputs:
        bf16 = value.type.data_type is DataType.BFLOAT16
        result = compare(outputs[id(value)], want[id(value)], "bfloat16" if bf16 else None)
        assert result.ok, f"{case.id} {names.printed(value)}: {result}"


@pytest.mark.parametrize("case", _params(SMALL))
def test_inlined_matches_reference(case):
    run_lowered(case, inline=True)


@pytest.mark.parametrize("case", _params(SMALL))
def test_every_op_stored_matches_reference(case):
    run_lowered(case, inline=False)


def test_table_covers_every_lowered_op():
    from cinn_py.pir.op_def import registered_ops

    tested = {c.op for c in CASES}
    missing = {
        op.name for op in registered_ops() if op.lowering and op.name.startswith("pd_op.")
    } - tested
    assert not missing, f"no case for {sorted(missing)}"


def test_cases_are_deterministic():
    case = next(c for c in CASES if c.id == "add-f32-bcast")
    _, first = case.build()
    _, second = case.build()
    assert all(np.array_equal(first[k], second[k]) for k in first)
