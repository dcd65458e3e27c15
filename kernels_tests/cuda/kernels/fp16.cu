// Half precision through cuda_fp16.h: every operation rounds to half, as on the GPU.
#include <cuda_fp16.h>

// y = alpha * a + b, one fused multiply-add (rounded once) per element.
extern "C" __global__ void __launch_bounds__(256)
half_axpy(const __half* __restrict__ a, const __half* __restrict__ b, __half* __restrict__ y,
          float alpha, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __hfma(__float2half(alpha), a[i], b[i]);
    }
}

// z = a * b on pairs of halves (n2 pairs).
extern "C" __global__ void __launch_bounds__(256)
half2_mul(const __half2* __restrict__ a, const __half2* __restrict__ b, __half2* __restrict__ z,
          int n2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        z[i] = __hmul2(a[i], b[i]);
    }
}

// out[w] = the sum of warp w's 32 halves: a butterfly of __shfl_xor_sync on __half, in half.
extern "C" __global__ void __launch_bounds__(256)
half_warp_sum(const __half* __restrict__ x, float* __restrict__ out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half v = x[i];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = __hadd(v, __shfl_xor_sync(0xffffffffu, v, offset));
    }
    if (threadIdx.x % 32 == 0) {
        out[i / 32] = __half2float(v);
    }
}

// *total += x[i] for every i, with half atomics (small integers: exact in any order).
extern "C" __global__ void __launch_bounds__(256)
half_atomic_add(const __half* __restrict__ x, __half* total, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(total, x[i]);
    }
}
