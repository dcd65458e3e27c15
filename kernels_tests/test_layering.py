"""The package layering and the one place target names are compared, checked by parsing
every module of cinn_py (imports inside functions included):

- `cinn_py.hlir` never imports `cinn_py.runtime` or `cinn_py.driver`;
- `cinn_py.runtime` never imports `cinn_py.hlir` or `cinn_py.driver`;
- `cinn_py.targets` imports none of hlir, runtime, driver (they ask it);
- no module outside `cinn_py.targets` compares a target name string (`==`, `!=`, `in`):
  code asks the Target object.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cinn_py
from cinn_py.targets import TARGETS

ROOT = Path(cinn_py.__file__).parent

FORBIDDEN = {
    "cinn_py.hlir": ("cinn_py.runtime", "cinn_py.driver"),
    "cinn_py.runtime": ("cinn_py.hlir", "cinn_py.driver"),
    "cinn_py.targets": ("cinn_py.hlir", "cinn_py.runtime", "cinn_py.driver"),
}


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.append((".".join(parts), path))
    return found


def imported(module: str, tree: ast.AST) -> set[str]:
    """Every module `module` imports (absolute or relative, anywhere in its body)."""
    package = module.rsplit(".", 1)[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_lower_packages_never_import_the_layers_above(package):
    bad = []
    for module, path in modules():
        if not _within(module, package):
            continue
        for name in imported(module, ast.parse(path.read_text(encoding="utf-8"))):
            if any(_within(name, above) for above in FORBIDDEN[package]):
                bad.append(f"{module} imports {name}")
    assert not bad, "\n".join(bad)


def _names_in(node: ast.AST) -> set[str]:
    """The target names a comparison operand spells: a string, or a tuple / list / set
    of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & set(TARGETS)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_names_in(e) for e in node.elts), set())
    return set()


def test_only_the_targets_compare_target_names():
    bad = []
    for module, path in modules():
        if _within(module, "cinn_py.targets"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                spelled = set().union(*(_names_in(n) for n in [node.left, *node.comparators]))
                if spelled:
                    bad.append(f"{module}:{node.lineno} compares {sorted(spelled)}")
    assert not bad, "\n".join(bad)


def test_the_checks_see_what_they_look_for():
    """The parsers find a forbidden import and a name comparison where there is one."""
    tree = ast.parse("from cinn_py.runtime import scope\nif t == 'cuda': pass\n")
    assert "cinn_py.runtime.scope" in imported("cinn_py.hlir.x", tree)
    (compare,) = [n for n in ast.walk(tree) if isinstance(n, ast.Compare)]
    assert _names_in(compare.comparators[0]) == {"cuda"}
    relative = ast.parse("from ...runtime import scope\n")
    assert "cinn_py.runtime" in imported("cinn_py.hlir.pkg.mod", relative)


CONTEXT_VISITORS = {
    "cinn_py.ir.printer._Printer": "prints with indentation and the enclosing block",
    "cinn_py.backends.codegen_c.CRenderer": "renders C with its scopes and accumulators",
    "cinn_py.backends.codegen_c._UsedVars": "skips the indices of the accesses given",
    "cinn_py.ir.schedule.cache_read._ReadFinder": "each load with the Reduces around it",
}
"""The Visitor subclasses kept, each for the context its walk carries. A walk that only
collects (the loads, the vars, the reductions of a node) is a filter over
`ir.visitor.nodes`: the issue's clean-up left none, and eight had crept back by the
next review (2026-11-28)."""


def test_visitor_subclasses_are_only_the_walks_that_need_context():
    found = set()
    for module, path in modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(base, ast.Name) and base.id == "Visitor" for base in node.bases
            ):
                found.add(f"{module}.{node.name}")
    assert found == set(CONTEXT_VISITORS), (
        "a collector Visitor: filter ir.visitor.nodes(...) instead, or add it to "
        "CONTEXT_VISITORS with the context its walk needs"
    )
