"""specialize_shapes: -1 dims resolved from feed shapes, types re-inferred."""

import sys
from pathlib import Path

import pytest

import cinn_py
from cinn_py.errors import FeedError, ShapeError
from cinn_py.pir.passes.infer_shapes import has_dynamic_dims, specialize_shapes
from cinn_py.pir.printer import print_type

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fixture_ops import program_params  # noqa: E402

FIXTURES = Path(__file__).parent.parent / "fixtures"


def result_types(program, op_name):
    return [print_type(op.result(0).type) for op in program.block if op.name == op_name]


def test_dynamic_batch_resolved_through_every_op():
    model = cinn_py.load(FIXTURES / "models" / "mlp")
    assert has_dynamic_dims(model)
    static = specialize_shapes(model, {"x": (3, 6)})
    assert not has_dynamic_dims(static)
    assert result_types(static, "pd_op.add") == ["tensor<3x8xf32>", "tensor<3x3xf32>"]
    assert has_dynamic_dims(model), "the input program is left as it was"


def test_matmul_batch_dims_are_broadcast_unlike_paddles_declared_type():
    program = cinn_py.load(FIXTURES / "programs" / "matmul_batch_broadcast" / "program.pir")
    assert "tensor<2x1x3x6xf32>" in result_types(program, "pd_op.matmul")
    static = specialize_shapes(program)
    assert "tensor<2x5x3x6xf32>" in result_types(static, "pd_op.matmul")
    assert "tensor<2x1x3x6xf32>" not in result_types(static, "pd_op.matmul")


def test_feed_shape_contradicting_a_static_dim():
    model = cinn_py.load(FIXTURES / "models" / "mlp")
    with pytest.raises(FeedError, match=r"feed 'x': expected shape \[-1, 6\], got shape \[3, 7\]"):
        specialize_shapes(model, {"x": (3, 7)})
    with pytest.raises(FeedError, match=r"got shape \[6\]"):
        specialize_shapes(model, {"x": (6,)})


def test_dynamic_dims_without_a_feed_shape():
    model = cinn_py.load(FIXTURES / "models" / "mlp")
    with pytest.raises(ShapeError, match=r"pd_op.data 'x' is declared tensor<-1x6xf32>"):
        specialize_shapes(model)


@pytest.mark.parametrize(
    "fixture",
    program_params(
        sorted(p.name for p in (FIXTURES / "programs").iterdir() if p.is_dir()),
        "shapes",
        needs_registered_ops=False,  # an unknown op keeps the types Paddle printed
    ),
)
def test_static_programs_keep_their_declared_types(fixture):
    program = cinn_py.load(FIXTURES / "programs" / fixture / "program.pir")
    if has_dynamic_dims(program):
        pytest.skip("dynamic dims")
    static = specialize_shapes(program)
    for old, new in zip(program.block, static.block, strict=True):
        if fixture == "matmul_batch_broadcast" and old.name == "pd_op.matmul":
            continue
        declared = [r.type for r in old.results]
        if old.name == "pd_op.batch_norm_":  # reserve_space: declared -1, computed empty
            declared[-1] = declared[-1].with_dims((0,))
        assert declared == [r.type for r in new.results], old.name


def test_specialized_programs_verify():
    """The specialised data shape is an int_array attribute, and matmul's computed
    (broadcast) type is one the verifier accepts."""
    from cinn_py.pir.verifier import verify_program

    verify_program(specialize_shapes(cinn_py.load(FIXTURES / "models" / "mlp"), {"x": (3, 6)}))
    program = cinn_py.load(FIXTURES / "programs" / "matmul_batch_broadcast" / "program.pir")
    verify_program(specialize_shapes(program))
