"""The runtime: a Scope of variables, the instructions that run over it, and the
RuntimeProgram that runs them in order (CINN's `hlir/framework` runtime side).

    scope = BuildScope("cuda-emu", program)
    runtime_program = PIRCompiler(program, "cuda-emu", scope).build()
    runtime_program.execute()
"""

from cinn_py.runtime.instruction import Instruction
from cinn_py.runtime.library import LibraryInstruction
from cinn_py.runtime.runtime_program import RuntimeProgram
from cinn_py.runtime.scope import BuildScope, Scope, Variable

__all__ = [
    "BuildScope",
    "Instruction",
    "LibraryInstruction",
    "RuntimeProgram",
    "Scope",
    "Variable",
]
