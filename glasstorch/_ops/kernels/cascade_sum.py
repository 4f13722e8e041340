"""float32/float64 sum and nansum in ATen's order of additions (SumKernel.cpp's
cascade_sum, driven by TensorIterator's reduction loop).

Floating-point addition is not associative, so a sum's last bits depend on the
order of its additions.  PyTorch's order is deterministic for a given CPU
thread count (``torch.get_num_threads()``); following it step by step makes ``x.sum()`` equal
to PyTorch's bit for bit, and seeded programs (a loss summed every step) follow
PyTorch's trajectory.  The order has three layers, each mirrored here:

1. TensorIterator's geometry: dims sorted by stride (reduced dims first, the
   fastest-moving first), neighbours coalesced, then walked in 2-d steps
   (``_geometry``, ``_steps``).
2. ``parallel_reduce``: from 32768 elements on, with more than one intra-op
   thread, an all-reduce is cut into one range per thread whose partial sums
   are summed last (two-pass); a reduction to several outputs is cut along a
   kept dim instead, rounded to 128-byte column groups (``cascade_sum``).
3. The loop of one 2-d step: ``native.c``'s ``gt_cascade_sum`` (32-byte vectors
   on every CPU, 4-way interleaving, a 4-level cascade), or
   ``_step_numpy`` here, which adds in the same order, lane arrays at a time,
   where there is no compiler.
"""
from __future__ import annotations

import math

import numpy as np

from . import native

GRAIN_SIZE = 32768   # at::internal::GRAIN_SIZE


# -- the loop of one 2-d step, in numpy -------------------------------------------------------

def _ceil_log2(x: int) -> int:
    return 1 if x <= 2 else (x - 1).bit_length()


def _running(x, axis=0):
    """0 + x[0] + x[1] + ... along ``axis``, one rounding per addition."""
    x = np.moveaxis(x, axis, 0)
    total = np.zeros(x.shape[1:], x.dtype)
    for item in x:
        total = total + item
    return total


def _multi_row(x):
    """ATen's multi_row_sum along axis 0 of ``x`` (every other axis a lane): blocks of
    2^p elements summed into level 0, carried into level 1 after each block, into
    level 2 every 2^p carries, into level 3 every 2^p of those; then
    ((leftover + level 1) + level 2) + level 3."""
    size = x.shape[0]
    step = 1 << max(4, _ceil_log2(size) // 4)
    levels = []
    sums = x
    for _ in range(3):              # levels 0, 1, 2: full groups move up, the rest stay
        full = sums.shape[0] // step
        levels.append(_running(sums[full * step:]))
        sums = _running(sums[:full * step].reshape(full, step, *x.shape[1:]), axis=1)
    total = levels[0]
    for carried in (levels[1], levels[2], _running(sums)):
        total = total + carried
    return total


def _row_sum(x):
    """ATen's row_sum along axis 0: 4 interleaved partial sums (multi_row), the
    leftover elements added to the first, then the four added in order."""
    size_ilp = x.shape[0] // 4
    partial = _multi_row(x[:size_ilp * 4].reshape(size_ilp, 4, *x.shape[1:]))
    first = partial[0]
    for item in x[size_ilp * 4:]:
        first = first + item
    for k in range(1, 4):
        first = first + partial[k]
    return first


def _view(address: int, dtype, shape, strides):
    """A numpy array over memory the caller keeps alive."""
    holder = type("Memory", (), {})()
    holder.__array_interface__ = {"data": (address, False), "typestr": np.dtype(dtype).str,
                                  "shape": tuple(shape), "strides": tuple(strides), "version": 3}
    return np.asarray(holder)


def _step_numpy(address_in, address_out, strides, size0, size1, dtype, nan):
    """gt_cascade_sum of native.c in numpy: each output column is summed either by
    multi_row (columns in groups of 4 vectors, or of 4 strided columns) or by
    row_sum; contiguous inner rows are read as vectors whose lanes are added last."""
    in0, in1, out0, out1 = strides
    width = native.sum_vector_width(dtype.itemsize)
    if out0 != 0 and out1 == 0:
        in0, in1, out0, out1, size0, size1 = in1, in0, out1, out0, size1, size0
    itemsize = np.dtype(dtype).itemsize
    x = _view(address_in, dtype, (size1, size0), (in1, in0))
    out = _view(address_out, dtype, (size1, size0) if out0 else (size1,),
                (out1, out0) if out0 else (out1,))
    if nan:
        x = np.where(np.isnan(x), dtype.type(0), x)
    if out0 != 0:                                  # nothing reduced here: out += in
        current = np.where(np.isnan(out), dtype.type(0), out) if nan else out
        out[...] = current + x
        return
    if in0 == itemsize and size0 >= width:         # contiguous inner rows, read as vectors
        vecs = size0 // width
        lanes = _row_sum(x[:, :vecs * width].reshape(size1, vecs, width).transpose(1, 0, 2))
        total = np.zeros(size1, dtype)
        for k in range(vecs * width, size0):
            total = total + x[:, k]
        for v in range(width):
            total = total + lanes[:, v]
        _store(out, out1, total)
        return
    group = 4 * width if in1 == itemsize and size1 >= width else (0 if in0 < in1 else 4)
    columns = x.T                                  # (size0, size1): each column a lane
    multi = size1 // group * group if group else 0
    sums = np.empty(size1, dtype)
    sums[:multi] = _multi_row(columns[:, :multi])
    sums[multi:] = _row_sum(columns[:, multi:])
    _store(out, out1, sums)


def _store(out, stride, sums):
    """out[j] += sums[j], one row after another (rows share one output when the
    step's second dim is reduced too: stride 0)."""
    if stride:
        out[...] = out + sums
        return
    total = out[0]
    for value in sums:
        total = total + value
    out[0] = total


# -- TensorIterator's geometry and walk ---------------------------------------------------

def _geometry(shape, in_strides, out_strides):
    """Shape and byte strides (input, output) of a reduction's TensorIterator,
    fastest-moving dim first: sorted as ``reorder_dimensions`` sorts (reduced dims
    first, then by stride, ties by size), then ``coalesce_dimensions``."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))
    operands = (out_strides, in_strides)

    def should_swap(d0, d1):
        for arg, strides in enumerate(operands):
            s0, s1 = strides[d0], strides[d1]
            if arg == 0 and (s0 == 0) != (s1 == 0):
                return 1 if s1 == 0 else -1
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[d0], perm[d1])
            if comparison > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif comparison < 0:
                break
    sizes = [shape[d] for d in perm]
    strides = [[s[d] for d in perm] for s in operands]
    if not sizes:
        return [], [], []
    prev = 0
    for dim in range(1, len(sizes)):
        if sizes[prev] == 1 or sizes[dim] == 1 or \
                all(sizes[prev] * s[prev] == s[dim] for s in strides):
            if sizes[prev] == 1:
                for s in strides:
                    s[prev] = s[dim]
            sizes[prev] *= sizes[dim]
        else:
            prev += 1
            sizes[prev] = sizes[dim]
            for s in strides:
                s[prev] = s[dim]
    del sizes[prev + 1:]
    return sizes, strides[1][:prev + 1], strides[0][:prev + 1]


def _steps(sizes, begin, end):
    """TensorIterator's serial_for_each over elements [begin, end): (index, size0,
    size1) per 2-d step, ``index`` the multi-index where the step starts."""
    if len(sizes) <= 1:
        yield [begin] if sizes else [], end - begin, 1
        return
    values, rest = [], begin
    for size in sizes:
        values.append(rest % size)
        rest //= size
    offset = begin
    while offset < end:
        step0 = min(sizes[0] - values[0], end - offset)
        step1 = 1
        if step0 == sizes[0]:
            step1 = min(sizes[1] - values[1], (end - offset) // sizes[0])
        yield list(values), step0, step1
        offset += step0 * step1
        carry, i = step0, 0
        if step1 != 1:
            carry, i = step1, 1
        while i < len(sizes) and carry > 0:
            value = values[i] + carry
            carry = 1 if value >= sizes[i] else 0
            values[i] = value - sizes[i] if carry else value
            i += 1


def _walk(sizes, in_strides, out_strides, address_in, address_out, begin, end, step):
    """Run ``step`` over the 2-d steps of elements [begin, end)."""
    pad_in, pad_out = (in_strides + [0, 0])[:2], (out_strides + [0, 0])[:2]
    for index, size0, size1 in _steps(sizes, begin, end):
        offset_in = sum(i * s for i, s in zip(index, in_strides))
        offset_out = sum(i * s for i, s in zip(index, out_strides))
        step(address_in + offset_in, address_out + offset_out,
             (pad_in[0], pad_in[1], pad_out[0], pad_out[1]), size0, size1)


def _chunks(n: int, grain: int, threads: int):
    """at::parallel_for's ranges (thread id, begin, end) under OpenMP."""
    if n <= grain or threads <= 1:
        return [(0, 0, n)]
    used = min(threads, -(-n // grain))
    chunk = -(-n // used)
    return [(t, t * chunk, min(n, (t + 1) * chunk)) for t in range(used) if t * chunk < n]


def cascade_sum(a: np.ndarray, out: np.ndarray, dims, nan: bool = False,
                address: int | None = None) -> None:
    """``out`` = the sum of float32/float64 ``a`` over ``dims`` (NaN read as 0 when
    ``nan``), in PyTorch's order of additions; ``out`` is contiguous, of the
    reduced shape (keepdim or not), and ``a``'s dtype.  ``address``: ``a``'s data
    address when the caller knows it (numpy takes microseconds to say it)."""
    dtype, numel = a.dtype, a.size
    whole = len(dims) == a.ndim and a.flags.c_contiguous
    lib = native.library()
    if lib is not None and whole and numel < GRAIN_SIZE:     # the common small sum: one step
        out[...] = native.sum_contiguous(a.ctypes.data if address is None else address, numel,
                                         dtype.itemsize, nan)
        return
    out[...] = 0
    if numel == 0:
        return
    if lib is not None:
        def step(address_in, address_out, strides, size0, size1):
            native.cascade_sum(address_in, address_out, strides, size0, size1,
                               dtype.itemsize, nan)
    else:
        def step(address_in, address_out, strides, size0, size1):
            with np.errstate(invalid="ignore", over="ignore"):   # inf - inf, as in C
                _step_numpy(address_in, address_out, strides, size0, size1, dtype, nan)

    if whole:
        sizes, in_strides, out_strides = [numel], [dtype.itemsize], [0]
    else:
        kept = out.reshape([1 if d in dims else n for d, n in enumerate(a.shape)])
        out_strides = [0 if d in dims else s for d, s in enumerate(kept.strides)]
        sizes, in_strides, out_strides = _geometry(a.shape, list(a.strides), out_strides)
    threads = native.get_num_threads()
    address_in, address_out = a.ctypes.data, out.ctypes.data
    if numel < GRAIN_SIZE or threads == 1:
        _walk(sizes, in_strides, out_strides, address_in, address_out, 0, numel, step)
    elif out.size == 1:
        # two-pass: one partial sum per thread (a buffer of get_num_threads()
        # zeros), then the buffer summed into the output
        buffer = np.zeros(threads, dtype)
        ranges = _chunks(numel, GRAIN_SIZE, threads)
        if lib is not None and whole:   # the ranges on the OpenMP threads, as PyTorch's
            native.sum_chunks(address_in, numel, ranges[0][2], dtype.itemsize, nan, buffer)
        else:
            for thread, begin, end in ranges:
                _walk(sizes, in_strides, out_strides, address_in,
                      buffer.ctypes.data + thread * dtype.itemsize, begin, end, step)
        _walk([threads], [dtype.itemsize], [0], buffer.ctypes.data, address_out, 0,
              threads, step)
    else:
        _split_dims(sizes, in_strides, out_strides, address_in, address_out, threads,
                    dtype.itemsize, step)


def _split_dims(sizes, in_strides, out_strides, address_in, address_out, threads, itemsize,
                step):
    """parallel_dim_reduction: the kept dim to split is the outermost one with at
    least ``threads`` columns (else the largest); each thread's columns, rounded
    to 128-byte groups where they are adjacent in memory, are walked whole."""
    def reduced(d):
        return out_strides[d] == 0 and sizes[d] > 1

    dim = best = len(sizes) - 1
    while dim >= 0 and not reduced(dim):
        if sizes[dim] >= threads:
            best = dim
            break
        if sizes[dim] > sizes[best]:
            best = dim
        dim -= 1
    dim = best
    cols = sizes[dim]
    multiple = 128 // itemsize if in_strides[dim] == itemsize else 1
    for _, begin, end in _chunks(cols, 1, threads):
        begin -= begin % multiple
        if end != cols:
            end -= end % multiple
        if begin == end:
            continue
        narrowed = list(sizes)
        narrowed[dim] = end - begin
        _walk(narrowed, in_strides, out_strides, address_in + begin * in_strides[dim],
              address_out + begin * out_strides[dim], 0, math.prod(narrowed), step)
