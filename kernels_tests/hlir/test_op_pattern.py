"""Op pattern kinds and reduction patterns (cinn_py/hlir/op_pattern.py)."""

from __future__ import annotations

import math

import pytest
from op_cases import Net

from cinn_py.hlir.op_pattern import OpPatternKind, ReducePattern, op_pattern_kind, reduce_pattern
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program

F32 = DataType.FLOAT32
K = OpPatternKind

KINDS = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,6],stop_gradient:[true]} : () -> tensor<4x6xf32>
    (%1) = "pd_op.exp" (%0) {stop_gradient:[true]} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[2,4,6]} : () -> tensor<3xi64>
    (%3) = "pd_op.expand" (%1, %2) {stop_gradient:[true]} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<2x4x6xf32>
    (%4) = "pd_op.transpose" (%1) {perm:[1,0],stop_gradient:[true]} : (tensor<4x6xf32>) -> tensor<6x4xf32>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%6) = "pd_op.sum" (%1, %5) {dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<4x6xf32>, tensor<1xi64>) -> tensor<4xf32>
    (%7) = "pd_op.matmul" (%0, %4) {stop_gradient:[true],transpose_x:false,transpose_y:false} : (tensor<4x6xf32>, tensor<6x4xf32>) -> tensor<4x4xf32>
    (%8) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xi64>
    (%9) = "pd_op.argmax" (%0, %8) {dtype:int64,flatten:false,keepdims:false,stop_gradient:[true]} : (tensor<4x6xf32>, tensor<1xi64>) -> tensor<4xi64>
    (%10) = "pd_op.cumsum" (%0, %8) {exclusive:false,flatten:false,reverse:false,stop_gradient:[true]} : (tensor<4x6xf32>, tensor<1xi64>) -> tensor<4x6xf32>
    (%11) = "pd_op.softmax" (%0) {axis:-1,stop_gradient:[true]} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    (%12) = "pd_op.frobnicate" (%0) {} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    (%13) = "builtin.combine" (%0, %1) {} : (tensor<4x6xf32>, tensor<4x6xf32>) -> vec[tensor<4x6xf32>,tensor<4x6xf32>]
    (%14) = "pd_op.fetch" (%6) {col:0,name:"out",stop_gradient:[true]} : (tensor<4xf32>) -> tensor<4xf32>
}
"""


def test_kinds_come_from_the_pattern_traits():
    ops = {op.name: op for op in parse_program(KINDS).block}
    assert {name: op_pattern_kind(op) for name, op in ops.items()} == {
        "pd_op.data": K.NON_FUSIBLE,
        "pd_op.exp": K.ELEMENTWISE,
        "pd_op.full_int_array": K.ELEMENTWISE,
        "pd_op.expand": K.BROADCAST,
        "pd_op.transpose": K.INJECTIVE,
        "pd_op.sum": K.REDUCTION,
        "pd_op.matmul": K.OUT_FUSIBLE,
        "pd_op.full": K.ELEMENTWISE,
        "pd_op.argmax": K.REDUCTION,  # declared NonFusible; compiled as a reduction
        "pd_op.cumsum": K.NON_FUSIBLE,
        "pd_op.softmax": K.OUT_FUSIBLE,
        "pd_op.frobnicate": K.NON_FUSIBLE,  # undeclared
        "builtin.combine": K.INJECTIVE,
        "pd_op.fetch": K.NON_FUSIBLE,
    }
    assert K.REDUCTION.value == "Reduction" and K.OUT_FUSIBLE.value == "OutFusible"


def test_pattern_fields_for_a_middle_axis():
    p = ReducePattern.of((4, 8, 16), (1,))
    assert (p.shape, p.axes, p.kept) == ((4, 8, 16), (1,), (0, 2))
    assert (p.rows, p.cols) == (64, 8)
    assert p.keepdim_shape == (4, 1, 16) and p.dropped_shape == (4, 16)
    assert not p.innermost
    assert str(p) == "reduce 4x8x16 over [1]"


@pytest.mark.parametrize(
    ("shape", "axes", "rows", "cols", "keepdim", "dropped", "innermost"),
    [
        ((4, 8), (1,), 4, 8, (4, 1), (4,), True),
        ((4, 8), (0,), 8, 4, (1, 8), (8,), False),
        ((4, 8), (0, 1), 1, 32, (1, 1), (), True),
        ((2, 3, 5), (1, 2), 2, 15, (2, 1, 1), (2,), True),
        ((2, 3, 5), (0, 2), 3, 10, (1, 3, 1), (3,), False),
        ((7,), (0,), 1, 7, (1,), (), True),
    ],
)
def test_pattern_fields(shape, axes, rows, cols, keepdim, dropped, innermost):
    p = ReducePattern.of(shape, axes)
    assert (p.rows, p.cols, p.keepdim_shape, p.dropped_shape, p.innermost) == (
        rows,
        cols,
        keepdim,
        dropped,
        innermost,
    )
    assert p.rows * p.cols == math.prod(shape)
    assert p.is_full(shape) and p.is_row(keepdim) and p.is_row(dropped)


def test_patterns_compare_by_shape_and_axes_only():
    assert ReducePattern.of((4, 8), [1]) == ReducePattern((4, 8), (1,))
    assert hash(ReducePattern.of((4, 8), [1])) == hash(ReducePattern((4, 8), (1,)))
    assert ReducePattern.of((4, 8), (1,)) != ReducePattern.of((4, 8), (0,))
    assert ReducePattern.of((4, 8), (1,)) != ReducePattern.of((4, 9), (1,))
    assert ReducePattern.of((2, 3), (1, 1, 0)).axes == (0, 1)
    with pytest.raises(ValueError, match="out of range"):
        ReducePattern.of((2, 3), (2,))


def test_full_and_row_forms():
    p = ReducePattern.of((4, 8), (1,))
    assert p.is_full((4, 8)) and not p.is_full((8, 4))
    assert p.is_row((4, 1)) and p.is_row((4,))
    assert not p.is_row((1, 4)) and not p.is_row((4, 8)) and not p.is_row(())


# (pattern shape, axes, operand shape, out shape, aligned?)
ROW_ALIGNED = [
    # row reduction of [4, 8] over the last dim
    ((4, 8), (1,), (4, 1), (4, 8), True),  # keepdim row into full: x - max(x, keepdim)
    ((4, 8), (1,), (4, 8), (4, 8), True),  # full into full: elementwise
    ((4, 8), (1,), (4,), (4, 8), False),  # dropped row, numpy aligns it with dim 1
    ((4, 8), (1,), (1, 8), (4, 8), False),  # a column value
    ((4, 8), (1,), (4, 1), (4, 1), True),  # row into row: rsqrt(var + eps)
    ((4, 8), (1,), (4,), (4,), True),
    ((4, 8), (1,), (4,), (4, 1), False),  # numpy would broadcast to [4, 4]
    ((4, 8), (1,), (4, 1), (8, 4), False),  # out neither full nor row
    ((4, 8), (1,), (2, 4, 1), (4, 8), False),  # operand of higher rank
    # column reduction of [8, 4] over dim 0
    ((8, 4), (0,), (1, 4), (8, 4), True),
    ((8, 4), (0,), (4,), (8, 4), True),  # a dropped column row lines up on the right
    ((8, 4), (0,), (4, 1), (8, 4), False),
    ((8, 4), (0,), (1, 4), (1, 4), True),
    # square input: the dropped form is ambiguous, the alignment decides
    ((4, 4), (1,), (4,), (4, 4), False),
    ((4, 4), (0,), (4,), (4, 4), True),
    # a middle axis of [2, 3, 5]
    ((2, 3, 5), (1,), (2, 1, 5), (2, 3, 5), True),
    ((2, 3, 5), (1,), (2, 5), (2, 3, 5), False),
    ((2, 3, 5), (1,), (2, 5), (2, 5), True),
    ((2, 3, 5), (1,), (2, 1, 5), (2, 1, 5), True),
    # leading axes of [2, 3, 5]: the dropped row [5] lines up
    ((2, 3, 5), (0, 1), (5,), (2, 3, 5), True),
    ((2, 3, 5), (0, 1), (1, 1, 5), (2, 3, 5), True),
    ((2, 3, 5), (0, 1), (1, 5), (2, 3, 5), True),  # [1,5] padded to [1,1,5]
    # trailing axes: the keepdim row, or the dropped one only when reshaped back
    ((2, 3, 5), (1, 2), (2, 1, 1), (2, 3, 5), True),
    ((2, 3, 5), (1, 2), (2,), (2, 3, 5), False),
    # everything reduced: a single row, any broadcast of it is aligned
    ((4, 8), (0, 1), (), (4, 8), True),
    ((4, 8), (0, 1), (1, 1), (4, 8), True),
    ((4, 8), (0, 1), (1,), (4, 8), True),
]


@pytest.mark.parametrize(("shape", "axes", "operand", "out", "aligned"), ROW_ALIGNED)
def test_row_aligned(shape, axes, operand, out, aligned):
    assert ReducePattern.of(shape, axes).row_aligned(operand, out) is aligned


def _reduction(make) -> tuple[Program, object]:
    program = Program()
    net = Net(program)
    x = net.data("x", (2, 3, 5), F32)
    out = make(net, x)
    return program, out.defining_op


@pytest.mark.parametrize(
    ("make", "axes"),
    [
        (lambda n, x: n.op("sum", x, n.ints([1]), keepdim=False, dtype=DataType.UNDEFINED), (1,)),
        (
            lambda n, x: n.op("sum", x, n.ints([-1, 0]), keepdim=True, dtype=DataType.UNDEFINED),
            (0, 2),
        ),
        (
            lambda n, x: n.op("sum", x, n.ints([]), keepdim=False, dtype=DataType.UNDEFINED),
            (0, 1, 2),
        ),
        (lambda n, x: n.op("mean", x, n.ints([2]), keepdim=True), (2,)),
        (lambda n, x: n.op("max", x, n.ints([0, 1, 2]), keepdim=False), (0, 1, 2)),
        (lambda n, x: n.op("min", x, n.ints([-2]), keepdim=False), (1,)),
        (lambda n, x: n.op("prod", x, n.ints([1]), keepdim=False, reduce_all=True), (0, 1, 2)),
        (lambda n, x: n.op("prod", x, n.ints([1]), keepdim=False, reduce_all=False), (1,)),
        (lambda n, x: n.op("all", x, axis=[-1], keepdim=False), (2,)),
        (lambda n, x: n.op("any", x, axis=[], keepdim=True), (0, 1, 2)),
        (lambda n, x: n.op("argmax", x, n.scalar(1, DataType.INT64), keepdims=False), (1,)),
        (lambda n, x: n.op("argmin", x, n.scalar(-1, DataType.INT64), keepdims=True), (2,)),
        (
            lambda n, x: n.op("argmax", x, n.scalar(1, DataType.INT64), flatten=True),
            (0, 1, 2),
        ),
    ],
)
@pytest.mark.parametrize("folded", [False, True], ids=["operand", "folded"])
def test_reduce_pattern_picks_the_axes_as_the_lowering(make, axes, folded):
    program, op = _reduction(make)
    if folded:
        PassManager.from_names(["fold_mutable_attributes"]).run(program)
        assert op.num_operands == 1 or op.operand_value(1) is None
    assert reduce_pattern(op) == ReducePattern.of((2, 3, 5), axes)


def test_no_pattern_for_other_ops_0d_inputs_dynamic_shapes_or_unknown_axes():
    program = Program()
    net = Net(program)
    x = net.data("x", (2, 3), F32)
    assert reduce_pattern(net.op("exp", x).defining_op) is None
    scalar = net.data("s", (), F32)
    assert reduce_pattern(net.op("sum", scalar, net.ints([]), keepdim=False).defining_op) is None
    arg = net.op("argmax", scalar, net.scalar(0, DataType.INT64), keepdims=False)
    assert reduce_pattern(arg.defining_op) is None
    dynamic = net.data("d", (-1, 3), F32)
    assert reduce_pattern(net.op("sum", dynamic, net.ints([1])).defining_op) is None
    axes = net.op("cast", net.data("a", (1,), DataType.INT64), dtype=DataType.INT64)
    assert reduce_pattern(net.op("sum", x, axes, keepdim=False).defining_op) is None
