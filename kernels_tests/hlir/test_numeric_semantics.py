"""The IR's defined answers where C's are undefined (issue 14), the same on every stage.

A differential fuzzer found three: casts of NaN / inf / out-of-range floats to integers
gave 0, INT_MIN or INT_MAX depending on the dtype and on fusion (`static_cast` is
undefined there); g++ folded `sign(x * x)` to 1 for an int32 x whose square wraps (signed
overflow is undefined); and an integer division by zero killed the process with SIGFPE
on cuda-emu. The rules (`ops/elementwise.py`): float -> int truncates toward
zero, saturates to the type's range, NaN -> 0; integer arithmetic wraps; x / 0 = x % 0
= 0, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0. Each test states the expected numbers
outright (not only "compiled equals reference"), so a stage drifting with the reference
is caught too; `op_cases.py` runs the wider tables on every target.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.hlir.grouping import make_group
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir import expr as e
from cinn_py.ir.evaluate import evaluate, int_pow
from cinn_py.ir.interpreter import run_function, storage_dtype
from cinn_py.ir.operators import c_div, c_mod
from cinn_py.ir.simplify import simplify
from cinn_py.ops.elementwise import int_power, trunc_divide
from cinn_py.pir import Builder, DataType, Program
from cinn_py.pir.dtypes import bfloat16_to_float32, float32_to_bfloat16, float_to_int
from cinn_py.pir.parser import parse_program
from cinn_py.reference import run_reference

D = DataType
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
NAN, INF = float("nan"), float("inf")


def _program(op: str, dtypes: list[DataType], shape: list[int], **attrs) -> Program:
    """`op` applied to data inputs x0, x1, ... (its result is the program's output)."""
    program = Program()
    b = Builder(program)
    xs = [b.op("pd_op.data", name=f"x{k}", shape=shape, dtype=d) for k, d in enumerate(dtypes)]
    b.op(f"pd_op.{op}", *xs, **attrs)
    return program


def _feed(values: list[float], dtype: DataType) -> np.ndarray:
    array = np.array(values, dtype=np.float64)
    if dtype is D.BFLOAT16:
        return float32_to_bfloat16(array.astype(np.float32))
    with np.errstate(over="ignore"):
        return array.astype(dtype.numpy)


def _compiled(program: Program, feeds: dict[str, np.ndarray]) -> np.ndarray:
    (out,) = cinn_py.compile(program, target="cuda-emu").run(feeds).values()
    return np.asarray(out)


def _interpreted(program: Program, feeds: dict[str, np.ndarray]) -> np.ndarray:
    """The program's ops lowered into one group and run by the IR interpreter."""
    ops = [op for op in program.block if op.name != "pd_op.data"]
    group = make_group("group_0", ops, program)
    names = NameTable(program)
    func = lower_group(group, names)
    data = {id(op.result(0)): op.attr("name") for op in program.data_ops()}
    buffers = {names.buffer(v): feeds[data[id(v)]] for v in group.inputs}
    (value,) = group.outputs
    out = np.zeros(value.type.dims, dtype=storage_dtype(value.type.data_type))
    buffers[names.buffer(value)] = out
    run_function(func, buffers)
    return out


# ---- bug 1: float -> integer conversion ---------------------------------------------------

CAST_IN = [NAN, INF, -INF, 3e9, -3e9, 2.9, -2.9, -0.5]
"""Each float dtype rounds these to values that convert alike (3e9 is inf in float16)."""
CAST_OUT = {
    D.INT8: [0, 127, -128, 127, -128, 2, -2, 0],
    D.UINT8: [0, 255, 0, 255, 0, 2, 0, 0],
    D.INT16: [0, 32767, -32768, 32767, -32768, 2, -2, 0],
    D.INT32: [0, I32_MAX, I32_MIN, I32_MAX, I32_MIN, 2, -2, 0],
    D.BOOL: [True] * 7 + [True],
}


def _cast_out(src: DataType, dst: DataType) -> list:
    if dst is not D.INT64:
        return CAST_OUT[dst]
    # 3e9 fits int64 as the source dtype holds it: 3003121664 in bfloat16, inf in float16.
    held = _feed([3e9], src)
    big = float(bfloat16_to_float32(held)[0] if src is D.BFLOAT16 else held[0])
    if np.isinf(big):
        return [0, I64_MAX, I64_MIN, I64_MAX, I64_MIN, 2, -2, 0]
    return [0, I64_MAX, I64_MIN, int(big), -int(big), 2, -2, 0]


def test_float_to_int_truncates_saturates_and_takes_nan_to_zero():
    values = np.array([NAN, INF, -INF, 2.0**63, -(2.0**63), 1e300, 127.9, -128.9, 255.5, -0.9])
    assert float_to_int(values, D.INT64).tolist() == [
        *(0, I64_MAX, I64_MIN, I64_MAX, I64_MIN, I64_MAX, 127, -128, 255, 0)
    ]
    assert float_to_int(values, D.INT8).tolist() == [
        0,
        127,
        -128,
        127,
        -128,
        127,
        127,
        -128,
        127,
        0,
    ]
    assert float_to_int(values, D.UINT8).tolist() == [0, 255, 0, 255, 0, 255, 127, 0, 255, 0]
    assert float_to_int(np.float32(2.1474836e9), D.INT32) == I32_MAX
    assert float_to_int(-2147483648.0, D.INT32) == I32_MIN  # exactly the minimum: no clamp


@pytest.mark.parametrize("dst", [D.INT8, D.UINT8, D.INT16, D.INT32, D.INT64, D.BOOL])
@pytest.mark.parametrize("src", [D.FLOAT32, D.FLOAT16, D.BFLOAT16, D.FLOAT64])
def test_cast_of_nan_inf_and_out_of_range_is_defined(src, dst):
    program = _program("cast", [src], [8], dtype=dst)
    feeds = {"x0": _feed(CAST_IN, src)}
    want = _cast_out(src, dst)
    assert run_reference(program, feeds)[0].tolist() == want
    assert _interpreted(program, feeds).tolist() == want
    assert _compiled(program, feeds).tolist() == want


@pytest.mark.parametrize("src", [D.FLOAT32, D.FLOAT16, D.BFLOAT16, D.FLOAT64])
def test_a_fused_cast_converts_as_an_unfused_one(src):
    """The fuzzer's bfloat16 case: a cast fused after another op gave INT_MAX for NaN."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x0", shape=[8], dtype=src)
    factor = b.op("pd_op.full", shape=[1], value=1.0, dtype=D.FLOAT32)
    b.op("pd_op.cast", b.op("pd_op.scale", x, factor, bias=0.0), dtype=D.INT32)
    feeds = {"x0": _feed(CAST_IN, src)}
    exe = cinn_py.compile(program, target="cuda-emu")
    assert len(exe.groups) == 1
    assert np.asarray(next(iter(exe.run(feeds).values()))).tolist() == CAST_OUT[D.INT32]


def test_constant_folding_converts_by_the_same_rule():
    for value, dtype, want in [
        (NAN, D.INT32, 0),
        (INF, D.INT32, I32_MAX),
        (-3e9, D.INT32, I32_MIN),
        (300.0, D.INT8, 127),
        (-2.7, D.INT64, -2),
    ]:
        folded = simplify(e.Cast(dtype, e.FloatImm(value, D.FLOAT32)))
        assert isinstance(folded, e.IntImm) and folded.value == want, (value, dtype)
        assert evaluate(e.Cast(dtype, e.FloatImm(value, D.FLOAT64)), {}) == want


def test_codegen_emits_the_defined_conversion():
    source = _source(_program("cast", [D.FLOAT32], [1024], dtype=D.INT8))
    assert "cinn_float_to_int<signed char>(var_0_vec.v[" in source
    assert "static_cast<signed char>" not in _kernels(source)


# ---- bug 2: signed integer overflow ---------------------------------------------------------


def _wrap(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


SQUARES_I32 = [-1073741829, 46341, -46341, 65536, 3, 0, I32_MAX, I32_MIN]


def test_sign_of_a_wrapping_square():
    """g++ folded sign(x * x) to 1 (x * x >= 0 unless it overflows, which C calls
    impossible): -1073741829 squared wraps to -2147483623, whose sign is -1."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x0", shape=[8], dtype=D.INT32)
    b.op("pd_op.sign", b.op("pd_op.multiply", x, x))
    feeds = {"x0": np.array(SQUARES_I32, dtype=np.int32)}
    want = [int(np.sign(_wrap(v * v, 32))) for v in SQUARES_I32]
    assert want[0] == -1
    assert run_reference(program, feeds)[0].tolist() == want
    assert _interpreted(program, feeds).tolist() == want
    assert _compiled(program, feeds).tolist() == want


@pytest.mark.parametrize(("dtype", "low"), [(D.INT32, I32_MIN), (D.INT64, I64_MIN)])
def test_abs_and_negation_of_the_minimum_wrap(dtype, low):
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x0", shape=[4], dtype=dtype)
    zero = b.op("pd_op.full", shape=[1], value=0.0, dtype=dtype)
    b.op("pd_op.abs", b.op("pd_op.subtract", b.op("pd_op.multiply", x, zero), x))
    feeds = {"x0": np.array([low, -5, 5, low + 1], dtype=dtype.numpy)}
    want = [low, 5, 5, -(low + 1)]
    assert run_reference(program, feeds)[0].tolist() == want
    assert _compiled(program, feeds).tolist() == want


def test_value_arithmetic_wraps_and_index_arithmetic_stays_plain():
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x0", shape=[1024], dtype=D.INT32)
    b.op("pd_op.sign", b.op("pd_op.multiply", x, x))
    kernels = _kernels(_source(program))
    assert "cinn_wrap_mul(var_0_vec.v[i_0_2], var_0_vec.v[i_0_2])" in kernels
    accesses = [line for line in kernels.splitlines() if "reinterpret_cast" in line]
    assert len(accesses) == 2 and all("(i_0_0 * 1024) + (i_0_1 * 4)" in a for a in accesses)
    assert not any("cinn_wrap" in a for a in accesses)


def test_integer_pow_is_exact_and_wraps():
    assert int_pow(3, 40, 32) == pow(3, 40, 2**32)
    assert [int_pow(b_, -3, 32) for b_ in (0, 1, -1, 2, -2)] == [0, 1, -1, 0, 0]
    base = np.array([0, 1, -1, 2, 3, 7], dtype=np.int64)
    got = int_power(base, np.array([-1, -2, -3, 62, 40, 30], dtype=np.int64))
    assert got.tolist() == [0, 1, -1, 2**62, _wrap(3**40, 64), _wrap(7**30, 64)]


# ---- bug 3: integer division by zero and INT_MIN / -1 --------------------------------------

DIVIDENDS = [7, -7, 0, "MIN", "MIN", 5, -5, 7]
DIVISORS = [0, 0, 0, -1, 0, 2, 2, -2]
QUOTIENTS = {
    "divide": [0, 0, 0, "MIN", 0, 2, -2, -3],
    "floor_divide": [0, 0, 0, "MIN", 0, 2, -3, -4],
    "remainder": [0, 0, 0, 0, 0, 1, 1, -1],
}


def _with_min(values: list, low: int) -> list[int]:
    return [low if v == "MIN" else v for v in values]


_DIVIDE_SCRIPT = """
import json, sys
import numpy as np
import cinn_py
from cinn_py.pir import Builder, DataType, Program

results = {}
for dtype in (DataType.INT32, DataType.INT64):
    low = int(np.iinfo(dtype.numpy).min)
    x = [low if v == "MIN" else v for v in json.loads(sys.argv[1])]
    for op in ("divide", "floor_divide", "remainder"):
        program = Program()
        b = Builder(program)
        a = b.op("pd_op.data", name="x", shape=[8], dtype=dtype)
        c = b.op("pd_op.data", name="y", shape=[8], dtype=dtype)
        b.op("pd_op." + op, a, c)
        feeds = {"x": np.array(x, dtype.numpy), "y": np.array(json.loads(sys.argv[2]), dtype.numpy)}
        (out,) = cinn_py.compile(program, target="cuda-emu").run(feeds).values()
        results[f"{op}-{dtype.value}"] = np.asarray(out).tolist()
print(json.dumps(results))
"""


def test_integer_division_by_zero_does_not_trap_on_cuda_emu():
    """Run in a child process: the unfixed kernel dies of SIGFPE, which would take the
    test runner with it."""
    done = subprocess.run(
        [sys.executable, "-c", _DIVIDE_SCRIPT, json.dumps(DIVIDENDS), json.dumps(DIVISORS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for dtype, low in ((D.INT32, I32_MIN), (D.INT64, I64_MIN)):
        for op, want in QUOTIENTS.items():
            assert results[f"{op}-{dtype.value}"] == _with_min(want, low), (op, dtype)


@pytest.mark.parametrize("op", sorted(QUOTIENTS))
@pytest.mark.parametrize(("dtype", "low"), [(D.INT32, I32_MIN), (D.INT64, I64_MIN)])
def test_reference_and_interpreter_divide_by_the_same_rule(op, dtype, low):
    program = _program(op, [dtype, dtype], [8])
    feeds = {
        "x0": np.array(_with_min(DIVIDENDS, low), dtype=dtype.numpy),
        "x1": np.array(DIVISORS, dtype=dtype.numpy),
    }
    want = _with_min(QUOTIENTS[op], low)
    assert run_reference(program, feeds)[0].tolist() == want
    assert _interpreted(program, feeds).tolist() == want


def test_truncating_division_of_a_negative_number_by_zero_is_zero():
    """The reference's own trunc_divide moved -5 // 0 = 0 to 1 (its rounding fix-up
    treated the zero divisor as a positive one)."""
    x = np.array([-5, 5, -1, 0], dtype=np.int64)
    assert trunc_divide(x, np.zeros(4, dtype=np.int64)).tolist() == [0, 0, 0, 0]


def test_division_folds_by_the_same_rule():
    assert (c_div(5, 0), c_mod(5, 0), c_div(-7, 2), c_mod(-7, 2)) == (0, 0, -3, -1)
    assert simplify(e.IntImm(5) / e.IntImm(0)).value == 0
    assert simplify(e.Mod(e.IntImm(5), e.IntImm(0))).value == 0
    assert simplify(e.IntImm(I32_MIN) / e.IntImm(-1)).value == I32_MIN
    assert simplify(e.Mod(e.IntImm(I32_MIN), e.IntImm(-1))).value == 0


def test_codegen_checks_divisors_that_may_be_zero_or_minus_one():
    kernels = _kernels(_source(_program("remainder", [D.INT32, D.INT32], [1024])))
    assert "cinn_mod(var_0_vec.v[i_0_2], var_1_vec.v[i_0_2])" in kernels
    # Index arithmetic divides by positive constants: plain `/` and `%`.
    kernels = _kernels(_source(_program("transpose", [D.FLOAT32], [33, 7], perm=[1, 0])))
    assert "cinn_div" not in kernels and "cinn_mod" not in kernels


# ---- the simplifier on value arithmetic ---------------------------------------------------


def test_the_simplifier_keeps_rules_that_would_assume_values_do_not_wrap():
    buffer = e.Buffer("x", D.INT32, [e.IntImm(4)])
    load = e.Load(buffer, (e.IntImm(0),))
    n = e.Var("n")
    # (x * 3) / 3 is not x when x * 3 wraps; x + 1 > x is false for INT_MAX.
    assert isinstance(simplify((load * e.IntImm(3)) / e.IntImm(3)), e.Div)
    assert isinstance(simplify((load + e.IntImm(1)).gt(load)), e.GT)
    assert isinstance(simplify(e.Mod(load * e.IntImm(3), e.IntImm(3))), e.Mod)
    # A value itself does not wrap; index arithmetic is assumed not to overflow.
    assert simplify(load.gt(load)).value is False
    assert str(simplify((n * e.IntImm(8)) / e.IntImm(4))) == "(n * 2)"


def test_uint8_constants_fold_unsigned():
    """Folding 200 + 1 in uint8 wrapped it as a signed byte (-55) and failed."""
    u8 = D.UINT8
    assert simplify(e.Add(e.UIntImm(200, u8), e.UIntImm(1, u8))).value == 201
    assert simplify(e.Add(e.UIntImm(200, u8), e.UIntImm(100, u8))).value == 44


def test_wrapping_coefficients_stay_in_their_type():
    """x * 65536 * 65536 is 0 in int32: the folded coefficient wraps instead of
    printing as a 64-bit literal."""
    buffer = e.Buffer("x", D.INT32, [e.IntImm(4)])
    load = e.Load(buffer, (e.IntImm(0),))
    big = e.IntImm(65536)
    assert str(simplify((load * big) * big)) == "0"
    assert str(simplify((load * big) * e.IntImm(32768))) == "(x[0] * -2147483648)"


# ---- PTX: the defined forms cost nothing on the GPU ---------------------------------------


def _source(program: Program) -> str:
    stages = PIRCompiler(program, "cuda", arch="sm_90").stages(until="scheduled")
    return generate_cuda([k.scheduled.func for k in stages.fused]).source


def _kernels(source: str) -> str:
    return source.split("#endif /* CINN_PY_RUNTIME_H */", 1)[1]


def _ptx_body(program: Program) -> str:
    ptx = nvrtc.compile_ptx(_source(program), "sm_90")
    return ptx[ptx.index(".entry") :]


def test_int32_value_add_is_one_add_per_lane_in_ptx():
    body = _ptx_body(_program("add", [D.INT32, D.INT32], [1024]))
    # one operand may be the output's memory (`ir.in_place`): a plain, not .nc, load
    loads = re.findall(r"ld\.global(?:\.nc)?\.v4\.u32\s+\{([^}]*)\}", body)
    assert len(loads) == 2 and "st.global.v4.u32" in body
    xs, ys = ([r.strip() for r in regs.split(",")] for regs in loads)
    for a, b_ in zip(xs, ys, strict=True):
        pattern = (
            rf"add\.s32\s+%r\d+, ({re.escape(a)}, {re.escape(b_)}|{re.escape(b_)}, {re.escape(a)});"
        )
        assert re.search(pattern, body), (a, b_)


def test_float32_add_keeps_its_vector_loads_in_ptx():
    body = _ptx_body(_program("add", [D.FLOAT32, D.FLOAT32], [1024]))
    assert len(re.findall(r"ld\.global(?:\.nc)?\.v4\.f32", body)) == 2
    assert "st.global.v4.f32" in body


def test_float_to_int32_is_one_cvt_rzi_in_ptx():
    body = _ptx_body(_program("cast", [D.FLOAT32], [1024], dtype=D.INT32))
    assert len(re.findall(r"cvt\.rzi\.s32\.f32", body)) == 4
    assert not re.search(r"setp\.\w+\.f32", body)  # no NaN or range tests of its own


# ---- found by the fuzzer: the sign of a zero float floor_divide -----------------------------


def test_float_floor_divide_gives_a_zero_the_sign_of_the_quotient():
    """NumPy's (and Paddle 3.3.1's) floor_divide: a zero quotient is copysign(0, a / b),
    so -0.3 // -inf is +0 (floor((a - fmod(a, b)) / b) gave -0, and a pow(q, -1) after
    it -inf for inf); 1 // 0.1 is 9 (fmod, not floor(a / b) = 10)."""
    a = [1.0, -1.0, -0.0, 0.5, -0.5, 7.0, -7.0, 1.0, 5.0, -0.3, 0.3, -0.0]
    b = [0.1, INF, 3.0, -3.0, 3.0, 0.0, 0.0, -INF, NAN, -INF, -INF, -3.0]
    program = _program("floor_divide", [D.FLOAT32, D.FLOAT32], [len(a)])
    feeds = {"x0": _feed(a, D.FLOAT32), "x1": _feed(b, D.FLOAT32)}
    with np.errstate(all="ignore"):
        want = np.floor_divide(feeds["x0"], feeds["x1"])
    for got in (
        run_reference(program, feeds)[0],
        _interpreted(program, feeds),
        _compiled(program, feeds),
    ):
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


# ---- found by the fuzzer: gelu of a value past half the float32 range --------------------


GELU_BESIDE_RELU = """\
{
    (%0) = "pd_op.data" () {dtype:float32,name:"x0",place:Place(undefined:0),shape:[6]} : () -> tensor<6xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<6xf32>) -> tensor<6xf32>
    (%2) = "pd_op.add" (%1, %1) {} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    (%3) = "pd_op.gelu" (%0) {approximate:APPROX} : (tensor<6xf32>) -> tensor<6xf32>
}
"""


@pytest.mark.parametrize("approximate", ["false", "true"])
def test_gelu_of_huge_values_stays_finite(approximate):
    """gelu(3.3e38) is 3.3e38: the decomposition halves x before multiplying by
    (1 + erf(...)), which is up to 2 (x (1 + erf) first overflowed to inf; the fuzzer's
    program had the gelu beside other ops, which decomposes it)."""
    program = parse_program(GELU_BESIDE_RELU.replace("APPROX", approximate))
    feeds = {"x0": _feed([3.3e38, -3.3e38, 3.4e38, 1.0, -2.5, 0.0], D.FLOAT32)}
    want = run_reference(program, feeds)
    assert np.isfinite(want[-1]).all()  # the gelu (relu(x) + relu(x) overflows: fine)
    got = cinn_py.compile(program, target="cuda-emu").run(feeds)
    np.testing.assert_allclose(got["%3"], want[-1], rtol=1e-6, atol=1e-6)


NORMS_OF_AN_EMPTY_BATCH = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[-1,3,1,4],stop_gradient:[true]} : () -> tensor<-1x3x1x4xf32>
    (%1, %2, %3) = "pd_op.layer_norm" (%0, <<NULL VALUE>>, <<NULL VALUE>>) {begin_norm_axis:2,epsilon:1e-05} : (tensor<-1x3x1x4xf32>, <<NULL TYPE>>, <<NULL TYPE>>) -> tensor<-1x3x1x4xf32>, tensor<-1x3xf32>, tensor<-1x3xf32>
}
"""  # noqa: E501


@pytest.mark.parametrize("batch", [0, 2])
def test_layer_norm_statistics_of_an_empty_batch_keep_their_leading_dims(batch):
    """layer_norm's mean and variance are [B, 3] for x [B, 3, 1, 4], B = 0 included: the
    decomposition squeezes the keepdim statistics (a reshape to [0, 0] gave [0, 0] for
    an empty x: Paddle's reshape copies no dim of a zero-size input; fuzzer, norm)."""
    program = parse_program(NORMS_OF_AN_EMPTY_BATCH)
    x = np.random.default_rng(batch).standard_normal((batch, 3, 1, 4)).astype(np.float32)
    want = run_reference(program, {"x": x})
    got = list(cinn_py.compile(program, target="cuda-emu").run({"x": x}).values())
    shapes = [(batch, 3, 1, 4), (batch, 3), (batch, 3)]
    assert [g.shape for g in got] == [w.shape for w in want] == shapes
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("op", "operands"),
    [
        ("pd_op.relu6", 1),  # relu6(-0.0) = +0.0: its rsqrt is +inf, not -inf
        ("pd_op.clip", 1),
        ("pd_op.maximum", 2),  # NumPy: b where a == b, so maximum(-0.0, +0.0) = +0.0
        ("pd_op.minimum", 2),  # and minimum(+0.0, -0.0) = -0.0
    ],
)
def test_max_and_min_give_numpys_zero_where_the_operands_tie(op, operands):
    """A fuzzer finding (elementwise, `relu6` then `rsqrt` of -0.0 gave -inf where the
    reference gives +inf): the NaN-keeping max / min kept a at a tie; NumPy (and
    Paddle's `b < a ? a : b`) give b."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=[6], dtype=DataType.FLOAT32)
    if operands == 2:
        y = b.op("pd_op.data", name="y", shape=[6], dtype=DataType.FLOAT32)
        out = b.op(op, x, y)
    elif op == "pd_op.clip":
        low = b.op("pd_op.full", shape=[1], value=0.0, dtype=DataType.FLOAT32)
        high = b.op("pd_op.full", shape=[1], value=6.0, dtype=DataType.FLOAT32)
        out = b.op(op, x, low, high)
    else:
        out = b.op(op, x)
    b.op("pd_op.rsqrt", out)  # the sign of a zero made visible: +-inf
    feeds = {"x": np.array([-0.0, 0.0, -0.0, 0.0, np.nan, 1.0], np.float32)}
    if operands == 2:
        feeds["y"] = np.array([0.0, -0.0, -0.0, 0.0, 1.0, np.nan], np.float32)
    want = run_reference(program, feeds)
    got = list(cinn_py.compile(program, "cuda-emu").run(feeds).values())
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)  # NaN where NaN, +inf where +inf
