"""stream_reads: a block's loads of an input it alone reads, marked read once.

A kernel that reads each element of an input once (an elementwise map's operands, the
rows a reduction caches in registers) gains nothing from keeping those lines in L2, and
they push out what is read again (a norm's weight, re-read by every row's block; the
next kernel's inputs). The primitive marks block `block`'s loads of input `buffer` as
streaming; codegen then loads them with the evict-first hint (`__ldcs`, PTX
`ld.global.cs`, `cinn_ldcs` for vectors). The mark is a block attribute
(`STREAM_ATTR`, the buffers' names joined by commas), so the IR's meaning is unchanged:
the interpreter ignores it, and printed IR shows it in the trace only.

Refused, with a ScheduleError naming the block: a buffer that is not an input argument
of the function (a temp or an output may be read again in the kernel), a block that
does not read it, and a buffer another block also reads (then it is read more than
once a kernel).
"""

from __future__ import annotations

from cinn_py.errors import ScheduleError
from cinn_py.ir.schedule.analysis import find_realize, loads_of, readers, replace
from cinn_py.ir.stmt import ArgIO, LoweredFunc, ScheduleBlock, ScheduleBlockRealize

PRIMITIVE = "stream_reads"
STREAM_ATTR = "stream_reads"
"""The ScheduleBlock attribute holding the streamed buffers' names, comma-separated."""


def streamed(block: ScheduleBlock) -> frozenset[str]:
    """The buffers whose loads `block` streams (`stream_reads`)."""
    value = dict(block.attrs).get(STREAM_ATTR, "")
    return frozenset(name for name in str(value).split(",") if name)


def stream_reads(func: LoweredFunc, block_name: str, buffer: str) -> LoweredFunc:
    """Marks block `block_name`'s loads of input `buffer` as read once (evict-first)."""
    realize, _ = find_realize(func, block_name, PRIMITIVE)
    if not any(arg.name == buffer and arg.io is ArgIO.INPUT for arg in func.args):
        raise ScheduleError(
            PRIMITIVE, block_name, f"{buffer} is not an input of {func.name}: only inputs stream"
        )
    block = realize.schedule_block
    if not loads_of(block.body, buffer):
        raise ScheduleError(PRIMITIVE, block_name, f"the block does not read {buffer}")
    others = [name for name in readers(func, buffer) if name != block_name]
    if others:
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            f"{buffer} is also read by {', '.join(others)}: it is not read once",
        )
    names = sorted(streamed(block) | {buffer})
    attrs = {**dict(block.attrs), STREAM_ATTR: ",".join(names)}
    marked = ScheduleBlock(
        block.iter_vars, block.read_buffers, block.write_buffers, block.name, block.body, attrs
    )
    return replace(func, realize, ScheduleBlockRealize(realize.iter_values, marked))
