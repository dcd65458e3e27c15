"""One arena for all the compiles of a program with -1 dims.

A program with -1 dims is compiled per feed signature (`driver.compiled`), and each
compile plans its intermediates into an arena (`runtime.memory_plan`). Given each its
own, a model served at many sequence lengths would hold one arena per length it keeps
compiled (up to `max_shapes`): memory that grows with the number of shapes, though only
one runs at a time. The compiles of one `CompiledProgram` share one `ArenaPool`
instead: its buffer is as large as the largest arena a compile bound so far (it grows
when a compile needs more), and every compile's variables are views of it.

Sharing is safe because a run writes every arena variable it reads before reading it
(the plan's ranges cover exactly the values the steps write; feeds and parameters live
outside the arena; results are copied out of it before the next run) and runs of one
program are sequential on one stream. A compile bound before the buffer grew keeps
views of the old buffer (still valid memory) until its next run, which rebinds it to
the current one (`Scope.refresh_arena`: its launches and CUDA graphs are packed again,
`Scope.generation`), so the old buffer is freed once no compile holds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cinn_py.targets import Target


class ArenaPool:
    """The shared arena of one program's compiles, grown on demand."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.buffer: Any = None
        """The current arena (a byte array of the target's memory), None before any."""
        self.alignment = 1
        self.grown = 0
        """How many times a compile needed a larger (or more aligned) buffer."""

    @property
    def nbytes(self) -> int:
        return 0 if self.buffer is None else int(self.buffer.nbytes)

    def reserve(self, nbytes: int, alignment: int) -> Any:
        """The current buffer, made at least `nbytes` long and aligned to `alignment`
        first (a new allocation; views of the old one stay valid while held)."""
        if self.buffer is None or self.nbytes < nbytes or self.alignment % alignment:
            self.alignment = max(self.alignment, alignment)
            self.buffer = self.target.arena(max(nbytes, self.nbytes, 1), self.alignment)
            self.grown += 1
        return self.buffer
