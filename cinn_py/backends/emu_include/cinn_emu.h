/*
 * cinn_emu.h -- the CUDA device environment of the cuda-emu target.
 *
 * cinn_py.backends.cuda_emu compiles CUDA C as C++17 with g++, force-including this
 * header (`-include cinn_emu.h`) and putting this folder first on the include path, so
 * that `#include <cuda_fp16.h>`, `<cuda_bf16.h>` and `<cuda_runtime.h>` find the
 * emulation headers beside it.  Kernels then run on the CPU, one block after another,
 * each thread of a block a fiber (cinn_emu_scheduler.h).
 *
 * The standard headers come first: the CUDA qualifier macros defined below (notably
 * `__noinline__`, which libstdc++ itself spells inside `__attribute__((...))`) must not
 * be visible while the standard library is parsed, and include guards keep a kernel's
 * own later `#include <cmath>` from parsing it again.
 */
#ifndef CINN_EMU_H
#define CINN_EMU_H

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "cuda-emu compiles kernels as C++17 or later"
#endif

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
/* libstdc++'s math.h puts std::isnan, std::exp(float), ... in ::, where CUDA has them. */
#include <math.h>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

/* Kernels can test for the emulator; __CUDA_ARCH__ stays undefined so that no PTX path is taken. */
#define CINN_EMU 1

#include "cinn_emu_qualifiers.h"
#include "cinn_emu_vector_types.h"
#include "cinn_emu_runtime.h"
#include "cinn_emu_math.h"
#include "cinn_emu_warp.h"
#include "cinn_emu_atomics.h"

#endif /* CINN_EMU_H */
