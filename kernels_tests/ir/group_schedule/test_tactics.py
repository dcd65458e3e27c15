"""The auto-scheduler's tactics (`tactics.py`): their order, why each refuses what it
refuses, the tactic each kind of group gets (recorded in the result and shown by the
dumps), the knobs each exposes, a one-rule list, and fusion asking the row tactic
(`row_schedule_fits`) with the numbers of a `TargetInfo`."""

from __future__ import annotations

from dataclasses import replace

import pytest
from reduction_programs import lowered, reduction

from cinn_py.cli import main
from cinn_py.driver.pir_compiler import PIRCompiler
from cinn_py.errors import ScheduleError
from cinn_py.hlir.grouping import group_program, is_reduction, splits_long_rows
from cinn_py.ir.group_schedule import TACTICS, RowPattern, TargetInfo, auto_schedule
from cinn_py.ir.group_schedule.column_schedule import ColumnLaunch
from cinn_py.ir.group_schedule.launch_config import GridLaunch, LaunchConfig
from cinn_py.ir.group_schedule.tactics import (
    NO_PATTERN,
    READS_BACK,
    ColumnTactic,
    FlatTactic,
    GridTactic,
    RowTactic,
    TileTactic,
    row_schedule_fits,
)
from cinn_py.ir.visitor import structural_equal
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.passes import PassManager
from cinn_py.pir.program import Program

CUDA, EMU = TargetInfo.cuda(), TargetInfo.cuda_emu()
F32, F16 = DataType.FLOAT32, DataType.FLOAT16


def _program(build, shape, dtype=F32) -> Program:
    program = Program()
    b = Builder(program)
    build(b, b.op("pd_op.data", name="x", shape=list(shape), dtype=dtype))
    return program


def softmax(shape, dtype=F32) -> Program:
    return _program(lambda b, x: b.op("pd_op.softmax", x, axis=-1), shape, dtype)


def transpose(shape) -> Program:
    return _program(lambda b, x: b.op("pd_op.relu", b.op("pd_op.transpose", x, perm=[1, 0])), shape)


def elementwise(shape) -> Program:
    return _program(lambda b, x: b.op("pd_op.relu", b.op("pd_op.exp", x)), shape)


def test_the_order_is_one_list():
    assert [tactic.name for tactic in TACTICS] == ["grid", "column", "row", "tile", "flat"]
    kinds = [GridTactic, ColumnTactic, RowTactic, TileTactic, FlatTactic]
    assert [type(tactic) for tactic in TACTICS] == kinds


# ---- which tactic each group gets, recorded in the result ----------------------------------

CASES = {
    # name: (program, target, the tactic, the launch's type)
    "softmax rows": (softmax((64, 300)), CUDA, "row", LaunchConfig),
    "reduce-all": (reduction((1024, 1024), (0, 1)), CUDA, "grid", GridLaunch),
    "column sum": (reduction((300, 40), (0,)), EMU, "column", ColumnLaunch),
    "transpose": (transpose((100, 70)), CUDA, "tile", LaunchConfig),
    "elementwise": (elementwise((64, 128)), CUDA, "flat", LaunchConfig),
    "short rows": (reduction((8, 20), (1,)), CUDA, "flat", LaunchConfig),  # serial reduce
}


@pytest.fixture(scope="module")
def functions():
    return {name: lowered(program) for name, (program, *_) in CASES.items()}


@pytest.mark.parametrize("name", CASES)
def test_auto_schedule_records_the_tactic(functions, name):
    _, target, tactic, launch = CASES[name]
    func, pattern = functions[name]
    result = auto_schedule(func, target, pattern)
    assert result.tactic == tactic and type(result.launch) is launch
    chosen = next(t for t in TACTICS if t.name == tactic)
    assert chosen.accepts(func, target, pattern) is None
    before = TACTICS[: TACTICS.index(chosen)]
    assert all(t.accepts(func, target, pattern) is not None for t in before)
    assert all(t.apply(func, target, pattern) is None for t in before)


@pytest.mark.parametrize("name", CASES)
def test_knobs_are_what_the_schedule_decided(functions, name):
    _, target, tactic, _ = CASES[name]
    func, pattern = functions[name]
    chosen = next(t for t in TACTICS if t.name == tactic)
    knobs = chosen.knobs(func, target, pattern)
    launch = auto_schedule(func, target, pattern).launch
    if tactic == "row":  # 300 float32: 4 lanes, 75 vectors -> a warp a row, 8 a block
        assert knobs == {
            "threads_per_row": 32,
            "rows_per_block": 8,
            "blocks_per_sm": 0,
            "prefetch": 0,
            "stream": 0,
            "lanes": 4,
        }
        assert (launch.threads, launch.blocks) == (32 * 8, 64 // 8)
    elif tactic == "grid":
        assert knobs == {
            "threads": launch.threads,
            "chunks": launch.chunks,
            "steps": launch.steps,
            "lanes": launch.lanes,
        }
        assert knobs["chunks"] >= 2 and knobs["lanes"] == 4
    elif tactic == "column":
        assert knobs == {
            "threads_x": launch.threads,
            "threads_y": launch.threads_y,
            "lanes": launch.lanes,
        }
    elif tactic == "tile":
        assert knobs == {"tile": 32, "tile_rows": 8, "pad": 1, "lanes": 1}
        assert launch.threads == knobs["tile"] * knobs["tile_rows"]
    else:
        assert {k: knobs[k] for k in ("threads", "blocks", "steps")} == {
            "threads": launch.threads,
            "blocks": launch.blocks,
            "steps": launch.steps,
        }
        assert knobs["lanes"] == (1 if name == "short rows" else 4)


# ---- why not ----------------------------------------------------------------------------------


def test_each_tactic_says_why_not(functions):
    softmax_rows, rows = functions["softmax rows"]
    column, columns = functions["column sum"]
    short, short_rows = functions["short rows"]
    flat, _ = functions["elementwise"]
    grid, row, col, tile = GridTactic(), RowTactic(), ColumnTactic(), TileTactic()

    assert grid.accepts(column, EMU, columns) == "the reduced dims are not innermost"
    assert grid.accepts(softmax_rows, CUDA, rows) == (
        "one block per row is enough: 64 rows of 300 elements give no plan of 2 chunks "
        "or more a row"
    )
    assert grid.accepts(flat, CUDA) == NO_PATTERN
    assert col.accepts(softmax_rows, CUDA, rows).startswith("not a column pattern: ")
    wide, wide_columns = lowered(reduction((300, 4096), (0,)))
    assert col.accepts(wide, EMU, wide_columns) == (
        "one thread per output is enough (threadIdx.y would be 1: a short reduction, or "
        "outputs enough to fill the target)"
    )
    assert row.accepts(short, CUDA, short_rows) == "rows of 20 elements, under 64: one thread a row"
    assert row.accepts(column, EMU, columns) == (
        "the reduced dims are not innermost, and nothing reads a reduction back"
    )
    assert tile.accepts(flat, CUDA) == (
        "no input is read transposed (its innermost index walking another output dim)"
    )
    assert tile.accepts(softmax_rows, CUDA, rows).endswith(
        "blocks: the tile schedule takes a group of one"
    )
    narrow, _ = lowered(transpose((100, 20)))
    assert tile.accepts(narrow, CUDA) == (
        "the transposed dims (20 and 100) are not both a tile (32) long"
    )
    assert FlatTactic().accepts(softmax_rows, CUDA) == READS_BACK
    assert FlatTactic().accepts(softmax_rows, CUDA, rows) == READS_BACK


def test_softmax_over_everything_is_refused_by_the_grid_for_its_read_back():
    func, pattern = lowered(softmax((20000,)))
    why = GridTactic().accepts(func, EMU, pattern)
    assert "reads the reduction" in why and "grid-wide barrier" in why
    assert auto_schedule(func, EMU, pattern).tactic == "row"


def test_no_tactic_applies_lists_every_refusal(functions):
    func, _ = functions["softmax rows"]
    with pytest.raises(ScheduleError) as caught:
        auto_schedule(func, CUDA)  # no pattern: only the row tactic could take it
    message = str(caught.value)
    assert message.startswith(f"auto_schedule on block '{func.name}': no tactic applies (")
    assert f"grid: {NO_PATTERN}; column: {NO_PATTERN}; row: {NO_PATTERN}; tile: " in message
    assert message.endswith(f"; flat: {READS_BACK})")


def test_a_one_rule_list(functions):
    """The list is the policy: a test, or a tuner, may pass its own."""
    func, pattern = functions["softmax rows"]
    only_row = auto_schedule(func, CUDA, pattern, tactics=[RowTactic()])
    assert only_row.tactic == "row"
    short, short_rows = functions["short rows"]
    serial = auto_schedule(short, CUDA, short_rows, tactics=[FlatTactic()])
    assert serial.tactic == "flat"
    assert structural_equal(serial.func, auto_schedule(short, CUDA, short_rows).func)
    flat, _ = functions["elementwise"]
    with pytest.raises(ScheduleError, match=r"no tactic applies \(row: no reduce pattern"):
        auto_schedule(flat, CUDA, tactics=[RowTactic()])


# ---- fusion asks the row tactic, with the target's numbers --------------------------------


def test_row_schedule_fits_with_the_target_numbers():
    assert (CUDA.few_rows, CUDA.long_row_bytes) == (64, 128 * 1024)
    assert (EMU.few_rows, EMU.long_row_bytes) == (64, 128 * 1024)  # groups as the GPU's
    few_long = RowPattern((4, 40000), (1,))
    assert not row_schedule_fits(few_long, 4, CUDA)  # 160000 bytes a row, 4 rows
    assert row_schedule_fits(few_long, 2, CUDA)  # float16: 80000 bytes fit the cache
    assert row_schedule_fits(RowPattern((64, 40000), (1,)), 4, CUDA)  # enough rows
    assert row_schedule_fits(few_long, 4, replace(CUDA, few_rows=4))
    assert row_schedule_fits(few_long, 4, replace(CUDA, row_cache_bytes=256))  # 256 KiB rows


def _groups(program: Program, target: TargetInfo | None = None) -> list[list[str]]:
    groups = group_program(program, target=target)
    return [[op.name.removeprefix("pd_op.") for op in g.ops] for g in groups]


def test_the_long_row_split_is_unchanged_and_asks_the_target():
    program = softmax((4, 40000))
    PassManager().run(program)
    three = [
        ["max"],
        ["subtract", "full", "maximum", "exp", "full", "sum", "divide"],
        ["subtract", "full", "maximum", "exp", "multiply"],
    ]
    assert _groups(program) == three  # the default: TargetInfo.cuda()
    assert _groups(program, CUDA) == three and _groups(program, EMU) == three
    assert len(_groups(program, replace(CUDA, few_rows=4))) == 1  # 4 rows are not few
    assert len(_groups(program, replace(CUDA, row_cache_bytes=256))) == 1  # the row fits
    reductions = [op for op in program.block if is_reduction(op)]
    assert splits_long_rows(reductions[0], program.block)
    assert not splits_long_rows(reductions[0], program.block, replace(CUDA, few_rows=4))


def test_the_compiler_hands_its_target_to_grouping(monkeypatch):
    program = softmax((4, 40000))
    assert len(PIRCompiler(program, "cuda-emu").stages(until="grouping").groups) == 3
    monkeypatch.setattr(PIRCompiler, "target_info", lambda self: replace(EMU, few_rows=4))
    assert len(PIRCompiler(program, "cuda-emu").stages(until="grouping").groups) == 1


# ---- the dumps show it --------------------------------------------------------------------------


def test_the_dump_and_the_cli_show_the_tactic(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("CINN_PY_DUMP_DIR", str(tmp_path / "dumps"))
    PIRCompiler(softmax((64, 300)), "cuda-emu").stages(until="scheduled")
    (folder,) = (tmp_path / "dumps").iterdir()
    trace = (folder / "group_0.trace.txt").read_text().splitlines()
    assert trace[0] == "tactic: row" and trace[1].startswith("fuse(")
    monkeypatch.delenv("CINN_PY_DUMP_DIR")
    path = tmp_path / "transpose.pir"
    program = transpose((64, 96))
    path.write_text(str(program))
    assert main(["ir", str(path), "--stage", "scheduled", "--target", "cuda-emu"]) == 0
    out = capsys.readouterr().out
    assert "\n// tactic: tile\n// launch fn_group_0: grid (6, 1, 1)" in out
    assert main(["dump-cuda", str(path), "--target", "cuda-emu"]) == 0
    out = capsys.readouterr().out
    assert "\n// tactic: tile\n// launch fn_group_0: grid (6, 1, 1)" in out
    assert main(["ir", str(path), "--stage", "lowered", "--target", "cuda-emu"]) == 0
    assert "tactic" not in capsys.readouterr().out  # nothing is scheduled yet
