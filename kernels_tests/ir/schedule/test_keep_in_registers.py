"""A value computed once a row: lowering stores softmax's exp in a temp of its own
(`lower._computed_once`), the row schedule keeps it in each thread's registers along
its walk (`keep_in_registers`), the column schedule inlines it back; the values against
NumPy over odd shapes (interpreter and cuda-emu, static and -1 dims), the CUDA source
(exp computed once a element, one division a row), trace replay, and the primitive's
refusals with their messages."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.group_schedule import TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.finish import finish_schedule
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.schedule.row_registers import register_problem
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.tolerances import compare

PROGRAM = """{{
    (%0) = "pd_op.data" () {{dtype:{dtype},name:"x",place:Place(undefined:0),shape:[{shape}],stop_gradient:[true]}} : () -> tensor<{dims}x{short}>
    (%1) = "pd_op.{op}" (%0) {{axis:{axis},stop_gradient:[true]}} : (tensor<{dims}x{short}>) -> tensor<{dims}x{short}>
}}
"""  # noqa: E501
SHORT = {"float32": "f32", "float16": "f16"}


def program(shape, axis=-1, dtype="float32", op="softmax") -> str:
    dims = "x".join("-1" if d < 0 else str(d) for d in shape)
    return PROGRAM.format(
        dtype=dtype,
        shape=",".join(map(str, shape)),
        dims=dims,
        short=SHORT[dtype],
        axis=axis,
        op=op,
    )


def lowered(text: str):
    parsed = parse_program(text)
    PassManager().run(parsed)
    (group,) = group_program(parsed)
    return lower_group(group, NameTable(parsed)), group.reduce_pattern


def softmax_ref(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def full_temps(func, shape):
    return [b for b in func.temp_buffers if [getattr(d, "value", d) for d in b.shape] == shape]


def test_softmax_lowering_stores_its_exp_once():
    func, _ = lowered(program((3, 40)))
    (exp,) = full_temps(func, [3, 40])
    text = print_ir(func)
    store = next(line for line in text.splitlines() if f"{exp.name}[i0" in line and "=" in line)
    assert "exp(" in store
    # the sum and the normalize read the temp; neither computes an exp itself
    assert text.count("exp(") == 1
    assert text.count(f"{exp.name}[") >= 3


def test_log_softmax_keeps_its_cheap_shift_inline():
    """log_softmax's shared value is x - max: no intrinsic, not worth a temp."""
    func, _ = lowered(program((3, 40), op="log_softmax"))
    assert full_temps(func, [3, 40]) == []


def test_row_schedule_keeps_the_exp_in_registers_golden():
    func, pattern = lowered(program((2, 40)))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    text = print_ir(result.func)
    cache = next(
        b for b in result.func.temp_buffers if b.name.endswith("_local") and "var_0" not in b.name
    )
    assert cache.memory_type.value == "local" and cache.array_dims == (1, 3)
    assert [d.value for d in cache.shape] == [2, 1, 32, 4]
    assert re.search(rf"{cache.name}\[i0_\d+, i_\d+_0, i_\d+_1, i_\d+_2\] = exp\(", text)
    assert "keep_in_registers(block=" in str(result.trace)
    assert structural_equal(result.replay(func), result.func)


@pytest.mark.parametrize("cols", [1, 3, 7, 33, 129, 1000, 4099])
@pytest.mark.parametrize("rows", [1, 3, 7])
def test_interpreted_softmax_matches_numpy(rows, cols):
    func, pattern = lowered(program((rows, cols)))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    x = np.random.default_rng(rows * cols).standard_normal((rows, cols)).astype(np.float32) * 4
    out = np.zeros_like(x)
    run_function(result.func, {"var_0": x, "var_1": out})
    assert compare(out, softmax_ref(x, -1).astype(np.float32)).ok


@pytest.mark.parametrize(
    ("shape", "axis", "dtype"),
    [
        ((7, 33), -1, "float32"),
        ((3, 1000), -1, "float16"),
        ((129, 129), 1, "float32"),
        ((5, 3, 7), -1, "float16"),
        ((64, 33000), -1, "float32"),  # past the register budget: the exp inlined back
        ((33, 64), 0, "float32"),  # a column softmax: the column schedule inlines it
        ((1000, 40), 0, "float16"),
    ],
)
def test_emulated_softmax_matches_numpy(shape, axis, dtype):
    exe = cinn_py.compile(parse_program(program(shape, axis, dtype)), target="cuda-emu")
    x = (np.random.default_rng(7).standard_normal(shape) * 3).astype(dtype)
    (out,) = exe.run({"x": x}).values()
    assert compare(out, softmax_ref(x, axis).astype(dtype)).ok


def test_emulated_softmax_over_minus_one_dims_matches_numpy():
    exe = cinn_py.compile(parse_program(program((-1, -1))), target="cuda-emu")
    for shape in [(3, 1000), (7, 33), (1, 4099), (33, 7)]:
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
        (out,) = exe.run({"x": x}).values()
        assert compare(out, softmax_ref(x, -1).astype(np.float32)).ok, shape


def test_cuda_source_computes_each_exp_once_and_divides_once_a_row():
    exe = cinn_py.compile(parse_program(program((4, 4096), dtype="float16")), target="cuda-emu")
    source = exe.cuda_source
    kernel = source[source.index('extern "C"') :]
    # in the fill of the register array, unrolled; float16: 2 ** (s log2 e), s >= -64
    assert kernel.count("cinn_exp2_normal(") == 1
    assert "expf(" not in kernel and "exp2f(" not in kernel
    assert re.search(r"float var_\d+_tmp_local\[32\];", kernel)  # 4 steps x 8 lanes
    assert re.search(r"\* \(1\.0f / var_\d+_tmp\[0\]\)", kernel)
    assert " / var_" not in kernel.replace("(1.0f / var_", "")
    assert "cinn_max_nan(" in kernel


def test_a_long_row_recomputes_the_exp():
    """Past the register budget (`TargetInfo.row_cache_bytes`) the temp is inlined back:
    each pass computes the exp, as before."""
    func, pattern = lowered(program((64, 33000)))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    assert full_temps(result.func, [64, 33000]) == []
    assert "keep_in_registers" not in str(result.trace)
    assert print_ir(result.func).count("exp(") == 2


def _scheduled_softmax():
    """The row schedule's loops, everything but the register moves."""
    func, pattern = lowered(program((2, 4096)))
    result = auto_schedule(func, TargetInfo.cuda(), pattern)
    steps = [
        s for s in result.trace.steps if s.primitive not in ("keep_in_registers", "cache_read")
    ]
    sch = IRSchedule(func)
    for step in steps:
        getattr(sch, step.primitive)(**dict(step.inputs))
    exp = full_temps(func, [2, 4096])[0].name
    return sch, exp


def test_the_primitive_keeps_the_interpreted_values():
    sch, exp = _scheduled_softmax()
    before = sch.func
    sch.keep_in_registers(exp, [1], 256, lanes=4)
    x = np.random.default_rng(5).standard_normal((2, 4096)).astype(np.float32)
    want, got = np.zeros_like(x), np.zeros_like(x)
    run_function(finish_schedule(before), {"var_0": x, "var_1": want})
    run_function(finish_schedule(sch.func), {"var_0": x, "var_1": got})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("block", "args", "message"),
    [
        ("var_1", ([1], 256, 1, 4), "var_1 is not a temp buffer of fn_group_0"),
        (None, ([1], 128, 1, 4), "its store is not at its own walk position"),
        (None, ([1], 256, 1, 0), "lanes must be positive, got 0"),
        (None, ([2], 256, 1, 4), r"axes \[2\] out of range for \[2, 4096\]"),
    ],
)
def test_refusals_name_the_block_and_why(block, args, message):
    sch, exp = _scheduled_softmax()
    name = block or exp
    assert re.search(message, register_problem(sch.func, name, *args))
    with pytest.raises(ScheduleError, match=message):
        sch.keep_in_registers(name, *args)
