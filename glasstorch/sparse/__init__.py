"""``torch.sparse``: functions over sparse tensors (mm, addmm, sum, softmax,
log_softmax) and the invariant-check switch; also the hand-bound
constructors ``torch.sparse_coo_tensor`` / ``sparse_csr_tensor`` /
``sparse_csc_tensor`` / ``sparse_compressed_tensor``
(torch/csrc/utils/tensor_new.cpp: Python data in, the aten constructors out).

The layouts, kernels and gradients are the op library's (_ops/kernels/sparse.py);
this module is Python over those ops, as torch/sparse/__init__.py is.
"""
from __future__ import annotations

import warnings

from .._core import dtype as _dt
from .._core.layout import sparse_csc as _sparse_csc
from .._core.layout import sparse_csr as _sparse_csr
from .._dispatcher.dispatcher import ops as _ops
from .._ops.kernels import sparse as _kernels
from .._tensor import Tensor

__all__ = ["addmm", "check_sparse_tensor_invariants", "mm", "sum", "softmax", "log_softmax"]

_aten = _ops.aten


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0,
          alpha: float = 1.0) -> Tensor:
    """beta * mat + alpha * (mat1 @ mat2) for a sparse ``mat1``; its gradient is
    sparse, at mat1's elements (``_sparse_addmm``)."""
    return _aten._sparse_addmm.default(mat, mat1, mat2, beta=beta, alpha=alpha)


def mm(mat1: Tensor, mat2: Tensor, reduce: str | None = None) -> Tensor:
    """mat1 @ mat2 with a sparse ``mat1``; the gradient of mat1 is sparse."""
    if reduce is not None:
        raise NotImplementedError("torch.sparse.mm: reduce= (sparse CSR reductions) is not "
                                  "supported by glasstorch")
    return _aten._sparse_mm.default(mat1, mat2)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:     # noqa: A001 (torch's name)
    """Sum of a sparse tensor's elements over ``dim`` (all dims by default); a
    dense tensor once every sparse dim is summed."""
    if dim is None:
        if dtype is None:
            return _aten._sparse_sum.default(input)
        return _aten._sparse_sum.dtype(input, dtype=dtype)
    dim = [dim] if isinstance(dim, int) else list(dim)
    if dtype is None:
        return _aten._sparse_sum.dim(input, dim)
    return _aten._sparse_sum.dim_dtype(input, dim, dtype=dtype)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Softmax over each line's stored elements (missing ones count as -inf)."""
    return _aten._sparse_softmax.int(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    return _aten._sparse_log_softmax.int(input, dim, dtype)


class check_sparse_tensor_invariants:
    """Turn the constructors' invariant checks on (globally, or within a
    ``with`` block / decorated function), as torch's context manager does."""

    @staticmethod
    def is_enabled() -> bool:
        return _kernels._CHECK_INVARIANTS[0]

    @staticmethod
    def enable() -> None:
        _kernels._CHECK_INVARIANTS[0] = True

    @staticmethod
    def disable() -> None:
        _kernels._CHECK_INVARIANTS[0] = False

    def __init__(self, enable: bool = True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a "
                               "different context manager instance for context nesting.")
        self.saved_state = self.is_enabled()
        _kernels._CHECK_INVARIANTS[0] = self.state

    def __exit__(self, type, value, traceback):
        _kernels._CHECK_INVARIANTS[0] = self.saved_state
        self.saved_state = None

    def __call__(self, mth):
        def test_mth(*args, **kwargs):
            with type(self)(self.state):
                return mth(*args, **kwargs)
        return test_mth


# -- the constructors (torch.sparse_coo_tensor, torch.sparse_csr_tensor ...) --------------

_WARNED = []


def _warn_checks_implicit(check_invariants) -> None:
    """ATen's once-per-process note when nobody chose whether to check invariants."""
    if check_invariants is None and not _WARNED and not check_sparse_tensor_invariants.is_enabled():
        _WARNED.append(True)
        warnings.warn("Sparse invariant checks are implicitly disabled. Memory errors (e.g. "
                      "SEGFAULT) will occur when operating on a sparse tensor which violates the "
                      "invariants, but checks incur performance overhead. To silence this "
                      "warning, explicitly opt in or out. See "
                      "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.  "
                      "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                      "Context.cpp:816.)", UserWarning, stacklevel=3)


def _as_tensor(data, dtype=None, device=None):
    from .. import tensor
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if dtype is not None or device is not None \
            else data
    return tensor(data, dtype=dtype, device=device)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None) -> Tensor:
    """A COO tensor from its indices (sparse_dim x nnz) and values; ``size``
    is inferred from the largest indices when not given."""
    _warn_checks_implicit(check_invariants)
    values = _as_tensor(values, dtype, device)
    indices = _as_tensor(indices, _dt.int64, values.device)
    previous = check_sparse_tensor_invariants.is_enabled()
    if check_invariants is not None:
        _kernels._CHECK_INVARIANTS[0] = check_invariants
    try:
        if size is None:
            result = _aten.sparse_coo_tensor.indices(indices, values, is_coalesced=is_coalesced)
        else:
            result = _aten.sparse_coo_tensor.indices_size(indices, values, list(size),
                                                         is_coalesced=is_coalesced)
    finally:
        _kernels._CHECK_INVARIANTS[0] = previous
    if requires_grad:
        result.requires_grad_(True)
    return result


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None) -> Tensor:
    """A compressed tensor of ``layout`` (CSR: row offsets and column indices;
    CSC: column offsets and row indices) and its values; ``size`` is inferred
    from the offsets and the largest plain index when not given."""
    if layout is None:
        raise RuntimeError("sparse_compressed_tensor expected sparse compressed tensor layout "
                           "but got none")
    _warn_checks_implicit(check_invariants)
    values = _as_tensor(values, dtype, device)
    compressed = _as_tensor(compressed_indices, _dt.int64, values.device)
    plain = _as_tensor(plain_indices, _dt.int64, values.device)
    if size is None:
        sizes = [compressed.shape[0] - 1, int(plain.max()) + 1 if plain.numel() else 0]
        size = [*(sizes if layout is _sparse_csr else sizes[::-1]), *values.shape[1:]]
    if check_invariants if check_invariants is not None else \
            check_sparse_tensor_invariants.is_enabled():
        validate = _aten._validate_sparse_csr_tensor_args if layout is _sparse_csr else \
            _aten._validate_sparse_csc_tensor_args
        validate.default(compressed, plain, values, list(size))
    result = _aten.sparse_compressed_tensor.comp_plain_value_size(
        compressed, plain, values, list(size), dtype=values.dtype, layout=layout,
        device=values.device)
    if requires_grad:
        result.requires_grad_(True)
    return result


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None) -> Tensor:
    """A CSR tensor from row offsets, column indices and values."""
    return sparse_compressed_tensor(crow_indices, col_indices, values, size, dtype=dtype,
                                    layout=_sparse_csr, device=device,
                                    requires_grad=requires_grad,
                                    check_invariants=check_invariants)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None) -> Tensor:
    """A CSC tensor from column offsets, row indices and values."""
    return sparse_compressed_tensor(ccol_indices, row_indices, values, size, dtype=dtype,
                                    layout=_sparse_csc, device=device,
                                    requires_grad=requires_grad,
                                    check_invariants=check_invariants)
