"""The public API: load a program, compile it for a target, run it.

    prog = cinn_py.load("model.json")          # or program text, or a folder / prefix
    exe = cinn_py.compile(prog)                # cuda with a GPU, else cuda-emu
    outs = exe.run({"x": x})                   # {"%24": array} or {"out0": array}
    exe.groups; exe.cuda_source; exe.kernels; exe.timings
    exe.compile_count; exe.compile_stats           # compiles, loads, reuses, evictions
    exe.arena_bytes                                # the arena every feed shape shares

Outputs are named as the CLI names them: `out0`, `out1`, ... (fetch order) for
programs that declare outputs with fetch / shadow_output ops (saved models), else
the printed value id (`%24`) of each output. They are NumPy arrays on every target
(bfloat16 as uint16 bit patterns); on `cuda`, `run(..., copy_to_host=False)` leaves
them on the GPU as CuPy arrays. Feeds may be NumPy, CuPy or DLPack arrays (see
`cinn_py.runtime.feeds`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cinn_py.driver import compile_stats
from cinn_py.driver.compile_stats import CompileStats
from cinn_py.driver.compiled import CompiledProgram
from cinn_py.errors import CinnError, LoadError
from cinn_py.hlir.group import Group
from cinn_py.ir.group_schedule.schedule_db import ScheduleDB
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.parser import parse_file
from cinn_py.pir.printer import value_names
from cinn_py.pir.program import Program
from cinn_py.pir.value import Value
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import ReferenceExecutor
from cinn_py.runtime.feeds import check_feeds, check_params
from cinn_py.runtime.instruction import Instruction
from cinn_py.runtime.memory_plan import MemoryPlan
from cinn_py.runtime.runtime_program import RuntimeProgram
from cinn_py.targets import default_target as _default_target
from cinn_py.targets import get_target


def load(path: str | os.PathLike[str] | Program) -> Program:
    """Read a program: Paddle program text, or a saved model (model.json, its folder or
    its path prefix; parameters from model.pdiparams); a Program is taken as it is. The
    result is verified. What cannot be read is a LoadError (a missing file, binary data,
    a malformed model) or a ParseError (malformed text); a program that reads but breaks
    an op's declaration a VerifyError."""
    if isinstance(path, Program):
        verify_program(path)
        return path
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise LoadError(f"cannot load a {type(path).__name__}: expected a path or a Program")
    path = os.fsdecode(path)
    if _is_saved_model(path):
        program = load_model(path)
    elif os.path.isfile(path):
        program = parse_file(path)
    else:
        raise LoadError(f"{path}: no such program file, model.json, model folder or prefix")
    verify_program(program)
    return program


def _is_saved_model(path: str) -> bool:
    if path.endswith(".json") or os.path.isfile(path + ".json"):
        return True
    return os.path.isdir(path)


def default_target() -> str:
    """The target `compile` uses when none is named: `cuda` where a GPU (and CuPy) is
    usable, else `cuda-emu`."""
    return _default_target().name


@dataclass
class Executable:
    """A program prepared for one target: `run(feeds)` returns its outputs by name."""

    program: Program
    target: str
    output_names: list[str]
    outputs: list[Value] = field(repr=False)
    runner: ReferenceExecutor | CompiledProgram = field(repr=False)
    """Built once by `compile`, reused by each `run`: the reference executor (every op's
    kernel chosen up front), or the compiled program (per feed shape if dynamic)."""

    def run(
        self,
        feeds: Mapping[str, Any],
        params: Mapping[str, Any] | None = None,
        fetch: Sequence[str] | None = None,
        *,
        copy_to_host: bool = True,
        stream: Any = None,
    ) -> dict[str, Any]:
        """Run with `feeds` (by data name) and `params` (by parameter name; defaults to the
        program's own). `fetch` picks outputs, or any value, by printed id (`%24`) or `outN`.

        Feeds already in the target's memory (CuPy or any DLPack / CUDA-array-interface
        array on `cuda`, NumPy on `cuda-emu`), C-contiguous and 16-byte aligned, are read
        in place, not copied; the program never writes them. `copy_to_host=False` keeps
        the outputs of `cuda` on the GPU (CuPy arrays): each is a copy of its own, which
        no later run overwrites. `stream` (a CuPy or torch stream, or a handle) is where
        a `cuda` run queues its work, CuPy's current stream when None."""
        names, values = self._select(fetch)
        if isinstance(self.runner, CompiledProgram):
            arrays = self.runner.run(feeds, params, values, copy_to_host, stream)
        else:
            checked = check_feeds(self.program, feeds)
            arrays = self.runner.run(checked, check_params(self.program, params), values)
        return dict(zip(names, arrays, strict=True))

    @property
    def runtime_program(self) -> RuntimeProgram | None:
        """The compiled RuntimeProgram (the latest one, for a program compiled per feed
        shape); None on `reference`."""
        if isinstance(self.runner, CompiledProgram):
            return self.runner.runtime_program
        return None

    @property
    def groups(self) -> list[Group]:
        """The groups the program was compiled as ([] on `reference`)."""
        runtime = self.runtime_program
        return [] if runtime is None else list(runtime.groups)

    @property
    def cuda_source(self) -> str:
        """All generated CUDA C, one self-contained source per fused group ("" on `reference`)."""
        runtime = self.runtime_program
        return "" if runtime is None else runtime.cuda_source

    @property
    def kernels(self) -> list[Instruction]:
        """The kernel launches, in execution order ([] on `reference`)."""
        runtime = self.runtime_program
        return [] if runtime is None else runtime.kernels

    @property
    def memory(self) -> MemoryPlan | None:
        """The memory plan of the compiled program (the latest one): `arena_bytes`,
        `naive_bytes`, and each intermediate's `offsets` and live `ranges`; None on
        `reference`."""
        runtime = self.runtime_program
        return None if runtime is None else runtime.memory

    @property
    def timings(self) -> dict[str, float]:
        """Seconds per compile stage ({} on `reference`)."""
        runtime = self.runtime_program
        return {} if runtime is None else dict(runtime.timings)

    @property
    def compile_count(self) -> int:
        """How many times the program was compiled, or loaded from the compiled-program
        cache: 1 for a static program (compiled by `compile`), one per feed shape run
        so far for a program with -1 dims (a shape dropped by `max_shapes` and run again
        counts again), so a caller can see whether its runs pay for compiles; 0 on
        `reference`, which compiles nothing."""
        if isinstance(self.runner, CompiledProgram):
            return self.runner.compile_count
        return 0

    @property
    def compile_stats(self) -> CompileStats:
        """The compile counts behind `compile_count`: compiled (stages ran) and loaded
        (compiled-program cache), runs that reused a compile, kernel units compiled or
        found in the kernel cache, compiles evicted by `max_shapes` (see
        `CompileStats`); all 0 on `reference`. The counts are live, not a copy."""
        if isinstance(self.runner, CompiledProgram):
            return self.runner.stats
        return CompileStats()

    @property
    def arena_bytes(self) -> int:
        """Bytes of the arena the compiles' intermediates share (one for every feed
        shape of a program with -1 dims: the largest any compile needed so far,
        `runtime.arena_pool`); 0 on `reference` and before a run compiled anything."""
        if isinstance(self.runner, CompiledProgram):
            return self.runner.arena_pool.nbytes
        return 0

    def _select(self, fetch: Sequence[str] | None) -> tuple[list[str], list[Value]]:
        if fetch is None:
            return list(self.output_names), list(self.outputs)
        by_name = dict(zip(self.output_names, self.outputs, strict=True))
        by_id = value_names(self.program)
        values = []
        for name in fetch:
            value = by_name.get(name) or by_id.get(name)
            if value is None:
                known = ", ".join(self.output_names)
                raise CinnError(f"cannot fetch '{name}': no such value (outputs: {known})")
            values.append(value)
        return list(fetch), values


def compile(
    program: Program,
    target: str | None = None,
    *,
    cuda_graph: bool | None = None,
    max_shapes: int | None = None,
    fast_math: bool = False,
    schedules: ScheduleDB | str | os.PathLike[str] | None = None,
) -> Executable:
    """Prepare `program` to run on `target` ("cuda", "cuda-emu" or "reference"; default
    `default_target()`). A program with static shapes is compiled here; one with -1 dims
    on its first run with each new set of feed shapes.

    `cuda_graph` (default: on where the target captures graphs, i.e. `cuda`) records
    the program's kernels and capturable library calls into CUDA graphs on the first
    run and replays them after; `cuda_graph=False` launches each step. On the other
    targets the steps run in order either way.

    `max_shapes` (default `CINN_PY_MAX_SHAPES`, else 32) bounds how many feed shapes of
    a program with -1 dims stay compiled: each compile holds its scope, arena and CUDA
    graphs, so beyond the bound the least recently run shape is dropped and compiles
    (or loads from the compiled-program cache) again if it comes back. A value below 1
    is a CinnError, on every target.

    `fast_math=True` trades accuracy for speed: kernels compute float32 exp, log, log2,
    sin, cos, tan, pow and tanh with CUDA's hardware approximations and divide with
    `__fdividef` (docs/CODEGEN.md gives their errors; results stay within the
    tolerances of `cinn_py.tolerances.FAST_MATH`). Off by default: results then match
    NumPy at the dtype's own tolerance. cuda-emu runs the accurate functions either way;
    the reference target ignores it.

    `schedules`: the schedule database the scheduler's tactics read (tuned threads,
    rows a block, vector steps, tile lanes per shape bucket; docs/AUTO_SCHEDULE.md): a
    file written by tools/tune.py or a `ScheduleDB`. Default: the target arch's
    `<CINN_PY_SCHEDULES or the checkout's schedules/>/<arch>.json` where it exists; a
    database that cannot be used is a ScheduleDBError. Functions it has no entry for
    keep the tactics' rules."""
    bound = compile_stats.max_shapes(max_shapes)
    chosen = get_target(target or default_target())
    chosen.check_available()
    verify_program(program)
    outputs = program.outputs()
    names = output_names(program, outputs)
    if chosen.compiles:
        runner: ReferenceExecutor | CompiledProgram = CompiledProgram(
            program,
            chosen,
            cuda_graph=cuda_graph,
            max_shapes=bound,
            fast_math=fast_math,
            schedules=schedules,
        )
    else:
        runner = ReferenceExecutor(program)
    return Executable(program, chosen.name, names, outputs, runner)


def output_names(program: Program, outputs: Sequence[Value]) -> list[str]:
    """`out0`, `out1`, ... for declared outputs (fetch ops), else printed value ids."""
    if program.fetch_ops():
        return [f"out{i}" for i in range(len(outputs))]
    ids = {id(v): name for name, v in value_names(program).items()}
    return [ids[id(v)] for v in outputs]
