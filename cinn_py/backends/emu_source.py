"""CUDA source to the C++ translation unit that g++ compiles for `cuda-emu`.

Three textual steps, each keeping every line of the source on its own line number, so
that g++'s errors point at the lines the author wrote:

1. find the kernels: `__global__` function definitions (not templates: a launch names a
   kernel as `cuModuleGetFunction` does, and generated kernels are `extern "C"`);
2. rewrite each dynamic shared memory declaration `extern __shared__ T name[];` into
   `T* const name = reinterpret_cast<T*>(cinn_emu_dynamic_shared);`, a constant pointer
   to the buffer that each launch sizes with `shared_mem` (cinn_emu_runtime.h explains
   why a constant address works at any scope);
3. append a launcher per kernel, `cinn_emu_launch_<name>(const LaunchConfig*, void**)`:
   it unpacks cuLaunchKernel-style kernelParams with a template deduced from the
   kernel's own type, so no parameter list is ever parsed here.  Checking mode also
   appends a `main` that runs one launch described by a manifest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LAUNCHER_PREFIX = "cinn_emu_launch_"
RELEASE_FUNCTION = "cinn_emu_release_fibers"
"""Unmaps the module's fiber stacks (kept between launches); called when it is dropped."""

_COMMENT_OR_LITERAL = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S
)
_IDENTIFIER = re.compile(r"\s*([A-Za-z_]\w*)")
_ATTRIBUTE_LIKE = {"__launch_bounds__", "__attribute__", "__maxnreg__", "__align__", "alignas"}
_GLOBAL = re.compile(r"\b__global__\b")
_TEMPLATE = re.compile(r"\btemplate\b")
_DYNAMIC_SHARED = re.compile(
    r"\bextern\s+(?P<before>[^;{}]*?)\b__shared__\b(?P<after>[^;{}]*?)"
    r"\b(?P<name>[A-Za-z_]\w*)\s*\[\s*\]\s*;"
)
_ALIGNMENT = re.compile(r"\b(?:__align__|alignas)\s*\([^()]*\)|\b__attribute__\s*\(\(.*?\)\)")


@dataclass(frozen=True)
class PreparedSource:
    """What g++ compiles (`text`) and the kernels it can launch, in source order."""

    text: str
    kernels: tuple[str, ...]


def prepare(source: str, *, executable: bool = False) -> PreparedSource:
    """The translation unit for `source`; `executable` adds checking mode's `main`."""
    code = _blank_comments_and_literals(source)
    kernels = find_kernels(code)
    text = _rewrite_dynamic_shared(source, code)
    return PreparedSource(text + _launchers(kernels, executable), kernels)


def _blank_comments_and_literals(source: str) -> str:
    """`source` with comments and string/char literals replaced by spaces, newlines kept.

    Same length as `source`, so an offset found in it is an offset in `source`.
    """

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    return _COMMENT_OR_LITERAL.sub(blank, source)


def find_kernels(code: str) -> tuple[str, ...]:
    """Names of the non-template `__global__` functions *defined* in `code` (comments blanked)."""
    names: list[str] = []
    for match in _GLOBAL.finditer(code):
        name, params_end = _declarator_after(code, match.end())
        if name is None or _is_template(code, match.start()):
            continue
        if code[params_end:].lstrip().startswith("{") and name not in names:
            names.append(name)
    return tuple(names)


def _declarator_after(code: str, pos: int) -> tuple[str | None, int]:
    """The function name after `__global__` at `pos` and where its parameter list ends.

    Skips specifiers (`void`, `static`) and attribute-like macros with their arguments
    (`__launch_bounds__(256, 2)`); the name is the first identifier followed by `(`.
    """
    while True:
        match = _IDENTIFIER.match(code, pos)
        if match is None:
            return None, pos
        word, pos = match.group(1), match.end()
        rest = code[pos:].lstrip()
        if not rest.startswith("("):
            continue
        open_paren = len(code) - len(rest)
        close_paren = _matching_paren(code, open_paren)
        if close_paren < 0:
            return None, pos
        if word not in _ATTRIBUTE_LIKE:
            return word, close_paren + 1
        pos = close_paren + 1


def _matching_paren(code: str, open_paren: int) -> int:
    depth = 0
    for index in range(open_paren, len(code)):
        if code[index] == "(":
            depth += 1
        elif code[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _is_template(code: str, pos: int) -> bool:
    """Whether the declaration holding `pos` starts with `template <...>`."""
    start = max(code.rfind(c, 0, pos) for c in ";{}")
    lines = code[start + 1 : pos].splitlines()
    return any(_TEMPLATE.search(line) for line in lines if not line.lstrip().startswith("#"))


def _rewrite_dynamic_shared(source: str, code: str) -> str:
    """Replace `extern __shared__ T name[];` by a constant pointer to the dynamic buffer."""
    pieces: list[str] = []
    last = 0
    for match in _DYNAMIC_SHARED.finditer(code):
        type_name = _ALIGNMENT.sub(" ", f"{match['before']} {match['after']}")
        type_name = " ".join(type_name.split())
        if not type_name or "," in type_name:
            continue
        name = match["name"]
        newlines = "\n" * source.count("\n", match.start(), match.end())
        pieces.append(source[last : match.start()])
        pieces.append(
            f"{type_name}* const {name} = "
            f"reinterpret_cast<{type_name}*>(cinn_emu_dynamic_shared);{newlines}"
        )
        last = match.end()
    pieces.append(source[last:])
    return "".join(pieces)


def _launchers(kernels: tuple[str, ...], executable: bool) -> str:
    lines = ["", '#line 1 "cinn_emu_launchers"', '#include "cinn_emu_scheduler.h"']
    for name in kernels:
        lines.append(
            f'extern "C" __attribute__((visibility("default"))) int {LAUNCHER_PREFIX}{name}('
            f"const cinn_emu::LaunchConfig* config, void** args) {{\n"
            f'    return cinn_emu::launch<&{name}>("{name}", config, args);\n}}'
        )
    lines.append(
        f'extern "C" __attribute__((visibility("default"))) void {RELEASE_FUNCTION}(void) {{\n'
        "    cinn_emu::release_fibers();\n}"
    )
    if executable:
        entries = "".join(f'    {{"{name}", &{LAUNCHER_PREFIX}{name}}},\n' for name in kernels)
        lines += [
            '#include "cinn_emu_check_main.h"',
            f"static const cinn_emu::KernelEntry cinn_emu_kernels[] = {{\n{entries}"
            "    {nullptr, nullptr}};",
            "int main(int argc, char** argv) {",
            f"    return cinn_emu::check_main(argc, argv, cinn_emu_kernels, {len(kernels)});",
            "}",
        ]
    return "\n".join(lines) + "\n"
