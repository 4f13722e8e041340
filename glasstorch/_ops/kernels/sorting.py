"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian,
mode (ATen's Sorting.cpp, cpu/SortingKernel.cpp, TopKImpl.h and the mode kernel of
cpu/TensorCompareKernel.cpp).

Note [sort outputs]
    ``sort`` keeps the input's strides when the input is non-overlapping and dense
    (its outputs are made with ``empty_like``); the other outputs are contiguous.

Note [ties]
    Values never depend on the algorithm; which index a tie returns does.  ATen
    runs libstdc++'s unstable algorithms on (value, index) pairs of each row:

        sort(stable=False)  std::sort (introsort; insertion sort below 17
                            elements), NaN last ascending / first descending;
                            a row of stride 0 is left as is (indices 0..n-1)
        sort(stable=True)   std::stable_sort: any stable sort gives its result
        topk                std::partial_sort when k * 64 <= n, else
                            std::nth_element at k-1 then (sorted=True) std::sort
                            of the first k-1; NaN counts as the largest
        kthvalue            ATen's own quickselect (Sedgewick, median of three)
                            on a contiguous copy; NaN the largest
        median(dim)         the first NaN if any, else std::nth_element under
                            (value, index) order: the stable sort's middle
        nanmedian(dim)      std::nth_element under (value, index), NaN last, at
                            (non-NaN count - 1) / 2, rounded toward zero
        median(), nanmedian()  std::nth_element on a copy in memory order (only
                            the sign of a zero can tell)
        mode                std::sort by value alone; of the first value with the
                            highest count, the index std::sort left last
        max/min(dim), argmax/argmin  the first occurrence, a NaN first (numpy's
                            argmax/argmin already agree: reduction.py)

    ``sorting.c`` repeats those algorithms step for step (GCC's stl_algo.h and
    stl_heap.h, which PyTorch's Linux build uses); the Python versions below
    give the same results, slowly, when no compiler is available.

Also here: unique (sort-based, Unique.cpp) and the binary searches
searchsorted / bucketize (Bucketization.cpp).
"""
from __future__ import annotations

import ctypes
import math
import os

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..._tensor import _non_overlapping_and_dense, Tensor
from ..structured import empty_tensor, TensorMeta, wrap_dim
from . import impl, kernel, meta, native
from ._common import _from_array, _no_meta_kernel, _on_meta, _sizes
from .reduction import (_BOOL, _INT64, _check_nonempty_dims, _float_for_compare, _move_last,
                        _not_implemented, _restore, _write, reduced_shape)


# -- libstdc++'s algorithms on (key, index) records -----------------------------------
#
# The comparators, numbered as sorting.c numbers them.  ``x != x`` is NaN (never for ints).

def _asc(a, b):            # NaN after everything
    return (a[0] == a[0] and b[0] != b[0]) or a[0] < b[0]


def _desc(a, b):           # NaN before everything
    return (a[0] != a[0] and b[0] == b[0]) or a[0] > b[0]


def _lt(a, b):
    return a[0] < b[0]


def _lt_index(a, b):
    return a[0] < b[0] or (a[0] == b[0] and a[1] < b[1])


def _lt_index_nan(a, b):
    return _lt_index(a, b) or (b[0] != b[0] and a[0] == a[0])


_ASC, _DESC, _LT, _LT_INDEX, _LT_INDEX_NAN = range(5)
_COMPARATORS = (_asc, _desc, _lt, _lt_index, _lt_index_nan)


def _linear_insert(v, lo, last, less):
    """__unguarded_linear_insert (stopping at ``lo`` as sorting.c does)."""
    val = v[last]
    while last > lo and less(val, v[last - 1]):
        v[last] = v[last - 1]
        last -= 1
    v[last] = val


def _insertion_sort(v, first, last, less):
    for i in range(first + 1, last):
        if less(v[i], v[first]):
            v[first:i + 1] = [v[i]] + v[first:i]
        else:
            _linear_insert(v, first, i, less)


def _adjust_heap(v, first, hole, length, value, less):
    """__adjust_heap: sift the hole down to a leaf, then __push_heap ``value`` up."""
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(v[first + child], v[first + child - 1]):
            child -= 1
        v[first + hole] = v[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole] = v[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(v[first + parent], value):
        v[first + hole] = v[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = value


def _pop_heap(v, first, last, result, less):
    value = v[result]
    v[result] = v[first]
    _adjust_heap(v, first, 0, last - first, value, less)


def _heap_select(v, first, middle, last, less):
    """__heap_select: __make_heap on [first, middle), then keep the best there."""
    length = middle - first
    if length >= 2:
        for parent in range((length - 2) // 2, -1, -1):
            _adjust_heap(v, first, parent, length, v[first + parent], less)
    for i in range(middle, last):
        if less(v[i], v[first]):
            _pop_heap(v, first, middle, i, less)


def _partial_sort(v, first, middle, last, less):
    """std::partial_sort: heap select, then __sort_heap."""
    _heap_select(v, first, middle, last, less)
    for end in range(middle - 1, first, -1):
        _pop_heap(v, first, end, end, less)


def _partition_pivot(v, first, last, less):
    """__unguarded_partition_pivot: __move_median_to_first of first+1, middle and
    last-1, then Hoare's partition around it."""
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    if less(v[a], v[b]):
        m = b if less(v[b], v[c]) else (c if less(v[a], v[c]) else a)
    else:
        m = a if less(v[a], v[c]) else (c if less(v[b], v[c]) else b)
    v[first], v[m] = v[m], v[first]
    pivot, hi, lo = first, last - 1, first + 1
    while True:
        while lo < hi and less(v[lo], v[pivot]):
            lo += 1
        last -= 1
        while last > pivot and less(v[pivot], v[last]):
            last -= 1
        if not lo < last:
            return lo
        v[lo], v[last] = v[last], v[lo]
        lo += 1


def _introsort_loop(v, first, last, depth, less):
    while last - first > 16:
        if depth == 0:
            _partial_sort(v, first, last, last, less)
            return
        depth -= 1
        cut = _partition_pivot(v, first, last, less)
        _introsort_loop(v, cut, last, depth, less)
        last = cut


def _sort(v, first, last, less):
    """std::sort: introsort to runs of at most 16, then __final_insertion_sort."""
    if last - first < 2:
        return
    _introsort_loop(v, first, last, 2 * ((last - first).bit_length() - 1), less)
    _insertion_sort(v, first, min(last, first + 16), less)
    for i in range(first + 16, last):
        _linear_insert(v, first, i, less)


def _nth_element(v, first, nth, last, less):
    """std::nth_element: __introselect, insertion sort once 3 or fewer remain."""
    if first == last or nth == last:
        return
    depth = 2 * ((last - first).bit_length() - 1)
    while last - first > 3:
        if depth == 0:
            _heap_select(v, first, nth + 1, last, less)
            v[first], v[nth] = v[nth], v[first]
            return
        depth -= 1
        cut = _partition_pivot(v, first, last, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(v, first, last, less)


def _topk(v, k, sorted, less):
    """ATen's topk_impl_loop."""
    if len(v) >= k * 64:
        _partial_sort(v, 0, k, len(v), less)
    else:
        _nth_element(v, 0, k - 1, len(v), less)
        if sorted:
            _sort(v, 0, k - 1, less)


def _quick_select(v, k, gt):
    """ATen's quick_select_template (Sedgewick's), ``gt`` its gt_or_nan."""
    lo, hi = 0, len(v) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(v[lo], v[hi]):
                v[lo], v[hi] = v[hi], v[lo]
            return
        mid = (lo + hi) >> 1
        v[mid], v[lo + 1] = v[lo + 1], v[mid]
        for x, y in ((lo + 1, hi), (lo, hi), (lo + 1, lo)):
            if gt(v[x], v[y]):
                v[x], v[y] = v[y], v[x]
        i, j, piv = lo + 1, hi, v[lo]
        while True:
            i += 1
            while i < hi and gt(piv, v[i]):
                i += 1
            j -= 1
            while j > lo and gt(v[j], piv):
                j -= 1
            if j < i:
                break
            v[i], v[j] = v[j], v[i]
        v[lo], v[j] = v[j], v[lo]
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


# -- running them on rows ---------------------------------------------------------------

_SOURCE = os.path.join(os.path.dirname(__file__), "sorting.c")
def _declare(lib):
    p, i64, c_int = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
    lib.gt_sort_rows.argtypes = [p, i64, i64, c_int, c_int]
    lib.gt_nth_element_rows.argtypes = [p, i64, i64, p, c_int, c_int]
    lib.gt_topk_rows.argtypes = [p, i64, i64, i64, c_int, c_int, c_int]
    lib.gt_kthvalue_rows.argtypes = [p, i64, i64, i64, c_int]
    return lib


# sorting.c, compiled like native.c (None where native loops are off or no compiler exists)
_native = native.companion(_SOURCE, _declare)


def _records(rows):
    """(key, index) records of a 2-d array's rows, as sorting.c lays them out: float
    keys as float64, integer and bool keys as int64 (both exact)."""
    is_int = rows.dtype.kind in "biu"
    rec = np.empty(rows.shape, [("key", np.int64 if is_int else np.float64), ("index", np.int64)])
    rec["key"] = _float_for_compare(rows)
    rec["index"] = np.arange(rows.shape[-1])
    return rec, is_int


def _per_row(rec, fn):
    """Python fallback: ``fn(list of (key, index))`` rearranges each row in place."""
    for r in range(rec.shape[0]):
        v = rec[r].tolist()
        fn(v)
        rec[r] = v


def _sort_rows(rec, is_int, mode):
    lib = _native()
    if lib:
        lib.gt_sort_rows(rec.ctypes.data, *rec.shape, is_int, mode)
    else:
        _per_row(rec, lambda v: _sort(v, 0, len(v), _COMPARATORS[mode]))


def _nth_element_rows(rec, is_int, nth, mode):
    """std::nth_element of row r at ``nth[r]``."""
    nth = np.ascontiguousarray(nth, np.int64)
    lib = _native()
    if lib:
        lib.gt_nth_element_rows(rec.ctypes.data, *rec.shape, nth.ctypes.data, is_int, mode)
        return
    for r in range(rec.shape[0]):
        v = rec[r].tolist()
        _nth_element(v, 0, int(nth[r]), len(v), _COMPARATORS[mode])
        rec[r] = v


def _topk_rows(rec, is_int, k, sorted, mode):
    if k == 0:
        return
    lib = _native()
    if lib:
        lib.gt_topk_rows(rec.ctypes.data, *rec.shape, k, sorted, is_int, mode)
    else:
        _per_row(rec, lambda v: _topk(v, k, sorted, _COMPARATORS[mode]))


def _kthvalue_rows(rec, is_int, k):
    lib = _native()
    if lib:
        lib.gt_kthvalue_rows(rec.ctypes.data, *rec.shape, k, is_int)
    else:
        _per_row(rec, lambda v: _quick_select(v, k - 1, _desc))


def _rows(a, d):
    """``a`` with dim ``d`` moved last, and its rows as a 2-d array."""
    moved = _move_last(a, d)
    return moved, moved.reshape(math.prod(moved.shape[:-1]), moved.shape[-1])


# -- sort / argsort / msort / topk ------------------------------------------------------

def _stable_order(a, descending):
    """Indices of a stable sort along the last axis, NaN last ascending / first descending."""
    a = _float_for_compare(a)
    if a.dtype == np.bool_:
        a = a.astype(np.int8)
    if not descending:
        return np.argsort(a, axis=-1, kind="stable")        # numpy puts NaN last too
    if a.dtype.kind == "f":
        return np.lexsort((-a, ~np.isnan(a)), axis=-1)
    return np.argsort(~a, axis=-1, kind="stable")            # ~x reverses ints exactly


@meta("sort")
def sort_meta(self, dim=-1, descending=False, *, stable=None):
    if self.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    wrap_dim(dim, len(self._shape))
    stride = self._stride if _non_overlapping_and_dense(self._shape, self._stride) else None
    return TensorMeta(self._shape, self.dtype, stride), TensorMeta(self._shape, _INT64, stride)


@impl("sort")
def sort_impl(outs, self, dim=-1, descending=False, *, stable=None):
    """ATen's sort_kernel: std::stable_sort or std::sort (see Note [ties])."""
    values, indices = outs
    a = self._np()
    d = wrap_dim(dim, a.ndim)
    moved, rows = _rows(a, d)
    if stable:
        order = _stable_order(moved, descending)
    elif a.ndim and self._stride[d] == 0:      # every element equal: ATen leaves the row
        order = np.broadcast_to(np.arange(moved.shape[-1]), moved.shape)
    else:
        rec, is_int = _records(rows)
        _sort_rows(rec, is_int, _DESC if descending else _ASC)
        order = rec["index"].reshape(moved.shape)
    _write(values, _restore(np.take_along_axis(moved, order, -1), d, a.ndim))
    _write(indices, _restore(order, d, a.ndim))


@meta("sort_stable")
def sort_stable_meta(self, *, stable, dim=-1, descending=False):
    return sort_meta(self, dim, descending)


@impl("sort_stable")
def sort_stable_impl(outs, self, *, stable, dim=-1, descending=False):
    sort_impl(outs, self, dim, descending, stable=stable)


@kernel("argsort")
def argsort(self, dim=-1, descending=False):
    return ops.aten.sort.default(self, dim, descending)[1]


@kernel("argsort_stable")
def argsort_stable(self, *, stable, dim=-1, descending=False):
    return ops.aten.sort.stable(self, stable=stable, dim=dim, descending=descending)[1]


@kernel("msort")
def msort(self):
    return ops.aten.sort.default(self, 0, False)[0]


@meta("topk")
def topk_meta(self, k, dim=-1, largest=True, sorted=True):
    d = wrap_dim(dim, len(self._shape))
    size = self._shape[d] if self._shape else 1
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    if self.dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if self.dtype is _BOOL:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    shape = list(self._shape)
    if shape:
        shape[d] = k
    return TensorMeta(shape, self.dtype), TensorMeta(shape, _INT64)


@impl("topk")
def topk_impl(outs, self, k, dim=-1, largest=True, sorted=True):
    values, indices = outs
    a = self._np()
    if a.ndim == 0:
        _write(values, a)
        _write(indices, 0)
        return
    d = wrap_dim(dim, a.ndim)
    moved, rows = _rows(a, d)
    rec, is_int = _records(rows)
    _topk_rows(rec, is_int, k, sorted, _DESC if largest else _ASC)
    order = rec["index"][:, :k].reshape(moved.shape[:-1] + (k,))
    _write(values, _restore(np.take_along_axis(moved, order, -1), d, a.ndim))
    _write(indices, _restore(order, d, a.ndim))


# -- kthvalue / median / nanmedian / mode ---------------------------------------------

def _order_stat_check(name, self, kernel_name):
    """Kernels without complex (and, for median, bool) support; PyTorch only reaches
    the dtype switch of median() and mode() when there is data."""
    if kernel_name != "median_out" and self.numel() == 0:
        return
    if self.dtype.is_complex or (self.dtype is _BOOL and name == "median"):
        raise _not_implemented(kernel_name, self.dtype)


def _memory_order(self):
    """The elements of ``self`` as ``clone()`` lays them out: in memory order when
    the tensor is non-overlapping and dense (clone keeps its strides), else in
    index order."""
    a = self._np()
    if _non_overlapping_and_dense(self._shape, self._stride):
        a = a.transpose(sorted(range(a.ndim), key=lambda i: -self._stride[i]))
    return a.reshape(-1)


def _median_all(out, self, ignore_nan):
    """ATen's median_impl: std::nth_element on a copy; a NaN wins unless ignored."""
    a = _memory_order(self)
    if a.size == 0:                        # NaN, cast as C++ casts it for int dtypes
        _write(out, np.iinfo(a.dtype).min if a.dtype.kind in "iu" else np.nan)
        return
    nans = int(np.isnan(_float_for_compare(a)).sum()) if a.dtype.kind in "fV" else 0
    if nans and not ignore_nan:
        _write(out, np.nan)
        return
    rec, is_int = _records(a.reshape(1, -1))
    nth = int((a.size - nans - 1) / 2)     # C++ division: rounds toward zero
    _nth_element_rows(rec, is_int, [nth], _ASC if ignore_nan else _LT)
    _write(out, a[rec["index"][0, nth]])


@meta("median_all")
def median_all_meta(self):
    _order_stat_check("median", self, "median_cpu")
    return TensorMeta((), self.dtype)


meta("nanmedian_all")(median_all_meta)
impl("median_all")(lambda out, self: _median_all(out, self, False))
impl("nanmedian_all")(lambda out, self: _median_all(out, self, True))


def _dim_stat_meta(name, kernel_name):
    def rule(self, dim=-1, keepdim=False):
        _order_stat_check(name, self, kernel_name)
        d = wrap_dim(dim, len(self._shape))
        _check_nonempty_dims(name, self, [d])
        shape = reduced_shape(self._shape, (d,) if self._shape else (), keepdim)
        return TensorMeta(shape, self.dtype), TensorMeta(shape, _INT64)
    return rule


meta("median_dim")(_dim_stat_meta("median", "median_out"))
meta("nanmedian_dim")(_dim_stat_meta("median", "median_out"))
meta("mode")(_dim_stat_meta("mode", "mode_cpu"))


@meta("kthvalue")
def kthvalue_meta(self, k, dim=-1, keepdim=False):
    d = wrap_dim(dim, len(self._shape))
    _check_nonempty_dims("kthvalue", self, [d])
    if not 1 <= k <= (self._shape[d] if self._shape else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if self.dtype.is_complex or self.dtype is _BOOL:
        raise _not_implemented("kthvalue_cpu", self.dtype)
    shape = reduced_shape(self._shape, (d,) if self._shape else (), keepdim)
    return TensorMeta(shape, self.dtype), TensorMeta(shape, _INT64)


def _dim_stat_impl(pick):
    """Run ``pick(rows) -> indices`` over rows laid along the last axis."""
    def body(outs, self, dim=-1, keepdim=False):
        values, indices = outs
        a = self._np()
        if a.ndim == 0:
            _write(values, a)
            _write(indices, 0)
            return
        d = wrap_dim(dim, a.ndim)
        moved, rows = _rows(a, d)
        i = pick(rows) if rows.size else np.zeros(rows.shape[0], np.int64)
        v = np.take_along_axis(rows, i[:, None], -1)
        shape = moved.shape[:-1]
        v, i = v.reshape(shape), i.reshape(shape)
        if keepdim:
            v, i = np.expand_dims(v, d), np.expand_dims(i, d)
        _write(values, v)
        _write(indices, i)
    return body


def _median_rows(rows, ignore_nan=False):
    """ATen's median_with_indices_impl: the first NaN of a row (unless ignored),
    else std::nth_element under (value, index) order."""
    nan = np.isnan(_float_for_compare(rows)) if rows.dtype.kind in "fV" else \
        np.zeros(rows.shape, bool)
    counts = nan.sum(axis=-1)
    nth = np.trunc((rows.shape[-1] - counts - 1) / 2).astype(np.int64)
    rec, is_int = _records(rows)
    _nth_element_rows(rec, is_int, nth, _LT_INDEX_NAN if ignore_nan else _LT_INDEX)
    idx = rec["index"][np.arange(rows.shape[0]), nth]
    return idx if ignore_nan else np.where(counts > 0, np.argmax(nan, axis=-1), idx)


@impl("kthvalue")
def kthvalue_impl(outs, self, k, dim=-1, keepdim=False):
    """ATen's kthvalue: quickselect at k - 1 on a contiguous copy."""
    def pick(rows):
        rec, is_int = _records(rows)
        _kthvalue_rows(rec, is_int, k)
        return rec["index"][:, k - 1].copy()
    _dim_stat_impl(pick)(outs, self, dim, keepdim)


def _mode_rows(rows):
    """ATen's mode kernel: std::sort by value; the first value with the highest
    count wins, at the index std::sort left last in its run."""
    rec, is_int = _records(rows)
    _sort_rows(rec, is_int, _LT)
    keys, n = rec["key"], rows.shape[-1]
    run_ends = np.ones(rows.shape, bool)
    run_ends[:, :-1] = keys[:, :-1] != keys[:, 1:]           # NaN != NaN: runs of one
    positions = np.arange(n)
    starts = np.zeros(rows.shape, np.int64)
    starts[:, 1:] = np.where(run_ends[:, :-1], positions[1:], 0)
    lengths = np.where(run_ends, positions - np.maximum.accumulate(starts, axis=-1) + 1, 0)
    best = np.argmax(lengths, axis=-1)                       # the first longest run
    return rec["index"][np.arange(rows.shape[0]), best]


impl("median_dim")(_dim_stat_impl(_median_rows))
impl("nanmedian_dim")(_dim_stat_impl(lambda rows: _median_rows(rows, ignore_nan=True)))
impl("mode")(_dim_stat_impl(_mode_rows))


# -- unique (Unique.cpp: sort-based) -------------------------------------------------------

def _unique_runs(keys_equal_next, n):
    """Start of each run of equal sorted elements, and the run id of every element."""
    starts = np.flatnonzero(np.concatenate(([True], ~keys_equal_next))) if n else \
        np.zeros(0, np.int64)
    run_of = np.cumsum(np.concatenate(([0], (~keys_equal_next).astype(np.int64)))) if n else \
        np.zeros(0, np.int64)
    return starts, run_of


def _unique_outputs(self, values, inverse_shape, order, starts, run_of, n,
                    return_inverse, return_counts):
    device = self.device
    if return_inverse:
        inverse = np.empty(n, np.int64)
        inverse[order if order is not None else slice(None)] = run_of
        inverse_t = _from_array(inverse.reshape(inverse_shape), dt.int64, device)
    else:
        inverse_t = empty_tensor((0,), dt.int64, device)
    if return_counts:
        counts_t = _from_array(np.diff(np.append(starts, n)).astype(np.int64), dt.int64, device)
    else:
        counts_t = empty_tensor((0,), dt.int64, device)
    return _from_array(values, self.dtype, device), inverse_t, counts_t


@kernel("_unique2")
def unique2(self, sorted=True, return_inverse=False, return_counts=False):
    """Distinct values in ascending order (PyTorch's CPU kernel sorts even when
    ``sorted=False``); NaNs are all distinct."""
    if _on_meta(self):
        raise _no_meta_kernel("_unique2")
    flat = self._np().reshape(-1)
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    equal_next = ordered[1:] == ordered[:-1]
    starts, run_of = _unique_runs(equal_next, flat.size)
    return _unique_outputs(self, ordered[starts], self._shape, order, starts, run_of,
                           flat.size, return_inverse, return_counts)


def _slices_along(self, dim):
    """The slices along ``dim`` as the rows of a 2-d array, and the slices' shape."""
    shape = self._shape
    if shape[dim] == 0 and shape.count(0) > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot "
                           "be applied ")
    if self.numel() == 0 and shape[dim] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    rest = shape[:dim] + shape[dim + 1:]
    return np.moveaxis(self._np(), dim, 0).reshape(shape[dim], math.prod(rest)), rest


@kernel("unique_dim")
def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    """Distinct slices along ``dim``, in lexicographic order."""
    if _on_meta(self):
        raise _no_meta_kernel("unique_dim")
    dim = wrap_dim(dim, len(self._shape))
    shape = self._shape
    slices, rest = _slices_along(self, dim)
    order = np.lexsort(slices.T[::-1]) if slices.shape[1] else np.arange(shape[dim])
    ordered = slices[order]
    equal_next = np.all(ordered[1:] == ordered[:-1], axis=1)
    starts, run_of = _unique_runs(equal_next, shape[dim])
    kept = np.moveaxis(ordered[starts].reshape((len(starts),) + rest), 0, dim)
    return _unique_outputs(self, kept, (shape[dim],), order, starts, run_of, shape[dim],
                           return_inverse, return_counts)


@kernel("unique_consecutive")
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    """The first element (or slice along ``dim``) of every run of equal
    neighbours, in input order (std::unique); NaNs are all distinct."""
    if _on_meta(self):
        raise _no_meta_kernel("unique_consecutive")
    if dim is None or (len(self._shape) == 1 and dim == 0):
        if self.dtype.category == dt.COMPLEX:
            raise _not_implemented("unique", self.dtype)
        flat = self._np().reshape(-1)
        starts, run_of = _unique_runs(flat[1:] == flat[:-1], flat.size)
        return _unique_outputs(self, flat[starts], self._shape, None, starts, run_of, flat.size,
                               return_inverse, return_counts)
    if self.dtype.category == dt.COMPLEX:
        raise _not_implemented("unique_dim", self.dtype)
    if not self._shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = wrap_dim(dim, len(self._shape))
    slices, rest = _slices_along(self, dim)
    n = self._shape[dim]
    starts, run_of = _unique_runs(np.all(slices[1:] == slices[:-1], axis=1), n)
    kept = np.moveaxis(slices[starts].reshape((len(starts),) + rest), 0, dim)
    # (along a dim, ATen's kernel gives the inverse and the counts whether asked or not)
    return _unique_outputs(self, kept, (n,), None, starts, run_of, n, True, True)


# -- binary search: searchsorted, bucketize (Bucketization.cpp) ----------------------------

class _SearchMeta(TensorMeta):
    """An index result whose out= tensor must be int32 (out_int32) or int64."""

    __slots__ = ("out_int32",)

    def check_out(self, out_dtype):
        if out_dtype is not self.dtype:
            raise RuntimeError(
                "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) "
                "or Long(int64) depending on whether out_int32 flag is True, but we got output "
                f"tensor's dtype {out_dtype._short} and out_int32 flag is {self.out_int32}")


def _scalar_shape(value):
    return value._shape if isinstance(value, Tensor) else ()


def _searchsorted_check(boundaries, value, right, side, sorter):
    """PyTorch's searchsorted_pre_check, in its order."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side != "right":
            raise RuntimeError(f"torch.searchsorted(): side and right can't be set to "
                               f"opposites, got side of {side} while right was True")
    if sorter is not None:
        if sorter._shape != boundaries._shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {_sizes(boundaries._shape)}"
                               f"and got sorter tensor {_sizes(sorter._shape)}")
        if sorter.dtype is not dt.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {sorter.dtype._short}")
    shape, rank = _scalar_shape(value), len(boundaries._shape)
    if not shape and rank != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                           f"boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({rank}) and input value's dim(0) numel(1)")
    if rank == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if rank != 1 and (rank != len(shape) or boundaries._shape[:-1] != shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor "
                           f"{_sizes(boundaries._shape)} and input value tensor "
                           f"{_sizes(shape)}")


def _search_meta(value, out_int32):
    spec = _SearchMeta(_scalar_shape(value), dt.int32 if out_int32 else dt.int64)
    spec.out_int32 = out_int32
    return spec


def _search_into(out, boundaries, value, right, sorter):
    """Fill ``out`` with the insertion points of ``value`` in the (last dim of the)
    sorted ``boundaries`` (left: first position not below it; right: first above)."""
    b = boundaries._np()
    v = value._np() if isinstance(value, Tensor) else np.asarray(value)
    common = np.result_type(b, v)
    if common.name in ("bool", "bfloat16", "float16") or common.kind in "cV":
        shown = dt.promote_types(boundaries.dtype, _value_dtype(value))
        if shown is dt.bool_ or shown.category == dt.COMPLEX:
            raise _not_implemented("searchsorted_out_cpu", shown)
        common = np.dtype(np.float32)
    b, v = b.astype(common, copy=False), v.astype(common, copy=False)
    if sorter is not None:
        order = sorter._np()
        if order.size and (order.min() < 0 or order.max() >= b.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        b = np.take_along_axis(b, order, -1)
    rows = math.prod(b.shape[:-1])     # 1-d boundaries: one row for all values
    bounds = b.reshape(rows, b.shape[-1])
    wanted = v.reshape(1, v.size) if b.ndim == 1 else v.reshape(rows, v.shape[-1])
    out._np()[...] = _binary_search(bounds, wanted, right).reshape(out._shape)


def _binary_search(bounds, wanted, right):
    """PyTorch's lower/upper bound loop, run on every value at once (so that NaNs land
    where PyTorch's comparisons put them): move right while not (mid >= value), or
    not (mid > value) for ``right``."""
    start = np.zeros(wanted.shape, np.int64)
    end = np.full(wanted.shape, bounds.shape[-1], np.int64)
    active = start < end
    while active.any():
        mid = start + ((end - start) >> 1)
        mid_value = np.take_along_axis(bounds, np.minimum(mid, bounds.shape[-1] - 1), -1)
        go_right = ~(mid_value > wanted) if right else ~(mid_value >= wanted)
        start = np.where(active & go_right, mid + 1, start)
        end = np.where(active & ~go_right, mid, end)
        active = start < end
    return start


def _value_dtype(value):
    return value.dtype if isinstance(value, Tensor) else dt.scalar_dtype(value)


@meta("searchsorted")
def searchsorted_meta(sorted_sequence, self, *, out_int32=False, right=False, side=None,
                      sorter=None):
    _searchsorted_check(sorted_sequence, self, right, side, sorter)
    return _search_meta(self, out_int32)


@impl("searchsorted")
def searchsorted_impl(out, sorted_sequence, self, *, out_int32=False, right=False, side=None,
                      sorter=None):
    _search_into(out, sorted_sequence, self, right or side == "right", sorter)


@meta("bucketize")
def bucketize_meta(self, boundaries, *, out_int32=False, right=False):
    if len(boundaries._shape) != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got "
                           f"dim({len(boundaries._shape)})")
    return _search_meta(self, out_int32)


@impl("bucketize")
def bucketize_impl(out, self, boundaries, *, out_int32=False, right=False):
    _search_into(out, boundaries, self, right, None)
