"""The math calls a loop's iterations all compute alike, which codegen evaluates once
before the loop (`CRenderer.hoisting_invariants`).

A row's epilogue reads per-row values the reductions left in registers: log_softmax's
`x - max - logf(sum)`, a normalization's `rsqrtf(var + eps)`. NVVM hoists most such
calls out of the unrolled loop by itself, but not always whole: ptxas sank logf's
special-case tail (a compare, a multiply by +inf, a select of -inf) back into the loop,
once an element, 96 of a float16 log_softmax's 592 SASS instructions a thread (NVRTC
13.5, sm_90, 2026-11-28). Written once, as `const float v = logf(...);` before the
loop, it is computed once.

A call is hoisted only where that cannot change what the kernel computes: an intrinsic
(pure: no memory, no side effects, no trap on any input), of a float type, holding no
reduction, using no variable the loop binds (its own, a nested loop's, a block's iter
vars, a Let's, a reduction's axes), and reading nothing but registers the loop does not
write (a register array is the thread's own: reading it early is safe even where the
loop body guards the read, which a global load at a guarded index is not). Only the
outermost such calls are returned: a hoisted call takes its invariant operands along.
"""

from __future__ import annotations

from cinn_py.ir import expr as e
from cinn_py.ir import stmt as s
from cinn_py.ir.visitor import nodes


def invariant_calls(loop: s.For) -> list[e.Call]:
    """The outermost calls under `loop`'s body that every iteration computes alike, in
    program order, each once (the first of structurally equal ones is the caller's to
    key on)."""
    bound = _bound_names(loop)
    written = {e.storage_name(n.tensor) for n in nodes(loop.body) if isinstance(n, s.Store)}

    def invariant(node: e.IrNode) -> bool:
        return isinstance(node, e.Call) and _invariant(node, bound, written)

    return [n for n in nodes(loop.body, prune=invariant) if invariant(n)]  # type: ignore[misc]


def _bound_names(loop: s.For) -> set[str]:
    """Every variable name bound under `loop`, its own included."""
    names = {loop.loop_var.name}
    for node in nodes(loop.body):
        if isinstance(node, s.For):
            names.add(node.loop_var.name)
        elif isinstance(node, s.ScheduleBlock):
            names.update(v.name for v in node.iter_vars)
        elif isinstance(node, s.Let):
            names.add(node.symbol.name)
        elif isinstance(node, e.Reduction):
            names.update(v.name for v in node.reduce_axis)
    return names


def _invariant(call: e.Call, bound: set[str], written: set[str]) -> bool:
    if call.call_type is not e.CallType.INTRINSIC or not call.dtype.is_float:
        return False
    reads = False
    for node in nodes(call, prune=_is_load):
        if isinstance(node, e.Reduction):
            return False
        if isinstance(node, e.Call) and node.call_type is not e.CallType.INTRINSIC:
            return False
        if isinstance(node, e.Var):
            if node.name in bound:
                return False
            reads = True
        elif isinstance(node, e.Load):
            tensor = node.tensor
            if not _is_register(tensor) or e.storage_name(tensor) in written:
                return False
            # A register array is indexed by its array dims alone (the GPU axes pick
            # the rest, fixed for the thread): those must not change either.
            for dim in tensor.array_dims:  # type: ignore[union-attr]
                index = node.indices[dim]
                if any(isinstance(n, e.Load) for n in nodes(index)):
                    return False
                if any(isinstance(n, e.Var) and n.name in bound for n in nodes(index)):
                    return False
            reads = True
    return reads  # a call of constants alone the C compiler folds


def _is_load(node: e.IrNode) -> bool:
    return isinstance(node, e.Load)


def _is_register(node: e.Buffer | e.Tensor) -> bool:
    return isinstance(node, e.Buffer) and node.memory_type is e.MemoryType.LOCAL
