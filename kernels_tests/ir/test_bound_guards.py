"""insert_bound_guards: golden IR for the loop shapes schedules make, and the isl
domain's answers on the arithmetic they use (C division, mins, symbolic sizes)."""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.ir.bound_guards import insert_bound_guards
from cinn_py.ir.expr import Buffer, Expr, IntImm, Load, Max, Min, Var
from cinn_py.ir.isl_domain import IndexDomain
from cinn_py.ir.printer import print_ir
from cinn_py.ir.stmt import (
    ArgIO,
    Argument,
    BindInfo,
    Block,
    BufferRange,
    For,
    ForType,
    IfThenElse,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Stmt,
)
from cinn_py.ir.stmt import Store as StoreStmt
from cinn_py.pir.dtypes import DataType as D

SERIAL = ForType.SERIAL


def copy_block(shape: Sequence[int], values: Sequence[Expr], name: str = "var_1"):
    """A realize of `name[iv...] = var_0[iv...]` over `shape` bound to `values`."""
    src = Buffer("var_0", D.FLOAT32, list(shape))
    dst = Buffer(name, D.FLOAT32, list(shape))
    ivs = [Var(f"i{k}_0", values[k].dtype, 0, n) for k, n in enumerate(shape)]
    block = ScheduleBlock(
        ivs,
        [BufferRange(src, ivs)],
        [BufferRange(dst, ivs)],
        name,
        StoreStmt(dst, Load(src, ivs), ivs),
    )
    return ScheduleBlockRealize(values, block), src, dst


def loops(nest: Sequence[tuple[Var, int]], body: Stmt, bind: dict[str, BindInfo] | None = None):
    """`body` inside serial loops `(var, extent)`, outermost first."""
    bind = bind or {}
    for var, extent in reversed(nest):
        body = For(var, 0, extent, SERIAL, body, bind.get(var.name))
    return body


def function(body: Stmt, src: Buffer, dst: Buffer) -> LoweredFunc:
    root = ScheduleBlockRealize((), ScheduleBlock((), (), (), "root", Block([body])))
    return LoweredFunc("fn_group_0", [Argument(src), Argument(dst, ArgIO.OUTPUT)], root)


def guarded(body: Stmt, src: Buffer, dst: Buffer) -> str:
    return print_ir(insert_bound_guards(function(body, src, dst)))


def guard_texts(func: LoweredFunc) -> list[str]:
    """The printed conditions of every IfThenElse in `func`."""
    out: list[str] = []

    def walk(node):
        if isinstance(node, IfThenElse):
            out.append(print_ir(node.condition))
        for value in node.field_values():
            items = value if isinstance(value, tuple) else (value,)
            for item in items:
                if isinstance(item, Stmt):
                    walk(item)

    walk(func.body)
    return out


i_0, i_1, i_2, i_3 = (Var(f"i_{k}") for k in range(4))


def test_exact_split_gets_no_guard_and_the_function_is_returned_as_is():
    realize, src, dst = copy_block([128], [i_0 * 32 + i_1])
    func = function(loops([(i_0, 4), (i_1, 32)], realize), src, dst)
    assert insert_bound_guards(func) is func


def test_split_100_by_32_is_guarded():
    realize, src, dst = copy_block([100], [i_0 * 32 + i_1])
    text = guarded(loops([(i_0, 4), (i_1, 32)], realize), src, dst)
    assert text == (
        "function fn_group_0 (var_0, var_1)\n"
        "ScheduleBlock(root)\n"
        "{\n"
        "  {\n"
        "    serial for (i_0, 0, 4)\n"
        "    serial for (i_1, 0, 32)\n"
        "    if ((((i_0 * 32) + i_1) < 100)) {\n"
        "      ScheduleBlock(var_1)\n"
        "      {\n"
        "        i0_0 = axis.bind(((i_0 * 32) + i_1))\n"
        "        read_buffers(var_0[i0_0(0:100)])\n"
        "        write_buffers(var_1[i0_0(0:100)])\n"
        "        var_1[i0_0] = var_0[i0_0]\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}"
    )


def test_only_the_dimension_that_can_overflow_is_guarded():
    realize, src, dst = copy_block([64, 100], [i_0, i_1 * 32 + i_2])
    func = insert_bound_guards(function(loops([(i_0, 64), (i_1, 4), (i_2, 32)], realize), src, dst))
    assert guard_texts(func) == ["(((i_1 * 32) + i_2) < 100)"]


def test_exact_fuse_of_two_dims_split_by_a_divisor_has_no_guard():
    fused = i_0 * 32 + i_1
    realize, src, dst = copy_block([4, 32], [fused / 32, fused % 32])
    func = function(loops([(i_0, 4), (i_1, 32)], realize), src, dst)
    assert insert_bound_guards(func) is func


def test_fused_2d_split_past_its_extent_guards_the_outer_dim_only():
    # (3, 50) fused to 150, split by 32 into 5 x 32 = 160: `f % 50 < 50` always holds,
    # `f / 50 < 3` fails for f >= 150.
    fused = i_0 * 32 + i_1
    realize, src, dst = copy_block([3, 50], [fused / 50, fused % 50])
    text = guarded(loops([(i_0, 5), (i_1, 32)], realize), src, dst)
    assert "if (((((i_0 * 32) + i_1) / 50) < 3)) {\n" in text
    assert text.count("if (") == 1


def test_grid_stride_shape_is_guarded_when_it_overshoots_and_not_when_exact():
    # fused = ((g * blocks + b) * threads + t) * lanes + l, the auto-scheduler's shape.
    bind = {"i_1": BindInfo.BLOCK_X, "i_2": BindInfo.THREAD_X}
    nest = [(i_1, 2), (i_2, 256), (i_0, 2), (i_3, 4)]
    value = ((i_0 * 2 + i_1) * 256 + i_2) * 4 + i_3
    realize, src, dst = copy_block([4000], [value])
    func = insert_bound_guards(function(loops(nest, realize, bind), src, dst))
    assert guard_texts(func) == ["(((((((i_0 * 2) + i_1) * 256) + i_2) * 4) + i_3) < 4000)"]
    assert "thread_bind[blockIdx.x] for (i_1, 0, 2)" in print_ir(func)
    realize, src, dst = copy_block([4096], [value])
    exact = function(loops(nest, realize, bind), src, dst)
    assert insert_bound_guards(exact) is exact


def test_unprovable_lower_bound_is_guarded_before_the_upper_one():
    realize, src, dst = copy_block([16], [i_0 - 1])
    func = insert_bound_guards(function(loops([(i_0, 18)], realize), src, dst))
    assert guard_texts(func) == ["(((i_0 - 1) >= 0) and ((i_0 - 1) < 16))"]


def test_conditions_are_anded_in_iter_var_order():
    realize, src, dst = copy_block([10, 20], [i_0, i_1])
    func = insert_bound_guards(function(loops([(i_0, 16), (i_1, 32)], realize), src, dst))
    assert guard_texts(func) == ["((i_0 < 10) and (i_1 < 20))"]


def test_a_second_run_adds_nothing():
    realize, src, dst = copy_block([100], [i_0 * 32 + i_1])
    once = insert_bound_guards(function(loops([(i_0, 4), (i_1, 32)], realize), src, dst))
    assert insert_bound_guards(once) is once


def test_the_else_branch_knows_the_condition_failed():
    # if (i_0 < 50) {} else { block at i_0 - 50 }: the else branch has i_0 >= 50.
    realize, src, dst = copy_block([50], [i_0 - 50])
    body = For(i_0, 0, 100, SERIAL, IfThenElse(i_0.lt(50), Block([]), realize))
    func = function(body, src, dst)
    assert insert_bound_guards(func) is func


def test_loop_under_a_zero_extent_runs_nowhere_and_needs_no_guard():
    realize, src, dst = copy_block([4], [i_0 + 10])
    func = function(loops([(i_0, 0)], realize), src, dst)
    assert insert_bound_guards(func) is func


def test_non_constant_extent_from_a_load_keeps_the_guard():
    count = Buffer("var_9", D.INT32, [1])
    realize, src, dst = copy_block([100], [i_0])
    body = For(i_0, 0, Load(count, [IntImm(0)]), SERIAL, realize)
    func = insert_bound_guards(function(body, src, dst))
    # the loop still starts at 0, so only its end is unknown
    assert guard_texts(func) == ["(i_0 < 100)"]


def test_symbolic_extent_uses_the_var_bounds():
    n_bounded = Var("n", lower=1, upper=101)
    realize, src, dst = copy_block([100], [i_0])
    func = function(For(i_0, 0, n_bounded, SERIAL, realize), src, dst)
    assert insert_bound_guards(func) is func
    n_free = Var("n")
    func = insert_bound_guards(function(For(i_0, 0, n_free, SERIAL, realize), src, dst))
    assert guard_texts(func) == ["(i_0 < 100)"]


def test_non_affine_iter_value_keeps_the_guard():
    realize, src, dst = copy_block([64], [i_0 * i_1])
    func = insert_bound_guards(function(loops([(i_0, 8), (i_1, 8)], realize), src, dst))
    assert guard_texts(func) == ["(((i_0 * i_1) >= 0) and ((i_0 * i_1) < 64))"]


def test_int64_indices():
    a, b = Var("i_0", D.INT64), Var("i_1", D.INT64)
    realize, src, dst = copy_block([3_000_000_000], [a * 1024 + b])
    func = insert_bound_guards(function(loops([(a, 2_929_688), (b, 1024)], realize), src, dst))
    assert guard_texts(func) == ["(((i_0 * 1024ll) + i_1) < 3000000000ll)"]


def test_nested_block_sees_the_loops_of_the_outer_block():
    inner, src, dst = copy_block([100], [i_0 * 32 + i_1])
    outer_iv = Var("o_0", lower=0, upper=4)
    outer = ScheduleBlockRealize(
        [i_0], ScheduleBlock([outer_iv], [], [], "outer", For(i_1, 0, 32, SERIAL, inner))
    )
    func = insert_bound_guards(function(For(i_0, 0, 4, SERIAL, outer), src, dst))
    assert guard_texts(func) == ["(((i_0 * 32) + i_1) < 100)"]


def test_domain_uses_c_division_and_remainder():
    i = Var("i")
    domain = IndexDomain([For(i, -10, 20, SERIAL, Block([]))])
    # C truncates: -9 / 4 == -2 (floor would give -3); -9 % 4 == -1 (floor mod gives 3).
    assert domain.always((i / 4).ge(-2))
    assert not domain.always((i / 4).ge(-1))
    assert domain.always((i % 4).gt(-4))
    assert not domain.always((i % 4).ge(0))
    assert domain.always(Min(i, IntImm(3)).lt(4))
    assert not domain.always(Max(i, IntImm(3)).lt(4))


def test_domain_proves_nothing_about_a_var_it_was_not_built_with():
    i, n = Var("i"), Var("n", lower=0, upper=4)
    domain = IndexDomain([For(i, 0, 4, SERIAL, Block([]))])
    assert domain.always(i.lt(4))
    assert not domain.always(n.lt(4))
    assert IndexDomain([For(i, 0, 4, SERIAL, Block([]))], exprs=[n]).always(n.lt(4))


def test_domain_shadowed_loop_var_keeps_only_the_inner_range():
    i = Var("i")
    inner = For(i, 0, 8, SERIAL, Block([]))
    outer = For(i, 100, 8, SERIAL, inner)
    domain = IndexDomain([outer, inner])
    assert domain.always(i.lt(8))
