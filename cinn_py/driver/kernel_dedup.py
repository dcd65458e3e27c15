"""Identical kernels shared: groups whose scheduled functions are equal up to names
launch one kernel.

A model of 32 identical layers has 32 softmax groups whose functions differ only in
their buffers' names (`var_2` in one, `var_9` in the next), their loop variables'
(`var_2_local_row`), their temps' (`var_8_tmp`) and their own (`fn_group_1`). Keyed by
`ir.visitor.canonical_key`, which renames all of those consistently and keeps
everything else (dtypes, shapes, loop extents and bindings, so the launch, which codegen
derives from the bindings; the schedule's temps and barriers; the arguments' order and
roles), they are one kernel: rendered once in the translation unit, compiled once,
launched by each group's Instruction with its own variables, positionally.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from cinn_py.backends.codegen_cuda import KernelInfo
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.ir.visitor import canonical_key


def share_kernels(funcs: Sequence[LoweredFunc]) -> list[int]:
    """For each function, the index of the first function equal to it up to names
    (`canonical_key`): itself for a kernel of its own, an earlier one to share."""
    first: dict[tuple, int] = {}
    return [first.setdefault(canonical_key(func), index) for index, func in enumerate(funcs)]


def launch_of(info: KernelInfo, shared: LoweredFunc, own: LoweredFunc) -> KernelInfo:
    """How the group whose function is `own` launches the kernel `info` rendered from
    `shared` (equal up to names): the same kernel, grid, block and shared memory, with
    `own`'s parameters (the group's buffers and its own workspace, in the same
    positions) and the in-place pairs renamed to them."""
    if own is shared:
        return info
    rename = {a.name: b.name for a, b in zip(shared.args, own.args, strict=True)}
    pairs = tuple((rename[x], rename[y]) for x, y in info.in_place)
    return dataclasses.replace(info, args=own.args, in_place=pairs)
