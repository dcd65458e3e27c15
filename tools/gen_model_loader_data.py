"""Writes the small saved models that test_model_loader.py reads, with real Paddle.

They cover encodings the fixture models (kernels_tests/fixtures/models) lack: float16,
bfloat16 and 0-D parameters, an int64 input, vector types (split / concat), null
operands, NaN and infinite attributes, and an op with regions (if / else). Run with the
Paddle installed in a separate venv (Paddle is a tool, never a dependency of cinn_py
or its tests):

    /work/paddle-venv/bin/python tools/gen_model_loader_data.py

Each model folder gets `model.json` (+ `model.pdiparams`) from `paddle.jit.save`.
`mixed` also gets `paddle.pir`, the program as `paddle.static.load_inference_model`
prints it, and `params.npz`, the parameter values (bfloat16 as uint16 bit patterns).
(Paddle 3.3.1 cannot read its own NaN / Inf attributes back: it has no text for
`nan_inf`.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle.static import InputSpec

HERE = Path(__file__).resolve().parent.parent / "kernels_tests" / "pir" / "data"


class Mixed(paddle.nn.Layer):
    """float16 / bfloat16 / 0-D parameters, an int64 input, vectors, null operands."""

    def __init__(self) -> None:
        super().__init__()
        self.w = self.create_parameter([4, 2], dtype="float16")
        self.b = self.create_parameter([2], dtype="bfloat16")
        self.s = self.create_parameter([], dtype="float32")
        self.w.set_value(np.arange(8, dtype=np.float16).reshape(4, 2) / 8)
        self.b.set_value(paddle.to_tensor([0.5, -1.25], dtype="bfloat16"))
        self.s.set_value(np.array(3.0, dtype=np.float32))

    def forward(self, x: paddle.Tensor, ids: paddle.Tensor) -> tuple[paddle.Tensor, ...]:
        y = paddle.matmul(x, self.w.astype("float32")) + self.b.astype("float32") * self.s
        left, right = paddle.split(y, 2, axis=1)
        joined = paddle.concat([right, left], axis=1)
        normed = F.layer_norm(x, 4)
        return joined, normed, paddle.cast(ids, "float32")


class NanInf(paddle.nn.Layer):
    """Float attributes JSON cannot hold: written as "VD": "NaN" / "INF" / "-INF"."""

    def forward(self, x: paddle.Tensor) -> tuple[paddle.Tensor, ...]:
        nan = paddle.full([1], float("nan"))
        low = paddle.full([1], float("-inf"), dtype="float64")
        return paddle.scale(x, scale=float("inf")), nan, low


class Cond(paddle.nn.Layer):
    """A data-dependent branch: `pd_op.if` with two regions ending in `cf.yield`."""

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        if x.mean() > 0:
            y = x * 2
        else:
            y = x - 1
        return y


def save(layer: paddle.nn.Layer, name: str, specs: list[InputSpec]) -> Path:
    folder = HERE / name
    for stale in folder.glob("*"):
        stale.unlink()
    layer.eval()
    paddle.jit.save(layer, str(folder / "model"), input_spec=specs)
    return folder


def write_paddle_text(folder: Path) -> None:
    paddle.enable_static()
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe = paddle.static.Executor(paddle.CPUPlace())
        program, _, _ = paddle.static.load_inference_model(str(folder / "model"), exe)
        (folder / "paddle.pir").write_text(str(program))
    paddle.disable_static()


def main() -> None:
    paddle.seed(0)
    mixed = Mixed()
    folder = save(
        mixed, "mixed", [InputSpec([-1, 4], "float32", "x"), InputSpec([-1], "int64", "ids")]
    )
    params = {p.name: p.numpy() for p in mixed.parameters()}
    np.savez(folder / "params.npz", **params)
    write_paddle_text(folder)
    save(NanInf(), "nan_inf", [InputSpec([-1, 4], "float32", "x")])
    save(Cond(), "cond", [InputSpec([-1, 4], "float32", "x")])


if __name__ == "__main__":
    main()
