"""fft.c's transforms from Python: one pass per transformed dim (the C kernels of
kernels/spectral.py's primitives, where MKL's DFTI runs in PyTorch).

fft.c is compiled like native.c (``native.build``) and takes power-of-two
lengths up to MAX_LENGTH on at least MIN_LINES lines at once.
Where it does not (another length, few lines, no compiler, or
``GLASSTORCH_NATIVE=0``), spectral.py keeps numpy's pocketfft.

    c2c(src, dst, axis, forward, scale)     complex -> complex along ``axis``
    r2c(src, dst, axis, scale, full)        real (n) -> complex (n/2 + 1, or n)
    c2r(src, dst, axis, scale)              complex (>= n/2 + 1) -> real (n)
    run(passes)                             those passes, in order, in one call

Each of the first three plans a pass (a ``Pass``), or returns None where
fft.c does not take it; ``run`` runs a transform's passes in one parallel
region (fft.c's ``gt_fft_run``), so that an n-d transform wakes the intra-op
threads once.  ``src`` and ``dst`` are numpy arrays; ``dst`` may be ``src``
for c2c (each tile of lines is read whole before it is written), and a pass
may read what an earlier one of the same ``run`` writes.  Twiddles are
computed in float64 and rounded once, per length, dtype and direction, and
cached; so is each layout's pass (strides, sizes, tables: all but the data
pointers), which keeps planning a pass near 2 us.
"""
from __future__ import annotations

import ctypes
import math
import os
from functools import lru_cache

import numpy as np

from . import native

__all__ = ["c2c", "r2c", "c2r", "run"]

_SOURCE = os.path.join(os.path.dirname(__file__), "fft.c")
_SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
MAX_LENGTH = 1 << 16        # a tile of 16 lines of 2^16 complex float32 is 8 MiB
MIN_LINES = 8               # fewer lines leave most of a tile's lanes idle
KINDS = ("c2c", "r2c", "c2r")      # fft.c's enum of pass kinds


class Pass(ctypes.Structure):
    """fft.c's gt_fft_pass: one pass over the middle dim of (outer, n, inner)
    views of ``input`` and ``output`` (strides in real scalars).  Python attributes
    beside the fields: ``kind`` (a name of KINDS), ``real`` (the real dtype,
    which picks the f32 or f64 build) and ``keep`` (arrays the pointers need
    alive until the pass has run)."""
    _fields_ = [("input", ctypes.c_void_p), ("output", ctypes.c_void_p),
                ("in_st", ctypes.c_int64 * 3), ("out_st", ctypes.c_int64 * 3),
                ("outer", ctypes.c_int64), ("n", ctypes.c_int64), ("inner", ctypes.c_int64),
                ("wr", ctypes.c_void_p), ("wi", ctypes.c_void_p), ("rr", ctypes.c_void_p),
                ("ri", ctypes.c_void_p), ("bitrev", ctypes.c_void_p),
                ("scale", ctypes.c_double),
                ("kind_code", ctypes.c_int32), ("dir", ctypes.c_int32), ("full", ctypes.c_int32)]


def _declare(lib):
    for suffix in ("f32", "f64"):
        run_passes = getattr(lib, f"gt_fft_run_{suffix}")
        run_passes.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        run_passes.restype = ctypes.c_int64     # 0, or the bytes of scratch refused
    return lib


# fft.c, compiled like native.c (None where native loops are off or no compiler exists)
_library = native.companion(_SOURCE, _declare)


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
    return (before[0], after[0]), (int(before[1]), int(strides[axis]), int(after[1]))


def _plan(src_shape, src_strides, src_item, dst_shape, dst_strides, axis, item):
    """How a pass over ``axis`` runs for these layouts of src and dst (strides in
    bytes; ``src_item``: bytes per src element, ``item`` per real scalar;
    cached in _template, since programs repeat their shapes): the order of
    dims that puts dst's others around ``axis`` by stride (those larger before
    it, smaller after), whether src is copied first (C order, after that
    transpose: its dims do not merge), both (outer, n, inner) stride triples
    and the outer, inner sizes.  None when dst's dims do not merge either (not
    a dense layout)."""
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


@lru_cache(maxsize=256)
def _template(kind, src_shape, src_strides, src_dtype, dst_shape, dst_strides, dst_dtype, axis,
              n, sign, scale, full):
    """A pass's fields for these layouts, cached: the Pass's bytes with its data
    pointers left 0, the dims order src is copied in first (None: no copy,
    see _plan) and the real dtype; None where fft.c does not take the pass."""
    real = np.dtype(src_dtype if kind == "r2c" else dst_dtype)
    real = np.dtype(real.char.lower()) if real.kind == "c" else real
    lines = math.prod(dst_shape) // max(dst_shape[axis], 1)
    if not (2 <= n <= MAX_LENGTH and n & (n - 1) == 0 and lines >= MIN_LINES
            and real in _SUFFIX):
        return None
    plan = _plan(src_shape, src_strides, np.dtype(src_dtype).itemsize, dst_shape, dst_strides,
                 axis, real.itemsize)
    if plan is None:
        return None
    order, copy, src_view, dst_view, outer, inner = plan
    tables = _tables(n, real, sign, kind != "c2c")
    fields = Pass(0, 0, src_view, dst_view, outer, n, inner, *tables, scale, KINDS.index(kind),
                  sign, full)
    return bytes(fields), order if copy else None, real


def _pass(kind, src, dst, axis, n, sign, scale, full=False):
    """The Pass of ``kind`` over ``axis`` between these arrays, or None where
    fft.c does not take it."""
    template = _template(kind, src.shape, src.strides, src.dtype, dst.shape, dst.strides,
                         dst.dtype, axis, n, sign, scale, full)
    if template is None or _library() is None:
        return None
    fields, order, real = template
    if order is not None:
        src = np.ascontiguousarray(src.transpose(order))
    p = Pass.from_buffer_copy(fields)
    p.input, p.output = src.ctypes.data, dst.ctypes.data
    p.kind, p.real, p.keep = kind, real, (src, dst)
    return p


def run(passes) -> None:
    """Run fft.c's ``passes`` (of one real dtype) in order, in one call; scratch
    the system refuses raises PyTorch's DefaultCPUAllocator error."""
    if passes:
        native.check_scratch(getattr(_library(), f"gt_fft_run_{_SUFFIX[passes[0].real]}")(
            (Pass * len(passes))(*passes), len(passes), native.get_num_threads()))


@lru_cache(maxsize=None)
def _tables(n: int, dtype, sign: int, split: bool):
    """The addresses of the tables a pass of length ``n`` reads: the twiddles of
    its complex transform (of n, or n/2 for r2c/c2r, ``split``), the split
    step's twiddles (None unless ``split``), the bit reversal (the arrays stay
    alive in their caches)."""
    m = n // 2 if split else n
    split_twiddles = _split_twiddles(n, dtype, sign) if split else (None, None)
    return tuple(None if a is None else a.ctypes.data
                 for a in (*_twiddles(m, dtype, sign), *split_twiddles, _bitrev(m)))


def c2c(src, dst, axis: int, forward: bool, scale: float):
    """The pass dst = scale * DFT of src along ``axis`` (complex arrays of one
    dtype); None where fft.c does not take it."""
    return _pass("c2c", src, dst, axis, dst.shape[axis], -1 if forward else 1, scale)


def r2c(src, dst, axis: int, scale: float, full: bool):
    """The pass dst = scale * the forward DFT of real ``src`` along ``axis``: its
    first n/2 + 1 entries, or all n (mirrored) when ``full``; None where fft.c
    does not take it."""
    return _pass("r2c", src, dst, axis, src.shape[axis], -1, scale, full)


def c2r(src, dst, axis: int, scale: float):
    """The pass dst = scale * the inverse DFT of the Hermitian signal whose first
    n/2 + 1 entries are ``src``'s along ``axis`` (n = dst's length there);
    None where fft.c does not take it."""
    return _pass("c2r", src, dst, axis, dst.shape[axis], 1, scale)
