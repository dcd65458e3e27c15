"""Checks a whole program against its op declarations.

Structure first (every operand defined before use, use lists exact, no use of a result
typed <<NULL TYPE>>, which its op leaves unmade; an op nested in a region sees the
values defined before its op), then each declared op: operand and result counts, null
operands only where optional, attribute kinds, required attributes, the op's own
`verify`, and result types that agree with `infer_meta` (a -1 dim agrees with any
size). Undeclared ops are checked for structure only: they fail later, where something
needs to run them.
"""

from __future__ import annotations

from cinn_py.errors import VerifyError
from cinn_py.pir.op_def import REQUIRED, InferContext, attribute_matches
from cinn_py.pir.operation import Block, Operation
from cinn_py.pir.printer import print_type
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type, VectorType, is_null
from cinn_py.pir.value import OpResult, Value


def types_compatible(declared: Type, inferred: Type) -> bool:
    """Equal, or equal but for dims that one side leaves dynamic (-1)."""
    if declared is inferred:
        return True
    if isinstance(declared, DenseTensorType) and isinstance(inferred, DenseTensorType):
        if declared.dtype is not inferred.dtype or declared.rank != inferred.rank:
            return False
        return all(
            a == b or DYNAMIC in (a, b) for a, b in zip(declared.dims, inferred.dims, strict=True)
        )
    if isinstance(declared, VectorType) and isinstance(inferred, VectorType):
        return len(declared.types) == len(inferred.types) and all(
            types_compatible(a, b) for a, b in zip(declared.types, inferred.types, strict=True)
        )
    return False


def verify_program(program: Program) -> None:
    """Raise VerifyError at the first op that breaks the rules."""
    _verify_block(program.block, set())


def _verify_block(block: Block, defined: set[int]) -> None:
    """Ops in a region's block see the values defined before their op, not the
    reverse: `defined` is copied for each nested block."""
    for op in block:
        verify_structure(op, defined)
        for region in op.regions:
            for inner in region.blocks:
                _verify_block(inner, set(defined))
        verify_op(op)
        defined.update(id(r) for r in op.results)


def verify_structure(op: Operation, defined: set[int]) -> None:
    for operand in op.operands:
        value = operand.value
        if value is None:
            continue
        if id(value) not in defined:
            raise VerifyError(
                op.name,
                "uses a value before it is defined",
                where=op.where(),
                operand=f"#{operand.index}",
            )
        if not any(use is operand for use in value.uses):
            raise VerifyError(
                op.name, "use list out of step", where=op.where(), operand=f"#{operand.index}"
            )
        if is_null(value.type):
            raise VerifyError(
                op.name,
                f"uses {_describe_result(value)}, which is typed <<NULL TYPE>>: "
                "its op leaves it unmade, so it holds no value",
                where=op.where(),
                operand=f"#{operand.index}",
            )


def _describe_result(value: Value) -> str:
    """`%6 (result #1 'residual_out' of pd_op.fused_rms_norm_quant)`."""
    owner = value.defining_op
    number = "" if value.id_hint is None else f"%{value.id_hint} "
    if owner is None or not isinstance(value, OpResult):
        return f"{number}(a value)"
    op_def = owner.op_def
    names = op_def.results if op_def is not None and not op_def.variadic_results else ()
    label = f" '{names[value.index]}'" if value.index < len(names) else ""
    return f"{number}(result #{value.index}{label} of {owner.name})"


def verify_op(op: Operation) -> None:
    """Check one op against its declaration (no-op for undeclared ops)."""
    op_def = op.op_def
    if op_def is None:
        return

    def fail(why: str, operand: str = "") -> VerifyError:
        # op.where() scans the block for the op's position: only on failure
        return VerifyError(op.name, why, where=op.where(), operand=operand)

    if not op_def.variadic_operands:
        if op.num_operands != len(op_def.operands):
            raise fail(f"takes {len(op_def.operands)} operands, got {op.num_operands}")
        for spec, value in zip(op_def.operands, op.operand_values(), strict=True):
            folded = spec.mutable_attr is not None and spec.mutable_attr in op.attributes
            if value is None and not spec.optional and not folded:
                raise fail("is null but not optional", operand=spec.name)
    elif any(v is None for v in op.operand_values()):
        raise fail("has a null operand")

    for name, attribute in op.attributes.items():
        spec = op_def.attr_spec(name)
        if spec is not None and not attribute_matches(spec.kind, attribute):
            raise fail(f"attribute '{name}' must be {spec.kind_name}, got {attribute!r}")
    for spec in op_def.attributes:
        if spec.default is REQUIRED and spec.name not in op.attributes:
            raise fail(f"needs attribute '{spec.name}'")

    if not op_def.variadic_results and op.num_results != len(op_def.results):
        raise fail(f"makes {len(op_def.results)} results, got {op.num_results}")
    if op_def.verify is not None:
        op_def.verify(op)
    if op_def.infer_meta is not None and not op_def.has_trait(Trait.EXPLICIT_TYPE):
        ctx = InferContext.of(op)
        inferred = list(op_def.infer_meta(ctx))
        computed = list(op_def.computed_meta(ctx)) if op_def.computed_meta else inferred
        if len(inferred) != op.num_results:
            raise fail(f"infers {len(inferred)} results, has {op.num_results}")
        for result, expected, actual in zip(op.results, inferred, computed, strict=True):
            if not types_compatible(result.type, expected) and not types_compatible(
                result.type, actual
            ):
                raise fail(
                    f"result #{result.index} has type {print_type(result.type)}, "
                    f"but its operands give {print_type(expected)}"
                )
