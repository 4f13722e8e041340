"""fft.c's transforms from Python: one pass per transformed dim (the C kernels of
kernels/spectral.py's primitives, where MKL's DFTI runs in PyTorch).

fft.c is compiled like native.c (``native.build``) and takes power-of-two
lengths on many lines at once (``handles``).
Where it does not (another length, few lines, no compiler, or
``GLASSTORCH_NATIVE=0``), spectral.py keeps numpy's pocketfft.

    c2c(src, dst, axis, forward, scale)     complex -> complex along ``axis``
    r2c(src, dst, axis, scale, full)        real (n) -> complex (n/2 + 1, or n)
    c2r(src, dst, axis, scale)              complex (>= n/2 + 1) -> real (n)

``src`` and ``dst`` are numpy arrays; ``dst`` may be ``src`` for c2c (each tile
of lines is read whole before it is written).  Each returns False, doing
nothing, where fft.c does not take the pass.  Twiddles are computed in
float64 and rounded once, per length, dtype and direction, and cached; so is
each layout's plan (strides, sizes), which keeps a pass's Python cost near
the ctypes call's.
"""
from __future__ import annotations

import ctypes
import math
import os
from functools import lru_cache

import numpy as np

from . import native

__all__ = ["c2c", "r2c", "c2r"]

_SOURCE = os.path.join(os.path.dirname(__file__), "fft.c")
_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
MAX_LENGTH = 1 << 16        # a tile of 16 lines of 2^16 complex float32 is 8 MiB
MIN_LINES = 8               # fewer lines leave most of a tile's lanes idle
def _declare(lib):
    p, i64, c_int = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    shape = [i64, i64, i64]
    for suffix, real in (("f32", ctypes.c_float), ("f64", ctypes.c_double)):
        getattr(lib, f"gt_fft_c2c_{suffix}").argtypes = \
            [p, p, p, p, *shape, p, p, p, c_int, real, c_int]
        getattr(lib, f"gt_fft_r2c_{suffix}").argtypes = \
            [p, p, p, p, *shape, p, p, p, p, p, real, c_int, c_int]
        getattr(lib, f"gt_fft_c2r_{suffix}").argtypes = \
            [p, p, p, p, *shape, p, p, p, p, p, real, c_int]
    return lib


# fft.c, compiled like native.c (None where native loops are off or no compiler exists)
_library = native.companion(_SOURCE, _declare)


def _real_dtype(a):
    return np.dtype(a.real.dtype if a.dtype.kind == "c" else a.dtype)


def handles(n: int, lines: int, real) -> bool:
    """Whether fft.c takes a pass of length ``n`` (the real length for r2c/c2r)
    over ``lines`` lines whose real dtype is ``real``."""
    return (2 <= n <= MAX_LENGTH and n & (n - 1) == 0 and lines >= MIN_LINES
            and real in _SUFFIX and _library() is not None)


@lru_cache(maxsize=None)
def _twiddles(n: int, dtype, sign: int):
    """exp(sign 2 pi i k / n) for k < n, as (real, imag) arrays of ``dtype``."""
    angle = (sign * 2 * math.pi / n) * np.arange(n)
    return np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)


@lru_cache(maxsize=None)
def _split_twiddles(n: int, dtype, sign: int):
    """exp(sign 2 pi i k / n) for k <= n/2 (the real transforms' split step)."""
    angle = (sign * 2 * math.pi / n) * np.arange(n // 2 + 1)
    return np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)


@lru_cache(maxsize=None)
def _bitrev(n: int):
    """The bit-reversal permutation of 0..n-1 (int32)."""
    bits = n.bit_length() - 1
    k = np.arange(n, dtype=np.int64)
    out = np.zeros(n, np.int64)
    for b in range(bits):
        out |= ((k >> b) & 1) << (bits - 1 - b)
    return out.astype(np.int32)


def _view3(shape, strides, axis):
    """(outer, inner) sizes and the (outer, n, inner) strides around ``axis`` of
    an array of ``shape`` and ``strides`` (in real scalars, fft.c's unit), or
    None when the dims before (or after) it do not merge into one stride."""
    def merged(dims):
        size, stride = 1, 0
        for d in reversed(dims):
            if shape[d] == 1:
                continue
            if size > 1 and strides[d] != stride * size:
                return None
            if size == 1:
                stride = strides[d]
            size *= shape[d]
        return size, stride

    before, after = merged(range(axis)), merged(range(axis + 1, len(shape)))
    if before is None or after is None:
        return None
    return (before[0], after[0]), np.array([before[1], strides[axis], after[1]], np.int64)


@lru_cache(maxsize=256)
def _plan(src_shape, src_strides, src_item, dst_shape, dst_strides, axis, item):
    """How a pass over ``axis`` runs for these layouts of src and dst (strides in
    bytes; ``src_item``: bytes per src element, ``item`` per real scalar), cached since programs repeat their
    shapes: the order of dims that puts dst's others around ``axis`` by stride
    (those larger before it, smaller after), whether src is copied first (C
    order, after that transpose: its dims do not merge), both (outer, n,
    inner) stride arrays and the outer, inner sizes.  None when dst's dims do
    not merge either (not a dense layout)."""
    if any(s % item for s in src_strides + dst_strides):
        return None
    others = sorted((d for d in range(len(dst_shape)) if d != axis),
                    key=lambda d: -abs(dst_strides[d]))
    before = [d for d in others if abs(dst_strides[d]) > abs(dst_strides[axis])]
    order = tuple(before + [axis] + [d for d in others if d not in before])
    shape = [dst_shape[d] for d in order]
    dst_view = _view3(shape, [dst_strides[d] // item for d in order], len(before))
    if dst_view is None:
        return None
    src_shape = [src_shape[d] for d in order]
    src_view = _view3(src_shape, [src_strides[d] // item for d in order], len(before))
    copy = src_view is None
    if copy:
        contiguous = (np.cumprod([1, *src_shape[:0:-1]])[::-1] * (src_item // item)).tolist()
        src_view = _view3(src_shape, contiguous, len(before))
    (outer, inner), dst_view_strides = dst_view
    return order, copy, src_view[1], dst_view_strides, outer, inner


def _run(kind, src, dst, axis, n, extra):
    """Run ``gt_fft_<kind>`` over ``axis`` when fft.c takes the pass; whether it did."""
    real = _real_dtype(src if kind == "r2c" else dst)
    if not handles(n, dst.size // max(dst.shape[axis], 1), real):
        return False
    plan = _plan(src.shape, src.strides, src.itemsize, dst.shape, dst.strides, axis,
                 real.itemsize)
    if plan is None:
        return False
    order, copy, src_strides, dst_strides, outer, inner = plan
    if copy:
        src = np.ascontiguousarray(src.transpose(order))
    getattr(_library(), f"gt_fft_{kind}_{_SUFFIX[real]}")(
        src.ctypes.data, src_strides.ctypes.data, dst.ctypes.data, dst_strides.ctypes.data,
        outer, n, inner, *extra(real), native.get_num_threads())
    return True


@lru_cache(maxsize=None)
def _tables(n: int, dtype, sign: int, split: bool):
    """The addresses of the tables a pass of length ``n`` reads: the twiddles of
    its complex transform (of n, or n/2 for r2c/c2r, ``split``), the split
    step's twiddles when ``split``, the bit reversal (the arrays stay alive in
    their caches)."""
    m = n // 2 if split else n
    arrays = [*_twiddles(m, dtype, sign), *(_split_twiddles(n, dtype, sign) if split else ()),
              _bitrev(m)]
    return tuple(a.ctypes.data for a in arrays)


def c2c(src, dst, axis: int, forward: bool, scale: float) -> bool:
    """dst = scale * DFT of src along ``axis`` (complex arrays of one dtype);
    False (nothing done) where fft.c does not take the pass."""
    n = dst.shape[axis]
    sign = -1 if forward else 1
    return _run("c2c", src, dst, axis, n, lambda real: (*_tables(n, real, sign, False),
                                                         sign, scale))


def r2c(src, dst, axis: int, scale: float, full: bool) -> bool:
    """dst = scale * the forward DFT of real ``src`` along ``axis``: its first
    n/2 + 1 entries, or all n (mirrored) when ``full``; False where fft.c
    does not take the pass."""
    n = src.shape[axis]
    return _run("r2c", src, dst, axis, n, lambda real: (*_tables(n, real, -1, True),
                                                         scale, int(full)))


def c2r(src, dst, axis: int, scale: float) -> bool:
    """dst = scale * the inverse DFT of the Hermitian signal whose first n/2 + 1
    entries are ``src``'s along ``axis`` (n = dst's length there); False where
    fft.c does not take the pass."""
    n = dst.shape[axis]
    return _run("c2r", src, dst, axis, n, lambda real: (*_tables(n, real, 1, True), scale))
