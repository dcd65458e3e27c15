"""PIRCompiler end to end on cuda-emu: stages, the storage plan, instruction order,
scope pruning, timings, errors, and what CINN_PY_DUMP_DIR receives."""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py.backends import codegen_cuda
from cinn_py.backends.codegen_cuda import CudaSource
from cinn_py.driver import BuildScope
from cinn_py.driver.pir_compiler import (
    STAGES,
    PIRCompiler,
    numbered_clone,
    ordered_groups,
)
from cinn_py.errors import CompileError, ShapeError, UnsupportedOpError
from cinn_py.hlir.group import Group, GroupKind
from cinn_py.hlir.grouping import make_group
from cinn_py.hlir.naming import NameTable
from cinn_py.hlir.op_lowering import lower_group
from cinn_py.ir.printer import print_ir
from cinn_py.pir.builder import Builder
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program
from cinn_py.pir.passes import PassManager
from cinn_py.pir.printer import print_program
from cinn_py.pir.program import Program
from cinn_py.reference import run_reference
from cinn_py.runtime import Instruction
from cinn_py.tolerances import compare

# exp(x - rowmax(x)) * w, then a row sum: fusion puts it all in one group (the row
# max, the elementwise chain reading it at its own row, the sum), one kernel.
TEXT = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[8,16],stop_gradient:[true]} : () -> tensor<8x16xf32>
    (%1) = "builtin.parameter" () {parameter_name:"w",stop_gradient:[false]} : () -> tensor<16xf32>
    (%2) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[-1]} : () -> tensor<1xi64>
    (%3) = "pd_op.max" (%0, %2) {keepdim:true,stop_gradient:[true]} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8x1xf32>
    (%4) = "pd_op.subtract" (%0, %3) {stop_gradient:[true]} : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    (%5) = "pd_op.exp" (%4) {stop_gradient:[true]} : (tensor<8x16xf32>) -> tensor<8x16xf32>
    (%6) = "pd_op.multiply" (%5, %1) {stop_gradient:[true]} : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    (%7) = "pd_op.sum" (%6, %2) {dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<8x16xf32>, tensor<1xi64>) -> tensor<8xf32>
}
"""


def program_with_weights() -> Program:
    program = parse_program(TEXT)
    program.parameters["w"] = np.linspace(0.5, 2.0, 16, dtype=np.float32)
    return program


def x_feed() -> np.ndarray:
    return np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)


def test_build_runs_kernels_and_matches_the_reference():
    program = program_with_weights()
    before = print_program(program)
    scope = BuildScope("cuda-emu", program)
    runtime_program = PIRCompiler(program, "cuda-emu", scope).build()
    assert print_program(program) == before  # passes ran on a clone

    kinds = [(g.name, g.kind, [op.name for op in g.ops]) for g in runtime_program.groups]
    assert kinds == [
        (
            "group_0",
            GroupKind.FUSED,
            ["pd_op.max", "pd_op.subtract", "pd_op.exp", "pd_op.multiply", "pd_op.sum"],
        ),
    ]
    steps = runtime_program.instructions
    assert [type(s) for s in steps] == [Instruction]
    assert steps[0].name == "fn_group_0" and steps[0].args == ("var_0", "var_1", "var_7")
    assert steps[0].outputs == ("var_7",)
    # %3 .. %6 live only inside the kernel; the folded %2 is gone.
    assert scope.var_names() == ["var_0", "var_1", "var_7"]
    assert runtime_program.cuda_source.count("__global__") == 1
    assert "fn_group_0(" in runtime_program.cuda_source
    assert set(runtime_program.timings) == {*STAGES, "total"}

    x = x_feed()
    scope["var_0"].set(x)
    runtime_program.execute()
    (want,) = run_reference(program, {"x": x})
    assert compare(scope["var_7"].to_numpy(), want).ok


def test_build_with_given_groups_keeps_the_program_and_orders_the_groups():
    """The seed's shape: groups made by hand, given in any order."""
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.full", shape=[4, 8], value=0.5, dtype=DataType.FLOAT32)
    y = b.op("pd_op.exp", x)
    z = b.op("pd_op.relu", y)
    ops = list(program.block)
    groups = [
        make_group("late", ops[2:], program),
        make_group("early", ops[:2], program),
    ]
    assert [g.name for g in ordered_groups(program, groups)] == ["early", "late"]
    scope = BuildScope("cuda-emu", program)
    runtime_program = PIRCompiler(program, "cuda-emu", scope).build(groups)
    assert [s.group for s in runtime_program.instructions] == ["early", "late"]
    runtime_program.execute()
    names = NameTable(program)
    assert scope.var_names() == [names.buffer(y), names.buffer(z)]
    np.testing.assert_allclose(np.asarray(scope[names.buffer(z)]), np.exp(0.5), rtol=1e-6)


def test_ops_in_no_group_run_as_library_ops_in_dependency_order():
    program = parse_program(TEXT)
    ops = list(program.block)
    # Only the elementwise chain is grouped: the max before it and the sum after it are
    # in no group and become library steps, placed around the kernel.
    group = make_group("chain", ops[4:7], program)
    order = ordered_groups(program, [group])
    assert [(g.name, g.kind) for g in order] == [
        ("library_2", GroupKind.LIBRARY),
        ("library_3", GroupKind.LIBRARY),
        ("chain", GroupKind.FUSED),
        ("library_7", GroupKind.LIBRARY),
    ]


def test_numbered_clone_keeps_printed_numbers_through_dead_code_elimination():
    program = Program()
    b = Builder(program)
    dead = b.op("pd_op.full", shape=[2], value=1.0, dtype=DataType.FLOAT32)
    live = b.op("pd_op.full", shape=[2], value=2.0, dtype=DataType.FLOAT32)
    out = b.op("pd_op.exp", live)
    clone = numbered_clone(program, [out])
    PassManager.from_names(["fold_mutable_attributes", "dead_code_elimination"]).run(clone)
    assert [op.name for op in clone.block] == ["pd_op.full", "pd_op.exp"]
    assert [r.id_hint for op in clone.block for r in op.results] == [1, 2]
    assert NameTable(clone).buffer(clone.outputs()[0]) == NameTable(program).buffer(out) == "var_2"
    assert NameTable(program).buffer(dead) == "var_0"


def test_dynamic_programs_need_feed_shapes():
    text = TEXT.replace("shape:[8,16]", "shape:[-1,16]").replace("8x16", "-1x16")
    text = text.replace("8x1x", "-1x1x").replace("tensor<8xf32>", "tensor<-1xf32>")
    program = parse_program(text)
    program.parameters["w"] = np.ones(16, np.float32)
    with pytest.raises(ShapeError, match="its -1 dims need a feed shape to compile"):
        PIRCompiler(program, "cuda-emu").build()
    runtime_program = PIRCompiler(program, "cuda-emu", feed_shapes={"x": (3, 16)}).build()
    scope = runtime_program.scope
    assert scope["var_7"].shape == (3,)
    x = x_feed()[:3]
    scope["var_0"].set(x)
    runtime_program.execute()
    assert compare(scope["var_7"].to_numpy(), np.exp(x - x.max(1, keepdims=True)).sum(1)).ok


def test_stages_stop_where_asked_and_lowering_is_op_lowerings():
    program = program_with_weights()
    compiler = PIRCompiler(program, "cuda-emu")
    lowered = compiler.stages(until="lowered")
    assert [k.group.name for k in lowered.fused] == ["group_0"]
    assert lowered.source is None
    for kernel in lowered.fused:
        assert kernel.scheduled is None
        assert print_ir(kernel.lowered) == print_ir(lower_group(kernel.group, lowered.names))
    assert set(compiler.timings) == {"passes", "grouping", "lowering"}
    scheduled = compiler.stages(until="scheduled")
    assert scheduled.source is None
    assert "thread_bind" in print_ir(scheduled.fused[0].scheduled.func)
    with pytest.raises(ValueError, match="until must be one of"):
        compiler.stages(until="cubin")


def test_set_parameter_is_refused_on_compiled_targets():
    program = Program()
    b = Builder(program)
    x = b.op("pd_op.full", shape=[2], value=1.0, dtype=DataType.FLOAT32)
    b.op("builtin.set_parameter", b.op("pd_op.exp", x), parameter_name="w")
    with pytest.raises(UnsupportedOpError, match="builtin.set_parameter' runs on the reference"):
        PIRCompiler(program, "cuda-emu").build()


def test_compile_errors_name_the_group_and_are_dumped(monkeypatch, tmp_path):
    monkeypatch.setenv("CINN_PY_DUMP_DIR", str(tmp_path))

    def broken(funcs, unit_size=None, fast_math=False):
        return CudaSource('extern "C" __global__ void fn(float* a) { a[0] = oops; }\n', [])

    monkeypatch.setattr(codegen_cuda, "generate_cuda", broken)  # every target's renderer
    with pytest.raises(
        CompileError, match=r"^group_0 \(pd_op.max, .*, pd_op.sum\): g\+\+ rejected"
    ):
        PIRCompiler(program_with_weights(), "cuda-emu").build()
    (folder,) = tmp_path.iterdir()
    assert "'oops' was not declared" in (folder / "kernels.log").read_text()
    assert "'oops' was not declared" in (folder / "group_0.log").read_text()


STAGE_FILES = ("cu", "lowered.ir", "scheduled.ir", "trace.txt")


def test_dump_dir_gets_every_stage_of_every_compile(monkeypatch, tmp_path):
    monkeypatch.setenv("CINN_PY_DUMP_DIR", str(tmp_path / "dumps"))
    program = program_with_weights()
    program.source = "/somewhere/models/softmaxish.pir"
    first = PIRCompiler(program, "cuda-emu").build()
    PIRCompiler(program, "cuda-emu").build()
    folders = sorted(p.name for p in (tmp_path / "dumps").iterdir())
    assert folders == ["000_models_softmaxish", "001_models_softmaxish"]
    folder = tmp_path / "dumps" / folders[0]
    assert sorted(p.name for p in folder.iterdir()) == [
        "00_input.pir",
        "01_fold_mutable_attributes.pir",
        "02_fold_empty_tensors.pir",
        "03_fuse_gemm_epilogue.pir",
        "04_decompose_composites.pir",
        "05_constant_folding.pir",
        "06_common_subexpression_elimination.pir",
        "07_dead_code_elimination.pir",
        "08_specialize_shapes.pir",
        *[f"group_0.{kind}" for kind in STAGE_FILES],
        "groups.txt",
        "kernels.cu",
        "kernels.txt",
        "timings.txt",
    ]
    assert (folder / "00_input.pir").read_text() == TEXT
    assert "pd_op.full_int_array" not in (folder / "07_dead_code_elimination.pir").read_text()
    groups = (folder / "groups.txt").read_text()
    assert groups.startswith("group_0 (fused): inputs %0, %1; outputs %7\n")
    assert (folder / "kernels.cu").read_text().rstrip("\n") == first.cuda_source.rstrip("\n")
    group_0 = (folder / "group_0.cu").read_text()
    assert "fn_group_0(" in group_0 and group_0.count("__global__") == 1
    assert "cinn_block_reduce<" in group_0
    assert (folder / "group_0.lowered.ir").read_text().startswith("function fn_group_0 (")
    trace = (folder / "group_0.trace.txt").read_text()
    assert "factorize_reduction(block=var_3_tmp" in trace and "set_buffer(" in trace
    timings = (folder / "timings.txt").read_text().splitlines()
    assert [line.split()[0] for line in timings] == [*STAGES, "total"]


def test_no_dump_without_the_variable(monkeypatch, tmp_path):
    monkeypatch.delenv("CINN_PY_DUMP_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    PIRCompiler(program_with_weights(), "cuda-emu").stages(until="lowered")
    assert list(tmp_path.iterdir()) == []


def test_library_groups_may_hold_tensor_lists():
    """pd_op.split run as a library op writes one variable per element; builtin.split
    outside any group aliases them, and a kernel reads one."""
    program = parse_program("""{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,6],stop_gradient:[true]} : () -> tensor<4x6xf32>
    (%1) = "pd_op.split_with_num" (%0) {axis:1,num:2,stop_gradient:[true]} : (tensor<4x6xf32>) -> vec[tensor<4x3xf32>,tensor<4x3xf32>]
    (%2, %3) = "builtin.split" (%1) {} : (vec[tensor<4x3xf32>,tensor<4x3xf32>]) -> tensor<4x3xf32>, tensor<4x3xf32>
    (%4) = "pd_op.exp" (%3) {stop_gradient:[true]} : (tensor<4x3xf32>) -> tensor<4x3xf32>
}
""")
    split_group = Group("group_0", GroupKind.LIBRARY, [list(program.block)[1]])
    exp_group = make_group("group_1", [list(program.block)[3]], program)
    runtime_program = PIRCompiler(program, "cuda-emu").build([split_group, exp_group])
    scope = runtime_program.scope
    assert scope.var_names() == ["var_0", "var_1_0", "var_1_1", "var_4"]
    assert runtime_program.kernels[0].args == ("var_1_1", "var_4")
    x = x_feed()[:4, :6]
    scope["var_0"].set(x)
    runtime_program.execute()
    np.testing.assert_allclose(scope["var_4"].to_numpy(), np.exp(x[:, 3:]), rtol=1e-6)
