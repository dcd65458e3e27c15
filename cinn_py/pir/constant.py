"""The compile-time constant a value holds, when its producer makes one.

Paddle feeds shapes, axes and scale factors to ops as tensors made by `pd_op.full`,
`pd_op.full_int_array` or a `builtin.combine` of those ("mutable attributes"). Shape
inference, the folding pass and the executors all ask the same question, answered here.
"""

from __future__ import annotations

from typing import Any

from cinn_py.pir.value import Value


def constant_of(value: Value) -> Any:
    """The Python constant `value` holds, or None if it is not known before run time.

    full -> its scalar value (a number); full_int_array -> a list of ints;
    combine of constants -> a list of their values (scalars unwrapped).
    """
    op = value.defining_op
    if op is None:
        return None
    # `shape` and `value` are required attributes (no declared default): an op lacking
    # one holds no known constant.
    if op.name == "pd_op.full":
        shape = op.attr("shape")
        if shape is None:
            return None
        count = 1
        for d in shape:
            count *= d
        return op.attr("value") if count == 1 else None
    if op.name == "pd_op.full_int_array":
        values = op.attr("value")
        return None if values is None else list(values)
    if op.name == "pd_op.assign":
        source = op.operand_value(0)
        return None if source is None else constant_of(source)
    if op.name == "builtin.combine":
        items = []
        for operand in op.operand_values():
            if operand is None:
                return None
            item = constant_of(operand)
            if item is None:
                return None
            items.append(item[0] if isinstance(item, list) and len(item) == 1 else item)
        return items
    return None
