"""set_buffer: which memory a temp buffer lives in (CINN's SetBuffer).

A temp buffer is global memory until scheduled otherwise. `local` puts it in registers,
one element per thread: valid when every access to it, written in terms of the GPU axes
its loops are bound to, names the same element (a reduction's result stored and read
back at the thread block's own row, say). The check substitutes each block's iter
values, turns every loop var bound to an axis into that axis, and requires that no
other variable is left and that all accesses agree; then codegen declares `T name[1]`
and reads `name[0]`. The logical shape stays in the IR, so the interpreter, which runs
bound loops one after another, still sees one element per row.
"""

from __future__ import annotations

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
from cinn_py.ir.stmt import For, LoweredFunc, ScheduleBlockRealize
from cinn_py.ir.visitor import Mutator, structural_key

PRIMITIVE = "set_buffer"
MEMORY_TYPES = {m.value: m for m in MemoryType}


def set_buffer(func: LoweredFunc, block_name: str, memory_type: str) -> LoweredFunc:
    """Moves the temp buffer that block `block_name` stores into `memory_type`
    ("global" or "local")."""
    realize, _ = find_realize(func, block_name, PRIMITIVE)
    memory = MEMORY_TYPES.get(memory_type)
    if memory is None:
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            f"unknown memory type {memory_type!r} (expected one of {', '.join(MEMORY_TYPES)})",
        )
    if memory is MemoryType.SHARED:
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            "shared memory buffers are not supported yet (they need barrier insertion); "
            "use 'local' for per-thread values",
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
    new = Buffer(old.name, old.dtype, old.shape, memory)
    func = _Rebuffer(name, new).visit_func(func)
    if memory is MemoryType.LOCAL:
        why = local_access_problem(func, name)
        if why is not None:
            raise ScheduleError(PRIMITIVE, block_name, why)
    return func


def local_access_problem(func: LoweredFunc, name: str) -> str | None:
    """Why buffer `name` cannot be one register per thread, or None when every access
    reads or writes the same element as a function of the bound GPU axes."""
    keys: set[tuple] = set()
    first: str | None = None
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
            stray = set().union(*map(var_names, canonical)) - _axis_names(axes)
            if stray:
                return (
                    f"buffer {name} is indexed by {', '.join(sorted(stray))} in block "
                    f"{realize.schedule_block.name}, not only by bound GPU axes; a local "
                    "buffer holds one element per thread"
                )
            keys.add(tuple(structural_key(i) for i in canonical))
            if len(keys) > 1:
                return (
                    f"block {realize.schedule_block.name} reads buffer {name} at another "
                    f"element than {first} writes; a local buffer holds one element per thread"
                )
            first = first or realize.schedule_block.name
    return None


def _axis_names(axes: dict[str, Expr]) -> set[str]:
    return {v.name for v in axes.values() if isinstance(v, Var)}


def _accesses(realize: ScheduleBlockRealize, name: str) -> list[tuple[Expr, ...]]:
    """The index tuples of the block's own stores to and loads from buffer `name`."""
    block = realize.schedule_block
    stores = [s.indices for s in stores_of(block) if storage_name(s.tensor) == name]
    return stores + [load.indices for load in loads_of(block.body, name)]


class _Rebuffer(Mutator):
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
