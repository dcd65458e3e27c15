"""Specialise a program to concrete shapes: every -1 dim resolved, every type re-inferred.

Kernels are generated for static shapes, so before lowering the compiler gives each
`pd_op.data` the shape of its feed and re-runs every op's `infer_meta` in program order.
Re-inferring also repairs the result types Paddle itself declares wrongly: where an op
declares `computed_meta` (matmul's batch broadcasting) that is what is inferred, so
types say what the kernels compute.

Shapes the program computes (`x.shape[0]`, `paddle.shape(x)`: a `shape64`, sliced to
0-D values, stacked into the shape of an expand, reshape, full_with_tensor or arange)
are evaluated here, in program order, once the shapes they read are static: an op
with `Trait.SHAPE_ONLY` on a static input, then every op reading such a value whose
other operands are constants (`slice`, `stack`, `cast`, `scale`, arithmetic, ...), is
run by its reference kernel and replaced by the constant producer that makes its value
(`pd_op.full_int_array` for an integer vector, `pd_op.full` for a uniform value, as
`constant_folding.replace_by_constant` builds them). The consumers then infer concrete
types from it and have those operands folded into attributes (`fold_mutable_attributes`),
so the rest compiles as a static program. Only small results are evaluated (at most
`MAX_EVALUATED` elements; integers, or single floats such as arange's bounds): never a
data tensor.

A result whose shape depends on the *values* of feeds (an arange whose bounds are fed)
cannot be specialised from shapes: `specialize_shapes` raises `DataDependentShape`
naming the op and the small feeds it reads, and a caller that has those feeds' values
(`CompiledProgram`) compiles once per value with `feed_values`, which turns those
`pd_op.data` ops into the constants they hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from cinn_py.errors import FeedError, ShapeError
from cinn_py.pir.attributes import IntArrayAttribute
from cinn_py.pir.constant import constant_of
from cinn_py.pir.op_def import InferContext
from cinn_py.pir.operation import Operation
from cinn_py.pir.passes.constant_folding import replace_by_constant
from cinn_py.pir.passes.fold_mutable_attributes import fold_op
from cinn_py.pir.printer import print_type
from cinn_py.pir.program import Program
from cinn_py.pir.traits import Trait
from cinn_py.pir.types import DYNAMIC, DenseTensorType, Type
from cinn_py.pir.value import Value
from cinn_py.reference import run_op

MAX_EVALUATED = 64
"""The most elements a computed shape value may have to be evaluated at compile time."""


class DataDependentShape(ShapeError):
    """A result's shape depends on the values of `feeds` (small feeds the op reads), not
    only on the feeds' shapes."""

    def __init__(self, message: str, feeds: Sequence[str]) -> None:
        super().__init__(message)
        self.feeds = tuple(feeds)


def specialize_shapes(
    program: Program,
    feed_shapes: Mapping[str, Sequence[int]] | None = None,
    feed_values: Mapping[str, np.ndarray] | None = None,
    origins: dict[int, Value] | None = None,
) -> Program:
    """A clone of `program` with the feeds' shapes (by `pd_op.data` name) and every result
    type inferred from them; the feeds of `feed_values` become constants holding those
    values. A feed shape that contradicts a declared static dim raises FeedError; a dim
    still unknown afterwards (a data op with -1 dims and no shape given) raises
    ShapeError, and a used result whose shape depends on feed values raises
    DataDependentShape.

    `origins`, when given, gets the value of `program` each result of the clone copies
    (by id of the clone's value), before anything is specialised: what lowering needs to
    find a specialised value's symbolic dims (`hlir.symbolic_dims`)."""
    shapes = dict(feed_shapes or {})
    values = dict(feed_values or {})
    copy = program.clone()
    if origins is not None:
        for old, new in zip(program.block, copy.block, strict=True):
            for old_result, new_result in zip(old.results, new.results, strict=True):
                origins[id(new_result)] = old_result
    evaluated: dict[int, np.ndarray] = {}
    """Constants made by evaluation here, by id of their value."""
    for op in list(copy.block):
        if op.name == "pd_op.data":
            _specialize_data(op, shapes)
            name = op.attr("name")
            if name in values:
                array = np.asarray(values[name])
                constant = replace_by_constant(copy, op, array)
                if constant is not None:
                    evaluated[id(constant.result())] = array
            continue
        op_def = op.op_def
        if op_def is None or op_def.infer_meta is None or op_def.has_trait(Trait.EXPLICIT_TYPE):
            continue
        infer = op_def.computed_meta or op_def.infer_meta
        types = infer(InferContext.of(op))
        for result, type_ in zip(op.results, types, strict=True):
            result.type = type_
        if _reads(op, evaluated):
            _evaluate(copy, op, evaluated) or fold_op(op)
        elif op_def.has_trait(Trait.SHAPE_ONLY):
            _evaluate(copy, op, evaluated)
    _check_value_dependent(copy)
    return copy


def _check_value_dependent(program: Program) -> None:
    """Raise DataDependentShape for the first used result still of unknown shape whose op
    reads small feeds (whose values may decide it)."""
    outputs = {id(value) for value in program.outputs()}
    for op in program.block:
        unknown = [r for r in op.results if _is_dynamic(r.type) and (r.uses or id(r) in outputs)]
        if not unknown or op.name == "pd_op.data":
            continue
        feeds = _small_feeds_read(op)
        if feeds:
            names = ", ".join(f"'{name}'" for name in feeds)
            raise DataDependentShape(
                f"{op.name} ({op.where()}): its result {print_type(unknown[0].type)} has a "
                f"shape that depends on the values of feeds {names}, not only on their shapes",
                feeds,
            )


def _small_feeds_read(op: Operation) -> list[str]:
    """Names of the static feeds of at most MAX_EVALUATED elements that `op` reads,
    directly or through other ops."""
    found: set[str] = set()
    seen: set[int] = set()
    stack = [v for v in op.operand_values() if v is not None]
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        producer = value.defining_op
        if producer is None:
            continue
        if producer.name == "pd_op.data":
            type_ = value.type
            if isinstance(type_, DenseTensorType) and DYNAMIC not in type_.dims:
                if int(np.prod(type_.dims, dtype=np.int64)) <= MAX_EVALUATED:
                    found.add(producer.attr("name"))
            continue
        stack.extend(v for v in producer.operand_values() if v is not None)
    return sorted(found)


def _reads(op: Operation, evaluated: dict[int, np.ndarray]) -> bool:
    """Whether an operand of `op` (or an item of a combine it reads) was evaluated."""
    for value in op.operand_values():
        if value is None:
            continue
        if id(value) in evaluated:
            return True
        producer = value.defining_op
        if producer is not None and producer.name == "builtin.combine":
            if any(v is not None and id(v) in evaluated for v in producer.operand_values()):
                return True
    return False


def _evaluate(program: Program, op: Operation, evaluated: dict[int, np.ndarray]) -> bool:
    """Run `op` by its reference kernel and replace it by the constant it makes, if it
    is small and every operand it reads is known; True if it was replaced."""
    op_def = op.op_def
    if op_def.kernel is None or op.regions or op.num_results != 1:
        return False
    if any(op_def.has_trait(t) for t in (Trait.RANDOM, Trait.SIDE_EFFECT, Trait.GLUE)):
        return False
    type_ = op.result().type
    if not isinstance(type_, DenseTensorType) or DYNAMIC in type_.dims:
        return False
    size = int(np.prod(type_.dims, dtype=np.int64))
    if size > MAX_EVALUATED or not (type_.data_type.is_integer or size <= 1):
        return False
    shape_only = op_def.has_trait(Trait.SHAPE_ONLY)
    operands = []
    for value in op.operand_values():
        array = None if value is None else _known(value, evaluated, shape_only)
        if value is not None and array is None:
            return False
        operands.append(array)
    (result,) = run_op(op, operands)
    constant = replace_by_constant(program, op, np.asarray(result))
    if constant is None:
        return False
    evaluated[id(constant.result())] = result
    return True


def _known(value: Value, evaluated: dict[int, np.ndarray], shape_only: bool) -> object:
    """The array a value holds at compile time (a list for a combine), or None. For a
    SHAPE_ONLY op, a static tensor stands for itself (a zero-strided array of its shape:
    its data is never read)."""
    if id(value) in evaluated:
        return evaluated[id(value)]
    type_ = value.type
    if shape_only:
        if isinstance(type_, DenseTensorType) and DYNAMIC not in type_.dims:
            return np.broadcast_to(np.zeros((), np.float32), type_.dims)
        return None
    producer = value.defining_op
    if producer is None:
        return None
    if producer.name == "builtin.combine":
        items = [
            None if v is None else _known(v, evaluated, False) for v in producer.operand_values()
        ]
        return None if any(item is None for item in items) else items
    if producer.num_operands or constant_of(value) is None:
        return None
    (array,) = run_op(producer, [])
    return array


def has_dynamic_dims(program: Program) -> bool:
    """Whether any value of the program has a -1 dim (so it must be specialised per feed).
    A -1 that Paddle declares but the op's `computed_meta` resolves from static operands
    (batch_norm's `tensor<-1xu8>` reserve_space, computed empty) does not count."""
    return any(_is_dynamic(t) for op in program.block for t in _computed_types(op))


def _computed_types(op: Operation) -> list[Type]:
    declared = [r.type for r in op.results]
    op_def = op.op_def
    if op_def is None or op_def.computed_meta is None or not any(map(_is_dynamic, declared)):
        return declared
    return list(op_def.computed_meta(InferContext.of(op)))


def _is_dynamic(type_: Type) -> bool:
    if isinstance(type_, DenseTensorType):
        return DYNAMIC in type_.dims
    return any(_is_dynamic(t) for t in getattr(type_, "types", ()))


def _specialize_data(op: Operation, shapes: dict[str, Sequence[int]]) -> None:
    name = op.attr("name")
    declared = op.result(0).tensor_type
    given = shapes.get(name)
    if given is None:
        if DYNAMIC in declared.dims:
            raise ShapeError(
                f"pd_op.data '{name}' is declared {print_type(declared)}: "
                "its -1 dims need a feed shape to compile"
            )
        return
    dims = tuple(int(d) for d in given)
    fits = len(dims) == declared.rank and all(
        d == DYNAMIC or d == g for d, g in zip(declared.dims, dims, strict=True)
    )
    if not fits:
        raise FeedError(name, f"shape {_fmt(declared.dims)}", f"shape {_fmt(dims)}")
    op.set_attribute("shape", IntArrayAttribute.get(list(dims)))
    op.result(0).type = declared.with_dims(dims)


def _fmt(dims: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"
