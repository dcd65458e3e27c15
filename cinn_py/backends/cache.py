"""The on-disk cache of compiled kernels: CUBINs, PTX, emulator libraries and executables,
and the emulator's precompiled header.

Keys are built in one place (`cache_key`) from explicit parts: the source, the options,
the compiler's version, the arch, the headers' digest.  An entry is never trusted:

- **Sealed entries.** Each file is its content followed by a 120-byte seal: a magic, the
  key the entry was built for, the content's length and SHA-256, a closing magic.  The
  seal is in the same file as the content, so the one `os.replace` that publishes an
  entry publishes both together: no reader can pair one write's content with another
  write's metadata, which a sidecar file (two renames; two writers of one key
  interleaving) would allow.  A truncated file has lost its closing magic; a flipped byte
  fails the checksum; another key's valid entry copied under this name carries the other
  key.  ELF loaders and g++'s PCH reader ignore bytes past what the file's own headers
  describe, so the sealed precompiled header is given to g++ as it is; libraries and
  executables are loaded from a private copy of the verified content (`emu_build`).
- **Verified before use.** `read` returns the content only after checking the seal; a
  damaged entry is removed (if it is still the file that was read: a concurrent writer's
  fresh entry is left alone), counted in `stats.rejected` and reported with a
  `CacheWarning` naming the file and what was wrong, and the caller compiles again.
- **Atomic writes, no locks.** Content and seal go to a temporary file in the entry's
  folder, then `os.replace` into place: readers see the old file or the new one, never
  half of one, and concurrent writers of one key each publish a complete entry (the last
  one stays).  There is no fsync: a file torn by a crash or power loss fails its seal
  and is rebuilt.
- **A folder that cannot be used.** A cache folder that is read-only, full or not ours
  (EROFS, ENOSPC, EACCES, ...) fails no compile: `read` takes what it cannot read for a
  miss, `write` keeps the compiled bytes in the process instead of on disk, and each
  warns once per folder (`unusable`: a `CacheWarning` naming the folder and
  `CINN_PY_CACHE_DIR`). Entries already in a read-only folder are still used.
- **Verified once per process.** Callers keep what they made from a verified entry
  (`remember`: a loaded library, an executable's bytes) so a process reads an entry once;
  `verified_file` remembers the (inode, size, mtime) of a large file it hashed (the
  precompiled header) and hashes it again only when that changes.  `forget` drops both.

`stats` counts kernel cache hits, misses (compiles) and rejected entries; `info` and
`clear` serve the command line.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cinn_py.errors import CacheError, CacheWarning

CACHE_DIR_ENV = "CINN_PY_CACHE_DIR"
TEMP_PREFIX = ".tmp-"
"""Files being written (and private copies being loaded) start with this; never entries."""
STALE_TEMP_S = 3600
"""`clear` removes temporary files older than this (left by a killed process); younger ones
may belong to a writer that is still running."""

ENTRY_FORMAT = "sealed-1"
"""Part of every key; a new entry format changes it."""

_SEAL = struct.Struct("<8s64sQ32s8s")
_OPEN, _CLOSE = b"CINNPY\x01\x00", b"\x00\x01YPNNIC"
_CHUNK = 1 << 20

_lock = threading.Lock()
_verified: dict[str, tuple[int, ...]] = {}
"""Path -> (device, inode, size, mtime) of each large entry this process hashed."""
_remembered: dict[str, Any] = {}
"""Path -> what this process made of the verified entry."""


def default_cache_dir() -> str:
    """The user's cache folder for cinn_py (`platformdirs.user_cache_dir`): on Linux
    `$XDG_CACHE_HOME/cinn_py`, else `~/.cache/cinn_py`."""
    from platformdirs import user_cache_dir

    return user_cache_dir("cinn_py", appauthor=False)


def cache_folder() -> Path:
    """`CINN_PY_CACHE_DIR`, else `default_cache_dir()`: the one rule for every kind,
    compiled programs (`driver.program_cache`) included."""
    return Path(os.path.expanduser(os.environ.get(CACHE_DIR_ENV) or default_cache_dir()))


def cache_dir() -> Path:
    """`cache_folder()`, created on first use where it can be (a folder that cannot be
    made is reported by the first write, `unusable`)."""
    path = cache_folder()
    with contextlib.suppress(OSError):
        path.mkdir(parents=True, exist_ok=True)
    return path


def cache_key(*parts: str | bytes) -> str:
    """A hex digest of the parts, each length-prefixed so that no two part lists collide,
    and of the entry format: entries an older cinn_py wrote (unsealed) are never looked up,
    rather than each rejected with a warning."""
    digest = hashlib.sha256()
    for part in (ENTRY_FORMAT, *parts):
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def cache_path(kind: str, key: str, suffix: str) -> Path:
    """Where the entry `key` of `kind` (e.g. "cubin", "cuda-emu") lives, whether or not it
    exists."""
    folder = cache_dir() / kind
    with contextlib.suppress(OSError):  # read-only: reads still find what is there
        folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{key}{suffix}"


_unusable: set[tuple[str, str]] = set()
"""(folder, "read" or "write") this process has warned about (`unusable`)."""


def unusable(error: OSError, doing: str) -> None:
    """Warn, once per process, folder and `doing` ("read", "write"), that the kernel
    cache's folder could not be used (`error`: read-only, full, not ours), naming the
    folder and `CINN_PY_CACHE_DIR`; the compile goes on without the cache."""
    folder = str(cache_folder())
    with _lock:
        if (folder, doing) in _unusable:
            return
        _unusable.add((folder, doing))
    reason = error.strerror or str(error)
    warnings.warn(
        f"cinn_py cache: cannot {doing} the kernel cache in {folder} ({reason}); "
        f"compiling without it: set {CACHE_DIR_ENV} to a writable folder",
        CacheWarning,
        stacklevel=3,
    )


# ---------------------------------------------------------------------------------------------
# Counters


@dataclass(frozen=True)
class CacheCounts:
    """A snapshot of `stats`; subtract two to count what happened in between."""

    hits: int = 0
    misses: int = 0
    rejected: int = 0

    def __sub__(self, other: CacheCounts) -> CacheCounts:
        return CacheCounts(
            self.hits - other.hits, self.misses - other.misses, self.rejected - other.rejected
        )


class CacheStats:
    """Running counters over every kind, for this process: `hits` (a kernel taken from the
    cache or from this process's memory of it), `misses` (a kernel compiled and stored) and
    `rejected` (damaged entries removed, the precompiled header's included; the header's
    hits and builds are not kernels and are not counted)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.rejected = 0

    def count(self, *, hits: int = 0, misses: int = 0, rejected: int = 0) -> None:
        with self._lock:
            self.hits += hits
            self.misses += misses
            self.rejected += rejected

    def snapshot(self) -> CacheCounts:
        with self._lock:
            return CacheCounts(self.hits, self.misses, self.rejected)

    def reset(self) -> None:
        with self._lock:
            self.hits = self.misses = self.rejected = 0


stats = CacheStats()


# ---------------------------------------------------------------------------------------------
# Seals


class DamagedEntry(Exception):
    """An entry whose seal does not hold; the message says what is wrong."""


def seal(content: bytes, key: str) -> bytes:
    """The seal that follows `content` in the entry for `key`."""
    return _seal_for(len(content), hashlib.sha256(content).digest(), key)


def _seal_for(length: int, digest: bytes, key: str) -> bytes:
    encoded = key.encode("ascii")
    if len(encoded) > 64:
        raise ValueError(f"cache keys are at most 64 characters, got {key!r}")
    return _SEAL.pack(_OPEN, encoded.ljust(64, b"\0"), length, digest, _CLOSE)


def _parse_seal(size: int, tail: bytes, key: str) -> tuple[int, bytes]:
    """The content length and digest a file of `size` bytes ending in `tail` claims, or
    DamagedEntry saying why it cannot be this key's entry."""
    if size == 0:
        raise DamagedEntry("the file is empty")
    if size < _SEAL.size:
        raise DamagedEntry(f"{size} bytes, too short to hold its seal (truncated)")
    opening, sealed_key, length, digest, closing = _SEAL.unpack(tail)
    if closing != _CLOSE:
        raise DamagedEntry("no seal at its end (truncated, or not written by cinn_py)")
    if opening != _OPEN:
        raise DamagedEntry("its seal is damaged")
    if length != size - _SEAL.size:
        raise DamagedEntry(
            f"its seal is for {length} bytes of content, the file holds "
            f"{size - _SEAL.size} (truncated or appended to)"
        )
    sealed_for = sealed_key.rstrip(b"\0").decode("ascii", "replace")
    if sealed_for != key:
        raise DamagedEntry(f"it belongs to another key ({sealed_for[:16]}...)")
    return length, digest


def unseal(data: bytes, key: str) -> bytes:
    """The content of the entry `data` for `key`; DamagedEntry if its seal does not hold."""
    length, digest = _parse_seal(len(data), data[-_SEAL.size :], key)
    content = data[:length]
    if hashlib.sha256(content).digest() != digest:
        raise DamagedEntry("its content does not match its checksum (damaged)")
    return content


# ---------------------------------------------------------------------------------------------
# Reading and writing entries


def read(kind: str, key: str, suffix: str) -> bytes | None:
    """The verified content of the entry, or None if it is missing, was damaged (then
    removed, with a CacheWarning) or cannot be read (`unusable` warns).  Counts a hit
    when found."""
    try:
        content = read_entry(cache_path(kind, key, suffix), key)
    except OSError as error:
        unusable(error, "read")
        return None
    if content is not None:
        stats.count(hits=1)
    return content


def write(kind: str, key: str, suffix: str, content: bytes) -> Path | None:
    """Store `content` sealed for `key`, atomically; returns the entry's path, or None
    where the folder cannot be written (`unusable` warns; the caller goes on with
    `content`).  Counts a miss (an entry is written after a compile)."""
    stats.count(misses=1)
    path = cache_path(kind, key, suffix)
    try:
        write_entry(path, key, content)
    except OSError as error:
        unusable(error, "write")
        return None
    return path


def read_entry(path: Path, key: str) -> bytes | None:
    """`read` for an entry named by its path (not counted in `stats.hits`); an OSError
    other than a missing file is the caller's."""
    try:
        with open(path, "rb") as file:
            identity = _identity(os.fstat(file.fileno()))
            data = file.read()
    except FileNotFoundError:
        return None
    try:
        return unseal(data, key)
    except DamagedEntry as damage:
        reject(path, str(damage), identity)
        return None


def write_entry(path: Path, key: str, content: bytes) -> None:
    """`write` for an entry named by its path (not counted in `stats.misses`): the
    temporary file is removed whatever stops the write (an OSError, which is the
    caller's, or an interrupt), so the entry is whole or absent."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX, suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(content)
            file.write(seal(content, key))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def publish_file(built: Path, path: Path, key: str) -> None:
    """Seal the file `built` (in `path`'s folder) for `key` and move it into place as the
    entry `path`: for outputs too large to pass around as bytes (the precompiled header).
    The entry counts as verified by this process."""
    digest = hashlib.sha256()
    with open(built, "r+b") as file:
        length = 0
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
            length += len(chunk)
        file.write(_seal_for(length, digest.digest(), key))
    os.replace(built, path)
    with _lock:
        _verified[str(path)] = _identity(os.stat(path))


def verified_file(path: Path, key: str) -> bool:
    """Whether `path` is a sound entry for `key`, to be read in place by another program
    (g++ reads the precompiled header itself).  Hashed once per process while the file's
    inode, size and mtime stay the same; a damaged file is rejected (removed, warned)."""
    try:
        identity = _identity(os.stat(path))
    except FileNotFoundError:
        return False
    with _lock:
        if _verified.get(str(path)) == identity:
            return True
    try:
        with open(path, "rb") as file:
            identity = _identity(os.fstat(file.fileno()))
            size = identity[2]
            file.seek(max(size - _SEAL.size, 0))
            length, expected = _parse_seal(size, file.read(_SEAL.size), key)
            file.seek(0)
            digest = hashlib.sha256()
            while length and (chunk := file.read(min(_CHUNK, length))):
                digest.update(chunk)
                length -= len(chunk)
            if digest.digest() != expected:
                raise DamagedEntry("its content does not match its checksum (damaged)")
    except FileNotFoundError:
        return False
    except DamagedEntry as damage:
        reject(path, str(damage), identity)
        return False
    with _lock:
        _verified[str(path)] = identity
    return True


def reject(path: Path, why: str, identity: tuple[int, ...] | None = None) -> None:
    """Report the damaged entry `path` (CacheWarning, `stats.rejected`) and remove it,
    if it is still the file that was found damaged (`identity`, else the one this process
    verified): a concurrent writer may already have replaced it with a sound one."""
    stats.count(rejected=1)
    with _lock:
        known = _verified.pop(str(path), None)
        _remembered.pop(str(path), None)
    identity = identity or known
    removed = "removed"
    try:
        if identity is not None and _identity(os.stat(path)) == identity:
            os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as error:  # a read-only folder: the entry stays, rejected at each use
        removed = f"not removed ({error.strerror or error})"
    warnings.warn(
        f"cinn_py cache: rejected {path}: {why}; {removed}, it will be rebuilt",
        CacheWarning,
        stacklevel=2,
    )


def _identity(stat: os.stat_result) -> tuple[int, ...]:
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


# ---------------------------------------------------------------------------------------------
# What this process has made of verified entries


def remember(path: Path, value: Any) -> None:
    """Keep what this process made from the verified entry `path` (a loaded library, an
    executable's bytes), so that it reads the entry once."""
    with _lock:
        _remembered[str(path)] = value


def remembered(path: Path) -> Any | None:
    """What `remember` kept for `path`, or None."""
    with _lock:
        return _remembered.get(str(path))


def forget(kind: str | None = None) -> None:
    """Drop this process's memory of verified entries (of `kind`, or all): the next use
    reads and verifies the entry again, as a new process would."""
    folder = None if kind is None else str(cache_dir() / kind) + os.sep
    with _lock:
        for table in (_verified, _remembered):
            for path in [p for p in table if folder is None or p.startswith(folder)]:
                del table[path]


# ---------------------------------------------------------------------------------------------
# The command line's view


def _kinds(kind: str | None) -> list[Path]:
    root = cache_dir()
    if not root.is_dir():
        return []
    if kind is not None:
        return [root / kind] if (root / kind).is_dir() else []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def _walk(folder: Path) -> tuple[list[Path], list[Path]]:
    """The entries under `folder` and its temporary files."""
    entries, temporary = [], []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            (temporary if name.startswith(TEMP_PREFIX) else entries).append(Path(root) / name)
    return entries, temporary


def info() -> dict[str, Any]:
    """The cache folder and, per kind, how many entries it holds and their bytes:
    `{"folder": "...", "kinds": {"cuda-emu": {"entries": 12, "bytes": 262144}, ...},
    "entries": ..., "bytes": ...}`."""
    kinds = {}
    for folder in _kinds(None):
        entries, _ = _walk(folder)
        kinds[folder.name] = {
            "entries": len(entries),
            "bytes": sum(_size(p) for p in entries),
        }
    return {
        "folder": str(cache_dir()),
        "kinds": kinds,
        "entries": sum(k["entries"] for k in kinds.values()),
        "bytes": sum(k["bytes"] for k in kinds.values()),
    }


def clear(kind: str | None = None) -> int:
    """Remove every entry (of `kind`, or all) and temporary files older than STALE_TEMP_S;
    returns the number of entries removed.  Safe while other processes use the cache:
    they hold what they loaded, and rebuild what they next miss."""
    removed = 0
    now = time.time()
    for folder in _kinds(kind):
        entries, temporary = _walk(folder)
        for path in entries:
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                pass
            except OSError as error:  # a read-only or foreign folder: say so, once
                raise CacheError(
                    f"cannot clear the cache folder {folder} ({error.strerror or error}; "
                    f"removed {removed} entries first); {CACHE_DIR_ENV} chooses another"
                ) from None
        for path in temporary:
            try:
                if now - path.stat().st_mtime > STALE_TEMP_S:
                    path.unlink()
            except FileNotFoundError:
                pass
        for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
            try:
                sub.rmdir()  # only if empty: a writer's temporary file keeps its folder
            except OSError:
                pass
        forget(folder.name)
    return removed


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
