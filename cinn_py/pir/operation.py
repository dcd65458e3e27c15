"""Operations, blocks and regions: the mutable part of the IR.

An op is a name, operands, results, attributes and regions. Its meaning (operand
names, attribute kinds, verify, infer_meta) comes from the `OpDef` registered under
its name; an op whose name is not registered still parses, prints and verifies
structurally, and fails with `UnsupportedOpError` only where something needs to run it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cinn_py.pir.attributes import Attribute, attr_from_python
from cinn_py.pir.op_def import lookup_op_def
from cinn_py.pir.types import Type
from cinn_py.pir.value import OpOperand, OpResult, Value

if TYPE_CHECKING:
    from cinn_py.pir.op_def import OpDef


@dataclass(frozen=True)
class Location:
    """Where an op came from: a file and line of program text, or a model.json op index."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


class Operation:
    """One op. Create with `Operation.create` (or a `Builder`), never by hand."""

    __slots__ = ("name", "_operands", "_results", "attributes", "regions", "parent", "loc")

    def __init__(self) -> None:
        raise TypeError("use Operation.create(...)")

    @classmethod
    def create(
        cls,
        name: str,
        operands: Sequence[Value | None] = (),
        result_types: Sequence[Type] = (),
        attributes: Mapping[str, Attribute | object] | None = None,
        num_regions: int = 0,
        loc: Location | None = None,
    ) -> Operation:
        op = object.__new__(cls)
        op.name = name
        op.parent = None
        op.loc = loc
        op.attributes = {k: attr_from_python(v) for k, v in (attributes or {}).items()}
        op._operands = [OpOperand(op, i, v) for i, v in enumerate(operands)]
        op._results = [OpResult(t, op, i) for i, t in enumerate(result_types)]
        op.regions = [Region(op) for _ in range(num_regions)]
        return op

    # -- declaration ---------------------------------------------------------
    @property
    def op_def(self) -> OpDef | None:
        return lookup_op_def(self.name)

    # -- operands and results -------------------------------------------------
    @property
    def operands(self) -> tuple[OpOperand, ...]:
        return tuple(self._operands)

    @property
    def num_operands(self) -> int:
        return len(self._operands)

    def operand(self, index: int) -> OpOperand:
        return self._operands[index]

    def operand_value(self, index: int) -> Value | None:
        return self._operands[index].value

    def operand_values(self) -> list[Value | None]:
        return [o.value for o in self._operands]

    def set_operand(self, index: int, value: Value | None) -> None:
        self._operands[index].set(value)

    def set_operands(self, values: Sequence[Value | None]) -> None:
        """Replace the whole operand list (its length may change)."""
        for operand in self._operands:
            operand.drop()
        self._operands = [OpOperand(self, i, v) for i, v in enumerate(values)]

    @property
    def results(self) -> tuple[OpResult, ...]:
        return tuple(self._results)

    @property
    def num_results(self) -> int:
        return len(self._results)

    def result(self, index: int = 0) -> OpResult:
        return self._results[index]

    # -- attributes ------------------------------------------------------------
    def attr(self, name: str, default: object = None) -> object:
        """The attribute's Python value, or `default` if the op has none of that name."""
        attribute = self.attributes.get(name)
        return default if attribute is None else attribute.to_python()

    def set_attribute(self, name: str, value: Attribute | object) -> None:
        self.attributes[name] = attr_from_python(value)

    # -- structure ---------------------------------------------------------------
    def erase(self) -> None:
        """Remove this op from its block and drop its operands; its results must be unused."""
        for result in self._results:
            if not result.use_empty():
                users = ", ".join(sorted({u.owner.name for u in result.uses}))
                raise ValueError(
                    f"cannot erase {self.name}: result #{result.index} is used by {users}"
                )
        for operand in self._operands:
            operand.drop()
        for region in self.regions:
            for block in region.blocks:
                for op in reversed(list(block.ops)):
                    op.erase()
        if self.parent is not None:
            self.parent._remove(self)

    def where(self) -> str:
        """A human description of where this op is, for error messages."""
        parts = []
        if self.loc is not None:
            parts.append(str(self.loc))
        if self.parent is not None:
            parts.append(f"op #{self.parent.index_of(self)}")
        ids = [f"%{r.id_hint}" for r in self._results if r.id_hint is not None]
        if ids:
            parts.append("defining " + ", ".join(ids))
        return ", ".join(parts) if parts else "unattached op"

    def walk(self) -> Iterator[Operation]:
        """This op and every op nested in its regions, pre-order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    yield from op.walk()

    def __repr__(self) -> str:
        return f"<Operation {self.name} ({self.where()})>"


class Block:
    """An ordered list of ops."""

    __slots__ = ("_ops", "parent")

    def __init__(self, parent: Region | None = None) -> None:
        self._ops: list[Operation] = []
        self.parent = parent

    @property
    def ops(self) -> tuple[Operation, ...]:
        return tuple(self._ops)

    def __iter__(self) -> Iterator[Operation]:
        return iter(tuple(self._ops))

    def __len__(self) -> int:
        return len(self._ops)

    def index_of(self, op: Operation) -> int:
        try:
            return self._ops.index(op)  # ops compare by identity: a scan in C
        except ValueError:
            raise ValueError(f"{op.name} is not in this block") from None

    def insert(self, index: int, op: Operation) -> Operation:
        if op.parent is not None:
            raise ValueError(f"{op.name} is already in a block")
        self._ops.insert(index, op)
        op.parent = self
        return op

    def append(self, op: Operation) -> Operation:
        return self.insert(len(self._ops), op)

    def extend(self, ops: Iterable[Operation]) -> None:
        for op in ops:
            self.append(op)

    def _remove(self, op: Operation) -> None:
        del self._ops[self.index_of(op)]
        op.parent = None


class Region:
    """A list of blocks owned by an op."""

    __slots__ = ("blocks", "parent")

    def __init__(self, parent: Operation | None = None) -> None:
        self.blocks: list[Block] = []
        self.parent = parent

    def add_block(self) -> Block:
        block = Block(self)
        self.blocks.append(block)
        return block
