"""The on-disk cache of compiled kernels (CUBINs, emulator libraries).

Keys are built in one place (`cache_key`) from explicit parts: the source, the
options, the compiler's version, the arch. Writes go to a temporary file in the
cache directory and `os.replace` into place, so a reader never sees half a file and
concurrent writers of the same key are harmless.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

DEFAULT_CACHE_DIR = "~/.cache/cinn_py"


def cache_dir() -> Path:
    """`CINN_PY_CACHE_DIR`, else ~/.cache/cinn_py; created on first use."""
    path = Path(os.path.expanduser(os.environ.get("CINN_PY_CACHE_DIR") or DEFAULT_CACHE_DIR))
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_key(*parts: str | bytes) -> str:
    """A hex digest of the parts, each length-prefixed so that no two part lists collide."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def cache_path(kind: str, key: str, suffix: str) -> Path:
    """Where the entry `key` of `kind` (e.g. "cubin", "emu") lives, whether or not it exists."""
    folder = cache_dir() / kind
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{key}{suffix}"


def read(kind: str, key: str, suffix: str) -> bytes | None:
    path = cache_path(kind, key, suffix)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def write(kind: str, key: str, suffix: str, data: bytes) -> Path:
    """Store `data` atomically; returns the final path."""
    path = cache_path(kind, key, suffix)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
