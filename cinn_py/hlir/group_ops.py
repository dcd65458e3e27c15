"""Groups as `cinn_op.group` ops, and back.

`groups_to_program` gives a copy of a program in which each group of
`cinn_py.hlir.grouping.group_program` is one `cinn_op.group` op: its region holds the
group's ops, then a `cf.yield` of the group's outputs, which are the group op's results;
ops outside read those results. Values keep the numbers they print with in the source
program, so the grouped program reads next to the flat one. `flatten_groups` inlines
the groups again (the inverse, for tests and tools).
"""

from __future__ import annotations

from collections.abc import Sequence

from cinn_py.errors import CompileError
from cinn_py.hlir.group import Group, dependency_order
from cinn_py.pir.dialects.cinn_op import GROUP, YIELD
from cinn_py.pir.operation import Operation
from cinn_py.pir.printer import ValueNames
from cinn_py.pir.program import Program, TextStyle, clone_op
from cinn_py.pir.traits import Trait
from cinn_py.pir.value import Value


def groups_to_program(program: Program, groups: Sequence[Group]) -> Program:
    """A copy of `program` with each of `groups` (whose ops are top-level ops of
    `program`) as a `cinn_op.group` op, placed so that every value is defined before
    it is used; ops in no group stay as they are, in program order where they can."""
    names = ValueNames(program)
    units = _ordered_units(program, groups)
    copy = _empty_like(program)
    mapping: dict[int, Value] = {}
    for unit in units:
        if isinstance(unit, Operation):
            copy.block.append(_numbered_clone(unit, mapping, names))
            continue
        group_op = Operation.create(
            GROUP,
            result_types=[v.type for v in unit.outputs],
            attributes={"group_name": unit.name, "kind": unit.kind.value},
            num_regions=1,
        )
        block = group_op.regions[0].add_block()
        for op in unit.ops:
            block.append(_numbered_clone(op, mapping, names))
        block.append(Operation.create(YIELD, [mapping[id(v)] for v in unit.outputs]))
        for output, result in zip(unit.outputs, group_op.results, strict=True):
            mapping[id(output)] = result
        copy.block.append(group_op)
    copy.pinned_outputs = [mapping[id(v)] for v in program.outputs()]
    return copy


def flatten_groups(program: Program) -> Program:
    """A copy of `program` with every `cinn_op.group` op replaced by its ops (the
    `cf.yield` dropped, uses of the group's results reading the yielded values)."""
    copy = _empty_like(program)
    mapping: dict[int, Value] = {}
    for op in program.block:
        if op.name != GROUP:
            copy.block.append(clone_op(op, mapping))
            continue
        *inner, last = op.regions[0].blocks[0].ops
        for member in inner:
            copy.block.append(clone_op(member, mapping))
        for result, value in zip(op.results, last.operand_values(), strict=True):
            mapping[id(result)] = mapping[id(value)]
    copy.pinned_outputs = [mapping[id(v)] for v in program.outputs()]
    return copy


def _empty_like(program: Program) -> Program:
    copy = Program()
    copy.parameters = dict(program.parameters)
    copy.text_style = TextStyle(**vars(program.text_style))
    copy.source = program.source
    return copy


def _numbered_clone(op: Operation, mapping: dict[int, Value], names: ValueNames) -> Operation:
    """`clone_op`, the copies' values numbered as `names` prints the originals."""
    new = clone_op(op, mapping)
    for old_op, new_op in zip(op.walk(), new.walk(), strict=True):
        for old, copied in zip(old_op.results, new_op.results, strict=True):
            copied.id_hint = names.number(old)
    return new


def _ordered_units(program: Program, groups: Sequence[Group]) -> list[Group | Operation]:
    """Groups and ungrouped top-level ops, each after the units it reads from; ties in
    program order (of a group's first op)."""
    position = {id(op): i for i, op in enumerate(program.block)}
    owner: dict[int, int] = {}
    units: list[Group | Operation] = []
    for group in groups:
        for op in group.ops:
            if id(op) not in position:
                raise CompileError(f"{group.name}: {op.name} is not a top-level op of the program")
            if id(op) in owner:
                raise CompileError(f"{group.name}: {op.name} is in two groups")
            owner[id(op)] = len(units)
        units.append(group)
    for op in program.block:
        if id(op) not in owner:
            owner[id(op)] = len(units)
            units.append(op)

    def ops_of(unit: Group | Operation) -> list[Operation]:
        return [unit] if isinstance(unit, Operation) else list(unit.ops)

    names = [unit.name for unit in units]
    return [units[i] for i in dependency_order([ops_of(u) for u in units], program, names)]


def groups_to_dot(program: Program) -> str:
    """Graphviz text for a program with `cinn_op.group` ops (as `groups_to_program` makes
    it): one `subgraph cluster_<group>` per group, labelled with its name and kind; a
    node per op labelled `%N = op_name` (feeds and parameters as ellipses, with their
    names); an edge per use, labelled with the value, from the op that computes it
    (through the group's `cf.yield`)."""
    names = ValueNames(program)
    node_of: dict[int, str] = {}
    source_of: dict[int, Value] = {}
    lines = ["digraph program {", '  node [shape=box, fontname="monospace"];']
    edges: list[str] = []
    counter = 0

    def add_node(op: Operation, indent: str) -> None:
        nonlocal counter
        node = f"op{counter}"
        counter += 1
        results = ", ".join(names(r) for r in op.results)
        label = _dot_escape(f"{results} = {op.name}" if results else op.name)
        shape = ""
        if op.op_def is not None and op.op_def.has_trait(Trait.PROGRAM_INPUT):
            key = "name" if op.name == "pd_op.data" else "parameter_name"
            label += "\\n" + _dot_escape(str(op.attr(key)))
            shape = ", shape=ellipse"
        lines.append(f'{indent}{node} [label="{label}"{shape}];')
        for result in op.results:
            node_of[id(result)] = node
            source_of[id(result)] = result
        for value in op.operand_values():
            if value is not None and id(value) in node_of:
                edges.append(
                    f'  {node_of[id(value)]} -> {node} [label="{names(source_of[id(value)])}"];'
                )

    for op in program.block:
        if op.name != GROUP:
            add_node(op, "  ")
            continue
        name = str(op.attr("group_name"))
        lines.append(f"  subgraph cluster_{_dot_id(name)} {{")
        kind = op.attr("kind")
        lines.append(f'    label="{_dot_escape(f"{name} ({kind})")}";')
        *inner, last = op.regions[0].blocks[0].ops
        for member in inner:
            add_node(member, "    ")
        lines.append("  }")
        for result, value in zip(op.results, last.operand_values(), strict=True):
            if value is not None:
                node_of[id(result)] = node_of[id(value)]
                source_of[id(result)] = source_of[id(value)]
    lines.extend(edges)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _dot_id(text: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in text)
