"""The runtime: a Scope of variables, the instructions that run over it, and the
RuntimeProgram that runs them in order (CINN's `hlir/framework` runtime side). What
differs between targets (memory, synchronisation, library calls) it asks the Target.
The driver (`cinn_py.driver`) builds them; the runtime imports neither it nor `hlir`.

    scope = BuildScope("cuda-emu", program)                       # cinn_py.driver
    runtime_program = PIRCompiler(program, "cuda-emu", scope).build()
    runtime_program.execute()
"""

from cinn_py.runtime.instruction import Instruction
from cinn_py.runtime.library import LibraryInstruction
from cinn_py.runtime.runtime_program import RuntimeProgram
from cinn_py.runtime.scope import Scope, Variable

__all__ = [
    "Instruction",
    "LibraryInstruction",
    "RuntimeProgram",
    "Scope",
    "Variable",
]
