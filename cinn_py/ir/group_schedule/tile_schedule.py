"""The tile schedule of a transposing group: shared-memory tiles so that both the
reads and the writes are coalesced.

The flat schedule walks a block in its output's row-major order, so the stores are
coalesced; a transpose's input is then read with a stride (`out[i, j] = x[j, i]`:
consecutive threads read consecutive rows of x, one 32-byte sector each for 4 bytes).
This schedule takes a group of one elementwise / injective block whose loads include
such a transposed read, and cuts the two dims involved into 32 x 32 tiles:

    p                 the output dim whose index walks the input's innermost dim
    q                 the output's innermost dim
    blockIdx.x        every other output dim and the tile indices along p and q, fused
    threadIdx.x       q within the tile (32: coalesced stores of the output)
    threadIdx.y       p within the tile, 8 threads, 4 rows each (a serial loop)

    cache_tile(out, x, tile loop, "shared", pad=1)
        the fill loads the tile's 32 x 32 window of x with threadIdx.x along x's
        innermost dim (coalesced reads) into x_shared[32][33]; the block then reads
        x_shared at the transposed position (a column of 33-float rows: 32 different
        banks, no bank conflicts)
    sync_threads(x_shared)
        the barrier between the fill and the reads of other threads' elements

Where every buffer holds elements of one size and both tiled dims are static
multiples of a 128-byte tile row (32 float32, 64 float16), each thread takes 16 bytes
of a tile row (`tile_lanes`: 8 threads a row, 32 rows of threads): the fill loads and
the block stores one 16-byte vector a thread and row, the shared tile is read and
written an element at a time (rows of 33 float32: a warp's 8 x 4 threads reading a
column fall on 32 banks). 2-byte elements may also take a pair of columns a thread
(64 x 64 tiles of 32 threads a row, 4 bytes an access): a tuner's candidate.

Every input read with the same transposition gets its own tile; other loads (inputs
in the output's order, broadcasts) are read directly. Edges where 32 does not divide a
dim are guarded (cache_tile's guard on the fill, the bound guards on the block). A
group with several blocks, a reduction, or tiled dims shorter than a tile stays on the
flat schedule.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from cinn_py.ir.dim_values import concrete
from cinn_py.ir.expr import Buffer, IntImm, Load, Var
from cinn_py.ir.group_schedule.launch_config import VECTOR_BYTES, LaunchConfig
from cinn_py.ir.group_schedule.reduce_schedule import find_reduces
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.schedule import IRSchedule, LoopRef
from cinn_py.ir.schedule.analysis import all_loads, realizes, single_store
from cinn_py.ir.stmt import ArgIO, For, ForType, LoweredFunc

TILE = 32
"""The tile's side: a warp's width, so a tile row is one coalesced warp access."""
TILE_ROWS = 8
"""Threads along the tile's rows (threadIdx.y): 32 x 8 = 256 threads, 4 rows each (the
rule; `tile_rows` is a tunable knob)."""
TILE_ROWS_CHOICES = (4, 8, 16, 32)
"""The rows of threads a tile may take (x 32 threads a row for scalars: 128 to 1024 a
block; x 8 for 16-byte vectors: 32 to 256): the tile tactic's `tile_rows` settings,
those dividing the tile's side (`TileShape.rows_choices`: a 16-wide tile takes 4 to 16)."""
PAD = 1
"""Extra elements per tile row in shared memory, so a tile column hits every bank
(times the lanes: a 2-byte tile's rows stay 4-byte aligned for its pair stores)."""
TILE_LANES = 2
"""Elements a thread takes along a tile row for 2-byte dtypes: 64 x 64 tiles whose warp
rows are 128 bytes, as a float32 tile's are."""
TILE_ROW_BYTES = 128
"""A tile row of 16-byte vectors: 8 threads of 16 bytes (a float32 tile is 32 wide, a
float16 one 64), so each thread loads and stores one `VECTOR_BYTES` vector a row."""
VECTOR_TILE_ROWS = 32
"""The rules' rows of threads for a tile of 16-byte vectors: 8 x 32 = 256 threads, one
row each."""


@dataclass(frozen=True)
class TilePlan:
    """Which block to tile, the output dim `dim` its transposed reads walk along their
    innermost dim, and the inputs read that way, in the order the block first reads
    them (never by name: groups equal up to names get one schedule, `kernel_dedup`)."""

    block: str
    dim: int
    inputs: tuple[str, ...]


def tile_plan(func: LoweredFunc) -> TilePlan | None:
    """The tile schedule's plan for `func`, or None when it does not apply: one block
    with no Reduce, a fresh loop nest (one serial loop per output dim, iter values the
    loop vars), and an input read with its innermost index walking another output dim
    than the innermost, both at least a tile long."""
    found = _plan(func)
    return found if isinstance(found, TilePlan) else None


def tile_problem(func: LoweredFunc) -> str | None:
    """Why the tile schedule does not apply to `func` (`tile_plan`), or None when it
    does."""
    found = _plan(func)
    return found if isinstance(found, str) else None


def _plan(func: LoweredFunc) -> TilePlan | str:
    """`tile_plan`'s plan, or why there is none."""
    found = realizes(func)
    if len(found) != 1:
        return f"{len(found)} blocks: the tile schedule takes a group of one"
    realize, path = found[0]
    block = realize.schedule_block
    store = single_store(block)
    loops = [node for node in path if isinstance(node, For)]
    rank = len(loops)
    if store is None:
        return f"block {block.name} is not a single store"
    if rank < 2:
        return f"block {block.name} has {rank} loops: a transpose needs 2 or more"
    if len(store.indices) != rank:
        return f"block {block.name} stores {len(store.indices)} indices under {rank} loops"
    if find_reduces(store.value):
        return f"block {block.name} reduces"
    extents = []
    for loop, value in zip(loops, realize.iter_values, strict=True):
        if loop.bind_info is not None or loop.for_type is not ForType.SERIAL:
            return f"loop {loop.loop_var.name} is already scheduled"
        extent = concrete(loop.extent)  # a symbolic dim's at the signature compiled
        if extent is None or not isinstance(value, Var):
            return f"loop {loop.loop_var.name} has a non-constant extent or iter value"
        if value.name != loop.loop_var.name:
            return f"block {block.name} is not bound to its own loop {loop.loop_var.name}"
        extents.append(extent)
    position = {iv.name: k for k, iv in enumerate(block.iter_vars)}
    if [position.get(getattr(i, "name", None)) for i in store.indices] != list(range(rank)):
        return f"block {block.name} does not store at its own loop position"
    inputs = {
        arg.name for arg in func.args if arg.io is ArgIO.INPUT and isinstance(arg.value, Buffer)
    }
    walked: dict[str, int] = {}
    for load in all_loads(store.value):
        name = getattr(load.tensor, "name", None)
        dim = _transposed_dim(load, position, rank)
        if name in inputs and dim is not None:
            if walked.setdefault(name, dim) != dim:
                walked[name] = -1  # read transposed two ways: leave it
    walked = {n: d for n, d in walked.items() if d >= 0}
    if not walked:
        return "no input is read transposed (its innermost index walking another output dim)"
    dim, _ = Counter(walked.values()).most_common(1)[0]
    if extents[dim] < TILE or extents[-1] < TILE:
        return (
            f"the transposed dims ({extents[dim]} and {extents[-1]}) are not both a tile "
            f"({TILE}) long"
        )
    chosen = tuple(n for n, d in walked.items() if d == dim)  # in reading order, not by name
    return TilePlan(block.name, dim, chosen)


def _transposed_dim(load: Load, position: dict[str, int], rank: int) -> int | None:
    """The output dim a load's innermost index walks, when the load is a transposed
    read (every index a plain iter var or a constant, the innermost one not the
    output's innermost dim, which another index walks); else None."""
    dims = []
    for index in load.indices:
        if isinstance(index, IntImm):
            dims.append(None)
        elif isinstance(index, Var) and index.name in position:
            dims.append(position[index.name])
        else:
            return None
    walked = [d for d in dims if d is not None]
    if len(dims) < 2 or dims[-1] is None or len(set(walked)) != len(walked):
        return None  # a 0-D or 1-D read, a constant innermost index, a diagonal
    if dims[-1] == rank - 1 or rank - 1 not in dims:
        return None
    return dims[-1]


def schedule_tiles(
    func: LoweredFunc,
    plan: TilePlan,
    target: TargetInfo | None = None,
    lanes: int | None = None,
    tile_rows: int | None = None,
) -> tuple[IRSchedule, LaunchConfig]:
    """Applies the tile schedule (module docstring) with IRSchedule primitives. `lanes`:
    one of `tile_lane_choices` instead of the rule; `tile_rows`: one of
    `TileShape.rows_choices` instead of the rule (`TileShape.rule_rows`).

    Over symbolic dims the tiles along q go on blockIdx.x and the rest on blockIdx.y
    (where that many fit `target`'s grid): fused on one axis, each tile coordinate is a
    division by the run-time tile count, which NVCC recomputes under every guard and
    which keeps it from predicating the fill's loads (5x the instructions, a load at a
    time, per the static report of a 4096 x 4096 transpose)."""
    sch = IRSchedule(func)
    loops = sch.get_loops(plan.block)
    last = len(loops) - 1
    symbolic = any(not isinstance(sch.get(loops[d]).extent, IntImm) for d in (plan.dim, last))
    allowed = tile_lane_choices(func, plan)
    lanes = tile_lanes(func, plan) if lanes is None or lanes not in allowed else lanes
    shape = tile_shape(func, lanes)
    threads_x, size = shape.threads_x, shape.side
    rows_of_threads = tile_rows if tile_rows in shape.rows_choices else shape.rule_rows
    p_out, p_in = _split_tile(sch, loops[plan.dim], size)
    q_out, q_in = _split_tile(sch, loops[last], size)
    others = [loop for k, loop in enumerate(loops) if k not in (plan.dim, last)]
    sch.reorder([*others, p_out, q_out, p_in, q_in])
    if symbolic:
        rows = sch.fuse([*others, p_out])
        count = concrete(sch.get(rows).extent)  # `_plan` found every extent's value
        if count is not None and count <= (target or TargetInfo.cuda()).max_grid_dims[1]:
            sch.bind(rows, "blockIdx.y")
            tile = q_out
        else:
            tile = sch.fuse([rows, q_out])
    else:
        tile = sch.fuse([*others, p_out, q_out])
    sch.bind(tile, "blockIdx.x")
    _spread_rows(sch, p_in, q_in, lanes, rows_of_threads, threads_x)
    for name in plan.inputs:
        fill = sch.cache_tile(plan.block, name, tile, "shared", pad=shape.pad)
        rows_loop, cols = sch.get_loops(fill)[-2:]
        _spread_rows(sch, rows_loop, cols, lanes, rows_of_threads, threads_x)
        sch.sync_threads(fill)
    tiles = _grid_blocks(sch, plan.block)
    return sch, LaunchConfig(
        threads=threads_x * rows_of_threads, blocks=tiles, steps=size // rows_of_threads
    )


@dataclass(frozen=True)
class TileShape:
    """A tile's geometry for `lanes` elements of `itemsize` bytes a thread along a tile
    row: the one place the threads, the side, the padding and the rules' rows of
    threads follow from them."""

    lanes: int
    itemsize: int

    @property
    def threads_x(self) -> int:
        """Threads along a tile row: 32 (a warp) for scalars and where a thread takes 4
        bytes or fewer of it (float16 pairs), else as many as make a 128-byte row of
        16-byte vectors (8)."""
        if self.lanes == 1 or self.lanes * self.itemsize <= 4:
            return TILE
        return max(1, TILE_ROW_BYTES // (self.lanes * self.itemsize))

    @property
    def side(self) -> int:
        """The tile's side: its threads along a row x the lanes."""
        return self.threads_x * self.lanes

    @property
    def pad(self) -> int:
        """The tile row's padding in elements: `PAD` x the lanes for float16 pairs (their
        rows stay 4-byte aligned), one element for 16-byte vectors: a column of a float32
        tile then falls on 32 different banks for the 8 x 4 threads of a warp reading
        it."""
        return PAD * self.lanes if self.lanes * self.itemsize <= 4 else PAD

    @property
    def rule_rows(self) -> int:
        """The rules' rows of threads: `TILE_ROWS` (8) for a warp a tile row, else
        `VECTOR_TILE_ROWS` (32: a thread a tile row), at most the side (an 8-byte tile
        of 16-byte vectors is 16 wide)."""
        return min(VECTOR_TILE_ROWS if self.threads_x < TILE else TILE_ROWS, self.side)

    @property
    def rows_choices(self) -> tuple[int, ...]:
        """`TILE_ROWS_CHOICES` that divide the side."""
        return tuple(rows for rows in TILE_ROWS_CHOICES if self.side % rows == 0)


def tile_shape(func: LoweredFunc, lanes: int) -> TileShape:
    """The tile of `lanes` a thread for `func`, counted in its narrowest element."""
    itemsize = min(
        (arg.value.dtype.itemsize for arg in func.args if isinstance(arg.value, Buffer)),
        default=4,
    )
    return TileShape(lanes, itemsize)


def tile_candidates(func: LoweredFunc, plan: TilePlan) -> list[tuple[int, int]]:
    """(lanes, rows of threads) the tile schedule can take for `func`: every lane count
    `tile_lane_choices` allows, with every rows choice dividing its tile's side."""
    return [
        (lanes, rows)
        for lanes in tile_lane_choices(func, plan)
        for rows in tile_shape(func, lanes).rows_choices
    ]


def tile_knobs(func: LoweredFunc, plan: TilePlan | None) -> dict[str, int]:
    """What the tile schedule's rules decide for `func` (1 lane without a plan)."""
    shape = tile_shape(func, 1 if plan is None else tile_lanes(func, plan))
    return {
        "tile": shape.side,
        "tile_rows": shape.rule_rows,
        "pad": shape.pad,
        "lanes": shape.lanes,
    }


def tile_lanes(func: LoweredFunc, plan: TilePlan) -> int:
    """The rules' consecutive elements a thread takes along each tile row: 16 bytes of
    them (`tile_lane_choices`'s widest) where the dims allow, else 1."""
    return max(tile_lane_choices(func, plan))


def tile_lane_choices(func: LoweredFunc, plan: TilePlan) -> list[int]:
    """The lanes a tile can take for `func`: 1; for 2-byte elements (float16, bfloat16)
    2, a pair (64 x 64 tiles of 32 threads a row: each warp row 128 bytes); and 16 bytes
    of elements (4 float32, 8 float16: 8 threads a row, 32 x 32 and 64 x 64 tiles), so
    that the fill loads and the block stores one 16-byte vector a thread and row. Every
    buffer must hold elements of one size, and both tiled dims must be static multiples
    of the tile's side (no edge tile: its guards would split the vectors)."""
    buffers = [arg.value for arg in func.args if isinstance(arg.value, Buffer)]
    sizes = {b.dtype.itemsize for b in buffers}
    if len(sizes) != 1:
        return [1]
    (itemsize,) = sizes
    wanted = [VECTOR_BYTES // itemsize] if itemsize < VECTOR_BYTES else []
    if itemsize == 2:
        wanted.insert(0, TILE_LANES)
    (realize, path) = realizes(func)[0]
    loops = [node for node in path if isinstance(node, For)]
    found = [1]
    for lanes in wanted:
        side = TileShape(lanes, itemsize).side
        extents = [loops[plan.dim].extent, loops[-1].extent]
        if all(isinstance(x, IntImm) and x.value % side == 0 for x in extents):
            found.append(lanes)
    return found


def _grid_blocks(sch: IRSchedule, block: str) -> int:
    """The blocks of the launch: the extents of the loops bound to block axes around
    `block`, multiplied, at the dims compiled for."""
    blocks = 1
    for loop in sch.get_loops(block):
        node = sch.get(loop)
        if node.bind_info is not None and node.bind_info.value.startswith("block"):
            extent = concrete(node.extent)
            assert extent is not None  # `_plan` found every extent's value
            blocks *= extent
    return blocks


def _split_tile(sch: IRSchedule, loop: LoopRef, size: int = TILE) -> list[LoopRef]:
    """`loop` split into tiles of `size` and the place in a tile."""
    symbolic = not isinstance(sch.get(loop).extent, IntImm)
    return sch.split(loop, [-1, size], guard_at_block=symbolic)


def _spread_rows(
    sch: IRSchedule,
    rows: LoopRef,
    cols: LoopRef,
    lanes: int = 1,
    tile_rows: int = TILE_ROWS,
    threads_x: int = TILE,
) -> None:
    """A tile's rows over threadIdx.y (`tile_rows` of them, then serial steps: rows y,
    y + 8, ... for 8) and its columns over threadIdx.x (`threads_x` threads), `lanes`
    consecutive columns a thread (a vector)."""
    size = threads_x * lanes
    step, row = sch.split(rows, [size // tile_rows, tile_rows])
    if lanes == 1:
        sch.reorder([row, cols, step])
        sch.bind(row, "threadIdx.y")
        sch.bind(cols, "threadIdx.x")
        sch.unroll(step)
        return
    col, lane = sch.split(cols, [threads_x, lanes])
    sch.reorder([row, col, step, lane])
    sch.bind(row, "threadIdx.y")
    sch.bind(col, "threadIdx.x")
    sch.unroll(step)
    sch.vectorize(lane, lanes)
