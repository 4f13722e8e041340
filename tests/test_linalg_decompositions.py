"""torch.linalg's decompositions, solves and inverses, and the older spellings,
against real PyTorch: values, dtypes, shapes and strides over batched and
non-contiguous inputs (hypothesis); factors defined up to a sign or phase
(eigenvectors, singular vectors) compared through gauge-invariant quantities;
float64 gradcheck and gradients equal to PyTorch's; forward-mode tangents;
errors (LinAlgError and PyTorch's messages, the ``_ex`` variants' info); the
torch.linalg namespace and the Tensor methods."""
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import glasstorch

from .helpers import assert_same, to_numpy

torch = pytest.importorskip("torch")

TOL = {"float32": (2e-4, 2e-4), "float64": (1e-9, 1e-9), "complex64": (2e-4, 2e-4),
       "complex128": (1e-9, 1e-9)}
DTYPES = st.sampled_from(["float32", "float64", "complex64", "complex128"])
SINGULAR = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]])
NOT_PD = np.array([[1.0, 2.0], [2.0, 1.0]])
LONG = np.ones((3, 3), np.int64)
HALF = np.eye(3, dtype=np.float16)


def _random(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _pair(array, noncontiguous=False):
    """The same values in both libraries; optionally a transposed (non-contiguous) view."""
    if noncontiguous:
        array = np.ascontiguousarray(np.swapaxes(array, -1, -2))
        return glasstorch.tensor(array).mT, torch.tensor(array).mT
    return glasstorch.tensor(array), torch.tensor(array)


def _well_conditioned(rng, shape, dtype):
    return _random(rng, shape, dtype) + shape[-1] * np.eye(shape[-1], dtype=dtype)


def _spd(rng, shape, dtype):
    a = _random(rng, shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _same(ours, theirs, dtype, strides=True):
    atol, rtol = TOL[dtype]
    assert_same(ours, theirs, atol=atol, rtol=rtol, strides=strides)


@st.composite
def batched(draw, square=True):
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    n = draw(st.integers(1, 5))
    m = n if square else draw(st.integers(1, 5))
    return tuple(batch), m, n, draw(DTYPES), draw(st.booleans()), draw(st.integers(0, 2**16))


# -- values against PyTorch ---------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(batched())
def test_square_ops_match_pytorch(case):
    batch, n, _, dtype, noncontiguous, seed = case
    rng = np.random.default_rng(seed)
    g, t = _pair(_well_conditioned(rng, batch + (n, n), dtype), noncontiguous)
    gb, tb = _pair(_random(rng, batch + (n, 2), dtype))
    for name, fn in [("det", lambda L, a: L.linalg.det(a)),
                     ("_linalg_det", lambda L, a: L.ops.aten._linalg_det(a)),
                     ("_linalg_slogdet", lambda L, a: L.ops.aten._linalg_slogdet(a)),
                     ("inv_ex", lambda L, a: L.linalg.inv_ex(a)),
                     ("lu_factor_ex", lambda L, a: L.linalg.lu_factor_ex(a)),
                     ("lu", lambda L, a: L.linalg.lu(a)),
                     ("matrix_exp", lambda L, a: L.linalg.matrix_exp(a / n)),
                     ("matrix_power", lambda L, a: L.linalg.matrix_power(a, -2)),
                     ("triangular", lambda L, a: L.linalg.solve_triangular(a.triu(), a, upper=True))]:
        _same(fn(glasstorch, g), fn(torch, t), dtype)
    _same(glasstorch.ops.aten._linalg_solve_ex(g, gb), torch.ops.aten._linalg_solve_ex(t, tb), dtype)
    _same(glasstorch.linalg.solve(g, gb.mT, left=False), torch.linalg.solve(t, tb.mT, left=False),
          dtype)
    _same(glasstorch.linalg.solve(g, gb[..., 0]), torch.linalg.solve(t, tb[..., 0]), dtype)
    LU, piv = glasstorch.linalg.lu_factor(g)
    tLU, tpiv = torch.linalg.lu_factor(t)
    for left, adjoint in [(True, False), (True, True), (False, False)]:
        rhs_g, rhs_t = (gb, tb) if left else (gb.mT, tb.mT)
        _same(glasstorch.linalg.lu_solve(LU, piv, rhs_g, left=left, adjoint=adjoint),
              torch.linalg.lu_solve(tLU, tpiv, rhs_t, left=left, adjoint=adjoint), dtype,
              strides=not (dtype.startswith("complex") and not left))
    _same(glasstorch.lu_unpack(LU, piv), torch.lu_unpack(tLU, tpiv), dtype)


@settings(max_examples=15, deadline=None)
@given(batched())
def test_hermitian_ops_match_pytorch(case):
    batch, n, _, dtype, _, seed = case
    rng = np.random.default_rng(seed)
    g, t = _pair(_spd(rng, batch + (n, n), dtype))
    gb, tb = _pair(_random(rng, batch + (n, 3), dtype))
    for upper in (False, True):
        _same(glasstorch.linalg.cholesky_ex(g, upper=upper), torch.linalg.cholesky_ex(t, upper=upper),
              dtype)
        L, tL = glasstorch.linalg.cholesky(g, upper=upper), torch.linalg.cholesky(t, upper=upper)
        _same(glasstorch.cholesky_inverse(L, upper=upper), torch.cholesky_inverse(tL, upper=upper),
              dtype)
        _same(glasstorch.cholesky_solve(gb, L, upper=upper), torch.cholesky_solve(tb, tL, upper=upper),
              dtype)
    _same(glasstorch.linalg.eigvalsh(g), torch.linalg.eigvalsh(t), dtype)
    # eigenvectors: up to a phase per column, so compare V diag(w) V^H and |V^H A V|
    w, V = glasstorch.linalg.eigh(g, UPLO="U")
    tw, tV = torch.linalg.eigh(t, UPLO="U")
    _same(w, tw, dtype)
    assert tuple(V.stride()) == tuple(tV.stride())
    recon = V @ glasstorch.diag_embed(w.to(V.dtype)) @ V.mH
    _same(recon, t, dtype, strides=False)


@settings(max_examples=15, deadline=None)
@given(batched(square=False))
def test_rectangular_ops_match_pytorch(case):
    batch, m, n, dtype, noncontiguous, seed = case
    rng = np.random.default_rng(seed)
    g, t = _pair(_random(rng, batch + (m, n), dtype), noncontiguous)
    for mode in ("reduced", "complete", "r"):
        _same(glasstorch.linalg.qr(g, mode=mode), torch.linalg.qr(t, mode=mode), dtype)
    _same(glasstorch.geqrf(g), torch.geqrf(t), dtype)
    _same(glasstorch.linalg.svdvals(g), torch.linalg.svdvals(t), dtype)
    _same(glasstorch.linalg.lu_factor_ex(g), torch.linalg.lu_factor_ex(t), dtype)
    _same(glasstorch.linalg.lu(g), torch.linalg.lu(t), dtype)
    _same(glasstorch.linalg.pinv(g), torch.linalg.pinv(t), dtype)
    _same(glasstorch.linalg.matrix_rank(g), torch.linalg.matrix_rank(t), dtype)
    # singular vectors: up to a phase per pair, so compare U diag(S) V^H and its strides
    for full in (True, False):
        U, S, Vh = glasstorch.linalg.svd(g, full_matrices=full)
        tU, tS, tVh = torch.linalg.svd(t, full_matrices=full)
        k = min(m, n)
        _same(S, tS, dtype)
        assert (U.shape, U.stride(), Vh.shape, Vh.stride()) == \
            (tU.shape, tU.stride(), tVh.shape, tVh.stride())
        recon = (U[..., :k] * S.to(U.dtype).unsqueeze(-2)) @ Vh[..., :k, :]
        _same(recon, t, dtype, strides=False)


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 3), (2, 4, 3)])
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_lstsq_matches_pytorch(driver, shape, dtype):
    if driver == "gels" and shape[-2] < shape[-1]:
        shape = shape[:-2] + (shape[-1], shape[-2])
    rng = np.random.default_rng(3)
    g, t = _pair(_well_conditioned(rng, shape, dtype) if shape[-1] == shape[-2] else
                 _random(rng, shape, dtype))
    gb, tb = _pair(_random(rng, shape[:-1] + (2,), dtype))
    _same(glasstorch.linalg.lstsq(g, gb, driver=driver), torch.linalg.lstsq(t, tb, driver=driver),
          dtype)
    _same(glasstorch.linalg.lstsq(g, gb[..., 0], driver=driver),
          torch.linalg.lstsq(t, tb[..., 0], driver=driver), dtype)


def test_eig_matches_pytorch_up_to_order_and_phase():
    rng = np.random.default_rng(4)
    for dtype in ("float64", "complex64"):
        g, t = _pair(_random(rng, (2, 4, 4), dtype))
        w, V = glasstorch.linalg.eig(g)
        tw, tV = torch.linalg.eig(t)
        assert (w.dtype, V.dtype, V.stride()) == (w.dtype, V.dtype, tV.stride()) and \
            str(w.dtype) == str(tw.dtype)
        atol = TOL[dtype][0] * 10
        order = np.lexsort((to_numpy(w).imag.round(4), to_numpy(w).real.round(4)))
        torder = np.lexsort((to_numpy(tw).imag.round(4), to_numpy(tw).real.round(4)))
        np.testing.assert_allclose(np.take_along_axis(to_numpy(w), order, -1),
                                   np.take_along_axis(to_numpy(tw), torder, -1), atol=atol)
        # A V = V diag(w), unit columns
        residual = to_numpy(g.to(V.dtype) @ V - V * w.unsqueeze(-2))
        np.testing.assert_allclose(residual, 0, atol=atol * 10)
        _same(glasstorch.linalg.eigvals(g).abs().sort().values,
              torch.linalg.eigvals(t).abs().sort().values, dtype, strides=False)


def test_ldl_householder_ormqr_match_pytorch():
    rng = np.random.default_rng(5)
    for dtype, hermitian in [("float64", False), ("complex128", True), ("complex128", False)]:
        a = _random(rng, (2, 4, 4), dtype)
        sym = a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))
        g, t = _pair(sym)
        _same(glasstorch.linalg.ldl_factor_ex(g, hermitian=hermitian),
              torch.linalg.ldl_factor_ex(t, hermitian=hermitian), dtype)
        LD, piv = glasstorch.linalg.ldl_factor(g, hermitian=hermitian)
        tLD, tpiv = torch.linalg.ldl_factor(t, hermitian=hermitian)
        gb, tb = _pair(_random(rng, (4, 2), dtype))
        _same(glasstorch.linalg.ldl_solve(LD, piv, gb, hermitian=hermitian),
              torch.linalg.ldl_solve(tLD, tpiv, tb, hermitian=hermitian), dtype)
    g, t = _pair(_random(rng, (2, 5, 3), "float64"))
    tau_g, tau_t = _pair(_random(rng, (2, 3), "float64") / 3)
    _same(glasstorch.linalg.householder_product(g, tau_g), torch.linalg.householder_product(t, tau_t),
          "float64")
    _same(glasstorch.orgqr(g, tau_g), torch.orgqr(t, tau_t), "float64")
    c_g, c_t = _pair(_random(rng, (2, 5, 2), "float64"))
    for left, transpose in [(True, False), (True, True)]:
        _same(glasstorch.ormqr(g, tau_g, c_g, left, transpose), torch.ormqr(t, tau_t, c_t, left, transpose),
              "float64")
    _same(glasstorch.ormqr(g, tau_g, c_g.mT, False, False), torch.ormqr(t, tau_t, c_t.mT, False, False),
          "float64")


def test_composites_match_pytorch():
    rng = np.random.default_rng(6)
    a = _well_conditioned(rng, (3, 3), "float64")
    g, t = _pair(a)
    for p in (None, 2, -2, 1, -1, float("inf"), -float("inf"), "fro", "nuc"):
        _same(glasstorch.linalg.cond(g, p), torch.linalg.cond(t, p), "float64")
    singular = np.zeros((3, 3))
    for p in (None, 1, "fro"):
        _same(glasstorch.linalg.cond(glasstorch.tensor(singular), p),
              torch.linalg.cond(torch.tensor(singular), p), "float64")
    mats = [_random(rng, s, "float64") for s in [(4,), (4, 6), (6, 2), (2, 5), (5,)]]
    _same(glasstorch.linalg.multi_dot([glasstorch.tensor(m) for m in mats]),
          torch.linalg.multi_dot([torch.tensor(m) for m in mats]), "float64")
    _same(glasstorch.linalg.multi_dot([glasstorch.tensor(m) for m in mats[1:4]]),
          torch.linalg.multi_dot([torch.tensor(m) for m in mats[1:4]]), "float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(glasstorch.chain_matmul(*[glasstorch.tensor(m) for m in mats[1:4]]),
              torch.chain_matmul(*[torch.tensor(m) for m in mats[1:4]]), "float64")
    x = _random(rng, (2, 4), "float64")
    _same(glasstorch.linalg.vander(glasstorch.tensor(x), N=3), torch.linalg.vander(torch.tensor(x), N=3),
          "float64")
    xi = np.arange(4)
    _same(glasstorch.linalg.vander(glasstorch.tensor(xi)), torch.linalg.vander(torch.tensor(xi)),
          "float64")
    c = _random(rng, (3, 4), "complex128")
    _same(glasstorch.linalg.vecdot(*_pair(c)[:1], glasstorch.tensor(c[0])),
          torch.linalg.vecdot(torch.tensor(c), torch.tensor(c[0])), "complex128")
    big = _well_conditioned(rng, (6, 6), "float64")
    _same(glasstorch.linalg.tensorinv(glasstorch.tensor(big).reshape(2, 3, 6), ind=2),
          torch.linalg.tensorinv(torch.tensor(big).reshape(2, 3, 6), ind=2), "float64")
    rhs = _random(rng, (2, 3), "float64")
    _same(glasstorch.linalg.tensorsolve(glasstorch.tensor(big).reshape(2, 3, 6), glasstorch.tensor(rhs)),
          torch.linalg.tensorsolve(torch.tensor(big).reshape(2, 3, 6), torch.tensor(rhs)), "float64")
    ints = rng.integers(-2, 3, size=(3, 3))
    _same(glasstorch.matrix_power(glasstorch.tensor(ints), 4), torch.matrix_power(torch.tensor(ints), 4),
          "float64")
    _same(glasstorch.linalg.matrix_power(g, 0), torch.linalg.matrix_power(t, 0), "float64")
    _same(glasstorch.logdet(g), torch.logdet(t), "float64")
    _same(glasstorch.pinverse(g), torch.pinverse(t), "float64")
    _same(glasstorch.linalg.pinv(g @ g.mT, hermitian=True), torch.linalg.pinv(t @ t.mT, hermitian=True),
          "float64")
    _same(glasstorch.linalg.matrix_rank(g, atol=0.5, rtol=0.1),
          torch.linalg.matrix_rank(t, atol=0.5, rtol=0.1), "float64")


# -- the older spellings and Tensor methods ------------------------------------------------------

def test_older_spellings_and_methods_match_pytorch():
    rng = np.random.default_rng(7)
    a = _well_conditioned(rng, (2, 3, 3), "float64")
    spd = _spd(rng, (3, 3), "float64")
    b = _random(rng, (2, 3, 2), "float64")
    ga, ta = _pair(a)
    gs, ts = _pair(spd)
    gb, tb = _pair(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = [
            (ga.det(), ta.det()), (ga.logdet(), ta.logdet()), (ga.slogdet(), ta.slogdet()),
            (ga.inverse(), ta.inverse()), (gs.cholesky(), ts.cholesky()),
            (gs.cholesky(upper=True), ts.cholesky(upper=True)),
            (ga.qr(), ta.qr()), (ga.qr(some=False), ta.qr(some=False)),
            (ga.pinverse(), ta.pinverse()), (ga.matrix_power(3), ta.matrix_power(3)),
            (ga.matrix_exp(), ta.matrix_exp()), (ga.geqrf(), ta.geqrf()),
            (gb.triangular_solve(ga.triu()), tb.triangular_solve(ta.triu())),
            (gb.cholesky_solve(gs.cholesky()), tb.cholesky_solve(ts.cholesky())),
            (gs.cholesky().cholesky_inverse(), ts.cholesky().cholesky_inverse()),
            (glasstorch.svd(ga)[1], torch.svd(ta)[1]),
            (glasstorch.svd(ga, compute_uv=False), torch.svd(ta, compute_uv=False)),
            (glasstorch.lu(ga), torch.lu(ta)), (glasstorch.lu(ga, get_infos=True),
                                                torch.lu(ta, get_infos=True)),
        ]
        LU, piv = glasstorch.linalg.lu_factor(ga)
        tLU, tpiv = torch.linalg.lu_factor(ta)
        pairs.append((gb.lu_solve(LU, piv), tb.lu_solve(tLU, tpiv)))
        pairs.append((glasstorch.lu_solve(gb, LU, piv), torch.lu_solve(tb, tLU, tpiv)))
        geq, tau = glasstorch.geqrf(ga)
        tgeq, ttau = torch.geqrf(ta)
        pairs.append((geq.orgqr(tau), tgeq.orgqr(ttau)))
        pairs.append((geq.ormqr(tau, gb), tgeq.ormqr(ttau, tb)))
    for ours, theirs in pairs:
        _same(ours, theirs, "float64")
    U, S, V = glasstorch.svd(ga)
    tU, tS, tV = torch.svd(ta)
    assert V.stride() == tV.stride()
    _same(U @ glasstorch.diag_embed(S) @ V.mT, ta, "float64", strides=False)


def test_deprecation_warnings_as_pytorch():
    a = glasstorch.eye(3, dtype=glasstorch.float64)
    for fn, text in [(lambda: glasstorch.cholesky(a), "torch.cholesky is deprecated in favor of "
                      "torch.linalg.cholesky"),
                     (lambda: glasstorch.triangular_solve(a, a), "torch.triangular_solve is "
                      "deprecated in favor of torch.linalg.solve_triangular"),
                     (lambda: glasstorch.chain_matmul(a, a), "torch.chain_matmul is deprecated")]:
        from glasstorch._ops.kernels import linalg as kernels
        kernels._CHOLESKY_WARNED.clear()
        kernels._TRIANGULAR_WARNED.clear()
        kernels._CHAIN_WARNED.clear()
        with pytest.warns(UserWarning, match=text):
            fn()


# -- gradients --------------------------------------------------------------------------------------

def _hermitian(x):
    return (x + x.mH) / 2


GRAD_CASES = {
    "det": (lambda L, a: L.linalg.det(a), [(2, 3, 3)]),
    "slogdet": (lambda L, a: L.linalg.slogdet(a)[1], [(3, 3)]),
    "inv": (lambda L, a: L.linalg.inv(a), [(2, 3, 3)]),
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [(2, 3, 3), (3, 2)]),
    "solve_right_vector": (lambda L, a, b: L.linalg.solve(a, b, left=False), [(3, 3), (2, 3)]),
    "cholesky": (lambda L, a: L.linalg.cholesky(_hermitian(a) + 3 * L.eye(3, dtype=a.dtype),
                                                upper=True), [(3, 3)]),
    "cholesky_old": (lambda L, a: L.cholesky(_hermitian(a) + 3 * L.eye(3, dtype=a.dtype)), [(3, 3)]),
    "cholesky_inverse": (lambda L, a: L.cholesky_inverse(a.tril() + 3 * L.eye(3, dtype=a.dtype)),
                         [(3, 3)]),
    "cholesky_solve": (lambda L, b, a: L.cholesky_solve(b, a.triu() + 3 * L.eye(3, dtype=a.dtype),
                                                        upper=True), [(3, 2), (3, 3)]),
    "qr_tall": (lambda L, a: L.linalg.qr(a), [(2, 4, 3)]),
    "qr_wide": (lambda L, a: L.linalg.qr(a), [(3, 5)]),
    "eigh": (lambda L, a: (lambda w, v: (w, v.abs()))(*L.linalg.eigh(_hermitian(a))), [(3, 3)]),
    "eig": (lambda L, a: (lambda w, v: (w.abs(), v.abs()))(*L.linalg.eig(a)), [(3, 3)]),
    "svd": (lambda L, a: (lambda u, s, vh: (s, u @ vh))(*L.linalg.svd(a, full_matrices=False)),
            [(2, 4, 3)]),
    "svd_full_wide": (lambda L, a: (lambda u, s, vh: (s, u @ vh[..., :3, :]))(*L.linalg.svd(a)),
                      [(3, 5)]),
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a)[0], [(4, 3)]),
    "lu": (lambda L, a: L.linalg.lu(a)[1:], [(3, 4)]),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, adjoint=True),
                 [(3, 3), (3, 2)]),
    "lu_solve_right": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, left=False),
                       [(3, 3), (2, 3)]),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(
        a + 3 * L.eye(3, dtype=a.dtype), b, upper=False), [(3, 3), (3, 2)]),
    "triangular_solve": (lambda L, b, a: L.triangular_solve(b, a + 3 * L.eye(3, dtype=a.dtype),
                                                            transpose=True), [(3, 2), (3, 3)]),
    "householder_product": (lambda L, a, t: L.linalg.householder_product(a, t / 3),
                            [(4, 3), (2,)]),
    "ormqr": (lambda L, a, t, c: L.ormqr(a, t / 3, c, False, True), [(4, 3), (3,), (2, 4)]),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b, driver="gelsd")[:2], [(5, 3), (5, 2)]),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a), [(2, 3, 3)]),
    "pinv": (lambda L, a: L.linalg.pinv(a), [(4, 3)]),
    "matrix_power": (lambda L, a: L.linalg.matrix_power(a, -2), [(3, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_pytorch_and_gradcheck(name):
    fn, shapes = GRAD_CASES[name]
    rng = np.random.default_rng(8)
    arrays = [_random(rng, s, "float64") + (2 * np.eye(s[-1]) if len(s) > 1 and s[-1] == s[-2]
                                            else 0) for s in shapes]
    results = {}
    for lib in (glasstorch, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        outs = fn(lib, *xs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        seeds = [lib.tensor(np.random.default_rng(9).standard_normal(tuple(o.shape))) for o in outs]
        results[lib] = (outs, lib.autograd.grad(outs, xs, seeds))
    (g_out, g_grads), (t_out, t_grads) = results[glasstorch], results[torch]
    for o, t in zip(g_out, t_out):
        assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
    for g, t in zip(g_grads, t_grads):
        np.testing.assert_allclose(to_numpy(g), to_numpy(t), atol=1e-7, rtol=1e-6)
    inputs = [glasstorch.tensor(a, requires_grad=True) for a in arrays]
    assert glasstorch.autograd.gradcheck(lambda *xs: fn(glasstorch, *xs), inputs, eps=1e-6,
                                         atol=1e-5, rtol=1e-3)


COMPLEX_GRAD_CASES = {
    "det": lambda L, a: L.linalg.det(a),
    "slogdet": lambda L, a: L.linalg.slogdet(a),
    "inv": lambda L, a: L.linalg.inv(a),
    "cholesky": lambda L, a: L.linalg.cholesky(a @ a.mH + 3 * L.eye(3, dtype=a.dtype)),
    "qr": lambda L, a: L.linalg.qr(a),
    "svd": lambda L, a: (lambda u, s, vh: (s, u @ vh))(*L.linalg.svd(a)),
    "eigh": lambda L, a: (lambda w, v: (w, (v * v[..., :1, :].conj()).abs()))(
        *L.linalg.eigh(a + a.mH)),
    "matrix_exp": lambda L, a: L.linalg.matrix_exp(a),
    "lu_solve": lambda L, a: L.linalg.lu_solve(*L.linalg.lu_factor(a), a.mH, adjoint=True),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_GRAD_CASES))
def test_complex_gradients_match_pytorch(name):
    fn = COMPLEX_GRAD_CASES[name]
    a = _well_conditioned(np.random.default_rng(10), (3, 3), "complex128")
    grads = []
    for lib in (glasstorch, torch):
        x = lib.tensor(a, requires_grad=True)
        outs = fn(lib, x)
        outs = outs if isinstance(outs, tuple) else (outs,)
        loss = sum((o.abs() ** 2 if o.is_complex() else o).sum() for o in outs)
        grads.append(lib.autograd.grad(loss, x)[0])
    np.testing.assert_allclose(to_numpy(grads[0]), to_numpy(grads[1]), atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("op,message", [
    ("svd", "svd_backward: The singular vectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this phase term, "
            "making it ill-defined."),
    ("eigh", "linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
             "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
             "so it is ill-defined."),
    ("eig", "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
            "so it is ill-defined.")])
def test_phase_dependent_losses_raise_as_pytorch(op, message):
    a = _random(np.random.default_rng(11), (3, 3), "complex128")
    for lib in (glasstorch, torch):
        x = lib.tensor(a + np.conj(a.T), requires_grad=True)
        vectors = {"svd": lambda: lib.linalg.svd(x)[0], "eigh": lambda: lib.linalg.eigh(x)[1],
                   "eig": lambda: lib.linalg.eig(x)[1]}[op]()
        with pytest.raises(RuntimeError, match=re.escape(message)):
            lib.autograd.grad(vectors.real.sum(), x)


def test_qr_derivative_errors_as_pytorch():
    a = _random(np.random.default_rng(12), (4, 3), "float64")
    for mode, message in [("r", "The derivative of linalg.qr depends on Q"),
                          ("complete", "The QR decomposition is not differentiable when "
                                       "mode='complete' and nrows > ncols.")]:
        for lib in (glasstorch, torch):
            x = lib.tensor(a, requires_grad=True)
            with pytest.raises(RuntimeError, match=message):
                lib.autograd.grad(lib.linalg.qr(x, mode=mode)[1].sum(), x)


def test_det_gradient_of_singular_matrices_as_pytorch():
    """First derivatives use the saved LU (a zero for an exactly singular matrix);
    with create_graph the cofactors come from the SVD.  (A matrix both LAPACK builds
    factor to an exact zero pivot.)"""
    a = SINGULAR
    for create_graph in (False, True):
        grads = []
        for lib in (glasstorch, torch):
            x = lib.tensor(a, requires_grad=True)
            grads.append(lib.autograd.grad(lib.linalg.det(x), x, create_graph=create_graph)[0])
        np.testing.assert_allclose(to_numpy(grads[0]), to_numpy(grads[1]), atol=1e-10)


def test_second_derivatives_of_det_and_inv():
    a = _well_conditioned(np.random.default_rng(13), (3, 3), "float64")
    x = glasstorch.tensor(a, requires_grad=True)
    assert glasstorch.autograd.gradgradcheck(lambda t: glasstorch.linalg.det(t), (x,))
    assert glasstorch.autograd.gradgradcheck(lambda t: glasstorch.linalg.inv(t), (x,))


FORWARD_CASES = {
    "det": (lambda L, a: L.linalg.det(a), [(2, 3, 3)]),
    "slogdet": (lambda L, a: L.linalg.slogdet(a), [(3, 3)]),
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [(3, 3), (3, 2)]),
    "cholesky": (lambda L, a: L.linalg.cholesky(a @ a.mT + 3 * L.eye(3, dtype=a.dtype)), [(3, 3)]),
    "qr": (lambda L, a: L.linalg.qr(a), [(4, 3)]),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a @ a.mT), [(3, 3)]),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), [(4, 3)]),
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a)[0], [(3, 4)]),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), [(3, 3), (3, 2)]),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(
        a + 3 * L.eye(3, dtype=a.dtype), b, upper=True), [(3, 3), (3, 2)]),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a), [(3, 3)]),
    "pinv": (lambda L, a: L.linalg.pinv(a), [(4, 3)]),
    "householder_product": (lambda L, a, t: L.linalg.householder_product(a, t / 3),
                            [(4, 3), (3,)]),
}


@pytest.mark.parametrize("name", sorted(FORWARD_CASES))
def test_forward_mode_matches_pytorch(name):
    fn, shapes = FORWARD_CASES[name]
    rng = np.random.default_rng(14)
    primals = [_random(rng, s, "float64") + (2 * np.eye(s[-1]) if len(s) > 1 and s[-1] == s[-2]
                                             else 0) for s in shapes]
    tangents = [_random(rng, s, "float64") for s in shapes]
    results = []
    for lib in (glasstorch, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(p), lib.tensor(t)) for p, t in zip(primals, tangents)]
            outs = fn(lib, *duals)
            outs = outs if isinstance(outs, tuple) else (outs,)
            results.append([fw.unpack_dual(o).tangent for o in outs])
    for g, t in zip(*results):
        np.testing.assert_allclose(to_numpy(g), to_numpy(t), atol=1e-7, rtol=1e-6)


# -- errors ------------------------------------------------------------------------------------------

def _same_error(fn, *arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(torch, *[torch.tensor(a) for a in arrays])
        except Exception as e:          # noqa: BLE001 - the oracle's error, whatever it is
            expected = e
        else:
            raise AssertionError("PyTorch raised nothing")
        with pytest.raises(Exception) as caught:
            fn(glasstorch, *[glasstorch.tensor(a) for a in arrays])
    assert type(caught.value).__name__ == type(expected).__name__
    assert str(caught.value).split("\n")[0] == str(expected).split("\n")[0]




@pytest.mark.parametrize("fn,arrays", [
    (lambda L, a: L.linalg.inv(a), [SINGULAR]),
    (lambda L, a: L.linalg.inv(a), [np.stack([np.eye(3), SINGULAR])]),
    (lambda L, a: L.inverse(a), [SINGULAR]),
    (lambda L, a: L.linalg.inv_ex(a, check_errors=True), [SINGULAR]),
    (lambda L, a: L.linalg.solve(a, a), [np.stack([SINGULAR, np.eye(3)])]),
    (lambda L, a: L.linalg.cholesky(a), [NOT_PD]),
    (lambda L, a: L.linalg.cholesky(a), [np.stack([np.eye(2), NOT_PD])]),
    (lambda L, a: L.linalg.cholesky_ex(a, check_errors=True), [NOT_PD]),
    (lambda L, a: L.cholesky(a), [NOT_PD]),
    (lambda L, a: L.linalg.lu_factor(a), [SINGULAR]),
    (lambda L, a: L.linalg.svd(a), [np.full((3, 3), np.nan)]),
    (lambda L, a: L.linalg.inv(a), [LONG]),
    (lambda L, a: L.linalg.inv(a), [HALF]),
    (lambda L, a: L.linalg.det(a), [HALF]),
    (lambda L, a: L.linalg.det(a), [np.ones(3)]),
    (lambda L, a: L.linalg.det(a), [np.ones((2, 3))]),
    (lambda L, a: L.linalg.slogdet(a), [HALF]),
    (lambda L, a: L.logdet(a), [LONG]),
    (lambda L, a: L.linalg.cholesky(a), [HALF]),
    (lambda L, a: L.linalg.qr(a, mode="x"), [np.eye(3)]),
    (lambda L, a: L.linalg.qr(a), [LONG]),
    (lambda L, a: L.linalg.eigh(a, UPLO="X"), [np.eye(3)]),
    (lambda L, a: L.linalg.eigh(a), [LONG]),
    (lambda L, a: L.linalg.eig(a), [LONG]),
    (lambda L, a: L.linalg.eig(a), [np.ones((2, 3))]),
    (lambda L, a: L.linalg.svd(a, driver="gesvd"), [np.eye(3)]),
    (lambda L, a: L.linalg.solve(a, a.double()), [np.eye(3, dtype=np.float32)]),
    (lambda L, a: L.linalg.solve(a, a[:2]), [np.eye(3)]),
    (lambda L, a: L.linalg.solve(a, a[0], left=False), [np.eye(3)]),
    (lambda L, a: L.linalg.lstsq(a, a, driver="foo"), [np.eye(3)]),
    (lambda L, a: L.linalg.lstsq(a, a[:2]), [np.eye(3)]),
    (lambda L, a: L.linalg.lstsq(a, a), [LONG]),
    (lambda L, a: L.linalg.lu_factor(a, pivot=False), [np.eye(3)]),
    (lambda L, a: L.linalg.lu(a), [np.ones(3)]),
    (lambda L, a: L.linalg.lu_solve(a, a[0].long(), a), [np.eye(3)]),
    (lambda L, a: L.lu_unpack(a, a[0].long()), [np.eye(3)]),
    (lambda L, a: L.linalg.solve_triangular(a, a[0], upper=True), [np.eye(3)]),
    (lambda L, a: L.triangular_solve(a[:2], a), [np.eye(3)]),
    (lambda L, a: L.cholesky_solve(a, a.double()), [np.eye(3, dtype=np.float32)]),
    (lambda L, a: L.linalg.householder_product(a[:2], a[0]), [np.eye(3)]),
    (lambda L, a: L.linalg.ldl_factor(a), [np.ones((2, 3))]),
    (lambda L, a: L.linalg.ldl_solve(a, a[0], a), [np.eye(3)]),
    (lambda L, a: L.linalg.matrix_exp(a), [LONG]),
    (lambda L, a: L.linalg.matrix_power(a, -1), [LONG]),
    (lambda L, a: L.linalg.multi_dot([a]), [np.eye(3)]),
    (lambda L, a: L.linalg.multi_dot([a, a[:2]]), [np.eye(3)]),
    (lambda L, a: L.linalg.pinv(a), [LONG]),
    (lambda L, a: L.linalg.cond(a, 3), [np.eye(3)]),
    (lambda L, a: L.linalg.cond(a[:2], "fro"), [np.eye(3)]),
    (lambda L, a: L.linalg.tensorinv(a, ind=0), [np.eye(3)]),
    (lambda L, a: L.linalg.vander(a[0, 0]), [np.eye(3)]),
])
def test_errors_as_pytorch(fn, arrays):
    _same_error(fn, *arrays)


def test_linalg_error_and_ex_info():
    assert issubclass(glasstorch.linalg.LinAlgError, RuntimeError)
    batch = np.stack([np.eye(3), SINGULAR, SINGULAR])
    for name in ("inv_ex", "cholesky_ex"):
        for lib in (glasstorch, torch):
            result = getattr(lib.linalg, name)(lib.tensor(batch))
        _same(getattr(glasstorch.linalg, name)(glasstorch.tensor(batch))[1],
              getattr(torch.linalg, name)(torch.tensor(batch))[1], "float64")
    with pytest.raises(glasstorch.linalg.LinAlgError):
        glasstorch.linalg.inv(glasstorch.tensor(batch))
    _same(glasstorch.linalg.solve_ex(glasstorch.tensor(batch), glasstorch.tensor(batch))[1],
          torch.linalg.solve_ex(torch.tensor(batch), torch.tensor(batch))[1], "float64")
    del result


# -- the namespace ------------------------------------------------------------------------------

def test_namespace_is_torch_linalg():
    public = sorted(n for n in dir(torch.linalg) if not n.startswith("_"))
    assert sorted(glasstorch.linalg.__all__) == public
    for name in public:
        assert hasattr(glasstorch.linalg, name), name
    assert sorted(glasstorch.linalg.common_notes) == sorted(torch.linalg.common_notes)
    for method in ("det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_inverse",
                   "cholesky_solve", "qr", "svd", "pinverse", "matrix_power", "matrix_exp",
                   "lu_solve", "triangular_solve", "geqrf", "orgqr", "ormqr"):
        assert hasattr(glasstorch.Tensor, method), method
