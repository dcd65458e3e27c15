"""The C-family half of code generation: loop IR to C++ statements and expressions.

`CRenderer` holds what every C-like target shares, as class attributes a target's
renderer overrides (tinygrad's cstyle idea): type names, operator spellings, math
function names, how literals and casts are written. One instance renders the body of
one function; `codegen_cuda.CudaRenderer` adds what only CUDA has (thread binding,
vector lanes, `__half`).

Every identifier it writes comes from `CNames`, which passes the IR's names through
`sanitize_identifier` with one taken-set per function, so no name from a program reaches
the source as it was spelled. Binary operators print fully parenthesised (`(a + b)`),
except at the top of a statement; buffer accesses index the flat, row-major offset of
their static shape, simplified.

C leaves signed overflow, integer division by zero (and INT_MIN / -1) and float to
integer conversion out of range undefined; the IR defines them (wrap-around, 0, the
saturating `cvt.rzi` rule), and the renderer emits the runtime header's defined forms:
`cinn_wrap_add` / `_sub` / `_mul` for 32- and 64-bit *value* arithmetic (a stored
value, a Reduce's body and combine, a Let) that reads values (`reads_values`),
`cinn_div` / `cinn_mod` for a divisor that may be 0 or -1 (not a constant other than
those, nor an expression of symbolic dims at least 1, `simplify.lower_bound`),
`cinn_abs`, `cinn_int_pow`, `cinn_float_to_int<T>`. Index arithmetic (loop bounds,
iter values, access offsets, guards) stays plain `int` operators: it is assumed not to
overflow, which lets NVVM optimize addressing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any, ClassVar

import numpy as np

from cinn_py.backends.loop_invariants import invariant_calls
from cinn_py.errors import UnsupportedOpError
from cinn_py.hlir.naming import sanitize_identifier
from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.dim_values import is_dim_name
from cinn_py.ir.intrinsics import INTRINSICS
from cinn_py.ir.live_steps import live_extent
from cinn_py.ir.operators import C_SPELLING
from cinn_py.ir.schedule.analysis import all_loads, outermost_reductions
from cinn_py.ir.simplify import lower_bound, reads_values, simplify
from cinn_py.ir.visitor import Visitor, structural_key
from cinn_py.pir.dtypes import DataType

INT32_MAX = 2**31 - 1

CPP_KEYWORDS = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast
    else enum explicit export extern false float for friend goto if inline int long
    mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected
    public register reinterpret_cast requires return short signed sizeof static
    static_assert static_cast struct switch template this thread_local throw true try
    typedef typeid typename union unsigned using virtual void volatile wchar_t while xor
    xor_eq main std restrict""".split()
)
"""C++ keywords and names a translation unit must not redefine."""

FLOAT_MATH: dict[str, tuple[str, int]] = {
    i.name: (i.c, i.arity) for i in INTRINSICS.values() if i.c is not None
}
"""Intrinsic -> (C name of its double form, arity), from `ir/intrinsics.py`; the float
form adds `f`. Accurate library functions: results must match NumPy (fast math is
the CUDA renderer's option)."""

_RESERVED_FORM = re.compile(r"^(?:__|_[A-Z])|^[A-Z0-9_]*[A-Z][A-Z0-9_]*$")
"""Names C++ reserves (`__x`, `_X`) and macro-like all-capitals names (`NAN`, `EOF`),
which a header may define as a macro."""


def c_identifier(text: str, taken: set[str]) -> str:
    """`text` as a fresh C identifier, unique in `taken` (which it joins)."""
    name = sanitize_identifier(text)
    if _RESERVED_FORM.match(name):
        name = "v" + name if name.startswith("_") else "v_" + name
    return sanitize_identifier(name, taken)


class CNames:
    """The C names of one function: IR names declared in nested scopes (as the C code
    nests them), each given a name unique in the whole function."""

    def __init__(self, reserved: Iterable[str]) -> None:
        self.taken: set[str] = set(reserved)
        self._scopes: list[dict[str, str]] = [{}]

    def declare(self, ir_name: str) -> str:
        """A new C name for `ir_name`, visible until the current scope ends."""
        name = c_identifier(ir_name, self.taken)
        self._scopes[-1][ir_name] = name
        return name

    def fresh(self, hint: str) -> str:
        """A C name for a local codegen introduces (not visible by an IR name)."""
        return c_identifier(hint, self.taken)

    def lookup(self, ir_name: str) -> str:
        for scope in reversed(self._scopes):
            if ir_name in scope:
                return scope[ir_name]
        raise ValueError(f"variable '{ir_name}' is used where it is not defined")

    @contextmanager
    def scope(self) -> Iterator[None]:
        self._scopes.append({})
        try:
            yield
        finally:
            self._scopes.pop()


def static_shape(node: e.Buffer | e.Tensor) -> tuple[int, ...]:
    dims = []
    for dim in node.shape:
        if not isinstance(dim, e.IntImm):
            raise ValueError(f"buffer '{node.name}' has a dynamic shape; codegen needs static ones")
        dims.append(dim.value)
    return tuple(dims)


def flat_index(node: e.Buffer | e.Tensor, indices: tuple[e.Expr, ...]) -> e.Expr:
    """The row-major element offset of `indices` into `node`'s static shape, in int64
    when an index is int64 or the buffer holds more than 2**31 - 1 elements."""
    if not all(isinstance(dim, e.IntImm) for dim in node.shape):
        return _symbolic_flat_index(node, indices)
    shape = static_shape(node)
    wide = math.prod(shape) > INT32_MAX or any(i.dtype is DataType.INT64 for i in indices)
    dtype = DataType.INT64 if wide else DataType.INT32
    offset: e.Expr = e.IntImm(0, dtype)
    for index, dim in zip(indices, shape, strict=True):
        index = index if index.dtype is dtype else e.Cast(dtype, index)
        offset = offset * e.IntImm(dim, dtype) + index
    return simplify(offset)


def _symbolic_flat_index(node: e.Buffer | e.Tensor, indices: tuple[e.Expr, ...]) -> e.Expr:
    """`flat_index` of a buffer whose shape reads symbolic dims (kernel arguments): the
    same row-major offset with those dims as expressions, in the indices' dtype (the
    function's index dtype, chosen for the sizes of the signature it was lowered at)."""
    wide = any(i.dtype is DataType.INT64 for i in indices) or any(
        d.dtype is DataType.INT64 for d in node.shape
    )
    dtype = DataType.INT64 if wide else DataType.INT32
    offset: e.Expr = e.IntImm(0, dtype)
    for index, dim in zip(indices, node.shape, strict=True):
        index = index if index.dtype is dtype else e.Cast(dtype, index)
        dim = dim if dim.dtype is dtype else e.Cast(dtype, dim)
        offset = offset * dim + index
    return simplify(offset)


def array_count(buffer: e.Buffer) -> int:
    """The elements of on-chip `buffer`'s array (a thread's registers for a local
    buffer, the thread block's shared array for a shared one): its array dims' size."""
    return math.prod(_array_extents(buffer))


def _array_extents(buffer: e.Buffer) -> list[int]:
    """The extents of `buffer`'s array dims, which must be constants (its other dims,
    which the thread's position picks, may be symbolic)."""
    extents = []
    for d in buffer.array_dims:
        dim = buffer.shape[d]
        if not isinstance(dim, e.IntImm):
            raise ValueError(
                f"buffer '{buffer.name}' has the symbolic array dim {d} ({dim!r}); "
                "an on-chip array needs constant extents"
            )
        extents.append(dim.value)
    return extents


def is_on_chip(node: e.Buffer | e.Tensor) -> bool:
    """Whether `node` is a register (local) or shared-memory array, which codegen
    indexes by `array_offset` over its array dims, never by its logical shape."""
    return isinstance(node, e.Buffer) and node.memory_type is not e.MemoryType.GLOBAL


def array_offset(node: e.Load | s.Store) -> e.Expr:
    """The element an on-chip buffer access names: the row-major offset of its indices
    at the buffer's array dims (0 with none). Unrolled loops make a register's
    offset a constant."""
    buffer = node.tensor
    offset: e.Expr = e.IntImm(0)
    for d, extent in zip(buffer.array_dims, _array_extents(buffer), strict=True):
        index = node.indices[d]
        index = index if index.dtype is DataType.INT32 else e.Cast(DataType.INT32, index)
        offset = offset * e.IntImm(extent) + index
    return simplify(offset)


def reads_registers(node: e.Expr) -> bool:
    """Whether `node` loads a register array (a local buffer with register dims): the
    loops around such a load are unrolled, or the array would live in local memory."""
    return any(
        isinstance(load.tensor, e.Buffer)
        and load.tensor.memory_type is e.MemoryType.LOCAL
        and load.tensor.array_dims
        for load in all_loads(node)
    )


def power_of_two(node: e.Call) -> e.Call:
    """`pow(2, y)` of floats as `exp2(y)`: the same function (NaN, infinities and 0
    alike), a few instructions where pow takes tens (CUDA's `exp2f` is MUFU.EX2 with its
    range scaling, within 2 ulp). Softmax with a 16-bit result takes its exp that way
    (`ops/nn.py`); a program's own `elementwise_pow(2, y)` gains as well."""
    if node.name != "pow" or len(node.args) != 2 or not node.dtype.is_float:
        return node
    base, exponent = node.args
    if isinstance(base, e.FloatImm) and base.value == 2.0 and exponent.dtype is node.dtype:
        return e.Call("exp2", (exponent,), node.dtype, e.CallType.INTRINSIC)
    return node


class CRenderer(Visitor):
    """Renders the statements of one function as C++ lines.

    Expressions render to text (`visit_Add` returns `"(a + b)"`); statements append
    lines at the current depth. A node kind without a rendering raises
    UnsupportedOpError naming it and the function.
    """

    type_names: ClassVar[dict[DataType, str]] = {
        DataType.BOOL: "bool",
        DataType.INT8: "signed char",
        DataType.UINT8: "unsigned char",
        DataType.INT16: "short",
        DataType.INT32: "int",
        DataType.INT64: "long long",
        DataType.INDEX: "long long",
        DataType.FLOAT32: "float",
        DataType.FLOAT64: "double",
    }
    binary_ops: ClassVar[dict[type, str]] = dict(C_SPELLING)  # `ir/operators.py`
    min_max: ClassVar[dict[type, str]] = {e.Min: "cinn_min", e.Max: "cinn_max"}
    float_math: ClassVar[dict[str, tuple[str, int]]] = FLOAT_MATH
    float_tests: ClassVar[frozenset[str]] = frozenset(n for n, i in INTRINSICS.items() if i.test)
    narrow_ints: ClassVar[frozenset[DataType]] = frozenset(
        {DataType.INT8, DataType.UINT8, DataType.INT16}
    )
    """Integer types C promotes to int: their arithmetic is cast back, so it wraps as the
    IR's does (nothing overflows in int)."""
    wrapping_ops: ClassVar[dict[type, str]] = {
        e.Add: "cinn_wrap_add",
        e.Sub: "cinn_wrap_sub",
        e.Mul: "cinn_wrap_mul",
    }
    """Value arithmetic of the int types that can overflow: the runtime header's
    two's-complement forms (C's signed overflow is undefined)."""
    checked_division: ClassVar[dict[type, str]] = {e.Div: "cinn_div", e.Mod: "cinn_mod"}
    """Integer `/` and `%` by a divisor that may be 0 or -1: 0 for a zero divisor,
    INT_MIN / -1 wraps (C traps or is undefined)."""
    runtime_helpers: ClassVar[frozenset[str]] = frozenset(
        {
            "cinn_min",
            "cinn_max",
            "cinn_vec",
            "cinn_wrap_add",
            "cinn_wrap_sub",
            "cinn_wrap_mul",
            "cinn_abs",
            "cinn_div",
            "cinn_mod",
            "cinn_int_pow",
            "cinn_clamp_int",
            "cinn_float_to_int",
            "cinn_float_to_int_impl",
        }
    )
    """The runtime header's names this renderer's code uses."""
    reserved: ClassVar[frozenset[str]] = (
        CPP_KEYWORDS
        | {name + suffix for name, _ in FLOAT_MATH.values() for suffix in ("", "f")}
        | runtime_helpers
        | {"abs", "llabs", "isnan", "isinf", "isfinite"}
    )
    """Names the generated code uses itself: no IR name may take one."""
    indent_unit: ClassVar[str] = "  "

    def __init__(self, func: s.LoweredFunc, names: CNames) -> None:
        self.func = func
        self.names = names
        self.lines: list[str] = []
        self.depth = 1
        self.loop_vars: dict[str, e.Var] = {}
        """Enclosing loop variables by IR name, with their constant ranges as bounds."""
        self.accumulators: dict[int, str] = {}
        """The C local holding each hoisted Reduce's value, by the node's `id`."""
        self.invariants: dict[tuple[Any, ...], str] = {}
        """The `const` local holding each math call an enclosing loop hoisted
        (`hoisting_invariants`), by the call's structural key."""
        self.in_value = False
        """Whether the expression being rendered is a value (its integer arithmetic
        wraps) rather than an index (plain `int` arithmetic)."""
        self.value_vars: set[str] = {
            a.name for a in func.args if isinstance(a.value, e.Var) and not is_dim_name(a.name)
        }
        """IR names of the Vars holding values (scalar arguments, Let symbols). A symbolic
        dim (`S0`) is an index, as a loop bound is: a mask `r < S0 * 8192` in a
        reduction's body stays plain `int` arithmetic."""
        self._reads_values: dict[int, tuple[e.Expr, bool]] = {}

    # ---- output ------------------------------------------------------------------------

    def line(self, text: str) -> None:
        self.lines.append(self.indent_unit * self.depth + text)

    @contextmanager
    def braced(self, head: str) -> Iterator[None]:
        """`head {`, the lines written inside one level deeper and in a new name scope, `}`."""
        self.line(head + " {" if head else "{")
        self.depth += 1
        try:
            with self.names.scope():
                yield
        finally:
            self.depth -= 1
            self.line("}")

    def unsupported(self, what: str, why: str) -> UnsupportedOpError:
        """UnsupportedOpError: `what` (an IR node kind, an intrinsic, a dtype) and why,
        in this function."""
        return UnsupportedOpError(what, f"code generation of {self.func.name}", why)

    def generic_visit(self, node: e.IrNode) -> Any:
        raise self.unsupported(f"ir.{type(node).__name__}", "has no C form")

    # ---- types and literals ------------------------------------------------------------

    def type_name(self, dtype: DataType) -> str:
        name = self.type_names.get(dtype)
        if name is None:
            raise self.unsupported(dtype.value, "is a dtype this target has no type for")
        return name

    def float_literal(self, value: float, dtype: DataType) -> str:
        """An exact literal: the shortest decimal that reads back as the same value."""
        double = dtype is DataType.FLOAT64
        if math.isnan(value):
            return "CINN_PY_NAN_D" if double else "CINN_PY_NAN_F"
        if math.isinf(value):
            text = "CINN_PY_INF_D" if double else "CINN_PY_INF_F"
            return text if value > 0 else f"(-{text})"
        if double:
            return repr(value)
        return str(np.float32(value)) + "f"

    def visit_IntImm(self, node: e.IntImm) -> str:
        value, dtype = node.value, node.dtype
        if dtype in (DataType.INT64, DataType.INDEX):
            return "(-9223372036854775807ll - 1ll)" if value == -(2**63) else f"{value}ll"
        if dtype is DataType.INT32:
            return "(-2147483647 - 1)" if value == -(2**31) else str(value)
        return f"(({self.type_name(dtype)}){value})"

    def visit_UIntImm(self, node: e.UIntImm) -> str:
        if node.dtype is DataType.BOOL:
            return "true" if node.value else "false"
        return self.visit_IntImm(node)

    def visit_FloatImm(self, node: e.FloatImm) -> str:
        if node.dtype not in (DataType.FLOAT32, DataType.FLOAT64):
            raise self.unsupported("ir.FloatImm", f"has no C form of dtype {node.dtype.value}")
        return self.float_literal(node.value, node.dtype)

    # ---- expressions -------------------------------------------------------------------

    def expr(self, node: e.Expr) -> str:
        """`node` as a whole expression (a statement's value, a condition, an index): no
        parentheses around its outermost operator."""
        text = self.visit(node)
        if type(node) in self.binary_ops and text.startswith("(") and text.endswith(")"):
            depth = 0
            for i, char in enumerate(text):
                depth += {"(": 1, ")": -1}.get(char, 0)
                if depth == 0:
                    return text[1:-1] if i == len(text) - 1 else text
        return text

    def value(self, node: e.Expr) -> str:
        """`node` as a whole expression that is a value: its integer arithmetic wraps."""
        with self.context(value=True):
            return self.expr(node)

    def index(self, node: e.Expr) -> str:
        """`node` as a whole expression that is an index: plain `int` arithmetic."""
        with self.context(value=False):
            return self.expr(node)

    @contextmanager
    def context(self, value: bool) -> Iterator[None]:
        outer, self.in_value = self.in_value, value
        try:
            yield
        finally:
            self.in_value = outer

    def visit_Var(self, node: e.Var) -> str:
        return self.names.lookup(node.name)

    def cast(self, dtype: DataType, value: e.Expr) -> str:
        """`value` converted to `dtype`; a float to an integer by the runtime header's
        `cinn_float_to_int<T>` (truncate, saturate, NaN -> 0)."""
        if value.dtype is dtype:
            return self.visit(value)
        if dtype.is_integer and value.dtype.is_float:
            return self.float_to_int(dtype, self.expr(value))
        return f"static_cast<{self.type_name(dtype)}>({self.expr(value)})"

    def float_to_int(self, dtype: DataType, text: str) -> str:
        """Float or double `text` converted to integer `dtype`, defined for every input."""
        return f"cinn_float_to_int<{self.type_name(dtype)}>({text})"

    def visit_Cast(self, node: e.Cast) -> str:
        return self.cast(node.dtype, node.value)

    def binary(self, node: e.BinaryOp) -> str:
        helper = self.integer_helper(node)
        if helper is not None:
            text = f"{helper}({self.expr(node.a)}, {self.expr(node.b)})"
            if node.dtype in self.narrow_ints:
                return f"static_cast<{self.type_name(node.dtype)}>({text})"
            return text
        text = f"({self.visit(node.a)} {self.binary_ops[type(node)]} {self.visit(node.b)})"
        if node.dtype in self.narrow_ints:
            return f"static_cast<{self.type_name(node.dtype)}>{text}"
        return text

    def integer_helper(self, node: e.BinaryOp) -> str | None:
        """The runtime header's function for integer `node` where C's operator is
        undefined for some operands: `/` and `%` unless the divisor is a constant other
        than 0 and -1 or never below 1; `+`, `-`, `*` of int32 / int64 values (in a value context, on
        what memory or a conversion gave: index arithmetic is assumed not to overflow)."""
        if not node.dtype.is_integer:
            return None
        if type(node) in self.checked_division:
            divisor = node.b
            if isinstance(divisor, (e.IntImm, e.UIntImm)):
                return None if divisor.value not in (0, -1) else self.checked_division[type(node)]
            if (lower_bound(divisor) or 0) >= 1:
                # never 0 or -1: a tile count over a symbolic dim, `(S0 + 31) / 32` (the
                # helper's branches at every use took a 2-D transpose's tile kernel from
                # 226 SASS instructions a thread to 1151)
                return None
            return self.checked_division[type(node)]
        if type(node) not in self.wrapping_ops or node.dtype in self.narrow_ints:
            return None
        if not self.in_value:
            return None
        if not reads_values(node, frozenset(self.value_vars), self._reads_values):
            return None
        return self.wrapping_ops[type(node)]

    def visit_Min(self, node: e.Min) -> str:
        return f"{self.min_max[type(node)]}({self.expr(node.a)}, {self.expr(node.b)})"

    visit_Max = visit_Min

    def visit_Not(self, node: e.Not) -> str:
        return f"(!{self.visit(node.value)})"

    def visit_Select(self, node: e.Select) -> str:
        cond, a, b = (self.visit(x) for x in (node.condition, node.true_value, node.false_value))
        return f"({cond} ? {a} : {b})"

    def invariant_name(self, node: e.Call) -> str | None:
        """The `const` local an enclosing loop hoisted `node` into, if any."""
        return self.invariants.get(structural_key(node)) if self.invariants else None

    def visit_Call(self, node: e.Call) -> str:
        hoisted = self.invariant_name(node)
        if hoisted is not None:
            return hoisted
        if node.call_type is not e.CallType.INTRINSIC:
            raise self.unsupported(node.name, "is an extern call, which codegen does not emit")
        node = power_of_two(node)
        args = ", ".join(self.expr(a) for a in node.args)
        if node.name in self.float_tests:
            if len(node.args) != 1 or not node.args[0].dtype.is_float:
                raise self.unsupported(node.name, "needs one float argument")
            # C's isnan and friends return int (non-zero for true).
            return f"({node.name}({args}) != 0)"
        text = f"{self.math_function(node)}({args})"
        if node.dtype in self.narrow_ints:  # abs of a char or short is an int
            return f"static_cast<{self.type_name(node.dtype)}>({text})"
        return text

    def math_function(self, node: e.Call) -> str:
        """The C function computing intrinsic `node` on its dtype."""
        name, arity = node.name, len(node.args)
        if name == "abs" and node.dtype.is_integer and arity == 1:
            return "cinn_abs"
        if name == "pow" and node.dtype.is_integer and arity == 2:
            return "cinn_int_pow"
        spelled = self.float_math.get(name)
        if spelled is None or arity != spelled[1]:
            raise self.unsupported(name, f"is not an intrinsic of {arity} argument(s)")
        if node.dtype is DataType.FLOAT32:
            return spelled[0] + "f"
        if node.dtype is DataType.FLOAT64:
            return spelled[0]
        raise self.unsupported(name, f"has no form returning {node.dtype.value}")

    def access(self, node: e.Load | s.Store) -> str:
        """`buffer[offset]`, the element a Load or Store touches. An on-chip buffer is
        an array over its `array_dims` (the GPU axes pick the rest: the schedule proved
        each thread, or thread block, touches only its own elements), `buffer[0]` with
        none."""
        name = e.storage_name(node.tensor)
        if is_on_chip(node.tensor):
            return f"{self.names.lookup(name)}[{self.index(array_offset(node))}]"
        offset = self.index(flat_index(node.tensor, node.indices))
        return f"{self.names.lookup(name)}[{offset}]"

    def visit_Load(self, node: e.Load) -> str:
        return self.access(node)

    # ---- statements --------------------------------------------------------------------

    def statement(self, node: e.IrNode) -> None:
        """Renders a statement (an Expr standing alone is evaluated for its effect)."""
        if isinstance(node, e.Expr):
            self.line(self.expr(node) + ";")
        else:
            self.visit(node)

    def visit_Store(self, node: s.Store) -> None:
        self.store(self.access(node), node.value)

    def store(self, target: str, value: e.Expr, only_if: str | None = None) -> None:
        """`target = value;`, after the accumulator loops of the Reduces in `value`
        (visible to this statement only); with `only_if`, the assignment alone under
        `if (only_if)` (the accumulators still run where every thread reaches them)."""
        outer = dict(self.accumulators)
        self.hoist_reductions(value)
        if only_if is None:
            self.line(f"{target} = {self.value(value)};")
        else:
            with self.braced(f"if ({only_if})"):
                self.line(f"{target} = {self.value(value)};")
        self.accumulators = outer

    # ---- reductions ----------------------------------------------------------------------

    def hoist_reductions(self, node: e.Expr) -> None:
        """Emits, before the statement that uses them, the accumulator loop of every
        Reduce in `node` (outermost ones: a Reduce inside another's body is emitted
        inside that one's loop); `visit_Reduce` then names the accumulator."""
        for reduce in outermost_reductions(node):
            if id(reduce) not in self.accumulators:
                if isinstance(reduce, e.ArgReduce):
                    self.emit_arg_reduction(reduce)
                    continue
                self.emit_reduction(reduce)

    def emit_reduction(self, node: e.Reduce) -> None:
        """`T acc = init; for (r ...) { const T v = body; acc = combine(acc, v); }`."""
        self.hoist_reductions(node.init)
        if node.thread_axis is not None:
            self.emit_cross_thread_reduction(node)
            return
        self.emit_serial_reductions([node])

    def emit_serial_reductions(self, nodes: list[e.Reduce]) -> None:
        """Serial Reduces over the same axes in one loop nest: `T acc_a = init_a; ...;
        for (r ...) { const T v_a = body_a; ...; acc_a = combine(acc_a, v_a); ... }`,
        unrolled when a body reads register arrays (its indices then become constants)."""
        accs = []
        for node in nodes:
            self.hoist_reductions(node.init)
            acc = self.names.fresh("acc")
            self.line(f"{self.type_name(node.dtype)} {acc} = {self.value(node.init)};")
            accs.append(acc)
        with ExitStack() as stack:
            unroll = any(reads_registers(node.body) for node in nodes)
            *outer, innermost = nodes[0].reduce_axis
            # A body masked past a symbolic length (a bucket's bound): the outermost
            # loop ends at the last step that can contribute (`ir.live_steps`; where
            # the loop unrolls to index registers, a branch around each step instead).
            first = nodes[0].reduce_axis[0]
            live = live_extent(nodes, first)
            ends = {} if live is None else {first.name: live}
            self.open_reduce_loops(stack, tuple(outer), "ir.Reduce", unroll, ends)
            bodies = self.open_innermost_reduce_loop(stack, nodes, innermost, unroll, ends)
            values = []
            for node, body in zip(nodes, bodies, strict=True):
                self.hoist_reductions(body)
                value = self.names.fresh("v")
                self.line(f"const {self.type_name(node.dtype)} {value} = {self.value(body)};")
                values.append(value)
            for node, acc, value in zip(nodes, accs, values, strict=True):
                self.line(f"{acc} = {self.combine(node, acc, value)};")
        for node, acc in zip(nodes, accs, strict=True):
            self.accumulators[id(node)] = acc

    def emit_partials_together(self, nodes: list[e.Expr]) -> None:
        """Hoists the reductions of `nodes`, the partials of fused cross-thread combines:
        serial Reduces over the same axes (names and ranges, as fuse_reductions leaves
        them) share one loop nest (`emit_serial_reductions`), so the row is walked once;
        anything else is hoisted on its own."""
        partials = [n for n in nodes if isinstance(n, e.Reduce) and n.thread_axis is None]
        axes = partials[0].reduce_axis if partials else ()
        if len(partials) < 2 or any(_axes_key(p.reduce_axis) != _axes_key(axes) for p in partials):
            partials = []
        for node in nodes:
            if not any(node is p for p in partials):
                self.hoist_reductions(node)
        if partials:
            self.emit_serial_reductions(partials)

    def open_innermost_reduce_loop(
        self,
        stack: ExitStack,
        nodes: list[e.Reduce],
        var: e.Var,
        unroll: bool,
        ends: Mapping[str, e.Expr] | None = None,
    ) -> list[e.Expr]:
        """The loop over the innermost axis of serial Reduces `nodes` (a hook: CUDA
        loads contiguous runs along it as vectors first); returns what each node folds
        a step (its body; CUDA may take a masked body's value under a branch)."""
        self.open_reduce_loops(stack, (var,), "ir.Reduce", unroll, ends)
        return [node.body for node in nodes]

    def open_reduce_loops(
        self,
        stack: ExitStack,
        axes: tuple[e.Var, ...],
        what: str,
        unroll: bool = False,
        ends: Mapping[str, e.Expr] | None = None,
    ) -> None:
        """One serial `for` per reduce axis over its constant `[lower, upper)`, each in
        its own name scope, left open on `stack`; `#pragma unroll`ed if asked. `ends`
        gives an axis an earlier end (`ir.live_steps`: an expression of the kernel's
        dims, rendered before the axis's name is declared)."""
        for var in axes:
            if var.lower is None or var.upper is None:
                raise self.unsupported(what, f"axis '{var.name}' has no constant range")
            live = None if not ends or var.name not in ends else self.index(ends[var.name])
            end = str(var.upper) if live is None or unroll else live
            if unroll:
                self.line("#pragma unroll")
            stack.enter_context(self.names.scope())
            name = self.names.declare(var.name)
            index = self.type_name(var.dtype)
            head = f"for ({index} {name} = {var.lower}; {name} < {end}; ++{name})"
            stack.enter_context(self.braced(head))
            if live is not None and unroll:  # unrolled to constant indices: skip by step
                stack.enter_context(self.braced(f"if ({name} < {live})"))

    def emit_cross_thread_reduction(self, node: e.Reduce) -> None:
        """A Reduce across the threads of a block: only a CUDA kernel has threads."""
        raise self.unsupported("ir.Reduce", f"across {node.thread_axis} outside a CUDA kernel")

    def combine(self, node: e.Reduce, acc: str, value: str) -> str:
        """The accumulator's next value: integer sums and products wrap, float max / min
        keep a NaN (NumPy's max)."""
        kind = node.reduce_type
        wraps = node.dtype.is_integer and node.dtype not in self.narrow_ints
        if kind in (e.ReduceType.SUM, e.ReduceType.PROD) and wraps:
            helper = self.wrapping_ops[e.Add if kind is e.ReduceType.SUM else e.Mul]
            return f"{helper}({acc}, {value})"
        if kind is e.ReduceType.SUM:
            return f"{acc} + {value}"
        if kind is e.ReduceType.PROD:
            return f"{acc} * {value}"
        if kind is e.ReduceType.ALL:
            return f"{acc} && {value}"
        if kind is e.ReduceType.ANY:
            return f"{acc} || {value}"
        op = ">" if kind is e.ReduceType.MAX else "<"
        if node.dtype.is_float:
            return f"(({acc} {op} {value}) || (isnan({acc}) != 0)) ? {acc} : {value}"
        return f"({acc} {op} {value}) ? {acc} : {value}"

    def visit_Reduction(self, node: e.Reduction) -> str:
        """The C name of the accumulator (a Reduce) or position (an ArgReduce) that
        `hoist_reductions` emitted for `node` before its statement."""
        acc = self.accumulators.get(id(node))
        if acc is None:
            raise self.unsupported(f"ir.{type(node).__name__}", "appears outside a stored value")
        return acc

    def emit_arg_reduction(self, node: e.ArgReduce) -> None:
        """`T best = start; I arg = 0; for (r ...) { const T v = body; if (v > best)
        { best = v; arg = position; } }`: a NaN never compares better, ties keep the
        first position (the reference's argmax). 16-bit floats compare in float. A
        cross-thread one (`thread_axis`) is `emit_cross_thread_arg_reduction`'s."""
        if node.thread_axis is not None:
            self.emit_cross_thread_arg_reduction(node)
            return
        _, arg = self.arg_search(node, node.reduce_axis)
        self.accumulators[id(node)] = arg

    def arg_search(self, node: e.ArgReduce, axes: tuple[e.Var, ...]) -> tuple[str, str]:
        """Declares `best` and `arg` and emits the serial search of `node` over `axes`
        (the node's other axes already declared); returns their C names."""
        value_type = node.body.dtype
        start = node.start_value()
        if value_type in (DataType.FLOAT16, DataType.BFLOAT16):
            value_type = DataType.FLOAT32
            start = e.FloatImm(start.value, value_type)
        type_name, index_type = self.type_name(value_type), self.type_name(node.dtype)
        best, arg = self.names.fresh("best"), self.names.fresh("arg")
        self.line(f"{type_name} {best} = {self.value(start)};")
        self.line(f"{index_type} {arg} = {self.expr(e.make_const(0, node.dtype))};")
        op = ">" if node.reduce_type is e.ReduceType.MAX else "<"
        with ExitStack() as stack:
            self.open_reduce_loops(stack, axes, "ir.ArgReduce")
            self.hoist_reductions(node.body)
            value = self.names.fresh("v")
            with self.context(value=True):
                converted = self.cast(value_type, node.body)
            self.line(f"const {type_name} {value} = {converted};")
            with self.braced(f"if ({value} {op} {best})"):
                self.line(f"{best} = {value};")
                self.line(f"{arg} = {self.index(simplify(node.position()))};")
        return best, arg

    def emit_cross_thread_arg_reduction(self, node: e.ArgReduce) -> None:
        """An ArgReduce across the threads of a block: only a CUDA kernel has threads."""
        raise self.unsupported("ir.ArgReduce", f"across {node.thread_axis} outside a CUDA kernel")

    def visit_Let(self, node: s.Let) -> None:
        value = self.value(node.value)
        self.value_vars.add(node.symbol.name)
        self._reads_values.clear()
        name = self.names.declare(node.symbol.name)
        self.line(f"const {self.type_name(node.symbol.dtype)} {name} = {value};")

    def visit_Block(self, node: s.Block) -> None:
        for child in node.stmts:
            self.statement(child)

    def visit_IfThenElse(self, node: s.IfThenElse) -> None:
        self.if_then_else(node, self.index(node.condition))

    def if_then_else(self, node: s.IfThenElse, condition: str) -> None:
        with self.braced(f"if ({condition})"):
            self.statement(node.true_case)
        if node.false_case is not None:
            self.lines[-1] += " else {"
            self.depth += 1
            with self.names.scope():
                self.statement(node.false_case)
            self.depth -= 1
            self.line("}")

    def visit_For(self, node: s.For) -> None:
        if node.bind_info is not None or node.for_type is s.ForType.VECTORIZED:
            raise self.unsupported(
                "ir.For", f"bound or vectorized ({_loop_kind(node)}) has no C form"
            )
        with self.hoisting_invariants(node):
            self.serial_loop(node, unroll=node.for_type is s.ForType.UNROLLED)

    @contextmanager
    def hoisting_invariants(self, loop: s.For) -> Iterator[None]:
        """`const float v = logf(...);` before `loop` for each math call its iterations
        all compute alike (`loop_invariants.invariant_calls`), which the loop's body then
        names; outside the loop the calls render as before."""
        outer = self.invariants
        for call in invariant_calls(loop):
            key = structural_key(call)
            if key in self.invariants:  # an enclosing loop's, or an equal call's
                continue
            value = self.value(call)
            name = self.names.fresh("invariant")
            self.line(f"const {self.type_name(call.dtype)} {name} = {value};")
            self.invariants = {**self.invariants, key: name}
        try:
            yield
        finally:
            self.invariants = outer

    def serial_loop(self, node: s.For, unroll: bool = False) -> None:
        """`for (int v = min; v < min + extent; ++v)`, with `#pragma unroll` if asked."""
        start = self.index(node.min)
        end = self.index(simplify(node.min + node.extent))
        if unroll:
            self.line("#pragma unroll")
        with self.names.scope():
            var = self.names.declare(node.loop_var.name)
            head = f"for ({self.type_name(node.loop_var.dtype)} {var} = {start}; {var} < {end}; ++{var})"
            with self.loop_scope(node), self.braced(head):
                self.statement(node.body)

    @contextmanager
    def loop_scope(self, node: s.For) -> Iterator[None]:
        """Records the loop's variable with its range while its body renders."""
        name = node.loop_var.name
        previous = self.loop_vars.get(name)
        lo, extent = node.min, node.extent
        if isinstance(lo, e.IntImm) and isinstance(extent, e.IntImm) and extent.value > 0:
            var = node.loop_var
            self.loop_vars[name] = e.Var(name, var.dtype, lo.value, lo.value + extent.value)
        else:
            self.loop_vars.pop(name, None)
        try:
            yield
        finally:
            if previous is None:
                self.loop_vars.pop(name, None)
            else:
                self.loop_vars[name] = previous

    def visit_ScheduleBlockRealize(self, node: s.ScheduleBlockRealize) -> None:
        if not node.schedule_block.iter_vars:
            self.statement(node.schedule_block.body)
            return
        with self.braced(""):
            self.realize_body(node)

    def realize_body(self, node: s.ScheduleBlockRealize) -> None:
        """`const int iv = value;` for each iter var the body uses, then the body."""
        block = node.schedule_block
        used = _UsedVars(self.replaced_accesses())
        used.visit(block.body)
        for var, value in zip(block.iter_vars, node.iter_values, strict=True):
            if var.name in used.names:
                text = self.index(value)
                name = self.names.declare(var.name)
                self.line(f"const {self.type_name(var.dtype)} {name} = {text};")
        outer = dict(self.accumulators)
        self.hoist_block_reductions(block)
        self.statement(block.body)
        self.accumulators = outer

    def hoist_block_reductions(self, block: s.ScheduleBlock) -> None:
        """Emits reductions that the block's stores share before its body (a target's
        joint combines); here none: each store hoists its own."""

    def replaced_accesses(self) -> set[int]:
        """The Loads and Stores (by `id`) whose indices a target renders some other way."""
        return set()


class _UsedVars(Visitor):
    """The names of the Vars a statement reads, skipping the indices of the accesses
    in `skip` (by `id`)."""

    def __init__(self, skip: set[int]) -> None:
        self.skip = skip
        self.names: set[str] = set()

    def visit_Var(self, node: e.Var) -> None:
        self.names.add(node.name)

    def visit_Load(self, node: e.Load) -> None:
        if id(node) not in self.skip:
            self.generic_visit(node)

    def visit_Store(self, node: s.Store) -> None:
        self.visit(node.value)
        if id(node) not in self.skip:
            for index in node.indices:
                self.visit(index)


def _axes_key(axes: tuple[e.Var, ...]) -> list[tuple[str, int | None, int | None]]:
    return [(var.name, var.lower, var.upper) for var in axes]


def _loop_kind(node: s.For) -> str:
    return node.bind_info.value if node.bind_info is not None else node.for_type.value


def _visit_binary(self: CRenderer, node: e.BinaryOp) -> str:
    return self.binary(node)


for _op in CRenderer.binary_ops:
    setattr(CRenderer, "visit_" + _op.__name__, _visit_binary)
