"""The compiled-program cache: what `PIRCompiler.build` made, on disk, so that another
process rebuilds the RuntimeProgram without passes, grouping, lowering or scheduling.

    runtime = program_cache.build(PIRCompiler(program, target, scope, feed_shapes=...))

The kernel cache (`backends.cache`) already keeps the binaries by their source; a second
process still ran every stage to get back to that source. An entry here holds the rest
of what a build produces, as one JSON document (never pickle: an entry is data, loading
one runs no code it holds):

    program       the program after passes: each op's name, operands (positions),
                  attributes and result types as printed (read back by the parser, each
                  distinct text once), line; what the text does not say: each value's
                  `id_hint`, the pinned outputs, `renumbered`. An entry is written only
                  when the program it gives back prints as the compiled one
    groups        name, kind, ops and values as positions in that program, reduce pattern
    storage       the storage plan: each variable (its value, checked against the type
                  printed beside it), the feeds', the parameters', each value's storage
    memory        the memory plan (checked again by `check_plan` on load)
    instructions  kernels (name, grid, block, shared memory, argument variables,
                  outputs, workspaces, in-place pairs, symbolic dims' values) and library ops (the op's position
                  and its operands' and results' storage; the call is planned again by
                  `Target.plan_library_op`, so `CINN_PY_ALLOW_TF32` and the device
                  table are read at load, as in a compile)
    cuda_source   the translation unit, and `cuda_units` where the program's source is
                  split (`compile_pool`): the kernels come from `PIRCompiler.load_sources`
                  of the same unit(s) under the same names, hits in the kernel cache (no
                  binary is stored twice)
    timings       the stages' seconds of the compile that wrote it

The key (`program_key`) is a SHA-256 over explicit parts: the entry format, cinn_py's
version and a digest of its own source files (a changed pass or schedule never meets an
old entry), the target and its `TargetInfo` (arch, SM count: the schedule depends on
them), the arch asked for, the program's printed text, its pinned outputs and renumbered
values, the feed shapes, the values of the feeds compiled in as constants, whether
-1 dims become kernel arguments (`CINN_PY_SPECIALIZE`) and whether kernels use fast
math (`fast_math`).

Entries live in `<cache folder>/program/<key>.json` (the kernel cache's folder, one
rule: `backends.cache.cache_dir`), sealed and written atomically as the kernel cache's
are (`cache.write_entry`): a killed writer leaves at most a temporary file, a truncated
or damaged entry fails its seal and is removed with a CacheWarning, then the program is
compiled again. Writers hold a file lock (`filelock`, in `.locks/`) while they publish an
entry and evict, so two processes compiling one program at once both succeed and write
one entry. A hit touches its entry (mtime); past `CINN_PY_PROGRAM_CACHE_MB` (default
256) the least recently used entries are removed. A folder that cannot be written
(read-only, full) gives a CacheWarning naming it and `CINN_PY_CACHE_DIR`, and the
program runs uncached. `CINN_PY_CACHE=0` (the CLI's `--no-cache`) bypasses this cache;
so does `CINN_PY_DUMP_DIR` for reading, since a dump wants every stage run.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import os
import time
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

import cinn_py
from cinn_py.backends import cache
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.driver.storage import StoragePlan
from cinn_py.dump import DUMP_ENV
from cinn_py.errors import CacheWarning, CinnError
from cinn_py.hlir.group import Group, GroupKind
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_pattern import ReducePattern
from cinn_py.pir.attributes import Attribute
from cinn_py.pir.operation import Location, Operation
from cinn_py.pir.parser import parse_attribute, parse_type
from cinn_py.pir.printer import ValueNames, print_attribute, print_program, print_type
from cinn_py.pir.program import Program, TextStyle
from cinn_py.pir.types import DenseTensorType, Type, VectorType
from cinn_py.pir.value import Value
from cinn_py.runtime.instruction import Instruction, Workspace
from cinn_py.runtime.library import LibraryInstruction
from cinn_py.runtime.memory_plan import InPlace, LiveRange, MemoryPlan, check_plan
from cinn_py.runtime.runtime_program import RuntimeProgram, Step

KIND = "program"
"""The entries' folder under the cache folder (a kind `cinn-py cache info` lists)."""
SUFFIX = ".json"
FORMAT = "cinn_py-program-3"
"""Part of every key and of every entry; a new serialised form changes it."""
SWITCH_ENV = "CINN_PY_CACHE"
"""`0` bypasses the compiled-program cache (neither read nor written)."""
LIMIT_ENV = "CINN_PY_PROGRAM_CACHE_MB"
DEFAULT_LIMIT_MB = 256
LOAD_TIMING = "cache_load"
"""The one stage in the `timings` of a RuntimeProgram loaded from this cache (with
`total`): how `CompiledProgram.stats` tells a load from a compile."""
LOCK_TIMEOUT_S = 60.0
"""How long a writer waits for another's publish and eviction before it gives up on
storing (its program still runs)."""

stats = cache.CacheStats()
"""This process's program cache counts: `hits` (programs loaded), `misses` (entries
written after a compile), `rejected` (entries whose seal or content failed; these are
in `cache.stats.rejected` too)."""

_bypass: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "program_cache_bypass", default=False
)


class NotCacheable(Exception):
    """A build this cache cannot describe (a value it cannot name); it is not stored."""


class DamagedProgram(Exception):
    """An entry whose seal holds but whose content does not describe a program."""


# ---------------------------------------------------------------------------------------------
# Switches


def enabled() -> bool:
    """Whether builds go through the cache: not with `CINN_PY_CACHE=0`, nor inside
    `bypassed()` (the CLI's `--no-cache`)."""
    return os.environ.get(SWITCH_ENV, "1").strip() != "0" and not _bypass.get()


@contextlib.contextmanager
def bypassed(bypass: bool = True) -> Iterator[None]:
    """Compile without the program cache in the block (when `bypass`)."""
    token = _bypass.set(bypass or _bypass.get())
    try:
        yield
    finally:
        _bypass.reset(token)


def limit_bytes() -> int:
    """`CINN_PY_PROGRAM_CACHE_MB` (default 256) in bytes; an unreadable value is the
    default."""
    try:
        megabytes = float(os.environ.get(LIMIT_ENV) or DEFAULT_LIMIT_MB)
    except ValueError:
        megabytes = DEFAULT_LIMIT_MB
    return max(int(megabytes * 2**20), 0)


# ---------------------------------------------------------------------------------------------
# The build through the cache


def build(compiler: PIRCompiler) -> RuntimeProgram:
    """`compiler.build()`, or the RuntimeProgram rebuilt from its cache entry (no compile
    stage runs; `timings` is `{"cache_load": s, "total": s}`); a build is stored."""
    if not enabled():
        return compiler.build()
    start = time.perf_counter()
    try:
        key = program_key(compiler)
    except NotCacheable:
        return compiler.build()
    if not os.environ.get(DUMP_ENV):
        runtime = load(key, compiler, start)
        if runtime is not None:
            return runtime
    runtime = compiler.build()
    store(key, runtime)
    return runtime


@functools.cache
def code_digest() -> str:
    """A digest of cinn_py's own source files (Python, headers): any change to the
    compiler changes every key. About 6 ms, once per process."""
    root = Path(cinn_py.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".h") and path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def program_key(compiler: PIRCompiler) -> str:
    """The key of what `compiler.build()` makes (see the module doc for its parts)."""
    program = compiler.program
    names = ValueNames(program)
    outputs = [names.number(v) for v in program.outputs()]
    if any(n is None for n in outputs):
        raise NotCacheable("an output is no value of the program")
    renumbered = sorted((n, names.number(v)) for n, v in program.renumbered.items())
    fed = [
        (name, np.asarray(a).dtype.str, list(np.shape(a)), np.asarray(a).tobytes().hex())
        for name, a in sorted(compiler.feed_values.items())
    ]
    shapes = sorted((name, [int(d) for d in dims]) for name, dims in compiler.feed_shapes.items())
    return cache.cache_key(
        FORMAT,
        cinn_py.__version__,
        code_digest(),
        compiler.target.name,
        repr(compiler.target_info()),
        compiler.arch or "",
        print_program(program),
        json.dumps({"outputs": outputs, "renumbered": renumbered}),
        json.dumps(
            {
                "shapes": shapes,
                "values": fed,
                "symbolic": compiler.symbolic,
                "fast_math": compiler.fast_math,
                "schedules": compiler.schedules.digest,
            }
        ),
    )


def entry_path(key: str) -> Path:
    return cache.cache_dir() / KIND / f"{key}{SUFFIX}"


# ---------------------------------------------------------------------------------------------
# Loading


def load(key: str, compiler: PIRCompiler, start: float | None = None) -> RuntimeProgram | None:
    """The RuntimeProgram of entry `key` over `compiler`'s target and scope, or None
    (no entry; a damaged one, removed with a CacheWarning; a folder that cannot be read,
    with a CacheWarning)."""
    start = time.perf_counter() if start is None else start
    try:
        path = entry_path(key)
        identity = _identity(path)
        content = cache.read_entry(path, key)
    except OSError as error:
        _warn_unusable(error, "read")
        return None
    if content is None:
        return None
    try:
        entry = json.loads(content.decode("utf-8"))
        runtime = _rebuild(entry, key, compiler)
    except (DamagedProgram, CinnError, ValueError, KeyError, TypeError, IndexError) as error:
        cache.reject(path, f"it does not describe a compiled program ({error})", identity)
        stats.count(rejected=1)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # least recently used goes first
    stats.count(hits=1)
    seconds = time.perf_counter() - start
    runtime.timings = {LOAD_TIMING: seconds, "total": seconds}
    return runtime


def _rebuild(entry: Mapping[str, Any], key: str, compiler: PIRCompiler) -> RuntimeProgram:
    """The RuntimeProgram `entry` describes (DamagedProgram, or a KeyError and the like
    from a malformed document, where it describes none)."""
    if entry.get("format") != FORMAT or entry.get("key") != key:
        raise DamagedProgram(f"format {entry.get('format')!r}, key {entry.get('key')!r}")
    target = compiler.target
    if entry["target"] != target.name:
        raise DamagedProgram(f"it is for target {entry['target']!r}")
    program = _program(entry["program"], compiler.program)
    values = [r for op in program.block for r in op.results]
    ops = list(program.block)
    names = NameTable(program)
    plan = _storage(entry["storage"], names, values)
    groups = [_group(g, ops, values) for g in entry["groups"]]
    memory = _memory(entry["memory"])
    source = entry["cuda_source"]
    units = tuple(entry["cuda_units"])
    module = None
    if source:
        module = compiler.load_sources(list(units) or [source])
    steps: list[Step] = []
    for step in entry["instructions"]:
        if step["kind"] == "kernel":
            steps.append(_kernel(step, module))
        else:
            op = ops[step["op"]]
            call = target.plan_library_op(op)
            steps.append(
                LibraryInstruction(step["group"], op, step["operands"], step["results"], call)
            )
    scope = compiler._bind_scope(plan, program, memory)
    return RuntimeProgram(steps, scope, program, groups, source, plan, {}, memory, cuda_units=units)


def _program(stored: Mapping[str, Any], given: Program) -> Program:
    """The program `stored` describes (`_describe_program`), with `given`'s parameters.
    Types and attributes are read by the parser from their printed text, each distinct
    text once: a 32-layer program's ops come back in milliseconds, where parsing its
    printed text took seconds."""
    program = Program()
    program.parameters = dict(given.parameters)
    program.source = given.source
    program.text_style = TextStyle(**stored["style"])
    types: dict[str, Type] = {}
    attributes: dict[tuple[str, str, str], Attribute] = {}
    every: list[Value] = []

    def type_of(text: str) -> Type:
        if text not in types:
            types[text] = parse_type(text)
        return types[text]

    def attribute(name: str, key: str, text: str) -> Attribute:
        memo = (name, key, text)
        if memo not in attributes:
            attributes[memo] = parse_attribute(text, name, key)
        return attributes[memo]

    def make(block: Any, ops: list[Any]) -> None:
        for name, operands, attrs, results, line, regions in ops:
            op = Operation.create(
                name,
                [None if i is None else every[i] for i in operands],
                [type_of(t) for t in results],
                {key: attribute(name, key, text) for key, text in attrs.items()},
                num_regions=len(regions),
                loc=Location(given.source, line) if line else None,
            )
            block.append(op)
            for region, inner in zip(op.regions, regions, strict=True):
                make(region.add_block(), inner)
            every.extend(op.results)

    make(program.block, stored["ops"])
    hints = stored["id_hints"]
    if len(hints) != len(every):
        raise DamagedProgram(f"{len(hints)} value numbers for {len(every)} values")
    for value, hint in zip(every, hints, strict=True):
        value.id_hint = None if hint is None else int(hint)
    values = [r for op in program.block for r in op.results]
    if stored["pinned"] is not None:
        program.pinned_outputs = [values[i] for i in stored["pinned"]]
    program.renumbered = {int(n): values[i] for n, i in stored["renumbered"]}
    return program


def _describe_program(program: Program, value_at: Any) -> dict[str, Any]:
    """The program as data: per op (nested ones in their region) its name, operands (as
    positions among the results of every op before it, in `Program.ops` order),
    attributes and result types as printed, its line; then what the text does not say:
    `id_hint`s, pinned outputs, renumbered values."""
    style = program.text_style
    position: dict[int, int] = {}

    def describe_ops(ops: Any) -> list[Any]:
        described = []
        for op in ops:
            operands = []
            for value in op.operand_values():
                if value is not None and id(value) not in position:
                    raise NotCacheable(f"an operand of {op.name} is defined by no op before it")
                operands.append(None if value is None else position[id(value)])
            regions = []
            for region in op.regions:
                if len(region.blocks) != 1:
                    raise NotCacheable(f"{op.name} has a region of {len(region.blocks)} blocks")
                regions.append(describe_ops(region.blocks[0]))
            for result in op.results:
                position[id(result)] = len(position)
            described.append(
                [
                    op.name,
                    operands,
                    {k: print_attribute(a, style) for k, a in op.attributes.items()},
                    [print_type(r.type, style) for r in op.results],
                    op.loc.line if op.loc is not None else 0,
                    regions,
                ]
            )
        return described

    return {
        "style": {
            "typed": style.typed,
            "tensor_prefix": style.tensor_prefix,
            "indent": style.indent,
        },
        "ops": describe_ops(program.block),
        "id_hints": [r.id_hint for op in program.ops() for r in op.results],
        "pinned": None
        if program.pinned_outputs is None
        else [value_at(v) for v in program.pinned_outputs],
        "renumbered": [[n, value_at(v)] for n, v in sorted(program.renumbered.items())],
    }


def _storage(stored: Mapping[str, Any], names: NameTable, values: list[Value]) -> StoragePlan:
    plan = StoragePlan(names)
    for name, index, item, printed in stored["variables"]:
        type_ = values[index].type
        if item is not None:
            if not isinstance(type_, VectorType):
                raise DamagedProgram(f"variable {name} is an item of a non-vector value")
            type_ = type_.types[item]
        if not isinstance(type_, DenseTensorType) or print_type(type_) != printed:
            raise DamagedProgram(f"variable {name} should be {printed}")
        plan.variables[name] = type_
    plan.feeds = {k: list(v) for k, v in stored["feeds"].items()}
    plan.parameters = {k: list(v) for k, v in stored["parameters"].items()}
    for index, storage in stored["values"]:
        plan.alias(values[index], storage)
    return plan


def _group(stored: Mapping[str, Any], ops: list[Any], values: list[Value]) -> Group:
    pattern = stored["reduce_pattern"]
    return Group(
        stored["name"],
        GroupKind(stored["kind"]),
        [ops[i] for i in stored["ops"]],
        [values[i] for i in stored["inputs"]],
        [values[i] for i in stored["outputs"]],
        None if pattern is None else ReducePattern.of(pattern[0], pattern[1]),
    )


def _memory(stored: Mapping[str, Any]) -> MemoryPlan:
    plan = MemoryPlan(
        int(stored["alignment"]),
        {r[0]: LiveRange(r[0], int(r[1]), int(r[2]), int(r[3])) for r in stored["ranges"]},
        {name: int(offset) for name, offset in stored["offsets"].items()},
        int(stored["arena_bytes"]),
        tuple(stored["outside"]),
        frozenset(InPlace(*p) for p in stored["declared"]),
        tuple(InPlace(*p) for p in stored["in_place"]),
    )
    check_plan(plan)
    return plan


def _kernel(stored: Mapping[str, Any], module: Any) -> Instruction:
    if module is None:
        raise DamagedProgram("a kernel instruction without CUDA source")
    return Instruction(
        stored["group"],
        module,
        stored["name"],
        tuple(stored["grid"]),
        tuple(stored["block"]),
        int(stored["shared_mem"]),
        tuple(stored["args"]),
        tuple(stored["outputs"]),
        tuple(Workspace(w[0], np.dtype(w[1]), tuple(w[2])) for w in stored["workspace"]),
        tuple((x, y) for x, y in stored["in_place"]),
        tuple((n, np.dtype(t).type(v)) for n, t, v in stored.get("scalars", ())),
    )


# ---------------------------------------------------------------------------------------------
# Storing


def store(key: str, runtime: RuntimeProgram) -> Path | None:
    """Write the entry of `runtime` (what `build` made) under `key`, then evict past the
    size bound; None when it was not written (a build this cache cannot describe, or a
    folder that cannot be written: a CacheWarning says so)."""
    try:
        content = json.dumps(describe(key, runtime), separators=(",", ":")).encode("utf-8")
    except NotCacheable:
        return None
    try:
        path = entry_path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with _lock():
            if cache.read_entry(path, key) is None:  # a concurrent compile's entry stays
                cache.write_entry(path, key, content)
                stats.count(misses=1)
            evict(limit_bytes(), keep=path)
    except OSError as error:
        _warn_unusable(error, "write")
        return None
    return path


def describe(key: str, runtime: RuntimeProgram) -> dict[str, Any]:
    """The JSON document of `runtime` (NotCacheable where something has no name in it)."""
    program = runtime.program
    if program is None or runtime.storage is None or runtime.memory is None:
        raise NotCacheable("the runtime program keeps no program, storage or memory plan")
    ops = {id(op): i for i, op in enumerate(program.block)}
    values = {id(r): i for i, r in enumerate(r for op in program.block for r in op.results)}

    def op_at(op: Any) -> int:
        if id(op) not in ops:
            raise NotCacheable(f"{op.name} is no op of the program's block")
        return ops[id(op)]

    def value_at(value: Value) -> int:
        if id(value) not in values:
            raise NotCacheable("a value that no op of the program's block defines")
        return values[id(value)]

    plan = runtime.storage
    if not isinstance(plan, StoragePlan):
        raise NotCacheable("the storage plan is not the driver's")
    by_buffer = {plan.names.buffer(r): r for op in program.block for r in op.results}
    variables = []
    for name, type_ in plan.variables.items():
        head, _, tail = name.rpartition("_")
        if name in by_buffer:
            value, item = by_buffer[name], None
        elif head in by_buffer and tail.isdigit():
            value, item = by_buffer[head], int(tail)
        else:
            raise NotCacheable(f"variable {name} names no value")
        variables.append([name, value_at(value), item, print_type(type_)])
    stored_values = [
        [value_at(r), plan.get(r)]
        for op in program.block
        for r in op.results
        if plan.get(r) is not None
    ]
    memory = runtime.memory
    described = _describe_program(program, value_at)
    if print_program(_program(described, program)) != print_program(program):
        raise NotCacheable("the program does not come back as it was")
    return {
        "format": FORMAT,
        "key": key,
        "cinn_py": cinn_py.__version__,
        "target": runtime.scope.target.name if runtime.scope is not None else "",
        "program": described,
        "groups": [
            {
                "name": g.name,
                "kind": g.kind.value,
                "ops": [op_at(op) for op in g.ops],
                "inputs": [value_at(v) for v in g.inputs],
                "outputs": [value_at(v) for v in g.outputs],
                "reduce_pattern": None
                if g.reduce_pattern is None
                else [list(g.reduce_pattern.shape), list(g.reduce_pattern.axes)],
            }
            for g in runtime.groups
        ],
        "storage": {
            "variables": variables,
            "feeds": plan.feeds,
            "parameters": plan.parameters,
            "values": stored_values,
        },
        "memory": {
            "alignment": memory.alignment,
            "ranges": [[r.name, r.nbytes, r.start, r.end] for r in memory.ranges.values()],
            "offsets": memory.offsets,
            "arena_bytes": memory.arena_bytes,
            "outside": list(memory.outside),
            "declared": sorted([p.input, p.output, p.step] for p in memory.declared),
            "in_place": [[p.input, p.output, p.step] for p in memory.in_place],
        },
        "instructions": [_describe_step(step, op_at) for step in runtime.instructions],
        "cuda_source": runtime.cuda_source,
        "cuda_units": list(runtime.cuda_units),
        "timings": runtime.timings,
    }


def _describe_step(step: Step, op_at: Any) -> dict[str, Any]:
    if isinstance(step, Instruction):
        return {
            "kind": "kernel",
            "group": step.group,
            "name": step.name,
            "grid": list(step.grid),
            "block": list(step.block),
            "shared_mem": step.shared_mem,
            "args": list(step.args),
            "outputs": list(step.outputs),
            "workspace": [[w.name, w.dtype.str, list(w.shape)] for w in step.workspace],
            "in_place": [list(p) for p in step.in_place],
            "scalars": [[n, v.dtype.str, int(v)] for n, v in step.scalars],
        }
    return {
        "kind": "library",
        "group": step.group,
        "op": op_at(step.op),
        "operands": step.operands,
        "results": step.results,
    }


@contextlib.contextmanager
def _lock() -> Iterator[None]:
    """The writers' lock (a file in `.locks/`, which `cache info` and `clear` skip)."""
    from filelock import FileLock

    folder = cache.cache_dir() / ".locks"
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / f"{KIND}.lock"), timeout=LOCK_TIMEOUT_S):
        yield


def evict(limit: int, keep: Path | None = None) -> int:
    """Remove the least recently used entries (oldest mtime first) until the entries
    take at most `limit` bytes; `keep` (the entry just written) is never removed.
    Returns how many were removed. Callers hold the lock."""
    folder = cache.cache_dir() / KIND
    entries = []
    for path in folder.glob(f"*{SUFFIX}"):
        if path.name.startswith(cache.TEMP_PREFIX):  # a writer's, not yet an entry
            continue
        with contextlib.suppress(FileNotFoundError):
            stat = path.stat()
            entries.append((stat.st_mtime_ns, path.name, stat.st_size, path))
    total = sum(e[2] for e in entries)
    removed = 0
    for _, _, nbytes, path in sorted(entries):
        if total <= limit:
            break
        if keep is not None and path == keep:
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed += 1
        total -= nbytes
    return removed


def _identity(path: Path) -> tuple[int, ...] | None:
    """What `cache.reject` compares before it removes an entry (None: there is none)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _warn_unusable(error: OSError, doing: str) -> None:
    folder = cache.cache_folder()
    reason = error.strerror or str(error)
    warnings.warn(
        f"cinn_py cache: cannot {doing} the compiled-program cache in {folder} ({reason}); "
        "compiling without it: set CINN_PY_CACHE_DIR to a writable folder, or "
        f"{SWITCH_ENV}=0 to turn the cache off",
        CacheWarning,
        stacklevel=3,
    )
