"""Linear-algebra gradients (FunctionsManual.cpp's linalg section): mm's backward
helpers and the backward and forward (``*_jvp``) helpers of derivatives.yaml's
torch.linalg entries.

Each is written over ops, so backward dispatches like any code and double
backward works.  Notation: X^H is ``X.mH``; <G, dX> = Re tr(G^H dX) is the pairing a
backward formula is the adjoint for, which is PyTorch's convention for complex
gradients (the conjugate Wirtinger derivative)."""
from __future__ import annotations

import glasstorch as torch

from ..._dispatcher.dispatcher import ops
from ..grad_mode import is_grad_enabled
from .common import conj_if_complex, maybe_multiply, scalar_conj

__all__ = ["mm_mat1_backward", "mm_mat2_backward", "svd_backward", "linalg_svd_jvp", "linalg_eig_backward", "linalg_eig_jvp",
           "linalg_det_backward", "linalg_det_jvp", "slogdet_backward", "slogdet_jvp",
           "cholesky_backward", "cholesky_jvp", "cholesky_solve_backward", "cholesky_solve_jvp",
           "cholesky_inverse_backward", "cholesky_inverse_jvp", "linalg_qr_backward",
           "linalg_qr_jvp", "linalg_solve_backward", "linalg_solve_jvp",
           "linalg_solve_triangular_backward", "linalg_solve_triangular_forward_AD",
           "triangular_solve_backward", "triangular_solve_jvp", "lu_factor_ex_backward",
           "lu_factor_ex_jvp", "linalg_lu_backward", "linalg_lu_jvp", "linalg_lu_solve_LU",
           "linalg_lu_solve_jvp", "lu_unpack_backward", "householder_product_backward",
           "householder_product_jvp", "ormqr_backward", "linalg_lstsq_backward",
           "linalg_lstsq_solution_jvp", "linalg_lstsq_residuals_jvp", "pinv_backward",
           "pinv_jvp", "linalg_matrix_exp_differential"]

aten = ops.aten


# -- matrix products: mm's gradients -------------------------------------------------------

def _column_major(sizes, strides) -> bool:
    """(A sparse matrix's strides are saved empty: not column-major.)"""
    return len(strides) == 2 and strides[0] == 1 and strides[1] == sizes[0]


def mm_mat1_backward(grad, mat2, mat1_sizes, mat1_strides, alpha):
    """grad @ mat2^H; computed as (mat2^* @ grad^T)^T when mat1 was column-major,
    so the gradient comes out column-major like mat1."""
    if _column_major(mat1_sizes, mat1_strides):
        result = aten.t.default(aten.mm.default(conj_if_complex(mat2), aten.t.default(grad)))
    else:
        result = aten.mm.default(grad, conj_if_complex(aten.t.default(mat2)))
    return maybe_multiply(result, scalar_conj(alpha))


def mm_mat2_backward(grad, mat1, mat2_sizes, mat2_strides, alpha):
    """mat1^H @ grad; as (grad^T @ mat1^*)^T when mat2 was column-major."""
    if _column_major(mat2_sizes, mat2_strides):
        result = aten.t.default(aten.mm.default(aten.t.default(grad), conj_if_complex(mat1)))
    else:
        result = aten.mm.default(conj_if_complex(aten.t.default(mat1)), grad)
    return maybe_multiply(result, scalar_conj(alpha))


# -- helpers ----------------------------------------------------------------------------------

def _solve_tri(A, B, upper, left=True, unitriangular=False):
    return torch.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


def _diag_embed(v):
    return torch.diag_embed(v)


def _real_diag(X):
    """X with the imaginary part of its diagonal removed (real X: itself)."""
    if not X.is_complex():
        return X
    d = X.diagonal(0, -2, -1)
    return X - _diag_embed(d - torch.real(d).to(X.dtype))


# -- SVD -----------------------------------------------------------------------------------

_SVD_GAUGE = ("svd_backward: The singular vectors in the complex case are specified up to "
              "multiplication by e^{i phi}. The specified loss function depends on this phase "
              "term, making it ill-defined.")


def svd_backward(gU, gS, gVh, U, S, Vh, full_matrices):
    """The gradient of A = U diag(S) V^H (the reduced factors; full ones are narrowed
    to the k = min(m, n) singular pairs, the others carry no information).  With
    E_jk = S_k^2 - S_j^2:
        gA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS)] V^H
             + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H)."""
    k = S.shape[-1]
    if full_matrices:
        gU, gVh = gU.narrow(-1, 0, k), gVh.narrow(-2, 0, k)
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
    m, n = U.shape[-2], Vh.shape[-1]
    V, gV = Vh.mH, gVh.mH
    UhgU, VhgV = U.mH.matmul(gU), V.mH.matmul(gV)
    if U.is_complex():
        im_u, im_v = torch.imag(UhgU.diagonal(0, -2, -1)), torch.imag(VhgV.diagonal(0, -2, -1))
        if not torch.allclose(im_u, -im_v, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_SVD_GAUGE)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E = E + _diag_embed(torch.ones_like(S2) - E.diagonal(0, -2, -1))
    inner = ((UhgU - UhgU.mH) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VhgV - VhgV.mH)) / E
    inner = inner + _diag_embed(gS.to(inner.dtype))
    if U.is_complex():
        inner = inner + _diag_embed(1j * (im_u - im_v) / (2 * S))
    if m > k:
        gUSinv = gU / S.unsqueeze(-2)
        return (U.matmul(inner) + gUSinv - U.matmul(U.mH.matmul(gUSinv))).matmul(Vh)
    if n > k:
        SinvgVh = gVh / S.unsqueeze(-1)
        return U.matmul(inner.matmul(Vh) + SinvgVh - SinvgVh.matmul(V).matmul(Vh))
    return U.matmul(inner).matmul(Vh)


def linalg_svd_jvp(A_p, A_t, U, S, Vh, full_matrices, compute_uv):
    """Tangents of U, S, Vh.  With dP = U^H dA V:
        dS = Re diag(dP)
        dU = U [(dP S + S dP^H) / E + i Im diag(dP) / 2S] + (I - U U^H) dA V S^-1
        dV = V [(S dP + dP^H S) / E - i Im diag(dP) / 2S] + (I - V V^H) dA^H U S^-1
    (the full factors' extra columns get no tangent).  Without U and V (svdvals)
    they are computed here."""
    k = S.shape[-1]
    if not compute_uv:
        U, _, Vh = aten._linalg_svd.default(A_p, False, True)
        full_matrices = False
    Ur, Vhr = (U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)) if full_matrices else (U, Vh)
    V = Vhr.mH
    dP = Ur.mH.matmul(A_t).matmul(V)
    dS = torch.real(dP.diagonal(0, -2, -1)) if dP.is_complex() else dP.diagonal(0, -2, -1)
    if not compute_uv:
        return None, dS, None
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    E = E + _diag_embed(torch.ones_like(S2) - E.diagonal(0, -2, -1))
    off_u = (dP * S.unsqueeze(-2) + S.unsqueeze(-1) * dP.mH) / E
    off_v = (S.unsqueeze(-1) * dP + dP.mH * S.unsqueeze(-2)) / E
    off_u = off_u - _diag_embed(off_u.diagonal(0, -2, -1))
    off_v = off_v - _diag_embed(off_v.diagonal(0, -2, -1))
    if dP.is_complex():
        phase = _diag_embed(1j * torch.imag(dP.diagonal(0, -2, -1)) / (2 * S))
        off_u, off_v = off_u + phase, off_v - phase
    dU = Ur.matmul(off_u)
    dV = V.matmul(off_v)
    m, n = Ur.shape[-2], V.shape[-2]
    if m > k:
        AV = A_t.matmul(V) / S.unsqueeze(-2)
        dU = dU + AV - Ur.matmul(Ur.mH.matmul(AV))
    if n > k:
        AU = A_t.mH.matmul(Ur) / S.unsqueeze(-2)
        dV = dV + AU - V.matmul(V.mH.matmul(AU))
    if full_matrices:
        dU = torch.cat([dU, torch.zeros_like(U.narrow(-1, k, U.shape[-1] - k))], -1)
        dV = torch.cat([dV, torch.zeros_like(Vh.mH.narrow(-1, k, Vh.shape[-2] - k))], -1)
    return dU, dS, dV.mH


# -- eigendecompositions ------------------------------------------------------------------

def linalg_eig_backward(gL, gV, L, V, is_hermitian):
    """The gradient of A V = V diag(L).  With E_ij = conj(L_j) - conj(L_i):
        Hermitian:  gA = V [skew_half(V^H gV) / E + diag(gL)] V^H
        general:    gA = V^-H [(V^H gV - V^H V Re diag(V^H gV)) / E + diag(gL)] V^H
    (the eigenvectors are normalized, so V^H gV's projection removes what that
    normalization fixes)."""
    name = "linalg_eigh_backward" if is_hermitian else "linalg_eig_backward"
    VhgV = V.mH.matmul(gV)
    diag = VhgV.diagonal(0, -2, -1)
    if V.is_complex():
        imag = torch.imag(diag)
        if not torch.allclose(imag, torch.zeros_like(imag), rtol=1e-2, atol=1e-2):
            raise RuntimeError(f"{name}: The eigenvectors in the complex case are specified up "
                               "to multiplication by e^{i phi}. The specified loss function "
                               "depends on this quantity, so it is ill-defined.")
    if is_hermitian:
        VhgV = 0.5 * (VhgV - VhgV.mH)
    else:
        real = torch.real(diag) if diag.is_complex() else diag
        VhgV = VhgV - V.mH.matmul(V * real.unsqueeze(-2).to(V.dtype))
    Lc = L.conj() if L.is_complex() else L
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
    E = E + _diag_embed(torch.ones_like(Lc) - E.diagonal(0, -2, -1))
    inner = VhgV / E
    inner = inner - _diag_embed(inner.diagonal(0, -2, -1)) + _diag_embed(gL.to(inner.dtype))
    if is_hermitian:
        return V.matmul(inner.matmul(V.mH))
    return torch.linalg.solve(V.mH, inner.matmul(V.mH))


def linalg_eig_jvp(dA, L, V, is_hermitian):
    """Tangents of the eigenvalues and eigenvectors: with dX = V^-1 dA V,
    dL = diag(dX), dV = V (dX / E' with zero diagonal), then projected so the
    eigenvectors stay normalized (E'_ij = L_j - L_i)."""
    dA = dA.to(V.dtype)
    dX = V.mH.matmul(dA.matmul(V)) if is_hermitian else torch.linalg.solve(V, dA.matmul(V))
    dL = dX.diagonal(0, -2, -1)
    if is_hermitian and dL.is_complex():
        dL = torch.real(dL)
    E = L.unsqueeze(-2) - L.unsqueeze(-1)
    E = E + _diag_embed(torch.ones_like(L) - E.diagonal(0, -2, -1))
    off = dX / E.to(dX.dtype)
    off = off - _diag_embed(off.diagonal(0, -2, -1))
    if is_hermitian:
        return dL, V.matmul(off)
    dV = V.matmul(off)
    correction = torch.real(V.mH.matmul(dV).diagonal(0, -2, -1)) if dV.is_complex() else \
        V.mT.matmul(dV).diagonal(0, -2, -1)
    return dL, dV - V * correction.unsqueeze(-2).to(V.dtype)


# -- determinants ---------------------------------------------------------------------------

def _scaled_identity(values, pivots):
    """values[..., None] * I, each identity of the size of a pivots row."""
    return _diag_embed(values.unsqueeze(-1).expand(list(pivots.shape)))


def linalg_det_backward(grad, det, A, LU, pivots):
    """The cofactor matrix, grad * conj(det) * A^-H.  For a first derivative ATen
    solves with the saved LU (its zero pivots nudged by eps, so a singular input
    gets the limit of that formula); with grad mode on (higher derivatives) it
    solves A^H X = d I again, and uses the SVD where A is singular."""
    d = _scaled_identity(grad * det.conj(), pivots)
    if not is_grad_enabled():
        eps = torch.finfo(torch.real(LU).dtype if LU.is_complex() else LU.dtype).eps
        diagonal = LU.diagonal(0, -2, -1)
        LU_ = LU + _diag_embed(torch.where(diagonal == 0, torch.full_like(diagonal, eps),
                                           torch.zeros_like(diagonal)))
        transposed = A.is_contiguous() and not A.is_complex()
        return torch.linalg.lu_solve(LU_, pivots, d, adjoint=not transposed)
    singular = det == 0
    if not bool(singular.any()):
        return torch.linalg.solve(A.mH, d)
    U, S, Vh = torch.linalg.svd(A)
    alpha = (torch.linalg.det(U) * torch.linalg.det(Vh)).conj()
    D = _prod_others(S) * (grad * alpha).unsqueeze(-1).to(S.dtype if not alpha.is_complex()
                                                             else alpha.dtype)
    from_svd = (U * D.unsqueeze(-2)).matmul(Vh)
    regular = torch.linalg.solve(A.mH + _diag_embed(singular.unsqueeze(-1).expand(
        list(pivots.shape)).to(A.dtype)), d)
    return torch.where(singular.unsqueeze(-1).unsqueeze(-1), from_svd, regular)


def _prod_others(S):
    """prod_{j != i} S_j for each i (the product of the others, zeros allowed)."""
    n = S.shape[-1]
    columns = [torch.prod(torch.cat([S.narrow(-1, 0, i), S.narrow(-1, i + 1, n - i - 1)], -1),
                          -1, keepdim=True) for i in range(n)]
    return torch.cat(columns, -1)


def linalg_det_jvp(dA, det, LU, pivots, use_A_T):
    """d det = det tr(A^-1 dA), the solve done with the saved LU (of A^T when ATen
    factored that)."""
    solved = torch.linalg.lu_solve(LU, pivots, dA, adjoint=use_A_T)
    return det * solved.diagonal(0, -2, -1).sum(-1)


def slogdet_backward(grad_sign, grad_logabsdet, A, signdet, LU, pivots):
    """g A^-H with g = grad_logabsdet (plus i Im(grad_sign conj(sign)) for complex A);
    a real sign has no gradient."""
    g = grad_logabsdet
    if A.is_complex():
        g = g.to(A.dtype) + 1j * torch.imag(grad_sign * signdet.conj())
    d = _scaled_identity(g.to(A.dtype), pivots)
    if not is_grad_enabled():
        transposed = A.is_contiguous() and not A.is_complex()
        return torch.linalg.lu_solve(LU, pivots, d, adjoint=not transposed)
    return torch.linalg.solve(A.mH, d)


def slogdet_jvp(LU, pivots, dA, sign, use_A_T):
    """(d sign, d logabsdet): with t = tr(A^-1 dA), d log|det| = Re t and, for complex
    A, d sign = i Im(t) sign (a real sign has a zero tangent)."""
    trace = torch.linalg.lu_solve(LU, pivots, dA, adjoint=use_A_T).diagonal(0, -2, -1).sum(-1)
    if LU.is_complex():
        return sign * (1j * torch.imag(trace)), torch.real(trace)
    return torch.zeros_like(sign), trace


# -- Cholesky -------------------------------------------------------------------------------

def cholesky_backward(gL, upper, L):
    """Murray (2016): with Phi = tril(L^H gL) and its diagonal halved,
    gA = L^-H Phi_sym L^-1, symmetrized (the factor reads one triangle of a
    Hermitian input)."""
    if upper:
        L, gL = L.mH, gL.mH
    gA = L.mH.matmul(gL).tril()
    gA = 0.5 * (gA + gA.tril(-1).mH)
    gA = _solve_tri(L.mH, gA, upper=True, left=True)
    return _solve_tri(L, gA, upper=False, left=False)


def cholesky_jvp(dA, L, upper):
    """dL = L Phi(L^-1 dA L^-H), Phi taking the lower triangle with a halved diagonal
    (the upper factor: the adjoint of the lower one's tangent)."""
    L_ = L.mH if upper else L
    phi = _solve_tri(L_, dA, upper=False, left=True)
    phi = _solve_tri(L_.mH, phi, upper=True, left=False).tril()
    phi = phi - 0.5 * _diag_embed(phi.diagonal(0, -2, -1))
    dL = L_.matmul(phi)
    return dL.mH if upper else dL


def cholesky_solve_backward(grad_x, self, input2, result, upper, grad_input_mask):
    """X = (L L^H)^-1 B: gB = (L L^H)^-1 gX, and the factor's gradient from the
    Hermitian part of gB X^H."""
    grad_self = torch.cholesky_solve(grad_x, input2, upper=upper)
    common = grad_self.matmul(result.mH)
    common = common + common.mH
    grad_input2 = -input2.matmul(common) if upper else -common.matmul(input2)
    return grad_self, grad_input2


def cholesky_solve_jvp(X, U, dU, dB, upper):
    """dX = A^-1 (dB - dA X) with A = L L^H (U^H U) and dA its product rule."""
    dK = dU.mH.matmul(U) if upper else dU.matmul(U.mH)
    dA = dK + dK.mH
    return torch.cholesky_solve(dB - dA.matmul(X), U, upper=upper)


def cholesky_inverse_backward(grad, L, upper, inverse):
    common = inverse.matmul((grad + grad.mH).matmul(inverse))
    return -L.matmul(common) if upper else -common.matmul(L)


def cholesky_inverse_jvp(F, dF, X, upper):
    """ATen's formula, kept as PyTorch 2.13 computes it: with C = F (F^H for upper) and
    P = -X dC X C^H, the tangent P + P^H.  (It differs from the derivative of
    (C C^H)^-1, which is -X (dC C^H + C dC^H) X; kept so tangents equal PyTorch's.)"""
    C, dC = (F.mH, dF.mH) if upper else (F, dF)
    partial = -X.matmul(dC).matmul(X).matmul(C.mH)
    return partial + partial.mH


# -- QR ---------------------------------------------------------------------------------------

def _qr_checks(mode, m, n):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")


def _qr_square_backward(gQ, gR, Q, R):
    """A = QR with R (n, n) invertible, R's diagonal real: with N = gR R^H - Q^H gQ and
    M its upper triangle plus the strict upper triangle's adjoint (diagonal made real),
    gA = (gQ + Q M) R^-H."""
    N = gR.matmul(R.mH) - Q.mH.matmul(gQ)
    M = _real_diag(N.triu() + N.triu(1).mH)
    return _solve_tri(R.mH, gQ + Q.matmul(M), upper=False, left=False)


def linalg_qr_backward(gQ, gR, Q, R, mode):
    _qr_checks(mode, R.shape[-2], R.shape[-1])
    m, n = Q.shape[-2], R.shape[-1]
    if m >= n:
        return _qr_square_backward(gQ, gR, Q, R)
    # wide: A = [X | Y], R = [U | V]; Q comes from X alone and V = Q^H Y
    U, gU = R.narrow(-1, 0, m), gR.narrow(-1, 0, m)
    gV = gR.narrow(-1, m, n - m)
    Y = Q.matmul(R.narrow(-1, m, n - m))
    gX = _qr_square_backward(gQ + Y.matmul(gV.mH), gU, Q, U)
    return torch.cat([gX, Q.matmul(gV)], -1)


def linalg_qr_jvp(dA, Q, R, mode):
    """(dQ, dR) for m >= n: with X = Q^H dA R^-1 and Phi(X) its skew-Hermitian part
    fixed by the triangular structure, dR = (X - Phi(X)) R and
    dQ = dA R^-1 - Q (X - Phi(X)); wide inputs through their square part."""
    _qr_checks(mode, R.shape[-2], R.shape[-1])
    m, n = Q.shape[-2], R.shape[-1]

    def square(dA_, R_):
        dAR = _solve_tri(R_, dA_, upper=True, left=False)
        X = Q.mH.matmul(dAR)
        low = X.tril(-1)
        phi = low - low.mH
        if X.is_complex():
            phi = phi + _diag_embed(1j * torch.imag(X.diagonal(0, -2, -1)))
        upper_part = X - phi
        return dAR - Q.matmul(upper_part), upper_part.matmul(R_)
    if m >= n:
        return square(dA, R)
    dQ, dU = square(dA.narrow(-1, 0, m), R.narrow(-1, 0, m))
    dY = dA.narrow(-1, m, n - m)
    Y = Q.matmul(R.narrow(-1, m, n - m))
    dV = dQ.mH.matmul(Y) + Q.mH.matmul(dY)
    return dQ, torch.cat([dU, dV], -1)


# -- solves -----------------------------------------------------------------------------------

def _vector_rhs(A, B):
    return B.dim() == 1 or (A.dim() - 1 == B.dim() and tuple(B.shape) == tuple(A.shape[:-1]))


def linalg_solve_backward(gX, X, A, LU, pivots, left, B_requires_grad):
    """X = A^-1 B:  gB = A^-H gX, gA = -gB X^H;  X = B A^-1:  gB = gX A^-H, gA = -X^H gB.
    The solve with A^H is done again (not with the saved LU) when grad mode is on,
    so that higher derivatives see A."""
    vector = _vector_rhs(LU, gX)
    gX_ = gX.unsqueeze(-1) if vector else gX
    if is_grad_enabled():
        gB = torch.linalg.solve(A.mH, gX_, left=left)
    else:
        gB = torch.linalg.lu_solve(LU, pivots, gX_, left=left, adjoint=True)
    X_ = X.unsqueeze(-1) if vector else X
    gA = -gB.matmul(X_.mH) if left else -X_.mH.matmul(gB)
    return gA, (gB.squeeze(-1) if vector else gB) if B_requires_grad else None


def linalg_solve_jvp(dA, dB, X, LU, pivots, left):
    """dX = A^-1 (dB - dA X) (left), (dB - X dA) A^-1 (right)."""
    vector = _vector_rhs(LU, X) if left else False
    X_ = X.unsqueeze(-1) if vector else X
    dB_ = dB.unsqueeze(-1) if vector else dB
    rhs = dB_ - (dA.matmul(X_) if left else X_.matmul(dA))
    dX = torch.linalg.lu_solve(LU, pivots, rhs, left=left)
    return dX.squeeze(-1) if vector else dX


def _triangle(M, upper, unitriangular):
    return M.triu(1 if unitriangular else 0) if upper else M.tril(-1 if unitriangular else 0)


def linalg_solve_triangular_backward(grad, A, X, upper, left, unitriangular, grad_input_mask):
    gB = _solve_tri(A.mH, grad, upper=not upper, left=left, unitriangular=unitriangular)
    gA = None
    if grad_input_mask[0]:
        gA = -gB.matmul(X.mH) if left else -X.mH.matmul(gB)
        gA = _triangle(gA, upper, unitriangular)
    return gA, gB if grad_input_mask[1] else None


def linalg_solve_triangular_forward_AD(A_t, B_t, A, X, upper, left, unitriangular):
    dA = _triangle(A_t, upper, unitriangular)
    rhs = B_t - (dA.matmul(X) if left else X.matmul(dA))
    return _solve_tri(A, rhs, upper=upper, left=left, unitriangular=unitriangular)


def triangular_solve_backward(grad_x, grad_m, b, a, x, upper, transpose, unitriangular,
                              grad_input_mask):
    """torch.triangular_solve's gradients; the cloned coefficient passes its own
    gradient to A."""
    grad_b = torch.triangular_solve(grad_x, a.conj(), upper, not transpose, unitriangular)[0]
    grad_a = None
    if grad_input_mask[1]:
        grad_a = -x.conj().matmul(grad_b.mT) if transpose else -grad_b.matmul(x.mH)
        grad_a = _triangle(grad_a, upper, unitriangular) + grad_m
    return grad_b, grad_a


def triangular_solve_jvp(X, A, dA, dB, upper, transpose, unitriangular):
    """ATen's generic solve jvp: solve(dB - dA X) with the same triangular solve."""
    return torch.triangular_solve(dB - dA.matmul(X), A, upper, transpose, unitriangular)[0]


# -- LU ---------------------------------------------------------------------------------------

def linalg_lu_backward(gL, gU, P, L, U, pivot):
    """The gradient of A = P L U (L unit lower (m, k), U upper (k, n)):
        square: gA = P L^-H [tril(L^H gL, -1) + triu(gU U^H)] U^-H
        wide and tall: the square part as above, the rest through L (tall) or U (wide)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = L.mH.matmul(gL).tril(-1) + gU.matmul(U.mH).triu()
        gA = _solve_tri(U.mH, gA, upper=False, left=False)
        gA = _solve_tri(L.mH, gA, upper=True, left=True, unitriangular=True)
    elif m < n:
        U1, gU1, gU2 = U.narrow(-1, 0, k), gU.narrow(-1, 0, k), gU.narrow(-1, k, n - k)
        gA = L.mH.matmul(gL) - gU.triu().matmul(U.mH)
        gA = _solve_tri(U1.mH, gA.tril(-1), upper=False, left=False)
        gA = torch.cat([gA + gU1.triu(), gU2], -1)
        gA = _solve_tri(L.mH, gA, upper=True, left=True, unitriangular=True)
    else:
        L1, gL1, gL2 = L.narrow(-2, 0, k), gL.narrow(-2, 0, k), gL.narrow(-2, k, m - k)
        gA = gU.matmul(U.mH) - L.mH.matmul(gL.tril(-1))
        gA = _solve_tri(L1.mH, gA.triu(), upper=True, left=True, unitriangular=True)
        gA = torch.cat([gA + gL1.tril(-1), gL2], -2)
        gA = _solve_tri(U.mH, gA, upper=False, left=False)
    return P.matmul(gA) if pivot else gA


def linalg_lu_jvp(dA, P, L, U, pivot):
    """(dL, dU): with dK = P^T dA and the square parts L1, U1, X = L1^-1 dK1 U1^-1
    splits into dL = L tril(X, -1) (plus the tall rows' own term) and
    dU = triu(X) U (plus the wide columns')."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    dK = P.mT.matmul(dA) if pivot else dA
    L1, U1 = L.narrow(-2, 0, k), U.narrow(-1, 0, k)
    dK1 = dK.narrow(-2, 0, k).narrow(-1, 0, k)
    X = _solve_tri(L1, dK1, upper=False, left=True, unitriangular=True)
    X = _solve_tri(U1, X, upper=True, left=False)
    dL1 = L1.matmul(X.tril(-1))
    dU1 = X.triu().matmul(U1)
    if m == n:
        return dL1, dU1
    if m < n:       # wide: U2 = L^-1 K2
        dK2 = dK.narrow(-1, k, n - k)
        U2 = U.narrow(-1, k, n - k)
        dU2 = _solve_tri(L1, dK2 - dL1.matmul(U2), upper=False, left=True, unitriangular=True)
        return dL1, torch.cat([dU1, dU2], -1)
    dK2 = dK.narrow(-2, k, m - k)        # tall: L2 = K2 U^-1
    L2 = L.narrow(-2, k, m - k)
    dL2 = _solve_tri(U1, dK2 - L2.matmul(dU1), upper=True, left=False)
    return torch.cat([dL1, dL2], -2), dU1


def lu_factor_ex_backward(grad, LU, pivots, pivot):
    """The packed LU's gradient split into its L (strict lower) and U parts."""
    P, L, U = torch.lu_unpack(LU, pivots, unpack_pivots=pivot)
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    return linalg_lu_backward(grad.narrow(-1, 0, k).tril(-1), grad.narrow(-2, 0, k).triu(),
                              P, L, U, pivot)


def lu_factor_ex_jvp(dA, LU, pivots, pivot):
    P, L, U = torch.lu_unpack(LU, pivots, unpack_pivots=pivot)
    dL, dU = linalg_lu_jvp(dA, P, L, U, pivot)
    m, n = LU.shape[-2], LU.shape[-1]
    if m >= n:
        return torch.cat([dU + dL.narrow(-2, 0, n), dL.narrow(-2, n, m - n)], -2)
    return torch.cat([dL + dU.narrow(-1, 0, m), dU.narrow(-1, m, n - m)], -1)


def lu_unpack_backward(gL, gU, m, n):
    """L and U are the strict lower / upper parts of the packed input (k = min(m, n)
    columns of L, rows of U)."""
    k = min(m, n)
    pad = torch.nn.functional.pad
    return pad(gL.tril(-1), [0, n - k]) + pad(gU.triu(), [0, 0, 0, m - k])


def linalg_lu_solve_LU(gX, LU, pivots, X, left, adjoint):
    """The packed factors' gradient of X = op(A)^-1 B (A = P L U), through an
    auxiliary gR: for left != adjoint gR = U^-H op(-gX) op(X)^H, else
    gR = -P^T op(X) op(gX) P L^-H; its triangles give gL and gU."""
    P, L, U = torch.lu_unpack(LU, pivots, unpack_pivots=left == adjoint)
    if left != adjoint:
        gR = _solve_tri(U.mH, -(gX if left else gX.mH).matmul(X.mH if left else X), upper=False)
        gL = _solve_tri(L.mH, gR.matmul(U.mH), upper=True, left=True, unitriangular=True).tril(-1)
        return gL + gR.triu()
    gR = -P.mT.matmul(X if left else X.mH).matmul(gX.mH if left else gX).matmul(P)
    gR = _solve_tri(L.mH, gR, upper=True, left=False, unitriangular=True)
    gU = _solve_tri(U.mH, L.mH.matmul(gR), upper=False, left=False).triu()
    return gR.tril(-1) + gU


def linalg_lu_solve_jvp(X, LU, pivots, dLU, dB, left, adjoint):
    """dX = op(A)^-1 (dB - op(dA) X) (left; right-hand solves mirrored), dA = P(dL U + L dU)."""
    P, L, U = torch.lu_unpack(LU, pivots)
    dL, dU = dLU.tril(-1), dLU.triu()
    dA = P.matmul(dL.matmul(U) + L.matmul(dU))
    op = dA.mH if adjoint else dA
    rhs = dB - (op.matmul(X) if left else X.matmul(op))
    return torch.linalg.lu_solve(LU, pivots, rhs, left=left, adjoint=adjoint)


# -- Householder products ------------------------------------------------------------------------

def _reflector(input, tau, i):
    """v_i (1 at position i, input's column i below it) and H_i = I - tau_i v_i v_i^H."""
    m = input.shape[-2]
    column = input[..., :, i]
    head = torch.zeros_like(column.narrow(-1, 0, i))
    v = torch.cat([head, torch.ones_like(column.narrow(-1, i, 1)), column.narrow(-1, i + 1,
                                                                                m - i - 1)], -1)
    eye = torch.eye(m, dtype=input.dtype, device=input.device)
    H = eye - tau[..., i, None, None] * v.unsqueeze(-1).matmul(v.conj().unsqueeze(-2))
    return v, H


def _householder_pieces(input, tau):
    k = tau.shape[-1]
    return [_reflector(input, tau, i) for i in range(k)]


def _reflector_grads(G, v, t, i, m):
    """From G = dL/dH_i: the gradients of tau_i and of v_i's free entries (below i)."""
    Gv, GHv = G.matmul(v.unsqueeze(-1)).squeeze(-1), G.mH.matmul(v.unsqueeze(-1)).squeeze(-1)
    g_tau = -(v.conj().unsqueeze(-2).matmul(Gv.unsqueeze(-1))).squeeze(-1).squeeze(-1)
    g_v = -t.conj().unsqueeze(-1) * Gv - t.unsqueeze(-1) * GHv
    return g_tau, g_v.narrow(-1, i + 1, m - i - 1)


def _householder_backward_full(gQ, pieces, input, tau, columns):
    """Gradients of (input, tau) from gQ, the gradient of Q = H_1 ... H_k restricted to
    its first ``columns`` columns."""
    m, n = input.shape[-2], input.shape[-1]
    k = tau.shape[-1]
    eye = torch.eye(m, dtype=input.dtype, device=input.device)
    rights = [None] * k                 # H_{i+1} ... H_k E
    acc = eye.narrow(-1, 0, columns).expand(list(input.shape[:-2]) + [m, columns])
    for i in reversed(range(k)):
        rights[i] = acc
        acc = pieces[i][1].matmul(acc)
    left = eye.expand(list(input.shape[:-2]) + [m, m])
    g_input = torch.zeros_like(input)
    g_tau = []
    columns_grads = []
    for i in range(k):
        v, H = pieces[i]
        G = left.mH.matmul(gQ).matmul(rights[i].mH)
        gt, gv = _reflector_grads(G, v, tau[..., i], i, m)
        g_tau.append(gt)
        columns_grads.append(torch.cat([torch.zeros_like(v.narrow(-1, 0, i + 1)), gv], -1))
        left = left.matmul(H)
    if k:
        g_cols = torch.stack(columns_grads, -1)
        g_input = torch.cat([g_cols, torch.zeros_like(input.narrow(-1, k, n - k))], -1)
    return g_input, torch.stack(g_tau, -1) if k else torch.zeros_like(tau)


def householder_product_backward(grad, result, input, tau):
    pieces = _householder_pieces(input, tau)
    return _householder_backward_full(grad, pieces, input, tau, input.shape[-1])


def householder_product_jvp(dV, dtau, Q, V, tau):
    """dQ = sum_i H_1..H_{i-1} dH_i H_{i+1}..H_k E."""
    m, n = V.shape[-2], V.shape[-1]
    k = tau.shape[-1]
    pieces = _householder_pieces(V, tau)
    eye = torch.eye(m, dtype=V.dtype, device=V.device)
    total = torch.zeros_like(Q)
    for i in range(k):
        v, H = pieces[i]
        dv = torch.cat([torch.zeros_like(v.narrow(-1, 0, i + 1)), dV[..., :, i].narrow(
            -1, i + 1, m - i - 1)], -1)
        vv = v.unsqueeze(-1).matmul(v.conj().unsqueeze(-2))
        dH = -(dtau[..., i, None, None] * vv + tau[..., i, None, None] * (
            dv.unsqueeze(-1).matmul(v.conj().unsqueeze(-2))
            + v.unsqueeze(-1).matmul(dv.conj().unsqueeze(-2))))
        left = eye
        for j in range(i):
            left = left.matmul(pieces[j][1])
        right = eye.narrow(-1, 0, n)
        for j in reversed(range(i + 1, k)):
            right = pieces[j][1].matmul(right)
        total = total + left.matmul(dH).matmul(right)
    return total


def ormqr_backward(grad, result, self, input2, input3, left, transpose, grad_input_mask):
    """op(Q) C or C op(Q) with Q the full (m, m) product of the reflectors in (self, tau)."""
    g_c = torch.ormqr(self, input2, grad, left, not transpose) if grad_input_mask[2] else None
    g_input = g_tau = None
    if grad_input_mask[0] or grad_input_mask[1]:
        C = input3
        if left:
            gQ = C.matmul(grad.mH) if transpose else grad.matmul(C.mH)
        else:
            gQ = grad.mH.matmul(C) if transpose else C.mH.matmul(grad)
        m = self.shape[-2]
        k = input2.shape[-1]
        reflectors = self.narrow(-1, 0, k)
        pieces = _householder_pieces(reflectors, input2)
        g_input, g_tau = _householder_backward_full(gQ, pieces, reflectors, input2, m)
        g_input = torch.cat([g_input, torch.zeros_like(self.narrow(-1, k, self.shape[-1] - k))],
                            -1)
    return g_input, g_tau, g_c


# -- least squares, pseudo-inverse, matrix exponential -------------------------------------------

def pinv_backward(grad, pinvA, A):
    """The derivative of the pseudo-inverse P = A^+ (Golub and Pereyra):
        gA = -P^H G P^H + (I - A P) G^H P P^H + P^H P G^H (I - P A)."""
    P, Ph, Gh = pinvA, pinvA.mH, grad.mH
    residual_left = Gh - A.matmul(P.matmul(Gh))         # (I - A P) G^H
    residual_right = Gh - Gh.matmul(P.matmul(A))        # G^H (I - P A)
    return -Ph.matmul(grad).matmul(Ph) + residual_left.matmul(P.matmul(Ph)) + \
        Ph.matmul(P).matmul(residual_right)


def pinv_jvp(A, pinvA, dA):
    """dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P."""
    P, Ph = pinvA, pinvA.mH
    dAh = dA.mH
    return -P.matmul(dA).matmul(P) + P.matmul(Ph).matmul(dAh - dAh.matmul(A).matmul(P)) + \
        (dAh - P.matmul(A.matmul(dAh))).matmul(Ph).matmul(P)


def _lstsq_vector(A, B):
    return B.dim() == A.dim() - 1


def linalg_lstsq_backward(gX, gL, A, B, X, grad_input_mask):
    """X = A^+ B: gA through the pseudo-inverse, gB = A^+H gX; the residuals
    r = ||A X - B||^2 (per column) add 2 (A X - B) diag(gL) X^H and -2 (A X - B) gL."""
    vector = _lstsq_vector(A, B)
    gX_ = gX.unsqueeze(-1) if vector else gX
    X_ = X.unsqueeze(-1) if vector else X
    B_ = B.unsqueeze(-1) if vector else B
    pinvA = torch.linalg.pinv(A)
    gA = pinv_backward(gX_.matmul(B_.mH), pinvA, A) if grad_input_mask[0] else None
    gB = pinvA.mH.matmul(gX_) if grad_input_mask[1] else None
    if gL is not None and gL.numel() and gL.shape[-1] == X_.shape[-1]:
        R = A.matmul(X_) - B_
        weighted = 2 * R * gL.unsqueeze(-2).to(R.dtype)
        if gA is not None:
            gA = gA + weighted.matmul(X_.mH)
        if gB is not None:
            gB = gB - weighted
    if gB is not None and vector:
        gB = gB.squeeze(-1)
    return gA, gB


def linalg_lstsq_solution_jvp(A, B, dA, dB):
    """dX = dA^+ B + A^+ dB."""
    vector = _lstsq_vector(A, B)
    B_ = B.unsqueeze(-1) if vector else B
    dB_ = dB.unsqueeze(-1) if vector else dB
    pinvA = torch.linalg.pinv(A)
    dX = pinv_jvp(A, pinvA, dA).matmul(B_) + pinvA.matmul(dB_)
    return dX.squeeze(-1) if vector else dX


def linalg_lstsq_residuals_jvp(A, B, dA, dB, X, L):
    """d ||A X - B||^2 = 2 Re((A X - B)^H (dA X - dB)) per column (A^H (A X - B) = 0)."""
    if L.numel() == 0:
        return torch.zeros_like(L)
    vector = _lstsq_vector(A, B)
    X_ = X.unsqueeze(-1) if vector else X
    B_ = B.unsqueeze(-1) if vector else B
    dB_ = dB.unsqueeze(-1) if vector else dB
    R = A.matmul(X_) - B_
    inner = R.conj() * (dA.matmul(X_) - dB_)
    inner = torch.real(inner) if inner.is_complex() else inner
    return 2 * inner.sum(-2)


def linalg_matrix_exp_differential(self, grad, adjoint):
    """The Fréchet derivative of exp at A applied to ``grad`` (its adjoint with
    ``adjoint``): the upper right block of exp([[A, G], [0, A]])."""
    n = self.shape[-1]
    A = self.mH if adjoint else self
    block = torch.cat([torch.cat([A, grad], -1), torch.cat([torch.zeros_like(A), A], -1)], -2)
    return torch.linalg.matrix_exp(block).narrow(-2, 0, n).narrow(-1, n, n)
