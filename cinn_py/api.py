"""The public API: load a program, compile it for a target, run it.

    prog = cinn_py.load("model.json")          # or program text, or a folder / prefix
    exe = cinn_py.compile(prog, target="reference")
    outs = exe.run({"x": x})                   # {"%24": array} or {"out0": array}

Outputs are named as the CLI names them: `out0`, `out1`, ... (fetch order) for
programs that declare outputs with fetch / shadow_output ops (saved models), else
the printed value id (`%24`) of each output.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cinn_py.errors import CinnError, FeedError, LoadError
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.parser import parse_file
from cinn_py.pir.printer import value_names
from cinn_py.pir.program import Program
from cinn_py.pir.value import Value
from cinn_py.pir.verifier import verify_program
from cinn_py.reference import ReferenceExecutor

TARGETS = ("cuda", "cuda-emu", "reference")
AVAILABLE_TARGETS = ("reference",)


def load(path: str | os.PathLike[str]) -> Program:
    """Read a program: Paddle program text, or a saved model (model.json, its folder or
    its path prefix; parameters from model.pdiparams). The result is verified."""
    path = os.fspath(path)
    if _is_saved_model(path):
        program = load_model(path)
    elif os.path.isfile(path):
        program = parse_file(path)
    else:
        raise LoadError(f"{path}: no such program file, model.json, model folder or prefix")
    verify_program(program)
    return program


def _is_saved_model(path: str) -> bool:
    if path.endswith(".json") or os.path.isfile(path + ".json"):
        return True
    return os.path.isdir(path)


def default_target() -> str:
    """The target `compile` uses when none is named: the best one that works here."""
    return "reference"


@dataclass
class Executable:
    """A program prepared for one target: `run(feeds)` returns its outputs by name."""

    program: Program
    target: str
    output_names: list[str]
    outputs: list[Value] = field(repr=False)
    executor: ReferenceExecutor = field(repr=False)
    """Built once by `compile` (every op's kernel chosen up front), reused by each `run`."""

    def run(
        self,
        feeds: Mapping[str, Any],
        params: Mapping[str, Any] | None = None,
        fetch: Sequence[str] | None = None,
    ) -> dict[str, np.ndarray]:
        """Run with `feeds` (by data name) and `params` (by parameter name; defaults to the
        program's own). `fetch` picks outputs, or any value, by printed id (`%24`) or `outN`."""
        names, values = self._select(fetch)
        arrays = self.executor.run(
            {k: _to_numpy(k, v) for k, v in feeds.items()},
            None if params is None else {k: _to_numpy(k, v) for k, v in params.items()},
            values,
        )
        return dict(zip(names, arrays, strict=True))

    def _select(self, fetch: Sequence[str] | None) -> tuple[list[str], list[Value]]:
        if fetch is None:
            return list(self.output_names), list(self.outputs)
        by_name = dict(zip(self.output_names, self.outputs, strict=True))
        by_id = value_names(self.program)
        values = []
        for name in fetch:
            value = by_name.get(name) or by_id.get(name)
            if value is None:
                known = ", ".join(self.output_names)
                raise CinnError(f"cannot fetch '{name}': no such value (outputs: {known})")
            values.append(value)
        return list(fetch), values


def compile(program: Program, target: str | None = None) -> Executable:
    """Prepare `program` to run on `target` ("cuda", "cuda-emu" or "reference")."""
    target = target or default_target()
    if target not in TARGETS:
        raise CinnError(f"unknown target '{target}'; targets: {', '.join(TARGETS)}")
    if target not in AVAILABLE_TARGETS:
        raise CinnError(
            f"target '{target}' is not implemented yet; available: {', '.join(AVAILABLE_TARGETS)}"
        )
    verify_program(program)
    outputs = program.outputs()
    names = output_names(program, outputs)
    return Executable(program, target, names, outputs, ReferenceExecutor(program))


def output_names(program: Program, outputs: Sequence[Value]) -> list[str]:
    """`out0`, `out1`, ... for declared outputs (fetch ops), else printed value ids."""
    if program.fetch_ops():
        return [f"out{i}" for i in range(len(outputs))]
    ids = {id(v): name for name, v in value_names(program).items()}
    return [ids[id(v)] for v in outputs]


def _to_numpy(name: str, array: Any) -> np.ndarray:
    """NumPy arrays pass through; CuPy and other DLPack arrays are copied to the host."""
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "get") and hasattr(array, "__cuda_array_interface__"):
        return array.get()
    if hasattr(array, "__dlpack__"):
        try:
            return np.from_dlpack(array)
        except (TypeError, RuntimeError, BufferError):
            pass
    if isinstance(array, (int, float, bool, np.generic, list, tuple)):
        return np.asarray(array)
    raise FeedError(name, "a NumPy, CuPy or DLPack array", type(array).__name__)
