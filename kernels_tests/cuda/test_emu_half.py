"""The cuda-emu `cuda_fp16.h` / `cuda_bf16.h`: bit-exact against NumPy and exact rationals.

The headers under `cinn_py/backends/emu_include` are compiled here with g++ on their own
(no emulator core), into one driver program that applies an intrinsic to every element of
a binary input file. The expectations are built independently in NumPy (float64 computed,
rounded once) or with `fractions.Fraction` where float64 itself would round twice.
"""

from __future__ import annotations

import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

INCLUDE = Path(__file__).resolve().parents[2] / "cinn_py" / "backends" / "emu_include"
GXX = shutil.which("g++")

pytestmark = pytest.mark.skipif(GXX is None, reason="g++ is not installed")

FLAGS = ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{INCLUDE}"]
MODES = ("rn", "rz", "rd", "ru")
CANONICAL_NAN = 0x7FFF

PRELUDE = r"""
#include <cuda_bf16.h>  // brings in cuda_fp16.h, as NVIDIA's does

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

// float2 normally comes from the emulator core; defining it after the headers checks that
// they only need it declared.
struct float2 { float x, y; };

static_assert(sizeof(__half) == 2 && alignof(__half) == 2, "half");
static_assert(sizeof(__half2) == 4 && alignof(__half2) == 4, "half2");
static_assert(sizeof(__nv_bfloat16) == 2 && alignof(__nv_bfloat16) == 2, "bf16");
static_assert(sizeof(__nv_bfloat162) == 4 && alignof(__nv_bfloat162) == 4, "bf162");
static_assert(std::is_trivially_copyable<__half>::value, "half");
static_assert(std::is_trivially_copyable<__half2>::value, "half2");
static_assert(std::is_trivially_copyable<__nv_bfloat16>::value, "bf16");
static_assert(std::is_trivially_copyable<__nv_bfloat162>::value, "bf162");
static_assert(std::is_trivially_default_constructible<__half>::value, "half");
static_assert(std::is_standard_layout<__half2>::value, "half2");
static_assert(std::is_same<half, __half>::value && std::is_same<half2, __half2>::value, "typedefs");
static_assert(std::is_same<nv_bfloat16, __nv_bfloat16>::value, "typedefs");
static_assert(std::is_same<nv_bfloat162, __nv_bfloat162>::value, "typedefs");

template <class T>
static std::vector<T> load(const std::string &path) {
    std::vector<T> v;
    FILE *f = std::fopen(path.c_str(), "rb");
    if (!f) std::exit(2);
    std::fseek(f, 0, SEEK_END);
    const long n = std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    v.resize(static_cast<size_t>(n) / sizeof(T));
    if (!v.empty() && std::fread(v.data(), sizeof(T), v.size(), f) != v.size()) std::exit(3);
    std::fclose(f);
    return v;
}
template <class T>
static void save(const std::string &path, const std::vector<T> &v) {
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f) std::exit(4);
    if (!v.empty()) std::fwrite(v.data(), sizeof(T), v.size(), f);
    std::fclose(f);
}

template <class T> T from_bits(uint16_t b);
template <> inline __half from_bits<__half>(uint16_t b) { return __ushort_as_half(b); }
template <> inline __nv_bfloat16 from_bits<__nv_bfloat16>(uint16_t b) { return __ushort_as_bfloat16(b); }
inline uint16_t bits(__half h) { return __half_as_ushort(h); }
inline uint16_t bits(__nv_bfloat16 h) { return __bfloat16_as_ushort(h); }

using Cmd = std::function<void(const std::string &, const std::string &)>;
inline std::map<std::string, Cmd> &cmds() {
    static std::map<std::string, Cmd> table;
    return table;
}
void register_half();
void register_bf16();

// Elementwise over n-ary inputs laid out one after another in the input file.
template <class T, class F>
static void unary(const std::string &name, F f) {
    cmds()[name] = [f](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        std::vector<uint16_t> r(v.size());
        for (size_t i = 0; i < v.size(); ++i) r[i] = bits(f(from_bits<T>(v[i])));
        save(out, r);
    };
}
template <class T, class F>
static void binary(const std::string &name, F f) {
    cmds()[name] = [f](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        const size_t n = v.size() / 2;
        std::vector<uint16_t> r(n);
        for (size_t i = 0; i < n; ++i) r[i] = bits(f(from_bits<T>(v[i]), from_bits<T>(v[n + i])));
        save(out, r);
    };
}
template <class T, class F>
static void ternary(const std::string &name, F f) {
    cmds()[name] = [f](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        const size_t n = v.size() / 3;
        std::vector<uint16_t> r(n);
        for (size_t i = 0; i < n; ++i)
            r[i] = bits(f(from_bits<T>(v[i]), from_bits<T>(v[n + i]), from_bits<T>(v[2 * n + i])));
        save(out, r);
    };
}
// Vector forms: consecutive elements (2k, 2k+1) are the low and high lanes of one vector.
template <class T, class T2, class F>
static void unary2(const std::string &name, F f) {
    cmds()[name] = [f](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        std::vector<uint16_t> r(v.size());
        for (size_t k = 0; k + 1 < v.size(); k += 2) {
            const T2 y = f(T2(from_bits<T>(v[k]), from_bits<T>(v[k + 1])));
            r[k] = bits(y.x);
            r[k + 1] = bits(y.y);
        }
        save(out, r);
    };
}
template <class T, class T2, class F>
static void binary2(const std::string &name, F f) {
    cmds()[name] = [f](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        const size_t n = v.size() / 2;
        std::vector<uint16_t> r(n);
        for (size_t k = 0; k + 1 < n; k += 2) {
            const T2 a(from_bits<T>(v[k]), from_bits<T>(v[k + 1]));
            const T2 b(from_bits<T>(v[n + k]), from_bits<T>(v[n + k + 1]));
            const T2 y = f(a, b);
            r[k] = bits(y.x);
            r[k + 1] = bits(y.y);
        }
        save(out, r);
    };
}
template <class T, class T2, class F>
static void ternary2(const std::string &name, F f) {
    cmds()[name] = [f](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        const size_t n = v.size() / 3;
        std::vector<uint16_t> r(n);
        for (size_t k = 0; k + 1 < n; k += 2) {
            const T2 a(from_bits<T>(v[k]), from_bits<T>(v[k + 1]));
            const T2 b(from_bits<T>(v[n + k]), from_bits<T>(v[n + k + 1]));
            const T2 c(from_bits<T>(v[2 * n + k]), from_bits<T>(v[2 * n + k + 1]));
            const T2 y = f(a, b, c);
            r[k] = bits(y.x);
            r[k + 1] = bits(y.y);
        }
        save(out, r);
    };
}
template <class In, class Out, class F>
static void convert(const std::string &name, F f) {
    cmds()[name] = [f](const std::string &in, const std::string &out) {
        auto v = load<In>(in);
        std::vector<Out> r(v.size());
        for (size_t i = 0; i < v.size(); ++i) r[i] = f(v[i]);
        save(out, r);
    };
}

#define EMU_UN(p, T, T2, name, fn, fn2)                                              \
    unary<T>(p name, +[](T a) { return fn(a); });                                     \
    unary2<T, T2>(p name "_v", +[](T2 a) { return fn2(a); })
#define EMU_BIN(p, T, T2, name, fn, fn2)                                             \
    binary<T>(p name, +[](T a, T b) { return fn(a, b); });                            \
    binary2<T, T2>(p name "_v", +[](T2 a, T2 b) { return fn2(a, b); })
#define EMU_TO_INT(p, T, stem, fn, type)                                             \
    convert<uint16_t, type>(p stem "_rn", +[](uint16_t b) { return static_cast<type>(fn##_rn(from_bits<T>(b))); }); \
    convert<uint16_t, type>(p stem "_rz", +[](uint16_t b) { return static_cast<type>(fn##_rz(from_bits<T>(b))); }); \
    convert<uint16_t, type>(p stem "_rd", +[](uint16_t b) { return static_cast<type>(fn##_rd(from_bits<T>(b))); }); \
    convert<uint16_t, type>(p stem "_ru", +[](uint16_t b) { return static_cast<type>(fn##_ru(from_bits<T>(b))); })
#define EMU_FROM_INT(p, stem, fn, in_type, c_type)                                   \
    convert<in_type, uint16_t>(p stem "_rn", +[](in_type i) { return bits(fn##_rn(static_cast<c_type>(i))); }); \
    convert<in_type, uint16_t>(p stem "_rz", +[](in_type i) { return bits(fn##_rz(static_cast<c_type>(i))); }); \
    convert<in_type, uint16_t>(p stem "_rd", +[](in_type i) { return bits(fn##_rd(static_cast<c_type>(i))); }); \
    convert<in_type, uint16_t>(p stem "_ru", +[](in_type i) { return bits(fn##_ru(static_cast<c_type>(i))); })

// Everything both types share: the CUDA names are overloaded on the argument type.
template <class T, class T2>
static void register_common(const std::string &p) {
    EMU_BIN(p +, T, T2, "add", __hadd, __hadd2);
    EMU_BIN(p +, T, T2, "sub", __hsub, __hsub2);
    EMU_BIN(p +, T, T2, "mul", __hmul, __hmul2);
    EMU_BIN(p +, T, T2, "div", __hdiv, __h2div);
    EMU_BIN(p +, T, T2, "add_rn", __hadd_rn, __hadd2_rn);
    EMU_BIN(p +, T, T2, "sub_rn", __hsub_rn, __hsub2_rn);
    EMU_BIN(p +, T, T2, "mul_rn", __hmul_rn, __hmul2_rn);
    EMU_BIN(p +, T, T2, "add_sat", __hadd_sat, __hadd2_sat);
    EMU_BIN(p +, T, T2, "sub_sat", __hsub_sat, __hsub2_sat);
    EMU_BIN(p +, T, T2, "mul_sat", __hmul_sat, __hmul2_sat);
    EMU_BIN(p +, T, T2, "max", __hmax, __hmax2);
    EMU_BIN(p +, T, T2, "min", __hmin, __hmin2);
    EMU_BIN(p +, T, T2, "max_nan", __hmax_nan, __hmax2_nan);
    EMU_BIN(p +, T, T2, "min_nan", __hmin_nan, __hmin2_nan);
    binary<T>(p + "op_add", +[](T a, T b) { return a + b; });
    binary<T>(p + "op_sub", +[](T a, T b) { return a - b; });
    binary<T>(p + "op_mul", +[](T a, T b) { return a * b; });
    binary<T>(p + "op_div", +[](T a, T b) { return a / b; });
    binary<T>(p + "op_iadd", +[](T a, T b) { a += b; return a; });
    binary<T>(p + "op_imul", +[](T a, T b) { a *= b; return a; });
    binary2<T, T2>(p + "op_add_v", +[](T2 a, T2 b) { return a + b; });
    binary2<T, T2>(p + "op_mul_v", +[](T2 a, T2 b) { return a * b; });
    binary2<T, T2>(p + "op_div_v", +[](T2 a, T2 b) { T2 r = a; r /= b; return r; });
    ternary<T>(p + "fma", +[](T a, T b, T c) { return __hfma(a, b, c); });
    ternary<T>(p + "fma_sat", +[](T a, T b, T c) { return __hfma_sat(a, b, c); });
    ternary<T>(p + "fma_relu", +[](T a, T b, T c) { return __hfma_relu(a, b, c); });
    ternary2<T, T2>(p + "fma_v", +[](T2 a, T2 b, T2 c) { return __hfma2(a, b, c); });
    ternary2<T, T2>(p + "fma_relu_v", +[](T2 a, T2 b, T2 c) { return __hfma2_relu(a, b, c); });
    ternary2<T, T2>(p + "cmadd", +[](T2 a, T2 b, T2 c) { return __hcmadd(a, b, c); });
    EMU_UN(p +, T, T2, "neg", __hneg, __hneg2);
    EMU_UN(p +, T, T2, "abs", __habs, __habs2);
    unary<T>(p + "op_neg", +[](T a) { return -a; });
    EMU_UN(p +, T, T2, "exp", hexp, h2exp);
    EMU_UN(p +, T, T2, "exp2", hexp2, h2exp2);
    EMU_UN(p +, T, T2, "exp10", hexp10, h2exp10);
    EMU_UN(p +, T, T2, "log", hlog, h2log);
    EMU_UN(p +, T, T2, "log2", hlog2, h2log2);
    EMU_UN(p +, T, T2, "log10", hlog10, h2log10);
    EMU_UN(p +, T, T2, "sqrt", hsqrt, h2sqrt);
    EMU_UN(p +, T, T2, "rsqrt", hrsqrt, h2rsqrt);
    EMU_UN(p +, T, T2, "rcp", hrcp, h2rcp);
    EMU_UN(p +, T, T2, "sin", hsin, h2sin);
    EMU_UN(p +, T, T2, "cos", hcos, h2cos);
    EMU_UN(p +, T, T2, "tanh", htanh, h2tanh);
    EMU_UN(p +, T, T2, "floor", hfloor, h2floor);
    EMU_UN(p +, T, T2, "ceil", hceil, h2ceil);
    EMU_UN(p +, T, T2, "trunc", htrunc, h2trunc);
    EMU_UN(p +, T, T2, "rint", hrint, h2rint);

    // 12 comparisons per pair, then isnan/isinf: one byte each.
    cmds()[p + "cmp"] = [](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        const size_t n = v.size() / 2;
        std::vector<uint8_t> r;
        for (size_t i = 0; i < n; ++i) {
            const T a = from_bits<T>(v[i]), b = from_bits<T>(v[n + i]);
            const bool c[] = {__heq(a, b), __hne(a, b), __hlt(a, b), __hle(a, b), __hgt(a, b), __hge(a, b),
                              __hequ(a, b), __hneu(a, b), __hltu(a, b), __hleu(a, b), __hgtu(a, b), __hgeu(a, b),
                              a == b, a != b, a < b, a <= b, a > b, a >= b,
                              __hisnan(a), static_cast<bool>(__hisinf(a) == 1), static_cast<bool>(__hisinf(a) == -1)};
            for (bool x : c) r.push_back(x ? 1 : 0);
        }
        save(out, r);
    };
    // Vector comparisons on pairs of lanes: per op, [lane0 bits, lane1 bits, mask, bool].
    cmds()[p + "cmp2"] = [](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        const size_t n = v.size() / 2;
        std::vector<uint32_t> r;
        for (size_t k = 0; k + 1 < n; k += 2) {
            const T2 a(from_bits<T>(v[k]), from_bits<T>(v[k + 1]));
            const T2 b(from_bits<T>(v[n + k]), from_bits<T>(v[n + k + 1]));
#define EMU_CMP2(op)                                                                 \
            { const T2 y = __h##op##2(a, b); r.push_back(bits(y.x)); r.push_back(bits(y.y)); \
              r.push_back(__h##op##2_mask(a, b)); r.push_back(__hb##op##2(a, b) ? 1u : 0u); }
            EMU_CMP2(eq) EMU_CMP2(ne) EMU_CMP2(lt) EMU_CMP2(le) EMU_CMP2(gt) EMU_CMP2(ge)
            EMU_CMP2(equ) EMU_CMP2(neu) EMU_CMP2(ltu) EMU_CMP2(leu) EMU_CMP2(gtu) EMU_CMP2(geu)
#undef EMU_CMP2
            const T2 y = __hisnan2(a);
            r.push_back(bits(y.x)); r.push_back(bits(y.y));
            r.push_back((a == b) ? 1u : 0u); r.push_back((a != b) ? 1u : 0u);
        }
        save(out, r);
    };
}

"""

# The driver is three translation units (compiled in parallel; linking them also checks that
# the headers define nothing twice).
DRIVER_UNITS = {
    "half": PRELUDE + 'void register_half() { register_common<__half, __half2>("h_"); }\n',
    "bf16": PRELUDE
    + 'void register_bf16() { register_common<__nv_bfloat16, __nv_bfloat162>("b_"); }\n',
    "main": PRELUDE
    + r"""
int main(int argc, char **argv) {
    if (argc != 4) return 1;

    register_half();
    register_bf16();

    // float / double -> half / bfloat16 in each mode; the implicit constructors are rn.
    convert<float, uint16_t>("h_from_f", +[](float f) { return bits(__float2half(f)); });
    convert<float, uint16_t>("h_from_f_rn", +[](float f) { return bits(__float2half_rn(f)); });
    convert<float, uint16_t>("h_from_f_rz", +[](float f) { return bits(__float2half_rz(f)); });
    convert<float, uint16_t>("h_from_f_rd", +[](float f) { return bits(__float2half_rd(f)); });
    convert<float, uint16_t>("h_from_f_ru", +[](float f) { return bits(__float2half_ru(f)); });
    convert<float, uint16_t>("h_from_f_ctor", +[](float f) { __half h = f; return bits(h); });
    convert<float, uint16_t>("h_from_f_pair", +[](float f) { return bits(__floats2half2_rn(0.0f, f).y); });
    convert<double, uint16_t>("h_from_d", +[](double d) { return bits(__double2half(d)); });
    convert<double, uint16_t>("h_from_d_ctor", +[](double d) { __half h = d; return bits(h); });
    convert<float, uint16_t>("b_from_f", +[](float f) { return bits(__float2bfloat16(f)); });
    convert<float, uint16_t>("b_from_f_rn", +[](float f) { return bits(__float2bfloat16_rn(f)); });
    convert<float, uint16_t>("b_from_f_rz", +[](float f) { return bits(__float2bfloat16_rz(f)); });
    convert<float, uint16_t>("b_from_f_rd", +[](float f) { return bits(__float2bfloat16_rd(f)); });
    convert<float, uint16_t>("b_from_f_ru", +[](float f) { return bits(__float2bfloat16_ru(f)); });
    convert<float, uint16_t>("b_from_f_ctor", +[](float f) { __nv_bfloat16 h = f; return bits(h); });
    convert<float, uint16_t>("b_from_f_pair", +[](float f) { return bits(__floats2bfloat162_rn(f, 0.0f).x); });
    convert<double, uint16_t>("b_from_d", +[](double d) { return bits(__double2bfloat16(d)); });
    convert<double, uint16_t>("b_from_d_ctor", +[](double d) { __nv_bfloat16 h = d; return bits(h); });

    // half / bfloat16 -> float, through every spelling.
    convert<uint16_t, float>("h_to_f", +[](uint16_t b) { return __half2float(from_bits<__half>(b)); });
    convert<uint16_t, float>("h_to_f_op", +[](uint16_t b) { const float f = from_bits<__half>(b); return f; });
    convert<uint16_t, float>("h_to_f_low", +[](uint16_t b) { return __low2float(__halves2half2(from_bits<__half>(b), __half())); });
    convert<uint16_t, float>("h_to_f_high", +[](uint16_t b) { return __high2float(__halves2half2(__half(), from_bits<__half>(b))); });
    convert<uint16_t, float>("h_to_f_vec", +[](uint16_t b) { return __half22float2(__half2half2(from_bits<__half>(b))).y; });
    convert<uint16_t, float>("b_to_f", +[](uint16_t b) { return __bfloat162float(from_bits<__nv_bfloat16>(b)); });
    convert<uint16_t, float>("b_to_f_op", +[](uint16_t b) { const float f = from_bits<__nv_bfloat16>(b); return f; });
    convert<uint16_t, float>("b_to_f_vec", +[](uint16_t b) { return __bfloat1622float2(__bfloat162bfloat162(from_bits<__nv_bfloat16>(b))).x; });
    convert<uint16_t, uint16_t>("h_to_b", +[](uint16_t b) { return bits(__nv_bfloat16(from_bits<__half>(b))); });
    convert<uint16_t, uint16_t>("b_to_h", +[](uint16_t b) { return bits(__half(from_bits<__nv_bfloat16>(b))); });

    // To integers (saturating, NaN -> 0), every type and mode.
    EMU_TO_INT("h_", __half, "int", __half2int, int64_t);
    EMU_TO_INT("h_", __half, "short", __half2short, int64_t);
    EMU_TO_INT("h_", __half, "ll", __half2ll, int64_t);
    EMU_TO_INT("h_", __half, "uint", __half2uint, uint64_t);
    EMU_TO_INT("h_", __half, "ushort", __half2ushort, uint64_t);
    EMU_TO_INT("h_", __half, "ull", __half2ull, uint64_t);
    convert<uint16_t, int64_t>("h_char_rz", +[](uint16_t b) { return static_cast<int64_t>(__half2char_rz(from_bits<__half>(b))); });
    convert<uint16_t, uint64_t>("h_uchar_rz", +[](uint16_t b) { return static_cast<uint64_t>(__half2uchar_rz(from_bits<__half>(b))); });
    convert<uint16_t, int64_t>("h_int_op", +[](uint16_t b) { const int i = from_bits<__half>(b); return static_cast<int64_t>(i); });
    EMU_TO_INT("b_", __nv_bfloat16, "int", __bfloat162int, int64_t);
    EMU_TO_INT("b_", __nv_bfloat16, "short", __bfloat162short, int64_t);
    EMU_TO_INT("b_", __nv_bfloat16, "ll", __bfloat162ll, int64_t);
    EMU_TO_INT("b_", __nv_bfloat16, "uint", __bfloat162uint, uint64_t);
    EMU_TO_INT("b_", __nv_bfloat16, "ushort", __bfloat162ushort, uint64_t);
    EMU_TO_INT("b_", __nv_bfloat16, "ull", __bfloat162ull, uint64_t);
    convert<uint16_t, int64_t>("b_char_rz", +[](uint16_t b) { return static_cast<int64_t>(__bfloat162char_rz(from_bits<__nv_bfloat16>(b))); });
    convert<uint16_t, uint64_t>("b_uchar_rz", +[](uint16_t b) { return static_cast<uint64_t>(__bfloat162uchar_rz(from_bits<__nv_bfloat16>(b))); });
    convert<uint16_t, int64_t>("b_int_op", +[](uint16_t b) { const int i = from_bits<__nv_bfloat16>(b); return static_cast<int64_t>(i); });

    // From integers, every mode.
    EMU_FROM_INT("h_", "from_int", __int2half, int64_t, int);
    EMU_FROM_INT("h_", "from_ll", __ll2half, int64_t, long long);
    EMU_FROM_INT("h_", "from_uint", __uint2half, uint64_t, unsigned int);
    EMU_FROM_INT("h_", "from_ull", __ull2half, uint64_t, unsigned long long);
    convert<int64_t, uint16_t>("h_from_int_ctor", +[](int64_t i) { __half h = static_cast<int>(i); return bits(h); });
    EMU_FROM_INT("b_", "from_int", __int2bfloat16, int64_t, int);
    EMU_FROM_INT("b_", "from_ll", __ll2bfloat16, int64_t, long long);
    EMU_FROM_INT("b_", "from_uint", __uint2bfloat16, uint64_t, unsigned int);
    EMU_FROM_INT("b_", "from_ull", __ull2bfloat16, uint64_t, unsigned long long);
    convert<int64_t, uint16_t>("b_from_int_ctor", +[](int64_t i) { __nv_bfloat16 h = static_cast<int>(i); return bits(h); });

    // A kernel body written the way CUDA code is, with operators and implicit conversions.
    cmds()["kernel"] = [](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        const size_t n = v.size() / 3;
        std::vector<__half> in_h(v.size());
        std::memcpy(in_h.data(), v.data(), v.size() * sizeof(uint16_t));
        const __half *x = in_h.data();
        const __half *y = x + n;
        const __half *z = x + 2 * n;
        std::vector<__half> r(6 * n);
        __half acc = CUDART_ZERO_FP16;
        __half2 acc2 = __float2half2_rn(0.0f);
        for (size_t i = 0; i < n; ++i) {
            __half a = x[i];
            a = a * y[i] + z[i];                      // two roundings: __hmul then __hadd
            r[i] = a;
            __half2 p = make_half2(x[i], y[i]);
            const __half2 q = __halves2half2(z[i], x[i]);
            p = p * q + q;
            r[n + i] = __low2half(p);
            r[2 * n + i] = __high2half(p);
            float f = x[i];                           // implicit __half -> float
            f = f * 0.5f + 1.0f;
            __half h = f;                             // implicit float -> __half (rn)
            r[3 * n + i] = (x[i] > y[i]) ? h : -h;
            atomicAdd(&acc, x[i]);
            atomicAdd(&acc2, __half2half2(y[i]));
            r[4 * n + i] = acc;
            r[5 * n + i] = __hmax(acc2.x, acc2.y) == acc2.y ? __ldg(&acc2.x) : CUDART_NAN_FP16;
        }
        std::vector<uint16_t> o(r.size());
        for (size_t i = 0; i < r.size(); ++i) o[i] = __half_as_ushort(r[i]);
        save(out, o);
    };
    cmds()["bkernel"] = [](const std::string &in, const std::string &out) {
        auto v = load<uint16_t>(in);
        const size_t n = v.size() / 3;
        std::vector<uint16_t> o(2 * n);
        __nv_bfloat16 acc = CUDART_ZERO_BF16;
        for (size_t i = 0; i < n; ++i) {
            nv_bfloat16 a = __ushort_as_bfloat16(v[i]);
            const nv_bfloat16 b = __ushort_as_bfloat16(v[n + i]);
            const nv_bfloat16 c = __ushort_as_bfloat16(v[2 * n + i]);
            a = a * b + c;
            o[i] = __bfloat16_as_ushort(a);
            atomicAdd(&acc, b);
            o[n + i] = __bfloat16_as_ushort(acc);
        }
        save(out, o);
    };

    auto it = cmds().find(argv[1]);
    if (it == cmds().end()) {
        std::fprintf(stderr, "unknown command %s\n", argv[1]);
        return 1;
    }
    it->second(argv[2], argv[3]);
    return 0;
}
""",
}


# ---------------------------------------------------------------------------------------------
# The driver


class Driver:
    def __init__(self, exe: Path, workdir: Path):
        self.exe = exe
        self.workdir = workdir

    def __call__(self, cmd: str, *inputs: np.ndarray, out: type = np.uint16) -> np.ndarray:
        src = self.workdir / "in.bin"
        dst = self.workdir / "out.bin"
        src.write_bytes(b"".join(np.ascontiguousarray(a).tobytes() for a in inputs))
        proc = subprocess.run(
            [str(self.exe), cmd, str(src), str(dst)], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, f"{cmd}: rc={proc.returncode} {proc.stderr}"
        return np.fromfile(dst, dtype=out)


def _compile(source: str, workdir: Path, name: str, extra: list[str] | None = None) -> Path:
    src = workdir / f"{name}.cpp"
    src.write_text(source)
    exe = workdir / name
    proc = subprocess.run(
        [GXX, *FLAGS, *(extra or []), str(src), "-o", str(exe)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return exe


def _build_driver(workdir: Path) -> Path:
    jobs = []
    for name, source in DRIVER_UNITS.items():
        src = workdir / f"{name}.cpp"
        src.write_text(source)
        cmd = [GXX, *FLAGS, "-c", str(src), "-o", str(workdir / f"{name}.o")]
        jobs.append(
            subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        )
    for job in jobs:
        _, err = job.communicate(timeout=300)
        assert job.returncode == 0, err
    exe = workdir / "driver"
    objects = [str(workdir / f"{name}.o") for name in DRIVER_UNITS]
    proc = subprocess.run(
        [GXX, *objects, "-o", str(exe)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return exe


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Driver:
    workdir = tmp_path_factory.mktemp("emu_half")
    return Driver(_build_driver(workdir), workdir)


# ---------------------------------------------------------------------------------------------
# Reference arithmetic, independent of the headers


class Fmt:
    """A binary format with `mant` fraction bits and `exp` exponent bits."""

    def __init__(self, name: str, mant: int, exp: int):
        self.name = name
        self.mant = mant
        self.bias = (1 << (exp - 1)) - 1
        self.emin = 1 - self.bias
        self.emax = self.bias
        self.inf = ((1 << exp) - 1) << mant
        self.one = self.bias << mant
        self.max_finite = (2 - 2.0**-mant) * 2.0**self.emax

    def to_f64(self, bits: np.ndarray) -> np.ndarray:
        bits = np.asarray(bits, dtype=np.uint16)
        with np.errstate(invalid="ignore"):  # signalling NaNs
            if self is HALF:
                return bits.view(np.float16).astype(np.float64)
            return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)

    def is_nan(self, bits: np.ndarray) -> np.ndarray:
        return (np.asarray(bits, dtype=np.uint16) & 0x7FFF) > self.inf

    def from_exact_f64(self, y: np.ndarray) -> np.ndarray:
        """Bits of float64 values that are exactly representable (or +-inf) in this format."""
        if self is HALF:
            return y.astype(np.float16).view(np.uint16)
        return (y.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)

    def rn(self, x: np.ndarray) -> np.ndarray:
        """float64 -> this format, round to nearest even, once (no trip through float32)."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            _, e = np.frexp(x)  # |x| in [2^(e-1), 2^e)
            q = np.maximum(e - 1, self.emin) - self.mant  # exponent of the last place
            y = np.ldexp(np.rint(np.ldexp(x, -q)), q)  # the scaled value is < 2^(mant+2): exact
            y = np.where(np.abs(y) > self.max_finite, np.copysign(np.inf, x), y)
            out = self.from_exact_f64(y)
        return np.where(np.isnan(x), np.uint16(CANONICAL_NAN), out).astype(np.uint16)

    def directed(self, x: np.ndarray, nearest: np.ndarray, mode: str) -> np.ndarray:
        """rz/rd/ru from the round-to-nearest result: it brackets x with one of its neighbours."""
        x = np.asarray(x, dtype=np.float64)
        nearest = np.asarray(nearest, dtype=np.uint16)
        if mode == "rn":
            return nearest
        value = self.to_f64(nearest)
        key = np.where(
            nearest & 0x8000, -(nearest & 0x7FFF).astype(np.int64), nearest.astype(np.int64)
        )
        with np.errstate(invalid="ignore"):
            if mode == "rd":
                step = np.where(value > x, -1, 0)
            elif mode == "ru":
                step = np.where(value < x, 1, 0)
            else:  # rz: step back toward zero when nearest went past x in magnitude
                step = np.where(np.abs(value) > np.abs(x), np.where(x > 0, -1, 1), 0)
        key = key + step
        stepped = np.where(key < 0, 0x8000 | (-key), key)
        # a zero reached by stepping keeps the sign of x, as IEEE rounding does
        stepped = np.where(key == 0, np.where(x < 0, 0x8000, 0), stepped)
        out = np.where(step == 0, nearest, stepped).astype(np.uint16)
        return np.where(np.isnan(x), np.uint16(CANONICAL_NAN), out).astype(np.uint16)

    def exact(self, value: Fraction, mode: str = "rn", zero_negative: bool = False) -> int:
        """Round an exact rational once to this format (the reference for fma and integers)."""
        if value == 0:
            return 0x8000 if zero_negative else 0
        negative = value < 0
        sign = 0x8000 if negative else 0
        m = -value if negative else value
        e = m.numerator.bit_length() - m.denominator.bit_length()
        if Fraction(2) ** e > m:
            e -= 1
        if e > self.emax:
            to_inf = {"rn": True, "rz": False, "rd": negative, "ru": not negative}[mode]
            return sign | (self.inf if to_inf else self.inf - 1)
        q = max(e, self.emin) - self.mant
        scaled = m / Fraction(2) ** q
        whole = scaled.numerator // scaled.denominator
        rest = scaled - whole
        up = {
            "rn": rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1),
            "rz": False,
            "rd": rest > 0 and negative,
            "ru": rest > 0 and not negative,
        }[mode]
        return sign | (((max(e, self.emin) + self.bias - 1) << self.mant) + whole + int(up))


HALF = Fmt("half", 10, 5)
BF16 = Fmt("bf16", 7, 8)
FORMATS = {"h": HALF, "b": BF16}


def _assert_bits(got: np.ndarray, want: np.ndarray, inputs: tuple, what: str) -> None:
    got = np.asarray(got)
    want = np.asarray(want).astype(got.dtype)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    bad = np.flatnonzero(got != want)
    if bad.size:
        i = bad[0]
        shown = ", ".join(f"{np.asarray(a).ravel()[i]!r}" for a in inputs)
        raise AssertionError(
            f"{what}: {bad.size} of {got.size} differ; first at {i}: inputs ({shown}) "
            f"got {got[i]!r} want {want[i]!r}"
        )


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _special_bits(fmt: Fmt) -> np.ndarray:
    inf, one = fmt.inf, fmt.one
    vals = [
        0,
        0x8000,
        1,
        0x8001,
        inf,
        inf | 0x8000,
        inf + 1,
        0xFFFF,
        CANONICAL_NAN,
        inf - 1,
        (inf - 1) | 0x8000,
        one,
        one | 0x8000,
        1 << fmt.mant,
        (1 << fmt.mant) - 1,
        one + 1,
    ]
    return np.array(vals, dtype=np.uint16)


def _random_bits(fmt: Fmt, n: int, seed: int) -> np.ndarray:
    """Random patterns over the whole encoding, plus a band of moderate magnitudes so that
    sums and products of pairs land in range (and subnormals, infinities and NaNs appear).
    The length is even, so that the vector forms see every element as a lane."""
    n += n % 2
    rng = _rng(seed)
    anything = rng.integers(0, 1 << 16, n // 2, dtype=np.uint32)
    moderate = fmt.rn(rng.standard_normal(n - n // 2) * np.exp2(rng.integers(-8, 9, n - n // 2)))
    out = np.concatenate([anything.astype(np.uint16), moderate, _special_bits(fmt)])
    return rng.permutation(out)


ALL_BITS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


# ---------------------------------------------------------------------------------------------
# The headers themselves


def test_headers_compile_alone_without_warnings(tmp_path):
    cases = {
        "fp16_only": "#include <cuda_fp16.h>\nint main() { __half h = 1.0f; return (int)(float)h - 1; }\n",
        "bf16_only": (
            "#include <cuda_bf16.h>\n"  # NVIDIA's includes cuda_fp16.h: both types exist
            "int main() { __nv_bfloat16 b = 1.0f; __half h = 2.0f; return (int)(float)(b + b) - (int)(float)h; }\n"
        ),
        "both_twice": "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\nint main() {}\n",
    }
    for name, source in cases.items():
        _compile(source, tmp_path, name, ["-Wpedantic", "-Wshadow"])

    # As the emulator uses them: a prelude force-included first that defines the CUDA
    # qualifiers and float2, and two translation units linked together (inline, not static).
    prelude = tmp_path / "prelude.h"
    prelude.write_text(
        "#define __device__\n#define __host__\n#define __global__\n"
        "#define __forceinline__ inline __attribute__((always_inline))\n"
        "struct float2 { float x; float y; };\n"
        "inline float2 make_float2(float x, float y) { float2 r; r.x = x; r.y = y; return r; }\n"
    )
    unit = (
        "#include <cuda_bf16.h>\n"
        "__device__ __forceinline__ float2 f_{n}(__half2 h) {{ return __half22float2(h); }}\n"
        "__device__ float g_{n}(float x) {{ return f_{n}(__float22half2_rn(make_float2(x, x))).y; }}\n"
    )
    (tmp_path / "unit1.cpp").write_text(unit.format(n=1))
    (tmp_path / "unit2.cpp").write_text(
        unit.format(n=2)
        + "float g_1(float);\nint main() { return g_1(1.0f) == g_2(1.0f) ? 0 : 1; }\n"
    )
    proc = subprocess.run(
        [
            GXX,
            *FLAGS,
            "-include",
            str(prelude),
            str(tmp_path / "unit1.cpp"),
            str(tmp_path / "unit2.cpp"),
            "-o",
            str(tmp_path / "linked"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run([str(tmp_path / "linked")], timeout=60).returncode == 0


KERNEL_UNDER_CORE = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void k(const __half *x, __nv_bfloat16 *y, float2 *f, __half *sum, __half2 *sum2) {
    const int i = threadIdx.x;
    __half v = __ldg(x + i);
    v = __shfl_xor_sync(0xffffffffu, v, 1) + v;
    atomicAdd(sum, v);
    atomicAdd(sum2, __half2half2(v));
    f[i] = __half22float2(__halves2half2(v, v));
    y[i] = __float2bfloat16(__low2float(__float22half2_rn(f[i]))) * __nv_bfloat16(v);
    __shared__ __half tile[32];
    tile[i] = v;
    __syncthreads();
    if (tile[31 - i] > v) y[i] = hexp(y[i]);
}
"""


@pytest.mark.skipif(
    not (INCLUDE / "cinn_emu.h").is_file(), reason="the emulator core (cinn_emu.h) is not there"
)
def test_headers_compile_after_the_emulator_core(tmp_path):
    """As cuda_emu compiles kernels: cinn_emu.h force-included first (its qualifiers, float2,
    generic __ldg / atomicAdd / shuffles), then the kernel's own #include <cuda_fp16.h>."""
    src = tmp_path / "kernel.cu"
    src.write_text(KERNEL_UNDER_CORE)
    cmd = [GXX, "-x", "c++", *FLAGS, "-include", "cinn_emu.h", "-fsyntax-only", str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------------------------------------
# Conversions


def test_half_to_float_is_exact_for_all_65536_patterns(run):
    want = ALL_BITS.view(np.float16).astype(np.float32).view(np.uint32)
    want = np.where(HALF.is_nan(ALL_BITS), np.uint32(0x7FFFFFFF), want)  # GPU: canonical NaN
    for cmd in ("h_to_f", "h_to_f_op", "h_to_f_low", "h_to_f_high", "h_to_f_vec"):
        _assert_bits(run(cmd, ALL_BITS, out=np.uint32), want, (ALL_BITS,), cmd)


def test_bfloat16_to_float_is_the_top_half_for_all_65536_patterns(run):
    want = ALL_BITS.astype(np.uint32) << 16
    for cmd in ("b_to_f", "b_to_f_op", "b_to_f_vec"):
        _assert_bits(run(cmd, ALL_BITS, out=np.uint32), want, (ALL_BITS,), cmd)


def _float_samples(fmt: Fmt, seed: int) -> np.ndarray:
    """Random float32 bit patterns (all classes), every tie between neighbouring values of
    `fmt` and the floats just either side of it, and the overflow/underflow edges."""
    rng = _rng(seed)
    anything = rng.integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    finite = ALL_BITS[~fmt.is_nan(ALL_BITS) & ((ALL_BITS & 0x7FFF) != fmt.inf)]
    values = fmt.to_f64(np.sort(finite[finite < 0x8000]))
    ties = ((values[:-1] + values[1:]) / 2).astype(np.float32)  # exact in float32
    ties = np.concatenate([ties, -ties])
    near = np.concatenate(
        [np.nextafter(ties, np.float32(np.inf)), np.nextafter(ties, np.float32(-np.inf))]
    )
    top = np.float32(fmt.max_finite)
    edges = np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            top,
            -top,
            np.nextafter(top, np.float32(np.inf)),
            np.float32(2.0**-149),
            np.float32(-(2.0**-149)),
            np.finfo(np.float32).max,
            np.finfo(np.float32).tiny,
            65519.99609375,
            65520.0,
            2.0**-25,
            2.0**-24 * 1.5,
            3e-8,
            -3e-8,
        ],
        dtype=np.float32,
    )
    nans = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0xFFBFFFFF], dtype=np.uint32).view(
        np.float32
    )
    return np.concatenate([anything, ties, near, edges, nans]).astype(np.float32)


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_float_to_16_bit_in_every_rounding_mode(run, prefix):
    fmt = FORMATS[prefix]
    x = _float_samples(fmt, seed=1 if prefix == "h" else 2)
    with np.errstate(invalid="ignore"):  # signalling NaNs
        x64 = x.astype(np.float64)
    if fmt is HALF:
        with np.errstate(over="ignore"):
            nearest = x.astype(np.float16).view(np.uint16)  # NumPy's own float32 -> half, RNE
    else:  # round-to-nearest-even on the float32 bits, as bfloat16 is the top half
        u = x.view(np.uint32).astype(np.uint64)
        nearest = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nearest = np.where(np.isnan(x), np.uint16(CANONICAL_NAN), nearest)
    _assert_bits(fmt.rn(x64), nearest, (x,), "reference rn helper agrees with NumPy")
    for suffix in ("", "_rn", "_ctor", "_pair"):
        _assert_bits(run(f"{prefix}_from_f{suffix}", x), nearest, (x,), f"{prefix}_from_f{suffix}")
    for mode in ("rz", "rd", "ru"):
        want = fmt.directed(x64, nearest, mode)
        _assert_bits(run(f"{prefix}_from_f_{mode}", x), want, (x,), f"{prefix}_from_f_{mode}")


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_double_to_16_bit_rounds_once(run, prefix):
    fmt = FORMATS[prefix]
    rng = _rng(3)
    anything = rng.integers(0, 1 << 64, 100_000, dtype=np.uint64).view(np.float64)
    finite = ALL_BITS[~fmt.is_nan(ALL_BITS) & ((ALL_BITS & 0x7FFF) < fmt.inf)]
    values = fmt.to_f64(np.sort(finite[finite < 0x8000]))
    ties = (values[:-1] + values[1:]) / 2
    # a tie plus or minus a bit that float32 cannot hold: a float32 detour would round twice
    tiny = np.ldexp(np.abs(ties), -30)
    traps = np.concatenate([ties + tiny, ties - tiny, -(ties + tiny), ties])
    spread = rng.standard_normal(50_000) * np.exp2(rng.integers(-140, 130, 50_000))
    x = np.concatenate(
        [anything, traps, spread, [np.inf, -np.inf, np.nan, 1e300, -1e-300, 0.0, -0.0]]
    )
    want = fmt.rn(x)
    if fmt is HALF:
        with np.errstate(over="ignore"):
            numpy_rn = np.where(
                np.isnan(x), np.uint16(CANONICAL_NAN), x.astype(np.float16).view(np.uint16)
            )
        _assert_bits(want, numpy_rn, (x,), "reference rn helper agrees with NumPy")
    for suffix in ("", "_ctor"):
        _assert_bits(run(f"{prefix}_from_d{suffix}", x), want, (x,), f"{prefix}_from_d{suffix}")


def test_half_and_bfloat16_convert_into_each_other_rounding_once(run):
    _assert_bits(
        run("h_to_b", ALL_BITS), BF16.rn(HALF.to_f64(ALL_BITS)), (ALL_BITS,), "half -> bf16"
    )
    _assert_bits(
        run("b_to_h", ALL_BITS), HALF.rn(BF16.to_f64(ALL_BITS)), (ALL_BITS,), "bf16 -> half"
    )


INT_TYPES = {
    "int": (-(2**31), 2**31 - 1),
    "short": (-(2**15), 2**15 - 1),
    "ll": (-(2**63), 2**63 - 1),
    "uint": (0, 2**32 - 1),
    "ushort": (0, 2**16 - 1),
    "ull": (0, 2**64 - 1),
}
ROUND_TO_INT = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_to_integers_saturate_and_send_nan_to_zero(run, prefix):
    fmt = FORMATS[prefix]
    x = fmt.to_f64(ALL_BITS)
    nan = np.isnan(x)
    for name, (lo, hi) in INT_TYPES.items():
        out = np.int64 if lo < 0 else np.uint64
        for mode, fn in ROUND_TO_INT.items():
            r = fn(np.where(nan, 0.0, x))
            over = r >= float(hi + 1)  # hi + 1 and lo are powers of two: exact in float64
            under = r < float(lo)
            inside = np.where(over | under, 0.0, r).astype(out)
            want = np.where(over, out(hi), np.where(under, out(lo), inside))
            want = np.where(nan, out(0), want).astype(out)
            got = run(f"{prefix}_{name}_{mode}", ALL_BITS, out=out)
            _assert_bits(got, want, (ALL_BITS,), f"{prefix}_{name}_{mode}")
    for name, lo, hi, out in (("char", -128, 127, np.int64), ("uchar", 0, 255, np.uint64)):
        want = np.where(nan, 0, np.clip(np.trunc(np.where(nan, 0, x)), lo, hi)).astype(out)
        _assert_bits(
            run(f"{prefix}_{name}_rz", ALL_BITS, out=out), want, (ALL_BITS,), f"{prefix}_{name}_rz"
        )
    want = np.where(nan, 0, np.clip(np.trunc(np.where(nan, 0, x)), -(2**31), 2**31 - 1)).astype(
        np.int64
    )
    _assert_bits(
        run(f"{prefix}_int_op", ALL_BITS, out=np.int64), want, (ALL_BITS,), "operator int()"
    )


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_from_integers_in_every_rounding_mode(run, prefix):
    fmt = FORMATS[prefix]
    rng = _rng(4)
    edges = [2**31 - 1, -(2**31), 65504, 65520, 65519, 65536, 2**24 + 1, 2**25 + 3, 0, -1]
    int32 = np.concatenate(
        [np.arange(-70_000, 70_000, 7), edges, rng.integers(-(2**31), 2**31, 20_000)]
    )
    int32 = int32.astype(np.int64)
    uint32 = np.concatenate([np.abs(int32), [2**32 - 1, 2**31 + 1]]).astype(np.uint64)
    # 32-bit integers are exact in float64: NumPy's rounding gives the expectation ...
    for name, values in (("int", int32), ("uint", uint32)):
        x = values.astype(np.float64)
        nearest = fmt.rn(x)
        for mode in MODES:
            want = fmt.directed(x, nearest, mode)
            _assert_bits(
                run(f"{prefix}_from_{name}_{mode}", values),
                want,
                (values,),
                f"{prefix}_from_{name}_{mode}",
            )
            _assert_bits(
                run(f"{prefix}_from_{'ll' if name == 'int' else 'ull'}_{mode}", values),
                want,
                (values,),
                f"64-bit conversion of 32-bit values, {mode}",
            )
    _assert_bits(
        run(f"{prefix}_from_int_ctor", int32),
        fmt.rn(int32.astype(np.float64)),
        (int32,),
        "__half(int)",
    )
    # ... 64-bit ones are not: round the exact integer with Fractions.
    int64 = np.concatenate(
        [
            rng.integers(-(2**63), 2**63, 1_500, dtype=np.int64),
            np.array([2**63 - 1, -(2**63), 2**62 + 1, 2**53 + 1], dtype=np.int64),
        ]
    )
    uint64 = np.concatenate(
        [
            rng.integers(0, 2**64, 1_500, dtype=np.uint64),
            np.array([2**64 - 1, 2**63 + 1, 2**53 + 1], dtype=np.uint64),
        ]
    )
    for name, values in (("ll", int64), ("ull", uint64)):
        exact = [Fraction(int(v)) for v in values.tolist()]
        for mode in MODES:
            want = np.array([fmt.exact(v, mode) for v in exact], dtype=np.uint16)
            _assert_bits(
                run(f"{prefix}_from_{name}_{mode}", values),
                want,
                (values,),
                f"{prefix}_from_{name}_{mode}",
            )


# ---------------------------------------------------------------------------------------------
# Arithmetic


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_add_sub_mul_div_are_rounded_once_like_the_gpu(run, prefix):
    """The GPU's add/sub/mul.f16 (and the bf16 fma-based forms) round the exact result once.
    The float64 result of two 16-bit values rounded once more is that value: products are
    exact in float64, and 53 >= 2p + 2 makes the double rounding of +, -, / innocuous."""
    fmt = FORMATS[prefix]
    n = 120_000
    a, b = _random_bits(fmt, n, seed=10), _random_bits(fmt, n, seed=11)
    da, db = fmt.to_f64(a), fmt.to_f64(b)
    with np.errstate(all="ignore"):
        exact = {"add": da + db, "sub": da - db, "mul": da * db, "div": da / db}
    for op, value in exact.items():
        want = fmt.rn(value)
        names = (
            [op, f"{op}_rn", f"{op}_v", f"{op}_rn_v"]
            if op != "div"
            else ["div", "div_v", "op_div", "op_div_v"]
        )
        if op in ("add", "mul"):
            names += [f"op_{op}", f"op_i{op}", f"op_{op}_v"]
        if op == "sub":
            names += ["op_sub"]
        for name in names:
            _assert_bits(run(f"{prefix}_{name}", a, b), want, (a, b), f"{prefix}_{name}")
        if op != "div":  # .sat clamps to [+0, 1] and sends NaN to +0
            sat = fmt.rn(np.where(np.isnan(value), 0.0, np.clip(value, 0.0, 1.0)))
            sat = np.where(sat == 0x8000, np.uint16(0), sat).astype(np.uint16)
            for name in (f"{op}_sat", f"{op}_sat_v"):
                _assert_bits(run(f"{prefix}_{name}", a, b), sat, (a, b), f"{prefix}_{name}")


def _fma_reference(fmt: Fmt, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Exact a*b + c rounded once, with Fractions (float64 cannot hold every bf16 a*b + c)."""
    da, db, dc = fmt.to_f64(a), fmt.to_f64(b), fmt.to_f64(c)
    with np.errstate(all="ignore"):
        naive = da * db + dc  # right for NaN/inf and for the sign of an exact zero
    out = fmt.rn(naive)
    finite = np.flatnonzero(np.isfinite(naive))
    for i in finite.tolist():
        value = Fraction(da[i]) * Fraction(db[i]) + Fraction(dc[i])
        out[i] = fmt.exact(value, "rn", zero_negative=bool(np.signbit(naive[i])))
    return out


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_fma_rounds_the_exact_result_once(run, prefix):
    fmt = FORMATS[prefix]
    n = 6_000
    a, b, c = (_random_bits(fmt, n, seed=s) for s in (20, 21, 22))
    if fmt is BF16:
        # 1.5 * (odd m / 128) is exactly halfway between two bf16 values for m < 171; with a
        # c far below it float64 keeps only the tie, and float64-then-bf16 rounds to even
        # where the exact sum is on the other side of the tie.
        b_trap = np.array([0x3F80 | (m - 128) for m in range(129, 171, 2)], dtype=np.uint16)
        c_trap = np.array([0x0001, 0x8001, 0x0D80, 0x8D80], dtype=np.uint16)  # +-2^-133, +-2^-100
        bt, ct = (g.ravel() for g in np.meshgrid(b_trap, c_trap))
        at = np.full(bt.size, 0x3FC0, dtype=np.uint16)  # 1.5
        naive = fmt.rn(fmt.to_f64(at) * fmt.to_f64(bt) + fmt.to_f64(ct))
        assert (naive != _fma_reference(fmt, at, bt, ct)).sum() >= 10, "traps should defeat float64"
        a, b, c = np.concatenate([a, at]), np.concatenate([b, bt]), np.concatenate([c, ct])
    want = _fma_reference(fmt, a, b, c)
    for name in ("fma", "fma_v"):
        _assert_bits(run(f"{prefix}_{name}", a, b, c), want, (a, b, c), f"{prefix}_{name}")
    value = fmt.to_f64(want)
    sat = fmt.rn(np.where(np.isnan(value), 0.0, np.clip(value, 0.0, 1.0)))
    sat = np.where(sat == 0x8000, np.uint16(0), sat).astype(np.uint16)
    _assert_bits(run(f"{prefix}_fma_sat", a, b, c), sat, (a, b, c), f"{prefix}_fma_sat")
    relu = np.where(
        fmt.is_nan(want), np.uint16(CANONICAL_NAN), np.where(value < 0, 0, want)
    ).astype(np.uint16)
    relu = np.where(want == 0x8000, np.uint16(0), relu)  # max(-0, +0) = +0
    for name in ("fma_relu", "fma_relu_v"):
        _assert_bits(run(f"{prefix}_{name}", a, b, c), relu, (a, b, c), f"{prefix}_{name}")


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_complex_multiply_add_uses_the_gpus_fma_order(run, prefix):
    fmt = FORMATS[prefix]
    n = 4_000
    a, b, c = (_random_bits(fmt, n, seed=s)[: 2 * (n // 2)] for s in (30, 31, 32))
    ar, ai, br, bi, cr, ci = a[0::2], a[1::2], b[0::2], b[1::2], c[0::2], c[1::2]
    neg_ai = np.where(fmt.is_nan(ai), np.uint16(CANONICAL_NAN), ai ^ 0x8000).astype(np.uint16)
    re = _fma_reference(fmt, neg_ai, bi, _fma_reference(fmt, ar, br, cr))
    im = _fma_reference(fmt, ai, br, _fma_reference(fmt, ar, bi, ci))
    want = np.stack([re, im], axis=1).ravel()
    _assert_bits(run(f"{prefix}_cmadd", a, b, c), want, (a, b, c), f"{prefix}_cmadd")


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_neg_abs_max_min_and_nan_handling(run, prefix):
    fmt = FORMATS[prefix]
    a, b = _random_bits(fmt, 60_000, seed=40), _random_bits(fmt, 60_000, seed=41)
    # equal pairs, signed zeros and NaN pairs
    extra_a = np.array(
        [0, 0x8000, 0x8000, 0, fmt.inf + 5, 0xFFFF, fmt.one, fmt.inf], dtype=np.uint16
    )
    extra_b = np.array(
        [0x8000, 0, 0x8000, 0, fmt.inf + 9, fmt.one, 0xFFFF, fmt.inf], dtype=np.uint16
    )
    a, b = np.concatenate([a, extra_a]), np.concatenate([b, extra_b])
    na, nb = fmt.is_nan(a), fmt.is_nan(b)
    da, db = fmt.to_f64(a), fmt.to_f64(b)
    nan = np.uint16(CANONICAL_NAN)
    neg = np.where(na, nan, a ^ 0x8000).astype(np.uint16)
    for name in ("neg", "neg_v", "op_neg"):
        _assert_bits(run(f"{prefix}_{name}", a), neg, (a,), f"{prefix}_{name}")
    absolute = np.where(na, nan, a & 0x7FFF).astype(np.uint16)
    for name in ("abs", "abs_v"):
        _assert_bits(run(f"{prefix}_{name}", a), absolute, (a,), f"{prefix}_{name}")
    with np.errstate(invalid="ignore"):
        bigger = np.where(da == db, a & b, np.where(da > db, a, b))  # +0 is the max of +-0
        smaller = np.where(da == db, a | b, np.where(da < db, a, b))
    for op, pick in (("max", bigger), ("min", smaller)):
        want = np.where(na & nb, nan, np.where(na, b, np.where(nb, a, pick))).astype(np.uint16)
        for name in (op, f"{op}_v"):
            _assert_bits(run(f"{prefix}_{name}", a, b), want, (a, b), f"{prefix}_{name}")
        want = np.where(na | nb, nan, pick).astype(np.uint16)
        for name in (f"{op}_nan", f"{op}_nan_v"):
            _assert_bits(run(f"{prefix}_{name}", a, b), want, (a, b), f"{prefix}_{name}")


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_comparisons_are_ordered_or_unordered_around_nan(run, prefix):
    fmt = FORMATS[prefix]
    a, b = _random_bits(fmt, 40_000, seed=50), _random_bits(fmt, 40_000, seed=51)
    same = _random_bits(fmt, 2_000, seed=52)
    a, b = np.concatenate([a, same, [0, 0x8000]]), np.concatenate([b, same, [0x8000, 0]])
    even = a.size // 2 * 2
    a, b = a[:even].astype(np.uint16), b[:even].astype(np.uint16)
    da, db = fmt.to_f64(a), fmt.to_f64(b)
    unordered = np.isnan(da) | np.isnan(db)
    with np.errstate(invalid="ignore"):
        ordered = [da == db, (da != db) & ~unordered, da < db, da <= db, da > db, da >= db]
    flipped = [
        ordered[0] | unordered,
        da != db,
        ordered[2] | unordered,
        ordered[3] | unordered,
        ordered[4] | unordered,
        ordered[5] | unordered,
    ]
    # operators: == is ordered, != is unordered (as in CUDA), the rest ordered
    operators = [ordered[0], flipped[1], *ordered[2:]]
    special = [np.isnan(da), da == np.inf, da == -np.inf]
    want = np.stack(ordered + flipped + operators + special, axis=1).astype(np.uint8)
    got = run(f"{prefix}_cmp", a, b, out=np.uint8).reshape(a.size, -1)
    _assert_bits(got, want, (a, b), f"{prefix} comparisons (column = op)")

    got2 = run(f"{prefix}_cmp2", a, b, out=np.uint32).reshape(a.size // 2, 13, 4)
    lanes = np.stack(ordered + flipped, axis=1).reshape(a.size // 2, 2, 12).transpose(0, 2, 1)
    one = np.uint32(fmt.one)
    _assert_bits(
        got2[:, :12, 0], np.where(lanes[:, :, 0], one, 0), (a[0::2], b[0::2]), "vector op, low lane"
    )
    _assert_bits(
        got2[:, :12, 1],
        np.where(lanes[:, :, 1], one, 0),
        (a[1::2], b[1::2]),
        "vector op, high lane",
    )
    mask = np.where(lanes[:, :, 0], 0xFFFF, 0) | np.where(lanes[:, :, 1], 0xFFFF0000, 0)
    _assert_bits(got2[:, :12, 2], mask, (a[0::2], b[0::2]), "vector op _mask")
    _assert_bits(
        got2[:, :12, 3], lanes[:, :, 0] & lanes[:, :, 1], (a[0::2], b[0::2]), "vector op __hb*2"
    )
    isnan2 = np.isnan(da).reshape(-1, 2)
    _assert_bits(got2[:, 12, 0], np.where(isnan2[:, 0], one, 0), (a[0::2],), "__hisnan2 low")
    _assert_bits(got2[:, 12, 1], np.where(isnan2[:, 1], one, 0), (a[1::2],), "__hisnan2 high")
    _assert_bits(got2[:, 12, 2], lanes[:, 0, 0] & lanes[:, 0, 1], (a[0::2], b[0::2]), "vector ==")
    _assert_bits(
        got2[:, 12, 3], lanes[:, 7, 0] & lanes[:, 7, 1], (a[0::2], b[0::2]), "vector != (unordered)"
    )


# ---------------------------------------------------------------------------------------------
# Math functions: every input, evaluated in float64 and rounded once


MATH = {
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": lambda x: np.power(10.0, x),
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "rcp": lambda x: 1.0 / x,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "rint": np.rint,
}


@pytest.mark.parametrize("prefix", ["h", "b"])
def test_math_functions_are_correctly_rounded_for_every_input(run, prefix):
    fmt = FORMATS[prefix]
    x = fmt.to_f64(ALL_BITS)
    for name, fn in MATH.items():
        with np.errstate(all="ignore"):
            want = fmt.rn(fn(x))
        for cmd in (f"{prefix}_{name}", f"{prefix}_{name}_v"):
            _assert_bits(run(cmd, ALL_BITS), want, (ALL_BITS,), cmd)


# ---------------------------------------------------------------------------------------------
# Kernel-style code


def test_kernel_style_code_with_operators(run):
    n = 3_000
    x = _random_bits(HALF, n, seed=60)[:n]
    y = _random_bits(HALF, n, seed=61)[:n]
    z = _random_bits(HALF, n, seed=62)[:n]
    got = run("kernel", x, y, z).reshape(6, n)
    dx, dy, dz = HALF.to_f64(x), HALF.to_f64(y), HALF.to_f64(z)
    with np.errstate(all="ignore"):
        # `a * b + c` is __hmul then __hadd: two roundings
        _assert_bits(
            got[0], HALF.rn(HALF.to_f64(HALF.rn(dx * dy)) + dz), (x, y, z), "a = a * b + c"
        )
        lo = HALF.rn(HALF.to_f64(HALF.rn(dx * dz)) + dz)
        hi = HALF.rn(HALF.to_f64(HALF.rn(dy * dx)) + dx)
        _assert_bits(got[1], lo, (x, y, z), "half2 p * q + q, low")
        _assert_bits(got[2], hi, (x, y, z), "half2 p * q + q, high")
        f = (dx.astype(np.float32) * np.float32(0.5) + np.float32(1.0)).astype(np.float64)
        h = HALF.rn(f)
        flip = np.where(HALF.is_nan(h), np.uint16(CANONICAL_NAN), h ^ 0x8000)
        _assert_bits(got[3], np.where(dx > dy, h, flip), (x, y), "float round trip and select")
    acc, acc2 = np.uint16(0), np.uint16(0)
    running, running2 = [], []
    with np.errstate(invalid="ignore"):
        for i in range(n):  # atomicAdd: a running __hadd
            acc = HALF.rn(HALF.to_f64(acc) + dx[i])
            acc2 = HALF.rn(HALF.to_f64(acc2) + dy[i])
            running.append(acc)
            running2.append(CANONICAL_NAN if HALF.is_nan(acc2) else acc2)
    _assert_bits(got[4], np.array(running, dtype=np.uint16), (x,), "atomicAdd(__half*)")
    _assert_bits(got[5], np.array(running2, dtype=np.uint16), (y,), "atomicAdd(__half2*)")


def test_bfloat16_kernel_style_code(run):
    n = 3_000
    a, b, c = (_random_bits(BF16, n, seed=s)[:n] for s in (70, 71, 72))
    got = run("bkernel", a, b, c).reshape(2, n)
    da, db, dc = BF16.to_f64(a), BF16.to_f64(b), BF16.to_f64(c)
    with np.errstate(all="ignore"):
        _assert_bits(
            got[0], BF16.rn(BF16.to_f64(BF16.rn(da * db)) + dc), (a, b, c), "bf16 a * b + c"
        )
    acc = np.uint16(0)
    running = []
    with np.errstate(invalid="ignore"):
        for i in range(n):
            acc = BF16.rn(BF16.to_f64(acc) + db[i])
            running.append(acc)
    _assert_bits(got[1], np.array(running, dtype=np.uint16), (b,), "atomicAdd(__nv_bfloat16*)")
