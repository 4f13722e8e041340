"""LU factorization and solves through lu.c (kernels/_lapack.py's getrf/getrs:
LAPACK's getrf2 recursion over numpy's BLAS gemm, blocked substitutions) on
matrices of order >= MIN_RECURSIVE_ORDER against real PyTorch (MKL): square,
tall and wide factors with torch's pivots, exactly singular matrices with
torch's info, det, inv (lu.c's getri), solve with wide right-hand sides,
batches, one and several intra-op threads; LAPACK's own routines where lu.c
is absent; and lu.c's tiled column-major copies of the LAPACK kernels' inputs."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch._ops.kernels import _lapack

pytestmark = pytest.mark.skipif(_lapack._lu_library() is None,
                                reason="no C compiler or no ILP64 OpenBLAS here")

RTOL = {"float32": 2e-4, "float64": 1e-10}


def _matrix(seed, shape, dtype):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _close(ours, theirs, dtype, scale=1.0):
    a, b = ours.numpy(), theirs.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    tol = RTOL[dtype] * max(float(np.abs(b).max()), 1.0) * scale
    assert float(np.abs(a - b).max()) <= tol


@pytest.fixture
def calls(monkeypatch):
    """How many matrices lu.c factored and solved (proof the tests reach it)."""
    counts = {"getrf": 0, "getrs": 0, "getri": 0}

    def counted(name, fn):
        def call(*args):
            counts[name] += 1
            return fn(*args)
        return call
    routines = {dtype: (gemm, counted("getrf", getrf), counted("getrs", getrs),
                        counted("getri", getri), transpose)
                for dtype, (gemm, getrf, getrs, getri, transpose)
                in _lapack._lu_library().items()}
    monkeypatch.setattr(_lapack, "_lu_library", lambda: routines)
    return counts


@settings(max_examples=12, deadline=None)
@given(m=st.integers(64, 150), n=st.integers(64, 150), dtype=st.sampled_from(["float32", "float64"]),
       threads=st.sampled_from([1, 2]), seed=st.integers(0, 2**16))
def test_lu_factor_matches_torch(m, n, dtype, threads, seed):
    """Square, tall and wide: the same pivots as MKL's and the factors to rounding."""
    x = _matrix(seed, (m, n), dtype)
    saved = gt.get_num_threads()
    try:
        gt.set_num_threads(threads)
        LU, piv = gt.linalg.lu_factor(gt.tensor(x))
    finally:
        gt.set_num_threads(saved)
    LU_t, piv_t = torch.linalg.lu_factor(torch.tensor(x))
    np.testing.assert_array_equal(piv.numpy(), piv_t.numpy())
    _close(LU, LU_t, dtype, scale=10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_singular_matrices_give_torchs_info(dtype, calls):
    """An exactly zero column j: LAPACK's info j + 1, in both halves of the recursion."""
    for j in (3, 70, 99):
        x = _matrix(j, (100, 100), dtype)
        x[:, j] = 0
        LU, piv, info = gt.linalg.lu_factor_ex(gt.tensor(x))
        LU_t, piv_t, info_t = torch.linalg.lu_factor_ex(torch.tensor(x))
        assert int(info) == int(info_t) == j + 1
        np.testing.assert_array_equal(piv.numpy(), piv_t.numpy())
        _close(LU, LU_t, dtype, scale=10)
    assert calls["getrf"] >= 3


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_det_inv_solve_match_torch(dtype, threads, calls):
    """det, inv (lu.c's getri: the solve against I skipping L^-1's zeros) and
    solve with a wide right-hand side, on a batch of two; one thread or two
    give torch's values."""
    a = _matrix(1, (2, 96, 96), dtype) + 4 * np.eye(96, dtype=dtype)
    b = _matrix(2, (2, 96, 200), dtype)
    saved = gt.get_num_threads()
    try:
        gt.set_num_threads(threads)
        A, B = gt.tensor(a), gt.tensor(b)
        results = gt.linalg.det(A), gt.linalg.inv(A), gt.linalg.solve(A, B)
    finally:
        gt.set_num_threads(saved)
    At, Bt = torch.tensor(a), torch.tensor(b)
    det_t = torch.linalg.det(At)
    np.testing.assert_allclose(results[0].numpy(), det_t.numpy(), rtol=RTOL[dtype] * 10)
    _close(results[1], torch.linalg.inv(At), dtype, scale=10)
    _close(results[2], torch.linalg.solve(At, Bt), dtype, scale=10)
    assert calls["getrf"] == 6 and calls["getrs"] == 2 and calls["getri"] == 2


def test_without_lu_c_lapack_gives_the_same(monkeypatch):
    """No compiler (lu.c never loads): LAPACK's getrf/getrs, the same results."""
    x = _matrix(5, (80, 80), "float64")
    b = _matrix(6, (80, 90), "float64")
    native = gt.linalg.lu_factor(gt.tensor(x)), gt.linalg.solve(gt.tensor(x), gt.tensor(b))
    monkeypatch.setattr(_lapack, "_lu_library", lambda: None)
    LU, piv = gt.linalg.lu_factor(gt.tensor(x))
    np.testing.assert_array_equal(piv.numpy(), native[0][1].numpy())
    np.testing.assert_allclose(LU.numpy(), native[0][0].numpy(), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(gt.linalg.solve(gt.tensor(x), gt.tensor(b)).numpy(),
                               native[1].numpy(), rtol=1e-10, atol=1e-10)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(64, 140), dtype=st.sampled_from(["float32", "float64"]),
       threads=st.sampled_from([1, 2, 3]), seed=st.integers(0, 2**16))
def test_inverse_matches_torch(n, dtype, threads, seed):
    """inv through getri: every column split among 1-3 threads (L^-1's parts
    of unequal widths), the column swaps of the pivots, torch's values; the
    same as LAPACK's getrs against I (lu.c absent) to rounding."""
    x = _matrix(seed, (n, n), dtype) + 3 * np.eye(n, dtype=dtype)
    saved = gt.get_num_threads()
    try:
        gt.set_num_threads(threads)
        ours = gt.linalg.inv(gt.tensor(x))
    finally:
        gt.set_num_threads(saved)
    _close(ours, torch.linalg.inv(torch.tensor(x)), dtype, scale=10)
    _close(gt.matmul(gt.tensor(x), ours), torch.eye(n, dtype=getattr(torch, dtype)), dtype,
           scale=10)


def test_inverse_without_lu_c_is_lapacks(monkeypatch):
    """getri's fallback (no compiler): LAPACK's getrs against I, the same inverse."""
    x = _matrix(7, (90, 90), "float64") + 3 * np.eye(90)
    native = gt.linalg.inv(gt.tensor(x)).numpy()
    monkeypatch.setattr(_lapack, "_lu_library", lambda: None)
    np.testing.assert_allclose(gt.linalg.inv(gt.tensor(x)).numpy(), native, rtol=1e-11, atol=1e-11)


@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 150), n=st.integers(1, 150), dtype=st.sampled_from(["float32", "float64"]),
       seed=st.integers(0, 2**16))
def test_transpose_into_is_a_column_major_copy(m, n, dtype, seed):
    """lu.c's tiled copy (the column-major inputs of every LAPACK kernel) equals
    numpy's, edge tiles included; small matrices are left to numpy (False)."""
    a = _matrix(seed, (m, n), dtype)
    out = np.zeros((m, n), dtype, order="F")
    copied = _lapack.transpose_into(a, out)
    assert copied == (m * n >= _lapack.MIN_RECURSIVE_ORDER ** 2)
    np.testing.assert_array_equal(out, a if copied else 0)
    assert not _lapack.transpose_into(a.astype(np.complex64), out.astype(np.complex64))


def test_lapack_kernels_on_tiled_copies_match_torch():
    """QR and Cholesky of a C-contiguous batch large enough for the tiled copy,
    and of a transposed view (numpy's copy): torch's values."""
    x = _matrix(8, (2, 100, 90), "float64")
    spd = x @ np.swapaxes(x, -1, -2) + 100 * np.eye(100)
    y = _matrix(9, (2, 90, 100), "float64")
    for ours, theirs in ((gt.tensor(x), torch.tensor(x)), (gt.tensor(y).mT, torch.tensor(y).mT)):
        Q, R = gt.linalg.qr(ours)
        Qt, Rt = torch.linalg.qr(theirs)
        _close(Q, Qt, "float64", scale=10)
        _close(R, Rt, "float64", scale=10)
    _close(gt.linalg.cholesky(gt.tensor(spd)), torch.linalg.cholesky(torch.tensor(spd)), "float64",
           scale=10)
