/*
 * cinn_emu_runtime.h -- the state a running kernel sees, and the barriers.
 *
 * One launch runs its blocks one after another on one OS thread; within a block every
 * CUDA thread is a fiber (cinn_emu_scheduler.h).  `g_current` is the fiber running
 * now, so threadIdx is one load, and the grid-wide values are plain globals.  Fibers
 * only switch inside the barriers and warp collectives declared here, so everything
 * between two of them runs without interleaving: that is what makes the atomics in
 * cinn_emu_atomics.h atomic.
 *
 * Everything in namespace cinn_emu is hidden: each compiled module has its own copy
 * and two modules loaded into one process never share scheduler state.
 */
#ifndef CINN_EMU_RUNTIME_H
#define CINN_EMU_RUNTIME_H

#if defined(CINN_EMU_UCONTEXT) || !defined(__x86_64__)
#define CINN_EMU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

namespace cinn_emu {
#pragma GCC visibility push(hidden)

constexpr unsigned kWarpSize = 32;
constexpr unsigned kMaxThreadsPerBlock = 1024;
/* The largest dynamic shared memory a block may ask for (an H100's opt-in maximum). */
constexpr std::size_t kMaxDynamicShared = 227 * 1024;
/* Bytes around the dynamic shared buffer that checking mode poisons, to catch underruns. */
constexpr std::size_t kDynamicSharedGuard = 64;
/* Shared memory is not zeroed on a GPU.  Each block's shared memory (and a shuffle from a
 * lane that does not take part) starts as 0xFF bytes: NaN as float, double, half and
 * bfloat16, -1 as a signed integer, so a kernel that reads what it never wrote gets
 * results that fail its test. */
constexpr unsigned char kGarbageByte = 0xFF;
constexpr unsigned long long kGarbageValue = ~0ull;

/* What a launcher receives from Python (mirrored field by field by cuda_emu.LaunchConfig). */
struct LaunchConfig {
    unsigned grid[3];
    unsigned block[3];
    unsigned long long shared_mem;
    unsigned long long stack_size;
    unsigned num_args;
    const unsigned* arg_sizes; /* each argument's size in bytes; 0 for an array (a pointer) */
    char* message;             /* a failed launch writes why here, NUL-terminated */
    unsigned message_size;
};

enum class State : unsigned char { kRunnable, kAtBlockBarrier, kAtWarpCollective, kDone };

/* Which warp collectives may meet: all shuffles gather, ballot/any/all vote. */
enum class Collective : unsigned char { kGather, kVote, kSyncwarp };

/* One CUDA thread: its indices, scheduling state, saved context and collective slots. */
struct Thread {
    uint3 thread_idx;
    unsigned lane; /* of the linear index x + y * blockDim.x + z * blockDim.x * blockDim.y, */
    unsigned warp; /* as CUDA linearises: lane = linear % 32, warp = linear / 32 */
    State state;
    /* The barrier or collective it waits at: its name for error messages, its mask, and the
     * values exchanged (each lane's own slots, so a lane that runs ahead into the next
     * collective cannot overwrite what a slower lane has yet to read). */
    const char* waiting_at;
    Collective collective;
    unsigned mask;
    int src_lane;
    unsigned long long value;
    unsigned long long result;
    /* The fiber: its stack and saved context. */
    unsigned char* stack;
    std::size_t stack_size;
#ifdef CINN_EMU_USE_UCONTEXT
    ucontext_t context;
#else
    void* sp;
#endif
};

inline Thread* g_current = nullptr;
inline uint3 g_block_idx;
inline dim3 g_block_dim;
inline dim3 g_grid_dim;

/* Dynamic shared memory lives at a fixed address, so the rewritten `extern __shared__`
 * declaration is a constant pointer, valid at namespace scope too:
 *     extern __shared__ __align__(16) float smem[];
 * becomes (cuda_emu's emu_source.py)
 *     float* const smem = reinterpret_cast<float*>(cinn_emu_dynamic_shared);
 * Every such declaration of a module aliases the same bytes, as on a GPU. */
alignas(16) inline unsigned char g_dynamic_shared_storage[kDynamicSharedGuard + kMaxDynamicShared +
                                                          kDynamicSharedGuard];
#define cinn_emu_dynamic_shared \
    (::cinn_emu::g_dynamic_shared_storage + ::cinn_emu::kDynamicSharedGuard)

inline const uint3& thread_idx() { return g_current->thread_idx; }
inline const uint3& block_idx() { return g_block_idx; }
inline const dim3& block_dim() { return g_block_dim; }
inline const dim3& grid_dim() { return g_grid_dim; }

/* Scheduler entry points (defined in cinn_emu_scheduler.h, at the end of the module). */

/* Waits until every thread of the block is here; returns how many passed a nonzero pred. */
unsigned block_barrier(const char* what, bool pred);
/* Waits for the lanes of `mask` (less the exited ones) and returns the `value` of lane
 * `src_lane`, or kGarbageValue where that lane does not take part. */
unsigned long long warp_gather(const char* what, unsigned mask, unsigned long long value,
                               int src_lane);
/* Waits for the lanes of `mask` and returns the ballot of their predicates in the low word
 * and the lanes that took part in the high word. */
unsigned long long warp_vote(const char* what, Collective kind, unsigned mask, bool pred);
/* The lanes of the caller's warp that exist and have not exited. */
unsigned live_lanes();
/* Lets the other threads of the block run; the caller stays runnable (for spin-waits). */
void yield_thread();
/* Stops the launch with a message naming the kernel, block and thread. */
[[noreturn]] void fail(const char* format, ...) __attribute__((format(printf, 1, 2)));

#pragma GCC visibility pop
}  // namespace cinn_emu

#define threadIdx (::cinn_emu::thread_idx())
#define blockIdx (::cinn_emu::block_idx())
#define blockDim (::cinn_emu::block_dim())
#define gridDim (::cinn_emu::grid_dim())
#define warpSize 32

inline void __syncthreads() { ::cinn_emu::block_barrier("__syncthreads()", false); }
inline int __syncthreads_count(int pred) {
    return static_cast<int>(::cinn_emu::block_barrier("__syncthreads_count()", pred != 0));
}
inline int __syncthreads_and(int pred) {
    const dim3& d = blockDim;
    return ::cinn_emu::block_barrier("__syncthreads_and()", pred != 0) == d.x * d.y * d.z;
}
inline int __syncthreads_or(int pred) {
    return ::cinn_emu::block_barrier("__syncthreads_or()", pred != 0) != 0;
}

/* Memory fences order a thread's own accesses; fibers see each other's writes at once. */
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}

/* A sleeping thread lets the others run, so a spin-wait on a flag another thread sets
 * makes progress (a spin-wait without __nanosleep never yields: it would spin forever). */
inline void __nanosleep(unsigned) { ::cinn_emu::yield_thread(); }

[[noreturn]] inline void __trap() { ::cinn_emu::fail("the kernel called __trap()"); }

#endif /* CINN_EMU_RUNTIME_H */
