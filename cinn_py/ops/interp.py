"""Interpolation: pd_op.bilinear_interp and pd_op.nearest_interp (4-D, NCHW / NHWC).

`F.interpolate` prints them with three optional operands, `out_size`, `size_tensor`
(a Tensor[]) and `scale_tensor`, `<<NULL VALUE>>` when not given, and attributes
out_h / out_w (-1 when a scale is given) and `scale` ([] when a size is given).

Paddle 3.3.1's CPU kernels (phi `interpolate_kernel.cc`), which the reference and the
lowering both follow, in the same float32 / float64 arithmetic so that the source
indices (truncated to int) come out the same:

* output size: size_tensor, else out_size, else int(in * scale) when the scale (the
  tensor or the attribute) is positive, else out_h / out_w;
* ratio (float32): 0 for an output of 1; (in - 1) / (out - 1) with align_corners;
  else float(1. / scale) when a positive scale was given (not with size_tensor); else
  in / out;
* nearest: src = int(ratio * k + 0.5) with align_corners, else int(ratio * k);
* bilinear: with align_mode 0 and not align_corners ("half pixel"), the lower source
  index is int(ratio * (k + 0.5) - 0.5) computed in double, clamped at 0, and its
  weight idx_src - n with idx_src = max(float(ratio * (k + 0.5) - 0.5), 0); otherwise
  int(ratio * k) and weight ratio * k - n; the upper index is min(n + 1, in - 1); the
  result is x[n,w] d_s d_e + x[s,w] d_n d_e + x[n,e] d_s d_w + x[s,e] d_n d_w.

The lowering is an injective Compute: that index arithmetic and, for bilinear, the
weighted sum of four loads. It needs a static output shape and no scale_tensor (whose
value sets the ratio at run time); otherwise the op runs its reference kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cinn_py.errors import ShapeVerifyError
from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering
from cinn_py.hlir.op_lowering.scalar import compute_type, const, convert
from cinn_py.ir.expr import Add, Expr, FloatImm, IntImm, Max, Min, Mul, Sub
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import BoolAttribute, DoubleAttribute, Int32Attribute, StrAttribute
from cinn_py.pir.constant import constant_of
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import ArrayOf, InferContext, OpDef, attr, operand
from cinn_py.pir.operation import Operation
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type
from cinn_py.reference_ops.context import KernelContext

F32 = DataType.FLOAT32
F64 = DataType.FLOAT64


def _spatial(data_format: str) -> tuple[int, int]:
    """The (H, W) dims of a 4-D tensor in `data_format`."""
    return (1, 2) if data_format == "NHWC" else (2, 3)


def _scales(scale: list[float] | None) -> tuple[float, float]:
    """(scale_h, scale_w) from a scale list (1 value: both), -1 when absent."""
    if not scale:
        return -1.0, -1.0
    values = [float(s) for s in scale]
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])


def _scaled(size: int, scale: float) -> int:
    """int(in * scale) as Paddle computes it (float32 scale times an int, in float)."""
    return int(np.float32(scale) * np.float32(size))


# -- declarations -------------------------------------------------------------------------


def _infer_interp(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    if x.rank != 4:
        raise ShapeVerifyError(
            ctx.op_def.name,
            f"x must be 4-D (N, C, H, W), got dims {im.fmt(x.dims)}",
            where=ctx.where,
        )
    h, w = _spatial(ctx.attr("data_format"))
    dims = list(x.dims)
    sizes: list[int | None] | None = None
    for key in ("size_tensor", "out_size"):
        if ctx.has(key):
            value = constant_of(ctx.value(key))
            sizes = [None, None] if value is None else [int(v) for v in np.ravel(value)][:2]
            if len(sizes) != 2:
                raise ShapeVerifyError(
                    ctx.op_def.name,
                    f"{key} holds {len(sizes)} sizes, needs 2 (height and width)",
                    where=ctx.where,
                )
            break
    if sizes is None:
        if ctx.has("scale_tensor"):
            value = constant_of(ctx.value("scale_tensor"))
            scale_h, scale_w = _scales(None if value is None else list(np.ravel(value)))
            known = value is not None
        else:
            scale_h, scale_w = _scales(ctx.attr("scale"))
            known = True
        if not known:
            sizes = [None, None]
        elif scale_h > 0 and scale_w > 0:
            sizes = [
                None if dims[h] == DYNAMIC else _scaled(dims[h], scale_h),
                None if dims[w] == DYNAMIC else _scaled(dims[w], scale_w),
            ]
        else:
            sizes = [ctx.attr("out_h"), ctx.attr("out_w")]
    for dim, size in zip((h, w), sizes, strict=True):
        if size is not None and size != DYNAMIC and size <= 0:
            raise ShapeVerifyError(
                ctx.op_def.name, f"the output size {sizes} must be positive", where=ctx.where
            )
        dims[dim] = DYNAMIC if size is None else size
    return [x.with_dims(dims)]


# -- shared index rules ----------------------------------------------------------------------


def _ratio(in_size: int, out_size: int, align_corners: bool, scale: float) -> float:
    """Paddle's float32 ratio from output index to source index."""
    if out_size <= 1:
        return 0.0
    if align_corners:
        return float(np.float32(in_size - 1) / np.float32(out_size - 1))
    if scale > 0:
        return float(np.float32(1.0 / float(np.float32(scale))))
    return float(np.float32(in_size) / np.float32(out_size))


def _run_scales(ctx: KernelContext | LowerContext) -> tuple[float, float]:
    """The scales the kernel's ratio uses (-1: none): the tensor, else the attribute;
    none when a size_tensor gives the size."""
    if len(ctx.operands) > 2 and ctx.operands[2] is not None:
        return -1.0, -1.0
    if len(ctx.operands) > 3 and ctx.operands[3] is not None:
        value = ctx.operands[3]
        return _scales(list(np.ravel(np.asarray(value))))
    return _scales(ctx.attr("scale"))


# -- reference kernels ----------------------------------------------------------------------


def _nearest_indices(in_size: int, out_size: int, ratio: float, corners: bool) -> np.ndarray:
    k = np.arange(out_size, dtype=np.float32)
    t = np.float32(ratio) * k
    if corners:
        return np.trunc(t.astype(np.float64) + 0.5).astype(np.int64)
    return np.trunc(t).astype(np.int64)


def _linear_indices(
    in_size: int, out_size: int, ratio: float, half_pixel: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower source index, upper source index, weight of the upper (float32)."""
    k = np.arange(out_size)
    if half_pixel:
        src = np.float64(np.float32(ratio)) * (k + 0.5) - 0.5
        low = np.maximum(np.trunc(src).astype(np.int64), 0)
        idx_src = np.maximum(src.astype(np.float32), np.float32(0))
        weight = idx_src - low.astype(np.float32)
    else:
        t = np.float32(ratio) * k.astype(np.float32)
        low = np.maximum(np.trunc(t).astype(np.int64), 0)
        weight = t - low.astype(np.float32)
    high = np.minimum(low + 1, in_size - 1)
    return low, high, weight.astype(np.float32)


def _planes(ctx: KernelContext) -> tuple[np.ndarray, bool, tuple[int, int], tuple[float, float]]:
    x = ctx.tensor_in(0, np.float32 if ctx.compute_dtype() != np.float64 else np.float64)
    last = ctx.attr("data_format") == "NHWC"
    planes = np.moveaxis(x, -1, 1) if last else x
    out_dims = ctx.result_type().dims
    h, w = _spatial(ctx.attr("data_format"))
    out_h, out_w = out_dims[h], out_dims[w]
    if DYNAMIC in (out_h, out_w):
        out_h, out_w = _run_size(ctx, planes.shape[2], planes.shape[3])
    return planes, last, (out_h, out_w), _run_scales(ctx)


def _run_size(ctx: KernelContext, in_h: int, in_w: int) -> tuple[int, int]:
    """The output size at run time, by Paddle's priority."""
    if ctx.optional(2) is not None:
        sizes = [int(np.ravel(t)[0]) for t in ctx.tensors(2)]
        return sizes[0], sizes[1]
    scale_h, scale_w = _run_scales(ctx)
    out_h, out_w = ctx.attr("out_h"), ctx.attr("out_w")
    if scale_h > 0 and scale_w > 0:
        out_h, out_w = _scaled(in_h, scale_h), _scaled(in_w, scale_w)
    if ctx.optional(1) is not None:
        sizes = [int(v) for v in np.ravel(ctx.tensor(1))]
        out_h, out_w = sizes[0], sizes[1]
    return out_h, out_w


def nearest_kernel(ctx: KernelContext) -> np.ndarray:
    planes, last, (out_h, out_w), (scale_h, scale_w) = _planes(ctx)
    corners = ctx.attr("align_corners")
    in_h, in_w = planes.shape[2:]
    rows = _nearest_indices(in_h, out_h, _ratio(in_h, out_h, corners, scale_h), corners)
    cols = _nearest_indices(in_w, out_w, _ratio(in_w, out_w, corners, scale_w), corners)
    out = planes[:, :, rows[:, None], cols[None, :]]
    return np.moveaxis(out, 1, -1) if last else out


def bilinear_kernel(ctx: KernelContext) -> np.ndarray:
    planes, last, (out_h, out_w), (scale_h, scale_w) = _planes(ctx)
    corners = ctx.attr("align_corners")
    half_pixel = ctx.attr("align_mode") == 0 and not corners
    in_h, in_w = planes.shape[2:]
    yn, ys, dn = _linear_indices(in_h, out_h, _ratio(in_h, out_h, corners, scale_h), half_pixel)
    xw, xe, dw = _linear_indices(in_w, out_w, _ratio(in_w, out_w, corners, scale_w), half_pixel)
    ds, de = np.float32(1) - dn, np.float32(1) - dw
    dn, ds, dw, de = dn[:, None], ds[:, None], dw[None, :], de[None, :]
    yn, ys, xw, xe = yn[:, None], ys[:, None], xw[None, :], xe[None, :]
    out = (
        planes[:, :, yn, xw] * ds * de
        + planes[:, :, ys, xw] * dn * de
        + planes[:, :, yn, xe] * ds * dw
        + planes[:, :, ys, xe] * dn * dw
    )
    return np.moveaxis(out, 1, -1) if last else out


# -- lowerings -----------------------------------------------------------------------------


def _accepts(op: Operation) -> bool:
    """Float tensors of static shapes, no scale_tensor (a ratio known only at run time)."""
    x, y = op.operand_value(0), op.result(0)
    if x is None or not isinstance(x.type, DenseTensorType) or not x.type.data_type.is_float:
        return False
    if op.num_operands > 3 and op.operand_value(3) is not None:
        return False
    if not isinstance(y.type, DenseTensorType) or x.type.rank != 4:
        return False
    return DYNAMIC not in (*x.type.dims, *y.type.dims)


def _lower_axis(
    ctx: LowerContext, k: Expr, in_size: int, ratio: float, mode: str
) -> tuple[Expr, Expr, Expr]:
    """Source indices and weight of output index `k` as IR, mode 'nearest',
    'nearest_corners', 'half_pixel' or 'linear' (the bilinear modes)."""
    idx = ctx.index_dtype

    def to_index(value: Expr) -> Expr:
        return convert(value, idx)

    if mode == "half_pixel":
        src = Sub(
            Mul(FloatImm(ratio, F64), Add(convert(k, F64), FloatImm(0.5, F64))),
            FloatImm(0.5, F64),
        )
        low = Max(to_index(src), IntImm(0, idx))
        idx_src = Max(convert(src, F32), FloatImm(0.0, F32))
        weight = Sub(idx_src, convert(low, F32))
    else:
        t = Mul(FloatImm(ratio, F32), convert(k, F32))
        if mode == "nearest_corners":
            nearest = to_index(Add(convert(t, F64), FloatImm(0.5, F64)))
            return nearest, nearest, FloatImm(0.0, F32)
        low = Max(to_index(t), IntImm(0, idx))
        weight = Sub(t, convert(low, F32))
    high = Min(Add(low, IntImm(1, idx)), IntImm(in_size - 1, idx))
    return low, high, weight


def _lowering(bilinear: bool) -> Callable[[LowerContext], Compute]:
    def lower(ctx: LowerContext) -> Compute:
        x = ctx.input(0)
        out_dtype, out_shape = ctx.out_dtype(), ctx.out_shape()
        h, w = _spatial(ctx.attr("data_format"))
        corners = ctx.attr("align_corners")
        scale_h, scale_w = _run_scales(ctx)
        ratio_h = _ratio(x.shape[h], out_shape[h], corners, scale_h)
        ratio_w = _ratio(x.shape[w], out_shape[w], corners, scale_w)
        if bilinear:
            mode = "half_pixel" if ctx.attr("align_mode") == 0 and not corners else "linear"
        else:
            mode = "nearest_corners" if corners else "nearest"
        acc = compute_type(out_dtype)

        def fcompute(indices: Indices) -> Expr:
            yn, ys, dn = _lower_axis(ctx, indices[h], x.shape[h], ratio_h, mode)
            xw, xe, dw = _lower_axis(ctx, indices[w], x.shape[w], ratio_w, mode)

            def at(row: Expr, col: Expr) -> Expr:
                where = list(indices)
                where[h], where[w] = row, col
                return convert(x(where), acc)

            if not bilinear:
                return convert(at(yn, xw), out_dtype)
            one = const(1, F32)
            ds, de = Sub(one, dn), Sub(one, dw)
            if acc is not F32:
                dn, ds, dw, de = (convert(v, acc) for v in (dn, ds, dw, de))
            total = Add(
                Add(
                    Add(Mul(Mul(at(yn, xw), ds), de), Mul(Mul(at(ys, xw), dn), de)),
                    Mul(Mul(at(yn, xe), ds), dw),
                ),
                Mul(Mul(at(ys, xe), dn), dw),
            )
            return convert(total, out_dtype)

        return Compute(out_dtype, out_shape, fcompute)

    return lower


# -- entries -------------------------------------------------------------------------------


def _interp(name: str, method: str, kernel, bilinear: bool) -> OpDef:
    return OpDef(
        f"pd_op.{name}",
        operands=(
            operand("x"),
            operand("out_size", optional=True),
            operand("size_tensor", optional=True, variadic=True),
            operand("scale_tensor", optional=True),
        ),
        attributes=(
            attr("data_format", StrAttribute, "NCHW"),
            attr("out_d", Int32Attribute, 0),
            attr("out_h", Int32Attribute, 0),
            attr("out_w", Int32Attribute, 0),
            attr("scale", ArrayOf(DoubleAttribute), []),
            attr("interp_method", StrAttribute, method),
            attr("align_corners", BoolAttribute, True),
            attr("align_mode", Int32Attribute, 1),
        ),
        results=("output",),
        pattern=OpPatternKind.INJECTIVE,
        infer_meta=_infer_interp,
        kernel=kernel,
        lowering=OpLowering(_lowering(bilinear), _accepts),
        symbolic_meta=sym.interp_shape,
    )


OPS = [
    _interp("bilinear_interp", "bilinear", bilinear_kernel, True),
    _interp("nearest_interp", "nearest", nearest_kernel, False),
]
