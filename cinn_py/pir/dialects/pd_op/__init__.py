"""The pd_op dialect: Paddle's operators, declared with Paddle 3.3.1's exact signatures.

Operand names and order, attribute names and kinds and result names are those Paddle
prints (checked against real Paddle programs); `infer_meta` follows Paddle's phi
InferMeta at program-build time, -1 dims included. Importing this package registers
the dialect (`cinn_py.pir` does so).
"""

from __future__ import annotations

from cinn_py.pir.dialects.pd_op import creation, elementwise, manipulation, nn, reduction
from cinn_py.pir.op_def import register_ops

OPS = [*creation.OPS, *elementwise.OPS, *reduction.OPS, *manipulation.OPS, *nn.OPS]

register_ops("pd_op", OPS)
