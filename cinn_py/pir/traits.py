"""What an op entry says about an op beyond its signature: its pattern kind and traits.

`OpPatternKind` is CINN's classification (`paddle/cinn/hlir/framework/op.h`): how an op's
output elements depend on its input elements, which decides what may fuse. Every pd_op
entry has one; fusion reads it (`cinn_py/hlir/op_pattern.py`).

`Trait` replaces the sets of op names passes and fusion used to keep: a pass asks
`op_def.has_trait(Trait.RANDOM)` instead of testing the op's name.
"""

from __future__ import annotations

import enum


class OpPatternKind(enum.Enum):
    """CINN's op pattern kinds, weakest coupling first."""

    ELEMENTWISE = "ElementWise"
    """out[i] depends on in[i] only (numpy broadcasting of operands allowed)."""
    BROADCAST = "Broadcast"
    """out[i] reads in[f(i)], f dropping or clamping dims (expand)."""
    INJECTIVE = "Injective"
    """out[i] reads one input element at an index computed from i (reshape, transpose, ...)."""
    REDUCTION = "Reduction"
    """out[i] combines the input elements along the reduced dims (sum, max, argmax, ...)."""
    OUT_FUSIBLE = "OutFusible"
    """A composite with its own schedule (matmul, softmax kept whole)."""
    NON_FUSIBLE = "NonFusible"
    """Fuses with nothing (data, fetch, random ops, scans, undeclared ops)."""


class Trait(enum.Enum):
    """A fact about an op that passes, fusion and the runtime ask about."""

    SIDE_EFFECT = "SideEffect"
    """Kept even when its results are unused (data, fetch, parameters, the module)."""
    STRUCTURAL = "Structural"
    """Holds or ends a region (builtin.module, cinn_op.group, cf.yield): no kernel of its own."""
    PROGRAM_INPUT = "ProgramInput"
    """Where a value enters the program (data, parameter)."""
    PROGRAM_OUTPUT = "ProgramOutput"
    """Marks a value as a program output (fetch, shadow_output)."""
    GLUE = "Glue"
    """Moves no data: the runtime binds its value in the Scope, no group runs it (data,
    fetch, parameters, shadow_output)."""
    VECTOR = "Vector"
    """Packs or unpacks Tensor[] values (combine, split, slice): inside the fused group of
    the op it serves, else bookkeeping for the runtime."""
    EXPLICIT_TYPE = "ExplicitType"
    """Its result type is given in the program, not inferred (parameter, constant)."""
    NO_STORAGE = "NoStorage"
    """Glue the runtime's storage plan cannot bind yet (set_parameter, constant)."""
    RANDOM = "Random"
    """Draws random numbers: two equal ops are not one (CSE keeps both)."""
    CONSTANT = "Constant"
    """Makes a constant from attributes alone (full): copied into each fused group that
    reads it rather than passed between kernels."""
    NOT_FOLDED = "NotFolded"
    """Already a constant or an input: constant folding leaves it as it is."""
    KEEPS_EMPTY = "KeepsEmpty"
    """Left in place when its result is empty (program inputs and outputs, constants,
    Tensor[] glue): `fold_empty_tensors` replaces other empty results by `full`."""
    SHAPE_ONLY = "ShapeOnly"
    """Reads only its operands' shapes, never their data (shape, shape64): once the
    shapes are static, `specialize_shapes` evaluates it to a constant."""
    RESHAPE = "Reshape"
    """Only relabels dims (reshape, squeeze, unsqueeze, flatten): a row form stays a row form."""
    ARG_REDUCTION = "ArgReduction"
    """An index-carrying reduction (argmax, argmin): axis a Scalar operand, `flatten`, `keepdims`."""
    AXIS_OPERAND_REDUCTION = "AxisOperandReduction"
    """A reduction whose axes are a mutable IntArray operand, folded to attribute `axis`."""
    AXIS_ATTRIBUTE_REDUCTION = "AxisAttributeReduction"
    """A reduction whose axes are a plain `axis` attribute (all, any)."""
