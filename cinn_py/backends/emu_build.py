"""g++ for `cuda-emu`: the flags, the on-disk cache, and compile errors.

A module is either a shared library loaded into this process, or, in checking mode, an
executable built with AddressSanitizer and UBSan (an instrumented library cannot be
dlopen'ed into a Python that was not started with the ASan runtime).  Both are cached by
`cinn_py.backends.cache` under a key of the prepared source, the flags, g++'s version
and the content of every emulation header, so editing a header rebuilds what used it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cinn_py.backends import cache
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


def build(text: str, options: EmuOptions, *, source: str) -> Path:
    """The cached module for the prepared `text`, built by g++ on a miss.

    `source` (what the caller wrote) goes into a CompileError; the rest of the error
    names the first line g++ rejected.
    """
    flags = gxx_flags(options)
    kind = "cuda-emu-check" if options.check else "cuda-emu"
    suffix = ".exe" if options.check else ".so"
    key = cache.cache_key(kind, gxx_version(), "\0".join(flags), headers_digest(), text)
    path = cache.cache_path(kind, key, suffix)
    if not path.exists():
        build_flags = flags if options.check else _with_precompiled_header(flags)
        path = cache.write(kind, key, suffix, _run_gxx(text, build_flags, suffix, source))
    if options.check and not os.access(path, os.X_OK):
        os.chmod(path, 0o755)
    return path


PCH_HEADER = "cinn_emu_pch.h"
"""The emulation headers in one file, precompiled once per flag set (not in checking mode,
whose sanitizer flags change every build's headers anyway)."""


def _with_precompiled_header(flags: list[str]) -> list[str]:
    """`flags` with `-include cinn_emu.h` replaced by the precompiled header: ~0.4 s per
    module becomes ~0.15 s. Should the .gch not fit, g++ quietly reads the header."""
    folder = _precompiled_header_dir(flags)
    if folder is None:
        return flags
    at = flags.index("-include")
    return [*flags[:at], "-I", str(folder), "-include", PCH_HEADER, *flags[at + 2 :]]


def _precompiled_header_dir(flags: list[str]) -> Path | None:
    """The cache folder holding `cinn_emu_pch.h.gch` for `flags`, built on first use
    (atomically: a concurrent builder's finished file is as good as ours)."""
    key = cache.cache_key("cuda-emu-pch", gxx_version(), "\0".join(flags), headers_digest())
    folder = cache.cache_dir() / "cuda-emu-pch" / key
    gch = folder / (PCH_HEADER + ".gch")
    if gch.exists():
        return folder
    header_flags = [f for f in flags if f != "-shared"]
    header_flags[header_flags.index("-x") + 1] = "c++-header"
    at = header_flags.index("-include")
    del header_flags[at : at + 2]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, suffix=".tmp", delete=False) as tmp:
        partial = Path(tmp.name)
    result = subprocess.run(
        [GXX, *header_flags, str(INCLUDE_DIR / PCH_HEADER), "-o", str(partial)],
        capture_output=True,
        text=True,
        env=_gxx_env(),
    )
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        return None
    os.replace(partial, gch)
    return folder


def _run_gxx(text: str, flags: list[str], suffix: str, source: str) -> bytes:
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
        if result.returncode != 0:
            raise compile_error(result.stdout + result.stderr, source)
        return (Path(folder) / output).read_bytes()


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
