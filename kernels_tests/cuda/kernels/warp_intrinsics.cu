// Warp shuffles and votes with their cross-lane semantics.
//
// In each kernel t is the thread's linear index in the block (x fastest, then y, then z),
// lane = t % 32, and v = in[t].

#define WARP_OPS 16

// Launch: one block of (16, 4) threads: two warps of 2-D threads.  Writes WARP_OPS ints per
// thread at out[t * WARP_OPS]: every shuffle flavour with and without `width`, ballot,
// votes over partial masks (only the mask's lanes call them), __activemask of a converged
// warp, two half-warp shuffles in flight at once with disjoint masks, and an 8-lane
// butterfly sum.
extern "C" __global__ void __launch_bounds__(64)
warp_ops(const int* __restrict__ in, int* __restrict__ out) {
    const unsigned int full = 0xffffffffu;
    const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const int lane = t % 32;
    const int v = in[t];
    int* o = out + t * WARP_OPS;
    o[0] = __shfl_sync(full, v, (lane * 7 + 3) % 32);
    o[1] = __shfl_sync(full, v, lane + 5, 16);
    o[2] = __shfl_up_sync(full, v, 3);
    o[3] = __shfl_up_sync(full, v, 2, 8);
    o[4] = __shfl_down_sync(full, v, 5);
    o[5] = __shfl_down_sync(full, v, 3, 16);
    o[6] = __shfl_xor_sync(full, v, 9);
    o[7] = __shfl_xor_sync(full, v, 6, 8);
    o[8] = __shfl_xor_sync(full, v, 20, 16);  // a later 16-lane group gives the own value
    o[9] = static_cast<int>(__ballot_sync(full, v & 1));
    const unsigned int thirds = 0x49249249u;  // lanes 0, 3, 6, ..., 30
    o[10] = lane % 3 == 0 ? static_cast<int>(__ballot_sync(thirds, v & 2)) : -1;
    o[11] = lane < 20 ? __any_sync(0x000fffffu, v == 500) : -1;
    o[12] = lane >= 8 ? __all_sync(0xffffff00u, v != 777) : -1;
    __syncwarp();  // reconverge the warp, so that every lane is active below
    o[13] = static_cast<int>(__activemask());
    if (lane < 16) {
        o[14] = __shfl_sync(0x0000ffffu, v, 15 - lane);
    } else {
        o[14] = __shfl_sync(0xffff0000u, v, 47 - lane);
    }
    __syncwarp();
    int sum = v;
#pragma unroll
    for (int offset = 4; offset > 0; offset >>= 1) {
        sum += __shfl_xor_sync(full, sum, offset, 8);
    }
    o[15] = sum;
}

// The same exchange for every shuffle type: float, double, long long, unsigned.
extern "C" __global__ void __launch_bounds__(64)
warp_shuffle_types(const int* __restrict__ in, float* __restrict__ f, double* __restrict__ d,
                   long long* __restrict__ ll, unsigned int* __restrict__ u) {
    const unsigned int full = 0xffffffffu;
    const int t = threadIdx.x;
    const int lane = t % 32;
    const int v = in[t];
    f[t] = __shfl_sync(full, v * 0.5f, (lane + 1) % 32);
    d[t] = __shfl_xor_sync(full, v * 0.25, 3);
    ll[t] = __shfl_down_sync(full, static_cast<long long>(v) << 33, 2);
    u[t] = __shfl_up_sync(full, static_cast<unsigned int>(v) * 2654435761u, 1);
}

// A block of 48 threads: its second warp has 16 lanes.  The lanes past the end of the
// block count as exited, so a full mask means the lanes that exist.  out[2t] = the sum over t's 16-lane group; out[2t + 1] = the full ballot.
extern "C" __global__ void __launch_bounds__(64)
warp_partial(const int* __restrict__ in, int* __restrict__ out) {
    const unsigned int full = 0xffffffffu;
    const int t = threadIdx.x;
    int sum = in[t];
#pragma unroll
    for (int offset = 8; offset > 0; offset >>= 1) {
        sum += __shfl_xor_sync(full, sum, offset);
    }
    out[2 * t] = sum;
    out[2 * t + 1] = static_cast<int>(__ballot_sync(full, 1));
}
