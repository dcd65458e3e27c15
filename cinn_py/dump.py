"""`CINN_PY_DUMP_DIR=dir`: every stage of every compile, as files, for debugging.

Each compile gets its own folder, `dir/<NNN>_<label>/` (NNN counts up from 000, the label
names the program, in at most 64 characters), so compiles of several programs, or of one
dynamic-shape program for several feed shapes, do not overwrite each other. In it:

    00_input.pir, 01_fold_mutable_attributes.pir, 02_dead_code_elimination.pir,
    03_specialize_shapes.pir  the program before and after each pass
    groups.txt                the groups: kind, ops, inputs, outputs
    group_N.lowered.ir        op lowering's LoweredFunc
    group_N.scheduled.ir      after auto-schedule and bound guards
    group_N.trace.txt         the tactic that scheduled the group (`tactic: row`),
                              then the schedule primitives, one per line
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
import warnings
from pathlib import Path

from cinn_py.hlir.naming import MAX_NAME_LENGTH, bounded_name, sanitize_identifier

DUMP_ENV = "CINN_PY_DUMP_DIR"


class DumpDir:
    """One compile's dump folder; every method is a no-op when dumping is off.

    Dumping never fails a compile: a folder or file that cannot be written (a read-only
    or full disk, a path too long) gives one RuntimeWarning and turns this compile's
    dumping off. Folder and file names are C identifiers of bounded length, whatever the
    program's file is called (`bounded_name`: a long one is cut and suffixed with a hash).
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    @classmethod
    def start(cls, label: str) -> DumpDir:
        """A fresh folder under `CINN_PY_DUMP_DIR` for a compile of `label`, or a disabled
        DumpDir when the variable is unset or empty, or the folder cannot be made."""
        root = os.environ.get(DUMP_ENV)
        if not root:
            return cls(None)
        base = Path(root)
        name = bounded_name(sanitize_identifier(label), MAX_NAME_LENGTH)
        try:
            base.mkdir(parents=True, exist_ok=True)
            index = len(list(base.glob("[0-9][0-9][0-9]_*")))
            while True:
                folder = base / f"{index:03d}_{name}"
                try:
                    folder.mkdir()
                except FileExistsError:
                    index += 1
                    continue
                return cls(folder)
        except OSError as error:
            _warn(error, base)
            return cls(None)

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def write(self, name: str, text: str) -> None:
        """Write file `name` (its name is bounded as the folder's is) in the folder."""
        if self.folder is None:
            return
        stem, dot, suffix = name.partition(".")
        path = self.folder / (bounded_name(stem, MAX_NAME_LENGTH) + dot + suffix)
        try:
            path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        except (OSError, UnicodeEncodeError) as error:
            _warn(error, path)
            self.folder = None


def _warn(error: Exception, path: Path) -> None:
    why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    warnings.warn(
        f"{DUMP_ENV}: cannot write {str(path)[:200]}: {why}; this compile is not dumped",
        RuntimeWarning,
        stacklevel=3,
    )


def program_label(source: str) -> str:
    """A folder label for a program read from `source`: `examples_softmax` for
    examples/softmax.pir, `mlp_model` for models/mlp/model.json."""
    path = Path(source)
    if source.startswith("<") or not path.suffix:
        return "program" if source.startswith("<") else path.name or "program"
    return f"{path.parent.name}_{path.stem}" if path.parent.name else path.stem
