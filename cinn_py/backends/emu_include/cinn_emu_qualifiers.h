/*
 * cinn_emu_qualifiers.h -- CUDA's declaration qualifiers, spelled for g++.
 *
 * On the CPU every function is host code, so the execution-space qualifiers vanish.
 * The memory-space ones matter:
 *
 *   __shared__    `static`, placed in the section `cinn_emu_shared`.  Blocks run one
 *                 after another and the threads of a block share every static, so a
 *                 function-local static *is* per-block shared memory, wherever it is
 *                 declared (in a loop, a branch, a device function).  The section lets
 *                 the scheduler find all of them (__start_/__stop_cinn_emu_shared) and
 *                 fill them with garbage at each block start, since shared memory is
 *                 not zeroed on a GPU.  `extern __shared__ T name[];` (dynamic shared
 *                 memory) never reaches this macro: cuda_emu rewrites it before
 *                 compiling (see cinn_emu_dynamic_shared in cinn_emu_runtime.h).
 *   __constant__  ordinary global memory (kernels may only read it).
 */
#ifndef CINN_EMU_QUALIFIERS_H
#define CINN_EMU_QUALIFIERS_H

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __maxnreg__(n)
#define __grid_constant__
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __shared__ __attribute__((section("cinn_emu_shared"))) static
#define __constant__
#define __managed__

#endif /* CINN_EMU_QUALIFIERS_H */
