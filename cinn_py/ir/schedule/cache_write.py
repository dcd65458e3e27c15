"""cache_write: a block's output stored through a temp buffer (TVM's cache_write).

The block stores into a new temp buffer instead of its output, and a new block right
after the statement that holds it copies the temp into the output, under serial loops
over the output's dims:

    for (i_0, 0, 64)
      ScheduleBlock(var_2)
        var_2[i0_0] = Reduce(sum, ...)
 -> for (i_0, 0, 64)
      ScheduleBlock(var_2)
        var_2_tmp[i0_0] = Reduce(sum, ...)
    for (var_2_write_l0, 0, 64)
      ScheduleBlock(var_2_write)
        var_2[var_2_write_i0] = var_2_tmp[var_2_write_i0]

The two blocks are then scheduled apart: a row reduction's block keeps every thread of
the row (its combine needs them) and moves its temp to a register (`set_buffer`
"local"), while the copy is stored by one thread of the row, where every thread would
store the same total otherwise. The temp is global memory until scheduled otherwise.

Preconditions: the block is a single Store of the whole of an output argument (its
write region spans every element), and no other block reads or writes that argument.
"""

from __future__ import annotations

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import Buffer, IntImm, Load, Var
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import (
    find_realize,
    readers,
    replace,
    root_statements,
    single_store,
    storage_name,
    taken_names,
    walk,
    with_root_statements,
    writers,
)
from cinn_py.ir.schedule.buffer_memory import Rebuffer
from cinn_py.ir.stmt import (
    ArgIO,
    BufferRange,
    For,
    ForType,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Stmt,
    Store,
)
from cinn_py.pir.dtypes import DataType

PRIMITIVE = "cache_write"


def cache_write(func: LoweredFunc, block_name: str) -> tuple[LoweredFunc, str]:
    """Block `block_name` stores into a new temp buffer `<output>_tmp`, and a new block
    `<output>_write` after it copies the temp into the output; returns the function and
    the new block's name."""
    realize, _ = find_realize(func, block_name, PRIMITIVE)
    block = realize.schedule_block
    store = single_store(block)
    if store is None:
        raise ScheduleError(PRIMITIVE, block_name, "the block is not a single Store")
    name = storage_name(store.tensor)
    output = next((a.value for a in func.args if a.name == name and a.io is ArgIO.OUTPUT), None)
    if not isinstance(output, Buffer):
        raise ScheduleError(
            PRIMITIVE, block_name, f"buffer {name} is not an output argument of {func.name}"
        )
    others = sorted({*writers(func, name), *readers(func, name)} - {block_name})
    if others:
        raise ScheduleError(
            PRIMITIVE,
            block_name,
            f"block {others[0]} also touches {name}: the copy after the block would race it",
        )
    _check_whole(block, output)
    taken = taken_names(func) | {b.name for b in func.temp_buffers}
    cache = Buffer(fresh_name(f"{name}_tmp", taken), output.dtype, output.shape)
    new_name = fresh_name(f"{name}_write", taken)
    dtype = store.indices[0].dtype if store.indices else IntImm(0).dtype
    cached = Rebuffer(name, cache).visit(realize)
    func = _insert_after(
        replace(func, realize, cached), cached, _copy_nest(output, cache, new_name, taken, dtype)
    )
    return LoweredFunc(func.name, func.args, func.body, [*func.temp_buffers, cache]), new_name


def _check_whole(block: ScheduleBlock, output: Buffer) -> None:
    """The block's write region of `output` spans every element."""
    for region in block.write_buffers:
        if storage_name(region.buffer) != output.name:
            continue
        for var, dim in zip(region.ranges, output.shape, strict=True):
            extent = dim.value if isinstance(dim, IntImm) else None
            # A symbolic dim is written whole by an iter var from 0 with no constant
            # upper bound: lowering's own loop over the dim.
            symbolic = extent is None and var.lower in (None, 0) and var.upper is None
            if symbolic:
                continue
            if extent is None or var.lower not in (None, 0) or var.upper != extent:
                raise ScheduleError(
                    PRIMITIVE,
                    block.name,
                    f"the block writes {output.name}[{var.name}] over "
                    f"[{var.lower}, {var.upper}), not the whole dim: the copy would "
                    "store elements the block does not",
                )
        return
    raise ScheduleError(PRIMITIVE, block.name, f"the block has no write region of {output.name}")


def _copy_nest(output: Buffer, cache: Buffer, name: str, taken: set[str], dtype: DataType) -> Stmt:
    """Serial loops over `output`'s dims around `output[i...] = cache[i...]`."""
    extents = [d.value if isinstance(d, IntImm) else d for d in output.shape]
    uppers = [n if isinstance(n, int) else None for n in extents]  # symbolic: no bound
    ivs = [Var(fresh_name(f"{name}_i{k}", taken), dtype, 0, n) for k, n in enumerate(uppers)]
    loops = [Var(fresh_name(f"{name}_l{k}", taken), dtype, 0, n) for k, n in enumerate(uppers)]
    block = ScheduleBlock(
        ivs,
        [BufferRange(cache, ivs)],
        [BufferRange(output, ivs)],
        name,
        Store(output, Load(cache, ivs), ivs),
    )
    nest: Stmt = ScheduleBlockRealize(loops, block)
    for var, extent in reversed(list(zip(loops, extents, strict=True))):
        nest = For(var, 0, extent, ForType.SERIAL, nest)
    return nest


def _insert_after(func: LoweredFunc, target: ScheduleBlockRealize, nest: Stmt) -> LoweredFunc:
    """`nest` right after the statement of the root block's body that holds `target`."""
    stmts = root_statements(func, PRIMITIVE, target.schedule_block.name)
    at = next(k for k, stmt in enumerate(stmts) if any(n is target for n, _ in walk(stmt)))
    stmts.insert(at + 1, nest)
    return with_root_statements(func, stmts)
