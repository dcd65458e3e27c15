"""ptxas's resource report (`--ptxas-options=-v`, in NVRTC's log), per kernel. The lines
it reads:

    ptxas info    : Compiling entry function 'fn_group_0' for 'sm_90'
    ptxas info    : Function properties for fn_group_0
    ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 32 registers, used 1 barriers, 256 bytes smem
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_BARRIERS = re.compile(r"used (\d+) barriers")


@dataclass(frozen=True)
class Resources:
    """What ptxas gave one kernel."""

    registers: int
    spill_stores: int = 0
    """Bytes a thread stores to local memory for registers that did not fit."""
    spill_loads: int = 0
    stack: int = 0
    """Bytes of stack frame a thread has (spills and local arrays)."""
    static_shared: int = 0
    """Bytes of `__shared__` arrays a block has (dynamic shared memory is the launch's)."""
    barriers: int = 0

    @property
    def spills(self) -> int:
        return self.spill_stores + self.spill_loads


def parse_ptxas_log(log: str) -> dict[str, Resources]:
    """Each entry function's resources, by name; device functions' lines are skipped."""
    found: dict[str, dict[str, int]] = {}
    entry: str | None = None
    properties: str | None = None
    for line in log.splitlines():
        if match := _ENTRY.search(line):
            entry = match.group(1)
            found[entry] = {}
            continue
        if match := _PROPERTIES.search(line):
            properties = match.group(1)
            continue
        if (match := _FRAME.search(line)) and properties in found:
            stack, stores, loads = (int(g) for g in match.groups())
            found[properties].update(stack=stack, spill_stores=stores, spill_loads=loads)
            continue
        if (match := _USED.search(line)) and entry is not None:
            fields = found[entry]
            fields["registers"] = int(match.group(1))
            if smem := _SMEM.search(line):
                fields["static_shared"] = int(smem.group(1))
            if barriers := _BARRIERS.search(line):
                fields["barriers"] = int(barriers.group(1))
    return {name: Resources(**fields) for name, fields in found.items() if "registers" in fields}
