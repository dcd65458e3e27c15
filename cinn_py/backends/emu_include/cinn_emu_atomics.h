/*
 * cinn_emu_atomics.h -- CUDA's atomic read-modify-write functions.
 *
 * The threads of a launch are fibers on one OS thread that switch only inside barriers,
 * warp collectives and __nanosleep, never in the middle of one of these functions, so a
 * plain read-modify-write is atomic.  (Running blocks on several OS threads would need
 * real atomics here.)  Each returns the old value, as CUDA's do.  The _block and
 * _system scopes are the same thing on one CPU thread.
 */
#ifndef CINN_EMU_ATOMICS_H
#define CINN_EMU_ATOMICS_H

#define CINN_EMU_ATOMIC(name, T, new_value) \
    inline T name(T* address, T val) {      \
        const T old = *address;             \
        *address = (new_value);             \
        return old;                         \
    }

CINN_EMU_ATOMIC(atomicAdd, int, old + val)
CINN_EMU_ATOMIC(atomicAdd, unsigned int, old + val)
CINN_EMU_ATOMIC(atomicAdd, unsigned long long, old + val)
CINN_EMU_ATOMIC(atomicAdd, float, old + val)
CINN_EMU_ATOMIC(atomicAdd, double, old + val)
CINN_EMU_ATOMIC(atomicSub, int, old - val)
CINN_EMU_ATOMIC(atomicSub, unsigned int, old - val)
CINN_EMU_ATOMIC(atomicExch, int, val)
CINN_EMU_ATOMIC(atomicExch, unsigned int, val)
CINN_EMU_ATOMIC(atomicExch, unsigned long long, val)
CINN_EMU_ATOMIC(atomicExch, float, val)
CINN_EMU_ATOMIC(atomicMin, int, val < old ? val : old)
CINN_EMU_ATOMIC(atomicMin, unsigned int, val < old ? val : old)
CINN_EMU_ATOMIC(atomicMin, long long, val < old ? val : old)
CINN_EMU_ATOMIC(atomicMin, unsigned long long, val < old ? val : old)
CINN_EMU_ATOMIC(atomicMax, int, val > old ? val : old)
CINN_EMU_ATOMIC(atomicMax, unsigned int, val > old ? val : old)
CINN_EMU_ATOMIC(atomicMax, long long, val > old ? val : old)
CINN_EMU_ATOMIC(atomicMax, unsigned long long, val > old ? val : old)
CINN_EMU_ATOMIC(atomicAnd, int, old& val)
CINN_EMU_ATOMIC(atomicAnd, unsigned int, old& val)
CINN_EMU_ATOMIC(atomicAnd, unsigned long long, old& val)
CINN_EMU_ATOMIC(atomicOr, int, old | val)
CINN_EMU_ATOMIC(atomicOr, unsigned int, old | val)
CINN_EMU_ATOMIC(atomicOr, unsigned long long, old | val)
CINN_EMU_ATOMIC(atomicXor, int, old ^ val)
CINN_EMU_ATOMIC(atomicXor, unsigned int, old ^ val)
CINN_EMU_ATOMIC(atomicXor, unsigned long long, old ^ val)
/* Wrapping increment / decrement: ((old >= val) ? 0 : old + 1), ((old == 0 || old > val) ? val :
 * old - 1). */
CINN_EMU_ATOMIC(atomicInc, unsigned int, old >= val ? 0u : old + 1u)
CINN_EMU_ATOMIC(atomicDec, unsigned int, (old == 0u || old > val) ? val : old - 1u)
#undef CINN_EMU_ATOMIC

#define CINN_EMU_ATOMIC_CAS(T)                         \
    inline T atomicCAS(T* address, T compare, T val) { \
        const T old = *address;                        \
        if (old == compare) *address = val;            \
        return old;                                    \
    }
CINN_EMU_ATOMIC_CAS(int)
CINN_EMU_ATOMIC_CAS(unsigned int)
CINN_EMU_ATOMIC_CAS(unsigned long long)
CINN_EMU_ATOMIC_CAS(unsigned short)
#undef CINN_EMU_ATOMIC_CAS

namespace cinn_emu {
template <class T>
struct non_deduced {
    using type = T;
};
}  // namespace cinn_emu

/* atomicAdd for the class types of cuda_fp16.h / cuda_bf16.h (__half, __half2,
 * __nv_bfloat16, __nv_bfloat162), through their operator+, so this header does not
 * depend on them.  The value converts to the pointee type, like CUDA's overloads. */
template <class T>
inline std::enable_if_t<std::is_class_v<T>, T> atomicAdd(
    T* address, typename ::cinn_emu::non_deduced<T>::type val) {
    const T old = *address;
    *address = old + val;
    return old;
}

#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor

#endif /* CINN_EMU_ATOMICS_H */
