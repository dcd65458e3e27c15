"""CUDA C from scheduled loop IR: one `extern "C" __global__` kernel per LoweredFunc.

`generate_cuda(funcs)` renders every function into one self-contained source (the
`<cuda_fp16.h>` / `<cuda_bf16.h>` includes only where used, then the text of
`runtime_include/cinn_py_runtime.h`) that NVRTC compiles with only the CUDA include
directory on its path and cuda-emu compiles as it is, and tells the launch of each
kernel (`KernelInfo`: grid, block, shared memory, parameters).

What CUDA adds to the C renderer (`codegen_c.CRenderer`):

* loops bound to `blockIdx.*` / `threadIdx.*` are no loops: `const int v = blockIdx.x;`,
  under `if (threadIdx.x < extent)` when the loop is shorter than its launch dimension
  (the largest extent bound to that axis in the function);
* a `SyncThreads` is `__syncthreads();`, refused inside a loop bound to `threadIdx.*`
  (the schedule puts barriers after the thread-bound nest, where every thread is);
* vectorized loops whose stores are provably contiguous and aligned
  (`codegen_lanes.plan_vector_loop`) load and store whole `cinn_vec<T, L>` values,
  one 128-bit transaction per 16 bytes, computing each lane on scalars in an unrolled
  lane loop; anything unproven stays a scalar loop over the lanes. This relies on the
  runtime's promise that every buffer base is 16-byte aligned;
* float16 (`__half`) and bfloat16 (`__nv_bfloat16`) compute in float: arithmetic,
  comparisons and math on them convert to float and round the result back once.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from cinn_py.backends.codegen_c import (
    CNames,
    CRenderer,
    array_count,
    c_identifier,
    flat_index,
)
from cinn_py.backends.codegen_lanes import (
    LaneReductions,
    RealizePlan,
    VectorPlan,
    body_loads,
    contiguous_base,
    is_on_chip,
    is_uniform,
    plan_lane_reductions,
    plan_vector_loop,
    substitute,
)
from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.in_place import in_place_pairs
from cinn_py.ir.intrinsics import INTRINSICS
from cinn_py.ir.schedule.analysis import outermost_reductions, var_names
from cinn_py.ir.schedule.buffer_memory import MAX_SHARED_BYTES
from cinn_py.ir.schedule.stream_reads import streamed
from cinn_py.ir.simplify import simplify
from cinn_py.ir.visitor import nodes, structural_equal, structural_key
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16

__all__ = ["CudaRenderer", "CudaSource", "KernelInfo", "generate_cuda"]

RUNTIME_HEADER = Path(__file__).with_name("runtime_include") / "cinn_py_runtime.h"
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)
"""CUDA's grid limits along x, y, z (a grid reduction's chunks are on y)."""
AXES = tuple(s.BindInfo)
"""blockIdx.x, .y, .z, threadIdx.x, .y, .z: the launch dimensions, grid then block."""

_HALVES = {
    DataType.FLOAT16: ("__half2float", "__float2half_rn", "cuda_fp16.h"),
    DataType.BFLOAT16: ("__bfloat162float", "__float2bfloat16_rn", "cuda_bf16.h"),
}
"""For each 16-bit float: to float (exact), from float (round to nearest even), header."""


@dataclass(frozen=True)
class KernelInfo:
    """How to launch one generated kernel: its name in the source, grid and block
    dimensions (x, y, z), dynamic shared memory in bytes, and its parameters in order
    (the function's arguments)."""

    name: str
    grid: tuple[int | e.Expr, int | e.Expr, int | e.Expr]
    """Ints, or index expressions over a symbolic kernel's dim arguments (`S0`, ...):
    the driver evaluates those per feed signature (`hlir.symbolic_dims`)."""
    block: tuple[int, int, int]
    shared_mem: int
    args: tuple[s.Argument, ...]
    in_place: tuple[tuple[str, str], ...] = ()
    """The (input, output) parameters whose output may take the input's bytes
    (`ir.in_place`): declared without `__restrict__`, as they may be the same memory."""


@dataclass(frozen=True)
class CudaSource:
    """A translation unit of generated kernels and how to launch each."""

    source: str
    kernels: list[KernelInfo]
    units: tuple[CudaSource, ...] = ()
    """The same kernels split into smaller self-contained sources, to compile in
    parallel (`generate_cuda`'s `unit_size`); empty when the source is compiled whole."""


@functools.cache
def runtime_header() -> str:
    return RUNTIME_HEADER.read_text()


FAST_MATH: dict[str, tuple[str, int]] = {
    i.name: (i.fast, i.arity) for i in INTRINSICS.values() if i.fast is not None
}
"""Float32 intrinsic -> (its fast approximation, arity; `ir/intrinsics.py`), with
`fast_math` (float32 division is `__fdividef` then): CUDA's `__expf` family (MUFU: 2
ulp plus an error that grows with the argument, `__expf(x)` about |x| * 2**-22
relative), `tanh.approx.f32` (about 2**-11 relative, sm_75+) through the runtime
header. Accurate forms otherwise; cuda-emu runs the accurate ones for both
(`cinn_emu_math.h`)."""


def _nan_clamp(node: e.Select) -> str | None:
    """`cinn_max_nan` for `a <= c ? c : a` (or `<`), `cinn_min_nan` for `a >= c ? c : a`
    (or `>`), where c
    is a float32 constant other than NaN and +-0 and the select scalar; else None. The
    two agree for every a: a NaN gives NaN (the select keeps a, the helper a NaN: NaN
    payloads are not compared), a == c gives c either way, and c nonzero leaves no sign
    of zero to pick."""
    cond, bound, value = node.condition, node.true_value, node.false_value
    if node.dtype is not DataType.FLOAT32 or node.lanes != 1:
        return None
    if not isinstance(bound, e.FloatImm) or np.isnan(bound.value) or bound.value == 0:
        return None
    if not isinstance(cond, (e.LT, e.LE, e.GT, e.GE)) or not isinstance(cond.b, e.FloatImm):
        return None
    if cond.b.value != bound.value:
        return None
    if cond.a is not value and not structural_equal(cond.a, value):
        return None
    return "cinn_max_nan" if isinstance(cond, (e.LT, e.LE)) else "cinn_min_nan"


EXP2_NORMAL_FLOOR = -125.0
"""`exp2` of a float32 argument proved at least this renders as the runtime's
`cinn_exp2_normal` (MUFU.EX2 alone): exp2f's compare and two conditional multiplies only
act below -126, where 2 ** x is under float32's smallest normal (one below, for the
rounding of a product whose bound is proved)."""


def float_lower_bound(x: e.Expr) -> float | None:
    """A float every non-NaN value of float expression `x` is at least, from its
    constants and clamps alone (softmax's `max(x - max x, -64) * log2 e` is at least
    -92.4); None where nothing is known. NaN goes through every step it covers alike."""
    if isinstance(x, e.FloatImm):
        return None if np.isnan(x.value) else float(x.value)
    if isinstance(x, e.Select):
        if _nan_clamp(x) == "cinn_max_nan":
            return float(x.true_value.value)  # type: ignore[union-attr]
        a, b = float_lower_bound(x.true_value), float_lower_bound(x.false_value)
        return None if a is None or b is None else min(a, b)
    if isinstance(x, e.Max):
        known = [b for b in (float_lower_bound(x.a), float_lower_bound(x.b)) if b is not None]
        return max(known) if known else None
    if isinstance(x, e.Add):
        a, b = float_lower_bound(x.a), float_lower_bound(x.b)
        return None if a is None or b is None else a + b
    if isinstance(x, e.Mul):
        for value, scale in ((x.a, x.b), (x.b, x.a)):
            if isinstance(scale, e.FloatImm) and scale.value > 0:
                low = float_lower_bound(value)
                return None if low is None else low * scale.value
    return None


class CudaRenderer(CRenderer):
    """The body of one kernel; `launch` holds the extent of each bound axis."""

    type_names: ClassVar[dict[DataType, str]] = {
        **CRenderer.type_names,
        DataType.FLOAT16: "__half",
        DataType.BFLOAT16: "__nv_bfloat16",
    }
    reserved: ClassVar[frozenset[str]] = CRenderer.reserved | {
        "half",
        "half2",
        "nv_bfloat16",
        "nv_bfloat162",
        "blockIdx",
        "threadIdx",
        "blockDim",
        "gridDim",
        "warpSize",
        "dim3",
        "uint2",
        "uint4",
        "float2",
        "float4",
        # the runtime header's argmax / argmin combine
        "cinn_arg_max",
        "cinn_arg_min",
        "cinn_block_arg_reduce",
        "cinn_block_arg_reduce_y",
        # the runtime header's NaN-keeping float max / min
        "cinn_max_nan",
        "cinn_min_nan",
        "cinn_tanh_approx",
    }

    def __init__(
        self,
        func: s.LoweredFunc,
        names: CNames,
        launch: dict[s.BindInfo, int],
        fast_math: bool = False,
    ) -> None:
        super().__init__(func, names)
        self.launch = launch
        self._lane_stores: dict[int, str] = {}
        self._lane_loads: dict[int, str] = {}
        self._plan: VectorPlan | None = None
        self._thread_vars: set[str] = set()
        """IR names of the loop vars bound to a threadIdx axis, in scope."""
        self._lane_vars: set[str] = set()
        """Those bound to threadIdx.x: the lanes of a warp when a block is 32 wide."""
        self._y_vars: set[str] = set()
        """Those bound to threadIdx.y (`_one_lane_stores` of a combine across y)."""
        self._lane_reductions: LaneReductions | None = None
        """The vectorized loop of reductions being written out lane by lane."""
        self._streamed: frozenset[str] = frozenset()
        """The buffers the block being rendered reads once (`stream_reads`): loaded
        evict-first (`cinn_ldcs`)."""
        self.fast_math = fast_math
        """Float32 exp, log, sin, cos, tan, pow, tanh and division by CUDA's fast
        approximations (`FAST_MATH`; `cinn_py.compile(..., fast_math=True)`)."""
        self._iter_values: dict[str, e.Expr] = {}
        """The iter values of the blocks being rendered, by iter var name: what a store's
        indices read through them (`_one_lane_stores`)."""
        self._thread_branches = 0
        """How many enclosing branches depend on the thread index (a cross-thread Reduce
        there would leave threads out of its barriers)."""
        self._lane_branches = 0
        """How many of them depend on threadIdx.x: in a block 32 threads wide, a branch on
        threadIdx.y alone is taken or skipped by a whole warp."""

    # ---- 16-bit floats -----------------------------------------------------------------

    def float_text(self, node: e.Expr, bare: bool = False) -> str:
        """`node` as a float, exactly (16-bit floats convert; others are float already);
        `bare`: for a function argument, without outer parentheses."""
        if isinstance(node, e.FloatImm) and node.dtype in _HALVES:
            return self.float_literal(_rounded(node), DataType.FLOAT32)
        if node.dtype in _HALVES:
            return f"{_HALVES[node.dtype][0]}({self.expr(node)})"
        return self.expr(node) if bare else self.visit(node)

    def visit_FloatImm(self, node: e.FloatImm) -> str:
        if node.dtype not in _HALVES:
            return super().visit_FloatImm(node)
        literal = self.float_literal(_rounded(node), DataType.FLOAT32)
        return f"{_HALVES[node.dtype][1]}({literal})"

    def cast(self, dtype: DataType, value: e.Expr) -> str:
        """Conversions through float for the 16-bit floats: exact from them; to them from
        float64 in one rounding for float16 and through float32 for bfloat16 (as the
        reference executor and Paddle's CPU cast do)."""
        source = value.dtype
        if source is dtype or (dtype not in _HALVES and source not in _HALVES):
            return super().cast(dtype, value)
        if dtype in _HALVES:
            if dtype is DataType.FLOAT16 and source is DataType.FLOAT64:
                return f"__double2half({self.expr(value)})"
            text = self.float_text(value, bare=True)
            if source not in _HALVES and source is not DataType.FLOAT32:
                text = f"static_cast<float>({text})"
            return f"{_HALVES[dtype][1]}({text})"
        if dtype is DataType.FLOAT32:
            return self.float_text(value)
        if dtype is DataType.BOOL:
            return f"({self.float_text(value)} != 0.0f)"
        if dtype.is_integer:
            return self.float_to_int(dtype, self.float_text(value, bare=True))
        return f"static_cast<{self.type_name(dtype)}>({self.float_text(value, bare=True)})"

    def binary(self, node: e.BinaryOp) -> str:
        dtype = node.a.dtype
        if self.fast_math and isinstance(node, e.Div) and dtype is DataType.FLOAT32:
            return f"__fdividef({self.expr(node.a)}, {self.expr(node.b)})"
        if dtype not in _HALVES:
            return super().binary(node)
        a, b = self.float_text(node.a), self.float_text(node.b)
        text = f"{a} {self.binary_ops[type(node)]} {b}"
        return f"({text})" if isinstance(node, e.CmpOp) else f"{_HALVES[dtype][1]}({text})"

    def visit_Min(self, node: e.Min) -> str:
        dtype = node.dtype
        if dtype not in _HALVES:
            return super().visit_Min(node)
        a, b = self.float_text(node.a, bare=True), self.float_text(node.b, bare=True)
        return f"{_HALVES[dtype][1]}({self.min_max[type(node)]}({a}, {b}))"

    visit_Max = visit_Min

    def math_function(self, node: e.Call) -> str:
        """The accurate function, or with `fast_math` its float32 approximation; a
        float32 `exp2` of an argument proved normal-ranged (`EXP2_NORMAL_FLOOR`) as
        `cinn_exp2_normal`, bit for bit `exp2f` there."""
        if self.fast_math and node.dtype is DataType.FLOAT32:
            fast = FAST_MATH.get(node.name)
            if fast is not None and len(node.args) == fast[1]:
                return fast[0]
        if node.name == "exp2" and node.dtype is DataType.FLOAT32 and len(node.args) == 1:
            low = float_lower_bound(node.args[0])
            if low is not None and low >= EXP2_NORMAL_FLOOR:
                return "cinn_exp2_normal"
        return super().math_function(node)

    def combine(self, node: e.Reduce, acc: str, value: str) -> str:
        """A float32 max / min folds with the runtime's `cinn_max_nan` / `cinn_min_nan`
        (one `max.NaN.f32` on sm_80+, NumPy's NaN-keeping max); the rest as in C."""
        kind = node.reduce_type
        if node.dtype is DataType.FLOAT32 and kind in (e.ReduceType.MAX, e.ReduceType.MIN):
            helper = "cinn_max_nan" if kind is e.ReduceType.MAX else "cinn_min_nan"
            return f"{helper}({acc}, {value})"
        return super().combine(node, acc, value)

    def visit_Select(self, node: e.Select) -> str:
        """A clamp at a float32 constant, `a <= c ? c : a` (the lowering's NaN-keeping
        `maximum` with a constant: softmax's floor at -64) or `a >= c ? c : a`, as
        `cinn_max_nan(a, c)` / `cinn_min_nan(a, c)`: one `max.NaN.f32` on sm_80+ instead
        of a compare, a constant and a select, and `a` written once."""
        helper = _nan_clamp(node)
        if helper is None:
            return super().visit_Select(node)
        return f"{helper}({self.visit(node.false_value)}, {self.visit(node.true_value)})"

    def visit_Call(self, node: e.Call) -> str:
        hoisted = self.invariant_name(node)  # before the halves' casts change its key
        if hoisted is not None:
            return hoisted
        if not any(x.dtype in _HALVES for x in (node, *node.args)):
            return super().visit_Call(node)
        floats = tuple(e.Cast(DataType.FLOAT32, a) if a.dtype in _HALVES else a for a in node.args)
        dtype = DataType.FLOAT32 if node.dtype in _HALVES else node.dtype
        text = self.visit(e.Call(node.name, floats, dtype, node.call_type))
        return f"{_HALVES[node.dtype][1]}({text})" if node.dtype in _HALVES else text

    # ---- loops ---------------------------------------------------------------------------

    def visit_For(self, node: s.For) -> None:
        if node.bind_info is not None:
            self.bound_loop(node)
            return
        with self.hoisting_invariants(node):
            if node.for_type is s.ForType.VECTORIZED:
                self.vector_loop(node)
            else:
                self.serial_loop(node, unroll=node.for_type is s.ForType.UNROLLED)

    def bound_loop(self, node: s.For) -> None:
        """`const int v = threadIdx.x;` (+ min), guarded where the axis is longer."""
        axis = node.bind_info.value
        extent = _bound_extent(node, self.func)
        value = axis
        if not (isinstance(node.min, e.IntImm) and node.min.value == 0):
            value = f"static_cast<{self.type_name(node.loop_var.dtype)}>({axis}) + {self.index(node.min)}"
        thread = axis.startswith("thread")
        lane = node.bind_info is s.BindInfo.THREAD_X
        launched = self.launch[node.bind_info]
        if _may_exceed(launched, extent):
            bound = extent if isinstance(extent, int) else self.index(extent)
            self._thread_branches += thread
            self._lane_branches += lane
            try:
                with self.braced(f"if ({axis} < {bound})"):
                    self.bound_body(node, value)
            finally:
                self._thread_branches -= thread
                self._lane_branches -= lane
        else:
            self.bound_body(node, value)

    def emit_cross_thread_reduction(self, node: e.Reduce) -> None:
        """`acc = combine(init, total)`, where each thread's partial `v` is the body at
        its own thread index and `total` its combination over the Reduce's axis:
        `cinn_block_reduce<T>(v, op)` across threadIdx.x of a 1-D block (warp shuffles
        and a shared-memory exchange; with T = 32 shuffles only, which need no 1-D
        block: each row of 32 x lanes is a warp), `cinn_block_reduce_y<TX, TY>(v, op)` across
        threadIdx.y of a TX x TY block (a shared-memory exchange per x lane), both from
        the runtime header. Every thread of the block must get here: the schedule keeps
        cross-thread Reduces out of thread-dependent branches, and one found inside such
        a branch is refused."""
        (var,) = node.reduce_axis
        axis = s.BindInfo(node.thread_axis)
        call = self.block_combine("ir.Reduce", "cinn_block_reduce", axis, var)
        op = _BLOCK_REDUCE_OPS[node.reduce_type]
        type_name = self.type_name(node.dtype)
        acc = self.names.fresh("acc")
        self.line(f"{type_name} {acc};")
        with self.braced(""):  # its own name scope
            name = self.names.declare(var.name)
            self.line(f"const {self.type_name(var.dtype)} {name} = {axis.value};")
            self.hoist_reductions(node.body)
            value = self.names.fresh("v")
            self.line(f"const {type_name} {value} = {self.value(node.body)};")
            total = self.names.fresh("total")
            self.line(f"const {type_name} {total} = {call}({value}, {op}());")
            self.line(f"{acc} = {self.combine(node, self.value(node.init), total)};")
        self.accumulators[id(node)] = acc

    def hoist_block_reductions(self, block: s.ScheduleBlock) -> None:
        """A block whose stores hold several cross-thread Reduces on one thread var (made
        by IRSchedule.fuse_reductions) computes them together, before its stores:
        `emit_fused_cross_thread_reductions`."""
        stmts = block.body.stmts if isinstance(block.body, s.Block) else (block.body,)
        combines = [
            node
            for stmt in stmts
            if isinstance(stmt, s.Store)
            for node in outermost_reductions(stmt.value)
            if isinstance(node, e.Reduce) and node.thread_axis is not None
        ]
        if len(combines) < 2:
            return
        first = combines[0]
        if any(
            node.thread_axis != first.thread_axis
            or node.reduce_axis[0].name != first.reduce_axis[0].name
            for node in combines
        ):
            return  # not fused: each store combines on its own
        self.emit_fused_cross_thread_reductions(combines)

    def emit_fused_cross_thread_reductions(self, nodes: list[e.Reduce]) -> None:
        """Cross-thread Reduces sharing one thread var, in one exchange: each thread's
        partials (one serial walk for all when their partial loops are the same), then
        one `cinn_block_reduce` (or `_y`) of the nested pair of the partials,
        `cinn_make_pair(v_a, cinn_make_pair(v_b, v_c))`, each half folded by its own
        functor (`cinn_pair_op<op_a, cinn_pair_op<op_b, op_c>>`): the N combines cost
        the barriers of one, and each total is the one its own combine would give."""
        var = nodes[0].reduce_axis[0]
        axis = s.BindInfo(nodes[0].thread_axis)
        call = self.block_combine("ir.Reduce", "cinn_block_reduce", axis, var)
        for node in nodes:
            self.hoist_reductions(node.init)
        accs = []
        for node in nodes:
            acc = self.names.fresh("acc")
            self.line(f"{self.type_name(node.dtype)} {acc};")
            accs.append(acc)
        with self.braced(""):  # its own name scope
            name = self.names.declare(var.name)
            self.line(f"const {self.type_name(var.dtype)} {name} = {axis.value};")
            self.emit_partials_together([node.body for node in nodes])
            values = []
            for node in nodes:
                value = self.names.fresh("v")
                self.line(f"const {self.type_name(node.dtype)} {value} = {self.value(node.body)};")
                values.append(value)
            pack = _nested_pairs(values, "cinn_make_pair({}, {})")
            ops = _nested_pairs(
                [_BLOCK_REDUCE_OPS[n.reduce_type] for n in nodes], "cinn_pair_op<{}, {}>"
            )
            total = self.names.fresh("total")
            self.line(f"const auto {total} = {call}({pack}, {ops}());")
            for node, acc, half in zip(nodes, accs, _pair_halves(len(nodes)), strict=True):
                self.line(f"{acc} = {self.combine(node, self.value(node.init), total + half)};")
        for node, acc in zip(nodes, accs, strict=True):
            self.accumulators[id(node)] = acc

    def block_combine(self, what: str, helper: str, axis: s.BindInfo, var: e.Var) -> str:
        """The runtime header's combine across `axis` for this launch: `helper<T>` across
        threadIdx.x of a 1-D block (or a warp's shuffles in any block, T = 32),
        `helper_y<TX, TY>` across threadIdx.y of a TX x TY block. Refuses (naming `what`)
        a thread var that does not span the axis, a combine under a branch on the thread
        index (its barriers would hang) unless a whole warp takes the branch or skips it
        (`_warp_uniform`), and any other block shape."""
        threads = self.launch[axis]
        if var.lower != 0 or var.upper != threads:
            raise self.unsupported(
                what,
                f"across {axis.value} over {var.name} in [{var.lower}, {var.upper}), but the "
                f"block has {threads} threads on that axis",
            )
        if self._thread_branches and not self._warp_uniform(axis, threads):
            raise self.unsupported(
                what,
                f"across {axis.value} inside a branch on the thread index: every thread of "
                "the block must reach the combine",
            )
        block = tuple(self.launch[a] for a in AXES[3:])
        if axis is s.BindInfo.THREAD_X and (block[1:] == (1, 1) or threads == 32):
            return f"{helper}<{threads}>"  # of 32: a warp's shuffles, any block
        if axis is s.BindInfo.THREAD_Y and block[2] == 1:
            return f"{helper}_y<{block[0]}, {threads}>"
        raise self.unsupported(
            what, f"across {axis.value} in a block of {block[0]}x{block[1]}x{block[2]}"
        )

    def emit_cross_thread_arg_reduction(self, node: e.ArgReduce) -> None:
        """`arg` = the ArgReduce's position, where each thread's partial is its serial
        search (best value, position) over the node's other axes at its own index on the
        last axis, and the pairs are combined across the threads (the better value, of
        equal ones the smaller position): `cinn_block_arg_reduce<T>(best, arg, better)`
        across threadIdx.x of a 1-D block (or a warp's shuffles in any block, T = 32),
        `cinn_block_arg_reduce_y<TX, TY>` across threadIdx.y of a TX x TY block. As for
        a cross-thread Reduce, every thread of the block must get here."""
        var = node.reduce_axis[-1]
        axis = s.BindInfo(node.thread_axis)
        call = self.block_combine("ir.ArgReduce", "cinn_block_arg_reduce", axis, var)
        better = "cinn_arg_max" if node.reduce_type is e.ReduceType.MAX else "cinn_arg_min"
        result = self.names.fresh("arg")
        self.line(f"{self.type_name(node.dtype)} {result};")
        with self.braced(""):  # its own name scope
            name = self.names.declare(var.name)
            self.line(f"const {self.type_name(var.dtype)} {name} = {axis.value};")
            best, arg = self.arg_search(node, node.reduce_axis[:-1])
            self.line(f"{call}({best}, {arg}, {better}());")
            self.line(f"{result} = {arg};")
        self.accumulators[id(node)] = result

    def visit_LastBlockDone(self, node: s.LastBlockDone) -> str:
        """`cinn_last_block_done(semaphore + offset, count)` (runtime header): a fence,
        a barrier and one atomicAdd, so every thread of the block must evaluate it, as
        for a cross-thread Reduce."""
        if self._thread_branches:
            raise self.unsupported(
                "ir.LastBlockDone",
                "inside a branch on the thread index: every thread of the block must reach it",
            )
        pointer = self.names.lookup(e.storage_name(node.semaphore))
        offset = self.index(flat_index(node.semaphore, node.indices))
        return f"cinn_last_block_done({pointer} + {offset}, {node.count})"

    def bound_body(self, node: s.For, value: str) -> None:
        name = self.names.declare(node.loop_var.name)
        self.line(f"const {self.type_name(node.loop_var.dtype)} {name} = {value};")
        thread = node.bind_info.value.startswith("thread")
        outer = set(self._thread_vars), set(self._lane_vars), set(self._y_vars)
        if thread:
            self._thread_vars.add(node.loop_var.name)
        if node.bind_info is s.BindInfo.THREAD_X:
            self._lane_vars.add(node.loop_var.name)
        if node.bind_info is s.BindInfo.THREAD_Y:
            self._y_vars.add(node.loop_var.name)
        try:
            with self.loop_scope(node):
                self.statement(node.body)
        finally:
            self._thread_vars, self._lane_vars, self._y_vars = outer

    def vector_loop(self, node: s.For) -> None:
        plan = plan_vector_loop(node, self.loop_vars)
        if plan is None:
            lanes = plan_lane_reductions(node, self.loop_vars)
            if lanes is None:
                self.serial_loop(node, unroll=True)
                return
            outer, self._lane_reductions = self._lane_reductions, lanes
            try:
                self.visit(lanes.realize)
            finally:
                self._lane_reductions = outer
            return
        self._plan = plan
        try:
            with self.loop_scope(node):
                self.statement(node.body)
        finally:
            self._plan = None

    def visit_IfThenElse(self, node: s.IfThenElse) -> None:
        names = var_names(node.condition)
        thread = bool(self._thread_vars & names)
        lane = bool(self._lane_vars & names)
        self._thread_branches += thread
        self._lane_branches += lane
        try:
            if self._plan is not None and id(node) in self._plan.conditions:
                self.if_then_else(node, self.index(self._plan.conditions[id(node)]))
            else:
                super().visit_IfThenElse(node)
        finally:
            self._thread_branches -= thread
            self._lane_branches -= lane

    def _warp_uniform(self, axis: s.BindInfo, threads: int) -> bool:
        """Whether the enclosing thread branches leave a combine of 32 threads along x
        whole: the block is a warp wide and no branch reads threadIdx.x, so each branch
        is taken or skipped by a whole warp (a guard on the row of a warp, threadIdx.y),
        and the combine is shuffles alone, no barrier."""
        return axis is s.BindInfo.THREAD_X and threads == 32 and self._lane_branches == 0

    def visit_SyncThreads(self, node: s.SyncThreads) -> None:
        """`__syncthreads();`, refused inside a loop bound to threadIdx: there it is no
        barrier between the IR's threads (each runs the loop's body on its own), and
        where the loop is shorter than the block, or under a branch on the thread
        index, the threads that skip it would hang the others."""
        if self._thread_vars:
            loops = ", ".join(sorted(self._thread_vars))
            raise self.unsupported(
                "ir.SyncThreads",
                f"inside loop {loops} bound to a threadIdx axis: a barrier belongs after "
                "the thread-bound nest, where every thread of the block reaches it "
                "(IRSchedule.sync_threads puts it there)",
            )
        self.line("__syncthreads();")

    def visit_ScheduleBlockRealize(self, node: s.ScheduleBlockRealize) -> None:
        if self._plan is None or id(node) not in self._plan.realizes:
            super().visit_ScheduleBlockRealize(node)
            return
        plan, self._plan = self._plan, None
        try:
            self.vector_realize(node, plan, plan.realizes[id(node)])
        finally:
            self._plan = plan

    def vector_realize(
        self, node: s.ScheduleBlockRealize, plan: VectorPlan, parts: RealizePlan
    ) -> None:
        """Vector loads, then the lanes computed one by one into lane arrays, then one
        vector store per contiguous Store."""
        lanes = plan.lanes
        slots = []
        for buffer, offset in parts.loads:  # before the body: the block's marks by hand
            streamed_here = buffer in streamed(node.schedule_block)
            dtype = self._arg_dtype(buffer)
            slots.append(self.vector_load(buffer, dtype, lanes, offset, streamed_here))
        stores = [x for x in _stores(node) if id(x) in parts.vector_stores]
        locals_ = {}
        for store in stores:
            vec = f"cinn_vec<{self.type_name(store.tensor.dtype)}, {lanes}>"
            locals_[id(store)] = self.names.fresh(f"{e.storage_name(store.tensor)}_vec")
            self.line(f"{vec} {locals_[id(store)]};")
        with self.names.scope():
            lane = self.names.declare(plan.lane.name)
            self._lane_loads = {k: f"{slots[i]}.v[{lane}]" for k, i in parts.load_slots.items()}
            self._lane_stores = {k: f"{name}.v[{lane}]" for k, name in locals_.items()}
            self.line("#pragma unroll")
            dtype = self.type_name(plan.lane.dtype)
            try:
                with self.braced(f"for ({dtype} {lane} = 0; {lane} < {lanes}; ++{lane})"):
                    self.realize_body(node)
            finally:
                self._lane_loads, self._lane_stores = {}, {}
        for store in stores:
            vec = f"cinn_vec<{self.type_name(store.tensor.dtype)}, {lanes}>"
            offset = self.index(parts.vector_stores[id(store)])
            pointer = f"{self.names.lookup(e.storage_name(store.tensor))} + {offset}"
            self.line(f"*reinterpret_cast<{vec}*>({pointer}) = {locals_[id(store)]};")

    def open_innermost_reduce_loop(
        self,
        stack: ExitStack,
        nodes: list[e.Reduce],
        var: e.Var,
        unroll: bool,
        ends: Mapping[str, e.Expr] | None = None,
    ) -> list[e.Expr]:
        """A lane axis (innermost, from 0, 2..16 lanes of at most 16 bytes) along which
        a Reduce body loads a contiguous, aligned run of a global buffer on every step:
        each run is one vector load before the lane loop (`cinn_vec`), the lanes read
        its `.v[lane]` in an unrolled loop. A row walk too long to cache in registers
        (`factorize_reduction(lanes=V)` without `cache_read`) then issues 16-byte
        loads. Bodies masked by one mask that is the same for every lane (`_lane_guard`:
        a row of symbolic length in its aligned variant, or a static row the vector
        divides) take one branch a step around the lane loop, and the lanes fold the
        masked value with no mask; other guarded loads stay scalar."""
        lanes = self._lane_reductions
        if lanes is not None and [id(n) for n in nodes] == [id(p) for p in lanes.partials]:
            return self.open_lane_partials(stack, nodes, var, unroll, ends, lanes)
        guard = self._lane_guard(nodes, var)
        bodies = [node.body for node in nodes]
        if guard is not None:  # the step is wholly in or wholly past the row
            stack.enter_context(self.braced(f"if ({self.value(guard)})"))
            bodies = [node.body.true_value for node in nodes]
        runs = self._lane_runs(nodes, var, guard is not None)
        if not runs:
            super().open_innermost_reduce_loop(stack, nodes, var, unroll, ends)
            return bodies
        lanes = var.upper
        slots: dict[int, str] = {}
        for (buffer, _), (base, loads) in runs.items():
            name = self.vector_load(buffer, loads[0].dtype, lanes, base, buffer in self._streamed)
            slots.update({id(load): name for load in loads})
        self.line("#pragma unroll")
        stack.enter_context(self.names.scope())
        lane = self.names.declare(var.name)
        head = f"for ({self.type_name(var.dtype)} {lane} = 0; {lane} < {lanes}; ++{lane})"
        stack.enter_context(self.braced(head))
        outer = self._lane_loads
        self._lane_loads = {**outer, **{key: f"{name}.v[{lane}]" for key, name in slots.items()}}
        stack.callback(setattr, self, "_lane_loads", outer)
        return bodies

    def open_lane_partials(
        self,
        stack: ExitStack,
        nodes: list[e.Reduce],
        var: e.Var,
        unroll: bool,
        ends: Mapping[str, e.Expr] | None,
        lanes: LaneReductions,
    ) -> list[e.Expr]:
        """The step loop of the partials of a vectorized loop's lanes (`LaneReductions`:
        lane k's partial is `nodes[k]`), then, each step, one vector load per run of the
        lanes' loads, lane k reading `.v[k]` (under the lanes' one mask, where guarded:
        the step is wholly in or past the column for every lane)."""
        super().open_innermost_reduce_loop(stack, nodes, var, unroll, ends)
        bodies = [node.body for node in nodes]
        if lanes.guarded:
            guard = self.value(bodies[0].condition)
            stack.enter_context(self.braced(f"if ({guard})"))
            bodies = [body.true_value for body in bodies]
        if not lanes.runs:
            return bodies
        loads = [body_loads(body, True) for body in bodies]
        outer = self._lane_loads
        slots = dict(outer)
        for position in lanes.runs:
            first = loads[0][position]
            buffer = e.storage_name(first.tensor)
            offset = flat_index(first.tensor, first.indices)
            streamed_here = buffer in self._streamed
            name = self.vector_load(buffer, first.dtype, len(nodes), offset, streamed_here)
            for k, lane_loads in enumerate(loads):
                slots[id(lane_loads[position])] = f"{name}.v[{k}]"
        self._lane_loads = slots
        stack.callback(setattr, self, "_lane_loads", outer)
        return bodies

    def vector_load(
        self, buffer: str, dtype: DataType, lanes: int, offset: e.Expr, streamed_load: bool
    ) -> str:
        """`const cinn_vec<T, lanes> <buffer>_vec = ...;` at element `offset` of global
        `buffer` (one aligned vector: the caller proved it), evict-first (`cinn_ldcs`,
        PTX `ld.global.cs`) where the block reads the buffer once (`stream_reads`);
        returns the local's name."""
        vec = f"cinn_vec<{self.type_name(dtype)}, {lanes}>"
        name = self.names.fresh(f"{buffer}_vec")
        cast = f"reinterpret_cast<const {vec}*>({self.names.lookup(buffer)} + {self.index(offset)})"
        load = f"cinn_ldcs({cast})" if streamed_load else f"*{cast}"
        self.line(f"const {vec} {name} = {load};")
        return name

    def _lane_guard(self, nodes: list[e.Reduce], var: e.Var) -> e.Expr | None:
        """The mask every node's body sits under, at lane 0, where it is the same for
        every lane of a vector (`codegen_lanes.is_uniform`: a row of symbolic length in
        its aligned variant, masked past `(S1 / 8) * 8`): the vector loads of the masked
        body are then issued under it. None without one shared uniform mask."""
        lanes = var.upper
        if var.lower != 0 or lanes not in (2, 4, 8, 16):
            return None
        conds = [n.body.condition for n in nodes if isinstance(n.body, e.Select)]
        if len(conds) != len(nodes) or any(not structural_equal(c, conds[0]) for c in conds):
            return None
        if any(not structural_equal(n.body.false_value, n.init) for n in nodes):
            return None
        if not is_uniform(conds[0], var.name, lanes):
            return None
        return simplify(substitute(conds[0], {var.name: e.IntImm(0, var.dtype)}))

    def _lane_runs(
        self, nodes: list[e.Reduce], var: e.Var, guarded: bool = False
    ) -> dict[tuple[str, tuple], tuple[e.Expr, list[e.Load]]]:
        """The vector loads of the lane loop: per (buffer, base's key), the base and the
        Loads that read lane `var` of it (empty when `var` is no lane axis). `guarded`:
        the bodies are `Select(mask, value, identity)` under a lane-uniform mask
        (`_lane_guard`), whose value's loads count as read on every step."""
        lanes = var.upper
        if var.lower != 0 or lanes not in (2, 4, 8, 16) or self._plan is not None:
            return {}
        runs: dict[tuple[str, tuple], tuple[e.Expr, list[e.Load]]] = {}
        bodies = [n.body.true_value if guarded else n.body for n in nodes]
        for every_step in (True, False):  # a conditional load may read a loaded run
            for body in bodies:
                for load in body_loads(body, every_step):
                    if is_on_chip(load.tensor) or load.dtype.itemsize * lanes > 16:
                        continue
                    if id(load) in self._lane_loads:
                        continue
                    offset = flat_index(load.tensor, load.indices)
                    base = contiguous_base(offset, var.name, lanes)
                    if base is None or var.name in var_names(base):
                        continue
                    key = (e.storage_name(load.tensor), structural_key(base))
                    if every_step:
                        runs.setdefault(key, (base, []))[1].append(load)
                    elif key in runs and all(load is not x for x in runs[key][1]):
                        runs[key][1].append(load)
        return runs

    def replaced_accesses(self) -> set[int]:
        return set(self._lane_loads) | set(self._lane_stores)

    def visit_Load(self, node: e.Load) -> str:
        lane = self._lane_loads.get(id(node))
        if lane is not None:
            return lane
        buffer = e.storage_name(node.tensor)
        if buffer in self._streamed and not is_on_chip(node.tensor):
            offset = self.index(flat_index(node.tensor, node.indices))
            return f"cinn_ldcs({self.names.lookup(buffer)} + {offset})"
        return super().visit_Load(node)

    def visit_Store(self, node: s.Store) -> None:
        target = self._lane_stores.get(id(node))
        if target is not None:
            self.store(target, node.value)
        elif (one_lane := self._one_lane_stores(node)) is not None:
            self.store(self.access(node), node.value, only_if=one_lane)
        else:
            super().visit_Store(node)

    def _one_lane_stores(self, node: s.Store) -> str | None:
        """`threadIdx.x == 0` where `node` stores a combine across threadIdx.x into
        global memory at an address no threadIdx.x reaches (a grid reduction's partial,
        its total): every thread of the row holds the same total and would store it to
        the same place, so thread x 0 alone does; `threadIdx.y == 0` likewise for a
        combine across threadIdx.y (the column schedule's lanes), whose store may also
        compute on the total (a mean's division) from values no y thread differs in.
        None for any other store (a register temp is each thread's own: all store it)."""
        value = node.value
        reduces = outermost_reductions(value)
        if len(reduces) != 1 or not isinstance(reduces[0], e.Reduce):
            return None
        (total,) = reduces
        pending: list[e.Expr] = [*node.indices]
        if total.thread_axis == s.BindInfo.THREAD_X.value and value is total:
            axis_vars, condition = self._lane_vars, "threadIdx.x == 0"
        elif total.thread_axis == s.BindInfo.THREAD_Y.value:
            axis_vars, condition = self._y_vars, "threadIdx.y == 0"
            outside = nodes(value, prune=lambda n: n is total)
            pending += [n for n in outside if isinstance(n, e.Var)]
        else:
            return None
        if getattr(node.tensor, "memory_type", None) is not e.MemoryType.GLOBAL:
            return None
        buffer = e.storage_name(node.tensor)
        if buffer in self._read_back and buffer not in self._workspaces:
            return None  # read again in the kernel: every thread keeps its own store
        names: set[str] = set()
        while pending:
            for name in var_names(pending.pop()):
                if name in names:
                    continue
                names.add(name)
                if name in self._iter_values:
                    pending.append(self._iter_values[name])
        return None if names & axis_vars else condition

    @functools.cached_property
    def _read_back(self) -> set[str]:
        """Buffers the kernel loads: a store of one of them stays every thread's, unless
        it is a workspace (a grid reduction's partials, read after the last-block
        barrier). Walked only for a kernel with a candidate store."""
        return {e.storage_name(n.tensor) for n in nodes(self.func.body) if isinstance(n, e.Load)}

    @functools.cached_property
    def _workspaces(self) -> set[str]:
        return {arg.name for arg in self.func.args if arg.io is s.ArgIO.WORKSPACE}

    def realize_body(self, node: s.ScheduleBlockRealize) -> None:
        outer, outer_streamed = dict(self._iter_values), self._streamed
        for var, value in zip(node.schedule_block.iter_vars, node.iter_values, strict=True):
            self._iter_values[var.name] = value
        self._streamed = streamed(node.schedule_block)
        try:
            super().realize_body(node)
        finally:
            self._iter_values, self._streamed = outer, outer_streamed

    def _arg_dtype(self, buffer: str) -> DataType:
        for arg in self.func.args:
            if arg.name == buffer:
                return arg.value.dtype
        raise ValueError(f"buffer '{buffer}' is not an argument of {self.func.name}")


_BLOCK_REDUCE_OPS = {
    e.ReduceType.SUM: "cinn_reduce_sum",
    e.ReduceType.PROD: "cinn_reduce_prod",
    e.ReduceType.MAX: "cinn_reduce_max",
    e.ReduceType.MIN: "cinn_reduce_min",
    e.ReduceType.ALL: "cinn_reduce_all",
    e.ReduceType.ANY: "cinn_reduce_any",
}
"""The runtime header's combine functors, by reduction kind."""


def _nested_pairs(items: list[str], pattern: str) -> str:
    """`pattern` applied right-nested: [a, b, c] -> pattern(a, pattern(b, c))."""
    if len(items) == 1:
        return items[0]
    return pattern.format(items[0], _nested_pairs(items[1:], pattern))


def _pair_halves(count: int) -> list[str]:
    """The member paths of `count` values in `_nested_pairs`: .first, .second.first, ...,
    the last one .second...second."""
    return [".second" * i + (".first" if i < count - 1 else "") for i in range(count)]


def _rounded(node: e.FloatImm) -> float:
    """A 16-bit float constant's value, rounded to its type (exact in float32)."""
    if node.dtype is DataType.FLOAT16:
        with np.errstate(over="ignore"):
            return float(np.float16(node.value))
    value = np.float32(node.value)
    if not np.isfinite(value):
        return float(value)
    return float(bfloat16_to_float32(float32_to_bfloat16(np.array([value])))[0])


def _stores(node: s.ScheduleBlockRealize) -> tuple[s.Store, ...]:
    body = node.schedule_block.body
    return body.stmts if isinstance(body, s.Block) else (body,)


def _bound_extent(node: s.For, func: s.LoweredFunc) -> int | e.Expr:
    """A bound loop's extent: a constant, or (on a block axis only) an expression
    over the kernel's scalar arguments, evaluated when the launch is made."""
    if isinstance(node.extent, e.IntImm):
        return node.extent.value
    if node.bind_info in AXES[:3] and _reads_arguments_only(node.extent, func):
        return node.extent
    raise ValueError(
        f"{func.name}: loop {node.loop_var.name} bound to {node.bind_info.value} "
        "needs a constant extent"
        + ("" if node.bind_info in AXES[:3] else " (thread counts are fixed per kernel)")
    )


def _reads_arguments_only(x: e.Expr, func: s.LoweredFunc) -> bool:
    """Whether `x` reads no memory and no Var but the kernel's scalar arguments."""
    scalars = {a.name for a in func.args if isinstance(a.value, e.Var)}
    return not any(
        isinstance(n, e.Load) or (isinstance(n, e.Var) and n.name not in scalars) for n in nodes(x)
    )


def _launch_max(a: int | e.Expr, b: int | e.Expr) -> int | e.Expr:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    if isinstance(a, int) and a <= 1:
        return b
    if isinstance(b, int) and b <= 1:
        return a
    if not isinstance(a, int) and not isinstance(b, int) and str(a) == str(b):
        return a
    return e.Max(_as_index(a, b), _as_index(b, a))


def _as_index(x: int | e.Expr, like: int | e.Expr) -> e.Expr:
    return e.IntImm(x, like.dtype) if isinstance(x, int) else x  # type: ignore[union-attr]


def _may_exceed(launched: int | e.Expr, extent: int | e.Expr) -> bool:
    """Whether a launch of `launched` along an axis may run past a loop of `extent`
    (then the loop's body is guarded)."""
    if isinstance(launched, int) and isinstance(extent, int):
        return extent < launched
    return isinstance(launched, int) or isinstance(extent, int) or str(launched) != str(extent)


def _launch_dims(func: s.LoweredFunc) -> tuple[dict[s.BindInfo, int | e.Expr], set[DataType]]:
    """The largest extent bound to each axis (a loop's, or a cross-thread combine's
    threads: its last reduce axis), and every dtype the function uses."""
    dims: dict[s.BindInfo, int | e.Expr] = dict.fromkeys(AXES, 1)
    dtypes: set[DataType] = {arg.value.dtype for arg in func.args}
    for node in nodes(func.body):
        if isinstance(node, e.Expr):
            dtypes.add(node.dtype)
        if isinstance(node, s.For) and node.bind_info is not None:
            extent = _bound_extent(node, func)
            dims[node.bind_info] = _launch_max(dims[node.bind_info], extent)
        elif isinstance(node, e.Reduction) and node.thread_axis is not None:
            axis = s.BindInfo(node.thread_axis)
            dims[axis] = max(dims[axis], node.reduce_axis[-1].upper or 1)
    return dims, dtypes


def _render_kernel(
    func: s.LoweredFunc,
    name: str,
    reserved: set[str],
    prove_in_place: bool = True,
    fast_math: bool = False,
) -> tuple[str, KernelInfo, set[DataType]]:
    """The kernel's text, its launch, and the dtypes it uses."""
    dims, dtypes = _launch_dims(func)
    grid = tuple(dims[axis] for axis in AXES[:3])
    block = tuple(dims[axis] for axis in AXES[3:])
    threads = block[0] * block[1] * block[2]
    if threads > MAX_THREADS_PER_BLOCK:
        raise ValueError(
            f"{func.name}: block {block} has {threads} threads, more than CUDA's "
            f"{MAX_THREADS_PER_BLOCK}"
        )
    for axis, extent, limit in zip(AXES[:3], grid, MAX_GRID_DIMS, strict=True):
        if isinstance(extent, int) and extent > limit:
            raise ValueError(
                f"{func.name}: grid {grid} has {extent} blocks along {axis.value}, more "
                f"than CUDA's {limit}"
            )
    names = CNames(reserved)
    renderer = CudaRenderer(func, names, dims, fast_math)
    in_place = tuple(in_place_pairs(func)) if prove_in_place else ()
    aliased = {name for pair in in_place for name in pair}
    params = []
    for arg in func.args:
        c_name = names.declare(arg.name)
        type_name = renderer.type_name(arg.value.dtype)
        restrict = "" if arg.name in aliased else " __restrict__"
        if isinstance(arg.value, e.Var):
            params.append(f"const {type_name} {c_name}")
        elif arg.io is s.ArgIO.WORKSPACE:
            # Written by one block, read by another in the same launch (a grid
            # reduction's partials and counters): volatile, so that no load is served
            # from a stale L1 line or a register (CUDA's own __threadfence example).
            params.append(f"volatile {type_name}* __restrict__ {c_name}")
        elif arg.io is s.ArgIO.INPUT:
            params.append(f"const {type_name}*{restrict} {c_name}")
        else:
            params.append(f"{type_name}*{restrict} {c_name}")
    shared_bytes = 0
    for buffer in func.temp_buffers:
        if buffer.memory_type is e.MemoryType.GLOBAL:
            raise renderer.unsupported(
                f"temp buffer {buffer.name}",
                "is in global memory; kernels keep temps in registers or shared memory "
                "(schedule it with set_buffer 'local' or 'shared')",
            )
        count = array_count(buffer)
        declared = f"{renderer.type_name(buffer.dtype)} {names.declare(buffer.name)}[{count}];"
        if buffer.memory_type is e.MemoryType.SHARED:
            shared_bytes += count * buffer.dtype.itemsize
            declared = "__shared__ " + declared
        renderer.line(declared)
    if shared_bytes > MAX_SHARED_BYTES:
        raise ValueError(
            f"{func.name}: its shared arrays take {shared_bytes} bytes, more than the "
            f"{MAX_SHARED_BYTES} a kernel may declare statically"
        )
    renderer.statement(func.body)
    head = f'extern "C" __global__ void __launch_bounds__({threads}) {name}({", ".join(params)}) {{'
    text = "\n".join([head, *renderer.lines, "}"])
    return text, KernelInfo(name, grid, block, 0, tuple(func.args), in_place), dtypes


def generate_cuda(
    funcs: Sequence[s.LoweredFunc],
    unit_size: int | None = None,
    *,
    prove_in_place: bool = True,
    fast_math: bool = False,
) -> CudaSource:
    """One CUDA source holding a kernel per function, and how to launch each.

    Kernel names are the functions' names, sanitized and made unique in the source.
    With `unit_size` and more functions than that, `units` holds the same kernels (each
    rendered once) split in order into self-contained sources of at most `unit_size`
    kernels, which compile independently. `prove_in_place=False` skips the in-place
    proof (`ir.in_place`; every parameter `__restrict__`): a render that only checks
    that the functions render. `fast_math`: float32 transcendentals and division by
    CUDA's approximations (`FAST_MATH`)."""
    reserved = set(CudaRenderer.reserved)
    kernel_names = [c_identifier(func.name, reserved) for func in funcs]
    rendered = [
        _render_kernel(func, name, reserved, prove_in_place, fast_math)
        for func, name in zip(funcs, kernel_names, strict=True)
    ]
    units: tuple[CudaSource, ...] = ()
    if unit_size is not None and len(rendered) > unit_size:
        units = tuple(
            _assemble(rendered[start : start + unit_size])
            for start in range(0, len(rendered), unit_size)
        )
    whole = _assemble(rendered)
    return CudaSource(whole.source, whole.kernels, units)


def _assemble(rendered: Sequence[tuple[str, KernelInfo, set[DataType]]]) -> CudaSource:
    """A translation unit of rendered kernels: the headers their dtypes need, the
    runtime header, the kernels."""
    dtypes = set().union(*(used for _, _, used in rendered))
    kernels = [info for _, info, _ in rendered]
    includes = [f"#include <{_HALVES[d][2]}>" for d in _HALVES if d in dtypes]
    parts = [
        f"// CUDA C generated by cinn_py: {len(kernels)} kernel(s).",
        *includes,
        "",
        runtime_header().rstrip(),
        "",
        "\n\n".join(text for text, _, _ in rendered),
    ]
    return CudaSource("\n".join(parts) + "\n", kernels)
