"""The statement nodes of CINN's loop-level AST: loops, blocks, stores, functions.

Statements have no value and no dtype. Like the expressions they are immutable and
checked on construction; children are listed in `_fields`, in constructor order.
"""

from __future__ import annotations

import enum
from typing import Any

from cinn_py.ir.expr import (
    Buffer,
    Expr,
    IntImm,
    IrNode,
    Tensor,
    Var,
    _check_index,
    _check_node,
    _exprs,
    _fail,
    as_int,
    check_access,
)
from cinn_py.pir.dtypes import DataType


class Stmt(IrNode):
    __slots__ = ()


def _stmt(node: str, field: str, value: Any) -> Stmt | Expr:
    # A Call (an extern with side effects) may stand as a statement, as in CINN.
    _check_node(node, field, value, (Stmt, Expr))
    return value


class Store(Stmt):
    __slots__ = ("tensor", "value", "indices")
    _fields = ("tensor", "value", "indices")

    def __init__(
        self, tensor: Tensor | Buffer, value: Expr, indices: tuple[Expr, ...] | list[Expr]
    ) -> None:
        items = check_access("Store", tensor, indices)
        _check_node("Store", "value", value, Expr)
        if value.dtype is not tensor.dtype:
            raise _fail(
                "Store",
                "value",
                f"dtype {value.dtype.value} is not {tensor.name}'s {tensor.dtype.value}",
                TypeError,
            )
        self._init(tensor=tensor, value=value, indices=items)


class Let(Stmt):
    """Defines `symbol` as `value` for the statements after it.

    No lowering or schedule makes one yet; it stays because codegen (`CRenderer.visit_Let`,
    a `const` local), the interpreter and the barrier check (`thread_sync`) support it,
    and the hand-built kernels of the codegen tests use it."""

    __slots__ = ("symbol", "value")
    _fields = ("symbol", "value")

    def __init__(self, symbol: Var, value: Expr) -> None:
        _check_node("Let", "symbol", symbol, Var)
        _check_node("Let", "value", value, Expr)
        if symbol.dtype is not value.dtype:
            raise _fail(
                "Let", "value", f"dtype {value.dtype.value} is not {symbol.dtype.value}", TypeError
            )
        self._init(symbol=symbol, value=value)


class ForType(enum.Enum):
    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"


class BindInfo(enum.Enum):
    """The GPU axis a loop is bound to; `value` is its CUDA spelling."""

    BLOCK_X = "blockIdx.x"
    BLOCK_Y = "blockIdx.y"
    BLOCK_Z = "blockIdx.z"
    THREAD_X = "threadIdx.x"
    THREAD_Y = "threadIdx.y"
    THREAD_Z = "threadIdx.z"


class For(Stmt):
    """`loop_var` from `min` for `extent` iterations.

    A vectorized loop needs a constant extent (the vector width); a loop bound to a
    GPU axis (`bind_info`) must be serial otherwise.
    """

    __slots__ = ("loop_var", "min", "extent", "for_type", "body", "bind_info")
    _fields = ("loop_var", "min", "extent", "for_type", "body", "bind_info")

    def __init__(
        self,
        loop_var: Var,
        min: Expr | int,
        extent: Expr | int,
        for_type: ForType,
        body: Stmt | Expr,
        bind_info: BindInfo | None = None,
    ) -> None:
        _check_node("For", "loop_var", loop_var, Var)
        _check_index("For", "loop_var", loop_var)
        min, extent = as_int(min), as_int(extent)
        min = IntImm(min, loop_var.dtype) if isinstance(min, int) else min
        extent = IntImm(extent, loop_var.dtype) if isinstance(extent, int) else extent
        for field, value in (("min", min), ("extent", extent)):
            _check_node("For", field, value, Expr)
            if value.dtype is not loop_var.dtype:
                raise _fail(
                    "For",
                    field,
                    f"dtype {value.dtype.value} is not loop_var's {loop_var.dtype.value}",
                    TypeError,
                )
        _check_node("For", "for_type", for_type, ForType)
        if for_type is ForType.VECTORIZED and not isinstance(extent, IntImm):
            raise _fail("For", "extent", "a vectorized loop needs a constant extent")
        if bind_info is not None:
            _check_node("For", "bind_info", bind_info, BindInfo)
            if for_type is not ForType.SERIAL:
                raise _fail(
                    "For",
                    "bind_info",
                    f"a {for_type.value} loop cannot be bound to {bind_info.value}",
                )
        self._init(
            loop_var=loop_var,
            min=min,
            extent=extent,
            for_type=for_type,
            body=_stmt("For", "body", body),
            bind_info=bind_info,
        )


class SyncThreads(Stmt):
    """`__syncthreads()`: a barrier every thread of the thread block must reach before
    any goes on, so that what one thread wrote to shared memory before it is what the
    others read after it (CINN's SyncThreads). It belongs where all the block's threads
    run together: never inside a loop bound to threadIdx or a branch some threads skip
    (`IRSchedule.sync_threads` places it so, `thread_sync.check_barriers` checks)."""

    __slots__ = ()
    _fields = ()

    def __init__(self) -> None:
        self._init()


class IfThenElse(Stmt):
    __slots__ = ("condition", "true_case", "false_case")
    _fields = ("condition", "true_case", "false_case")

    def __init__(
        self, condition: Expr, true_case: Stmt | Expr, false_case: Stmt | Expr | None = None
    ) -> None:
        _check_node("IfThenElse", "condition", condition, Expr)
        if condition.dtype is not DataType.BOOL:
            raise _fail(
                "IfThenElse", "condition", f"expected bool, got {condition.dtype.value}", TypeError
            )
        _stmt("IfThenElse", "true_case", true_case)
        if false_case is not None:
            _stmt("IfThenElse", "false_case", false_case)
        self._init(condition=condition, true_case=true_case, false_case=false_case)


class Block(Stmt):
    __slots__ = ("stmts",)
    _fields = ("stmts",)

    def __init__(self, stmts: tuple[Stmt | Expr, ...] | list[Stmt | Expr]) -> None:
        items = tuple(stmts)
        for i, s in enumerate(items):
            _stmt("Block", f"stmts[{i}]", s)
        self._init(stmts=items)


class BufferRange(IrNode):
    """The region of `buffer` a schedule block touches: one bounded Var per dimension."""

    __slots__ = ("buffer", "ranges")
    _fields = ("buffer", "ranges")

    def __init__(self, buffer: Buffer | Tensor, ranges: tuple[Var, ...] | list[Var]) -> None:
        _check_node("BufferRange", "buffer", buffer, (Buffer, Tensor))
        items = tuple(ranges)
        for i, r in enumerate(items):
            _check_node("BufferRange", f"ranges[{i}]", r, Var)
        if len(items) != len(buffer.shape):
            raise _fail(
                "BufferRange",
                "ranges",
                f"{len(items)} ranges for '{buffer.name}' of rank {len(buffer.shape)}",
            )
        self._init(buffer=buffer, ranges=items)


COMPUTED_ONCE = "computed_once"
"""A ScheduleBlock attribute: the block stores a value lowering keeps once for several
readers (softmax's exp, `hlir.op_lowering.lower`), which a schedule keeps in registers
or inlines back (`ir.group_schedule.distribute.computed_temps`)."""


class ScheduleBlock(Stmt):
    """A unit of computation with its own iteration variables, the root of scheduling."""

    __slots__ = ("iter_vars", "read_buffers", "write_buffers", "name", "body", "attrs")
    _fields = ("iter_vars", "read_buffers", "write_buffers", "name", "body", "attrs")

    def __init__(
        self,
        iter_vars: tuple[Var, ...] | list[Var],
        read_buffers: tuple[BufferRange, ...] | list[BufferRange],
        write_buffers: tuple[BufferRange, ...] | list[BufferRange],
        name: str,
        body: Stmt | Expr,
        attrs: tuple[tuple[str, Any], ...] | dict[str, Any] = (),
    ) -> None:
        ivs = tuple(iter_vars)
        for i, v in enumerate(ivs):
            _check_node("ScheduleBlock", f"iter_vars[{i}]", v, Var)
        reads, writes = tuple(read_buffers), tuple(write_buffers)
        for field, items in (("read_buffers", reads), ("write_buffers", writes)):
            for i, r in enumerate(items):
                _check_node("ScheduleBlock", f"{field}[{i}]", r, BufferRange)
        _check_node("ScheduleBlock", "name", name, str)
        pairs = tuple(sorted(attrs.items())) if isinstance(attrs, dict) else tuple(attrs)
        for key, value in pairs:
            _check_node("ScheduleBlock", "attrs", key, str)
            _check_node("ScheduleBlock", f"attrs[{key}]", value, (int, float, str))
        self._init(
            iter_vars=ivs,
            read_buffers=reads,
            write_buffers=writes,
            name=name,
            body=_stmt("ScheduleBlock", "body", body),
            attrs=pairs,
        )


class ScheduleBlockRealize(Stmt):
    """A ScheduleBlock instance: its iter_vars bound to `iter_values`."""

    __slots__ = ("iter_values", "schedule_block")
    _fields = ("iter_values", "schedule_block")

    def __init__(
        self, iter_values: tuple[Expr, ...] | list[Expr], schedule_block: ScheduleBlock
    ) -> None:
        values = _exprs("ScheduleBlockRealize", "iter_values", iter_values)
        _check_node("ScheduleBlockRealize", "schedule_block", schedule_block, ScheduleBlock)
        ivs = schedule_block.iter_vars
        if len(values) != len(ivs):
            raise _fail(
                "ScheduleBlockRealize",
                "iter_values",
                f"{len(values)} values for {len(ivs)} iter_vars of block '{schedule_block.name}'",
            )
        for i, (v, iv) in enumerate(zip(values, ivs, strict=True)):
            if v.dtype is not iv.dtype:
                raise _fail(
                    "ScheduleBlockRealize",
                    f"iter_values[{i}]",
                    f"dtype {v.dtype.value} is not {iv.name}'s {iv.dtype.value}",
                    TypeError,
                )
        self._init(iter_values=values, schedule_block=schedule_block)


class ArgIO(enum.Enum):
    """How a kernel uses an argument. INPUT / OUTPUT are program values; WORKSPACE is
    global scratch memory the kernel needs for itself (a grid reduction's partials and
    semaphores): no program value, allocated once per kernel instruction by the runtime,
    zero-filled at allocation, and left as the kernel found it (zero counters) by every
    launch, so the next launch needs no reset."""

    INPUT = "in"
    OUTPUT = "out"
    WORKSPACE = "workspace"


class Argument(IrNode):
    """One parameter of a LoweredFunc: a buffer or a scalar Var, read or written."""

    __slots__ = ("value", "io")
    _fields = ("value", "io")

    def __init__(self, value: Buffer | Var, io: ArgIO = ArgIO.INPUT) -> None:
        _check_node("Argument", "value", value, (Buffer, Var))
        _check_node("Argument", "io", io, ArgIO)
        self._init(value=value, io=io)

    @property
    def name(self) -> str:
        return self.value.name


class LastBlockDone(Expr):
    """Whether this thread block is the last of `count` to arrive at the counter
    `semaphore[indices]` (an int32 workspace element), for the grid reduction
    (`IRSchedule.grid_reduce`, CINN's `cinn_grid_reduce_update_semaphore`).

    An expression with an effect, evaluated once by every thread of a block: the block's
    earlier global stores are made visible device-wide, one thread adds 1 to the counter,
    and every thread gets `old == count - 1`; the last block also resets the counter to
    0, so every launch starts and ends with zero counters. Serially (the interpreter)
    it is true for the `count`-th evaluation at that counter."""

    __slots__ = ("semaphore", "indices", "count", "dtype")
    _fields = ("semaphore", "indices", "count")

    def __init__(
        self, semaphore: Buffer, indices: tuple[Expr, ...] | list[Expr], count: int
    ) -> None:
        _check_node("LastBlockDone", "semaphore", semaphore, Buffer)
        if semaphore.dtype is not DataType.INT32:
            raise _fail(
                "LastBlockDone",
                "semaphore",
                f"expected an int32 counter buffer, got {semaphore.dtype.value}",
                TypeError,
            )
        items = check_access("LastBlockDone", semaphore, indices)
        count = as_int(count)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise _fail("LastBlockDone", "count", f"expected a positive int, got {count!r}")
        self._init(semaphore=semaphore, indices=items, count=count, dtype=DataType.BOOL)


class LoweredFunc(IrNode):
    __slots__ = ("name", "args", "body", "temp_buffers")
    _fields = ("name", "args", "body", "temp_buffers")

    def __init__(
        self,
        name: str,
        args: tuple[Argument, ...] | list[Argument],
        body: Stmt,
        temp_buffers: tuple[Buffer, ...] | list[Buffer] = (),
    ) -> None:
        _check_node("LoweredFunc", "name", name, str)
        items = tuple(args)
        for i, a in enumerate(items):
            _check_node("LoweredFunc", f"args[{i}]", a, Argument)
        names = [a.name for a in items]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise _fail("LoweredFunc", "args", f"duplicate argument names {dup}")
        _check_node("LoweredFunc", "body", body, Stmt)
        temps = tuple(temp_buffers)
        for i, b in enumerate(temps):
            _check_node("LoweredFunc", f"temp_buffers[{i}]", b, Buffer)
        self._init(name=name, args=items, body=body, temp_buffers=temps)


__all__ = [
    "ArgIO",
    "Argument",
    "BindInfo",
    "Block",
    "BufferRange",
    "For",
    "ForType",
    "IfThenElse",
    "LastBlockDone",
    "Let",
    "LoweredFunc",
    "ScheduleBlock",
    "ScheduleBlockRealize",
    "Stmt",
    "Store",
    "SyncThreads",
]
