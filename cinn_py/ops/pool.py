"""Pooling: pd_op.pool2d (max / avg) and pd_op.max_pool2d_with_index.

Paddle 3.3.1's rules (phi `PoolInferMeta`, `funcs/pooling.cc`), which the declaration,
the reference kernel and the lowering share through `pool_windows`:

* `kernel_size` is a mutable IntArray operand of pool2d (a `full_int_array`), an
  attribute of max_pool2d_with_index; `paddings` holds 2 values (each used on both
  sides) or 4 (top, bottom, left, right); `padding_algorithm` "SAME" pads
  `max((ceil(in / s) - 1) s + k - in, 0)` split low-first, "VALID" pads nothing;
  `global_pooling` takes the whole plane as the window and no padding; `adaptive` takes
  `kernel_size` as the output size, bin i covering [floor(i H / OH), ceil((i+1) H / OH)).
* The output size is `(in - k + pad_before + pad_after (+ s - 1 with ceil_mode)) / s + 1`
  with C's truncating division; one that is not positive is a ShapeError.
* Window i reads [i s - pad_before, + k) clipped to the input; max starts at -FLT_MAX
  and folds `y = y > x ? y : x` in row-major tap order; avg divides the sum by the
  clipped window's size when `exclusive` (or adaptive), else by kh * kw.
  max_pool2d_with_index keeps the first strictly larger value and its position
  h * W + w in the plane (int32); NaN never wins there.

Compiled path: a global pool, or an adaptive pool to 1 x 1, is a reduction over each
plane and decomposes (so it fuses as one, e.g. into a squeeze-excite block): avg into
pd_op.mean, max into two max reductions that reproduce Paddle's order-dependent fold
(`_paddle_plane_max`: NaN survives only as the plane's last element). A
max_pool2d_with_index whose positions nothing reads becomes a max pool2d (or a max
reduction of its whole planes) of its input with NaN and -inf raised to -FLT_MAX, which
its kernel never lets win. Other windows lower to an "unrolled window": an injective
Compute whose element is the max / sum of its kh * kw taps written out (each tap a load
under a Select on the padding predicate for avg, so an out-of-range tap loads nothing;
for max, moved onto a valid tap of its window, which Paddle's fold ignores, NaN
included: see `_clamped_tap`), for windows of up to `MAX_UNROLLED_TAPS` taps; larger
windows, and max_pool2d_with_index with its positions read, run the reference kernel as
a library op.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from cinn_py.errors import ShapeError, ShapeVerifyError
from cinn_py.hlir.op_lowering.compute import Compute, Indices
from cinn_py.hlir.op_lowering.context import LowerContext, OpLowering
from cinn_py.hlir.op_lowering.scalar import compute_type, const, convert
from cinn_py.ir.expr import GE, GT, LT, Add, And, Div, Expr, IntImm, Max, Min, Mul, Select, Sub
from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import BoolAttribute, Int32Attribute, Int64Attribute, StrAttribute
from cinn_py.pir.constant import constant_of
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import ArrayOf, InferContext, OpDef, attr, attr_value, operand
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.decompose import Emitter, computed_input, dtype_of, element_count
from cinn_py.pir.traits import OpPatternKind
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type
from cinn_py.pir.value import Value
from cinn_py.reference_ops.context import KernelContext

FLT_MAX = float(np.finfo(np.float32).max)
"""Paddle's max pooling starts from -FLT_MAX (also for float64)."""

MAX_UNROLLED_TAPS = 169
"""The largest window (kh * kw taps) the unrolled-window lowering writes out: 13 x 13,
the largest window common models use (YOLO's SPP pools 5, 9 and 13 at stride 1). Each
output folds its taps in order, as Paddle's kernel does (a max's NaN handling depends
on the order); a longer chain of nested IR nodes reaches Python's recursion limit in
the IR visitors (16 x 16 does)."""

# -- geometry --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """One spatial dim of a pooling: input `size`, output `out`, and how output index i
    reads its taps: `taps` positions from `start(i)`; for a fixed window `start(i) =
    i * stride - pad`, valid where 0 <= position < size; adaptive bins end at
    ceil((i+1) size / out)."""

    size: int
    out: int
    taps: int
    stride: int
    pad: int
    adaptive: bool

    def starts(self) -> np.ndarray:
        i = np.arange(self.out)
        if self.adaptive:
            return (i * self.size) // self.out
        return i * self.stride - self.pad

    def ends(self) -> np.ndarray:
        """Where each window stops reading (exclusive), clipped to the input."""
        i = np.arange(self.out)
        if self.adaptive:
            return -((-(i + 1) * self.size) // self.out)
        return np.minimum(self.starts() + self.taps, self.size)

    def counts(self) -> np.ndarray:
        """Paddle's clipped window size (min(start + k, size) - max(start, 0))."""
        return self.ends() - np.maximum(self.starts(), 0)


def _truncating_div(a: int, b: int) -> int:
    """C's integer division (toward zero), as Paddle's output-size formula uses it."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def pool_windows(
    op_name: str,
    where: str,
    spatial: Sequence[int],
    ksize: Sequence[int | None],
    strides: Sequence[int],
    paddings: Sequence[int],
    *,
    algorithm: str = "EXPLICIT",
    ceil_mode: bool = False,
    global_pooling: bool = False,
    adaptive: bool = False,
) -> list[Window | None]:
    """One `Window` per spatial dim, as Paddle's infer-meta and kernel work it out; None
    for a dim whose size is not known yet (-1, or a kernel size computed at run time).
    A ShapeError for a window that does not fit."""

    def error(why: str) -> ShapeError:
        return ShapeVerifyError(op_name, why, where=where)

    rank = len(spatial)
    if len(ksize) != rank:
        raise error(f"kernel_size {list(ksize)} must hold {rank} values")
    if len(strides) != rank:
        raise error(f"strides {list(strides)} must hold {rank} values")
    if len(paddings) == rank:
        pads = [p for p in paddings for _ in (0, 1)]
    elif len(paddings) == 2 * rank:
        pads = list(paddings)
    else:
        raise error(f"paddings {list(paddings)} must hold {rank} or {2 * rank} values")
    if global_pooling:
        ksize = list(spatial)
    windows: list[Window | None] = []
    for d in range(rank):
        size, k, s = spatial[d], ksize[d], strides[d]
        if adaptive and not global_pooling:
            if k is None or k <= 0:
                if k is not None:
                    raise error(f"adaptive output size {list(ksize)} must be positive")
                windows.append(None)
                continue
            if size == DYNAMIC:
                windows.append(Window(size, k, 0, 1, 0, True))
                continue
            bins = Window(size, k, 0, 1, 0, True)
            taps = int((bins.ends() - bins.starts()).max()) if k else 0
            windows.append(Window(size, k, taps, 1, 0, True))
            continue
        if s <= 0:
            raise error(f"strides {list(strides)} must be positive")
        if k is None or size == DYNAMIC:
            windows.append(None)
            continue
        if k <= 0:
            raise error(f"kernel_size {list(ksize)} must be positive")
        before, after = pads[2 * d], pads[2 * d + 1]
        if global_pooling or algorithm == "VALID":
            before = after = 0
        elif algorithm == "SAME":
            out = (size + s - 1) // s
            total = max((out - 1) * s + k - size, 0)
            before, after = total // 2, total - total // 2
        span = size - k + before + after + (s - 1 if ceil_mode else 0)
        out = _truncating_div(span, s) + 1
        if out <= 0:
            raise error(
                f"the window {k} (stride {s}) is larger than the padded input {size} "
                f"(+{before}+{after}) along spatial dim {d}: the output size {out} is not "
                f"positive"
            )
        windows.append(Window(size, out, k, s, before, False))
    return windows


def _spatial_dims(rank: int, channels_last: bool) -> list[int]:
    return list(range(1, rank - 1)) if channels_last else list(range(2, rank))


def _channels_last(data_format: str) -> bool:
    return data_format in ("NHWC", "NDHWC", "NLC")


# -- declarations -------------------------------------------------------------------------


def _check_input(ctx: InferContext, x: DenseTensorType) -> None:
    if x.rank != 4:
        raise ShapeVerifyError(
            ctx.op_def.name, f"x must be 4-D, got dims {im.fmt(x.dims)}", where=ctx.where
        )


def op_windows(
    op_def: OpDef, attributes: dict, where: str, shape: Sequence[int], ksize: Sequence[int | None]
) -> tuple[list[Window | None], bool]:
    """The windows of a pool op with `attributes` over an input of `shape` (4-D), and
    whether its channels are last: the one reading of the attributes that the
    declaration, the kernel and the lowering share."""

    def get(name: str):
        return attr_value(op_def, attributes, name)

    declared = op_def.attr_spec
    last = declared("data_format") is not None and _channels_last(get("data_format"))
    windows = pool_windows(
        op_def.name,
        where,
        [shape[d] for d in _spatial_dims(len(shape), last)],
        ksize,
        get("strides"),
        get("paddings"),
        algorithm=get("padding_algorithm") if declared("padding_algorithm") else "EXPLICIT",
        ceil_mode=get("ceil_mode"),
        global_pooling=get("global_pooling"),
        adaptive=get("adaptive"),
    )
    return windows, last


def _out_dims(x: DenseTensorType, windows: list[Window | None], last: bool) -> list[int]:
    dims = list(x.dims)
    for d, window in zip(_spatial_dims(x.rank, last), windows, strict=True):
        dims[d] = DYNAMIC if window is None else window.out
    return dims


def _infer_pool2d(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    _check_input(ctx, x)
    ksize = im.int_array(ctx, "kernel_size")
    windows, last = op_windows(ctx.op_def, ctx.attributes, ctx.where, x.dims, ksize)
    return [x.with_dims(_out_dims(x, windows, last))]


def _infer_max_pool_with_index(ctx: InferContext) -> list[Type]:
    x = ctx.tensor("x")
    _check_input(ctx, x)
    ksize = list(ctx.attr("kernel_size"))
    windows, _ = op_windows(ctx.op_def, ctx.attributes, ctx.where, x.dims, ksize)
    out = x.with_dims(_out_dims(x, windows, False))
    return [out, out.with_dtype(DataType.INT32)]


# -- reference kernels ----------------------------------------------------------------------


def _kernel_windows(ctx: KernelContext | LowerContext, shape: Sequence[int], ksize: list[int]):
    return op_windows(ctx.op.op_def, ctx.op.attributes, ctx.op.where(), shape, ksize)


def _taps(window: Window) -> tuple[np.ndarray, np.ndarray]:
    """[out, taps] positions (clipped into the input) and whether each is read."""
    position = window.starts()[:, None] + np.arange(window.taps)[None, :]
    valid = (position >= 0) & (position < window.ends()[:, None])
    return np.clip(position, 0, max(window.size - 1, 0)), valid


def pool_planes(
    planes: Any, windows: Sequence[Window], kind: str, exclusive: bool, xp: ModuleType = np
) -> tuple[Any, Any | None]:
    """Pools `planes` ([..., H, W]); for "max_index" also the positions (int32). `xp` is
    the array module (CuPy for the `cuda` target's device call, `cuda_library`)."""
    (ph, vh), (pw, vw) = (tuple(xp.asarray(a) for a in _taps(w)) for w in windows)
    lead = planes.shape[:-2]
    shape = (*lead, windows[0].out, windows[1].out)
    width = windows[1].size
    if kind == "avg":
        acc = xp.zeros(shape, dtype=planes.dtype)
    else:
        acc = xp.full(shape, -FLT_MAX, dtype=planes.dtype)
    index = xp.full(shape, -1, dtype=np.int32) if kind == "max_index" else None
    for kh in range(windows[0].taps):
        for kw in range(windows[1].taps):
            rows, cols = ph[:, kh][:, None], pw[:, kw][None, :]
            value = planes[..., rows, cols]
            valid = vh[:, kh][:, None] & vw[:, kw][None, :]
            if kind == "avg":
                acc = acc + xp.where(valid, value, 0)
            elif kind == "max":
                acc = xp.where(valid & ~(acc > value), value, acc)
            else:
                better = valid & (acc < value)
                acc = xp.where(better, value, acc)
                index = xp.where(better, (rows * width + cols).astype(np.int32), index)
    if kind == "avg":
        if exclusive or windows[0].adaptive:
            counts = windows[0].counts()[:, None] * windows[1].counts()[None, :]
        else:
            counts = np.asarray(windows[0].taps * windows[1].taps)
        with np.errstate(divide="ignore", invalid="ignore"):
            acc = acc / xp.asarray(counts.astype(acc.dtype))
    return acc, index


def _to_planes(x: np.ndarray, last: bool) -> np.ndarray:
    return np.moveaxis(x, -1, 1) if last else x


def _from_planes(y: np.ndarray, last: bool) -> np.ndarray:
    return np.moveaxis(y, 1, -1) if last else y


def pool2d_kernel(ctx: KernelContext) -> np.ndarray:
    x = ctx.tensor_in(0, ctx.compute_dtype())
    windows, last = _kernel_windows(ctx, x.shape, ctx.int_list(1, "kernel_size"))
    kind = ctx.attr("pooling_type")
    if kind not in ("max", "avg"):
        raise ctx.error(f"pooling_type must be 'max' or 'avg', got '{kind}'")
    with np.errstate(invalid="ignore"):
        out, _ = pool_planes(_to_planes(x, last), windows, kind, ctx.attr("exclusive"))
    return _from_planes(out, last)


def max_pool2d_with_index_kernel(ctx: KernelContext) -> tuple[np.ndarray, np.ndarray]:
    x = ctx.tensor_in(0, ctx.compute_dtype())
    windows, _ = _kernel_windows(ctx, x.shape, list(ctx.attr("kernel_size")))
    with np.errstate(invalid="ignore"):
        out, index = pool_planes(x, windows, "max_index", False)
    assert index is not None
    return out, index


# -- lowering: the unrolled window ------------------------------------------------------------


def _unrolled_taps(op: Operation) -> int | None:
    """How many taps the op's window has, from its declared input type and folded
    kernel size; None where they are not known or the window does not fit."""
    x = op.operand_value(0)
    if not isinstance(x.type, DenseTensorType) or DYNAMIC in x.type.dims or x.type.rank != 4:
        return None
    if "kernel_size" not in op.attributes:
        return None
    ksize = [int(k) for k in op.attributes["kernel_size"].to_python()]
    try:
        windows, _ = op_windows(op.op_def, op.attributes, op.where(), x.type.dims, ksize)
    except ShapeError:
        return None
    if any(w is None for w in windows):
        return None
    return windows[0].taps * windows[1].taps


def _accepts_pool(op: Operation) -> bool:
    """Float tensors, a folded kernel size, static shapes, at most MAX_UNROLLED_TAPS taps."""
    x = op.operand_value(0)
    if x is None or not isinstance(x.type, DenseTensorType) or not x.type.data_type.is_float:
        return False
    if attr_value(op.op_def, op.attributes, "pooling_type") not in ("max", "avg"):
        return False
    taps = _unrolled_taps(op)
    return taps is not None and 0 < taps <= MAX_UNROLLED_TAPS


def _adaptive_bin(window: Window, out_index: Expr, index_dtype: DataType) -> tuple[Expr, Expr]:
    """[start, end) of adaptive bin `out_index`: floor(i H / OH), ceil((i + 1) H / OH)."""

    def c(value: int) -> Expr:
        return IntImm(value, index_dtype)

    scaled = Mul(out_index, c(window.size))
    start = Div(scaled, c(window.out))
    end = Div(Add(scaled, c(window.size + window.out - 1)), c(window.out))
    return start, end


def _tap(
    window: Window, out_index: Expr, k: int, index_dtype: DataType
) -> tuple[Expr, Expr | None]:
    """(position, validity or None when always valid) of tap k of window `out_index`."""

    def c(value: int) -> Expr:
        return IntImm(value, index_dtype)

    if window.adaptive:
        start, end = _adaptive_bin(window, out_index, index_dtype)
        position = Add(start, c(k))
        if window.taps == 1:
            return position, None
        return position, LT(position, end)
    position = Add(Mul(out_index, c(window.stride)), c(k - window.pad))
    checks: list[Expr] = []
    if k < window.pad:
        checks.append(GE(position, c(0)))
    if _may_pass_the_end(window, k):
        checks.append(LT(position, c(window.size)))
    if not checks:
        return position, None
    return position, checks[0] if len(checks) == 1 else And(checks[0], checks[1])


def _may_pass_the_end(window: Window, k: int) -> bool:
    """Whether tap k of some fixed window lies past the input's end."""
    return (window.out - 1) * window.stride - window.pad + k >= window.size


def _clamped_tap(window: Window, out_index: Expr, k: int, index_dtype: DataType) -> Expr:
    """Tap k of window `out_index` moved into the window's valid range: a tap in the
    padding before it reads the window's first valid position, one past it the last.
    Max pooling reads these instead of skipping padding taps: Paddle's fold
    `y = y > x ? y : x` gives the same result when a value is folded again right after
    itself, or a whole row of taps again after that row, so the repeated taps change
    nothing, NaN included, and no tap needs a select around the running max."""

    def c(value: int) -> Expr:
        return IntImm(value, index_dtype)

    position, valid = _tap(window, out_index, k, index_dtype)
    if valid is None:
        return position
    if window.adaptive:
        _, end = _adaptive_bin(window, out_index, index_dtype)
        return Min(position, Sub(end, c(1)))
    if k < window.pad:
        position = Max(position, c(0))
    if _may_pass_the_end(window, k):
        position = Min(position, c(window.size - 1))
    return position


def _count(window: Window, out_index: Expr, index_dtype: DataType) -> Expr:
    """The clipped window size of `out_index`: min(start + k, size) - max(start, 0)."""

    def c(value: int) -> Expr:
        return IntImm(value, index_dtype)

    if window.adaptive:
        start, end = _adaptive_bin(window, out_index, index_dtype)
        return Sub(end, start)
    start = Sub(Mul(out_index, c(window.stride)), c(window.pad))
    return Sub(Min(Add(start, c(window.taps)), c(window.size)), Max(start, c(0)))


def _lower_pool2d(ctx: LowerContext) -> Compute:
    x = ctx.input(0)
    windows, last = _kernel_windows(ctx, x.shape, ctx.int_list(1, "kernel_size"))
    kind, exclusive = ctx.attr("pooling_type"), ctx.attr("exclusive")
    out_dtype = ctx.out_dtype()
    acc_type = compute_type(out_dtype)
    h_dim, w_dim = _spatial_dims(4, last)
    counts_vary = exclusive or windows[0].adaptive

    def max_compute(indices: Indices) -> Expr:
        """Paddle's fold from -FLT_MAX over the taps in row-major order, each padding
        tap reading a valid one of its window (`_clamped_tap`); a window with no valid
        tap at all is -FLT_MAX, as Paddle's."""
        oh, ow = indices[h_dim], indices[w_dim]
        acc: Expr = const(-FLT_MAX, acc_type)
        for kh in range(windows[0].taps):
            row = _clamped_tap(windows[0], oh, kh, ctx.index_dtype)
            for kw in range(windows[1].taps):
                at = list(indices)
                at[h_dim] = row
                at[w_dim] = _clamped_tap(windows[1], ow, kw, ctx.index_dtype)
                acc = Max(acc, convert(x(at), acc_type))
        if any(int(n) <= 0 for w in windows for n in w.counts()):
            zero = IntImm(0, ctx.index_dtype)
            rows = GT(_count(windows[0], oh, ctx.index_dtype), zero)
            cols = GT(_count(windows[1], ow, ctx.index_dtype), zero)
            acc = Select(And(rows, cols), acc, const(-FLT_MAX, acc_type))
        return convert(acc, out_dtype)

    def fcompute(indices: Indices) -> Expr:
        if kind == "max":
            return max_compute(indices)
        oh, ow = indices[h_dim], indices[w_dim]
        acc: Expr | None = None
        for kh in range(windows[0].taps):
            row, row_ok = _tap(windows[0], oh, kh, ctx.index_dtype)
            for kw in range(windows[1].taps):
                col, col_ok = _tap(windows[1], ow, kw, ctx.index_dtype)
                at = list(indices)
                at[h_dim], at[w_dim] = row, col
                value = convert(x(at), acc_type)
                checks = [c for c in (row_ok, col_ok) if c is not None]
                if checks:
                    ok = checks[0] if len(checks) == 1 else And(*checks)
                    value = Select(ok, value, const(0, acc_type))
                acc = value if acc is None else Add(acc, value)
        assert acc is not None
        if kind == "avg":
            if counts_vary:
                count = Mul(
                    _count(windows[0], oh, ctx.index_dtype), _count(windows[1], ow, ctx.index_dtype)
                )
                acc = Div(acc, convert(count, acc_type))
            else:
                acc = Div(acc, const(windows[0].taps * windows[1].taps, acc_type))
        return convert(acc, out_dtype)

    return Compute(out_dtype, ctx.out_shape(), fcompute)


# -- decompositions ------------------------------------------------------------------------


def _whole_plane(emit: Emitter, op: Operation, ksize: list[int] | None) -> bool:
    """Whether the op pools each whole plane to one value: global, or adaptive to 1 x 1."""
    if emit.attr("global_pooling"):
        return True
    return bool(emit.attr("adaptive")) and ksize is not None and list(ksize) == [1, 1]


def _plane_reduction(emit: Emitter, x: Value, kind: str, last: bool) -> Value | None:
    """mean / max of each plane of `x`, keeping the dims."""
    if kind not in ("max", "avg") or not isinstance(x.type, DenseTensorType):
        return None
    if not x.type.data_type.is_float or x.type.rank != 4:
        return None
    axes = _spatial_dims(4, last)
    if any(x.type.dims[d] == 0 for d in axes):
        return None
    if kind == "max":
        return emit.op("pd_op.max", x, None, axis=axes, keepdim=True)
    return keepdim_mean(emit, x, axes)


def keepdim_mean(emit: Emitter, x: Value, axes: list[int]) -> Value:
    """The keepdim mean over `axes`: sum / count where the count is static (pd_op.mean's
    own rule, which does not see ops a rule emits), else a pd_op.mean, which its lowering
    divides once the shapes are specialized."""
    count = element_count([x.type.dims[a] for a in axes])
    if count is None:
        return emit.op("pd_op.mean", x, None, axis=axes, keepdim=True)
    return emit.mean(x, axes, count)


def _paddle_plane_max(emit: Emitter, op: Operation, last: bool) -> Value | None:
    """Paddle's max of each whole plane as two max reductions. Its fold `y = y > x ? y
    : x` from -FLT_MAX depends on the taps' order: a NaN resets it (y becomes NaN, and
    the next tap replaces y whatever it is), so the result is NaN when the plane's last
    element is NaN, else the max of the elements after the last NaN (-inf included:
    the reset drops the -FLT_MAX start), or with no NaN the max of all, at least
    -FLT_MAX. Here: `after` = 1 + the position of the last NaN (a max reduction of
    isnan * (1 + position)), then the max of the elements past it (the rest replaced by
    -inf), raised to -FLT_MAX where there is no NaN, and the plane's last element where
    it is the NaN. Both
    reductions are over the same rows, so fusion makes them one kernel (the second
    reads the first back). Needs static plane dims (the positions are a constant)."""
    operand = computed_input(emit, op)
    x = op.operand_value(0)
    if operand is None or x.type.rank != 4:
        return None
    xc, dtype = operand
    axes = _spatial_dims(4, last)
    plane = [x.type.dims[d] for d in axes]
    if DYNAMIC in plane or 0 in plane:
        return None
    count = plane[0] * plane[1]
    shape = [1, *plane, 1] if last else [1, 1, *plane]
    positions = emit.op(
        "pd_op.reshape",
        emit.op(
            "pd_op.arange",
            None,
            None,
            None,
            start=1.0,
            end=float(count + 1),
            step=1.0,
            dtype=DataType.INT32,
        ),
        None,
        shape=shape,
    )
    nan_at = emit.op(
        "pd_op.multiply", emit.cast(emit.op("pd_op.isnan", xc), DataType.INT32), positions
    )
    after = emit.op("pd_op.max", nan_at, None, axis=axes, keepdim=True)
    below = emit.op("pd_op.full_like", xc, None, value=-math.inf, dtype=dtype)
    kept = emit.op("pd_op.where", emit.op("pd_op.greater_than", positions, after), xc, below)
    best = emit.op("pd_op.max", kept, None, axis=axes, keepdim=True)
    # -FLT_MAX floors the fold only where no NaN reset it: after a NaN the next tap
    # replaces y whatever it is, -inf included (found by the fuzzer)
    floored = emit.op("pd_op.maximum", best, emit.const(-FLT_MAX, dtype))
    no_nan = emit.op("pd_op.equal", after, emit.const(0, DataType.INT32))
    best = emit.op("pd_op.where", no_nan, floored, best)
    last_value = emit.op(
        "pd_op.slice",
        xc,
        None,
        None,
        axes=axes,
        starts=[plane[0] - 1, plane[1] - 1],
        ends=list(plane),
        infer_flags=[1, 1],
        decrease_axis=[],
    )
    ends_in_nan = emit.op("pd_op.equal", after, emit.const(count, DataType.INT32))
    out = emit.op("pd_op.where", ends_in_nan, last_value, best)
    return emit.cast(out, dtype_of(op.result(0)))


def _decompose_pool2d(emit: Emitter, op: Operation) -> list[Value] | None:
    """A global pool or an adaptive pool to 1 x 1: a mean over H and W for avg, Paddle's
    order-dependent max fold as reductions for max (`_paddle_plane_max`)."""
    ksize = op.attributes.get("kernel_size")
    values = ksize.to_python() if ksize is not None else None
    if values is None:
        kernel = op.operand_value(1)
        values = constant_of(kernel) if kernel is not None else None
    values = None if values is None else [int(v) for v in np.asarray(values).reshape(-1)]
    if not _whole_plane(emit, op, values):
        return None
    last = _channels_last(emit.attr("data_format"))
    if emit.attr("pooling_type") == "max":
        out = _paddle_plane_max(emit, op, last)
        return None if out is None else [out]
    out = _plane_reduction(emit, op.operand_value(0), "avg", last)
    return None if out is None else [out]


def _decompose_max_pool_with_index(emit: Emitter, op: Operation) -> list[Value | None] | None:
    """Positions nobody reads: the max pool2d of the same window (decomposed further,
    when whole-plane, by the pool2d rule's logic here)."""
    if not emit.unused(op.result(1)):
        return None
    x = op.operand_value(0)
    if not isinstance(x.type, DenseTensorType) or not x.type.data_type.is_float:
        return None
    # Its fold keeps the first strictly larger value from -FLT_MAX: NaN and -inf never
    # win, where pool2d's `y > x ? y : x` (and a max reduction) let NaN through. On
    # x clamped to [-FLT_MAX, ...] (NaN to -FLT_MAX) the two folds agree.
    floor = emit.op("pd_op.full_like", x, None, value=-FLT_MAX, dtype=dtype_of(x))
    x = emit.op("pd_op.where", emit.op("pd_op.greater_than", x, floor), x, floor)
    ksize = list(emit.attr("kernel_size"))
    if _whole_plane(emit, op, ksize):
        out = _plane_reduction(emit, x, "max", False)
    else:
        out = emit.op(
            "pd_op.pool2d",
            x,
            None,
            kernel_size=ksize,
            strides=list(emit.attr("strides")),
            paddings=list(emit.attr("paddings")),
            ceil_mode=emit.attr("ceil_mode"),
            exclusive=True,
            data_format="NCHW",
            pooling_type="max",
            global_pooling=emit.attr("global_pooling"),
            adaptive=emit.attr("adaptive"),
            padding_algorithm="EXPLICIT",
        )
    return None if out is None else [out, None]


# -- entries -------------------------------------------------------------------------------

_INTS = ArrayOf(Int32Attribute)
_INT64S = ArrayOf(Int64Attribute)
"""pool2d's strides / paddings are int64 in Paddle; max_pool2d_with_index's int32."""

OPS = [
    OpDef(
        "pd_op.pool2d",
        operands=(operand("x"), operand("kernel_size", mutable_attr="kernel_size")),
        attributes=(
            attr("strides", _INT64S, [1, 1]),
            attr("paddings", _INT64S, [0, 0]),
            attr("ceil_mode", BoolAttribute, False),
            attr("exclusive", BoolAttribute, True),
            attr("data_format", StrAttribute, "NCHW"),
            attr("pooling_type", StrAttribute, "max"),
            attr("global_pooling", BoolAttribute, False),
            attr("adaptive", BoolAttribute, False),
            attr("padding_algorithm", StrAttribute, "EXPLICIT"),
        ),
        pattern=OpPatternKind.INJECTIVE,
        infer_meta=_infer_pool2d,
        kernel=pool2d_kernel,
        lowering=OpLowering(_lower_pool2d, _accepts_pool),
        decompose=_decompose_pool2d,
        symbolic_meta=sym.pool_shape,
    ),
    OpDef(
        "pd_op.max_pool2d_with_index",
        operands=(operand("x"),),
        attributes=(
            attr("kernel_size", _INTS),
            attr("strides", _INTS, [1, 1]),
            attr("paddings", _INTS, [0, 0]),
            attr("global_pooling", BoolAttribute, False),
            attr("adaptive", BoolAttribute, False),
            attr("ceil_mode", BoolAttribute, False),
        ),
        results=("out", "mask"),
        pattern=OpPatternKind.NON_FUSIBLE,
        infer_meta=_infer_max_pool_with_index,
        kernel=max_pool2d_with_index_kernel,
        decompose=_decompose_max_pool_with_index,
        symbolic_meta=sym.pool_shape,
    ),
]
