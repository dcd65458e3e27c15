// bfloat16 through cuda_bf16.h: every operation rounds to bfloat16, as on the GPU (sm_80+).
#include <cuda_bf16.h>

// y = alpha * a + b, one fused multiply-add (rounded once) per element.
extern "C" __global__ void __launch_bounds__(256)
bf16_axpy(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
          __nv_bfloat16* __restrict__ y, float alpha, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __hfma(__float2bfloat16(alpha), a[i], b[i]);
    }
}

// z = a * b on pairs of bfloat16s (n2 pairs).
extern "C" __global__ void __launch_bounds__(256)
bf162_mul(const __nv_bfloat162* __restrict__ a, const __nv_bfloat162* __restrict__ b,
          __nv_bfloat162* __restrict__ z, int n2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        z[i] = __hmul2(a[i], b[i]);
    }
}

// out[w] = the sum of warp w's 32 values: a butterfly of __shfl_xor_sync on __nv_bfloat16.
extern "C" __global__ void __launch_bounds__(256)
bf16_warp_sum(const __nv_bfloat16* __restrict__ x, float* __restrict__ out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    __nv_bfloat16 v = x[i];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = __hadd(v, __shfl_xor_sync(0xffffffffu, v, offset));
    }
    if (threadIdx.x % 32 == 0) {
        out[i / 32] = __bfloat162float(v);
    }
}

// *total += x[i] for every i, with bfloat16 atomics (small integers: exact in any order).
extern "C" __global__ void __launch_bounds__(256)
bf16_atomic_add(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* total, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(total, x[i]);
    }
}
