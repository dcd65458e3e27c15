"""Where values enter and leave a program: `pd_op.data` and `pd_op.fetch`.

Both carry SideEffect: they are the program's interface and must survive dead-code
elimination even when nothing reads them. `data` needs its name, shape and dtype given;
its kernel checks the caller's feed against them (`reference_ops.context.check_input`).
Neither runs in a kernel: the runtime binds their values in the Scope (Trait.GLUE).
"""

from __future__ import annotations

import numpy as np

from cinn_py.pir import infer_meta as im
from cinn_py.pir import shape_analysis as sym
from cinn_py.pir.attributes import (
    DataTypeAttribute,
    Int32Attribute,
    IntArrayAttribute,
    PlaceAttribute,
    StrAttribute,
)
from cinn_py.pir.op_def import InferContext, OpDef, attr, operand
from cinn_py.pir.traits import OpPatternKind, Trait
from cinn_py.pir.types import Type
from cinn_py.reference_ops.context import KernelContext, check_input

# -- declarations -------------------------------------------------------------------------


def _infer_data(ctx: InferContext) -> list[Type]:
    return [im.tensor(ctx, im.attr_dtype(ctx, "dtype"), ctx.attr("shape"))]


# -- reference kernels --------------------------------------------------------------------


def data(ctx: KernelContext) -> np.ndarray:
    name = ctx.attr("name")
    return check_input(name, ctx.runtime.feeds.get(name), ctx.result_type())


def identity(ctx: KernelContext) -> np.ndarray:
    return ctx.tensor(0)


# -- entries -------------------------------------------------------------------------------

OPS = [
    OpDef(
        "pd_op.data",
        attributes=(
            attr("name", StrAttribute),
            attr("shape", IntArrayAttribute),
            attr("dtype", DataTypeAttribute),
            attr("place", PlaceAttribute, "undefined:0"),
        ),
        pattern=OpPatternKind.NON_FUSIBLE,
        traits=frozenset(
            {
                Trait.SIDE_EFFECT,
                Trait.PROGRAM_INPUT,
                Trait.GLUE,
                Trait.NOT_FOLDED,
                Trait.KEEPS_EMPTY,
            }
        ),
        infer_meta=_infer_data,
        kernel=data,
        symbolic_meta=sym.feed_shape,
    ),
    OpDef(
        "pd_op.fetch",
        operands=(operand("x"),),
        attributes=(attr("name", StrAttribute), attr("col", Int32Attribute, 0)),
        pattern=OpPatternKind.NON_FUSIBLE,
        traits=frozenset({Trait.SIDE_EFFECT, Trait.PROGRAM_OUTPUT, Trait.GLUE, Trait.KEEPS_EMPTY}),
        infer_meta=im.unchanged,
        kernel=identity,
    ),
]
