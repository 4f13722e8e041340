"""numpy's own LAPACK, routine by routine (what ATen's BatchLinearAlgebra.cpp calls).

``numpy.linalg`` wraps a handful of LAPACK drivers behind fixed choices (gesv
for inv, gelsd for lstsq, no getrf, trsm, sytrf, orgqr or ormqr at all).  The
OpenBLAS that numpy's wheels bundle exports the whole LAPACKE interface, so the
kernels call the routines PyTorch calls, with PyTorch's arguments, on
column-major copies of each matrix, and read back LAPACK's ``info`` codes.

    call("getrf", dtype, m, n, a, lda, ipiv)      -> info (0, or LAPACK's code)
    int_array(shape)                             an array of LAPACK's integers

Arguments are passed as given: numpy arrays become pointers, bytes of length
one a ``char``, Python ints LAPACK integers and Python floats the routine's
real type.  When numpy carries no LAPACKE (a numpy built against another
BLAS), ``call`` raises PyTorch's error of a build without LAPACK.
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import native

__all__ = ["call", "trsm", "int_array", "scalar_int", "INT"]

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
