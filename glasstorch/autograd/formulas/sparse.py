"""Gradient helpers of the sparse family (FunctionsManual.cpp's sparse parts):
what the gradients of sparse layouts' ops are, computed with ops."""
from __future__ import annotations

from ..._core.layout import sparse_coo, sparse_csr, strided
from ..._dispatcher.dispatcher import ops
from .common import maybe_multiply

__all__ = ["values_backward", "sparse_mask_backward", "to_sparse_backward",
           "mm_mat1_sparse_backward"]

aten = ops.aten


def values_backward(grad, self):
    """values(): a coalesced COO tensor with self's indices and ``grad`` as values."""
    result = aten._sparse_coo_tensor_unsafe.default(self.indices(), grad, list(self.shape))
    return aten._coalesced_.default(result, True)


def sparse_mask_backward(grad, mask, self_layout):
    """sparse_mask: the gradient masked the same way; dense for a strided input."""
    masked = grad.sparse_mask(mask)
    return masked.to_dense() if self_layout is strided else masked


def to_sparse_backward(grad, self_layout):
    """to_sparse / to_sparse_csr: the gradient back in the input's layout."""
    if self_layout is strided:
        return grad.to_dense() if grad.layout is not strided else grad
    return grad if grad.layout is self_layout else grad.to_sparse(layout=self_layout)


def mm_mat1_sparse_backward(grad, mat1, mat2, alpha):
    """_sparse_addmm's sparse mat1: grad @ mat2^H at mat1's (coalesced) elements
    only, flagged uncoalesced as ATen's projection leaves it (a CSR mat1: at
    its elements, as CSR; ATen has no formula for CSC)."""
    if mat1.layout not in (sparse_coo, sparse_csr):
        raise RuntimeError("sparse_addmm_sparse_backward: unsupported combination of layouts, "
                           f"grad: {grad.layout.aten_name}, mat1: {mat1.layout.aten_name}, "
                           f"mat2: {mat2.layout.aten_name}")
    product = grad.mm(mat2.t().conj()) if grad.layout is strided else grad.to_dense().mm(
        mat2.t().conj())
    if mat1.layout is sparse_csr:       # CSR: mat1's own elements, in its layout
        return maybe_multiply(product.sparse_mask(mat1), alpha)
    masked = aten._coalesced_.default(product.sparse_mask(mat1.coalesce()), False)
    return maybe_multiply(masked, alpha)
