"""CUDA C to CUBIN with NVRTC, cached on disk.

The GPU gets a CUBIN built for its exact `sm_XX`, never PTX: the NVRTC from pip may be
newer than the driver, whose PTX JIT then refuses the PTX. `compile_ptx` exists only to
read what NVRTC made. Kernels are `extern "C"` so that their names are the symbols.

Every result is cached under `cinn_py.backends.cache` by a key built in `compile_key`
from the source, the full option list (include path too), the file name, the target
arch, the NVRTC version and the CUDA headers' version; entries are sealed and verified
on every read (`cache.read`; hashing a CUBIN takes microseconds), so a damaged one is
rebuilt, never loaded. `stats` counts compiles and cache hits and their time, because
compile time is part of a model's start-up time.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
import warnings
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cuda.bindings import nvrtc as _bindings

from cinn_py.backends import cache, cuda_headers
from cinn_py.errors import CompileError

DEFAULT_ARCH = "sm_90"
DEFAULT_OPTIONS = ("-std=c++17", "-default-device")
"""Before the caller's options. `-default-device` lets unannotated helpers (which the
emulator's g++ accepts) be device functions here too."""

_ARCH = re.compile(r"^(?:sm_|compute_)?(\d+)([af]?)$")
_ERROR_LINE = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?:catastrophic )?error\b.*$", re.M)
_OUTPUTS = {"cubin": ".cubin", "ptx": ".ptx"}


@dataclass(frozen=True)
class CompileEvent:
    """One `compile` call: what was built, whether the cache had it, and how long it took."""

    name: str
    target: str
    output: str
    key: str
    cache_hit: bool
    seconds: float
    size: int
    log: str = ""


class CompileStats:
    """Running totals of NVRTC compiles and cache hits, and the latest events."""

    def __init__(self, keep: int = 256) -> None:
        self._lock = threading.Lock()
        self.events: deque[CompileEvent] = deque(maxlen=keep)
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.compiles = 0
            self.cache_hits = 0
            self.compile_seconds = 0.0
            self.cache_seconds = 0.0
            self.events.clear()

    def record(self, event: CompileEvent) -> None:
        with self._lock:
            if event.cache_hit:
                self.cache_hits += 1
                self.cache_seconds += event.seconds
            else:
                self.compiles += 1
                self.compile_seconds += event.seconds
            self.events.append(event)

    def summary(self) -> str:
        return (
            f"{self.compiles} NVRTC compile(s) in {self.compile_seconds:.3f}s, "
            f"{self.cache_hits} cache hit(s) in {self.cache_seconds:.3f}s"
        )


stats = CompileStats()


def _check(result: tuple, call: str) -> list:
    """The values after an nvrtcResult, or CompileError naming the call."""
    error, *values = result
    if error != _bindings.nvrtcResult.NVRTC_SUCCESS:
        raise CompileError(f"{call} failed: {_error_name(error)}")
    return values


def _error_name(error: object) -> str:
    try:
        _, text = _bindings.nvrtcGetErrorString(error)
        return text.decode()
    except Exception:
        return str(error)


@functools.cache
def nvrtc_version() -> str:
    """NVRTC's version as "major.minor" (e.g. "13.5")."""
    try:
        major, minor = _check(_bindings.nvrtcVersion(), "nvrtcVersion")
    except RuntimeError as error:  # cuda.pathfinder: libnvrtc not found
        raise CompileError(
            f"NVRTC is not available ({error}); install it with `pip install nvidia-cuda-nvrtc`"
        ) from error
    return f"{major}.{minor}"


@functools.cache
def _supported_numbers() -> tuple[int, ...]:
    nvrtc_version()
    (archs,) = _check(_bindings.nvrtcGetSupportedArchs(), "nvrtcGetSupportedArchs")
    return tuple(int(a) for a in archs)


def supported_archs() -> tuple[str, ...]:
    """The real architectures this NVRTC can build CUBINs for, e.g. ("sm_75", ..., "sm_90")."""
    return tuple(f"sm_{n}" for n in _supported_numbers())


def target_arch(arch: str | int, output: str = "cubin") -> str:
    """`arch` (90, "90", "sm_90", "sm_90a") as NVRTC's target: sm_XX for a CUBIN,
    compute_XX for PTX."""
    match = _ARCH.match(str(arch).strip().lower())
    if not match:
        raise CompileError(f"arch {arch!r} is not of the form sm_90, 90 or sm_90a")
    number, suffix = int(match.group(1)), match.group(2)
    if number not in _supported_numbers():
        raise CompileError(
            f"arch sm_{number}{suffix} is not supported by NVRTC {nvrtc_version()}; "
            f"it builds for {', '.join(supported_archs())}"
        )
    return f"{'sm' if output == 'cubin' else 'compute'}_{number}{suffix}"


def build_options(target: str, options: Sequence[str] = ()) -> list[str]:
    """The full NVRTC option list for `target` (from `target_arch`): arch, defaults, the
    CUDA include path, then the caller's options (whose `-std=` replaces the default)."""
    if isinstance(options, str):
        raise TypeError(f"options must be a sequence of strings, not the string {options!r}")
    options = [str(option) for option in options]
    for option in options:
        if option.startswith(("-arch", "--gpu-architecture")):
            raise CompileError(f"pass the target as arch=..., not as the option {option!r}")
    own_std = any(option.startswith(("-std=", "--std=")) for option in options)
    defaults = [o for o in DEFAULT_OPTIONS if not (own_std and o.startswith("-std="))]
    include = f"--include-path={cuda_headers.include_dir()}"
    return [f"--gpu-architecture={target}", *defaults, include, *options]


def compile_key(source: str, target: str, options: Sequence[str], name: str, output: str) -> str:
    """The cache key of one compile; every input that changes NVRTC's output is a part.

    Headers are covered through the CUDA headers' version only: a kernel's own helpers
    belong in its source, not in an `--include-path` of the caller's."""
    return cache.cache_key(
        "nvrtc",
        output,
        nvrtc_version(),
        cuda_headers.headers_version(),
        target,
        name,
        "\0".join(options),
        source,
    )


def compile(
    source: str,
    arch: str | int = DEFAULT_ARCH,
    options: Sequence[str] = (),
    name: str = "kernel.cu",
) -> bytes:
    """Compile CUDA C to a CUBIN for `arch`, or return the cached one."""
    return _compile(source, arch, options, name, "cubin")


def compile_ptx(
    source: str,
    arch: str | int = DEFAULT_ARCH,
    options: Sequence[str] = (),
    name: str = "kernel.cu",
) -> str:
    """Compile CUDA C to PTX for `compute_XX`, to read it; the GPU loads `compile`'s CUBIN."""
    return _compile(source, arch, options, name, "ptx").rstrip(b"\0").decode()


PTXAS_VERBOSE = "--ptxas-options=-v"
"""Asks ptxas for its resource report (registers, spills, stack, shared memory) in the log."""
NO_CACHE = "--no-cache"
"""NVRTC 12.9 and later keep the machine code they build in the driver's compute cache
(where a driver is installed, e.g. `~/.nv/ComputeCache`), and a build served from it runs
no ptxas, so its log has no resource report: found on an H200, 2026-11-27, where the
tuner's second report of one program failed. `compile_verbose` turns the cache off."""


def compile_verbose(
    source: str,
    arch: str | int = DEFAULT_ARCH,
    options: Sequence[str] = (),
    name: str = "kernel.cu",
) -> tuple[bytes, str]:
    """The CUBIN `compile` builds for `arch` and NVRTC's log with ptxas's resource report
    in it (`PTXAS_VERBOSE` does not change the code). Never cached, neither by cinn_py
    (its cache keeps no logs) nor by NVRTC (`NO_CACHE`): for reports that read the machine
    code (`cinn_py.perf`), not for loading."""
    target = target_arch(arch, "cubin")
    verbose = [*options, PTXAS_VERBOSE, *_no_cache_option()]
    return _run_nvrtc(source, target, build_options(target, verbose), name, "cubin")


@functools.cache
def _no_cache_option() -> tuple[str, ...]:
    """`NO_CACHE` where this NVRTC takes it (12.9 and later; older ones have no cache)."""
    major, minor = (int(part) for part in nvrtc_version().split("."))
    return (NO_CACHE,) if (major, minor) >= (12, 9) else ()


def _compile(source: str, arch: str | int, options: Sequence[str], name: str, output: str) -> bytes:
    start = time.perf_counter()
    target = target_arch(arch, output)
    full_options = build_options(target, options)
    key = compile_key(source, target, full_options, name, output)
    suffix = _OUTPUTS[output]
    data = cache.read(output, key, suffix)  # verified: a damaged entry is rejected, rebuilt
    if data is not None:
        seconds = time.perf_counter() - start
        stats.record(CompileEvent(name, target, output, key, True, seconds, len(data)))
        return data
    data, log = _run_nvrtc(source, target, full_options, name, output)
    cache.write(output, key, suffix, data)
    seconds = time.perf_counter() - start
    stats.record(CompileEvent(name, target, output, key, False, seconds, len(data), log))
    return data


def _run_nvrtc(
    source: str, target: str, options: list[str], name: str, output: str
) -> tuple[bytes, str]:
    (program,) = _check(
        _bindings.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []),
        "nvrtcCreateProgram",
    )
    try:
        (error,) = _bindings.nvrtcCompileProgram(
            program, len(options), [option.encode() for option in options]
        )
        log = _program_log(program)
        _dump_log(name, log)
        if error != _bindings.nvrtcResult.NVRTC_SUCCESS:
            message = _failure_message(name, target, log, _error_name(error))
            raise CompileError(message, log=log, source=source)
        if output == "cubin":
            (size,) = _check(_bindings.nvrtcGetCUBINSize(program), "nvrtcGetCUBINSize")
            data = bytearray(size)
            _check(_bindings.nvrtcGetCUBIN(program, data), "nvrtcGetCUBIN")
        else:
            (size,) = _check(_bindings.nvrtcGetPTXSize(program), "nvrtcGetPTXSize")
            data = bytearray(size)
            _check(_bindings.nvrtcGetPTX(program, data), "nvrtcGetPTX")
        return bytes(data), log
    finally:
        _bindings.nvrtcDestroyProgram(program)


def _program_log(program: object) -> str:
    (size,) = _check(_bindings.nvrtcGetProgramLogSize(program), "nvrtcGetProgramLogSize")
    buffer = bytearray(max(size, 1))
    _check(_bindings.nvrtcGetProgramLog(program, buffer), "nvrtcGetProgramLog")
    return bytes(buffer).rstrip(b"\0").decode(errors="replace").strip()


def _failure_message(name: str, target: str, log: str, error: str) -> str:
    """ "NVRTC could not compile NAME for sm_90: NAME(3): error: ...", the log's first error."""
    head = f"NVRTC could not compile {name} for {target}"
    match = _ERROR_LINE.search(log)
    if match is None:
        first = next((line for line in log.splitlines() if line.strip()), error)
        return f"{head}: {first.strip()}"
    return f"{head}: {match.group(0).strip()}"


def _dump_log(name: str, log: str) -> None:
    """Under `CINN_PY_DUMP_DIR`, keep NVRTC's log of every fresh compile beside the dumps."""
    folder = os.environ.get("CINN_PY_DUMP_DIR")
    if not folder:
        return
    path = Path(folder) / f"{Path(name).stem[:64]}.nvrtc.log"
    try:  # a dump never fails a compile
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(log + "\n")
    except OSError as error:
        warnings.warn(
            f"CINN_PY_DUMP_DIR: cannot write {str(path)[:200]}: {error.strerror or error}",
            RuntimeWarning,
            stacklevel=2,
        )
