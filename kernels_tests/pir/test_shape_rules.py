"""The symbolic shape rules beyond the first piece: `min` in DimExpr, slices and strided
slices with constant bounds on symbolic dims, einsum, topk / argsort, argmax / argmin,
pool2d, conv2d (NHWC) and conv2d_transpose, gather / index_select, cumsum, tile,
one_hot, split, interp, the statistics of the norms, swiglu.

Three kinds of checks: each rule's shapes printed as text; a differential check of
every fixture with -1 dims (each value's symbolic shape, evaluated at the fixture's
feeds, against `specialize_shapes`' concrete types), with the unknown symbols counted;
and every fixture made fully dynamic (every feed and every computed dim -1), whose
shapes must come out with no unknown symbol but the documented ones and evaluate to
the static program's types, also at odd feed sizes (1, 3, 7, 33)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import cinn_py
from cinn_py.errors import CinnError
from cinn_py.pir.dim_expr import Const, Max, Min, Sym, dim_max, dim_min
from cinn_py.pir.model_loader import load_model
from cinn_py.pir.passes.infer_shapes import specialize_shapes
from cinn_py.pir.shape_analysis import (
    _pool_extent,
    _slice_extent,
    _strided_extent,
    analyze_shapes,
)
from cinn_py.pir.types import DYNAMIC, DenseTensorType

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parents[0] / "fixtures"
S0, S1, S2 = Sym(0), Sym(1), Sym(2)
INT64_MAX = 2**63 - 1
ODD = (1, 3, 7, 33)


# ---- min --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (dim_min(S0, 8), "min(S0,8)"),
        (dim_min(8, S0), "min(S0,8)"),
        (dim_min(S1, S0), "min(S0,S1)"),
        (dim_min(S0, dim_min(S1, 3), 5), "min(S0,S1,3)"),
        (dim_min(S0, S0), "S0"),
        (dim_min(S0, 0), "0"),
        (dim_min(S0, -2), "-2"),
        (dim_min(S0, S0 + 1), "S0"),
        (dim_max(S0, S0 + 1), "S0+1"),
        (dim_min(3, 5), "3"),
        (dim_min(S0 - 1, 4), "min(S0-1,4)"),
        (dim_min(S0, 8) * 2, "min(S0,8)*2"),
        (dim_max(dim_min(S0, 8) - 2, 0), "max(min(S0,8)-2,0)"),
    ],
)
def test_min_canonical_forms_and_printing(expr, text):
    assert str(expr) == text


def test_min_nodes_evaluate_and_substitute():
    expr = dim_min(S0, S1 + 2)
    assert isinstance(expr, Min) and expr == dim_min(S1 + 2, S0)
    assert hash(expr) == hash(dim_min(S1 + 2, S0))
    assert expr.evaluate({S0: 7, S1: 1}) == 3
    assert expr.evaluate({S0: 2, S1: 9}) == 2
    assert expr.substitute({S1: Const(10)}) == dim_min(S0, 12)
    assert expr.substitute({S0: S1}) == S1  # min(S1, S1+2)
    assert expr.symbols() == {S0, S1}
    assert isinstance(dim_max(dim_min(S0, 4), 1), Max)
    assert dim_min(S0, 4).to_str(lambda s: f"x.shape[{s.index}]") == "min(x.shape[0],4)"
    with pytest.raises(ValueError):
        dim_min()


# ---- slices -----------------------------------------------------------------------------

_BOUNDS = (-40, -34, -33, -8, -7, -3, -1, 0, 1, 2, 3, 7, 8, 33, 34, INT64_MAX)


@pytest.mark.parametrize("size", (0, 2, *ODD, 8, 40))
def test_slice_extents_are_exact_at_every_size(size):
    for start, end in itertools.product(_BOUNDS, _BOUNDS):
        want = len(range(size)[slice(start, end)])
        assert _slice_extent(S0, start, end).evaluate({S0: size}) == want, (start, end)
        assert _slice_extent(Const(size), start, end) == Const(want)


@pytest.mark.parametrize("size", (0, 2, *ODD, 8, 40))
def test_strided_extents_are_exact_at_every_size(size):
    for start, end, step in itertools.product(
        _BOUNDS, (*_BOUNDS, -INT64_MAX), (1, 2, 3, -1, -2, -3)
    ):
        want = len(range(*slice(start, end, step).indices(size)))
        got = _strided_extent(S0, start, end, step).evaluate({S0: size})
        assert got == want, (start, end, step)


@pytest.mark.parametrize(
    ("start", "end", "text"),
    [
        (0, 8, "min(S0,8)"),
        (0, INT64_MAX, "S0"),
        (2, INT64_MAX, "max(S0-2,0)"),
        (1, -1, "max(S0-2,0)"),
        (0, -1, "max(S0-1,0)"),
        (1, 3, "min(max(S0-1,0),2)"),
        (-3, INT64_MAX, "min(S0,3)"),
        (-4, -1, "max(min(S0,4)-1,0)"),
        (3, 1, "0"),
    ],
)
def test_slice_extents_print(start, end, text):
    assert str(_slice_extent(S0, start, end)) == text


def test_strided_extents_print():
    assert str(_strided_extent(S0, 0, INT64_MAX, 2)) == "(S0+1)//2"
    assert str(_strided_extent(S0, -1, -INT64_MAX, -1)) == "S0"
    assert str(_strided_extent(S0, -1, -INT64_MAX, -2)) == "(S0+1)//2"
    assert str(_strided_extent(S0, 1, 7, 3)) == "(min(max(S0-1,0),6)+2)//3"


# ---- fixtures made fully dynamic --------------------------------------------------------

_CONSTANTS = frozenset({"builtin.parameter", "pd_op.full", "pd_op.full_int_array"})


def _dynamic(path: Path):
    """The program with every feed and every computed result's dims -1 (constants and
    parameters kept), and the original dims by value id."""
    program = cinn_py.load(path)
    original = {}
    for op in program.block:
        if op.name in _CONSTANTS:
            continue
        for result in op.results:
            if isinstance(result.type, DenseTensorType):
                original[id(result)] = result.type.dims
                result.type = result.type.with_dims((DYNAMIC,) * result.type.rank)
    return program, original


def _feed_shapes(program, original) -> dict[str, tuple[int, ...]]:
    return {
        str(op.attr("name")): tuple(original[id(op.result())])
        for op in program.block
        if op.name == "pd_op.data"
    }


def _binding(analysis, feed_shapes):
    return {
        symbol: feed_shapes[feed][axis]
        for symbol, (feed, axis) in analysis.feed_symbols().items()
        if feed in feed_shapes
    }


def _unknown(analysis) -> list[str]:
    return [str(src).split(" (")[0] for src in analysis.symbols.values() if src.feed is None]


def _compare(analysis, program, specialised, feed_shapes) -> int:
    """Check every value whose symbolic shape reads only feed symbols against the
    specialised program's type at the same place; the number of dims compared."""
    binding = _binding(analysis, feed_shapes)
    compared = 0
    for op, twin in zip(program.block, specialised.block, strict=True):
        for result, other in zip(op.results, twin.results, strict=False):
            shape = analysis.shape(result)
            if shape is None or not isinstance(other.type, DenseTensorType):
                continue
            if len(shape) != other.type.rank:
                continue  # a shape value replaced by its constant
            for axis, (dim, want) in enumerate(zip(shape, other.type.dims, strict=True)):
                if not dim.symbols() <= binding.keys():
                    continue  # an unknown symbol, counted apart
                got = dim.evaluate(binding)
                assert got == want, (
                    f"{op.name} {analysis.names(result)} dim {axis}: {dim} = {got}, "
                    f"specialised {want}"
                )
                compared += 1
    return compared


def _npz(path: Path) -> tuple[dict[str, tuple[int, ...]], dict[str, np.ndarray]]:
    """A feeds file's shapes, and the values of its small feeds (which a shape may read:
    `specialize_shapes` turns those into constants)."""
    with np.load(path) as arrays:
        shapes = {name: arrays[name].shape for name in arrays.files}
        values = {name: arrays[name] for name in arrays.files if arrays[name].size <= 1}
    return shapes, values


ALL_PROGRAMS = sorted(FIXTURES.glob("*/*/program.pir"))
STILL_UNKNOWN = {
    # arange's bounds are fed: the length depends on values, not shapes
    "op_arange": ["unknown: from pd_op.arange"] * 2,
    # squeeze with no axes drops the dims that are 1: not known for a symbolic dim
    "reshape_family": ["unknown: from pd_op.squeeze"] * 2,
}


@pytest.mark.parametrize(
    "path", ALL_PROGRAMS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}"
)
def test_fully_dynamic_fixture_has_no_unknown_symbol_and_agrees(path):
    program, original = _dynamic(path)
    analysis = analyze_shapes(program)
    assert _unknown(analysis) == STILL_UNKNOWN.get(path.parent.name, [])
    feeds, values = _feed_shapes(program, original), {}
    if any(DYNAMIC in dims for dims in feeds.values()):  # written with -1 dims
        feeds, values = _npz(path.parent / "feeds.npz")
    if path.parent.name == "op_arange":
        return  # specialising needs the fed bounds' values
    specialised = specialize_shapes(cinn_py.load(path), feeds, values)
    assert _compare(analysis, program, specialised, feeds) > 0 or not feeds


ODD_SIZED = ("op_pool2d", "slice_family", "strided_slice_negative", "tile_repeat", "op_conv2d")


@pytest.mark.parametrize("name", ODD_SIZED)
def test_odd_sizes_agree_with_specialize_shapes(name):
    path = FIXTURES / "programs" / name / "program.pir"
    program, original = _dynamic(path)
    analysis = analyze_shapes(program)
    base = _feed_shapes(program, original)
    checked = 0
    for feed, dims in base.items():
        for axis, size in itertools.product(range(len(dims)), ODD):
            feeds = dict(base)
            feeds[feed] = dims[:axis] + (size,) + dims[axis + 1 :]
            try:
                specialised = specialize_shapes(program, feeds)
            except CinnError:
                continue  # a pool window or a conv filter larger than the input
            checked += _compare(analysis, program, specialised, feeds)
    assert checked > 0


# ---- fixtures with -1 dims, against specialize_shapes ------------------------------------

UNKNOWN_AT_FEEDS = {"op_arange": 2}
"""Unknown symbols of the fixtures with -1 dims, as written; every other one has none."""


def _dynamic_fixtures() -> list[tuple[Path, str]]:
    found = []
    for path in ALL_PROGRAMS:
        text = path.read_text()
        if "x-1" not in text and "<-1" not in text:
            continue
        found.append((path.parent, "program.pir"))
        if (path.parent / "model.json").exists():
            found.append((path.parent, "model.json"))
    return found


@pytest.mark.parametrize(
    ("folder", "form"),
    _dynamic_fixtures(),
    ids=lambda x: x if isinstance(x, str) else f"{x.parent.name}/{x.name}",
)
def test_symbolic_shapes_evaluate_to_the_specialised_types(folder, form):
    program = (
        cinn_py.load(folder / "program.pir") if form == "program.pir" else cinn_py.load(folder)
    )
    analysis = analyze_shapes(program)
    assert len(_unknown(analysis)) == UNKNOWN_AT_FEEDS.get(folder.name, 0)
    compared = 0
    for feeds in ("feeds.npz", "feeds_2.npz"):
        if not (folder / feeds).exists():
            continue
        shapes, values = _npz(folder / feeds)
        analysis.check(shapes)
        specialised = specialize_shapes(program, shapes, values)
        compared += _compare(analysis, program, specialised, shapes)
    assert compared > 0 or folder.name in UNKNOWN_AT_FEEDS


# ---- rules, printed ---------------------------------------------------------------------


def _printed(name: str) -> list[str]:
    program, _ = _dynamic(FIXTURES / "programs" / name / "program.pir")
    analysis = analyze_shapes(program)
    lines = []
    for op in program.block:
        if op.name in _CONSTANTS or op.name in ("pd_op.data", "pd_op.fetch"):
            continue
        for result in op.results:
            shape = analysis.shape(result)
            if shape is not None:
                lines.append(f"{op.name}: [{', '.join(map(str, shape))}]")
    return lines


def test_pool2d_rules_print():
    assert _printed("op_pool2d") == [
        "pd_op.pool2d: [S0, S1, max(S2-1,0)//2+1, max(S3-1,0)//2+1]",  # k3 s2 p1
        "pd_op.pool2d: [S0, S1, max(S2-1,0)//2+1, max(S3-1,0)//2+1]",
        "pd_op.pool2d: [S0, S1, S2//2+1, S3//2+1]",  # ceil_mode
        "pd_op.pool2d: [S0, S1, max(S2-1,0)//2+1, max(S3-1,0)//2+1]",  # k2 s2 ceil_mode
        "pd_op.pool2d: [S0, S1, S2-1, max(S3-3,0)//2+1]",  # k(2,3) s(1,2)
        "pd_op.pool2d: [S0, S1, 1, 1]",  # adaptive 1x1
        "pd_op.pool2d: [S0, S1, 3, 3]",  # adaptive 3x3
        "pd_op.max_pool2d_with_index: [S0, S1, 3, 3]",
        "pd_op.max_pool2d_with_index: [S0, S1, 3, 3]",
        "pd_op.pool2d: [S4, (S5+1)//2, (S6+1)//2, S7]",  # NHWC, SAME
        "pd_op.pool2d: [S4, S5-1, S6-1, S7]",  # NHWC, VALID
    ]


@pytest.mark.parametrize("algorithm", ("EXPLICIT", "SAME", "VALID"))
@pytest.mark.parametrize("ceil_mode", (False, True))
def test_pool_extents_match_the_windows_at_every_size(algorithm, ceil_mode):
    """Paddle truncates the window count (a window overhanging a small input by less
    than a stride still gives one output), and SAME with ceil_mode adds its stride - 1
    after the SAME pads: the expressions reproduce `pool_windows` exactly."""
    from cinn_py.ops.pool import pool_windows

    checked = 0
    for k, s, p in itertools.product(range(1, 6), range(1, 5), range(3)):
        extent = _pool_extent(S0, k, s, p, p, ceil_mode=ceil_mode, algorithm=algorithm)
        for size in range(1, 40):
            try:
                (window,) = pool_windows(
                    "pd_op.pool2d",
                    "",
                    [size],
                    [k],
                    [s],
                    [p],
                    algorithm=algorithm,
                    ceil_mode=ceil_mode,
                )
            except CinnError:
                continue  # the window does not fit
            assert extent.evaluate({S0: size}) == window.out, (k, s, p, size, str(extent))
            checked += 1
    assert checked > 1000


def test_slice_and_strided_slice_rules_print():
    assert _printed("slice_family") == [
        "pd_op.slice: [min(max(S0-1,0),2), min(S1,4)]",
        "pd_op.slice: [S1]",
        "pd_op.slice: [S0]",
        "pd_op.slice: [min(max(S2-1,0),1), S3, min(max(S4-1,0),99)]",
    ]
    assert _printed("strided_slice_negative") == [
        "pd_op.strided_slice: [S0, (min(S1,6)+1)//2]",
        "pd_op.strided_slice: [max(-max(S0-4,0)+min(S0,4),0), (max(-min(S1,1)+min(S1,6),0)+1)//2]",
        "pd_op.strided_slice: [S0, (S1+1)//2]",
    ]


def test_topk_argsort_and_arg_reduction_rules_print():
    assert _printed("op_topk") == [
        "pd_op.topk: [S0, 3]",
        "pd_op.topk: [S0, 3]",
        "pd_op.topk: [2, S1]",
        "pd_op.topk: [2, S1]",
        "pd_op.topk: [S2, 1, S4]",
        "pd_op.topk: [S2, 1, S4]",
        "pd_op.topk: [S2, 3, S4]",
        "pd_op.topk: [S2, 3, S4]",
        "pd_op.argsort: [S2, 3, S4]",
        "pd_op.argsort: [S2, 3, S4]",
    ]
    assert _printed("argmax_argmin") == [
        "pd_op.argmax: [S0, 1]",  # keepdims
        "pd_op.argmin: [S1]",
        "pd_op.argmax: []",  # flatten
        "pd_op.argmin: [S0, 1]",
    ]


def test_einsum_rule_prints_and_ties_repeated_labels():
    text = "\n".join(_printed("op_einsum"))
    assert "pd_op.einsum" in text
    program, _ = _dynamic(FIXTURES / "programs" / "op_einsum" / "program.pir")
    analysis = analyze_shapes(program)
    equal = [c for c in analysis.constraints if c.why.startswith("einsum's label")]
    assert equal and all(c.kind.value == "==" for c in equal)


def test_conv_interp_split_norm_and_swiglu_rules_print():
    conv = _printed("op_conv2d")
    assert conv[0] == "pd_op.conv2d: [S0, S4, S2-S6+3, S3-S7+3]"  # k S6, pad 1
    assert conv[3] == "pd_op.conv2d: [S0, S4, (S2-S6+1)//2+1, (S3-S7+3)//2+1]"  # strided
    assert conv[4] == "pd_op.conv2d: [S0, S4, (S2+1)//2, (S3+1)//2]"  # SAME, stride 2
    assert conv[-1] == "pd_op.conv2d: [S17, -S6+S18+3, -S7+S19+3, S4]"  # NHWC
    assert _printed("op_conv2d_transpose") == [
        "pd_op.conv2d_transpose: [S0, S5, S2*2+S6-3, S3*2+S7-3]",
        "pd_op.conv2d_transpose: [S0, S5, S2+S6-1, S3+S7-1]",
        "pd_op.conv2d_transpose: [S0, S9*2, S2*2+S10-2, S3*2+S11-2]",  # groups 2
        "pd_op.conv2d_transpose: [S0, S5, S2+S6*2-4, S3+S7*2-4]",  # dilation 2
        "pd_op.conv2d_transpose: [S0, S5, 6, 10]",  # output_size
    ]
    assert _printed("op_interp") == [
        "pd_op.bilinear_interp: [S0, S1, S2*2, S3*2]",  # scale 2
        "pd_op.bilinear_interp: [S0, S1, 7, 3]",
        "pd_op.bilinear_interp: [S0, S1, 9, 11]",
        "pd_op.bilinear_interp: [S4, 7, 5, S7]",  # NHWC
        "pd_op.nearest_interp: [S0, S1, S2*2, S3*2]",
        "pd_op.nearest_interp: [S0, S1, 3, 10]",
    ]
    assert _printed("split_family")[:2] == [
        "builtin.split: [S0, 1]",
        "builtin.split: [S0, S1-3]",  # the -1 section takes the rest
    ]
    assert _printed("op_group_instance_norm")[:3] + _printed("op_group_instance_norm")[6:8] == [
        "pd_op.group_norm: [S0, S1, S2, S3]",
        "pd_op.group_norm: [S0, 2]",
        "pd_op.group_norm: [S0, 2]",
        "pd_op.instance_norm: [S0, S1, S2, S3]",
        "pd_op.instance_norm: [S0*S1]",
    ]
    assert _printed("op_swiglu") == [
        "pd_op.swiglu: [S0, S1, S2//2]",  # halves of x
        "pd_op.swiglu: [S0, S1, S2]",  # with y: equal dims (S3 == S0, ...)
        "pd_op.swiglu: [S6, S7//2]",
    ]


def test_more_rules_print():
    printed = {
        name: _printed(name)
        for name in ("gather_axis", "op_index_select", "cumsum_axis", "tile_repeat", "op_one_hot")
    }
    assert any(line.startswith("pd_op.gather: [") for line in printed["gather_axis"])
    assert all("unknown" not in line for lines in printed.values() for line in lines)


def test_a_region_op_gives_fresh_symbols_and_nothing_crashes():
    program = load_model(HERE / "data" / "cond")
    analysis = analyze_shapes(program)
    assert _unknown(analysis) == ["unknown: from pd_op.if"]
    if_op = next(op for op in program.block if op.name == "pd_op.if")
    assert analysis.shape(if_op.result(0)) == (Sym(1), Const(4))
