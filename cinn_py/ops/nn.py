"""Neural-network ops: softmax, log_softmax, layer_norm, rms_norm, dropout, embedding,
matmul, bmm, fused_gemm_epilogue.

Paddle 3.3.1 facts the declarations follow (probed with the real thing): layer_norm's
mean and variance keep the dims before `begin_norm_axis` (not flattened) and are float32
for float16/bfloat16 input; `begin_norm_axis` must be in [1, rank). rms_norm has results
`y` and `invvar`, whose dims are those before the normalized ones (the CPU wheel has no
rms_norm kernel, so its dtype rule, float32 but float64 for float64 input, follows the
legacy API and could not be probed). dropout's `p` is a mutable Scalar operand and its
mask is uint8. matmul does not broadcast batch dims across ranks: the operand of higher
rank gives them (`computed_meta` gives what the kernel computes).

Reference kernels accumulate in float64 (float inputs) and round once into the result
type. Decompositions turn softmax, log_softmax, layer_norm and rms_norm into reductions
and elementwise ops that fuse with their neighbours (softmax and log_softmax clip
`x - max` at -64 as Paddle's kernel does; layer_norm's variance is the biased one,
computed in one pass as E[x^2] - E[x]^2 clamped at 0); float16 and bfloat16 compute in
float32 (cast in, cast out). Inference dropout folds away (`_decompose_dropout`).
matmul and bmm run as library calls; embedding is lowered (a gather of rows).

`fused_gemm_epilogue(x, y, bias) {trans_x, trans_y, activation}` is Paddle's linear layer
in one cuBLASLt call: act(x @ y + bias), y 2-D, bias [N], x's leading dims flattened into
M, activation "none", "relu" or "gelu". Its "gelu" is cuBLASLt's GELU epilogue, the tanh
approximation (`gelu {approximate: true}`), not Paddle's default erf gelu, although
Paddle's own fused_gemm_epilogue_pass fuses either. Its second result, reserve_space, is
the data cuBLASLt keeps for the backward pass; Paddle's builder makes it for relu and
gelu, `fuse_gemm_epilogue` (the pass that forms the op here) never does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cinn_py.errors import UnsupportedOpError, VerifyError
from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering
from cinn_py.hlir.op_lowering.scalar import HALF, const, convert
from cinn_py.ir.expr import EQ, Expr, Select
from cinn_py.ops.activation import gelu_tanh, relu
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import (
    BoolAttribute,
    DoubleAttribute,
    FloatAttribute,
    Int32Attribute,
    Int64Attribute,
    StrAttribute,
)
from cinn_py.pir.constant import constant_of
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import ArrayOf, InferContext, OpDef, Scalar, attr, attr_value, operand
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import (
    Emitter,
    compute_dtype,
    computed_input,
    dtype_of,
    element_count,
    float_input,
)
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import DYNAMIC, DenseTensorType, NullType, Type, is_null
from cinn_py.pir.value import Value
from cinn_py.reference_ops.context import (
    KernelContext,
    accumulate_dtype,
    check_indices,
    normalize_axis,
)

# -- declarations -------------------------------------------------------------------------

_DROPOUT_MODES = ("downgrade_in_infer", "upscale_in_train")


def _accumulator(x: DenseTensorType) -> DataType:
    """Statistics of 16-bit floats are kept in float32."""
    return DataType.FLOAT32 if x.data_type in (DataType.FLOAT16, DataType.BFLOAT16) else x.data_type


def _infer_softmax(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    im.normalize_axis(ctx, ctx.attr("axis"), x.rank)
    return [x]


def _infer_layer_norm(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    begin = ctx.attr("begin_norm_axis")
    if not 0 < begin < x.rank:
        raise ctx.error(
            f"begin_norm_axis {begin} must be in [1, {x.rank}) for dims {im.fmt(x.dims)}"
        )
    width = im.product(x.dims[begin:])
    for name in ("scale", "bias"):
        if not ctx.has(name):
            continue
        im.check_vector(
            ctx, name, width, f"the normalized dims {im.fmt(x.dims[begin:])} hold {width}"
        )
    stats = x.with_dims(x.dims[:begin]).with_dtype(_accumulator(x))
    return [x, stats, stats]


def _infer_rms_norm(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    shape = ctx.attr("normalized_shape")
    begin = x.rank - len(shape)
    if not 0 < begin < x.rank:
        raise ctx.error(
            f"normalized_shape {shape} must be non-empty and shorter than the input's dims {im.fmt(x.dims)}"
        )
    for i, n in enumerate(shape):
        d = x.dims[begin + i]
        if d not in (DYNAMIC, n):
            raise ctx.error(
                f"normalized_shape {shape} does not match the trailing dims of {im.fmt(x.dims)}"
            )
    if ctx.has("scale"):
        scale = ctx.tensor("scale")
        if scale.rank != len(shape) or any(
            d not in (DYNAMIC, n) for d, n in zip(scale.dims, shape, strict=True)
        ):
            raise ctx.error(
                f"dims {im.fmt(scale.dims)} do not match normalized_shape {shape}", operand="scale"
            )
    invvar = x.with_dims(x.dims[:begin]).with_dtype(_accumulator(x))
    return [x, invvar]


def _infer_dropout(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    return [x, x.with_dtype(DataType.UINT8)]


def _verify_dropout(op: Operation) -> None:
    mode = attr_value(op.op_def, op.attributes, "mode")
    if mode not in _DROPOUT_MODES:
        raise VerifyError(
            op.name, f"mode must be one of {list(_DROPOUT_MODES)}, got '{mode}'", where=op.where()
        )


def _infer_embedding(ctx: InferContext) -> list[Type]:
    x, weight = ctx.tensor("x"), ctx.tensor("weight")
    if weight.rank != 2:
        raise ctx.error(
            f"the lookup table must be 2-D, got dims {im.fmt(weight.dims)}", operand="weight"
        )
    return [weight.with_dims(x.dims + (weight.dims[1],))]


def _infer_matmul(ctx: InferContext) -> list[Type]:
    """MatmulInferMeta: 1-D operands are promoted and their dim dropped again."""
    x, y = ctx.tensor("x"), ctx.tensor("y")
    if x.rank == 0 or y.rank == 0:
        raise ctx.error(f"needs operands of rank >= 1, got {im.fmt(x.dims)} and {im.fmt(y.dims)}")
    # A 1-D operand is a vector whatever its transpose flag says.
    tx = ctx.attr("transpose_x") and x.rank > 1
    ty = ctx.attr("transpose_y") and y.rank > 1
    xd = (1,) + x.dims if x.rank == 1 else x.dims
    yd = y.dims + (1,) if y.rank == 1 else y.dims
    m, kx = (xd[-1], xd[-2]) if tx else (xd[-2], xd[-1])
    ky, n = (yd[-1], yd[-2]) if ty else (yd[-2], yd[-1])
    if DYNAMIC not in (kx, ky) and kx != ky:
        raise ctx.error(
            f"inner dims differ: x {im.fmt(x.dims)} (transpose_x={tx}) gives K={kx}, "
            f"y {im.fmt(y.dims)} (transpose_y={ty}) gives K={ky}"
        )
    if len(xd) != len(yd):
        batch = (xd if len(xd) > len(yd) else yd)[:-2]
    else:
        batch = im.broadcast_shapes(ctx, xd[:-2], yd[:-2])
    out = batch + (() if x.rank == 1 else (m,)) + (() if y.rank == 1 else (n,))
    return [x.with_dims(out)]


def _computed_matmul(ctx: InferContext) -> list[Type]:
    """matmul's result with its batch dims broadcast (numpy.matmul's rule, what the kernel
    computes). Paddle 3.3.1's infer-meta instead takes the longer operand's batch dims:
    `[2,1,3,4] @ [5,4,6]` is declared `2x1x3x6`, computed `2x5x3x6`."""
    x, y = ctx.tensor("x"), ctx.tensor("y")
    (declared,) = _infer_matmul(ctx)
    if x.rank < 3 and y.rank < 3:
        return [declared]
    xd = (1,) + x.dims if x.rank == 1 else x.dims
    yd = y.dims + (1,) if y.rank == 1 else y.dims
    batch = im.broadcast_shapes(ctx, xd[:-2], yd[:-2])
    kept = (x.rank > 1) + (y.rank > 1)  # m and n, unless an operand was a vector
    return [declared.with_dims(tuple(batch) + declared.dims[declared.rank - kept :])]


GEMM_ACTIVATIONS = ("none", "relu", "gelu")
"""fused_gemm_epilogue's activations (Paddle's kernel refuses any other)."""


def _gemm_dims(ctx: InferContext, x: DenseTensorType, y: DenseTensorType) -> tuple[int, int]:
    """(M, N) of act(x @ y + bias) as FusedGemmEpilogueInferMeta reads them, K checked."""
    if x.rank < 2:
        raise ctx.error(f"needs x of rank >= 2, got dims {im.fmt(x.dims)}", operand="x")
    if y.rank != 2:
        raise ctx.error(f"needs a 2-D y, got dims {im.fmt(y.dims)}", operand="y")
    if ctx.attr("trans_x") and x.rank > 2:
        raise ctx.error(
            f"trans_x needs a 2-D x, got dims {im.fmt(x.dims)}: for rank > 2 Paddle's "
            "infer-meta takes K from dim -2 while its kernel flattens x to "
            "[dim 0, the rest] (K = dim 0), so the op has no defined result",
            operand="x",
        )
    m, kx = (x.dims[-1], x.dims[-2]) if ctx.attr("trans_x") else (x.dims[-2], x.dims[-1])
    ky, n = (y.dims[1], y.dims[0]) if ctx.attr("trans_y") else (y.dims[0], y.dims[1])
    if DYNAMIC not in (kx, ky) and kx != ky:
        raise ctx.error(
            f"inner dims differ: x {im.fmt(x.dims)} (trans_x={ctx.attr('trans_x')}) gives "
            f"K={kx}, y {im.fmt(y.dims)} (trans_y={ctx.attr('trans_y')}) gives K={ky}"
        )
    return m, n


def _infer_fused_gemm_epilogue(ctx: InferContext) -> list[Type]:
    """FusedGemmEpilogueInferMeta: out is x's leading dims + [M, N] in x's dtype. y and
    bias must share x's float dtype (the kernel reads all three as one T).

    reserve_space is optional: none for activation "none" (Paddle refuses one there);
    for relu and gelu it has out's type where the op declares one (Paddle's builder
    always does, and then also demands N % 128 == 0 for relu, N % 8 for gelu, limits of
    cuBLASLt's auxiliary layouts that bind no one here), and none where the op is being
    built or declares none (what `fuse_gemm_epilogue` makes)."""
    x, y, bias = ctx.tensor("x"), ctx.tensor("y"), ctx.tensor("bias")
    activation = ctx.attr("activation")
    if activation not in GEMM_ACTIVATIONS:
        raise ctx.error(
            f"activation must be one of {', '.join(GEMM_ACTIVATIONS)}, got {activation!r}"
        )
    if not x.data_type.is_float:
        raise ctx.error(f"needs a float tensor, got {x.data_type.value}", operand="x")
    for name, other in (("y", y), ("bias", bias)):
        if other.data_type is not x.data_type:
            raise ctx.error(
                f"must have x's dtype {x.data_type.value}, got {other.data_type.value}",
                operand=name,
            )
    m, n = _gemm_dims(ctx, x, y)
    if bias.rank != 1:
        raise ctx.error(f"must be 1-D [N], got dims {im.fmt(bias.dims)}", operand="bias")
    if DYNAMIC not in (bias.dims[0], n) and bias.dims[0] != n:
        raise ctx.error(f"has {bias.dims[0]} values for N = {n} columns of x @ y", operand="bias")
    out = x.with_dims(x.dims[:-2] + (m, n))
    declared = ctx.declared[1] if ctx.declared is not None and len(ctx.declared) > 1 else None
    made = declared is not None and not is_null(declared)
    if activation == "none" and made:
        raise ctx.error('makes no reserve_space with activation "none"')
    return [out, out if made else NullType.get()]


def _infer_bmm(ctx: InferContext) -> list[Type]:
    x, y = ctx.tensor("x"), ctx.tensor("y")
    if x.rank != 3 or y.rank != 3:
        raise ctx.error(f"needs 3-D operands, got {im.fmt(x.dims)} and {im.fmt(y.dims)}")
    if DYNAMIC not in (x.dims[0], y.dims[0]) and x.dims[0] != y.dims[0]:
        raise ctx.error(f"batch sizes differ: {im.fmt(x.dims)} and {im.fmt(y.dims)}")
    if DYNAMIC not in (x.dims[2], y.dims[1]) and x.dims[2] != y.dims[1]:
        raise ctx.error(f"x's width {x.dims[2]} is not y's height {y.dims[1]}")
    batch = x.dims[0] if x.dims[0] != DYNAMIC else y.dims[0]
    return [x.with_dims((batch, x.dims[1], y.dims[2]))]


# -- reference kernels --------------------------------------------------------------------

SOFTMAX_SHIFT_FLOOR = -64.0
"""Paddle's CPU softmax and log_softmax clip `x - max` at -64 before `exp` (its
ValueClip), so softmax never gives exactly 0 (e**-64 = 1.6e-28) and log_softmax is
never below -64, even for -inf inputs."""


def _shifted(ctx: KernelContext) -> tuple[np.ndarray, int]:
    x = ctx.tensor(0).astype(np.float64)
    if x.ndim == 0:
        x = x.reshape(1)
    axis = normalize_axis(ctx.attr("axis"), x.ndim, ctx)
    if x.size == 0:  # nothing to normalize (NumPy's max has no identity for an empty axis)
        return x, axis
    with np.errstate(invalid="ignore"):
        shifted = np.maximum(x - np.max(x, axis=axis, keepdims=True), SOFTMAX_SHIFT_FLOOR)
    return shifted, axis


def softmax(ctx: KernelContext) -> np.ndarray:
    shifted, axis = _shifted(ctx)
    e = np.exp(shifted)
    return (e / np.sum(e, axis=axis, keepdims=True)).reshape(ctx.tensor(0).shape)


def log_softmax(ctx: KernelContext) -> np.ndarray:
    shifted, axis = _shifted(ctx)
    out = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return out.reshape(ctx.tensor(0).shape)


def _rows(x: np.ndarray, begin: int) -> np.ndarray:
    """`x` as a matrix: the dims before `begin` are rows, the rest one row each."""
    rows = math.prod(x.shape[:begin])
    return x.astype(np.float64).reshape(rows, math.prod(x.shape[begin:]))


def _row_mean(rows: np.ndarray) -> np.ndarray:
    """The mean of each row, NaN for rows of no elements (NumPy's mean warns there)."""
    return rows.sum(axis=1, keepdims=True) / rows.shape[1]


def layer_norm(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalizes over the dims from `begin_norm_axis` on; scale and bias (optional)
    hold one value per normalized element. Returns out, mean and the biased variance,
    the last two shaped like the leading dims."""
    x = ctx.tensor(0)
    begin = normalize_axis(ctx.attr("begin_norm_axis"), x.ndim, ctx)
    rows = _rows(x, begin)
    with np.errstate(invalid="ignore", divide="ignore"):  # empty rows: NaN statistics
        mean = _row_mean(rows)
        variance = _row_mean(np.square(rows - mean))
        out = (rows - mean) / np.sqrt(variance + ctx.attr("epsilon"))
    out = _affine(ctx, out, 1, np.multiply)
    out = _affine(ctx, out, 2, np.add)
    lead = x.shape[:begin]
    return out.reshape(x.shape), mean.reshape(lead), variance.reshape(lead)


def _affine(ctx: KernelContext, rows: np.ndarray, index: int, fn: np.ufunc) -> np.ndarray:
    """Applies optional operand `index` (one value per column of `rows`) with `fn`."""
    weight = ctx.optional(index)
    if weight is None:
        return rows
    weight = np.asarray(weight, dtype=np.float64).reshape(-1)
    if weight.size != rows.shape[1]:
        raise ctx.shape_error(
            f"operand #{index} has {weight.size} values for rows of {rows.shape[1]}"
        )
    return fn(rows, weight)


def rms_norm(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
    """Paddle 3.3.1's `pd_op.rms_norm(x, scale?)` {normalized_shape, epsilon} (a GPU-only
    kernel): y = x * rsqrt(mean(x**2) + epsilon) * scale over the trailing
    `normalized_shape` dims, and invvar = that rsqrt, shaped like the leading dims."""
    x = ctx.tensor(0)
    begin = x.ndim - len(ctx.attr("normalized_shape"))
    if not 0 <= begin <= x.ndim:
        raise ctx.error(f"normalized_shape is longer than the rank {x.ndim} of x")
    rows = _rows(x, begin)
    with np.errstate(invalid="ignore", divide="ignore"):  # empty rows: NaN statistics
        invvar = 1 / np.sqrt(_row_mean(np.square(rows)) + ctx.attr("epsilon"))
    out = _affine(ctx, rows * invvar, 1, np.multiply)
    return out.reshape(x.shape), invvar.reshape(x.shape[:begin])


def matmul(ctx: KernelContext) -> np.ndarray:
    """`transpose_x` / `transpose_y` swap the last two dims of a tensor of rank >= 2;
    1-D operands act as a row (x) or column (y) vector; batch dims broadcast."""
    x, y = ctx.tensor(0), ctx.tensor(1)
    if ctx.attr("transpose_x") and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if ctx.attr("transpose_y") and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    dtype = accumulate_dtype(np.result_type(x, y))
    with np.errstate(all="ignore"):  # NaN and inf operands give NaN and inf, as on the GPU
        return np.matmul(x.astype(dtype), y.astype(dtype))


def bmm(ctx: KernelContext) -> np.ndarray:
    x, y = ctx.tensor(0), ctx.tensor(1)
    if x.ndim != 3 or y.ndim != 3:
        raise ctx.shape_error(
            f"needs two 3-D tensors, got shapes {list(x.shape)} and {list(y.shape)}"
        )
    dtype = accumulate_dtype(np.result_type(x, y))
    return np.matmul(x.astype(dtype), y.astype(dtype))


_GEMM_EPILOGUES = {"none": lambda v: v, "relu": relu, "gelu": gelu_tanh}
"""What each activation computes, the same functions as `relu` and `gelu {approximate:
true}`, so a fused chain means exactly what the ops it replaces mean."""


def fused_gemm_epilogue(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray | None]:
    """act(x @ y + bias), x's leading dims as batch (flattened into M, the same thing
    for a 2-D y). The product accumulates in float64 as `matmul`'s does, bias and
    activation follow in float64, and the result is rounded once into out's dtype, as
    cuBLASLt's epilogue rounds once. reserve_space, where the op declares one (Paddle's
    programs), holds the activation's input: cuBLASLt's GELU_AUX (for relu, Paddle keeps
    cuBLASLt's bitmask of it, bytes only its grad kernel reads)."""
    x, y, bias = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    if ctx.attr("trans_x"):
        x = np.swapaxes(x, -1, -2)
    if ctx.attr("trans_y"):
        y = y.T
    dtype = accumulate_dtype(np.result_type(x, y, bias))
    with np.errstate(all="ignore"):  # NaN and inf operands give NaN and inf, as on the GPU
        pre = np.matmul(x.astype(dtype), y.astype(dtype)) + bias.astype(dtype)
        out = _GEMM_EPILOGUES[ctx.attr("activation")](pre)
    return out, None if is_null(ctx.op.result(1).type) else pre


def embedding(ctx: KernelContext) -> np.ndarray:
    """Rows of `weight` by id; rows whose id is `padding_idx` are zero (-1: none, and
    ids are never negative: Paddle rejects ids outside [0, rows))."""
    ids, weight = ctx.tensor(0), ctx.tensor(1)
    check_indices(ctx, ids, 0, weight.shape[0])
    out = weight[ids.astype(np.int64)]
    out[ids == ctx.attr("padding_idx")] = 0
    return out


def dropout(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
    """Inference only: `upscale_in_train` passes x through, `downgrade_in_infer` scales it
    by 1 - p. Paddle leaves the mask unwritten in inference; here it is all ones (every
    element kept). Training (is_test false) draws random masks, which no oracle can."""
    if not ctx.attr("is_test"):
        raise UnsupportedOpError(
            ctx.op.name,
            ctx.op.where(),
            "with is_test=false (training, random masks) is not supported",
        )
    x = ctx.tensor_in(0, ctx.compute_dtype())
    mask = np.ones(x.shape, dtype=np.uint8)
    if ctx.attr("mode") == "upscale_in_train":
        return x, mask
    return x * (np.float32(1) - np.float32(ctx.scalar(2, "p"))), mask


# -- lowering ------------------------------------------------------------------------------


def _lower_embedding(ctx: LowerContext) -> Compute:
    """Rows of `weight` by id; rows whose id is `padding_idx` are zero (a negative
    padding_idx never matches: ids are never negative)."""
    ids, weight = ctx.input(0), ctx.input(1)
    padding = int(ctx.attr("padding_idx"))

    def element(idx: Indices) -> Expr:
        key = ids(idx[:-1])
        row = weight([convert(key, ctx.index_dtype), idx[-1]])
        if padding < 0:
            return row
        return Select(EQ(key, const(padding, key.dtype)), const(0, weight.dtype), row)

    return Compute(weight.dtype, ctx.out_shape(), element)


# -- decompositions ------------------------------------------------------------------------


def _emit_shifted(emit: Emitter, op: Operation) -> tuple[Value, Value, list[int]] | None:
    """(x in the compute dtype, max(x - max x, -64), the reduced axes) for softmax."""
    operand = computed_input(emit, op)
    if operand is None:
        return None
    xc, dtype = operand
    axes = [emit.attr("axis")] if xc.type.rank else []
    top = emit.op("pd_op.max", xc, None, axis=axes, keepdim=True)
    diff = emit.op("pd_op.subtract", xc, top)
    shifted = emit.op("pd_op.maximum", diff, emit.const(SOFTMAX_SHIFT_FLOOR, dtype))
    return xc, shifted, axes


LOG2_E = math.log2(math.e)
"""exp(s) = 2 ** (s * LOG2_E)."""


def _exp(emit: Emitter, shifted: Value, result: DataType) -> Value:
    """exp(s) of softmax's and log_softmax's shifted s = max(x - max(x), -64) <= 0. With
    a float16 or bfloat16 result it is 2 ** (s * log2 e) (`exp2f` in the kernel: a few
    instructions where a precise `expf` takes about 8 an element, most of a float16
    softmax's instruction time): rounding the product moves it by at most |s| log2(e)
    2**-24 (s >= -64), so each exp by at most 4e-6 of itself, and the row's largest
    element, s = 0, not at all (2 ** 0 is exactly 1). A float32 result keeps the precise
    exp (4e-6 is 30 of its ulps)."""
    if result not in HALF:
        return emit.op("pd_op.exp", shifted)
    dtype = dtype_of(shifted)
    scaled = emit.op("pd_op.multiply", shifted, emit.const(LOG2_E, dtype))
    return emit.op("pd_op.elementwise_pow", emit.const(2.0, dtype), scaled)


def _decompose_softmax(emit: Emitter, op: Operation) -> list[Value] | None:
    """exp(s) / sum(exp(s)) over s = max(x - max(x), -64), in the compute dtype (`_exp`:
    through exp2f for a 16-bit result, where each exp's 4e-6, the sum's as much and the
    quotient's twice that stay under 2% of a float16 ulp (4.9e-4), under 0.3% of a
    bfloat16 one, with no cancellation anywhere on the way)."""
    parts = _emit_shifted(emit, op)
    if parts is None:
        return None
    _, shifted, axes = parts
    dtype = dtype_of(shifted)
    e = _exp(emit, shifted, dtype_of(op.result()))
    # e * (1 / sum): one division a row, not one an element (at most an ulp more error)
    scale = emit.op("pd_op.divide", emit.const(1.0, dtype), emit.sum(e, axes))
    out = emit.op("pd_op.multiply", e, scale)
    return [emit.cast(out, dtype_of(op.result()))]


def _decompose_log_softmax(emit: Emitter, op: Operation) -> list[Value] | None:
    """s - log(sum(exp(s))) over s = max(x - max(x), -64), in the compute dtype (`_exp`:
    through exp2f for a 16-bit result). The sum S is 1 (the largest element's exact exp)
    plus the rest, so its error is at most 4e-6 of S - 1, and log(S) >= (S - 1) / S
    gives log(S) within 4e-6 of itself; s <= 0 and log(S) >= 0 add in magnitude, so
    every output is within 4e-6 of itself too: under 1% of a float16 ulp, also where
    the result is near 0 (a row one element dominates)."""
    parts = _emit_shifted(emit, op)
    if parts is None:
        return None
    _, shifted, axes = parts
    total = emit.sum(_exp(emit, shifted, dtype_of(op.result())), axes)
    out = emit.op("pd_op.subtract", shifted, emit.op("pd_op.log", total))
    return [emit.cast(out, dtype_of(op.result()))]


def _normalized(emit: Emitter, x: Value, begin: int) -> tuple[Value, list[int], int] | None:
    """(x in the compute dtype, the normalized axes from `begin` on, their element count)."""
    dims = x.type.dims
    count = element_count(dims[begin:])
    if count is None:
        return None
    return emit.cast(x, compute_dtype(x)), list(range(begin, len(dims))), count


def _leading(emit: Emitter, stat: Value, begin: int, dtype: DataType) -> Value:
    """A keepdim statistic as the op declares it: only the `begin` leading dims (its
    trailing 1s squeezed: a reshape to [0] * begin would give 0s for an empty input,
    where Paddle's reshape copies no dim)."""
    rank = stat.type.rank
    kept = emit.op("pd_op.squeeze", stat, None, axis=list(range(begin, rank)))
    return emit.cast(kept, dtype)


def _weight(emit: Emitter, weight: Value, dims: Sequence[int], dtype: DataType) -> Value:
    """A per-element scale or bias, shaped like the normalized dims, in `dtype`."""
    if weight.type.dims != tuple(dims):
        weight = emit.op("pd_op.reshape", weight, None, shape=list(dims))
    return emit.cast(weight, dtype)


def _decompose_layer_norm(emit: Emitter, op: Operation) -> list[Value] | None:
    x = float_input(op)
    if x is None:
        return None
    begin = emit.attr("begin_norm_axis") % x.type.rank
    parts = _normalized(emit, x, begin)
    if parts is None:
        return None
    xc, axes, count = parts
    dtype = dtype_of(xc)
    # Mean and variance in one pass: two sibling sums of x (x and x * x) that the row
    # schedule walks and combines together, variance = E[x^2] - E[x]^2 clamped at 0, as
    # Paddle's own CUDA kernel computes it. Cancellation costs digits of the variance
    # when |mean| is much larger than the deviation (see docs/AUTO_SCHEDULE.md);
    # a layer norm written by hand as mean((x - mean)^2) compiles as written.
    mean = emit.mean(xc, axes, count)
    mean_of_squares = emit.mean(emit.op("pd_op.square", xc), axes, count)
    spread = emit.op("pd_op.subtract", mean_of_squares, emit.op("pd_op.square", mean))
    variance = emit.op("pd_op.maximum", spread, emit.const(0.0, dtype))
    centered = emit.op("pd_op.subtract", xc, mean)
    shifted = emit.op("pd_op.add", variance, emit.const(emit.attr("epsilon"), dtype))
    out = emit.op("pd_op.multiply", centered, emit.op("pd_op.rsqrt", shifted))
    norm_dims = x.type.dims[begin:]
    scale, bias = op.operand_value(1), op.operand_value(2)
    if count == 0:  # empty rows: `out` is empty, and a reshape to a 0 dim would copy a dim
        scale = bias = None
    if scale is not None:
        out = emit.op("pd_op.multiply", out, _weight(emit, scale, norm_dims, dtype))
    if bias is not None:
        out = emit.op("pd_op.add", out, _weight(emit, bias, norm_dims, dtype))
    return [
        emit.cast(out, dtype_of(op.result(0))),
        _leading(emit, mean, begin, dtype_of(op.result(1))),
        _leading(emit, variance, begin, dtype_of(op.result(2))),
    ]


def _decompose_rms_norm(emit: Emitter, op: Operation) -> list[Value] | None:
    x = float_input(op)
    if x is None:
        return None
    begin = x.type.rank - len(emit.attr("normalized_shape"))
    parts = _normalized(emit, x, begin)
    if parts is None:
        return None
    xc, axes, count = parts
    dtype = dtype_of(xc)
    mean_square = emit.mean(emit.op("pd_op.square", xc), axes, count)
    shifted = emit.op("pd_op.add", mean_square, emit.const(emit.attr("epsilon"), dtype))
    invvar = emit.op("pd_op.rsqrt", shifted)
    out = emit.op("pd_op.multiply", xc, invvar)
    scale = op.operand_value(1)
    if scale is not None:
        out = emit.op("pd_op.multiply", out, emit.cast(scale, dtype))
    return [
        emit.cast(out, dtype_of(op.result(0))),
        _leading(emit, invvar, begin, dtype_of(op.result(1))),
    ]


def _dropout_p(op: Operation) -> float | None:
    """The drop probability: the folded `p` attribute, else the constant operand."""
    if "p" in op.attributes:
        return float(op.attr("p"))
    operand = op.operand_value(2)
    p = None if operand is None else constant_of(operand)
    if isinstance(p, list):
        p = p[0] if len(p) == 1 else None
    return None if p is None else float(p)


def _outputs_only(reader: Operation) -> bool:
    """`reader` only hands its operand out of the program (fetch, shadow_output)."""
    return reader.op_def is not None and reader.op_def.has_trait(Trait.PROGRAM_OUTPUT)


def _decompose_dropout(emit: Emitter, op: Operation) -> list[Value | None] | None:
    """Inference dropout folded away, so it no longer splits fusion: `upscale_in_train`
    is x itself, `downgrade_in_infer` is x * (1 - p) (1 - p in float32, as the kernel
    computes it). The mask, which Paddle leaves unwritten in inference, is all ones as in
    the reference kernel: a `full_like` where it is a program output (fetched, or in a
    printed program with no fetch, where every unread result is one), nothing where it is
    unused. An op that computes with the mask keeps the dropout whole; training (random
    masks) stays a library op."""
    mask = op.result(1)
    if not emit.attr("is_test") or not all(_outputs_only(use.owner) for use in mask.uses):
        return None
    x = op.operand_value(0)
    if emit.attr("mode") == "upscale_in_train":
        out = x
    else:
        p = _dropout_p(op)
        operand = computed_input(emit, op)
        if p is None or operand is None:
            return None
        xc, dtype = operand
        keep = float(np.float32(1) - np.float32(p))
        out = emit.cast(
            emit.op("pd_op.multiply", xc, emit.const(keep, dtype)), dtype_of(op.result(0))
        )
    if emit.unused(mask):
        return [out, None]
    ones = emit.op("pd_op.full_like", x, None, value=1.0, dtype=DataType.UINT8)
    return [out, ones]


# -- entries -------------------------------------------------------------------------------

OPS = [
    OpDef(
        "pd_op.softmax",
        operands=(operand("x"),),
        attributes=(attr("axis", Int32Attribute, -1),),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_softmax,
        kernel=softmax,
        decompose=_decompose_softmax,
        symbolic_meta=sym.same_as_first,
    ),
    OpDef(
        "pd_op.log_softmax",
        operands=(operand("x"),),
        attributes=(attr("axis", Int32Attribute, -1),),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_softmax,
        kernel=log_softmax,
        decompose=_decompose_log_softmax,
        symbolic_meta=sym.same_as_first,
    ),
    OpDef(
        "pd_op.layer_norm",
        operands=(operand("x"), operand("scale", optional=True), operand("bias", optional=True)),
        attributes=(
            attr("epsilon", FloatAttribute, 1e-5),
            attr("begin_norm_axis", Int32Attribute, 1),
        ),
        results=("out", "mean", "variance"),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_layer_norm,
        kernel=layer_norm,
        decompose=_decompose_layer_norm,
        symbolic_meta=sym.norm_shape,
    ),
    OpDef(
        "pd_op.rms_norm",
        operands=(operand("x"), operand("scale", optional=True)),
        attributes=(
            attr("normalized_shape", ArrayOf(Int64Attribute), []),
            attr("epsilon", DoubleAttribute, 1e-5),
        ),
        results=("y", "invvar"),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_rms_norm,
        kernel=rms_norm,
        decompose=_decompose_rms_norm,
        symbolic_meta=sym.stats_shape,
    ),
    OpDef(
        "pd_op.dropout",
        operands=(
            operand("x"),
            operand("seed_tensor", optional=True),
            operand("p", mutable_attr="p", mutable_kind=Scalar),
        ),
        attributes=(
            attr("is_test", BoolAttribute, False),
            attr("mode", StrAttribute, "downgrade_in_infer"),
            attr("seed", Int32Attribute, 0),
            attr("fix_seed", BoolAttribute, False),
        ),
        results=("out", "mask"),
        pattern=OpPatternKind.NON_FUSIBLE,
        traits=frozenset({Trait.RANDOM}),
        infer_meta=_infer_dropout,
        verify=_verify_dropout,
        kernel=dropout,
        decompose=_decompose_dropout,
        symbolic_meta=sym.same_as_first,
    ),
    OpDef(
        "pd_op.embedding",
        operands=(operand("x"), operand("weight")),
        attributes=(attr("padding_idx", Int64Attribute, -1), attr("sparse", BoolAttribute, False)),
        pattern=OpPatternKind.INJECTIVE,
        infer_meta=_infer_embedding,
        kernel=embedding,
        lowering=OpLowering(_lower_embedding, symbolic=True),
        symbolic_meta=sym.embedding_shape,
    ),
    OpDef(
        "pd_op.matmul",
        operands=(operand("x"), operand("y")),
        attributes=(
            attr("transpose_x", BoolAttribute, False),
            attr("transpose_y", BoolAttribute, False),
        ),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_matmul,
        computed_meta=_computed_matmul,
        kernel=matmul,
        symbolic_meta=sym.matmul_shape,
    ),
    OpDef(
        "pd_op.fused_gemm_epilogue",
        operands=(operand("x"), operand("y"), operand("bias")),
        attributes=(
            attr("trans_x", BoolAttribute, False),
            attr("trans_y", BoolAttribute, False),
            attr("activation", StrAttribute, "none"),
        ),
        results=("out", "reserve_space"),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_fused_gemm_epilogue,
        kernel=fused_gemm_epilogue,
        symbolic_meta=sym.gemm_epilogue_shape,
    ),
    OpDef(
        "pd_op.bmm",
        operands=(operand("x"), operand("y")),
        pattern=OpPatternKind.OUT_FUSIBLE,
        infer_meta=_infer_bmm,
        kernel=bmm,
        symbolic_meta=sym.matmul_shape,
    ),
]
