"""sync_threads: a barrier every thread of a thread block reaches (CINN's SyncThreads),
and the check that shared memory has the barriers it needs.

The threads of a block exchange values through shared memory: one thread stores an
element, another loads it. On the GPU they run at once, so the load must wait for the
store: `__syncthreads()` between them, a barrier every thread of the block must reach
(one in a branch that some threads skip hangs the others, or is undefined behaviour).
The interpreter runs bound loops one after another, so there a missing barrier changes
nothing; only the GPU (or cuda-emu, whose threads are fibers) shows the race, and not
every time. Hence a primitive that puts barriers only where all threads run, and a
checker that every scheduled function goes through.

Where all threads run: the statement sequences of the function body and of the loops
that every thread of a block runs alike: serial and unrolled loops, and loops bound to
blockIdx (one iteration per thread block). A loop bound to threadIdx is the threads
themselves, an `if` may be taken by some threads only, a vectorized loop is the lanes
of one thread. So `sync_threads` climbs out of every threadIdx loop around the block or
loop it is given and puts the barrier next to that whole nest:

    thread_bind[threadIdx.x] for (t, 0, 64)        thread_bind[threadIdx.x] for (t, 0, 64)
      ScheduleBlock(x_shared) ...           ->       ScheduleBlock(x_shared) ...
    thread_bind[threadIdx.x] for (u, 0, 64)        __syncthreads()
      ScheduleBlock(y) ... x_shared[63 - u]        thread_bind[threadIdx.x] for (u, 0, 64)
                                                     ScheduleBlock(y) ... x_shared[63 - u]

and refuses a place inside an `if` (whether every thread takes it is not proven) or a
vectorized or parallel loop. Next to a barrier already there it adds none.

`check_barriers` walks each of those sequences in execution order. A statement of one
that is not itself such a sequence (a threadIdx nest, a schedule block, an `if`) is a
unit: its threads run it each at its own pace. A unit that loads a shared buffer an
earlier unit stored, or stores one an earlier unit loaded or stored, with no barrier
between them, races; a serial loop's body is walked twice, so iteration k + 1's stores
after iteration k's loads are found too. Accesses need no barrier when they all name
one element per thread: the same indices (iter values substituted, each thread-bound
loop var turned into its axis, unit loops into their start) that mention every threadIdx
axis the function binds; each thread then reads only what it wrote itself. Within one
unit, where no barrier can go, a shared buffer that is stored and also loaded (or stored
twice) must be accessed that way. A barrier inside a unit (in a threadIdx loop or an
`if`) is reported too. Only shared buffers are checked: a local buffer is each thread's
own registers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cinn_py.errors import ScheduleError
from cinn_py.ir.expr import Buffer, Expr, IntImm, MemoryType, Tensor, Var
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule.analysis import (
    ROOT,
    all_loads,
    block_names,
    find_loop,
    find_realize,
    replace,
    substitute,
    var_names,
    walk,
)
from cinn_py.ir.schedule.refs import BlockRef, LoopRef
from cinn_py.ir.stmt import (
    Block,
    For,
    ForType,
    IfThenElse,
    Let,
    LoweredFunc,
    ScheduleBlockRealize,
    Store,
    SyncThreads,
)
from cinn_py.ir.visitor import structural_key

PRIMITIVE = "sync_threads"


def sync_threads(func: LoweredFunc, ref: BlockRef | LoopRef, after: bool = True) -> LoweredFunc:
    """`func` with a `SyncThreads` right after (or, `after=False`, before) block or loop
    `ref`, or after the outermost loop bound to threadIdx around it; the same object
    when a barrier is already there."""
    if isinstance(ref, LoopRef):
        node, path = find_loop(func, ref.name, PRIMITIVE)
        block, what = block_names(node), f"loop {ref.name}"
    else:
        node, path = find_realize(func, ref.name, PRIMITIVE)
        block, what = ref.name, f"block {ref.name}"
    if not isinstance(after, bool):
        raise ScheduleError(PRIMITIVE, block, f"after must be True or False, got {after!r}")
    chain = (*path, node)  # chain[0] is the function
    start = next((k for k, n in enumerate(chain) if _thread_loop(n)), len(chain) - 1)
    anchor, parent = chain[start], chain[start - 1]
    for outer in chain[1:start]:
        why = _divergent(outer)
        if why is not None:
            raise ScheduleError(
                PRIMITIVE,
                block,
                f"{what} is {why}: no place there that every thread of the block reaches",
            )
    if not isinstance(parent, Block):
        pair = [anchor, SyncThreads()] if after else [SyncThreads(), anchor]
        return replace(func, anchor, Block(pair))
    stmts = list(parent.stmts)
    at = next(k for k, stmt in enumerate(stmts) if stmt is anchor)
    beside = at + 1 if after else at - 1
    if 0 <= beside < len(stmts) and isinstance(stmts[beside], SyncThreads):
        return func
    stmts.insert(at + 1 if after else at, SyncThreads())
    return replace(func, parent, Block(stmts))


def barrier_problem(func: LoweredFunc) -> str | None:
    """The first race on a shared buffer that a missing barrier leaves in `func`, or a
    barrier that not every thread reaches; None when there is neither."""
    try:
        check_barriers(func)
    except ScheduleError as error:
        return error.why
    return None


def check_barriers(func: LoweredFunc) -> None:
    """Raises ScheduleError(sync_threads, block, why) for the first race on a shared
    buffer that a missing barrier leaves in `func`, or a barrier that not every thread
    of the block reaches."""
    shared = any(b.memory_type is MemoryType.SHARED for b in func.temp_buffers)
    if shared or any(isinstance(node, SyncThreads) for node, _ in walk(func)):
        _Checker(func).sequence(func.body, {})


def _thread_loop(node: object) -> bool:
    return (
        isinstance(node, For)
        and node.bind_info is not None
        and node.bind_info.value.startswith("threadIdx")
    )


def _uniform_loop(node: For) -> bool:
    """Whether every thread of a block runs the loop's iterations alike."""
    if node.bind_info is not None:
        return not _thread_loop(node)
    return node.for_type in (ForType.SERIAL, ForType.UNROLLED)


def _divergent(node: object) -> str | None:
    """Why not every thread of a block runs what is inside `node` together, or None."""
    if isinstance(node, IfThenElse):
        return f"inside if ({print_ir(node.condition)}), which not every thread may take"
    if isinstance(node, For) and not _uniform_loop(node):
        if node.bind_info is not None:
            return f"inside loop {node.loop_var.name} bound to {node.bind_info.value}"
        return f"inside {node.for_type.value} loop {node.loop_var.name}"
    return None


def _shared_name(tensor: Buffer | Tensor) -> str | None:
    """The name of the shared buffer a Load or Store touches, None for other memory."""
    buffer = tensor.buffer if isinstance(tensor, Tensor) else tensor
    if buffer is not None and buffer.memory_type is MemoryType.SHARED:
        return buffer.name
    return None


@dataclass(frozen=True)
class _Access:
    """A load or store of a shared buffer: its indices as every thread computes them
    (`key`, structural) and the Vars they name."""

    buffer: str
    block: str
    write: bool
    key: tuple
    names: frozenset[str]


@dataclass
class _Use:
    """A shared buffer's accesses since the last barrier: the last block that stored it
    and the last that loaded it (with the step of the walk it happened at), and the
    Vars of every index key."""

    writer: tuple[str, int] | None = None
    reader: tuple[str, int] | None = None
    keys: dict[tuple, frozenset[str]] = field(default_factory=dict)


class _Checker:
    """Walks the uniform statement sequences of a function in execution order, keeping
    each shared buffer's accesses since the last barrier."""

    def __init__(self, func: LoweredFunc) -> None:
        self.uses: dict[str, _Use] = {}
        self.step = 0
        self.first_step: dict[int, int] = {}
        """The step each unit was first walked at (by `id`): an access recorded later
        than that, met when walking the unit again, is from the previous iteration."""
        self.thread_axes = {
            node.bind_info.value
            for node, _ in walk(func)
            if _thread_loop(node) and not _unit_loop(node)
        }

    def sequence(self, stmt: object, env: dict[str, Expr]) -> None:
        """Walks `stmt`, run by every thread of the block alike."""
        if isinstance(stmt, SyncThreads):
            self.uses.clear()
        elif isinstance(stmt, Block):
            for item in stmt.stmts:
                self.sequence(item, env)
        elif isinstance(stmt, For) and _uniform_loop(stmt):
            inner = _loop_env(stmt, env)
            walks = 1 if stmt.bind_info is not None or _unit_loop(stmt) else 2
            for _ in range(walks):
                self.sequence(stmt.body, inner)
        elif isinstance(stmt, ScheduleBlockRealize) and _holds_statements(stmt):
            self.sequence(stmt.schedule_block.body, _realize_env(stmt, env))
        else:
            self.unit(stmt, env)

    def unit(self, stmt: object, env: dict[str, Expr]) -> None:
        self.step += 1
        first = self.first_step.setdefault(id(stmt), self.step)
        accesses: list[_Access] = []
        _collect(stmt, env, block_names(stmt), [], accesses)
        for name in dict.fromkeys(a.buffer for a in accesses):
            mine = [a for a in accesses if a.buffer == name]
            use = self.uses.setdefault(name, _Use())
            keys = {a.key: a.names for a in mine}
            if not self.own_element({**use.keys, **keys}):
                self.across(name, mine, use, first)
            if not self.own_element(keys):
                self.within(name, mine)
            use.keys.update(keys)
            for access in mine:
                if access.write:
                    use.writer = (access.block, self.step)
                else:
                    use.reader = (access.block, self.step)

    def own_element(self, keys: dict[tuple, frozenset[str]]) -> bool:
        """Whether accesses at `keys` touch one element per thread, each its own."""
        return len(keys) == 1 and self.thread_axes <= next(iter(keys.values()))

    def across(self, name: str, mine: list[_Access], use: _Use, first: int) -> None:
        """A race between the unit's accesses and an earlier unit's."""
        hazards = [(a, "wrote", use.writer) for a in mine if not a.write and use.writer is not None]
        hazards += [(a, "read", use.reader) for a in mine if a.write and use.reader is not None]
        hazards += [(a, "wrote", use.writer) for a in mine if a.write and use.writer is not None]
        if not hazards:
            return
        access, verb, (earlier, step) = hazards[0]
        when = " in the previous iteration" if step > first else ""
        raise ScheduleError(
            PRIMITIVE,
            access.block,
            f"block {access.block} {'writes' if access.write else 'reads'} shared buffer "
            f"{name} that block {earlier} {verb}{when} with no __syncthreads() between them "
            f"(add sync_threads after {earlier})",
        )

    def within(self, name: str, mine: list[_Access]) -> None:
        """A race inside one unit, where no barrier can go."""
        writes = [a for a in mine if a.write]
        reads = [a for a in mine if not a.write]
        if not writes or not (reads or len(writes) > 1):
            return
        later = reads[0] if reads else writes[1]
        raise ScheduleError(
            PRIMITIVE,
            later.block,
            f"block {later.block} {'reads' if reads else 'writes'} shared buffer {name} "
            f"that block {writes[0].block} wrote, inside one statement that every thread "
            "runs on its own (no __syncthreads() can go between them); each thread may "
            "touch only its own element there, or the blocks must be in separate "
            "thread-bound nests with a sync_threads between them",
        )


def _unit_loop(node: For) -> bool:
    return isinstance(node.extent, IntImm) and node.extent.value == 1


def _holds_statements(realize: ScheduleBlockRealize) -> bool:
    """Whether a block holds loops, blocks or barriers (the root does), not only the
    stores of one computation."""
    if realize.schedule_block.name == ROOT:
        return True
    return any(
        isinstance(node, For | ScheduleBlockRealize | SyncThreads)
        for node, _ in walk(realize.schedule_block.body)
    )


def _loop_env(loop: For, env: dict[str, Expr]) -> dict[str, Expr]:
    """`env` with the loop var as every thread sees it: a unit loop's start, a bound
    loop's axis (so that accesses of different loops on one thread compare equal)."""
    var = loop.loop_var
    if _unit_loop(loop):
        return {**env, var.name: substitute(loop.min, env)}
    if loop.bind_info is not None:
        return {**env, var.name: Var(loop.bind_info.value, var.dtype)}
    return env


def _realize_env(realize: ScheduleBlockRealize, env: dict[str, Expr]) -> dict[str, Expr]:
    ivs = realize.schedule_block.iter_vars
    values = (substitute(v, env) for v in realize.iter_values)
    return {**env, **{iv.name: value for iv, value in zip(ivs, values, strict=True)}}


def _collect(
    node: object, env: dict[str, Expr], block: str, where: list[str], out: list[_Access]
) -> None:
    """The shared accesses of the unit statement `node`, each with its canonical index
    key; ScheduleError for a barrier in it. `where` says why the statements at hand are
    not run by all threads together (the enclosing threadIdx loops and `if`s)."""
    if isinstance(node, Expr):
        _loads(node, env, block, out)
    elif isinstance(node, SyncThreads):
        place = where[-1] if where else "in a statement every thread runs on its own"
        raise ScheduleError(
            PRIMITIVE,
            block,
            f"a __syncthreads() {place} is no barrier every thread of the block reaches "
            "together (a deadlock, or undefined behaviour); sync_threads puts it after the "
            "thread-bound nest",
        )
    elif isinstance(node, Store):
        name = _shared_name(node.tensor)
        for index in node.indices:
            _loads(index, env, block, out)
        _loads(node.value, env, block, out)
        if name is not None:
            out.append(_access(name, block, True, node.indices, env))
    elif isinstance(node, Let):
        _loads(node.value, env, block, out)
    elif isinstance(node, Block):
        for item in node.stmts:
            _collect(item, env, block, where, out)
    elif isinstance(node, For):
        _loads(node.min, env, block, out)
        _loads(node.extent, env, block, out)
        why = _divergent(node)
        inner = where if why is None else [*where, why]
        _collect(node.body, _loop_env(node, env), block, inner, out)
    elif isinstance(node, IfThenElse):
        _loads(node.condition, env, block, out)
        inner = [*where, _divergent(node)]
        _collect(node.true_case, env, block, inner, out)
        if node.false_case is not None:
            _collect(node.false_case, env, block, inner, out)
    elif isinstance(node, ScheduleBlockRealize):
        for value in node.iter_values:
            _loads(value, env, block, out)
        name = node.schedule_block.name
        _collect(node.schedule_block.body, _realize_env(node, env), name, where, out)


def _loads(expr: Expr, env: dict[str, Expr], block: str, out: list[_Access]) -> None:
    for load in all_loads(expr):
        name = _shared_name(load.tensor)
        if name is not None:
            out.append(_access(name, block, False, load.indices, env))


def _access(
    name: str, block: str, write: bool, indices: tuple[Expr, ...], env: dict[str, Expr]
) -> _Access:
    """The access with its indices as every thread computes them, comparable across
    blocks."""
    canonical = [substitute(i, env) for i in indices]
    key = tuple(structural_key(i) for i in canonical)
    names = frozenset().union(*map(var_names, canonical))
    return _Access(name, block, write, key, names)


__all__ = ["PRIMITIVE", "barrier_problem", "check_barriers", "sync_threads"]
