"""The README's Python snippets run as written (so the docs stay true)."""

from __future__ import annotations

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python_blocks() -> list[str]:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_python_examples():
    assert len(_python_blocks()) >= 2


def test_readme_python_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    for block in _python_blocks():
        code = block.replace('exe.run(feeds, params={"linear_0.w_0": w, ...})', "None")
        exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["outs"]["%5"].shape == (256, 1000)
    assert namespace["exe"].target in ("cuda", "cuda-emu")
    assert "__global__" in namespace["exe"].cuda_source
    stats = namespace["layer"].compile_stats  # the symbolic kernels example
    assert stats.kernel_units_compiled + stats.kernel_units_cached == 4
    assert stats.kernel_units_compiled <= 2  # 0 where an earlier run compiled them


def test_ci_runs_the_readmes_test_command():
    """.ci/run runs the README's test command (the first code block's second line)."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        first_block = re.search(r"```\n(.*?)```", f.read(), flags=re.S).group(1)
    install, command = first_block.splitlines()[1].split("#")[0].strip().split(" && ")
    assert install == 'pip install -e ".[test]"'
    assert command == "python -m pytest kernels_tests -n auto"
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as f:
        ci = f.read().splitlines()
    assert command in ci and 'pip install --quiet -e ".[test]"' in ci
