"""Schedules keep the numbers: each function is run by the IR interpreter before and
after a schedule and compared with NumPy (dtype-aware tolerances)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from schedule_funcs import (
    elementwise_2d,
    elementwise_3d,
    producer_consumer,
    producer_transpose,
    reduce_expr,
    reduce_init_update,
    scalar_chain,
    two_consumers,
    two_producers,
)

from cinn_py.ir.bound_guards import insert_bound_guards
from cinn_py.ir.interpreter import run_function
from cinn_py.ir.schedule import IRSchedule
from cinn_py.ir.stmt import ArgIO, LoweredFunc
from cinn_py.tolerances import compare

Arrays = dict[str, np.ndarray]


def gpu_schedule(s: IRSchedule) -> None:
    s.compute_inline("var_1")
    blocks, threads, lanes = s.split(s.fuse(s.get_loops("var_2")), [-1, 64, 4])
    s.bind(blocks, "blockIdx.x")
    s.bind(threads, "threadIdx.x")
    s.vectorize(lanes, 4)


def exp(x: np.ndarray) -> np.ndarray:
    return np.exp(x)


CASES: dict[str, tuple[Callable[[], LoweredFunc], Callable[[IRSchedule], object], Callable]] = {
    "inline, fuse, split, bind, vectorize": (
        producer_consumer,
        gpu_schedule,
        lambda a: {"var_2": exp(a["var_0"]) + a["var_0"]},
    ),
    "reorder, split, unroll, fuse": (
        elementwise_3d,
        lambda s: (
            s.reorder(["i_2", "i_0"]),
            s.split("i_1", [2, -1]),
            s.unroll("i_1_0"),
            s.fuse(["i_1_1", "i_0"]),
        ),
        lambda a: {"var_1": a["var_0"] * 2},
    ),
    "reverse inline a transpose, fuse, bind": (
        producer_transpose,
        lambda s: (
            s.reverse_compute_inline("var_2"),
            s.bind(s.fuse(s.get_loops("var_1")), "threadIdx.x"),
        ),
        lambda a: {"var_2": (exp(a["var_0"]) * 2).T},
    ),
    "inline a transpose": (
        producer_transpose,
        lambda s: (s.compute_inline("var_1"), s.reorder(["i_3", "i_2"])),
        lambda a: {"var_2": (exp(a["var_0"]) * 2).T},
    ),
    "inline into two consumers": (
        two_consumers,
        lambda s: s.compute_inline("var_1"),
        lambda a: {"var_2": exp(a["var_0"]) * 2, "var_3": exp(a["var_0"]) + a["var_0"]},
    ),
    "inline two producers, fuse, split": (
        two_producers,
        lambda s: (
            s.compute_inline("var_1"),
            s.compute_inline("var_2"),
            s.split(s.fuse(s.get_loops("var_3")), [-1, 16]),
        ),
        lambda a: {"var_3": exp(a["var_0"]) - a["var_0"] * 3},
    ),
    "0-D reverse inline": (
        scalar_chain,
        lambda s: s.reverse_compute_inline("var_2"),
        lambda a: {"var_2": a["var_0"] * 2 + 1},
    ),
    "reduction loop moved outward": (
        reduce_init_update,
        lambda s: (s.reorder(["i_2", "i_1"]), s.split("i_3", [2, 4])),
        lambda a: {"var_2": a["var_0"].sum(axis=1) * 2},
    ),
    "inline into a reduction": (
        reduce_expr,
        lambda s: s.compute_inline("var_2"),
        lambda a: {"var_3": ((a["var_0"].sum(axis=1) * 2)[:, None] * a["var_0"]).sum(axis=1)},
    ),
    "split past the extent, guarded": (
        elementwise_2d,
        lambda s: (s.split("i_1", [3, -1, 8]), s.split("i_0", [-1, 48])),
        lambda a: {"var_2": a["var_0"] + a["var_1"]},
    ),
}


def run(func: LoweredFunc, inputs: Arrays) -> Arrays:
    buffers = {name: value.copy() for name, value in inputs.items()}
    outputs = [a.value for a in func.args if a.io is ArgIO.OUTPUT]
    for buffer in outputs:
        buffers[buffer.name] = np.zeros([d.value for d in buffer.shape], np.float32)
    run_function(func, buffers)
    return {b.name: buffers[b.name] for b in outputs}


@pytest.mark.parametrize("name", list(CASES))
def test_schedule_keeps_results(name: str) -> None:
    factory, schedule, expected = CASES[name]
    func = factory()
    rng = np.random.default_rng(0)
    inputs = {
        a.name: rng.standard_normal([d.value for d in a.value.shape]).astype(np.float32)
        for a in func.args
        if a.io is ArgIO.INPUT
    }
    sch = IRSchedule(func)
    schedule(sch)
    before = run(func, inputs)
    after = run(insert_bound_guards(sch.func), inputs)
    want = expected(inputs)
    assert set(after) == set(want)
    for key, value in want.items():
        value = np.asarray(value, np.float32)
        assert compare(before[key], value).ok, f"{key} before the schedule"
        result = compare(after[key], value)
        assert result.ok, f"{key} after the schedule: {result}"
