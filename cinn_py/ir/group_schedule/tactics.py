"""The auto-scheduler's tactics: one rule per schedule, tried in order.

As in TVM's DLight, each tactic answers two questions about a lowered group function:
`accepts(func, target, pattern)`, cheap, gives why it does not fit (a short `Refusal`)
or None; `apply(func, target, pattern)` gives the finished `ScheduleResult` (the tactic
named in it), or None where `accepts` refuses. `auto_schedule` tries `TACTICS` in
order and returns the first result. The order is the policy, and this is the one
place it is written:

    grid     a reduction whose rows are too few to fill the target, each row long:
             several thread blocks per row, partials combined by the last block
             (`grid_schedule.py`); first, since the row tactic takes such groups too
    column   column reductions (reduced dims before a kept innermost dim of 32 or
             more), and the groups that read them back: 32 outputs a block, partials
             over threadIdx.y (`column_schedule.py`); before the row tactic, which takes
             any group that reads a reduction back, with a strided walk over a column
    row      a group that reads a reduction back, or long innermost rows: a thread
             block (or a warp) per row (`reduce_schedule.py`)
    tile     one injective block that reads an input transposed: 32 x 32 tiles through
             shared memory (`tile_schedule.py`)
    flat     everything else: elementwise / broadcast / injective blocks fused, vectors
             over blocks and threads, and reductions no tactic above took, one thread
             per output running its reduce loops (`flat_schedule.py`); it refuses only
             a group that reads a reduction back (which needs the group's pattern)

Each tactic's `knobs(func, target, pattern)` gives, as data, what its rules decide for
a function it accepts (threads, lanes, rows per block, tile size...); `candidates` lists
the settings of its tunable ones (`knob_names`) it can take instead, which
tools/tune.py measures and a schedule database (`schedule_db`) hands back per shape
bucket (`key`). Fusion asks the tactics too (`row_schedule_fits`) instead of restating the
row schedule's limits; the hardware numbers behind them live in `TargetInfo`.

A new tactic is one subclass of `Tactic` and one entry in `TACTICS` (docs/EXTENDING.md).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar

from cinn_py.ir.dim_guards import pow2_at_least, shown
from cinn_py.ir.expr import Buffer
from cinn_py.ir.group_schedule.column_schedule import (
    LANES,
    ColumnKind,
    column_candidates,
    column_kind,
    column_lanes,
    column_rule,
    column_threads,
    columns_pattern,
    lanes_threads_y,
    schedule_columns,
)
from cinn_py.ir.group_schedule.distribute import stream_full_inputs
from cinn_py.ir.group_schedule.finish import ScheduleResult, finish_schedule
from cinn_py.ir.group_schedule.flat_schedule import flat_candidates, flat_knobs, schedule_flat
from cinn_py.ir.group_schedule.grid_schedule import (
    grid_candidates,
    grid_plan,
    grid_problem,
    schedule_grid,
    symbolic_rows,
    walked_cols,
)
from cinn_py.ir.group_schedule.launch_config import LaunchConfig
from cinn_py.ir.group_schedule.reduce_schedule import (
    MIN_ROW_COLS,
    find_reduces,
    lanes_for,
    persistent_candidates,
    row_candidates,
    rows_per_block,
    schedule_rows,
    takes_dims,
    threads_for,
)
from cinn_py.ir.group_schedule.schedule_db import ScheduleKey
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.group_schedule.tile_schedule import (
    schedule_tiles,
    tile_candidates,
    tile_knobs,
    tile_plan,
    tile_problem,
)
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.stmt import LoweredFunc

Refusal = str
"""Why a tactic does not take a function: a short sentence for error messages."""

NO_PATTERN: Refusal = "no reduce pattern (the group has no reduction)"
READS_BACK: Refusal = (
    "the function reads a reduction result back, which needs the row schedule: "
    "pass the group's reduce pattern"
)


Knobs = Mapping[str, int]
"""A tactic's tunable numbers by name (`Tactic.knob_names`)."""


class Tactic(ABC):
    """One schedule as a rule: `accepts` says why not (cheaply), `schedule` applies the
    primitives to a function it accepts, `apply` is both plus the finishing passes.

    The numbers it decides by rule (`knobs`) can be tuned: `candidates` lists the
    settings of `knob_names` it can schedule a function with (the rule's among them),
    `bucket` the shape bucket a schedule database files them under, and `apply` takes
    one of them instead of the rule (`schedule_db`, tools/tune.py)."""

    name: ClassVar[str]
    knob_names: ClassVar[tuple[str, ...]] = ()
    """The knobs a database entry may set (`candidates` gives their legal values)."""

    @abstractmethod
    def accepts(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> Refusal | None:
        """Why this tactic does not schedule `func` (lowered from a group whose
        reductions have `pattern`) for `target`, or None when it does."""

    @abstractmethod
    def schedule(
        self,
        func: LoweredFunc,
        target: TargetInfo,
        pattern: RowPattern | None,
        knobs: Knobs | None = None,
    ) -> tuple[IRSchedule, LaunchConfig | None]:
        """The traced primitives for a function `accepts` takes, and the launch, with
        `knobs` (one of `candidates`) where given, else the rules; `apply` finishes
        them. ScheduleError for a block the schedule cannot handle."""

    @abstractmethod
    def knobs(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> dict[str, int]:
        """What this tactic decides for a function it accepts, by name, by its rules."""

    bucket_dims: ClassVar[str] = "rows_cols"
    """What `bucket` files a function by: "rows_cols" (a reduction's rows and row
    length) or "elements" (the largest buffer's)."""

    def candidates(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> list[dict[str, int]]:
        """Every setting of `knob_names` this tactic can schedule `func` with (it
        accepts `func`), the rules' included; empty where nothing is tunable, always for
        a function over symbolic dims (its kernel serves every shape of its buckets)."""
        if not self.knob_names or takes_dims(func):
            return []
        return self.settings(func, target, pattern)

    def settings(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None
    ) -> list[dict[str, int]]:
        """`candidates` for a function of static shape (a tunable tactic's own)."""
        return []

    def bucket(self, func: LoweredFunc, pattern: RowPattern | None = None) -> dict[str, int] | None:
        """The shape bucket `func` is filed under in a schedule database (`bucket_dims`),
        each dim rounded up to a power of two; None for a function over symbolic dims."""
        if takes_dims(func):
            return None
        if self.bucket_dims == "elements":
            return _elements(func)
        return None if pattern is None else _rows_cols(pattern)

    def key(self, func: LoweredFunc, pattern: RowPattern | None = None) -> ScheduleKey | None:
        """The database key of `func` for this tactic (None: not looked up)."""
        bucket = self.bucket(func, pattern)
        if bucket is None or not self.knob_names:
            return None
        sizes = [arg.value.dtype.itemsize for arg in func.args if isinstance(arg.value, Buffer)]
        return ScheduleKey(self.name, min(sizes, default=4), tuple(sorted(bucket.items())))

    def apply(
        self,
        func: LoweredFunc,
        target: TargetInfo,
        pattern: RowPattern | None = None,
        knobs: Knobs | None = None,
    ) -> ScheduleResult | None:
        """`func` scheduled, finished and named after this tactic; None when `accepts`
        refuses it. `knobs`: a setting to use instead of the rules, taken only where it
        is one of `candidates` (a database entry made for another function of the
        bucket may not fit this one): else the rules decide."""
        if self.accepts(func, target, pattern) is not None:
            return None
        return self.scheduled(func, target, pattern, knobs)

    def scheduled(
        self,
        func: LoweredFunc,
        target: TargetInfo,
        pattern: RowPattern | None = None,
        knobs: Knobs | None = None,
    ) -> ScheduleResult:
        """`apply` for a function `accepts` took already."""
        if knobs is not None and dict(knobs) not in self.candidates(func, target, pattern):
            knobs = None
        sch, launch = self.schedule(func, target, pattern, knobs)
        tuned = None if knobs is None else dict(knobs)
        return ScheduleResult(finish_schedule(sch.func), sch.trace, launch, self.name, tuned)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _rows_cols(pattern: RowPattern) -> dict[str, int]:
    """The bucket of a reduction's function: its rows and row length, rounded up."""
    return {"rows": pow2_at_least(pattern.rows), "cols": pow2_at_least(pattern.cols)}


def _elements(func: LoweredFunc) -> dict[str, int]:
    """The bucket of an elementwise or tiled function: its largest buffer's elements."""
    sizes = [
        math.prod(int(d.value) for d in arg.value.shape)
        for arg in func.args
        if isinstance(arg.value, Buffer)
    ]
    return {"elements": pow2_at_least(max(sizes, default=1))}


def _given(pattern: RowPattern | None) -> RowPattern:
    if pattern is None:
        raise ValueError(f"a reduction tactic needs the group's pattern: {NO_PATTERN}")
    return pattern


class GridTactic(Tactic):
    """Several blocks per row for few long rows (`grid_schedule.py`)."""

    name = "grid"
    knob_names = ("threads",)

    def accepts(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> Refusal | None:
        if pattern is None:
            return NO_PATTERN
        if not pattern.innermost:
            return "the reduced dims are not innermost"
        cols, _ = walked_cols(func, pattern)
        if grid_plan(pattern, target, cols=cols, bucketed=symbolic_rows(func)) is None:
            return (
                f"one block per row is enough: {shown(pattern.rows)} rows of {shown(cols)} "
                "elements give no plan of 2 chunks or more a row"
            )
        return grid_problem(func, pattern, cols)

    def schedule(
        self,
        func: LoweredFunc,
        target: TargetInfo,
        pattern: RowPattern | None,
        knobs: Knobs | None = None,
    ) -> tuple[IRSchedule, LaunchConfig | None]:
        threads = None if knobs is None else knobs["threads"]
        return schedule_grid(func, target, _given(pattern), threads)

    def settings(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None
    ) -> list[dict[str, int]]:
        pattern = _given(pattern)
        cols, lanes = walked_cols(func, pattern)
        return [{"threads": t} for t in grid_candidates(pattern, target, lanes, cols)]

    def knobs(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> dict[str, int]:
        pattern = _given(pattern)
        cols, lanes = walked_cols(func, pattern)
        launch = grid_plan(pattern, target, lanes, cols, symbolic_rows(func))
        if launch is None:
            return {}
        return {
            "threads": launch.threads,
            "chunks": launch.chunks,
            "steps": launch.steps,
            "lanes": launch.lanes,
        }


class ColumnTactic(Tactic):
    """Column reductions on 2-D blocks (`column_schedule.py`)."""

    name = "column"
    knob_names = ("threads_y", "lanes", "threads_x")

    def accepts(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> Refusal | None:
        if pattern is None:
            return NO_PATTERN
        if not columns_pattern(pattern):
            return (
                f"not a column pattern: with unit dims dropped, the innermost dim must be "
                f"kept and at least {LANES} long, and some dim reduced"
            )
        blocks = -(-pattern.rows // LANES)
        if blocks > target.max_grid_dims[0]:
            return f"{blocks} blocks exceed the grid's {target.max_grid_dims[0]}"
        if column_threads(pattern, target) < 2:
            return (
                "one thread per output is enough (threadIdx.y would be 1: a short "
                "reduction, or outputs enough to fill the target)"
            )
        sch = IRSchedule(func, trace=False)
        kinds = []
        for block in sch.get_all_blocks():
            kind = column_kind(sch, block, pattern)
            if kind is None:
                return f"block {block.name} is neither a row-shaped nor a full-shaped store"
            kinds.append((block.name, kind))
        if all(kind is not ColumnKind.REDUCE for _, kind in kinds):
            return "no block is a row-shaped reduction"
        # Without a temp nothing reads a reduction back: only reductions (horizontal
        # siblings) make a column group; anything else is a separate kernel's business.
        if not func.temp_buffers:
            for name, kind in kinds:
                if kind is not ColumnKind.REDUCE:
                    return f"block {name} is not a reduction, and nothing reads one back"
        return None

    def schedule(
        self,
        func: LoweredFunc,
        target: TargetInfo,
        pattern: RowPattern | None,
        knobs: Knobs | None = None,
    ) -> tuple[IRSchedule, LaunchConfig | None]:
        if knobs is None:
            knobs = column_rule(func, _given(pattern), target)
        return schedule_columns(
            func,
            target,
            _given(pattern),
            knobs["threads_y"],
            knobs.get("lanes", 1),
            knobs.get("threads_x", LANES),
        )

    def settings(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None
    ) -> list[dict[str, int]]:
        """One output a thread (32 on x) at each of `column_candidates`' TY; where the
        group takes lanes (`column_lanes`), V outputs a thread at each threads_x choice
        and each of its TY (`lanes_threads_y`). Every setting names all three knobs."""
        pattern = _given(pattern)
        found = [
            {"threads_y": t, "lanes": 1, "threads_x": LANES}
            for t in column_candidates(pattern, target)
        ]
        shape = column_lanes(func, pattern)
        if shape is not None:
            for threads_x in shape.threads_x:
                for t in lanes_threads_y(pattern, target, threads_x):
                    found.append({"threads_y": t, "lanes": shape.lanes, "threads_x": threads_x})
        return found

    def knobs(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> dict[str, int]:
        return column_rule(func, _given(pattern), target)


class RowTactic(Tactic):
    """A thread block (or a warp) per row (`reduce_schedule.py`)."""

    name = "row"
    knob_names = ("threads_per_row", "rows_per_block", "blocks_per_sm", "prefetch", "stream")

    def accepts(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> Refusal | None:
        if pattern is None:
            return NO_PATTERN
        if func.temp_buffers:
            return None  # it must: a reduction read back is a register of the row's block
        if pattern.rows == 0:
            return "the pattern has no rows"
        if not pattern.innermost:
            return "the reduced dims are not innermost, and nothing reads a reduction back"
        if pattern.cols < MIN_ROW_COLS:
            return f"rows of {pattern.cols} elements, under {MIN_ROW_COLS}: one thread a row"
        if not find_reduces(func):
            return "the function has no Reduce"
        return None

    def schedule(
        self,
        func: LoweredFunc,
        target: TargetInfo,
        pattern: RowPattern | None,
        knobs: Knobs | None = None,
    ) -> tuple[IRSchedule, LaunchConfig | None]:
        if knobs is None:
            return schedule_rows(func, target, _given(pattern))
        threads, per_block = knobs["threads_per_row"], knobs["rows_per_block"]
        persistent, prefetch = knobs.get("blocks_per_sm", 0), bool(knobs.get("prefetch", 0))
        sch, launch = schedule_rows(
            func, target, _given(pattern), threads, per_block, persistent, prefetch
        )
        if knobs.get("stream"):
            stream_full_inputs(sch)
        return sch, launch

    def settings(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None
    ) -> list[dict[str, int]]:
        pattern = _given(pattern)
        found = []
        for threads, per_block in row_candidates(func, pattern, target):
            setting = {"threads_per_row": threads, "rows_per_block": per_block}
            found.append(setting)  # one block of rows each (the knob's 0, left out)
            for blocks_per_sm in persistent_candidates(func, pattern, target, threads, per_block):
                persistent = setting | {"blocks_per_sm": blocks_per_sm}
                found.append(persistent)
                if per_block == 1:  # the next row's loads issued ahead (one row a block)
                    found.append(persistent | {"prefetch": 1})
        rule = self.knobs(func, target, pattern)
        # the `stream` knob is a candidate only where it marks something in the rules' schedule
        if stream_full_inputs(self.schedule(func, target, pattern)[0]):
            found.append(
                {
                    "threads_per_row": rule["threads_per_row"],
                    "rows_per_block": rule["rows_per_block"],
                    "stream": 1,
                }
            )
        return found

    def knobs(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> dict[str, int]:
        pattern = _given(pattern)
        lanes = lanes_for(func, pattern)
        threads = threads_for(pattern.cols, target, lanes)
        return {
            "threads_per_row": threads,
            "rows_per_block": rows_per_block(pattern, threads, target),
            "blocks_per_sm": 0,
            "prefetch": 0,
            "stream": 0,
            "lanes": lanes,
        }


class TileTactic(Tactic):
    """Transposes through shared-memory tiles (`tile_schedule.py`)."""

    name = "tile"
    knob_names = ("lanes", "tile_rows")
    bucket_dims = "elements"

    def accepts(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> Refusal | None:
        return tile_problem(func)

    def schedule(
        self,
        func: LoweredFunc,
        target: TargetInfo,
        pattern: RowPattern | None,
        knobs: Knobs | None = None,
    ) -> tuple[IRSchedule, LaunchConfig | None]:
        plan = tile_plan(func)
        if plan is None:
            raise ValueError(f"the tile tactic does not take {func.name}: {tile_problem(func)}")
        if knobs is None:
            return schedule_tiles(func, plan, target)
        return schedule_tiles(func, plan, target, knobs.get("lanes"), knobs.get("tile_rows"))

    def settings(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None
    ) -> list[dict[str, int]]:
        plan = tile_plan(func)
        if plan is None:
            return []
        return [{"lanes": lanes, "tile_rows": rows} for lanes, rows in tile_candidates(func, plan)]

    def knobs(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> dict[str, int]:
        return tile_knobs(func, tile_plan(func))


class FlatTactic(Tactic):
    """Fused loops over blocks, threads and vectors (`flat_schedule.py`): the last
    resort, which takes every function but one that reads a reduction back."""

    name = "flat"
    knob_names = ("threads", "min_steps", "stream")
    bucket_dims = "elements"

    def accepts(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> Refusal | None:
        return READS_BACK if func.temp_buffers else None

    def schedule(
        self,
        func: LoweredFunc,
        target: TargetInfo,
        pattern: RowPattern | None,
        knobs: Knobs | None = None,
    ) -> tuple[IRSchedule, LaunchConfig | None]:
        if knobs is None:
            return schedule_flat(func, target)
        sch, launch = schedule_flat(func, target, knobs["threads"], knobs["min_steps"])
        if knobs.get("stream"):
            stream_full_inputs(sch)
        return sch, launch

    def settings(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None
    ) -> list[dict[str, int]]:
        found = [{"threads": t, "min_steps": n} for t, n in flat_candidates(func, target)]
        # `stream` only where it marks an input of the rules' schedule
        if found and stream_full_inputs(schedule_flat(func, target)[0]):
            found.append(
                {"threads": self.knobs(func, target)["threads"], "min_steps": 1, "stream": 1}
            )
        return found

    def knobs(
        self, func: LoweredFunc, target: TargetInfo, pattern: RowPattern | None = None
    ) -> dict[str, int]:
        return {**flat_knobs(func, target), "stream": 0}


TACTICS: tuple[Tactic, ...] = (
    GridTactic(),
    ColumnTactic(),
    RowTactic(),
    TileTactic(),
    FlatTactic(),
)
"""The tactics `auto_schedule` tries, in order (the module docstring says why)."""

TACTIC_NAMED: dict[str, Tactic] = {tactic.name: tactic for tactic in TACTICS}
"""Each tactic by its name (`ScheduleResult.tactic`, a database entry's `tactic`)."""


def row_schedule_fits(pattern: RowPattern, itemsize: int, target: TargetInfo) -> bool:
    """Whether the row tactic suits a group of `pattern` whose full-shaped values read
    its reductions back (the narrowest of them `itemsize` bytes an element): yes unless
    the rows are few (under `target.few_rows`: one block per row leaves most of the GPU
    idle) and long (over `target.long_row_bytes`: past the row cache, each pass reads
    the row from memory again anyway). Where it does not, fusion keeps such values out
    of the reductions' group (`grouping.splits_long_rows`), so that the grid tactic
    takes the reductions and the flat one the rest."""
    return pattern.rows >= target.few_rows or pattern.cols * itemsize <= target.long_row_bytes
