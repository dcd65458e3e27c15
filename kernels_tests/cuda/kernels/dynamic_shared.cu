// Dynamic shared memory: `extern __shared__` arrays sized by the launch's shared_mem.

// Every extern __shared__ array of a kernel starts at the same address, whatever its type
// and wherever it is declared: this one at namespace scope, read by a device function.
extern __shared__ unsigned int shared_words[];

__device__ unsigned int shared_word(int k) {
    return shared_words[k];
}

// Reverses each block's segment of x (blockDim.x floats of dynamic shared memory); the
// last block is partial: its segment is the n % blockDim.x elements it holds.
extern "C" __global__ void __launch_bounds__(256)
reverse_segments(const float* __restrict__ x, float* __restrict__ y, int n) {
    extern __shared__ float segment[];
    const int start = blockIdx.x * blockDim.x;
    const int length = min(static_cast<int>(blockDim.x), n - start);
    const int t = threadIdx.x;
    if (t < length) {
        segment[t] = x[start + t];
    }
    __syncthreads();
    if (t < length) {
        y[start + t] = segment[length - 1 - t];
    }
}

// bits[i] = the bits of x[i ^ 1]: written through a 16-byte-aligned float view, read back
// through the namespace-scope unsigned view of the same bytes.
extern "C" __global__ void __launch_bounds__(256)
shared_views(const float* __restrict__ x, unsigned int* __restrict__ bits) {
    extern __shared__ __align__(16) float values[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    values[threadIdx.x] = x[i];
    __syncthreads();
    bits[i] = shared_word(threadIdx.x ^ 1);
}
