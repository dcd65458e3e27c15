"""The grid schedule over a symbolic row count (few long rows of a -1 batch): the plan
is made for the count's power-of-two bucket, the workspace sized for it
(`grid_reduce(..., rows_bound=)`), so one kernel serves every count of the bucket.
Numbers in the interpreter (scheduled for an H100) and on cuda-emu, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import ScheduleError
from cinn_py.ir import stmt as s
from cinn_py.ir.dim_values import bound_dims
from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.expr import IntImm
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.visitor import canonical_key
from cinn_py.pir.parser import parse_program

CUDA = TargetInfo.cuda()


def program(cols: int, op: str = "sum", dtype: str = "float32") -> str:
    short = {"float32": "f32", "float16": "f16"}[dtype]
    return f"""{{
    (%0) = "pd_op.data" () {{dtype:{dtype},name:"x",place:Place(undefined:0),shape:[-1,{cols}],stop_gradient:[true]}} : () -> tensor<-1x{cols}x{short}>
    (%1) = "pd_op.full_int_array" () {{dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]}} : () -> tensor<1xi64>
    (%2) = "pd_op.{op}" (%0, %1) {{keepdim:false,stop_gradient:[true]}} : (tensor<-1x{cols}x{short}>, tensor<1xi64>) -> tensor<-1x{short}>
}}"""  # noqa: E501


def scheduled(text: str, rows: int, cols: int):
    compiler = PIRCompiler(parse_program(text), "cuda-emu", feed_shapes={"x": (rows, cols)})
    (kernel,) = compiler.stages(until="lowered").fused
    with bound_dims({"S0": rows}):
        return kernel.lowered, auto_schedule(kernel.lowered, CUDA, kernel.group.reduce_pattern)


def run(func, x: np.ndarray, dtype=np.float32) -> np.ndarray:
    """`func` in the interpreter; a temp of symbolic shape (a mean's sum, per row) is
    given, sized at the count (the interpreter allocates constant shapes only)."""
    out = np.zeros(x.shape[0], dtype)
    dims = {"S0": len(x)}
    temps = {
        b.name: np.zeros([int(evaluate(d, dims)) for d in b.shape], b.dtype.numpy)
        for b in func.temp_buffers
        if any(not isinstance(d, IntImm) for d in b.shape)
    }
    feeds = {func.args[0].name: x, func.args[1].name: out, "S0": np.int32(len(x)), **temps}
    run_function(func, feeds)
    return out


REFERENCE = {"sum": np.sum, "max": np.max, "mean": np.mean}


@pytest.mark.parametrize("op", ["sum", "max", "mean"])
@pytest.mark.parametrize("rows", [1, 3, 7, 33, 129, 257])
def test_few_rows_of_a_symbolic_count_take_the_grid(op, rows):
    cols = 8192
    _, result = scheduled(program(cols, op), rows, cols)
    assert result.tactic == "grid"
    workspace = {
        a.name: [d.value for d in a.value.shape]
        for a in result.func.args
        if a.io is s.ArgIO.WORKSPACE
    }
    bucket = 1 << (rows - 1).bit_length()
    semaphore = next(v for k, v in workspace.items() if k.endswith("_semaphore"))
    assert semaphore == [bucket]  # sized for the bucket, whatever the count
    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
    np.testing.assert_allclose(run(result.func, x), REFERENCE[op](x, axis=-1), rtol=1e-5, atol=1e-3)


def test_one_kernel_per_bucket_of_counts():
    cols = 8192
    kernels: dict[tuple, list[int]] = {}
    for rows in [3, 4, 5, 7, 8, 9, 16]:
        _, result = scheduled(program(cols), rows, cols)
        kernels.setdefault(canonical_key(result.func), []).append(rows)
    assert sorted(kernels.values()) == [[3, 4], [5, 7, 8], [9, 16]]


def test_many_rows_keep_the_row_schedule():
    _, result = scheduled(program(8192), 1000, 8192)
    assert result.tactic == "row"


def test_the_primitive_needs_a_bound_that_covers_the_count():
    lowered, _ = scheduled(program(8192), 5, 8192)
    with bound_dims({"S0": 5}):
        with pytest.raises(ScheduleError, match="the row count S0 is symbolic: give rows_bound"):
            IRSchedule(lowered).grid_reduce(1024)
        with pytest.raises(ScheduleError, match="give rows_bound, a count it stays at or under"):
            IRSchedule(lowered).grid_reduce(1024, rows_bound=4)
        sch = IRSchedule(lowered)
        sch.grid_reduce(1024, rows_bound=8)
    assert "rows_bound" in str(sch.trace)


@pytest.mark.parametrize("rows", [1, 2, 3, 7])
def test_numbers_on_the_emulator(tmp_path, monkeypatch, rows):
    """cuda-emu plans for one SM: the grid takes a count of 1 or 2 rows of 65536, the
    row schedule the rest; either way the numbers, and one compile a bucket."""
    monkeypatch.setenv("CINN_PY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CINN_PY_CACHE", "0")
    cols = 65536
    text = program(cols, "mean")
    compiler = PIRCompiler(parse_program(text), "cuda-emu", feed_shapes={"x": (rows, cols)})
    (kernel,) = compiler.stages(until="scheduled").fused
    assert kernel.scheduled.tactic == ("grid" if rows <= 2 else "row")
    assert any(a.name == "S0" for a in kernel.scheduled.func.args)  # symbolic either way
    exe = cinn_py.compile(parse_program(text), "cuda-emu")
    for count in (rows, rows + 1):
        x = np.random.default_rng(count).standard_normal((count, cols)).astype(np.float32)
        (got,) = exe.run({"x": x}).values()
        np.testing.assert_allclose(got, x.mean(-1), rtol=1e-4, atol=1e-6)
