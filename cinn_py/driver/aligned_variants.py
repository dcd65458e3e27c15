"""Aligned variants: a symbolic kernel whose rows have a symbolic length also comes
as a vector kernel, launched where the length is a multiple of the vector.

A kernel over `x[S0, S1]` (attention scores over a -1 sequence) cannot use 16-byte
accesses: row `i` starts at `i * S1` elements, aligned only when S1 is a multiple of
the vector. Compiling per length would cost a compile per length, which is what
symbolic kernels are for avoiding. So the kernel comes twice, in the same translation
unit (one compile for the bucket, `hlir.symbolic_dims`):

- the scalar kernel, as lowered, valid for every length;
- the aligned variant, the same function with `S1` replaced by `(S1 / V) * V` (equal
  to S1 exactly when V divides it): the schedules see a length whose constant factor
  is V (`static_factor`), so the flat tactic walks V-lane vectors, the row tactic
  reads a row V lanes a step with its vector loads under the mask (`ir.live_steps`),
  and the stores are vectors.

The launch picks the variant where `S1 % V == 0` at the signature being run (the
program is built per signature, so this is a check at build time, not in the kernel),
the scalar kernel elsewhere. Both are rendered for every signature of the bucket
whatever its length, so the unit's source, and so its compile, is shared.

Which kernels: a symbolic function with a dim Var that is the innermost dim of one of
its buffers (the first such dim of the arguments, in order), V = 16 bytes of the
narrowest of those buffers' dtypes (at least 2 lanes). The variant is kept only where
its schedule differs from the scalar kernel's (it found vectors to walk); a unit whose
variants codegen refuses is rendered again without them (`PIRCompiler`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from cinn_py.errors import CinnError
from cinn_py.ir.dim_values import bound_derived, concrete, current
from cinn_py.ir.expr import Buffer, Div, IntImm, Mul, Var
from cinn_py.ir.group_schedule.auto_schedule import auto_schedule
from cinn_py.ir.group_schedule.finish import ScheduleResult
from cinn_py.ir.group_schedule.launch_config import VECTOR_BYTES
from cinn_py.ir.group_schedule.target_info import TargetInfo
from cinn_py.ir.row_pattern import RowPattern
from cinn_py.ir.schedule.analysis import substitute_stmt
from cinn_py.ir.stmt import Argument, LoweredFunc


@dataclass(frozen=True)
class AlignedVariant:
    """A kernel's vector variant: `scheduled` is valid where dim `dim` is a multiple of
    `lanes`."""

    dim: str
    lanes: int
    scheduled: ScheduleResult

    @property
    def name(self) -> str:
        return self.scheduled.func.name

    def applies(self, dims: Mapping[str, int]) -> bool:
        """Whether the variant is the one to launch at dims `dims` (name -> value)."""
        return dims[self.dim] % self.lanes == 0


def alignable_dim(func: LoweredFunc) -> tuple[Var, int] | None:
    """The dim Var that is the innermost dim of one of `func`'s buffers (the first, in
    argument order) and the vector width V of those buffers; None where there is none,
    or V < 2."""
    dims = {arg.value.name for arg in func.args if isinstance(arg.value, Var)}
    buffers = [arg.value for arg in func.args if isinstance(arg.value, Buffer)]
    for buffer in buffers:
        last = buffer.shape[-1] if buffer.shape else None
        if isinstance(last, Var) and last.name in dims:
            sizes = [
                b.dtype.itemsize
                for b in buffers
                if b.shape and isinstance(b.shape[-1], Var) and b.shape[-1].name == last.name
            ]
            lanes = VECTOR_BYTES // min(sizes)
            return (last, lanes) if lanes >= 2 else None
    return None


def aligned_function(func: LoweredFunc, dim: Var, lanes: int) -> LoweredFunc:
    """`func` with `dim` read as `(dim / lanes) * lanes`, named `<name>_aligned<V>`."""
    aligned = Mul(Div(dim, IntImm(lanes, dim.dtype)), IntImm(lanes, dim.dtype))
    mapping = {dim.name: aligned}
    args = [
        arg if isinstance(arg.value, Var) else Argument(substitute_stmt(arg.value, mapping), arg.io)
        for arg in func.args
    ]
    body = substitute_stmt(func.body, mapping)
    temps = [substitute_stmt(b, mapping) for b in func.temp_buffers]
    return LoweredFunc(f"{func.name}_aligned{lanes}", args, body, temps)


def aligned_variant(
    lowered: LoweredFunc,
    scalar: ScheduleResult,
    pattern: RowPattern | None,
    target: TargetInfo,
) -> AlignedVariant | None:
    """The aligned variant of the kernel `lowered` (scheduled as `scalar`); None where
    the kernel has no alignable dim, its tactic refuses the variant, or the variant
    would be the same walk."""
    found = alignable_dim(lowered)
    if found is None:
        return None
    dim, lanes = found
    variant = aligned_function(lowered, dim, lanes)
    values = current() or {}
    if dim.name not in values:
        return None

    def aligned_dims(values: Mapping[str, int]) -> dict[str, int]:
        # Scheduled as at the aligned length at or below this one (at least one
        # vector): what every occurrence of the dim in the variant reads, and a length
        # of the bucket the lowered function's reductions were bounded for.
        return {**values, dim.name: max(lanes, values[dim.name] // lanes * lanes)}

    full = _full_shaped(lowered, pattern)
    try:
        with bound_derived(aligned_dims):
            scheduled = auto_schedule(variant, target, _aligned_pattern(variant, pattern, full))
            if str(scheduled.trace) == str(scalar.trace):
                return None  # no vectors found: the scalar kernel does as well
    except (CinnError, ValueError, TypeError, AttributeError):
        return None
    return AlignedVariant(dim.name, lanes, scheduled)


def _full_shaped(lowered: LoweredFunc, pattern: RowPattern | None) -> int | None:
    """The position of an argument of `lowered` whose shape, at the dims bound, is the
    pattern's (a full-shaped buffer)."""
    if pattern is None:
        return None
    for index, arg in enumerate(lowered.args):
        if isinstance(arg.value, Buffer) and _values(arg.value) == pattern.shape:
            return index
    return None


def _aligned_pattern(
    variant: LoweredFunc, pattern: RowPattern | None, full: int | None
) -> RowPattern | None:
    """The group's row pattern with the shape the variant's twin of the full-shaped
    argument `full` has at the dims bound (`aligned_variant` binds the aligned length)."""
    if pattern is None or full is None:
        return pattern
    shape = _values(variant.args[full].value)
    if None in shape:
        return pattern
    return dataclasses.replace(pattern, shape=shape)


def _values(buffer: Buffer) -> tuple[int | None, ...]:
    return tuple(concrete(d) for d in buffer.shape)
