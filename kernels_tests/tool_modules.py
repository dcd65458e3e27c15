"""Import a script of tools/ as a module, for the tests of the benchmarks and generators
(tools/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def load_tool(name: str, module_name: str | None = None) -> ModuleType:
    """tools/<name>.py as the module `module_name` (default `name`), registered in
    sys.modules first (dataclasses look their module up while it executes)."""
    spec = importlib.util.spec_from_file_location(module_name or name, TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
