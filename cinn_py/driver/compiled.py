"""CompiledProgram: what `cinn_py.compile` makes for a compiled target (`cuda`,
`cuda-emu`).

It owns one compile (a RuntimeProgram and its Scope) per *signature*: the feeds' shapes
when the program has -1 dims, a single one otherwise (compiled at once). Each new shape
is first checked against the constraints the program implies (`pir.shape_analysis`,
its analysis made once), so feeds whose dims cannot work together fail with a FeedError
naming them and the op before anything compiles; it is then specialised with
`specialize_shapes`, compiled on its first run and reused.
Where a result's shape depends on the values of small feeds (an arange whose bounds are
fed), `specialize_shapes` says which (`DataDependentShape`) and their values join the
signature: such a program is compiled once per distinct value of those feeds.
Fetching a value that lives only inside a fused kernel, or one whose arena bytes a later
value reuses (`runtime.memory_plan`), compiles the program once more with that value
pinned as an output, so every value can be fetched, as on `reference`.
Each compile goes through the compiled-program cache (`driver.program_cache`): a
program another process compiled is loaded without running the compiler's stages.
`stats` (`driver.compile_stats.CompileStats`) counts the compiles, the loads, the runs
that reused a compile and the kernel units built or found in the kernel cache. At most
`max_shapes` signatures (default 32, `CINN_PY_MAX_SHAPES`) stay compiled: beyond it the
least recently run one is dropped with its compiles (scope, arena, CUDA graphs), and
compiled again (or loaded) if it comes back.

A run checks and converts the feeds and parameters (`runtime.feeds`), copies them into
their variables (parameters only when they changed source), executes and copies the
fetched values out: NumPy arrays by default, on every target, so results compare
directly; on a target with device memory (`cuda`), `copy_to_host=False` gives CuPy
arrays instead. Results never alias
the Scope, the feeds or each other. Not thread-safe: the Scope is shared by runs.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cinn_py.backends import cache as kernel_cache
from cinn_py.driver import compile_stats, program_cache
from cinn_py.driver.compile_stats import CompileStats
from cinn_py.driver.pir_compiler import PIRCompiler, numbered_clone
from cinn_py.driver.schedule_cache import ScheduleCache
from cinn_py.errors import CinnError, FeedError
from cinn_py.ir.group_schedule import schedule_db
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB
from cinn_py.pir.passes.infer_shapes import DataDependentShape, has_dynamic_dims
from cinn_py.pir.printer import ValueNames
from cinn_py.pir.program import Program
from cinn_py.pir.shape_analysis import ShapeAnalysis, analyze_shapes, check_feed_constraints
from cinn_py.pir.value import Value
from cinn_py.reference_ops.context import describe
from cinn_py.runtime.arena_pool import ArenaPool
from cinn_py.runtime.feeds import (
    boundary_dtypes,
    check_array,
    check_feeds,
    check_params,
    feed_types,
    parameter_types,
    to_array,
)
from cinn_py.runtime.library import Storage, storage_names
from cinn_py.runtime.runtime_program import RuntimeProgram
from cinn_py.runtime.scope import Scope
from cinn_py.targets import Target, compiled_target

Signature = tuple[tuple[str, tuple[int, ...]], ...]
"""The feeds' shapes, by feed name: what a dynamic-shape program is compiled for."""

ValueKey = tuple[tuple[str, str, bytes], ...]
"""The values of the feeds some shape depends on: name, dtype and bytes of each."""

ShapeKey = tuple[Signature, ValueKey]
"""What `max_shapes` counts: a feed signature with the values of the feeds it depends on."""


@dataclass
class _Compiled:
    """One compile: the runtime program, its scope, and where each printed number lives."""

    runtime: RuntimeProgram
    scope: Scope
    storage: dict[int, Storage]
    user_params: set[str] = field(default_factory=set)
    """Parameters whose variables hold a caller's array, not the program's."""
    written: frozenset[str] = frozenset()
    """The variables some step writes: a feed's variable among them never holds the
    caller's array (it is copied), so no run writes into a caller's memory."""

    def holds(self, number: int) -> bool:
        """Whether value `%number` is in its variables after a run: it has storage and
        no later value of the memory plan took its bytes."""
        storage = self.storage.get(number)
        if storage is None:
            return False
        memory = self.runtime.memory
        return memory is None or not any(memory.overwritten(n) for n in storage_names(storage))


class CompiledProgram:
    """`program` compiled for `target` (a compiled Target or its name): see the module
    doc."""

    def __init__(
        self,
        program: Program,
        target: str | Target,
        *,
        cuda_graph: bool | None = None,
        max_shapes: int | None = None,
        fast_math: bool = False,
        schedules: ScheduleDB | str | os.PathLike[str] | None = None,
    ) -> None:
        self.fast_math = fast_math
        """Whether kernels compute float32 transcendentals and division with CUDA's
        approximations (`codegen_cuda.FAST_MATH`)."""
        self.target = compiled_target(target)
        self.schedules = schedule_db.resolve(schedules, self.target.target_info(None).arch)
        """The schedule database the tactics read (`schedule_db.resolve`: read once, here,
        so that a file that cannot be used fails the compile call)."""
        self.max_shapes = compile_stats.max_shapes(max_shapes)
        """How many feed signatures stay compiled (each holds a scope, its arena and, on
        `cuda`, CUDA graphs): beyond it the least recently run one is dropped
        (`stats.evicted`). A static program has one signature, never dropped."""
        self.stats = CompileStats()
        """This program's compile counts (see `CompileStats`)."""
        self.program = program
        self.cuda_graph = self.target.captures_graphs if cuda_graph is None else cuda_graph
        """Whether runs replay CUDA graphs (on by default where the target captures them:
        `cuda`; elsewhere the steps run in order either way)."""
        self.dynamic = has_dynamic_dims(program)
        self.latest: _Compiled | None = None
        self._numbers = ValueNames(program)
        self._feed_types = feed_types(program)
        self._parameter_types = parameter_types(program)
        self._feed_dtypes = boundary_dtypes(self._feed_types)
        self._parameter_dtypes = boundary_dtypes(self._parameter_types)
        """The feeds' and parameters' types, found once, not on every run."""
        self._compiled: OrderedDict[ShapeKey, dict[tuple[int, ...], _Compiled]] = OrderedDict()
        """The compiles per shape, least recently run first; per shape, by the numbers
        of the values pinned as extra outputs (() for the plain compile)."""
        self._value_feeds: set[str] = set()
        """Feeds whose values some result's shape depends on (found on a first compile)."""
        self._shapes: ShapeAnalysis | None = None
        """The symbolic shape analysis of a program with -1 dims (made on its first run)."""
        self._checked: set[Signature] = set()
        """Feed shapes already checked against the analysis's constraints."""
        self.schedule_cache = ScheduleCache()
        """The symbolic kernels' schedules, kept across feed signatures
        (`driver.schedule_cache`): a new shape of a bucket already scheduled reuses
        them."""
        self.arena_pool = ArenaPool(self.target)
        """The one arena every compile's intermediates live in (`runtime.arena_pool`):
        as large as the largest a compile needed, not one per feed shape."""
        if not self.dynamic:
            self._get((), {}, ())

    @property
    def compile_count(self) -> int:
        """How many times the program was compiled or loaded from the compiled-program
        cache (`stats.compiles`): a program with -1 dims compiles once per new feed
        shape, so this says whether runs are paying for compiles."""
        return self.stats.compiles

    @property
    def runtime_program(self) -> RuntimeProgram:
        """The latest compile's RuntimeProgram."""
        if self.latest is None:
            raise CinnError(
                "the program has -1 dims and is compiled per feed shape: run it once first"
            )
        return self.latest.runtime

    def run(
        self,
        feeds: Mapping[str, Any],
        params: Mapping[str, Any] | None,
        values: Sequence[Value],
        copy_to_host: bool = True,
        stream: Any = None,
    ) -> list[Any]:
        device = self.target.device_array if self.target.device_memory else None
        checked = check_feeds(self.program, feeds, device, self._feed_types, self._feed_dtypes)
        given = check_params(
            self.program, params, device, self._parameter_types, self._parameter_dtypes
        )
        with self.target.using_stream(stream):
            return self._run(checked, given, values, copy_to_host)

    def _run(
        self,
        checked: Mapping[str, Any],
        given: Mapping[str, Any],
        values: Sequence[Value],
        copy_to_host: bool,
    ) -> list[Any]:
        signature: Signature = ()  # a static program has one compile: no shapes to key
        if self.dynamic:
            signature = tuple((k, tuple(int(d) for d in a.shape)) for k, a in checked.items())
            if signature not in self._checked:
                if self._shapes is None:
                    self._shapes = analyze_shapes(self.program)
                check_feed_constraints(self.program, dict(signature), self._shapes)
                self._checked.add(signature)
        compiles = self.stats.compiles
        while True:
            fed = {name: _host(checked[name]) for name in sorted(self._value_feeds)}
            try:
                compiled = self._for_values(signature, fed, values)
                break
            except DataDependentShape as error:
                new = set(error.feeds) - self._value_feeds
                if not new or not new <= set(checked):
                    raise
                self._value_feeds |= new
        if self.stats.compiles == compiles:
            self.stats.reused += 1
        self._bind(compiled, checked, given)
        compiled.scope.refresh_arena()  # onto the shared arena, if it grew since
        compiled.runtime.execute(compiled.scope)
        return [self._fetch(compiled, value, copy_to_host) for value in values]

    def _number(self, value: Value) -> int:
        number = self._numbers.number(value)
        if number is None:
            raise CinnError(f"cannot fetch {value!r}: it is not a value of this program")
        return number

    def _for_values(
        self, signature: Signature, fed: Mapping[str, np.ndarray], values: Sequence[Value]
    ) -> _Compiled:
        """The compile for `signature` and the values `fed` of the feeds some shape
        depends on that holds every value in `values`: the plain one, or one with the
        missing values pinned as extra outputs."""
        compiled = self._get(signature, fed, ())
        missing = tuple(sorted({n for n in map(self._number, values) if not compiled.holds(n)}))
        return compiled if not missing else self._get(signature, fed, missing)

    def _get(
        self, signature: Signature, fed: Mapping[str, np.ndarray], extra: tuple[int, ...]
    ) -> _Compiled:
        value_key = tuple((k, a.dtype.str, a.tobytes()) for k, a in fed.items())
        shape = (signature, value_key)
        variants = self._compiled.get(shape)
        compiled = None if variants is None else variants.get(extra)
        if compiled is None:
            compiled = self._compile(signature, fed, extra)
            variants = self._compiled.setdefault(shape, {})
            variants[extra] = compiled
        self._compiled.move_to_end(shape)
        self.latest = compiled
        self._evict()
        return compiled

    def _evict(self) -> None:
        """Drop the least recently run shapes beyond `max_shapes`, with every compile
        of theirs; the latest is the most recent, never dropped."""
        while len(self._compiled) > self.max_shapes:
            _, variants = self._compiled.popitem(last=False)
            self.stats.evicted += len(variants)

    def _compile(
        self, signature: Signature, fed: Mapping[str, np.ndarray], extra: tuple[int, ...]
    ) -> _Compiled:
        by_number = {self._numbers.number(r): r for op in self.program.block for r in op.results}
        outputs = [*self.program.outputs(), *(by_number[n] for n in extra)]
        program = numbered_clone(self.program, outputs)
        compiler = PIRCompiler(
            program,
            self.target,
            Scope(self.target, arena_pool=self.arena_pool),
            feed_shapes=dict(signature),
            feed_values=dict(fed),
            fast_math=self.fast_math,
            schedules=self.schedules,
        )
        compiler.schedule_cache = self.schedule_cache
        hits, misses = _kernel_counts()
        reused, made = self.schedule_cache.stats.hits, self.schedule_cache.stats.misses
        runtime = program_cache.build(compiler)
        self.stats.kernel_units_cached += _kernel_counts()[0] - hits
        self.stats.kernel_units_compiled += _kernel_counts()[1] - misses
        self.stats.schedules_reused += self.schedule_cache.stats.hits - reused
        self.stats.schedules_made += self.schedule_cache.stats.misses - made
        if program_cache.LOAD_TIMING in runtime.timings:
            self.stats.loaded += 1
        else:
            self.stats.compiled += 1
        storage = {
            r.id_hint: runtime.storage_of(r)
            for op in runtime.program.block
            for r in op.results
            if r.id_hint is not None and runtime.storage_of(r) is not None
        }
        for number, value in runtime.program.renumbered.items():
            if number not in storage and runtime.storage_of(value) is not None:
                storage[number] = runtime.storage_of(value)
        runtime.cuda_graph = self.cuda_graph
        written = frozenset(n for step in runtime.instructions for n in step.writes())
        return _Compiled(runtime, runtime.scope, storage, written=written)

    def _bind(
        self, compiled: _Compiled, feeds: Mapping[str, Any], params: Mapping[str, Any]
    ) -> None:
        plan = compiled.runtime.storage
        for name, variables in plan.feeds.items():
            self._bind_array(compiled, variables, feeds[name])
        for name, variables in plan.parameters.items():
            if name in params:
                self._bind_array(compiled, variables, params[name])
                compiled.user_params.add(name)
            elif name in compiled.user_params or not all(
                compiled.scope[v].allocated for v in variables
            ):
                self._restore_parameter(compiled, name, variables)

    def _bind_array(self, compiled: _Compiled, variables: list[str], array: Any) -> None:
        """A feed's or given parameter's array into its variables: held where it is
        (`Target.adopt_feed`: in the target's memory, contiguous, aligned) unless a step
        writes one of them, else copied. Weights given on every run thus cost nothing
        (a transformer layer's are ~100 MB, and a copy a launch each)."""
        scope = compiled.scope
        if len(variables) == 1:  # the common case, without a generator a feed a run
            if scope[variables[0]].holds_caller_array(array):
                return  # the very array the last run held (checked then, and shaped as then)
        elif all(scope[v].holds_caller_array(array) for v in variables):
            return
        in_place = None
        if not compiled.written.intersection(variables):
            in_place = self.target.adopt_feed(array)
        for variable in variables:
            if in_place is not None:
                scope[variable].adopt(in_place)
            else:
                scope[variable].set(array)

    def _restore_parameter(self, compiled: _Compiled, name: str, variables: list[str]) -> None:
        """Put the program's own array back (after a run that gave its own), or refuse
        a parameter nobody gave."""
        array = self.program.parameters.get(name)
        type_ = compiled.scope[variables[0]].type
        if array is None:
            raise FeedError(
                name, describe(type_), "nothing (no params entry and the program has none)"
            )
        checked = check_array(name, to_array(name, array), type_)
        for variable in variables:
            compiled.scope[variable].set(checked)
        compiled.user_params.discard(name)

    def _fetch(self, compiled: _Compiled, value: Value, copy_to_host: bool) -> Any:
        return _read(compiled.scope, compiled.storage[self._number(value)], copy_to_host)


def _kernel_counts() -> tuple[int, int]:
    """The kernel cache's running hits and misses (`backends.cache.stats`: a unit found,
    a unit built), read as counters: not through `snapshot`, which the CLI's status line
    takes around a whole run."""
    return kernel_cache.stats.hits, kernel_cache.stats.misses


def _host(array: Any) -> np.ndarray:
    """A feed's array on the host (CuPy arrays have `get`)."""
    return np.array(array.get() if hasattr(array, "get") else array)


def _read(scope: Scope, storage: Storage, copy_to_host: bool) -> Any:
    if isinstance(storage, list):
        return [_read(scope, item, copy_to_host) for item in storage]
    variable = scope[storage]
    return variable.to_numpy() if copy_to_host else variable.copy()
