"""Runs a named list of passes over a program, dumping it after each when asked.

Every pass here is `Program -> count of changes`. The manager verifies the program
after each pass, so a pass that breaks the IR is caught by name, and can write the
program text after each pass (`dump_dir`) for debugging.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cinn_py.pir.passes.dead_code import eliminate_dead_code
from cinn_py.pir.passes.fold_mutable_attributes import fold_mutable_attributes
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.pir.verifier import verify_program

Pass = Callable[[Program], int]

PASSES: dict[str, Pass] = {
    "fold_mutable_attributes": fold_mutable_attributes,
    "dead_code_elimination": eliminate_dead_code,
}
"""Every pass by the name the manager and the CLI know it by."""


@dataclass
class PassManager:
    passes: Sequence[str] = ("fold_mutable_attributes", "dead_code_elimination")
    dump_dir: str | None = None
    verify: bool = True
    changes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = [name for name in self.passes if name not in PASSES]
        if unknown:
            raise ValueError(f"unknown pass(es) {unknown}; known: {sorted(PASSES)}")

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
        if self.dump_dir is None:
            return
        os.makedirs(self.dump_dir, exist_ok=True)
        path = os.path.join(self.dump_dir, f"{step:02d}_{name}.pir")
        with open(path, "w", encoding="utf-8") as f:
            f.write(print_program(program))
