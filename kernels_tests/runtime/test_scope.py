"""Scope and Variable: allocation (aligned, contiguous, lazy), copies in and out, and
BuildScope's variables for a program."""

from __future__ import annotations

import numpy as np
import pytest

from cinn_py.driver import BuildScope
from cinn_py.errors import CinnError, FeedError, ShapeError
from cinn_py.pir.dtypes import DataType
from cinn_py.pir.parser import parse_program
from cinn_py.pir.types import DenseTensorType
from cinn_py.runtime import Scope
from cinn_py.targets.memory import HOST_ALIGNMENT, aligned_empty

SHAPES = [(), (0,), (1,), (3,), (7, 5), (2, 0, 3), (4, 33, 2)]
DTYPES = [np.float32, np.float16, np.float64, np.int8, np.int64, np.bool_, np.uint16]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_aligned_empty_is_aligned_and_contiguous(shape, dtype):
    for _ in range(4):  # several allocations: NumPy's own would often be misaligned by 16
        array = aligned_empty(shape, dtype)
        assert array.shape == shape and array.dtype == np.dtype(dtype)
        assert array.ctypes.data % HOST_ALIGNMENT == 0
        assert array.flags.c_contiguous and array.flags.writeable


def T(dtype: DataType, *dims: int) -> DenseTensorType:
    return DenseTensorType.get(dtype, dims)


def test_variable_allocates_on_first_use_in_its_storage_dtype():
    scope = Scope("cuda-emu")
    bf16 = scope.var("var_1", T(DataType.BFLOAT16, 2, 3))
    flag = scope.var("var_2", T(DataType.BOOL, 4))
    assert not bf16.allocated
    assert bf16.array.dtype == np.uint16 and bf16.array.shape == (2, 3)
    assert bf16.allocated and bf16.array is bf16.array
    assert flag.array.dtype == np.bool_ and flag.array.itemsize == 1
    assert scope.var_names() == ["var_1", "var_2"] and len(scope) == 2


def test_set_copies_into_the_aligned_buffer_and_checks_shape_and_dtype():
    variable = Scope("cuda-emu").var("var_0", T(DataType.FLOAT32, 2, 3))
    buffer = variable.array
    source = np.arange(7, dtype=np.float32)[1:].reshape(2, 3)  # misaligned by 4 bytes
    variable.set(source)
    assert variable.array is buffer and buffer.ctypes.data % HOST_ALIGNMENT == 0
    np.testing.assert_array_equal(buffer, source)
    out = variable.to_numpy()
    out[0, 0] = 99
    assert buffer[0, 0] == 1  # to_numpy is a copy
    np.testing.assert_array_equal(np.asarray(variable), source)
    with pytest.raises(FeedError, match=r"feed 'var_0': expected float32 \[2, 3\], got float64"):
        variable.set(np.zeros((2, 3)))
    with pytest.raises(FeedError, match=r"expected float32 \[2, 3\], got float32 \[3, 2\]"):
        variable.set(np.zeros((3, 2), np.float32))


def test_var_keeps_a_variable_of_the_same_type_and_replaces_another():
    scope = Scope("cuda-emu")
    first = scope.var("var_0", T(DataType.FLOAT32, 4))
    assert scope.var("var_0", T(DataType.FLOAT32, 4)) is first
    second = scope.var("var_0", T(DataType.FLOAT32, 5))
    assert second is not first and scope["var_0"] is second
    scope.var("var_1", T(DataType.INT32, 1))
    scope.keep_only(["var_1"])
    assert scope.var_names() == ["var_1"] and "var_0" not in scope
    with pytest.raises(CinnError, match="the scope has no variable 'var_0'"):
        scope["var_0"]


def test_dynamic_types_and_unknown_targets_are_refused():
    with pytest.raises(ShapeError, match=r"variable 'var_0' has the dynamic type tensor<-1x6xf32>"):
        Scope("cuda-emu").var("var_0", T(DataType.FLOAT32, -1, 6))
    with pytest.raises(CinnError, match="unknown runtime target 'reference'"):
        Scope("reference")


PROGRAM = """{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,6],stop_gradient:[true]} : () -> tensor<4x6xf32>
    (%1) = "builtin.parameter" () {parameter_name:"w",stop_gradient:[false]} : () -> tensor<6xf32>
    (%2) = "pd_op.multiply" (%0, %1) {stop_gradient:[true]} : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],value:[1]} : () -> tensor<1xi64>
    (%4) = "pd_op.sum" (%2, %3) {dtype:Undefined,keepdim:false,stop_gradient:[true]} : (tensor<4x6xf32>, tensor<1xi64>) -> tensor<4xf32>
}
"""


def test_build_scope_declares_every_tensor_value_and_fills_parameters():
    program = parse_program(PROGRAM)
    w = np.linspace(0, 1, 6, dtype=np.float32)
    program.parameters["w"] = w
    scope = BuildScope("cuda-emu", program)
    assert scope.var_names() == ["var_0", "var_1", "var_2", "var_3", "var_4"]
    assert scope["var_4"].type is T(DataType.FLOAT32, 4)
    assert scope["var_1"].allocated and not scope["var_0"].allocated
    np.testing.assert_array_equal(scope["var_1"].array, w)


def test_build_scope_checks_parameters_and_refuses_dynamic_shapes():
    program = parse_program(PROGRAM)
    program.parameters["w"] = np.zeros(5, np.float32)
    with pytest.raises(FeedError, match=r"feed 'w': expected float32 \[6\], got float32 \[5\]"):
        BuildScope("cuda-emu", program)
    dynamic = parse_program(PROGRAM.replace("shape:[4,6]", "shape:[-1,6]").replace("4x6", "-1x6"))
    with pytest.raises(ShapeError, match="'var_0' has the dynamic type"):
        BuildScope("cuda-emu", dynamic)


class _DeviceArray:
    """A stand-in for a CuPy array or torch tensor: shape and dtype, but no implicit host
    copy (CuPy's __array__ raises TypeError; an H200 run found adopt calling it)."""

    def __init__(self, shape: tuple, dtype: object) -> None:
        self.shape, self.dtype = shape, dtype

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed")


class _TorchDtype:
    def __str__(self) -> str:
        return "torch.float16"


def test_adopt_checks_a_device_array_without_copying_it_to_the_host():
    variable = Scope("cuda-emu").var("var_0", T(DataType.FLOAT32, 2, 3))
    with pytest.raises(FeedError, match=r"expected float32 \[2, 3\], got float16 \[2, 3\]"):
        variable.adopt(_DeviceArray((2, 3), np.dtype(np.float16)))
    with pytest.raises(FeedError, match=r"expected float32 \[2, 3\], got float16 \[2, 3\]"):
        variable.adopt(_DeviceArray((2, 3), _TorchDtype()))
    with pytest.raises(FeedError, match=r"got float32 \[3\]"):
        variable.adopt(_DeviceArray((3,), np.float32))
