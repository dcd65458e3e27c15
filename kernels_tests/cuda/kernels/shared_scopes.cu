// __shared__ declared in a loop body, a branch and a device function: each is one
// per-block array, whatever the scope.
__device__ float scaled_by_shared(float v) {
    __shared__ float scale;
    if (threadIdx.x == 0) {
        scale = 3.0f;
    }
    __syncthreads();
    return v * scale;
}

extern "C" __global__ void shared_in_scopes(const float* __restrict__ x, float* __restrict__ y) {
    float acc = 0.0f;
    for (int round = 0; round < 3; ++round) {
        __shared__ float buffer[64];
        buffer[threadIdx.x] = x[threadIdx.x] + round;
        __syncthreads();
        acc += buffer[63 - threadIdx.x];
        __syncthreads();
    }
    if (blockIdx.x == 0) {
        __shared__ int flag;
        if (threadIdx.x == 0) {
            flag = 2;
        }
        __syncthreads();
        acc *= flag;
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = scaled_by_shared(acc);
}
