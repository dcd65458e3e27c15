"""Blocks per SM, occupancy and waves, as CUDA's occupancy calculator works them out.

`GpuSpec` holds the per-SM facts the report needs, one spec per arch (`spec_for`: the
arch's reference GPU, an H100 SXM for sm_90). `TargetInfo` (the scheduler's view of a
device) has the SM count and the threads an SM holds (a persistent row grid's
candidates), which the spec takes from the same reference GPU
(`target_info.reference_gpu`); the rest lives here until the scheduler needs it too
(then `registers_per_sm`, `max_resident_blocks`, `shared_per_sm` and the bandwidth
belong on TargetInfo).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cinn_py.ir.group_schedule.target_info import ReferenceGpu, TargetInfo, reference_gpu


@dataclass(frozen=True, kw_only=True)
class GpuSpec:
    """The facts of one GPU that occupancy and the time model use."""

    name: str
    sm_count: int
    warp_size: int = 32
    schedulers_per_sm: int = 4
    """Warp schedulers per SM, each issuing one warp instruction a cycle."""
    clock_hz: float = 1.98e9
    """The SM clock under load (H100 SXM and H200: 1980 MHz boost)."""
    issue_efficiency: float = 0.7
    """The share of the peak issue rate (one warp instruction a scheduler a cycle) kernels
    sustain: dependency stalls and the units slower than one a cycle (MUFU, conversions)
    lose the rest. 0.7 matches the H200's softmax f16 (1416 SASS a thread, issue-bound at
    48.9% of copy: 0.68 of peak; BENCHMARKS.md)."""
    registers_per_sm: int = 65536
    register_granularity: int = 256
    """Registers are given to a warp in units of this many (8 a thread)."""
    max_registers_per_thread: int = 255
    max_threads_per_sm: int = TargetInfo.cuda().max_threads_per_sm
    max_resident_blocks: int = 32
    """The hardware's limit of resident blocks per SM (not TargetInfo.max_blocks_per_sm,
    which is how many blocks per SM a launch asks for before it grid-strides)."""
    shared_per_sm: int = 228 * 1024
    """Shared memory an SM can give blocks (the largest carveout)."""
    shared_reserved_per_block: int = 1024
    """Shared memory the system keeps per resident block (CUDA 11 and later)."""
    dram_bandwidth: float = 3.0e12
    """Bytes a second a well-written copy kernel reaches (the model's memory roof)."""
    memory_latency_s: float = 800e-9
    """Loaded DRAM latency: with Little's law, the bytes each SM must have in flight to
    keep `dram_bandwidth` busy (18 KB an SM here). 800 ns matches the H200's f16
    transpose: 16 KB in flight an SM, 63% of copy (BENCHMARKS.md)."""

    @property
    def inflight_needed_per_sm(self) -> float:
        """Bytes of loads each SM must have in flight to reach `dram_bandwidth`."""
        return self.dram_bandwidth * self.memory_latency_s / self.sm_count


def _spec(
    gpu: ReferenceGpu,
    clock_hz: float,
    peak_bandwidth: float,
    max_resident_blocks: int,
    shared_per_sm_kib: int,
) -> GpuSpec:
    """The spec of reference GPU `gpu` from its datasheet: boost clock, peak DRAM
    bandwidth (a copy kernel is taken to reach 90% of it, as the H100 SXM's 3.0 of
    3.35 TB/s) and its arch's block slots and shared memory an SM."""
    return GpuSpec(
        name=f"{gpu.name} ({gpu.arch}, {gpu.sm_count} SMs)",
        sm_count=gpu.sm_count,
        clock_hz=clock_hz,
        max_threads_per_sm=gpu.max_threads_per_sm,
        max_resident_blocks=max_resident_blocks,
        shared_per_sm=shared_per_sm_kib * 1024,
        dram_bandwidth=round(peak_bandwidth * 0.9, -9),
    )


_DATASHEETS: dict[str, tuple[float, float, int, int]] = {
    # arch: boost clock, peak DRAM bytes a second, resident blocks and shared KiB an SM
    "sm_75": (1.59e9, 320e9, 16, 64),  # T4
    "sm_80": (1.41e9, 2039e9, 32, 164),  # A100 SXM4 80GB
    "sm_86": (1.695e9, 600e9, 16, 100),  # A10
    "sm_89": (2.52e9, 864e9, 24, 100),  # L40S
}

SPECS: dict[str, GpuSpec] = {
    **{arch: _spec(reference_gpu(arch), *sheet) for arch, sheet in _DATASHEETS.items()},
    "sm_90": GpuSpec(name="H100 SXM (sm_90, 132 SMs)", sm_count=reference_gpu("sm_90").sm_count),
}
"""One spec a reference GPU (`target_info.REFERENCE_GPUS`); the H100's are GpuSpec's
defaults. Only the H100's clock, copy bandwidth, issue efficiency and memory latency
were checked against a GPU (an H200, 2026-11-26 and -27: BENCHMARKS.md); the others
are datasheet figures with the H100's efficiency and latency, good for ranking one
arch's candidates, not for absolute times."""

H100 = SPECS["sm_90"]
"""The report's default device: an H100 SXM; an H200 has the same SMs (faster memory)."""


def spec_for(arch: str) -> GpuSpec:
    """The spec of `arch`'s reference GPU (`target_info.reference_gpu`: an arch not
    listed takes the newest listed below it)."""
    return SPECS[reference_gpu(arch).arch]


@dataclass(frozen=True)
class Occupancy:
    """How many blocks of a kernel an SM holds at once, and what limits it."""

    blocks_per_sm: int
    warps_per_sm: int
    fraction: float
    """Resident warps over the most an SM can hold."""
    limiter: str
    """One of "threads", "blocks" (the hardware's block limit), "registers", "shared memory"."""


def registers_per_warp(registers: int, spec: GpuSpec = H100) -> int:
    """A warp's registers after rounding to the allocation unit (64 x 32 = 2048)."""
    unit = spec.register_granularity
    return math.ceil(max(registers, 1) * spec.warp_size / unit) * unit


def occupancy(
    threads_per_block: int, registers: int, shared_bytes: int, spec: GpuSpec = H100
) -> Occupancy:
    """Blocks per SM for blocks of `threads_per_block` threads using `registers` registers
    a thread and `shared_bytes` of shared memory (static and dynamic) a block: the least
    of what the register file, the thread slots, shared memory and the block slots
    allow. A block that fits none gives 0 blocks."""
    if threads_per_block < 1:
        raise ValueError(f"threads_per_block must be positive, got {threads_per_block}")
    warps = math.ceil(threads_per_block / spec.warp_size)
    limits = {  # a tie names the first: the hardware's own limits before the kernel's
        "threads": spec.max_threads_per_sm // (warps * spec.warp_size),
        "blocks": spec.max_resident_blocks,
        "registers": spec.registers_per_sm // (registers_per_warp(registers, spec) * warps),
        "shared memory": spec.shared_per_sm // (shared_bytes + spec.shared_reserved_per_block),
    }
    if registers > spec.max_registers_per_thread:
        limits["registers"] = 0
    limiter = min(limits, key=lambda name: limits[name])
    blocks = limits[limiter]
    max_warps = spec.max_threads_per_sm // spec.warp_size
    return Occupancy(blocks, blocks * warps, blocks * warps / max_warps, limiter)


def waves(grid_blocks: int, blocks_per_sm: int, spec: GpuSpec = H100) -> float:
    """How many times the GPU fills with the grid's blocks: blocks / (blocks per SM x SMs)."""
    if blocks_per_sm < 1:
        return math.inf
    return grid_blocks / (blocks_per_sm * spec.sm_count)
