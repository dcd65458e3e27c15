"""Every op cinn_py knows, one entry each (`OpDef`), one module per op family.

An entry holds everything about its op: declaration, infer_meta, pattern kind, traits,
reference kernel, lowering and decomposition (docs/EXTENDING.md). Importing this
package registers them all; `cinn_py.pir.op_def.lookup_op_def` imports it on first use,
so the PIR layer itself never imports kernels or lowerings.
"""

from __future__ import annotations

from cinn_py.ops import (
    activation,
    batch_norm,
    builtin,
    conv,
    creation,
    einsum,
    elementwise,
    fused,
    interp,
    io,
    manipulation,
    masks,
    nn,
    pool,
    reduction,
    shape,
    sort,
    spatial_norm,
)
from cinn_py.pir.op_def import register_ops

FAMILIES = (
    io,
    builtin,
    creation,
    elementwise,
    activation,
    reduction,
    manipulation,
    nn,
    shape,
    masks,
    pool,
    spatial_norm,
    interp,
    conv,
    batch_norm,
    fused,
    sort,
    einsum,
)
"""The family modules, each ending with its `OPS` list."""

for _op in (op for family in FAMILIES for op in family.OPS):
    register_ops(_op.name.split(".")[0], [_op])
