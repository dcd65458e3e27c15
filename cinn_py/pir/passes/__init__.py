"""Program-to-program passes, each a small module with one function, run by PassManager."""

from cinn_py.pir.passes.dead_code import eliminate_dead_code
from cinn_py.pir.passes.fold_mutable_attributes import fold_mutable_attributes
from cinn_py.pir.passes.pass_manager import PASSES, PassManager

__all__ = ["PASSES", "PassManager", "eliminate_dead_code", "fold_mutable_attributes"]
