"""Running a LoweredFunc in Python, element by element: the oracle for stages that have
no code generator behind them yet (lowering, scheduling, bound guards).

Semantics are the IR's, which generated code implements on every target: integers
wrap to their width and divide truncating toward zero (`%` takes the dividend's
sign), a zero divisor gives 0 and INT_MIN / -1 wraps; integer `pow` is the exact,
wrapping power (a negative exponent: 1 / x**-y truncated, 0 for x = 0); float32,
float64 and float16 arithmetic is done on NumPy scalars of that type (one rounding per
operation); bfloat16 values are float32 scalars holding bfloat16-exact numbers,
rounded to nearest even after every operation, and cross the function boundary as
uint16 bit patterns. Float to integer truncates, saturates to the type's range and
takes NaN to 0 (`dtypes.float_to_int`, as the reference executor); anything to bool
is `!= 0`. `select`, `&&` and `||` evaluate only what C would.

Every loop runs as a plain loop over its extent, whatever its kind (serial, parallel,
vectorized, unrolled) or GPU binding, so a `__syncthreads()` barrier has nothing to
wait for and does nothing. A schedule block's iter vars are bound to its realize's
values and checked against their declared bounds, and every load and store is
bounds-checked, so an IR that would touch memory outside a buffer fails here with an
IndexError naming the buffer instead of reading garbage.

Not interpreted: Ramp and Broadcast (vector values: nothing before codegen makes
them) and extern calls. It compiles each node to a closure once, which is fast enough
for the few thousand elements tests use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from cinn_py.errors import FeedError
from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.evaluate import int_pow
from cinn_py.ir.intrinsics import INTRINSICS
from cinn_py.ir.operators import OPERATORS
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16, float_to_int

Env = dict[str, Any]
Eval = Callable[[Env], Any]
Exec = Callable[[Env], None]

BF16 = DataType.BFLOAT16


def run_function(func: s.LoweredFunc, buffers: Mapping[str, np.ndarray]) -> None:
    """Execute `func` over `buffers`, keyed by argument name (bfloat16 as uint16 bits).
    Output arguments are written in place. Temp buffers are allocated unless given;
    a scalar argument (a Var) takes its value from `buffers` too."""
    arrays: dict[str, np.ndarray] = {}
    env: Env = {}
    for arg in func.args:
        if arg.io is s.ArgIO.WORKSPACE and arg.name not in buffers:
            continue
        if arg.name not in buffers:
            raise FeedError(arg.name, "an array for this argument", "nothing")
        if isinstance(arg.value, e.Var):
            env[arg.name] = _to_scalar(buffers[arg.name], arg.value.dtype)
            continue
        arrays[arg.name] = _checked_array(arg.value, buffers[arg.name])
    for arg in func.args:  # workspace: given (to look at, or to run twice) or fresh zeros
        if arg.io is s.ArgIO.WORKSPACE and arg.name not in buffers:
            arrays[arg.name] = _allocate(arg.value)
    for buffer in func.temp_buffers:
        given = buffers.get(buffer.name)
        arrays[buffer.name] = (
            _checked_array(buffer, given) if given is not None else _allocate(buffer)
        )
    body = _Compiler(arrays).stmt(func.body)
    with np.errstate(all="ignore"):
        body(env)


# ---- scalars -----------------------------------------------------------------------------


def storage_dtype(dtype: DataType) -> np.dtype:
    """The NumPy dtype of a `dtype` buffer: bfloat16 is uint16 bits."""
    return np.dtype(np.uint16) if dtype is BF16 else dtype.numpy


def _round_bf16(value: Any) -> np.float32:
    bits = float32_to_bfloat16(np.array([value], dtype=np.float32))
    return bfloat16_to_float32(bits)[0]


def _wrapper(dtype: DataType) -> Callable[[int], int]:
    """Reduce a Python int to `dtype`'s width (two's complement; uint8 unsigned)."""
    bits = 8 * dtype.itemsize
    mask, half = (1 << bits) - 1, 1 << (bits - 1)
    if dtype is DataType.UINT8:
        return lambda v: v & mask
    return lambda v: ((v + half) & mask) - half


def _float_maker(dtype: DataType) -> Callable[[Any], Any]:
    """A float value of `dtype` from any number (rounded once)."""
    if dtype is BF16:
        return lambda v: _round_bf16(np.float32(v))
    return dtype.numpy.type


def _converter(src: DataType, dst: DataType) -> Callable[[Any], Any]:
    """The IR's conversion from `src` to `dst` on interpreter values."""
    if dst is DataType.BOOL:
        return lambda v: bool(v != 0)
    if dst.is_integer:
        if src.is_float:
            return lambda v: int(float_to_int(float(v), dst))
        wrap = _wrapper(dst)
        return lambda v: wrap(int(v))
    if dst.is_float:
        make = _float_maker(dst)
        if src is DataType.BOOL:
            return lambda v: make(1.0 if v else 0.0)
        return make
    raise TypeError(f"interpreter: no conversion to {dst.value}")


def _to_scalar(value: Any, dtype: DataType) -> Any:
    """An interpreter value of `dtype` from an array element or number."""
    if dtype is DataType.BOOL:
        return bool(value)
    if dtype.is_integer:
        return int(value)
    if dtype is BF16:
        return bfloat16_to_float32(np.array([value], dtype=np.uint16))[0]
    return dtype.numpy.type(value)


def _from_scalar(value: Any, dtype: DataType) -> Any:
    """The array element storing interpreter value `value` of `dtype`."""
    if dtype is BF16:
        return float32_to_bfloat16(np.array([value], dtype=np.float32))[0]
    return value


# ---- buffers -----------------------------------------------------------------------------


def _static_shape(buffer: e.Buffer) -> tuple[int, ...] | None:
    if not all(isinstance(extent, e.IntImm) for extent in buffer.shape):
        return None
    return tuple(extent.value for extent in buffer.shape)


def _checked_array(buffer: e.Buffer, array: Any) -> np.ndarray:
    if not isinstance(array, np.ndarray):
        raise FeedError(buffer.name, "a NumPy array", type(array).__name__)
    want = storage_dtype(buffer.dtype)
    if array.dtype != want:
        raise FeedError(buffer.name, f"dtype {want}", f"dtype {array.dtype}")
    shape = _static_shape(buffer)
    if shape is not None and array.shape != shape:
        raise FeedError(buffer.name, f"shape {list(shape)}", f"shape {list(array.shape)}")
    return array


def _allocate(buffer: e.Buffer) -> np.ndarray:
    shape = _static_shape(buffer)
    if shape is None:
        raise FeedError(buffer.name, "an array (its shape is not constant)", "nothing")
    return np.zeros(shape, dtype=storage_dtype(buffer.dtype))


# ---- intrinsics ----------------------------------------------------------------------------


def _intrinsic(node: e.Call, args: list[Eval]) -> Eval:
    name, dtype = node.name, node.dtype
    if node.call_type is not e.CallType.INTRINSIC:
        raise NotImplementedError(f"interpreter: extern call '{name}' is not interpreted")
    entry = INTRINSICS.get(name)
    if entry is not None and entry.test and len(args) == 1:
        test, (x,) = entry.numpy, args
        return lambda env: bool(test(x(env)))
    if name == "abs" and dtype.is_integer and len(args) == 1:
        wrap, (x,) = _wrapper(dtype), args
        return lambda env: wrap(abs(x(env)))
    if name == "pow" and dtype.is_integer and len(args) == 2:
        wrap, (a, b) = _wrapper(dtype), args
        return lambda env: wrap(int_pow(a(env), b(env), 8 * dtype.itemsize))
    make = _float_maker(dtype) if dtype.is_float else None
    if make is not None and entry is not None and not entry.test and entry.arity == len(args):
        fn = entry.numpy
        if len(args) == 1:
            (x,) = args
            return lambda env: make(fn(x(env)))
        a, b = args
        return lambda env: make(fn(a(env), b(env)))
    raise NotImplementedError(
        f"interpreter: intrinsic {name}({len(args)} args) -> {dtype.value} is not interpreted"
    )


# ---- the compiler to closures ------------------------------------------------------------


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    kind: OPERATORS[kind].real for kind in (e.EQ, e.NE, e.LT, e.LE, e.GT, e.GE)
}


class _Compiler:
    """Turns each node into a closure over the environment (var name -> value)."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.arrays = arrays
        self.cache: dict[int, Eval] = {}

    # -- expressions ---------------------------------------------------------------------
    def expr(self, node: e.Expr) -> Eval:
        cached = self.cache.get(id(node))
        if cached is None:
            method = getattr(self, "expr_" + type(node).__name__, None)
            if method is None:
                raise NotImplementedError(f"interpreter: {type(node).__name__} is not interpreted")
            cached = self.cache[id(node)] = method(node)
        return cached

    def expr_IntImm(self, node: e.IntImm) -> Eval:
        value = node.value
        return lambda env: value

    def expr_UIntImm(self, node: e.UIntImm) -> Eval:
        value = node.value
        return lambda env: value

    def expr_FloatImm(self, node: e.FloatImm) -> Eval:
        value = _float_maker(node.dtype)(node.value)
        return lambda env: value

    def expr_Var(self, node: e.Var) -> Eval:
        name = node.name

        def var(env: Env) -> Any:
            try:
                return env[name]
            except KeyError:
                raise NameError(f"interpreter: variable '{name}' is not bound here") from None

        return var

    def expr_Cast(self, node: e.Cast) -> Eval:
        convert, value = _converter(node.value.dtype, node.dtype), self.expr(node.value)
        return lambda env: convert(value(env))

    def expr_Not(self, node: e.Not) -> Eval:
        value = self.expr(node.value)
        return lambda env: not value(env)

    def expr_Select(self, node: e.Select) -> Eval:
        cond, a, b = (self.expr(x) for x in (node.condition, node.true_value, node.false_value))
        return lambda env: a(env) if cond(env) else b(env)

    def expr_And(self, node: e.And) -> Eval:
        a, b = self.expr(node.a), self.expr(node.b)
        return lambda env: bool(a(env)) and bool(b(env))

    def expr_Or(self, node: e.Or) -> Eval:
        a, b = self.expr(node.a), self.expr(node.b)
        return lambda env: bool(a(env)) or bool(b(env))

    def expr_Min(self, node: e.Min) -> Eval:
        a, b = self.expr(node.a), self.expr(node.b)

        def minimum(env: Env) -> Any:
            x, y = a(env), b(env)
            return x if x < y else y

        return minimum

    def expr_Max(self, node: e.Max) -> Eval:
        a, b = self.expr(node.a), self.expr(node.b)

        def maximum(env: Env) -> Any:
            x, y = a(env), b(env)
            return x if x > y else y

        return maximum

    def _arithmetic(self, node: e.BinaryOp) -> Eval:
        a, b, dtype = self.expr(node.a), self.expr(node.b), node.dtype
        if type(node) in _COMPARE:
            compare = _COMPARE[type(node)]
            return lambda env: bool(compare(a(env), b(env)))
        if dtype.is_integer:
            return _int_arithmetic(node, a, b, dtype)
        # NumPy scalars of the dtype: their IEEE arithmetic (x / 0 is inf or NaN), not
        # the table's float64 division, so the result rounds as the kernel's does
        op = _FLOAT_ARITHMETIC[type(node)]
        if dtype is BF16:
            return lambda env: _round_bf16(op(a(env), b(env)))
        make = dtype.numpy.type
        return lambda env: make(op(a(env), b(env)))

    expr_Add = expr_Sub = expr_Mul = expr_Div = expr_Mod = _arithmetic
    expr_EQ = expr_NE = expr_LT = expr_LE = expr_GT = expr_GE = _arithmetic

    def expr_Call(self, node: e.Call) -> Eval:
        return _intrinsic(node, [self.expr(arg) for arg in node.args])

    def expr_Load(self, node: e.Load) -> Eval:
        array = self._array(node.tensor)
        index = self._indices(node.tensor, node.indices, "load")
        dtype = node.dtype
        if dtype is BF16:
            return lambda env: _to_scalar(array[index(env)], dtype)
        if dtype.is_integer:
            return lambda env: int(array[index(env)])
        if dtype is DataType.BOOL:
            return lambda env: bool(array[index(env)])
        return lambda env: array[index(env)]

    def expr_Reduce(self, node: e.Reduce) -> Eval:
        init, body = self.expr(node.init), self.expr(node.body)
        axes = [(v.name, v.lower, v.upper) for v in node.reduce_axis]
        if any(lo is None or hi is None for _, lo, hi in axes):
            raise NotImplementedError("interpreter: a reduce axis needs constant bounds")
        combine = _reducer(node.reduce_type, node.dtype)

        def reduce(env: Env) -> Any:
            acc = init(env)
            for point in np.ndindex(*(hi - lo for _, lo, hi in axes)):
                for (name, lo, _), offset in zip(axes, point, strict=True):
                    env[name] = lo + offset
                acc = combine(acc, body(env))
            return acc

        return reduce

    def expr_LastBlockDone(self, node: s.LastBlockDone) -> Eval:
        # Blocks run one after another here, so the count-th arrival is the last one;
        # it resets the counter as the kernel does.
        arrays, name = self.arrays, node.semaphore.name
        index = self._indices(node.semaphore, node.indices, "last_block_done on")
        count = node.count

        def last_block_done(env: Env) -> bool:
            point = index(env)
            arrived = int(arrays[name][point]) + 1
            done = arrived == count
            arrays[name][point] = 0 if done else arrived
            return done

        return last_block_done

    def expr_ArgReduce(self, node: e.ArgReduce) -> Eval:
        # The search codegen emits: start from the value everything beats at position 0,
        # move only to a strictly better value (a NaN never is one; ties keep the first).
        # A cross-thread one (thread_axis, its threads the last axis) has the same value:
        # row-major over [o, t] is the original position o * T + t.
        start, body = self.expr(node.start_value()), self.expr(node.body)
        axes = [(v.name, v.lower, v.upper) for v in node.reduce_axis]
        better = _COMPARE[e.GT if node.reduce_type is e.ReduceType.MAX else e.LT]

        def arg_reduce(env: Env) -> int:
            best, index = start(env), 0
            extents = [hi - lo for _, lo, hi in axes]
            for position, point in enumerate(np.ndindex(*extents)):
                for (name, lo, _), offset in zip(axes, point, strict=True):
                    env[name] = lo + offset
                value = body(env)
                if better(value, best):
                    best, index = value, position
            return index

        return arg_reduce

    # -- memory ----------------------------------------------------------------------------
    def _array(self, tensor: e.Buffer | e.Tensor) -> _ArrayRef:
        return _ArrayRef(self.arrays, e.storage_name(tensor))

    def _indices(self, tensor: e.Buffer | e.Tensor, indices: tuple[e.Expr, ...], what: str) -> Eval:
        items = [self.expr(i) for i in indices]
        name = e.storage_name(tensor)
        arrays = self.arrays

        def index(env: Env) -> tuple[int, ...]:
            point = tuple(int(i(env)) for i in items)
            shape = arrays[name].shape
            for p, extent in zip(point, shape, strict=True):
                if not 0 <= p < extent:
                    raise IndexError(
                        f"interpreter: {what} {name}{list(point)} is outside shape {list(shape)}"
                    )
            return point

        return index

    # -- statements ------------------------------------------------------------------------
    def stmt(self, node: s.Stmt | e.Expr) -> Exec:
        if isinstance(node, e.Expr):
            value = self.expr(node)

            def evaluate(env: Env) -> None:
                value(env)

            return evaluate
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise NotImplementedError(f"interpreter: {type(node).__name__} is not interpreted")
        return method(node)

    def stmt_Block(self, node: s.Block) -> Exec:
        body = [self.stmt(x) for x in node.stmts]

        def block(env: Env) -> None:
            for run in body:
                run(env)

        return block

    def stmt_For(self, node: s.For) -> Exec:
        name = node.loop_var.name
        low, extent, body = self.expr(node.min), self.expr(node.extent), self.stmt(node.body)

        def loop(env: Env) -> None:
            start = int(low(env))
            for value in range(start, start + int(extent(env))):
                env[name] = value
                body(env)

        return loop

    def stmt_ScheduleBlockRealize(self, node: s.ScheduleBlockRealize) -> Exec:
        block = node.schedule_block
        values = [self.expr(v) for v in node.iter_values]
        ivs = [(v.name, v.lower, v.upper) for v in block.iter_vars]
        body = self.stmt(block.body)

        def realize(env: Env) -> None:
            for (name, lower, upper), value in zip(ivs, values, strict=True):
                v = value(env)
                if (lower is not None and v < lower) or (upper is not None and v >= upper):
                    raise IndexError(
                        f"interpreter: block {block.name} binds {name} = {v}, outside "
                        f"[{lower}, {upper})"
                    )
                env[name] = v
            body(env)

        return realize

    def stmt_ScheduleBlock(self, node: s.ScheduleBlock) -> Exec:
        return self.stmt(node.body)

    def stmt_Store(self, node: s.Store) -> Exec:
        value, dtype = self.expr(node.value), node.tensor.dtype
        index = self._indices(node.tensor, node.indices, "store")
        arrays, name = self.arrays, e.storage_name(node.tensor)

        def store(env: Env) -> None:
            arrays[name][index(env)] = _from_scalar(value(env), dtype)

        return store

    def stmt_IfThenElse(self, node: s.IfThenElse) -> Exec:
        cond, then = self.expr(node.condition), self.stmt(node.true_case)
        otherwise = self.stmt(node.false_case) if node.false_case is not None else None

        def branch(env: Env) -> None:
            if cond(env):
                then(env)
            elif otherwise is not None:
                otherwise(env)

        return branch

    def stmt_SyncThreads(self, node: s.SyncThreads) -> Exec:
        """A no-op: bound loops run one after another, so every write of the
        statements before the barrier is already done and visible when the
        statements after it run."""

        def barrier(env: Env) -> None:
            return None

        return barrier

    def stmt_Let(self, node: s.Let) -> Exec:
        name, value = node.symbol.name, self.expr(node.value)

        def let(env: Env) -> None:
            env[name] = value(env)

        return let


class _ArrayRef:
    """A buffer looked up at each access: one the function names but was not given (nor
    has as a temp) is a NameError where it is read or written, not before."""

    __slots__ = ("arrays", "name")

    def __init__(self, arrays: dict[str, np.ndarray], name: str) -> None:
        self.arrays = arrays
        self.name = name

    def __getitem__(self, index: tuple[int, ...]) -> Any:
        try:
            array = self.arrays[self.name]
        except KeyError:
            raise NameError(f"interpreter: buffer '{self.name}' does not exist here") from None
        return array[index]


_FLOAT_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    e.Add: OPERATORS[e.Add].real,
    e.Sub: OPERATORS[e.Sub].real,
    e.Mul: OPERATORS[e.Mul].real,
    e.Div: lambda x, y: x / y,
}
"""Float arithmetic on NumPy scalars (`operators.OPERATORS` but for `/`, whose table
form divides in float64)."""


def _int_arithmetic(node: e.BinaryOp, a: Eval, b: Eval, dtype: DataType) -> Eval:
    """Wrapping arithmetic; `/` and `%` by zero give 0 (`operators.c_div`, `c_mod`)."""
    wrap = _wrapper(dtype)
    fn = OPERATORS[type(node)].integer
    return lambda env: wrap(fn(a(env), b(env)))


def _reducer(kind: e.ReduceType, dtype: DataType) -> Callable[[Any, Any], Any]:
    if kind is e.ReduceType.ALL:
        return lambda acc, v: bool(acc and v)
    if kind is e.ReduceType.ANY:
        return lambda acc, v: bool(acc or v)
    # Floats: a NaN accumulator stays NaN, a NaN value wins (NumPy's max / min).
    if kind is e.ReduceType.MAX:
        return lambda acc, v: acc if (acc > v or acc != acc) else v
    if kind is e.ReduceType.MIN:
        return lambda acc, v: acc if (acc < v or acc != acc) else v
    if dtype.is_integer:
        wrap = _wrapper(dtype)
        if kind is e.ReduceType.SUM:
            return lambda acc, v: wrap(acc + v)
        return lambda acc, v: wrap(acc * v)
    make = _float_maker(dtype)
    if kind is e.ReduceType.SUM:
        return lambda acc, v: make(acc + v)
    return lambda acc, v: make(acc * v)
