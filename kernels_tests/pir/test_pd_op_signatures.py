"""pd_op declarations against Paddle 3.3.1's own op signatures.

The table was read from Paddle: operand, attribute and result names from
`Operation.get_input_names()` / `get_attr_names()` / `get_output_names()` of ops built
in static PIR mode, attribute kinds from the same program serialized to JSON
(`a_i32` -> int32, `a_intarray` -> int_array, an array of `a_i64` -> array<int64>, ...),
mutable attributes (operands that may instead be attributes) from the second `Build`
overload in Paddle's `pd_op.h`. rms_norm has no CPU kernel, so its row comes from the
ProgramDesc->PIR translator and the attribute checks compiled into libpaddle. Optional
operands are those the op's `_C_ops` function accepts None for (built again with None in
that slot), variadic ones those fed by a `builtin.combine`. Every registered pd_op needs
a row (`test_every_registered_pd_op_has_a_row`): read a new op's from Paddle the same way.
"""

from __future__ import annotations

import pytest

from cinn_py.pir import lookup_op_def
from cinn_py.pir.op_def import registered_op_names
from cinn_py.pir.traits import Trait

# name: (operands, mutable-attribute operands, ((attribute, kind), ...), results)
PADDLE_SIGNATURES = {
    "pd_op.abs": (("x",), (), (), ("out",)),
    "pd_op.add": (("x", "y"), (), (), ("out",)),
    "pd_op.all": (("x",), (), (("axis", "array<int64>"), ("keepdim", "bool")), ("out",)),
    "pd_op.any": (("x",), (), (("axis", "array<int64>"), ("keepdim", "bool")), ("out",)),
    "pd_op.arange": (
        ("start", "end", "step"),
        ("start", "end", "step"),
        (("dtype", "data_type"), ("place", "place")),
        ("out",),
    ),
    "pd_op.argmax": (
        ("x", "axis"),
        ("axis",),
        (("keepdims", "bool"), ("flatten", "bool"), ("dtype", "data_type")),
        ("out",),
    ),
    "pd_op.argmin": (
        ("x", "axis"),
        ("axis",),
        (("keepdims", "bool"), ("flatten", "bool"), ("dtype", "data_type")),
        ("out",),
    ),
    "pd_op.argsort": (
        ("x",),
        (),
        (("axis", "int32"), ("descending", "bool"), ("stable", "bool")),
        ("out", "indices"),
    ),
    "pd_op.assign": (("x",), (), (), ("out",)),
    "pd_op.batch_norm": (
        ("x", "mean", "variance", "scale", "bias"),
        (),
        (
            ("is_test", "bool"),
            ("momentum", "float"),
            ("epsilon", "float"),
            ("data_format", "str"),
            ("use_global_stats", "bool"),
            ("trainable_statistics", "bool"),
        ),
        ("out", "mean_out", "variance_out", "saved_mean", "saved_variance", "reserve_space"),
    ),
    "pd_op.batch_norm_": (
        ("x", "mean", "variance", "scale", "bias"),
        (),
        (
            ("is_test", "bool"),
            ("momentum", "float"),
            ("epsilon", "float"),
            ("data_format", "str"),
            ("use_global_stats", "bool"),
            ("trainable_statistics", "bool"),
        ),
        ("out", "mean_out", "variance_out", "saved_mean", "saved_variance", "reserve_space"),
    ),
    "pd_op.bilinear_interp": (
        ("x", "out_size", "size_tensor", "scale_tensor"),
        (),
        (
            ("data_format", "str"),
            ("out_d", "int32"),
            ("out_h", "int32"),
            ("out_w", "int32"),
            ("scale", "array<double>"),
            ("interp_method", "str"),
            ("align_corners", "bool"),
            ("align_mode", "int32"),
        ),
        ("output",),
    ),
    "pd_op.bmm": (("x", "y"), (), (), ("out",)),
    "pd_op.cast": (("x",), (), (("dtype", "data_type"),), ("out",)),
    "pd_op.ceil": (("x",), (), (), ("out",)),
    "pd_op.clip": (("x", "min", "max"), ("min", "max"), (), ("out",)),
    "pd_op.concat": (("x", "axis"), ("axis",), (), ("out",)),
    "pd_op.conv2d": (
        ("input", "filter"),
        (),
        (
            ("strides", "array<int32>"),
            ("paddings", "array<int32>"),
            ("padding_algorithm", "str"),
            ("dilations", "array<int32>"),
            ("groups", "int32"),
            ("data_format", "str"),
        ),
        ("out",),
    ),
    "pd_op.conv2d_transpose": (
        ("x", "filter", "output_size"),
        ("output_size",),
        (
            ("strides", "array<int32>"),
            ("paddings", "array<int32>"),
            ("output_padding", "array<int32>"),
            ("padding_algorithm", "str"),
            ("groups", "int32"),
            ("dilations", "array<int32>"),
            ("data_format", "str"),
        ),
        ("out",),
    ),
    "pd_op.cos": (("x",), (), (), ("out",)),
    "pd_op.cumsum": (
        ("x", "axis"),
        ("axis",),
        (("flatten", "bool"), ("exclusive", "bool"), ("reverse", "bool")),
        ("out",),
    ),
    "pd_op.data": (
        (),
        (),
        (("name", "str"), ("shape", "int_array"), ("dtype", "data_type"), ("place", "place")),
        ("out",),
    ),
    "pd_op.depthwise_conv2d": (
        ("input", "filter"),
        (),
        (
            ("strides", "array<int32>"),
            ("paddings", "array<int32>"),
            ("padding_algorithm", "str"),
            ("groups", "int32"),
            ("dilations", "array<int32>"),
            ("data_format", "str"),
        ),
        ("out",),
    ),
    "pd_op.divide": (("x", "y"), (), (), ("out",)),
    "pd_op.dropout": (
        ("x", "seed_tensor", "p"),
        ("p",),
        (("is_test", "bool"), ("mode", "str"), ("seed", "int32"), ("fix_seed", "bool")),
        ("out", "mask"),
    ),
    "pd_op.einsum": (("x",), (), (("equation", "str"),), ("out", "inner_cache", "xshape")),
    "pd_op.elementwise_pow": (("x", "y"), (), (), ("out",)),
    "pd_op.embedding": (
        ("x", "weight"),
        (),
        (("padding_idx", "int64"), ("sparse", "bool")),
        ("out",),
    ),
    "pd_op.equal": (("x", "y"), (), (), ("out",)),
    "pd_op.erf": (("x",), (), (), ("out",)),
    "pd_op.exp": (("x",), (), (), ("out",)),
    "pd_op.expand": (("x", "shape"), ("shape",), (), ("out",)),
    "pd_op.expand_as": (("x", "y"), (), (("target_shape", "array<int64>"),), ("out",)),
    "pd_op.expm1": (("x",), (), (), ("out",)),
    "pd_op.fetch": (("x",), (), (("name", "str"), ("col", "int32")), ("out",)),
    "pd_op.flatten": (("x",), (), (("start_axis", "int32"), ("stop_axis", "int32")), ("out",)),
    "pd_op.floor": (("x",), (), (), ("out",)),
    "pd_op.floor_divide": (("x", "y"), (), (), ("out",)),
    "pd_op.full": (
        (),
        (),
        (("shape", "int_array"), ("value", "double"), ("dtype", "data_type"), ("place", "place")),
        ("out",),
    ),
    "pd_op.full_int_array": (
        (),
        (),
        (("value", "array<int64>"), ("dtype", "data_type"), ("place", "place")),
        ("out",),
    ),
    "pd_op.full_like": (
        ("x", "value"),
        ("value",),
        (("dtype", "data_type"), ("place", "place")),
        ("out",),
    ),
    "pd_op.full_with_tensor": (("value", "shape"), ("shape",), (("dtype", "data_type"),), ("out",)),
    "pd_op.fused_gemm_epilogue": (
        ("x", "y", "bias"),
        (),
        (("trans_x", "bool"), ("trans_y", "bool"), ("activation", "str")),
        ("out", "reserve_space"),
    ),
    "pd_op.fused_rms_norm_quant": (
        ("x", "bias", "residual", "norm_weight", "norm_bias"),
        (),
        (
            ("epsilon", "float"),
            ("begin_norm_axis", "int32"),
            ("quant_scale", "float"),
            ("quant_round_type", "int32"),
            ("quant_max_bound", "float"),
            ("quant_min_bound", "float"),
        ),
        ("out", "residual_out", "inv_var"),
    ),
    "pd_op.gather": (("x", "index", "axis"), ("axis",), (), ("out",)),
    "pd_op.gelu": (("x",), (), (("approximate", "bool"),), ("out",)),
    "pd_op.greater_equal": (("x", "y"), (), (), ("out",)),
    "pd_op.greater_than": (("x", "y"), (), (), ("out",)),
    "pd_op.group_norm": (
        ("x", "scale", "bias"),
        (),
        (("epsilon", "double"), ("groups", "int32"), ("data_format", "str")),
        ("y", "mean", "variance"),
    ),
    "pd_op.hardsigmoid": (("x",), (), (("slope", "float"), ("offset", "float")), ("out",)),
    "pd_op.hardswish": (("x",), (), (), ("out",)),
    "pd_op.index_select": (("x", "index"), (), (("axis", "int32"),), ("out",)),
    "pd_op.instance_norm": (
        ("x", "scale", "bias"),
        (),
        (("epsilon", "float"),),
        ("y", "saved_mean", "saved_variance"),
    ),
    "pd_op.isfinite": (("x",), (), (), ("out",)),
    "pd_op.isinf": (("x",), (), (), ("out",)),
    "pd_op.isnan": (("x",), (), (), ("out",)),
    "pd_op.layer_norm": (
        ("x", "scale", "bias"),
        (),
        (("epsilon", "float"), ("begin_norm_axis", "int32")),
        ("out", "mean", "variance"),
    ),
    "pd_op.leaky_relu": (("x",), (), (("negative_slope", "double"),), ("out",)),
    "pd_op.less_equal": (("x", "y"), (), (), ("out",)),
    "pd_op.less_than": (("x", "y"), (), (), ("out",)),
    "pd_op.log": (("x",), (), (), ("out",)),
    "pd_op.log1p": (("x",), (), (), ("out",)),
    "pd_op.log2": (("x",), (), (), ("out",)),
    "pd_op.log_softmax": (("x",), (), (("axis", "int32"),), ("out",)),
    "pd_op.logical_and": (("x", "y"), (), (), ("out",)),
    "pd_op.logical_not": (("x",), (), (), ("out",)),
    "pd_op.logical_or": (("x", "y"), (), (), ("out",)),
    "pd_op.logical_xor": (("x", "y"), (), (), ("out",)),
    "pd_op.matmul": (("x", "y"), (), (("transpose_x", "bool"), ("transpose_y", "bool")), ("out",)),
    "pd_op.max": (("x", "axis"), ("axis",), (("keepdim", "bool"),), ("out",)),
    "pd_op.max_pool2d_with_index": (
        ("x",),
        (),
        (
            ("kernel_size", "array<int32>"),
            ("strides", "array<int32>"),
            ("paddings", "array<int32>"),
            ("global_pooling", "bool"),
            ("adaptive", "bool"),
            ("ceil_mode", "bool"),
        ),
        ("out", "mask"),
    ),
    "pd_op.maximum": (("x", "y"), (), (), ("out",)),
    "pd_op.mean": (("x", "axis"), ("axis",), (("keepdim", "bool"),), ("out",)),
    "pd_op.min": (("x", "axis"), ("axis",), (("keepdim", "bool"),), ("out",)),
    "pd_op.minimum": (("x", "y"), (), (), ("out",)),
    "pd_op.multiply": (("x", "y"), (), (), ("out",)),
    "pd_op.nearest_interp": (
        ("x", "out_size", "size_tensor", "scale_tensor"),
        (),
        (
            ("data_format", "str"),
            ("out_d", "int32"),
            ("out_h", "int32"),
            ("out_w", "int32"),
            ("scale", "array<double>"),
            ("interp_method", "str"),
            ("align_corners", "bool"),
            ("align_mode", "int32"),
        ),
        ("output",),
    ),
    "pd_op.not_equal": (("x", "y"), (), (), ("out",)),
    "pd_op.one_hot": (("x", "num_classes"), ("num_classes",), (), ("out",)),
    "pd_op.pool2d": (
        ("x", "kernel_size"),
        ("kernel_size",),
        (
            ("strides", "array<int64>"),
            ("paddings", "array<int64>"),
            ("ceil_mode", "bool"),
            ("exclusive", "bool"),
            ("data_format", "str"),
            ("pooling_type", "str"),
            ("global_pooling", "bool"),
            ("adaptive", "bool"),
            ("padding_algorithm", "str"),
        ),
        ("out",),
    ),
    "pd_op.pow": (("x",), (), (("y", "float"),), ("out",)),
    "pd_op.prod": (
        ("x", "axis"),
        ("axis",),
        (("keepdim", "bool"), ("reduce_all", "bool")),
        ("out",),
    ),
    "pd_op.reciprocal": (("x",), (), (), ("out",)),
    "pd_op.relu": (("x",), (), (), ("out",)),
    "pd_op.relu6": (("x",), (), (), ("out",)),
    "pd_op.remainder": (("x", "y"), (), (), ("out",)),
    "pd_op.reshape": (("x", "shape"), ("shape",), (), ("out",)),
    "pd_op.rms_norm": (
        ("x", "scale"),
        (),
        (("normalized_shape", "array<int64>"), ("epsilon", "double")),
        ("y", "invvar"),
    ),
    "pd_op.round": (("x",), (), (("decimals", "int32"),), ("out",)),
    "pd_op.rsqrt": (("x",), (), (), ("out",)),
    "pd_op.scale": (
        ("x", "scale"),
        ("scale",),
        (("bias", "float"), ("bias_after_scale", "bool")),
        ("out",),
    ),
    "pd_op.shape": (("input",), (), (), ("out",)),
    "pd_op.shape64": (("input",), (), (), ("out",)),
    "pd_op.sigmoid": (("x",), (), (), ("out",)),
    "pd_op.sign": (("x",), (), (), ("out",)),
    "pd_op.silu": (("x",), (), (), ("out",)),
    "pd_op.sin": (("x",), (), (), ("out",)),
    "pd_op.slice": (
        ("input", "starts", "ends"),
        ("starts", "ends"),
        (
            ("axes", "array<int64>"),
            ("infer_flags", "array<int64>"),
            ("decrease_axis", "array<int64>"),
        ),
        ("out",),
    ),
    "pd_op.softmax": (("x",), (), (("axis", "int32"),), ("out",)),
    "pd_op.split": (("x", "sections", "axis"), ("sections", "axis"), (), ("out",)),
    "pd_op.split_with_num": (("x", "axis"), ("axis",), (("num", "int32"),), ("out",)),
    "pd_op.sqrt": (("x",), (), (), ("out",)),
    "pd_op.square": (("x",), (), (), ("out",)),
    "pd_op.squeeze": (("x", "axis"), ("axis",), (), ("out",)),
    "pd_op.stack": (("x",), (), (("axis", "int32"),), ("out",)),
    "pd_op.strided_slice": (
        ("x", "starts", "ends", "strides"),
        ("starts", "ends", "strides"),
        (("axes", "array<int32>"),),
        ("out",),
    ),
    "pd_op.subtract": (("x", "y"), (), (), ("out",)),
    "pd_op.sum": (
        ("x", "axis"),
        ("axis",),
        (("dtype", "data_type"), ("keepdim", "bool")),
        ("out",),
    ),
    "pd_op.swiglu": (("x", "y"), (), (), ("out",)),
    "pd_op.tan": (("x",), (), (), ("out",)),
    "pd_op.tanh": (("x",), (), (), ("out",)),
    "pd_op.tile": (("x", "repeat_times"), ("repeat_times",), (), ("out",)),
    "pd_op.topk": (
        ("x", "k"),
        ("k",),
        (("axis", "int32"), ("largest", "bool"), ("sorted", "bool")),
        ("out", "indices"),
    ),
    "pd_op.transpose": (("x",), (), (("perm", "array<int32>"),), ("out",)),
    "pd_op.tril": (("x",), (), (("diagonal", "int32"),), ("out",)),
    "pd_op.triu": (("x",), (), (("diagonal", "int32"),), ("out",)),
    "pd_op.unsqueeze": (("x", "axis"), ("axis",), (), ("out",)),
    "pd_op.where": (("condition", "x", "y"), (), (), ("out",)),
}

OPTIONAL_OPERANDS = {
    "pd_op.batch_norm": ("scale", "bias"),
    "pd_op.batch_norm_": ("scale", "bias"),
    "pd_op.bilinear_interp": ("out_size", "size_tensor", "scale_tensor"),
    "pd_op.dropout": ("seed_tensor",),
    "pd_op.expand_as": ("y",),
    "pd_op.fused_rms_norm_quant": ("bias", "residual", "norm_bias"),
    "pd_op.group_norm": ("scale", "bias"),
    "pd_op.instance_norm": ("scale", "bias"),
    "pd_op.layer_norm": ("scale", "bias"),
    "pd_op.nearest_interp": ("out_size", "size_tensor", "scale_tensor"),
    "pd_op.rms_norm": ("scale",),
    "pd_op.swiglu": ("y",),
}
"""Operands Paddle prints as <<NULL VALUE>> when absent."""

VARIADIC_OPERANDS = {
    "pd_op.bilinear_interp": ("size_tensor",),
    "pd_op.concat": ("x",),
    "pd_op.einsum": ("x",),
    "pd_op.nearest_interp": ("size_tensor",),
    "pd_op.stack": ("x",),
}
"""Tensor[] operands, fed by a builtin.combine."""


@pytest.mark.parametrize("name", sorted(PADDLE_SIGNATURES))
def test_signature_matches_paddle(name):
    operands, mutable, attributes, results = PADDLE_SIGNATURES[name]
    op_def = lookup_op_def(name)
    assert op_def is not None, f"{name} is not registered"
    assert tuple(o.name for o in op_def.operands) == operands
    assert tuple(o.name for o in op_def.operands if o.mutable_attr) == mutable
    for spec in op_def.operands:
        if spec.mutable_attr:
            assert spec.mutable_attr == spec.name
    assert tuple((a.name, a.kind_name) for a in op_def.attributes) == attributes
    assert op_def.results == results
    assert tuple(o.name for o in op_def.operands if o.optional) == OPTIONAL_OPERANDS.get(name, ())
    assert tuple(o.name for o in op_def.operands if o.variadic) == VARIADIC_OPERANDS.get(name, ())


def test_every_registered_pd_op_has_a_row():
    missing = [
        n for n in registered_op_names() if n.startswith("pd_op.") and n not in PADDLE_SIGNATURES
    ]
    assert not missing, f"pd_ops without a Paddle signature row: {missing}"


@pytest.mark.parametrize("name", sorted(PADDLE_SIGNATURES))
def test_every_op_has_infer_meta_and_one_pattern(name):
    op_def = lookup_op_def(name)
    assert op_def.infer_meta is not None
    assert op_def.pattern is not None
    assert op_def.has_trait(Trait.SIDE_EFFECT) == (name in ("pd_op.data", "pd_op.fetch"))
