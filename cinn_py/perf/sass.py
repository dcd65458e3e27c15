"""SASS as `cuobjdump -sass` prints it, read into instructions, and what a thread executes.

`parse_sass(text)` gives one `SassFunction` per kernel. `analyze(function)` walks it:

- the *main path*: the instructions reachable from the entry (subroutines that only a
  `CALL` reaches, such as the IEEE divide's slow path, and the padding after the last
  `EXIT` are not), less the slow-path calls themselves (a forward conditional branch
  over a region holding a `CALL` and no memory access or barrier: the region is
  skipped, as the common case does). Both
  sides of every other conditional branch count, so a guarded tail and a grid
  reduction's last-block epilogue count as if every thread ran them;
- loops (a branch backwards), each run `trips` times. The trip count comes from the
  loop's counter where ptxas left the usual shape (a register stepped by a constant and
  compared with a constant, set to a constant before the loop: `counter`), else from
  the bytes the loop must load (`loads`: the kernel's input bytes shared out over its
  threads, less what is loaded outside loops, over what one pass loads: an estimate
  that misses re-reads), else 1 (`unknown`);
- global loads and stores by width (`LDG.E.128` is a 16-byte load), weighted by trips;
- the load bytes a thread has in flight at most: loads issued and not yet used.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_INSTRUCTION = re.compile(
    r"^\s*/\*(?P<address>[0-9a-fA-F]{4,})\*/\s*"
    r"(?:(?P<predicate>@!?U?P[0-9T])\s+)?"
    r"(?P<opcode>[A-Z][A-Z0-9_.]*)"
    r"(?P<operands>[^;]*);"
)
_LABEL = re.compile(r"^\s*(?P<label>\.L_[A-Za-z0-9_]+):")
_REGISTER = re.compile(r"(?<![A-Za-z0-9_])R(\d+)(?:\.(64|128))?")
_HEX = re.compile(r"^-?0x[0-9a-fA-F]+$")

GLOBAL_LOADS = frozenset({"LDG", "LD", "LDGSTS"})
GLOBAL_STORES = frozenset({"STG", "ST"})
GLOBAL_ATOMICS = frozenset({"ATOMG", "ATOM", "RED"})
LOCAL_ACCESSES = frozenset({"LDL", "STL"})
"""Local memory: register spills and stack arrays."""
_WIDTHS = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8, "128": 16}
_ENDS = frozenset({"EXIT", "BRA", "RET", "JMP", "BRX", "JMX"})
_BRANCHES = frozenset({"BRA", "JMP"})
_MAX_TRIPS = 1 << 24


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: address, guard predicate ("" or "@!P0"), the mnemonic with
    its modifiers ("LDG.E.128.CONSTANT") and the operands as printed."""

    address: int
    predicate: str
    opcode: str
    operands: tuple[str, ...]

    @property
    def base(self) -> str:
        """The mnemonic without modifiers: "LDG"."""
        return self.opcode.split(".", 1)[0]

    @property
    def modifiers(self) -> tuple[str, ...]:
        return tuple(self.opcode.split(".")[1:])

    @property
    def conditional(self) -> bool:
        return self.predicate not in ("", "@PT")

    @property
    def width(self) -> int:
        """Bytes a memory instruction moves per thread (4 unless a size modifier says)."""
        for modifier in self.modifiers:
            if modifier in _WIDTHS:
                return _WIDTHS[modifier]
        return 4

    @property
    def memory(self) -> str | None:
        """The kind of a memory instruction: "load", "store" or "atomic" (global), "local",
        or None for any other instruction."""
        if self.base in GLOBAL_LOADS:
            return "load"
        if self.base in GLOBAL_STORES:
            return "store"
        if self.base in GLOBAL_ATOMICS:
            return "atomic"
        if self.base in LOCAL_ACCESSES:
            return "local"
        return None


@dataclass(frozen=True)
class SassFunction:
    name: str
    instructions: tuple[Instruction, ...]


@dataclass(frozen=True)
class Loop:
    """A loop of the main path: the addresses of its first instruction and of the branch
    back, how many times it runs, and how that was found."""

    start: int
    end: int
    trips: int
    how: str
    """How the trips were found: "counter", "loads" or "unknown" (then trips is 1)."""


@dataclass
class SassStats:
    """What one thread executes, per `analyze`."""

    instructions: int
    """Main-path instructions a thread executes, loops counted `trips` times."""
    static_instructions: int
    """Instructions in the function, padding (NOP, the closing self-branch) left out."""
    loops: list[Loop] = field(default_factory=list)
    loads: Counter[int] = field(default_factory=Counter)
    """Global loads a thread executes, by width in bytes."""
    stores: Counter[int] = field(default_factory=Counter)
    """Global stores (atomics included) a thread executes, by width in bytes."""
    lane_stores: Counter[tuple[str, int]] = field(default_factory=Counter)
    """Global stores only the threads with threadIdx.<axis> == 0 execute (behind an exit
    or a branch on that index, or predicated on it), by (axis "x" / "y" / "z", width):
    a row's total stored by one thread of the row. Not in `stores`."""
    local_bytes: int = 0
    """Local-memory bytes a thread moves (spills, stack arrays)."""
    inflight_bytes: int = 0
    """The most global-load bytes one thread has issued and not yet used."""

    @property
    def load_bytes(self) -> int:
        return sum(width * count for width, count in self.loads.items())

    @property
    def store_bytes(self) -> int:
        return sum(width * count for width, count in self.stores.items())

    def lane_store_bytes(self, axis: str) -> int:
        """Bytes of the stores only threadIdx.<axis> == 0 executes, for one such thread."""
        return sum(width * count for (a, width), count in self.lane_stores.items() if a == axis)


# ---- parsing -------------------------------------------------------------------------------


def parse_sass(text: str) -> dict[str, SassFunction]:
    """Each function of `cuobjdump -sass` output, by name, in order. Branch targets that
    cuobjdump prints as labels (`(.L_x_3)`) are replaced by their addresses."""
    functions: dict[str, SassFunction] = {}
    name: str | None = None
    rows: list[tuple[int, str, str, str]] = []
    labels: dict[str, int] = {}
    pending: list[str] = []

    def close() -> None:
        if name is not None:
            functions[name] = SassFunction(name, tuple(_instruction(r, labels) for r in rows))

    for line in text.splitlines():
        header = _FUNCTION.match(line)
        if header:
            close()
            name, rows, labels, pending = header.group(1), [], {}, []
            continue
        label = _LABEL.match(line)
        if label:
            pending.append(label.group("label"))
            continue
        match = _INSTRUCTION.match(line)
        if match is None or name is None:
            continue
        address = int(match.group("address"), 16)
        for waiting in pending:
            labels[waiting] = address
        pending = []
        rows.append(
            (address, match.group("predicate") or "", match.group("opcode"), match["operands"])
        )
    close()
    return functions


def _instruction(row: tuple[int, str, str, str], labels: dict[str, int]) -> Instruction:
    address, predicate, opcode, text = row
    operands = tuple(part.strip() for part in _split_operands(text) if part.strip())
    if opcode.split(".", 1)[0] in _BRANCHES | {"CALL", "BSSY", "BREAK", "SSY"} and operands:
        target = operands[-1].strip("`() ")
        if target in labels:
            operands = (*operands[:-1], hex(labels[target]))
    return Instruction(address, predicate, opcode, operands)


def _split_operands(text: str) -> list[str]:
    """Operands split at top-level commas (not those inside `[...]` or `{...}`)."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def branch_target(instruction: Instruction) -> int | None:
    """The address a BRA / CALL jumps to (its last operand), else None."""
    if instruction.base not in _BRANCHES | {"CALL"} or not instruction.operands:
        return None
    last = instruction.operands[-1]
    return int(last, 16) if _HEX.match(last) else None


def _immediate(text: str) -> int | None:
    """An integer immediate as a signed 32-bit value (`0xffffffff` is -1), else None."""
    text = text.strip()
    if text in ("RZ", "URZ", "SRZ"):
        return 0
    if _HEX.match(text):
        value = int(text, 16) & 0xFFFFFFFF
    elif re.fullmatch(r"-?\d+", text):
        value = int(text) & 0xFFFFFFFF
    else:
        return None
    return value - (1 << 32) if value >= 1 << 31 else value


# ---- the main path -------------------------------------------------------------------------


def _padding(instruction: Instruction) -> bool:
    return instruction.base == "NOP" or (
        instruction.base == "BRA"
        and not instruction.conditional
        and branch_target(instruction) == instruction.address
    )


def _position(code: Sequence[Instruction], address: int | None) -> int | None:
    """The index in `code` of the first instruction at or after `address` (a branch into
    padding lands on what follows it), None past the end."""
    if address is None:
        return None
    n = bisect.bisect_left([i.address for i in code], address)
    return n if n < len(code) else None


def main_path(function: SassFunction) -> list[Instruction]:
    """The instructions of the main path, in address order (see the module's docstring)."""
    code = [i for i in function.instructions if not _padding(i)]
    reached: set[int] = set()
    work = [0] if code else []
    while work:
        n = work.pop()
        if n in reached or n >= len(code):
            continue
        reached.add(n)
        instruction = code[n]
        target = _position(code, branch_target(instruction))
        if instruction.base in _BRANCHES and target is not None:
            work.append(target)
        if instruction.conditional or instruction.base not in _ENDS:
            work.append(n + 1)
    skipped: set[int] = set()
    for n in sorted(reached):
        instruction = code[n]
        if instruction.base != "BRA" or not instruction.conditional:
            continue
        target = _position(code, branch_target(instruction))
        if target is None or target <= n:
            continue
        region = range(n + 1, target)
        if _slow_path(code[m] for m in region):
            skipped.update(region)
    return [code[n] for n in sorted(reached - skipped)]


def _slow_path(region: Iterable[Instruction]) -> bool:
    """Whether a region a forward branch may skip is a slow path: it calls a subroutine
    (the IEEE divide's) and touches no global memory and no barrier. A guard around a
    whole row (a persistent grid's `row < rows`) also holds the divide's call, and is
    the common case, not the slow one."""
    found = list(region)
    return any(i.base == "CALL" for i in found) and not any(
        i.memory is not None or i.base in ("BAR", "MEMBAR") for i in found
    )


# ---- loops ---------------------------------------------------------------------------------


def _writes(instruction: Instruction, register: str) -> bool:
    """Whether `instruction` writes `register` (its first operand, for the instructions
    that set a counter or a predicate)."""
    if not instruction.operands or instruction.memory in ("store",):
        return False
    first = instruction.operands[0].split(".")[0]
    return first == register or (
        instruction.base in ("ISETP", "UISETP", "PLOP3", "FSETP", "DSETP", "HSETP2")
        and len(instruction.operands) > 1
        and instruction.operands[1] == register
    )


def _counter_trips(body: Sequence[Instruction], before: Sequence[Instruction]) -> int | None:
    """The passes of the loop `body` (its instructions in address order, the branch back
    last) read from its counter, with `before` the instructions ahead of the loop; None
    when the loop is not of the shape this reads."""
    back = body[-1]
    conditions: list[tuple[int, bool]] = []
    """(index in body of a branch that decides, whether its predicate true means go on)."""
    if back.conditional:
        conditions.append((len(body) - 1, not back.predicate.startswith("@!")))
    start, end = body[0].address, back.address
    for n, instruction in enumerate(body[:-1]):
        if not instruction.conditional:
            continue
        target = branch_target(instruction)
        leaves = instruction.base == "EXIT" or (
            instruction.base == "BRA" and target is not None and not start <= target <= end
        )
        if leaves:
            conditions.append((n, instruction.predicate.startswith("@!")))
    for n, true_continues in conditions:
        trips = _trips_of_condition(body, n, true_continues, before)
        if trips is not None:
            return trips
    return None


def _trips_of_condition(
    body: Sequence[Instruction], n: int, true_continues: bool, before: Sequence[Instruction]
) -> int | None:
    predicate = body[n].predicate.lstrip("@!")
    compare_at, compare = _last_writer(body[:n], predicate)
    if compare is not None and compare.base == "PLOP3":  # P = UP: PLOP3.LUT P, PT, PT, PT, UP
        sources = [p for p in compare.operands[2:5] if p not in ("PT", "UPT")]
        if len(compare.operands) != 7 or compare.operands[5] != "0x80":
            return None
        if len(sources) != 1 or not sources[0].startswith("UP"):
            return None
        compare_at, compare = _last_writer(body[:compare_at], sources[0])
    if compare is None or compare.base not in ("ISETP", "UISETP") or len(compare.operands) != 5:
        return None
    relation, *rest = compare.modifiers
    if compare.operands[1] not in ("PT", "UPT") or compare.operands[4] not in ("PT", "UPT"):
        return None
    if "EX" in rest or relation not in ("NE", "EQ", "LT", "LE", "GT", "GE"):
        return None
    counter = compare.operands[2].split(".")[0]
    bound = _immediate(compare.operands[3])
    steps = [(m, i) for m, i in enumerate(body) if _writes(i, counter)]
    if bound is None or len(steps) != 1:
        return None
    step_at, step_op = steps[0]
    step = _step_of(step_op, counter)
    _, setter = _last_writer(before, counter)
    init = None if setter is None else _constant_of(setter)
    if step is None or step == 0 or init is None:
        return None
    unsigned = "U32" in rest
    first = init if compare_at < step_at else init + step

    def goes_on(k: int) -> bool:
        value = (first + k * step) & 0xFFFFFFFF
        if not unsigned and value >= 1 << 31:
            value -= 1 << 32
        limit = bound & 0xFFFFFFFF if unsigned else bound
        holds = {
            "NE": value != limit,
            "EQ": value == limit,
            "LT": value < limit,
            "LE": value <= limit,
            "GT": value > limit,
            "GE": value >= limit,
        }[relation]
        return holds == true_continues

    return _first_false(goes_on, relation, first, step, bound)


def _first_false(goes_on, relation: str, first: int, step: int, bound: int) -> int | None:
    """The passes until `goes_on(k)` is first false (k counts from 0): k + 1."""
    if relation in ("NE", "EQ") and goes_on(0):
        distance = bound - first
        if distance % step or distance // step < 0:
            return None
        k = distance // step
        return k + 1 if k < _MAX_TRIPS and not goes_on(k) else None
    if not goes_on(0):
        return 1
    low, high = 0, 1
    while goes_on(high):
        low, high = high, high * 2
        if high > _MAX_TRIPS:
            return None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if goes_on(middle) else (low, middle)
    return high + 1


def _last_writer(
    instructions: Sequence[Instruction], register: str
) -> tuple[int, Instruction | None]:
    for n in range(len(instructions) - 1, -1, -1):
        if _writes(instructions[n], register):
            return n, instructions[n]
    return -1, None


def _step_of(instruction: Instruction, counter: str) -> int | None:
    """The constant `instruction` adds to `counter` (IADD3 / VIADD / UIADD3 c, c, imm)."""
    if instruction.base not in ("IADD3", "UIADD3", "VIADD"):
        return None
    operands = [o.split(".")[0] for o in instruction.operands]
    sources = [o for o in operands[1:] if o not in ("RZ", "URZ")]
    if len(sources) != 2 or counter not in sources:
        return None
    other = sources[1] if sources[0] == counter else sources[0]
    return _immediate(other)


def _constant_of(instruction: Instruction) -> int | None:
    """The constant `instruction` sets its destination to, if it does."""
    base, operands = instruction.base, instruction.operands
    if instruction.conditional:
        return None
    if base in ("MOV", "MOV32I", "UMOV") and len(operands) >= 2:
        return _immediate(operands[1])
    if instruction.opcode == "IMAD.MOV.U32" and operands[1:3] == ("RZ", "RZ"):
        return _immediate(operands[3])
    if base == "CS2R" and operands[1:] == ("SRZ",):
        return 0
    if instruction.opcode == "HFMA2.MMA" and operands[1:3] == ("-RZ", "RZ"):
        return _half_pair(operands[3], operands[4]) if len(operands) == 5 else None
    return None


def _half_pair(high: str, low: str) -> int | None:
    """The 32 bits that two float16 immediates spell (ptxas sets integers this way)."""
    try:
        bits = [int(np.array(float(h), dtype=np.float16).view(np.uint16)) for h in (high, low)]
    except ValueError:
        return None
    value = (bits[0] << 16) | bits[1]
    return value - (1 << 32) if value >= 1 << 31 else value


def _loops(path: Sequence[Instruction]) -> list[tuple[int, int]]:
    """(index of the first instruction, index of the branch back) of each loop in `path`."""
    found = []
    for n, instruction in enumerate(path):
        target = branch_target(instruction)
        if instruction.base == "BRA" and target is not None and target < instruction.address:
            first = _position(path, target)
            if first is not None and first < n:
                found.append((first, n))
    return found


# ---- the analysis --------------------------------------------------------------------------


def analyze(function: SassFunction, load_bytes_per_thread: float | None = None) -> SassStats:
    """What one thread executes on `function`'s main path. `load_bytes_per_thread` (the
    kernel's input bytes over its threads) sizes the loops whose counter cannot be read."""
    path = main_path(function)
    spans = _loops(path)
    trips: dict[tuple[int, int], tuple[int, str]] = {}
    for first, last in spans:
        counted = _counter_trips(path[first : last + 1], path[:first])
        if counted is not None:
            trips[(first, last)] = (counted, "counter")
    unknown = [span for span in spans if span not in trips]
    if unknown and load_bytes_per_thread is not None:
        _size_by_loads(path, spans, trips, unknown, load_bytes_per_thread)
    for span in unknown:
        trips.setdefault(span, (1, "unknown"))
    weights = [1] * len(path)
    for (first, last), (count, _) in trips.items():
        for n in range(first, last + 1):
            weights[n] *= count
    stats = SassStats(
        instructions=sum(weights),
        static_instructions=sum(1 for i in function.instructions if not _padding(i)),
        loops=[
            Loop(path[first].address, path[last].address, *trips[(first, last)])
            for first, last in spans
        ],
    )
    lane_zero = lane_zero_instructions(path)
    for n, (instruction, weight) in enumerate(zip(path, weights, strict=True)):
        kind = instruction.memory
        if kind == "load":
            stats.loads[instruction.width] += weight
        elif kind in ("store", "atomic") and n in lane_zero:
            stats.lane_stores[(lane_zero[n], instruction.width)] += weight
        elif kind in ("store", "atomic"):
            stats.stores[instruction.width] += weight
        elif kind == "local":
            stats.local_bytes += instruction.width * weight
    stats.inflight_bytes = inflight_load_bytes(path)
    return stats


_THREAD_INDEX = re.compile(r"^SR_TID\.([XYZ])$")
_SET_PREDICATE = frozenset({"ISETP", "PLOP3", "FSETP", "DSETP", "HSETP2", "UISETP"})


def lane_zero_instructions(path: Sequence[Instruction]) -> dict[int, str]:
    """The indices in `path` of the instructions that only the threads with
    threadIdx.<axis> == 0 execute, with that axis ("x", "y", "z"): the schedule's
    `if (threadIdx.x < 1)` around a row's total, as ptxas leaves it. A predicate is
    read as "threadIdx.<axis> != 0" when an `ISETP` compares an `S2R SR_TID.<axis>`
    register with zero (NE or GT against 0, GE against 1), or as "== 0" (EQ against
    0, LT against 1); the lane-zero code is what follows an exit the "!= 0" predicate
    takes, what a forward branch on it skips, and an instruction predicated on "== 0"."""
    indices: dict[str, str] = {}
    nonzero: dict[str, tuple[str, bool]] = {}
    """Predicate -> (axis, whether true means threadIdx.<axis> != 0)."""
    after_exit: str | None = None
    skipped: dict[int, str] = {}
    lane_zero: dict[int, str] = {}
    for n, instruction in enumerate(path):
        guard = _guard_axis(instruction, nonzero)
        axis = after_exit or skipped.get(n) or (guard if instruction.base not in _ENDS else None)
        if axis is not None:
            lane_zero[n] = axis
        if guard is not None and instruction.base == "EXIT":
            after_exit = after_exit or guard
        elif guard is not None and instruction.base in _BRANCHES:
            target = branch_target(instruction)
            for m in range(n + 1, len(path)):
                if target is None or path[m].address >= target:
                    break
                skipped.setdefault(m, guard)
        ops = instruction.operands
        if not ops:
            continue
        first = ops[0].split(".")[0]
        tid = _THREAD_INDEX.match(ops[1]) if instruction.base == "S2R" and len(ops) > 1 else None
        if tid is not None:
            indices[first] = tid.group(1).lower()
            continue
        if instruction.base in _SET_PREDICATE:
            nonzero.pop(first, None)
            read = _thread_index_test(instruction, indices)
            if read is not None:
                nonzero[first] = read
        elif instruction.memory not in ("store", "atomic"):
            indices.pop(first, None)
    return lane_zero


def _guard_axis(instruction: Instruction, nonzero: dict[str, tuple[str, bool]]) -> str | None:
    """The axis whose lane 0 alone runs `instruction` past its predicate: an EXIT or
    BRA taken where threadIdx != 0, any other instruction executed where it is 0."""
    if not instruction.conditional:
        return None
    negated = instruction.predicate.startswith("@!")
    read = nonzero.get(instruction.predicate.lstrip("@!"))
    if read is None:
        return None
    axis, true_is_nonzero = read
    runs_where_nonzero = true_is_nonzero != negated
    leaves = instruction.base == "EXIT" or instruction.base in _BRANCHES
    return axis if runs_where_nonzero == leaves else None


def _thread_index_test(
    instruction: Instruction, indices: dict[str, str]
) -> tuple[str, bool] | None:
    """(axis, whether true means threadIdx.<axis> != 0) for an `ISETP` that compares a
    thread index register with 0 or 1 and combines with nothing (`PT`), else None."""
    ops = instruction.operands
    mods = instruction.modifiers
    if instruction.base != "ISETP" or len(ops) != 5 or ops[1] != "PT" or ops[4] != "PT":
        return None
    axis = indices.get(ops[2])
    bound = _immediate(ops[3])
    if axis is None or bound is None or "AND" not in mods:
        return None
    tests = {("NE", 0): True, ("GT", 0): True, ("GE", 1): True, ("EQ", 0): False, ("LT", 1): False}
    for cmp in ("NE", "GT", "GE", "EQ", "LT"):
        if cmp in mods and (cmp, bound) in tests:
            return axis, tests[(cmp, bound)]
    return None


def _size_by_loads(
    path: Sequence[Instruction],
    spans: list[tuple[int, int]],
    trips: dict[tuple[int, int], tuple[int, str]],
    unknown: list[tuple[int, int]],
    per_thread: float,
) -> None:
    """Trips for the `unknown` loops that load: the same for each, so that the thread
    loads `per_thread` bytes in all."""

    def loaded(first: int, last: int) -> int:
        return sum(i.width for i in path[first : last + 1] if i.memory == "load")

    inside = {n for first, last in spans for n in range(first, last + 1)}
    outside = sum(i.width for n, i in enumerate(path) if n not in inside and i.memory == "load")
    known = sum(loaded(*span) * trips[span][0] for span in trips)
    per_pass = sum(loaded(*span) for span in unknown)
    if per_pass == 0:
        return
    count = max(1, round((per_thread - outside - known) / per_pass))
    for span in unknown:
        if loaded(*span):
            trips[span] = (count, "loads")


def _registers(operand: str) -> Iterable[str]:
    for match in _REGISTER.finditer(operand):
        number, wide = int(match.group(1)), match.group(2)
        for k in range(int(wide) // 32 if wide else 1):
            yield f"R{number + k}"


def inflight_load_bytes(path: Sequence[Instruction]) -> int:
    """The most global-load bytes one thread has issued and not used yet, scanning `path`
    once in address order: a load is in flight from its issue until an instruction reads
    one of the registers it fills."""
    pending: dict[str, int] = {}
    """A destination register of a load in flight -> the load's number."""
    sizes: dict[int, int] = {}
    most = 0
    for number, instruction in enumerate(path):
        kind = instruction.memory
        operands = instruction.operands
        sources = operands if kind in ("store", "atomic") else operands[1:]
        used = {pending[r] for operand in sources for r in _registers(operand) if r in pending}
        for load in used:
            del sizes[load]
        pending = {r: load for r, load in pending.items() if load not in used}
        if kind == "load" and instruction.base != "LDGSTS" and operands:
            first = _REGISTER.match(operands[0].lstrip("-|"))
            if first:
                base = int(first.group(1))
                for k in range(max(1, math.ceil(instruction.width / 4))):
                    pending[f"R{base + k}"] = number
            sizes[number] = instruction.width
        elif kind == "load":
            sizes[number] = instruction.width
        most = max(most, sum(sizes.values()))
    return most
