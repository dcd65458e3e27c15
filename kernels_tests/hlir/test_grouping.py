"""Fusion (cinn_py/hlir/grouping.py): CINN-style vertical and horizontal merges, the row
invariant of reduction groups, no cycle through a library op. Golden `describe_groups`
texts; docs/FUSION.md explains the rules."""

import sys
from pathlib import Path

import pytest
from op_cases import Net

import cinn_py
from cinn_py.hlir.group import GroupKind, describe_groups
from cinn_py.hlir.grouping import check_row_invariant, group_program, make_group
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import can_lower
from cinn_py.hlir.op_pattern import (
    OpPatternKind,
    ReducePattern,
    is_arg_reduction,
    op_pattern_kind,
    reduce_pattern,
)
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program

FIXTURES = Path(__file__).parent.parent / "fixtures"
PROGRAMS = FIXTURES / "programs"
sys.path.insert(0, str(FIXTURES.parent.resolve()))
from fixture_ops import program_params  # noqa: E402

LOWERABLE = {OpPatternKind.ELEMENTWISE, OpPatternKind.BROADCAST, OpPatternKind.INJECTIVE}
F32, I64, UNDEF = DataType.FLOAT32, DataType.INT64, DataType.UNDEFINED
REDUCTION = OpPatternKind.REDUCTION

FUSION_PASSES = [
    "fold_mutable_attributes",
    "decompose_composites",
    "constant_folding",
    "common_subexpression_elimination",
    "dead_code_elimination",
]
"""The compiler's pass list before fusion: composites become primitives that fuse."""

KEEP_COMPOSITES = ["fold_mutable_attributes", "dead_code_elimination"]


def by_trait(op):
    """A fusibility stand-in independent of which lowerings exist (no reductions)."""
    return op.op_def is not None and op.op_def.pattern in LOWERABLE


def with_arg_reductions(op):
    """`can_lower`, plus argmax / argmin whatever their lowering's state."""
    return can_lower(op) or is_arg_reduction(op)


def groups_text(program, is_fusible=None, passes=FUSION_PASSES):
    PassManager.from_names(passes).run(program)
    groups = group_program(program, is_fusible)
    return describe_groups(groups, NameTable(program).printed)


def fused(path, passes=FUSION_PASSES):
    program = cinn_py.load(path)
    PassManager.from_names(passes).run(program)
    return program, group_program(program)


# ---- composites after decomposition: one group each ---------------------------------------


def test_softmax_and_log_softmax_over_each_axis():
    # softmax(-1) and log_softmax(-1) share max / subtract / exp / sum after CSE and fuse
    # into one group; the other axes get a group each. The -64 floor, one 0-D full after
    # CSE, is copied into each group that reads it: no group exports a constant.
    program = cinn_py.load(PROGRAMS / "softmax_axes" / "program.pir")
    assert groups_text(program) == "\n".join(
        [
            "group_0 fused [pd_op.max, pd_op.subtract, pd_op.full, pd_op.maximum,"
            " pd_op.exp, pd_op.full, pd_op.sum, pd_op.divide, pd_op.multiply, pd_op.log,"
            " pd_op.subtract] (%0) -> (%1, %4)",
            "group_1 fused [pd_op.max, pd_op.subtract, pd_op.full, pd_op.maximum,"
            " pd_op.exp, pd_op.sum, pd_op.full, pd_op.divide, pd_op.multiply] (%0) -> (%2)",
            "group_2 fused [pd_op.max, pd_op.subtract, pd_op.full, pd_op.maximum,"
            " pd_op.exp, pd_op.sum, pd_op.log, pd_op.subtract] (%0) -> (%3)",
        ]
    )


def test_softmax_axes_patterns_cover_row_middle_and_column_reductions():
    _, groups = fused(PROGRAMS / "softmax_axes" / "program.pir")
    assert [g.reduce_pattern for g in groups] == [
        ReducePattern.of((2, 3, 5), (2,)),
        ReducePattern.of((2, 3, 5), (1,)),
        ReducePattern.of((2, 3, 5), (0,)),
    ]
    assert [g.reduce_pattern.innermost for g in groups] == [True, False, False]


def test_layer_norm_is_one_group_per_norm_with_its_mean_and_variance_outputs():
    program = cinn_py.load(PROGRAMS / "layer_norm_3d" / "program.pir")
    assert groups_text(program) == "\n".join(
        [
            "group_0 fused [pd_op.sum, pd_op.full, pd_op.divide, pd_op.square,"
            " pd_op.sum, pd_op.divide, pd_op.square, pd_op.subtract, pd_op.full,"
            " pd_op.maximum, pd_op.subtract, pd_op.full, pd_op.add, pd_op.rsqrt,"
            " pd_op.multiply, pd_op.reshape, pd_op.multiply, pd_op.reshape, pd_op.add,"
            " pd_op.squeeze, pd_op.squeeze] (%2, %1, %0) -> (%3, %4, %5)",
            "group_1 fused [pd_op.sum, pd_op.full, pd_op.divide, pd_op.square,"
            " pd_op.sum, pd_op.divide, pd_op.square, pd_op.subtract, pd_op.full,"
            " pd_op.maximum, pd_op.subtract, pd_op.full, pd_op.add, pd_op.rsqrt,"
            " pd_op.multiply, pd_op.squeeze, pd_op.squeeze] (%2) -> (%6, %7, %8)",
        ]
    )


def test_rms_norm_is_one_group():
    program = cinn_py.load(PROGRAMS / "rms_norm" / "program.pir")
    assert groups_text(program) == (
        "group_0 fused [pd_op.square, pd_op.sum, pd_op.full, pd_op.divide, pd_op.full,"
        " pd_op.add, pd_op.rsqrt, pd_op.multiply, pd_op.multiply, pd_op.squeeze]"
        " (%0, %1) -> (%2, %3)"
    )


@pytest.mark.parametrize(
    ("fixture", "patterns"),
    [
        ("layer_norm_3d", [((2, 3, 5), (1, 2)), ((2, 3, 5), (2,))]),
        ("rms_norm", [((4, 6), (1,))]),
    ],
)
def test_norm_patterns(fixture, patterns):
    _, groups = fused(PROGRAMS / fixture / "program.pir")
    assert [g.reduce_pattern for g in groups] == [ReducePattern.of(*p) for p in patterns]


HAND_SOFTMAX = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[6,10],stop_gradient:[true]} : () -> tensor<6x10xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%2) = "pd_op.max" (%0, %1) {keepdim:true,stop_gradient:[true]} : (tensor<6x10xf32>, tensor<1xi64>) -> tensor<6x1xf32>
    (%3) = "pd_op.subtract" (%0, %2) {stop_gradient:[true]} : (tensor<6x10xf32>, tensor<6x1xf32>) -> tensor<6x10xf32>
    (%4) = "pd_op.exp" (%3) {stop_gradient:[true]} : (tensor<6x10xf32>) -> tensor<6x10xf32>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%6) = "pd_op.sum" (%4, %5) {dtype:Undefined,keepdim:true,stop_gradient:[true]} : (tensor<6x10xf32>, tensor<1xi64>) -> tensor<6x1xf32>
    (%7) = "pd_op.divide" (%4, %6) {stop_gradient:[true]} : (tensor<6x10xf32>, tensor<6x1xf32>) -> tensor<6x10xf32>
}
"""


def test_hand_written_softmax_is_one_group():
    program = parse_program(HAND_SOFTMAX)
    assert groups_text(program) == (
        "group_0 fused [pd_op.max, pd_op.subtract, pd_op.exp, pd_op.sum, pd_op.divide] (%0) -> (%7)"
    )
    (group,) = group_program(program)
    assert group.reduce_pattern == ReducePattern.of((6, 10), (1,))
    assert group.reduce_pattern.rows == 6 and group.reduce_pattern.cols == 10


def test_mlp_fuses_bias_gelu_and_bias_softmax():
    program = cinn_py.load(PROGRAMS / "mlp_static" / "program.pir")
    assert groups_text(program) == "\n".join(
        [
            "group_0 library [pd_op.matmul] (%4, %3) -> (%5)",
            "group_1 fused [pd_op.add, pd_op.full, pd_op.multiply, pd_op.erf, pd_op.full,"
            " pd_op.add, pd_op.full, pd_op.multiply, pd_op.multiply] (%5, %2) -> (%7)",
            "group_2 library [pd_op.matmul] (%7, %1) -> (%8)",
            "group_3 fused [pd_op.add, pd_op.max, pd_op.subtract, pd_op.full,"
            " pd_op.maximum, pd_op.exp, pd_op.sum, pd_op.full, pd_op.divide,"
            " pd_op.multiply] (%8, %0) -> (%10)",
        ]
    )


def test_transformer_encoder_layer():
    # Each residual add + layer_norm is one group, so is the attention softmax (with
    # the 1/sqrt(d) scale of q inlined in the projection's group). The eps / count
    # constants CSE shares between the two layer_norms are copied into the second
    # group, not passed from the first: each layer_norm group outputs only its result.
    program = cinn_py.load(FIXTURES / "models" / "transformer_encoder")
    assert groups_text(program) == "\n".join(
        [
            "group_0 library [pd_op.matmul] (%16, %15) -> (%17)",
            "group_1 fused [pd_op.add, pd_op.reshape, pd_op.transpose, pd_op.scale] (%17,"
            " %14) -> (%29)",
            "group_2 library [pd_op.matmul] (%16, %13) -> (%21)",
            "group_3 fused [pd_op.add, pd_op.reshape, pd_op.transpose] (%21, %12) -> (%26)",
            "group_4 library [pd_op.matmul] (%16, %11) -> (%23)",
            "group_5 fused [pd_op.add, pd_op.reshape, pd_op.transpose] (%23, %10) -> (%28)",
            "group_6 library [pd_op.matmul] (%29, %26) -> (%30)",
            "group_7 fused [pd_op.max, pd_op.subtract, pd_op.full, pd_op.maximum,"
            " pd_op.exp, pd_op.full, pd_op.sum, pd_op.divide,"
            " pd_op.multiply] (%30) -> (%39)",
            "group_8 library [pd_op.matmul] (%39, %28) -> (%40)",
            "group_9 fused [pd_op.transpose, pd_op.reshape] (%40) -> (%42)",
            "group_10 library [pd_op.matmul] (%42, %9) -> (%43)",
            "group_11 fused [pd_op.add, pd_op.add, pd_op.sum, pd_op.full, pd_op.divide,"
            " pd_op.square, pd_op.sum, pd_op.divide, pd_op.square, pd_op.subtract,"
            " pd_op.full, pd_op.maximum, pd_op.subtract, pd_op.full, pd_op.add,"
            " pd_op.rsqrt, pd_op.multiply, pd_op.multiply, pd_op.add] (%43, %8, %16, %3,"
            " %2) -> (%62)",
            "group_12 library [pd_op.matmul] (%62, %7) -> (%63)",
            "group_13 fused [pd_op.add, pd_op.relu] (%63, %6) -> (%65)",
            "group_14 library [pd_op.matmul] (%65, %5) -> (%66)",
            "group_15 fused [pd_op.add, pd_op.add, pd_op.sum, pd_op.full, pd_op.divide,"
            " pd_op.square, pd_op.sum, pd_op.divide, pd_op.square, pd_op.subtract,"
            " pd_op.full, pd_op.maximum, pd_op.subtract, pd_op.full, pd_op.add,"
            " pd_op.rsqrt, pd_op.multiply, pd_op.multiply, pd_op.add] (%66, %4, %62, %1,"
            " %0) -> (%85)",
        ]
    )
    _, groups = fused(FIXTURES / "models" / "transformer_encoder")
    patterns = {g.name: g.reduce_pattern for g in groups if g.reduce_pattern}
    assert patterns == {
        "group_7": ReducePattern.of((2, 2, 5, 5), (3,)),
        "group_11": ReducePattern.of((2, 5, 16), (2,)),
        "group_15": ReducePattern.of((2, 5, 16), (2,)),
    }


# ---- what must not fuse -------------------------------------------------------------------


def build(make, shapes=((4, 4),)):
    """A program of data `x0, x1, ...` of `shapes` and the ops `make(net, *xs)` adds."""
    program = Program()
    net = Net(program)
    xs = [net.data(f"x{i}", shape, F32) for i, shape in enumerate(shapes)]
    make(net, *xs)
    return program


def rsum(net, x, axes, keepdim):
    return net.op("sum", x, net.ints(axes), keepdim=keepdim, dtype=UNDEF)


def test_dropped_row_broadcast_against_the_wrong_dims_does_not_fuse():
    # sum over dim 1 of a 4x4 without keepdim is [4]; numpy lines it up with dim 1, so
    # x - s[j] reads another row's sum: the subtract gets a group of its own.
    program = build(lambda n, x: n.op("subtract", x, rsum(n, x, [1], False)))
    assert groups_text(program) == "\n".join(
        [
            "group_0 fused [pd_op.sum] (%0) -> (%1)",
            "group_1 fused [pd_op.subtract] (%0, %1) -> (%2)",
        ]
    )


def test_dropped_column_broadcast_is_aligned_and_fuses():
    # the same shapes reduced over dim 0: s[j] is the j-th column's own value
    program = build(lambda n, x: n.op("subtract", x, rsum(n, x, [0], False)))
    assert groups_text(program) == ("group_0 fused [pd_op.sum, pd_op.subtract] (%0) -> (%2)")


def test_two_reductions_over_different_axes_of_one_input_stay_apart():
    # (the add joins the second: it reads the first's column sums as an input)
    def make(n, x):
        n.op("add", rsum(n, x, [0], True), rsum(n, x, [1], True))

    assert groups_text(build(make)) == "\n".join(
        [
            "group_0 fused [pd_op.sum] (%0) -> (%2)",
            "group_1 fused [pd_op.sum, pd_op.add] (%0, %2) -> (%3)",
        ]
    )


def test_argmax_fuses_its_producers_but_not_its_consumers():
    def make(n, x):
        index = n.op("argmax", n.op("exp", x), n.scalar(1, I64), keepdims=True, dtype=I64)
        n.op("add", n.op("cast", index, dtype=F32), x)

    program = build(make, [(4, 6)])
    assert groups_text(program, with_arg_reductions) == "\n".join(
        [
            "group_0 fused [pd_op.exp, pd_op.argmax] (%0) -> (%2)",
            "group_1 fused [pd_op.cast, pd_op.add] (%2, %0) -> (%4)",
        ]
    )
    assert group_program(program, with_arg_reductions)[0].reduce_pattern == (
        ReducePattern.of((4, 6), (1,))
    )


def test_argmax_does_not_share_a_group_with_another_reduction():
    def make(n, x):
        n.op("argmax", x, n.scalar(1, I64), keepdims=False, dtype=I64)
        n.op("max", x, n.ints([1]), keepdim=False)

    assert groups_text(build(make, [(4, 6)]), with_arg_reductions) == "\n".join(
        [
            "group_0 fused [pd_op.argmax] (%0) -> (%1)",
            "group_1 fused [pd_op.max] (%0) -> (%2)",
        ]
    )


def test_no_cycle_through_a_library_matmul():
    # exp -> sum -> divide is a softmax; matmul reads exp and the add reads both the
    # divide and the matmul: the add in the softmax's group would need the kernel to
    # run before and after the matmul.
    def make(n, x, w):
        e = n.op("exp", x)
        soft = n.op("divide", e, rsum(n, e, [1], True))
        n.op("add", soft, n.op("matmul", e, w))

    assert groups_text(build(make, [(4, 4), (4, 4)])) == "\n".join(
        [
            "group_0 fused [pd_op.exp, pd_op.sum, pd_op.divide] (%0) -> (%2, %4)",
            "group_1 library [pd_op.matmul] (%2, %1) -> (%5)",
            "group_2 fused [pd_op.add] (%4, %5) -> (%6)",
        ]
    )


def test_column_reduction_consumer_off_its_row_does_not_fuse():
    # the column sums [1, 4] transposed to [4, 1] scale the rows: a transpose of a row
    # value reads other columns' results
    def make(n, x):
        s = rsum(n, x, [0], True)
        n.op("multiply", x, n.op("transpose", s, perm=[1, 0]))

    assert groups_text(build(make)) == "\n".join(
        [
            "group_0 fused [pd_op.sum] (%0) -> (%1)",
            "group_1 fused [pd_op.transpose, pd_op.multiply] (%1, %0) -> (%3)",
        ]
    )


def test_column_reduction_consumers_on_their_row_fuse():
    # the column sums [1, 4] scale every column of x: aligned, one group, a column pattern
    def make(n, x):
        s = rsum(n, x, [0], True)
        n.op("multiply", x, n.op("reciprocal", s))

    program = build(make, [(8, 4)])
    assert groups_text(program) == (
        "group_0 fused [pd_op.sum, pd_op.reciprocal, pd_op.multiply] (%0) -> (%3)"
    )
    (group,) = group_program(program)
    assert not group.reduce_pattern.innermost and group.reduce_pattern.rows == 4


def test_row_reshape_fuses_but_a_reshape_to_a_non_row_form_does_not():
    def make(n, x):
        mean = rsum(n, x, [1], False)  # [4]
        n.op("reshape", mean, n.ints([4, 1]))  # a row form to a row form
        n.op("reshape", mean, n.ints([2, 2]))  # [2, 2] is no row form of 4x6 over [1]

    assert groups_text(build(make, [(4, 6)])) == "\n".join(
        [
            "group_0 fused [pd_op.sum, pd_op.reshape] (%0) -> (%1, %2)",
            "group_1 fused [pd_op.reshape] (%1) -> (%3)",
        ]
    )


def test_a_reduction_reading_another_pattern_stays_apart():
    # a row sum of the column maxima: different shapes, different patterns
    def make(n, x):
        rsum(n, n.op("max", x, n.ints([0]), keepdim=False), [0], False)

    assert groups_text(build(make, [(4, 6)])) == "\n".join(
        [
            "group_0 fused [pd_op.max] (%0) -> (%1)",
            "group_1 fused [pd_op.sum] (%1) -> (%2)",
        ]
    )


def test_check_row_invariant_says_why():
    def make(n, x):
        s = rsum(n, x, [1], False)
        n.op("subtract", x, s)
        n.op("transpose", n.op("unsqueeze", s, n.ints([1])), perm=[1, 0])

    program = build(make)
    PassManager.from_names(KEEP_COMPOSITES).run(program)
    ops = [op for op in program.block if op.name != "pd_op.data"]
    sum_, subtract, unsqueeze, transpose = ops
    assert check_row_invariant([sum_, unsqueeze]) is None
    assert check_row_invariant([sum_, subtract]) == (
        "pd_op.subtract reads a row value of shape (4,) off its row into [4, 4]"
    )
    assert check_row_invariant([sum_, unsqueeze, transpose]) == (
        "pd_op.transpose (Injective) reads a reduction result"
    )
    assert make_group("g", [sum_, unsqueeze], program).reduce_pattern == (
        ReducePattern.of((4, 4), (1,))
    )
    assert make_group("g", [subtract], program).reduce_pattern is None


# ---- horizontal fusion --------------------------------------------------------------------


def test_elementwise_siblings_of_one_input_fuse():
    def make(n, x):
        n.op("relu", x)
        n.op("exp", x)

    assert groups_text(build(make)) == ("group_0 fused [pd_op.relu, pd_op.exp] (%0) -> (%1, %2)")


def test_siblings_of_different_sizes_stay_apart():
    def make(n, x):
        n.op("relu", x)
        n.op("tile", x, n.ints([2, 1]))

    assert groups_text(build(make)) == "\n".join(
        [
            "group_0 fused [pd_op.relu] (%0) -> (%1)",
            "group_1 fused [pd_op.tile] (%0) -> (%2)",
        ]
    )


def test_reductions_of_one_pattern_fuse_horizontally():
    def make(n, x):
        rsum(n, x, [1], False)
        n.op("max", x, n.ints([-1]), keepdim=True)
        n.op("min", x, n.ints([0]), keepdim=True)

    program = build(make, [(4, 6)])
    assert groups_text(program) == "\n".join(
        [
            "group_0 fused [pd_op.sum, pd_op.max] (%0) -> (%1, %2)",
            "group_1 fused [pd_op.min] (%0) -> (%3)",
        ]
    )


def test_a_reduction_and_an_elementwise_sibling_stay_apart():
    def make(n, x):
        rsum(n, x, [1], False)
        n.op("exp", x)

    assert groups_text(build(make, [(4, 6)])) == "\n".join(
        [
            "group_0 fused [pd_op.sum] (%0) -> (%1)",
            "group_1 fused [pd_op.exp] (%0) -> (%2)",
        ]
    )


def test_horizontal_merge_never_closes_a_cycle():
    # relu(x) feeds a matmul whose result exp(x)'s consumer reads: relu and exp are
    # siblings of x, but merging relu into the add's group would wrap the matmul
    def make(n, x):
        r = n.op("relu", x)
        n.op("add", n.op("exp", x), n.op("matmul", r, r))

    assert groups_text(build(make)) == "\n".join(
        [
            "group_0 fused [pd_op.relu] (%0) -> (%1)",
            "group_1 library [pd_op.matmul] (%1) -> (%3)",
            "group_2 fused [pd_op.exp, pd_op.add] (%0, %3) -> (%4)",
        ]
    )


# ---- the placeholder's properties, kept ----------------------------------------------------


def test_mlp_groups_around_library_matmuls_when_composites_stay_whole():
    program = cinn_py.load(PROGRAMS / "mlp_static" / "program.pir")
    assert groups_text(program, by_trait, KEEP_COMPOSITES) == "\n".join(
        [
            "group_0 library [pd_op.matmul] (%4, %3) -> (%5)",
            "group_1 fused [pd_op.add, pd_op.gelu] (%5, %2) -> (%7)",
            "group_2 library [pd_op.matmul] (%7, %1) -> (%8)",
            "group_3 fused [pd_op.add] (%8, %0) -> (%9)",
            "group_4 library [pd_op.softmax] (%9) -> (%10)",
        ]
    )


CYCLE = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,4],stop_gradient:[true]} : () -> tensor<4x4xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    (%2) = "pd_op.matmul" (%1, %1) {transpose_x:false,transpose_y:false} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    (%3) = "pd_op.exp" (%1) {} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    (%4) = "pd_op.add" (%3, %2) {} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
}
"""


def test_no_group_closes_a_cycle_through_a_library_op():
    # relu -> matmul -> add and relu -> exp -> add: relu, exp and add in one group would
    # have to run before and after the matmul. exp joins relu; add stays apart, and
    # recomputes exp(relu(x)) from x rather than read it from the first kernel (which
    # then no longer computes exp).
    program = parse_program(CYCLE)
    assert groups_text(program, by_trait) == "\n".join(
        [
            "group_0 fused [pd_op.relu] (%0) -> (%1)",
            "group_1 library [pd_op.matmul] (%1) -> (%2)",
            "group_2 fused [pd_op.relu, pd_op.exp, pd_op.add] (%0, %2) -> (%4)",
        ]
    )


def test_vector_glue_joins_the_group_it_serves():
    program = cinn_py.load(PROGRAMS / "split_family" / "program.pir")
    PassManager.from_names(FUSION_PASSES).run(program)
    groups = group_program(program, by_trait)
    assert all(g.kind is GroupKind.FUSED for g in groups)
    names = [[op.name for op in g.ops] for g in groups]
    assert any("builtin.split" in ops and "pd_op.split" in ops for ops in names)
    for group in groups:  # inputs and outputs are tensors, never Tensor[] values
        assert all(v.type.__class__.__name__ == "DenseTensorType" for v in group.inputs)
        assert all(v.type.__class__.__name__ == "DenseTensorType" for v in group.outputs)


@pytest.mark.parametrize(
    "fixture",
    # an unknown op is grouped as an opaque op: only fixtures the parser rejects fail
    program_params(sorted(p.name for p in PROGRAMS.iterdir()), "grouping", False),
)
@pytest.mark.parametrize("is_fusible", [by_trait, None], ids=["by_trait", "can_lower"])
def test_groups_are_in_dependency_order_and_cover_every_op(fixture, is_fusible):
    program = cinn_py.load(PROGRAMS / fixture / "program.pir")
    PassManager.from_names(FUSION_PASSES).run(program)
    groups = group_program(program, is_fusible)
    defined = {
        id(r)
        for op in program.block
        if op.name in ("pd_op.data", "builtin.parameter", "builtin.constant")
        for r in op.results
    }
    grouped = set()
    for group in groups:
        for value in group.inputs:
            producer = value.defining_op
            assert id(value) in defined or producer.name.startswith("builtin."), (
                f"{group.name} reads {value!r} before it is computed"
            )
        for op in group.ops:
            grouped.add(id(op))
            defined.update(id(r) for r in op.results)
        if group.kind is GroupKind.LIBRARY:
            assert len(group.ops) == 1
        else:  # every fused group keeps the row invariant and names its pattern
            assert check_row_invariant(group.ops) is None, group
            reductions = [op for op in group.ops if op_pattern_kind(op) is REDUCTION]
            assert group.reduce_pattern == (reduce_pattern(reductions[0]) if reductions else None)
            if fixture != "dynamic_batch":  # static shapes: every reduction has a pattern
                assert (group.reduce_pattern is not None) == bool(reductions)
    computing = [
        op
        for op in program.block
        if op.name.startswith("pd_op.") and op.name not in ("pd_op.data", "pd_op.fetch")
    ]
    assert all(id(op) in grouped for op in computing)


# ---- recomputed, not passed between kernels ----------------------------------------------


def test_a_cheap_op_two_groups_read_is_copied_into_each():
    # square(x) feeds a sum over dim 1 and a sum over dim 0 (two patterns, two groups):
    # the second group recomputes it from x instead of reading the first one's output
    def make(n, x):
        sq = n.op("square", x)
        n.op("add", rsum(n, sq, [0], True), rsum(n, sq, [1], True))

    program = build(make)
    assert groups_text(program) == "\n".join(
        [
            "group_0 fused [pd_op.square, pd_op.sum] (%0) -> (%2)",
            "group_1 fused [pd_op.square, pd_op.sum, pd_op.add] (%0, %2) -> (%5)",
        ]
    )
    squares = [op for op in program.block if op.name == "pd_op.square"]
    assert len(squares) == 2 and all(len(op.result(0).users()) == 1 for op in squares)


def test_an_op_of_two_full_sized_inputs_is_passed_not_copied():
    # recomputing x0 * x1 would read two [4, 4] inputs to save reading one: passed
    def make(n, x0, x1):
        y = n.op("multiply", x0, x1)
        n.op("add", rsum(n, y, [0], True), rsum(n, y, [1], True))

    assert groups_text(build(make, ((4, 4), (4, 4)))) == "\n".join(
        [
            "group_0 fused [pd_op.multiply, pd_op.sum] (%0, %1) -> (%2, %3)",
            "group_1 fused [pd_op.sum, pd_op.add] (%2, %3) -> (%5)",
        ]
    )


def test_an_elementwise_chain_of_its_own_group_is_copied_whole():
    # square(exp(x)): the copy recomputes exp(x) too, from x (one full-sized read either way)
    def make(n, x):
        sq = n.op("square", n.op("exp", x))
        n.op("add", rsum(n, sq, [0], True), rsum(n, sq, [1], True))

    assert groups_text(build(make)) == "\n".join(
        [
            "group_0 fused [pd_op.exp, pd_op.square, pd_op.sum] (%0) -> (%3)",
            "group_1 fused [pd_op.exp, pd_op.square, pd_op.sum, pd_op.add] (%0, %3) -> (%7)",
        ]
    )


def test_a_chain_that_reads_a_reduction_of_its_own_group_is_passed_not_copied():
    # exp(x - rowsum(x)) summed over the other axis: the copy would need the row sums,
    # a reduction of the first group
    def make(n, x):
        e = n.op("exp", n.op("subtract", x, rsum(n, x, [1], True)))
        n.op("add", rsum(n, e, [0], True), rsum(n, e, [1], True))

    assert groups_text(build(make)) == "\n".join(
        [
            "group_0 fused [pd_op.sum, pd_op.subtract, pd_op.exp, pd_op.sum] (%0) -> (%3, %5)",
            "group_1 fused [pd_op.sum, pd_op.add] (%3, %5) -> (%6)",
        ]
    )


def _chain(op_name: str, count: int, dtype: DataType = DataType.FLOAT32) -> Program:
    program = Program()
    net = Net(program)
    value = net.data("x", (33, 129), dtype)
    for _ in range(count):
        value = net.op(op_name, value)
    return program


@pytest.mark.parametrize(("count", "kernels"), [(7, 1), (8, 2), (16, 3)])
def test_a_chain_that_reads_its_input_twice_splits_before_256_copies(count, kernels):
    """silu decomposes into x / (1 + exp(-x)): x read twice, so a chain of n writes the
    first x out 2^n times; past 169 (the eighth silu) the chain splits. Before, 16 were
    one kernel of 3.5 MB of CUDA C that took 73 s to build on cuda-emu."""
    program = _chain("silu", count)
    PassManager().run(program)
    groups = [g for g in group_program(program) if g.ops]
    assert len(groups) == kernels
    from cinn_py.hlir.grouping import explain_grouping

    reasons = {e.reason.split(":")[0] for e in explain_grouping(program).explanations}
    assert reasons == ({"inlined copies"} if kernels > 1 else set())


def test_written_copies_come_from_the_ops_own_lowering():
    from cinn_py.hlir.inline_copies import written_copies

    program = Program()
    net = Net(program)
    x = net.data("x", (1, 2, 9, 9), DataType.FLOAT32)
    y = net.data("y", (1, 2, 9, 9), DataType.FLOAT32)
    added = net.op("add", x, y)
    biggest = net.op("maximum", x, y)  # NaN kept: x != x ? x : (x > y ? x : y)
    net.op("pool2d", x, net.ints([5, 5]), strides=[1, 1], paddings=[2, 2])
    net.op("multiply", added, biggest)
    PassManager().run(program)  # folds the pool's kernel size into its attribute
    names = ("pd_op.add", "pd_op.maximum", "pd_op.pool2d")
    copies = {op.name: written_copies(op, program) for op in program.block if op.name in names}
    assert copies == {"pd_op.add": 1, "pd_op.maximum": 3, "pd_op.pool2d": 25}
