"""The cinn_op dialect: groups of fused ops as ops with a region, and `cf.yield`.

`cinn_op.group` holds one region of one block: the group's ops, ending with a
`cf.yield` of the group's outputs, which become the group op's results. As in Paddle,
the group takes no operands: its ops read the values defined before it directly.
Attributes: `group_name` and `kind` ("fused" or "library").
"""

from __future__ import annotations

from cinn_py.errors import VerifyError
from cinn_py.pir.attributes import StrAttribute
from cinn_py.pir.op_def import OpDef, attr, operand, register_ops
from cinn_py.pir.operation import Operation
from cinn_py.pir.traits import Trait

GROUP = "cinn_op.group"
YIELD = "cf.yield"
GROUP_KINDS = ("fused", "library")


def _verify_group(op: Operation) -> None:
    def fail(why: str) -> VerifyError:
        return VerifyError(op.name, why, where=op.where())

    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        raise fail("needs one region of one block")
    if op.attr("kind") not in GROUP_KINDS:
        raise fail(f"kind must be one of {', '.join(GROUP_KINDS)}, got {op.attr('kind')!r}")
    block = op.regions[0].blocks[0]
    last = block.ops[-1] if len(block) else None
    if last is None or last.name != YIELD:
        raise fail(f"its block must end with {YIELD}")
    yielded = last.operand_values()
    if len(yielded) != op.num_results:
        raise fail(f"yields {len(yielded)} values but has {op.num_results} results")
    for result, value in zip(op.results, yielded, strict=True):
        if value is None or value.type is not result.type:
            raise fail(f"result #{result.index} does not have the type of the value it yields")


def _verify_yield(op: Operation) -> None:
    block = op.parent
    region = block.parent if block is not None else None
    owner = region.parent if region is not None else None
    if owner is None or owner.name == "builtin.module" or block.ops[-1] is not op:
        raise VerifyError(op.name, "must end the block of an op's region", where=op.where())


OPS = [
    OpDef(
        GROUP,
        attributes=(attr("group_name", StrAttribute), attr("kind", StrAttribute)),
        traits=frozenset({Trait.STRUCTURAL}),
        results=("outputs",),
        variadic_results=True,
        verify=_verify_group,
    ),
]

CF_OPS = [
    OpDef(
        YIELD,
        operands=(operand("inputs"),),
        variadic_operands=True,
        results=(),
        traits=frozenset({Trait.STRUCTURAL}),
        verify=_verify_yield,
    ),
]

register_ops("cinn_op", OPS)
register_ops("cf", CF_OPS)
