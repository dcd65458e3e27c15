"""grid_reduce: the reductions of a function split over several thread blocks per row,
combined by the last block to finish (CINN's grid reduce: a temp space of partials and
a semaphore, the store under `is_last_block_done`).

factorize_reduction spreads a row over the threads of one block; a row longer than one
block can walk in reasonable time (a reduce-all of 64M elements) needs more blocks.
The primitive takes every block of the function (each over one loop of the same `rows`
extent, or none when there is one row) and gives them one loop nest:

    for (row, 0, rows)                              # bound to blockIdx.x by the schedule
      for (chunk, 0, G)                             # bound to blockIdx.y
      {
        X_partials[i, c] = Reduce(kind, select(c * L + k < C, body(c * L + k), init), k < L)
        ...                                         # one partials buffer per Reduce
        if (last_block_done(F_semaphore[row], G)) {
          X[i] = f(Reduce(kind, X_partials[i, c'], c' < G))   # the block, Reduce replaced
          ...                                       # every block, in program order
        }
      }

C is the length of the reduce axes (linearized row-major), L = `chunk_size` and
G = ceil(C / L) the chunks. Each block of the grid folds its chunk into one partial
per Reduce (a workspace buffer, `ArgIO.WORKSPACE`), then counts itself in the row's
semaphore; the last of the G blocks of a row folds the G partials in index order and
runs every block of the function for that row: the combines, and whatever the group
computes from them (a mean's divide, a cast). Nothing else stores, so the result does
not depend on which block finished last: the same bits every run. The serial value
is the original one up to the association of the fold (the chunks, then the partials),
as with factorize_reduction; the interpreter runs the result as it is.

Both Reduces can then be spread over the threads of a block with factorize_reduction
(the partial's chunk walk, the combine's G partials), and the loops bound. Not for a
body that reads another block's result (a temp): a row's chunks would need it before
the grid-wide combine, which one kernel cannot wait for.
"""

from __future__ import annotations

import math

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import (
    LT,
    ArgReduce,
    Buffer,
    Cast,
    Div,
    Expr,
    IntImm,
    Load,
    Mod,
    Reduce,
    Select,
    Var,
)
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import (
    ROOT,
    all_loads,
    loops_in,
    realizes,
    single_store,
    storage_name,
    substitute,
    taken_names,
    writers,
)
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    Block,
    BufferRange,
    For,
    ForType,
    IfThenElse,
    LastBlockDone,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Store,
)
from cinn_py.ir.visitor import Mutator, Visitor
from cinn_py.pir.dtypes import DataType

PRIMITIVE = "grid_reduce"
SEMAPHORE_DTYPE = DataType.INT32


def grid_reduce(func: LoweredFunc, chunk_size: int) -> tuple[LoweredFunc, str, str]:
    """Splits every outermost Reduce of `func` into chunks of `chunk_size` elements, one
    thread block each, combined by the last block of the row (module docstring).
    Returns the function and the names of the new row and chunk loops."""
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ScheduleError(
            PRIMITIVE, func.name, f"chunk_size must be a positive int, got {chunk_size!r}"
        )
    root, blocks = _root_and_blocks(func)
    rows, index_dtype = _rows(func, blocks)
    reduces = {id(r): _outermost_reduces(func, r) for r, _ in blocks}
    found = [x for r, _ in blocks for x in reduces[id(r)]]
    if not found:
        raise ScheduleError(PRIMITIVE, func.name, "no block of the function has a Reduce")
    total = _reduce_length(found[0], blocks[0][0].schedule_block.name)
    for realize, _ in blocks:
        for node in reduces[id(realize)]:
            length = _reduce_length(node, realize.schedule_block.name)
            if length != total:
                raise ScheduleError(
                    PRIMITIVE,
                    realize.schedule_block.name,
                    f"its Reduce is {length} long, another one {total}: the chunks of a row "
                    "must cover every reduction alike",
                )
    chunks = -(-total // chunk_size)
    if chunks < 2:
        raise ScheduleError(
            PRIMITIVE,
            func.name,
            f"chunk_size {chunk_size} covers the whole reduction of {total} elements in one "
            "chunk: nothing to combine across blocks (use factorize_reduction)",
        )
    taken = taken_names(func) | {b.name for b in func.temp_buffers}
    row = Var(fresh_name("grid_row", taken), index_dtype, 0, rows)
    chunk = Var(fresh_name("grid_chunk", taken), index_dtype, 0, chunks)
    split = _Split(taken, index_dtype, chunk_size, chunks, total)
    partials: list[ScheduleBlockRealize] = []
    combines: list[ScheduleBlockRealize] = []
    for realize, path in blocks:
        loops = loops_in(path)
        mapping = {loops[0].loop_var.name: row} if loops else {}
        values = [substitute(v, mapping) for v in realize.iter_values]
        block = realize.schedule_block
        if not reduces[id(realize)]:
            combines.append(ScheduleBlockRealize(values, block))
            continue
        made, combined = split.block(block, reduces[id(realize)])
        partials.extend(ScheduleBlockRealize([*values, chunk], p) for p in made)
        combines.append(ScheduleBlockRealize(values, combined))
    semaphore = Buffer(fresh_name(f"{func.name}_semaphore", taken), SEMAPHORE_DTYPE, [rows])
    then = combines[0] if len(combines) == 1 else Block(combines)
    last = IfThenElse(LastBlockDone(semaphore, [row], chunks), then)
    nest = For(
        row,
        0,
        rows,
        ForType.SERIAL,
        For(chunk, 0, chunks, ForType.SERIAL, Block([*partials, last])),
    )
    root_block = root.schedule_block
    new_root = ScheduleBlockRealize(
        root.iter_values,
        ScheduleBlock(
            root_block.iter_vars,
            root_block.read_buffers,
            root_block.write_buffers,
            root_block.name,
            Block([nest]),
            root_block.attrs,
        ),
    )
    workspace = [Argument(b, ArgIO.WORKSPACE) for b in (*split.buffers, semaphore)]
    new = LoweredFunc(func.name, [*func.args, *workspace], new_root, func.temp_buffers)
    return new, row.name, chunk.name


def _root_and_blocks(
    func: LoweredFunc,
) -> tuple[ScheduleBlockRealize, list[tuple[ScheduleBlockRealize, tuple]]]:
    """The root realize and every other block with its path; ScheduleError unless each is
    a single store under at most one serial, unbound loop from 0 of constant extent."""
    body = func.body
    if not isinstance(body, ScheduleBlockRealize) or body.schedule_block.name != ROOT:
        raise ScheduleError(PRIMITIVE, ROOT, f"{func.name} has no root block")
    blocks = realizes(func)
    if not blocks:
        raise ScheduleError(PRIMITIVE, func.name, "the function has no block")
    for realize, path in blocks:
        name = realize.schedule_block.name
        inner = [n for n in path if isinstance(n, ScheduleBlockRealize | IfThenElse)]
        if len(inner) != 1 or inner[0] is not body:
            raise ScheduleError(PRIMITIVE, name, "the block is nested in a block or a branch")
        loops = loops_in(path)
        if len(loops) > 1:
            raise ScheduleError(
                PRIMITIVE,
                name,
                f"the block is under {len(loops)} loops; fuse them into one loop over the rows",
            )
        for loop in loops:
            if loop.bind_info is not None or loop.for_type is not ForType.SERIAL:
                raise ScheduleError(
                    PRIMITIVE,
                    name,
                    f"loop {loop.loop_var.name} is not a plain serial loop (grid_reduce comes "
                    "before bind)",
                )
            if not (isinstance(loop.min, IntImm) and loop.min.value == 0) or not isinstance(
                loop.extent, IntImm
            ):
                raise ScheduleError(
                    PRIMITIVE, name, f"loop {loop.loop_var.name} has no constant range from 0"
                )
        if single_store(realize.schedule_block) is None:
            raise ScheduleError(PRIMITIVE, name, "its body is not a single store")
    return body, blocks


def _rows(func: LoweredFunc, blocks: list) -> tuple[int, DataType]:
    """The common extent of the blocks' loops (1 when none has one) and its index dtype."""
    extents = {}
    dtype = DataType.INT32
    for realize, path in blocks:
        loops = loops_in(path)
        if loops:
            extents[realize.schedule_block.name] = loops[0].extent.value
            dtype = loops[0].loop_var.dtype
    values = set(extents.values())
    if len(values) > 1:
        listed = ", ".join(f"{name} {n}" for name, n in extents.items())
        raise ScheduleError(
            PRIMITIVE, func.name, f"the blocks' loops differ in extent ({listed}): one row loop"
        )
    rows = values.pop() if values else 1
    if len(extents) != len(blocks) and rows != 1:
        loopless = [r.schedule_block.name for r, p in blocks if not loops_in(p)]
        raise ScheduleError(
            PRIMITIVE, loopless[0], f"the block has no loop but the others run over {rows} rows"
        )
    if rows < 1:
        raise ScheduleError(PRIMITIVE, func.name, "there are no rows (an empty tensor)")
    return rows, dtype


class _Outer(Visitor):
    """The outermost Reduce / ArgReduce nodes of an expression, in order."""

    def __init__(self) -> None:
        self.found: list[Reduce | ArgReduce] = []

    def visit_Reduce(self, node: Reduce) -> None:
        self.found.append(node)

    visit_ArgReduce = visit_Reduce


def _outermost_reduces(func: LoweredFunc, realize: ScheduleBlockRealize) -> list[Reduce]:
    block = realize.schedule_block
    outer = _Outer()
    outer.visit(single_store(block).value)
    for node in outer.found:
        if isinstance(node, ArgReduce):
            raise ScheduleError(
                PRIMITIVE, block.name, "an ArgReduce (argmax / argmin) is not split over blocks"
            )
        if node.thread_axis is not None:
            raise ScheduleError(
                PRIMITIVE, block.name, f"the Reduce is already across {node.thread_axis}"
            )
        for load in all_loads(node):
            buffer = storage_name(load.tensor)
            others = [w for w in writers(func, buffer) if w != block.name]
            if others:
                raise ScheduleError(
                    PRIMITIVE,
                    block.name,
                    f"its Reduce reads {buffer}, which block {others[0]} computes: every chunk "
                    "of a row would need it before the grid-wide combine",
                )
    return outer.found


def _reduce_length(node: Reduce, block: str) -> int:
    extents = []
    for var in node.reduce_axis:
        if var.lower != 0 or var.upper is None:
            raise ScheduleError(
                PRIMITIVE, block, f"reduce axis {var.name} has no constant range starting at 0"
            )
        extents.append(var.upper)
    return math.prod(extents)


class _Split:
    """Makes the partial blocks and the combining block of each reducing block, and the
    partials buffers they share (in the order made)."""

    def __init__(
        self, taken: set[str], dtype: DataType, chunk_size: int, chunks: int, total: int
    ) -> None:
        self.taken = taken
        self.dtype = dtype
        self.chunk_size = chunk_size
        self.chunks = chunks
        self.total = total
        self.buffers: list[Buffer] = []

    def block(
        self, block: ScheduleBlock, nodes: list[Reduce]
    ) -> tuple[list[ScheduleBlock], ScheduleBlock]:
        store = single_store(block)
        out = storage_name(store.tensor)
        region = next(
            (w for w in block.write_buffers if storage_name(w.buffer) == out),
            None,
        )
        out_ranges = list(region.ranges) if region is not None else []
        partial_blocks: list[ScheduleBlock] = []
        replacements: dict[int, Expr] = {}
        combine_reads: list[BufferRange] = []
        for node in nodes:
            shape = [*store.tensor.shape, self.chunks]
            buffer = Buffer(fresh_name(f"{out}_partials", self.taken), node.dtype, shape)
            self.buffers.append(buffer)
            c = Var(fresh_name(f"{buffer.name}_c", self.taken), self.dtype, 0, self.chunks)
            value = self._partial(node, c)
            reads = _reads_of(block.read_buffers, value)
            partial_blocks.append(
                ScheduleBlock(
                    [*block.iter_vars, c],
                    reads,
                    [BufferRange(buffer, [*out_ranges, c])],
                    buffer.name,
                    Store(buffer, value, [*store.indices, c]),
                )
            )
            k = Var(fresh_name(f"{buffer.name}_k", self.taken), self.dtype, 0, self.chunks)
            load = Load(buffer, [*store.indices, k])
            replacements[id(node)] = Reduce(node.reduce_type, node.init, load, [k])
            combine_reads.append(BufferRange(buffer, [*out_ranges, k]))
        value = _Replace(replacements).visit(store.value)
        combined = ScheduleBlock(
            block.iter_vars,
            [*combine_reads, *_reads_of(block.read_buffers, value)],
            block.write_buffers,
            block.name,
            Store(store.tensor, value, store.indices),
            block.attrs,
        )
        return partial_blocks, combined

    def _partial(self, node: Reduce, c: Expr) -> Reduce:
        """`Reduce(kind, select(c * L + k < C, body(c * L + k), init), k < L)`."""
        dtype = node.reduce_axis[0].dtype
        size = self.chunk_size
        k = Var(fresh_name(f"{node.reduce_axis[0].name}_k", self.taken), dtype, 0, size)
        if c.dtype is not dtype:
            c = Cast(dtype, c)
        flat: Expr = c * IntImm(size, dtype) + k
        mapping: dict[str, Expr] = {}
        stride = self.total
        for i, var in enumerate(node.reduce_axis):
            stride //= var.upper
            index = flat if stride == 1 else Div(flat, IntImm(stride, dtype))
            if i > 0:
                index = Mod(index, IntImm(var.upper, dtype))
            mapping[var.name] = index
        body = substitute(node.body, mapping)
        if size * self.chunks != self.total:
            body = Select(LT(flat, IntImm(self.total, dtype)), body, node.init)
        return Reduce(node.reduce_type, node.init, body, [k])


def _reads_of(regions: tuple[BufferRange, ...], value: Expr) -> list[BufferRange]:
    """The regions of `regions` whose buffer `value` loads."""
    loaded = {storage_name(load.tensor) for load in all_loads(value)}
    return [r for r in regions if storage_name(r.buffer) in loaded]


class _Replace(Mutator):
    def __init__(self, replacements: dict[int, Expr]) -> None:
        self.replacements = replacements

    def visit_Reduce(self, node: Reduce) -> Expr:
        return self.replacements.get(id(node), node)
