"""`pow(2, y)` of floats renders as `exp2(y)` (`codegen_c.power_of_two`), and softmax and
log_softmax with a float16 or bfloat16 result take their exp as 2 ** (s * log2 e)
through it (`ops/nn.py`, `_exp`): about 100 fewer SASS instructions a thread for the
float16 bench softmax, 200 for a float16 log_softmax of rows of 4096. The numbers on
cuda-emu against the reference over odd shapes and hostile rows, within one ulp of the
float64 reference; float32 softmax and log_softmax keep the precise exp."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.backends import nvrtc
from cinn_py.backends.codegen_c import power_of_two
from cinn_py.backends.codegen_cuda import float_lower_bound, runtime_header
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.ir import expr as e
from cinn_py.perf import binaries
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.program import Program
from cinn_py.tolerances import tolerance

F16, BF16, F32, F64, I32 = (
    DataType.FLOAT16,
    DataType.BFLOAT16,
    DataType.FLOAT32,
    DataType.FLOAT64,
    DataType.INT32,
)


def _y(dtype: DataType = F32) -> e.Var:
    return e.Var("y", dtype)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_pow_of_two_is_exp2(dtype):
    call = e.Call("pow", (e.FloatImm(2.0, dtype), _y(dtype)), dtype, e.CallType.INTRINSIC)
    rewritten = power_of_two(call)
    assert rewritten.name == "exp2" and rewritten.args == (call.args[1],)


@pytest.mark.parametrize(
    "base",
    [e.FloatImm(3.0, F32), e.FloatImm(-2.0, F32), e.Var("b", F32)],
)
def test_other_bases_stay_pow(base):
    call = e.Call("pow", (base, _y()), F32, e.CallType.INTRINSIC)
    assert power_of_two(call) is call


def test_integer_pow_stays_pow():
    call = e.Call("pow", (e.IntImm(2, I32), _y(I32)), I32, e.CallType.INTRINSIC)
    assert power_of_two(call) is call


def _program(op: str, shape, dtype: DataType, **attrs) -> Program:
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype)
    if op == "pow2":
        two = b.op("pd_op.full", shape=[1], value=2.0, dtype=dtype)
        b.op("pd_op.elementwise_pow", two, x)
    else:
        b.op(op, x, **attrs)
    return program


def _kernel(source: str) -> str:
    """The generated kernels of a translation unit, without the runtime header."""
    return source[source.index('extern "C"') :]


def _run(program: Program, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    (got,) = cinn_py.compile(program, "cuda-emu").run({"x": x}).values()
    (want,) = cinn_py.compile(program, "reference").run({"x": x}).values()
    return got, want


def test_a_programs_own_pow_of_two_renders_exp2_and_keeps_nan_and_inf():
    program = _program("pow2", [3, 33], F32)
    kernel = _kernel(cinn_py.compile(program, "cuda-emu").cuda_source)
    assert "exp2f(" in kernel and "powf(" not in kernel
    y = np.random.default_rng(1).standard_normal((3, 33)).astype(np.float32) * 30
    y[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    y[1, :3] = [128.0, -149.0, -126.5]  # overflow to inf, the last subnormals
    got, want = _run(program, y)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=0)


def _as_float(a: np.ndarray, dtype: DataType) -> np.ndarray:
    if dtype is BF16:  # bit patterns at the API
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


def _feed(values: np.ndarray, dtype: DataType) -> np.ndarray:
    if dtype is BF16:
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return values.astype(np.float16)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """How many 16-bit floats apart, for outputs of one sign (adjacent bit patterns)."""
    return np.abs(got.view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32))


@pytest.mark.parametrize("op", ["pd_op.softmax", "pd_op.log_softmax"])
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (7, 33), (5, 129), (3, 1000), (2, 3, 4100)])
def test_16_bit_softmax_through_exp2_matches_the_reference(op, dtype, shape):
    program = _program(op, shape, dtype, axis=-1)
    kernel = _kernel(cinn_py.compile(program, "cuda-emu").cuda_source)
    assert "cinn_exp2_normal(" in kernel and "expf(" not in kernel
    rng = np.random.default_rng(sum(shape))
    x = _feed(rng.standard_normal(shape) * 2, dtype)  # most of each row counts
    got, want = _run(program, x)
    rtol, atol = tolerance(dtype.value)
    np.testing.assert_allclose(_as_float(got, dtype), _as_float(want, dtype), rtol=rtol, atol=atol)
    # Closer than the dtype's tolerance: every output within one unit of the last place of
    # the float64 reference rounded (softmax's outputs are positive, log_softmax's <= 0).
    assert _ulps(got, want).max() <= 1, _ulps(got, want).max()


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_16_bit_log_softmax_near_zero_keeps_its_last_digits(dtype):
    """A row one element dominates: its output -log(S) is small (S = 1 + e**-d + ...),
    where an absolute error of 4e-6 would be many float16 ulps. The largest element's
    exp is exactly 1 on the exp2 path too, so the error is relative: within one ulp.
    (Under about 1e-4 the float32 sum itself, 1 + (S - 1), keeps too few digits of
    S - 1 for one bfloat16 ulp, with the precise exp as well: the dominant element of a
    lead of 16 is 5 ulps off either way, as Paddle's and PyTorch's float32 sums are.)"""
    shape = (4, 129)
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    for row, lead in enumerate([6.0, 8.0, 10.0, 12.0]):  # outputs -5e-2 .. -1.5e-4
        x[row, row * 11] = x[row].max() + lead
    program = _program("pd_op.log_softmax", shape, dtype, axis=-1)
    got, want = _run(program, _feed(x, dtype))
    tiny = np.array([_as_float(want, dtype)[row, row * 11] for row in range(shape[0])])
    assert (tiny < 0).all() and (tiny > -0.1).all() and tiny.max() > -2e-4  # near 0
    assert _ulps(got, want).max() <= 1, _ulps(got, want).max()


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_16_bit_softmax_through_exp2_on_hostile_rows(dtype):
    """A NaN row, an all -inf row (NaN), a row of one huge value (1 and e**-64 = 0 in
    float16), equal values (1/n each), values far under the floor."""
    program = _program("pd_op.softmax", (5, 33), dtype, axis=-1)
    x = np.random.default_rng(5).standard_normal((5, 33)).astype(np.float32)
    x[0, 7] = np.nan
    x[1, :] = -np.inf
    x[2, :] = -3e4
    x[2, 11] = 3e4
    x[3, :] = 0.5
    x[4, ::2] = -6e4
    got, want = _run(program, _feed(x, dtype))
    got, want = _as_float(got, dtype), _as_float(want, dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[0]).all() and np.isnan(got[1]).all()
    assert got[2, 11] == 1.0
    rtol, atol = tolerance(dtype.value)
    np.testing.assert_allclose(got[2:], want[2:], rtol=rtol, atol=atol)
    np.testing.assert_allclose(got[3], np.float32(1 / 33), rtol=rtol)


@pytest.mark.parametrize("op", ["pd_op.softmax", "pd_op.log_softmax"])
def test_float32_softmax_and_log_softmax_keep_the_precise_exp(op):
    kernel = _kernel(cinn_py.compile(_program(op, (3, 33), F32, axis=-1), "cuda-emu").cuda_source)
    assert "expf(" in kernel and "exp2" not in kernel


LOG2E = 1.4426950408889634


def _clamp(y: e.Expr, c: float, upper: bool = False) -> e.Select:
    """The lowering's NaN-keeping max(y, c) (`a <= c ? c : a`), or min with `upper`."""
    bound = e.FloatImm(c, F32)
    return e.Select((e.GE if upper else e.LE)(y, bound), bound, y)


@pytest.mark.parametrize(
    ("make", "low"),
    [
        (lambda y: e.FloatImm(-3.5, F32), -3.5),
        # softmax's shifted exponent: max(y, -64) * log2 e
        (lambda y: e.Mul(_clamp(y, -64.0), e.FloatImm(LOG2E, F32)), -64.0 * LOG2E),
        (lambda y: e.Mul(e.FloatImm(2.0, F32), _clamp(y, -10.0)), -20.0),
        (lambda y: e.Add(_clamp(y, -1.0), e.FloatImm(-2.0, F32)), -3.0),
        (lambda y: e.Max(y, e.FloatImm(-7.0, F32)), -7.0),
        (lambda y: e.Select(e.LT(y, y), e.FloatImm(-1.0, F32), e.FloatImm(-4.0, F32)), -4.0),
        (lambda y: y, None),  # a free value
        (lambda y: e.Mul(_clamp(y, -64.0), e.FloatImm(-1.0, F32)), None),  # a flip: no floor
        (lambda y: e.Mul(_clamp(y, -64.0), y), None),
        (lambda y: e.Sub(_clamp(y, -1.0), y), None),  # y unbounded above
        (lambda y: _clamp(y, -64.0, upper=True), None),  # min(y, -64): no floor
        (lambda y: e.FloatImm(float("nan"), F32), None),
    ],
)
def test_float_lower_bounds(make, low):
    got = float_lower_bound(make(_y()))
    assert got == (None if low is None else pytest.approx(low))


@pytest.mark.parametrize("op", ["pd_op.softmax", "pd_op.log_softmax"])
def test_16_bit_softmax_exp_renders_as_the_normal_range_exp2(op):
    """Its exponent is at least -64 log2 e: `cinn_exp2_normal`, MUFU.EX2 alone."""
    kernel = _kernel(cinn_py.compile(_program(op, (3, 33), F16, axis=-1), "cuda-emu").cuda_source)
    assert "cinn_exp2_normal(" in kernel and "exp2f(" not in kernel


def test_an_unbounded_exp2_stays_exp2f():
    kernel = _kernel(cinn_py.compile(_program("pow2", [3, 33], F32), "cuda-emu").cuda_source)
    assert "exp2f(" in kernel and "cinn_exp2_normal" not in kernel


@pytest.mark.skipif(not binaries.tools_available()[0], reason=binaries.tools_available()[1])
def test_the_normal_range_exp2_is_one_mufu_in_the_sass():
    """softmax float16 [4, 1024]: one MUFU.EX2 an element of a thread's share of the row,
    and none of exp2f's range checks against -126 (FSETP) or its rescaling."""
    program = _program("pd_op.softmax", (4, 1024), F16, axis=-1)
    stages = PIRCompiler(program, "cuda", arch="sm_90").stages(until="codegen")
    sass = binaries.disassemble(nvrtc.compile(stages.source.source, "sm_90"))
    (kernel,) = stages.source.kernels
    assert sass.count("MUFU.EX2") == 1024 // kernel.block[0]  # one a thread's element
    assert "-126" not in sass


EXP2_BOTH = r"""
extern "C" __global__ void exp2_both(const float* x, float* normal, float* plain, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        normal[i] = cinn_exp2_normal(x[i]);
        plain[i] = exp2f(x[i]);
    }
}
"""


@pytest.mark.gpu
def test_gpu_exp2_normal_is_exp2f_bit_for_bit(tmp_path):
    """On the device, from -126 up (and for NaN, +-inf, subnormal and zero x) the runtime's
    `cinn_exp2_normal` gives exp2f's every bit."""
    cp = pytest.importorskip("cupy")
    from cinn_py.backends import cuda_module

    source = runtime_header() + EXP2_BOTH
    cubin = nvrtc.compile(source, cuda_module.pick_arch(cuda_module.device_arch()))
    (tmp_path / "exp2.cubin").write_bytes(cubin)
    kernel = cp.RawModule(path=str(tmp_path / "exp2.cubin")).get_function("exp2_both")
    sweep = np.linspace(-126.0, 128.0, 1 << 20, dtype=np.float32)
    rng = np.random.default_rng(3)
    specials = [np.nan, np.inf, 0.0, -0.0, 1e-40, -1e-40, -126.0, -125.99999, 127.99]
    x = np.concatenate([sweep, rng.uniform(-126, 0, 1 << 16).astype(np.float32), specials])
    x = cp.asarray(x.astype(np.float32))
    normal, plain = cp.empty_like(x), cp.empty_like(x)
    n = x.size
    kernel(((n + 255) // 256,), (256,), (x, normal, plain, np.int32(n)))
    a, b = cp.asnumpy(normal), cp.asnumpy(plain)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    keep = ~np.isnan(a)
    assert np.array_equal(a[keep].view(np.uint32), b[keep].view(np.uint32))
