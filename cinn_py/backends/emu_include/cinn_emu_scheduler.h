/*
 * cinn_emu_scheduler.h -- fibers, barriers, warp collectives and the launch loop.
 *
 * Included once per module, after the kernels, by the launchers that cuda_emu appends
 * to the source (so each module holds one copy, and g++ sees the whole hot path in one
 * translation unit and can inline it).
 *
 * Execution model.  A launch runs its blocks one after another.  The threads of a block
 * are fibers, resumed in linear-thread order by `run_block`; a fiber runs until it
 * reaches a barrier, a warp collective, __nanosleep or the end of the kernel, and then
 * switches back.  A barrier or collective completes in the thread that arrives last:
 * it computes the results, marks the others runnable and goes on without switching.
 * When a pass over the block finds no runnable thread while some have not finished,
 * nothing can ever move again: that is a deadlock, reported with who waits where.
 *
 * __syncthreads waits for every thread of the block.  CUDA C++ requires all of them to
 * reach it; the hardware happens to release a barrier held up only by exited threads,
 * but a kernel that relies on that (a barrier after an early `return`) breaks the
 * language's rule, so here it is a deadlock.  Warp collectives follow their documented
 * rule instead: they wait for the *non-exited* lanes of their mask.
 *
 * Fibers.  Each has a stack of `stack_size` bytes below a PROT_NONE guard page,
 * mmapped once and kept for later launches of the module; a fiber loops forever
 * ("run the kernel for the current block, then park"), so resuming a parked fiber
 * starts the kernel again.  A fiber abandoned mid-kernel (a failed launch) is re-created
 * before reuse.
 *
 * Context switch.  glibc's swapcontext saves and restores the signal mask, one
 * sigprocmask system call per switch.  On x86-64 `cinn_emu_switch` below saves only what
 * the SysV ABI says a call preserves (rbx, rbp, r12-r15, the MXCSR and x87 control
 * words), a few nanoseconds.  The first switch into a fiber "returns" into
 * `cinn_emu_fiber_start`, from a frame built by `init_fiber`.  With CINN_EMU_UCONTEXT
 * (cuda_emu's context_switch="ucontext", and on other architectures) fibers are made by
 * makecontext and switched by swapcontext instead, for comparison and portability.
 * Measured by tools/bench_emu.py (a [64, 1024] softmax, 256 threads a block, ~800k
 * switches): 13 ms with cinn_emu_switch, 186 ms with swapcontext.
 *
 * Checking mode (AddressSanitizer): every switch is announced with
 * __sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber, so ASan knows which
 * stack is live and does not report the fibers' frames as overflows.
 */
#ifndef CINN_EMU_SCHEDULER_H
#define CINN_EMU_SCHEDULER_H

#include <sys/mman.h>
#include <unistd.h>

#include <cstdarg>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/* Bounds of the __shared__ variables (cinn_emu_qualifiers.h); null when a module has none. */
extern "C" unsigned char __start_cinn_emu_shared[] __attribute__((weak, visibility("hidden")));
extern "C" unsigned char __stop_cinn_emu_shared[] __attribute__((weak, visibility("hidden")));

extern "C" __attribute__((visibility("hidden"), noreturn)) void cinn_emu_fiber_main(
    cinn_emu::Thread* self);

#ifndef CINN_EMU_USE_UCONTEXT
/* cinn_emu_switch(save, load): push the callee-saved state, store the stack pointer in
 * *save, load `load` and pop the state saved there. */
extern "C" __attribute__((visibility("hidden"))) void cinn_emu_switch(void** save, void* load);
extern "C" __attribute__((visibility("hidden"))) void cinn_emu_fiber_start();
asm(R"(
    .text
    .p2align 4
    .globl cinn_emu_switch
    .hidden cinn_emu_switch
    .type cinn_emu_switch, @function
cinn_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size cinn_emu_switch, .-cinn_emu_switch

    .p2align 4
    .globl cinn_emu_fiber_start
    .hidden cinn_emu_fiber_start
    .type cinn_emu_fiber_start, @function
cinn_emu_fiber_start:
    .cfi_startproc
    .cfi_undefined rip
    movq %rbx, %rdi
    call cinn_emu_fiber_main
    ud2
    .cfi_endproc
    .size cinn_emu_fiber_start, .-cinn_emu_fiber_start
)");
#endif

namespace cinn_emu {
#pragma GCC visibility push(hidden)

using Entry = void (*)(void** args);

struct Warp {
    unsigned gone;    /* lanes that exited, or do not exist in this block */
    unsigned waiting; /* lanes blocked in a warp collective */
};

struct Scheduler {
    /* the launch */
    const char* kernel = nullptr;
    Entry entry = nullptr;
    void** args = nullptr;
    char* message = nullptr;
    std::size_t message_size = 0;
    bool failed = false;
    /* the block */
    unsigned num_threads = 0;
    unsigned live = 0;          /* threads not yet finished */
    unsigned at_barrier = 0;    /* threads waiting in block_barrier */
    unsigned barrier_count = 0; /* how many of them passed a nonzero predicate */
    std::size_t dynamic_shared = 0;
    Warp warps[kMaxThreadsPerBlock / kWarpSize];
    /* the fibers: stacks of `stack_size` bytes for the first `num_stacks` threads */
    std::size_t stack_size = 0;
    unsigned num_stacks = 0;
    bool abandoned = false; /* a failed launch left fibers mid-kernel */
#ifdef CINN_EMU_USE_UCONTEXT
    ucontext_t main_context;
#else
    void* main_sp = nullptr;
#endif
#ifdef __SANITIZE_ADDRESS__
    const void* main_stack_bottom = nullptr;
    std::size_t main_stack_size = 0;
#endif
};

inline Scheduler g_scheduler;
inline Thread g_threads[kMaxThreadsPerBlock];

/* Where the launch is, for a post-mortem: when set (checking mode points it into memory
 * shared with Python), the block and thread indices of the thread running now, kept up to
 * date at every switch, so a sanitizer report or a crash can be blamed on a thread. */
inline volatile unsigned* g_location = nullptr;

inline void record_location(const Thread* t) {
    if (g_location == nullptr) return;
    const uint3 block = g_block_idx;
    const uint3 thread = t->thread_idx;
    const unsigned where[] = {block.x, block.y, block.z, thread.x, thread.y, thread.z, 1u};
    for (unsigned i = 0; i < 7; ++i) g_location[i] = where[i];
}

/* ---- messages ------------------------------------------------------------------------ */

inline void vappend_message(const char* format, va_list args) {
    Scheduler& s = g_scheduler;
    if (s.message == nullptr || s.message_size == 0) return;
    const std::size_t used = std::strlen(s.message);
    if (used + 1 < s.message_size)
        std::vsnprintf(s.message + used, s.message_size - used, format, args);
}

inline void append_message(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline void append_message(const char* format, ...) {
    va_list args;
    va_start(args, format);
    vappend_message(format, args);
    va_end(args);
}

inline void start_message(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline void start_message(const char* format, ...) {
    if (g_scheduler.message != nullptr && g_scheduler.message_size != 0)
        g_scheduler.message[0] = '\0';
    va_list args;
    va_start(args, format);
    vappend_message(format, args);
    va_end(args);
}

/* ---- fibers -------------------------------------------------------------------------- */

/* Other threads run during a switch and may write any memory, shared arrays included (which
 * are function-local statics whose address never escapes): the compiler must neither keep
 * them in registers across a switch nor move accesses over it. */
inline void memory_barrier() { asm volatile("" ::: "memory"); }

inline void switch_to_fiber(Thread* t) {
    memory_barrier();
#ifdef __SANITIZE_ADDRESS__
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, t->stack, t->stack_size);
#endif
#ifdef CINN_EMU_USE_UCONTEXT
    swapcontext(&g_scheduler.main_context, &t->context);
#else
    cinn_emu_switch(&g_scheduler.main_sp, t->sp);
#endif
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
    memory_barrier();
}

inline void switch_to_scheduler(Thread* self) {
    memory_barrier();
#ifdef __SANITIZE_ADDRESS__
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, g_scheduler.main_stack_bottom,
                                   g_scheduler.main_stack_size);
#endif
#ifdef CINN_EMU_USE_UCONTEXT
    swapcontext(&self->context, &g_scheduler.main_context);
#else
    cinn_emu_switch(&self->sp, g_scheduler.main_sp);
#endif
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_finish_switch_fiber(fake_stack, &g_scheduler.main_stack_bottom,
                                    &g_scheduler.main_stack_size);
#endif
    memory_barrier();
}

#ifdef CINN_EMU_USE_UCONTEXT
inline void fiber_entry_ucontext() { cinn_emu_fiber_main(g_current); }
#endif

/* Make t's fiber start at cinn_emu_fiber_main(t) when next switched to. */
inline void init_fiber(Thread* t) {
#ifdef __SANITIZE_ADDRESS__
    __asan_unpoison_memory_region(t->stack, t->stack_size); /* frames of an abandoned run */
#endif
#ifdef CINN_EMU_USE_UCONTEXT
    getcontext(&t->context);
    t->context.uc_stack.ss_sp = t->stack;
    t->context.uc_stack.ss_size = t->stack_size;
    t->context.uc_link = nullptr;
    makecontext(&t->context, fiber_entry_ucontext, 0);
#else
    /* The frame cinn_emu_switch pops: control words, r15..r12, rbx (= t, which the trampoline
     * passes on), rbp (0 ends frame-pointer backtraces), then the trampoline as return
     * address, placed so that the stack is 16-byte aligned at the trampoline's call. */
    auto top = reinterpret_cast<std::uintptr_t>(t->stack + t->stack_size) & ~std::uintptr_t{15};
    void** frame = reinterpret_cast<void**>(top);
    unsigned short x87_control;
    asm volatile("fnstcw %0" : "=m"(x87_control));
    const std::uint64_t control =
        __builtin_ia32_stmxcsr() | (static_cast<std::uint64_t>(x87_control) << 32);
    frame[-1] = reinterpret_cast<void*>(&cinn_emu_fiber_start);
    frame[-2] = nullptr;
    frame[-3] = t;
    for (int i = 4; i <= 7; ++i) frame[-i] = nullptr;
    std::memcpy(&frame[-8], &control, sizeof control);
    t->sp = &frame[-8];
#endif
}

inline unsigned char* map_stack(std::size_t size) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* base = mmap(nullptr, size + page, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (base == MAP_FAILED) return nullptr;
    mprotect(base, page, PROT_NONE); /* guard page: an overflow faults instead of corrupting */
    return static_cast<unsigned char*>(base) + page;
}

inline void unmap_stack(unsigned char* stack, std::size_t size) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    munmap(stack - page, size + page);
}

/* Fibers with stacks of `stack_size` for threads [0, n), re-created if a run abandoned them. */
inline bool prepare_fibers(unsigned n, std::size_t stack_size) {
    Scheduler& s = g_scheduler;
    if (stack_size != s.stack_size) {
        for (unsigned i = 0; i < s.num_stacks; ++i) unmap_stack(g_threads[i].stack, s.stack_size);
        s.num_stacks = 0;
        s.stack_size = stack_size;
    }
    if (s.abandoned) {
        for (unsigned i = 0; i < s.num_stacks; ++i) init_fiber(&g_threads[i]);
        s.abandoned = false;
    }
    for (; s.num_stacks < n; ++s.num_stacks) {
        Thread* t = &g_threads[s.num_stacks];
        t->stack = map_stack(stack_size);
        if (t->stack == nullptr) return false;
        t->stack_size = stack_size;
        init_fiber(t);
    }
    return true;
}

/* Unmaps every fiber stack. The module's Python side calls it when it is dropped: stacks
 * are kept between launches for speed, and a process that loads many modules (a test
 * suite) would otherwise run out of mappings (vm.max_map_count). */
inline void release_fibers() {
    Scheduler& s = g_scheduler;
    for (unsigned i = 0; i < s.num_stacks; ++i) unmap_stack(g_threads[i].stack, s.stack_size);
    s.num_stacks = 0;
}

/* ---- shared memory ------------------------------------------------------------------- */

/* Garbage in [begin, end); under ASan only in addressable bytes (globals carry redzones). */
inline void fill_garbage(unsigned char* begin, unsigned char* end) {
#ifdef __SANITIZE_ADDRESS__
    for (unsigned char* p = begin; p < end; ++p) {
        if (!__asan_address_is_poisoned(p)) *p = kGarbageByte;
    }
#else
    std::memset(begin, kGarbageByte, static_cast<std::size_t>(end - begin));
#endif
}

/* Checking mode: only the `bytes` the launch asked for are addressable dynamic shared memory. */
inline void guard_dynamic_shared(std::size_t bytes) {
#ifdef __SANITIZE_ADDRESS__
    unsigned char* base = cinn_emu_dynamic_shared;
    __asan_unpoison_memory_region(g_dynamic_shared_storage, sizeof g_dynamic_shared_storage);
    __asan_poison_memory_region(g_dynamic_shared_storage, kDynamicSharedGuard);
    __asan_poison_memory_region(base + bytes, kMaxDynamicShared + kDynamicSharedGuard - bytes);
#else
    (void)bytes;
#endif
}

/* ---- barriers and warp collectives --------------------------------------------------- */

unsigned block_barrier(const char* what, bool pred) {
    Scheduler& s = g_scheduler;
    Thread* self = g_current;
    s.barrier_count += pred ? 1u : 0u;
    if (++s.at_barrier == s.num_threads) { /* the last to arrive releases everyone */
        const unsigned count = s.barrier_count;
        s.at_barrier = 0;
        s.barrier_count = 0;
        for (unsigned i = 0; i < s.num_threads; ++i) {
            g_threads[i].state = State::kRunnable;
            g_threads[i].result = count;
        }
        return count;
    }
    self->state = State::kAtBlockBarrier;
    self->waiting_at = what;
    switch_to_scheduler(self);
    return static_cast<unsigned>(self->result);
}

/* Complete the collective of `mask` in warp `w` if every live lane of the mask waits in it:
 * compute each lane's result and make them all runnable. */
inline bool try_complete(unsigned w, unsigned mask) {
    Warp& warp = g_scheduler.warps[w];
    const unsigned members = mask & ~warp.gone;
    if ((members & ~warp.waiting) != 0u) return false; /* someone has yet to arrive */
    Thread* lanes = &g_threads[w * kWarpSize];
    const Collective kind = lanes[__builtin_ctz(members)].collective;
    for (unsigned m = members; m != 0u; m &= m - 1u) {
        const Thread& t = lanes[__builtin_ctz(m)];
        if (t.mask != mask || t.collective != kind) return false; /* a mismatch: never completes */
    }
    unsigned long long vote = static_cast<unsigned long long>(members) << 32;
    if (kind != Collective::kGather) {
        for (unsigned m = members; m != 0u; m &= m - 1u) {
            const unsigned lane = static_cast<unsigned>(__builtin_ctz(m));
            if (lanes[lane].value != 0u) vote |= 1ull << lane;
        }
    }
    for (unsigned m = members; m != 0u; m &= m - 1u) {
        Thread& t = lanes[__builtin_ctz(m)];
        if (kind == Collective::kGather) {
            const bool present = ((members >> t.src_lane) & 1u) != 0u;
            t.result = present ? lanes[t.src_lane].value : kGarbageValue;
        } else {
            t.result = vote;
        }
        t.state = State::kRunnable;
    }
    warp.waiting &= ~members;
    return true;
}

inline unsigned long long warp_collective(const char* what, Collective kind, unsigned mask,
                                          unsigned long long value, int src_lane) {
    Thread* self = g_current;
    if (((mask >> self->lane) & 1u) == 0u) {
        fail("%s with mask 0x%08x, which leaves out the calling lane %u", what, mask, self->lane);
    }
    self->waiting_at = what;
    self->collective = kind;
    self->mask = mask;
    self->value = value;
    self->src_lane = src_lane;
    g_scheduler.warps[self->warp].waiting |= 1u << self->lane;
    if (!try_complete(self->warp, mask)) {
        self->state = State::kAtWarpCollective;
        switch_to_scheduler(self);
    }
    return self->result;
}

unsigned long long warp_gather(const char* what, unsigned mask, unsigned long long value,
                               int src_lane) {
    return warp_collective(what, Collective::kGather, mask, value, src_lane);
}

unsigned long long warp_vote(const char* what, Collective kind, unsigned mask, bool pred) {
    return warp_collective(what, kind, mask, pred ? 1u : 0u, 0);
}

unsigned live_lanes() { return ~g_scheduler.warps[g_current->warp].gone; }

void yield_thread() { switch_to_scheduler(g_current); }

/* The end of a thread: its lane no longer holds up its warp's collectives.  Returns when the
 * parked fiber is resumed to run the kernel for another block. */
inline void thread_exit(Thread* self) {
    Scheduler& s = g_scheduler;
    self->state = State::kDone;
    --s.live;
    Warp& warp = s.warps[self->warp];
    warp.gone |= 1u << self->lane;
    for (unsigned pending = warp.waiting; pending != 0u; pending &= warp.waiting) {
        const unsigned lane = static_cast<unsigned>(__builtin_ctz(pending));
        pending &= ~(1u << lane);
        try_complete(self->warp, g_threads[self->warp * kWarpSize + lane].mask);
    }
    switch_to_scheduler(self);
}

void fail(const char* format, ...) {
    Scheduler& s = g_scheduler;
    Thread* self = g_current;
    start_message("kernel '%s' block (%u, %u, %u) thread (%u, %u, %u): ", s.kernel, g_block_idx.x,
                  g_block_idx.y, g_block_idx.z, self->thread_idx.x, self->thread_idx.y,
                  self->thread_idx.z);
    va_list args;
    va_start(args, format);
    vappend_message(format, args);
    va_end(args);
    s.failed = true;
    switch_to_scheduler(self); /* never resumed: the launch stops */
    __builtin_unreachable();
}

/* A device-side assert() that failed (see assert.h beside this header). */
[[noreturn]] void assert_fail(const char* expression, const char* file, unsigned line,
                              const char* function) {
    fail("%s:%u: %s: assertion '%s' failed", file, line, function, expression);
}

/* ---- blocks and launches ------------------------------------------------------------- */

/* Who waits where, grouped, for a block in which no thread can move. */
inline void report_deadlock() {
    Scheduler& s = g_scheduler;
    start_message("kernel '%s' block (%u, %u, %u): deadlock, %u of %u threads cannot go on:",
                  s.kernel, g_block_idx.x, g_block_idx.y, g_block_idx.z, s.live, s.num_threads);
    bool reported[kMaxThreadsPerBlock] = {};
    for (unsigned i = 0; i < s.num_threads; ++i) {
        const Thread& t = g_threads[i];
        if (reported[i] || t.state == State::kDone) continue;
        const bool warp_level = t.state == State::kAtWarpCollective;
        unsigned count = 0;
        for (unsigned j = i; j < s.num_threads; ++j) {
            const Thread& u = g_threads[j];
            if (u.state == t.state && u.waiting_at == t.waiting_at &&
                (!warp_level || u.mask == t.mask)) {
                reported[j] = true;
                ++count;
            }
        }
        append_message(" %u wait at %s", count, t.waiting_at);
        if (warp_level) append_message(" (mask 0x%08x)", t.mask);
        append_message(" (first: thread (%u, %u, %u));", t.thread_idx.x, t.thread_idx.y,
                       t.thread_idx.z);
    }
    const unsigned exited = s.num_threads - s.live;
    if (exited != 0u) {
        for (unsigned i = 0; i < s.num_threads; ++i) {
            const Thread& t = g_threads[i];
            if (t.state != State::kDone) continue;
            append_message(" %u exited without reaching it (first: thread (%u, %u, %u))", exited,
                           t.thread_idx.x, t.thread_idx.y, t.thread_idx.z);
            break;
        }
    } else {
        append_message(" no thread exited; they wait at barriers that do not match");
    }
}

inline bool run_block(const uint3& block_idx) {
    Scheduler& s = g_scheduler;
    g_block_idx = block_idx;
    if (__start_cinn_emu_shared != nullptr)
        fill_garbage(__start_cinn_emu_shared, __stop_cinn_emu_shared);
    fill_garbage(cinn_emu_dynamic_shared, cinn_emu_dynamic_shared + s.dynamic_shared);
    const unsigned num_warps = (s.num_threads + kWarpSize - 1) / kWarpSize;
    for (unsigned w = 0; w < num_warps; ++w) {
        const unsigned lanes = std::min(kWarpSize, s.num_threads - w * kWarpSize);
        s.warps[w].gone = lanes == kWarpSize ? 0u : ~((1u << lanes) - 1u);
        s.warps[w].waiting = 0u;
    }
    for (unsigned i = 0; i < s.num_threads; ++i) g_threads[i].state = State::kRunnable;
    s.live = s.num_threads;
    s.at_barrier = 0;
    s.barrier_count = 0;
    while (s.live != 0u) {
        bool ran = false;
        for (unsigned i = 0; i < s.num_threads; ++i) {
            Thread* t = &g_threads[i];
            if (t->state != State::kRunnable) continue;
            g_current = t;
            record_location(t);
            switch_to_fiber(t);
            ran = true;
            if (s.failed) return false;
        }
        if (!ran) {
            report_deadlock();
            return false;
        }
    }
    return true;
}

inline int run_grid(const char* kernel, Entry entry, const LaunchConfig* config, void** args) {
    Scheduler& s = g_scheduler;
    s.kernel = kernel;
    s.entry = entry;
    s.args = args;
    s.message = config->message;
    s.message_size = config->message_size;
    s.failed = false;
    const dim3 grid(config->grid[0], config->grid[1], config->grid[2]);
    const dim3 block(config->block[0], config->block[1], config->block[2]);
    const unsigned long long n = static_cast<unsigned long long>(block.x) * block.y * block.z;
    if (n == 0 || n > kMaxThreadsPerBlock || config->shared_mem > kMaxDynamicShared ||
        grid.x == 0 || grid.y == 0 || grid.z == 0) {
        start_message(
            "kernel '%s': invalid launch: block of %llu threads (1 to %u), %llu bytes of dynamic "
            "shared memory (at most %zu)",
            kernel, n, kMaxThreadsPerBlock, config->shared_mem, kMaxDynamicShared);
        return 1;
    }
    if (!prepare_fibers(static_cast<unsigned>(n), config->stack_size)) {
        start_message("kernel '%s': cannot map %llu fiber stacks of %llu bytes", kernel, n,
                      config->stack_size);
        return 1;
    }
    s.num_threads = static_cast<unsigned>(n);
    s.dynamic_shared = config->shared_mem;
    g_grid_dim = grid;
    g_block_dim = block;
    for (unsigned i = 0; i < s.num_threads; ++i) {
        Thread& t = g_threads[i];
        t.thread_idx = uint3{i % block.x, (i / block.x) % block.y, i / (block.x * block.y)};
        t.lane = i % kWarpSize;
        t.warp = i / kWarpSize;
    }
    guard_dynamic_shared(config->shared_mem);
    bool ok = true;
    for (unsigned z = 0; ok && z < grid.z; ++z) {
        for (unsigned y = 0; ok && y < grid.y; ++y) {
            for (unsigned x = 0; ok && x < grid.x; ++x) ok = run_block(uint3{x, y, z});
        }
    }
    guard_dynamic_shared(kMaxDynamicShared);
    s.abandoned = s.abandoned || !ok;
    g_current = nullptr;
    /* A kernel's printf output appears by the end of the launch, as after a synchronize. */
    std::fflush(stdout);
    return ok ? 0 : 1;
}

/* ---- launchers: kernelParams (void**) to a kernel's parameters ----------------------- */

template <class... P, std::size_t... I>
inline void invoke(void (*kernel)(P...), void** args, std::index_sequence<I...>) {
    kernel(*static_cast<std::remove_reference_t<P>*>(args[I])...);
}

template <class... P>
constexpr std::size_t arity(void (*)(P...)) {
    return sizeof...(P);
}

/* What a fiber runs: Kernel, a compile-time constant, called with the launch's arguments. */
template <auto Kernel>
void entry(void** args) {
    invoke(Kernel, args, std::make_index_sequence<arity(Kernel)>{});
}

/* The arguments Python packed must be what the kernel takes: as many, arrays where it takes
 * pointers, values of the parameter's size elsewhere (a wrong scalar type would otherwise be
 * read as garbage). */
template <class... P>
inline bool check_arguments(const char* kernel, void (*)(P...), const LaunchConfig* config) {
    constexpr std::size_t count = sizeof...(P);
    const bool pointer[] = {std::is_pointer_v<P>..., false};
    const std::size_t size[] = {sizeof(P)..., 0};
    if (config->num_args != count) {
        start_message("kernel '%s' takes %zu arguments, got %u", kernel, count, config->num_args);
        return false;
    }
    for (std::size_t i = 0; i < count; ++i) {
        const unsigned got = config->arg_sizes[i];
        if (pointer[i] && got != 0u) {
            start_message(
                "kernel '%s' argument #%zu: the kernel takes a pointer (an array), got a %u-byte "
                "value",
                kernel, i, got);
            return false;
        }
        if (!pointer[i] && got != size[i]) {
            if (got == 0u) {
                start_message(
                    "kernel '%s' argument #%zu: the kernel takes a %zu-byte value, got an array",
                    kernel, i, size[i]);
            } else {
                start_message(
                    "kernel '%s' argument #%zu: the kernel takes a %zu-byte value, got a %u-byte "
                    "value",
                    kernel, i, size[i], got);
            }
            return false;
        }
    }
    return true;
}

/* The body of every generated launcher cinn_emu_launch_<name>. */
template <auto Kernel>
int launch(const char* name, const LaunchConfig* config, void** args) {
    g_scheduler.message = config->message;
    g_scheduler.message_size = config->message_size;
    if (!check_arguments(name, Kernel, config)) return 1;
    return run_grid(name, &entry<Kernel>, config, args);
}

#pragma GCC visibility pop
}  // namespace cinn_emu

extern "C" void cinn_emu_fiber_main(cinn_emu::Thread* self) {
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_finish_switch_fiber(nullptr, &cinn_emu::g_scheduler.main_stack_bottom,
                                    &cinn_emu::g_scheduler.main_stack_size);
#endif
    for (;;) {
        cinn_emu::g_scheduler.entry(cinn_emu::g_scheduler.args);
        cinn_emu::thread_exit(self);
    }
}

#endif /* CINN_EMU_SCHEDULER_H */
