"""The errors cinn_py raises for bad input.

Every error a user can provoke with a malformed program, an unsupported op, a wrong
feed or an impossible schedule is one of these, carrying *what* went wrong and
*where*, so the CLI can print one readable message instead of a traceback.
"""

from __future__ import annotations


class CinnError(Exception):
    """Base of every error cinn_py raises on purpose."""


_SHOWN = 160
"""The most characters of the offending line a ParseError's message quotes."""


class ParseError(CinnError):
    """Malformed program text: file:line:col, what was expected, the offending line."""

    def __init__(self, message: str, *, file: str, line: int, col: int, source_line: str) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.source_line = source_line
        shown, offset = source_line, col - 1
        if len(source_line) > _SHOWN:  # a window of a long line, around the column
            start = max(0, min(col - 1 - _SHOWN // 2, len(source_line) - _SHOWN))
            head = "..." if start else ""
            tail = "..." if start + _SHOWN < len(source_line) else ""
            shown = head + source_line[start : start + _SHOWN] + tail
            offset = col - 1 - start + len(head)
        caret = " " * offset + "^"
        super().__init__(f"{file}:{line}:{col}: {message}\n    {shown}\n    {caret}")


class VerifyError(CinnError):
    """An op that breaks its declaration: the op, the operand or attribute, and why."""

    def __init__(self, op_name: str, why: str, *, where: str = "", operand: str = "") -> None:
        self.op_name = op_name
        self.why = why
        self.where = where
        self.operand = operand
        what = f"{op_name}" + (f" operand {operand}" if operand else "")
        loc = f" ({where})" if where else ""
        if len(why) > 600:  # long lists of dims or values: their start and end say enough
            why = f"{why[:450]} ... {why[-100:]}"
        super().__init__(f"invalid {what}{loc}: {why}")


class UnsupportedOpError(CinnError):
    """An op cinn_py does not know how to run: its name and where it is used."""

    def __init__(self, op_name: str, where: str, what: str = "is not supported") -> None:
        self.op_name = op_name
        self.where = where
        super().__init__(f"op '{op_name}' {what} ({where})")


class ShapeError(CinnError):
    """Shapes that cannot work together (broadcasting, reshape, matmul, ...)."""


class ShapeVerifyError(VerifyError, ShapeError):
    """Operand shapes or geometry an op cannot work with (a conv's channels and groups, a
    pool window past its padded input), found by the op's infer_meta: a VerifyError,
    since the program breaks the op's declaration (what `cinn_py.load` promises to
    raise), and a ShapeError, since shapes are what is wrong."""


class ScheduleError(CinnError):
    """A schedule primitive whose preconditions do not hold: primitive, block, why."""

    def __init__(self, primitive: str, block: str, why: str) -> None:
        self.primitive = primitive
        self.block = block
        self.why = why
        super().__init__(f"{primitive} on block '{block}': {why}")


class ScheduleDBError(CinnError):
    """A schedule database (`schedules/<arch>.json`, written by tools/tune.py) that cannot
    be used: not JSON, another format or arch, an entry naming no tactic or knob. Names
    the file, the entry and what is wrong; the compiler does not guess around a damaged
    database (it would schedule differently from what the file says)."""

    def __init__(self, path: str, why: str, entry: int | None = None) -> None:
        self.path = path
        self.entry = entry
        self.why = why
        where = f"{path}: entry {entry}" if entry is not None else path
        super().__init__(f"schedule database {where}: {why}")


class CompileError(CinnError):
    """A compiler (NVRTC or g++) rejected generated source; carries its log and the source."""

    def __init__(self, message: str, *, log: str = "", source: str = "") -> None:
        self.log = log
        self.source = source
        super().__init__(f"{message}\n{log}".rstrip())


class LaunchError(CinnError, ValueError):
    """A launch that cannot happen: an unknown kernel, a grid, block or shared-memory size
    outside CUDA's limits, arguments a checking-mode launch cannot take. Raised by both
    targets before anything runs (a ValueError too, since the call's values are wrong)."""


class KernelError(CinnError):
    """A kernel that failed while it ran: a deadlocked barrier, a trap, a sanitizer report.

    The `cuda-emu` target raises it instead of hanging or crashing the process, naming the
    kernel, the block and what its threads were doing, so a bad kernel fails the test that
    launched it.
    """


class FeedError(CinnError):
    """A feed or parameter that does not match the program: name, expected vs got."""

    def __init__(self, name: str, expected: str, got: str) -> None:
        self.name = name
        self.expected = expected
        self.got = got
        super().__init__(f"feed '{name}': expected {expected}, got {got}")


class FeedConstraintError(FeedError):
    """Feeds whose dims break a constraint the program implies (two dims that must be
    equal or broadcast, a reshape that must divide): the feeds with their dims, and the
    op that requires it, with the dims it compares (`cinn_py/pir/shape_analysis.py`)."""

    def __init__(self, feeds: dict[str, tuple[int, ...]], requirement: str) -> None:
        self.feeds = dict(feeds)
        self.name = next(iter(self.feeds), "")
        self.expected = requirement
        self.got = ", ".join(f"{name} {list(dims)}" for name, dims in self.feeds.items())
        listed = " and ".join(f"'{name}' {list(dims)}" for name, dims in self.feeds.items())
        which = "feeds" if len(self.feeds) > 1 else "feed"
        CinnError.__init__(self, f"{which} {listed}: {requirement}")


class CacheError(CinnError):
    """A cache operation asked for explicitly (`cinn-py cache clear`) that the folder
    refused: names the folder, what failed and the variable that moves it."""


class CacheWarning(UserWarning):
    """A kernel-cache entry that failed verification (empty, truncated, damaged, another
    key's): it names the entry and what was wrong; the entry is removed and rebuilt."""


class HostFallbackWarning(UserWarning):
    """A library op on `cuda` that the device table has no entry for, so it runs by its
    NumPy reference kernel with copies to and from the host: correct, but slow and
    outside CUDA graphs. It names the op."""


class MissingLibraryError(CinnError):
    """A GPU library a device call needs (nvmath-python, the cuDNN frontend, CuPy) is not
    installed: names the package and the extra that installs it."""

    def __init__(self, package: str, needed_for: str, extra: str = "gpu") -> None:
        self.package = package
        super().__init__(
            f"{needed_for} on 'cuda' needs the package '{package}', which is not installed: "
            f"pip install 'cinn_py[{extra}]' (or pip install {package})"
        )


class MissingToolError(CinnError):
    """A command-line tool a report needs (cuobjdump, nvdisasm) is not installed: names the
    tool and the package that installs it."""

    def __init__(self, tool: str, package: str, needed_for: str, extra: str = "test") -> None:
        self.tool = tool
        self.package = package
        super().__init__(
            f"{needed_for} needs {tool}, which is not installed: "
            f"pip install 'cinn_py[{extra}]' (or pip install {package})"
        )


class LoadError(CinnError):
    """A saved model (model.json / model.pdiparams) that cannot be read, or a program file
    that holds no text (binary data, UTF-16): file and why."""
