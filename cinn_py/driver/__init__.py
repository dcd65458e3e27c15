"""The driver: what drives hlir, ir, backends and runtime, above all of them (CINN's
`hlir/framework/pir_compiler`). Neither `cinn_py.hlir` nor `cinn_py.runtime` imports it.

    scope = BuildScope("cuda-emu", program)
    runtime_program = PIRCompiler(program, "cuda-emu", scope).build()
    runtime_program.execute()

`PIRCompiler` runs every stage and builds the RuntimeProgram; `CompiledProgram` (what
`cinn_py.compile` makes for a compiled target) owns one compile per feed-shape
signature; `plan_storage` says which Scope variable each value lives in.
"""

from cinn_py.driver.build_scope import BuildScope
from cinn_py.driver.compiled import CompiledProgram
from cinn_py.driver.pir_compiler import PIRCompiler

__all__ = ["BuildScope", "CompiledProgram", "PIRCompiler"]
