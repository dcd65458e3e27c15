"""The seed's pir_compiler_test: PIRCompiler.build over hand-made groups.

CINN's `test/cpp/pir/cinn/pir_compiler_test.cc` builds two `full` ops of 64x128 (1.0
and 2.0), then tan, relu, tan, relu on the first, and compiles them as three groups:
each full alone and the four-op chain. The same program and groups here, run on
cuda-emu through `BuildScope` / `PIRCompiler(...).build(groups)` / `execute()`.
"""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py.driver import BuildScope
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.hlir.group import GroupKind
from cinn_py.hlir.grouping import make_group
from cinn_py.hlir.naming import NameTable
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program
from cinn_py.tolerances import compare


def build_program():
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.full", shape=[64, 128], value=1.0, dtype=DataType.FLOAT32)
    y = b.op("pd_op.full", shape=[64, 128], value=2.0, dtype=DataType.FLOAT32)
    t1 = b.op("pd_op.tan", x)
    r1 = b.op("pd_op.relu", t1)
    t2 = b.op("pd_op.tan", r1)
    r2 = b.op("pd_op.relu", t2)
    return program, x, y, r2


@pytest.mark.parametrize(
    "target", [pytest.param("cuda-emu"), pytest.param("cuda", marks=pytest.mark.gpu)]
)
def test_pir_compiler_builds_the_seeds_three_groups(target):
    program, x, y, out = build_program()
    ops = list(program.block)
    groups = [
        make_group("group_0", [ops[0]], program),
        make_group("group_1", [ops[1]], program),
        make_group("group_2", ops[2:], program),
    ]
    assert [g.kind for g in groups] == [GroupKind.FUSED] * 3
    scope = BuildScope(target, program)
    runtime_program = PIRCompiler(program, target, scope).build(groups)
    assert len(runtime_program.instructions) == 3
    runtime_program.execute()

    names = NameTable(program)
    got_x = scope[names.buffer(x)].to_numpy()
    got_y = scope[names.buffer(y)].to_numpy()
    got = scope[names.buffer(out)].to_numpy()
    # group_2 (tan, relu, tan, relu: elementwise) writes its output over x, which dies
    # there (`ir.in_place`): x's variable now holds the output
    memory = runtime_program.memory
    assert memory is not None and memory.overwritten(names.buffer(x))
    assert [(p.input, p.output) for p in memory.in_place] == [(names.buffer(x), names.buffer(out))]
    np.testing.assert_array_equal(got_x, got)
    np.testing.assert_array_equal(got_y, np.full((64, 128), 2.0, np.float32))
    one = np.float32(1.0)
    want = np.maximum(np.tan(np.maximum(np.tan(one), 0)), 0).astype(np.float32)
    assert compare(got, np.full((64, 128), want, np.float32)).ok
    assert abs(float(got[0, 0]) - 74.6860) < 1e-3  # tan(tan(1)), as the seed's test prints
