/*
 * cinn_emu_warp.h -- warp shuffles and votes with their real cross-lane semantics.
 *
 * A warp is 32 consecutive threads in CUDA's linear order (x fastest, then y, then z).
 * Every *_sync intrinsic is a collective among the lanes of its mask: each lane
 * deposits its operand in its own slot and blocks (cinn_emu_scheduler.h) until every
 * lane of the mask that has not exited has arrived with the same mask; the last one to
 * arrive computes every lane's result.  Lanes of a mask that exited, or that do not
 * exist in a block whose size is not a multiple of 32, do not take part, as on a GPU;
 * a shuffle reading from such a lane gets garbage (0xFF bytes), as the GPU's value is
 * undefined there.  A lane whose mask leaves itself out is an error.
 *
 * Shuffles take any trivially copyable type of at most 8 bytes (int, unsigned, float,
 * double, long long, __half, __nv_bfloat16, __half2, ...): the value travels as bits.
 */
#ifndef CINN_EMU_WARP_H
#define CINN_EMU_WARP_H

namespace cinn_emu {

template <class T>
inline unsigned long long to_bits(const T& value) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                  "warp shuffles move values of at most 8 bytes");
    unsigned long long bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return bits;
}

template <class T>
inline T from_bits(unsigned long long bits) {
    T value;
    std::memcpy(&value, &bits, sizeof(T));
    return value;
}

enum class ShuffleMode { kIdx, kUp, kDown, kXor };

/* The lane a shuffle reads, exactly as PTX shfl.sync computes it: `width` (a power of two)
 * splits the warp into segments; the mask c = ((32 - width) << 8) | clamp that CUDA passes
 * gives segmask = 32 - width and the segment's last lane (first lane for up) as the bound.
 * A source outside the bound reads the caller's own value. */
inline int shuffle_source(ShuffleMode mode, unsigned lane, int operand, int width) {
    const unsigned segmask = (32u - static_cast<unsigned>(width)) & 31u;
    const unsigned b = static_cast<unsigned>(operand) & 31u;
    const int first = static_cast<int>(lane & segmask);
    const int last = static_cast<int>((lane & segmask) | (31u & ~segmask));
    int j;
    switch (mode) {
        case ShuffleMode::kIdx:
            return static_cast<int>((lane & segmask) | (b & ~segmask));
        case ShuffleMode::kUp:
            j = static_cast<int>(lane) - static_cast<int>(b);
            return j >= first ? j : static_cast<int>(lane);
        case ShuffleMode::kDown:
            j = static_cast<int>(lane + b);
            break;
        default:
            j = static_cast<int>(lane ^ b);
            break;
    }
    return j <= last ? j : static_cast<int>(lane);
}

template <class T>
inline T shuffle(const char* what, ShuffleMode mode, unsigned mask, const T& var, int operand,
                 int width) {
    const int src = shuffle_source(mode, g_current->lane, operand, width);
    return from_bits<T>(warp_gather(what, mask, to_bits(var), src));
}

}  // namespace cinn_emu

template <class T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize) {
    return ::cinn_emu::shuffle("__shfl_sync", ::cinn_emu::ShuffleMode::kIdx, mask, var, srcLane,
                               width);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
    return ::cinn_emu::shuffle("__shfl_up_sync", ::cinn_emu::ShuffleMode::kUp, mask, var,
                               static_cast<int>(delta), width);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
    return ::cinn_emu::shuffle("__shfl_down_sync", ::cinn_emu::ShuffleMode::kDown, mask, var,
                               static_cast<int>(delta), width);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize) {
    return ::cinn_emu::shuffle("__shfl_xor_sync", ::cinn_emu::ShuffleMode::kXor, mask, var,
                               laneMask, width);
}

/* A vote returns the ballot in its low word and the lanes that took part in its high word. */
inline unsigned __ballot_sync(unsigned mask, int pred) {
    return static_cast<unsigned>(
        ::cinn_emu::warp_vote("__ballot_sync", ::cinn_emu::Collective::kVote, mask, pred != 0));
}
inline int __any_sync(unsigned mask, int pred) {
    return static_cast<unsigned>(::cinn_emu::warp_vote("__any_sync", ::cinn_emu::Collective::kVote,
                                                       mask, pred != 0)) != 0u;
}
inline int __all_sync(unsigned mask, int pred) {
    const unsigned long long vote =
        ::cinn_emu::warp_vote("__all_sync", ::cinn_emu::Collective::kVote, mask, pred != 0);
    return static_cast<unsigned>(vote) == static_cast<unsigned>(vote >> 32);
}
inline int __uni_sync(unsigned mask, int pred) {
    const unsigned long long vote =
        ::cinn_emu::warp_vote("__uni_sync", ::cinn_emu::Collective::kVote, mask, pred != 0);
    return static_cast<unsigned>(vote) == 0u ||
           static_cast<unsigned>(vote) == static_cast<unsigned>(vote >> 32);
}
inline void __syncwarp(unsigned mask = 0xFFFFFFFFu) {
    ::cinn_emu::warp_vote("__syncwarp", ::cinn_emu::Collective::kSyncwarp, mask, false);
}
/* The lanes of the caller's warp that exist and have not exited.  Fibers cannot tell
 * which lanes a GPU would have converged here, so code must call it where the warp's
 * live lanes are converged (the usual full-warp use). */
inline unsigned __activemask() { return ::cinn_emu::live_lanes(); }

#endif /* CINN_EMU_WARP_H */
