"""Op lowering: a FUSED group of PIR ops becomes one `LoweredFunc` (CINN's op lowering).

Each op has a TE-style compute definition (`compute.py`; one module per category:
`elementwise`, `activation`, `creation`, `broadcast`, `manipulation`, `reduction`) with the
reference executor's semantics; `lower_group` (`lower.py`) inlines them into one loop
nest per stored tensor. `can_lower` tells grouping which ops qualify. See
docs/LOWERING.md.
"""

from cinn_py.hlir.op_lowering.lower import lower_group
from cinn_py.hlir.op_lowering.registry import LOWERINGS, can_lower

__all__ = ["LOWERINGS", "can_lower", "lower_group"]
