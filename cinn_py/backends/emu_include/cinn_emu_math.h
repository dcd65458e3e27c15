/*
 * cinn_emu_math.h -- CUDA's device math and bit intrinsics in host C++.
 *
 * The float and double functions of <cmath> (expf, tanhf, erff, fmaxf, ...) are
 * glibc's, already in the global namespace.  What CUDA adds:
 *
 *   * fast intrinsics (__expf, __logf, __fdividef, ...): on the GPU they trade accuracy
 *     for speed; here they are the accurate functions, so the emulator's results are
 *     at least as close to NumPy as the GPU's.  The explicitly rounded forms
 *     (__fadd_rn, __fmaf_rn, ...) are the default round-to-nearest operations;
 *   * min/max overloads for every integer width and float, with CUDA's choice for
 *     mixed signedness (the unsigned overload) and fminf/fmaxf semantics for floats
 *     (a NaN operand is ignored);
 *   * saturating float -> integer conversions with a rounding mode (__float2int_rn);
 *   * bit reinterpretations, population count, leading zeros, bit reverse, ...;
 *   * cache-hinted loads and stores (__ldg, __stcs, ...), plain accesses on a CPU.
 */
#ifndef CINN_EMU_MATH_H
#define CINN_EMU_MATH_H

/* ---- fast and explicitly rounded float intrinsics ------------------------------------ */
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) {
    *s = sinf(x);
    *c = cosf(x);
}
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
/* Clamp to [0, 1]; NaN gives 0, as on the GPU. */
inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }

/* ---- CUDA math functions glibc lacks ------------------------------------------------- */
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.70710678118654752f); }
inline double normcdf(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }
inline float fdividef(float a, float b) { return a / b; }

/* ---- min / max ----------------------------------------------------------------------- */
#define CINN_EMU_MINMAX(R, A, B)                                 \
    inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; } \
    inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
CINN_EMU_MINMAX(int, int, int)
CINN_EMU_MINMAX(unsigned int, unsigned int, unsigned int)
CINN_EMU_MINMAX(unsigned int, int, unsigned int)
CINN_EMU_MINMAX(unsigned int, unsigned int, int)
CINN_EMU_MINMAX(long, long, long)
CINN_EMU_MINMAX(unsigned long, unsigned long, unsigned long)
CINN_EMU_MINMAX(unsigned long, long, unsigned long)
CINN_EMU_MINMAX(unsigned long, unsigned long, long)
CINN_EMU_MINMAX(long long, long long, long long)
CINN_EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
CINN_EMU_MINMAX(unsigned long long, long long, unsigned long long)
CINN_EMU_MINMAX(unsigned long long, unsigned long long, long long)
#undef CINN_EMU_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }
inline unsigned int umin(unsigned int a, unsigned int b) { return min(a, b); }
inline unsigned int umax(unsigned int a, unsigned int b) { return max(a, b); }
inline long long llmin(long long a, long long b) { return min(a, b); }
inline long long llmax(long long a, long long b) { return max(a, b); }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return min(a, b); }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return max(a, b); }

/* ---- float -> integer with a rounding mode, saturating as PTX cvt.rni/rzi/rmi/rpi ------ */
namespace cinn_emu {
/* Out-of-range values clamp to the integer's range (C's cast is UB). NaN as the PTX ISA
 * (9.0) says and an H200 showed: 0 when the source is not f64 and the result is not 64-bit,
 * else 1 << (bits - 1) (INT64_MIN for cvt.rzi.s64.f32); cinn_float_to_int handles NaN
 * itself, so generated code never depends on this. */
template <class I, class F>
inline I saturating_cast(F r) {
    if (r != r) {
        if (sizeof(I) < 8 && !std::is_same_v<F, double>) return 0;
        return static_cast<I>(std::numeric_limits<std::make_unsigned_t<I>>::max() / 2 + 1);
    }
    /* The limits are powers of two (or 0), exact in float and double. */
    const F lo = static_cast<F>(std::numeric_limits<I>::min());
    const F hi =
        std::is_signed_v<I> ? -lo : static_cast<F>(std::numeric_limits<I>::max() / 2 + 1) * F(2);
    if (r <= lo) return std::numeric_limits<I>::min();
    if (r >= hi) return std::numeric_limits<I>::max();
    return static_cast<I>(r);
}
}  // namespace cinn_emu

#define CINN_EMU_CVT(name, I, F)                                                     \
    inline I name##_rn(F x) { return ::cinn_emu::saturating_cast<I>(nearbyint(x)); } \
    inline I name##_rz(F x) { return ::cinn_emu::saturating_cast<I>(trunc(x)); }     \
    inline I name##_rd(F x) { return ::cinn_emu::saturating_cast<I>(floor(x)); }     \
    inline I name##_ru(F x) { return ::cinn_emu::saturating_cast<I>(ceil(x)); }
CINN_EMU_CVT(__float2int, int, float)
CINN_EMU_CVT(__float2uint, unsigned int, float)
CINN_EMU_CVT(__float2ll, long long, float)
CINN_EMU_CVT(__float2ull, unsigned long long, float)
CINN_EMU_CVT(__double2int, int, double)
CINN_EMU_CVT(__double2uint, unsigned int, double)
CINN_EMU_CVT(__double2ll, long long, double)
CINN_EMU_CVT(__double2ull, unsigned long long, double)
#undef CINN_EMU_CVT
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned int x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline float __ull2float_rn(unsigned long long x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }
inline double __ll2double_rn(long long x) { return static_cast<double>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }

/* ---- bit reinterpretation ------------------------------------------------------------ */
inline float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
inline int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
inline float __uint_as_float(unsigned int x) { return __builtin_bit_cast(float, x); }
inline unsigned int __float_as_uint(float x) { return __builtin_bit_cast(unsigned int, x); }
inline double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
inline long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
inline int __double2hiint(double x) { return static_cast<int>(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(__double_as_longlong(x)); }
inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double(static_cast<long long>(
        (static_cast<unsigned long long>(static_cast<unsigned int>(hi)) << 32) |
        static_cast<unsigned int>(lo)));
}

/* ---- bit manipulation (defined for 0, unlike the GCC builtins) ----------------------- */
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) {
    return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(static_cast<unsigned int>(x))) << 32) |
           __brev(static_cast<unsigned int>(x >> 32));
}
/* Byte i of the result is byte s[4i+2:4i] of the 8-byte value y:x. */
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    const unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned int result = 0;
    for (int i = 0; i < 4; ++i) {
        const unsigned int selector = (s >> (4 * i)) & 7u;
        result |= static_cast<unsigned int>((bytes >> (8 * selector)) & 0xFFu) << (8 * i);
    }
    return result;
}
/* Shift the 64-bit hi:lo left (right) and return the high (low) word; the _c forms clamp the
 * shift to 32, the others take it modulo 32. */
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((v << (shift & 31u)) >> 32);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((v << (shift < 32u ? shift : 32u)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(v >> (shift & 31u));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(v >> (shift < 32u ? shift : 32u));
}
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline long long __mul64hi(long long a, long long b) {
    return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
/* The low 24 bits of each operand, multiplied. */
inline int __mul24(int a, int b) {
    const long long a24 = static_cast<int>(static_cast<unsigned int>(a) << 8) >> 8;
    const long long b24 = static_cast<int>(static_cast<unsigned int>(b) << 8) >> 8;
    return static_cast<int>(a24 * b24);
}
inline unsigned int __umul24(unsigned int a, unsigned int b) {
    return (a & 0xFFFFFFu) * (b & 0xFFFFFFu);
}

/* ---- cache-hinted loads and stores --------------------------------------------------- */
template <class T>
inline T __ldg(const T* p) {
    return *p;
}
template <class T>
inline T __ldcg(const T* p) {
    return *p;
}
template <class T>
inline T __ldca(const T* p) {
    return *p;
}
template <class T>
inline T __ldcs(const T* p) {
    return *p;
}
template <class T>
inline T __ldlu(const T* p) {
    return *p;
}
template <class T>
inline T __ldcv(const T* p) {
    return *p;
}
template <class T>
inline void __stcg(T* p, T v) {
    *p = v;
}
template <class T>
inline void __stcs(T* p, T v) {
    *p = v;
}
template <class T>
inline void __stwb(T* p, T v) {
    *p = v;
}
template <class T>
inline void __stwt(T* p, T v) {
    *p = v;
}

#endif /* CINN_EMU_MATH_H */
