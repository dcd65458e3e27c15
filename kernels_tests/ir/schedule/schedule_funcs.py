"""Hand-built lowered functions in the shape op lowering produces (see the contract's
LOWERED FUNCTION): one loop nest per stored buffer under a root block, loops `i_<n>`,
iter vars `i<d>_<block>` bounded by the extents, read/write regions over iter vars."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cinn_py.ir.expr import Buffer, Call, CallType, Expr, FloatImm, Load, Reduce, ReduceType, Var
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    Block,
    BufferRange,
    For,
    ForType,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Store,
)
from cinn_py.pir.dtypes import DataType as D

F32 = D.FLOAT32


def _ranges(buffer: Buffer, ivs: list[Var]) -> list[Var]:
    """A read region: the iter vars, then a Var over each further dimension."""
    extra = [
        Var(f"{buffer.name}_d{d}", lower=0, upper=buffer.shape[d].value)
        for d in range(len(ivs), len(buffer.shape))
    ]
    return ivs[: len(buffer.shape)] + extra


def realize(
    out: Buffer,
    reads: Sequence[Buffer],
    value: Callable[[list[Var]], Expr],
    block_index: int,
    loops: Sequence[Expr],
) -> ScheduleBlockRealize:
    """The block storing `out[ivs] = value(ivs)`, its iter vars bound to `loops`."""
    ivs = [Var(f"i{d}_{block_index}", lower=0, upper=s.value) for d, s in enumerate(out.shape)]
    regions = [BufferRange(b, _ranges(b, ivs)) for b in reads]
    block = ScheduleBlock(
        ivs, regions, [BufferRange(out, ivs)], out.name, Block([Store(out, value(ivs), ivs)])
    )
    return ScheduleBlockRealize(loops, block)


def loop(var: Var, extent: int | Expr, body: For | ScheduleBlockRealize, start: int = 0) -> For:
    return For(var, start, extent, ForType.SERIAL, Block([body]))


def nest(
    out: Buffer,
    reads: Sequence[Buffer],
    value: Callable[[list[Var]], Expr],
    block_index: int,
    first_loop: int,
) -> For | ScheduleBlockRealize:
    """The loop nest storing `out[ivs] = value(ivs)`; loops are named from `i_<first_loop>`."""
    shape = [s.value for s in out.shape]
    loops = [Var(f"i_{first_loop + d}", lower=0, upper=n) for d, n in enumerate(shape)]
    body: For | ScheduleBlockRealize = realize(out, reads, value, block_index, loops)
    for var, n in zip(reversed(loops), reversed(shape), strict=True):
        body = loop(var, n, body)
    return body


def function(
    name: str,
    inputs: Sequence[Buffer],
    outputs: Sequence[Buffer],
    nests: Sequence[For | ScheduleBlockRealize],
    temps: Sequence[Buffer] = (),
) -> LoweredFunc:
    args = [Argument(b, ArgIO.INPUT) for b in inputs] + [Argument(b, ArgIO.OUTPUT) for b in outputs]
    root = ScheduleBlockRealize((), ScheduleBlock((), (), (), "root", Block(list(nests))))
    return LoweredFunc(name, args, root, temps)


def exp(x: Expr) -> Expr:
    return Call("exp", [x], F32, CallType.INTRINSIC)


def elementwise_2d(m: int = 64, n: int = 128) -> LoweredFunc:
    """var_2 = var_0 + var_1 over (m, n)."""
    x, y, out = (Buffer(f"var_{k}", F32, [m, n]) for k in range(3))
    body = nest(out, [x, y], lambda iv: Load(x, iv) + Load(y, iv), 0, 0)
    return function("fn_ew2d", [x, y], [out], [body])


def elementwise_3d() -> LoweredFunc:
    """var_1 = var_0 * 2 over (4, 8, 16)."""
    x, out = (Buffer(f"var_{k}", F32, [4, 8, 16]) for k in range(2))
    body = nest(out, [x], lambda iv: Load(x, iv) * FloatImm(2.0), 0, 0)
    return function("fn_ew3d", [x], [out], [body])


def scalar_0d() -> LoweredFunc:
    """var_1 = var_0 * 2 on 0-D tensors: a block with no loops and no iter vars."""
    x, out = Buffer("var_0", F32, []), Buffer("var_1", F32, [])
    body = nest(out, [x], lambda iv: Load(x, iv) * FloatImm(2.0), 0, 0)
    return function("fn_0d", [x], [out], [body])


def scalar_chain() -> LoweredFunc:
    """0-D: var_1 = var_0 * 2 (temporary), var_2 = var_1 + 1."""
    x, tmp, out = (Buffer(f"var_{k}", F32, []) for k in range(3))
    first = nest(tmp, [x], lambda iv: Load(x, iv) * FloatImm(2.0), 0, 0)
    second = nest(out, [tmp], lambda iv: Load(tmp, iv) + FloatImm(1.0), 1, 0)
    return function("fn_0d_chain", [x], [out], [first, second], [tmp])


def producer_consumer(tmp_is_output: bool = False) -> LoweredFunc:
    """var_1 = exp(var_0) (temporary, or an output too), var_2 = var_1 + var_0, over
    (32, 16)."""
    x = Buffer("var_0", F32, [32, 16])
    tmp = Buffer("var_1", F32, [32, 16])
    out = Buffer("var_2", F32, [32, 16])
    first = nest(tmp, [x], lambda iv: exp(Load(x, iv)), 0, 0)
    second = nest(out, [tmp, x], lambda iv: Load(tmp, iv) + Load(x, iv), 1, 2)
    if tmp_is_output:
        return function("fn_pc", [x], [tmp, out], [first, second])
    return function("fn_pc", [x], [out], [first, second], [tmp])


def producer_transpose() -> LoweredFunc:
    """var_1 = exp(var_0) over (16, 32) (temporary), var_2[c, d] = var_1[d, c] * 2."""
    x = Buffer("var_0", F32, [16, 32])
    tmp = Buffer("var_1", F32, [16, 32])
    out = Buffer("var_2", F32, [32, 16])
    first = nest(tmp, [x], lambda iv: exp(Load(x, iv)), 0, 0)
    second = nest(out, [tmp], lambda iv: Load(tmp, iv[::-1]) * FloatImm(2.0), 1, 2)
    return function("fn_pt", [x], [out], [first, second], [tmp])


def broadcast_consumer() -> LoweredFunc:
    """var_1 = exp(var_0) over (8,) (temporary), var_3 = var_1[i] + var_2[i, j] over (8, 4)."""
    x = Buffer("var_0", F32, [8])
    tmp = Buffer("var_1", F32, [8])
    y = Buffer("var_2", F32, [8, 4])
    out = Buffer("var_3", F32, [8, 4])
    first = nest(tmp, [x], lambda iv: exp(Load(x, iv)), 0, 0)
    second = nest(out, [tmp, y], lambda iv: Load(tmp, iv[:1]) + Load(y, iv), 1, 1)
    return function("fn_bc", [x, y], [out], [first, second], [tmp])


def two_producers() -> LoweredFunc:
    """var_1 = exp(var_0), var_2 = var_0 * 3 (temporaries), var_3 = var_1 - var_2, over (8, 8)."""
    x = Buffer("var_0", F32, [8, 8])
    a, b, out = (Buffer(f"var_{k}", F32, [8, 8]) for k in (1, 2, 3))
    first = nest(a, [x], lambda iv: exp(Load(x, iv)), 0, 0)
    second = nest(b, [x], lambda iv: Load(x, iv) * FloatImm(3.0), 1, 2)
    third = nest(out, [a, b], lambda iv: Load(a, iv) - Load(b, iv), 2, 4)
    return function("fn_2p", [x], [out], [first, second, third], [a, b])


def two_consumers() -> LoweredFunc:
    """var_1 = exp(var_0) (temporary), var_2 = var_1 * 2, var_3 = var_1 + var_0, over (8,)."""
    x, tmp, y, z = (Buffer(f"var_{k}", F32, [8]) for k in range(4))
    first = nest(tmp, [x], lambda iv: exp(Load(x, iv)), 0, 0)
    second = nest(y, [tmp], lambda iv: Load(tmp, iv) * FloatImm(2.0), 1, 1)
    third = nest(z, [tmp, x], lambda iv: Load(tmp, iv) + Load(x, iv), 2, 2)
    return function("fn_2c", [x], [y, z], [first, second, third], [tmp])


def symmetric_sum() -> LoweredFunc:
    """var_1 = exp(var_0) (temporary), var_2 = var_1[i, j] + var_1[j, i], over (8, 8)."""
    x, tmp, out = (Buffer(f"var_{k}", F32, [8, 8]) for k in range(3))
    first = nest(tmp, [x], lambda iv: exp(Load(x, iv)), 0, 0)
    second = nest(out, [tmp], lambda iv: Load(tmp, iv) + Load(tmp, iv[::-1]), 1, 2)
    return function("fn_sym", [x], [out], [first, second], [tmp])


def slice_consumer() -> LoweredFunc:
    """var_1 = exp(var_0) over (16,) (temporary), var_2 = var_1[i] over (8,)."""
    x, tmp = Buffer("var_0", F32, [16]), Buffer("var_1", F32, [16])
    out = Buffer("var_2", F32, [8])
    first = nest(tmp, [x], lambda iv: exp(Load(x, iv)), 0, 0)
    second = nest(out, [tmp], lambda iv: Load(tmp, iv), 1, 1)
    return function("fn_slice", [x], [out], [first, second], [tmp])


def reduce_expr() -> LoweredFunc:
    """var_1[i] = sum over k of var_0[i, k] as one Reduce node (temporary), then
    var_2 = var_1 * 2 and var_3[i] = sum over k of var_2[i] * var_0[i, k], over (8,) and
    (8, 4): reductions on both sides of an elementwise block."""
    x = Buffer("var_0", F32, [8, 4])
    tmp, scaled, out = (Buffer(f"var_{k}", F32, [8]) for k in (1, 2, 3))
    k0, k1 = Var("k_0", lower=0, upper=4), Var("k_1", lower=0, upper=4)

    def row_sum(iv: list[Var]) -> Expr:
        return Reduce(ReduceType.SUM, FloatImm(0.0), Load(x, [iv[0], k0]), [k0])

    def weighted(iv: list[Var]) -> Expr:
        body = Load(scaled, iv) * Load(x, [iv[0], k1])
        return Reduce(ReduceType.SUM, FloatImm(0.0), body, [k1])

    first = nest(tmp, [x], row_sum, 0, 0)
    second = nest(scaled, [tmp], lambda iv: Load(tmp, iv) * FloatImm(2.0), 1, 1)
    third = nest(out, [scaled, x], weighted, 2, 2)
    return function("fn_reduce", [x], [out], [first, second, third], [tmp, scaled])


def reduce_init_update() -> LoweredFunc:
    """CINN's reduction shape: block var_1__reduce_init stores var_1[i] = 0, block var_1
    accumulates var_1[i] = var_1[i] + var_0[i, k] over a loop on k; var_2 = var_1 * 2."""
    x, tmp = Buffer("var_0", F32, [8, 4]), Buffer("var_1", F32, [8])
    out = Buffer("var_2", F32, [8])
    i_0, i_1, i_2 = Var("i_0", lower=0, upper=8), Var("i_1", lower=0, upper=8), Var("i_2")
    a0, b0 = Var("i0_0", lower=0, upper=8), Var("i0_1", lower=0, upper=8)
    b1 = Var("i1_1", lower=0, upper=4)
    init = ScheduleBlock(
        [a0],
        [],
        [BufferRange(tmp, [a0])],
        "var_1__reduce_init",
        Block([Store(tmp, FloatImm(0.0), [a0])]),
    )
    update = ScheduleBlock(
        [b0, b1],
        [BufferRange(tmp, [b0]), BufferRange(x, [b0, b1])],
        [BufferRange(tmp, [b0])],
        "var_1",
        Block([Store(tmp, Load(tmp, [b0]) + Load(x, [b0, b1]), [b0])]),
    )
    nests = [
        loop(i_0, 8, ScheduleBlockRealize([i_0], init)),
        loop(i_1, 8, loop(i_2, 4, ScheduleBlockRealize([i_1, i_2], update))),
        nest(out, [tmp], lambda iv: Load(tmp, iv) * FloatImm(2.0), 2, 3),
    ]
    return function("fn_reduce2", [x], [out], nests, [tmp])


def shared_outer_loop() -> LoweredFunc:
    """Two blocks under one outer loop: for i_0 { for i_1 { var_1 }; for i_2 { var_2 } }
    (not a lowering output, but what fuse and reorder must refuse)."""
    x, y, z = (Buffer(f"var_{k}", F32, [4, 8]) for k in range(3))
    i_0, i_1, i_2 = Var("i_0", lower=0, upper=4), Var("i_1", lower=0, upper=8), Var("i_2")
    first = realize(y, [x], lambda iv: exp(Load(x, iv)), 0, [i_0, i_1])
    second = realize(z, [x], lambda iv: Load(x, iv) * FloatImm(2.0), 1, [i_0, i_2])
    outer = For(i_0, 0, 4, ForType.SERIAL, Block([loop(i_1, 8, first), loop(i_2, 8, second)]))
    return function("fn_shared", [x], [y, z], [outer])


def odd_loops() -> LoweredFunc:
    """Loops the lowering does not make: var_1 over `for (i_0, 0, n)` (n a scalar
    argument) and var_2 over `for (i_1, 1, 7)` storing at i_1 - 1."""
    x, y, z = (Buffer(f"var_{k}", F32, [8]) for k in range(3))
    n = Var("n")
    i_0, i_1 = Var("i_0"), Var("i_1")
    first = realize(y, [x], lambda iv: Load(x, iv), 0, [i_0])
    second = realize(z, [x], lambda iv: Load(x, iv), 1, [i_1 - 1])
    args = [Argument(x), Argument(n), Argument(y, ArgIO.OUTPUT), Argument(z, ArgIO.OUTPUT)]
    root = ScheduleBlock((), (), (), "root", Block([loop(i_0, n, first), loop(i_1, 7, second, 1)]))
    return LoweredFunc("fn_odd", args, ScheduleBlockRealize((), root))
