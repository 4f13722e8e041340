"""``torch.linalg``: the registry's ``python_module: linalg`` functions under their
``torch.linalg`` names (``linalg_vector_norm`` -> ``vector_norm``), LinAlgError
(the exception LAPACK failures raise) and the shared notes of the docstrings."""
from __future__ import annotations

from ._ops import registry as _registry
from ._ops.kernels.linalg import _LinAlgError

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "common_notes", "cond", "cross", "det",
           "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "householder_product", "inv",
           "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
           "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
           "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
           "vector_norm"]

LinAlgError = _LinAlgError

globals().update({name[len("linalg_"):]: fn
                  for name, fn in _registry.FUNCTIONS["linalg"].items()
                  if name.startswith("linalg_")})

# The notes torch.linalg's docstrings share (the keys of torch.linalg.common_notes).
common_notes = {
    "experimental_warning": "This function is \"experimental\" and it may change in a future "
                            "PyTorch release.",
    "sync_note": "When inputs are on a CUDA device, this function synchronizes that device "
                 "with the CPU.",
    "sync_note_ex": "When the inputs are on a CUDA device, this function synchronizes only "
                    "when :attr:`check_errors`\\ `= True`.",
    "sync_note_has_ex": "When inputs are on a CUDA device, this function synchronizes that "
                        "device with the CPU. For a version of this function that does not "
                        "synchronize, see :func:`{}`.",
}
