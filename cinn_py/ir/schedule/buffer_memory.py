"""set_buffer: which memory a temp buffer lives in (CINN's SetBuffer).

A temp buffer is global memory until scheduled otherwise. Both on-chip memories are
checked on the accesses written in terms of the GPU axes: the check substitutes each
block's iter values and turns every loop var bound to an axis into that axis.

`local` puts it in registers, one element per thread: valid when no other variable is
left and all accesses agree (a reduction's result stored and read back at the thread
block's own row, say); codegen declares `T name[1]` and reads `name[0]`.

`shared` puts it in the thread block's shared memory: valid when each dim is either a
grid dim, indexed by blockIdx alone with the same index in every access (each thread
block touches its own slice of it), or an array dim, indexed without blockIdx (threads
and serial loops). A dim indexed by both would let one thread block read another's
slice, which shared memory cannot hold. Codegen declares `__shared__ T name[n]`, n the
array dims' size, at most `MAX_SHARED_BYTES` for all of a kernel's shared arrays. When
threads read elements other threads wrote, a barrier must sit between (sync_threads;
the schedule's barrier check finds a missing one).

Either way the logical shape stays in the IR, so the interpreter, which runs bound
loops one after another, still sees every thread's and every thread block's elements.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import Buffer, Expr, IntImm, MemoryType, Var
from cinn_py.ir.schedule.analysis import (
    find_realize,
    loads_of,
    realizes,
    single_store,
    storage_name,
    stores_of,
    substitute,
    var_names,
)
from cinn_py.ir.stmt import BindInfo, For, LoweredFunc, ScheduleBlockRealize
from cinn_py.ir.visitor import Mutator, structural_key

PRIMITIVE = "set_buffer"
MEMORY_TYPES = {m.value: m for m in MemoryType}
MAX_SHARED_BYTES = 48 * 1024
"""What a kernel may declare as static `__shared__` arrays, all together (more needs
dynamic shared memory and an opt-in launch attribute)."""
GRID_AXES = frozenset(b.value for b in BindInfo if b.value.startswith("blockIdx"))


def set_buffer(func: LoweredFunc, block_name: str, memory_type: str) -> LoweredFunc:
    """Moves the temp buffer that block `block_name` stores into `memory_type`
    ("global", "local" or "shared")."""
    realize, _ = find_realize(func, block_name, PRIMITIVE)
    memory = MEMORY_TYPES.get(memory_type)
    if memory is None:
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            f"unknown memory type {memory_type!r} (expected one of {', '.join(MEMORY_TYPES)})",
        )
    store = single_store(realize.schedule_block)
    if store is None:
        raise ScheduleError(PRIMITIVE, block_name, "the block is not a single Store")
    name = storage_name(store.tensor)
    if any(arg.name == name for arg in func.args):
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            f"buffer {name} is an argument of {func.name}; only temp buffers change memory",
        )
    old = next((b for b in func.temp_buffers if b.name == name), None)
    if old is None:
        raise ScheduleError(PRIMITIVE, block_name, f"buffer {name} is not a temp buffer")
    array_dims: tuple[int, ...] = ()
    if memory is MemoryType.LOCAL:
        why = local_access_problem(func, name)
    elif memory is MemoryType.SHARED:
        array_dims, why = shared_layout(func, old)
        why = why or shared_size_problem(func, old, array_dims)
    else:
        why = None
    if why is not None:
        raise ScheduleError(PRIMITIVE, block_name, why)
    new = Buffer(old.name, old.dtype, old.shape, memory, array_dims)
    return Rebuffer(name, new).visit_func(func)


def local_access_problem(func: LoweredFunc, name: str) -> str | None:
    """Why buffer `name` cannot be one register per thread, or None when every access
    reads or writes the same element as a function of the bound GPU axes."""
    keys: set[tuple] = set()
    first: str | None = None
    scalars = {arg.name for arg in func.args if isinstance(arg.value, Var)}
    for block, canonical, axes in canonical_accesses(func, name):
        # A scalar argument (a symbolic dim) is one value for every thread.
        stray = set().union(*map(var_names, canonical)) - _axis_names(axes) - scalars
        if stray:
            return (
                f"buffer {name} is indexed by {', '.join(sorted(stray))} in block "
                f"{block}, not only by bound GPU axes; a local buffer holds one element "
                "per thread"
            )
        keys.add(tuple(structural_key(i) for i in canonical))
        if len(keys) > 1:
            return (
                f"block {block} reads buffer {name} at another element than {first} "
                "writes; a local buffer holds one element per thread"
            )
        first = first or block
    return None


def shared_layout(func: LoweredFunc, buffer: Buffer) -> tuple[tuple[int, ...], str | None]:
    """The array dims of `buffer` in shared memory (those no access indexes by
    blockIdx), or why it cannot live there: a dim indexed by blockIdx and something
    else, or grid dims indexed differently by two accesses (a thread block reading
    another's slice)."""
    name = buffer.name
    grid: dict[int, tuple[object, str]] = {}
    accesses = list(canonical_accesses(func, name))
    for block, canonical, _ in accesses:
        for dim, index in enumerate(canonical):
            used = var_names(index)
            if not used & GRID_AXES:
                continue
            if used - GRID_AXES:
                return (), (
                    f"dim {dim} of buffer {name} is indexed by blockIdx and "
                    f"{', '.join(sorted(used - GRID_AXES))} in block {block}; a shared "
                    "buffer's dims are either per thread block (no blockIdx) or "
                    "indexed by blockIdx alone"
                )
            key = structural_key(index)
            if grid.setdefault(dim, (key, block))[0] != key:
                return (), (
                    f"blocks {grid[dim][1]} and {block} index dim {dim} of buffer {name} "
                    "with different blockIdx expressions; a thread block sees only its "
                    "own shared memory"
                )
    for block, canonical, _ in accesses:
        for dim in grid:
            if not var_names(canonical[dim]) & GRID_AXES:
                return (), (
                    f"block {block} indexes dim {dim} of buffer {name} without blockIdx, "
                    f"where {grid[dim][1]} indexes it by blockIdx; a thread block sees "
                    "only its own shared memory"
                )
    return tuple(d for d in range(len(buffer.shape)) if d not in grid), None


def shared_size_problem(
    func: LoweredFunc, buffer: Buffer, array_dims: tuple[int, ...]
) -> str | None:
    """Why `buffer`'s shared array over `array_dims`, with the function's other shared
    arrays, does not fit the static limit, or None."""
    arrays = [(buffer, array_dims)] + [
        (other, other.array_dims)
        for other in func.temp_buffers
        if other.name != buffer.name and other.memory_type is MemoryType.SHARED
    ]
    total = 0
    for other, dims in arrays:
        sizes = [getattr(other.shape[d], "value", None) for d in dims]
        if any(size is None for size in sizes):
            return f"buffer {other.name} has a shared dim of unknown size"
        total += math.prod(sizes) * other.dtype.itemsize
    if total > MAX_SHARED_BYTES:
        return (
            f"the function's shared arrays would take {total} bytes, more than the "
            f"{MAX_SHARED_BYTES} a kernel declares statically"
        )
    return None


def canonical_accesses(
    func: LoweredFunc, name: str
) -> Iterator[tuple[str, list[Expr], dict[str, Expr]]]:
    """Every access to buffer `name` as (block name, its indices over the bound GPU
    axes, the loop vars that became axes): iter values substituted, each loop var
    bound to an axis replaced by a Var named after the axis, a unit loop's var by 0."""
    for realize, path in realizes(func):
        axes: dict[str, Expr] = {}
        for node in path:
            if not isinstance(node, For):
                continue
            var = node.loop_var
            if isinstance(node.extent, IntImm) and node.extent.value == 1:
                axes[var.name] = IntImm(0, var.dtype)  # a unit loop's only value
            elif node.bind_info is not None:
                axes[var.name] = Var(node.bind_info.value, var.dtype, var.lower, var.upper)
        bindings = {
            iv.name: value
            for iv, value in zip(realize.schedule_block.iter_vars, realize.iter_values, strict=True)
        }
        for indices in _accesses(realize, name):
            canonical = [substitute(substitute(i, bindings), axes) for i in indices]
            yield realize.schedule_block.name, canonical, axes


def _axis_names(axes: dict[str, Expr]) -> set[str]:
    return {v.name for v in axes.values() if isinstance(v, Var)}


def _accesses(realize: ScheduleBlockRealize, name: str) -> list[tuple[Expr, ...]]:
    """The index tuples of the block's own stores to and loads from buffer `name`."""
    block = realize.schedule_block
    stores = [s.indices for s in stores_of(block) if storage_name(s.tensor) == name]
    return stores + [load.indices for load in loads_of(block.body, name)]


class Rebuffer(Mutator):
    """Every reference to buffer `name` (loads, stores, read/write regions, the temp
    list) replaced by `new`."""

    def __init__(self, name: str, new: Buffer) -> None:
        self.name = name
        self.new = new

    def visit_Buffer(self, node: Buffer) -> Buffer:
        return self.new if node.name == self.name else node

    def visit_func(self, func: LoweredFunc) -> LoweredFunc:
        body = self.visit(func.body)
        temps = [self.new if b.name == self.name else b for b in func.temp_buffers]
        return LoweredFunc(func.name, func.args, body, temps)
