"""Copy kernels at the bench's sizes (MB moved = read + write): float4 one-per-thread kernel, torch copy_, cudaMemcpy; stream, events, best of 5 x many."""
import cupy as cp, torch
src = r'''extern "C" __global__ void copy4(const float4* __restrict__ a, float4* __restrict__ b, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x; if (i < n) b[i] = __ldg(a + i); }'''
k = cp.RawKernel(src, "copy4", options=("-arch=sm_90",))
def timeit(fn, reps):
    s = cp.cuda.get_current_stream()
    for _ in range(3): fn()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event(); best = 1e9
    for _ in range(5):
        e0.record(s)
        for _ in range(reps): fn()
        e1.record(s); e1.synchronize(); best = min(best, cp.cuda.get_elapsed_time(e0, e1) / reps)
    return best
for mb in (67.1, 134.2, 268.4, 537, 1073.7):
    n = int(mb * 1e6 / 2) // 16 * 16
    a = cp.ones(n // 4, dtype=cp.float32); b = cp.empty_like(a); n4 = n // 16
    reps = max(20, int(4e9 / n))
    t_k = timeit(lambda: k(((n4 + 255) // 256,), (256,), (a, b, cp.int64(n4))), reps)
    t_m = timeit(lambda: b.data.copy_from_device_async(a.data, n), reps)
    ta = torch.ones(n // 4, device="cuda"); tb = torch.empty_like(ta)
    t_t = timeit(lambda: tb.copy_(ta), reps)
    f = lambda t: f"{t*1e3:7.2f} us {2*n/t/1e6:5.0f} GB/s ({2*n/t/1e6/4247*100:5.1f}%)"
    print(f"{mb:7.1f} MB: float4 kernel {f(t_k)} | memcpy {f(t_m)} | torch copy_ {f(t_t)}")
