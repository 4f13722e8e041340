"""lapack.c (kernels/_lapack.py's routines over numpy's BLAS gemm) on matrices of
order >= MIN_RECURSIVE_ORDER against real PyTorch (MKL): LU factors of square,
tall and wide matrices with torch's pivots, exactly singular ones with torch's
info, det, inv (getri), solve with wide right-hand sides; Householder QR and
its Q; lstsq's gelsy and gels; eigh and svd through syevd's and gesdd's own
steps; batches, one and several intra-op threads (a crew for the large ones);
LAPACK's own routines where lapack.c is absent or a driver would rescale; and
lapack.c's tiled column-major copies of the LAPACK kernels' inputs."""
import contextlib

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import glasstorch as gt
from glasstorch._ops.kernels import _lapack

pytestmark = pytest.mark.skipif(_lapack._library() is None,
                                reason="no C compiler or no ILP64 OpenBLAS here")

RTOL = {"float32": 2e-4, "float64": 1e-10}


@contextlib.contextmanager
def _threads(n):
    """glasstorch's intra-op threads set to ``n`` for the block."""
    saved = gt.get_num_threads()
    try:
        gt.set_num_threads(n)
        yield
    finally:
        gt.set_num_threads(saved)


def _matrix(seed, shape, dtype):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _close(ours, theirs, dtype, scale=1.0):
    a, b = ours.numpy(), theirs.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    tol = RTOL[dtype] * max(float(np.abs(b).max()), 1.0) * scale
    assert float(np.abs(a - b).max()) <= tol


@pytest.fixture
def calls(monkeypatch):
    """How many matrices lapack.c factored and solved (proof the tests reach it)."""
    counts = {"getrf": 0, "getrs": 0, "getri": 0, "gelsy_rank": 0, "apply_q": 0,
              "unpivot": 0, "geqrf": 0, "orgqr": 0}

    def counted(name, fn):
        def call(*args):
            counts[name] += 1
            return fn(*args)
        return call
    routines = {dtype: fns._replace(**{name: counted(name, getattr(fns, name)) for name in counts})
                for dtype, fns in _lapack._library().items()}
    monkeypatch.setattr(_lapack, "_library", lambda: routines)
    return counts


@settings(max_examples=12, deadline=None)
@given(m=st.integers(64, 150), n=st.integers(64, 150), dtype=st.sampled_from(["float32", "float64"]),
       threads=st.sampled_from([1, 2]), seed=st.integers(0, 2**16))
def test_lu_factor_matches_torch(m, n, dtype, threads, seed):
    """Square, tall and wide: the same pivots as MKL's and the factors to rounding."""
    x = _matrix(seed, (m, n), dtype)
    with _threads(threads):
        LU, piv = gt.linalg.lu_factor(gt.tensor(x))
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


@pytest.mark.parametrize("shape", [(280, 260), (256, 300)])
@pytest.mark.parametrize("threads", [2, 3])
def test_lu_crew_matches_torch(shape, threads):
    """An LU large enough for a crew (lapack.c: one parallel region whose threads spin
    between the recursion's steps), 2 or 3 threads: torch's pivots and factors,
    and torch's info for a zero column met deep in the recursion."""
    x = _matrix(11, shape, "float64")
    x[:, 201] = 0
    with _threads(threads):
        LU, piv, info = gt.linalg.lu_factor_ex(gt.tensor(x))
    LU_t, piv_t, info_t = torch.linalg.lu_factor_ex(torch.tensor(x))
    assert int(info) == int(info_t) == 202
    np.testing.assert_array_equal(piv.numpy(), piv_t.numpy())
    _close(LU, LU_t, "float64", scale=10)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_det_inv_solve_match_torch(dtype, threads, calls):
    """det, inv (lapack.c's getri: the solve against I skipping L^-1's zeros) and
    solve with a wide right-hand side, on a batch of two; one thread or two
    give torch's values."""
    a = _matrix(1, (2, 96, 96), dtype) + 4 * np.eye(96, dtype=dtype)
    b = _matrix(2, (2, 96, 200), dtype)
    with _threads(threads):
        A, B = gt.tensor(a), gt.tensor(b)
        results = gt.linalg.det(A), gt.linalg.inv(A), gt.linalg.solve(A, B)
    At, Bt = torch.tensor(a), torch.tensor(b)
    det_t = torch.linalg.det(At)
    np.testing.assert_allclose(results[0].numpy(), det_t.numpy(), rtol=RTOL[dtype] * 10)
    _close(results[1], torch.linalg.inv(At), dtype, scale=10)
    _close(results[2], torch.linalg.solve(At, Bt), dtype, scale=10)
    assert calls["getrf"] == 6 and calls["getrs"] == 2 and calls["getri"] == 2


def test_without_lu_c_lapack_gives_the_same(monkeypatch):
    """No compiler (lapack.c never loads): LAPACK's getrf/getrs, the same results."""
    x = _matrix(5, (80, 80), "float64")
    b = _matrix(6, (80, 90), "float64")
    native = gt.linalg.lu_factor(gt.tensor(x)), gt.linalg.solve(gt.tensor(x), gt.tensor(b))
    monkeypatch.setattr(_lapack, "_library", lambda: None)
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
    same as LAPACK's getrs against I (lapack.c absent) to rounding."""
    x = _matrix(seed, (n, n), dtype) + 3 * np.eye(n, dtype=dtype)
    with _threads(threads):
        ours = gt.linalg.inv(gt.tensor(x))
    _close(ours, torch.linalg.inv(torch.tensor(x)), dtype, scale=10)
    _close(gt.matmul(gt.tensor(x), ours), torch.eye(n, dtype=getattr(torch, dtype)), dtype,
           scale=10)


def test_inverse_without_lu_c_is_lapacks(monkeypatch):
    """getri's fallback (no compiler): LAPACK's getrs against I, the same inverse."""
    x = _matrix(7, (90, 90), "float64") + 3 * np.eye(90)
    native = gt.linalg.inv(gt.tensor(x)).numpy()
    monkeypatch.setattr(_lapack, "_library", lambda: None)
    np.testing.assert_allclose(gt.linalg.inv(gt.tensor(x)).numpy(), native, rtol=1e-11, atol=1e-11)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 150), n=st.integers(1, 150), dtype=st.sampled_from(["float32", "float64"]),
       row_major=st.booleans(), threads=st.sampled_from([1, 2]), seed=st.integers(0, 2**16))
def test_column_major_into_is_numpys_copy(m, n, dtype, row_major, threads, seed):
    """lapack.c's column-major copies (the inputs of every LAPACK kernel) of
    row-major matrices (register tiles, edges included) and column-major ones,
    on one thread or split: numpy's; small matrices are left to numpy (False)."""
    a = _matrix(seed, (m, n), dtype)
    a = a if row_major else np.asfortranarray(a)
    out = np.zeros((m, n), dtype, order="F")
    with _threads(threads):
        copied = _lapack.column_major_into(a, out)
    assert copied == (m * n >= _lapack.MIN_RECURSIVE_ORDER ** 2)
    np.testing.assert_array_equal(out, a if copied else 0)
    assert not _lapack.column_major_into(a.astype(np.complex64), out.astype(np.complex64))


def test_large_copies_split_among_threads():
    """Past MIN_COPY_PARALLEL elements the copies run on the intra-op threads:
    each thread's share of the tiles, then the edges."""
    for shape in ((515, 517), (1030, 300)):
        a = _matrix(1, shape, "float32")
        for source in (a, np.asfortranarray(a)):
            out = np.zeros(shape, "float32", order="F")
            with _threads(3):
                assert _lapack.column_major_into(source, out)
            np.testing.assert_array_equal(out, a)


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


def _lstsq(a, b, threads, driver=None):
    with _threads(threads):
        return gt.linalg.lstsq(gt.tensor(a), gt.tensor(b), driver=driver)


def _same_lstsq(ours, a, b, dtype, scale=10):
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b))
    assert ours.rank.dtype == gt.int64 and ours.rank.tolist() == theirs.rank.tolist()
    assert ours.solution.stride() == theirs.solution.stride()
    _close(ours.solution, theirs.solution, dtype, scale=scale)


@settings(max_examples=10, deadline=None)
@given(m=st.integers(64, 160), n=st.integers(64, 160), k=st.integers(1, 70),
       dtype=st.sampled_from(["float32", "float64"]), threads=st.sampled_from([1, 2]),
       seed=st.integers(0, 2**16))
def test_gelsy_full_rank_takes_the_unpivoted_qr(m, n, k, dtype, threads, seed):
    """gelsy (the default driver) on square, tall and wide well-conditioned matrices:
    the unpivoted QR's R is of full rank, so no pivoting and no rows to put
    back; Q^T B and R^-1 (lapack.c, B's columns split among the threads) give
    torch's solution and rank."""
    a = (_matrix(seed, (m, n), dtype) + 2 * np.sqrt(max(m, n)) * np.eye(m, n)).astype(dtype)
    b = _matrix(seed + 1, (m, k), dtype)
    counts = {}
    fns = _lapack._library()
    real_gelsy = _lapack.gelsy

    def counted(*args):
        counts["gelsy"] = counts.get("gelsy", 0) + 1
        return real_gelsy(*args)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_lapack, "gelsy", counted)
        patch.setattr(_lapack, "_library", lambda: {
            d: f._replace(unpivot=lambda *args: counts.__setitem__("unpivot", 1))
            for d, f in fns.items()})
        ours = _lstsq(a, b, threads)
    assert counts == {"gelsy": 1}
    _same_lstsq(ours, a, b, dtype, scale=100)


@pytest.mark.parametrize("shape,rank", [((150, 120), 40), ((100, 200), 70), ((128, 128), 127)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelsy_rank_deficient_pivots(shape, rank, dtype, calls):
    """A matrix of lower rank: the unpivoted R shows it, so the QR is redone with
    column pivoting (geqp3), tzrzf and ormrz give the minimum-norm solution and
    the rows go back in column order (lapack.c's unpivot): torch's rank and values,
    on a batch of two."""
    m, n = shape
    a = _matrix(rank, (2, m, rank), dtype) @ _matrix(rank + 1, (2, rank, n), dtype)
    b = _matrix(3, (2, m, 5), dtype)
    ours = _lstsq(a, b, 2)
    _same_lstsq(ours, a, b, dtype, scale=100)
    assert calls["unpivot"] == 2 and calls["apply_q"] == 2 and calls["gelsy_rank"] == 4


def test_gelsy_outside_lu_c(calls):
    """Where gelsy would rescale (entries beyond ~1e31 in float32), a zero matrix, a
    complex one, or a small one: LAPACK's gelsy whole, torch's results."""
    big = _matrix(4, (80, 80), "float32") * np.float32(1e35)
    b = _matrix(5, (80, 3), "float32")
    _same_lstsq(_lstsq(big, b, 1), big, b, "float32")
    zero = np.zeros((80, 70))
    out = _lstsq(zero, _matrix(6, (80, 2), "float64"), 1)
    assert int(out.rank) == 0 and not out.solution.numpy().any()
    c = (_matrix(7, (70, 70), "float64") + 1j * _matrix(8, (70, 70), "float64")).astype(np.complex128)
    cb = _matrix(9, (70, 2), "float64").astype(np.complex128)
    _same_lstsq(_lstsq(c, cb, 1), c, cb, "float64")
    small = _matrix(10, (20, 10), "float64")
    _same_lstsq(_lstsq(small, _matrix(11, (20, 2), "float64"), 1), small,
                _matrix(11, (20, 2), "float64"), "float64")
    assert calls["gelsy_rank"] == calls["apply_q"] == 0


@pytest.mark.parametrize("shape,threads", [((300, 260), 2), ((260, 300), 3), ((256, 256), 1),
                                           ((100, 70), 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_qr_blocks_match_torch(shape, threads, dtype, calls):
    """linalg.qr through lapack.c's geqrf and orgqr (blocks of reflectors over gemm, a
    crew for the large ones): R, and Q in each mode, to rounding of torch's."""
    x = _matrix(12, shape, dtype)
    with _threads(threads):
        results = {mode: gt.linalg.qr(gt.tensor(x), mode=mode) for mode in ("reduced", "complete")}
        a, tau = gt.geqrf(gt.tensor(x))
    for mode, (Q, R) in results.items():
        Qt, Rt = torch.linalg.qr(torch.tensor(x), mode=mode)
        _close(Q, Qt, dtype, scale=10)
        _close(R, Rt, dtype, scale=10)
    at, taut = torch.geqrf(torch.tensor(x))
    _close(a, at, dtype, scale=10)
    _close(tau, taut, dtype, scale=10)
    assert calls["geqrf"] == 3 and calls["orgqr"] == 2


@pytest.mark.parametrize("k", [0, 1, 45, 70, 100])
def test_householder_product_of_fewer_reflectors(k, calls):
    """householder_product (orgqr) with k of n reflectors: the columns past k start
    as the identity's; torch's Q (lapack.c from k = MIN_RECURSIVE_ORDER on)."""
    x = _matrix(13, (150, 100), "float64")
    tau = _matrix(14, (k,), "float64") * 0.5 + 1
    ours = gt.linalg.householder_product(gt.tensor(x), gt.tensor(tau))
    theirs = torch.linalg.householder_product(torch.tensor(x), torch.tensor(tau))
    _close(ours, theirs, "float64", scale=10)
    assert calls["orgqr"] == (k >= _lapack.MIN_RECURSIVE_ORDER)


def test_qr_without_lu_c_is_lapacks(monkeypatch):
    """No compiler: LAPACK's geqrf and orgqr, the same Q and R to rounding."""
    x = _matrix(15, (120, 90), "float64")
    native = gt.linalg.qr(gt.tensor(x))
    monkeypatch.setattr(_lapack, "_library", lambda: None)
    for ours, theirs in zip(gt.linalg.qr(gt.tensor(x)), native):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-11, atol=1e-11)


def _same_eigh(ours, A, dtype, uplo="L", exact_signs=True):
    """torch's eigenvalues and eigenvectors: with the same signs where glasstorch
    runs syevd's own steps, else each vector up to a sign or phase (LAPACK
    builds differ there)."""
    w, v = ours
    wt, vt = torch.linalg.eigh(torch.tensor(A), UPLO=uplo)
    _close(w, wt, dtype, scale=10)
    if exact_signs:
        _close(v, vt, dtype, scale=100)
    else:
        overlap = np.abs(np.sum(np.conj(v.numpy()) * vt.numpy(), axis=-2))
        np.testing.assert_allclose(overlap, 1, atol=RTOL[dtype] * 100)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eigh_applies_q_over_gemm(dtype, threads, calls):
    """eigh (lower triangle, with vectors) as syevd runs it, LAPACK's sytrd and
    stedc, with its ormtr by lapack.c's blocks split among threads: torch's
    eigenvalues and eigenvectors, signs included, on a batch of two."""
    x = _matrix(16, (2, 150, 150), dtype)
    A = x + np.swapaxes(x, -1, -2)
    with _threads(threads):
        ours = gt.linalg.eigh(gt.tensor(A))
    _same_eigh(ours, A, dtype)
    assert calls["apply_q"] == 2


def test_eigh_outside_lapack_c(calls):
    """The upper triangle, eigenvalues only, a complex matrix, one syevd would
    rescale, a small one: LAPACK's driver whole, torch's results."""
    x = _matrix(17, (90, 90), "float64")
    A = x + x.T
    _same_eigh(gt.linalg.eigh(gt.tensor(A), UPLO="U"), A, "float64", "U", exact_signs=False)
    np.testing.assert_allclose(gt.linalg.eigvalsh(gt.tensor(A)).numpy(),
                               torch.linalg.eigvalsh(torch.tensor(A)).numpy(), rtol=1e-10)
    c = A + 1j * (x - x.T)
    _same_eigh(gt.linalg.eigh(gt.tensor(c)), c, "float64", exact_signs=False)
    tiny = (A * 1e-20).astype(np.float32)
    _same_eigh(gt.linalg.eigh(gt.tensor(tiny)), tiny, "float32", exact_signs=False)
    np.testing.assert_allclose(gt.linalg.eigvalsh(gt.tensor(tiny)).numpy() * 1e20,
                               torch.linalg.eigvalsh(torch.tensor(tiny)).numpy() * 1e20,
                               rtol=1e-4, atol=1e-3)
    small = np.ascontiguousarray(A[:20, :20])
    _same_eigh(gt.linalg.eigh(gt.tensor(small)), small, "float64", exact_signs=False)
    assert calls["apply_q"] == 0


@pytest.mark.parametrize("full_matrices,threads", [(True, 1), (False, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_applies_q_and_p_over_gemm(dtype, full_matrices, threads, calls):
    """A square svd as gesdd runs it (LAPACK's gebrd and bdsdc, its two ormbr by
    lapack.c's blocks): torch's U, S and Vh, signs included, on a batch of two."""
    x = _matrix(18, (2, 130, 130), dtype)
    with _threads(threads):
        ours = gt.linalg.svd(gt.tensor(x), full_matrices=full_matrices)
    theirs = torch.linalg.svd(torch.tensor(x), full_matrices=full_matrices)
    for o, t in zip(ours, theirs):
        assert o.stride() == t.stride()
        _close(o, t, dtype, scale=100)
    assert calls["apply_q"] == 4


def test_svd_outside_lapack_c(calls):
    """Rectangular, values only, complex, out of gesdd's range, small: LAPACK's
    gesdd whole, torch's singular values (vectors up to signs or phases)."""
    x = _matrix(19, (120, 90), "float64")
    cases = [x, x.T.copy(), x[:80, :80] * 1e-160, (x[:70, :70] + 1j * x[1:71, :70]), x[:20, :20]]
    for a in cases:
        U, S, Vh = gt.linalg.svd(gt.tensor(a), full_matrices=False)
        St = torch.linalg.svd(torch.tensor(a), full_matrices=False)[1]
        np.testing.assert_allclose(S.numpy(), St.numpy(), rtol=1e-10, atol=1e-10 * St.numpy().max())
        np.testing.assert_allclose((U.numpy() * S.numpy()[None, :]) @ Vh.numpy(), a,
                                   atol=1e-10 * np.abs(a).max())
    np.testing.assert_allclose(gt.linalg.svdvals(gt.tensor(x[:100, :100])).numpy(),
                               torch.linalg.svdvals(torch.tensor(x[:100, :100])).numpy(), rtol=1e-10)
    assert calls["apply_q"] == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gels_driver_over_gemm(dtype, calls):
    """driver="gels": geqrf, Q^T B and R^-1 by lapack.c for tall and square
    matrices (torch's solution and residuals); an exactly zero column gives
    gels's info as torch's error; a wide one is LAPACK's gels (LQ) whole."""
    for shape in ((150, 100), (120, 120)):
        a = _matrix(20, shape, dtype) + 3 * np.eye(*shape, dtype=dtype)
        b = _matrix(21, (shape[0], 4), dtype)
        ours = gt.linalg.lstsq(gt.tensor(a), gt.tensor(b), driver="gels")
        theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver="gels")
        _close(ours.solution, theirs.solution, dtype, scale=100)
        assert ours.residuals.shape == theirs.residuals.shape == ((4,) if shape[0] > shape[1] else (0,))
        if shape[0] > shape[1]:
            _close(ours.residuals, theirs.residuals, dtype, scale=100)
    assert calls["apply_q"] == 2
    singular = _matrix(22, (100, 80), dtype)
    singular[:, 41] = 0
    _same_error_of(lambda lib: lib.linalg.lstsq(lib.tensor(singular), lib.tensor(singular[:, :2]),
                                                driver="gels"))
    wide = _matrix(23, (70, 90), dtype)
    ours = gt.linalg.lstsq(gt.tensor(wide), gt.tensor(wide[:, :3]), driver="gels")
    theirs = torch.linalg.lstsq(torch.tensor(wide), torch.tensor(wide[:, :3]), driver="gels")
    _close(ours.solution, theirs.solution, dtype, scale=100)


def _same_error_of(fn):
    """torch and glasstorch raise the same error (LinAlgError: each its own class)."""
    with pytest.raises(Exception) as expected:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(gt)
    assert type(got.value).__name__ == type(expected.value).__name__
    assert str(got.value) == str(expected.value)


def test_steps_record_which_routines_ran():
    """_lapack.steps() names each LAPACK and lapack.c routine a kernel runs, in
    order: syevd's own steps for a large eigh, LAPACK's driver for a small one,
    gelsy's unpivoted path for a well-conditioned lstsq and its pivoted one for a
    rank-deficient matrix."""
    x = _matrix(24, (100, 100), "float64")
    with _lapack.steps() as ran:
        gt.linalg.eigh(gt.tensor(x + x.T))
        gt.linalg.eigh(gt.tensor(x[:10, :10] + x[:10, :10].T))
    assert ran == ["LAPACK sytrd", "LAPACK stedc", "lapack.c apply_q", "LAPACK syevd"]
    with _lapack.steps() as ran:
        gt.linalg.lstsq(gt.tensor(x + 20 * np.eye(100)), gt.tensor(x[:, :2]))
    assert ran == ["lapack.c geqrf", "lapack.c gelsy_rank", "lapack.c apply_q"]
    low = _matrix(25, (100, 30), "float64") @ _matrix(26, (30, 100), "float64")
    with _lapack.steps() as ran:
        gt.linalg.lstsq(gt.tensor(low), gt.tensor(x[:, :2]))
    assert ran == ["lapack.c geqrf", "lapack.c gelsy_rank", "LAPACK geqp3", "lapack.c gelsy_rank",
                   "LAPACK tzrzf", "lapack.c apply_q", "LAPACK ormrz", "lapack.c unpivot"]
    assert _lapack._steps is None


def test_scratch_refused_is_torchs_allocator_error(tmp_path):
    """When the system refuses lapack.c's scratch (here: an address-space limit
    in a child process), the kernel raises PyTorch's DefaultCPUAllocator error
    with the bytes asked for, as torch does when it cannot allocate."""
    import subprocess
    import sys
    script = tmp_path / "oom.py"
    script.write_text(
        "import resource, numpy as np\n"
        "from glasstorch._ops.kernels import _lapack, native\n"
        "a = np.asfortranarray(np.random.default_rng(0).standard_normal((3000, 3000)))\n"
        "tau, b = np.empty(3000), np.asfortranarray(np.ones((3000, 4)))\n"
        "_lapack.geqrf(a, tau)\n"
        "used = int(open('/proc/self/statm').read().split()[0]) * 4096\n"
        "resource.setrlimit(resource.RLIMIT_AS, (used + (8 << 20), resource.RLIM_INFINITY))\n"
        "fns = _lapack._library()[np.dtype(np.float64)]\n"
        "native.check_scratch(fns.apply_q(a.ctypes.data, 3000, 3000, 3000, tau.ctypes.data,"
        " 0, 0, b.ctypes.data, 4, 3000, 1))\n")
    _assert_torchs_allocator_error(subprocess.run([sys.executable, str(script)],
                                                  capture_output=True, text=True))


def _assert_torchs_allocator_error(run, nbytes=None):
    """The child's last line is PyTorch's DefaultCPUAllocator error (for
    ``nbytes`` bytes when given)."""
    import re
    with pytest.raises(RuntimeError) as theirs:
        torch.empty(1 << 50, dtype=torch.uint8)
    pattern = re.escape(str(theirs.value)).replace(str(1 << 50), str(nbytes or r"\d+"))
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: ") and re.fullmatch(pattern, last[len("RuntimeError: "):])


def test_working_copy_refused_is_torchs_allocator_error(tmp_path):
    """inv's working copy of A (its column-major LU) refused by the system (an
    address-space limit that leaves room for the result only): PyTorch's
    DefaultCPUAllocator error for the copy's bytes, not numpy's MemoryError."""
    import subprocess
    import sys
    script = tmp_path / "oom.py"
    script.write_text(
        "import resource, numpy as np, glasstorch as gt\n"
        "A = gt.tensor(np.random.default_rng(0).standard_normal((3000, 3000)))\n"
        "gt.linalg.inv(gt.tensor(np.eye(100)))\n"
        "used = int(open('/proc/self/statm').read().split()[0]) * 4096\n"
        "resource.setrlimit(resource.RLIMIT_AS, (used + (100 << 20), resource.RLIM_INFINITY))\n"
        "gt.linalg.inv(A)\n")
    _assert_torchs_allocator_error(subprocess.run([sys.executable, str(script)],
                                                  capture_output=True, text=True),
                                   3000 * 3000 * 8)


@pytest.mark.skipif(__import__("platform").machine() not in ("x86_64", "AMD64"),
                    reason="x86 ISA levels")
@pytest.mark.parametrize("march", ["x86-64-v3", "x86-64"])
def test_builds_for_older_cpus(monkeypatch, march):
    """lapack.c compiled for AVX2 (x86-64-v3) and for the SSE2 baseline, where
    its 64-byte vectors (the transpose's register tiles, the pivot search)
    split into smaller registers: torch's values, the copies exact."""
    from glasstorch._ops.kernels import native
    monkeypatch.setattr(native, "_FLAGS", [f"-march={march}" if f == "-march=native" else f
                                           for f in native._FLAGS])
    load = native.companion(_lapack._SOURCE, _lapack._declare)
    monkeypatch.setattr(_lapack, "_library", load)
    assert load() is not None
    for dtype in ("float32", "float64"):
        a = _matrix(3, (150, 131), dtype)
        out = np.zeros(a.shape, dtype, order="F")
        assert _lapack.column_major_into(a, out)
        np.testing.assert_array_equal(out, a)
        x, b = _matrix(4, (140, 140), dtype), _matrix(5, (140, 70), dtype)
        with _threads(2):
            ours = gt.linalg.solve(gt.tensor(x), gt.tensor(b))
            sign, logdet = gt.linalg.slogdet(gt.tensor(x))
        _close(ours, torch.linalg.solve(torch.tensor(x), torch.tensor(b)), dtype, scale=10)
        sign_t, logdet_t = torch.linalg.slogdet(torch.tensor(x))
        assert sign.item() == sign_t.item()
        _close(logdet, logdet_t, dtype, scale=10)
