"""Unique names: the one rule every generator of names follows (loop vars a schedule
primitive makes, identifiers codegen emits)."""

from __future__ import annotations


def fresh_name(base: str, taken: set[str]) -> str:
    """`base`, or `base_1`, `base_2`, ... if taken; the result is added to `taken`."""
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name
