"""The NumPy reference executor: the oracle every compiled target is compared with.

It runs the program's top block op by op, each op by a small kernel with Paddle
3.3.1's semantics (`cinn_py/reference_ops/`, one module per category), and checks each
result against the type the program declares, so a kernel that disagrees with Paddle's
shape inference fails at that op, not at some later comparison.

Values cross the API as NumPy arrays of their dtype; bfloat16 as uint16 bit patterns
(what Paddle's `.numpy()` gives and model.pdiparams stores). Inside, float16 and
bfloat16 ops compute in float32 and round each result to their dtype.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cinn_py.errors import CinnError, ShapeError, UnsupportedOpError, VerifyError
from cinn_py.pir.op_def import lookup_op_def, registered_op_names
from cinn_py.pir.operation import Operation
from cinn_py.pir.printer import print_type
from cinn_py.pir.program import Program
from cinn_py.pir.types import DenseTensorType, Type, VectorType, is_null
from cinn_py.pir.value import Value
from cinn_py.reference_ops import Kernel, KernelContext, Runtime
from cinn_py.reference_ops.context import RuntimeValue, shape_fits, to_boundary, to_dtype


def run_reference(
    program: Program,
    feeds: Mapping[str, np.ndarray],
    params: Mapping[str, np.ndarray] | None = None,
    fetch: Sequence[Value] | None = None,
    *,
    check_shapes: bool = True,
) -> list[np.ndarray]:
    """Run `program` with `feeds` (by `pd_op.data` name) and `params` (by parameter name;
    the program's own where not given). Returns the values of `fetch`, by default the
    program's outputs (`Program.outputs`). A fetched Tensor[] value comes back as a list.
    See `ReferenceExecutor` for `check_shapes`."""
    return ReferenceExecutor(program, check_shapes=check_shapes).run(feeds, params, fetch)


class ReferenceExecutor:
    """A program with a kernel chosen for every op up front, so an unsupported op fails
    before anything runs; `run` may then be called any number of times.

    `check_shapes=False` lets results keep shapes that disagree with the declared types.
    Paddle itself sometimes declares wrong ones: 3.3.1's matmul infer-meta gives
    [2,1,3,6] for [2,1,3,4] @ [5,4,6], whose kernel computes [2,5,3,6].
    """

    def __init__(self, program: Program, *, check_shapes: bool = True) -> None:
        self.program = program
        self.check_shapes = check_shapes
        self._steps = [(op, kernel_for(op)) for op in program.block]

    def run(
        self,
        feeds: Mapping[str, np.ndarray],
        params: Mapping[str, np.ndarray] | None = None,
        fetch: Sequence[Value] | None = None,
    ) -> list[np.ndarray]:
        targets = list(fetch) if fetch is not None else self.program.outputs()
        runtime = Runtime(feeds, params or {}, self.program.parameters)
        values: dict[int, RuntimeValue] = {}
        for op, kernel in self._steps:
            operands = [_lookup(values, v, op) for v in op.operand_values()]
            results = _run_op(op, kernel, operands, runtime, self.check_shapes)
            for result, value in zip(op.results, results, strict=True):
                values[id(result)] = value
        return [_fetched(values, value) for value in targets]


def run_op(
    op: Operation, operands: Sequence[RuntimeValue | None], *, check_shapes: bool = True
) -> list[RuntimeValue]:
    """Run one op alone by its reference kernel: operands and results as the executor
    holds them (bfloat16 as float32 values, Tensor[] as lists), results in their declared
    dtypes. The compiled targets run the ops they have no kernel for with it. Ops that
    read the run's feeds or parameters (data, parameter) are not for this."""
    return _run_op(op, kernel_for(op), list(operands), Runtime({}, {}, {}), check_shapes)


def kernel_for(op: Operation) -> Kernel:
    """The reference kernel of `op`: the first thing every target needs of an op (the
    compiled ones run what they cannot generate by it), so the one place an op name
    cinn_py does not know is refused, with the nearest known names."""
    op_def = lookup_op_def(op.name)
    if op_def is None:
        raise UnsupportedOpError(op.name, op.where(), _unknown_op(op.name))
    if op_def.kernel is None:
        raise UnsupportedOpError(op.name, op.where(), "has no reference kernel")
    return op_def.kernel


def _unknown_op(name: str) -> str:
    """`is not an op cinn_py knows; did you mean 'pd_op.relu'?`: the declared op whose
    name after the dialect is closest, when one is close (same dialect first)."""
    dialect, _, base = name.rpartition(".")
    known: dict[str, str] = {}
    for full in sorted(registered_op_names(), key=lambda n: not n.startswith(dialect + ".")):
        known.setdefault(full.rpartition(".")[2], full)
    close = difflib.get_close_matches(base, list(known), n=1, cutoff=0.75)
    if not close:
        return "is not an op cinn_py knows"
    return f"is not an op cinn_py knows; did you mean '{known[close[0]]}'?"


def _lookup(values: dict[int, RuntimeValue], value: Value | None, op: Operation) -> Any:
    if value is None:
        return None
    try:
        return values[id(value)]
    except KeyError:
        raise VerifyError(
            op.name, "uses a value the top block has not computed", where=op.where()
        ) from None


def _run_op(
    op: Operation, kernel: Kernel, operands: list[Any], runtime: Runtime, check_shapes: bool
) -> list[Any]:
    """Runs one kernel and brings its results to their declared types. NumPy's own
    complaints name the op: shape and index ones become ShapeErrors, a dtype it has no
    loop for (subtracting bools) an UnsupportedOpError."""
    try:
        out = kernel(KernelContext(op, operands, runtime))
    except (ValueError, IndexError) as error:
        raise ShapeError(f"{op.name} ({op.where()}): {error}") from error
    except TypeError as error:
        raise UnsupportedOpError(
            op.name, op.where(), f"fails on these operands: {error}"
        ) from error
    if op.num_results == 0:
        return []
    results = [out] if op.num_results == 1 else list(out)
    if len(results) != op.num_results:
        raise ShapeError(
            f"{op.name} ({op.where()}): made {len(results)} results, "
            f"the program declares {op.num_results}"
        )
    return [
        _conform(op, i, value, result.type, check_shapes)
        for i, (value, result) in enumerate(zip(results, op.results, strict=True))
    ]


def _conform(
    op: Operation, index: int, value: Any, type_: Type, check_shapes: bool
) -> RuntimeValue:
    """A kernel's result in the declared dtype, its shape checked (-1 matches any size).
    A result typed <<NULL TYPE>> holds nothing (its kernel gives None)."""
    if is_null(type_):
        return None
    if isinstance(type_, VectorType):
        if not isinstance(value, list) or len(value) != len(type_.types):
            raise ShapeError(
                f"{op.name} ({op.where()}): result #{index} should be a vector "
                f"of {len(type_.types)} tensors"
            )
        return [
            _conform(op, index, item, item_type, check_shapes)
            for item, item_type in zip(value, type_.types, strict=True)
        ]
    if not isinstance(type_, DenseTensorType):
        raise UnsupportedOpError(op.name, op.where(), f"has a result of type {type_!r}")
    array = to_dtype(value, type_.data_type)
    if check_shapes and not shape_fits(array.shape, type_):
        raise ShapeError(
            f"{op.name} ({op.where()}): result #{index} has shape "
            f"{list(array.shape)}, the program declares {print_type(type_)}"
        )
    return array


def _fetched(values: dict[int, RuntimeValue], value: Value) -> Any:
    if id(value) not in values:
        raise CinnError(f"cannot fetch {value!r}: the top block does not compute it")
    return _to_boundary(values[id(value)], value.type)


def _to_boundary(value: RuntimeValue, type_: Type) -> Any:
    """A copy (results never alias feeds or each other), bfloat16 as bit patterns."""
    if isinstance(type_, VectorType):
        return [
            _to_boundary(item, item_type)
            for item, item_type in zip(value, type_.types, strict=True)
        ]
    return np.array(to_boundary(value, type_.data_type))
