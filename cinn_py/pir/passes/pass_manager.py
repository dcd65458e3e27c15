"""Runs a named list of passes over a program, dumping it after each when asked.

Every pass here is `Program -> count of changes`. The manager verifies the program
after each pass, so a pass that breaks the IR is caught by name, and can write the
program text after each pass (`dump_dir`) for debugging.

The default list (what `PassManager()` and so the compiler runs) prepares the program
for CINN-style fusion: fold mutable attributes, fuse matmul + bias [+ relu / tanh gelu]
into one library call (`fuse_gemm_epilogue`, before decomposition takes gelu apart),
decompose composite ops (softmax, layer_norm, gelu, ...) into primitives, fold
constants, merge common subexpressions, then drop dead code. After it, a softmax is max / subtract / exp / sum / divide, which
fusion puts in one group and the row schedule in one kernel. `PassManager.from_names`
runs any other list, e.g. `["fold_mutable_attributes", "dead_code_elimination"]` to
keep composites whole.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cinn_py.pir.passes.constant_folding import fold_constants
from cinn_py.pir.passes.cse import eliminate_common_subexpressions
from cinn_py.pir.passes.dead_code import eliminate_dead_code
from cinn_py.pir.passes.decompose import decompose_composites
from cinn_py.pir.passes.empty_tensors import fold_empty_tensors
from cinn_py.pir.passes.fold_mutable_attributes import fold_mutable_attributes
from cinn_py.pir.passes.fuse_gemm_epilogue import fuse_gemm_epilogues
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.pir.verifier import verify_program

Pass = Callable[[Program], int]

PASSES: dict[str, Pass] = {
    "fold_mutable_attributes": fold_mutable_attributes,
    "dead_code_elimination": eliminate_dead_code,
    "fold_empty_tensors": fold_empty_tensors,
    "fuse_gemm_epilogue": fuse_gemm_epilogues,
    "decompose_composites": decompose_composites,
    "constant_folding": fold_constants,
    "common_subexpression_elimination": eliminate_common_subexpressions,
}
"""Every pass by the name the manager and the CLI know it by."""

DEFAULT_PASSES: tuple[str, ...] = (
    "fold_mutable_attributes",
    "fold_empty_tensors",
    "fuse_gemm_epilogue",
    "decompose_composites",
    "constant_folding",
    "common_subexpression_elimination",
    "dead_code_elimination",
)
"""What the compiler runs before fusion."""


@dataclass
class PassManager:
    passes: Sequence[str] = DEFAULT_PASSES
    dump_dir: str | None = None
    verify: bool = True
    changes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [name for name in self.passes if name not in PASSES]
        if unknown:
            raise ValueError(f"unknown pass(es) {unknown}; known: {sorted(PASSES)}")

    @classmethod
    def from_names(
        cls, names: Sequence[str], dump_dir: str | None = None, verify: bool = True
    ) -> PassManager:
        """A manager running exactly the passes `names`, in order (names from `PASSES`)."""
        return cls(passes=tuple(names), dump_dir=dump_dir, verify=verify)

    def run(self, program: Program) -> Program:
        """Run the passes in order, in place; returns the program for chaining."""
        program.pin_outputs()
        self._dump(program, 0, "input")
        for step, name in enumerate(self.passes, start=1):
            self.changes[name] = PASSES[name](program)
            if self.verify:
                verify_program(program)
            self._dump(program, step, name)
        return program

    def _dump(self, program: Program, step: int, name: str) -> None:
        """Writes the program after step `step`; a dump that cannot be written (a full or
        read-only disk) warns once and stops this run's dumps, never failing the passes."""
        if self.dump_dir is None:
            return
        path = os.path.join(self.dump_dir, f"{step:02d}_{name}.pir")
        try:
            os.makedirs(self.dump_dir, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(print_program(program))
        except OSError as error:
            warnings.warn(
                f"cannot write the pass dump {path[:200]}: {error.strerror or error}; "
                "the passes go on without dumps",
                RuntimeWarning,
                stacklevel=3,
            )
            self.dump_dir = None
