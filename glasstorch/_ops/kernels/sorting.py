"""Sorting and order statistics: sort, argsort, topk, median, mode (ATen's Sorting.cpp
and cpu/SortingKernel.cpp).

Note [sort outputs]
    ``sort`` keeps the input's strides when the input is non-overlapping and dense
    (its outputs are made with ``empty_like``); the other outputs are contiguous.
"""
from __future__ import annotations

import numpy as np

from ..._dispatcher.dispatcher import ops
from ..._tensor import _non_overlapping_and_dense
from ..structured import TensorMeta, wrap_dim
from . import impl, kernel, meta
from .reduction import (_BOOL, _INT64, _check_nonempty_dims, _float_for_compare, _move_last,
                        _not_implemented, _restore, _write, reduced_shape)


# -- sort / argsort / topk -------------------------------------------------------------

def _sort_key(a, descending):
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
    values, indices = outs
    a = self._np()
    d = wrap_dim(dim, a.ndim)
    moved = _move_last(a, d)
    order = _sort_key(moved, descending)
    _write(values, _restore(np.take_along_axis(moved, order, -1), d, a.ndim))
    _write(indices, _restore(order, d, a.ndim))


@meta("sort_stable")
def sort_stable_meta(self, *, stable, dim=-1, descending=False):
    return sort_meta(self, dim, descending)


@impl("sort_stable")
def sort_stable_impl(outs, self, *, stable, dim=-1, descending=False):
    sort_impl(outs, self, dim, descending)


@kernel("argsort")
def argsort(self, dim=-1, descending=False):
    return ops.aten.sort.default(self, dim, descending)[1]


@kernel("argsort_stable")
def argsort_stable(self, *, stable, dim=-1, descending=False):
    return ops.aten.sort.stable(self, stable=stable, dim=dim, descending=descending)[1]


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
    moved = _move_last(a, d)
    order = _sort_key(moved, largest)[..., :k]
    _write(values, _restore(np.take_along_axis(moved, order, -1), d, a.ndim))
    _write(indices, _restore(order, d, a.ndim))


# -- median / mode -----------------------------------------------------------------

def _order_stat_check(name, self, kernel_name):
    """Kernels without complex (and, for median, bool) support; PyTorch only reaches
    the dtype switch of median() and mode() when there is data."""
    if kernel_name != "median_out" and self.numel() == 0:
        return
    if self.dtype.is_complex or (self.dtype is _BOOL and name == "median"):
        raise _not_implemented(kernel_name, self.dtype)


@meta("median_all")
def median_all_meta(self):
    _order_stat_check("median", self, "median_cpu")
    return TensorMeta((), self.dtype)


@impl("median_all")
def median_all_impl(out, self):
    a = _float_for_compare(self._np()).reshape(-1)
    if a.size == 0:                        # NaN, cast as C++ casts it for int dtypes
        _write(out, np.iinfo(a.dtype).min if a.dtype.kind in "iu" else np.nan)
        return
    if a.dtype.kind == "f" and np.isnan(a).any():
        _write(out, np.nan)
        return
    _write(out, np.sort(a)[(a.size - 1) // 2])


def _dim_stat_meta(name, kernel_name):
    def rule(self, dim=-1, keepdim=False):
        _order_stat_check(name, self, kernel_name)
        d = wrap_dim(dim, len(self._shape))
        _check_nonempty_dims(name, self, [d])
        shape = reduced_shape(self._shape, (d,) if self._shape else (), keepdim)
        return TensorMeta(shape, self.dtype), TensorMeta(shape, _INT64)
    return rule


meta("median_dim")(_dim_stat_meta("median", "median_out"))
meta("mode")(_dim_stat_meta("mode", "mode_cpu"))


def _dim_stat_impl(pick):
    """Run ``pick(rows) -> (values, indices)`` over rows laid along the last axis."""
    def body(outs, self, dim=-1, keepdim=False):
        values, indices = outs
        a = self._np()
        if a.ndim == 0:
            _write(values, a)
            _write(indices, 0)
            return
        d = wrap_dim(dim, a.ndim)
        moved = _move_last(a, d)
        rows = moved.reshape(-1, moved.shape[-1])
        v, i = pick(rows)
        shape = moved.shape[:-1]
        v, i = v.reshape(shape), i.reshape(shape)
        if keepdim:
            v, i = np.expand_dims(v, d), np.expand_dims(i, d)
        _write(values, v)
        _write(indices, i)
    return body


def _median_rows(rows):
    n = rows.shape[-1]
    cmp = _float_for_compare(rows)
    order = np.argsort(cmp, axis=-1, kind="stable")
    idx = order[:, (n - 1) // 2] if rows.shape[0] else np.zeros(0, np.int64)
    if cmp.dtype.kind == "f":
        nan = np.isnan(cmp)
        has_nan = nan.any(axis=-1)
        idx = np.where(has_nan, np.argmax(nan, axis=-1), idx)   # NaN propagates: first NaN
    return rows[np.arange(rows.shape[0]), idx], idx


def _mode_rows(rows):
    """Most frequent value per row (smallest on ties), at its last occurrence."""
    cmp = _float_for_compare(rows)
    values = np.empty(rows.shape[0], rows.dtype)
    idx = np.empty(rows.shape[0], np.int64)
    for r in range(rows.shape[0]):
        uniq, counts = np.unique(cmp[r], return_counts=True)
        best = uniq[np.argmax(counts)]
        where = np.nonzero(cmp[r] == best)[0]
        idx[r] = where[-1]
        values[r] = rows[r, where[-1]]
    return values, idx


impl("median_dim")(_dim_stat_impl(_median_rows))
impl("mode")(_dim_stat_impl(_mode_rows))
