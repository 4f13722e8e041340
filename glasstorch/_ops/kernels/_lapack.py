"""numpy's own LAPACK, routine by routine (what ATen's BatchLinearAlgebra.cpp calls).

``numpy.linalg`` wraps a handful of LAPACK drivers behind fixed choices (gesv
for inv, gelsd for lstsq, no getrf, trsm, sytrf, orgqr or ormqr at all).  The
OpenBLAS that numpy's wheels bundle exports the whole LAPACKE interface, so the
kernels call the routines PyTorch calls, with PyTorch's arguments, on
column-major copies of each matrix, and read back LAPACK's ``info`` codes.

    call("getrf", dtype, m, n, a, lda, ipiv)      -> info (0, or LAPACK's code)
    getrf(a, ipiv), getrs(trans, lu, ipiv, b)    LU and its solves: lapack.c's recursion
    getri(lu, ipiv, b)                           over gemm for large real matrices
    geqrf(a, tau), orgqr(q, k, tau)              Householder QR and its Q, the same
    gels(a, b), gelsy(a, b, rcond)               least squares: the QR, then lapack.c
    syevd(jobz, uplo, a, w)                      eigh: LAPACK's sytrd and stedc, Q Z by lapack.c
    gesdd(jobz, a, s, u, vt)                     svd: LAPACK's gebrd and bdsdc, Q U, VT P^T the same
    column_major_into(a, out)                    a matrix copied column-major (threads)
    int_array(shape)                             an array of LAPACK's integers
    split_columns(run, columns, work)            independent right-hand sides on
                                                 the intra-op threads
    steps()                                      the routines run, recorded (LAPACK's or lapack.c's)

Arguments are passed as given: numpy arrays become pointers, bytes of length
one a ``char``, Python ints LAPACK integers and Python floats the routine's
real type.  When numpy carries no LAPACKE (a numpy built against another
BLAS), ``call`` raises PyTorch's error of a build without LAPACK.
"""
from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import ctypes
import functools
import math
import os

import numpy as np

from . import native

__all__ = ["steps", "call", "trsm", "getrf", "getrs", "getri", "geqrf", "orgqr", "gels", "gelsy",
           "syevd", "gesdd", "column_major_into", "int_array", "scalar_int", "split_columns", "INT"]

_LETTER = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
           np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}
_COLUMN_MAJOR = 102        # LAPACK_COL_MAJOR


def _find():
    """(library, symbol pattern, LAPACK integer type), or None."""
    for path in native.numpy_blas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for pattern, int_type in (("scipy_LAPACKE_{}64_", ctypes.c_int64),
                                  ("LAPACKE_{}64_", ctypes.c_int64),
                                  ("scipy_LAPACKE_{}", ctypes.c_int32),
                                  ("LAPACKE_{}", ctypes.c_int32)):
            if hasattr(lib, pattern.format("dgetrf")):
                nancheck = getattr(lib, pattern.format("set_nancheck"), None)
                if nancheck is not None:      # LAPACK itself runs on NaNs, as ATen's calls do
                    nancheck.argtypes = [ctypes.c_int]
                    nancheck(0)
                return lib, pattern, int_type
    return None


_FOUND = _find()
INT = np.dtype(np.int64 if _FOUND is None or _FOUND[2] is ctypes.c_int64 else np.int32)
_ROUTINES: dict = {}


_steps = None      # the routines run inside steps(), in order


@contextlib.contextmanager
def steps():
    """Record the LAPACK and lapack.c routines the linalg kernels run, in order
    (names such as "LAPACK sytrd" or "lapack.c apply_q"): which of a driver's
    steps LAPACK took and which lapack.c (the demo prints them)."""
    global _steps
    saved, _steps = _steps, []
    try:
        yield _steps
    finally:
        _steps = saved


def _step(name):
    if _steps is not None:
        _steps.append(name)


def int_array(shape):
    """A buffer of LAPACK integers (pivots, jpvt)."""
    return np.zeros(shape, INT)


def _routine(name, dtype):
    key = (name, dtype)
    fn = _ROUTINES.get(key)
    if fn is None:
        if _FOUND is None:
            raise RuntimeError(f"{name}: LAPACK library not found in compilation")
        lib, pattern, int_type = _FOUND
        fn = getattr(lib, pattern.format(_LETTER[dtype] + name))
        fn.restype = int_type
        _ROUTINES[key] = fn
    return fn


def call(name, dtype, *args) -> int:
    """Run LAPACKE routine ``name`` of ``dtype`` (column-major); its ``info``."""
    dtype = np.dtype(dtype)
    _step("LAPACK " + name)
    int_type = _FOUND[2] if _FOUND is not None else ctypes.c_int64
    real = ctypes.c_float if dtype in (np.float32, np.complex64) else ctypes.c_double
    converted = [ctypes.c_int(_COLUMN_MAJOR)]
    for a in args:
        if isinstance(a, np.ndarray):
            converted.append(ctypes.c_void_p(a.ctypes.data))
        elif isinstance(a, bytes):
            converted.append(ctypes.c_char(a))
        elif isinstance(a, float):
            converted.append(real(a))
        elif isinstance(a, ctypes._SimpleCData):      # an output scalar (gelsy's rank)
            converted.append(ctypes.byref(a))
        else:
            converted.append(int_type(a))
    info = int(_routine(name, dtype)(*converted))
    # LAPACKE counts its layout argument, so a LAPACK "argument i is bad" (-i) comes back
    # as -(i + 1); ATen calls LAPACK itself and sees -i
    return info + 1 if info < -1 else info


def scalar_int():
    """An output LAPACK integer (``call`` passes it by reference)."""
    return (_FOUND[2] if _FOUND is not None else ctypes.c_int64)(0)


_CBLAS = {"side": {"L": 141, "R": 142}, "uplo": {"U": 121, "L": 122},
          "trans": {"N": 111, "T": 112, "C": 113}, "diag": {"N": 131, "U": 132}}


def trsm(dtype, side, uplo, trans, diag, m, n, a, lda, b, ldb) -> None:
    """BLAS ``trsm`` (column-major), ``B := op(A)^-1 B`` or ``B op(A)^-1`` with alpha 1:
    what ATen's triangular solves call (no singularity check, unlike LAPACK's trtrs)."""
    dtype = np.dtype(dtype)
    key = ("cblas_trsm", dtype)
    fn = _ROUTINES.get(key)
    if fn is None:
        if _FOUND is None:
            raise RuntimeError("triangular_solve: LAPACK library not found in compilation")
        lib, pattern, _ = _FOUND
        fn = getattr(lib, pattern.replace("LAPACKE_", "cblas_").format(_LETTER[dtype] + "trsm"))
        _ROUTINES[key] = fn
    int_type = _FOUND[2]
    if dtype.kind == "c":
        alpha = np.ones(1, dtype)
        alpha_arg = ctypes.c_void_p(alpha.ctypes.data)
    else:
        alpha_arg = (ctypes.c_float if dtype == np.float32 else ctypes.c_double)(1.0)
    fn(ctypes.c_int(_COLUMN_MAJOR), ctypes.c_int(_CBLAS["side"][side]),
       ctypes.c_int(_CBLAS["uplo"][uplo]), ctypes.c_int(_CBLAS["trans"][trans]),
       ctypes.c_int(_CBLAS["diag"][diag]), int_type(m), int_type(n), alpha_arg,
       ctypes.c_void_p(a.ctypes.data), int_type(lda), ctypes.c_void_p(b.ctypes.data),
       int_type(ldb))


# -- lapack.c: LU, QR and gelsy's steps over gemm (real dtypes, ILP64 BLAS) ---------------

_SOURCE = os.path.join(os.path.dirname(__file__), "lapack.c")
MIN_RECURSIVE_ORDER = 64    # smaller matrices: LAPACK's own routines (no gain to make)
# lapack.c's routines for one real dtype (LAPACK's laic1 and geqr2 bound in)
_Routines = collections.namedtuple(
    "_Routines", "gemm getrf getrs getri column_major gelsy_rank apply_q unpivot geqrf orgqr")


def _noted(name, fn):
    """lapack.c's routine ``fn``, noted in ``steps()`` when it runs."""
    def run(*args):
        _step("lapack.c " + name)
        return fn(*args)
    return run


def _declare(lib):
    """lapack.c's routines per real dtype, with numpy's ``cblas_?gemm`` address."""
    blas, pattern, _ = _FOUND
    p, i64, c_int = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    blas_fns = {}
    fortran = pattern.replace("LAPACKE_", "").replace("{}64_", "{}_64_")   # LAPACK itself
    for letter, suffix, real, scalar in (("s", "f32", np.float32, ctypes.c_float),
                                         ("d", "f64", np.float64, ctypes.c_double)):
        cblas = pattern.replace("LAPACKE_", "cblas_")
        gemm = ctypes.cast(getattr(blas, cblas.format(letter + "gemm")), p)
        getrf, getrs = getattr(lib, f"gt_getrf_{suffix}"), getattr(lib, f"gt_getrs_{suffix}")
        getri = getattr(lib, f"gt_getri_{suffix}")
        getrf.argtypes = [p, p, i64, i64, i64, p, c_int]
        getrf.restype = i64
        getrs.argtypes = [p, p, i64, i64, p, p, i64, i64, c_int]
        getri.argtypes = [p, p, i64, i64, p, p, i64, c_int]
        column_major = getattr(lib, f"gt_column_major_{suffix}")
        column_major.argtypes = [p, i64, i64, i64, c_int, p, i64, c_int]
        laic1 = ctypes.cast(getattr(blas, fortran.format(letter + "laic1")), p)
        rank = getattr(lib, f"gt_gelsy_rank_{suffix}")
        apply_q = getattr(lib, f"gt_apply_q_{suffix}")
        rank.argtypes = [p, p, i64, i64, scalar, p, p]
        rank.restype = i64
        apply_q.argtypes = [p, p, i64, i64, i64, p, c_int, i64, p, i64, i64, c_int]
        apply_q.restype = i64
        unpivot = getattr(lib, f"gt_unpivot_rows_{suffix}")
        unpivot.argtypes = [p, i64, i64, i64, p, p]
        geqr2 = ctypes.cast(getattr(blas, fortran.format(letter + "geqr2")), p)
        geqrf, orgqr = getattr(lib, f"gt_geqrf_{suffix}"), getattr(lib, f"gt_orgqr_{suffix}")
        geqrf.argtypes = [p, p, p, i64, i64, i64, p, c_int]
        orgqr.argtypes = [p, p, i64, i64, i64, i64, p, c_int]
        geqrf.restype = orgqr.restype = i64
        blas_fns[np.dtype(real)] = _Routines(
            gemm, _noted("getrf", getrf), _noted("getrs", getrs), _noted("getri", getri),
            column_major, _noted("gelsy_rank", functools.partial(rank, laic1)),
            _noted("apply_q", functools.partial(apply_q, gemm)), _noted("unpivot", unpivot),
            _noted("geqrf", functools.partial(geqrf, gemm, geqr2)),
            _noted("orgqr", functools.partial(orgqr, gemm)))
    return blas_fns


_load = native.companion(_SOURCE, _declare)


def _library():
    """lapack.c compiled like native.c: its _Routines per real dtype; None without
    a compiler, native loops or an ILP64 OpenBLAS (the integers lapack.c passes)."""
    return _load() if _FOUND is not None and INT == np.int64 else None


def _recursive(a, order):
    """lapack.c's routines for ``a``'s dtype when it takes a matrix of this order."""
    if order < MIN_RECURSIVE_ORDER or a.dtype.kind != "f" or a.itemsize not in (4, 8):
        return None
    lib = _library()
    return None if lib is None else lib[a.dtype]


def getrf(a, ipiv) -> int:
    """LU with partial pivoting of the column-major matrix ``a`` in place (pivots
    into ``ipiv``, LAPACK integers): LAPACK's ``info``.  lapack.c's recursion over
    gemm (on the intra-op threads) for a large real matrix, LAPACK's getrf else."""
    m, n = a.shape
    fns = _recursive(a, min(m, n))
    if fns is None:
        return call("getrf", a.dtype, m, n, a, max(1, m), ipiv)
    return int(fns.getrf(fns.gemm, a.ctypes.data, m, n, max(1, a.strides[1] // a.itemsize),
                  ipiv.ctypes.data, native.get_num_threads()))


def getrs(trans, lu, ipiv, b) -> None:
    """Solve op(A) X = ``b`` in place (column-major) with getrf's factors of A:
    lapack.c's recursive solves over gemm for an untransposed large real system,
    its right-hand sides split among the intra-op threads; LAPACK's getrs
    else (the columns split the same way)."""
    n, k = b.shape
    ld = max(1, n)
    fns = _recursive(b, n) if trans == "N" else None
    if fns is not None:
        fns.getrs(fns.gemm, lu.ctypes.data, n, max(1, lu.strides[1] // lu.itemsize),
              ipiv.ctypes.data, b.ctypes.data, k, max(1, b.strides[1] // b.itemsize),
              native.get_num_threads())
        return

    def columns(lo, hi):
        call("getrs", b.dtype, trans.encode(), n, hi - lo, lu, ld, ipiv, b[:, lo:hi], ld)
    split_columns(columns, k, n * n * k)


def column_major_into(a, out) -> bool:
    """Copy the matrix ``a``, C- or Fortran-contiguous, into the column-major
    matrix ``out`` by lapack.c, on the intra-op threads (a row-major one by
    register tiles: numpy's transposing copy of 512x512 float32 takes 2.6
    times as long); False, nothing copied, for a small matrix (numpy's copy
    then) or where lapack.c or the dtype does not serve."""
    m, n = a.shape
    fns = _library() if m * n >= MIN_RECURSIVE_ORDER ** 2 else None
    fn = None if fns is None or a.dtype not in fns else fns[a.dtype].column_major
    row_major = a.flags.c_contiguous
    if fn is None or out.dtype != a.dtype or not (row_major or a.flags.f_contiguous) or \
            not out.flags.f_contiguous:
        return False
    fn(a.ctypes.data, m, n, n if row_major else m, row_major, out.ctypes.data, m,
       native.get_num_threads())
    return True


def getri(lu, ipiv, b) -> None:
    """A^-1 into the column-major ``b`` (its contents unused) from getrf's factors
    of A: lapack.c's inverse (the solve against I skipping the zeros of L^-1) for a
    large real matrix; else ATen's route, LAPACK's getrs against the identity."""
    n = lu.shape[0]
    fns = _recursive(b, n)
    if fns is not None:
        fns.getri(fns.gemm, lu.ctypes.data, n, max(1, lu.strides[1] // lu.itemsize), ipiv.ctypes.data,
               b.ctypes.data, max(1, b.strides[1] // b.itemsize), native.get_num_threads())
        return
    b[...] = np.eye(n, dtype=b.dtype)
    getrs("N", lu, ipiv, b)


def geqrf(a, tau) -> None:
    """Householder QR of the column-major matrix ``a`` in place (R above the
    diagonal, the reflectors below, their scalars into ``tau``): lapack.c's blocks
    of reflectors over gemm (LAPACK's geqr2 on each panel, the crew on the
    rest) for a large real matrix, LAPACK's geqrf else."""
    m, n = a.shape
    fns = _recursive(a, min(m, n))
    if fns is None:
        call("geqrf", a.dtype, m, n, a, max(1, m), tau)
    else:
        native.check_scratch(fns.geqrf(a.ctypes.data, m, n, max(1, a.strides[1] // a.itemsize),
                                       tau.ctypes.data, native.get_num_threads()))


def orgqr(q, k, tau) -> None:
    """The first n columns of the product of the ``k`` reflectors in the first
    columns of the column-major ``q`` (m x n, geqrf's), in place: lapack.c for a
    large real matrix, LAPACK's orgqr / ungqr else."""
    m, n = q.shape
    fns = _recursive(q, min(n, k) if k else 0)
    if fns is None:
        call("ungqr" if q.dtype.kind == "c" else "orgqr", q.dtype, m, n, k, q, max(1, m), tau)
    else:
        ld = max(1, q.strides[1] // q.itemsize)
        native.check_scratch(fns.orgqr(q.ctypes.data, m, n, k, ld, tau.ctypes.data,
                                       native.get_num_threads()))


def _out_of_range(x, driver) -> bool:
    """Whether LAPACK's ``driver`` would rescale ``x`` first (or stop early): its
    largest |value| is 0, NaN, or out of the driver's [smlnum, 1 / smlnum],
    from safmin = lamch('S') and eps = lamch('P')."""
    if not x.size:
        return True
    info = np.finfo(x.dtype)
    safmin, eps = float(info.tiny), float(info.eps)
    smallest = {"gelsy": safmin / eps, "syevd": math.sqrt(safmin / eps),
                "gesdd": math.sqrt(safmin) / eps}[driver]
    largest = max(float(x.max()), -float(x.min()))
    return not smallest <= largest <= 1 / smallest


def _transpose(a, out=None):
    """The column-major transpose of the column-major matrix ``a`` into ``out`` (a
    new array by default), by tiles where they serve."""
    out = np.empty(a.shape[::-1], a.dtype, order="F") if out is None else out
    if not column_major_into(a.T, out):
        out[...] = a.T
    return out


def gesdd(jobz: bytes, a, s, u, vt) -> int:
    """LAPACK's gesdd on the column-major matrix ``a`` (singular values into ``s``,
    vectors into ``u`` and ``vt``): its info.  For a large real square matrix
    with vectors, gesdd's own steps (its path 5): LAPACK's gebrd and bdsdc,
    with its two ormbr (U := Q U, VT := VT P^T, a third of gesdd's time in
    OpenBLAS) by lapack.c's blocks over gemm; LAPACK's driver else."""
    m, n = a.shape
    fns = _recursive(a, min(m, n))
    if fns is None or m != n or jobz == b"N" or _out_of_range(a, "gesdd"):
        return call("gesdd", a.dtype, jobz, m, n, a, max(1, m), s, u, max(1, m), vt,
                    max(1, vt.shape[0]))
    e, tauq, taup = np.empty(n - 1, a.dtype), np.empty(n, a.dtype), np.empty(n, a.dtype)
    call("gebrd", a.dtype, n, n, a, n, s, e, tauq, taup)
    u[...] = 0
    info = call("bdsdc", a.dtype, b"U", b"I", n, s, e, u, n, vt, n, np.zeros(1, a.dtype),
                int_array(1))
    threads = native.get_num_threads()
    # Q: gebrd's column reflectors, below a's diagonal
    native.check_scratch(fns.apply_q(a.ctypes.data, n, n, n, tauq.ctypes.data, 1, 0,
                                     u.ctypes.data, n, n, threads))
    # P^T from the right is P on VT^T's left, P's row reflectors (right of a's
    # superdiagonal) a column-major transpose's, below its subdiagonal
    at, x = _transpose(a), _transpose(vt)
    native.check_scratch(fns.apply_q(at[1:, :].ctypes.data, n, n - 1, n - 1, taup.ctypes.data,
                                     1, 0, x[1:, :].ctypes.data, n, n, threads))
    _transpose(x, vt)
    return info


def syevd(jobz: bytes, uplo: bytes, a, w) -> int:
    """LAPACK's syevd / heevd on the column-major matrix ``a`` (eigenvalues into
    ``w``, eigenvectors into ``a``): its info.  For a large real matrix with
    vectors from its lower triangle, syevd's own steps, LAPACK's sytrd and
    stedc, with its ormtr (Q Z) done by lapack.c's blocks over gemm (a third
    of syevd's time in OpenBLAS, where its trmm is slow); LAPACK's driver else."""
    n = a.shape[0]
    fns = _recursive(a, n)
    name = "heevd" if a.dtype.kind == "c" else "syevd"
    if fns is None or jobz != b"V" or uplo != b"L" or _out_of_range(a, "syevd"):
        return call(name, a.dtype, jobz, uplo, n, a, max(1, n), w)
    d, e, tau = np.empty(n, a.dtype), np.empty(n - 1, a.dtype), np.empty(n - 1, a.dtype)
    call("sytrd", a.dtype, b"L", n, a, n, d, e, tau)
    z = np.empty((n, n), a.dtype, order="F")
    info = call("stedc", a.dtype, b"I", n, d, e, z, n)
    # sytrd's reflectors lie below the subdiagonal: Q acts on rows 1.. of Z
    native.check_scratch(fns.apply_q(a[1:, :].ctypes.data, n, n - 1, n - 1, tau.ctypes.data,
                                     1, 0, z[1:, :].ctypes.data, n, n,
                                     native.get_num_threads()))
    w[...] = d
    a[...] = z
    return info


def gels(a, b) -> int:
    """LAPACK's gels (no transpose) on column-major ``a`` (m x n) and ``b`` (max(m,
    n) x k), in place: its info.  For a large real matrix with m >= n in
    range: geqrf, then Q^T B and R^-1 by lapack.c (apply_q); an exact zero on
    R's diagonal stops before the solve with gels's info (its 1-based place),
    B then holding Q^T B as gels leaves it.  LAPACK's gels else."""
    m, n = a.shape
    k = b.shape[1]
    fns = _recursive(a, n) if m >= n else None
    if fns is None or k == 0 or _out_of_range(a, "gelsy") or _out_of_range(b[:m], "gelsy"):
        return call("gels", a.dtype, b"N", m, n, k, a, max(1, m), b, max(1, b.shape[0]))
    tau = np.empty(n, a.dtype)
    geqrf(a, tau)
    zeros = np.flatnonzero(np.diagonal(a) == 0)
    native.check_scratch(fns.apply_q(a.ctypes.data, max(1, m), m, n, tau.ctypes.data, 0,
                                     0 if zeros.size else n, b.ctypes.data, k,
                                     max(1, b.shape[0]), native.get_num_threads()))
    return int(zeros[0]) + 1 if zeros.size else 0


def gelsy(a, b, rcond: float):
    """LAPACK's gelsy on column-major ``a`` (m x n) and ``b`` (max(m, n) x k), in
    place: (info, rank).  Its rank is the largest leading block of a QR's R
    whose condition number (laic1's incremental estimate) stays under 1 /
    rcond.  As MKL's gelsy in PyTorch (on a well-conditioned matrix its
    solution equals the gels driver's, bit for bit, and it takes gels's time),
    the QR is first unpivoted (geqrf); only where that R does not come out of
    full rank is it redone with column pivoting (geqp3), the rank then taken
    from the pivoted R.  Then lapack.c's Q^T B and R^-1 over gemm (a rank below n:
    with LAPACK's tzrzf and ormrz, as gelsy) and the pivoted rows put back in
    column order.  A small, complex or out-of-range matrix (one gelsy would
    rescale first) goes to LAPACK's gelsy whole."""
    m, n = a.shape
    k = b.shape[1]
    mn = min(m, n)
    fns = _recursive(a, mn)
    jpvt = int_array(n)
    if fns is None or k == 0 or _out_of_range(a, "gelsy") or _out_of_range(b[:m], "gelsy"):
        rank = scalar_int()
        info = call("gelsy", a.dtype, m, n, k, a, max(1, m), b, max(1, b.shape[0]), jpvt,
                    rcond, rank)
        return info, rank.value
    lda, ldb = max(1, m), max(1, b.shape[0])
    tau = np.empty(mn, a.dtype)
    estimates = np.empty((2, mn), a.dtype)

    def qr_rank(pivots=None):
        if pivots is None:
            geqrf(a, tau)
        else:
            call("geqp3", a.dtype, m, n, a, lda, pivots, tau)
        return int(fns.gelsy_rank(a.ctypes.data, lda, mn, rcond, estimates[0].ctypes.data,
                                  estimates[1].ctypes.data))

    original = a.copy(order="F")
    rank = qr_rank()
    pivoted = rank < mn
    if pivoted:
        a[...] = original
        rank = qr_rank(jpvt)
    if rank == 0:
        b[...] = 0
        return 0, 0
    tau_rz = np.empty(rank, a.dtype)
    if rank < n:
        call("tzrzf", a.dtype, rank, n, a, lda, tau_rz)
    native.check_scratch(fns.apply_q(a.ctypes.data, lda, m, mn, tau.ctypes.data, 0, rank,
                                     b.ctypes.data, k, ldb, native.get_num_threads()))
    b[rank:n] = 0
    if rank < n:
        call("ormrz", a.dtype, b"L", b"T", n, k, rank, n - rank, a, lda, tau_rz, b, ldb)
    if pivoted:
        scratch = np.empty(n, a.dtype)
        fns.unpivot(b.ctypes.data, n, k, ldb, jpvt.ctypes.data, scratch.ctypes.data)
    return 0, rank


_pool = None
MIN_PARALLEL_WORK = 1 << 21     # multiply-adds; below this a thread hand-off costs more


def split_columns(run, columns: int, work: int) -> None:
    """``run(lo, hi)`` for ranges of ``columns`` independent right-hand sides split
    among the intra-op threads (the calling thread takes the first), where MKL
    in PyTorch splits a solve's columns among its threads.  numpy's OpenBLAS
    stays single-threaded (kernels/native.py: its idle workers spin); ctypes
    releases the GIL during each LAPACK call."""
    global _pool
    threads = min(native.get_num_threads(), columns) if work >= MIN_PARALLEL_WORK else 1
    if threads < 2:
        run(0, columns)
        return
    if _pool is None or _pool._max_workers < threads - 1:
        _pool = concurrent.futures.ThreadPoolExecutor(threads - 1, "glasstorch-lapack")
    bounds = [columns * i // threads for i in range(threads + 1)]
    futures = [_pool.submit(run, lo, hi) for lo, hi in zip(bounds[1:-1], bounds[2:])]
    run(0, bounds[1])
    for f in futures:
        f.result()
