"""Matmul epilogues: `matmul -> add(bias) [-> relu | gelu(tanh)]` becomes one
`pd_op.fused_gemm_epilogue`, one cuBLASLt call whose epilogue adds the bias and applies
the activation, instead of a library matmul followed by a separate kernel.

A chain is fused only where the fused op computes exactly what the chain does:

- `matmul(x, y) {transpose_x, transpose_y}` with y 2-D and x of rank >= 2, x 2-D where
  it is transposed (a batched transpose of x is no single GEMM);
- whose one use is `add(mm, bias)`, either operand order, bias varying only along the
  last dim: `[N]`, or `[1, ..., 1, N]` of rank at most mm's (reshaped to `[N]`); one
  that broadcasts anything else (a `[M, N]` bias, a `[1]` for N > 1, a -1 dim) is not
  a per-column bias, and one of higher rank would change the result's rank;
- then, where the sum's one use is one, `relu` or `gelu {approximate: true}`: the op's
  "gelu" is cuBLASLt's, the tanh form, so an erf gelu (Paddle's default) stays apart
  (Paddle's own fused_gemm_epilogue_pass fuses it anyway);
- x, y and bias of one dtype, float32, float16 or bfloat16, as every result.

The values that disappear (the matmul's result, and the sum where an activation
follows) must have no other use and must not be program outputs: a pinned output
(`CompiledProgram` pins a fetched intermediate) blocks the fusion of its chain. The
chain's last value is replaced by the fused op's `out` and keeps its number, so it can
be fetched as before. The pass runs before `decompose_composites` (gelu is still one op
there) and only in the compiler's pass list: `reference` runs the program as written.
"""

from __future__ import annotations

from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import replace_value
from cinn_py.pir.program import Program
from cinn_py.pir.types import DYNAMIC, DenseTensorType, NullType
from cinn_py.pir.value import OpResult, Value

FUSED_DTYPES = frozenset({DataType.FLOAT32, DataType.FLOAT16, DataType.BFLOAT16})
"""The dtypes cuBLASLt's bias epilogues are formed for."""


def fuse_gemm_epilogues(program: Program) -> int:
    """Fuse every matching chain; returns how many were fused."""
    outputs = {id(value) for value in program.outputs()}
    fused = 0
    for op in list(program.block):
        if op.name == "pd_op.matmul":
            fused += _fuse(program, op, outputs)
    return fused


def _only_user(value: Value, outputs: set[int]) -> Operation | None:
    """The one op reading `value` (once), where it is not a program output."""
    if id(value) in outputs or len(value.uses) != 1:
        return None
    return value.uses[0].owner


def _fuse(program: Program, matmul: Operation, outputs: set[int]) -> int:
    mm = matmul.result()
    x, y = matmul.operand_value(0), matmul.operand_value(1)
    add = _only_user(mm, outputs)
    if add is None or add.name != "pd_op.add" or x is None or y is None:
        return 0
    if not _gemm_operands(matmul, x, y):
        return 0
    bias = add.operand_value(1) if add.operand_value(0) is mm else add.operand_value(0)
    if bias is None or not _per_column(bias, mm) or add.result().type is not mm.type:
        return 0
    last, activation = add, "none"
    user = _only_user(add.result(), outputs)
    if user is not None and user.result().type is mm.type:
        if user.name == "pd_op.relu":
            last, activation = user, "relu"
        elif user.name == "pd_op.gelu" and user.attr("approximate") is True:
            last, activation = user, "gelu"
    builder = Builder(program)
    builder.set_insertion_point(last)
    builder.loc = last.loc
    n = mm.type.dims[-1]
    if bias.type.dims != (n,):
        bias = builder.op("pd_op.reshape", bias, None, shape=[n], **_flags(last))
    attributes = {
        "trans_x": bool(matmul.attr("transpose_x")),
        "trans_y": bool(matmul.attr("transpose_y")),
        "activation": activation,
        **_flags(last),
    }
    fused = builder.create(
        "pd_op.fused_gemm_epilogue", [x, y, bias], attributes, [mm.type, NullType.get()]
    )
    replace_value(program, last.result(), fused.result(0))
    for op in (last, add, matmul) if last is not add else (add, matmul):
        op.erase()
    return 1


def _gemm_operands(matmul: Operation, x: Value, y: Value) -> bool:
    """x @ y is one GEMM of the fused dtypes, with mm the result the fused op gives."""
    types = (x.type, y.type, matmul.result().type)
    if not all(isinstance(t, DenseTensorType) for t in types):
        return False
    x_type, y_type, mm_type = types
    dtypes = {x_type.data_type, y_type.data_type, mm_type.data_type}
    if len(dtypes) != 1 or not dtypes <= FUSED_DTYPES:
        return False
    if y_type.rank != 2 or x_type.rank < 2 or mm_type.rank != x_type.rank:
        return False
    return not (matmul.attr("transpose_x") and x_type.rank != 2)


def _per_column(bias: Value, mm: OpResult) -> bool:
    """`add(mm, bias)` adds one value per column of mm, and is shaped like mm: bias is
    `[1, ..., 1, N]` (rank at most mm's) of mm's dtype, with N = mm's last dim, known."""
    type_ = bias.type
    if not isinstance(type_, DenseTensorType) or type_.data_type is not mm.type.data_type:
        return False
    n = mm.type.dims[-1]
    dims = type_.dims
    if n == DYNAMIC or not 1 <= len(dims) <= mm.type.rank:
        return False
    return dims[-1] == n and all(d == 1 for d in dims[:-1])


def _flags(op: Operation) -> dict[str, object]:
    """The replaced op's stop_gradient flag, carried as decompositions carry it."""
    flags = op.attr("stop_gradient")
    return {} if flags is None else {"stop_gradient": [all(flags)]}
