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

With `threads` T (and `lanes` V; L a multiple of T * V, S = L / (T * V) steps) the
partials come spread over threadIdx.x already, each thread walking its chunk as
factorize_reduction's walk does, V consecutive elements a step, and every input the
walk reads is kept in the thread's registers, filled first, one V-vector a step:

    for (row, 0, rows)
      for (chunk, 0, G)
      {
        unroll for (o, 0, S)                        # the fill: one per input read
          thread_bind[threadIdx.x] for (t, 0, T)
            vectorized for (v, 0, V)
              if (c * L + (o * T + t) * V + v < C)  # when the last chunk is shorter
                x_local[o, t, v] = x[row, c * L + (o * T + t) * V + v]
        X_partials[i, c] = Reduce(kind across threadIdx.x, Reduce(kind,
            select(c * L + (o * T + t) * V + v < C, body(x_local[o, t, v]), init), o, v), t)
        if (last_block_done(...)) { ... }
      }

With 16-byte aligned buffers, V dividing C and L, every step of the fill is one
aligned vector load (codegen proves it: one `cinn_vec` load). `x_local` is [S, T, V]
with register dims (0, 2) (`T x_local[S * V]` a thread): it holds the current block's
chunk only, filled and read inside the same (row, chunk) iteration, so it needs no row
or chunk dims; the interpreter, which runs the blocks one after another, refills it for
each. What is cached: the loads the Reduce body makes for every element (outside a
select's branches, a nested Reduce, another load's indices) of an input, at indices
that move with the walk and mention nothing but the block's iter vars and the walk;
loads of one input at the same position share one cache across sibling reductions.
"""

from __future__ import annotations

import math

from cinn_py.errors import ScheduleError
from cinn_py.ir.dim_values import concrete
from cinn_py.ir.expr import (
    LT,
    And,
    ArgReduce,
    Buffer,
    Cast,
    Expr,
    IntImm,
    Load,
    MemoryType,
    Or,
    Reduce,
    Reduction,
    Select,
    Tensor,
    Var,
    as_int,
)
from cinn_py.ir.names import fresh_name
from cinn_py.ir.schedule.analysis import (
    ROOT,
    all_loads,
    loops_in,
    outermost_reductions,
    realizes,
    single_store,
    storage_name,
    substitute,
    taken_names,
    unflatten,
    var_names,
    writers,
)
from cinn_py.ir.schedule.reduction import MAX_THREADS, MIN_THREADS, ThreadWalk, thread_walk
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    BindInfo,
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
from cinn_py.ir.visitor import Mutator, structural_key
from cinn_py.pir.dtypes import DataType

PRIMITIVE = "grid_reduce"
SEMAPHORE_DTYPE = DataType.INT32


def grid_reduce(
    func: LoweredFunc,
    chunk_size: int,
    threads: int | None = None,
    lanes: int = 1,
    rows_bound: int | None = None,
) -> tuple[LoweredFunc, str, str]:
    """Splits every outermost Reduce of `func` into chunks of `chunk_size` elements, one
    thread block each, combined by the last block of the row (module docstring); with
    `threads`, each chunk is walked by that many threads (`lanes` elements a step) from
    a register cache of the inputs it reads. A symbolic row count (`S0`, a -1 batch)
    needs `rows_bound`, a count it stays at or under (checked at the dims compiled):
    the workspace (partials, counters) is sized for it, so one kernel serves every
    count up to it. Returns the function and the names of the new row and chunk
    loops."""
    chunk_size, threads, lanes = as_int(chunk_size), as_int(threads), as_int(lanes)
    rows_bound = as_int(rows_bound)
    if not _positive_int(chunk_size):
        raise ScheduleError(
            PRIMITIVE, func.name, f"chunk_size must be a positive int, got {chunk_size!r}"
        )
    _check_walk(func.name, chunk_size, threads, lanes)
    root, blocks = _root_and_blocks(func)
    rows_extent, index_dtype = _rows(func, blocks)
    rows = _row_bound(func, rows_extent, rows_bound)
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
    inputs = {a.name for a in func.args if a.io is ArgIO.INPUT}
    walk = None
    if threads is not None:
        walk = _Cache(taken, row, chunk, chunk_size, total, threads, lanes, inputs)
    split = _Split(taken, index_dtype, chunk_size, chunks, total, walk, rows)
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
        at = {iv.name: v for iv, v in zip(block.iter_vars, values, strict=True)}
        made, combined = split.block(block, reduces[id(realize)], at, chunk)
        partials.extend(ScheduleBlockRealize([*values, chunk], p) for p in made)
        combines.append(ScheduleBlockRealize(values, combined))
    fills = [] if walk is None else walk.fills
    semaphore = Buffer(fresh_name(f"{func.name}_semaphore", taken), SEMAPHORE_DTYPE, [rows])
    then = combines[0] if len(combines) == 1 else Block(combines)
    last = IfThenElse(LastBlockDone(semaphore, [row], chunks), then)
    nest = For(
        row,
        0,
        rows_extent,
        ForType.SERIAL,
        For(chunk, 0, chunks, ForType.SERIAL, Block([*fills, *partials, last])),
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
    temps = [*func.temp_buffers, *([] if walk is None else walk.buffers)]
    new = LoweredFunc(func.name, [*func.args, *workspace], new_root, temps)
    return new, row.name, chunk.name


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _check_walk(name: str, chunk_size: int, threads: int | None, lanes: int) -> None:
    """ScheduleError unless `threads` is None (then `lanes` 1) or a power of two a
    combine across threadIdx.x takes, and `chunk_size` is whole steps of T x V."""
    if not _positive_int(lanes):
        raise ScheduleError(PRIMITIVE, name, f"lanes must be a positive int, got {lanes!r}")
    if threads is None:
        if lanes != 1:
            raise ScheduleError(
                PRIMITIVE, name, f"lanes={lanes} needs threads: the lanes are a thread's walk"
            )
        return
    low = MIN_THREADS[BindInfo.THREAD_X.value]
    if not _positive_int(threads) or threads & (threads - 1) or not low <= threads <= MAX_THREADS:
        raise ScheduleError(
            PRIMITIVE,
            name,
            f"threads must be a power of two from {low} to {MAX_THREADS}, got {threads!r}",
        )
    if chunk_size % (threads * lanes):
        raise ScheduleError(
            PRIMITIVE,
            name,
            f"chunk_size {chunk_size} is not a whole number of steps of {threads} threads x "
            f"{lanes} lanes",
        )


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
            if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
                raise ScheduleError(
                    PRIMITIVE, name, f"loop {loop.loop_var.name} does not start at 0"
                )
        if single_store(realize.schedule_block) is None:
            raise ScheduleError(PRIMITIVE, name, "its body is not a single store")
    return body, blocks


def _rows(func: LoweredFunc, blocks: list) -> tuple[Expr, DataType]:
    """The common extent of the blocks' loops (1 when none has one; an expression for a
    symbolic row count) and its index dtype."""
    extents: dict[str, Expr] = {}
    dtype = DataType.INT32
    for realize, path in blocks:
        loops = loops_in(path)
        if loops:
            extents[realize.schedule_block.name] = loops[0].extent
            dtype = loops[0].loop_var.dtype
    keys = {structural_key(x): x for x in extents.values()}
    if len(keys) > 1:
        listed = ", ".join(f"{name} {n!r}" for name, n in extents.items())
        raise ScheduleError(
            PRIMITIVE, func.name, f"the blocks' loops differ in extent ({listed}): one row loop"
        )
    rows = next(iter(keys.values())) if keys else IntImm(1, dtype)
    if len(extents) != len(blocks) and not (isinstance(rows, IntImm) and rows.value == 1):
        loopless = [r.schedule_block.name for r, p in blocks if not loops_in(p)]
        raise ScheduleError(
            PRIMITIVE, loopless[0], f"the block has no loop but the others run over {rows!r} rows"
        )
    if isinstance(rows, IntImm) and rows.value < 1:
        raise ScheduleError(PRIMITIVE, func.name, "there are no rows (an empty tensor)")
    return rows, dtype


def _row_bound(func: LoweredFunc, rows: Expr, bound: int | None) -> int:
    """The row count the workspace is sized for: a constant count itself; a symbolic
    one's `bound`, which must cover its value at the dims compiled."""
    if isinstance(rows, IntImm):
        if bound is not None and bound != rows.value:
            raise ScheduleError(
                PRIMITIVE, func.name, f"rows_bound {bound} given for {rows.value} constant rows"
            )
        return rows.value
    value = concrete(rows)
    if bound is None or not _positive_int(bound) or value is None or value > bound:
        raise ScheduleError(
            PRIMITIVE,
            func.name,
            f"the row count {rows!r} is symbolic: give rows_bound, a count it stays at or "
            f"under, got {bound!r}",
        )
    return bound


def _outermost_reduces(func: LoweredFunc, realize: ScheduleBlockRealize) -> list[Reduce]:
    block = realize.schedule_block
    found = outermost_reductions(single_store(block).value)
    for node in found:
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
    return found


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
        self,
        taken: set[str],
        dtype: DataType,
        chunk_size: int,
        chunks: int,
        total: int,
        cache: _Cache | None = None,
        rows: int | None = None,
    ) -> None:
        self.taken = taken
        self.rows = rows
        """The rows the workspace holds (`rows_bound` for a symbolic count)."""
        self.dtype = dtype
        self.chunk_size = chunk_size
        self.chunks = chunks
        self.total = total
        self.cache = cache
        """The chunk walk across threads and its register caches (None: serial)."""
        self.buffers: list[Buffer] = []

    def block(
        self, block: ScheduleBlock, nodes: list[Reduce], at: dict[str, Expr], chunk: Var
    ) -> tuple[list[ScheduleBlock], ScheduleBlock]:
        """`at`: the block's iter vars' values (in the row loop var); `chunk` the chunk
        loop var."""
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
            shape = [*self._bounded(store.tensor.shape, block.name), self.chunks]
            buffer = Buffer(fresh_name(f"{out}_partials", self.taken), node.dtype, shape)
            self.buffers.append(buffer)
            c = Var(fresh_name(f"{buffer.name}_c", self.taken), self.dtype, 0, self.chunks)
            value = self._partial(node, c, {**at, c.name: chunk})
            reads = _reads_of(block.read_buffers, value)
            if self.cache is not None:
                reads += self.cache.regions(value)
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

    def _bounded(self, shape: tuple[Expr, ...], block: str) -> list[Expr]:
        """The row value's shape with its one symbolic dim (the row count's, times the
        constant kept dims) at the bound: the partials' index stays the value's own,
        under the bound, and the workspace has a constant size."""
        symbolic = [d for d, n in enumerate(shape) if not isinstance(n, IntImm)]
        if not symbolic:
            return list(shape)
        if len(symbolic) > 1 or self.rows is None:
            raise ScheduleError(
                PRIMITIVE,
                block,
                f"the row value's shape {list(shape)} has more than one symbolic dim: "
                "the partials need a constant size",
            )
        others = math.prod(n.value for n in shape if isinstance(n, IntImm))
        out = list(shape)
        out[symbolic[0]] = IntImm(-(-self.rows // max(1, others)), shape[symbolic[0]].dtype)
        return out

    def _partial(self, node: Reduce, c: Var, at: dict[str, Expr]) -> Reduce:
        """`Reduce(kind, select(c * L + k < C, body(c * L + k), init), k < L)`; with
        threads, k is the walk's position, the Reduce across threadIdx.x and the body
        reads the register caches."""
        dtype = node.reduce_axis[0].dtype
        size = self.chunk_size
        start: Expr = c if c.dtype is dtype else Cast(dtype, c)
        start = start * IntImm(size, dtype)
        base = f"{node.reduce_axis[0].name}_k"
        cache = self.cache
        walk: ThreadWalk | None = None
        if cache is None:
            k = Var(fresh_name(base, self.taken), dtype, 0, size)
            flat: Expr = start + k
        else:
            walk = thread_walk(size, dtype, base, cache.threads, cache.lanes, self.taken)
            flat = start + walk.position
        body = substitute(node.body, unflatten(flat, node.reduce_axis))
        if cache is not None and walk is not None:
            body = cache.redirect(body, walk, at)
        if size * self.chunks != self.total:
            body = Select(LT(flat, IntImm(self.total, dtype)), body, node.init)
        if walk is None:
            return Reduce(node.reduce_type, node.init, body, [k])
        if walk.serial:
            body = Reduce(node.reduce_type, node.init, body, walk.serial)
        return Reduce(node.reduce_type, node.init, body, [walk.thread], BindInfo.THREAD_X.value)


class _Cache:
    """The chunk walk of `threads` threads, `lanes` a step, and its register caches
    (module docstring): one per input load the walk makes for every element, shared by
    loads of one input at one position, each with its fill (`fills`, in the order
    made)."""

    def __init__(
        self,
        taken: set[str],
        row: Var,
        chunk: Var,
        chunk_size: int,
        total: int,
        threads: int,
        lanes: int,
        inputs: set[str],
    ) -> None:
        self.taken = taken
        self.row = row
        self.chunk = chunk
        self.chunk_size = chunk_size
        self.total = total
        self.threads = threads
        self.lanes = lanes
        self.inputs = inputs
        self.buffers: list[Buffer] = []
        self.fills: list[For] = []
        self._by_key: dict[tuple, Buffer] = {}
        self._walk_vars: dict[DataType, tuple[Var, Var, Var]] = {}

    def redirect(self, body: Expr, walk: ThreadWalk, at: dict[str, Expr]) -> Expr:
        """`body` (of a partial, in the block's iter vars `at` maps to loop vars, and
        the walk's axes) with each cacheable load read from its cache instead."""
        dtype = walk.thread.dtype
        zero = IntImm(0, dtype)
        own = {v.name for v in (walk.thread, *walk.serial)}
        key_s, key_t, key_v = self._keys(dtype)
        to_keys: dict[str, Expr] = {**at, walk.thread.name: key_t}
        if walk.step is not None:
            to_keys[walk.step.name] = key_s
        if walk.lane is not None:
            to_keys[walk.lane.name] = key_v
        loads: list[Load] = []
        _eager_loads(body, loads)
        at_walk = [
            zero if walk.step is None else walk.step,
            walk.thread,
            zero if walk.lane is None else walk.lane,
        ]
        cached: dict[tuple, Load] = {}
        for load in loads:
            names = set().union(*(var_names(i) for i in load.indices))
            if (
                storage_name(load.tensor) not in self.inputs
                or not names & own
                or not names <= own | set(at)
                or any(all_loads(i) for i in load.indices)
            ):
                continue
            indices = [substitute(i, to_keys) for i in load.indices]
            cache = self._cache(load, indices, dtype)
            cached[_load_key(load)] = Load(cache, at_walk)
        # The same element read again under a select is read from the cache too.
        return _ReplaceLoads(cached).visit(body) if cached else body

    def regions(self, value: Expr) -> list[BufferRange]:
        """The whole of each cache `value` reads."""
        read = {storage_name(load.tensor) for load in all_loads(value)}
        return [BufferRange(b, _whole(b)) for b in self.buffers if b.name in read]

    @property
    def steps(self) -> int:
        return self.chunk_size // (self.threads * self.lanes)

    def _keys(self, dtype: DataType) -> tuple[Var, Var, Var]:
        """The walk's (step, thread, lane) in one form for every partial of `dtype`:
        loads of different siblings compare equal in them when they read alike."""
        if dtype not in self._walk_vars:
            step, thread, lane = (
                Var(fresh_name(f"grid_walk_{part}", self.taken), dtype, 0, n)
                for part, n in zip("otv", (self.steps, self.threads, self.lanes), strict=True)
            )
            self._walk_vars[dtype] = (step, thread, lane)
        return self._walk_vars[dtype]

    def _cache(self, load: Load, indices: list[Expr], dtype: DataType) -> Buffer:
        key = (storage_name(load.tensor), dtype, tuple(structural_key(i) for i in indices))
        if key in self._by_key:
            return self._by_key[key]
        name = fresh_name(f"{storage_name(load.tensor)}_local", self.taken)
        shape = [self.steps, self.threads, self.lanes]
        buffer = Buffer(name, load.dtype, shape, MemoryType.LOCAL, (0, 2))
        self._by_key[key] = buffer
        self.buffers.append(buffer)
        self.fills.append(self._fill(load, indices, buffer, self._walk_vars[dtype]))
        return buffer

    def _fill(
        self, load: Load, indices: list[Expr], cache: Buffer, keys: tuple[Var, Var, Var]
    ) -> For:
        """[unroll o /] threadIdx.x t / [guard /] [vectorized v /]
        cache[o, t, v] = the input at c * L + (o * T + t) * V + v: the partials' walk."""
        dtype = keys[0].dtype
        threads = self.threads
        walk = thread_walk(self.chunk_size, dtype, cache.name, threads, self.lanes, self.taken)
        zero = IntImm(0, dtype)
        values: list[Expr] = [
            self.row,
            self.chunk,
            zero if walk.step is None else walk.step,
            walk.thread,
            zero if walk.lane is None else walk.lane,
        ]
        extents = [self.row.upper, self.chunk.upper, walk.steps, threads, self.lanes]
        ivs = [
            Var(fresh_name(f"{cache.name}_i{n}", self.taken), value.dtype, 0, extent)
            for n, (value, extent) in enumerate(zip(values, extents, strict=True))
        ]
        to_ivs = {v.name: iv for v, iv in zip([self.row, self.chunk, *keys], ivs, strict=True)}
        block = ScheduleBlock(
            ivs,
            [BufferRange(load.tensor, _whole(load.tensor))],
            [BufferRange(cache, _whole(cache))],
            cache.name,
            Store(cache, Load(load.tensor, [substitute(i, to_ivs) for i in indices]), ivs[2:]),
        )
        nest: For | IfThenElse | ScheduleBlockRealize = ScheduleBlockRealize(values, block)
        if -(-self.total // self.chunk_size) * self.chunk_size != self.total:
            # Around the block, in the loop vars: codegen issues the vector load under
            # it (the same for every lane where V divides C and L).
            start = self.chunk if self.chunk.dtype is dtype else Cast(dtype, self.chunk)
            position = start * IntImm(self.chunk_size, dtype) + walk.position
            nest = IfThenElse(LT(position, IntImm(self.total, dtype)), nest)
        if walk.lane is not None:
            nest = For(walk.lane, 0, self.lanes, ForType.VECTORIZED, nest)
        nest = For(walk.thread, 0, threads, ForType.SERIAL, nest, BindInfo.THREAD_X)
        if walk.step is not None:
            nest = For(walk.step, 0, walk.steps, ForType.UNROLLED, nest)
        return nest


def _eager_loads(x: Expr, out: list[Load]) -> None:
    """The Loads every evaluation of `x` makes: not those under a Select's branches or
    the right side of `&&` / `||` (which may be out of range where they are skipped),
    inside a nested Reduce (its own axes) or inside another Load's indices."""
    if isinstance(x, Load):
        out.append(x)
        return
    if isinstance(x, Reduction):
        return
    if isinstance(x, Select):
        _eager_loads(x.condition, out)
        return
    if isinstance(x, And | Or):
        _eager_loads(x.a, out)
        return
    for value in x.field_values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, Expr):
                _eager_loads(item, out)


def _load_key(load: Load) -> tuple:
    return (storage_name(load.tensor), tuple(structural_key(i) for i in load.indices))


class _ReplaceLoads(Mutator):
    """Loads of the elements `replacements` names (by `_load_key`) -> its reads."""

    def __init__(self, replacements: dict[tuple, Load]) -> None:
        self.replacements = replacements

    def visit_Load(self, node: Load) -> Expr:
        found = self.replacements.get(_load_key(node))
        if found is None:
            return self.generic_visit(node)
        return Load(found.tensor, found.indices)  # a node of its own at each place


def _whole(buffer: Buffer | Tensor) -> list[Var]:
    """A region variable over each whole dim of `buffer` (a symbolic dim's unbounded)."""
    name = storage_name(buffer)
    return [
        Var(f"{name}_d{i}", lower=0, upper=d.value if isinstance(d, IntImm) else None)
        for i, d in enumerate(buffer.shape)
    ]


def _reads_of(regions: tuple[BufferRange, ...], value: Expr) -> list[BufferRange]:
    """The regions of `regions` whose buffer `value` loads."""
    loaded = {storage_name(load.tensor) for load in all_loads(value)}
    return [r for r in regions if storage_name(r.buffer) in loaded]


class _Replace(Mutator):
    def __init__(self, replacements: dict[int, Expr]) -> None:
        self.replacements = replacements

    def visit_Reduce(self, node: Reduce) -> Expr:
        return self.replacements.get(id(node), node)
