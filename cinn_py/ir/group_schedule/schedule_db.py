"""The schedule database: tuned knobs per tactic and shape bucket, read by the tactics.

Each tactic decides a few numbers by rule (`Tactic.knobs`: a row's threads, rows a
block, a flat launch's threads and steps, a column's threadIdx.y, a grid's threads, a
tile's lanes). `tools/tune.py` tries the other values a tactic can take for a function
(`Tactic.candidates`), drops those the static report marks bad, ranks the rest (the
static model, or CUDA events on a GPU) and writes the winners to
`schedules/<arch>.json`, one entry per (tactic, narrowest element size, shape bucket):

    {"format": 1, "arch": "sm_90", "written": {...},
     "entries": [{"tactic": "row", "itemsize": 2, "bucket": {"rows": 4096, "cols": 4096},
                  "knobs": {"threads_per_row": 256, "rows_per_block": 1}, ...}]}

`auto_schedule` asks the database for the function's key (`Tactic.bucket`: powers of
two at or above the rows and the row length, or the elements) before it applies the
tactic; an entry whose knobs are one of the function's candidates is used, anything
else (no entry, an entry the function cannot take) leaves the tactic's rules. The
compiler works without the file. Only functions of static shape are looked up: a
kernel over symbolic dims serves every shape of its buckets, and its rules are what
the schedule cache's guards record (`ir.dim_guards`).

Where: `CINN_PY_SCHEDULES` names the folder (`off` turns the database off), else the
`schedules/` folder of the checkout cinn_py runs from. A file that cannot be used
raises ScheduleDBError naming it and the entry; the database's digest is part of the
compiled-program cache key, so a new database recompiles what it changes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cinn_py.errors import ScheduleDBError

FORMAT = 1
ENV = "CINN_PY_SCHEDULES"
OFF = "off"
ITEMSIZES = (1, 2, 4, 8)

Bucket = tuple[tuple[str, int], ...]
"""A shape bucket as sorted (name, power of two) pairs: (("cols", 4096), ("rows", 4096))."""


@dataclass(frozen=True)
class ScheduleKey:
    """What an entry is for: the tactic, the narrowest element size of the function's
    buffers (vector lanes follow from it) and the shape bucket (`Tactic.bucket`)."""

    tactic: str
    itemsize: int
    bucket: Bucket

    def describe(self) -> str:
        dims = ", ".join(f"{name} <= {value}" for name, value in self.bucket)
        return f"{self.tactic}, {self.itemsize}-byte elements, {dims}"

    def to_json(self) -> dict[str, Any]:
        """The key as an entry of the file writes it (`key_from_json` reads it back)."""
        return {"tactic": self.tactic, "itemsize": self.itemsize, "bucket": dict(self.bucket)}


@dataclass(frozen=True)
class ScheduleDB:
    """The entries of one arch's database (empty where there is no file)."""

    arch: str
    entries: Mapping[ScheduleKey, Mapping[str, int]] = field(default_factory=dict)
    path: str = ""
    """The file it was read from ("" for an empty database)."""
    written: Mapping[str, Any] = field(default_factory=dict)
    """What tools/tune.py recorded of the run that wrote it (date, ranking, NVRTC)."""
    notes: Mapping[ScheduleKey, Mapping[str, Any]] = field(default_factory=dict)
    """Per entry, what the tuner measured (the case, the rule's knobs, the scores)."""

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def digest(self) -> str:
        """A hash of the entries (not of the notes): part of the program-cache key."""
        if not self.entries:
            return ""
        text = json.dumps(
            sorted(
                [key.tactic, key.itemsize, list(key.bucket), sorted(knobs.items())]
                for key, knobs in self.entries.items()
            )
        )
        return hashlib.sha256(f"{self.arch}:{text}".encode()).hexdigest()[:16]

    def lookup(self, key: ScheduleKey | None) -> Mapping[str, int] | None:
        return None if key is None else self.entries.get(key)

    def with_entry(
        self, key: ScheduleKey, knobs: Mapping[str, int], note: Mapping[str, Any] | None = None
    ) -> ScheduleDB:
        """A copy holding `knobs` for `key` (replacing what it held)."""
        entries = {**self.entries, key: dict(knobs)}
        notes = {**self.notes, key: dict(note or {})}
        return ScheduleDB(self.arch, entries, self.path, self.written, notes)

    def to_json(self) -> dict[str, Any]:
        rows = []
        for key in sorted(self.entries, key=lambda k: (k.tactic, k.itemsize, k.bucket)):
            row: dict[str, Any] = {**key.to_json(), "knobs": dict(self.entries[key])}
            row.update(self.notes.get(key, {}))
            rows.append(row)
        return {"format": FORMAT, "arch": self.arch, "written": dict(self.written), "entries": rows}

    def write(self, path: str | Path) -> None:
        """Writes the database as JSON (atomically: a reader never sees half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            temp.write_text(json.dumps(self.to_json(), indent=1) + "\n")
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise


def parse(text: str, path: str, arch: str | None = None) -> ScheduleDB:
    """The database in `text` (the content of `path`); ScheduleDBError for anything
    that is not a database of this format (for `arch`, where given)."""
    from cinn_py.ir.group_schedule.tactics import TACTIC_NAMED  # it imports ScheduleKey

    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ScheduleDBError(path, f"not JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict):
        raise ScheduleDBError(path, f"expected a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ScheduleDBError(
            path, f"format {data.get('format')!r}, this cinn_py reads format {FORMAT}"
        )
    file_arch = data.get("arch")
    if not isinstance(file_arch, str) or (arch is not None and file_arch != arch):
        raise ScheduleDBError(path, f"arch {file_arch!r}, expected {arch!r}")
    rows = data.get("entries")
    if not isinstance(rows, list):
        raise ScheduleDBError(path, "'entries' must be a list")
    written = data.get("written", {})
    if not isinstance(written, dict):
        raise ScheduleDBError(path, "'written' must be an object")
    knob_names = {name: tactic.knob_names for name, tactic in TACTIC_NAMED.items()}
    entries: dict[ScheduleKey, dict[str, int]] = {}
    notes: dict[ScheduleKey, dict[str, Any]] = {}
    for index, row in enumerate(rows):
        key, knobs = _entry(row, path, index, knob_names)
        if key in entries:
            raise ScheduleDBError(path, f"a second entry for ({key.describe()})", index)
        entries[key] = knobs
        notes[key] = {
            k: v for k, v in row.items() if k not in ("tactic", "itemsize", "bucket", "knobs")
        }
    return ScheduleDB(file_arch, entries, path, written, notes)


def key_from_json(
    row: Any,
    path: str,
    index: int | None = None,
    knob_names: Mapping[str, tuple[str, ...]] | None = None,
) -> ScheduleKey:
    """The key of an entry (or of `written.keys`, the keys a tuner run tuned), checked:
    ScheduleDBError naming `path` and the entry's `index` for anything else."""
    if knob_names is None:
        from cinn_py.ir.group_schedule.tactics import TACTIC_NAMED  # it imports ScheduleKey

        knob_names = {name: tactic.knob_names for name, tactic in TACTIC_NAMED.items()}
    if not isinstance(row, dict):
        raise ScheduleDBError(path, f"expected an object, got {type(row).__name__}", index)
    tactic = row.get("tactic")
    if tactic not in knob_names:
        names = ", ".join(knob_names)
        raise ScheduleDBError(path, f"tactic {tactic!r} is none of {names}", index)
    itemsize = row.get("itemsize")
    if itemsize not in ITEMSIZES or isinstance(itemsize, bool):
        raise ScheduleDBError(path, f"itemsize {itemsize!r} is none of {ITEMSIZES}", index)
    bucket = row.get("bucket")
    if not isinstance(bucket, dict) or not bucket:
        raise ScheduleDBError(path, "'bucket' must be an object of dims", index)
    for name, value in bucket.items():
        if not _power_of_two(value):
            raise ScheduleDBError(path, f"bucket {name} = {value!r} is not a power of two", index)
    return ScheduleKey(tactic, itemsize, tuple(sorted(bucket.items())))


def _entry(
    row: Any, path: str, index: int, knob_names: Mapping[str, tuple[str, ...]]
) -> tuple[ScheduleKey, dict[str, int]]:
    key = key_from_json(row, path, index, knob_names)
    tactic = key.tactic
    knobs = row.get("knobs")
    if not isinstance(knobs, dict) or not knobs:
        raise ScheduleDBError(path, "'knobs' must be an object of knob values", index)
    allowed = knob_names[tactic]
    for name, value in knobs.items():
        if name not in allowed:
            known = ", ".join(allowed) or "none"
            raise ScheduleDBError(
                path, f"{tactic} has no knob {name!r} (its knobs: {known})", index
            )
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ScheduleDBError(path, f"knob {name} = {value!r} is not a positive int", index)
    return key, dict(knobs)


def _power_of_two(value: Any) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value >= 1
        and not value & (value - 1)
    )


def schedules_dir() -> Path | None:
    """The folder of databases: `CINN_PY_SCHEDULES`, else the checkout's `schedules/`;
    None when the variable is `off`."""
    configured = os.environ.get(ENV, "").strip()
    if configured.lower() == OFF:
        return None
    if configured:
        return Path(configured).expanduser()
    return Path(__file__).resolve().parents[3] / "schedules"


_LOADED: dict[tuple[str, int, int], ScheduleDB] = {}


def database_for(arch: str) -> ScheduleDB:
    """The database of `arch` from `schedules_dir()`: empty where there is no file (or
    the database is off); read once per version of the file."""
    folder = schedules_dir()
    if folder is None:
        return ScheduleDB(arch)
    path = folder / f"{arch}.json"
    try:
        stat = path.stat()
    except OSError:
        return ScheduleDB(arch)
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    found = _LOADED.get(key)
    if found is None:
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as error:
            raise ScheduleDBError(str(path), f"cannot be read ({error})") from None
        found = _LOADED[key] = parse(text, str(path), arch)
    return found


def resolve(schedules: ScheduleDB | str | os.PathLike[str] | None, arch: str) -> ScheduleDB:
    """What a compile's `schedules` argument means: None, the arch's default database
    (`database_for`); a ScheduleDB, itself; a path, the database in that file (for
    `arch`: ScheduleDBError for another arch's)."""
    if schedules is None:
        return database_for(arch)
    if isinstance(schedules, ScheduleDB):
        return schedules
    return load(schedules, arch)


def load(path: str | os.PathLike[str], arch: str | None = None) -> ScheduleDB:
    """The database in the file `path` (ScheduleDBError if it cannot be used)."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ScheduleDBError(str(path), f"cannot be read ({error})") from None
    return parse(text, str(path), arch)
