"""Checking mode: one launch, run by the sanitizer-instrumented executable.

The arrays travel through one data file, in /dev/shm where there is one: Python writes
every array argument into it back to back, the executable maps it, gives each array its
own heap copy of exactly the array's bytes (so that AddressSanitizer's redzones sit
at its ends and one element past the end is reported), launches, and writes the copies
back; Python then copies the bytes of the arrays the launch changed into the NumPy
arrays.  The manifest format is documented in cinn_emu_check_main.h.  A sanitizer
report, a failed launch, a crash or a launch that never ends becomes a KernelError; the
arrays then hold what they held before the launch (the process died before writing
back) or part of its writes (a deadlock).
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cinn_py.backends.emu_inprocess import argument_sizes
from cinn_py.backends.kernel_args import PackedArgs
from cinn_py.errors import KernelError, LaunchError

TIMEOUT_S = 300
REPORT_LINES = 12
"""How many lines of a sanitizer report a KernelError carries."""

_BUSY_RETRIES = 8
_ALIGNMENT = 64
_LOCATION_BYTES = 64
"""The data file starts with the scheduler's record of the running thread (7 uint32)."""
_SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1:detect_stack_use_after_return=0:color=never",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:color=never",
}


def run_checked(
    executable: Path,
    name: str,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem: int,
    stack_size: int,
    args: Sequence[Any],
    packed: PackedArgs,
) -> None:
    """Launch `name` in a subprocess and copy the arrays' new contents back into `args`."""
    offsets, data_bytes = _layout(args)
    lines = [
        f"kernel {name}",
        "grid {} {} {}".format(*grid),
        "block {} {} {}".format(*block),
        f"shared {shared_mem}",
        f"stack {stack_size}",
    ]
    with tempfile.TemporaryDirectory(prefix="cinn_emu_", dir=_scratch_dir()) as folder:
        data_path = Path(folder) / "arrays.bin"
        data = bytearray(data_bytes)
        for arg, offset in zip(args, offsets, strict=True):
            if offset is not None:
                data[offset : offset + arg.nbytes] = ctypes.string_at(arg.ctypes.data, arg.nbytes)
        data_path.write_bytes(data)
        lines += [f"data {data_bytes}", f"args {len(args)}"]
        for arg, offset, size, value in zip(
            args, offsets, argument_sizes(packed), packed.values, strict=True
        ):
            if offset is None:
                lines.append(f"value {size} {bytes(value).hex()}")
            else:
                lines.append(f"array {offset} {arg.nbytes}")
        manifest = Path(folder) / "manifest.txt"
        manifest.write_text("\n".join(lines) + "\n")
        try:
            result = _run([str(executable), str(manifest), str(data_path)])
        except subprocess.TimeoutExpired as error:
            where = _location(name, data_path.read_bytes())
            raise KernelError(
                f"{where} did not finish within {TIMEOUT_S} s in checking mode "
                "(a thread spinning on a flag that another thread would set?)"
            ) from error
        written = data_path.read_bytes()
    for arg, offset in zip(args, offsets, strict=True):
        # Only the arrays the launch changed: an in-place output and its input are one
        # array given twice (`ir.in_place`), and the input's untouched copy must not
        # land over the output's.
        if offset is not None and arg.nbytes:
            end = offset + arg.nbytes
            if written[offset:end] != data[offset:end]:
                source = (ctypes.c_char * arg.nbytes).from_buffer_copy(written, offset)
                ctypes.memmove(arg.ctypes.data, source, arg.nbytes)
    sys.stdout.write(result.stdout)
    if result.returncode != 0:
        where = _location(name, written)
        raise KernelError(failure_message(where, result.returncode, result.stderr))


def _run(command: list[str]) -> subprocess.CompletedProcess:
    """Run the executable; again, briefly, while exec says it is busy: the executable is a
    fresh private copy, and a process another thread forked while the copy was open for
    writing holds it open until that process execs."""
    for attempt in range(_BUSY_RETRIES):
        try:
            return subprocess.run(
                command,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=TIMEOUT_S,
                env={**os.environ, **_SANITIZER_ENV},
            )
        except OSError as error:
            if error.errno != errno.ETXTBSY or attempt == _BUSY_RETRIES - 1:
                raise
            time.sleep(0.01 * 2**attempt)
    raise AssertionError("unreachable")


def _location(name: str, data: bytes) -> str:
    """The kernel and, if one ran, the block and thread that ran last (as the exe recorded)."""
    record = np.frombuffer(data, np.uint32, count=7)
    if not record[6]:
        return f"kernel '{name}'"
    block, thread = tuple(int(v) for v in record[:3]), tuple(int(v) for v in record[3:6])
    return f"kernel '{name}' block {block} thread {thread}"


def _layout(args: Sequence[Any]) -> tuple[list[int | None], int]:
    """Each array argument's offset in the data file (None for scalars) and the file's size.

    The same array passed twice gets one offset, so the kernel sees one buffer, as it would
    in process; arrays that partly overlap cannot be copied apart and are refused.
    """
    offsets: list[int | None] = []
    placed: dict[tuple[int, int], int] = {}
    end = _LOCATION_BYTES
    for index, arg in enumerate(args):
        if not isinstance(arg, np.ndarray):
            offsets.append(None)
            continue
        if not (arg.flags.c_contiguous or arg.flags.f_contiguous):
            raise LaunchError(f"kernel argument #{index}: checking mode needs contiguous arrays")
        extent = (arg.ctypes.data, arg.nbytes)
        if extent not in placed:
            for start, size in placed:
                if start < extent[0] + extent[1] and extent[0] < start + size:
                    raise LaunchError(
                        f"kernel argument #{index} overlaps another array argument; "
                        "checking mode copies arrays apart and cannot keep partial overlaps"
                    )
            placed[extent] = end
            end += -(-arg.nbytes // _ALIGNMENT) * _ALIGNMENT
        offsets.append(placed[extent])
    return offsets, end


def _scratch_dir() -> str | None:
    """/dev/shm (memory, no disk I/O) where it exists, else the default temp folder."""
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


def failure_message(where: str, returncode: int, stderr: str) -> str:
    """The KernelError text for a checking run that exited with `returncode`.

    `where` names the kernel and the thread that ran last.  A sanitizer report is cut to
    its first REPORT_LINES lines, less the emulator's own stack frames.
    """
    lines = stderr.splitlines()
    for line in lines:
        if line.startswith("cinn-emu-error: "):
            return line.removeprefix("cinn-emu-error: ")
    notes = [line.removeprefix("cinn-emu: ") for line in lines if line.startswith("cinn-emu: ")]
    start = next(
        (i for i, line in enumerate(lines) if "Sanitizer" in line or "runtime error:" in line),
        None,
    )
    if start is not None:
        report = [line for line in lines[start:] if not _is_emulator_line(line)]
        header = "; ".join([f"{where} failed in checking mode", *notes])
        return header + "\n" + "\n".join(report[:REPORT_LINES])
    if returncode < 0:
        what = f"was killed by {signal.Signals(-returncode).name}"
    else:
        what = f"exited with status {returncode}"
    tail = "\n".join(lines[-REPORT_LINES:])
    return f"{where} {what} in checking mode\n{tail}".rstrip()


def _is_emulator_line(line: str) -> bool:
    """Lines of a report about the emulator, not the kernel: its notes and stack frames."""
    return (
        line.startswith("cinn-emu: ") or "/emu_include/" in line or "cinn_emu_fiber_start" in line
    )
