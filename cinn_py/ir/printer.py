"""CINN's text form of the AST, so that dumps read like CINN's own.

The layout follows Paddle's `paddle/cinn/ir/utils/ir_printer.cc`: binary operators
in parentheses `(a + b)`, `cinn_min(a, b)`, `select(c, a, b)`, casts `float32(x)`,
loops `serial for (i, 0, 16)` with the body on the next line, blocks in braces with a
two-space indent, `ScheduleBlock(name)` followed by `iv = axis.bind(value)`, the read
and write regions and the attrs, then the body. Constants print as C literals:
int32 bare, int64 with `ll`, int16 / int8 / uint8 with a C cast, float32 with nine
significant digits and `f`, float64 with seventeen.
"""

from __future__ import annotations

import math

import numpy as np

from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.operators import PRINTED
from cinn_py.ir.visitor import Visitor
from cinn_py.pir.dtypes import DataType

_INDENT = "  "

_BINARY = PRINTED  # `operators.py`: each operator's printed spelling

_REDUCE = {
    e.ReduceType.SUM: "sum",
    e.ReduceType.PROD: "Mul",
    e.ReduceType.MAX: "Max",
    e.ReduceType.MIN: "Min",
    e.ReduceType.ALL: "&&",
    e.ReduceType.ANY: "||",
}

_INT_PREFIX = {DataType.INT8: "(int8_t)", DataType.INT16: "(int16_t)", DataType.UINT8: "(uint8_t)"}


def _float_text(value: float, dtype: DataType) -> str:
    if dtype is DataType.FLOAT16 or dtype is DataType.BFLOAT16:
        name = dtype.value
        if math.isinf(value):
            return (
                f"cinn::common::raw_uint16_to_{name}({'0x7c00' if name == 'float16' else '0x7F80'})"
            )
        if math.isnan(value):
            return (
                f"cinn::common::raw_uint16_to_{name}({'0x7e00' if name == 'float16' else '0x7FC0'})"
            )
        return f"({name}){value:.5g}f"
    if dtype is DataType.FLOAT32:
        text = _c_showpoint(float(np.float32(value)), 9)
        return text + "f" if math.isfinite(value) else text
    return _c_showpoint(value, 17)


def _c_showpoint(value: float, digits: int) -> str:
    # C++ `setprecision(n) << showpoint`: %#.ng, with inf / nan spelt as C++ does.
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:#.{digits}g}"


def _for_head(node: s.For) -> str:
    if node.bind_info is not None:
        return f"thread_bind[{node.bind_info.value}] for"
    if node.for_type is s.ForType.VECTORIZED:
        return f"vectorize[{node.extent.value}] for"
    if node.for_type is s.ForType.UNROLLED:
        return "unroll for"
    return f"{node.for_type.value} for"


def _bound(bound: int | None) -> str:
    return "undefined" if bound is None else str(bound)


class _Printer(Visitor):
    """One `visit_<Node>` per node kind, returning its text; `indent` is the nesting
    depth of the statement being printed (blocks print their children one deeper)."""

    def __init__(self) -> None:
        self.indent = 0

    def nested(self, node: e.IrNode) -> str:
        """`node`'s text one level deeper."""
        self.indent += 1
        try:
            return self.visit(node)
        finally:
            self.indent -= 1

    @property
    def pad(self) -> str:
        return _INDENT * self.indent

    def join(self, items: tuple[e.IrNode, ...], sep: str = ", ") -> str:
        return sep.join(self.visit(item) for item in items)

    def generic_visit(self, node: e.IrNode) -> str:
        raise TypeError(f"print_ir: no text form for {type(node).__name__}")

    # ---- expressions ------------------------------------------------------------------

    def visit_IntImm(self, node: e.IntImm) -> str:
        if node.dtype is DataType.BOOL:
            return "true" if node.value else "false"
        suffix = "ll" if node.dtype in (DataType.INT64, DataType.INDEX) else ""
        return f"{_INT_PREFIX.get(node.dtype, '')}{node.value}{suffix}"

    visit_UIntImm = visit_IntImm

    def visit_FloatImm(self, node: e.FloatImm) -> str:
        return _float_text(node.value, node.dtype)

    def visit_Var(self, node: e.Var) -> str:
        return node.name

    def visit_Cast(self, node: e.Cast) -> str:
        return f"{node.dtype.value}({self.visit(node.value)})"

    def binary(self, node: e.BinaryOp) -> str:
        return f"({self.visit(node.a)} {_BINARY[type(node)]} {self.visit(node.b)})"

    def visit_Min(self, node: e.Min) -> str:
        return f"cinn_min({self.visit(node.a)}, {self.visit(node.b)})"

    def visit_Max(self, node: e.Max) -> str:
        return f"cinn_max({self.visit(node.a)}, {self.visit(node.b)})"

    def visit_Not(self, node: e.Not) -> str:
        return "!" + self.visit(node.value)

    def visit_Select(self, node: e.Select) -> str:
        return f"select({self.join((node.condition, node.true_value, node.false_value))})"

    def visit_Call(self, node: e.Call) -> str:
        return f"{node.name}({self.join(node.args)})"

    def visit_Ramp(self, node: e.Ramp) -> str:
        return f"Ramp({self.visit(node.base)},{self.visit(node.stride)},{node.lanes})"

    def visit_Broadcast(self, node: e.Broadcast) -> str:
        return f"Broadcast({self.visit(node.value)},{node.lanes})"

    def visit_Load(self, node: e.Load) -> str:
        return f"{node.tensor.name}[{self.join(node.indices)}]"

    def visit_Reduce(self, node: e.Reduce) -> str:
        body, init = self.visit(node.body), self.visit(node.init)
        kind = _REDUCE[node.reduce_type]
        if node.thread_axis is not None:
            kind = f"{kind} across {node.thread_axis}"
        return f"Reduce({kind}, {body},{init})"

    def visit_ArgReduce(self, node: e.ArgReduce) -> str:
        # No CINN text form (CINN's argmax is an extern call): the kind, the body, the
        # axes whose row-major position the node yields, and the position's dtype.
        # A cross-thread one (factorize_reduction) says so as Reduce does; its thread
        # axis is the last in the list.
        kind = "argmax" if node.reduce_type is e.ReduceType.MAX else "argmin"
        if node.thread_axis is not None:
            kind = f"{kind} across {node.thread_axis}"
        axes = ", ".join(v.name for v in node.reduce_axis)
        return f"ArgReduce({kind}, {self.visit(node.body)}, [{axes}], {node.dtype.value})"

    def visit_Buffer(self, node: e.Buffer) -> str:
        return f"_Buffer_<{node.dtype.value}: {self.join(node.shape, ',')}>({node.name})"

    def visit_Tensor(self, node: e.Tensor) -> str:
        return f"Tensor({node.name}, [{self.join(node.shape, ',')}])"

    # ---- statements -------------------------------------------------------------------

    def visit_Store(self, node: s.Store) -> str:
        return f"{node.tensor.name}[{self.join(node.indices)}] = {self.visit(node.value)}"

    def visit_Let(self, node: s.Let) -> str:
        return f"{node.symbol.dtype.value} {node.symbol.name} = {self.visit(node.value)}"

    def visit_For(self, node: s.For) -> str:
        args = f"{node.loop_var.name}, {self.visit(node.min)}, {self.visit(node.extent)}"
        return f"{_for_head(node)} ({args})\n{self.pad}{self.visit(node.body)}"

    def visit_IfThenElse(self, node: s.IfThenElse) -> str:
        inner = self.pad + _INDENT
        out = f"if ({self.visit(node.condition)}) {{\n{inner}{self.nested(node.true_case)}\n{self.pad}}}"
        if node.false_case is not None:
            out += f" else {{\n{inner}{self.nested(node.false_case)}\n{self.pad}}}"
        return out

    def visit_Block(self, node: s.Block) -> str:
        inner = self.pad + _INDENT
        lines = [inner + self.nested(stmt) for stmt in node.stmts]
        return "{\n" + "\n".join(lines) + "\n" + self.pad + "}"

    def visit_BufferRange(self, node: s.BufferRange) -> str:
        ranges = ", ".join(f"{v.name}({_bound(v.lower)}:{_bound(v.upper)})" for v in node.ranges)
        return f"{node.buffer.name}[{ranges}]"

    def visit_ScheduleBlockRealize(self, node: s.ScheduleBlockRealize) -> str:
        return self.schedule_block(node.schedule_block, node.iter_values)

    def visit_ScheduleBlock(self, node: s.ScheduleBlock) -> str:
        return self.schedule_block(node, None)

    def schedule_block(self, block: s.ScheduleBlock, values: tuple[e.Expr, ...] | None) -> str:
        inner = self.pad + _INDENT
        lines = [f"ScheduleBlock({block.name})", self.pad + "{"]
        if block.iter_vars:
            names = ", ".join(v.name for v in block.iter_vars)
            if values is None:
                lines.append(f"{inner}{names}")
            else:
                lines.append(f"{inner}{names} = axis.bind({self.join(values)})")
        for label, regions in (
            ("read_buffers", block.read_buffers),
            ("write_buffers", block.write_buffers),
        ):
            if regions:
                lines.append(f"{inner}{label}({self.join(regions)})")
        if block.attrs:
            lines.append(f"{inner}attrs({', '.join(f'{k}:{v}' for k, v in block.attrs)})")
        lines.append(inner + self.nested(block.body))
        lines.append(self.pad + "}")
        return "\n".join(lines)

    def visit_SyncThreads(self, node: s.SyncThreads) -> str:
        return "__syncthreads()"

    def visit_Argument(self, node: s.Argument) -> str:
        return node.name

    def visit_LastBlockDone(self, node: s.LastBlockDone) -> str:
        return f"last_block_done({node.semaphore.name}[{self.join(node.indices)}], {node.count})"

    def visit_LoweredFunc(self, node: s.LoweredFunc) -> str:
        # Workspace arguments (no program values: a grid reduction's partials and
        # counters) follow the others with their type and shape, as nothing else
        # declares them.
        work = [a for a in node.args if a.io is s.ArgIO.WORKSPACE]
        names = ", ".join(a.name for a in node.args if a.io is not s.ArgIO.WORKSPACE)
        if work:
            spaces = ", ".join(
                f"{a.name} {a.value.dtype.value}[{self.join(a.value.shape, ', ')}]" for a in work
            )
            names += f"; workspace {spaces}"
        return f"function {node.name} ({names})\n{self.visit(node.body)}"


for _op in _BINARY:
    setattr(_Printer, "visit_" + _op.__name__, _Printer.binary)


def print_ir(node: e.IrNode) -> str:
    """The CINN text of any node (an Expr, a Stmt or a LoweredFunc)."""
    return _Printer().visit(node)
