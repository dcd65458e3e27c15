"""The PIR core: uniquing, use lists, builder, verifier, passes, clone."""

from __future__ import annotations

import pytest

from cinn_py.errors import VerifyError
from cinn_py.pir import attributes as A
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16
from cinn_py.pir.op_def import ArrayOf, OpDef, attr, operand, register_ops
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes import PassManager, eliminate_dead_code, fold_mutable_attributes
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType, ElementType, VectorType, f32, i64
from cinn_py.pir.verifier import verify_program


def _same_shape(ctx):
    return [ctx.tensor(0)]


def _reshape_like(ctx):
    shape = ctx.constant("shape")
    source = ctx.tensor("x")
    return [source.with_dims(shape if shape is not None else [-1])]


def _const(ctx):  # a constant producer the fold pass does not know
    return [DenseTensorType.get(DataType.INT64, [len(ctx.attr("value"))])]


register_ops(
    "coretest",
    [
        OpDef("coretest.unary", operands=(operand("x"),), infer_meta=_same_shape),
        OpDef(
            "coretest.reshape",
            operands=(operand("x"), operand("shape", mutable_attr="shape")),
            attributes=(attr("shape", A.IntArrayAttribute, None),),
            infer_meta=_reshape_like,
        ),
        OpDef(
            "coretest.const",
            attributes=(attr("value", ArrayOf(A.Int64Attribute)),),
            infer_meta=_const,
        ),
        OpDef(
            "coretest.scaled",
            operands=(operand("x"),),
            attributes=(attr("factor", A.FloatAttribute, 1.0), attr("name", A.StrAttribute)),
            infer_meta=_same_shape,
        ),
    ],
)


def _param(builder: Builder, name: str, dims=(2, 3), dtype=DataType.FLOAT32):
    return builder.create(
        "builtin.parameter",
        [],
        {"parameter_name": name},
        [DenseTensorType.get(dtype, dims)],
    ).result()


def test_types_are_uniqued():
    a = DenseTensorType.get(DataType.FLOAT32, [2, -1])
    b = DenseTensorType.get(ElementType.get(DataType.FLOAT32), (2, -1))
    assert a is b
    assert a is not DenseTensorType.get(DataType.FLOAT32, [2, 3])
    assert VectorType.get([a, a]) is VectorType.get((a, a))
    assert DenseTensorType.get(DataType.FLOAT32, []).rank == 0
    assert repr(a) == "tensor<2x-1xf32>"
    with pytest.raises(AttributeError):
        a.dims = (1,)


def test_attributes_are_uniqued_and_typed():
    assert A.Int32Attribute.get(3) is A.Int32Attribute.get(3)
    assert A.Int32Attribute.get(3) is not A.Int64Attribute.get(3)
    assert A.DoubleAttribute.get(0.0) is not A.DoubleAttribute.get(-0.0)
    assert A.FloatAttribute.get(0.1).value == pytest.approx(0.1, rel=1e-7)
    assert A.ArrayAttribute.get([A.BoolAttribute.get(True)]).to_python() == [True]
    assert A.scalar_attribute(2) is A.Int64Attribute.get(2)
    assert A.scalar_attribute(2.5) is A.DoubleAttribute.get(2.5)
    with pytest.raises(ValueError, match="does not fit an Int32"):
        A.Int32Attribute.get(2**31)


def test_dtype_table():
    assert DataType.from_short("bf16") is DataType.BFLOAT16
    assert DataType.from_pdiparams_code(22) is DataType.BFLOAT16
    assert DataType.FLOAT16.numpy.itemsize == 2
    bits = float32_to_bfloat16([1.0, -2.5, 3.1415927])
    assert list(bfloat16_to_float32(bits)) == [1.0, -2.5, 3.140625]
    with pytest.raises(ValueError, match="unknown element type 'f8'"):
        DataType.from_short("f8")


def test_use_lists_follow_every_change():
    program = Program()
    b = Builder(program)
    x, y = _param(b, "x"), _param(b, "y")
    u = b.op("coretest.unary", x)
    op = u.defining_op
    assert [use.owner for use in x.uses] == [op]
    op.set_operand(0, y)
    assert x.use_empty() and [use.owner for use in y.uses] == [op]
    v = b.op("coretest.unary", y)
    y.replace_all_uses_with(x)
    assert y.use_empty() and len(x.uses) == 2
    with pytest.raises(ValueError, match="result #0 is used by coretest.unary"):
        x.defining_op.erase()
    v.defining_op.erase()
    assert len(x.uses) == 1 and len(program.block) == 3


def test_builder_fills_defaults_and_infers():
    program = Program()
    b = Builder(program)
    x = _param(b, "x")
    s = b.op("coretest.scaled", x, name="n")
    assert s.defining_op.attributes["factor"] is A.FloatAttribute.get(1.0)
    assert s.type is x.type
    c = b.op("builtin.combine", x, s)
    first, second = b.op("builtin.split", c)
    assert second.type is x.type
    verify_program(program)


def test_verifier_rejects_broken_ops():
    program = Program()
    b = Builder(program)
    x = _param(b, "x")
    bad = Operation.create(
        "coretest.scaled", [x], [x.type], {"factor": A.StrAttribute.get("a"), "name": "n"}
    )
    program.block.append(bad)
    with pytest.raises(VerifyError, match="attribute 'factor' must be float"):
        verify_program(program)
    bad.erase()
    program.block.append(Operation.create("coretest.scaled", [x], [x.type]))
    with pytest.raises(VerifyError, match="needs attribute 'name'"):
        verify_program(program)


def test_verifier_checks_order_counts_and_types():
    program = Program()
    b = Builder(program)
    x = _param(b, "x")
    wrong = DenseTensorType.get(DataType.FLOAT32, [3, 3])
    program.block.append(Operation.create("coretest.unary", [x], [wrong]))
    with pytest.raises(
        VerifyError,
        match=r"result #0 has type tensor<3x3xf32>, but its operands"
        r" give tensor<2x3xf32>",
    ):
        verify_program(program)
    late = Program()
    lb = Builder(late)
    y = _param(lb, "y")
    user = Operation.create("coretest.unary", [y], [y.type])
    late.block.insert(0, user)
    with pytest.raises(VerifyError, match="uses a value before it is defined"):
        verify_program(late)
    two = Program()
    tb = Builder(two)
    z = _param(tb, "z")
    two.block.append(Operation.create("coretest.unary", [z, z], [z.type]))
    with pytest.raises(VerifyError, match="takes 1 operands, got 2"):
        verify_program(two)


def test_undeclared_ops_verify_structurally():
    program = Program()
    b = Builder(program)
    x = _param(b, "x")
    b.create("mystery.op", [x], {"k": 1}, [x.type])
    verify_program(program)


def test_fold_then_dce_turns_constants_into_attributes():
    program = Program()
    b = Builder(program)
    x = _param(b, "x", dims=(2, 3))
    unknown = b.op("coretest.const", value=[3, 2])
    assert b.op("coretest.reshape", x, unknown).type.dims == (-1,)  # not a known constant
    assert fold_mutable_attributes(program) == 0
    program2 = Program()
    b2 = Builder(program2)
    x2 = _param(b2, "x", dims=(2, 3))
    const = b2.create(
        "pd_op.full_int_array", [], {"value": [3, 2]}, [DenseTensorType.get(DataType.INT64, [2])]
    ).result()
    assert b2.op("coretest.reshape", x2, const).type.dims == (3, 2)
    PassManager().run(program2)
    text = print_program(program2)
    assert "full_int_array" not in text
    assert '"coretest.reshape" (%0, <<NULL VALUE>>) {shape:[3,2]}' in text


def test_dce_keeps_outputs_and_side_effects():
    program = Program()
    b = Builder(program)
    x = _param(b, "x")
    kept = b.op("coretest.unary", x)
    dead = b.op("coretest.unary", kept)
    b.op("coretest.unary", dead)
    removed = eliminate_dead_code(program, keep=[kept])
    assert removed == 2
    assert [op.name for op in program.block] == ["builtin.parameter", "coretest.unary"]


def test_outputs_and_clone():
    program = Program()
    b = Builder(program)
    x = _param(b, "x")
    u = b.op("coretest.unary", x)
    assert program.outputs() == [u]
    copy = program.clone()
    assert print_program(copy) == print_program(program)
    assert copy.block.ops[1].operand_value(0) is copy.block.ops[0].result()
    assert i64 is not f32


def test_builder_insertion_points():
    program = Program()
    b = Builder(program)
    x = _param(b, "x")
    last = b.op("coretest.unary", x).defining_op
    b.set_insertion_point(last)
    before = b.op("coretest.unary", x).defining_op
    b.set_insertion_point_after(last)
    after = b.op("coretest.unary", x).defining_op
    b.set_insertion_point_to_end(program.block)
    end = b.op("coretest.unary", x).defining_op
    assert list(program.block) == [x.defining_op, before, last, after, end]
