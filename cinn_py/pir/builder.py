"""Builder: creates ops at an insertion point, filling defaults and result types.

`Builder(program).op("pd_op.add", x, y)` declares nothing by hand: attribute defaults
come from the op's declaration and result types from its `infer_meta`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cinn_py.errors import UnsupportedOpError
from cinn_py.pir.attributes import Attribute, attr_from_python
from cinn_py.pir.op_def import REQUIRED, InferContext, lookup_op_def, make_attribute
from cinn_py.pir.operation import Block, Location, Operation
from cinn_py.pir.program import Program
from cinn_py.pir.types import Type
from cinn_py.pir.value import OpResult, Value


class Builder:
    """Inserts new ops into `block` at `index` (the end by default)."""

    def __init__(self, target: Program | Block, index: int | None = None) -> None:
        self.block = target.block if isinstance(target, Program) else target
        self.index = len(self.block) if index is None else index
        self.loc: Location | None = None

    def set_insertion_point(self, op: Operation) -> None:
        """Insert before `op`."""
        self.block = op.parent
        self.index = self.block.index_of(op)

    def set_insertion_point_after(self, op: Operation) -> None:
        self.block = op.parent
        self.index = self.block.index_of(op) + 1

    def set_insertion_point_to_end(self, block: Block) -> None:
        self.block = block
        self.index = len(block)

    def insert(self, op: Operation) -> Operation:
        self.block.insert(self.index, op)
        self.index += 1
        return op

    def create(
        self,
        name: str,
        operands: Sequence[Value | None] = (),
        attributes: Mapping[str, Any] | None = None,
        result_types: Sequence[Type] | None = None,
    ) -> Operation:
        """Create and insert op `name`. Declared ops get default attributes and, unless
        `result_types` is given, inferred result types; undeclared ops need `result_types`."""
        op_def = lookup_op_def(name)
        attrs: dict[str, Attribute] = {}
        if op_def is not None:
            for spec in op_def.attributes:
                if attributes is not None and spec.name in attributes:
                    attrs[spec.name] = make_attribute(spec.kind, attributes[spec.name])
                elif spec.default is not REQUIRED and spec.default is not None:
                    attrs[spec.name] = make_attribute(spec.kind, spec.default)
        for key, value in (attributes or {}).items():
            if key not in attrs:
                spec = op_def.attr_spec(key) if op_def is not None else None
                attrs[key] = make_attribute(spec.kind, value) if spec else attr_from_python(value)
        if result_types is None:
            if op_def is None or op_def.infer_meta is None:
                raise UnsupportedOpError(
                    name, "Builder.create", "has no infer_meta: give result_types"
                )
            ctx = InferContext(op_def, operands, attrs, where=f"building {name}")
            result_types = list(op_def.infer_meta(ctx))
        op = Operation.create(name, operands, result_types, attrs, loc=self.loc)
        return self.insert(op)

    def op(
        self, op_name: str, /, *operands: Value | None, **attributes: Any
    ) -> OpResult | tuple[OpResult, ...]:
        """Create op `op_name` and return its result (or results, when there are several)."""
        created = self.create(op_name, operands, attributes)
        results = created.results
        return results[0] if len(results) == 1 else results
