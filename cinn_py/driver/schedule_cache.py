"""Schedules kept across a program's feed signatures: a symbolic kernel is scheduled
once per bucket, not once per shape.

A program with -1 dims is compiled per feed signature (`driver.compiled`), and its
symbolic kernels come out the same across a bucket of signatures (`hlir.symbolic_dims`:
the kernel cache compiles them once). Scheduling them again for every signature was
most of a new shape's host time (0.24 s of 0.37 s for the fixture LLaMA layer). This
cache keeps each schedule with the guards it was made under (`ir.dim_guards`: every
decision the scheduler took from the dims' values) and hands it to a later signature
whose lowered function is the same up to names (`canonical_key`, which already holds
the function's buckets: a reduction walks its bucket's bound) and at whose dims every
guard holds. That is the schedule the scheduler would make there: the guards are
exact, and `CINN_PY_VERIFY_SCHEDULE_CACHE=1` (set by the test suite) schedules afresh
on every hit and raises GuardMissed where the two differ.

The translation unit goes the same way (`rendered`): where every kernel of a compile
came from the cache as the very function a kept unit was rendered from, the unit is
taken too, under the guards codegen's own proofs recorded (`ir.in_place`). A new shape
of a bucket already compiled then runs passes, grouping and lowering (the lowered
functions are what the cache is keyed by), the guards' checks, and the runtime's
plans: 0.13 s, not 0.40 s, for the fixture LLaMA layer on a 2-core VM (docs/SHAPES.md).

One cache per CompiledProgram (its signatures share one program, so one set of group
and buffer names); `max_entries` bounds it, oldest key dropped first.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cinn_py.backends.codegen_cuda import CudaSource
from cinn_py.driver.aligned_variants import AlignedVariant
from cinn_py.driver.kernel_dedup import renamed_schedule
from cinn_py.hlir.group import Group
from cinn_py.hlir.op_pattern import is_reduction
from cinn_py.hlir.symbolic_dims import SymbolicDims
from cinn_py.ir import dim_guards
from cinn_py.ir.dim_values import bound_dims
from cinn_py.ir.group_schedule import ScheduleResult
from cinn_py.ir.group_schedule.launch_config import LaunchConfig
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.stmt import LoweredFunc
from cinn_py.ir.visitor import canonical_form, canonical_key, structural_key
from cinn_py.pir.dtypes import DataType

VERIFY_ENV = "CINN_PY_VERIFY_SCHEDULE_CACHE"
MAX_ENTRIES = 4096
"""Schedules a cache keeps (a LLaMA layer has about 10 kernels and an aligned variant or
two per bucket)."""


class GuardMissed(AssertionError):
    """A kept schedule differs from a fresh one where its guards hold: a compiler bug
    (a decision read the dims without a guard). An AssertionError, so that no fallback
    that catches CinnError hides it."""


@dataclass
class _Entry:
    guards: dim_guards.GuardLog
    result: object
    """A ScheduleResult, an AlignedVariant or None (no variant), made for `names`."""
    names: tuple[str, ...]
    launch: dict[str, dim_guards.Tree]
    """The launch's numbers read from the dims, as expressions (`_launch_trees`)."""
    keep: tuple[object, ...] = ()
    """What the entry's key names by id (`rendered`), kept alive."""


@dataclass
class ScheduleCacheStats:
    """`hits`: schedules taken from the cache; `misses`: schedules made (and kept);
    `sources_reused` / `sources_rendered`: the same for translation units
    (`ScheduleCache.rendered`)."""

    hits: int = 0
    misses: int = 0
    sources_reused: int = 0
    sources_rendered: int = 0


class ScheduleCache:
    """Schedules by (what was scheduled, its key), each with its guards."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._entries: OrderedDict[Hashable, list[_Entry]] = OrderedDict()
        self._lock = threading.RLock()  # compiles of one program from several threads
        self._count = 0
        self.max_entries = max_entries
        self.stats = ScheduleCacheStats()

    def get(
        self,
        kind: str,
        func: LoweredFunc,
        key: Hashable,
        values: Mapping[str, int],
        make: Callable[[], object],
        rename: Callable[[object, tuple[str, ...], tuple[str, ...]], object | None],
    ) -> object:
        """`make()`'s result for `func` at the dims `values`: a kept one whose guards
        hold at `values` (renamed from the names it was made for to `func`'s by
        `rename`), else made now inside `bound_dims(values)` with its guards recorded,
        and kept. `kind` and `key` say what else `make` depends on (the schedule's row
        pattern, the target). Under the cache's lock."""
        with self._lock:
            canonical, names = canonical_form(func)
            full_key = (kind, canonical, key)
            entry = self._find(full_key, values)
            if entry is not None:
                found = (
                    entry.result
                    if entry.names == names
                    else rename(entry.result, entry.names, names)
                )
                if found is not None or entry.result is None:  # else not one-to-one: make it
                    found = _relaunched(found, entry.launch, values)
                    self.stats.hits += 1
                    if verify_requested():
                        _verify(kind, func, found, values, make)
                    return found
            guards, made = _recorded(values, make)
            result, launch = _launch_trees(made)
            self.stats.misses += 1
            self._keep(full_key, _Entry(guards, result, names, launch))
            return result

    def rendered(
        self,
        funcs: Sequence[LoweredFunc],
        key: Hashable,
        values: Mapping[str, int],
        make: Callable[[], CudaSource],
    ) -> CudaSource:
        """The translation unit `make()` renders of the scheduled functions `funcs` at
        the dims `values`: a kept one where they are the very functions a kept unit was
        rendered from (all of a compile's schedules came from this cache) and its guards
        hold (codegen's in-place proofs read the dims), else rendered now and kept.
        `key`: what else the unit depends on (the target, the unit size). Under the
        cache's lock."""
        with self._lock:
            full_key = ("render", tuple(id(f) for f in funcs), key)
            entry = self._find(full_key, values)
            if entry is not None:
                found = entry.result
                assert isinstance(found, CudaSource)
                self.stats.sources_reused += 1
                if verify_requested():
                    with bound_dims(values):
                        fresh = make()
                    if _source_print(fresh) != _source_print(found):
                        raise GuardMissed(
                            f"schedule cache: the source kept for other dims differs from "
                            f"the one rendered at {dict(values)}"
                        )
                return found
            guards, result = _recorded(values, make)
            self.stats.sources_rendered += 1
            # the entry holds the functions, so that their ids stay theirs
            self._keep(full_key, _Entry(guards, result, (), {}, tuple(funcs)))
            return result

    def _find(self, full_key: Hashable, values: Mapping[str, int]) -> _Entry | None:
        """The first entry of `full_key` whose guards hold at `values` (made the most
        recent key)."""
        for entry in self._entries.get(full_key, ()):
            if entry.guards.holds(values):
                self._entries.move_to_end(full_key)
                return entry
        return None

    def _keep(self, full_key: Hashable, entry: _Entry) -> None:
        self._entries.setdefault(full_key, []).append(entry)
        self._count += 1
        while self._count > self.max_entries:
            _, dropped = self._entries.popitem(last=False)
            self._count -= len(dropped)


def _recorded(
    values: Mapping[str, int], make: Callable[[], object]
) -> tuple[dim_guards.GuardLog, Any]:
    """`make()` at the dims `values`, and the checks of what it decided by them."""
    with bound_dims(values), dim_guards.recording() as guards:
        return guards, make()


def _source_print(source: CudaSource) -> tuple:
    return (source.source, repr(source.kernels), tuple(u.source for u in source.units))


def verify_requested() -> bool:
    """Whether every cache hit is checked against a fresh schedule (tests)."""
    return os.environ.get(VERIFY_ENV, "").strip() not in ("", "0")


def _verify(
    kind: str,
    func: LoweredFunc,
    found: object,
    values: Mapping[str, int],
    make: Callable[[], object],
) -> None:
    with bound_dims(values):
        fresh = make()
    fresh = _launch_trees(fresh)[0]
    if fingerprint(fresh, launch=True) != fingerprint(found, launch=True):
        raise GuardMissed(
            f"schedule cache: the {kind} of {func.name} kept for other dims differs from "
            f"the one made at {dict(values)}: a decision was taken without a guard"
        )


def fingerprint(result: object, launch: bool = False) -> object:
    """What a schedule or aligned variant comes to, up to names (with `launch`, also
    its launch's numbers, which are the signature's)."""
    scheduled = _scheduled_of(result)
    if scheduled is None:
        return ("value", repr(result))  # None: no aligned variant
    extra = (result.dim, result.lanes) if scheduled is not result else ()  # type: ignore[attr-defined]
    numbers = str(dim_guards.plain(scheduled.launch)) if launch else ""
    return (canonical_key(scheduled.func), scheduled.tactic, extra, numbers)


def _scheduled_of(result: object) -> ScheduleResult | None:
    scheduled = getattr(result, "scheduled", result)
    return scheduled if isinstance(scheduled, ScheduleResult) else None


def _with_launch(result: object, launch: LaunchConfig) -> object:
    if isinstance(result, ScheduleResult):
        return dataclasses.replace(result, launch=launch)
    scheduled = _scheduled_of(result)
    assert scheduled is not None
    return dataclasses.replace(result, scheduled=dataclasses.replace(scheduled, launch=launch))  # type: ignore[type-var]


def _launch_trees(result: object) -> tuple[object, dict[str, dim_guards.Tree]]:
    """`result` with plain numbers in its launch, and for each number of the launch
    read from the dims, its expression: the launch (the blocks a row count gives) is
    worked out again at the dims a kept schedule is taken for."""
    scheduled = _scheduled_of(result)
    if scheduled is None or scheduled.launch is None:
        return result, {}
    launch = scheduled.launch
    trees = {
        f.name: value.tree
        for f in dataclasses.fields(launch)
        if isinstance(value := getattr(launch, f.name), dim_guards.GuardedInt)
    }
    if not trees:
        return result, {}
    numbers = {name: getattr(launch, name).value for name in trees}
    return _with_launch(result, dataclasses.replace(launch, **numbers)), trees


def _relaunched(
    result: object, trees: dict[str, dim_guards.Tree], values: Mapping[str, int]
) -> object:
    scheduled = _scheduled_of(result)
    if not trees or scheduled is None or scheduled.launch is None:
        return result
    numbers = {name: dim_guards.value_of(tree, values) for name, tree in trees.items()}
    return _with_launch(result, dataclasses.replace(scheduled.launch, **numbers))


def rename_schedule(
    result: object, old: tuple[str, ...], new: tuple[str, ...]
) -> ScheduleResult | None:
    """A kept ScheduleResult renamed (`kernel_dedup.renamed_schedule`)."""
    assert isinstance(result, ScheduleResult)
    return renamed_schedule(result, old, new)


def rename_variant(
    result: object, old: tuple[str, ...], new: tuple[str, ...]
) -> AlignedVariant | None:
    """A kept AlignedVariant renamed: its schedule (the variant's names are the lowered
    function's, made from them)."""
    assert isinstance(result, AlignedVariant)
    scheduled = renamed_schedule(result.scheduled, old, new)
    return None if scheduled is None else dataclasses.replace(result, scheduled=scheduled)


def guarded_pattern(group: Group, dims: SymbolicDims) -> tuple[RowPattern | None, Hashable]:
    """The group's row pattern for a cached schedule, and what of it goes into the
    cache key. The pattern's numbers are the signature's; where they are the symbolic
    shape of the group's reduction input (`SymbolicDims.shapes`), each symbolic one is
    a GuardedInt of its expression (what the scheduler decides by it is a guard) and
    the key holds the expressions; elsewhere the key holds the numbers."""
    pattern = group.reduce_pattern
    if pattern is None:
        return None, None
    numbers = ("numbers", pattern.shape, pattern.axes)
    reduction = next((op for op in group.ops if is_reduction(op)), None)
    shape = None if reduction is None else dims.shapes.get(id(reduction.operand_value(0)))
    if shape is None or len(shape) != len(pattern.shape):
        return pattern, numbers
    exprs = [dims.to_expr(dim, DataType.INT64) for dim in shape]
    guarded: list[object] = []
    key: list[object] = []
    for expr, number in zip(exprs, pattern.shape, strict=True):
        if isinstance(expr, int):
            if expr != number:
                return pattern, numbers
            guarded.append(number)
            key.append(number)
        else:
            if dims.evaluate(expr) != number:
                return pattern, numbers
            guarded.append(dim_guards.GuardedInt(dim_guards.Leaf(expr, None), number))
            key.append(structural_key(expr))
    made = dataclasses.replace(pattern, shape=tuple(guarded))  # RowPattern keeps them
    return made, ("dims", tuple(key), pattern.axes)
