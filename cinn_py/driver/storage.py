"""Where each value of a grouped program lives at run time: the storage plan.

Values that cross a group boundary, feeds, parameters and program outputs get a Scope
variable named `var_<N>` after the value's printed number (`%N`). Values that live only
inside a fused kernel get none. The glue ops outside groups move no data, so they become
aliases here instead of instructions:

    pd_op.data / builtin.parameter   a variable, filled from the feed / the parameter
    pd_op.fetch                      its operand's storage
    builtin.combine                  the list of its operands' storage (a Tensor[])
    builtin.split / builtin.slice    elements of their operand's list
    builtin.shadow_output            nothing (it only marks an output)

A Tensor[] result of a library op (`pd_op.split` run by its reference kernel) gets one
variable per element: `var_<N>_0`, `var_<N>_1`, ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cinn_py.errors import CompileError, UnsupportedOpError
from cinn_py.hlir.group import Group, GroupKind
from cinn_py.hlir.naming import NameTable
from cinn_py.pir.operation import Operation
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait
from cinn_py.pir.types import DenseTensorType, VectorType, is_null
from cinn_py.pir.value import Value
from cinn_py.runtime.library import Storage


@dataclass
class StoragePlan:
    """`variables`: every variable the runtime program uses, with its type, in program
    order. `feeds` / `parameters`: the variables a feed / parameter name fills."""

    names: NameTable
    variables: dict[str, DenseTensorType] = field(default_factory=dict)
    feeds: dict[str, list[str]] = field(default_factory=dict)
    parameters: dict[str, list[str]] = field(default_factory=dict)
    _values: dict[int, Storage] = field(default_factory=dict)

    def get(self, value: Value) -> Storage | None:
        return self._values.get(id(value))

    def of(self, value: Value, user: str) -> Storage:
        """The storage of `value`, which `user` needs; a CompileError if it has none."""
        storage = self._values.get(id(value))
        if storage is None:
            raise CompileError(
                f"{user} needs {self.names.printed(value)}, which lives only inside a "
                "fused kernel (no group outputs it)"
            )
        return storage

    def tensor(self, value: Value, user: str) -> str:
        """The one variable of a tensor value."""
        storage = self.of(value, user)
        if not isinstance(storage, str):
            raise CompileError(f"{user} needs {self.names.printed(value)} as one tensor")
        return storage

    def own(self, value: Value) -> None:
        """Give `value` variables of its own (none for a result typed <<NULL TYPE>>,
        which its op leaves unmade)."""
        if is_null(value.type):
            return
        name = self.names.buffer(value)
        if isinstance(value.type, DenseTensorType):
            self.variables[name] = value.type
            self._values[id(value)] = name
            return
        if not isinstance(value.type, VectorType) or not all(
            isinstance(t, DenseTensorType) for t in value.type.types
        ):
            raise CompileError(f"{self.names.printed(value)} has a type the runtime cannot hold")
        items: list[Storage] = []
        for index, type_ in enumerate(value.type.types):
            self.variables[f"{name}_{index}"] = type_
            items.append(f"{name}_{index}")
        self._values[id(value)] = items

    def alias(self, value: Value, storage: Storage | None) -> None:
        if storage is not None:
            self._values[id(value)] = storage


def plan_storage(program: Program, groups: Sequence[Group], names: NameTable) -> StoragePlan:
    """The storage of every value of `program` grouped into `groups`; ops in no group
    that compute something (not glue) are run as library ops and own their results."""
    plan = StoragePlan(names)
    fused = {id(op) for g in groups if g.kind is GroupKind.FUSED for op in g.ops}
    fused_outputs = {id(v) for g in groups if g.kind is GroupKind.FUSED for v in g.outputs}
    for op in program.block:
        if id(op) in fused:
            for result in op.results:
                if id(result) in fused_outputs:
                    plan.own(result)
                elif op.name == "builtin.combine":
                    plan.alias(result, _combined(plan, op))
            continue
        _plan_op(plan, op)
    return plan


def _plan_op(plan: StoragePlan, op: Operation) -> None:
    name = op.name
    if op.op_def is not None and op.op_def.has_trait(Trait.NO_STORAGE):
        raise UnsupportedOpError(name, op.where(), "runs on the reference target only")
    if name == "pd_op.data":
        plan.own(op.result(0))
        plan.feeds.setdefault(str(op.attr("name")), []).append(plan.tensor(op.result(0), name))
    elif name == "builtin.parameter":
        plan.own(op.result(0))
        variable = plan.tensor(op.result(0), name)
        plan.parameters.setdefault(str(op.attr("parameter_name")), []).append(variable)
    elif name == "pd_op.fetch":
        plan.alias(op.result(0), plan.get(op.operand_values()[0]))
    elif name == "builtin.combine":
        plan.alias(op.result(0), _combined(plan, op))
    elif op.op_def is not None and op.op_def.has_trait(Trait.VECTOR):
        items = plan.get(op.operand_values()[0])
        if isinstance(items, list):
            if name == "builtin.split":
                for result, item in zip(op.results, items, strict=True):
                    plan.alias(result, item)
            else:
                plan.alias(op.result(0), items[int(op.attr("index"))])
    elif name != "builtin.shadow_output":
        for result in op.results:
            plan.own(result)


def _combined(plan: StoragePlan, op: Operation) -> Storage | None:
    items = [plan.get(v) for v in op.operand_values() if v is not None]
    if any(item is None for item in items):
        return None
    return items  # type: ignore[return-value]
