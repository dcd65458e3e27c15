/*
 * assert.h -- a device-side assert() for cuda-emu.
 *
 * This folder comes first on the include path, so `#include <assert.h>` / <cassert> in a
 * kernel lands here.  On a GPU a failed assert() stops the kernel with a message; glibc's
 * would abort the whole Python process.  Here it fails the launch (KernelError) with the
 * expression, file, line, block and thread.  Like the system header, this one may be
 * included again after NDEBUG changes.
 */
#include_next <assert.h>

#ifdef __cplusplus
#undef assert
#ifdef NDEBUG
#define assert(expression) (static_cast<void>(0))
#else
namespace cinn_emu {
[[noreturn]] __attribute__((visibility("hidden"))) void assert_fail(const char* expression,
                                                                    const char* file, unsigned line,
                                                                    const char* function);
}  // namespace cinn_emu
#define assert(expression)         \
    (static_cast<bool>(expression) \
         ? static_cast<void>(0)    \
         : ::cinn_emu::assert_fail(#expression, __FILE__, __LINE__, __func__))
#endif
#endif
