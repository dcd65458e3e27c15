"""The facts about a device that scheduling decisions depend on.

A schedule needs only a few numbers: how many threads a block may have, how large a
grid may be, how many SMs run blocks at once and how many blocks per SM it is worth
asking for before a grid-stride loop pays off; and how much of a row the row schedule
keeps in a thread's registers, and how few rows leave a GPU idle under one block per
row, which fusion asks the tactics about (`tactics.row_schedule_fits`) rather than
keep numbers of its own. Both targets run the same CUDA C, so they share the hardware
limits; they differ in how many blocks they want.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class TargetInfo:
    """A device as the scheduler sees it.

    `max_blocks_per_sm` is not the hardware's residency limit but the number of blocks
    per SM a launch may ask for: beyond `sm_count * max_blocks_per_sm` blocks the
    schedule keeps the grid at that size and gives each thread a grid-stride loop.
    """

    arch: str
    sm_count: int
    max_blocks_per_sm: int
    max_threads_per_block: int = 1024
    max_threads_per_sm: int = 2048
    """Threads resident on one SM at most (2048 on sm_80 and sm_90): the most blocks an
    SM a persistent grid asks for (`reduce_schedule.persistent_candidates`)."""
    max_grid_dims: tuple[int, int, int] = (2**31 - 1, 65535, 65535)
    warp_size: int = 32
    memory_alignment: int = 256
    """Bytes every buffer of the memory plan starts on: what cudaMalloc gives, a
    multiple of every dtype's size and of a 128-bit vector access."""
    vector_alignment: int = 16
    """Bytes the widest access of a generated kernel (128 bits) needs its buffer to start
    on: a caller's device array is used in place as a feed only when it does."""
    row_cache_bytes: int = 128
    """Bytes of input rows a thread of the row schedule keeps in registers, all cached
    inputs together (32 registers of float32): softmax's x is read from memory once when
    its row fits (`reduce_schedule._cache_rows`); a longer row is read again by each
    pass."""
    few_rows: int = 64
    """A reduction with fewer rows than this leaves most of the GPU idle under the row
    schedule's one thread block per row (64: about half the SMs of an A100 or H100).
    Fusion splits the full-shaped consumers off such reductions when their rows are
    long as well (`long_row_bytes`), so that the grid schedule takes the reductions.
    A fixed number, not half of `sm_count`: a program then groups alike on every GPU
    and on the emulator, whose groups are the GPU's."""

    def __post_init__(self) -> None:
        for name in (
            "sm_count",
            "max_blocks_per_sm",
            "max_threads_per_block",
            "max_threads_per_sm",
            "warp_size",
            "memory_alignment",
            "vector_alignment",
            "row_cache_bytes",
            "few_rows",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"TargetInfo.{name}: expected a positive int, got {value!r}")
        if self.max_threads_per_block % self.warp_size:
            raise ValueError(
                f"TargetInfo.max_threads_per_block: {self.max_threads_per_block} is not a "
                f"multiple of the warp size {self.warp_size}"
            )

    @property
    def max_blocks(self) -> int:
        """The most blocks along x a launch asks for before it grid-strides."""
        return min(self.sm_count * self.max_blocks_per_sm, self.max_grid_dims[0])

    @property
    def long_row_bytes(self) -> int:
        """The longest row (in bytes) the row schedule keeps in registers: the register
        cache of a thread over the largest block (128 x 1024 = 128 KiB). A longer row is
        read from memory once per pass whatever the schedule."""
        return self.row_cache_bytes * self.max_threads_per_block

    @classmethod
    def cuda(
        cls, arch: str = "sm_90", sm_count: int | None = None, max_threads_per_sm: int | None = None
    ) -> TargetInfo:
        """A GPU of `arch`: `sm_count` and `max_threads_per_sm` as given (the device's
        own, where there is one), else those of the arch's reference GPU
        (`reference_gpu`: an H100 SXM's 132 SMs for sm_90). 32 blocks per SM: a
        256-thread block leaves room for 8 resident blocks per SM (2048 threads), so
        this is 4 waves, enough to even out the tail; bigger tensors loop instead of
        launching more."""
        reference = reference_gpu(arch)
        return cls(
            arch=arch,
            sm_count=sm_count or reference.sm_count,
            max_blocks_per_sm=32,
            max_threads_per_sm=max_threads_per_sm or reference.max_threads_per_sm,
        )

    @classmethod
    def cuda_emu(cls) -> TargetInfo:
        """The CPU emulator: the GPU's limits, but one SM's worth of blocks (8).

        The emulator runs blocks one after another on one core and every thread is a
        fiber with a start-up cost (about 25 ns), so a wide grid is pure overhead: on
        float32 maps of 1M to 8M elements, 8 blocks of 256 threads with a grid-stride
        loop ran 2.5 to 10 times faster than one pass of 1024-element blocks (see
        docs/AUTO_SCHEDULE.md). Few, full blocks it is.
        """
        return cls(arch="sm_90", sm_count=1, max_blocks_per_sm=8)


@dataclass(frozen=True, kw_only=True)
class ReferenceGpu:
    """The GPU a compile for an arch is scheduled for and modelled on where no GPU is
    here to ask (`cinn-py perf --arch`, `tools/tune.py --arch`, the `cuda` target on a
    machine without one): a datacenter part of that arch, its SMs, and the resident
    threads an SM of that arch holds (the CUDA programming guide's table of compute
    capabilities)."""

    name: str
    arch: str
    sm_count: int
    max_threads_per_sm: int


REFERENCE_GPUS: tuple[ReferenceGpu, ...] = (
    ReferenceGpu(name="T4", arch="sm_75", sm_count=40, max_threads_per_sm=1024),
    ReferenceGpu(name="A100 SXM4", arch="sm_80", sm_count=108, max_threads_per_sm=2048),
    ReferenceGpu(name="A10", arch="sm_86", sm_count=72, max_threads_per_sm=1536),
    ReferenceGpu(name="L40S", arch="sm_89", sm_count=142, max_threads_per_sm=1536),
    ReferenceGpu(name="H100 SXM", arch="sm_90", sm_count=132, max_threads_per_sm=2048),
)
"""One per arch, in arch order."""


def arch_number(arch: str) -> int:
    """90 for "sm_90" (and "sm_90a", "compute_90"): the compute capability as a number."""
    digits = "".join(ch for ch in arch.rsplit("_", 1)[-1] if ch.isdigit())
    if not digits:
        raise ValueError(f"not a CUDA arch: {arch!r} (expected e.g. 'sm_90')")
    return int(digits)


def reference_gpu(arch: str) -> ReferenceGpu:
    """The reference GPU of `arch`: its own, else that of the newest arch listed below it
    (sm_87 takes the A10's, sm_100 the H100's, until theirs are listed), else the oldest
    listed. A GPU that is here gives its own SMs and threads instead (`cuda.target_info`)."""
    number = arch_number(arch)
    older = [g for g in REFERENCE_GPUS if arch_number(g.arch) <= number]
    return older[-1] if older else REFERENCE_GPUS[0]
