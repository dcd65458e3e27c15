"""The copy probe of 2026-11-27 (H200): a float4 copy kernel, cudaMemcpyAsync and torch's
copy_ at the bench's sizes (MB moved = read + write), launches queued on one stream
between two CUDA events, best of 5 batches. Needs CuPy and PyTorch on a GPU."""

import cupy as cp
import torch

SOURCE = r"""extern "C" __global__ void copy4(const float4* __restrict__ a,
                                     float4* __restrict__ b, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) b[i] = __ldg(a + i);
}"""
COPY_BANDWIDTH = 4247e9  # that run's 1 GiB cudaMemcpyAsync, bytes/s


def best_seconds(fn, reps: int) -> float:
    stream = cp.cuda.get_current_stream()
    for _ in range(3):
        fn()
    begin, end = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(5):
        begin.record(stream)
        for _ in range(reps):
            fn()
        end.record(stream)
        end.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(begin, end) / 1e3 / reps)
    return best


def main() -> None:
    kernel = cp.RawKernel(SOURCE, "copy4")
    for mb in (67.1, 134.2, 268.4, 537, 1073.7):
        nbytes = int(mb * 1e6 / 2) // 16 * 16
        src = cp.ones(nbytes // 4, dtype=cp.float32)
        dst = cp.empty_like(src)
        vectors = nbytes // 16
        reps = max(20, int(4e9 / nbytes))
        src_t = torch.ones(nbytes // 4, device="cuda")
        dst_t = torch.empty_like(src_t)
        times = {
            "float4 kernel": best_seconds(
                lambda s=src, d=dst, v=vectors: kernel(
                    ((v + 255) // 256,), (256,), (s, d, cp.int64(v))
                ),
                reps,
            ),
            "memcpy": best_seconds(
                lambda s=src, d=dst, n=nbytes: d.data.copy_from_device_async(s.data, n), reps
            ),
            "torch copy_": best_seconds(lambda s=src_t, d=dst_t: d.copy_(s), reps),
        }
        cells = [
            f"{name} {t * 1e6:7.2f} us {2 * nbytes / t / 1e9:5.0f} GB/s "
            f"({2 * nbytes / t / COPY_BANDWIDTH:6.1%})"
            for name, t in times.items()
        ]
        print(f"{mb:7.1f} MB: " + " | ".join(cells))


if __name__ == "__main__":
    main()
