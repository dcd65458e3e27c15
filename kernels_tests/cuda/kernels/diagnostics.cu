// Kernels that the cuda-emu tests run for the emulator's diagnostics.  Each is valid CUDA,
// but most have a deliberate bug that a GPU would turn into a hang, a silently wrong
// result or memory corruption, and that the emulator must report instead.

// Threads 32.. return; warp 0 then waits at a barrier that they never reach.
extern "C" __global__ void barrier_after_exit(float* __restrict__ out) {
    if (threadIdx.x >= 32) {
        return;
    }
    __syncthreads();
    out[threadIdx.x] = 1.0f;
}

// Half of warp 0 waits at __syncwarp for the other half, which waits at __syncthreads.
extern "C" __global__ void mismatched_barriers(float* __restrict__ out) {
    if (threadIdx.x >= 16 && threadIdx.x < 32) {
        __syncwarp();
    } else {
        __syncthreads();
    }
    out[threadIdx.x] = 1.0f;
}

// A warp shuffle whose mask leaves out the calling lanes (all but lane 0).
extern "C" __global__ void lane_outside_mask(int* __restrict__ out) {
    out[threadIdx.x] = __shfl_sync(0x1u, static_cast<int>(threadIdx.x), 0);
}

// Off by one: the guard lets thread n write one element past the end.
extern "C" __global__ void write_past_end(float* __restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) {
        out[i] = 1.0f;
    }
}

// Shared memory is not zeroed: odd threads read slots that nobody wrote.
extern "C" __global__ void read_unwritten_shared(float* __restrict__ out) {
    __shared__ float slots[256];
    if (threadIdx.x % 2 == 0) {
        slots[threadIdx.x] = 1.0f;
    }
    __syncthreads();
    out[threadIdx.x] = slots[threadIdx.x];
}

// A 64-element shared array indexed by a 65-thread block.
extern "C" __global__ void shared_past_end(float* __restrict__ out) {
    __shared__ float slots[64];
    slots[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = slots[threadIdx.x % 64];
}

// Dynamic shared memory indexed one past what the launch gave (blockDim.x floats).
extern "C" __global__ void dynamic_shared_past_end(float* __restrict__ out) {
    extern __shared__ float scratch[];
    scratch[threadIdx.x + 1] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = scratch[threadIdx.x];
}

// printf from a kernel: one line per block.
extern "C" __global__ void hello(int tag) {
    if (threadIdx.x == 0) {
        printf("hello from block %d, tag %d\n", static_cast<int>(blockIdx.x), tag);
    }
}
