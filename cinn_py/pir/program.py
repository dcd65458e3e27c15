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
        return [op for op in self.block if op.name in ("pd_op.fetch", "builtin.shadow_output")]

    def __str__(self) -> str:
        from cinn_py.pir.printer import print_program

        return print_program(self)

    def __len__(self) -> int:
        return len(self.block)
