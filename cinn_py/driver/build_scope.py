"""BuildScope: a Scope with a variable for every tensor value of a program (the seed's
entry point; it needs the compiler's value names, so it sits above the runtime).

    scope = BuildScope("cuda-emu", program)
    runtime_program = PIRCompiler(program, "cuda-emu", scope).build()
"""

from __future__ import annotations

from cinn_py.hlir.naming import NameTable
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType
from cinn_py.runtime.feeds import check_array, to_array
from cinn_py.runtime.scope import Scope
from cinn_py.targets import Target


def BuildScope(target: str | Target, program: Program) -> Scope:  # noqa: N802 - the seed's name
    """A Scope with a variable for every tensor value of `program` (`var_<N>`), its
    parameters filled in from `program.parameters`. The shapes must be static. Compiling
    (`PIRCompiler.build`) then drops the variables of values that live only inside a
    kernel and adds those of Tensor[] elements a library op writes."""
    scope = Scope(target)
    names = NameTable(program)
    for op in program.block:
        for result in op.results:
            if isinstance(result.type, DenseTensorType):
                scope.var(names.buffer(result), result.type)
    for op in program.parameter_ops():
        name = str(op.attr("parameter_name"))
        array, type_ = program.parameters.get(name), op.result(0).type
        if array is not None and isinstance(type_, DenseTensorType):
            scope[names.buffer(op.result(0))].set(check_array(name, to_array(name, array), type_))
    return scope
