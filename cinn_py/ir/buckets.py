"""The buckets of a reduction over a symbolic length (a softmax over a -1 sequence).

Such a reduction iterates to its bucket's bound, the steps past the length masked off:
a static extent the schedules can factor into threads (and a register cache can hold),
the same for every length in the bucket, so the kernel is compiled once per bucket
(`hlir.symbolic_dims` lowers it, `ir.live_steps` skips the masked steps). Lowering
picks the bound; the row schedule also reads the bucket's floor, the shortest length
it must serve well.
"""

from __future__ import annotations

REDUCE_BUCKETS = (128, *(2**k for k in range(10, 21)))
"""The bounds, each the longest length of its bucket: [1, 128], (128, 1024], then the
powers of two (1024, 2048], (2048, 4096], ... up to 2**20 (long contexts). A length
at a bound walks no masked step (a sequence of 4096 is walked as the static row is:
the benchmark's shapes and the common context lengths are powers of two); above 1024,
at most twice its steps, below, up to 8x for short rows where a step is cheap. Past
2**20 the powers of two go on up to `BUCKET_LIMIT`."""

BUCKET_LIMIT = 2**30
"""The largest bound of a reduce axis, of one dim or of several merged into one (a
reduce-all of `[S0, S1]`, `ops.reduction`): past 2**20 the buckets go on as powers of
two up to it (the grid or the row schedule walks such a row; an int32 index holds it,
and lowering takes int64 indices where a tensor's masked offsets could pass 2**31:
`op_lowering.lower._index_dtype`). A longer length is compiled per shape."""


def bucket_bound(length: int, limit: int = REDUCE_BUCKETS[-1]) -> int | None:
    """The bound of `length`'s bucket (the least bound at or above it); None past the
    largest (`limit`: past 2**20 the buckets go on as powers of two up to it)."""
    for bound in REDUCE_BUCKETS:
        if length <= bound:
            return bound
    bound = REDUCE_BUCKETS[-1] * 2
    while bound <= limit:
        if length <= bound:
            return bound
        bound *= 2
    return None


def bucket_floor(bound: int) -> int:
    """The shortest length of the bucket whose bound is `bound`: 1 for the first, one
    past the bound below for the others (a power of two past 2**20: one past half)."""
    if bound not in REDUCE_BUCKETS:
        return bound // 2 + 1 if bound > REDUCE_BUCKETS[-1] else bound
    index = REDUCE_BUCKETS.index(bound)
    return 1 if index == 0 else REDUCE_BUCKETS[index - 1] + 1
