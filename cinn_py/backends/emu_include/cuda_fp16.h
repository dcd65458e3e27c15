/*
 * cuda_fp16.h for the cuda-emu target: a CPU implementation of the __half / __half2 API of
 * NVIDIA's cuda_fp16.h (CUDA 12/13 surface), written from the CUDA documentation and the PTX
 * ISA, so that kernels written against NVIDIA's header compile unchanged with g++ (C++17).
 *
 * Results are bit-identical to the GPU wherever IEEE 754 defines them:
 *   - conversions in all four rounding modes, with subnormals, overflow and ties-to-even;
 *   - __hadd/__hsub/__hmul/__hfma (and half2 forms) rounded once, like add/sub/mul/fma.rn.f16
 *     (see cinn_emu_half_common.h for how);
 *   - __hdiv correctly rounded (NVIDIA documents round-to-nearest-even; the GPU computes
 *     rcp.approx(b) * a in float, which gives the same bits whenever the reciprocal is
 *     correctly rounded);
 *   - every NaN result is the canonical NaN 0x7FFF (CUDART_NAN_FP16); a NaN converted to
 *     float is the canonical float NaN 0x7FFFFFFF;
 *   - __hmax/__hmin ignore one NaN operand and order -0 below +0; *_nan variants propagate.
 * Math functions (hexp, hlog, hsin, htanh, ...) are evaluated in double and rounded once to
 * half, i.e. correctly rounded; the GPU's versions are approximations that NVIDIA tunes to be
 * correctly rounded for most inputs, so a rare one-ulp difference is possible there.
 *
 * Every intrinsic and operator rounds once, on its own.  On the GPU, __hmul/__hadd/__hsub
 * (and the * + - operators) are mul/add/sub.f16 without .rn, which ptxas may fuse into one
 * fma.rn.f16 under --fmad=true (the nvcc/NVRTC default); `a * b + c` then rounds once there
 * and twice here.  __hfma, or __hmul_rn/__hadd_rn, or --fmad=false give identical bits.
 *
 * Differences from NVIDIA's header, all additive: every function and operator is callable
 * from host code, and the storage member __x is public.
 */
#ifndef __CUDA_FP16_H__
#define __CUDA_FP16_H__
#define __CUDA_FP16_HPP__
#define __CUDA_FP16_TYPES_EXIST__
#define CINN_EMU_CUDA_FP16_H 1

#include <climits>

#include "cinn_emu_half_common.h"

/* float2 comes from vector_types.h on CUDA (in the emulator: from its core header).  The
 * functions that take or return float2 are templates on it, so this header needs only the
 * forward declaration and works whether float2 is defined before or after it.  Define
 * CINN_EMU_FLOAT2_DECLARED if float2 is a typedef or a using-declaration. */
#if !defined(CINN_EMU_FLOAT2_DECLARED) && !defined(__VECTOR_TYPES_H__)
struct float2;
#endif

struct __nv_bfloat16;

struct alignas(2) __half_raw {
    unsigned short x;
};

struct alignas(4) __half2_raw {
    unsigned short x;
    unsigned short y;
};

struct alignas(2) __half {
    /* The bits of the half (NVIDIA's header makes this protected). */
    unsigned short __x;

    __half() = default;

    constexpr __half(const __half_raw &hr) : __x(hr.x) {}
    __half &operator=(const __half_raw &hr) {
        __x = hr.x;
        return *this;
    }
    volatile __half &operator=(const __half_raw &hr) volatile {
        __x = hr.x;
        return *this;
    }
    volatile __half &operator=(const volatile __half_raw &hr) volatile {
        __x = hr.x;
        return *this;
    }
    operator __half_raw() const {
        __half_raw r;
        r.x = __x;
        return r;
    }
    operator __half_raw() const volatile {
        __half_raw r;
        r.x = __x;
        return r;
    }

#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
    /* Defined in cuda_bf16.h. */
    explicit inline __half(const __nv_bfloat16 f);

    __half(const float f) : __x(cinn_emu_half::from_float<cinn_emu_half::HalfFormat>(f, cinn_emu_half::kRN)) {}
    __half(const double f) : __x(cinn_emu_half::from_double<cinn_emu_half::HalfFormat>(f, cinn_emu_half::kRN)) {}
    operator float() const { return cinn_emu_half::half_to_float(__x); }
    __half &operator=(const float f) {
        __x = cinn_emu_half::from_float<cinn_emu_half::HalfFormat>(f, cinn_emu_half::kRN);
        return *this;
    }
    __half &operator=(const double f) {
        __x = cinn_emu_half::from_double<cinn_emu_half::HalfFormat>(f, cinn_emu_half::kRN);
        return *this;
    }

    /* Integer conversions (nvcc provides them; rn from integers, rz to integers). */
    __half(const short val) : __x(from_signed(val)) {}
    __half(const unsigned short val) : __x(from_unsigned(val)) {}
    __half(const int val) : __x(from_signed(val)) {}
    __half(const unsigned int val) : __x(from_unsigned(val)) {}
    __half(const long val) : __x(from_signed(val)) {}
    __half(const unsigned long val) : __x(from_unsigned(val)) {}
    __half(const long long val) : __x(from_signed(val)) {}
    __half(const unsigned long long val) : __x(from_unsigned(val)) {}

    operator signed char() const { return static_cast<signed char>(to_signed(SCHAR_MIN, SCHAR_MAX)); }
    operator unsigned char() const { return static_cast<unsigned char>(to_unsigned(UCHAR_MAX)); }
    operator char() const {
        return static_cast<char>(static_cast<char>(-1) < static_cast<char>(0)
                                     ? to_signed(SCHAR_MIN, SCHAR_MAX)
                                     : static_cast<long long>(to_unsigned(UCHAR_MAX)));
    }
    operator short() const { return static_cast<short>(to_signed(SHRT_MIN, SHRT_MAX)); }
    operator unsigned short() const { return static_cast<unsigned short>(to_unsigned(USHRT_MAX)); }
    operator int() const { return static_cast<int>(to_signed(INT_MIN, INT_MAX)); }
    operator unsigned int() const { return static_cast<unsigned int>(to_unsigned(UINT_MAX)); }
    operator long() const { return static_cast<long>(to_signed(LONG_MIN, LONG_MAX)); }
    operator unsigned long() const { return static_cast<unsigned long>(to_unsigned(ULONG_MAX)); }
    operator long long() const { return to_signed(LLONG_MIN, LLONG_MAX); }
    operator unsigned long long() const { return to_unsigned(ULLONG_MAX); }

    __half &operator=(const short val) { __x = from_signed(val); return *this; }
    __half &operator=(const unsigned short val) { __x = from_unsigned(val); return *this; }
    __half &operator=(const int val) { __x = from_signed(val); return *this; }
    __half &operator=(const unsigned int val) { __x = from_unsigned(val); return *this; }
    __half &operator=(const long long val) { __x = from_signed(val); return *this; }
    __half &operator=(const unsigned long long val) { __x = from_unsigned(val); return *this; }

    /* Both +0 and -0 are false. */
    constexpr operator bool() const { return (__x & 0x7FFFu) != 0u; }

private:
    static unsigned short from_signed(long long v) {
        return cinn_emu_half::from_int64<cinn_emu_half::HalfFormat>(v, cinn_emu_half::kRN);
    }
    static unsigned short from_unsigned(unsigned long long v) {
        return cinn_emu_half::from_uint64<cinn_emu_half::HalfFormat>(v, cinn_emu_half::kRN);
    }
    long long to_signed(long long lo, long long hi) const {
        return cinn_emu_half::to_signed<cinn_emu_half::HalfFormat>(__x, cinn_emu_half::kRZ, lo, hi);
    }
    unsigned long long to_unsigned(unsigned long long hi) const {
        return cinn_emu_half::to_unsigned<cinn_emu_half::HalfFormat>(__x, cinn_emu_half::kRZ, hi);
    }
#endif /* !defined(__CUDA_NO_HALF_CONVERSIONS__) */
};

struct alignas(4) __half2 {
    __half x;
    __half y;

    __half2() = default;
    constexpr __half2(const __half &a, const __half &b) : x(a), y(b) {}
    constexpr __half2(const __half2_raw &h2r) : x(__half_raw{h2r.x}), y(__half_raw{h2r.y}) {}
    __half2 &operator=(const __half2_raw &h2r) {
        x.__x = h2r.x;
        y.__x = h2r.y;
        return *this;
    }
    operator __half2_raw() const {
        __half2_raw r;
        r.x = x.__x;
        r.y = y.__x;
        return r;
    }
};

static_assert(sizeof(__half) == 2 && alignof(__half) == 2, "__half layout");
static_assert(sizeof(__half2) == 4 && alignof(__half2) == 4, "__half2 layout");

typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half_raw __nv_half_raw;
typedef __half2_raw __nv_half2_raw;
typedef __half nv_half;
typedef __half2 nv_half2;

namespace cinn_emu_half {
inline __half half_from_bits(unsigned short bits) {
    __half_raw r;
    r.x = bits;
    return __half(r);
}
}  // namespace cinn_emu_half

#ifndef CUDART_INF_FP16
#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
#endif

/* Shorthands used only inside this header (undefined at its end). */
#define CINN_EMU_H16_FMT cinn_emu_half::HalfFormat
#define CINN_EMU_H16_BITS(bits) cinn_emu_half::half_from_bits(bits)

/* ------------------------------------------------------------------------------------------ */
/* Bit reinterpretation                                                                        */

CINN_EMU_HALF_API short int __half_as_short(const __half h) { return static_cast<short int>(h.__x); }
CINN_EMU_HALF_API unsigned short int __half_as_ushort(const __half h) { return h.__x; }
CINN_EMU_HALF_API __half __short_as_half(const short int i) { return CINN_EMU_H16_BITS(static_cast<unsigned short>(i)); }
CINN_EMU_HALF_API __half __ushort_as_half(const unsigned short int i) { return CINN_EMU_H16_BITS(i); }

/* ------------------------------------------------------------------------------------------ */
/* Floating-point conversions                                                                  */

CINN_EMU_HALF_API __half __float2half(const float a) { return CINN_EMU_H16_BITS(cinn_emu_half::from_float<CINN_EMU_H16_FMT>(a, cinn_emu_half::kRN)); }
CINN_EMU_HALF_API __half __float2half_rn(const float a) { return CINN_EMU_H16_BITS(cinn_emu_half::from_float<CINN_EMU_H16_FMT>(a, cinn_emu_half::kRN)); }
CINN_EMU_HALF_API __half __float2half_rz(const float a) { return CINN_EMU_H16_BITS(cinn_emu_half::from_float<CINN_EMU_H16_FMT>(a, cinn_emu_half::kRZ)); }
CINN_EMU_HALF_API __half __float2half_rd(const float a) { return CINN_EMU_H16_BITS(cinn_emu_half::from_float<CINN_EMU_H16_FMT>(a, cinn_emu_half::kRD)); }
CINN_EMU_HALF_API __half __float2half_ru(const float a) { return CINN_EMU_H16_BITS(cinn_emu_half::from_float<CINN_EMU_H16_FMT>(a, cinn_emu_half::kRU)); }
CINN_EMU_HALF_API __half __double2half(const double a) { return CINN_EMU_H16_BITS(cinn_emu_half::from_double<CINN_EMU_H16_FMT>(a, cinn_emu_half::kRN)); }
CINN_EMU_HALF_API float __half2float(const __half a) { return cinn_emu_half::half_to_float(a.__x); }

CINN_EMU_HALF_API __half2 __float2half2_rn(const float a) {
    const __half h = __float2half_rn(a);
    return __half2(h, h);
}
CINN_EMU_HALF_API __half2 __floats2half2_rn(const float a, const float b) {
    return __half2(__float2half_rn(a), __float2half_rn(b));
}
template <typename Float2>
CINN_EMU_HALF_API __half2 __float22half2_rn(const Float2 a) {
    return __floats2half2_rn(a.x, a.y);
}
template <typename Float2 = float2>
CINN_EMU_HALF_API Float2 __half22float2(const __half2 a) {
    Float2 r;
    r.x = __half2float(a.x);
    r.y = __half2float(a.y);
    return r;
}
CINN_EMU_HALF_API float __low2float(const __half2 a) { return __half2float(a.x); }
CINN_EMU_HALF_API float __high2float(const __half2 a) { return __half2float(a.y); }

/* ------------------------------------------------------------------------------------------ */
/* Integer conversions (PTX cvt: float -> integer saturates and maps NaN to 0)                 */

#define CINN_EMU_H16_TO_INT(name, type, mode, lo, hi)                                           \
    CINN_EMU_HALF_API type name(const __half h) {                                                \
        return static_cast<type>(cinn_emu_half::to_signed<CINN_EMU_H16_FMT>(h.__x, cinn_emu_half::mode, lo, hi)); \
    }
#define CINN_EMU_H16_TO_UINT(name, type, mode, hi)                                              \
    CINN_EMU_HALF_API type name(const __half h) {                                                \
        return static_cast<type>(cinn_emu_half::to_unsigned<CINN_EMU_H16_FMT>(h.__x, cinn_emu_half::mode, hi)); \
    }
#define CINN_EMU_H16_FROM_INT(name, type, mode)                                                   \
    CINN_EMU_HALF_API __half name(const type i) {                                                \
        return CINN_EMU_H16_BITS(cinn_emu_half::from_int64<CINN_EMU_H16_FMT>(static_cast<long long>(i), cinn_emu_half::mode)); \
    }
#define CINN_EMU_H16_FROM_UINT(name, type, mode)                                                  \
    CINN_EMU_HALF_API __half name(const type i) {                                                \
        return CINN_EMU_H16_BITS(cinn_emu_half::from_uint64<CINN_EMU_H16_FMT>(static_cast<unsigned long long>(i), cinn_emu_half::mode)); \
    }
#define CINN_EMU_H16_ALL_MODES(macro, stem, type, ...)                                               \
    macro(stem##_rn, type, kRN, __VA_ARGS__)                                                     \
    macro(stem##_rz, type, kRZ, __VA_ARGS__)                                                     \
    macro(stem##_rd, type, kRD, __VA_ARGS__)                                                     \
    macro(stem##_ru, type, kRU, __VA_ARGS__)
#define CINN_EMU_H16_ALL_MODES0(macro, stem, type)                                                   \
    macro(stem##_rn, type, kRN)                                                                  \
    macro(stem##_rz, type, kRZ)                                                                  \
    macro(stem##_rd, type, kRD)                                                                  \
    macro(stem##_ru, type, kRU)

CINN_EMU_H16_ALL_MODES(CINN_EMU_H16_TO_INT, __half2int, int, INT_MIN, INT_MAX)
CINN_EMU_H16_ALL_MODES(CINN_EMU_H16_TO_INT, __half2short, short int, SHRT_MIN, SHRT_MAX)
CINN_EMU_H16_ALL_MODES(CINN_EMU_H16_TO_INT, __half2ll, long long int, LLONG_MIN, LLONG_MAX)
CINN_EMU_H16_ALL_MODES(CINN_EMU_H16_TO_UINT, __half2uint, unsigned int, UINT_MAX)
CINN_EMU_H16_ALL_MODES(CINN_EMU_H16_TO_UINT, __half2ushort, unsigned short int, USHRT_MAX)
CINN_EMU_H16_ALL_MODES(CINN_EMU_H16_TO_UINT, __half2ull, unsigned long long int, ULLONG_MAX)
CINN_EMU_H16_TO_INT(__half2char_rz, signed char, kRZ, SCHAR_MIN, SCHAR_MAX)
CINN_EMU_H16_TO_UINT(__half2uchar_rz, unsigned char, kRZ, UCHAR_MAX)

CINN_EMU_H16_ALL_MODES0(CINN_EMU_H16_FROM_INT, __int2half, int)
CINN_EMU_H16_ALL_MODES0(CINN_EMU_H16_FROM_INT, __short2half, short int)
CINN_EMU_H16_ALL_MODES0(CINN_EMU_H16_FROM_INT, __ll2half, long long int)
CINN_EMU_H16_ALL_MODES0(CINN_EMU_H16_FROM_UINT, __uint2half, unsigned int)
CINN_EMU_H16_ALL_MODES0(CINN_EMU_H16_FROM_UINT, __ushort2half, unsigned short int)
CINN_EMU_H16_ALL_MODES0(CINN_EMU_H16_FROM_UINT, __ull2half, unsigned long long int)

#undef CINN_EMU_H16_TO_INT
#undef CINN_EMU_H16_TO_UINT
#undef CINN_EMU_H16_FROM_INT
#undef CINN_EMU_H16_FROM_UINT

/* ------------------------------------------------------------------------------------------ */
/* Building and taking apart __half2                                                           */

CINN_EMU_HALF_API __half2 make_half2(const __half x, const __half y) { return __half2(x, y); }
CINN_EMU_HALF_API __half2 __halves2half2(const __half a, const __half b) { return __half2(a, b); }
CINN_EMU_HALF_API __half2 __half2half2(const __half a) { return __half2(a, a); }
CINN_EMU_HALF_API __half __low2half(const __half2 a) { return a.x; }
CINN_EMU_HALF_API __half __high2half(const __half2 a) { return a.y; }
CINN_EMU_HALF_API __half2 __low2half2(const __half2 a) { return __half2(a.x, a.x); }
CINN_EMU_HALF_API __half2 __high2half2(const __half2 a) { return __half2(a.y, a.y); }
CINN_EMU_HALF_API __half2 __lows2half2(const __half2 a, const __half2 b) { return __half2(a.x, b.x); }
CINN_EMU_HALF_API __half2 __highs2half2(const __half2 a, const __half2 b) { return __half2(a.y, b.y); }
CINN_EMU_HALF_API __half2 __lowhigh2highlow(const __half2 a) { return __half2(a.y, a.x); }

/* ------------------------------------------------------------------------------------------ */
/* Arithmetic                                                                                  */

#define CINN_EMU_H16_BINARY(name, body)                                                              \
    CINN_EMU_HALF_API __half name(const __half a, const __half b) {                             \
        const unsigned short x = a.__x, y = b.__x;                                               \
        return CINN_EMU_H16_BITS(body);                                                                 \
    }                                                                                            \
    static_assert(true, "")
#define CINN_EMU_H16_BINARY2(name, scalar)                                                           \
    CINN_EMU_HALF_API __half2 name(const __half2 a, const __half2 b) {                          \
        return __half2(scalar(a.x, b.x), scalar(a.y, b.y));                                      \
    }                                                                                            \
    static_assert(true, "")

CINN_EMU_H16_BINARY(__hadd, cinn_emu_half::add<CINN_EMU_H16_FMT>(x, y));
CINN_EMU_H16_BINARY(__hsub, cinn_emu_half::sub<CINN_EMU_H16_FMT>(x, y));
CINN_EMU_H16_BINARY(__hmul, cinn_emu_half::mul<CINN_EMU_H16_FMT>(x, y));
CINN_EMU_H16_BINARY(__hdiv, cinn_emu_half::div<CINN_EMU_H16_FMT>(x, y));
/* The _rn forms only forbid the compiler from contracting into an fma: same value. */
CINN_EMU_H16_BINARY(__hadd_rn, cinn_emu_half::add<CINN_EMU_H16_FMT>(x, y));
CINN_EMU_H16_BINARY(__hsub_rn, cinn_emu_half::sub<CINN_EMU_H16_FMT>(x, y));
CINN_EMU_H16_BINARY(__hmul_rn, cinn_emu_half::mul<CINN_EMU_H16_FMT>(x, y));
CINN_EMU_H16_BINARY(__hadd_sat, cinn_emu_half::saturate<CINN_EMU_H16_FMT>(cinn_emu_half::add<CINN_EMU_H16_FMT>(x, y)));
CINN_EMU_H16_BINARY(__hsub_sat, cinn_emu_half::saturate<CINN_EMU_H16_FMT>(cinn_emu_half::sub<CINN_EMU_H16_FMT>(x, y)));
CINN_EMU_H16_BINARY(__hmul_sat, cinn_emu_half::saturate<CINN_EMU_H16_FMT>(cinn_emu_half::mul<CINN_EMU_H16_FMT>(x, y)));
CINN_EMU_H16_BINARY(__hmax, cinn_emu_half::max<CINN_EMU_H16_FMT>(x, y));
CINN_EMU_H16_BINARY(__hmin, cinn_emu_half::min<CINN_EMU_H16_FMT>(x, y));
CINN_EMU_H16_BINARY(__hmax_nan, cinn_emu_half::max_nan<CINN_EMU_H16_FMT>(x, y));
CINN_EMU_H16_BINARY(__hmin_nan, cinn_emu_half::min_nan<CINN_EMU_H16_FMT>(x, y));

CINN_EMU_HALF_API __half __hfma(const __half a, const __half b, const __half c) {
    return CINN_EMU_H16_BITS(cinn_emu_half::fma<CINN_EMU_H16_FMT>(a.__x, b.__x, c.__x));
}
CINN_EMU_HALF_API __half __hfma_sat(const __half a, const __half b, const __half c) {
    return CINN_EMU_H16_BITS(cinn_emu_half::saturate<CINN_EMU_H16_FMT>(cinn_emu_half::fma<CINN_EMU_H16_FMT>(a.__x, b.__x, c.__x)));
}
CINN_EMU_HALF_API __half __hfma_relu(const __half a, const __half b, const __half c) {
    return CINN_EMU_H16_BITS(cinn_emu_half::relu<CINN_EMU_H16_FMT>(cinn_emu_half::fma<CINN_EMU_H16_FMT>(a.__x, b.__x, c.__x)));
}
CINN_EMU_HALF_API __half __hneg(const __half a) { return CINN_EMU_H16_BITS(cinn_emu_half::neg<CINN_EMU_H16_FMT>(a.__x)); }
CINN_EMU_HALF_API __half __habs(const __half a) { return CINN_EMU_H16_BITS(cinn_emu_half::abs<CINN_EMU_H16_FMT>(a.__x)); }

CINN_EMU_H16_BINARY2(__hadd2, __hadd);
CINN_EMU_H16_BINARY2(__hsub2, __hsub);
CINN_EMU_H16_BINARY2(__hmul2, __hmul);
CINN_EMU_H16_BINARY2(__h2div, __hdiv);
CINN_EMU_H16_BINARY2(__hadd2_rn, __hadd_rn);
CINN_EMU_H16_BINARY2(__hsub2_rn, __hsub_rn);
CINN_EMU_H16_BINARY2(__hmul2_rn, __hmul_rn);
CINN_EMU_H16_BINARY2(__hadd2_sat, __hadd_sat);
CINN_EMU_H16_BINARY2(__hsub2_sat, __hsub_sat);
CINN_EMU_H16_BINARY2(__hmul2_sat, __hmul_sat);
CINN_EMU_H16_BINARY2(__hmax2, __hmax);
CINN_EMU_H16_BINARY2(__hmin2, __hmin);
CINN_EMU_H16_BINARY2(__hmax2_nan, __hmax_nan);
CINN_EMU_H16_BINARY2(__hmin2_nan, __hmin_nan);

CINN_EMU_HALF_API __half2 __hfma2(const __half2 a, const __half2 b, const __half2 c) {
    return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
CINN_EMU_HALF_API __half2 __hfma2_sat(const __half2 a, const __half2 b, const __half2 c) {
    return __half2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));
}
CINN_EMU_HALF_API __half2 __hfma2_relu(const __half2 a, const __half2 b, const __half2 c) {
    return __half2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));
}
CINN_EMU_HALF_API __half2 __hneg2(const __half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
CINN_EMU_HALF_API __half2 __habs2(const __half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
/* Complex multiply-add, in the GPU's order of fmas:
 * re = fma(-a.im, b.im, fma(a.re, b.re, c.re)), im = fma(a.im, b.re, fma(a.re, b.im, c.im)). */
CINN_EMU_HALF_API __half2 __hcmadd(const __half2 a, const __half2 b, const __half2 c) {
    const __half re = __hfma(__hneg(a.y), b.y, __hfma(a.x, b.x, c.x));
    const __half im = __hfma(a.y, b.x, __hfma(a.x, b.y, c.y));
    return __half2(re, im);
}

/* ------------------------------------------------------------------------------------------ */
/* Comparisons                                                                                 */

#define CINN_EMU_H16_COMPARE(op, cmp, unordered)                                                     \
    CINN_EMU_HALF_API bool __h##op(const __half a, const __half b) {                            \
        return cinn_emu_half::compare<CINN_EMU_H16_FMT>(a.__x, b.__x, cinn_emu_half::cmp, unordered); \
    }                                                                                            \
    CINN_EMU_HALF_API __half2 __h##op##2(const __half2 a, const __half2 b) {                    \
        return __half2(CINN_EMU_H16_BITS(__h##op(a.x, b.x) ? 0x3C00u : 0u),                             \
                       CINN_EMU_H16_BITS(__h##op(a.y, b.y) ? 0x3C00u : 0u));                            \
    }                                                                                            \
    CINN_EMU_HALF_API bool __hb##op##2(const __half2 a, const __half2 b) {                      \
        return __h##op(a.x, b.x) && __h##op(a.y, b.y);                                           \
    }                                                                                            \
    CINN_EMU_HALF_API unsigned __h##op##2_mask(const __half2 a, const __half2 b) {              \
        return (__h##op(a.x, b.x) ? 0x0000FFFFu : 0u) | (__h##op(a.y, b.y) ? 0xFFFF0000u : 0u);  \
    }                                                                                            \
    static_assert(true, "")

CINN_EMU_H16_COMPARE(eq, kEQ, false);
CINN_EMU_H16_COMPARE(ne, kNE, false);
CINN_EMU_H16_COMPARE(lt, kLT, false);
CINN_EMU_H16_COMPARE(le, kLE, false);
CINN_EMU_H16_COMPARE(gt, kGT, false);
CINN_EMU_H16_COMPARE(ge, kGE, false);
CINN_EMU_H16_COMPARE(equ, kEQ, true);
CINN_EMU_H16_COMPARE(neu, kNE, true);
CINN_EMU_H16_COMPARE(ltu, kLT, true);
CINN_EMU_H16_COMPARE(leu, kLE, true);
CINN_EMU_H16_COMPARE(gtu, kGT, true);
CINN_EMU_H16_COMPARE(geu, kGE, true);

CINN_EMU_HALF_API bool __hisnan(const __half a) { return cinn_emu_half::is_nan<CINN_EMU_H16_FMT>(a.__x); }
CINN_EMU_HALF_API __half2 __hisnan2(const __half2 a) {
    return __half2(CINN_EMU_H16_BITS(__hisnan(a.x) ? 0x3C00u : 0u), CINN_EMU_H16_BITS(__hisnan(a.y) ? 0x3C00u : 0u));
}
/* -1 for -inf, 1 for +inf, 0 otherwise. */
CINN_EMU_HALF_API int __hisinf(const __half a) {
    return a.__x == 0xFC00u ? -1 : (a.__x == 0x7C00u ? 1 : 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Math functions                                                                              */

#define CINN_EMU_H16_MATH(name, name2, body)                                                         \
    CINN_EMU_HALF_API __half name(const __half a) {                                             \
        const unsigned short x = a.__x;                                                          \
        return CINN_EMU_H16_BITS(body);                                                                 \
    }                                                                                            \
    CINN_EMU_HALF_API __half2 name2(const __half2 a) { return __half2(name(a.x), name(a.y)); }  \
    static_assert(true, "")

CINN_EMU_H16_MATH(hexp, h2exp, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kExp));
CINN_EMU_H16_MATH(hexp2, h2exp2, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kExp2));
CINN_EMU_H16_MATH(hexp10, h2exp10, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kExp10));
CINN_EMU_H16_MATH(hlog, h2log, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kLog));
CINN_EMU_H16_MATH(hlog2, h2log2, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kLog2));
CINN_EMU_H16_MATH(hlog10, h2log10, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kLog10));
CINN_EMU_H16_MATH(hsqrt, h2sqrt, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kSqrt));
CINN_EMU_H16_MATH(hrsqrt, h2rsqrt, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kRsqrt));
CINN_EMU_H16_MATH(hrcp, h2rcp, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kRcp));
CINN_EMU_H16_MATH(hsin, h2sin, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kSin));
CINN_EMU_H16_MATH(hcos, h2cos, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kCos));
CINN_EMU_H16_MATH(htanh, h2tanh, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kTanh));
/* tanh.approx.f16 on the GPU has ~2^-10.7 relative error; here it is the correctly rounded tanh. */
CINN_EMU_H16_MATH(htanh_approx, h2tanh_approx, cinn_emu_half::math1<CINN_EMU_H16_FMT>(x, cinn_emu_half::kTanh));
CINN_EMU_H16_MATH(hfloor, h2floor, cinn_emu_half::round_to_integral<CINN_EMU_H16_FMT>(x, cinn_emu_half::kRD));
CINN_EMU_H16_MATH(hceil, h2ceil, cinn_emu_half::round_to_integral<CINN_EMU_H16_FMT>(x, cinn_emu_half::kRU));
CINN_EMU_H16_MATH(htrunc, h2trunc, cinn_emu_half::round_to_integral<CINN_EMU_H16_FMT>(x, cinn_emu_half::kRZ));
CINN_EMU_H16_MATH(hrint, h2rint, cinn_emu_half::round_to_integral<CINN_EMU_H16_FMT>(x, cinn_emu_half::kRN));

/* ------------------------------------------------------------------------------------------ */
/* Cache-hinted loads/stores (plain memory accesses here) and atomics                          */

#define CINN_EMU_H16_LOADS_STORES(T)                                                                 \
    CINN_EMU_HALF_API T __ldg(const T *p) { return *p; }                                        \
    CINN_EMU_HALF_API T __ldcg(const T *p) { return *p; }                                       \
    CINN_EMU_HALF_API T __ldca(const T *p) { return *p; }                                       \
    CINN_EMU_HALF_API T __ldcs(const T *p) { return *p; }                                       \
    CINN_EMU_HALF_API T __ldlu(const T *p) { return *p; }                                       \
    CINN_EMU_HALF_API T __ldcv(const T *p) { return *p; }                                       \
    CINN_EMU_HALF_API void __stwb(T *p, const T v) { *p = v; }                                  \
    CINN_EMU_HALF_API void __stcg(T *p, const T v) { *p = v; }                                  \
    CINN_EMU_HALF_API void __stcs(T *p, const T v) { *p = v; }                                  \
    CINN_EMU_HALF_API void __stwt(T *p, const T v) { *p = v; }                                  \
    static_assert(true, "")

/* Skipped under the emulator core, whose cinn_emu_math.h has generic ones (and when these
 * names are macros). */
#if !defined(CINN_EMU_MATH_H) && !defined(__ldg) && !defined(__ldcg) && !defined(__stcg) && \
    !defined(CINN_EMU_NO_HALF_LDST)
CINN_EMU_H16_LOADS_STORES(__half);
CINN_EMU_H16_LOADS_STORES(__half2);
#endif

/* Skipped under the emulator core, whose cinn_emu_atomics.h adds any of these types through
 * their operator+ (fibers on one OS thread).  Here: compare-and-swap loops on the 2- or
 * 4-byte object, atomic under any host threading. */
#if !defined(CINN_EMU_ATOMICS_H) && !defined(atomicAdd) && !defined(CINN_EMU_NO_HALF_ATOMICS)
CINN_EMU_HALF_API __half atomicAdd(__half *const address, const __half val) {
    __half old;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    __half desired;
    do {
        desired = __hadd(old, val);
    } while (!__atomic_compare_exchange(address, &old, &desired, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}
CINN_EMU_HALF_API __half2 atomicAdd(__half2 *const address, const __half2 val) {
    __half2 old;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    __half2 desired;
    do {
        desired = __hadd2(old, val);
    } while (!__atomic_compare_exchange(address, &old, &desired, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}
#endif

/* ------------------------------------------------------------------------------------------ */
/* Operators                                                                                   */

#if !defined(__CUDA_NO_HALF_OPERATORS__)
CINN_EMU_HALF_API __half operator+(const __half &lh, const __half &rh) { return __hadd(lh, rh); }
CINN_EMU_HALF_API __half operator-(const __half &lh, const __half &rh) { return __hsub(lh, rh); }
CINN_EMU_HALF_API __half operator*(const __half &lh, const __half &rh) { return __hmul(lh, rh); }
CINN_EMU_HALF_API __half operator/(const __half &lh, const __half &rh) { return __hdiv(lh, rh); }
CINN_EMU_HALF_API __half &operator+=(__half &lh, const __half &rh) { lh = __hadd(lh, rh); return lh; }
CINN_EMU_HALF_API __half &operator-=(__half &lh, const __half &rh) { lh = __hsub(lh, rh); return lh; }
CINN_EMU_HALF_API __half &operator*=(__half &lh, const __half &rh) { lh = __hmul(lh, rh); return lh; }
CINN_EMU_HALF_API __half &operator/=(__half &lh, const __half &rh) { lh = __hdiv(lh, rh); return lh; }
CINN_EMU_HALF_API __half &operator++(__half &h) { h = __hadd(h, CINN_EMU_H16_BITS(0x3C00u)); return h; }
CINN_EMU_HALF_API __half &operator--(__half &h) { h = __hsub(h, CINN_EMU_H16_BITS(0x3C00u)); return h; }
CINN_EMU_HALF_API __half operator++(__half &h, const int) { const __half r = h; h = __hadd(h, CINN_EMU_H16_BITS(0x3C00u)); return r; }
CINN_EMU_HALF_API __half operator--(__half &h, const int) { const __half r = h; h = __hsub(h, CINN_EMU_H16_BITS(0x3C00u)); return r; }
CINN_EMU_HALF_API __half operator+(const __half &h) { return h; }
CINN_EMU_HALF_API __half operator-(const __half &h) { return __hneg(h); }
CINN_EMU_HALF_API bool operator==(const __half &lh, const __half &rh) { return __heq(lh, rh); }
CINN_EMU_HALF_API bool operator!=(const __half &lh, const __half &rh) { return __hneu(lh, rh); }
CINN_EMU_HALF_API bool operator>(const __half &lh, const __half &rh) { return __hgt(lh, rh); }
CINN_EMU_HALF_API bool operator<(const __half &lh, const __half &rh) { return __hlt(lh, rh); }
CINN_EMU_HALF_API bool operator>=(const __half &lh, const __half &rh) { return __hge(lh, rh); }
CINN_EMU_HALF_API bool operator<=(const __half &lh, const __half &rh) { return __hle(lh, rh); }
#endif /* !defined(__CUDA_NO_HALF_OPERATORS__) */

#if !defined(__CUDA_NO_HALF2_OPERATORS__)
CINN_EMU_HALF_API __half2 operator+(const __half2 &lh, const __half2 &rh) { return __hadd2(lh, rh); }
CINN_EMU_HALF_API __half2 operator-(const __half2 &lh, const __half2 &rh) { return __hsub2(lh, rh); }
CINN_EMU_HALF_API __half2 operator*(const __half2 &lh, const __half2 &rh) { return __hmul2(lh, rh); }
CINN_EMU_HALF_API __half2 operator/(const __half2 &lh, const __half2 &rh) { return __h2div(lh, rh); }
CINN_EMU_HALF_API __half2 &operator+=(__half2 &lh, const __half2 &rh) { lh = __hadd2(lh, rh); return lh; }
CINN_EMU_HALF_API __half2 &operator-=(__half2 &lh, const __half2 &rh) { lh = __hsub2(lh, rh); return lh; }
CINN_EMU_HALF_API __half2 &operator*=(__half2 &lh, const __half2 &rh) { lh = __hmul2(lh, rh); return lh; }
CINN_EMU_HALF_API __half2 &operator/=(__half2 &lh, const __half2 &rh) { lh = __h2div(lh, rh); return lh; }
CINN_EMU_HALF_API __half2 &operator++(__half2 &h) { h = __hadd2(h, __half2(CINN_EMU_H16_BITS(0x3C00u), CINN_EMU_H16_BITS(0x3C00u))); return h; }
CINN_EMU_HALF_API __half2 &operator--(__half2 &h) { h = __hsub2(h, __half2(CINN_EMU_H16_BITS(0x3C00u), CINN_EMU_H16_BITS(0x3C00u))); return h; }
CINN_EMU_HALF_API __half2 operator++(__half2 &h, const int) { const __half2 r = h; ++h; return r; }
CINN_EMU_HALF_API __half2 operator--(__half2 &h, const int) { const __half2 r = h; --h; return r; }
CINN_EMU_HALF_API __half2 operator+(const __half2 &h) { return h; }
CINN_EMU_HALF_API __half2 operator-(const __half2 &h) { return __hneg2(h); }
CINN_EMU_HALF_API bool operator==(const __half2 &lh, const __half2 &rh) { return __hbeq2(lh, rh); }
CINN_EMU_HALF_API bool operator!=(const __half2 &lh, const __half2 &rh) { return __hbneu2(lh, rh); }
CINN_EMU_HALF_API bool operator>(const __half2 &lh, const __half2 &rh) { return __hbgt2(lh, rh); }
CINN_EMU_HALF_API bool operator<(const __half2 &lh, const __half2 &rh) { return __hblt2(lh, rh); }
CINN_EMU_HALF_API bool operator>=(const __half2 &lh, const __half2 &rh) { return __hbge2(lh, rh); }
CINN_EMU_HALF_API bool operator<=(const __half2 &lh, const __half2 &rh) { return __hble2(lh, rh); }
#endif /* !defined(__CUDA_NO_HALF2_OPERATORS__) */

#undef CINN_EMU_H16_BINARY
#undef CINN_EMU_H16_BINARY2
#undef CINN_EMU_H16_COMPARE
#undef CINN_EMU_H16_MATH
#undef CINN_EMU_H16_LOADS_STORES
#undef CINN_EMU_H16_ALL_MODES
#undef CINN_EMU_H16_ALL_MODES0
#undef CINN_EMU_H16_FMT
#undef CINN_EMU_H16_BITS

#endif /* __CUDA_FP16_H__ */
