"""Where the CUDA headers that generated kernels include (`cuda_fp16.h`, `cuda_bf16.h`) live.

NVRTC has no search path of its own, so the headers come from the `nvidia-cuda-runtime`
wheel: `nvidia/cu13/include` in CUDA 13 wheels, `nvidia/cuda_runtime/include` (or
`nvidia/cu12/include`) in CUDA 12 ones, under the `nvidia` namespace package. A CUDA
toolkit or conda install found by `cuda.pathfinder` serves when no wheel does.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from cinn_py.errors import CompileError

REQUIRED_HEADERS = ("cuda_fp16.h", "cuda_bf16.h")
_WHEEL_LAYOUTS = ("cu13/include", "cu12/include", "cuda_runtime/include")


def _wheel_candidates() -> list[Path]:
    try:
        import nvidia
    except ImportError:
        return []
    roots = [Path(p) for p in getattr(nvidia, "__path__", [])]
    return [root / layout for root in roots for layout in _WHEEL_LAYOUTS]


def _pathfinder_candidates() -> list[Path]:
    try:
        from cuda.pathfinder import find_nvidia_header_directory
    except ImportError:
        return []
    found = find_nvidia_header_directory("cudart")
    return [Path(found)] if found else []


def _has_headers(folder: Path) -> bool:
    return all((folder / header).is_file() for header in REQUIRED_HEADERS)


@functools.cache
def include_dir() -> Path:
    """The folder holding `cuda_fp16.h` and `cuda_bf16.h`; CompileError if there is none."""
    looked = _wheel_candidates()
    for folder in looked:
        if _has_headers(folder):
            return folder
    for folder in _pathfinder_candidates():
        looked.append(folder)
        if _has_headers(folder):
            return folder
    where = "\n".join(f"    {folder}" for folder in looked) or "    (no `nvidia` package)"
    raise CompileError(
        f"CUDA headers {', '.join(REQUIRED_HEADERS)} not found; install them with "
        f"`pip install nvidia-cuda-runtime`. Looked in:\n{where}"
    )


@functools.cache
def headers_version() -> str:
    """`CUDART_VERSION` of the headers found (e.g. "13050"), part of every cache key."""
    api = include_dir() / "cuda_runtime_api.h"
    try:
        text = api.read_text(errors="replace")
    except OSError:
        return "unknown"
    match = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", text)
    return match.group(1) if match else "unknown"
