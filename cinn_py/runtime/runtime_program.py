"""RuntimeProgram: the instructions of a compiled program, run in order over a Scope.

    runtime_program = PIRCompiler(program, "cuda-emu", scope).build()
    runtime_program.execute()           # over the scope it was built for
    runtime_program.execute(other)      # or any scope with the same variables
    runtime_program.execute(stream=s)   # on cuda: on the caller's stream

With `cuda_graph` set (what `compile` does by default on `cuda`), the first run records
every run of capturable steps into a CUDA graph and later runs replay them.

Besides the instructions it keeps what the compile made, for inspection and for the API:
the groups, the CUDA C of the fused groups, the storage plan (which variable a feed,
parameter or value is in), the memory plan (where in the arena each intermediate
lives) and the seconds each compile stage took.

`profile_steps()` runs once and times each instruction (`cinn-py run --profile`): a
kernel by the target's event clock where it has one (`Target.events`: on `cuda`, CUDA
events recorded around its launch on CuPy's current stream: GPU time, the launches still
queued back to back); everything else by the host's clock, so a kernel on `cuda-emu` is
its emulation's CPU time, not a GPU's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from cinn_py.errors import CinnError
from cinn_py.pir.program import Program
from cinn_py.pir.value import Value
from cinn_py.runtime.instruction import Instruction
from cinn_py.runtime.library import LibraryInstruction, Storage
from cinn_py.runtime.memory_plan import MemoryPlan
from cinn_py.runtime.scope import Scope
from cinn_py.targets import KernelEvents, get_target

Step = Instruction | LibraryInstruction


class StorageLookup(Protocol):
    """Where each value lives (the driver's `StoragePlan`): the variables a feed or
    parameter name fills, and each value's storage."""

    feeds: dict[str, list[str]]
    parameters: dict[str, list[str]]

    def get(self, value: Value) -> Storage | None: ...


@dataclass(frozen=True)
class StepTime:
    """One instruction's time in a profiled run. `clock` says what measured it: "gpu"
    (CUDA events around a launch on `cuda`) or "cpu" (the host's clock: a kernel emulated
    on `cuda-emu`, or a library op, on `cuda` with its copies to and from the host)."""

    step: Step
    seconds: float
    clock: str


@dataclass
class RuntimeProgram:
    instructions: list[Step]
    scope: Scope | None = None
    """The scope `execute()` runs over when given none (the one it was built with)."""
    program: Program | None = field(default=None, repr=False)
    """The program as compiled (after passes): the ops the groups hold."""
    groups: list[Any] = field(default_factory=list, repr=False)
    """The compile's groups (`hlir.group.Group`s), for inspection."""
    cuda_source: str = field(default="", repr=False)
    """The generated CUDA C: every fused group's kernel in one translation unit."""
    storage: StorageLookup | None = field(default=None, repr=False)
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per compile stage (passes, grouping, lowering, scheduling, codegen, compile)."""
    memory: MemoryPlan | None = field(default=None, repr=False)
    """The arena offset of each intermediate (`runtime.memory_plan`)."""
    cuda_units: tuple[str, ...] = field(default=(), repr=False)
    """Where the source is split (more than `compile_pool.UNIT_SIZE` distinct kernels),
    the units compiled one by one (each a self-contained translation unit); () when the
    whole `cuda_source` is the one unit."""
    cuda_graph: bool = False
    """Capture runs of capturable steps into CUDA graphs where the target's module can
    (`cuda`); elsewhere the steps run in order, as without."""

    _binding: _Binding | None = field(default=None, init=False, repr=False, compare=False)

    def bind(self, scope: Scope | None = None) -> None:
        """Prepare every step over `scope` (default: the program's): each kernel's launch
        checked and its arguments (the arrays' pointers, fixed by the memory plan and the
        variables' own buffers, and the dims) packed once, each library call's arrays
        looked up once, and, with `cuda_graph` on a target whose module captures graphs
        (`cuda`), every run of two or more capturable steps recorded into one CUDA graph.
        `execute` binds when it meets a new scope or one whose arrays changed
        (`Scope.generation`), so calling this is only a way to pay (and see the errors
        of) the checks up front."""
        scope = self._scope(scope, "bind")
        calls: list[tuple[Any, Callable[[Any], None], bool]] = []
        for step in self.instructions:
            if isinstance(step, Instruction):
                launch = step.prepare(scope)
                if launch is not None:
                    calls.append((step.module, launch, True))
            else:
                calls.append((None, step.prepare(scope), step.capturable))
        modules = {id(m): m for m, _, _ in calls if m is not None}
        single = next(iter(modules.values())) if len(modules) == 1 else None
        steps = [call for _, call, _ in calls]
        graphs = 0
        if self.cuda_graph and single is not None and hasattr(single, "capture"):
            steps, graphs = _graph_segments(calls, single)
        self._binding = _Binding(scope, scope.generation, calls, single, steps, graphs)

    def execute(self, scope: Scope | None = None, stream: Any = None) -> None:
        """Run every instruction in order, from the launches `bind` packed (bound again
        only when the scope or its arrays changed: no per-launch checks), on `stream`
        (on cuda: a CuPy or torch stream, a `__cuda_stream__` object or a handle; None is
        CuPy's current stream). With CUDA graphs a run is one graph launch per captured
        segment. On cuda the work is asynchronous: reading an array back waits."""
        binding = self._bound(self._scope(scope, "execute"))
        if binding.module is not None:
            with binding.module.bound(stream) as handle:
                for call in binding.steps:
                    call(handle)
            return
        handle = scope.target.stream_handle(stream)
        for module, call, _ in binding.calls:
            if module is None:
                call(handle)
            else:
                with module.bound(stream) as bound_handle:
                    call(bound_handle)

    def repeated_graph(self, times: int, scope: Scope | None = None) -> RepeatedGraph:
        """The whole program `times` times over, back to back, recorded into one CUDA
        graph over `scope`'s arrays (default: the program's): a benchmark's way to time
        the device alone. Timing `execute` from a Python loop measures the host where a
        run's kernels take less than its host work (a few microseconds a launch), and
        the tuner and the benchmarks time such kernels (tools/tune.py, tools/bench.py).

        Every step must be capturable and every kernel in one module (a program with a
        library call that synchronises or allocates has no such graph), on a target
        whose modules capture graphs (`cuda`); else CinnError says which. The graph
        keeps the arrays' addresses: rebinding or reallocating the scope's arrays (a
        new feed shape) needs a new graph."""
        if times < 1:
            raise CinnError(f"RuntimeProgram.repeated_graph: times must be >= 1, not {times}")
        scope = self._scope(scope, "repeated_graph")
        binding = self._bound(scope)
        module = binding.module
        if module is None or not hasattr(module, "capture"):
            why = (
                "its kernels are in more than one module, or it has none"
                if module is None
                else f"target {scope.target!r} does not capture CUDA graphs"
            )
            raise CinnError(f"RuntimeProgram.repeated_graph: {why}")
        stuck = [
            str(step)
            for step in self.instructions
            if not isinstance(step, Instruction) and not step.capturable
        ]
        if stuck:
            raise CinnError(
                "RuntimeProgram.repeated_graph: steps that cannot be captured into a CUDA "
                f"graph: {', '.join(stuck[:3])}"
            )
        graph = module.capture([call for _, call, _ in binding.calls] * times)
        return RepeatedGraph(module, graph, times)

    def _bound(self, scope: Scope) -> _Binding:
        """The binding over `scope`, made again only when the scope or its arrays changed
        (`Scope.generation`)."""
        binding = self._binding
        if binding is None or binding.scope is not scope or binding.generation != scope.generation:
            self.bind(scope)
            binding = self._binding
            assert binding is not None
        return binding

    @property
    def graph_count(self) -> int:
        """How many CUDA graphs the latest binding captured (0 without graphs)."""
        return 0 if self._binding is None else self._binding.graphs

    def _scope(self, scope: Scope | None, what: str) -> Scope:
        scope = scope if scope is not None else self.scope
        if scope is None:
            raise CinnError(f"RuntimeProgram.{what} needs a scope (it was built without one)")
        return scope

    def profile(self, scope: Scope | None = None) -> list[tuple[str, float]]:
        """Run once, timing each instruction; returns (instruction, seconds) in order."""
        return [(str(t.step), t.seconds) for t in self.profile_steps(scope)]

    def profile_steps(self, scope: Scope | None = None) -> list[StepTime]:
        """Run once, timing each instruction (see the module doc for the clocks)."""
        scope = scope if scope is not None else self.scope
        if scope is None:
            raise CinnError("RuntimeProgram.profile needs a scope (it was built without one)")
        events = get_target(scope.target).events()
        if events is not None:
            return _event_times(self.instructions, scope, events)
        times = []
        for step in self.instructions:
            start = time.perf_counter()
            step.run(scope)
            times.append(StepTime(step, time.perf_counter() - start, "cpu"))
        return times

    @property
    def kernels(self) -> list[Instruction]:
        """The kernel launches, in execution order."""
        return [step for step in self.instructions if isinstance(step, Instruction)]

    @property
    def distinct_kernels(self) -> list[str]:
        """The kernels the launches use, each once, in the order of their first launch:
        fewer than `kernels` where groups share one (identical layers of a model)."""
        return list(dict.fromkeys(step.name for step in self.kernels))

    def storage_of(self, value: Value) -> Storage | None:
        """The variable(s) a value of `program` is in, None if it lives inside a kernel."""
        return None if self.storage is None else self.storage.get(value)


@dataclass(frozen=True)
class RepeatedGraph:
    """`RuntimeProgram.repeated_graph`'s result: calling it (with a stream: CuPy's,
    torch's, a handle; None is CuPy's current one) launches the graph once, which runs
    the program `times` times."""

    module: Any
    graph: Any
    times: int

    def __call__(self, stream: Any = None) -> None:
        with self.module.bound(stream) as handle:
            self.graph(handle)


@dataclass
class _Binding:
    """The prepared steps over one scope at one generation: `calls` is (module or None
    for a library op, the call taking the stream, whether a graph may record it) per
    step; `module` is the one module of all the kernels, when there is one, bound once
    per execute, and `steps` what execute calls under it: the calls, or the captured
    graphs with the calls that stay outside them (`graphs` of them captured)."""

    scope: Scope
    generation: int
    calls: list[tuple[Any, Callable[[Any], None], bool]]
    module: Any
    steps: list[Callable[[Any], None]]
    graphs: int = 0


MIN_GRAPH_STEPS = 2
"""A run of capturable steps shorter than this launches directly: a graph of one launch
saves nothing."""


def _graph_segments(
    calls: list[tuple[Any, Callable[[Any], None], bool]], module: Any
) -> tuple[list[Callable[[Any], None]], int]:
    """The steps with every run of at least MIN_GRAPH_STEPS capturable calls replaced by
    one captured graph (`module.capture`); calls that may not be captured (library calls
    that synchronise or allocate) stay between the graphs, in order."""
    steps: list[Callable[[Any], None]] = []
    run: list[Callable[[Any], None]] = []
    graphs = 0

    def flush() -> None:
        nonlocal graphs
        if len(run) >= MIN_GRAPH_STEPS:
            steps.append(module.capture(run))
            graphs += 1
        else:
            steps.extend(run)
        run.clear()

    for _, call, capturable in calls:
        if capturable:
            run.append(call)
        else:
            flush()
            steps.append(call)
    flush()
    return steps, graphs


def _event_times(steps: list[Step], scope: Scope, events: KernelEvents) -> list[StepTime]:
    """Kernels timed by a pair of the device's events each on the stream their launches
    go on, read once the stream has drained; library ops by the host's clock between two
    synchronisations."""
    events.synchronize()
    timed: list[tuple[Step, Any, Any] | StepTime] = []
    for step in steps:
        if isinstance(step, Instruction):
            start = events.record()
            step.run(scope)
            end = events.record()
            timed.append((step, start, end))
        else:
            events.synchronize()  # the kernels before it are not its time
            begin = time.perf_counter()
            step.run(scope)
            events.synchronize()
            timed.append(StepTime(step, time.perf_counter() - begin, "cpu"))
    events.synchronize()
    return [
        item if isinstance(item, StepTime) else StepTime(item[0], events.seconds(*item[1:]), "gpu")
        for item in timed
    ]
