"""torch._lowrank: randomized low-rank SVD and PCA (Halko, Martinsson and Tropp,
"Finding structure with randomness", 2009, Algorithm 4.4 and 5.1).

    svd_lowrank(A, q)   ->  U (m, q), S (q,), V (n, q)  with  A ~= U diag(S) V^H
    pca_lowrank(A, q)   ->  svd_lowrank of A minus its column means (center=True)

A range finder draws a Gaussian test matrix R (n, q) from the default generator
(so a seeded run repeats torch's), takes Q = qr(A R).Q, refines it with
``niter`` power iterations (each re-orthonormalized), then computes the exact
SVD of the small B = Q^H A.  Everything is ops, so autograd and forward AD
differentiate through qr, svd and matmul as in PyTorch.  A sparse COO ``A`` is
multiplied with torch.sparse.mm; ``M`` (svd_lowrank) is subtracted implicitly.
"""
from __future__ import annotations

import sys

from ._core.layout import sparse_coo
from ._dispatcher import torch_function as _torch_function

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating_dtype(A):
    """torch._linalg_utils.get_floating_dtype: float16/32/64 kept, others float32."""
    from . import float16, float32, float64
    return A.dtype if A.dtype in (float16, float32, float64) else float32


def _matmul(A, B):
    """A @ B, A dense or sparse COO (torch._linalg_utils.matmul); A None: B."""
    from . import matmul, sparse
    if A is None:
        return B
    return sparse.mm(A, B) if A.layout == sparse_coo else matmul(A, B)


def get_approximate_basis(A, q, niter=2, M=None):
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M."""
    from . import randn, linalg
    niter = 2 if niter is None else niter
    dtype = A.dtype if A.is_complex() else _floating_dtype(A)
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = _matmul(A, R)
    if M is not None:
        X = X - _matmul(M, R)
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = _matmul(A.mH, Q)
        if M is not None:
            X = X - _matmul(M.mH, Q)
        Q = linalg.qr(X).Q
        X = _matmul(A, Q)
        if M is not None:
            X = X - _matmul(M, Q)
        Q = linalg.qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """``torch.svd_lowrank``: (U, S, V) of a rank-q approximation of A - M (M
    broadcast to A); a wide A is factorized through its conjugate transpose."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def _svd_lowrank(A, q=6, niter=2, M=None):
    from . import linalg
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = _matmul(Q.mH, A)
    if M is not None:
        B = B - _matmul(Q.mH, M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """``torch.pca_lowrank``: svd_lowrank of A with its column means removed
    (``center``); q defaults to min(6, m, n)."""
    from . import ones, sparse, sparse_coo_tensor, zeros
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    dtype = _floating_dtype(A)
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    if A.layout == sparse_coo:
        if len(A.shape) != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        c = sparse.sum(A, dim=(-2,)) / m
        columns = c.indices()[0]
        indices = zeros(2, len(columns), dtype=columns.dtype, device=columns.device)
        indices[0] = columns
        C_t = sparse_coo_tensor(indices, c.values(), (n, 1), dtype=dtype, device=A.device)
        ones_m1_t = ones(A.shape[:-2] + (1, m), dtype=dtype, device=A.device)
        return _svd_lowrank(A, q, niter=niter, M=sparse.mm(C_t, ones_m1_t).mT)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)


# torch's has_torch_function preambles (svd_lowrank checks A and M, pca_lowrank A)
_torch_function.install_module_overrides(sys.modules[__name__], names=set(__all__))
