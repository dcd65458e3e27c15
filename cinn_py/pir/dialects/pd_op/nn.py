"""pd_op neural-network ops: softmax, normalization, activations with attributes,
dropout, embedding, matmul.

Paddle 3.3.1 facts these follow (probed with the real thing): layer_norm's mean and
variance keep the dims before `begin_norm_axis` (not flattened) and are float32 for
float16/bfloat16 input; `begin_norm_axis` must be in [1, rank). rms_norm has results `y`
and `invvar`, whose dims are those before the normalized ones (the CPU wheel has no
rms_norm kernel, so its dtype rule, float32 but float64 for float64 input, follows the
legacy API and could not be probed). dropout's `p` is a mutable Scalar operand and its
mask is uint8. matmul does not broadcast batch dims across ranks: the operand of higher
rank gives them.
"""

from __future__ import annotations

from cinn_py.errors import VerifyError
from cinn_py.pir.dialects.pd_op import infer_meta as im
from cinn_py.pir.dialects.pd_op.traits import (
    ELEMENTWISE,
    INJECTIVE,
    NON_FUSIBLE,
    OUT_FUSIBLE,
    traits,
)
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.operation import Operation
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type

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
        param = ctx.tensor(name)
        if param.rank != 1:
            raise ctx.error(f"must be 1-D, got dims {im.fmt(param.dims)}", operand=name)
        if DYNAMIC not in (width, param.dims[0]) and param.dims[0] != width:
            raise ctx.error(
                f"has {param.dims[0]} elements, but the normalized dims {im.fmt(x.dims[begin:])} "
                f"hold {width}",
                operand=name,
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
    mode = op.attr("mode", "downgrade_in_infer")
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


OPS = [
    OpDef(
        "pd_op.softmax",
        operands=(operand("x"),),
        attributes=(attr("axis", "int32", -1),),
        traits=traits(OUT_FUSIBLE),
        infer_meta=_infer_softmax,
    ),
    OpDef(
        "pd_op.log_softmax",
        operands=(operand("x"),),
        attributes=(attr("axis", "int32", -1),),
        traits=traits(OUT_FUSIBLE),
        infer_meta=_infer_softmax,
    ),
    OpDef(
        "pd_op.layer_norm",
        operands=(operand("x"), operand("scale", optional=True), operand("bias", optional=True)),
        attributes=(attr("epsilon", "float", 1e-5), attr("begin_norm_axis", "int32", 1)),
        results=("out", "mean", "variance"),
        traits=traits(OUT_FUSIBLE),
        infer_meta=_infer_layer_norm,
    ),
    OpDef(
        "pd_op.rms_norm",
        operands=(operand("x"), operand("scale", optional=True)),
        attributes=(attr("normalized_shape", "array<int64>", []), attr("epsilon", "double", 1e-5)),
        results=("y", "invvar"),
        traits=traits(OUT_FUSIBLE),
        infer_meta=_infer_rms_norm,
    ),
    OpDef(
        "pd_op.gelu",
        operands=(operand("x"),),
        attributes=(attr("approximate", "bool", False),),
        traits=traits(ELEMENTWISE),
        infer_meta=im.unchanged,
    ),
    OpDef(
        "pd_op.dropout",
        operands=(
            operand("x"),
            operand("seed_tensor", optional=True),
            operand("p", mutable_attr="p", mutable_kind="scalar"),
        ),
        attributes=(
            attr("is_test", "bool", False),
            attr("mode", "str", "downgrade_in_infer"),
            attr("seed", "int32", 0),
            attr("fix_seed", "bool", False),
        ),
        results=("out", "mask"),
        traits=traits(NON_FUSIBLE),
        infer_meta=_infer_dropout,
        verify=_verify_dropout,
    ),
    OpDef(
        "pd_op.embedding",
        operands=(operand("x"), operand("weight")),
        attributes=(attr("padding_idx", "int64", -1), attr("sparse", "bool", False)),
        traits=traits(INJECTIVE),
        infer_meta=_infer_embedding,
    ),
    OpDef(
        "pd_op.matmul",
        operands=(operand("x"), operand("y")),
        attributes=(attr("transpose_x", "bool", False), attr("transpose_y", "bool", False)),
        traits=traits(OUT_FUSIBLE),
        infer_meta=_infer_matmul,
        computed_meta=_computed_matmul,
    ),
    OpDef(
        "pd_op.bmm",
        operands=(operand("x"), operand("y")),
        traits=traits(OUT_FUSIBLE),
        infer_meta=_infer_bmm,
    ),
]
