"""`ir.dim_guards`: the checks a schedule's reads of the dims record, and what they say
at other dims. A check must hold exactly where the decision comes out the same."""

from __future__ import annotations

import math

import pytest

from cinn_py.ir import dim_guards
from cinn_py.ir.dim_guards import GuardedInt, UnrecordedRead, pow2_at_least, pow2_at_most
from cinn_py.ir.dim_values import bound_dims, concrete
from cinn_py.ir.expr import Buffer, IntImm, Mul, Var
from cinn_py.ir.isl_domain import IndexDomain
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.stmt import For, ForType, Store
from cinn_py.pir.dtypes import DataType as D

S0 = Var("S0", D.INT32, 1)
S1 = Var("S1", D.INT32, 1)
ROWS = Mul(S0, S1)


def read(expr, values):
    """`concrete(expr)` at `values`, recorded: (the GuardedInt, the log)."""
    with bound_dims(values), dim_guards.recording() as log:
        value = concrete(expr)
    return value, log


def test_concrete_is_a_guarded_int_only_while_recording():
    with bound_dims({"S0": 2, "S1": 7}):
        assert concrete(ROWS) == 14 and type(concrete(ROWS)) is int
        assert concrete(IntImm(5)) == 5
    rows, log = read(ROWS, {"S0": 2, "S1": 7})
    assert isinstance(rows, GuardedInt) and rows.value == 14 and len(log) == 0


def test_a_comparison_records_its_outcome_and_holds_where_it_comes_out_the_same():
    with bound_dims({"S0": 2, "S1": 7}), dim_guards.recording() as log:
        rows = concrete(ROWS)
        threads = min(256, rows * 32)  # 448 > 256: records 448 < 256 is False
        assert threads == 256 and type(threads) is int
    assert len(log) == 1
    assert log.holds({"S0": 8, "S1": 7})  # 1792 rows: 256 still
    assert log.holds({"S0": 1, "S1": 8})  # exactly 256: `min` keeps its first
    assert not log.holds({"S0": 1, "S1": 7})  # 224 < 256: another outcome


def test_arithmetic_keeps_the_expression():
    with bound_dims({"S0": 3, "S1": 5}), dim_guards.recording() as log:
        rows = concrete(ROWS)
        blocks = -(-rows // 8)  # ceil(15 / 8) = 2
        spare = (rows % 4) * 2 - 1 + 10  # (15 % 4) * 2 - 1 + 10 = 15
        assert blocks == 2 and spare == 15 and 2 * blocks - 1 == 3
    # the checks: ceil(rows / 8) == 2, spare == 15, 2 * blocks - 1 == 3
    assert log.holds({"S0": 1, "S1": 15})  # same rows
    assert not log.holds({"S0": 4, "S1": 4})  # 16 rows: two blocks still, spare differs


def test_plain_numbers_are_recorded_exactly():
    for convert in (int, hash, str, repr, float, lambda g: f"{g}", lambda g: [0] * 20 and range(g)):
        with bound_dims({"S0": 2, "S1": 7}), dim_guards.recording() as log:
            convert(concrete(ROWS))
        assert len(log) == 1, convert
        assert log.holds({"S0": 7, "S1": 2}) and not log.holds({"S0": 3, "S1": 7}), convert


def test_a_number_put_into_the_ir_is_recorded_exactly():
    with bound_dims({"S0": 2, "S1": 7}), dim_guards.recording() as log:
        node = IntImm(concrete(ROWS))
        loop = For(Var("i", D.INT32), 0, concrete(S1), ForType.SERIAL, Store_(node))
    assert node.value == 14 and type(node.value) is int
    assert isinstance(loop.extent, IntImm) and loop.extent.value == 7
    assert log.holds({"S0": 2, "S1": 7}) and not log.holds({"S0": 2, "S1": 8})
    assert not log.holds({"S0": 1, "S1": 7})


def Store_(value):  # noqa: N802 - a tiny statement for a loop body
    buffer = Buffer("out", D.INT32, [1])
    return Store(buffer, value, [IntImm(0)])


def test_what_it_cannot_record_is_an_error():
    rows, _ = read(ROWS, {"S0": 2, "S1": 7})
    with pytest.raises(UnrecordedRead):
        rows & 1  # noqa: B018
    with pytest.raises(UnrecordedRead, match="bit_length of a number read from the dims"):
        rows.bit_length()
    with pytest.raises(UnrecordedRead):
        rows * 0.5  # noqa: B018
    with pytest.raises(UnrecordedRead):
        round(rows)
    with pytest.raises(UnrecordedRead):
        rows**2  # noqa: B018


def test_math_with_index_records_exactly():
    with bound_dims({"S0": 2, "S1": 8}), dim_guards.recording() as log:
        assert math.gcd(concrete(ROWS), 12) == 4
    assert log.holds({"S0": 4, "S1": 4}) and not log.holds({"S0": 2, "S1": 10})


@pytest.mark.parametrize("rows", [1, 2, 3, 5, 8, 9, 1000])
def test_powers_of_two_record_only_the_powers_they_pass(rows):
    want_least = 1 << (rows - 1).bit_length() if rows > 1 else 1
    want_most = 1 << (rows.bit_length() - 1)
    with bound_dims({"S0": rows, "S1": 1}), dim_guards.recording() as log:
        assert pow2_at_least(concrete(ROWS)) == want_least == pow2_at_least(rows)
        assert pow2_at_most(concrete(ROWS)) == want_most == pow2_at_most(rows)
        assert pow2_at_least(concrete(ROWS), 8) == min(want_least, 8)
    for other in range(1, 1100):
        same = (1 << (other - 1).bit_length() if other > 1 else 1) == want_least and 1 << (
            other.bit_length() - 1
        ) == want_most
        assert log.holds({"S0": other, "S1": 1}) == same, other


def test_a_capped_power_of_two_is_one_outcome_past_its_cap():
    with bound_dims({"S0": 9, "S1": 1}), dim_guards.recording() as log:
        assert pow2_at_least(concrete(ROWS), 8) == 8
    assert all(log.holds({"S0": n, "S1": 1}) for n in range(5, 5000, 7))
    assert not log.holds({"S0": 4, "S1": 1})


def test_a_row_pattern_keeps_guarded_dims():
    rows, log = read(S0, {"S0": 6, "S1": 1})
    with dim_guards.recording(log):
        pattern = RowPattern((rows, 128), (1,))
        assert pattern.rows > 4  # recorded
    assert isinstance(pattern.shape[0], GuardedInt) and len(log) == 1
    assert log.holds({"S0": 5, "S1": 1}) and not log.holds({"S0": 4, "S1": 1})


def test_a_derived_binding_is_checked_at_its_derivation():
    def aligned(values):
        return {**values, "S1": max(4, values["S1"] // 4 * 4)}

    with bound_dims({"S0": 1, "S1": 10}), dim_guards.recording() as log:
        plain = concrete(S1)
        with bound_dims(aligned({"S0": 1, "S1": 10})), dim_guards.derived(aligned):
            assert concrete(S1) == 8
            assert concrete(S1) < plain  # 8 < 10, each read where it was bound
            assert concrete(S1) == 8  # exactly
    assert log.holds({"S0": 1, "S1": 11})  # aligned 8 < 11
    assert not log.holds({"S0": 1, "S1": 8})  # aligned 8, 8 < 8 is False
    assert not log.holds({"S0": 1, "S1": 13})  # aligned 12


def _index_loop(extent):
    i = Var("i", D.INT32)
    return i, For(i, 0, extent, ForType.SERIAL, Store_(IntImm(0)))


def test_an_index_domain_proof_with_pinned_dims_is_asked_again_at_new_dims():
    i, loop = _index_loop(ROWS)
    with bound_dims({"S0": 2, "S1": 7}), dim_guards.recording() as log:
        domain = IndexDomain([loop])
        assert domain.always(i.lt(IntImm(100)))  # 14 rows: true at these dims only
    assert len(log) == 1
    assert log.holds({"S0": 10, "S1": 10})  # 100 rows: i < 100 still
    assert not log.holds({"S0": 10, "S1": 11})


def test_a_proof_that_holds_at_any_dims_records_nothing():
    i, loop = _index_loop(ROWS)
    with bound_dims({"S0": 2, "S1": 7}), dim_guards.recording() as log:
        domain = IndexDomain([loop])
        assert domain.always(i.ge(IntImm(0)))  # true whatever S0 * S1 is
        assert not domain.always(i.lt(IntImm(5)))  # false here: asked again later
    assert len(log) == 1
    assert log.holds({"S0": 1, "S1": 6}) and not log.holds({"S0": 1, "S1": 5})


def test_an_index_domain_bound_is_asked_again():
    i, loop = _index_loop(ROWS)
    with bound_dims({"S0": 2, "S1": 7}), dim_guards.recording() as log:
        assert IndexDomain([loop], exprs=[i]).bounds(i) == (0, 13)
    assert log.holds({"S0": 7, "S1": 2}) and not log.holds({"S0": 2, "S1": 8})


def test_nothing_is_recorded_outside_recording():
    with bound_dims({"S0": 2, "S1": 7}):
        rows = GuardedInt(dim_guards.Leaf(ROWS, None), 14)
        assert rows > 3 and int(rows) == 14  # no log: nothing to record into
    assert not dim_guards.active()


def test_with_the_dims_free_products_and_divisions_by_dims_are_opaque_terms():
    i, loop = _index_loop(Mul(Mul(S0, IntImm(2)), S1))  # i < 2 * S0 * S1
    row, col = i / S1, i % S1
    domain = IndexDomain([loop], exprs=[row, col])  # no dims pinned
    assert domain.always(row.ge(IntImm(0))) and domain.always(col.ge(IntImm(0)))
    assert domain.always(col.lt(S1))  # a remainder stays under its divisor
    assert domain.always(i.lt(Mul(Mul(S1, S0), IntImm(2))))  # one term for S0 * S1
    assert not domain.always(row.lt(S0))  # true, but needs what is abstracted away
    assert not domain.always(i.lt(IntImm(100)))


def test_a_proof_with_pinned_dims_that_needs_no_pins_records_nothing():
    i, loop = _index_loop(ROWS)
    with bound_dims({"S0": 2, "S1": 7}), dim_guards.recording() as log:
        domain = IndexDomain([loop], exprs=[i / S1, i % S1])
        assert domain.always((i / S1).ge(IntImm(0)))
        assert domain.always((i % S1).lt(S1))
        assert domain.always((i / S1).lt(S0))  # needs the pins: asked again
    assert len(log) == 1 and log.holds({"S0": 100, "S1": 3})
