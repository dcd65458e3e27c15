"""pd_op.einsum: the decomposition into transpose / reshape / matmul / sum, compiled on
cuda-emu, against the reference (numpy.einsum) at odd shapes; the equations it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import UnsupportedOpError, VerifyError
from cinn_py.pir.attributes import StrAttribute
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import run_reference
from cinn_py.tolerances import compare


def _program(equation: str, shapes, dtype=DataType.FLOAT32) -> tuple[Program, list]:
    program = Program()
    b = Builder(program)
    xs = [
        b.op("pd_op.data", name=f"x{i}", shape=list(s), dtype=dtype) for i, s in enumerate(shapes)
    ]
    packed = b.create("builtin.combine", xs).result()
    out, _, _ = b.op("pd_op.einsum", packed, equation=equation)
    program.pinned_outputs = [out]
    return program, xs


CASES = [
    ("bhqd,bhkd->bhqk", [(2, 3, 7, 5), (2, 3, 1, 5)]),
    ("bhqk,bhkd->bhqd", [(1, 3, 7, 33), (1, 3, 33, 5)]),
    ("bij,bjk->bik", [(3, 7, 5), (3, 5, 1)]),
    ("ij->ji", [(7, 33)]),
    ("ij,jk->ik", [(7, 3), (3, 33)]),
    ("bi,bi->b", [(7, 33), (7, 33)]),
    ("ij,jk", [(1, 7), (7, 3)]),  # implicit output: ik
    ("abc,cbd->ad", [(3, 5, 7), (7, 5, 1)]),  # two contracted labels, merged
    ("xab,ybc->yxac", [(3, 5, 7), (1, 7, 33)]),  # a free label on each side, batch-free
    ("ij,k->ikj", [(3, 7), (5,)]),  # an outer product
    ("ijk,jl->l", [(3, 5, 7), (5, 33)]),  # i and k only in x: summed first
    ("ij->", [(7, 33)]),
    ("...ij,...jk->...ik", [(2, 3, 7, 5), (3, 5, 1)]),  # ellipsis, broadcast batch
]


@pytest.mark.parametrize("equation, shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_compiled_matches_reference(equation, shapes):
    program, _ = _program(equation, shapes)
    rng = np.random.default_rng(len(equation))
    feeds = {f"x{i}": rng.normal(size=s).astype(np.float32) for i, s in enumerate(shapes)}
    (want,) = run_reference(program, feeds)
    wide = [feeds[f"x{i}"].astype(np.float64) for i in range(len(shapes))]
    np.testing.assert_allclose(want, np.einsum(equation, *wide), rtol=1e-6, atol=1e-6)
    exe = cinn_py.compile(program, target="cuda-emu")
    (got,) = exe.run(feeds).values()
    result = compare(np.asarray(got), want)
    assert result.ok, f"{equation}: {result}"


def test_einsum_decomposes_to_one_matmul_with_transpose_flag():
    program, _ = _program("bhqd,bhkd->bhqk", [(2, 3, 7, 5), (2, 3, 1, 5)])
    PassManager().run(program)
    names = [op.name for op in program.block]
    assert "pd_op.einsum" not in names
    (matmul,) = [op for op in program.block if op.name == "pd_op.matmul"]
    assert matmul.attr("transpose_y") is True and "pd_op.transpose" not in names


def test_einsum_float16_and_int32():
    for dtype, cast in ((DataType.FLOAT16, np.float16), (DataType.INT32, np.int32)):
        program, _ = _program("bij,bjk->bik", [(3, 7, 5), (3, 5, 33)], dtype)
        rng = np.random.default_rng(1)
        feeds = {
            "x0": rng.integers(-3, 4, size=(3, 7, 5)).astype(cast),
            "x1": rng.integers(-3, 4, size=(3, 5, 33)).astype(cast),
        }
        (want,) = run_reference(program, feeds)
        (got,) = cinn_py.compile(program, target="cuda-emu").run(feeds).values()
        np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize(
    "equation, shapes, why",
    [
        ("ii->i", [(5, 5)], "label 'i' repeats in one operand (a diagonal)"),
        ("ij,jk,kl->il", [(3, 5), (5, 7), (7, 1)], "it has 3 operands (at most 2 lower)"),
    ],
)
def test_einsum_it_cannot_lower_is_an_unsupported_op_error(equation, shapes, why):
    program, _ = _program(equation, shapes)
    with pytest.raises(UnsupportedOpError) as info:
        cinn_py.compile(program, target="cuda-emu")
    message = str(info.value)
    assert "pd_op.einsum" in message and f"cannot lower equation '{equation}'" in message
    assert why in message


@pytest.mark.parametrize(
    "equation, why",
    [
        ("ij,jk->ik", "names 2 operand(s), the op has 1"),
        ("ijk->k", "operand labels 'ijk' name 3 dims of a rank-2 tensor"),
        ("ij->kk", "the output repeats label 'k'"),
        ("ij->ik", "the output label 'k' is in no operand"),
        ("i1->i", "an equation holds letters"),
    ],
)
def test_bad_equation_is_a_verify_error(equation, why):
    program, _ = _program("ij->ji", [(3, 5)])
    einsum = next(op for op in program.block if op.name == "pd_op.einsum")
    einsum.set_attribute("equation", StrAttribute.get(equation))
    with pytest.raises(VerifyError) as info:
        verify_program(program)
    assert "pd_op.einsum" in str(info.value) and why in str(info.value)


def test_label_size_clash_is_a_verify_error():
    with pytest.raises(VerifyError, match="label j has sizes 5 and 7"):
        _program("ij,jk->ik", [(3, 5), (7, 2)])
