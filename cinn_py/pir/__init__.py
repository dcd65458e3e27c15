"""The PIR layer: Paddle's program IR in Python (cf. paddle/pir).

Importing this package registers the structural ops (`builtin.module`, `cinn_op`, `cf`);
the first op lookup imports `cinn_py.ops`, which registers every other op.
"""

from cinn_py.pir.attributes import (
    ArrayAttribute,
    Attribute,
    BoolAttribute,
    DataLayoutAttribute,
    DataTypeAttribute,
    DoubleAttribute,
    FloatAttribute,
    Int32Attribute,
    Int64Attribute,
    IntArrayAttribute,
    PlaceAttribute,
    StrAttribute,
    TypeAttribute,
    scalar_attribute,
)
from cinn_py.pir.builder import Builder
from cinn_py.pir.context import IrContext
from cinn_py.pir.dialects import builtin as _builtin  # noqa: F401  (registers the dialect)
from cinn_py.pir.dialects import cinn_op as _cinn_op  # noqa: F401  (registers the dialect)
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.op_def import InferContext, OpDef, lookup_op_def, registered_op_names
from cinn_py.pir.operation import Block, Location, Operation, Region
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program, TextStyle
from cinn_py.pir.types import DYNAMIC, DenseTensorType, ElementType, Type, VectorType
from cinn_py.pir.value import OpOperand, OpResult, Value
from cinn_py.pir.verifier import verify_program

__all__ = [
    "DYNAMIC",
    "ArrayAttribute",
    "Attribute",
    "Block",
    "BoolAttribute",
    "Builder",
    "DataLayoutAttribute",
    "DataType",
    "DataTypeAttribute",
    "DenseTensorType",
    "DoubleAttribute",
    "ElementType",
    "FloatAttribute",
    "InferContext",
    "Int32Attribute",
    "Int64Attribute",
    "IntArrayAttribute",
    "IrContext",
    "Location",
    "OpDef",
    "OpOperand",
    "OpResult",
    "Operation",
    "PlaceAttribute",
    "Program",
    "Region",
    "StrAttribute",
    "TextStyle",
    "Type",
    "TypeAttribute",
    "Value",
    "VectorType",
    "lookup_op_def",
    "print_program",
    "registered_op_names",
    "scalar_attribute",
    "verify_program",
]
