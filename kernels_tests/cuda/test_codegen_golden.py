"""The CUDA C that codegen writes, as text: one golden kernel per kind of loop nest, the
source's prelude, launch dimensions, names, and the errors for IR it cannot render."""

from __future__ import annotations

import re

import pytest
from codegen_cases import all_cases
from codegen_helpers import buffer, flat_nest, function, serial_nest

from cinn_py.backends.codegen_cuda import generate_cuda, runtime_header
from cinn_py.errors import UnsupportedOpError
from cinn_py.ir.expr import (
    GT,
    Buffer,
    Call,
    CallType,
    Cast,
    FloatImm,
    IntImm,
    Load,
    Reduce,
    ReduceType,
    Var,
)
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    BindInfo,
    For,
    ForType,
    IfThenElse,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
)
from cinn_py.pir.dtypes import DataType

CASES = {case.name: case for case in all_cases()}
PRELUDE_END = "#endif /* CINN_PY_RUNTIME_H */\n\n"

GOLDEN = {
    "ew_f32_vec4": r"""
extern "C" __global__ void __launch_bounds__(256) fn_group_0(const float* var_3, const float* __restrict__ var_4, float* var_7) {
  const int i_b = blockIdx.x;
  const int i_t = threadIdx.x;
  const cinn_vec<float, 4> var_3_vec = *reinterpret_cast<const cinn_vec<float, 4>*>(var_3 + (i_b * 1024) + (i_t * 4));
  const cinn_vec<float, 4> var_4_vec = *reinterpret_cast<const cinn_vec<float, 4>*>(var_4 + (i_t * 4) % 128);
  cinn_vec<float, 4> var_7_vec;
  #pragma unroll
  for (int i_v = 0; i_v < 4; ++i_v) {
    var_7_vec.v[i_v] = expf(var_3_vec.v[i_v]) + var_4_vec.v[i_v];
  }
  *reinterpret_cast<cinn_vec<float, 4>*>(var_7 + (i_b * 1024) + (i_t * 4)) = var_7_vec;
}
""",
    "guard_vec": r"""
extern "C" __global__ void __launch_bounds__(8) fn_guard_vec(const float* var_0, float* var_1) {
  const int i_b = blockIdx.x;
  const int i_t = threadIdx.x;
  if ((((i_b * 32) + (i_t * 4)) / 6) < 10) {
    const cinn_vec<float, 4> var_0_vec = *reinterpret_cast<const cinn_vec<float, 4>*>(var_0 + (i_b * 32) + (i_t * 4));
    cinn_vec<float, 4> var_1_vec;
    #pragma unroll
    for (int i_v = 0; i_v < 4; ++i_v) {
      var_1_vec.v[i_v] = (var_0_vec.v[i_v] * var_0_vec.v[i_v]) - 1.5f;
    }
    *reinterpret_cast<cinn_vec<float, 4>*>(var_1 + (i_b * 32) + (i_t * 4)) = var_1_vec;
  }
}
""",
    "guard_lanes": r"""
extern "C" __global__ void __launch_bounds__(4) fn_guard_lanes(const float* var_0, float* var_1) {
  const int i_b = blockIdx.x;
  const int i_t = threadIdx.x;
  #pragma unroll
  for (int i_v = 0; i_v < 4; ++i_v) {
    if (((((i_b * 16) + (i_t * 4)) + i_v) / 7) < 5) {
      {
        const int i0_0 = (((i_b * 16) + (i_t * 4)) + i_v) / 7;
        const int i1_0 = (((i_b * 16) + (i_t * 4)) + i_v) % 7;
        var_1[(i0_0 * 7) + i1_0] = cinn_max(var_0[(i0_0 * 7) + i1_0], 0.0f);
      }
    }
  }
}
""",
    "f16_vec8": r"""
extern "C" __global__ void __launch_bounds__(64) fn_f16(const __half* var_0, const __half* __restrict__ var_1, __half* var_2) {
  const int i_b = blockIdx.x;
  const int i_t = threadIdx.x;
  const cinn_vec<__half, 8> var_0_vec = *reinterpret_cast<const cinn_vec<__half, 8>*>(var_0 + (i_b * 512) + (i_t * 8));
  const cinn_vec<__half, 8> var_1_vec = *reinterpret_cast<const cinn_vec<__half, 8>*>(var_1 + (i_b * 512) + (i_t * 8));
  cinn_vec<__half, 8> var_2_vec;
  #pragma unroll
  for (int i_v = 0; i_v < 8; ++i_v) {
    var_2_vec.v[i_v] = __float2half_rn(__half2float(var_0_vec.v[i_v]) * __half2float(var_1_vec.v[i_v]));
  }
  *reinterpret_cast<cinn_vec<__half, 8>*>(var_2 + (i_b * 512) + (i_t * 8)) = var_2_vec;
}
""",
    "bf16_vec8": r"""
extern "C" __global__ void __launch_bounds__(32) fn_bf16(const __nv_bfloat16* var_0, __nv_bfloat16* var_1) {
  const int i_b = blockIdx.x;
  const int i_t = threadIdx.x;
  const cinn_vec<__nv_bfloat16, 8> var_0_vec = *reinterpret_cast<const cinn_vec<__nv_bfloat16, 8>*>(var_0 + (i_b * 256) + (i_t * 8));
  cinn_vec<__nv_bfloat16, 8> var_1_vec;
  #pragma unroll
  for (int i_v = 0; i_v < 8; ++i_v) {
    var_1_vec.v[i_v] = __float2bfloat16_rn(tanhf(__bfloat162float(var_0_vec.v[i_v])));
  }
  *reinterpret_cast<cinn_vec<__nv_bfloat16, 8>*>(var_1 + (i_b * 256) + (i_t * 8)) = var_1_vec;
}
""",
    "bool_vec16": r"""
extern "C" __global__ void __launch_bounds__(16) fn_bool(const float* __restrict__ var_0, const float* __restrict__ var_1, bool* __restrict__ var_2) {
  const int i_b = blockIdx.x;
  const int i_t = threadIdx.x;
  const cinn_vec<float, 16> var_0_vec = *reinterpret_cast<const cinn_vec<float, 16>*>(var_0 + (i_b * 256) + (i_t * 16));
  const cinn_vec<float, 16> var_1_vec = *reinterpret_cast<const cinn_vec<float, 16>*>(var_1 + (i_b * 256) + (i_t * 16));
  cinn_vec<bool, 16> var_2_vec;
  #pragma unroll
  for (int i_v = 0; i_v < 16; ++i_v) {
    var_2_vec.v[i_v] = (var_0_vec.v[i_v] > var_1_vec.v[i_v]) && (!(isnan(var_0_vec.v[i_v]) != 0));
  }
  *reinterpret_cast<cinn_vec<bool, 16>*>(var_2 + (i_b * 256) + (i_t * 16)) = var_2_vec;
}
""",
    "int64_vec2": r"""
extern "C" __global__ void __launch_bounds__(25) fn_int64(const long long* var_0, const long long* __restrict__ var_1, long long* var_2) {
  const long long i_b = blockIdx.x;
  const long long i_t = threadIdx.x;
  const cinn_vec<long long, 2> var_0_vec = *reinterpret_cast<const cinn_vec<long long, 2>*>(var_0 + (i_b * 50ll) + (i_t * 2ll));
  const cinn_vec<long long, 2> var_1_vec = *reinterpret_cast<const cinn_vec<long long, 2>*>(var_1 + (i_b * 50ll) + (i_t * 2ll));
  cinn_vec<long long, 2> var_2_vec;
  #pragma unroll
  for (long long i_v = 0; i_v < 2; ++i_v) {
    var_2_vec.v[i_v] = cinn_wrap_sub(cinn_wrap_mul(cinn_abs(var_0_vec.v[i_v]), 3ll), var_1_vec.v[i_v] % 7ll);
  }
  *reinterpret_cast<cinn_vec<long long, 2>*>(var_2 + (i_b * 50ll) + (i_t * 2ll)) = var_2_vec;
}
""",
    "zero_d": r"""
extern "C" __global__ void __launch_bounds__(1) fn_scalar(const float* var_0, const float* __restrict__ var_1, float* var_2) {
  var_2[0] = (var_0[0] * var_1[0]) + 0.5f;
}
""",
    "two_nests": r"""
extern "C" __global__ void __launch_bounds__(256) fn_two_nests(const float* var_0, const float* var_1, float* var_2, float* var_3) {
  const int i_b = blockIdx.x;
  const int i_t = threadIdx.x;
  const cinn_vec<float, 4> var_0_vec = *reinterpret_cast<const cinn_vec<float, 4>*>(var_0 + (i_b * 1024) + (i_t * 4));
  cinn_vec<float, 4> var_2_vec;
  #pragma unroll
  for (int i_v = 0; i_v < 4; ++i_v) {
    var_2_vec.v[i_v] = var_0_vec.v[i_v] + 1.0f;
  }
  *reinterpret_cast<cinn_vec<float, 4>*>(var_2 + (i_b * 1024) + (i_t * 4)) = var_2_vec;
  if (blockIdx.x < 1) {
    const int j_b = blockIdx.x;
    if (threadIdx.x < 128) {
      const int j_t = threadIdx.x;
      if (((j_b * 128) + j_t) < 100) {
        {
          const int j0_0 = (j_b * 128) + j_t;
          var_3[j0_0] = var_1[j0_0] * 2.0f;
        }
      }
    }
  }
}
""",
    "unrolled": r"""
extern "C" __global__ void __launch_bounds__(24) fn_unrolled(const int* var_0, int* var_1) {
  const int i_b = blockIdx.x;
  const int i_t = threadIdx.x;
  #pragma unroll
  for (int i_v = 0; i_v < 4; ++i_v) {
    {
      const int i0_0 = (((i_b * 96) + (i_t * 4)) + i_v) / 12;
      const int i1_0 = ((i_t * 4) + i_v) % 12;
      var_1[(i0_0 * 12) + i1_0] = cinn_wrap_add(cinn_wrap_mul(var_0[(i0_0 * 12) + i1_0], 2), 1);
    }
  }
}
""",
    "broadcast_vec": r"""
extern "C" __global__ void __launch_bounds__(128) fn_broadcast(const float* var_0, const float* __restrict__ var_1, const float* __restrict__ var_2, float* var_3) {
  const int i_b = blockIdx.x;
  const int i_t = threadIdx.x;
  const cinn_vec<float, 4> var_0_vec = *reinterpret_cast<const cinn_vec<float, 4>*>(var_0 + (i_b * 512) + (i_t * 4));
  cinn_vec<float, 4> var_3_vec;
  #pragma unroll
  for (int i_v = 0; i_v < 4; ++i_v) {
    const int i0_0 = (((i_b * 512) + (i_t * 4)) + i_v) / 32;
    const int i1_0 = ((i_t * 4) + i_v) % 32;
    var_3_vec.v[i_v] = (var_0_vec.v[i_v] - var_1[i0_0]) + var_2[i0_0 + (i1_0 * 64)];
  }
  *reinterpret_cast<cinn_vec<float, 4>*>(var_3 + (i_b * 512) + (i_t * 4)) = var_3_vec;
}
""",
    # Value arithmetic and conversions in the runtime header's defined forms; the
    # offsets (index arithmetic) stay plain `int`.
    "defined_ints": r"""
extern "C" __global__ void __launch_bounds__(4) fn_defined_ints(const float* __restrict__ var_0, const int* __restrict__ var_1, const int* __restrict__ var_2, signed char* __restrict__ var_3, int* __restrict__ var_4, int* __restrict__ var_5, int* __restrict__ var_6) {
  const int c0__b = blockIdx.x;
  const int c0__t = threadIdx.x;
  const cinn_vec<float, 4> var_0_vec = *reinterpret_cast<const cinn_vec<float, 4>*>(var_0 + (c0__b * 16) + (c0__t * 4));
  cinn_vec<signed char, 4> var_3_vec;
  #pragma unroll
  for (int c0__v = 0; c0__v < 4; ++c0__v) {
    var_3_vec.v[c0__v] = cinn_float_to_int<signed char>(var_0_vec.v[c0__v]);
  }
  *reinterpret_cast<cinn_vec<signed char, 4>*>(var_3 + (c0__b * 16) + (c0__t * 4)) = var_3_vec;
  const int c1__b = blockIdx.x;
  const int c1__t = threadIdx.x;
  const cinn_vec<int, 4> var_1_vec = *reinterpret_cast<const cinn_vec<int, 4>*>(var_1 + (c1__b * 16) + (c1__t * 4));
  const cinn_vec<int, 4> var_2_vec = *reinterpret_cast<const cinn_vec<int, 4>*>(var_2 + (c1__b * 16) + (c1__t * 4));
  cinn_vec<int, 4> var_4_vec;
  #pragma unroll
  for (int c1__v = 0; c1__v < 4; ++c1__v) {
    var_4_vec.v[c1__v] = cinn_div(var_1_vec.v[c1__v], var_2_vec.v[c1__v]);
  }
  *reinterpret_cast<cinn_vec<int, 4>*>(var_4 + (c1__b * 16) + (c1__t * 4)) = var_4_vec;
  const int c2__b = blockIdx.x;
  const int c2__t = threadIdx.x;
  const cinn_vec<int, 4> var_1_vec_1 = *reinterpret_cast<const cinn_vec<int, 4>*>(var_1 + (c2__b * 16) + (c2__t * 4));
  const cinn_vec<int, 4> var_2_vec_1 = *reinterpret_cast<const cinn_vec<int, 4>*>(var_2 + (c2__b * 16) + (c2__t * 4));
  cinn_vec<int, 4> var_5_vec;
  #pragma unroll
  for (int c2__v = 0; c2__v < 4; ++c2__v) {
    var_5_vec.v[c2__v] = cinn_mod(var_1_vec_1.v[c2__v], var_2_vec_1.v[c2__v]);
  }
  *reinterpret_cast<cinn_vec<int, 4>*>(var_5 + (c2__b * 16) + (c2__t * 4)) = var_5_vec;
  const int c3__b = blockIdx.x;
  const int c3__t = threadIdx.x;
  const cinn_vec<int, 4> var_1_vec_2 = *reinterpret_cast<const cinn_vec<int, 4>*>(var_1 + (c3__b * 16) + (c3__t * 4));
  const cinn_vec<int, 4> var_2_vec_2 = *reinterpret_cast<const cinn_vec<int, 4>*>(var_2 + (c3__b * 16) + (c3__t * 4));
  cinn_vec<int, 4> var_6_vec;
  #pragma unroll
  for (int c3__v = 0; c3__v < 4; ++c3__v) {
    var_6_vec.v[c3__v] = cinn_wrap_sub(cinn_wrap_mul(var_1_vec_2.v[c3__v], var_1_vec_2.v[c3__v]), var_2_vec_2.v[c3__v]);
  }
  *reinterpret_cast<cinn_vec<int, 4>*>(var_6 + (c3__b * 16) + (c3__t * 4)) = var_6_vec;
}
""",
    "hostile_names": r"""
extern "C" __global__ void __launch_bounds__(32) a_b_system__rm__rf____(const float* x_y, const float* __restrict__ _1abc, float* int_1) {
  const int threadIdx_1 = threadIdx.x;
  {
    const int v__half = threadIdx_1;
    const float v_NAN = x_y[v__half] * _1abc[v__half];
    const float expf_1 = expf(v_NAN);
    int_1[v__half] = expf_1 + x_y[v__half];
  }
}
""",
}


def kernel_text(source: str) -> str:
    """The kernels of a generated source, without its includes and runtime header."""
    return source.split(PRELUDE_END, 1)[1]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_kernel(name):
    assert kernel_text(generate_cuda([CASES[name].func]).source) == GOLDEN[name].lstrip("\n")


def test_prelude_includes_only_the_headers_used():
    f32 = generate_cuda([CASES["ew_f32_vec4"].func]).source
    f16 = generate_cuda([CASES["f16_vec8"].func]).source
    bf16 = generate_cuda([CASES["bf16_vec8"].func]).source
    both = generate_cuda([CASES["casts"].func]).source
    assert [line for line in f32.splitlines() if line.startswith("#include")] == []
    assert [line for line in f16.splitlines() if line.startswith("#include")] == [
        "#include <cuda_fp16.h>"
    ]
    assert [line for line in bf16.splitlines() if line.startswith("#include")] == [
        "#include <cuda_bf16.h>"
    ]
    assert [line for line in both.splitlines() if line.startswith("#include")] == [
        "#include <cuda_fp16.h>",
        "#include <cuda_bf16.h>",
    ]


def test_the_runtime_header_is_pasted_once():
    source = generate_cuda([CASES["ew_f32_vec4"].func, CASES["zero_d"].func]).source
    assert source.count(runtime_header()) == 1
    assert source.startswith("// CUDA C generated by cinn_py: 2 kernel(s).\n\n/*")
    assert 'cinn_py_runtime.h"' not in source


def test_launch_of_each_kernel():
    funcs = [CASES[name].func for name in ("ew_f32_vec4", "two_nests", "zero_d", "int64_vec2")]
    kernels = generate_cuda(funcs).kernels
    assert [(k.name, k.grid, k.block, k.shared_mem) for k in kernels] == [
        ("fn_group_0", (8, 1, 1), (256, 1, 1), 0),
        ("fn_two_nests", (8, 1, 1), (256, 1, 1), 0),
        ("fn_scalar", (1, 1, 1), (1, 1, 1), 0),
        ("fn_int64", (2, 1, 1), (25, 1, 1), 0),
    ]
    assert [k.args for k in kernels] == [f.args for f in funcs]


def _nest_on_axes() -> LoweredFunc:
    """var_1[i, j, k] = var_0[i, j, k] + 1 with i on blockIdx.y (from 0), j on threadIdx.y
    (from 1: j covers 1..5 of 6), k an unrolled loop from 2."""
    x, y = (
        buffer("var_0", DataType.FLOAT32, [3, 6, 7]),
        buffer("var_1", DataType.FLOAT32, [3, 6, 7]),
    )
    nest = serial_nest(y, lambda iv: Load(x, iv) + FloatImm(1.0))
    i_loop = nest
    j_loop = i_loop.body.stmts[0]
    k_loop = j_loop.body.stmts[0]
    k_loop = For(k_loop.loop_var, 2, 5, ForType.UNROLLED, k_loop.body)
    j_loop = For(j_loop.loop_var, 1, 5, ForType.SERIAL, k_loop, BindInfo.THREAD_Y)
    i_loop = For(i_loop.loop_var, 0, 3, ForType.SERIAL, j_loop, BindInfo.BLOCK_Y)
    return function("fn_axes", [x], [y], [i_loop])


def test_y_axes_and_loops_that_start_above_zero():
    source = generate_cuda([_nest_on_axes()])
    assert (source.kernels[0].grid, source.kernels[0].block) == ((1, 3, 1), (1, 5, 1))
    assert kernel_text(source.source) == (
        'extern "C" __global__ void __launch_bounds__(5) fn_axes('
        "const float* var_0, float* var_1) {\n"
        "  const int i_0 = blockIdx.y;\n"
        "  const int i_1 = static_cast<int>(threadIdx.y) + 1;\n"
        "  #pragma unroll\n"
        "  for (int i_2 = 2; i_2 < 7; ++i_2) {\n"
        "    {\n"
        "      const int i0_0 = i_0;\n"
        "      const int i1_0 = i_1;\n"
        "      const int i2_0 = i_2;\n"
        "      var_1[((i0_0 * 42) + (i1_0 * 7)) + i2_0] = var_0[((i0_0 * 42) + (i1_0 * 7)) + i2_0] + 1.0f;\n"
        "    }\n"
        "  }\n"
        "}\n"
    )


def test_kernel_names_are_sanitized_and_unique():
    base = CASES["zero_d"].func
    funcs = [LoweredFunc(name, base.args, base.body) for name in ("fn.a", "fn_a", "blockIdx", "9")]
    assert [k.name for k in generate_cuda(funcs).kernels] == ["fn_a", "fn_a_1", "blockIdx_1", "_9"]


def test_hostile_names_never_reach_the_source():
    text = kernel_text(generate_cuda([CASES["hostile_names"].func]).source)
    assert text.count('"') == 2  # extern "C"
    assert "system(" not in text and "x.y" not in text
    assert not re.search(r"\b(?:NAN|__half|1abc|int)\b(?! )|\bexpf\b(?!\()", text)


# ---- errors ----------------------------------------------------------------------------


def _with_value(value_of) -> LoweredFunc:
    x, y = buffer("var_0", DataType.FLOAT32, [4]), buffer("var_1", DataType.FLOAT32, [4])
    return function("fn_bad", [x], [y], [serial_nest(y, lambda iv: value_of(x, iv))])


def test_nodes_without_a_cuda_form_are_unsupported():
    k = Var("k", DataType.INT32, 0, 4)

    def reduce(x, iv):
        return Reduce(ReduceType.SUM, FloatImm(0.0), Load(x, [k]), [k])

    # A Reduce is emitted as an accumulator loop before the Store that holds it; in a
    # guard's condition it has no C form.
    func = _with_value(reduce)
    nest = func.body.schedule_block.body.stmts[0]
    guarded = IfThenElse(
        GT(Reduce(ReduceType.SUM, FloatImm(0.0), FloatImm(1.0), [k]), FloatImm(0.0)), nest
    )
    func = LoweredFunc(
        func.name, func.args, ScheduleBlockRealize((), ScheduleBlock((), (), (), "root", guarded))
    )
    with pytest.raises(
        UnsupportedOpError,
        match=r"op 'ir.Reduce' appears outside a stored value \(code generation of fn_bad\)",
    ):
        generate_cuda([func])


def test_calls_must_be_known_intrinsics():
    def extern(x, iv):
        return Call("my_func", [Load(x, iv)], DataType.FLOAT32)

    def unknown(x, iv):
        return Call("sigmoid", [Load(x, iv)], DataType.FLOAT32, CallType.INTRINSIC)

    def arity(x, iv):
        return Call("pow", [Load(x, iv)], DataType.FLOAT32, CallType.INTRINSIC)

    def int_exp(x, iv):
        return Cast(DataType.FLOAT32, Call("exp", [IntImm(1)], DataType.INT32, CallType.INTRINSIC))

    with pytest.raises(UnsupportedOpError, match="op 'my_func' is an extern call"):
        generate_cuda([_with_value(extern)])
    with pytest.raises(
        UnsupportedOpError, match=r"op 'sigmoid' is not an intrinsic of 1 argument\(s\)"
    ):
        generate_cuda([_with_value(unknown)])
    with pytest.raises(
        UnsupportedOpError, match=r"op 'pow' is not an intrinsic of 1 argument\(s\)"
    ):
        generate_cuda([_with_value(arity)])
    with pytest.raises(UnsupportedOpError, match="op 'exp' has no form returning int32"):
        generate_cuda([_with_value(int_exp)])


def test_bound_loops_need_constant_extents():
    x, y = buffer("var_0", DataType.FLOAT32, [4]), buffer("var_1", DataType.FLOAT32, [4])
    nest = serial_nest(y, lambda iv: Load(x, iv))
    n = Var("n", DataType.INT32)
    loop = For(nest.loop_var, 0, n, ForType.SERIAL, nest.body, BindInfo.THREAD_X)
    func = LoweredFunc(
        "fn_dynamic",
        [Argument(x), Argument(y, ArgIO.OUTPUT), Argument(n)],
        ScheduleBlockRealize([], ScheduleBlock([], [], [], "root", loop)),
    )
    with pytest.raises(ValueError, match="loop i_0 bound to threadIdx.x needs a constant extent"):
        generate_cuda([func])


def test_blocks_are_at_most_1024_threads():
    x, y = buffer("var_0", DataType.FLOAT32, [64, 32]), buffer("var_1", DataType.FLOAT32, [64, 32])
    nest = serial_nest(y, lambda iv: Load(x, iv))
    inner = nest.body.stmts[0]
    inner = For(inner.loop_var, 0, 32, ForType.SERIAL, inner.body, BindInfo.THREAD_Y)
    nest = For(nest.loop_var, 0, 64, ForType.SERIAL, inner, BindInfo.THREAD_X)
    with pytest.raises(ValueError, match=r"block \(64, 32, 1\) has 2048 threads"):
        generate_cuda([function("fn_big", [x], [y], [nest])])


def test_symbolic_dims_must_be_arguments():
    """A buffer dim that reads a Var (a symbolic kernel's dim) indexes with it; the Var
    must be a scalar argument of the function."""
    n = Var("n", DataType.INT32)
    x, y = Buffer("var_0", DataType.FLOAT32, [3, n]), buffer("var_1", DataType.FLOAT32, [4])
    func = function("fn_dyn", [x], [y], [serial_nest(y, lambda iv: Load(x, [IntImm(1), iv[0]]))])
    with pytest.raises(ValueError, match="'n' is used where it is not defined"):
        generate_cuda([func])
    func = LoweredFunc(func.name, [*func.args, Argument(n)], func.body)
    text = generate_cuda([func]).source
    assert "const int n)" in text
    assert "var_1[i0_0] = var_0[i0_0 + n];" in text  # row 1 of [3, n]: offset 1 * n


def test_accesses_need_an_argument_and_variables_a_definition():
    other = buffer("var_9", DataType.FLOAT32, [4])
    stray = Var("stray", DataType.INT32)
    with pytest.raises(ValueError, match="'var_9' is used where it is not defined"):
        generate_cuda([_with_value(lambda x, iv: Load(other, iv))])
    with pytest.raises(ValueError, match="'stray' is used where it is not defined"):
        generate_cuda([_with_value(lambda x, iv: Load(x, [stray]))])


def test_offsets_into_buffers_past_2_31_elements_are_int64():
    x = buffer("var_0", DataType.FLOAT32, [65536, 65536])
    y = buffer("var_1", DataType.FLOAT32, [65536, 65536])
    nest = flat_nest(y, lambda iv: Load(x, iv), threads=256, lanes=4)
    text = kernel_text(generate_cuda([function("fn_huge", [x], [y], [nest])]).source)
    offset = (
        "static_cast<long long>(((i_b * 1024) + (i_t * 4)) % 65536) + "
        "(static_cast<long long>(((i_b * 1024) + (i_t * 4)) / 65536) * 65536ll)"
    )
    assert f"*reinterpret_cast<cinn_vec<float, 4>*>(var_1 + {offset}) = var_1_vec;" in text
