"""g++ for `cuda-emu`: the flags, the on-disk cache, and compile errors.

A module is either a shared library loaded into this process, or, in checking mode, an
executable built with AddressSanitizer and UBSan (an instrumented library cannot be
dlopen'ed into a Python that was not started with the ASan runtime).  Both are cached by
`cinn_py.backends.cache` under a key of the prepared source, the flags, g++'s version
and the content of every emulation header, so editing a header rebuilds what used it;
so is the precompiled header.  A `ModuleImage` is a module whose cache entry passed
verification, held by this process: it is loaded or run from a private copy of exactly
the verified bytes.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cinn_py.backends import cache, emu_source
from cinn_py.errors import CompileError

GXX = "g++"
INCLUDE_DIR = Path(__file__).with_name("emu_include")
SOURCE_NAME = "kernel.cu"
"""What g++ calls the source in its messages."""

CONTEXT_SWITCHES = ("asm", "ucontext")

_ERROR_LINE = re.compile(
    r"^(?P<where>\S[^:\n]*:\d+(?::\d+)?): (?:fatal )?error: (?P<what>.*)$", re.M
)


@dataclass(frozen=True)
class EmuOptions:
    """How a module is built and run.

    `check`: sanitizers (an executable run per launch) instead of an in-process library;
    `opt_level`: g++'s -O level (checking mode uses at most -O1: faster builds, clearer
    reports); `stack_size`: bytes of stack per CUDA thread (a run-time setting, not part of
    the build); `context_switch`: "asm" (x86-64 only) or "ucontext" (glibc swapcontext).
    """

    check: bool = False
    opt_level: int = 2
    stack_size: int = 64 * 1024
    context_switch: str = "asm"

    def __post_init__(self) -> None:
        if self.opt_level not in (0, 1, 2, 3):
            raise ValueError(f"opt_level must be 0 to 3, got {self.opt_level!r}")
        if self.stack_size < 16 * 1024 or self.stack_size % 4096:
            raise ValueError(f"stack_size must be a multiple of 4096, >= 16 KiB: {self.stack_size}")
        if self.context_switch not in CONTEXT_SWITCHES:
            raise ValueError(f"context_switch must be one of {CONTEXT_SWITCHES}")


def gxx_flags(options: EmuOptions) -> list[str]:
    """The g++ command line, less the input and output files."""
    flags = [
        "-x", "c++", "-std=c++17",
        "-include", "cinn_emu.h", "-I", str(INCLUDE_DIR),
        "-fvisibility=hidden",
        "-fno-strict-aliasing",  # CUDA code reinterprets float* as float4* and the like
        "-fno-math-errno",  # device math sets no errno: sqrtf and friends inline
        "-Wno-unknown-pragmas",  # #pragma unroll
    ]  # fmt: skip
    if options.context_switch == "ucontext":
        flags.append("-DCINN_EMU_UCONTEXT")
    if options.check:
        return flags + [
            f"-O{min(options.opt_level, 1)}", "-g",
            "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
            "-fsanitize-sections=cinn_emu_shared",  # redzones around __shared__ arrays too
        ]  # fmt: skip
    return flags + [f"-O{options.opt_level}", "-fPIC", "-shared"]


def _gxx_env() -> dict[str, str]:
    """Plain ASCII quotes and English messages from g++, whatever the user's locale."""
    return {**os.environ, "LC_ALL": "C"}


@functools.cache
def gxx_version() -> str:
    try:
        result = subprocess.run(
            [GXX, "--version"], capture_output=True, text=True, check=True, env=_gxx_env()
        )
    except (OSError, subprocess.CalledProcessError) as error:
        raise CompileError(f"cuda-emu needs {GXX}, which cannot run: {error}") from error
    return result.stdout.splitlines()[0]


def headers_digest() -> str:
    """A digest of every emulation header (including cuda_fp16.h / cuda_bf16.h)."""
    digest = hashlib.sha256()
    for path in sorted(INCLUDE_DIR.iterdir()):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class ModuleImage:
    """A verified module as this process holds it: the cache entry it came from and its
    content, loaded at most once (a library) or run from a private copy (an executable).

    Neither is ever loaded from the entry's own path: what runs is exactly the content
    that was verified, whatever happens to the entry afterwards (another process may
    replace it, or damage it in place: a library whose file is truncated under its
    mapping dies of SIGBUS at its next page fault).
    """

    def __init__(
        self,
        entry: Path,
        key: str,
        content: bytes,
        *,
        batch: ModuleImage | None = None,
        symbols: Mapping[str, str] | None = None,
    ) -> None:
        self.entry = entry
        self.key = key
        self._content = content
        self._batch = batch
        self._symbols = dict(symbols or {})
        self._library: ctypes.CDLL | None = None
        self._lock = threading.Lock()

    def symbol(self, kernel: str) -> str:
        """The name `kernel` has in the library (renamed apart in a batch)."""
        return self._symbols.get(kernel, kernel)

    def library(self) -> ctypes.CDLL:
        """The shared library, loaded into this process once: from a private copy, written
        beside the entry (so on a filesystem that allows mapping code), loaded, unlinked.
        A module built in a batch shares the batch's library."""
        if self._batch is not None:
            return self._batch.library()
        with self._lock:
            if self._library is None:
                with self._private_copy() as path:
                    self._library = ctypes.CDLL(str(path))
                self._content = b""  # the library is loaded; the bytes are not needed again
            return self._library

    @contextlib.contextmanager
    def executable(self) -> Iterator[Path]:
        """A private copy of the executable for one run, removed afterwards."""
        with self._private_copy() as path:
            os.chmod(path, 0o700)
            yield path

    @contextlib.contextmanager
    def _private_copy(self) -> Iterator[Path]:
        """A copy of the content beside the entry, or in the temporary folder where the
        cache's folder cannot be written (read-only, full)."""
        try:
            path = self._copy_into(self.entry.parent)
        except OSError:
            path = self._copy_into(None)
        try:
            yield path
        finally:
            path.unlink(missing_ok=True)

    def _copy_into(self, folder: Path | None) -> Path:
        # The key in the name: a later dlopen of a path still loaded returns the old library.
        prefix = f"{cache.TEMP_PREFIX}load-{self.key[:16]}-"
        fd, name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=self.entry.suffix)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(self._content)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
        return Path(name)


def module_kind(options: EmuOptions) -> tuple[str, str]:
    """The cache kind and file suffix of a module built with `options`."""
    return ("cuda-emu-check", ".exe") if options.check else ("cuda-emu", ".so")


def module_key(kind: str, text: str, flags: list[str]) -> str:
    """The cache key of the module of `kind` g++ builds from the prepared `text`."""
    return cache.cache_key(kind, gxx_version(), _key_flags(flags), headers_digest(), text)


def _key_flags(flags: list[str]) -> str:
    """The flags as a key part, with the headers' folder (this checkout's path) named,
    not spelled: `headers_digest` covers what the headers hold, and a clone of the same
    source in another folder then finds the kernels another one built."""
    return "\0".join(flags).replace(str(INCLUDE_DIR), "<emu_include>")


def build(text: str, options: EmuOptions, *, source: str) -> ModuleImage:
    """The module for the prepared `text`: remembered by this process, else read from the
    cache and verified (its own entry, or its part of a batch: `build_batches`), else
    built by g++ and stored.

    `source` (what the caller wrote) goes into a CompileError; the rest of the error
    names the first line g++ rejected.
    """
    flags = gxx_flags(options)
    kind, suffix = module_kind(options)
    key = module_key(kind, text, flags)
    entry = cache.cache_path(kind, key, suffix)
    image = cache.remembered(entry)
    if image is not None:
        cache.stats.count(hits=1)
        return image
    content = cache.read(kind, key, suffix)
    if content is not None:
        image = ModuleImage(entry, key, content)
    else:
        image = None if options.check else _batch_member(kind, key)
    if image is None:
        if options.check:
            content, _ = _run_gxx(text, flags, suffix, source)
        else:
            content, _ = _build_with_precompiled_header(text, flags, suffix, source)
        cache.write(kind, key, suffix, content)
        image = ModuleImage(entry, key, content)
    cache.remember(entry, image)
    return image


# ---------------------------------------------------------------------------------------------
# Batches: many sources, one g++ run

BATCH_SUFFIX = ".batch"
"""A source built in a batch has, instead of its own library, an entry `<key>.batch`
naming the batch's library and its kernels' names there."""


def build_batches(sources: Sequence[str], options: EmuOptions, batch_size: int) -> int:
    """Build the in-process modules of `sources`, `batch_size` to a g++ run, so that each
    one's `build` is then a cache hit; returns how many were built.

    A g++ run costs about 0.3 s of CPU before it reads a kernel (the headers, the
    emulator's launch machinery), most of a small module's cost; a batch pays it once.
    Each source's kernels are renamed apart (`cinn_batch<i>_<name>`) and the sources
    concatenated into one translation unit, stored as one library; each source gets an
    entry `<key>.batch` (sealed with its own key) naming the library and its kernels.
    Sources already cached are skipped, checked again just before each batch (another
    process may be building the same ones).  A batch g++ rejects, or in which one
    source's macro redefines another's, is left to `build`, source by source, so that
    every source's error stays its own.
    """
    if options.check:
        raise ValueError("checking-mode executables are built one by one")
    flags = gxx_flags(options)
    kind, _ = module_kind(options)
    pending: dict[str, tuple[str, tuple[str, ...]]] = {}
    for source in sources:
        prepared = emu_source.prepare(source)
        pending.setdefault(module_key(kind, prepared.text, flags), (source, prepared.kernels))
    keys = list(pending)
    built = 0
    for start in range(0, len(keys), batch_size):
        batch = [(k, *pending[k]) for k in keys[start : start + batch_size] if not _cached(kind, k)]
        if len(batch) > 1:
            built += _build_batch(batch, flags, kind)
    return built


def _cached(kind: str, key: str) -> bool:
    entry = cache.cache_path(kind, key, ".so")
    return cache.remembered(entry) is not None or any(
        cache.cache_path(kind, key, s).exists() for s in (".so", BATCH_SUFFIX)
    )


def _build_batch(batch: list[tuple[str, str, tuple[str, ...]]], flags: list[str], kind: str) -> int:
    parts, members = [], []
    for index, (key, source, kernels) in enumerate(batch):
        renamed = {name: f"cinn_batch{index}_{name}" for name in kernels}
        if kernels:
            names = re.compile(r"\b(" + "|".join(map(re.escape, kernels)) + r")\b")
            source = names.sub(lambda match, renamed=renamed: renamed[match[1]], source)
        parts.append(source)
        members.append((key, renamed))
    batch_source = "\n".join(parts)
    prepared = emu_source.prepare(batch_source)
    if set(prepared.kernels) != {n for _, renamed in members for n in renamed.values()}:
        return 0
    try:
        content, log = _build_with_precompiled_header(prepared.text, flags, ".so", batch_source)
    except CompileError:
        return 0
    if re.search(r"warning: .* redefined", log):
        return 0
    batch_key = module_key(kind, prepared.text, flags)
    cache.stats.count(misses=len(members))
    try:
        cache.write_entry(cache.cache_path(kind, batch_key, ".so"), batch_key, content)
        for key, renamed in members:
            lines = [f"batch {batch_key}", *(f"kernel {a} {b}" for a, b in renamed.items())]
            text = "\n".join(lines) + "\n"
            cache.write_entry(cache.cache_path(kind, key, BATCH_SUFFIX), key, text.encode())
    except OSError as error:  # a folder that cannot be written: the modules stay in memory
        cache.unusable(error, "write")
        batch = ModuleImage(cache.cache_path(kind, batch_key, ".so"), batch_key, content)
        for key, renamed in members:
            member = ModuleImage(
                cache.cache_path(kind, key, BATCH_SUFFIX), key, b"", batch=batch, symbols=renamed
            )
            cache.remember(cache.cache_path(kind, key, ".so"), member)
    return len(members)


def _batch_member(kind: str, key: str) -> ModuleImage | None:
    """The module of `key` as part of a batch's library, if it was built in one."""
    member = cache.cache_path(kind, key, BATCH_SUFFIX)
    try:
        content = cache.read_entry(member, key)
    except OSError:  # a folder this process cannot read: `cache.read` has warned
        return None
    if content is None:
        return None
    lines = content.decode().splitlines()
    batch_key = lines[0].removeprefix("batch ")
    symbols = dict(line.split()[1:] for line in lines[1:])
    entry = cache.cache_path(kind, batch_key, ".so")
    batch = cache.remembered(entry)
    if batch is None:
        try:
            library = cache.read_entry(entry, batch_key)
        except OSError:
            return None
        if library is None:  # the batch is gone (cleared, or rejected just now)
            with contextlib.suppress(OSError):
                member.unlink()
            return None
        batch = ModuleImage(entry, batch_key, library)
        cache.remember(entry, batch)
    cache.stats.count(hits=1)
    return ModuleImage(member, key, b"", batch=batch, symbols=symbols)


PCH_HEADER = "cinn_emu_pch.h"
"""The emulation headers in one file, precompiled once per flag set (not in checking mode,
whose sanitizer flags change every build's headers anyway)."""
PCH_KIND = "cuda-emu-pch"

_pch_lock = threading.Lock()
_pch_refused: set[Path] = set()
"""Precompiled headers g++ failed with in this process, or that it could not write: not
used again by it."""


@dataclass(frozen=True)
class PrecompiledHeader:
    """`folder/cinn_emu_pch.h.gch`, a sealed cache entry that g++ reads in place (it ignores
    the seal after the data its header describes)."""

    folder: Path
    key: str

    @property
    def gch(self) -> Path:
        return self.folder / (PCH_HEADER + ".gch")


def _build_with_precompiled_header(
    text: str, flags: list[str], suffix: str, source: str
) -> tuple[bytes, str]:
    """g++ with the precompiled header: ~0.4 s per module becomes ~0.15 s.

    A header g++ cannot use must not break the build: if g++ fails with it on something
    other than the source, the module is built again without it, and if that succeeds the
    header is rejected (removed, CacheWarning) and this process stops using it; one g++
    quietly skips (-Winvalid-pch) is rejected too, so that the next build makes a new one.
    """
    header = precompiled_header(flags)
    if header is None:
        return _run_gxx(text, flags, suffix, source)
    try:
        content, log = _run_gxx(text, with_precompiled_header(flags, header), suffix, source)
    except CompileError as error:
        if _blames_the_source(error.log):
            raise
        built = _run_gxx(text, flags, suffix, source)
        _refuse(header, f"g++ failed with it and not without it: {_first_line(error.log)}")
        return built
    refusal = next((line for line in log.splitlines() if "-Winvalid-pch" in line), None)
    if refusal is not None:
        _refuse(header, f"g++ would not use it: {refusal.rsplit(': ', 1)[-1]}")
    return content, log


def with_precompiled_header(flags: list[str], header: PrecompiledHeader) -> list[str]:
    """`flags` with `-include cinn_emu.h` replaced by the precompiled header."""
    at = flags.index("-include")
    return [
        *flags[:at],
        *("-Winvalid-pch", "-I", str(header.folder), "-include", PCH_HEADER),
        *flags[at + 2 :],
    ]


def precompiled_header(flags: list[str]) -> PrecompiledHeader | None:
    """The verified precompiled header for `flags`, built on first use (lock-free across
    processes: a concurrent builder's sealed file is as good as ours); None where g++ cannot
    build one, the cache's folder cannot be written (`cache.unusable` warns), or this
    process gave up on it."""
    key = cache.cache_key(PCH_KIND, gxx_version(), _key_flags(flags), headers_digest())
    header = PrecompiledHeader(cache.cache_dir() / PCH_KIND / key, key)
    if header.gch in _pch_refused:
        return None
    with _pch_lock:  # threads of one process build it once
        try:
            return header if cache.verified_file(header.gch, key) else _build_header(header, flags)
        except OSError as error:  # read-only, full: the modules build without it
            cache.unusable(error, "write")
            _pch_refused.add(header.gch)
            return None


def _build_header(header: PrecompiledHeader, flags: list[str]) -> PrecompiledHeader | None:
    """g++ builds the header into a temporary file beside the entry, sealed and moved into
    place (`cache.publish_file`); None where g++ fails."""
    header_flags = [f for f in flags if f != "-shared"]
    header_flags[header_flags.index("-x") + 1] = "c++-header"
    at = header_flags.index("-include")
    del header_flags[at : at + 2]
    header.folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=header.folder, prefix=cache.TEMP_PREFIX, suffix=".gch")
    os.close(fd)
    partial = Path(name)
    try:
        result = subprocess.run(
            [GXX, *header_flags, str(INCLUDE_DIR / PCH_HEADER), "-o", str(partial)],
            capture_output=True,
            text=True,
            env=_gxx_env(),
        )
        if result.returncode != 0:
            return None
        cache.publish_file(partial, header.gch, header.key)
    finally:
        partial.unlink(missing_ok=True)
    return header


def _refuse(header: PrecompiledHeader, why: str) -> None:
    _pch_refused.add(header.gch)
    cache.reject(header.gch, why)


def _blames_the_source(log: str) -> bool:
    """Whether g++'s first error is in the kernel's own source (not in a header, not in
    the precompiled header, not a crash)."""
    match = _ERROR_LINE.search(log)
    return match is not None and match["where"].startswith(SOURCE_NAME + ":")


def _first_line(log: str) -> str:
    return next((line.strip() for line in log.splitlines() if line.strip()), "no output")


def _run_gxx(text: str, flags: list[str], suffix: str, source: str) -> tuple[bytes, str]:
    """The module g++ builds from `text`, and its log (warnings); CompileError if it fails."""
    with tempfile.TemporaryDirectory(prefix="cinn_emu_") as folder:
        (Path(folder) / SOURCE_NAME).write_text(text, encoding="utf-8")
        output = "module" + suffix
        # Debug info and sanitizer reports then name the source "kernel.cu", not a temp path.
        relative = f"-fdebug-prefix-map={folder}=."
        result = subprocess.run(
            [GXX, *flags, relative, SOURCE_NAME, "-o", output],
            cwd=folder,
            capture_output=True,
            text=True,
            env=_gxx_env(),
        )
        log = result.stdout + result.stderr
        if result.returncode != 0:
            raise compile_error(log, source)
        return (Path(folder) / output).read_bytes(), log


def compile_error(log: str, source: str) -> CompileError:
    """A CompileError whose message is g++'s first error and the source line it names."""
    match = _ERROR_LINE.search(log)
    if match is None:
        first = next((line for line in log.splitlines() if line.strip()), "no output")
        return CompileError(f"g++ failed (cuda-emu): {first}", log=log, source=source)
    message = f"g++ rejected the CUDA source (cuda-emu): {match['where']}: {match['what']}"
    where = match["where"].split(":")
    if where[0] == SOURCE_NAME:
        lines = source.splitlines()
        number = int(where[1])
        if 1 <= number <= len(lines):
            message += f"\n    {lines[number - 1].strip()}"
    return CompileError(message, log=log, source=source)
