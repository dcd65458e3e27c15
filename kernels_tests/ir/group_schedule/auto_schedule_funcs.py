"""Lowered functions in op lowering's shape, built by hand for the scheduler's tests,
the cases the numeric tests run, and running a function in the IR interpreter.

One loop nest per stored value over its shape, loop vars `i_<n>` numbered across the
function, iter vars `i<dim>_<block>` bounded by the shape, the block named after the
buffer it stores, all under the root block (see the contract's LOWERED FUNCTION).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from cinn_py.ir.expr import Buffer, Call, CallType, Cast, Expr, FloatImm, Load, Var
from cinn_py.ir.group_schedule import TargetInfo
from cinn_py.ir.interpreter import run_function, storage_dtype
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
from cinn_py.ir.visitor import Visitor
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16
from cinn_py.tolerances import tolerance

Compute = Callable[[dict[str, Buffer], list[Var]], Expr]


@dataclass(frozen=True)
class Output:
    """A stored value: its buffer name, shape, dtype, and its value at the iter vars."""

    name: str
    shape: tuple[int, ...]
    dtype: DataType
    compute: Compute


def lowered(
    inputs: Sequence[tuple[str, Sequence[int], DataType]],
    outputs: Sequence[Output],
    name: str = "fn_group_0",
) -> LoweredFunc:
    """A LoweredFunc with `inputs` then `outputs` as its arguments and one nest each."""
    in_bufs = {n: Buffer(n, dtype, list(shape)) for n, shape, dtype in inputs}
    args = [Argument(b) for b in in_bufs.values()]
    nests = []
    counter = 0
    for k, out in enumerate(outputs):
        dst = Buffer(out.name, out.dtype, list(out.shape))
        args.append(Argument(dst, ArgIO.OUTPUT))
        loop_vars = [_index(f"i_{counter + d}", n) for d, n in enumerate(out.shape)]
        counter += len(out.shape)
        ivs = [_index(f"i{d}_{k}", n) for d, n in enumerate(out.shape)]
        value = out.compute(in_bufs, ivs)
        block = ScheduleBlock(
            ivs,
            _read_regions(value),
            [BufferRange(dst, ivs)],
            out.name,
            Store(dst, value, ivs),
        )
        nest = ScheduleBlockRealize(loop_vars, block)
        for d in reversed(range(len(out.shape))):
            inner = nest if d == len(out.shape) - 1 else Block([nest])
            nest = For(loop_vars[d], 0, out.shape[d], ForType.SERIAL, inner)
        nests.append(nest)
    root = ScheduleBlockRealize((), ScheduleBlock((), (), (), "root", Block(nests)))
    return LoweredFunc(name, args, root)


def _index(name: str, extent: int) -> Var:
    """An index var in [0, extent); an empty dim has no upper bound (a Var's range
    cannot be empty)."""
    return Var(name, lower=0, upper=extent if extent > 0 else None)


def _read_regions(value: Expr) -> list[BufferRange]:
    loads = _Loads()
    loads.visit(value)
    return [BufferRange(load.tensor, load.indices) for load in loads.found]


class _Loads(Visitor):
    """Loads indexed by plain Vars, first use of each buffer first."""

    def __init__(self) -> None:
        self.found: list[Load] = []

    def visit_Load(self, node: Load) -> None:
        known = {load.tensor.name for load in self.found}
        if node.tensor.name not in known and all(isinstance(i, Var) for i in node.indices):
            self.found.append(node)


# ---- the functions the tests schedule ---------------------------------------------------

F32, F16 = DataType.FLOAT32, DataType.FLOAT16


def add_row_bias() -> LoweredFunc:
    """var_2[64, 128] = var_0 + var_1 broadcast along rows."""
    return lowered(
        [("var_0", (64, 128), F32), ("var_1", (128,), F32)],
        [
            Output(
                "var_2",
                (64, 128),
                F32,
                lambda b, iv: Load(b["var_0"], iv) + Load(b["var_1"], [iv[1]]),
            )
        ],
    )


def scale(n: int, dtype: DataType = F32) -> LoweredFunc:
    """var_1[n] = var_0 * 2, in float32 arithmetic for the 16-bit floats."""

    def compute(b, iv):
        x = Load(b["var_0"], iv)
        if dtype is F32:
            return x * FloatImm(2.0)
        return Cast(dtype, Cast(F32, x) * FloatImm(2.0))

    return lowered([("var_0", (n,), dtype)], [Output("var_1", (n,), dtype, compute)])


def scalar_exp() -> LoweredFunc:
    """A 0-D var_1 = exp(var_0)."""

    def exp(b, iv):
        return Call("exp", [Load(b["var_0"], [])], F32, CallType.INTRINSIC)

    return lowered([("var_0", (), F32)], [Output("var_1", (), F32, exp)])


def two_sizes() -> LoweredFunc:
    """A 64x128 float32 output and a 128-element float16 one in one function."""
    return lowered(
        [("var_0", (64, 128), F32), ("var_1", (128,), F32)],
        [
            Output(
                "var_2",
                (64, 128),
                F32,
                lambda b, iv: Load(b["var_0"], iv) + Load(b["var_1"], [iv[1]]),
            ),
            Output("var_3", (128,), F16, lambda b, iv: Cast(F16, Load(b["var_1"], iv))),
        ],
    )


def scalar_and_vector(n: int = 100) -> LoweredFunc:
    """A 0-D output next to an n-element one."""
    return lowered(
        [("var_0", (), F32), ("var_1", (n,), F32)],
        [
            Output("var_2", (), F32, lambda b, iv: Load(b["var_0"], []) * FloatImm(3.0)),
            Output("var_3", (n,), F32, lambda b, iv: Load(b["var_1"], iv) + Load(b["var_0"], [])),
        ],
    )


def copy_2d(shape: tuple[int, int]) -> LoweredFunc:
    """var_1 = var_0."""
    return lowered(
        [("var_0", shape, F32)], [Output("var_1", shape, F32, lambda b, iv: Load(b["var_0"], iv))]
    )


def transpose() -> LoweredFunc:
    """var_1[6, 4] = var_0[4, 6] transposed."""
    return lowered(
        [("var_0", (4, 6), F32)],
        [Output("var_1", (6, 4), F32, lambda b, iv: Load(b["var_0"], [iv[1], iv[0]]))],
    )


def negate_bool() -> LoweredFunc:
    """var_1[8, 8] = !var_0."""
    return lowered(
        [("var_0", (8, 8), DataType.BOOL)],
        [Output("var_1", (8, 8), DataType.BOOL, lambda b, iv: ~Load(b["var_0"], iv))],
    )


# ---- cases with their NumPy meaning, and running them in the interpreter ----------------

CUDA = TargetInfo.cuda()
EMU = TargetInfo.cuda_emu()
TINY = TargetInfo(arch="sm_90", sm_count=1, max_blocks_per_sm=2)
"""Two blocks at most: a few thousand elements already need a grid-stride loop."""


@dataclass(frozen=True)
class Case:
    make: Callable[[], LoweredFunc]
    target: TargetInfo
    numpy: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
    """The outputs from the inputs (bfloat16 as float32 values)."""


def _bf16_round(x: np.ndarray) -> np.ndarray:
    return bfloat16_to_float32(float32_to_bfloat16(x.astype(np.float32)))


CASES = {
    "elementwise_64x128": Case(add_row_bias, CUDA, lambda a: {"var_2": a["var_0"] + a["var_1"]}),
    "odd_999": Case(lambda: scale(999), CUDA, lambda a: {"var_1": a["var_0"] * 2}),
    "vector_1000": Case(lambda: scale(1000), CUDA, lambda a: {"var_1": a["var_0"] * 2}),
    "float16": Case(
        lambda: scale(4096, DataType.FLOAT16),
        CUDA,
        lambda a: {"var_1": (a["var_0"].astype(np.float32) * 2).astype(np.float16)},
    ),
    "bfloat16": Case(
        lambda: scale(2048, DataType.BFLOAT16),
        CUDA,
        lambda a: {"var_1": _bf16_round(a["var_0"] * 2)},
    ),
    "bool": Case(negate_bool, CUDA, lambda a: {"var_1": ~a["var_0"]}),
    "scalar": Case(scalar_exp, CUDA, lambda a: {"var_1": np.exp(a["var_0"])}),
    "scalar_and_vector": Case(
        scalar_and_vector,
        CUDA,
        lambda a: {"var_2": a["var_0"] * np.float32(3), "var_3": a["var_1"] + a["var_0"]},
    ),
    "two_sizes": Case(
        two_sizes,
        CUDA,
        lambda a: {"var_2": a["var_0"] + a["var_1"], "var_3": a["var_1"].astype(np.float16)},
    ),
    "transpose": Case(transpose, CUDA, lambda a: {"var_1": a["var_0"].T}),
    "scalar_beside_many_blocks": Case(
        lambda: scalar_and_vector(3000),
        TINY,
        lambda a: {"var_2": a["var_0"] * np.float32(3), "var_3": a["var_1"] + a["var_0"]},
    ),
    "grid_stride_exact": Case(lambda: copy_2d((64, 64)), TINY, lambda a: {"var_1": a["var_0"]}),
    "grid_stride_guarded": Case(lambda: scale(3001), TINY, lambda a: {"var_1": a["var_0"] * 2}),
    "grid_stride_emu": Case(lambda: copy_2d((16, 1000)), EMU, lambda a: {"var_1": a["var_0"]}),
}


def inputs_for(func: LoweredFunc, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random arrays for the input arguments (bfloat16 as uint16 bits)."""
    arrays = {}
    for arg in func.args:
        if arg.io is ArgIO.INPUT:
            buf = arg.value
            shape = tuple(int(d.value) for d in buf.shape)
            if buf.dtype is DataType.BOOL:
                arrays[arg.name] = rng.random(shape) < 0.5
            elif buf.dtype is DataType.BFLOAT16:
                arrays[arg.name] = float32_to_bfloat16(
                    rng.standard_normal(shape).astype(np.float32)
                )
            else:
                arrays[arg.name] = rng.standard_normal(shape).astype(buf.dtype.numpy)
    return arrays


def run_interpreted(func: LoweredFunc, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The outputs of `func` run by the IR interpreter, each starting as NaN (or 1), so
    that an element nobody stores stands out."""
    buffers = dict(inputs)
    outputs = {}
    for arg in func.args:
        if arg.io is ArgIO.OUTPUT:
            buf = arg.value
            shape = tuple(int(d.value) for d in buf.shape)
            dtype = storage_dtype(buf.dtype)
            outputs[arg.name] = buffers[arg.name] = np.full(shape, _unset(buf.dtype, dtype), dtype)
    run_function(func, buffers)
    return outputs


def _unset(dtype: DataType, storage: np.dtype) -> float | int:
    """What an output starts as, so that an element nobody stores stands out: NaN (a
    bfloat16 NaN's bits, 0xFFFF, in its uint16 storage), or 1 for ints and bools."""
    if storage.kind == "f":
        return np.nan
    return 0xFFFF if dtype is DataType.BFLOAT16 else 1


def run_emulated(module, kernel, inputs: dict[str, np.ndarray], want: dict[str, np.ndarray]):
    """`kernel` of the emulated `module` launched on `inputs`: its outputs, each filled
    with NaN first (shaped like `want`'s, the interpreter's), workspaces zeroed (the
    grid's partials and counter)."""
    args, outputs = [], {}
    for arg in kernel.args:
        if arg.io is ArgIO.INPUT:
            args.append(inputs[arg.name])
        elif arg.io is ArgIO.WORKSPACE:
            shape = [int(d.value) for d in arg.value.shape]
            args.append(np.zeros(shape, arg.value.dtype.numpy))
        else:
            like = want[arg.name]
            fill = _unset(arg.value.dtype, like.dtype)
            outputs[arg.name] = np.full(like.shape, fill, like.dtype)
            args.append(outputs[arg.name])
    module.launch(kernel.name, kernel.grid, kernel.block, args, kernel.shared_mem)
    return outputs


def assert_emulated_matches_interpreter(
    module, kernel, func: LoweredFunc, rng: np.random.Generator, what: str
) -> None:
    """`kernel` of the emulated `module` (`func` scheduled) on random inputs against the
    interpreter running `func`, each output within 4x its dtype's tolerance."""
    inputs = inputs_for(func, rng)
    want = run_interpreted(func, inputs)
    for out, value in run_emulated(module, kernel, inputs, want).items():
        assert_close(value, want[out], f"{what}: {out}")


def assert_close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Within 4x the dtype's tolerance (`cinn_py.tolerances`): a schedule may reorder a
    reduction's folds."""
    rtol, atol = tolerance(got.dtype)
    np.testing.assert_allclose(
        got.astype(np.float64), want.astype(np.float64), rtol=4 * rtol, atol=4 * atol, err_msg=what
    )
