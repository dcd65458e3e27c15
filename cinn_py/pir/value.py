"""SSA values and their use lists.

A `Value` is made by exactly one op (`OpResult`) and read by any number of
`OpOperand`s. The use list is kept in step by the only methods that change an
operand (`OpOperand.set`, `Value.replace_all_uses_with`, `Operation.erase`), so
passes can rely on `value.uses` being exact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cinn_py.pir.types import DenseTensorType, Type

if TYPE_CHECKING:
    from cinn_py.pir.operation import Operation


class Value:
    """An SSA value: a type and the operands that use it."""

    __slots__ = ("type", "_uses", "id_hint")

    def __init__(self, type_: Type) -> None:
        self.type = type_
        self._uses: list[OpOperand] = []
        self.id_hint: int | None = None
        """The number this value had in parsed text, kept so that printing gives it back."""

    @property
    def uses(self) -> tuple[OpOperand, ...]:
        return tuple(self._uses)

    def use_empty(self) -> bool:
        return not self._uses

    def users(self) -> list[Operation]:
        """The ops that read this value, each once, in use order."""
        seen: dict[int, Operation] = {}
        for use in self._uses:
            seen.setdefault(id(use.owner), use.owner)
        return list(seen.values())

    def replace_all_uses_with(self, other: Value) -> None:
        if other is self:
            return
        for use in list(self._uses):
            use.set(other)

    @property
    def defining_op(self) -> Operation | None:
        return None

    @property
    def tensor_type(self) -> DenseTensorType:
        """The type as a dense tensor; raises TypeError for vector values."""
        if not isinstance(self.type, DenseTensorType):
            raise TypeError(f"value has type {self.type!r}, not a dense tensor")
        return self.type


class OpResult(Value):
    """The `index`-th result of op `owner`."""

    __slots__ = ("owner", "index")

    def __init__(self, type_: Type, owner: Operation, index: int) -> None:
        super().__init__(type_)
        self.owner = owner
        self.index = index

    @property
    def defining_op(self) -> Operation:
        return self.owner

    def __repr__(self) -> str:
        hint = f"%{self.id_hint}" if self.id_hint is not None else "%?"
        return f"<OpResult {hint} #{self.index} of {self.owner.name}: {self.type!r}>"


class OpOperand:
    """The `index`-th operand slot of op `owner`; `value` is None for a null operand."""

    __slots__ = ("owner", "index", "_value")

    def __init__(self, owner: Operation, index: int, value: Value | None) -> None:
        self.owner = owner
        self.index = index
        self._value: Value | None = None
        self.set(value)

    @property
    def value(self) -> Value | None:
        return self._value

    def set(self, value: Value | None) -> None:
        """Point this slot at `value`, moving it from one use list to the other."""
        if self._value is not None:
            self._value._uses.remove(self)
        self._value = value
        if value is not None:
            value._uses.append(self)

    def drop(self) -> None:
        self.set(None)
