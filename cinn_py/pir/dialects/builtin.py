"""The builtin dialect's structural op: `builtin.module`, which holds the program.

Registered with the PIR layer itself. The builtin ops that run (parameter,
shadow_output, set_parameter, constant and the Tensor[] glue combine / split / slice)
carry reference kernels and lowerings, so they are op entries in `cinn_py/ops/builtin.py`.
"""

from __future__ import annotations

from cinn_py.pir.op_def import OpDef, register_ops
from cinn_py.pir.traits import Trait

MODULE = OpDef(
    "builtin.module", results=(), traits=frozenset({Trait.SIDE_EFFECT, Trait.STRUCTURAL})
)

register_ops("builtin", [MODULE])
