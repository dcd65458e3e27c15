"""compute_inline and reverse_compute_inline: moving one block's computation into
another, so that an intermediate buffer is neither written nor read.

Both assume what lowering guarantees: each buffer is written by one block, blocks run
in program order, and a block's iter vars range over its whole buffer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import Expr, IrNode, Load, Var
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule.analysis import (
    REMOVED,
    all_loads,
    find_realize,
    has_reduce,
    loads_of,
    readers,
    replace,
    single_store,
    storage_name,
    substitute,
    writers,
)
from cinn_py.ir.stmt import (
    ArgIO,
    Block,
    BufferRange,
    LoweredFunc,
    ScheduleBlock,
    Store,
)
from cinn_py.ir.visitor import Mutator, structural_equal


def _names(items: Sequence[IrNode]) -> str:
    return ", ".join(print_ir(item) for item in items)


def _elementwise_why(block: ScheduleBlock) -> str | None:
    """Why `block` is not `buf[iter vars] = f(...)`, or None when it is."""
    store = single_store(block)
    if store is None:
        return "its body is not a single store"
    if has_reduce(store.value):
        return "it is a reduction"
    ivs = [v.name for v in block.iter_vars]
    indices = [i.name if isinstance(i, Var) else None for i in store.indices]
    if indices != ivs:
        return (
            f"it stores {store.tensor.name}[{_names(store.indices)}], not at its iter vars "
            f"[{', '.join(ivs)}]"
        )
    if loads_of(store.value, storage_name(store.tensor)):
        return f"it reads {store.tensor.name}, the buffer it writes"
    return None


def _check_temp(func: LoweredFunc, buffer: str, primitive: str, block: str) -> None:
    for arg in func.args:
        if arg.name == buffer:
            kind = "an output" if arg.io is ArgIO.OUTPUT else "an input"
            raise ScheduleError(
                primitive,
                block,
                f"{buffer} is {kind} argument of {func.name}; it must stay written",
            )


def _merged_reads(
    reads: Sequence[BufferRange], drop: str, extra: Sequence[BufferRange]
) -> list[BufferRange]:
    """`reads` without `drop`, then the regions of `extra` for buffers not yet read."""
    kept = [r for r in reads if storage_name(r.buffer) != drop]
    seen = {storage_name(r.buffer) for r in kept}
    for r in extra:
        name = storage_name(r.buffer)
        if name != drop and name not in seen:
            kept.append(r)
            seen.add(name)
    return kept


def _renamed(region: BufferRange, mapping: Mapping[str, Expr]) -> BufferRange:
    """`region` with each range Var that `mapping` sends to a Var renamed; a range whose
    image is not a Var keeps its Var (its bounds still cover the dimension)."""
    ranges = [mapping.get(v.name, v) for v in region.ranges]
    kept = [
        new if isinstance(new, Var) else old for new, old in zip(ranges, region.ranges, strict=True)
    ]
    return BufferRange(region.buffer, kept)


class _InlineLoads(Mutator):
    """Replaces each Load of `buffer` by `value` with the iter vars `ivs` bound to the
    load's indices; blocks whose own body loaded `buffer` read `reads` instead (renamed
    through their first load of `buffer`)."""

    def __init__(
        self, buffer: str, ivs: Sequence[str], value: Expr, reads: Sequence[BufferRange]
    ) -> None:
        self.buffer = buffer
        self.ivs = list(ivs)
        self.value = value
        self.reads = reads

    def visit_Load(self, node: Load) -> Expr:
        node = self.generic_visit(node)
        if storage_name(node.tensor) != self.buffer:
            return node
        return substitute(self.value, dict(zip(self.ivs, node.indices, strict=True)))

    def visit_ScheduleBlock(self, node: ScheduleBlock) -> ScheduleBlock:
        loads = loads_of(node.body, self.buffer)
        new = self.generic_visit(node)
        if not loads or new is node:
            return new
        at = dict(zip(self.ivs, loads[0].indices, strict=True))
        reads = [_renamed(r, at) for r in self.reads]
        return ScheduleBlock(
            new.iter_vars,
            _merged_reads(new.read_buffers, self.buffer, reads),
            new.write_buffers,
            new.name,
            new.body,
            new.attrs,
        )


def _without_temp(func: LoweredFunc, buffer: str) -> LoweredFunc:
    temps = [b for b in func.temp_buffers if b.name != buffer]
    return LoweredFunc(func.name, func.args, func.body, temps)


def compute_inline(func: LoweredFunc, name: str) -> LoweredFunc:
    """Inlines block `name` (`buf[ivs] = f(ivs)`, buf a temporary written only there)
    into every consumer: each `buf[idx]` becomes `f(idx)`. The block, the loops it leaves
    empty and `buf` (from temp_buffers and the consumers' read regions, which gain the
    block's reads) disappear."""
    realize, _ = find_realize(func, name, "compute_inline")
    block = realize.schedule_block
    why = _elementwise_why(block)
    if why is not None:
        raise ScheduleError("compute_inline", name, why)
    store = single_store(block)
    buffer = storage_name(store.tensor)
    _check_temp(func, buffer, "compute_inline", name)
    others = [w for w in writers(func, buffer) if w != name]
    if others:
        raise ScheduleError(
            "compute_inline", name, f"{buffer} is also written by block {', '.join(others)}"
        )
    ivs = [v.name for v in block.iter_vars]
    inline = _InlineLoads(buffer, ivs, store.value, block.read_buffers)
    body = inline.visit(func.body)
    inlined = LoweredFunc(func.name, func.args, body, func.temp_buffers)
    return _without_temp(replace(inlined, realize, REMOVED), buffer)


def _produced_reads(func: LoweredFunc, name: str, value: Expr) -> list[str]:
    """The buffers `value` loads that another block of `func` writes, in load order."""
    out: list[str] = []
    for load in all_loads(value):
        buffer = storage_name(load.tensor)
        if buffer not in out and any(w != name for w in writers(func, buffer)):
            out.append(buffer)
    return out


def _one_to_one(
    name: str, loads: list[Load], c_block: ScheduleBlock, p_block: ScheduleBlock
) -> dict[str, Var]:
    """The map from the consumer's iter vars to the producer's, read off the consumer's
    loads of the producer's buffer; ScheduleError unless it is one-to-one and onto with
    matching ranges."""
    buffer = loads[0].tensor.name
    indices = loads[0].indices
    for load in loads[1:]:
        if not all(structural_equal(a, b) for a, b in zip(load.indices, indices, strict=True)):
            raise ScheduleError(
                "reverse_compute_inline",
                name,
                f"it reads {buffer} at [{_names(indices)}] and at [{_names(load.indices)}]",
            )
    c_ivs = {v.name: v for v in c_block.iter_vars}
    names = [i.name if isinstance(i, Var) else None for i in indices]
    if None in names or len(set(names)) != len(names) or set(names) != set(c_ivs):
        raise ScheduleError(
            "reverse_compute_inline",
            name,
            f"it reads {buffer} at [{_names(indices)}], not a one-to-one map of its iter vars "
            f"[{', '.join(c_ivs)}]",
        )
    mapping: dict[str, Var] = {}
    for c_name, p_iv in zip(names, p_block.iter_vars, strict=True):
        c_iv = c_ivs[c_name]
        if (c_iv.lower, c_iv.upper) != (p_iv.lower, p_iv.upper):
            raise ScheduleError(
                "reverse_compute_inline",
                name,
                f"its iter var {c_name} ranges over [{c_iv.lower}, {c_iv.upper}) but the "
                f"producer's {p_iv.name} over [{p_iv.lower}, {p_iv.upper})",
            )
        mapping[c_name] = p_iv
    return mapping


def reverse_compute_inline(func: LoweredFunc, name: str) -> LoweredFunc:
    """Inlines consumer block `name` into its single producer (CINN's semantics): the
    producer `tmp[pv] = f(pv)`, whose only reader is `name`, becomes
    `out[g(pv)] = h(f(pv))` for the consumer `out[g(cv)] = h(tmp[cv'])`, where cv' is a
    permutation of the consumer's iter vars cv. The producer keeps its name and loops;
    the consumer, its emptied loops and `tmp` disappear."""
    primitive = "reverse_compute_inline"
    c_realize, _ = find_realize(func, name, primitive)
    c_block = c_realize.schedule_block
    c_store = single_store(c_block)
    if c_store is None:
        raise ScheduleError(primitive, name, "its body is not a single store")
    if has_reduce(c_store.value):
        raise ScheduleError(primitive, name, "it is a reduction")
    produced = _produced_reads(func, name, c_store.value)
    if len(produced) != 1:
        what = ", ".join(produced) if produced else "none"
        raise ScheduleError(
            primitive,
            name,
            f"it must read exactly one buffer written by another block; it reads {what}",
        )
    buffer = produced[0]
    producers = writers(func, buffer)
    if len(producers) != 1:
        raise ScheduleError(
            primitive, name, f"{buffer} is written by blocks {', '.join(producers)}"
        )
    p_realize, _ = find_realize(func, producers[0], primitive)
    p_block = p_realize.schedule_block
    why = _elementwise_why(p_block)
    if why is not None:
        raise ScheduleError(primitive, name, f"its producer {p_block.name}: {why}")
    _check_temp(func, buffer, primitive, name)
    others = [r for r in readers(func, buffer) if r != name]
    if others:
        raise ScheduleError(primitive, name, f"{buffer} is also read by block {', '.join(others)}")
    mapping = _one_to_one(name, loads_of(c_store.value, buffer), c_block, p_block)
    p_store = single_store(p_block)
    renamed = substitute(c_store.value, mapping)
    p_ivs = [v.name for v in p_block.iter_vars]
    value = _InlineLoads(buffer, p_ivs, p_store.value, ()).visit(renamed)
    store = Store(c_store.tensor, value, [substitute(i, mapping) for i in c_store.indices])
    writes = [_renamed(r, mapping) for r in c_block.write_buffers]
    merged = ScheduleBlock(
        p_block.iter_vars,
        _merged_reads(
            p_block.read_buffers, buffer, [_renamed(r, mapping) for r in c_block.read_buffers]
        ),
        writes,
        p_block.name,
        Block([store]) if isinstance(p_block.body, Block) else store,
        p_block.attrs,
    )
    moved = replace(func, p_block, merged)
    return _without_temp(replace(moved, c_realize, REMOVED), buffer)
