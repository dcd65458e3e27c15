"""Scheduled functions for the codegen tests, each with its inputs and a NumPy oracle.

Each `Case` is one LoweredFunc in the shape auto-schedule hands codegen. `make_inputs`
gives its input arrays (argument order; bfloat16 as uint16 bit patterns), `expected`
the arrays its outputs must hold, and `tolerances` the dtype each output compares as
(`cinn_py.tolerances.compare`'s `dtype`, None for the array's own).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from codegen_helpers import buffer, flat_nest, function, serial_nest

from cinn_py.ir.expr import (
    Add,
    Call,
    CallType,
    Cast,
    Expr,
    FloatImm,
    IntImm,
    Load,
    Max,
    Min,
    Not,
    Select,
    Var,
)
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    BindInfo,
    Block,
    BufferRange,
    For,
    ForType,
    Let,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Store,
)
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16

F16, BF16, F32, F64 = DataType.FLOAT16, DataType.BFLOAT16, DataType.FLOAT32, DataType.FLOAT64
I8, U8, I16, I32, I64 = (
    DataType.INT8,
    DataType.UINT8,
    DataType.INT16,
    DataType.INT32,
    DataType.INT64,
)
BOOL = DataType.BOOL

Arrays = list[np.ndarray]


@dataclass(frozen=True)
class Case:
    name: str
    func: LoweredFunc
    make_inputs: Callable[[np.random.Generator], Arrays]
    expected: Callable[[Arrays], Arrays]
    tolerances: tuple[str | None, ...] = ()

    def outputs(self) -> Arrays:
        """Zeroed output arrays, in argument order."""
        out = []
        for arg in self.func.args:
            if arg.io is ArgIO.OUTPUT:
                buf = arg.value
                dtype = np.uint16 if buf.dtype is BF16 else buf.dtype.numpy
                out.append(np.zeros(tuple(d.value for d in buf.shape), dtype))
        return out


def call(name: str, *args: Expr, dtype: DataType | None = None) -> Call:
    return Call(name, list(args), dtype or args[0].dtype, CallType.INTRINSIC)


def f32(x: Expr) -> Expr:
    return Cast(F32, x)


def bf16(values: np.ndarray) -> np.ndarray:
    """float32 values as bfloat16 bit patterns (round to nearest even)."""
    return float32_to_bfloat16(np.asarray(values, np.float32))


def from_bf16(bits: np.ndarray) -> np.ndarray:
    return bfloat16_to_float32(bits)


def select_rows(row: Var, exprs: list[Expr]) -> Expr:
    """Row k of the result is exprs[k]."""
    out = exprs[-1]
    for k in reversed(range(len(exprs) - 1)):
        out = Select(row.eq(IntImm(k, row.dtype)), exprs[k], out)
    return out


# ---- the kernels the golden tests print ------------------------------------------------


def ew_f32_vec4() -> Case:
    x, bias = buffer("var_3", F32, [64, 128]), buffer("var_4", F32, [128])
    y = buffer("var_7", F32, [64, 128])

    def value(iv):
        return call("exp", Load(x, iv)) + Load(bias, [iv[1]])

    func = function("fn_group_0", [x, bias], [y], [flat_nest(y, value, threads=256, lanes=4)])
    return Case(
        "ew_f32_vec4",
        func,
        lambda rng: [
            rng.standard_normal((64, 128), np.float32),
            rng.standard_normal(128, np.float32),
        ],
        lambda a: [np.exp(a[0]) + a[1]],
    )


def guard_vec() -> Case:
    """60 elements over 64 lanes: the guard `f / 6 < 10` is the same for the 4 lanes."""
    x, y = buffer("var_0", F32, [10, 6]), buffer("var_1", F32, [10, 6])

    def value(iv):
        return Load(x, iv) * Load(x, iv) - FloatImm(1.5)

    func = function("fn_guard_vec", [x], [y], [flat_nest(y, value, threads=8, lanes=4)])
    return Case(
        "guard_vec",
        func,
        lambda rng: [rng.standard_normal((10, 6), np.float32)],
        lambda a: [a[0] * a[0] - np.float32(1.5)],
    )


def guard_lanes() -> Case:
    """35 elements over 48 lanes: the guard differs between lanes, so they stay scalar."""
    x, y = buffer("var_0", F32, [5, 7]), buffer("var_1", F32, [5, 7])

    def value(iv):
        return Max(Load(x, iv), FloatImm(0.0))

    func = function("fn_guard_lanes", [x], [y], [flat_nest(y, value, threads=4, lanes=4)])
    return Case(
        "guard_lanes",
        func,
        lambda rng: [rng.standard_normal((5, 7), np.float32)],
        lambda a: [np.maximum(a[0], np.float32(0))],
    )


def f16_vec8() -> Case:
    a, b = buffer("var_0", F16, [32, 64]), buffer("var_1", F16, [32, 64])
    y = buffer("var_2", F16, [32, 64])

    def value(iv):
        return Cast(F16, f32(Load(a, iv)) * f32(Load(b, iv)))

    func = function("fn_f16", [a, b], [y], [flat_nest(y, value, threads=64, lanes=8)])
    return Case(
        "f16_vec8",
        func,
        lambda rng: [rng.standard_normal((32, 64)).astype(np.float16) for _ in range(2)],
        lambda a: [(a[0].astype(np.float32) * a[1].astype(np.float32)).astype(np.float16)],
    )


def bf16_vec8() -> Case:
    a, y = buffer("var_0", BF16, [16, 32]), buffer("var_1", BF16, [16, 32])

    def value(iv):
        return Cast(BF16, call("tanh", f32(Load(a, iv))))

    func = function("fn_bf16", [a], [y], [flat_nest(y, value, threads=32, lanes=8)])
    return Case(
        "bf16_vec8",
        func,
        lambda rng: [bf16(rng.standard_normal((16, 32)) * 2)],
        lambda a: [bf16(np.tanh(from_bf16(a[0])))],
        ("bfloat16",),
    )


def bool_vec16() -> Case:
    a, b = buffer("var_0", F32, [4, 64]), buffer("var_1", F32, [4, 64])
    y = buffer("var_2", BOOL, [4, 64])

    def value(iv):
        x = Load(a, iv)
        return x.gt(Load(b, iv)) & Not(call("isnan", x, dtype=BOOL))

    func = function("fn_bool", [a, b], [y], [flat_nest(y, value, threads=16, lanes=16)])

    def inputs(rng):
        first = rng.standard_normal((4, 64), np.float32)
        first[0, :8] = np.nan
        return [first, rng.standard_normal((4, 64), np.float32)]

    return Case("bool_vec16", func, inputs, lambda a: [(a[0] > a[1]) & ~np.isnan(a[0])])


def int64_vec2() -> Case:
    a, b = buffer("var_0", I64, [100]), buffer("var_1", I64, [100])
    y = buffer("var_2", I64, [100])

    def value(iv):
        return call("abs", Load(a, iv)) * IntImm(3, I64) - Load(b, iv) % IntImm(7, I64)

    nest = flat_nest(y, value, threads=25, lanes=2, index=I64)
    func = function("fn_int64", [a, b], [y], [nest])
    return Case(
        "int64_vec2",
        func,
        lambda rng: [rng.integers(-(2**40), 2**40, 100) for _ in range(2)],
        lambda a: [np.abs(a[0]) * 3 - np.fmod(a[1], 7)],
    )


def zero_d() -> Case:
    a, b, y = buffer("var_0", F32, []), buffer("var_1", F32, []), buffer("var_2", F32, [])

    def value(iv):
        return Load(a, iv) * Load(b, iv) + FloatImm(0.5)

    func = function("fn_scalar", [a, b], [y], [serial_nest(y, value)])
    return Case(
        "zero_d",
        func,
        lambda rng: [np.array(rng.standard_normal(), np.float32) for _ in range(2)],
        lambda a: [a[0] * a[1] + np.float32(0.5)],
    )


def two_nests() -> Case:
    """Two outputs of different sizes in one kernel: the smaller nest runs guarded."""
    x, z = buffer("var_0", F32, [64, 128]), buffer("var_1", F32, [100])
    y1, y2 = buffer("var_2", F32, [64, 128]), buffer("var_3", F32, [100])
    first = flat_nest(y1, lambda iv: Load(x, iv) + FloatImm(1.0), threads=256, lanes=4)
    second = flat_nest(y2, lambda iv: Load(z, iv) * FloatImm(2.0), threads=128, prefix="j")
    func = function("fn_two_nests", [x, z], [y1, y2], [first, second])
    return Case(
        "two_nests",
        func,
        lambda rng: [
            rng.standard_normal((64, 128), np.float32),
            rng.standard_normal(100, np.float32),
        ],
        lambda a: [a[0] + np.float32(1), a[1] * np.float32(2)],
    )


def unrolled() -> Case:
    x, y = buffer("var_0", I32, [8, 12]), buffer("var_1", I32, [8, 12])

    def value(iv):
        return Load(x, iv) * IntImm(2) + IntImm(1)

    nest = flat_nest(y, value, threads=24, lanes=4, lane_loop=ForType.UNROLLED)
    func = function("fn_unrolled", [x], [y], [nest])
    return Case(
        "unrolled",
        func,
        lambda rng: [rng.integers(-1000, 1000, (8, 12), dtype=np.int32)],
        lambda a: [a[0] * 2 + 1],
    )


def broadcast_vec() -> Case:
    """A contiguous load (one vector), a row broadcast and a transposed (strided) one
    (scalar per lane) in one vectorized loop."""
    x, m = buffer("var_0", F32, [64, 32]), buffer("var_1", F32, [64])
    t, y = buffer("var_2", F32, [32, 64]), buffer("var_3", F32, [64, 32])

    def value(iv):
        return Load(x, iv) - Load(m, [iv[0]]) + Load(t, [iv[1], iv[0]])

    func = function("fn_broadcast", [x, m, t], [y], [flat_nest(y, value, threads=128, lanes=4)])
    return Case(
        "broadcast_vec",
        func,
        lambda rng: [
            rng.standard_normal((64, 32), np.float32),
            rng.standard_normal(64, np.float32),
            rng.standard_normal((32, 64), np.float32),
        ],
        lambda a: [a[0] - a[1][:, None] + a[2].T],
    )


# ---- the kernels that cover expression forms --------------------------------------------

MATH = (
    "exp expm1 log log1p log2 sqrt rsqrt sin cos tan tanh erf floor ceil rint abs pow fmod"
).split()
_NUMPY_MATH: dict[str, Callable[..., np.ndarray]] = {
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "erf": np.vectorize(math.erf),
    "pow": np.power,
    "fmod": np.fmod,
}


def math_case(dtype: DataType) -> Case:
    """Row k of the output is intrinsic MATH[k] of the inputs."""
    n = 64
    x, w = buffer("var_0", dtype, [n]), buffer("var_1", dtype, [n])
    y = buffer("var_2", dtype, [len(MATH), n])

    def value(iv):
        a, b = Load(x, [iv[1]]), Load(w, [iv[1]])
        return select_rows(
            iv[0], [call(f, a, b) if f in ("pow", "fmod") else call(f, a) for f in MATH]
        )

    nest = flat_nest(y, value, threads=64, lanes=4)
    func = function(f"fn_math_{dtype.value}", [x, w], [y], [nest])
    np_type = dtype.numpy

    def expected(a):
        rows = []
        for f in MATH:
            fn = _NUMPY_MATH.get(f) or getattr(np, f)
            args = (a[0], a[1]) if f in ("pow", "fmod") else (a[0],)
            rows.append(np.asarray(fn(*(v.astype(np.float64) for v in args))).astype(np_type))
        return [np.stack(rows)]

    def inputs(rng):
        return [rng.uniform(0.1, 2.9, n).astype(np_type), rng.uniform(0.5, 1.5, n).astype(np_type)]

    return Case(f"math_{dtype.value}", func, inputs, expected)


def float_tests() -> Case:
    """isnan / isinf / isfinite, and infinities and NaN as constants of both widths."""
    n = 32
    x = buffer("var_0", F32, [n])
    tests = buffer("var_1", BOOL, [3, n])
    special = buffer("var_2", F32, [n])
    wide = buffer("var_3", F64, [n])

    def test_value(iv):
        a = Load(x, [iv[1]])
        return select_rows(iv[0], [call(f, a, dtype=BOOL) for f in ("isnan", "isinf", "isfinite")])

    def special_value(iv):
        a = Load(x, iv)
        inf, nan = FloatImm(math.inf), FloatImm(math.nan)
        return Select(
            a.gt(FloatImm(0.0)), inf, Select(a.lt(FloatImm(0.0)), FloatImm(-math.inf), nan)
        )

    def wide_value(iv):
        a = Cast(F64, Load(x, iv))
        return Select(a.gt(FloatImm(0.0, F64)), FloatImm(math.inf, F64), FloatImm(math.nan, F64))

    nests = [
        serial_nest(tests, test_value),
        serial_nest(special, special_value, prefix="j"),
        serial_nest(wide, wide_value, prefix="k"),
    ]
    func = function("fn_float_tests", [x], [tests, special, wide], nests)

    def inputs(rng):
        values = rng.standard_normal(n).astype(np.float32)
        values[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
        return [values]

    def expected(a):
        v = a[0]
        with np.errstate(invalid="ignore"):
            special_ = np.where(v > 0, np.inf, np.where(v < 0, -np.inf, np.nan)).astype(np.float32)
            wide_ = np.where(v > 0, np.inf, np.nan)
        return [np.stack([np.isnan(v), np.isinf(v), np.isfinite(v)]), special_, wide_]

    return Case("float_tests", func, inputs, expected)


def narrow_ints() -> Case:
    """int8 / uint8 / int16 arithmetic wraps at its width; int32 division truncates."""
    n = 64
    a, b, c, m = (
        buffer("var_0", I8, [n]),
        buffer("var_1", U8, [n]),
        buffer("var_2", I16, [n]),
        buffer("var_3", I32, [n]),
    )
    y8, yu8, y16 = buffer("var_4", I8, [n]), buffer("var_5", U8, [n]), buffer("var_6", I16, [n])
    y32 = buffer("var_7", I32, [5, n])

    def int32_rows(iv):
        v = Load(m, [iv[1]])
        return select_rows(
            iv[0],
            [
                v / IntImm(3),
                v % IntImm(3),
                Min(v, IntImm(5)),
                Max(v, IntImm(-5)),
                Select(v.lt(IntImm(0)), IntImm(-(2**31)), v),
            ],
        )

    nests = [
        serial_nest(y8, lambda iv: call("abs", Load(a, iv)) + Load(a, iv) + IntImm(3, I8)),
        serial_nest(yu8, lambda iv: Load(b, iv) + Load(b, iv), prefix="j"),
        serial_nest(
            y16,
            lambda iv: Load(c, iv) * Load(c, iv) + Cast(I16, Load(b, iv)) - Cast(I16, Load(a, iv)),
            prefix="k",
        ),
        serial_nest(y32, int32_rows, prefix="l"),
    ]
    func = function("fn_narrow_ints", [a, b, c, m], [y8, yu8, y16, y32], nests)

    def inputs(rng):
        return [
            rng.integers(-128, 128, n, dtype=np.int8),
            rng.integers(0, 256, n, dtype=np.uint8),
            rng.integers(-1000, 1000, n, dtype=np.int16),
            rng.integers(-100, 100, n, dtype=np.int32),
        ]

    def expected(arr):
        a_, b_, c_, m_ = arr
        rows = [
            np.fix(m_ / 3).astype(np.int32),
            np.fmod(m_, 3),
            np.minimum(m_, 5),
            np.maximum(m_, -5),
            np.where(m_ < 0, np.int32(-(2**31)), m_),
        ]
        return [
            (np.abs(a_.astype(np.int64)) + a_ + 3).astype(np.int8),
            (b_.astype(np.int64) * 2).astype(np.uint8),
            (c_.astype(np.int64) ** 2 + b_ - a_).astype(np.int16),
            np.stack(rows).astype(np.int32),
        ]

    return Case("narrow_ints", func, inputs, expected)


def casts() -> Case:
    n = 64
    ins = [
        buffer("var_0", F32, [n]),
        buffer("var_1", F16, [n]),
        buffer("var_2", F64, [n]),
        buffer("var_3", BF16, [n]),
        buffer("var_4", I32, [n]),
        buffer("var_5", BOOL, [n]),
    ]
    x, h, d, g, i, q = ins
    conversions = [
        (I32, lambda iv: Cast(I32, Load(x, iv))),
        (F16, lambda iv: Cast(F16, Load(i, iv))),
        (BOOL, lambda iv: Cast(BOOL, Load(h, iv))),
        (F16, lambda iv: Cast(F16, Load(d, iv))),
        (F16, lambda iv: Cast(F16, Load(g, iv))),
        (BF16, lambda iv: Cast(BF16, Load(x, iv))),
        (F32, lambda iv: Cast(F32, Load(q, iv))),
        (I64, lambda iv: Cast(I64, Load(h, iv))),
        (F64, lambda iv: Cast(F64, Load(g, iv))),
        (BF16, lambda iv: Cast(BF16, Load(d, iv))),
        (F16, lambda iv: Select(Load(q, iv), FloatImm(0.1, F16), FloatImm(-math.inf, F16))),
        (BF16, lambda iv: Select(Load(q, iv), FloatImm(3.14159, BF16), FloatImm(math.nan, BF16))),
        (F16, lambda iv: Add(Load(h, iv), FloatImm(1.0, F16))),
        (BOOL, lambda iv: Load(h, iv).lt(FloatImm(0.0, F16))),
    ]
    outs = [buffer(f"var_{10 + k}", dt, [n]) for k, (dt, _) in enumerate(conversions)]
    nests = [
        flat_nest(out, fn, threads=n, prefix=f"c{k}_")
        for k, (out, (_, fn)) in enumerate(zip(outs, conversions, strict=True))
    ]
    func = function("fn_casts", ins, outs, nests)

    def inputs(rng):
        halves = rng.standard_normal(n).astype(np.float16)
        halves[:4] = 0
        return [
            rng.uniform(-100, 100, n).astype(np.float32),
            halves,
            rng.standard_normal(n) * 100,
            bf16(rng.standard_normal(n)),
            rng.integers(-3000, 3000, n, dtype=np.int32),
            rng.integers(0, 2, n).astype(np.bool_),
        ]

    def expected(a):
        x_, h_, d_, g_, i_, q_ = a
        g32 = from_bf16(g_)
        return [
            np.trunc(x_).astype(np.int32),
            i_.astype(np.float16),
            h_ != 0,
            d_.astype(np.float16),
            g32.astype(np.float16),
            bf16(x_),
            q_.astype(np.float32),
            np.trunc(h_.astype(np.float32)).astype(np.int64),
            g32.astype(np.float64),
            bf16(d_.astype(np.float32)),
            np.where(q_, np.float16(0.1), np.float16(-np.inf)),
            np.where(q_, bf16(np.float32(3.14159)), np.uint16(0x7FC0)),
            (h_.astype(np.float32) + 1).astype(np.float16),
            h_ < 0,
        ]

    tolerances = tuple("bfloat16" if dt is BF16 else None for dt, _ in conversions)
    return Case("casts", func, inputs, expected, tolerances)


def defined_ints() -> Case:
    """What C leaves undefined, as the IR defines it: float -> int8 truncates, saturates
    and takes NaN to 0; int32 value arithmetic wraps; `/` and `%` by a zero divisor give
    0 and INT_MIN / -1 wraps. Index arithmetic (the offsets) stays plain `int`."""
    n = 16
    x, a, b = buffer("var_0", F32, [n]), buffer("var_1", I32, [n]), buffer("var_2", I32, [n])
    outs = [buffer(f"var_{3 + k}", dt, [n]) for k, dt in enumerate((I8, I32, I32, I32))]
    values = [
        lambda iv: Cast(I8, Load(x, iv)),
        lambda iv: Load(a, iv) / Load(b, iv),
        lambda iv: Load(a, iv) % Load(b, iv),
        lambda iv: Load(a, iv) * Load(a, iv) - Load(b, iv),
    ]
    nests = [
        flat_nest(out, fn, threads=n // 4, lanes=4, prefix=f"c{k}_")
        for k, (out, fn) in enumerate(zip(outs, values, strict=True))
    ]
    func = function("fn_defined_ints", [x, a, b], outs, nests)
    low = -(2**31)

    def inputs(rng):
        floats = [math.nan, math.inf, -math.inf, 300.0, -300.0, 2.9, -2.9, 127.9]
        return [
            np.array(floats * 2, np.float32),
            np.array([7, -7, 0, low, low, 5, -5, 7, 46341, -1073741829] + [9] * 6, np.int32),
            np.array([0, 0, 0, -1, 0, 2, 2, -2, 1, 3] + [-4] * 6, np.int32),
        ]

    def expected(arr):
        x_, a_, b_ = (v.astype(np.int64) if v.dtype.kind == "i" else v for v in arr)
        with np.errstate(invalid="ignore", divide="ignore"):
            chars = np.where(np.isnan(x_), 0, np.clip(np.trunc(x_), -128, 127))
            quotient = np.where(b_ == 0, 0, np.fix(a_ / np.where(b_ == 0, 1, b_))).astype(np.int64)
        rest = np.where(b_ == 0, 0, a_ - quotient * b_)  # x % 0 = 0, INT_MIN % -1 = 0
        return [
            chars.astype(np.int8),
            quotient.astype(np.int32),  # INT_MIN / -1 = 2**31 wraps to INT_MIN
            rest.astype(np.int32),
            (a_ * a_ - b_).astype(np.int32),
        ]

    return Case("defined_ints", func, inputs, expected)


def hostile_names() -> Case:
    """Names no C compiler takes, and names C or CUDA already uses."""
    n = 32
    x, w = buffer("x.y", F32, [n]), buffer("1abc", F32, [n])
    out = buffer("int", F32, [n])
    lane = Var("threadIdx", I32, 0, n)
    iv = Var("__half", I32, 0, n)
    tmp, exp = Var("NAN", F32), Var("expf", F32)
    body = Block(
        [
            Let(tmp, Load(x, [iv]) * Load(w, [iv])),
            Let(exp, call("exp", tmp)),
            Store(out, exp + Load(x, [iv]), [iv]),
        ]
    )
    block = ScheduleBlock([iv], [], [BufferRange(out, [iv])], "int", body)
    nest = For(
        lane, 0, n, ForType.SERIAL, Block([ScheduleBlockRealize([lane], block)]), BindInfo.THREAD_X
    )
    root = ScheduleBlock([], [], [], "root", Block([nest]))
    args = [Argument(x, ArgIO.INPUT), Argument(w, ArgIO.INPUT), Argument(out, ArgIO.OUTPUT)]
    func = LoweredFunc('a b;system("rm -rf /")', args, ScheduleBlockRealize([], root))
    return Case(
        "hostile_names",
        func,
        lambda rng: [rng.standard_normal(n, np.float32) for _ in range(2)],
        lambda a: [np.exp(a[0] * a[1]) + a[0]],
    )


def all_cases() -> list[Case]:
    return [
        ew_f32_vec4(),
        guard_vec(),
        guard_lanes(),
        f16_vec8(),
        bf16_vec8(),
        bool_vec16(),
        int64_vec2(),
        zero_d(),
        two_nests(),
        unrolled(),
        broadcast_vec(),
        math_case(F32),
        math_case(F64),
        float_tests(),
        narrow_ints(),
        casts(),
        defined_ints(),
        hostile_names(),
    ]
