"""The operator table (`ir/operators.py`): every binary node kind has one entry, and the
printer, the C renderer, `evaluate` and constant folding take their spellings and
values from it; the intrinsics table (`ir/intrinsics.py`) feeds codegen's accurate and
fast-math spellings."""

from __future__ import annotations

import math

import pytest

from cinn_py.backends.codegen_c import FLOAT_MATH, CRenderer
from cinn_py.backends.codegen_cuda import FAST_MATH, runtime_header
from cinn_py.backends.emu_build import INCLUDE_DIR
from cinn_py.ir import expr as e
from cinn_py.ir.evaluate import evaluate
from cinn_py.ir.intrinsics import INTRINSICS
from cinn_py.ir.operators import C_SPELLING, OPERATORS, PRINTED, c_div, c_mod, ieee_div
from cinn_py.ir.printer import print_ir
from cinn_py.ir.simplify import simplify
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.dtypes import DataType


def _leaf_kinds(base: type) -> set[type]:
    found = set()
    for kind in base.__subclasses__():
        found |= _leaf_kinds(kind) if kind.__subclasses__() else {kind}
    return found


def test_every_binary_node_kind_has_one_entry():
    assert set(OPERATORS) == _leaf_kinds(e.BinaryOp)


def test_the_spellings_come_from_the_table():
    assert CRenderer.binary_ops == C_SPELLING
    assert set(C_SPELLING) == set(OPERATORS) - {e.Min, e.Max}
    for kind, spelled in PRINTED.items():
        dtype = DataType.BOOL if issubclass(kind, e.LogicalOp) else DataType.INT32
        x, y = e.Var("x", dtype), e.Var("y", dtype)
        assert print_ir(kind(x, y)) == f"(x {spelled} y)"


@pytest.mark.parametrize(
    ("a", "b", "div", "mod"), [(7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (5, 0, 0, 0)]
)
def test_integer_division_is_cs_with_zero_for_a_zero_divisor(a, b, div, mod):
    assert (c_div(a, b), c_mod(a, b)) == (div, mod)
    assert evaluate(e.Div(e.IntImm(a), e.IntImm(b)), {}) == div
    assert structural_equal(simplify(e.Mod(e.IntImm(a), e.IntImm(b))), e.IntImm(mod))


def test_float_division_is_ieee():
    assert ieee_div(1.0, 0.0) == math.inf and math.isnan(ieee_div(0.0, 0.0))
    quarter = e.Div(e.FloatImm(1.0), e.FloatImm(4.0))
    assert evaluate(quarter, {}) == 0.25
    assert structural_equal(simplify(quarter), e.FloatImm(0.25))
    by_zero = e.Div(e.FloatImm(1.0), e.FloatImm(0.0))
    assert structural_equal(simplify(by_zero), by_zero)  # left for the GPU's IEEE answer


def test_the_intrinsics_table_feeds_codegen_and_the_interpreter():
    assert FLOAT_MATH == {n: (i.c, i.arity) for n, i in INTRINSICS.items() if not i.test}
    assert CRenderer.float_tests == {"isnan", "isinf", "isfinite"}
    assert FAST_MATH["exp"] == ("__expf", 1) and "erf" not in FAST_MATH
    emu = (INCLUDE_DIR / "cinn_emu_math.h").read_text() + runtime_header()
    for name, _ in FAST_MATH.values():  # cuda-emu defines every approximation
        assert f" {name}(" in emu, name
