"""float32/float64 ``linalg_vector_norm`` in ATen's order of operations
(ReduceOpsKernel.cpp's norm kernel), so that norms, and the gradient clipping
built on them, equal PyTorch's bit for bit.

ATen takes one of two loops:

- The 2-norm of contiguous rows (the reduced elements of each output one
  unit-stride block in memory), same dtype in and out: the squares are summed into
  32-byte lanes (8 floats, 4 doubles; each product rounded, then the sum), the
  lanes are added in order, the leftover elements one by one, then ``sqrt``.
  Built for AVX2/AVX512 the compiler fuses the leftover loop's multiply-adds
  (``fma``), after taking float leftovers four at a time with plain products
  (its vectorized epilogue); built for DEFAULT nothing is fused.  A row is
  never split between threads.
- Anything else (strided rows, the 1-norm): one running sum per output, the
  reduced dim of the smallest stride fastest, products rounded; a single
  output over 32768 or more elements is cut into one range per thread, whose
  sums are added last, in thread order.

Other orders (inf, -inf, 0, p) and dtypes stay with reduction.py's float64
code: max, min and counts are exact anyway.
"""
from __future__ import annotations

import math

import numpy as np

from .cascade_sum import GRAIN_SIZE
from .native import fused, get_num_threads, multiply_add

_LANE_BYTES = 32


def vector_norm(a: np.ndarray, ord, dims, keepdim: bool):
    """``linalg_vector_norm(a, ord, dims, keepdim)`` in ATen's order, or None where
    reduction.py's code applies (see the module docstring)."""
    if a.dtype not in (np.float32, np.float64) or ord not in (1, 2) or a.size == 0:
        return None
    dims = sorted(dims) if len(dims) else list(range(a.ndim))
    out_shape = tuple(1 if d in dims else n for d, n in enumerate(a.shape)) if keepdim else \
        tuple(n for d, n in enumerate(a.shape) if d not in dims)
    rows = _contiguous_rows(a, dims)
    if ord == 2 and rows is not None:
        result = _two_norm_rows(rows)
    else:
        result = _running_norms(a, dims, ord)
    return result.reshape(out_shape)


def _contiguous_rows(a, dims):
    """The reduced elements as rows (one per output, in the kept dims' order) when
    ATen sees contiguous rows, else None.  TensorIterator puts the reduced dims
    innermost, sorted by stride, and merges neighbours: one merged dim of unit
    stride is is_reduce_lastdim, whatever the kept dims' strides."""
    expected = a.itemsize
    for d in sorted((d for d in dims if a.shape[d] != 1), key=lambda d: a.strides[d]):
        if a.strides[d] != expected:
            return None
        expected *= a.shape[d]
    kept = [d for d in range(a.ndim) if d not in dims]
    count = math.prod(a.shape[d] for d in dims)
    rows = np.lib.stride_tricks.as_strided(
        a, [a.shape[d] for d in kept] + [count], [a.strides[d] for d in kept] + [a.itemsize],
        writeable=False)
    return rows.reshape(-1, count)


def _two_norm_rows(rows):
    """The lane loop of the 2-norm over each row (see the module docstring)."""
    kind = rows.dtype.type
    lanes = _LANE_BYTES // rows.itemsize
    n = rows.shape[1]
    whole = n - n % lanes
    blocks = rows[:, :whole].reshape(rows.shape[0], -1, lanes)
    acc = np.cumsum(blocks * blocks, axis=1, dtype=kind)[:, -1] if whole else \
        np.zeros((rows.shape[0], lanes), kind)
    total = acc[:, 0]
    for j in range(1, lanes):
        total = total + acc[:, j]
    leftover = n - whole
    plain = leftover if not fused() else (leftover // 4 * 4 if kind is np.float32 else 0)
    for d in range(whole, n):
        x = rows[:, d]
        total = total + x * x if d - whole < plain else multiply_add(x, x, total)
    return np.sqrt(total)


def _running_norms(a, dims, ord):
    """One running sum per output in memory order, then ``sqrt`` for the 2-norm."""
    kind = a.dtype.type
    if len(dims) == a.ndim:
        terms = a.ravel(order="K")[:, None]
    else:   # TensorIterator's order: the reduced dim of the smallest stride fastest
        walk = sorted(dims, key=lambda d: -a.strides[d])
        moved = np.moveaxis(a, walk, list(range(len(dims))))
        terms = np.ascontiguousarray(moved).reshape(
            math.prod(a.shape[d] for d in dims), -1)
    terms = np.abs(terms) if ord == 1 else terms * terms
    count, outputs = terms.shape
    threads = min(get_num_threads(), -(-count // GRAIN_SIZE))
    if outputs == 1 and threads > 1:       # parallel_for's ranges, one per thread
        chunk = -(-count // threads)
        total = kind(0)
        for begin in range(0, count, chunk):
            total = total + np.cumsum(terms[begin:begin + chunk, 0], dtype=kind)[-1]
        result = np.array([total], kind)
    else:
        result = np.cumsum(terms, axis=0, dtype=kind)[-1]
    return np.sqrt(result) if ord == 2 else result
