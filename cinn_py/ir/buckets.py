"""The buckets of a reduction over a symbolic length (a softmax over a -1 sequence).

Such a reduction iterates to its bucket's bound, the steps past the length masked off:
a static extent the schedules can factor into threads (and a register cache can hold),
the same for every length in the bucket, so the kernel is compiled once per bucket
(`hlir.symbolic_dims` lowers it, `ir.live_steps` skips the masked steps). Lowering
picks the bound; the row schedule also reads the bucket's floor, the shortest length
it must serve well.
"""

from __future__ import annotations

REDUCE_BUCKETS = (128, 1024, 8192, *(2**k for k in range(14, 21)))
"""The bounds: [1, 128), [128, 1024), [1024, 8192), then powers of two up to 2**20
(long contexts: at most twice the steps the length has). A longer length is compiled
per shape."""


MERGED_BUCKET_LIMIT = 2**30
"""The largest bound of a reduce axis over several dims merged into one (a reduce-all
of `[S0, S1]`, `ops.reduction`): the powers of two go on past 2**20 up to it (the grid
walks such a row; an int32 index holds it)."""


def bucket_bound(length: int, limit: int = REDUCE_BUCKETS[-1]) -> int | None:
    """The bound of `length`'s bucket; None past the largest (`limit`: past 2**20 the
    buckets go on as powers of two up to it)."""
    for bound in REDUCE_BUCKETS:
        if length < bound:
            return bound
    bound = REDUCE_BUCKETS[-1] * 2
    while bound <= limit:
        if length < bound:
            return bound
        bound *= 2
    return None


def bucket_floor(bound: int) -> int:
    """The shortest length of the bucket whose bound is `bound` (1 for the first; the
    bound itself for a bound that is no bucket's, a product of several dims' bounds)."""
    if bound not in REDUCE_BUCKETS:
        return bound
    index = REDUCE_BUCKETS.index(bound)
    return 1 if index == 0 else REDUCE_BUCKETS[index - 1]
