"""Program-to-program passes, each a small module with one function, run by PassManager."""

from cinn_py.pir.passes.constant_folding import fold_constants
from cinn_py.pir.passes.cse import eliminate_common_subexpressions
from cinn_py.pir.passes.dead_code import eliminate_dead_code
from cinn_py.pir.passes.decompose import decompose_composites
from cinn_py.pir.passes.empty_tensors import fold_empty_tensors
from cinn_py.pir.passes.fold_mutable_attributes import fold_mutable_attributes
from cinn_py.pir.passes.fuse_gemm_epilogue import fuse_gemm_epilogues
from cinn_py.pir.passes.pass_manager import PASSES, PassManager

__all__ = [
    "PASSES",
    "PassManager",
    "decompose_composites",
    "eliminate_common_subexpressions",
    "eliminate_dead_code",
    "fold_constants",
    "fold_empty_tensors",
    "fold_mutable_attributes",
    "fuse_gemm_epilogues",
]
