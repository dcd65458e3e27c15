/*
 * cinn_emu_half_common.h -- private helpers shared by the cuda-emu versions of
 * cuda_fp16.h and cuda_bf16.h.  Not part of the CUDA API; kernels never include it.
 *
 * Everything here is exact integer / IEEE double arithmetic, so the results do not
 * depend on the host's FPU rounding mode, x87 excess precision or FMA contraction:
 *
 *   * decoding a half / bfloat16 into float or double is exact;
 *   * encoding (float, double, 64-bit integers -> half / bfloat16) goes through one
 *     routine, `round_pack`, that rounds an exact value m * 2^e once, in any of the
 *     four IEEE modes, with subnormals and overflow handled as IEEE 754 says;
 *   * arithmetic is done in double and, where double cannot hold the exact result
 *     (sums, fused multiply-adds, quotients), the double result is rounded *to odd*
 *     (the sticky bit is kept in the last place).  A value rounded to odd with
 *     p + 2 or more bits rounds correctly to p bits afterwards (Boldo & Melquiond),
 *     and 53 >= 11 + 2 (half) and 53 >= 8 + 2 (bfloat16), so every operation is
 *     rounded exactly once, the way the GPU's add/sub/mul/fma.rn.f16 / .bf16 do.
 */
#ifndef CINN_EMU_HALF_COMMON_H
#define CINN_EMU_HALF_COMMON_H

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "the cuda-emu half/bfloat16 headers need C++17"
#endif

#if defined(__FAST_MATH__)
#error "the cuda-emu half/bfloat16 headers need IEEE double arithmetic; do not compile with -ffast-math"
#endif

/* CUDA function qualifiers, for when these headers are used without the emulator core. */
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif

#include <cmath>
#include <cstdint>
#include <cstring>

/* Every function in these headers is an inline function with external linkage. */
#define CINN_EMU_HALF_API inline

namespace cinn_emu_half {

enum RoundMode : int { kRN = 0, kRZ = 1, kRD = 2, kRU = 3 };

/* A binary floating-point format with MantBits stored fraction bits and ExpBits
 * exponent bits (half: 10/5, bfloat16: 7/8). */
template <int MantBits, int ExpBits>
struct Format {
    static constexpr int kMant = MantBits;
    static constexpr int kBias = (1 << (ExpBits - 1)) - 1;
    static constexpr int kEmax = kBias;     /* exponent of the largest finite value */
    static constexpr int kEmin = 1 - kBias; /* exponent of the smallest normal value */
    static constexpr unsigned kInf = ((1u << ExpBits) - 1u) << MantBits;
    static constexpr unsigned kMaxFinite = kInf - 1u;
    static constexpr unsigned kMantMask = (1u << MantBits) - 1u;
    /* The quiet NaN the GPU produces for every NaN result (CUDART_NAN_FP16 / _BF16). */
    static constexpr unsigned short kCanonicalNaN = 0x7FFFu;
    static constexpr unsigned short kOne = static_cast<unsigned short>(kBias << MantBits);
};
using HalfFormat = Format<10, 5>;
using BF16Format = Format<7, 8>;

inline std::uint32_t float_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
inline float bits_float(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
inline std::uint64_t double_bits(double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
}
inline double bits_double(std::uint64_t u) {
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
}
inline bool double_is_nan(double d) {
    return (double_bits(d) & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
}
inline bool double_is_finite(double d) {
    return (double_bits(d) & 0x7FF0000000000000ull) != 0x7FF0000000000000ull;
}

template <class F>
inline unsigned short overflow_bits(bool negative, int mode) {
    const unsigned sign = negative ? 0x8000u : 0u;
    bool to_inf;
    switch (mode) {
        case kRZ: to_inf = false; break;
        case kRD: to_inf = negative; break;
        case kRU: to_inf = !negative; break;
        default: to_inf = true; break;
    }
    return static_cast<unsigned short>(sign | (to_inf ? F::kInf : F::kMaxFinite));
}

/* Round the exact value (-1)^negative * mant * 2^exp2 once to format F. */
template <class F>
inline unsigned short round_pack(bool negative, std::uint64_t mant, int exp2, int mode) {
    const unsigned sign = negative ? 0x8000u : 0u;
    if (mant == 0) {
        return static_cast<unsigned short>(sign);
    }
    const int msb = 63 - __builtin_clzll(mant);
    const int e = msb + exp2; /* |value| lies in [2^e, 2^(e+1)) */
    if (e > F::kEmax) {
        return overflow_bits<F>(negative, mode);
    }
    const int e_eff = e < F::kEmin ? F::kEmin : e; /* subnormals share the smallest exponent */
    const int shift = (e_eff - F::kMant) - exp2;   /* bits below the result's last place */
    std::uint64_t sig;
    if (shift <= 0) {
        sig = mant << (-shift); /* exact; -shift <= kMant */
    } else {
        bool above_half;
        bool exactly_half;
        bool inexact;
        if (shift >= 64) {
            sig = 0;
            above_half = shift == 64 && mant > (1ull << 63);
            exactly_half = shift == 64 && mant == (1ull << 63);
            inexact = true;
        } else {
            sig = mant >> shift;
            const std::uint64_t rest = mant & ((1ull << shift) - 1ull);
            const std::uint64_t half = 1ull << (shift - 1);
            above_half = rest > half;
            exactly_half = rest == half;
            inexact = rest != 0;
        }
        bool up;
        switch (mode) {
            case kRZ: up = false; break;
            case kRD: up = inexact && negative; break;
            case kRU: up = inexact && !negative; break;
            default: up = above_half || (exactly_half && (sig & 1u) != 0u); break;
        }
        sig += up ? 1u : 0u;
    }
    /* Normal: ((e + bias - 1) << kMant) + sig with sig in [2^kMant, 2^(kMant+1)]; a carry out
     * of the significand lands in the exponent (up to exactly kInf).  Subnormal: e_eff + bias - 1
     * is 0 and sig < 2^kMant, or == 2^kMant for the smallest normal. */
    const unsigned bits =
        (static_cast<unsigned>(e_eff + F::kBias - 1) << F::kMant) + static_cast<unsigned>(sig);
    return static_cast<unsigned short>(sign | bits);
}

template <class F>
inline unsigned short from_float(float f, int mode) {
    const std::uint32_t u = float_bits(f);
    const bool negative = (u >> 31) != 0u;
    const unsigned exp = (u >> 23) & 0xFFu;
    const std::uint32_t frac = u & 0x7FFFFFu;
    if (exp == 0xFFu) {
        return frac != 0u ? F::kCanonicalNaN
                          : static_cast<unsigned short>((negative ? 0x8000u : 0u) | F::kInf);
    }
    if (exp == 0u) {
        return round_pack<F>(negative, frac, -149, mode);
    }
    return round_pack<F>(negative, frac | 0x800000u, static_cast<int>(exp) - 150, mode);
}

template <class F>
inline unsigned short from_double(double d, int mode) {
    const std::uint64_t u = double_bits(d);
    const bool negative = (u >> 63) != 0u;
    const unsigned exp = static_cast<unsigned>((u >> 52) & 0x7FFu);
    const std::uint64_t frac = u & 0xFFFFFFFFFFFFFull;
    if (exp == 0x7FFu) {
        return frac != 0u ? F::kCanonicalNaN
                          : static_cast<unsigned short>((negative ? 0x8000u : 0u) | F::kInf);
    }
    if (exp == 0u) {
        return round_pack<F>(negative, frac, -1074, mode);
    }
    return round_pack<F>(negative, frac | 0x10000000000000ull, static_cast<int>(exp) - 1075, mode);
}

template <class F>
inline unsigned short from_int64(long long v, int mode) {
    const bool negative = v < 0;
    const std::uint64_t mag =
        negative ? static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(v)
                 : static_cast<std::uint64_t>(v);
    return round_pack<F>(negative, mag, 0, mode);
}

template <class F>
inline unsigned short from_uint64(unsigned long long v, int mode) {
    return round_pack<F>(false, v, 0, mode);
}

template <class F>
inline bool is_nan(unsigned short h) {
    return (h & 0x7FFFu) > F::kInf;
}
template <class F>
inline bool is_inf(unsigned short h) {
    return (h & 0x7FFFu) == F::kInf;
}

/* Exact decode to double.  NaNs decode to the default double NaN. */
template <class F>
inline double to_double(unsigned short h) {
    const bool negative = (h & 0x8000u) != 0u;
    const unsigned exp = (h & 0x7FFFu) >> F::kMant;
    const unsigned frac = h & F::kMantMask;
    const unsigned exp_all_ones = F::kInf >> F::kMant;
    double mag;
    if (exp == exp_all_ones) {
        mag = frac != 0u ? bits_double(0x7FF8000000000000ull) : bits_double(0x7FF0000000000000ull);
        if (frac != 0u) {
            return mag;
        }
    } else if (exp == 0u) {
        mag = std::ldexp(static_cast<double>(frac), F::kEmin - F::kMant);
    } else {
        mag = std::ldexp(static_cast<double>(frac | (1u << F::kMant)),
                         static_cast<int>(exp) - F::kBias - F::kMant);
    }
    return negative ? -mag : mag;
}

/* half -> float: exact; a NaN becomes the canonical float NaN 0x7FFFFFFF (as the GPU's
 * cvt.f32.f16 and NVIDIA's host fallback do). */
inline float half_to_float(unsigned short h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const unsigned exp = (h >> 10) & 0x1Fu;
    const std::uint32_t frac = h & 0x3FFu;
    if (exp == 0x1Fu) {
        return bits_float(frac != 0u ? 0x7FFFFFFFu : (sign | 0x7F800000u));
    }
    if (exp != 0u) {
        return bits_float(sign | ((exp + 112u) << 23) | (frac << 13));
    }
    if (frac == 0u) {
        return bits_float(sign);
    }
    const int msb = 31 - __builtin_clz(frac); /* 0..9; value = frac * 2^-24 */
    const std::uint32_t fexp = static_cast<std::uint32_t>(msb - 24 + 127);
    const std::uint32_t ffrac = (frac << (23 - msb)) & 0x7FFFFFu;
    return bits_float(sign | (fexp << 23) | ffrac);
}

/* bfloat16 -> float: the bfloat16 is the top half of the float (NaN payloads kept, as on
 * the GPU, where the conversion is a register move). */
inline float bf16_to_float(unsigned short h) {
    return bits_float(static_cast<std::uint32_t>(h) << 16);
}

/* ---------------------------------------------------------------------------------------- */
/* Arithmetic: exact double intermediates, rounded once.                                     */

/* Move a correctly rounded double `s` one place toward the exact value when the exact value
 * differs from it (residual_sign != 0) and `s` has an even last bit: round to odd. */
inline double make_odd(double s, int residual_sign) {
    if (residual_sign == 0 || !double_is_finite(s) || s == 0.0) {
        return s;
    }
    std::uint64_t u = double_bits(s);
    if ((u & 1u) != 0u) {
        return s;
    }
    const bool s_negative = (u >> 63) != 0u;
    const bool away = (residual_sign > 0) != s_negative; /* exact value has larger magnitude */
    u = away ? u + 1u : u - 1u;
    return bits_double(u);
}

inline int sign_of(double d) {
    return d > 0.0 ? 1 : (d < 0.0 ? -1 : 0);
}

/* a + b rounded to odd in double (a, b finite or not). */
inline double odd_sum(double a, double b) {
    const double s = a + b;
    if (!double_is_finite(s) || !double_is_finite(a) || !double_is_finite(b)) {
        return s;
    }
    /* Knuth's TwoSum: s + err == a + b exactly. */
    const double bv = s - a;
    const double av = s - bv;
    const double err = (a - av) + (b - bv);
    return make_odd(s, sign_of(err));
}

/* a / b rounded to odd in double. */
inline double odd_quotient(double a, double b) {
    const double q = a / b;
    if (!double_is_finite(q) || q == 0.0 || !double_is_finite(b)) {
        return q;
    }
    const double r = std::fma(-q, b, a); /* exact remainder: a == q*b + r */
    return make_odd(q, sign_of(r) * sign_of(b));
}

template <class F>
inline unsigned short pack_rn(double d) {
    return from_double<F>(d, kRN);
}

template <class F>
inline unsigned short add(unsigned short a, unsigned short b) {
    return pack_rn<F>(odd_sum(to_double<F>(a), to_double<F>(b)));
}
template <class F>
inline unsigned short sub(unsigned short a, unsigned short b) {
    return pack_rn<F>(odd_sum(to_double<F>(a), -to_double<F>(b)));
}
template <class F>
inline unsigned short mul(unsigned short a, unsigned short b) {
    /* at most 2 * (kMant + 1) <= 22 significant bits: exact in double */
    return pack_rn<F>(to_double<F>(a) * to_double<F>(b));
}
template <class F>
inline unsigned short div(unsigned short a, unsigned short b) {
    return pack_rn<F>(odd_quotient(to_double<F>(a), to_double<F>(b)));
}
template <class F>
inline unsigned short fma(unsigned short a, unsigned short b, unsigned short c) {
    const double product = to_double<F>(a) * to_double<F>(b); /* exact */
    return pack_rn<F>(odd_sum(product, to_double<F>(c)));
}

/* Negation and absolute value flip / clear the sign; a NaN becomes the canonical NaN. */
template <class F>
inline unsigned short neg(unsigned short a) {
    return is_nan<F>(a) ? F::kCanonicalNaN : static_cast<unsigned short>(a ^ 0x8000u);
}
template <class F>
inline unsigned short abs(unsigned short a) {
    return is_nan<F>(a) ? F::kCanonicalNaN : static_cast<unsigned short>(a & 0x7FFFu);
}

/* max/min as CUDA's __hmax/__hmin: a NaN operand is ignored, two NaNs give the canonical NaN,
 * and -0 < +0. */
template <class F>
inline unsigned short max(unsigned short a, unsigned short b) {
    const bool na = is_nan<F>(a);
    const bool nb = is_nan<F>(b);
    if (na && nb) return F::kCanonicalNaN;
    if (na) return b;
    if (nb) return a;
    const double da = to_double<F>(a);
    const double db = to_double<F>(b);
    if (da == db) return static_cast<unsigned short>(a & b); /* +0 wins over -0 */
    return da > db ? a : b;
}
template <class F>
inline unsigned short min(unsigned short a, unsigned short b) {
    const bool na = is_nan<F>(a);
    const bool nb = is_nan<F>(b);
    if (na && nb) return F::kCanonicalNaN;
    if (na) return b;
    if (nb) return a;
    const double da = to_double<F>(a);
    const double db = to_double<F>(b);
    if (da == db) return static_cast<unsigned short>(a | b); /* -0 wins over +0 */
    return da < db ? a : b;
}
template <class F>
inline unsigned short max_nan(unsigned short a, unsigned short b) {
    return (is_nan<F>(a) || is_nan<F>(b)) ? F::kCanonicalNaN : max<F>(a, b);
}
template <class F>
inline unsigned short min_nan(unsigned short a, unsigned short b) {
    return (is_nan<F>(a) || is_nan<F>(b)) ? F::kCanonicalNaN : min<F>(a, b);
}
/* PTX .sat: clamp to [+0, 1], NaN -> +0. */
template <class F>
inline unsigned short saturate(unsigned short r) {
    return min<F>(max<F>(r, static_cast<unsigned short>(0)), F::kOne);
}
/* PTX .relu: negative -> +0, NaN -> canonical NaN. */
template <class F>
inline unsigned short relu(unsigned short r) {
    return max_nan<F>(r, static_cast<unsigned short>(0));
}

/* Ordered comparisons are false when either side is NaN; the *u versions are true then. */
enum Compare : int { kEQ, kNE, kLT, kLE, kGT, kGE };
template <class F>
inline bool compare(unsigned short a, unsigned short b, int op, bool unordered) {
    if (is_nan<F>(a) || is_nan<F>(b)) {
        return unordered;
    }
    const double da = to_double<F>(a);
    const double db = to_double<F>(b);
    switch (op) {
        case kEQ: return da == db;
        case kNE: return da != db;
        case kLT: return da < db;
        case kLE: return da <= db;
        case kGT: return da > db;
        default: return da >= db;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Rounding to integral values and integer conversions.                                      */

/* Round a finite double to an integral double in the given mode (independent of the FPU's
 * rounding mode).  The sign of a zero result follows the input, as IEEE roundToIntegral. */
inline double round_integral(double x, int mode) {
    if (!double_is_finite(x) || std::fabs(x) >= 4503599627370496.0 /* 2^52 */) {
        return x;
    }
    double r;
    switch (mode) {
        case kRZ: r = std::trunc(x); break;
        case kRD: r = std::floor(x); break;
        case kRU: r = std::ceil(x); break;
        default: {
            r = std::floor(x);
            const double diff = x - r; /* exact */
            if (diff > 0.5 || (diff == 0.5 && std::fmod(r, 2.0) != 0.0)) {
                r += 1.0;
            }
            break;
        }
    }
    return std::copysign(r, x);
}

template <class F>
inline unsigned short round_to_integral(unsigned short h, int mode) {
    if (is_nan<F>(h)) {
        return F::kCanonicalNaN;
    }
    return pack_rn<F>(round_integral(to_double<F>(h), mode));
}

/* PTX cvt.{rni,rzi,rmi,rpi}.{s,u}N.{f16,bf16}: saturating, NaN -> 0. */
template <class F>
inline long long to_signed(unsigned short h, int mode, long long lo, long long hi) {
    if (is_nan<F>(h)) {
        return 0;
    }
    const double r = round_integral(to_double<F>(h), mode);
    if (r <= static_cast<double>(lo)) return lo; /* lo is -2^k: exact in double */
    if (r >= -static_cast<double>(lo)) return hi; /* -lo == hi + 1 == 2^k */
    return static_cast<long long>(r);
}
template <class F>
inline unsigned long long to_unsigned(unsigned short h, int mode, unsigned long long hi) {
    if (is_nan<F>(h)) {
        return 0;
    }
    const double r = round_integral(to_double<F>(h), mode);
    if (r <= 0.0) return 0;
    /* hi + 1 is a power of two: exact in double (hi itself may not be) */
    const double limit = static_cast<double>(hi / 2u + 1u) * 2.0;
    if (r >= limit) return hi;
    return static_cast<unsigned long long>(r);
}

/* ---------------------------------------------------------------------------------------- */
/* Math functions: evaluated in double (well under one double ulp of error), rounded once.   */

enum MathFn : int {
    kExp, kExp2, kExp10, kLog, kLog2, kLog10, kSqrt, kRsqrt, kRcp, kSin, kCos, kTanh
};

template <class F>
inline unsigned short math1(unsigned short h, int fn) {
    if (is_nan<F>(h)) {
        return F::kCanonicalNaN;
    }
    const double x = to_double<F>(h);
    double r;
    switch (fn) {
        case kExp: r = std::exp(x); break;
        case kExp2: r = std::exp2(x); break;
        case kExp10: r = std::pow(10.0, x); break;
        case kLog: r = std::log(x); break;
        case kLog2: r = std::log2(x); break;
        case kLog10: r = std::log10(x); break;
        case kSqrt: r = std::sqrt(x); break;
        case kRsqrt: r = 1.0 / std::sqrt(x); break;
        case kRcp: r = 1.0 / x; break;
        case kSin: r = std::sin(x); break;
        case kCos: r = std::cos(x); break;
        default: r = std::tanh(x); break;
    }
    return pack_rn<F>(r);
}

}  // namespace cinn_emu_half

#endif  // CINN_EMU_HALF_COMMON_H
