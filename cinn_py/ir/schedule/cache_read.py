"""cache_read: each thread keeps in registers the elements of an input row it walks.

A row-scheduled group reads its input once per pass over the row: a softmax reads x
in the max, in the sum of exponentials and in the normalize, a layer_norm in the
mean, the variance and the scale. CINN's CacheRead gives a read buffer a cached copy
in faster memory; here, with memory type "local", the copy is the thread's own
registers, which the row schedule's walk makes possible: with the buffer's dims
`axes` the row (`cols` elements, row-major), the other dims the row index
(`blockIdx.x`), and T threads striding over the row, thread t of block r touches
columns `s * T + t` for `s` in [0, S), S = ceil(cols / T), in every pass.

    cache_read(x, "local", axes=[1], threads=T)

  - adds a block `x_local`, first in the function: blockIdx.x over the rows, s
    (unrolled) over the S steps, threadIdx.x over T, storing
    `x_local[row, s, t] = x[row, s * T + t]` where `s * T + t < cols`;
  - rewrites every read of x to `x_local[row, s, t]`, with `s` the reader's own step
    (an enclosing serial loop, or a factorized Reduce's partial axis) and unrolls the
    loops over it: a register array needs constant indices.

`x_local` is a temp of logical shape [rows, S, T] with register dim 1: codegen
declares `T x_local[S]` per thread, and the interpreter, which runs threads one after
another, still sees every thread's elements. The rewrite is valid only where every
read is at the reader's own walk position, which is checked, with isl, read by read:
the read's kept dims (row-major) equal the reader's blockIdx.x and its reduced dims
(row-major) equal `s * T + threadIdx.x` for one step `s` in [0, S). Otherwise the
primitive refuses, naming the read.

With `lanes` V > 1 (the row schedule's 16-byte vectors) thread t takes V consecutive
columns per step, `(s * T + t) * V + v` for v in [0, V), S = ceil(cols / (T * V)):

    cache_read(x, "local", axes=[1], threads=T, lanes=V)

  - the fill loops over the lanes too, innermost and vectorized, under
    `if ((s * T + t) * V + v < cols)` (outside the block, so that codegen issues one
    16-byte load per step: the guard is the same for all lanes where V divides cols),
    storing `x_local[row, s, t, v] = x[row, (s * T + t) * V + v]`;
  - `x_local` has logical shape [rows, S, T, V], register dims (1, 3): `T x_local[S * V]`;
  - each read must be at `(s * T + t) * V + v` for a step s and a lane v of its own (a
    vectorized loop of a full block, or a factorized Reduce's lane axis), both proved
    in range; serial loops over either are unrolled.

Shared memory is refused here: elements read at other threads' positions are
`cache_tile`'s (a window per tile loop iteration, in shared memory, with a barrier),
and a row too long for registers is read again by each pass.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cinn_py.errors import ScheduleError
from cinn_py.ir.dim_values import concrete
from cinn_py.ir.expr import (
    EQ,
    LT,
    Buffer,
    Cast,
    Div,
    Expr,
    IntImm,
    Load,
    MemoryType,
    Min,
    Mod,
    Reduce,
    Var,
    as_int,
)
from cinn_py.ir.isl_domain import IndexDomain
from cinn_py.ir.names import fresh_name
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.schedule.analysis import (
    RedirectReads,
    realizes,
    root_statements,
    storage_name,
    substitute,
    taken_names,
    whole_region,
    with_root_statements,
)
from cinn_py.ir.schedule.loop_transformation import static_factor
from cinn_py.ir.simplify import simplify
from cinn_py.ir.stmt import (
    ArgIO,
    BindInfo,
    BufferRange,
    For,
    ForType,
    IfThenElse,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Store,
)
from cinn_py.ir.visitor import Visitor
from cinn_py.pir.dtypes import DataType

PRIMITIVE = "cache_read"
ROW_AXIS = BindInfo.BLOCK_X
THREAD_AXIS = BindInfo.THREAD_X
WARP_ROW_AXIS = BindInfo.THREAD_Y


@dataclass(frozen=True)
class RowWalk(RowPattern):
    """How the threads walk the rows of a buffer of `shape` whose dims `axes` are the
    row: `threads` T stride over each row; R = `rows_per_block` > 1 puts rows
    b * R + threadIdx.y in block b (a warp per row)."""

    threads: int = 1
    rows_per_block: int = 1
    lanes: int = 1
    """V: consecutive columns a thread takes per step (a vector)."""
    length: Expr | None = None
    """A row of symbolic length (`S1`, or `(S1 / 8) * 8` in an aligned variant): the
    walk covers `cols`, the length's bucket bound, and the fill loads only the columns
    under `length`; None for a static row."""
    dim_exprs: tuple[Expr, ...] = ()
    """The buffer's dims as expressions where a kept dim is symbolic (a -1 batch or
    sequence, `hlir.symbolic_dims`): the walk's indices and the fill's row loop use
    them, so the source is the same for every value; `shape` holds their values at the
    signature being compiled (`ir.dim_values`), which only proofs read. Empty for a
    static buffer. The row dims (`axes`) are always constant."""

    def dim(self, d: int, dtype: DataType | None = None) -> Expr:
        """Dim `d` as an expression: the symbolic one, or the constant."""
        if self.dim_exprs and not isinstance(self.dim_exprs[d], IntImm):
            return self.dim_exprs[d]
        return IntImm(self.shape[d]) if dtype is None else IntImm(self.shape[d], dtype)

    @property
    def row_count(self) -> Expr:
        """The rows as an expression (`rows` is their value)."""
        count: Expr = IntImm(1)
        for d in self.kept:
            count = count * self.dim(d)
        return simplify(count)

    @property
    def steps(self) -> int:
        return max(1, -(-self.cols // (self.threads * self.lanes)))

    @property
    def cache_shape(self) -> list[int]:
        """The register cache's logical shape: [rows, S, T] (and V with lanes)."""
        shape = [self.rows, self.steps, self.threads]
        return shape if self.lanes == 1 else [*shape, self.lanes]

    @property
    def row_end(self) -> Expr:
        """Where the row's columns end: its symbolic length, or `cols`."""
        return IntImm(self.cols) if self.length is None else self.length

    @property
    def cache_dims(self) -> list[Expr]:
        """`cache_shape` with the rows as an expression (symbolic where they are)."""
        return [self.row_count, *(IntImm(n) for n in self.cache_shape[1:])]

    @property
    def array_dims(self) -> tuple[int, ...]:
        """The cache dims each thread holds: the steps (and the lanes)."""
        return (1,) if self.lanes == 1 else (1, 3)

    def column(self, step: Expr, thread: Expr, lane: Expr | None) -> Expr:
        """The column a thread touches at `step` (and `lane`)."""
        position = step * IntImm(self.threads, step.dtype) + thread
        if self.lanes == 1 or lane is None:
            return position
        return position * IntImm(self.lanes, step.dtype) + lane

    def flat(self, indices: Sequence[Expr], dims: Sequence[int]) -> Expr:
        """The row-major position of `indices` over `dims` of the shape."""
        dtype = indices[0].dtype if indices else IntImm(0).dtype
        position: Expr = IntImm(0, dtype)
        for d in dims:
            position = position * self.dim(d, dtype) + indices[d]
        return simplify(position)

    def unflat(self, position: Expr, dims: Sequence[int]) -> dict[int, Expr]:
        """The index of each of `dims` at row-major `position` over them."""
        out: dict[int, Expr] = {}
        dtype = position.dtype
        for i, d in enumerate(dims):
            stride: Expr = IntImm(1, dtype)
            for later in dims[i + 1 :]:
                stride = stride * self.dim(later, dtype)
            stride = simplify(stride)
            one = isinstance(stride, IntImm) and stride.value == 1
            index = position if one else Div(position, stride)
            if i > 0:
                index = Mod(index, self.dim(d, dtype))
            out[d] = index
        return out


@dataclass(frozen=True)
class _Read:
    """Where one read sits in the walk: the reader's row, step, thread and lane (None
    without lanes)."""

    row: Expr
    step: Expr
    thread: Expr
    lane: Expr | None = None

    @property
    def indices(self) -> list[Expr]:
        """The cache element the read becomes."""
        at = [self.row, self.step, self.thread]
        return at if self.lane is None else [*at, self.lane]


def cache_read(
    func: LoweredFunc,
    buffer_name: str,
    memory_type: str,
    axes: Sequence[int],
    threads: int,
    rows_per_block: int = 1,
    lanes: int = 1,
    cols: int | None = None,
) -> tuple[LoweredFunc, str]:
    """Caches input `buffer_name` in `memory_type` ("local": registers) for a row walk
    over its dims `axes` by `threads` threads (rows on blockIdx.x, or with
    `rows_per_block` R > 1 on blockIdx.x * R + threadIdx.y), `lanes` consecutive
    columns per thread and step; returns the function and the new block's name (also
    its buffer's). `cols`: for a row of symbolic length (one symbolic row dim), the
    bound the walk covers (the length's bucket, which its reductions iterate to)."""
    if memory_type != MemoryType.LOCAL.value:
        why = (
            "a row walk's cache holds each thread's own elements, in registers; a tile "
            "that threads share is cache_tile's (shared memory)"
            if memory_type == MemoryType.SHARED.value
            else f"unknown memory type {memory_type!r}"
        )
        raise ScheduleError(PRIMITIVE, buffer_name, f"{why}; use 'local'")
    buffer = _input_buffer(func, buffer_name)
    walk = _walk(buffer, axes, threads, rows_per_block, lanes, cols)
    reads, loops = locate_reads(func, buffer_name, walk)
    name = fresh_name(f"{buffer_name}_local", taken_names(func))
    cache = Buffer(name, buffer.dtype, walk.cache_dims, MemoryType.LOCAL, walk.array_dims)
    body = _Redirect(buffer_name, cache, reads, loops).visit(func.body)
    redirected = LoweredFunc(func.name, func.args, body, func.temp_buffers)
    fill = _fill_block(func, buffer, cache, walk, name)
    stmts = [fill, *root_statements(redirected, PRIMITIVE, fill.loop_var.name)]
    return with_root_statements(redirected, stmts, [*func.temp_buffers, cache]), name


def cache_problem(
    func: LoweredFunc,
    buffer_name: str,
    axes: Sequence[int],
    threads: int,
    rows_per_block: int = 1,
    lanes: int = 1,
    cols: int | None = None,
) -> str | None:
    """Why `cache_read(buffer_name, "local", axes, threads, rows_per_block, lanes,
    cols)` would refuse, or None."""
    try:
        buffer = _input_buffer(func, buffer_name)
        walk = _walk(buffer, axes, threads, rows_per_block, lanes, cols)
        locate_reads(func, buffer_name, walk)
    except ScheduleError as error:
        return error.why
    return None


def locate_reads(
    func: LoweredFunc, buffer_name: str, walk: RowWalk
) -> tuple[dict[int, _Read], set[str]]:
    """Each read of the buffer (by the Load's id) at its walk position, and the loop
    vars that are steps; ScheduleError naming the first read that is not."""
    reads: dict[int, _Read] = {}
    loops: set[str] = set()
    for realize, path in realizes(func):
        finder = _ReadFinder(buffer_name)
        finder.visit(realize.schedule_block.body)
        for load, reduces in finder.found:
            read = _locate(realize, [n for n in path if isinstance(n, For)], reduces, load, walk)
            reads[id(load)] = read
            for var in (read.step, read.lane):
                if isinstance(var, Var):
                    loops.add(var.name)
    if not reads:
        raise ScheduleError(PRIMITIVE, buffer_name, "nothing reads the buffer")
    return reads, loops


def _input_buffer(func: LoweredFunc, name: str) -> Buffer:
    for arg in func.args:
        if arg.name == name and isinstance(arg.value, Buffer):
            if arg.io is not ArgIO.INPUT:
                raise ScheduleError(
                    PRIMITIVE,
                    name,
                    f"buffer {name} is written by {func.name}; only inputs are cached",
                )
            return arg.value
    raise ScheduleError(PRIMITIVE, name, f"{func.name} has no input buffer {name}")


def _walk(
    buffer: Buffer,
    axes: Sequence[int],
    threads: int,
    rows_per_block: int,
    lanes: int = 1,
    cols: int | None = None,
) -> RowWalk:
    threads, rows_per_block, lanes, cols = (
        as_int(x) for x in (threads, rows_per_block, lanes, cols)
    )
    shape = []
    for dim in buffer.shape:
        value = concrete(dim)  # a symbolic dim: its value at the bound dims
        if value is None:
            raise ScheduleError(PRIMITIVE, buffer.name, f"dim {dim!r} is not constant")
        shape.append(value)
    dims = tuple(sorted(set(axes)))
    if not dims or any(not 0 <= a < len(shape) for a in dims):
        raise ScheduleError(PRIMITIVE, buffer.name, f"axes {list(axes)} out of range for {shape}")
    symbolic = tuple(d for d, dim in enumerate(buffer.shape) if not isinstance(dim, IntImm))
    length = None
    if any(d in dims for d in symbolic):
        (axis,) = dims if len(dims) == 1 else (None,)
        if axis is None or cols is None or cols < shape[axis]:
            raise ScheduleError(
                PRIMITIVE,
                buffer.name,
                f"the row dim {buffer.shape[next(d for d in symbolic if d in dims)]!r} is "
                "symbolic: a register cache needs one row dim and the bound it stays "
                f"under (cols), got axes {list(dims)}, cols {cols}",
            )
        length, shape[axis] = buffer.shape[axis], cols
    elif cols is not None and cols != math.prod(shape[d] for d in dims):
        raise ScheduleError(
            PRIMITIVE, buffer.name, f"cols {cols} given for a row of constant length"
        )
    for what, count in (
        ("threads", threads),
        ("rows_per_block", rows_per_block),
        ("lanes", lanes),
    ):
        if not isinstance(count, int) or count < 1:
            raise ScheduleError(PRIMITIVE, buffer.name, f"{what} must be positive, got {count}")
    exprs = tuple(buffer.shape) if symbolic else ()
    if length is not None:  # the walk's row dim is the bound, not the symbolic length
        exprs = tuple(IntImm(shape[d]) if d in dims else x for d, x in enumerate(exprs))
    return RowWalk(tuple(shape), dims, threads, rows_per_block, lanes, length, exprs)


def _locate(
    realize: ScheduleBlockRealize,
    loops: list[For],
    reduces: list[Reduce],
    load: Load,
    walk: RowWalk,
) -> _Read:
    block = realize.schedule_block.name
    where = f"the read {load!r} in block {block}"
    row: Expr | None = next((loop.loop_var for loop in loops if loop.bind_info is ROW_AXIS), None)
    threads = [loop.loop_var for loop in loops if loop.bind_info is THREAD_AXIS]
    threads += [r.reduce_axis[0] for r in reduces if r.thread_axis == THREAD_AXIS.value]
    warps = [loop.loop_var for loop in loops if loop.bind_info is WARP_ROW_AXIS]
    if not walk.kept:  # the same for every row (and every warp): any row reads it
        row, warps = IntImm(0), []
    elif row is None or len(warps) != (walk.rows_per_block > 1):
        row = None
    if row is None or len(threads) != 1:
        axes = [ROW_AXIS.value, THREAD_AXIS.value]
        if walk.rows_per_block > 1:
            axes.insert(1, WARP_ROW_AXIS.value)
        raise ScheduleError(
            PRIMITIVE,
            _buffer_of(load),
            f"{where} is not inside one loop on each of {', '.join(axes)}",
        )
    if warps:
        row = row * IntImm(walk.rows_per_block, row.dtype) + warps[0]
    (thread,) = threads
    bindings = dict(
        zip(
            (iv.name for iv in realize.schedule_block.iter_vars),
            realize.iter_values,
            strict=True,
        )
    )
    indices = [substitute(i, bindings) for i in load.indices]
    kept = walk.flat(indices, walk.kept)
    col = walk.flat(indices, walk.axes)
    candidates: list[Expr] = [
        loop.loop_var
        for loop in loops
        if loop.bind_info is None and loop.for_type in (ForType.SERIAL, ForType.UNROLLED)
    ]
    candidates += [v for r in reduces if r.thread_axis is None for v in r.reduce_axis]
    lanes: list[Expr | None] = [None]
    if walk.lanes > 1:
        lanes = [loop.loop_var for loop in loops if loop.for_type is ForType.VECTORIZED]
        lanes += candidates
    if walk.steps == 1:
        candidates.append(IntImm(0, col.dtype))
    exprs = [kept, col, row, *candidates, *(v for v in lanes if v is not None), thread]
    domain = IndexDomain(loops, (), exprs)
    if domain.always(EQ(kept, _as(row, kept))):
        for step in candidates:
            if not _in_range(domain, step, walk.steps):
                continue
            for lane in lanes:
                if lane is step or (lane is not None and not _in_range(domain, lane, walk.lanes)):
                    continue
                at = walk.column(
                    _as(step, col), _as(thread, col), None if lane is None else _as(lane, col)
                )
                if domain.always(EQ(col, at)):
                    # The row as the read wrote it (in the block's iter vars), so that a
                    # later clamp of the iter values (finish_schedule) applies to it too.
                    return _Read(walk.flat(load.indices, walk.kept), step, thread, lane)
    position = f"step * {walk.threads} + {THREAD_AXIS.value}"
    if walk.lanes > 1:
        position = f"({position}) * {walk.lanes} + lane"
    raise ScheduleError(
        PRIMITIVE,
        _buffer_of(load),
        f"{where} is not at its own position of the row walk (row {ROW_AXIS.value}, column "
        f"{position}); a register cache holds only the thread's own elements",
    )


def _in_range(domain: IndexDomain, x: Expr, extent: int) -> bool:
    """Whether `0 <= x < extent` everywhere in `domain`."""
    return domain.always(x.ge(IntImm(0, x.dtype))) and domain.always(LT(x, IntImm(extent, x.dtype)))


def _buffer_of(load: Load) -> str:
    return storage_name(load.tensor)


def _as(x: Expr, like: Expr) -> Expr:
    return x if x.dtype is like.dtype else Cast(like.dtype, x)


class _ReadFinder(Visitor):
    """The loads of one buffer in a block body, each with the Reduces around it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.reduces: list[Reduce] = []
        self.found: list[tuple[Load, list[Reduce]]] = []

    def visit_ScheduleBlockRealize(self, node: ScheduleBlockRealize) -> None:
        pass  # a nested block is visited on its own

    def visit_Reduce(self, node: Reduce) -> None:
        self.visit(node.init)
        self.reduces.append(node)
        try:
            self.visit(node.body)
        finally:
            self.reduces.pop()

    def visit_Load(self, node: Load) -> None:
        self.generic_visit(node)
        if storage_name(node.tensor) == self.name:
            self.found.append((node, list(self.reduces)))


class _Redirect(RedirectReads):
    """Reads of the buffer -> reads of the cache, read regions -> the whole cache; step
    loops unrolled (a register array needs constant indices)."""

    def __init__(self, name: str, cache: Buffer, reads: dict[int, _Read], loops: set[str]) -> None:
        super().__init__(name, cache, {key: read.indices for key, read in reads.items()})
        self.loops = loops

    def visit_For(self, node: For) -> For:
        new = self.generic_visit(node)
        if node.loop_var.name in self.loops and new.for_type is ForType.SERIAL:
            return For(new.loop_var, new.min, new.extent, ForType.UNROLLED, new.body, new.bind_info)
        return new


def _fill_block(func: LoweredFunc, buffer: Buffer, cache: Buffer, walk: RowWalk, name: str) -> For:
    """blockIdx.x [x threadIdx.y] rows / unrolled steps / threadIdx.x [/ vectorized
    lanes]: cache[r, s, t(, v)] = buffer[r, (s * T + t)(* V + v)]. A buffer with no kept
    dims (the same for every row: a norm's weight) has no rows' loop: every thread of
    every block fills its own elements, cache[0, s, t(, v)]."""
    taken = taken_names(func) | {name}
    per_block, lanes = walk.rows_per_block, walk.lanes
    invariant = not walk.kept
    rows: Expr = walk.row_count
    exact = static_factor(rows) % per_block == 0  # for every value (B * 8 heads * S)
    blocks = simplify((rows + IntImm(0 if exact else per_block - 1)) / IntImm(per_block))
    parts: dict[str, Expr] = {}
    if not invariant:
        parts["row"] = blocks
        if per_block > 1:
            parts["warp"] = IntImm(per_block)
    parts["s"] = IntImm(walk.steps)
    parts["t"] = IntImm(walk.threads)
    if lanes > 1:
        parts["v"] = IntImm(lanes)
    loop = {
        part: Var(fresh_name(f"{name}_{part}", taken), lower=0, upper=_upper(extent))
        for part, extent in parts.items()
    }
    step, thread, lane = loop["s"], loop["t"], loop.get("v")
    row: Expr = IntImm(0)
    if not invariant:
        row = loop["row"] if per_block == 1 else loop["row"] * IntImm(per_block) + loop["warp"]
    if not exact and not invariant:
        # A warp past the last row loads the last row again: finish_schedule clamps
        # the rows of cross-thread Reduces the same way (every warp must reach the
        # combine), and such a warp then folds and stores that row's values bit for bit.
        row = Min(row, simplify(rows - IntImm(1)))
    ivs = [
        Var(fresh_name(f"{name}_i{k}", taken), lower=0, upper=_upper(n))
        for k, n in enumerate(walk.cache_dims)
    ]
    col = walk.column(ivs[1], ivs[2], ivs[3] if lanes > 1 else None)
    at = {**walk.unflat(ivs[0], walk.kept), **walk.unflat(col, walk.axes)}
    indices = [at[d] for d in range(len(walk.shape))]
    value: Store | IfThenElse = Store(cache, Load(buffer, indices), ivs)
    guarded = walk.length is not None or walk.steps * walk.threads * lanes != walk.cols
    if guarded and lanes == 1:
        value = IfThenElse(LT(col, _as(walk.row_end, col)), value)
    read_vars = [
        Var(f"{buffer.name}_d{i}", lower=0, upper=_upper(dim)) for i, dim in enumerate(buffer.shape)
    ]
    block = ScheduleBlock(
        ivs,
        [BufferRange(buffer, read_vars)],
        [BufferRange(cache, whole_region(cache, f"{name}_d"))],
        name,
        value,
    )
    values: list[Expr] = [row, step, thread] + ([lane] if lane is not None else [])
    nest: For | ScheduleBlockRealize | IfThenElse = ScheduleBlockRealize(values, block)
    if lane is not None:
        if guarded:
            # Around the block, in the loop vars: codegen issues the vector load under it.
            position = walk.column(step, thread, lane)
            nest = IfThenElse(LT(position, _as(walk.row_end, position)), nest)
        nest = For(lane, 0, lanes, ForType.VECTORIZED, nest)
    nest = For(thread, 0, walk.threads, ForType.SERIAL, nest, THREAD_AXIS)
    nest = For(step, 0, walk.steps, ForType.UNROLLED, nest)
    if invariant:
        return nest
    if per_block > 1:
        nest = For(loop["warp"], 0, per_block, ForType.SERIAL, nest, WARP_ROW_AXIS)
    return For(loop["row"], 0, parts["row"], ForType.SERIAL, nest, ROW_AXIS)


def _upper(extent: Expr) -> int | None:
    """A loop var's constant upper bound; none for a symbolic extent (as lowering's own
    loop vars over a symbolic dim)."""
    return extent.value if isinstance(extent, IntImm) else None
