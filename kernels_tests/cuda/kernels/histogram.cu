// hist[b] += how many of values[0..n) equal b, for b < bins <= MAX_BINS.
//
// Grid-stride loop; each block counts into a shared histogram with shared-memory
// atomics, then adds its nonzero bins to the global histogram with global atomics.
#define MAX_BINS 256

extern "C" __global__ void __launch_bounds__(128)
histogram(const int* __restrict__ values, int n, unsigned int* __restrict__ hist, int bins) {
    __shared__ unsigned int local[MAX_BINS];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) {
        local[b] = 0u;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[values[i]], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) {
        if (local[b] != 0u) {
            atomicAdd(&hist[b], local[b]);
        }
    }
}
