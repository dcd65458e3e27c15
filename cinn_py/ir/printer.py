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
from cinn_py.pir.dtypes import DataType

_INDENT = "  "

_BINARY = {
    e.Add: "+",
    e.Sub: "-",
    e.Mul: "*",
    e.Div: "/",
    e.Mod: "%",
    e.EQ: "==",
    e.NE: "!=",
    e.LT: "<",
    e.LE: "<=",
    e.GT: ">",
    e.GE: ">=",
    e.And: "and",
    e.Or: "or",
}

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


def _text(node: e.IrNode, indent: int) -> str:
    pad = _INDENT * indent
    if isinstance(node, (e.IntImm, e.UIntImm)):
        if node.dtype is DataType.BOOL:
            return "true" if node.value else "false"
        suffix = "ll" if node.dtype in (DataType.INT64, DataType.INDEX) else ""
        return f"{_INT_PREFIX.get(node.dtype, '')}{node.value}{suffix}"
    if isinstance(node, e.FloatImm):
        return _float_text(node.value, node.dtype)
    if isinstance(node, e.StringImm):
        return f'"{node.value}"'
    if isinstance(node, e.Var):
        return node.name
    if isinstance(node, e.Cast):
        return f"{node.dtype.value}({_text(node.value, indent)})"
    op = _BINARY.get(type(node))
    if op is not None:
        return f"({_text(node.a, indent)} {op} {_text(node.b, indent)})"
    if isinstance(node, (e.Min, e.Max)):
        name = "cinn_min" if isinstance(node, e.Min) else "cinn_max"
        return f"{name}({_text(node.a, indent)}, {_text(node.b, indent)})"
    if isinstance(node, e.Not):
        return "!" + _text(node.value, indent)
    if isinstance(node, e.Select):
        parts = (node.condition, node.true_value, node.false_value)
        return "select(" + ", ".join(_text(p, indent) for p in parts) + ")"
    if isinstance(node, e.Call):
        return f"{node.name}({_join(node.args, indent)})"
    if isinstance(node, e.Ramp):
        return f"Ramp({_text(node.base, indent)},{_text(node.stride, indent)},{node.lanes})"
    if isinstance(node, e.Broadcast):
        return f"Broadcast({_text(node.value, indent)},{node.lanes})"
    if isinstance(node, e.Load):
        return f"{node.tensor.name}[{_join(node.indices, indent)}]"
    if isinstance(node, e.Reduce):
        body, init = _text(node.body, indent), _text(node.init, indent)
        return f"Reduce({_REDUCE[node.reduce_type]}, {body},{init})"
    if isinstance(node, e.Buffer):
        dims = ",".join(_text(d, indent) for d in node.shape)
        return f"_Buffer_<{node.dtype.value}: {dims}>({node.name})"
    if isinstance(node, e.Tensor):
        dims = ",".join(_text(d, indent) for d in node.shape)
        return f"Tensor({node.name}, [{dims}])"
    if isinstance(node, s.Store):
        return f"{node.tensor.name}[{_join(node.indices, indent)}] = {_text(node.value, indent)}"
    if isinstance(node, s.Let):
        return f"{node.symbol.dtype.value} {node.symbol.name} = {_text(node.value, indent)}"
    if isinstance(node, s.For):
        head = _for_head(node)
        args = f"{node.loop_var.name}, {_text(node.min, indent)}, {_text(node.extent, indent)}"
        return f"{head} ({args})\n{pad}{_text(node.body, indent)}"
    if isinstance(node, s.IfThenElse):
        inner = _INDENT * (indent + 1)
        out = f"if ({_text(node.condition, indent)}) {{\n{inner}{_text(node.true_case, indent + 1)}\n{pad}}}"
        if node.false_case is not None:
            out += f" else {{\n{inner}{_text(node.false_case, indent + 1)}\n{pad}}}"
        return out
    if isinstance(node, s.Block):
        inner = _INDENT * (indent + 1)
        lines = [inner + _text(st, indent + 1) for st in node.stmts]
        return "{\n" + "\n".join(lines) + "\n" + pad + "}"
    if isinstance(node, s.BufferRange):
        ranges = ", ".join(f"{v.name}({_bound(v.lower)}:{_bound(v.upper)})" for v in node.ranges)
        return f"{node.buffer.name}[{ranges}]"
    if isinstance(node, s.ScheduleBlockRealize):
        return _schedule_block(node.schedule_block, node.iter_values, indent)
    if isinstance(node, s.ScheduleBlock):
        return _schedule_block(node, None, indent)
    if isinstance(node, s.Alloc):
        return f"alloc({node.buffer.name}, {_join(node.extents, indent)})"
    if isinstance(node, s.Free):
        return f"free({node.buffer.name})"
    if isinstance(node, s.Argument):
        return f"{node.name}"
    if isinstance(node, s.LoweredFunc):
        names = ", ".join(a.name for a in node.args)
        return f"function {node.name} ({names})\n{_text(node.body, indent)}"
    if isinstance(node, s.Module):
        body = "".join(_text(f, indent) + "\n" for f in node.functions)
        return f"Module {node.name} {{\n\n{body}\n\n}}"
    raise TypeError(f"print_ir: no text form for {type(node).__name__}")


def _join(items: tuple[e.Expr, ...], indent: int) -> str:
    return ", ".join(_text(i, indent) for i in items)


def _bound(bound: int | None) -> str:
    return "undefined" if bound is None else str(bound)


def _for_head(node: s.For) -> str:
    if node.bind_info is not None:
        return f"thread_bind[{node.bind_info.value}] for"
    if node.for_type is s.ForType.VECTORIZED:
        return f"vectorize[{node.extent.value}] for"
    if node.for_type is s.ForType.UNROLLED:
        return "unroll for"
    return f"{node.for_type.value} for"


def _schedule_block(block: s.ScheduleBlock, values: tuple[e.Expr, ...] | None, indent: int) -> str:
    pad = _INDENT * indent
    inner = _INDENT * (indent + 1)
    lines = [f"ScheduleBlock({block.name})", pad + "{"]
    if block.iter_vars:
        names = ", ".join(v.name for v in block.iter_vars)
        if values is None:
            lines.append(f"{inner}{names}")
        else:
            lines.append(f"{inner}{names} = axis.bind({_join(values, indent + 1)})")
    for label, regions in (
        ("read_buffers", block.read_buffers),
        ("write_buffers", block.write_buffers),
    ):
        if regions:
            lines.append(f"{inner}{label}({', '.join(_text(r, indent + 1) for r in regions)})")
    if block.attrs:
        lines.append(f"{inner}attrs({', '.join(f'{k}:{v}' for k, v in block.attrs)})")
    lines.append(inner + _text(block.body, indent + 1))
    lines.append(pad + "}")
    return "\n".join(lines)


def print_ir(node: e.IrNode) -> str:
    """The CINN text of any node (an Expr, a Stmt, a LoweredFunc or a Module)."""
    return _text(node, 0)
