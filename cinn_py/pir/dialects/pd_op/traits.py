"""Trait names the pd_op declarations carry, for fusion and dead-code elimination.

Every pd_op op has exactly one pattern trait, after CINN's OpPatternKind: how its
output elements depend on its input elements, which is what decides what may fuse.
"""

from __future__ import annotations

ELEMENTWISE = "ElementWise"
"""out[i] depends on in[i] only (unary and binary math, casts, compares; broadcasting
of a binary op's operands is left to the lowering)."""

BROADCAST = "Broadcast"
"""out[i] reads in[f(i)] with f dropping or clamping dims (expand)."""

INJECTIVE = "Injective"
"""out[i] reads one input element at an index computed from i (reshape, transpose, slice,
concat, gather, ...)."""

REDUCTION = "Reduction"
"""out[i] combines a set of input elements along reduced axes (sum, mean, max, ...)."""

OUT_FUSIBLE = "OutFusible"
"""A composite whose consumers may fuse into it but which keeps its own schedule (matmul,
softmax, layer_norm)."""

NON_FUSIBLE = "NonFusible"
"""Fuses with nothing (data, fetch, random ops, scans)."""

SIDE_EFFECT = "SideEffect"
"""Must be kept even when its results are unused (data, fetch)."""

PATTERNS = frozenset({ELEMENTWISE, BROADCAST, INJECTIVE, REDUCTION, OUT_FUSIBLE, NON_FUSIBLE})


def traits(*names: str) -> frozenset[str]:
    return frozenset(names)
