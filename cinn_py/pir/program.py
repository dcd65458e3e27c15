"""Program: a `builtin.module` op holding the top block, plus parameter data.

Paddle's Program wraps a ModuleOp; so does this one. Parameter *values* (from
model.pdiparams or a user's dict) live beside the IR, keyed by parameter name, so the
IR stays pure and the executors find weights by the name `builtin.parameter` carries.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from cinn_py.pir.operation import Block, Operation
from cinn_py.pir.traits import Trait
from cinn_py.pir.types import is_null
from cinn_py.pir.value import Value


@dataclass
class TextStyle:
    """How a program's text was written, so that printing gives back the same bytes.

    `typed`: the older format with typed attributes (`(Int64)2`, `(pd_op.DataType)float32`).
    `tensor_prefix`: the dialect prefix of tensor types in the typed format
    (`builtin.tensor<...>` or `pd_op.tensor<...>`).
    """

    typed: bool = False
    tensor_prefix: str = "builtin"
    indent: int = 4


class Program:
    """A whole program: one module with one block of ops, and parameter values."""

    def __init__(self) -> None:
        self.module = Operation.create("builtin.module", num_regions=1)
        self.module.regions[0].add_block()
        self.parameters: dict[str, np.ndarray] = {}
        self.text_style = TextStyle()
        self.source: str = "<program>"
        self.pinned_outputs: list[Value] | None = None
        """Outputs fixed by `pin_outputs`, so passes that orphan values do not add outputs."""
        self.renumbered: dict[int, Value] = {}
        """Printed numbers of values a pass replaced (a decomposed softmax's result, the
        second of two equal values CSE merged): the value a fetch of that number reads."""

    @property
    def block(self) -> Block:
        return self.module.regions[0].blocks[0]

    def ops(self) -> Iterator[Operation]:
        """Every op, nested ones included, in program order."""
        for op in self.block:
            yield from op.walk()

    def data_ops(self) -> list[Operation]:
        return [op for op in self.block if op.name == "pd_op.data"]

    def parameter_ops(self) -> list[Operation]:
        return [op for op in self.block if op.name == "builtin.parameter"]

    def fetch_ops(self) -> list[Operation]:
        """The program's declared outputs, in order: fetch and shadow_output ops."""
        return [
            op
            for op in self.block
            if op.op_def is not None and op.op_def.has_trait(Trait.PROGRAM_OUTPUT)
        ]

    def outputs(self) -> list[Value]:
        """What the program produces, in order.

        A saved model names its outputs with fetch / shadow_output ops: their operands.
        A printed program usually has none; then every result no op reads is an output,
        in program order, except the results of data and parameter ops (those are inputs)
        and results typed <<NULL TYPE>> (their op leaves them unmade). Once `pin_outputs`
        has run, the pinned list.
        """
        if self.pinned_outputs is not None:
            return list(self.pinned_outputs)
        declared = [op.operand_value(0) for op in self.fetch_ops()]
        if declared:
            return [v for v in declared if v is not None]
        return [
            result
            for op in self.block
            if not (op.op_def is not None and op.op_def.has_trait(Trait.PROGRAM_INPUT))
            for result in op.results
            if result.use_empty() and not is_null(result.type)
        ]

    def pin_outputs(self) -> list[Value]:
        """Fix the current outputs, before passes change which values are unused."""
        if self.pinned_outputs is None:
            self.pinned_outputs = self.outputs()
        return list(self.pinned_outputs)

    def clone(self) -> Program:
        """A deep copy of the IR (parameter arrays are shared, not copied)."""
        copy = Program()
        copy.parameters = dict(self.parameters)
        copy.text_style = TextStyle(**vars(self.text_style))
        copy.source = self.source
        mapping: dict[int, Value] = {}
        for op in self.block:
            copy.block.append(clone_op(op, mapping))
        if self.pinned_outputs is not None:
            copy.pinned_outputs = [mapping[id(v)] for v in self.pinned_outputs]
        copy.renumbered = {
            n: mapping[id(v)] for n, v in self.renumbered.items() if id(v) in mapping
        }
        return copy

    def __str__(self) -> str:
        from cinn_py.pir.printer import print_program

        return print_program(self)

    def __len__(self) -> int:
        return len(self.block)


def clone_op(op: Operation, mapping: dict[int, Value]) -> Operation:
    """A copy of `op`, regions included, reading `mapping[id(v)]` for each operand `v`
    (values defined outside the copy must be there). Records each result's copy (and those
    of the ops nested in its regions) in `mapping`; results keep their `id_hint`."""
    operands = [None if v is None else mapping[id(v)] for v in op.operand_values()]
    new = Operation.create(
        op.name,
        operands,
        [r.type for r in op.results],
        op.attributes,
        num_regions=len(op.regions),
        loc=op.loc,
    )
    for old_region, new_region in zip(op.regions, new.regions, strict=True):
        for old_block in old_region.blocks:
            new_block = new_region.add_block()
            for inner in old_block:
                new_block.append(clone_op(inner, mapping))
    for old_result, new_result in zip(op.results, new.results, strict=True):
        new_result.id_hint = old_result.id_hint
        mapping[id(old_result)] = new_result
    return new
