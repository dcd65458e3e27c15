"""Group lowering: a FUSED group's ops become one LoweredFunc of loop nests.

Every op's result is a Compute built from its operands' Computes (`compute.py`). With
`inline=True` intermediates stay Computes, so each consumer recomputes its producers'
expressions and only the group's outputs are stored: one loop nest per output, whose
schedule block writes the output buffer from loads of the input buffers. With
`inline=False` every tensor an op produces is stored (intermediates in temp buffers)
and read back by its consumers, which is the form `compute_inline` undoes.

    serial for (i_0, 0, 64)
    {
      serial for (i_1, 0, 128)
      {
        ScheduleBlock(var_3)
        {
          i0_0, i1_0 = axis.bind(i_0, i_1)
          read_buffers(var_0[i0_0(0:64), i1_0(0:128)], var_1[i0_0(0:64), i1_0(0:128)])
          write_buffers(var_3[i0_0(0:64), i1_0(0:128)])
          var_3[i0_0, i1_0] = ...
        }
      }
    }

Names: buffers are `var_<N>` after the value's printed number (`NameTable`); loop vars
`i_<n>` numbered through the function; iter vars `i<dim>_<nest>`. Indices are int32
unless some tensor of the group has 2**31 elements or more (then int64 throughout).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from cinn_py.errors import ShapeError, UnsupportedOpError
from cinn_py.hlir.group import Group
from cinn_py.hlir.naming import NameTable, sanitize_identifier
from cinn_py.hlir.op_lowering.compute import Compute, Lowered, placeholder
from cinn_py.hlir.op_lowering.context import LowerContext
from cinn_py.hlir.op_lowering.registry import lowering_of, unfolded_operands
from cinn_py.hlir.op_pattern import is_reduction
from cinn_py.hlir.symbolic_dims import Dim, SymbolicDims
from cinn_py.ir.dim_values import is_dim_name
from cinn_py.ir.expr import Buffer, Call, Expr, IntImm, IrNode, Load, Var
from cinn_py.ir.simplify import bounds, simplify
from cinn_py.ir.stmt import (
    COMPUTED_ONCE,
    ArgIO,
    Argument,
    Block,
    BufferRange,
    For,
    ForType,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Stmt,
    Store,
)
from cinn_py.ir.visitor import nodes
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DYNAMIC, DenseTensorType, VectorType
from cinn_py.pir.value import Value

INT32_LIMIT = 2**31


def lower_group(
    group: Group,
    names: NameTable,
    *,
    inline: bool = True,
    symbolic: SymbolicDims | None = None,
) -> LoweredFunc:
    """The LoweredFunc `fn_<group name>` computing `group`: arguments are its inputs,
    then its outputs (`var_<N>` buffers), then the symbolic dims it reads (`S0`, ...:
    int scalars); the body is the root schedule block holding one loop nest per stored
    tensor, in program order.

    With `symbolic` (the compile's `SymbolicDims`), a group whose ops all lower over
    Expr dims (`OpLowering.symbolic`) and whose values all have symbolic shapes is
    lowered with those dims as Vars, so its kernel serves every signature; any other
    group, or one whose symbolic lowering meets what it does not handle, is lowered
    with the signature's numbers (`symbolic_fallback` says why).

    Raises UnsupportedOpError for an op without a lowering (or with a mutable-attribute
    operand that was not folded) and ShapeError for a dynamic (-1) dim."""
    for op in group.ops:
        _check_lowerable(op)
    _check_static(group, names)
    if symbolic is not None and symbolic_blocker(group, symbolic) is None:
        try:
            return _lower(group, names, inline, symbolic)
        except (TypeError, ValueError, AttributeError, ShapeError, UnsupportedOpError):
            pass  # lowered with this signature's numbers below: correct, not shared
    return _lower(group, names, inline, None)


def symbolic_blocker(group: Group, symbolic: SymbolicDims) -> str | None:
    """Why `group` is not lowered symbolically (None when it is tried): an op whose
    lowering does not take Expr dims, or no symbolic dim at all. A tensor without
    symbolic dims (one a pass made after specialisation) keeps its numbers: if they
    came from a -1 dim, the source shows them and is simply not shared."""
    for op in group.ops:
        if not lowering_of(op).symbolic:
            return f"{op.name} lowers with static dims only"
    values = list(group.inputs) + [v for op in group.ops for v in op.results]
    if not any(symbolic.is_symbolic(v) for v in values):
        return "no dim is symbolic"
    return None


def _lower(
    group: Group, names: NameTable, inline: bool, symbolic: SymbolicDims | None
) -> LoweredFunc:
    index_dtype = _index_dtype(group, symbolic is not None)

    def dims_of(value: Value) -> tuple[Dim, ...] | None:
        if symbolic is None:
            return None
        return symbolic.lowered_dims(value, index_dtype)

    values: dict[int, Lowered] = {}
    args: list[Argument] = []
    for value in group.inputs:
        buffer = _buffer(names, value, dims_of(value))
        args.append(Argument(buffer, ArgIO.INPUT))
        values[id(value)] = placeholder(buffer)
    out_buffers = {id(v): _buffer(names, v, dims_of(v)) for v in group.outputs}
    args.extend(Argument(out_buffers[id(v)], ArgIO.OUTPUT) for v in group.outputs)

    nests = _NestBuilder(index_dtype)
    temps: list[Buffer] = []
    numbers = itertools.count()  # reduce axes r_0, r_1, ... through the function
    for op in group.ops:
        operands = [_operand(values, group, op, v) for v in op.operand_values()]
        context = LowerContext(
            op,
            operands,
            index_dtype,
            numbers,
            dims_of,
            None if symbolic is None else symbolic.reduce_bound,
        )
        results = lowering_of(op).lower(context)
        per_result = [results] if op.num_results == 1 else list(results)
        for value, lowered in zip(op.results, per_result, strict=True):
            _check_result(op, value, lowered, dims_of(value))
            values[id(value)] = lowered
            if not isinstance(lowered, Compute):
                continue
            read_back = inline and is_reduction(op) and _used_inside(value, group)
            if read_back or (inline and _computed_once(op, value, lowered, group)):
                # Stored once, in a temp the schedule keeps in registers, rather than
                # recomputed by every consumer: a reduction result its group reads
                # again, or a costly value a read-back reduction folds and another op
                # reads too (softmax's exp, kept along the row walk: COMPUTED_ONCE).
                temp = Buffer(f"{names.buffer(value)}_tmp", lowered.dtype, lowered.shape)
                if nests.add(lowered, temp, None if read_back else {COMPUTED_ONCE: 1}):
                    temps.append(temp)
                values[id(value)] = placeholder(temp)
                if id(value) in out_buffers:  # a reduction that is also an output
                    nests.add(placeholder(temp), out_buffers[id(value)])
                continue
            if not _stored(value, group, inline):
                continue
            buffer = out_buffers.get(id(value))
            if buffer is None:
                buffer = _buffer(names, value, dims_of(value))
                if lowered.size:
                    temps.append(buffer)
            nests.add(lowered, buffer)
            if not inline:
                values[id(value)] = placeholder(buffer)

    root = ScheduleBlock((), (), (), "root", Block(nests.stmts))
    name = sanitize_identifier(f"fn_{group.name}")
    body = ScheduleBlockRealize((), root)
    if symbolic is not None:
        args.extend(Argument(var, ArgIO.INPUT) for var in dim_vars(body, [*args, *temps]))
    return LoweredFunc(name, args, body, temps)


def dim_vars(body: Stmt, holders: Sequence[Argument | Buffer]) -> list[Var]:
    """The symbolic dims (`S<k>` Vars) `body` and the buffers' shapes read, by name:
    the scalar arguments of a symbolic kernel."""
    roots: list[IrNode] = [body]
    for holder in holders:
        buffer = holder.value if isinstance(holder, Argument) else holder
        if isinstance(buffer, Buffer):
            roots.extend(d for d in buffer.shape if isinstance(d, IrNode))
    found: dict[str, Var] = {}
    for root in roots:
        for node in nodes(root):
            if isinstance(node, Var) and is_dim_name(node.name):
                found.setdefault(node.name, node)
    return sorted(found.values(), key=lambda v: int(v.name[1:]))


# ---- checks --------------------------------------------------------------------------


def _check_lowerable(op: Operation) -> None:
    lowering = lowering_of(op)
    if lowering is None:
        raise UnsupportedOpError(op.name, op.where(), "has no lowering")
    unfolded = unfolded_operands(op)
    if unfolded:
        raise UnsupportedOpError(
            op.name,
            op.where(),
            f"has operand(s) {', '.join(unfolded)} computed at run time; lowering needs "
            "them folded into attributes",
        )
    if not lowering.accepts(op):
        raise UnsupportedOpError(op.name, op.where(), "has no lowering for these dtypes")


def _tensor_types(value: Value) -> list[DenseTensorType]:
    type_ = value.type
    types = type_.types if isinstance(type_, VectorType) else (type_,)
    return [t for t in types if isinstance(t, DenseTensorType)]


def _check_static(group: Group, names: NameTable) -> None:
    for value in group.inputs:
        for type_ in _tensor_types(value):
            if DYNAMIC in type_.dims:
                raise ShapeError(
                    f"{group.name}: input {names.printed(value)} has dynamic dims "
                    f"{list(type_.dims)}; lowering needs static shapes"
                )
    for op in group.ops:
        for value in op.results:
            for type_ in _tensor_types(value):
                if DYNAMIC in type_.dims:
                    raise ShapeError(
                        f"{op.name} ({op.where()}): result {names.printed(value)} has dynamic "
                        f"dims {list(type_.dims)}; lowering needs static shapes"
                    )


def _index_dtype(group: Group, symbolic: bool = False) -> DataType:
    """int32 where every tensor's offsets fit, else int64. Lowered with symbolic dims, a
    reduction walks to its bucket's bound (at most twice its length), so the offsets of
    its masked steps reach past the tensor by up to a row: int32 only below half."""
    limit = INT32_LIMIT // 2 if symbolic else INT32_LIMIT
    values = list(group.inputs) + [v for op in group.ops for v in op.results]
    for value in values:
        for type_ in _tensor_types(value):
            size = 1
            for d in type_.dims:
                size *= d
            if size >= limit:
                return DataType.INT64
    return DataType.INT32


def _operand(
    values: dict[int, Lowered], group: Group, op: Operation, value: Value | None
) -> Lowered | None:
    if value is None:
        return None
    lowered = values.get(id(value))
    if lowered is None:
        raise UnsupportedOpError(
            op.name,
            op.where(),
            f"reads {value!r}, which is neither an input of {group.name} nor computed before it",
        )
    return lowered


def _check_result(
    op: Operation, value: Value, lowered: Lowered, dims: tuple[Dim, ...] | None = None
) -> None:
    """The lowering must produce the declared type (or, lowered symbolically, the
    value's symbolic dims): a wrong one is a lowering bug."""
    types = _tensor_types(value)
    computes = [lowered] if isinstance(lowered, Compute) else list(lowered)
    if dims is not None or (computes and any(not _static(c.shape) for c in computes)):
        got = [(c.dtype, tuple(map(_dim_key, c.shape))) for c in computes]
        want = [(t.data_type, tuple(map(_dim_key, dims or t.dims))) for t in types]
        if isinstance(value.type, VectorType):
            got, want = [g[0] for g in got], [w[0] for w in want]
    else:
        got = [(c.dtype, c.shape) for c in computes]
        want = [(t.data_type, t.dims) for t in types]
    if got != want:
        raise ShapeError(f"{op.name} ({op.where()}): lowered to {got}, the program declares {want}")


def _used_inside(value: Value, group: Group) -> bool:
    members = {id(op) for op in group.ops}
    return any(id(user) in members for user in value.users())


def _computed_once(op: Operation, value: Value, lowered: Lowered, group: Group) -> bool:
    """Whether `value` (not an output) is worth a temp of its own: a reduction of the
    group folds it and the group reads that reduction back (so the row schedule walks
    it), another op of the group reads it too, and its expression calls an intrinsic
    (an exp: the cost that makes recomputing it worse than keeping it)."""
    if not isinstance(lowered, Compute) or is_reduction(op) or lowered.size == 0:
        return False
    if any(value is v for v in group.outputs):
        return False
    members = {id(o) for o in group.ops}
    users = [u for u in value.users() if id(u) in members]
    folded = any(is_reduction(u) and any(_used_inside(r, group) for r in u.results) for u in users)
    if not folded or len({id(u) for u in users}) < 2:
        return False
    at = tuple(Var(f"i{d}", IntImm(0).dtype) for d in range(lowered.rank))
    return any(isinstance(n, Call) for n in nodes(lowered(at)))


def _stored(value: Value, group: Group, inline: bool) -> bool:
    if any(value is v for v in group.outputs):
        return True
    if inline:
        return False
    return not value.use_empty()


def _static(shape: Sequence[Dim]) -> bool:
    return all(isinstance(d, int) for d in shape)


def _dim_key(dim: Dim) -> object:
    """A dim comparable by value: ints as they are, expressions as printed."""
    return dim if isinstance(dim, int) else str(simplify(dim))


def _buffer(names: NameTable, value: Value, dims: tuple[Dim, ...] | None = None) -> Buffer:
    type_ = value.type
    if not isinstance(type_, DenseTensorType):
        op = value.defining_op
        raise UnsupportedOpError(
            op.name if op is not None else "<argument>",
            op.where() if op is not None else names.printed(value),
            f"gives {names.printed(value)}, a Tensor[], as a group input or output; "
            "only tensors cross a group's boundary",
        )
    return Buffer(names.buffer(value), type_.data_type, type_.dims if dims is None else dims)


# ---- loop nests ------------------------------------------------------------------------


class _NestBuilder:
    """One loop nest per stored tensor, with names unique in the function."""

    def __init__(self, index_dtype: DataType) -> None:
        self.index_dtype = index_dtype
        self.stmts: list[Stmt] = []
        self.loops = 0

    def add(self, compute: Compute, buffer: Buffer, attrs: dict[str, int] | None = None) -> bool:
        """Adds the nest storing `compute` into `buffer` (its block with `attrs`); False
        (and no nest) for an empty tensor, which has nothing to compute and needs no
        temp."""
        if compute.size == 0:
            return False
        nest = len(self.stmts)
        dtype = self.index_dtype
        loop_vars, iter_vars = [], []
        for dim, extent in enumerate(compute.shape):
            upper = extent if isinstance(extent, int) else None
            loop_vars.append(Var(f"i_{self.loops}", dtype, 0, upper))
            iter_vars.append(Var(f"i{dim}_{nest}", dtype, 0, upper))
            self.loops += 1
        # Dims of extent 1 are read at the constant 0, so no index keeps a var there.
        at = [
            IntImm(0, dtype) if isinstance(e, int) and e == 1 else v
            for e, v in zip(compute.shape, iter_vars, strict=True)
        ]
        value = compute(at)
        reads = read_regions(value, iter_vars)
        writes = [BufferRange(buffer, iter_vars)]
        block = ScheduleBlock(
            iter_vars, reads, writes, buffer.name, Store(buffer, value, iter_vars), attrs or ()
        )
        stmt: Stmt = ScheduleBlockRealize(loop_vars, block)
        for var, extent in zip(reversed(loop_vars), reversed(compute.shape), strict=True):
            stmt = For(var, 0, extent, ForType.SERIAL, Block([stmt]))
        self.stmts.append(stmt)
        return True


def read_regions(value: Expr, iter_vars: Sequence[Var]) -> list[BufferRange]:
    """The regions of each buffer `value` loads, in first-load order: per dim, the iter
    var when every load indexes that dim by it, else a var spanning the indices'
    constant bounds (the whole dim when they are unknown)."""
    by_buffer: dict[str, tuple[Buffer, list[Load]]] = {}
    for load in (n for n in nodes(value) if isinstance(n, Load)):
        by_buffer.setdefault(load.tensor.name, (load.tensor, []))[1].append(load)
    regions = []
    for buffer, loads in by_buffer.values():
        ranges = []
        for dim, extent in enumerate(buffer.shape):
            indices = [load.indices[dim] for load in loads]
            first = indices[0]
            if isinstance(first, Var) and all(i is first for i in indices):
                ranges.append(first)
                continue
            if not isinstance(extent, IntImm):  # a symbolic dim: the whole of it
                ranges.append(Var(f"{buffer.name}_d{dim}", first.dtype, 0))
                continue
            ranges.append(_span(f"{buffer.name}_d{dim}", indices, int(extent.value), first.dtype))
        regions.append(BufferRange(buffer, ranges))
    return regions


def _span(name: str, indices: Sequence[Expr], extent: int, dtype: DataType) -> Var:
    low, high = extent, -1
    for index in indices:
        b = bounds(index)
        lo, hi = (0, extent - 1) if b is None else b
        low, high = min(low, lo), max(high, hi)
    low, high = max(low, 0), min(high, extent - 1)
    if low > high:
        low, high = 0, extent - 1
    return Var(name, dtype, low, high + 1)
