/*
 * cuda_bf16.h for the cuda-emu target: a CPU implementation of the __nv_bfloat16 /
 * __nv_bfloat162 API of NVIDIA's cuda_bf16.h (CUDA 12/13 surface), written from the CUDA
 * documentation and the PTX ISA.  Like NVIDIA's header it includes cuda_fp16.h.
 *
 * Results are bit-identical to the GPU (sm_80 and later) wherever IEEE 754 defines them:
 *   - float/double/integer -> bfloat16 conversions in all four rounding modes, subnormals,
 *     overflow, ties-to-even; bfloat16 -> float is the exact 16-bit shift (NaN payload kept);
 *   - __hadd/__hsub/__hmul/__hfma rounded once, as the GPU's fma.rn.bf16 (sm_80) and
 *     add/sub/mul.bf16 (sm_90) do, including subnormal results; in particular __hfma is the
 *     exact a*b + c rounded once, which float or even double arithmetic followed by a second
 *     rounding does not always give;
 *   - __hdiv correctly rounded;
 *   - every NaN result is the canonical NaN 0x7FFF (CUDART_NAN_BF16).
 * Math functions are evaluated in double and rounded once (see cuda_fp16.h).
 */
#ifndef __CUDA_BF16_H__
#define __CUDA_BF16_H__
#define __CUDA_BF16_HPP__
#define __CUDA_BF16_TYPES_EXIST__
#define CINN_EMU_CUDA_BF16_H 1

#include "cuda_fp16.h"

struct alignas(2) __nv_bfloat16_raw {
    unsigned short x;
};

struct alignas(4) __nv_bfloat162_raw {
    unsigned short x;
    unsigned short y;
};

struct alignas(2) __nv_bfloat16 {
    /* The bits of the bfloat16 (NVIDIA's header makes this protected). */
    unsigned short __x;

    __nv_bfloat16() = default;

    constexpr __nv_bfloat16(const __nv_bfloat16_raw &hr) : __x(hr.x) {}
    __nv_bfloat16 &operator=(const __nv_bfloat16_raw &hr) {
        __x = hr.x;
        return *this;
    }
    volatile __nv_bfloat16 &operator=(const __nv_bfloat16_raw &hr) volatile {
        __x = hr.x;
        return *this;
    }
    volatile __nv_bfloat16 &operator=(const volatile __nv_bfloat16_raw &hr) volatile {
        __x = hr.x;
        return *this;
    }
    operator __nv_bfloat16_raw() const {
        __nv_bfloat16_raw r;
        r.x = __x;
        return r;
    }
    operator __nv_bfloat16_raw() const volatile {
        __nv_bfloat16_raw r;
        r.x = __x;
        return r;
    }

#if !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__)
    /* half -> float is exact, so this rounds once, like cvt.rn.bf16.f16. */
    explicit __nv_bfloat16(const __half f)
        : __x(cinn_emu_half::from_float<cinn_emu_half::BF16Format>(cinn_emu_half::half_to_float(f.__x),
                                                                   cinn_emu_half::kRN)) {}

    __nv_bfloat16(const float f) : __x(cinn_emu_half::from_float<cinn_emu_half::BF16Format>(f, cinn_emu_half::kRN)) {}
    __nv_bfloat16(const double f) : __x(cinn_emu_half::from_double<cinn_emu_half::BF16Format>(f, cinn_emu_half::kRN)) {}
    operator float() const { return cinn_emu_half::bf16_to_float(__x); }
    __nv_bfloat16 &operator=(const float f) {
        __x = cinn_emu_half::from_float<cinn_emu_half::BF16Format>(f, cinn_emu_half::kRN);
        return *this;
    }
    __nv_bfloat16 &operator=(const double f) {
        __x = cinn_emu_half::from_double<cinn_emu_half::BF16Format>(f, cinn_emu_half::kRN);
        return *this;
    }

    __nv_bfloat16(const short val) : __x(from_signed(val)) {}
    __nv_bfloat16(const unsigned short val) : __x(from_unsigned(val)) {}
    __nv_bfloat16(const int val) : __x(from_signed(val)) {}
    __nv_bfloat16(const unsigned int val) : __x(from_unsigned(val)) {}
    __nv_bfloat16(const long val) : __x(from_signed(val)) {}
    __nv_bfloat16(const unsigned long val) : __x(from_unsigned(val)) {}
    __nv_bfloat16(const long long val) : __x(from_signed(val)) {}
    __nv_bfloat16(const unsigned long long val) : __x(from_unsigned(val)) {}

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

    __nv_bfloat16 &operator=(const short val) { __x = from_signed(val); return *this; }
    __nv_bfloat16 &operator=(const unsigned short val) { __x = from_unsigned(val); return *this; }
    __nv_bfloat16 &operator=(const int val) { __x = from_signed(val); return *this; }
    __nv_bfloat16 &operator=(const unsigned int val) { __x = from_unsigned(val); return *this; }
    __nv_bfloat16 &operator=(const long long val) { __x = from_signed(val); return *this; }
    __nv_bfloat16 &operator=(const unsigned long long val) { __x = from_unsigned(val); return *this; }

    constexpr operator bool() const { return (__x & 0x7FFFu) != 0u; }

private:
    static unsigned short from_signed(long long v) {
        return cinn_emu_half::from_int64<cinn_emu_half::BF16Format>(v, cinn_emu_half::kRN);
    }
    static unsigned short from_unsigned(unsigned long long v) {
        return cinn_emu_half::from_uint64<cinn_emu_half::BF16Format>(v, cinn_emu_half::kRN);
    }
    long long to_signed(long long lo, long long hi) const {
        return cinn_emu_half::to_signed<cinn_emu_half::BF16Format>(__x, cinn_emu_half::kRZ, lo, hi);
    }
    unsigned long long to_unsigned(unsigned long long hi) const {
        return cinn_emu_half::to_unsigned<cinn_emu_half::BF16Format>(__x, cinn_emu_half::kRZ, hi);
    }
#endif /* !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__) */
};

struct alignas(4) __nv_bfloat162 {
    __nv_bfloat16 x;
    __nv_bfloat16 y;

    __nv_bfloat162() = default;
    constexpr __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b) {}
    constexpr __nv_bfloat162(const __nv_bfloat162_raw &h2r)
        : x(__nv_bfloat16_raw{h2r.x}), y(__nv_bfloat16_raw{h2r.y}) {}
    __nv_bfloat162 &operator=(const __nv_bfloat162_raw &h2r) {
        x.__x = h2r.x;
        y.__x = h2r.y;
        return *this;
    }
    operator __nv_bfloat162_raw() const {
        __nv_bfloat162_raw r;
        r.x = x.__x;
        r.y = y.__x;
        return r;
    }
};

static_assert(sizeof(__nv_bfloat16) == 2 && alignof(__nv_bfloat16) == 2, "__nv_bfloat16 layout");
static_assert(sizeof(__nv_bfloat162) == 4 && alignof(__nv_bfloat162) == 4, "__nv_bfloat162 layout");

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
/* Declared in cuda_fp16.h: bfloat16 -> float is exact, so this rounds once. */
inline __half::__half(const __nv_bfloat16 f)
    : __x(cinn_emu_half::from_float<cinn_emu_half::HalfFormat>(cinn_emu_half::bf16_to_float(f.__x),
                                                               cinn_emu_half::kRN)) {}
#endif

namespace cinn_emu_half {
inline __nv_bfloat16 bf16_from_bits(unsigned short bits) {
    __nv_bfloat16_raw r;
    r.x = bits;
    return __nv_bfloat16(r);
}
}  // namespace cinn_emu_half

#ifndef CUDART_INF_BF16
#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
#endif

/* Shorthands used only inside this header (undefined at its end). */
#define CINN_EMU_B16_FMT cinn_emu_half::BF16Format
#define CINN_EMU_B16_BITS(bits) cinn_emu_half::bf16_from_bits(bits)

/* ------------------------------------------------------------------------------------------ */
/* Bit reinterpretation                                                                        */

CINN_EMU_HALF_API short int __bfloat16_as_short(const __nv_bfloat16 h) { return static_cast<short int>(h.__x); }
CINN_EMU_HALF_API unsigned short int __bfloat16_as_ushort(const __nv_bfloat16 h) { return h.__x; }
CINN_EMU_HALF_API __nv_bfloat16 __short_as_bfloat16(const short int i) { return CINN_EMU_B16_BITS(static_cast<unsigned short>(i)); }
CINN_EMU_HALF_API __nv_bfloat16 __ushort_as_bfloat16(const unsigned short int i) { return CINN_EMU_B16_BITS(i); }

/* ------------------------------------------------------------------------------------------ */
/* Floating-point conversions                                                                  */

CINN_EMU_HALF_API __nv_bfloat16 __float2bfloat16(const float a) { return CINN_EMU_B16_BITS(cinn_emu_half::from_float<CINN_EMU_B16_FMT>(a, cinn_emu_half::kRN)); }
CINN_EMU_HALF_API __nv_bfloat16 __float2bfloat16_rn(const float a) { return CINN_EMU_B16_BITS(cinn_emu_half::from_float<CINN_EMU_B16_FMT>(a, cinn_emu_half::kRN)); }
CINN_EMU_HALF_API __nv_bfloat16 __float2bfloat16_rz(const float a) { return CINN_EMU_B16_BITS(cinn_emu_half::from_float<CINN_EMU_B16_FMT>(a, cinn_emu_half::kRZ)); }
CINN_EMU_HALF_API __nv_bfloat16 __float2bfloat16_rd(const float a) { return CINN_EMU_B16_BITS(cinn_emu_half::from_float<CINN_EMU_B16_FMT>(a, cinn_emu_half::kRD)); }
CINN_EMU_HALF_API __nv_bfloat16 __float2bfloat16_ru(const float a) { return CINN_EMU_B16_BITS(cinn_emu_half::from_float<CINN_EMU_B16_FMT>(a, cinn_emu_half::kRU)); }
CINN_EMU_HALF_API __nv_bfloat16 __double2bfloat16(const double a) { return CINN_EMU_B16_BITS(cinn_emu_half::from_double<CINN_EMU_B16_FMT>(a, cinn_emu_half::kRN)); }
CINN_EMU_HALF_API float __bfloat162float(const __nv_bfloat16 a) { return cinn_emu_half::bf16_to_float(a.__x); }

CINN_EMU_HALF_API __nv_bfloat162 __float2bfloat162_rn(const float a) {
    const __nv_bfloat16 h = __float2bfloat16_rn(a);
    return __nv_bfloat162(h, h);
}
CINN_EMU_HALF_API __nv_bfloat162 __floats2bfloat162_rn(const float a, const float b) {
    return __nv_bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(b));
}
template <typename Float2>
CINN_EMU_HALF_API __nv_bfloat162 __float22bfloat162_rn(const Float2 a) {
    return __floats2bfloat162_rn(a.x, a.y);
}
template <typename Float2 = float2>
CINN_EMU_HALF_API Float2 __bfloat1622float2(const __nv_bfloat162 a) {
    Float2 r;
    r.x = __bfloat162float(a.x);
    r.y = __bfloat162float(a.y);
    return r;
}
CINN_EMU_HALF_API float __low2float(const __nv_bfloat162 a) { return __bfloat162float(a.x); }
CINN_EMU_HALF_API float __high2float(const __nv_bfloat162 a) { return __bfloat162float(a.y); }

/* ------------------------------------------------------------------------------------------ */
/* Integer conversions (PTX cvt: float -> integer saturates and maps NaN to 0)                 */

#define CINN_EMU_B16_TO_INT(name, type, mode, lo, hi)                                             \
    CINN_EMU_HALF_API type name(const __nv_bfloat16 h) {                                         \
        return static_cast<type>(cinn_emu_half::to_signed<CINN_EMU_B16_FMT>(h.__x, cinn_emu_half::mode, lo, hi)); \
    }
#define CINN_EMU_B16_TO_UINT(name, type, mode, hi)                                                \
    CINN_EMU_HALF_API type name(const __nv_bfloat16 h) {                                         \
        return static_cast<type>(cinn_emu_half::to_unsigned<CINN_EMU_B16_FMT>(h.__x, cinn_emu_half::mode, hi)); \
    }
#define CINN_EMU_B16_FROM_INT(name, type, mode)                                                     \
    CINN_EMU_HALF_API __nv_bfloat16 name(const type i) {                                         \
        return CINN_EMU_B16_BITS(cinn_emu_half::from_int64<CINN_EMU_B16_FMT>(static_cast<long long>(i), cinn_emu_half::mode)); \
    }
#define CINN_EMU_B16_FROM_UINT(name, type, mode)                                                    \
    CINN_EMU_HALF_API __nv_bfloat16 name(const type i) {                                         \
        return CINN_EMU_B16_BITS(cinn_emu_half::from_uint64<CINN_EMU_B16_FMT>(static_cast<unsigned long long>(i), cinn_emu_half::mode)); \
    }
#define CINN_EMU_B16_ALL_MODES(macro, stem, type, ...)                                            \
    macro(stem##_rn, type, kRN, __VA_ARGS__)                                                     \
    macro(stem##_rz, type, kRZ, __VA_ARGS__)                                                     \
    macro(stem##_rd, type, kRD, __VA_ARGS__)                                                     \
    macro(stem##_ru, type, kRU, __VA_ARGS__)
#define CINN_EMU_B16_ALL_MODES0(macro, stem, type)                                                \
    macro(stem##_rn, type, kRN)                                                                  \
    macro(stem##_rz, type, kRZ)                                                                  \
    macro(stem##_rd, type, kRD)                                                                  \
    macro(stem##_ru, type, kRU)

CINN_EMU_B16_ALL_MODES(CINN_EMU_B16_TO_INT, __bfloat162int, int, INT_MIN, INT_MAX)
CINN_EMU_B16_ALL_MODES(CINN_EMU_B16_TO_INT, __bfloat162short, short int, SHRT_MIN, SHRT_MAX)
CINN_EMU_B16_ALL_MODES(CINN_EMU_B16_TO_INT, __bfloat162ll, long long int, LLONG_MIN, LLONG_MAX)
CINN_EMU_B16_ALL_MODES(CINN_EMU_B16_TO_UINT, __bfloat162uint, unsigned int, UINT_MAX)
CINN_EMU_B16_ALL_MODES(CINN_EMU_B16_TO_UINT, __bfloat162ushort, unsigned short int, USHRT_MAX)
CINN_EMU_B16_ALL_MODES(CINN_EMU_B16_TO_UINT, __bfloat162ull, unsigned long long int, ULLONG_MAX)
CINN_EMU_B16_TO_INT(__bfloat162char_rz, signed char, kRZ, SCHAR_MIN, SCHAR_MAX)
CINN_EMU_B16_TO_UINT(__bfloat162uchar_rz, unsigned char, kRZ, UCHAR_MAX)

CINN_EMU_B16_ALL_MODES0(CINN_EMU_B16_FROM_INT, __int2bfloat16, int)
CINN_EMU_B16_ALL_MODES0(CINN_EMU_B16_FROM_INT, __short2bfloat16, short int)
CINN_EMU_B16_ALL_MODES0(CINN_EMU_B16_FROM_INT, __ll2bfloat16, long long int)
CINN_EMU_B16_ALL_MODES0(CINN_EMU_B16_FROM_UINT, __uint2bfloat16, unsigned int)
CINN_EMU_B16_ALL_MODES0(CINN_EMU_B16_FROM_UINT, __ushort2bfloat16, unsigned short int)
CINN_EMU_B16_ALL_MODES0(CINN_EMU_B16_FROM_UINT, __ull2bfloat16, unsigned long long int)

#undef CINN_EMU_B16_TO_INT
#undef CINN_EMU_B16_TO_UINT
#undef CINN_EMU_B16_FROM_INT
#undef CINN_EMU_B16_FROM_UINT
#undef CINN_EMU_B16_ALL_MODES
#undef CINN_EMU_B16_ALL_MODES0

/* ------------------------------------------------------------------------------------------ */
/* Building and taking apart __nv_bfloat162                                                    */

CINN_EMU_HALF_API __nv_bfloat162 make_bfloat162(const __nv_bfloat16 x, const __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
CINN_EMU_HALF_API __nv_bfloat162 __halves2bfloat162(const __nv_bfloat16 a, const __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
CINN_EMU_HALF_API __nv_bfloat162 __bfloat162bfloat162(const __nv_bfloat16 a) { return __nv_bfloat162(a, a); }
CINN_EMU_HALF_API __nv_bfloat16 __low2bfloat16(const __nv_bfloat162 a) { return a.x; }
CINN_EMU_HALF_API __nv_bfloat16 __high2bfloat16(const __nv_bfloat162 a) { return a.y; }
CINN_EMU_HALF_API __nv_bfloat162 __low2bfloat162(const __nv_bfloat162 a) { return __nv_bfloat162(a.x, a.x); }
CINN_EMU_HALF_API __nv_bfloat162 __high2bfloat162(const __nv_bfloat162 a) { return __nv_bfloat162(a.y, a.y); }
CINN_EMU_HALF_API __nv_bfloat162 __lows2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
CINN_EMU_HALF_API __nv_bfloat162 __highs2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
CINN_EMU_HALF_API __nv_bfloat162 __lowhigh2highlow(const __nv_bfloat162 a) { return __nv_bfloat162(a.y, a.x); }

/* ------------------------------------------------------------------------------------------ */
/* Arithmetic (CUDA overloads the __h* names for bfloat16)                                      */

#define CINN_EMU_B16_BINARY(name, body)                                                              \
    CINN_EMU_HALF_API __nv_bfloat16 name(const __nv_bfloat16 a, const __nv_bfloat16 b) {        \
        const unsigned short x = a.__x, y = b.__x;                                               \
        return CINN_EMU_B16_BITS(body);                                                                 \
    }                                                                                            \
    static_assert(true, "")
#define CINN_EMU_B16_BINARY2(name, scalar)                                                           \
    CINN_EMU_HALF_API __nv_bfloat162 name(const __nv_bfloat162 a, const __nv_bfloat162 b) {     \
        return __nv_bfloat162(scalar(a.x, b.x), scalar(a.y, b.y));                               \
    }                                                                                            \
    static_assert(true, "")

CINN_EMU_B16_BINARY(__hadd, cinn_emu_half::add<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hsub, cinn_emu_half::sub<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hmul, cinn_emu_half::mul<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hdiv, cinn_emu_half::div<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hadd_rn, cinn_emu_half::add<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hsub_rn, cinn_emu_half::sub<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hmul_rn, cinn_emu_half::mul<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hadd_sat, cinn_emu_half::saturate<CINN_EMU_B16_FMT>(cinn_emu_half::add<CINN_EMU_B16_FMT>(x, y)));
CINN_EMU_B16_BINARY(__hsub_sat, cinn_emu_half::saturate<CINN_EMU_B16_FMT>(cinn_emu_half::sub<CINN_EMU_B16_FMT>(x, y)));
CINN_EMU_B16_BINARY(__hmul_sat, cinn_emu_half::saturate<CINN_EMU_B16_FMT>(cinn_emu_half::mul<CINN_EMU_B16_FMT>(x, y)));
CINN_EMU_B16_BINARY(__hmax, cinn_emu_half::max<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hmin, cinn_emu_half::min<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hmax_nan, cinn_emu_half::max_nan<CINN_EMU_B16_FMT>(x, y));
CINN_EMU_B16_BINARY(__hmin_nan, cinn_emu_half::min_nan<CINN_EMU_B16_FMT>(x, y));

CINN_EMU_HALF_API __nv_bfloat16 __hfma(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) {
    return CINN_EMU_B16_BITS(cinn_emu_half::fma<CINN_EMU_B16_FMT>(a.__x, b.__x, c.__x));
}
CINN_EMU_HALF_API __nv_bfloat16 __hfma_sat(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) {
    return CINN_EMU_B16_BITS(cinn_emu_half::saturate<CINN_EMU_B16_FMT>(cinn_emu_half::fma<CINN_EMU_B16_FMT>(a.__x, b.__x, c.__x)));
}
CINN_EMU_HALF_API __nv_bfloat16 __hfma_relu(const __nv_bfloat16 a, const __nv_bfloat16 b, const __nv_bfloat16 c) {
    return CINN_EMU_B16_BITS(cinn_emu_half::relu<CINN_EMU_B16_FMT>(cinn_emu_half::fma<CINN_EMU_B16_FMT>(a.__x, b.__x, c.__x)));
}
CINN_EMU_HALF_API __nv_bfloat16 __hneg(const __nv_bfloat16 a) { return CINN_EMU_B16_BITS(cinn_emu_half::neg<CINN_EMU_B16_FMT>(a.__x)); }
CINN_EMU_HALF_API __nv_bfloat16 __habs(const __nv_bfloat16 a) { return CINN_EMU_B16_BITS(cinn_emu_half::abs<CINN_EMU_B16_FMT>(a.__x)); }

CINN_EMU_B16_BINARY2(__hadd2, __hadd);
CINN_EMU_B16_BINARY2(__hsub2, __hsub);
CINN_EMU_B16_BINARY2(__hmul2, __hmul);
CINN_EMU_B16_BINARY2(__h2div, __hdiv);
CINN_EMU_B16_BINARY2(__hadd2_rn, __hadd_rn);
CINN_EMU_B16_BINARY2(__hsub2_rn, __hsub_rn);
CINN_EMU_B16_BINARY2(__hmul2_rn, __hmul_rn);
CINN_EMU_B16_BINARY2(__hadd2_sat, __hadd_sat);
CINN_EMU_B16_BINARY2(__hsub2_sat, __hsub_sat);
CINN_EMU_B16_BINARY2(__hmul2_sat, __hmul_sat);
CINN_EMU_B16_BINARY2(__hmax2, __hmax);
CINN_EMU_B16_BINARY2(__hmin2, __hmin);
CINN_EMU_B16_BINARY2(__hmax2_nan, __hmax_nan);
CINN_EMU_B16_BINARY2(__hmin2_nan, __hmin_nan);

CINN_EMU_HALF_API __nv_bfloat162 __hfma2(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) {
    return __nv_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
CINN_EMU_HALF_API __nv_bfloat162 __hfma2_sat(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) {
    return __nv_bfloat162(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));
}
CINN_EMU_HALF_API __nv_bfloat162 __hfma2_relu(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) {
    return __nv_bfloat162(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));
}
CINN_EMU_HALF_API __nv_bfloat162 __hneg2(const __nv_bfloat162 a) { return __nv_bfloat162(__hneg(a.x), __hneg(a.y)); }
CINN_EMU_HALF_API __nv_bfloat162 __habs2(const __nv_bfloat162 a) { return __nv_bfloat162(__habs(a.x), __habs(a.y)); }
CINN_EMU_HALF_API __nv_bfloat162 __hcmadd(const __nv_bfloat162 a, const __nv_bfloat162 b, const __nv_bfloat162 c) {
    const __nv_bfloat16 re = __hfma(__hneg(a.y), b.y, __hfma(a.x, b.x, c.x));
    const __nv_bfloat16 im = __hfma(a.y, b.x, __hfma(a.x, b.y, c.y));
    return __nv_bfloat162(re, im);
}

/* ------------------------------------------------------------------------------------------ */
/* Comparisons                                                                                 */

#define CINN_EMU_B16_COMPARE(op, cmp, unordered)                                                     \
    CINN_EMU_HALF_API bool __h##op(const __nv_bfloat16 a, const __nv_bfloat16 b) {              \
        return cinn_emu_half::compare<CINN_EMU_B16_FMT>(a.__x, b.__x, cinn_emu_half::cmp, unordered); \
    }                                                                                            \
    CINN_EMU_HALF_API __nv_bfloat162 __h##op##2(const __nv_bfloat162 a, const __nv_bfloat162 b) { \
        return __nv_bfloat162(CINN_EMU_B16_BITS(__h##op(a.x, b.x) ? 0x3F80u : 0u),                      \
                              CINN_EMU_B16_BITS(__h##op(a.y, b.y) ? 0x3F80u : 0u));                     \
    }                                                                                            \
    CINN_EMU_HALF_API bool __hb##op##2(const __nv_bfloat162 a, const __nv_bfloat162 b) {        \
        return __h##op(a.x, b.x) && __h##op(a.y, b.y);                                           \
    }                                                                                            \
    CINN_EMU_HALF_API unsigned __h##op##2_mask(const __nv_bfloat162 a, const __nv_bfloat162 b) { \
        return (__h##op(a.x, b.x) ? 0x0000FFFFu : 0u) | (__h##op(a.y, b.y) ? 0xFFFF0000u : 0u);  \
    }                                                                                            \
    static_assert(true, "")

CINN_EMU_B16_COMPARE(eq, kEQ, false);
CINN_EMU_B16_COMPARE(ne, kNE, false);
CINN_EMU_B16_COMPARE(lt, kLT, false);
CINN_EMU_B16_COMPARE(le, kLE, false);
CINN_EMU_B16_COMPARE(gt, kGT, false);
CINN_EMU_B16_COMPARE(ge, kGE, false);
CINN_EMU_B16_COMPARE(equ, kEQ, true);
CINN_EMU_B16_COMPARE(neu, kNE, true);
CINN_EMU_B16_COMPARE(ltu, kLT, true);
CINN_EMU_B16_COMPARE(leu, kLE, true);
CINN_EMU_B16_COMPARE(gtu, kGT, true);
CINN_EMU_B16_COMPARE(geu, kGE, true);

CINN_EMU_HALF_API bool __hisnan(const __nv_bfloat16 a) { return cinn_emu_half::is_nan<CINN_EMU_B16_FMT>(a.__x); }
CINN_EMU_HALF_API __nv_bfloat162 __hisnan2(const __nv_bfloat162 a) {
    return __nv_bfloat162(CINN_EMU_B16_BITS(__hisnan(a.x) ? 0x3F80u : 0u), CINN_EMU_B16_BITS(__hisnan(a.y) ? 0x3F80u : 0u));
}
CINN_EMU_HALF_API int __hisinf(const __nv_bfloat16 a) {
    return a.__x == 0xFF80u ? -1 : (a.__x == 0x7F80u ? 1 : 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Math functions                                                                              */

#define CINN_EMU_B16_MATH(name, name2, body)                                                         \
    CINN_EMU_HALF_API __nv_bfloat16 name(const __nv_bfloat16 a) {                               \
        const unsigned short x = a.__x;                                                          \
        return CINN_EMU_B16_BITS(body);                                                                 \
    }                                                                                            \
    CINN_EMU_HALF_API __nv_bfloat162 name2(const __nv_bfloat162 a) {                            \
        return __nv_bfloat162(name(a.x), name(a.y));                                             \
    }                                                                                            \
    static_assert(true, "")

CINN_EMU_B16_MATH(hexp, h2exp, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kExp));
CINN_EMU_B16_MATH(hexp2, h2exp2, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kExp2));
CINN_EMU_B16_MATH(hexp10, h2exp10, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kExp10));
CINN_EMU_B16_MATH(hlog, h2log, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kLog));
CINN_EMU_B16_MATH(hlog2, h2log2, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kLog2));
CINN_EMU_B16_MATH(hlog10, h2log10, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kLog10));
CINN_EMU_B16_MATH(hsqrt, h2sqrt, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kSqrt));
CINN_EMU_B16_MATH(hrsqrt, h2rsqrt, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kRsqrt));
CINN_EMU_B16_MATH(hrcp, h2rcp, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kRcp));
CINN_EMU_B16_MATH(hsin, h2sin, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kSin));
CINN_EMU_B16_MATH(hcos, h2cos, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kCos));
CINN_EMU_B16_MATH(htanh, h2tanh, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kTanh));
CINN_EMU_B16_MATH(htanh_approx, h2tanh_approx, cinn_emu_half::math1<CINN_EMU_B16_FMT>(x, cinn_emu_half::kTanh));
CINN_EMU_B16_MATH(hfloor, h2floor, cinn_emu_half::round_to_integral<CINN_EMU_B16_FMT>(x, cinn_emu_half::kRD));
CINN_EMU_B16_MATH(hceil, h2ceil, cinn_emu_half::round_to_integral<CINN_EMU_B16_FMT>(x, cinn_emu_half::kRU));
CINN_EMU_B16_MATH(htrunc, h2trunc, cinn_emu_half::round_to_integral<CINN_EMU_B16_FMT>(x, cinn_emu_half::kRZ));
CINN_EMU_B16_MATH(hrint, h2rint, cinn_emu_half::round_to_integral<CINN_EMU_B16_FMT>(x, cinn_emu_half::kRN));

/* ------------------------------------------------------------------------------------------ */
/* Cache-hinted loads/stores and atomics                                                       */

#define CINN_EMU_B16_LOADS_STORES(T)                                                                 \
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

#if !defined(CINN_EMU_MATH_H) && !defined(__ldg) && !defined(__ldcg) && !defined(__stcg) && \
    !defined(CINN_EMU_NO_HALF_LDST)
CINN_EMU_B16_LOADS_STORES(__nv_bfloat16);
CINN_EMU_B16_LOADS_STORES(__nv_bfloat162);
#endif

#if !defined(CINN_EMU_ATOMICS_H) && !defined(atomicAdd) && !defined(CINN_EMU_NO_HALF_ATOMICS)
CINN_EMU_HALF_API __nv_bfloat16 atomicAdd(__nv_bfloat16 *const address, const __nv_bfloat16 val) {
    __nv_bfloat16 old;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    __nv_bfloat16 desired;
    do {
        desired = __hadd(old, val);
    } while (!__atomic_compare_exchange(address, &old, &desired, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}
CINN_EMU_HALF_API __nv_bfloat162 atomicAdd(__nv_bfloat162 *const address, const __nv_bfloat162 val) {
    __nv_bfloat162 old;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    __nv_bfloat162 desired;
    do {
        desired = __hadd2(old, val);
    } while (!__atomic_compare_exchange(address, &old, &desired, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}
#endif

/* ------------------------------------------------------------------------------------------ */
/* Operators                                                                                   */

#if !defined(__CUDA_NO_BFLOAT16_OPERATORS__)
CINN_EMU_HALF_API __nv_bfloat16 operator+(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hadd(lh, rh); }
CINN_EMU_HALF_API __nv_bfloat16 operator-(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hsub(lh, rh); }
CINN_EMU_HALF_API __nv_bfloat16 operator*(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hmul(lh, rh); }
CINN_EMU_HALF_API __nv_bfloat16 operator/(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hdiv(lh, rh); }
CINN_EMU_HALF_API __nv_bfloat16 &operator+=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { lh = __hadd(lh, rh); return lh; }
CINN_EMU_HALF_API __nv_bfloat16 &operator-=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { lh = __hsub(lh, rh); return lh; }
CINN_EMU_HALF_API __nv_bfloat16 &operator*=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { lh = __hmul(lh, rh); return lh; }
CINN_EMU_HALF_API __nv_bfloat16 &operator/=(__nv_bfloat16 &lh, const __nv_bfloat16 &rh) { lh = __hdiv(lh, rh); return lh; }
CINN_EMU_HALF_API __nv_bfloat16 &operator++(__nv_bfloat16 &h) { h = __hadd(h, CINN_EMU_B16_BITS(0x3F80u)); return h; }
CINN_EMU_HALF_API __nv_bfloat16 &operator--(__nv_bfloat16 &h) { h = __hsub(h, CINN_EMU_B16_BITS(0x3F80u)); return h; }
CINN_EMU_HALF_API __nv_bfloat16 operator++(__nv_bfloat16 &h, const int) { const __nv_bfloat16 r = h; h = __hadd(h, CINN_EMU_B16_BITS(0x3F80u)); return r; }
CINN_EMU_HALF_API __nv_bfloat16 operator--(__nv_bfloat16 &h, const int) { const __nv_bfloat16 r = h; h = __hsub(h, CINN_EMU_B16_BITS(0x3F80u)); return r; }
CINN_EMU_HALF_API __nv_bfloat16 operator+(const __nv_bfloat16 &h) { return h; }
CINN_EMU_HALF_API __nv_bfloat16 operator-(const __nv_bfloat16 &h) { return __hneg(h); }
CINN_EMU_HALF_API bool operator==(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __heq(lh, rh); }
CINN_EMU_HALF_API bool operator!=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hneu(lh, rh); }
CINN_EMU_HALF_API bool operator>(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hgt(lh, rh); }
CINN_EMU_HALF_API bool operator<(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hlt(lh, rh); }
CINN_EMU_HALF_API bool operator>=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hge(lh, rh); }
CINN_EMU_HALF_API bool operator<=(const __nv_bfloat16 &lh, const __nv_bfloat16 &rh) { return __hle(lh, rh); }

CINN_EMU_HALF_API __nv_bfloat162 operator+(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hadd2(lh, rh); }
CINN_EMU_HALF_API __nv_bfloat162 operator-(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hsub2(lh, rh); }
CINN_EMU_HALF_API __nv_bfloat162 operator*(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hmul2(lh, rh); }
CINN_EMU_HALF_API __nv_bfloat162 operator/(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __h2div(lh, rh); }
CINN_EMU_HALF_API __nv_bfloat162 &operator+=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { lh = __hadd2(lh, rh); return lh; }
CINN_EMU_HALF_API __nv_bfloat162 &operator-=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { lh = __hsub2(lh, rh); return lh; }
CINN_EMU_HALF_API __nv_bfloat162 &operator*=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { lh = __hmul2(lh, rh); return lh; }
CINN_EMU_HALF_API __nv_bfloat162 &operator/=(__nv_bfloat162 &lh, const __nv_bfloat162 &rh) { lh = __h2div(lh, rh); return lh; }
CINN_EMU_HALF_API __nv_bfloat162 &operator++(__nv_bfloat162 &h) { h = __hadd2(h, __nv_bfloat162(CINN_EMU_B16_BITS(0x3F80u), CINN_EMU_B16_BITS(0x3F80u))); return h; }
CINN_EMU_HALF_API __nv_bfloat162 &operator--(__nv_bfloat162 &h) { h = __hsub2(h, __nv_bfloat162(CINN_EMU_B16_BITS(0x3F80u), CINN_EMU_B16_BITS(0x3F80u))); return h; }
CINN_EMU_HALF_API __nv_bfloat162 operator++(__nv_bfloat162 &h, const int) { const __nv_bfloat162 r = h; ++h; return r; }
CINN_EMU_HALF_API __nv_bfloat162 operator--(__nv_bfloat162 &h, const int) { const __nv_bfloat162 r = h; --h; return r; }
CINN_EMU_HALF_API __nv_bfloat162 operator+(const __nv_bfloat162 &h) { return h; }
CINN_EMU_HALF_API __nv_bfloat162 operator-(const __nv_bfloat162 &h) { return __hneg2(h); }
CINN_EMU_HALF_API bool operator==(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbeq2(lh, rh); }
CINN_EMU_HALF_API bool operator!=(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbneu2(lh, rh); }
CINN_EMU_HALF_API bool operator>(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbgt2(lh, rh); }
CINN_EMU_HALF_API bool operator<(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hblt2(lh, rh); }
CINN_EMU_HALF_API bool operator>=(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hbge2(lh, rh); }
CINN_EMU_HALF_API bool operator<=(const __nv_bfloat162 &lh, const __nv_bfloat162 &rh) { return __hble2(lh, rh); }
#endif /* !defined(__CUDA_NO_BFLOAT16_OPERATORS__) */

#undef CINN_EMU_B16_BINARY
#undef CINN_EMU_B16_BINARY2
#undef CINN_EMU_B16_COMPARE
#undef CINN_EMU_B16_MATH
#undef CINN_EMU_B16_LOADS_STORES
#undef CINN_EMU_B16_FMT
#undef CINN_EMU_B16_BITS

#endif /* __CUDA_BF16_H__ */
