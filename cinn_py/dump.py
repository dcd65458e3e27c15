"""`CINN_PY_DUMP_DIR=dir`: every stage of every compile, as files, for debugging.

Each compile gets its own folder, `dir/<NNN>_<label>/` (NNN counts up from 000, the label
names the program), so compiles of several programs, or of one dynamic-shape program
for several feed shapes, do not overwrite each other. In it:

    00_input.pir, 01_fold_mutable_attributes.pir, 02_dead_code_elimination.pir,
    03_specialize_shapes.pir  the program before and after each pass
    groups.txt                the groups: kind, ops, inputs, outputs
    group_N.lowered.ir        op lowering's LoweredFunc
    group_N.scheduled.ir      after auto-schedule and bound guards
    group_N.trace.txt         the schedule primitives, one per line
    kernels.cu                the CUDA C compiled: every group's kernel in one unit
    kernels.log               g++'s or NVRTC's log, when it rejected kernels.cu
    group_N.cu                the group's kernel alone, self-contained (NVRTC and
                              g++ compile it as is)
    group_N.log               the log of the group whose own source fails too
    timings.txt               seconds per compile stage

NVRTC itself keeps the log of each fresh compile as `dir/kernels.nvrtc.log` (in `dir`,
not the compile's folder; see `cinn_py.backends.nvrtc`).
"""

from __future__ import annotations

import os
from pathlib import Path

from cinn_py.hlir.naming import sanitize_identifier

DUMP_ENV = "CINN_PY_DUMP_DIR"


class DumpDir:
    """One compile's dump folder; every method is a no-op when dumping is off."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    @classmethod
    def start(cls, label: str) -> DumpDir:
        """A fresh folder under `CINN_PY_DUMP_DIR` for a compile of `label`, or a disabled
        DumpDir when the variable is unset or empty."""
        root = os.environ.get(DUMP_ENV)
        if not root:
            return cls(None)
        base = Path(root)
        base.mkdir(parents=True, exist_ok=True)
        name = sanitize_identifier(label)
        index = len(list(base.glob("[0-9][0-9][0-9]_*")))
        while True:
            folder = base / f"{index:03d}_{name}"
            try:
                folder.mkdir()
            except FileExistsError:
                index += 1
                continue
            return cls(folder)

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def write(self, name: str, text: str) -> None:
        if self.folder is not None:
            (self.folder / name).write_text(text if text.endswith("\n") else text + "\n")


def program_label(source: str) -> str:
    """A folder label for a program read from `source`: `examples_softmax` for
    examples/softmax.pir, `mlp_model` for models/mlp/model.json."""
    path = Path(source)
    if source.startswith("<") or not path.suffix:
        return "program" if source.startswith("<") else path.name or "program"
    return f"{path.parent.name}_{path.stem}" if path.parent.name else path.stem
