"""cuobjdump from the `nvidia-cuda-cuobjdump` wheel, and the nvdisasm it runs to print SASS
(`nvidia-cuda-nvdisasm`): found in the wheels' package folders, else on PATH.

`CINN_PY_CUOBJDUMP` and `CINN_PY_NVDISASM` name the binaries outright. A missing one is a
`MissingToolError` naming the package (both are in the `test` extra).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from cinn_py.errors import CinnError, MissingToolError

NEEDED_FOR = "the static performance report (cinn-py perf)"

_TOOLS = {
    "cuobjdump": ("nvidia-cuda-cuobjdump", "CINN_PY_CUOBJDUMP"),
    "nvdisasm": ("nvidia-cuda-nvdisasm", "CINN_PY_NVDISASM"),
}
_TIMEOUT_S = 120


@functools.cache
def find_tool(tool: str) -> Path:
    """The path of `tool` ("cuobjdump" or "nvdisasm"): its environment variable, the file
    its wheel installed (nvidia/cu13/bin/... in CUDA 13's wheels), else PATH."""
    package, variable = _TOOLS[tool]
    given = os.environ.get(variable)
    if given:
        if not os.access(given, os.X_OK):
            raise CinnError(f"{variable}={given}: not an executable file")
        return Path(given)
    try:
        files = importlib.metadata.files(package) or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name == tool:
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    found = shutil.which(tool)
    if found:
        return Path(found)
    raise MissingToolError(tool, package, NEEDED_FOR)


def tools_available() -> tuple[bool, str]:
    """Whether cuobjdump and nvdisasm are both here, and if not, why (for test skips)."""
    try:
        find_tool("cuobjdump")
        find_tool("nvdisasm")
    except CinnError as error:
        return False, str(error)
    return True, ""


def disassemble(cubin: bytes) -> str:
    """`cuobjdump -sass` of a CUBIN: every function's SASS, as text."""
    cuobjdump = find_tool("cuobjdump")
    nvdisasm = find_tool("nvdisasm")
    env = {**os.environ, "NVDISASM_PATH": str(nvdisasm.parent)}
    with tempfile.TemporaryDirectory(prefix="cinn_py_sass_") as folder:
        path = Path(folder) / "kernels.cubin"
        path.write_bytes(cubin)
        try:
            done = subprocess.run(
                [str(cuobjdump), "-sass", str(path)],
                capture_output=True,
                text=True,
                env=env,
                timeout=_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise CinnError(f"cuobjdump -sass failed: {error}") from None
    if done.returncode != 0 or "Function :" not in done.stdout:
        why = (done.stderr.strip().splitlines() or ["no SASS in its output"])[-1]
        raise CinnError(f"cuobjdump -sass failed (exit {done.returncode}): {why}")
    return done.stdout
