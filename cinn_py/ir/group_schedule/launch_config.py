"""The launch configuration of a flat (elementwise / broadcast / injective) kernel.

A pure function of the element count, the vector width and the target, so that it can
be reasoned about with numbers alone:

    items   = ceil(n / lanes)                              vectors to process
    threads = min(256, max_threads_per_block, max(warp, round_up(items, warp)))
    blocks  = min(ceil(items / threads), target.max_blocks)
    steps   = ceil(items / (threads * blocks))             grid-stride iterations
    blocks  = ceil(items / (threads * steps))              the fewest that cover items

256 threads (8 warps) is the usual sweet spot for memory-bound maps: enough warps per
block to hide latency, small enough for 8 blocks to be resident per SM. A tensor with
fewer vectors than that gets one block of as many whole warps as it needs.
"""

from __future__ import annotations

from dataclasses import dataclass

from cinn_py.ir.group_schedule.target_info import TargetInfo

PREFERRED_THREADS = 256
VECTOR_BYTES = 16
"""The widest vector access a CUDA thread makes (`float4`, `uint4`)."""


@dataclass(frozen=True)
class LaunchConfig:
    """`blocks` x `threads` along x; each thread handles `steps` vectors, one per
    grid-stride iteration."""

    threads: int
    blocks: int
    steps: int

    @property
    def stride(self) -> int:
        """Vectors covered by one pass of the whole grid."""
        return self.threads * self.blocks


@dataclass(frozen=True)
class GridLaunch(LaunchConfig):
    """The grid reduction's launch (`grid_schedule.py`): `blocks` rows on blockIdx.x,
    `chunks` blocks per row on blockIdx.y, `threads` on threadIdx.x; each thread folds
    `steps` vectors of `lanes` elements of its block's chunk (a chunk is
    `steps * threads * lanes` elements)."""

    chunks: int
    lanes: int = 1
    rows_bound: int | None = None
    """A symbolic row count's bucket, the rows the workspace holds (`grid_plan`)."""

    @property
    def chunk_size(self) -> int:
        return self.steps * self.threads * self.lanes


def vector_lanes(extent: int, itemsize: int) -> int:
    """Elements per vector access for a fused loop of `extent` elements of `itemsize`
    bytes: 16 bytes' worth when they divide the extent evenly, else 1 (scalar).

    Vectorizing only exact multiples keeps every vector wholly in or wholly out of range,
    so a bounds guard never splits one.
    """
    lanes = VECTOR_BYTES // itemsize
    if lanes < 2 or extent < lanes or extent % lanes:
        return 1
    return lanes


def choose_launch(
    items: int, target: TargetInfo, threads: int | None = None, min_steps: int = 1
) -> LaunchConfig:
    """The configuration for `items` vectors (>= 1) on `target`. `threads` and
    `min_steps` (vectors a thread, at least: a tuned setting, `flat_candidates`) replace
    the rule's threads and its one vector a thread where the grid allows."""
    if items < 1:
        raise ValueError(f"choose_launch: expected at least one item, got {items}")
    warp = target.warp_size
    if threads is None:
        threads = min(
            PREFERRED_THREADS, target.max_threads_per_block, max(warp, _round_up(items, warp))
        )
    blocks = min(_ceil_div(items, threads * min_steps), target.max_blocks)
    steps = steps_for(items, threads, blocks)
    # the fewest blocks that still cover `items` in `steps` passes: a grid capped at
    # max_blocks leaves the last pass partly idle (64M float32: 4224 blocks x 16 steps
    # cover 3% more than the tensor, each step guarded); 4096 blocks cover it exactly.
    # Below the cap (one step) this is the same grid.
    blocks = _ceil_div(items, threads * steps)
    return LaunchConfig(threads, blocks, steps)


def steps_for(items: int, threads: int, blocks: int) -> int:
    """Grid-stride iterations needed to cover `items` with `blocks` x `threads`."""
    return max(1, _ceil_div(items, threads * blocks))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b
