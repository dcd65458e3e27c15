"""sync_threads and the barrier check: where the primitive puts a `__syncthreads()`
(golden IR: after a block, before one, after the thread-bound nest around a block,
inside a serial loop), the no-op beside a barrier, trace and replay, every refusal,
the CUDA it becomes, the races `check_barriers` finds on shared buffers (and the
barriers not every thread reaches), and kernels on cuda-emu that exchange values
between threads through shared memory, with and without their barriers."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from schedule_funcs import function, realize

from cinn_py.backends import cuda_emu
from cinn_py.backends.codegen_cuda import generate_cuda
from cinn_py.errors import ScheduleError, UnsupportedOpError
from cinn_py.ir.bound_guards import insert_bound_guards
from cinn_py.ir.expr import Buffer, IntImm, Load, MemoryType, Var
from cinn_py.ir.group_schedule.finish import finish_schedule
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.printer import print_ir
from cinn_py.ir.schedule import IRSchedule, LoopRef
from cinn_py.ir.schedule.thread_sync import barrier_problem, check_barriers
from cinn_py.ir.stmt import (
    BindInfo,
    Block,
    For,
    ForType,
    IfThenElse,
    LoweredFunc,
    ScheduleBlockRealize,
    Stmt,
    SyncThreads,
)
from cinn_py.ir.visitor import Mutator, structural_equal, structural_key
from cinn_py.pir.dtypes import DataType

F32 = DataType.FLOAT32
TX, TY, BX = BindInfo.THREAD_X, BindInfo.THREAD_Y, BindInfo.BLOCK_X


def shared(shape: list[int], name: str = "x_shared") -> Buffer:
    """A shared temp: the thread block's array over every dim."""
    return Buffer(name, F32, shape, MemoryType.SHARED, tuple(range(len(shape))))


def loop(
    name: str,
    extent: int,
    body: Callable[[Var], Stmt | list[Stmt]],
    axis: BindInfo | None = None,
    kind: ForType = ForType.SERIAL,
) -> For:
    """`for (name, 0, extent)` (bound to `axis`), its body built from its loop var."""
    var = Var(name, lower=0, upper=extent)
    items = body(var)
    return For(var, 0, extent, kind, Block(items if isinstance(items, list) else [items]), axis)


def reverse(sync: bool = False, memory: MemoryType = MemoryType.SHARED) -> LoweredFunc:
    """y[i] = x[63 - i] through `x_shared` by one block of 64 threads: thread t stores
    x[t], then reads what thread 63 - t stored (with a barrier between when `sync`)."""
    x, y = Buffer("x", F32, [64]), Buffer("y", F32, [64])
    s = shared([64]) if memory is MemoryType.SHARED else Buffer("x_shared", F32, [64], memory)
    fill = loop("t", 64, lambda t: realize(s, [x], lambda iv: Load(x, iv), 0, [t]), TX)
    read = loop(
        "u", 64, lambda u: realize(y, [s], lambda iv: Load(s, [IntImm(63) - iv[0]]), 1, [u]), TX
    )
    nests = [fill, SyncThreads(), read] if sync else [fill, read]
    return function("fn_reverse", [x], [y], nests, [s])


def rows_in_a_loop(syncs: tuple[str, ...] = ()) -> LoweredFunc:
    """Each of 4 rows reversed through one `x_shared` row in a serial loop over the rows
    (one block of 64 threads): the store of row k + 1 must wait for the reads of row k.
    `syncs` names the blocks a barrier follows."""
    x, y = Buffer("x", F32, [4, 64]), Buffer("y", F32, [4, 64])
    s = shared([64])

    def body(k: Var) -> list[Stmt]:
        fill = loop("t", 64, lambda t: realize(s, [x], lambda iv: Load(x, [k, iv[0]]), 0, [t]), TX)
        read = loop(
            "u",
            64,
            lambda u: realize(y, [s], lambda iv: Load(s, [IntImm(63) - iv[1]]), 1, [k, u]),
            TX,
        )
        items: list[Stmt] = [fill]
        items += [SyncThreads()] if "x_shared" in syncs else []
        items += [read]
        items += [SyncThreads()] if "y" in syncs else []
        return items

    return function("fn_rows", [x], [y], [loop("k", 4, body)], [s])


def tiles(flip: bool = True) -> LoweredFunc:
    """4 tiles of 8 x 32 on blockIdx.x, each flipped both ways (or, `flip=False`, read
    back by the thread that stored it) through `x_shared` by 8 x 32 threads (threadIdx.y
    outside threadIdx.x)."""
    x, y = Buffer("x", F32, [4, 8, 32]), Buffer("y", F32, [4, 8, 32])
    s = shared([8, 32])

    def tile(b: Var) -> list[Stmt]:
        def fill(ty: Var) -> For:
            return loop(
                "tx",
                32,
                lambda tx: realize(s, [x], lambda iv: Load(x, [b, *iv]), 0, [ty, tx]),
                TX,
            )

        def flipped(iv: list[Var]) -> Load:
            return Load(s, [IntImm(7) - iv[1], IntImm(31) - iv[2]] if flip else iv[1:])

        def read(uy: Var) -> For:
            return loop("ux", 32, lambda ux: realize(y, [s], flipped, 1, [b, uy, ux]), TX)

        return [loop("ty", 8, fill, TY), loop("uy", 8, read, TY)]

    return function("fn_tiles", [x], [y], [loop("b", 4, tile, BX)], [s])


# ---- the node -----------------------------------------------------------------------------


def test_sync_threads_is_a_leaf_statement_every_walker_handles():
    node = SyncThreads()
    assert node.field_values() == ()
    assert structural_equal(node, SyncThreads())
    assert structural_key(node) == ("SyncThreads",)
    assert print_ir(node) == "__syncthreads()"
    assert Mutator().visit(node) is node
    func = reverse(sync=True)
    assert Mutator().visit(func) is func
    with pytest.raises(AttributeError, match="immutable"):
        node.x = 1  # type: ignore[attr-defined]


def test_the_interpreter_runs_a_barrier_as_nothing():
    """Bound loops run one after another there: the stores before the barrier are done."""
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    run_function(reverse(sync=True), {"x": x, "y": y})
    np.testing.assert_array_equal(y, x[::-1])


# ---- placement ------------------------------------------------------------------------------

REVERSED = """\
function fn_reverse (x, y)
ScheduleBlock(root)
{
  {
    thread_bind[threadIdx.x] for (t, 0, 64)
    {
      ScheduleBlock(x_shared)
      {
        i0_0 = axis.bind(t)
        read_buffers(x[i0_0(0:64)])
        write_buffers(x_shared[i0_0(0:64)])
        {
          x_shared[i0_0] = x[i0_0]
        }
      }
    }
    __syncthreads()
    thread_bind[threadIdx.x] for (u, 0, 64)
    {
      ScheduleBlock(y)
      {
        i0_1 = axis.bind(u)
        read_buffers(x_shared[i0_1(0:64)])
        write_buffers(y[i0_1(0:64)])
        {
          y[i0_1] = x_shared[(63 - i0_1)]
        }
      }
    }
  }
}"""


def test_after_a_block_goes_after_its_thread_bound_loop():
    sch = IRSchedule(reverse())
    sch.sync_threads("x_shared")
    assert print_ir(sch.func) == REVERSED
    assert structural_equal(sch.func, reverse(sync=True))


@pytest.mark.parametrize(
    "call",
    [
        lambda sch: sch.sync_threads("y", after=False),
        lambda sch: sch.sync_threads(sch.get_block("x_shared")),
        lambda sch: sch.sync_threads(LoopRef("t")),
        lambda sch: sch.sync_threads(LoopRef("u"), after=False),
    ],
    ids=["before_block", "block_ref", "after_loop", "before_loop"],
)
def test_before_a_block_and_around_loops_is_the_same_place(call):
    sch = IRSchedule(reverse())
    call(sch)
    assert print_ir(sch.func) == REVERSED


def test_beside_a_barrier_adds_none():
    sch = IRSchedule(reverse(sync=True))
    before = sch.func
    sch.sync_threads("x_shared")
    sch.sync_threads("y", after=False)
    assert sch.func is before
    assert print_ir(sch.func).count("__syncthreads()") == 1


TILES = """\
    thread_bind[blockIdx.x] for (b, 0, 4)
    {
      thread_bind[threadIdx.y] for (ty, 0, 8)
      {
        thread_bind[threadIdx.x] for (tx, 0, 32)
        {
          ScheduleBlock(x_shared)
          {
            i0_0, i1_0 = axis.bind(ty, tx)
            read_buffers(x[i0_0(0:8), i1_0(0:32), x_d2(0:32)])
            write_buffers(x_shared[i0_0(0:8), i1_0(0:32)])
            {
              x_shared[i0_0, i1_0] = x[b, i0_0, i1_0]
            }
          }
        }
      }
      __syncthreads()
      thread_bind[threadIdx.y] for (uy, 0, 8)
"""


def test_after_an_inner_block_goes_after_the_whole_thread_nest():
    """Out of threadIdx.x and threadIdx.y both, into the blockIdx loop's body (one
    iteration per thread block: every thread runs it)."""
    sch = IRSchedule(tiles())
    sch.sync_threads("x_shared")
    assert TILES in print_ir(sch.func)
    assert barrier_problem(sch.func) is None
    assert barrier_problem(tiles()) == (
        "block y reads shared buffer x_shared that block x_shared wrote with no "
        "__syncthreads() between them (add sync_threads after x_shared)"
    )


ROWS = """\
    serial for (k, 0, 4)
    {
      thread_bind[threadIdx.x] for (t, 0, 64)
      {
        ScheduleBlock(x_shared)
        {
          i0_0 = axis.bind(t)
          read_buffers(x[i0_0(0:64), x_d1(0:64)])
          write_buffers(x_shared[i0_0(0:64)])
          {
            x_shared[i0_0] = x[k, i0_0]
          }
        }
      }
      __syncthreads()
      thread_bind[threadIdx.x] for (u, 0, 64)
      {
        ScheduleBlock(y)
        {
          i0_1, i1_1 = axis.bind(k, u)
          read_buffers(x_shared[i0_1(0:4)])
          write_buffers(y[i0_1(0:4), i1_1(0:64)])
          {
            y[i0_1, i1_1] = x_shared[(63 - i1_1)]
          }
        }
      }
      __syncthreads()
    }
"""


def test_inside_a_serial_loop_each_iteration_gets_its_barriers():
    """The serial loop is run alike by every thread: the barriers go in its body. The
    check asks first for the barrier after the stores, then for the one that keeps the
    next row's stores from overwriting what this row still reads."""
    sch = IRSchedule(rows_in_a_loop())
    assert barrier_problem(sch.func) == (
        "block y reads shared buffer x_shared that block x_shared wrote with no "
        "__syncthreads() between them (add sync_threads after x_shared)"
    )
    sch.sync_threads("x_shared")
    assert barrier_problem(sch.func) == (
        "block x_shared writes shared buffer x_shared that block y read in the previous "
        "iteration with no __syncthreads() between them (add sync_threads after y)"
    )
    sch.sync_threads("y")
    assert ROWS in print_ir(sch.func)
    assert barrier_problem(sch.func) is None
    assert structural_equal(sch.func, rows_in_a_loop(("x_shared", "y")))


def test_a_loop_body_that_is_one_statement_becomes_a_block():
    var = Var("t", lower=0, upper=64)
    x, s = Buffer("x", F32, [4, 64]), shared([4, 64])
    k = Var("k", lower=0, upper=4)
    fill = For(var, 0, 64, ForType.SERIAL, realize(s, [x], lambda iv: Load(x, iv), 0, [k, var]), TX)
    func = function("fn_one", [x], [], [For(k, 0, 4, ForType.SERIAL, fill)], [s])
    sch = IRSchedule(func)
    sch.sync_threads("x_shared", after=False)
    outer = sch.get(LoopRef("k"))
    assert isinstance(outer.body, Block)
    assert isinstance(outer.body.stmts[0], SyncThreads)
    assert outer.body.stmts[1] is fill


def test_trace_and_replay():
    sch = IRSchedule(rows_in_a_loop())
    sch.sync_threads("x_shared")
    sch.sync_threads(LoopRef("u"))
    sch.sync_threads("y", after=False)  # beside the first: nothing changes
    assert str(sch.trace) == (
        "sync_threads(ref=x_shared)\nsync_threads(ref=u)\nsync_threads(ref=y, after=False)"
    )
    replayed = sch.trace.replay(rows_in_a_loop())
    assert structural_equal(replayed, sch.func)
    assert print_ir(replayed) == print_ir(sch.func)


# ---- refusals -------------------------------------------------------------------------------


def _guarded() -> LoweredFunc:
    """The fill under `if (k < 2)` in a serial loop: a branch not proven uniform."""
    x, s = Buffer("x", F32, [4, 64]), shared([64])

    def body(k: Var) -> Stmt:
        fill = loop("t", 64, lambda t: realize(s, [x], lambda iv: Load(x, [k, iv[0]]), 0, [t]), TX)
        return IfThenElse(k.lt(2), Block([fill]))

    return function("fn_if", [x], [], [loop("k", 4, body)], [s])


def _in_loop_of(kind: ForType) -> LoweredFunc:
    """The fill in a loop of `kind` with no thread-bound loop between."""
    x, s = Buffer("x", F32, [4]), shared([4])
    fill = loop("v", 4, lambda v: realize(s, [x], lambda iv: Load(x, iv), 0, [v]), kind=kind)
    return function("fn_kind", [x], [], [fill], [s])


@pytest.mark.parametrize(
    ("make", "call", "message"),
    [
        (
            _guarded,
            lambda sch: sch.sync_threads("x_shared"),
            r"sync_threads on block 'x_shared': block x_shared is inside if \(\(k < 2\)\), "
            r"which not every thread may take: no place there that every thread of the block "
            r"reaches",
        ),
        (
            lambda: _in_loop_of(ForType.VECTORIZED),
            lambda sch: sch.sync_threads("x_shared"),
            "block x_shared is inside vectorized loop v: no place there",
        ),
        (
            lambda: _in_loop_of(ForType.PARALLEL),
            lambda sch: sch.sync_threads("x_shared", after=False),
            "block x_shared is inside parallel loop v: no place there",
        ),
        (
            reverse,
            lambda sch: sch.sync_threads("nope"),
            r"sync_threads on block 'nope': no such block in fn_reverse \(blocks: x_shared, y\)",
        ),
        (
            reverse,
            lambda sch: sch.sync_threads("root"),
            "the root block cannot be scheduled",
        ),
        (
            reverse,
            lambda sch: sch.sync_threads(LoopRef("t_0")),
            "no loop 't_0' in fn_reverse",
        ),
        (
            reverse,
            lambda sch: sch.sync_threads("y", after=1),
            "after must be True or False, got 1",
        ),
        (
            lambda: rows_in_a_loop(("x_shared",)),
            lambda sch: sch.bind("k", "threadIdx.y"),
            r"bind on block 'x_shared, y': loop k holds a __syncthreads\(\) barrier, which "
            "inside a loop bound to threadIdx.y would be no barrier every thread reaches "
            "together",
        ),
    ],
    ids=["if", "vectorized", "parallel", "unknown", "root", "stale_loop", "after", "bind"],
)
def test_refusals(make, call, message):
    sch = IRSchedule(make())
    before = sch.func
    with pytest.raises(ScheduleError, match=message):
        call(sch)
    assert sch.func is before
    assert len(sch.trace) == 0


def test_a_loop_holding_a_barrier_may_still_go_on_blockidx():
    sch = IRSchedule(rows_in_a_loop(("x_shared",)))
    sch.bind("k", "blockIdx.x")
    assert sch.get(LoopRef("k")).bind_info is BX


# ---- codegen --------------------------------------------------------------------------------


def _kernel_body(func: LoweredFunc) -> str:
    source = generate_cuda([func]).source
    return source[source.index('extern "C"') :]


def test_cuda_has_one_barrier_outside_the_shorter_loops_guard():
    """The fill covers 32 of the block's 64 threads (`if (threadIdx.x < 32)`); the
    barrier comes after that branch's closing brace, where all 64 threads are."""
    x, y, s = Buffer("x", F32, [32]), Buffer("y", F32, [64]), shared([32])
    fill = loop("t", 32, lambda t: realize(s, [x], lambda iv: Load(x, iv), 0, [t]), TX)
    read = loop("u", 64, lambda u: realize(y, [s], lambda iv: Load(s, [iv[0] / 2]), 1, [u]), TX)
    sch = IRSchedule(function("fn_half", [x], [y], [fill, read], [s]))
    sch.sync_threads("x_shared")
    body = _kernel_body(finish_schedule(sch.func))
    assert body.count("__syncthreads();") == 1
    before, after = body.split("__syncthreads();")
    assert "  if (threadIdx.x < 32) {\n    const int t = threadIdx.x;" in before
    assert before.endswith("x_shared[i0_0] = x[i0_0];\n    }\n  }\n  ")
    assert after.startswith("\n  const int u = threadIdx.x;")
    assert "x_shared[i0_1 / 2]" in after


def test_bound_guards_and_scalar_blocks_leave_the_barrier_where_every_thread_is():
    """finish_schedule wraps a 0-D block in unit thread loops and guards a loop longer
    than its block's range; neither takes the barrier with it."""
    x, y, z, s = Buffer("x", F32, [64]), Buffer("y", F32, [50]), Buffer("z", F32, []), shared([64])
    fill = loop("t", 64, lambda t: realize(s, [x], lambda iv: Load(x, iv), 0, [t]), TX)
    read = loop(
        "u", 64, lambda u: realize(y, [s], lambda iv: Load(s, [IntImm(63) - iv[0]]), 1, [u]), TX
    )
    first = realize(z, [s], lambda iv: Load(s, [IntImm(0)]), 2, [])
    func = function("fn_mixed", [x], [y, z], [fill, SyncThreads(), read, first], [s])
    done = finish_schedule(func)
    stmts = done.body.schedule_block.body.stmts
    assert isinstance(stmts[1], SyncThreads)
    assert [type(x).__name__ for x in stmts] == ["For", "SyncThreads", "For", "For"]
    assert isinstance(stmts[2].body.stmts[0], IfThenElse)  # the guard u < 50
    assert structural_equal(insert_bound_guards(done), done)
    body = _kernel_body(done)
    assert body.count("__syncthreads();") == 1
    assert "\n  __syncthreads();\n" in body


def test_cuda_refuses_a_barrier_inside_a_thread_loop():
    x, s = Buffer("x", F32, [64]), shared([64])
    fill = loop(
        "t", 64, lambda t: [realize(s, [x], lambda iv: Load(x, iv), 0, [t]), SyncThreads()], TX
    )
    with pytest.raises(UnsupportedOpError, match="inside loop t bound to a threadIdx axis"):
        generate_cuda([function("fn_bad", [x], [], [fill], [s])])


# ---- the check ------------------------------------------------------------------------------


def test_a_read_of_another_threads_store_needs_a_barrier():
    with pytest.raises(ScheduleError) as error:
        check_barriers(reverse())
    assert (error.value.primitive, error.value.block) == ("sync_threads", "y")
    assert error.value.why == (
        "block y reads shared buffer x_shared that block x_shared wrote with no "
        "__syncthreads() between them (add sync_threads after x_shared)"
    )
    assert barrier_problem(reverse(sync=True)) is None


def test_finish_schedule_checks_the_barriers():
    with pytest.raises(ScheduleError, match="block y reads shared buffer x_shared"):
        finish_schedule(reverse())
    assert structural_equal(finish_schedule(reverse(sync=True)), reverse(sync=True))


@pytest.mark.parametrize("memory", [MemoryType.GLOBAL, MemoryType.LOCAL])
def test_only_shared_buffers_are_checked(memory):
    assert barrier_problem(reverse(memory=memory)) is None


def _same_thread(read_index: Callable[[Var], list], together: bool) -> LoweredFunc:
    """x_shared[t] = x[t], then y[t] = x_shared[read_index(t)] * 2: in the same thread
    loop (`together`) or in a second one, with no barrier."""
    x, y, s = Buffer("x", F32, [64]), Buffer("y", F32, [64]), shared([64])

    def store(t: Var) -> ScheduleBlockRealize:
        return realize(s, [x], lambda iv: Load(x, iv), 0, [t])

    def load(t: Var) -> ScheduleBlockRealize:
        return realize(y, [s], lambda iv: Load(s, read_index(iv[0])) * 2.0, 1, [t])

    if together:
        nests = [loop("t", 64, lambda t: [store(t), load(t)], TX)]
    else:
        nests = [loop("t", 64, store, TX), loop("u", 64, load, TX)]
    return function("fn_same", [x], [y], nests, [s])


@pytest.mark.parametrize("together", [True, False], ids=["one_nest", "two_nests"])
def test_each_thread_reading_its_own_store_needs_no_barrier(together):
    assert barrier_problem(_same_thread(lambda i: [i], together)) is None


def test_one_element_per_thread_of_a_2d_block():
    """x_shared[ty, tx] read back at [uy, ux]: both axes, the thread's own element."""
    assert barrier_problem(tiles(flip=False)) is None


def test_one_nest_storing_another_threads_element_races():
    x, s = Buffer("x", F32, [64]), shared([64])

    def stores(t: Var) -> list[Stmt]:
        first = realize(s, [x], lambda iv: Load(x, iv), 0, [t])
        second = realize(s, [x], lambda iv: Load(x, iv), 1, [IntImm(63) - t])
        return [first, second]

    func = function("fn_waw", [x], [], [loop("t", 64, stores, TX)], [s])
    assert barrier_problem(func).startswith(
        "block x_shared writes shared buffer x_shared that block x_shared wrote, inside one "
        "statement that every thread runs on its own"
    )


def test_one_nest_reading_another_threads_store_races():
    """No barrier can go between two blocks of one thread loop."""
    func = _same_thread(lambda i: [IntImm(63) - i], together=True)
    assert barrier_problem(func) == (
        "block y reads shared buffer x_shared that block x_shared wrote, inside one "
        "statement that every thread runs on its own (no __syncthreads() can go between "
        "them); each thread may touch only its own element there, or the blocks must be "
        "in separate thread-bound nests with a sync_threads between them"
    )


def test_one_element_for_every_thread_is_no_thread_of_its_own():
    """x_shared[0] is stored by every thread and read by every thread: the same
    indices, but not one element per thread."""
    x, y, s = Buffer("x", F32, [64]), Buffer("y", F32, [64]), shared([1])
    fill = loop(
        "t", 64, lambda t: realize(s, [x], lambda iv: Load(x, [IntImm(0)]), 0, [IntImm(0)]), TX
    )
    read = loop("u", 64, lambda u: realize(y, [s], lambda iv: Load(s, [IntImm(0)]), 1, [u]), TX)
    func = function("fn_one", [x], [y], [fill, read], [s])
    assert barrier_problem(func).startswith("block y reads shared buffer x_shared")


def test_a_barrier_inside_a_thread_loop_is_reported():
    x, s = Buffer("x", F32, [64]), shared([64])
    fill = loop(
        "t", 64, lambda t: [realize(s, [x], lambda iv: Load(x, iv), 0, [t]), SyncThreads()], TX
    )
    with pytest.raises(ScheduleError) as error:
        check_barriers(function("fn_bad", [x], [], [fill], [s]))
    assert error.value.block == "x_shared"
    assert error.value.why == (
        "a __syncthreads() inside loop t bound to threadIdx.x is no barrier every thread of "
        "the block reaches together (a deadlock, or undefined behaviour); sync_threads puts "
        "it after the thread-bound nest"
    )


def test_a_barrier_inside_an_if_is_reported():
    x = Buffer("x", F32, [4, 64])

    def body(k: Var) -> Stmt:
        return IfThenElse(k.lt(2), Block([SyncThreads()]))

    func = function("fn_if", [x], [], [loop("k", 4, body)])
    assert barrier_problem(func) == (
        "a __syncthreads() inside if ((k < 2)), which not every thread may take is no "
        "barrier every thread of the block reaches together (a deadlock, or undefined "
        "behaviour); sync_threads puts it after the thread-bound nest"
    )


# ---- cuda-emu: threads exchanging values ----------------------------------------------------


def _run_on_emu(func: LoweredFunc, x: np.ndarray) -> np.ndarray:
    """`func`'s output (shaped like its input `x`), run on cuda-emu (every thread a fiber, a real
    barrier, shared memory garbage at the start of each block)."""
    source = generate_cuda([func])
    (kernel,) = source.kernels
    out = np.full(x.shape, np.nan, np.float32)
    cuda_emu.compile(source.source).launch(kernel.name, kernel.grid, kernel.block, [x, out])
    return out


def test_a_row_reversed_through_shared_memory_on_cuda_emu():
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(_run_on_emu(reverse(sync=True), x), x[::-1])
    # Without the barrier thread 0 reads x_shared[63] before thread 63 stores it.
    assert not np.array_equal(_run_on_emu(reverse(), x), x[::-1])


def test_rows_in_a_serial_loop_need_both_barriers_on_cuda_emu():
    x = np.arange(4 * 64, dtype=np.float32).reshape(4, 64)
    want = x[:, ::-1]
    np.testing.assert_array_equal(_run_on_emu(rows_in_a_loop(("x_shared", "y")), x), want)
    # With the first barrier only, thread 0 stores row k + 1 while others read row k.
    assert not np.array_equal(_run_on_emu(rows_in_a_loop(("x_shared",)), x), want)


def test_tiles_flipped_through_shared_memory_on_cuda_emu():
    """Two thread axes, four thread blocks: the barrier in the blockIdx loop's body."""
    sch = IRSchedule(tiles())
    sch.sync_threads("x_shared")
    x = np.random.default_rng(0).standard_normal((4, 8, 32)).astype(np.float32)
    np.testing.assert_array_equal(_run_on_emu(finish_schedule(sch.func), x), x[:, ::-1, ::-1])
