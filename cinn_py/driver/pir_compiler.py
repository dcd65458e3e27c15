"""PIRCompiler: a program to a RuntimeProgram, through every stage of the compiler.

    scope = BuildScope("cuda-emu", program)
    runtime_program = PIRCompiler(program, "cuda-emu", scope).build()
    runtime_program.execute()

The stages, each timed (`RuntimeProgram.timings`) and dumped under `CINN_PY_DUMP_DIR`:

    passes      on a clone (the caller's program is never changed; values keep their
                printed numbers, so `%N` of the caller's program is `var_N` in every
                later stage): the default list (`PassManager()`: fold mutable
                attributes and empty tensors, fuse matmul epilogues, decompose
                composites, fold constants, CSE, dead code), then `specialize_shapes`
                (-1 dims from `feed_shapes`, every type re-inferred, which also repairs
                Paddle's wrong matmul types)
    grouping    `hlir.grouping.explain_grouping`: the merging (an analysis, asking the
                tactics of the target's `TargetInfo`), the pass copying cheap shared
                producers into their readers' groups (`hlir.recompute_cheap`), why the
                groups stayed apart; unless `build(groups)` is given groups
    lowering    `op_lowering.lower_group` for each FUSED group
    scheduling  `group_schedule.auto_schedule`: the first tactic that takes the group
                (`ScheduleResult.tactic`), bound guards included, once per class of
                groups whose lowered functions are equal up to names (and whose reduce
                patterns are equal): the others take the first one's schedule renamed to
                their own names (`driver.kernel_dedup.schedule_once`); then groups whose
                scheduled functions are equal up to names share one kernel, the first
                one's (`kernel_dedup.share_kernels`; `FusedKernel.shares`)
    codegen     the target's renderer (`Target.render`, CUDA C on both compiled targets):
                every distinct kernel (`fn_<group>`) in one translation unit
    compile     the target's compiler and module loader (`Target.compile`, `.load`:
                g++ on cuda-emu, NVRTC + module load on cuda): one run per unit (one
                unit, or `UNIT_SIZE` kernels a unit for a program of more), the units in
                a pool of threads (`driver.compile_pool`), each cached on disk; when one
                fails, each group is compiled alone (in the pool) to name the one at fault

A program with -1 dims needs `feed_shapes` for them. LIBRARY groups, and computing ops
in no group, run by the target's library calls (`runtime.library`); glue ops become
aliases in the storage plan (`driver.storage`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cinn_py.backends.codegen_cuda import CudaSource, KernelInfo, generate_cuda
from cinn_py.driver import compile_pool, progress
from cinn_py.driver.aligned_variants import AlignedVariant, alignable_dim, aligned_variant
from cinn_py.driver.kernel_dedup import launch_of, schedule_once, share_kernels
from cinn_py.driver.schedule_cache import (
    ScheduleCache,
    fingerprint,
    guarded_pattern,
    rename_schedule,
    rename_variant,
)
from cinn_py.driver.storage import StoragePlan, plan_storage
from cinn_py.dump import DumpDir, program_label
from cinn_py.errors import CinnError, CompileError
from cinn_py.hlir.group import Group, GroupKind, check_groups, dependency_order
from cinn_py.hlir.grouping import FusionExplanation, explain_grouping, has_trait
from cinn_py.hlir.naming import NameTable, unique_group_names
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.hlir.symbolic_dims import SymbolicDims, build_symbolic_dims
from cinn_py.ir.dim_guards import UnrecordedRead
from cinn_py.ir.dim_values import bound_dims
from cinn_py.ir.expr import IntImm, Var
from cinn_py.ir.group_schedule import ScheduleResult, auto_schedule, schedule_db
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.interpreter import storage_dtype
from cinn_py.ir.printer import print_ir
from cinn_py.ir.stmt import ArgIO, Argument, LoweredFunc
from cinn_py.pir.passes import PassManager
from cinn_py.pir.passes.infer_shapes import has_dynamic_dims, specialize_shapes
from cinn_py.pir.printer import ValueNames, print_op
from cinn_py.pir.program import Program
from cinn_py.pir.shape_analysis import analyze_shapes
from cinn_py.pir.traits import Trait
from cinn_py.pir.value import Value
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import kernel_for
from cinn_py.runtime.feeds import check_array, to_array
from cinn_py.runtime.instruction import Instruction, Workspace
from cinn_py.runtime.library import LibraryInstruction, storage_names
from cinn_py.runtime.memory_plan import MemoryPlan, plan_memory
from cinn_py.runtime.module_set import one_module
from cinn_py.runtime.runtime_program import RuntimeProgram, Step
from cinn_py.runtime.scope import Scope
from cinn_py.targets import Target, compiled_target

SPECIALIZE_ENV = "CINN_PY_SPECIALIZE"


def specialize_requested() -> bool:
    """Whether CINN_PY_SPECIALIZE=1 asks for kernels specialised to each feed shape
    (every -1 dim compiled in as a number, as before symbolic dims), for comparison."""
    return os.environ.get(SPECIALIZE_ENV, "").strip() not in ("", "0")


AFTER_SPECIALIZE = ("fold_empty_tensors", "dead_code_elimination")
"""The passes run again once `specialize_shapes` has made the -1 dims concrete."""

STAGES = ("passes", "grouping", "lowering", "scheduling", "codegen", "compile")
UNTIL = ("grouping", "lowered", "scheduled", "codegen")
"""Where `PIRCompiler.stages` may stop."""


@dataclass
class FusedKernel:
    """One FUSED group and what each stage made of it."""

    group: Group
    lowered: LoweredFunc | None = None
    scheduled: ScheduleResult | None = None
    shares: FusedKernel | None = None
    """The earlier group whose kernel this one launches (their scheduled functions are
    equal up to names: `kernel_dedup`); None when it has a kernel of its own."""
    symbolic_fallback: str | None = None
    """Why a group lowered with symbolic dims was lowered again with numbers: what its
    tactic or codegen said of the symbolic function (`cinn-py groups --symbolic`)."""
    aligned: AlignedVariant | None = None
    """The kernel's vector variant for rows whose symbolic length is a multiple of the
    vector (`aligned_variants`), rendered next to it; None for most kernels."""

    @property
    def symbolic_dims_taken(self) -> bool:
        """Whether the group's lowered function takes symbolic dims (`S0`, ...)."""
        lowered = self.lowered
        return lowered is not None and any(isinstance(a.value, Var) for a in lowered.args)

    @property
    def kernel(self) -> FusedKernel:
        """The group whose function is rendered as the kernel this group launches."""
        return self if self.shares is None else self.shares


@dataclass
class Stages:
    """The program as compiled, its groups, and the fused groups' stage results."""

    program: Program
    groups: list[Group]
    names: NameTable
    fused: list[FusedKernel] = field(default_factory=list)
    source: CudaSource | None = None
    """Every distinct kernel in one translation unit (None without fused groups)."""
    explanations: list[FusionExplanation] = field(default_factory=list)
    """Why groups linked by a value were not merged (empty for groups given by hand)."""

    @property
    def distinct(self) -> list[FusedKernel]:
        """The fused groups with a kernel of their own (all of them before codegen), in
        order: the kernels of the translation unit."""
        return [k for k in self.fused if k.shares is None]

    @property
    def rendered(self) -> list[tuple[FusedKernel, ScheduleResult]]:
        """Each kernel of the translation unit, in order, with the group it is made for:
        the distinct kernels, then their aligned variants (`aligned_variants`)."""
        kernels = [(k, k.scheduled) for k in self.distinct]
        return kernels + [(k, k.aligned.scheduled) for k in self.distinct if k.aligned]


def check_supported(program: Program) -> None:
    """Every op of `program` is one cinn_py can run on every target (it has an entry with
    a reference kernel, the fallback of every compiled target): else an
    UnsupportedOpError naming the first op that is not and where it is used, before any
    stage runs."""
    for op in program.block:
        op_def = op.op_def
        if op_def is None or not op_def.has_trait(Trait.STRUCTURAL):
            kernel_for(op)


class PIRCompiler:
    """Compiles `program` for `target` (a compiled Target, or its name: "cuda" or
    "cuda-emu") into a RuntimeProgram over
    `scope` (a new one when None). `feed_shapes` resolves -1 dims; `arch` overrides the
    GPU arch NVRTC builds for; `feed_values` compiles those feeds in as constants;
    `fast_math` renders float32 transcendentals and division with CUDA's
    approximations (`codegen_cuda.FAST_MATH`); `schedules` is the schedule database
    the tactics read (`schedule_db`: a ScheduleDB or a file; default the arch's
    database from `CINN_PY_SCHEDULES` or the checkout's `schedules/`)."""

    def __init__(
        self,
        program: Program,
        target: str | Target,
        scope: Scope | None = None,
        *,
        feed_shapes: Mapping[str, Sequence[int]] | None = None,
        feed_values: Mapping[str, Any] | None = None,
        arch: str | None = None,
        symbolic: bool | None = None,
        fast_math: bool = False,
        schedules: ScheduleDB | str | os.PathLike[str] | None = None,
    ) -> None:
        self.program = program
        self.fast_math = fast_math
        self.target = compiled_target(target)
        self.scope = scope
        self.feed_shapes = dict(feed_shapes or {})
        """Shapes for the feeds' -1 dims, by feed name (a program with none needs none)."""
        self.feed_values = dict(feed_values or {})
        """Values of the feeds some result's shape depends on (an arange's fed bounds):
        compiled in as constants (`specialize_shapes`)."""
        self.arch = arch
        self.schedules = schedule_db.resolve(schedules, self.target_info().arch)
        """The tuned knobs the tactics take where an entry fits (`schedule_db`)."""
        self.symbolic = not specialize_requested() if symbolic is None else symbolic
        """Whether -1 dims are lowered as kernel arguments (`hlir.symbolic_dims`), so
        that kernels are shared across feed shapes; off with CINN_PY_SPECIALIZE=1."""
        self.symbolic_dims: SymbolicDims | None = None
        """The last compile's symbolic dims (None for a program without -1 dims)."""
        self.schedule_cache: ScheduleCache | None = None
        """Schedules kept across the signatures of one program (`driver.schedule_cache`;
        the CompiledProgram sets its own): a symbolic kernel is scheduled once per
        bucket. None: every compile schedules its kernels."""
        self.timings: dict[str, float] = {}
        self._dump = DumpDir(None)

    # ---- the stages ----------------------------------------------------------------------

    def stages(self, groups: Sequence[Group] | None = None, until: str = "codegen") -> Stages:
        """Run the stages up to `until` ("grouping", "lowered", "scheduled", "codegen").
        With `groups`, the program is taken as it is (no passes: the groups hold its ops)."""
        if until not in UNTIL:
            raise ValueError(f"until must be one of {UNTIL}, got {until!r}")
        check_supported(self.program)
        self._dump = DumpDir.start(program_label(self.program.source))
        explanations: list[FusionExplanation] = []
        if groups is None:
            with self._timed("passes"):
                program = numbered_clone(self.program)
                folder = self._dump.folder
                manager = PassManager(dump_dir=None if folder is None else str(folder))
                program = manager.run(program)
                dynamic = self.symbolic and self.feed_shapes and has_dynamic_dims(program)
                analysis = analyze_shapes(program) if dynamic else None
                origins: dict[int, Value] = {}
                program = specialize_shapes(
                    program, self.feed_shapes, self.feed_values, origins=origins
                )
                if (
                    self.feed_shapes or self.feed_values
                ):  # a -1 dim fed a 0 makes tensors empty only now
                    PassManager.from_names(AFTER_SPECIALIZE).run(program)
                verify_program(program)
                self._dump.write(
                    f"{len(manager.passes) + 1:02d}_specialize_shapes.pir", str(program)
                )
                if analysis is not None:
                    values = [r for op in program.ops() for r in op.results]
                    self.symbolic_dims = build_symbolic_dims(
                        analysis, self.feed_shapes, origins, values
                    )
            with self._timed("grouping"):
                grouping = explain_grouping(program, target=self.target_info())
                groups, explanations = grouping.groups, grouping.explanations
        else:
            program = self.program
            check_groups(groups, program)
        groups = unique_group_names(groups)  # kernel and dump file names come from them
        names = NameTable(program)
        if self._dump.enabled:  # one ValueNames for all: each numbers the whole program
            value_names = ValueNames(program)
            text = "\n".join(describe_group(g, program, value_names) for g in groups)
            self._dump.write("groups.txt", text)
        result = Stages(program, list(groups), names, explanations=explanations)
        result.fused = [FusedKernel(g) for g in groups if g.kind is GroupKind.FUSED]
        if until == "grouping":
            return result
        with self._timed("lowering"):
            for kernel in result.fused:
                kernel.lowered = lower_group(kernel.group, names, symbolic=self.symbolic_dims)
                self._dump.write(f"{kernel.group.name}.lowered.ir", print_ir(kernel.lowered))
        if until == "lowered":
            return result
        target_info = self.target_info()
        values = None if self.symbolic_dims is None else self.symbolic_dims.by_name
        with self._timed("scheduling"), bound_dims(values):
            # Stopping here, every symbolic kernel is rendered on trial, so the schedules
            # are the ones codegen will take; going on, codegen's own render finds out
            # (and only a refusal schedules again with the trials).
            self._schedule(result, names, target_info, render_check=until == "scheduled")
        if until == "scheduled":
            return result
        with self._timed("codegen"), bound_dims(values):
            if result.fused:
                try:
                    result.source = self._render(result)
                except (CinnError, ValueError, TypeError, AttributeError):
                    if not any(k.symbolic_dims_taken for k in result.fused):
                        raise
                    # a symbolic kernel codegen refuses (rare, so not tried kernel by
                    # kernel up front): schedule again, each symbolic kernel rendered
                    # on trial and lowered with numbers where refused
                    self._schedule(result, names, target_info, render_check=True)
                    result.source = self._render(result)
                self._dump.write("kernels.cu", result.source.source)
                for index, unit in enumerate(result.source.units):
                    self._dump.write(f"kernels_{index}.cu", unit.source)
                self._dump.write("kernels.txt", describe_sharing(result.fused))
        if self._dump.enabled:
            for kernel in result.fused:
                self._dump.write(
                    f"{kernel.group.name}.cu",
                    group_source(kernel, self.target, self.fast_math).source,
                )
        return result

    def _schedule(
        self, result: Stages, names: NameTable, target_info: TargetInfo, render_check: bool
    ) -> None:
        """Schedules every fused kernel (once per set of equal functions,
        `kernel_dedup`), decides which share a kernel, and makes the aligned variants;
        inside `bound_dims` of the signature. `render_check`: each symbolic kernel is
        also rendered on trial (`_settle_symbolic`)."""
        for kernel in result.fused:
            kernel.shares, kernel.aligned = None, None
        tried = self._settle_symbolic(result, names, target_info, render_check)
        groups = {id(k.lowered): k.group for k in result.fused}
        schedules, origins = schedule_once(
            [k.lowered for k in result.fused],
            [k.group.reduce_pattern for k in result.fused],  # RowPatterns
            lambda func, pattern: (
                tried.get(id(func)) or self._scheduled(func, groups[id(func)], target_info)
            ),
        )
        for kernel, scheduled in zip(result.fused, schedules, strict=True):
            kernel.scheduled = scheduled
            self._dump.write(f"{kernel.group.name}.scheduled.ir", print_ir(scheduled.func))
            self._dump.write(
                f"{kernel.group.name}.trace.txt",
                f"tactic: {scheduled.label}\n{scheduled.trace}",
            )
        first = share_kernels([s.func for s in schedules], origins)
        for kernel, index in zip(result.fused, first, strict=True):
            kernel.shares = None if result.fused[index] is kernel else result.fused[index]
        if self.symbolic_dims is not None:
            for kernel in result.distinct:
                if kernel.symbolic_dims_taken:
                    kernel.aligned = self._aligned(kernel, target_info)

    def _render(self, result: Stages) -> CudaSource:
        """The translation unit of `result`'s kernels and aligned variants; where codegen
        refuses a variant (they are not rendered on trial, to keep the stage cheap),
        the unit again without any."""
        funcs = [scheduled.func for _, scheduled in result.rendered]
        try:
            return self._rendered(funcs)
        except (CinnError, ValueError, TypeError, AttributeError):
            if not any(k.aligned for k in result.distinct):
                raise
        for kernel in result.distinct:
            kernel.aligned = None
        funcs = [scheduled.func for _, scheduled in result.rendered]
        return self._rendered(funcs)

    def _rendered(self, funcs: list[LoweredFunc]) -> CudaSource:
        """The translation unit of `funcs`: from the schedule cache where it holds one
        rendered from these very functions (a new shape of a bucket already compiled)."""
        unit_size = compile_pool.UNIT_SIZE
        if self.schedule_cache is None or self.symbolic_dims is None:
            return self.target.render(funcs, unit_size, self.fast_math)
        return self.schedule_cache.rendered(
            funcs,
            (self.target.name, unit_size, self.fast_math),
            self.symbolic_dims.by_name,
            lambda: self.target.render(funcs, unit_size, self.fast_math),
        )

    def _settle_symbolic(
        self, result: Stages, names: NameTable, target_info: TargetInfo, render_check: bool
    ) -> dict[int, ScheduleResult]:
        """Each symbolically lowered kernel that its tactic cannot schedule over symbolic
        extents, or (with `render_check`) codegen cannot render (a symbolic thread
        count), is lowered again with this signature's numbers: such a group is compiled
        per shape, as before. The schedules that worked, by id of their function, for
        the scheduling stage to take rather than make again."""
        tried: dict[int, ScheduleResult] = {}
        for kernel in result.fused:
            func = kernel.lowered
            if not kernel.symbolic_dims_taken:
                continue
            try:
                trial = self._scheduled(func, kernel.group, target_info)
                if render_check:
                    generate_cuda([trial.func], prove_in_place=False)
            except UnrecordedRead:
                raise  # a compiler bug, not a function to lower with numbers
            except (CinnError, ValueError, TypeError, AttributeError) as error:
                kernel.symbolic_fallback = " ".join(str(error).split())[:200]
                kernel.lowered = lower_group(kernel.group, names)
            else:
                tried[id(func)] = trial
        return tried

    def _scheduled(
        self, func: LoweredFunc, group: Group, target_info: TargetInfo
    ) -> ScheduleResult:
        """`func`'s schedule (`auto_schedule` with its group's row pattern): from the
        schedule cache where one is set and holds it for these dims."""
        if self.schedule_cache is None or self.symbolic_dims is None:
            return auto_schedule(func, target_info, group.reduce_pattern, schedules=self.schedules)
        pattern, key = guarded_pattern(group, self.symbolic_dims)
        found = self.schedule_cache.get(
            "schedule",
            func,
            key,
            self.symbolic_dims.by_name,
            lambda: auto_schedule(func, target_info, pattern, schedules=self.schedules),
            rename_schedule,
        )
        assert isinstance(found, ScheduleResult)
        return found

    def _aligned(self, kernel: FusedKernel, target_info: TargetInfo) -> AlignedVariant | None:
        """The kernel's aligned variant (`driver.aligned_variants`), from the schedule
        cache where one is set."""
        group, lowered, scalar = kernel.group, kernel.lowered, kernel.scheduled
        if alignable_dim(lowered) is None:
            return None
        if self.schedule_cache is None or self.symbolic_dims is None:
            return aligned_variant(lowered, scalar, group.reduce_pattern, target_info)
        pattern, key = guarded_pattern(group, self.symbolic_dims)
        found = self.schedule_cache.get(
            "aligned variant",
            lowered,
            (key, fingerprint(scalar)),  # the variant is kept where it differs from it
            self.symbolic_dims.by_name,
            lambda: aligned_variant(lowered, scalar, pattern, target_info),
            rename_variant,
        )
        assert found is None or isinstance(found, AlignedVariant)
        return found

    def build(self, groups: Sequence[Group] | None = None) -> RuntimeProgram:
        """Every stage, then the instructions: kernels for FUSED groups, reference kernels
        for the rest, in an order where each follows what it reads."""
        start = time.perf_counter()
        self.timings.clear()
        stages = self.stages(groups)
        plan = plan_storage(stages.program, stages.groups, stages.names)
        with self._timed("compile"):
            module = self._compile(stages)
        kernels = {} if stages.source is None else {k.name: k for k in stages.source.kernels}
        fused = {k.group.name: k for k in stages.fused}
        steps: list[Step] = []
        for group in ordered_groups(stages.program, stages.groups):
            if group.kind is GroupKind.FUSED:
                shared = fused[group.name].kernel
                info = kernels.get(kernel_name(shared.group))
                aligned = shared.aligned
                if aligned is not None and aligned.applies(self.symbolic_dims.by_name):
                    info = kernels.get(aligned.name)  # the rows' length is a vector multiple
                if info is None:
                    raise CompileError(f"codegen made no kernel {kernel_name(shared.group)}")
                own = fused[group.name].scheduled.func
                info = launch_of(info, shared.scheduled.func, own)
                steps.append(
                    _kernel_step(group, info, module, plan, stages.names, self.symbolic_dims)
                )
            else:
                steps.extend(_library_steps(group, plan, self.target))
        memory = self._plan_memory(steps, plan, stages.program)
        scope = self._bind_scope(plan, stages.program, memory)
        self.timings["total"] = time.perf_counter() - start
        self._dump.write("timings.txt", format_timings(self.timings))
        return RuntimeProgram(
            steps,
            scope,
            stages.program,
            stages.groups,
            "" if stages.source is None else stages.source.source,
            plan,
            dict(self.timings),
            memory,
            cuda_units=()
            if stages.source is None
            else tuple(unit.source for unit in stages.source.units),
        )

    def target_info(self) -> TargetInfo:
        """What the scheduler targets: the target's device limits (`Target.target_info`)."""
        return self.target.target_info(self.arch)

    # ---- helpers -------------------------------------------------------------------------

    @contextmanager
    def _timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            with progress.stage(stage):
                yield
        finally:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - start

    def _compile(self, stages: Stages) -> Any:
        """The loaded module of the translation unit, or a `ModuleSet` of its units'
        modules where it is split (more than `UNIT_SIZE` distinct kernels): one g++ or
        NVRTC run per unit, the units side by side in a pool (`compile_pool`), each
        cached on disk by its source. A unit's fixed cost (parsing the headers: about
        0.5 s for g++) is why small programs are one unit: per-group units were 3 to 6
        times slower to build cold."""
        if stages.source is None:
            return None
        units = stages.source.units or (stages.source,)
        try:
            return self.load_sources([unit.source for unit in units])
        except CompileError as error:
            self._dump.write("kernels.log", error.log)
            arch = self.target.compile_arch(self.arch)
            raise self._blame(stages.distinct, arch, error) from error

    def load_sources(self, sources: Sequence[str]) -> Any:
        """The module of the translation unit(s) `sources` (one, or a split program's
        units, `RuntimeProgram.cuda_units`), compiled side by side on the pool, each
        cached on disk by its source, loaded as one module (a `ModuleSet` of several).
        The compiled-program cache rebuilds a program's module through this too, so a
        hit finds every unit in the kernel cache under the same name and key."""
        names = (
            ["kernels.cu"]
            if len(sources) == 1
            else [f"kernels_{i}.cu" for i in range(len(sources))]
        )
        arch = self.target.compile_arch(self.arch)  # here, not in the pool's threads
        built = compile_pool.run_jobs(
            lambda job: self.target.compile(job[0], job[1], arch),
            list(zip(sources, names, strict=True)),
        )
        return one_module([self.target.load(b) for b in built])

    def _blame(
        self, distinct: Sequence[FusedKernel], arch: str | None, error: CompileError
    ) -> CompileError:
        """The error of the first group (in order) whose own source fails the same
        compiler, naming the group and its ops; the unit's error where every group
        compiles alone. The groups' sources compile side by side (`compile_pool`)."""

        def attempt(kernel: FusedKernel) -> CompileError | None:
            source = group_source(kernel, self.target, self.fast_math).source
            try:
                self.target.compile(source, f"{kernel.group.name}.cu", arch)
            except CompileError as own:
                return own
            return None

        for kernel, own in zip(distinct, compile_pool.run_jobs(attempt, distinct), strict=True):
            if own is None:
                continue
            name = kernel.group.name
            self._dump.write(f"{name}.log", own.log)
            message = str(own)
            if own.log and message.endswith(own.log):
                message = message[: -len(own.log)].rstrip()
            ops = ", ".join(op.name for op in kernel.group.ops)
            return CompileError(f"{name} ({ops}): {message}", log=own.log, source=own.source)
        return error

    def _plan_memory(
        self, steps: Sequence[Step], plan: StoragePlan, program: Program
    ) -> MemoryPlan:
        """The arena offsets of the values the steps write (`runtime.memory_plan`):
        feeds and parameters stay outside, program outputs live to the end, a kernel's
        output may take the bytes of an input that dies there (its `in_place` pairs;
        library calls declare none)."""
        outside = [v for names in [*plan.feeds.values(), *plan.parameters.values()] for v in names]
        outputs = [
            name
            for value in program.outputs()
            if (storage := plan.get(value)) is not None
            for name in storage_names(storage)
        ]
        return plan_memory(
            [(step.reads(), step.writes()) for step in steps],
            plan.variables,
            outside,
            outputs,
            self.target_info().memory_alignment,
            [step.in_place if isinstance(step, Instruction) else () for step in steps],
        )

    def _bind_scope(self, plan: StoragePlan, program: Program, memory: MemoryPlan) -> Scope:
        """The scope with exactly the planned variables, the arena's as views of one
        allocation; parameters not yet filled are filled from the program's own arrays."""
        scope = self.scope if self.scope is not None else Scope(self.target)
        for name, type_ in plan.variables.items():
            scope.var(name, type_)
        scope.keep_only(plan.variables)
        scope.bind_arena(memory)
        for parameter, variables in plan.parameters.items():
            array = program.parameters.get(parameter)
            for name in variables:
                variable = scope[name]
                if array is not None and not variable.allocated:
                    variable.set(check_array(parameter, to_array(parameter, array), variable.type))
        self.scope = scope
        return scope


def numbered_clone(program: Program, outputs: Sequence[Value] | None = None) -> Program:
    """A clone of `program` whose values keep the numbers they print with in `program`,
    so passes that remove values do not renumber the rest, with `outputs` (default: the
    program's) pinned as the clone's outputs."""
    names = ValueNames(program)
    copy = program.clone()
    mapping: dict[int, Value] = {}
    for old, new in zip(program.block, copy.block, strict=True):
        for old_result, new_result in zip(old.results, new.results, strict=True):
            new_result.id_hint = names.number(old_result)
            mapping[id(old_result)] = new_result
    wanted = program.outputs() if outputs is None else outputs
    copy.pinned_outputs = [mapping[id(v)] for v in wanted]
    return copy


def ordered_groups(program: Program, groups: Sequence[Group]) -> list[Group]:
    """`groups` plus a LIBRARY group for each computing op in none, ordered so that every
    group follows the groups it reads from (through glue ops too); ties keep program
    order (`dependency_order`). `group_program`'s order already is one; given groups
    need not be."""
    grouped = {id(op) for g in groups for op in g.ops}
    units = list(groups)
    for index, op in enumerate(program.block):
        if id(op) not in grouped and not (has_trait(op, Trait.GLUE) or has_trait(op, Trait.VECTOR)):
            units.append(Group(f"library_{index}", GroupKind.LIBRARY, [op]))
    order = dependency_order([g.ops for g in units], program, [g.name for g in units])
    return [units[i] for i in order]


def kernel_name(group: Group) -> str:
    """The name of a FUSED group's function and kernel: `fn_<group>`."""
    return f"fn_{group.name}"


def describe_sharing(fused: Sequence[FusedKernel]) -> str:
    """`group_3 launches fn_group_1` for each fused group (dumps' `kernels.txt`)."""
    return "".join(f"{k.group.name} launches {kernel_name(k.kernel.group)}\n" for k in fused)


def group_source(kernel: FusedKernel, target: str | Target, fast_math: bool = False) -> CudaSource:
    """A self-contained source of one group's kernel (dumps, `cinn-py dump-cuda -o`)."""
    return compiled_target(target).render([kernel.scheduled.func], fast_math=fast_math)


def _kernel_step(
    group: Group,
    info: KernelInfo,
    module: Any,
    plan: StoragePlan,
    names: NameTable,
    symbolic: SymbolicDims | None = None,
) -> Instruction:
    """The launch of a group's kernel, each parameter bound to its value's variable, a
    symbolic kernel's dims to their values at this signature (and its grid worked out
    from them)."""
    by_buffer = {names.buffer(v): v for v in [*group.inputs, *group.outputs]}
    args, outputs, workspace, scalars = [], [], [], []
    for arg in info.args:
        if isinstance(arg.value, Var):  # a symbolic dim: its value at this signature
            if symbolic is None:
                raise CompileError(f"kernel {info.name} takes '{arg.name}', which no dim names")
            name = f"={arg.name}"
            value = symbolic.by_name[arg.name]
            scalars.append((name, np.dtype(arg.value.dtype.numpy).type(value)))
            args.append(name)
            continue
        if arg.io is ArgIO.WORKSPACE:  # the kernel's own memory, no program value
            workspace.append(_workspace(arg, info.name))
            args.append(arg.name)
            continue
        value = by_buffer.get(arg.name)
        if value is None:
            raise CompileError(
                f"kernel {info.name} of {group.name} has the parameter '{arg.name}', "
                "which is none of the group's inputs or outputs"
            )
        variable = plan.tensor(value, f"kernel {info.name}")
        args.append(variable)
        if arg.io is ArgIO.OUTPUT:
            outputs.append(variable)
    grid = tuple(d if isinstance(d, int) else symbolic.evaluate(d) for d in info.grid)
    block = tuple(info.block)
    return Instruction(
        group.name,
        module,
        info.name,
        grid,
        block,
        int(info.shared_mem),
        tuple(args),
        tuple(outputs),
        tuple(workspace),
        _in_place(info, args),
        tuple(scalars),
    )


def _in_place(info: KernelInfo, args: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """The kernel's in-place pairs (`KernelInfo.in_place`, by parameter) as variables:
    only where each variable is one parameter's (two values aliased to one variable
    would let the kernel read the input's bytes through another parameter)."""
    variable = {arg.name: name for arg, name in zip(info.args, args, strict=True)}
    return tuple(
        (variable[x], variable[y])
        for x, y in info.in_place
        if args.count(variable[x]) == 1 and args.count(variable[y]) == 1
    )


def _workspace(arg: Argument, kernel: str) -> Workspace:
    """The runtime's description of a workspace parameter (constant shape required)."""
    buffer = arg.value
    shape = []
    for extent in getattr(buffer, "shape", ()):
        if not isinstance(extent, IntImm):
            raise CompileError(
                f"kernel {kernel}: workspace {arg.name} has the non-constant extent {extent!r}"
            )
        shape.append(extent.value)
    return Workspace(arg.name, storage_dtype(buffer.dtype), tuple(shape))


def _library_steps(group: Group, plan: StoragePlan, target: Target) -> list[LibraryInstruction]:
    """Each op of a LIBRARY group planned for the target (`Target.plan_library_op`) over
    its operands' and results' variables."""
    steps = []
    for op in group.ops:
        operands = [None if v is None else plan.of(v, op.name) for v in op.operand_values()]
        results = [plan.get(r) for r in op.results]
        steps.append(
            LibraryInstruction(group.name, op, operands, results, target.plan_library_op(op))
        )
    return steps


def describe_group(group: Group, program: Program, names: ValueNames | None = None) -> str:
    """A group as text: its name, kind, inputs and outputs, then its ops as printed
    (values named by `names`, by default a fresh `ValueNames` of `program`)."""
    names = ValueNames(program) if names is None else names
    inputs = ", ".join(names(v) for v in group.inputs) or "-"
    outputs = ", ".join(names(v) for v in group.outputs) or "-"
    lines = [f"{group.name} ({group.kind.value}): inputs {inputs}; outputs {outputs}"]
    lines.extend("    " + print_op(op, names, program.text_style) for op in group.ops)
    return "\n".join(lines) + "\n"


def format_timings(timings: dict[str, float]) -> str:
    """One `stage seconds` line per stage, in pipeline order."""
    order = [*STAGES, *(k for k in timings if k not in STAGES)]
    return "".join(f"{stage} {timings[stage]:.6f}\n" for stage in order if stage in timings)
