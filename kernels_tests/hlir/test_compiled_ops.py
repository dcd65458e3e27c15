"""Every lowered op, over the whole case table, compiled for cuda-emu (and, under the `gpu`
marker, cuda) against the reference.

The table (`op_cases.py`) covers broadcasting, odd extents, 0-D, one-element and empty
tensors, and float32 / float16 / bfloat16 / int32 / bool where the op takes them. Each
case goes through the public API: passes, grouping, lowering, auto-schedule, CUDA C,
g++ against the emulation header, the runtime program.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES

import cinn_py
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare

TARGETS = [pytest.param("cuda-emu"), pytest.param("cuda", marks=pytest.mark.gpu)]
"""The same cases on the GPU under the `gpu` marker (skipped where there is none)."""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op_compiled_matches_reference(case, target):
    program, feeds = case.build()
    outputs = program.outputs()
    want = run_reference(program, feeds)
    exe = cinn_py.compile(program, target=target)
    library = [g.name for g in exe.groups if g.kind.value == "library"]
    assert not library, f"{case.id}: ran as library calls, not generated code: {library}"
    got = list(exe.run(feeds).values())
    assert len(got) == len(outputs)
    for i, (value, g, w) in enumerate(zip(outputs, got, want, strict=True)):
        dtype = value.type.data_type.value
        result = compare(np.asarray(g), w, dtype if dtype == "bfloat16" else None)
        assert result.ok, f"{case.id} output {i} ({dtype}): {result}"
