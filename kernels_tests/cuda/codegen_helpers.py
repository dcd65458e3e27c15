"""Hand-built scheduled functions in the shape auto-schedule gives codegen.

A function is the contract's LoweredFunc: a root realize holding one loop nest per
stored buffer. `serial_nest` is a nest as op lowering makes it (a serial loop per
dimension, iter vars `i<k>_0` bound to the loop vars); `flat_nest` is one as the
elementwise schedule leaves it: the dimensions fused into one index `f`, split into
`blockIdx.x`, `threadIdx.x` and a vectorized (or unrolled, or serial) lane loop, each
dimension recovered as `(f / stride) % dim`, under the bound guard `f / stride0 < dim0`
when the launch covers more than the tensor.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from cinn_py.ir.expr import Buffer, Expr, IntImm, Var
from cinn_py.ir.simplify import simplify
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    BindInfo,
    Block,
    BufferRange,
    For,
    ForType,
    IfThenElse,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Stmt,
    Store,
)
from cinn_py.pir.dtypes import DataType

Value = Callable[[Sequence[Var]], Expr]
"""The stored value as a function of the block's iter vars (one per output dimension)."""


def buffer(name: str, dtype: DataType, shape: Sequence[int]) -> Buffer:
    return Buffer(name, dtype, list(shape))


def _realize(
    out: Buffer,
    value: Value,
    iter_values: Sequence[Expr],
    prefix: str,
    index: DataType = DataType.INT32,
) -> Stmt:
    dims = [d.value for d in out.shape]
    iter_vars = [Var(f"{prefix}{k}_0", index, 0, d) for k, d in enumerate(dims)]
    store = Store(out, value(iter_vars), iter_vars)
    region = BufferRange(out, iter_vars)
    block = ScheduleBlock(iter_vars, [], [region], out.name, store)
    return ScheduleBlockRealize(list(iter_values), block)


def serial_nest(
    out: Buffer, value: Value, *, prefix: str = "i", for_type: ForType = ForType.SERIAL
) -> Stmt:
    """Op lowering's nest: `for (i_k, 0, dim_k)` per dimension (innermost of `for_type`)."""
    dims = [d.value for d in out.shape]
    loop_vars = [Var(f"{prefix}_{k}", DataType.INT32, 0, d) for k, d in enumerate(dims)]
    body: Stmt = _realize(out, value, loop_vars, prefix)
    for k in reversed(range(len(dims))):
        kind = for_type if k == len(dims) - 1 else ForType.SERIAL
        body = For(loop_vars[k], 0, dims[k], kind, Block([body]))
    return body


def flat_nest(
    out: Buffer,
    value: Value,
    *,
    threads: int,
    lanes: int = 1,
    lane_loop: ForType = ForType.VECTORIZED,
    prefix: str = "i",
    index: DataType = DataType.INT32,
) -> Stmt:
    """The elementwise schedule's nest over `out`: blockIdx.x x threadIdx.x x lanes, with
    loop and iter vars of dtype `index`."""
    dims = [d.value for d in out.shape]
    n = math.prod(dims)
    per_block = threads * lanes
    blocks = max(1, -(-n // per_block))
    b = Var(f"{prefix}_b", index, 0, blocks)
    t = Var(f"{prefix}_t", index, 0, threads)
    v = Var(f"{prefix}_v", index, 0, lanes)
    fused = simplify(b * per_block + t * lanes + v) if lanes > 1 else simplify(b * threads + t)
    strides = [math.prod(dims[k + 1 :]) for k in range(len(dims))]
    iter_values = []
    for k, (dim, stride) in enumerate(zip(dims, strides, strict=True)):
        value_k = fused if stride == 1 else fused / IntImm(stride, index)
        iter_values.append(value_k if k == 0 else value_k % IntImm(dim, index))
    body: Stmt = _realize(out, value, [simplify(x) for x in iter_values], prefix, index)
    if blocks * per_block > n:
        body = IfThenElse(iter_values[0].lt(IntImm(dims[0], index)), body)
    if lanes > 1:
        body = For(v, 0, lanes, lane_loop, Block([body]))
    body = For(t, 0, threads, ForType.SERIAL, Block([body]), BindInfo.THREAD_X)
    return For(b, 0, blocks, ForType.SERIAL, Block([body]), BindInfo.BLOCK_X)


def function(
    name: str, inputs: Sequence[Buffer], outputs: Sequence[Buffer], nests: Sequence[Stmt]
) -> LoweredFunc:
    """The contract's LoweredFunc: inputs then outputs as arguments, a root realize."""
    args = [Argument(b, ArgIO.INPUT) for b in inputs]
    args += [Argument(b, ArgIO.OUTPUT) for b in outputs]
    root = ScheduleBlock([], [], [], "root", Block(list(nests)))
    return LoweredFunc(name, args, ScheduleBlockRealize([], root))


def aligned(array: np.ndarray, alignment: int = 64) -> np.ndarray:
    """A copy of `array` whose data starts at a multiple of `alignment` bytes, as the
    runtime's allocations do (vector accesses rely on 16)."""
    raw = np.empty(array.nbytes + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    out = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out
