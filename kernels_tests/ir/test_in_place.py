"""`ir.in_place`: which outputs of a scheduled function may take an input's bytes. Each
kernel shape the proof must refuse (another index, another thread's element, a second
write, a read after the write, a broadcast, a reduction, a transpose) next to the
elementwise shapes it accepts, on hand-built functions and on what the pipeline
schedules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.ir.expr import Cast, FloatImm, IntImm, Load, Min, Var
from cinn_py.ir.in_place import in_place_pairs
from cinn_py.ir.stmt import (
    Argument,
    Block,
    BufferRange,
    For,
    ForType,
    LoweredFunc,
    ScheduleBlock,
    ScheduleBlockRealize,
    Store,
)
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cuda"))
from codegen_cases import all_cases  # noqa: E402
from codegen_helpers import buffer, flat_nest, function, serial_nest  # noqa: E402

F32 = DataType.FLOAT32


def _one() -> FloatImm:
    return FloatImm(1.0, F32)


def test_a_vectorized_elementwise_kernel_may_write_over_its_input() -> None:
    x, y = buffer("x", F32, [5, 7]), buffer("y", F32, [5, 7])
    nest = flat_nest(y, lambda iv: Load(x, iv) + _one(), threads=4, lanes=4)
    assert in_place_pairs(function("f", [x], [y], [nest])) == [("x", "y")]


@pytest.mark.parametrize("shape", [[1], [3], [7], [33], [129], [1000], [3, 7, 1]])
def test_odd_shapes_guarded_or_not(shape) -> None:
    x, y = buffer("x", F32, shape), buffer("y", F32, shape)
    for lanes in (1, 4):
        nest = flat_nest(y, lambda iv: Load(x, iv) * _one(), threads=32, lanes=lanes)
        assert in_place_pairs(function("f", [x], [y], [nest])) == [("x", "y")], lanes


def test_reading_another_element_is_refused() -> None:
    """y[i] = x[(i + 1) % 8]: thread i reads what thread i + 1 overwrites."""
    x, y = buffer("x", F32, [8]), buffer("y", F32, [8])
    nest = serial_nest(y, lambda iv: Load(x, [(iv[0] + 1) % IntImm(8)]))
    assert in_place_pairs(function("f", [x], [y], [nest])) == []


def test_a_transposed_read_is_refused() -> None:
    x, y = buffer("x", F32, [4, 4]), buffer("y", F32, [4, 4])
    nest = serial_nest(y, lambda iv: Load(x, [iv[1], iv[0]]))
    assert in_place_pairs(function("f", [x], [y], [nest])) == []


def test_a_broadcast_input_or_another_element_size_is_refused() -> None:
    row, y = buffer("row", F32, [7]), buffer("y", F32, [5, 7])
    nest = serial_nest(y, lambda iv: Load(row, [iv[1]]))
    assert in_place_pairs(function("f", [row], [y], [nest])) == []
    half, wide = buffer("h", DataType.FLOAT16, [16]), buffer("w", F32, [16])
    nest = serial_nest(wide, lambda iv: _cast(half, iv))
    assert in_place_pairs(function("f", [half], [wide], [nest])) == []
    # the same bytes (8 float32, 16 float16) but not the same elements
    x, y = buffer("x", F32, [8]), buffer("y", DataType.FLOAT16, [8])
    nest = serial_nest(y, lambda iv: _cast(x, iv, DataType.FLOAT16))
    assert in_place_pairs(function("f", [x], [y], [nest])) == []


def _cast(source, iv, dtype=F32):
    return Cast(dtype, Load(source, iv))


def test_a_store_some_iterations_repeat_is_refused() -> None:
    """A clamped index (the last element written by every thread past the end) makes
    two iterations write one element: the later one would read it overwritten."""
    x, y = buffer("x", F32, [10]), buffer("y", F32, [10])
    t = Var("t", DataType.INT32, 0, 16)
    i = Var("i0_0", DataType.INT32, 0, 10)
    store = Store(y, Load(x, [i]) + _one(), [i])
    block = ScheduleBlock([i], [], [BufferRange(y, [i])], "y", store)
    realize = ScheduleBlockRealize([Min(t, IntImm(9))], block)
    nest = For(t, 0, 16, ForType.SERIAL, Block([realize]))
    assert in_place_pairs(function("f", [x], [y], [nest])) == []


def test_a_second_store_or_a_read_after_the_store_is_refused() -> None:
    x, y = buffer("x", F32, [8]), buffer("y", F32, [8])
    twice = [serial_nest(y, lambda iv: Load(x, iv)), serial_nest(y, lambda iv: Load(x, iv))]
    assert in_place_pairs(function("f", [x], [y], twice)) == []
    # one loop: y[i] = x[i]; z[i] = x[i] * 2. z may take x (x[i] is read before z[i] is
    # written), y may not (z's read of x[i] comes after y[i] is written).
    z = buffer("z", F32, [8])
    i = Var("i_0", DataType.INT32, 0, 8)
    stores = []
    for out, value in ((y, lambda v: Load(x, [v])), (z, lambda v: Load(x, [v]) * _one())):
        iv = Var(f"{out.name}0", DataType.INT32, 0, 8)
        block = ScheduleBlock(
            [iv], [], [BufferRange(out, [iv])], out.name, Store(out, value(iv), [iv])
        )
        stores.append(ScheduleBlockRealize([i], block))
    nest = For(i, 0, 8, ForType.SERIAL, Block(stores))
    assert in_place_pairs(function("f", [x], [y, z], [nest])) == [("x", "z")]


def test_a_read_in_another_loop_nest_is_refused() -> None:
    """x read by a second nest after the first wrote y over it."""
    x, y, z = (buffer(n, F32, [8]) for n in "xyz")
    nests = [
        serial_nest(y, lambda iv: Load(x, iv)),
        serial_nest(z, lambda iv: Load(x, iv), prefix="j"),
    ]
    assert in_place_pairs(function("f", [x], [y, z], nests)) == []


def test_a_loop_around_the_nest_that_repeats_it_is_refused() -> None:
    """for (r, 0, 2) around the nest: each element is written twice (the second time
    after its input was overwritten); a shadowing loop of the same name as well."""
    x, y = buffer("x", F32, [8]), buffer("y", F32, [8])
    nest = serial_nest(y, lambda iv: Load(x, iv) + _one())
    again = For(Var("r"), 0, 2, ForType.SERIAL, Block([nest]))
    assert in_place_pairs(function("f", [x], [y], [again])) == []
    shadow = For(Var("i_0", DataType.INT32, 0, 8), 0, 2, ForType.SERIAL, Block([nest]))
    assert in_place_pairs(function("f", [x], [y], [shadow])) == []


def test_a_symbolic_shape_is_proven_at_the_bound_dims() -> None:
    """A symbolic kernel's pair is proven with its dims pinned to the signature being
    compiled (`ir.dim_values`): `y[i, j] = x[i, j]` over [m, n] needs `i * n`, which isl
    decides only for a known n; with none bound the pair is left out."""
    from cinn_py.ir.dim_values import bound_dims

    m, n = Var("S0", DataType.INT32, 1), Var("S1", DataType.INT32, 1)
    x, y = buffer("x", F32, [m, n]), buffer("y", F32, [m, n])
    i, j = Var("i_0", DataType.INT32, 0), Var("i_1", DataType.INT32, 0)
    iv, jv = Var("i0_0", DataType.INT32, 0), Var("i1_0", DataType.INT32, 0)
    block = ScheduleBlock([iv, jv], [], [], "y", Store(y, Load(x, [iv, jv]), [iv, jv]))
    inner = For(j, 0, n, ForType.SERIAL, Block([ScheduleBlockRealize([i, j], block)]))
    nest = For(i, 0, m, ForType.SERIAL, Block([inner]))
    func = function("f", [x], [y], [nest])
    func = LoweredFunc(func.name, [*func.args, Argument(m), Argument(n)], func.body)
    assert in_place_pairs(func) == []
    with bound_dims({"S0": 3, "S1": 7}):
        assert in_place_pairs(func) == [("x", "y")]


def test_each_input_and_output_in_one_pair() -> None:
    """Two inputs, two outputs of the same shape: x -> y, w -> z; never one input to
    two outputs."""
    x, w, y, z = (buffer(n, F32, [8]) for n in "xwyz")
    i = Var("i_0", DataType.INT32, 0, 8)
    stores = []
    for out in (y, z):
        iv = Var(f"{out.name}0", DataType.INT32, 0, 8)
        value = Load(x, [iv]) + Load(w, [iv])
        block = ScheduleBlock([iv], [], [BufferRange(out, [iv])], out.name, Store(out, value, [iv]))
        stores.append(ScheduleBlockRealize([i], block))
    nest = For(i, 0, 8, ForType.SERIAL, Block(stores))
    # y's store comes first, so x and w are still read (for z) after it: only z may.
    assert in_place_pairs(function("f", [x, w], [y, z], [nest])) == [("x", "z")]


def test_every_codegen_case_that_pairs_is_elementwise() -> None:
    """The hand-built kernels of the codegen tests: the elementwise ones pair each
    full-shape input with an output; broadcast operands stay out."""
    found = {case.name: in_place_pairs(case.func) for case in all_cases()}
    assert found["ew_f32_vec4"] == [("var_3", "var_7")]
    assert found["two_nests"] == [("var_0", "var_2"), ("var_1", "var_3")]
    assert found["broadcast_vec"] == [("var_0", "var_3")]


# ---- what the pipeline schedules --------------------------------------------------------


def _pairs(text: str) -> dict[str, list[tuple[str, str]]]:
    stages = PIRCompiler(parse_program(text), "cuda-emu").stages(until="scheduled")
    return {
        "+".join(op.name.removeprefix("pd_op.") for op in k.group.ops): in_place_pairs(
            k.scheduled.func
        )
        for k in stages.fused
    }


def _data(name: str, shape: str, index: int) -> str:
    dims = shape.replace("x", ",")
    return (
        f'    (%{index}) = "pd_op.data" () {{dtype:float32,name:"{name}",place:Place(undefined:0),'
        f"shape:[{dims}]}} : () -> tensor<{shape}xf32>"
    )


def test_scheduled_groups_pair_only_elementwise_full_shape_inputs() -> None:
    text = "\n".join(
        [
            "{",
            _data("x", "33x129", 0),
            _data("b", "129", 1),
            '    (%2) = "pd_op.add" (%0, %1) {} : (tensor<33x129xf32>, tensor<129xf32>) -> tensor<33x129xf32>',
            '    (%3) = "pd_op.exp" (%2) {} : (tensor<33x129xf32>) -> tensor<33x129xf32>',
            "}",
        ]
    )
    assert _pairs(text) == {"add+exp": [("var_0", "var_3")]}


@pytest.mark.parametrize(
    "op",
    [
        '(%1) = "pd_op.transpose" (%0) {perm:[1,0]} : (tensor<64x64xf32>) -> tensor<64x64xf32>',
        '(%1) = "pd_op.softmax" (%0) {axis:-1} : (tensor<64x64xf32>) -> tensor<64x64xf32>',
    ],
)
def test_transposes_and_reductions_pair_nothing(op: str) -> None:
    text = "\n".join(["{", _data("x", "64x64", 0), f"    {op}", "}"])
    found = _pairs(text)
    assert found and all(pairs == [] for pairs in found.values()), found
