"""Op lowering: a FUSED group of PIR ops becomes one `LoweredFunc` (CINN's op lowering).

Each op's entry (`cinn_py/ops/`) has a TE-style compute definition (`compute.py`) with
the reference executor's semantics; `lower_group` (`lower.py`) inlines them into one loop
nest per stored tensor. `can_lower` tells grouping which ops qualify. See
docs/LOWERING.md.
"""

from cinn_py.hlir.op_lowering.lower import lower_group
from cinn_py.hlir.op_lowering.registry import can_lower, lowering_of

__all__ = ["can_lower", "lower_group", "lowering_of"]
