"""`reference`: the NumPy interpreter, op by op. Nothing is compiled; the API runs the
program with `cinn_py.reference.ReferenceExecutor`."""

from __future__ import annotations

from cinn_py.targets.target import Target


class ReferenceTarget(Target):
    name = "reference"
