// Row softmax of a rows x cols float matrix: one block per row, blockDim.x a multiple of 32.
//
// Each thread strides over the row.  The row's max, then its sum of exponentials, is
// reduced in two steps: within each warp with __shfl_xor_sync (every lane ends with the
// warp's result), then across warps through one shared slot per warp.

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    }
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    }
    return v;
}

// The block-wide max (is_max) or sum of v, in every thread; `partial` holds one value per warp.
__device__ float block_reduce(float v, float* partial, bool is_max) {
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    const int warps = blockDim.x / 32;
    v = is_max ? warp_max(v) : warp_sum(v);
    if (lane == 0) {
        partial[warp] = v;
    }
    __syncthreads();
    const float identity = is_max ? __int_as_float(0xff800000) : 0.0f;
    v = lane < warps ? partial[lane] : identity;
    v = is_max ? warp_max(v) : warp_sum(v);
    __syncthreads();  // partial is reused by the next reduction
    return v;
}

extern "C" __global__ void __launch_bounds__(1024)
softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float partial[32];
    const float* row = x + static_cast<long long>(blockIdx.x) * cols;
    float* out = y + static_cast<long long>(blockIdx.x) * cols;
    float m = __int_as_float(0xff800000);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        m = fmaxf(m, row[c]);
    }
    m = block_reduce(m, partial, true);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        s += __expf(row[c] - m);
    }
    s = block_reduce(s, partial, false);
    const float inv = __fdividef(1.0f, s);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        out[c] = __expf(row[c] - m) * inv;
    }
}
