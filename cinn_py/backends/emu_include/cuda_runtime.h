/*
 * cuda_runtime.h -- for kernels that include it.  Under cuda-emu the device environment
 * (qualifiers, vector types, thread indices, intrinsics) is cinn_emu.h, which the
 * compiler has already force-included; the host runtime API has no meaning here.
 */
#include "cinn_emu.h"
