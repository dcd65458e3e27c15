"""Why groups stayed apart (`explain_grouping`, `cinn-py groups --explain`): one
`FusionExplanation` per pair of groups a value links, naming the rule that refused the
merge; grouping itself is unchanged by explaining it."""

from op_cases import Net

from cinn_py.hlir.group import describe_groups
from cinn_py.hlir.grouping import explain_grouping, group_program
from cinn_py.hlir.naming import NameTable
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program

F32, I64, UNDEF = DataType.FLOAT32, DataType.INT64, DataType.UNDEFINED
FUSION_PASSES = [
    "fold_mutable_attributes",
    "decompose_composites",
    "constant_folding",
    "common_subexpression_elimination",
    "dead_code_elimination",
]
LIBRARY = "pd_op.matmul is a library op (no generated kernel: the target's library call runs it)"


def build(make, shapes=((4, 4),)):
    program = Program()
    net = Net(program)
    xs = [net.data(f"x{i}", shape, F32) for i, shape in enumerate(shapes)]
    make(net, *xs)
    PassManager.from_names(FUSION_PASSES).run(program)
    return program


def rsum(net, x, axes, keepdim):
    return net.op("sum", x, net.ints(axes), keepdim=keepdim, dtype=UNDEF)


def explained(program):
    """(kind, first, second, producer/reader op, consumer/reader op, value, reason) rows."""
    names = NameTable(program)
    return [
        (e.kind, e.first, e.second, e.ops[0].name, e.ops[1].name, names.printed(e.value), e.reason)
        for e in explain_grouping(program).explanations
    ]


def test_explaining_gives_the_same_groups():
    def make(n, x, w):
        e = n.op("exp", x)
        n.op("add", n.op("divide", e, rsum(n, e, [1], True)), n.op("matmul", e, w))

    one, two = build(make, [(4, 4), (4, 4)]), build(make, [(4, 4), (4, 4)])
    grouping = explain_grouping(one)
    assert describe_groups(grouping.groups, NameTable(one).printed) == describe_groups(
        group_program(two), NameTable(two).printed
    )


def test_a_row_value_read_off_its_row():
    program = build(lambda n, x: n.op("subtract", x, rsum(n, x, [1], False)))
    assert explained(program) == [
        (
            "vertical",
            "group_0",
            "group_1",
            "pd_op.sum",
            "pd_op.subtract",
            "%1",
            "row invariant: pd_op.subtract reads a row value of shape (4,) off its row into [4, 4]",
        ),
        (
            "horizontal",
            "group_0",
            "group_1",
            "pd_op.sum",
            "pd_op.subtract",
            "%0",
            "horizontal fusion needs both siblings or neither to reduce",
        ),
    ]


def test_a_cycle_through_a_library_matmul_names_its_group():
    def make(n, x, w):
        e = n.op("exp", x)
        n.op("add", n.op("divide", e, rsum(n, e, [1], True)), n.op("matmul", e, w))

    rows = explained(build(make, [(4, 4), (4, 4)]))
    assert [(kind, a, b, why) for kind, a, b, _, _, _, why in rows] == [
        ("vertical", "group_0", "group_1", LIBRARY),
        ("vertical", "group_0", "group_2", "would create a cycle through group_1 (pd_op.matmul)"),
        ("vertical", "group_1", "group_2", LIBRARY),
    ]


def test_reductions_of_two_patterns():
    program = build(lambda n, x: n.op("add", rsum(n, x, [0], True), rsum(n, x, [1], True)))
    assert [row[-1] for row in explained(program)] == [
        "row invariant: reductions with different patterns",
        "sibling reductions of different patterns (reduce 4x4 over [0] vs reduce 4x4 over [1])",
    ]


def test_an_argmax_result_read_in_its_group():
    def make(n, x):
        index = n.op("argmax", n.op("exp", x), n.scalar(1, I64), keepdims=True, dtype=I64)
        n.op("add", n.op("cast", index, dtype=F32), x)

    rows = explained(build(make, [(4, 6)]))
    assert rows[0][3:] == (
        "pd_op.argmax",
        "pd_op.cast",
        "%2",
        "row invariant: pd_op.cast reads an argmax / argmin result",
    )


def test_siblings_of_different_sizes():
    def make(n, x):
        n.op("relu", x)
        n.op("tile", x, n.ints([2, 1]))

    assert explained(build(make)) == [
        (
            "horizontal",
            "group_0",
            "group_1",
            "pd_op.relu",
            "pd_op.tile",
            "%0",
            "siblings whose outputs have different element counts (16 vs 32)",
        )
    ]


def test_a_horizontal_merge_that_would_wrap_a_library_op():
    def make(n, x):
        r = n.op("relu", x)
        n.op("add", n.op("exp", x), n.op("matmul", r, r))

    rows = explained(build(make))
    assert ("horizontal", "group_0", "group_2") == rows[-1][:3]
    assert rows[-1][-1] == "would create a cycle through group_1 (pd_op.matmul)"


def test_one_group_explains_nothing():
    program = build(lambda n, x: n.op("exp", n.op("relu", x)))
    assert explained(program) == []
