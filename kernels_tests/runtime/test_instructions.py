"""Instructions over a Scope: hand-written kernels launched on cuda-emu, library ops run
by their reference kernels (Tensor[] and bfloat16 included), and a RuntimeProgram that
chains both."""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py.backends import cuda_emu
from cinn_py.errors import LaunchError
from cinn_py.pir.dtypes import DataType, bfloat16_to_float32, float32_to_bfloat16
from cinn_py.pir.parser import parse_program
from cinn_py.pir.types import DenseTensorType
from cinn_py.runtime import Instruction, LibraryInstruction, RuntimeProgram, Scope
from cinn_py.targets.library_call import HostLibraryCall

F32 = DataType.FLOAT32

# Kernels shaped like generated ones: static sizes, arrays only, 128-bit vector accesses
# (which need the Scope's 16-byte alignment on a GPU).
SOURCE = """
extern "C" __global__ void add_1000(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1000) c[i] = a[i] + b[i];
}

extern "C" __global__ void exp_rows(const float* __restrict__ x, float* __restrict__ y) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;  // one float4 per thread
    if (i < 6) {
        float4 v = reinterpret_cast<const float4*>(x)[i];
        v.x = expf(v.x); v.y = expf(v.y); v.z = expf(v.z); v.w = expf(v.w);
        reinterpret_cast<float4*>(y)[i] = v;
    }
}
"""


@pytest.fixture(scope="module")
def module() -> cuda_emu.EmuModule:
    return cuda_emu.compile(SOURCE)


def tensor(*dims: int, dtype: DataType = F32) -> DenseTensorType:
    return DenseTensorType.get(dtype, dims)


def test_instruction_launches_a_kernel_over_scope_variables(module):
    scope = Scope("cuda-emu")
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(1000).astype(np.float32) for _ in range(2))
    scope.var("var_0", tensor(1000)).set(a)
    scope.var("var_1", tensor(1000)).set(b)
    scope.var("var_2", tensor(1000))
    step = Instruction(
        "group_0", module, "add_1000", (4, 1, 1), (256, 1, 1), 0, ("var_0", "var_1", "var_2")
    )
    step.run(scope)
    np.testing.assert_array_equal(scope["var_2"].array, a + b)
    assert str(step) == "add_1000<<<(4, 1, 1), (256, 1, 1), 0>>>(var_0, var_1, var_2)"


def test_instruction_skips_a_launch_whose_outputs_are_all_empty(module):
    scope = Scope("cuda-emu")
    scope.var("var_0", tensor(0, 4))
    scope.var("var_1", tensor(0, 4))
    # A 0-sized grid is what an empty tensor's schedule gives; launching it would fail.
    step = Instruction("g", module, "exp_rows", (0, 1, 1), (32, 1, 1), 0, ("var_0", "var_1"))
    with pytest.raises(LaunchError):
        step.run(scope)
    step.outputs = ("var_1",)
    step.run(scope)


def test_library_instruction_runs_the_reference_kernel():
    program = parse_program("""{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,6],stop_gradient:[true]} : () -> tensor<4x6xf32>
    (%1) = "pd_op.sum" (%0, <<NULL VALUE>>) {axis:[1],dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<4x6xf32>, <<NULL TYPE>>) -> tensor<4xf32>
}
""")
    op = list(program.block)[1]
    scope = Scope("cuda-emu")
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    scope.var("var_0", tensor(4, 6)).set(x)
    scope.var("var_1", tensor(4))
    LibraryInstruction("group_1", op, ["var_0", None], ["var_1"], HostLibraryCall(op)).run(scope)
    np.testing.assert_array_equal(scope["var_1"].array, x.sum(axis=1))


def test_library_instruction_reads_and_writes_tensor_lists_and_bfloat16():
    program = parse_program("""{
    (%0) = "pd_op.data" () {dtype:bfloat16,name:"x",place:Place(undefined:0),shape:[4,6],stop_gradient:[true]} : () -> tensor<4x6xbf16>
    (%1) = "pd_op.data" () {dtype:bfloat16,name:"y",place:Place(undefined:0),shape:[4,2],stop_gradient:[true]} : () -> tensor<4x2xbf16>
    (%2) = "builtin.combine" (%0, %1) {} : (tensor<4x6xbf16>, tensor<4x2xbf16>) -> vec[tensor<4x6xbf16>,tensor<4x2xbf16>]
    (%3) = "pd_op.concat" (%2) {axis:1,stop_gradient:[true]} : (vec[tensor<4x6xbf16>,tensor<4x2xbf16>]) -> tensor<4x8xbf16>
    (%4) = "pd_op.split_with_num" (%3) {axis:0,num:2,stop_gradient:[true]} : (tensor<4x8xbf16>) -> vec[tensor<2x8xbf16>,tensor<2x8xbf16>]
    (%5) = "pd_op.sum" (%3, <<NULL VALUE>>) {axis:[],dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<4x8xbf16>, <<NULL TYPE>>) -> tensor<bf16>
}
""")
    ops = list(program.block)
    bf16 = DataType.BFLOAT16
    scope = Scope("cuda-emu")
    x = float32_to_bfloat16(np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6))
    y = float32_to_bfloat16(np.full((4, 2), 0.5, np.float32))
    scope.var("var_0", tensor(4, 6, dtype=bf16)).set(x)
    scope.var("var_1", tensor(4, 2, dtype=bf16)).set(y)
    for name, dims in [("var_3", (4, 8)), ("var_4_0", (2, 8)), ("var_4_1", (2, 8))]:
        scope.var(name, tensor(*dims, dtype=bf16))
    concat = LibraryInstruction(
        "group_0", ops[3], [["var_0", "var_1"]], ["var_3"], HostLibraryCall(ops[3])
    )
    split = LibraryInstruction(
        "group_1", ops[4], ["var_3"], [["var_4_0", "var_4_1"]], HostLibraryCall(ops[4])
    )
    scope.var("var_5", tensor(dtype=bf16))
    total = LibraryInstruction(
        "group_2", ops[5], ["var_3", None], ["var_5"], HostLibraryCall(ops[5])
    )
    RuntimeProgram([concat, split, total], Scope("cuda-emu")).execute(scope)
    joined = np.concatenate([x, y], axis=1)
    assert scope["var_3"].array.dtype == np.uint16
    np.testing.assert_array_equal(scope["var_3"].array, joined)
    np.testing.assert_array_equal(scope["var_4_0"].array, joined[:2])
    np.testing.assert_array_equal(bfloat16_to_float32(scope["var_4_1"].array)[:, 6:], 0.5)
    assert scope["var_5"].array.shape == ()
    assert bfloat16_to_float32(scope["var_5"].array) == 4.0  # the linspace cancels: 8 * 0.5


def test_runtime_program_chains_kernels_and_library_ops_in_order(module):
    program = parse_program("""{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,6],stop_gradient:[true]} : () -> tensor<4x6xf32>
    (%1) = "pd_op.exp" (%0) {stop_gradient:[true]} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    (%2) = "pd_op.max" (%1, <<NULL VALUE>>) {axis:[-1],keepdim:true,stop_gradient:[true]} : (tensor<4x6xf32>, <<NULL TYPE>>) -> tensor<4x1xf32>
}
""")
    scope = Scope("cuda-emu")
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    scope.var("var_0", tensor(4, 6)).set(x)
    scope.var("var_1", tensor(4, 6))
    scope.var("var_2", tensor(4, 1))
    steps = [
        Instruction("group_0", module, "exp_rows", (1, 1, 1), (32, 1, 1), 0, ("var_0", "var_1")),
        LibraryInstruction(
            "group_1",
            list(program.block)[2],
            ["var_1", None],
            ["var_2"],
            HostLibraryCall(list(program.block)[2]),
        ),
    ]
    runtime_program = RuntimeProgram(steps, scope)
    runtime_program.execute()
    np.testing.assert_allclose(scope["var_2"].array, np.exp(x).max(-1, keepdims=True), rtol=1e-6)
    assert runtime_program.kernels == steps[:1]
    profile = runtime_program.profile()
    assert [name for name, _ in profile] == [str(steps[0]), "library pd_op.max (group_1)"]
    assert all(seconds >= 0 for _, seconds in profile)
