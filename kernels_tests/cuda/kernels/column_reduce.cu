// out[c] = sum over r of in[r * cols + c] for a rows x cols matrix.
//
// Launch: block (32, 8), grid (ceil(cols / 32)).  threadIdx.x picks a column (coalesced
// reads), threadIdx.y strides over the rows; the 8 partial sums of each column are then
// added by a tree reduction in shared memory.
extern "C" __global__ void __launch_bounds__(256)
column_sum(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float partial[8][32];
    const int c = blockIdx.x * 32 + threadIdx.x;
    float s = 0.0f;
    if (c < cols) {
        for (int r = threadIdx.y; r < rows; r += blockDim.y) {
            s += in[static_cast<long long>(r) * cols + c];
        }
    }
    partial[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    for (int stride = blockDim.y / 2; stride > 0; stride >>= 1) {
        if (threadIdx.y < stride) {
            partial[threadIdx.y][threadIdx.x] += partial[threadIdx.y + stride][threadIdx.x];
        }
        __syncthreads();
    }
    if (threadIdx.y == 0 && c < cols) {
        out[c] = partial[0][threadIdx.x];
    }
}
