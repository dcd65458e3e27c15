"""cinn_py: a CINN-style tensor compiler for Paddle PIR programs, written in Python.

import cinn_py
prog = cinn_py.load("model.json")
exe = cinn_py.compile(prog, target="reference")
outs = exe.run({"x": x})
"""

from cinn_py.api import Executable, compile, load
from cinn_py.errors import (
    CinnError,
    CompileError,
    FeedError,
    LoadError,
    ParseError,
    ScheduleError,
    ShapeError,
    UnsupportedOpError,
    VerifyError,
)

__version__ = "0.1.0"

__all__ = [
    "CinnError",
    "CompileError",
    "Executable",
    "FeedError",
    "LoadError",
    "ParseError",
    "ScheduleError",
    "ShapeError",
    "UnsupportedOpError",
    "VerifyError",
    "compile",
    "load",
]
