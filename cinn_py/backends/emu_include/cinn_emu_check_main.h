/*
 * cinn_emu_check_main.h -- main() of the checking-mode executable.
 *
 * An AddressSanitizer-instrumented module cannot be dlopen'ed into a Python that was
 * not started with the ASan runtime, so in checking mode cuda_emu builds each module as
 * an executable and runs it once per launch (cinn_py/backends/emu_check.py):
 *
 *     module MANIFEST DATA
 *
 * DATA is a file that holds every array argument, back to back, after a 64-byte location
 * record (see below).  MANIFEST is text, one item per line:
 *
 *     kernel NAME
 *     grid X Y Z
 *     block X Y Z
 *     shared BYTES
 *     stack BYTES
 *     data BYTES             the size of DATA
 *     args N
 *     array OFFSET BYTES     then N lines in parameter order: an array at OFFSET in the
 *     value BYTES HEX        data file, or a scalar's bytes in hex
 *
 * Every array gets its own heap copy of exactly BYTES bytes (aligned to 256 bytes, as
 * cudaMalloc's memory is, so float4 accesses stay aligned), so that ASan's redzones
 * sit at both of its ends and one element past the end is reported; arguments at the
 * same offset share one copy (the same array passed twice).  After the launch the copies
 * are written back into DATA, which Python copies into its NumPy arrays.
 *
 * DATA's first 28 bytes are 7 unsigned ints that the scheduler keeps up to date
 * (g_location): the running thread's blockIdx and threadIdx, then 1 once a thread has
 * run.  Whatever ends the process, a sanitizer, a signal or a timeout, Python reads them
 * to say which thread was running.
 *
 * Exit status: 0 the launch ran; 3 it failed (the message follows "cinn-emu-error: " on
 * stderr); 2 a bad manifest.  An AddressSanitizer report exits with 1, after the death
 * callback has said which argument the bad address belongs to, on a line that starts
 * with "cinn-emu: ".
 */
#ifndef CINN_EMU_CHECK_MAIN_H
#define CINN_EMU_CHECK_MAIN_H

#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>
#include <sys/mman.h>

namespace cinn_emu {

struct KernelEntry {
    const char* name;
    int (*launch)(const LaunchConfig*, void**);
};

struct ArrayArgument {
    unsigned long long offset;
    unsigned long long bytes;
    unsigned char* copy;
};

inline ArrayArgument g_arrays[256];
inline unsigned g_num_args = 0;

constexpr std::size_t kLocationBytes = 64;

/* Which argument, or dynamic shared memory, the address of an ASan report belongs to.
 * (UBSan reports do not come here: GCC links UBSan's runtime separately from ASan's.) */
inline void describe_failure() {
#ifdef __SANITIZE_ADDRESS__
    if (__asan_report_present() == 0) return;
    const auto address = reinterpret_cast<std::uintptr_t>(__asan_get_report_address());
    for (unsigned i = 0; i < g_num_args; ++i) {
        const ArrayArgument& a = g_arrays[i];
        if (a.copy == nullptr) continue;
        const auto begin = reinterpret_cast<std::uintptr_t>(a.copy);
        const std::uintptr_t end = begin + a.bytes;
        if (address >= end && address < end + 256) {
            std::fprintf(stderr,
                         "cinn-emu: the address is %zu bytes past the end of argument #%u (an "
                         "array of %llu bytes)\n",
                         static_cast<std::size_t>(address - end), i, a.bytes);
        } else if (address < begin && address + 256 >= begin) {
            std::fprintf(stderr,
                         "cinn-emu: the address is %zu bytes before the start of argument #%u (an "
                         "array of %llu bytes)\n",
                         static_cast<std::size_t>(begin - address), i, a.bytes);
        }
    }
    const auto shared = reinterpret_cast<std::uintptr_t>(cinn_emu_dynamic_shared);
    if (address + kDynamicSharedGuard >= shared &&
        address < shared + kMaxDynamicShared + kDynamicSharedGuard) {
        std::fprintf(stderr,
                     "cinn-emu: the address is in dynamic shared memory, %lld bytes from its start "
                     "(%zu bytes were launched)\n",
                     static_cast<long long>(address - shared), g_scheduler.dynamic_shared);
    }
#endif
}

inline int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

inline int check_main(int argc, char** argv, const KernelEntry* kernels, std::size_t num_kernels) {
    __sanitizer_set_death_callback(describe_failure);
    if (argc != 3) {
        std::fprintf(stderr, "cinn-emu-error: usage: %s MANIFEST DATA\n", argv[0]);
        return 2;
    }
    FILE* manifest = std::fopen(argv[1], "r");
    if (manifest == nullptr) {
        std::fprintf(stderr, "cinn-emu-error: cannot open %s\n", argv[1]);
        return 2;
    }
    char name[256];
    char kind[16];
    unsigned long long data_bytes = 0;
    LaunchConfig config{};
    bool ok =
        std::fscanf(
            manifest,
            " kernel %255s grid %u %u %u block %u %u %u shared %llu stack %llu data %llu args %u",
            name, &config.grid[0], &config.grid[1], &config.grid[2], &config.block[0],
            &config.block[1], &config.block[2], &config.shared_mem, &config.stack_size, &data_bytes,
            &g_num_args) == 11 &&
        g_num_args <= 256;
    int data_fd = ok ? open(argv[2], O_RDWR) : -1;
    unsigned char* data = nullptr;
    if (data_fd >= 0) {
        void* mapped = mmap(nullptr, data_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, data_fd, 0);
        data = mapped == MAP_FAILED ? nullptr : static_cast<unsigned char*>(mapped);
    }
    ok = ok && data_fd >= 0 && data != nullptr && data_bytes >= kLocationBytes;
    if (ok) g_location = reinterpret_cast<unsigned*>(data);
    static unsigned char values[256][16];
    static void* pointers[256];
    void* args[256];
    unsigned sizes[256];
    for (unsigned i = 0; ok && i < g_num_args; ++i) {
        unsigned long long a = 0;
        unsigned long long b = 0;
        ok = std::fscanf(manifest, " %15s %llu", kind, &a) == 2;
        if (ok && std::strcmp(kind, "array") == 0) {
            ok = std::fscanf(manifest, " %llu", &b) == 1 && a >= kLocationBytes &&
                 a + b <= data_bytes;
            g_arrays[i] = ArrayArgument{a, b, nullptr};
            for (unsigned j = 0; ok && j < i; ++j) {
                if (g_arrays[j].copy != nullptr && g_arrays[j].offset == a &&
                    g_arrays[j].bytes == b) {
                    pointers[i] = g_arrays[j].copy;
                }
            }
            if (ok && pointers[i] == nullptr) {
                void* copy = nullptr; /* exactly b bytes, aligned as cudaMalloc's */
                ok = posix_memalign(&copy, 256, b) == 0;
                if (ok && b != 0) std::memcpy(copy, data + a, b);
                g_arrays[i].copy = static_cast<unsigned char*>(copy);
                pointers[i] = copy;
            }
            args[i] = &pointers[i];
            sizes[i] = 0;
        } else if (ok && std::strcmp(kind, "value") == 0 && a <= sizeof values[i]) {
            char hex[40];
            ok = std::fscanf(manifest, " %39s", hex) == 1 && std::strlen(hex) == 2 * a;
            for (unsigned long long k = 0; ok && k < a; ++k) {
                const int hi = hex_digit(hex[2 * k]);
                const int lo = hex_digit(hex[2 * k + 1]);
                ok = hi >= 0 && lo >= 0;
                values[i][k] = static_cast<unsigned char>(hi * 16 + lo);
            }
            args[i] = values[i];
            sizes[i] = static_cast<unsigned>(a);
        } else {
            ok = false;
        }
    }
    std::fclose(manifest);
    const KernelEntry* entry = nullptr;
    for (std::size_t k = 0; ok && k < num_kernels; ++k) {
        if (std::strcmp(kernels[k].name, name) == 0) entry = &kernels[k];
    }
    if (!ok || entry == nullptr) {
        std::fprintf(stderr, "cinn-emu-error: bad manifest %s\n", argv[1]);
        return 2;
    }
    char message[4096] = "";
    config.num_args = g_num_args;
    config.arg_sizes = sizes;
    config.message = message;
    config.message_size = sizeof message;
    const int status = entry->launch(&config, args);
    for (unsigned i = 0; i < g_num_args; ++i) {
        const ArrayArgument& a = g_arrays[i];
        if (a.copy != nullptr && a.bytes != 0) std::memcpy(data + a.offset, a.copy, a.bytes);
    }
    if (status != 0) {
        std::fprintf(stderr, "cinn-emu-error: %s\n", message);
        return 3;
    }
    return 0;
}

}  // namespace cinn_emu

#endif /* CINN_EMU_CHECK_MAIN_H */
