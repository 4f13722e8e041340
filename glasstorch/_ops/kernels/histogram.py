"""Histograms (ATen's native/Histogram.cpp and cpu/HistogramKernel.cpp).

    histc(x, bins, min, max)   counts of x in ``bins`` equal-width bins over [min, max]
                               (min == max: the data's range); outside elements and NaNs
                               are dropped, an element equal to max falls in the last bin
    histogram(x, bins, range=, weight=, density=)
                               (hist, bin_edges) of all elements: ``bins`` equal-width bins
                               or the given edges; weighted counts, or a density
    histogramdd(x, bins, ...)  the same over the rows of x (points in x.size(-1) dims)

Also here: bincount (SummaryOps.cpp).
"""
from __future__ import annotations

import math
from builtins import range as builtins_range

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor
from ..registry import _resize_out
from ..structured import TensorMeta, empty_tensor
from . import impl, kernel, meta
from ._common import _from_array, _no_meta_kernel, _not_implemented, _on_meta, _rounded, _sizes
from .factory import _linspace_values
from .native import cpu_capability, get_num_threads

__all__ = []

aten = ops.aten


class _HistMeta(TensorMeta):
    """histc's ``out=`` must have the input's dtype exactly (histogramdd_check_inputs)."""

    __slots__ = ("input_dtype",)

    def check_out(self, out_dtype):
        if out_dtype is not self.dtype:
            raise RuntimeError(
                "torch.histogram: input tensor and hist tensor should have the same dtype, but "
                f"got input {dt.type_meta_name(self.dtype)} and hist "
                f"{dt.type_meta_name(out_dtype)}")


@meta("histc")
def histc_meta(self, bins=100, min=0, max=0):
    if bins <= 0:
        # The meta kernel (meta_registrations) words it differently from the CPU's.
        raise RuntimeError(f"histc(): bins must be > 0, but got {bins}" if self.device.type == "meta"
                           else f"torch.histogram(): bins must be > 0, but got {bins} for "
                                "dimension 0")
    return _HistMeta((bins,), self.dtype)


def _shown(v):
    """A double as C++'s ostream prints it (NaN with its sign)."""
    return ("-nan" if math.copysign(1, v) < 0 else "nan") if math.isnan(v) else f"{v:g}"


def _outer_edges(values, lo, hi, dtype):
    """histc_select_outer_bin_edges: [min, max], the data's range when they are
    equal, widened by one each way when that range is a point."""
    if lo == hi and values.size:
        lo, hi = float(values.min()), float(values.max())
        if math.isnan(lo) and dtype is not dt.bfloat16:
            # aminmax's vector loop yields the CPU's default NaN (sign bit set);
            # ATen's DEFAULT capability's scalar loop passes the input's NaN on, and
            # bfloat16's, reduced in float and converted, is a positive one
            lo = hi = (float(values[np.isnan(values)][0]) if cpu_capability() == "DEFAULT"
                       else -math.nan)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_shown(lo)}, {_shown(hi)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return lo, hi


@impl("histc")
def histc_impl(out, self, bins=100, min=0, max=0):
    """The bin edges are ``linspace(lo, hi, bins + 1)`` in the input's dtype; an
    element between the outer edges goes to bin ``(x - lo) * bins / (hi - lo)``,
    truncated, computed in the input's arithmetic (for float16/bfloat16, each
    operation in float rounded to the dtype):
    HistogramKernel's linear interpolation, which histc takes without the local
    search histogram() adds, so an element within rounding of an inner edge lands
    where that arithmetic puts it; the rightmost edge closes the last bin."""
    if self.dtype.category != dt.FLOATING:
        raise NotImplementedError(f'"histogram_cpu" not implemented for \'{self.dtype._short}\'')
    values = self._np().astype(np.float64).ravel()
    lo, hi = _outer_edges(values, float(min), float(max), self.dtype)
    edges = _linspace_values(lo, hi, bins + 1, self.dtype).astype(self.dtype.numpy)
    compute = np.float64 if self.dtype is dt.float64 else np.float32
    left, right = edges[0].astype(compute), edges[-1].astype(compute)
    inside = (values >= left) & (values <= right)
    kept = values[inside].astype(compute)
    if self.dtype in (dt.float16, dt.bfloat16):
        # c10::Half / c10::BFloat16 arithmetic rounds each step to the dtype
        d = self.dtype
        scaled = _rounded(_rounded(_rounded(kept - left, d) * _rounded(compute(bins), d), d)
                          / _rounded(right - left, d), d)
    else:
        scaled = (kept - left) * compute(bins) / (right - left)
    pos = scaled.astype(np.int64)
    pos[pos == bins] = bins - 1
    out._np()[...] = _thread_counts(pos, np.nonzero(inside)[0], values.size, bins, self.dtype)


def _thread_counts(pos, index, n, bins, dtype):
    """histogramdd_cpu_contiguous's counts: each thread adds 1 per element to its
    own row of a (threads, bins) buffer of the input's dtype, then the rows are
    summed.  So a row's count stops growing at 2^digits (256 for bfloat16, 2048 for
    float16: one more rounds back), and a ``pos`` past the last bin (float16 and
    bfloat16 arithmetic can round there) is written unchecked into the next row,
    at ``pos - bins``, or past the buffer (lost) from the last row.  Elements are
    split among the threads as at::parallel_for splits them (grain 200)."""
    threads = get_num_threads()
    row = np.zeros_like(index)
    if n > 200 and threads > 1:
        tasks = min(threads, -(-n // 200))
        row = index // -(-n // tasks)
    row = row + pos // bins
    inside = row < threads
    counts = np.bincount(row[inside] * bins + pos[inside] % bins, minlength=threads * bins)
    digits = {dt.float64: 53, dt.float32: 24, dt.float16: 11, dt.bfloat16: 8}[dtype]
    return np.minimum(counts.reshape(threads, bins), 2 ** digits).sum(axis=0)


# -- bincount (SummaryOps.cpp) -------------------------------------------------------------

@kernel("bincount")
def bincount(self, weights=None, minlength=0):
    if _on_meta(self, weights):
        raise _no_meta_kernel("bincount")
    if self.dtype.category != dt.INTEGRAL:
        raise _not_implemented("bincount_cpu", self.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    values = self._np()
    if len(self._shape) != 1 or (values.size and values.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (len(weights._shape) != 1 or weights._shape[0] != values.size):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if not values.size:   # PyTorch answers int64 zeros, whatever the weights
        return aten.zeros.default([minlength], dtype=dt.int64, device=self.device)
    length = max(int(values.max()) + 1, minlength)
    if weights is None:
        return _from_array(np.bincount(values, minlength=length), dt.int64, self.device)
    out_dtype = dt.float32 if weights.dtype is dt.float32 else dt.float64
    counts = np.bincount(values, weights=weights._np().astype(np.float64), minlength=length)
    return _from_array(counts, out_dtype, self.device)


# -- histogram, histogramdd (Histogram.cpp) ------------------------------------------------
#
# Points are the rows of an (M, N) view of the input (histogram: (numel, 1)); each of the
# N dims has its own bin edges.  Integer bin counts get edges linspace(lo, hi, bins + 1)
# over the given range or the data's, widened by 0.5 each way when it is a point.

def _dtype_name(d):
    return dt.type_meta_name(d)


def _check_histogramdd_inputs(self, bins, weight):
    """histogramdd_check_inputs: the bins tensors and the weight against the input."""
    if self.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions, "
                           f"but got {self.dim()}")
    n = self._shape[-1]
    if len(bins) != n:
        raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a {n}-"
                           f"dimensional histogram but got {len(bins)}")
    for d, edges in enumerate(bins):
        if edges.dtype is not self.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                f"got input with dtype {_dtype_name(self.dtype)} and bins for dimension {d} with "
                f"dtype {_dtype_name(edges.dtype)}")
        if edges.dim() != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{edges.dim()} dimensions in the bins tensor for dimension {d}")
        if edges.numel() == 0:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                f"elements in the bins tensor for dimension {d}")
    if weight is not None:
        if weight.dtype is not self.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                f"should have the same dtype, but got input({_dtype_name(self.dtype)}), and "
                f"weight({_dtype_name(weight.dtype)})")
        if weight._shape != self._shape[:-1]:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape as "
                "the input tensor excluding its innermost dimension, but got input with shape "
                f"{_sizes(self._shape)} and weight with shape {_sizes(weight._shape)}")


def _prepare_histogram_out(self, counts, hist, bin_edges):
    """histogramdd_prepare_out: dtypes of the outputs, positive bin counts, each
    edges tensor resized to its count + 1, then hist to the counts."""
    if hist.dtype is not self.dtype:
        raise RuntimeError(
            "torch.histogram: input tensor and hist tensor should have the same dtype, but got "
            f"input {_dtype_name(self.dtype)} and hist {_dtype_name(hist.dtype)}")
    for d, (count, edges) in enumerate(zip(counts, bin_edges)):
        if edges.dtype is not self.dtype:
            raise RuntimeError(
                "torch.histogram: input tensor and bin_edges tensor should have the same dtype, "
                f"but got input {_dtype_name(self.dtype)} and bin_edges "
                f"{_dtype_name(edges.dtype)} for dimension {d}")
        if count <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for "
                               f"dimension {d}")
        if edges._shape != (count + 1,):
            _resize_out(edges, (count + 1,))
    if hist._shape != tuple(counts):
        _resize_out(hist, tuple(counts))


def _outer_bin_edges(points, range):
    """select_outer_bin_edges: per dim, the given range, else the data's (min, max),
    else [0, 1] for no data; a point range widened by 0.5 each way."""
    n = points.shape[-1]
    if range is not None:
        if len(range) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should "
                               f"have {2 * n} elements, but got {len(range)}")
        lo, hi = [float(v) for v in range[0::2]], [float(v) for v in range[1::2]]
    elif points.shape[0]:
        lo, hi = [], []
        for column in points.T:
            nans = column[np.isnan(column)]
            if nans.size:       # the reduction passes the data's NaN on
                lo.append(float(nans[0]))
                hi.append(float(nans[0]))
            else:
                lo.append(float(column.min()))
                hi.append(float(column.max()))
    else:
        lo, hi = [0.0] * n, [1.0] * n
    for d in builtins_range(n):
        if not (math.isfinite(lo[d]) and math.isfinite(hi[d])):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_shown(lo[d])}, "
                               f"{_shown(hi[d])}] is not finite")
        if not lo[d] <= hi[d]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_shown(lo[d])} max {_shown(hi[d])} for dimension {d}")
        if lo[d] == hi[d]:
            lo[d], hi[d] = lo[d] - 0.5, hi[d] + 0.5
    return lo, hi


def _points(self, name):
    """The input as (M, N) points; the data's range is computed in a floating dtype only."""
    if self.dtype not in (dt.float32, dt.float64):
        raise _not_implemented(name, self.dtype)
    return _rows(self)


def _rows(self):
    return self._np().reshape(math.prod(self._shape[:-1]), self._shape[-1])


def _fill_edges(self, counts, range, bin_edges):
    """linspace each dim's edges over its outer range (histogramdd_bin_edges_out)."""
    if range is None and self.numel():
        _points(self, "histogramdd")
    lo, hi = _outer_bin_edges(_rows(self), range)
    if len(counts) != self._shape[-1]:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    for d, edges in enumerate(bin_edges):
        aten.linspace.out(lo[d], hi[d], counts[d] + 1, out=edges)


def _count_into(hist, self, bin_edges, weight, density, algorithm):
    """HistogramKernel's histogramdd_cpu_contiguous: a point counts (its weight) in
    the bin its coordinates select, and only if each coordinate lies within its
    outer edges (NaN never does); the last edge closes the last bin.  The bin is
    found by binary search over the edges ("search"), or by linear interpolation
    between the outer edges in the input's arithmetic, then corrected by a search
    among the neighbouring edges ("linear")."""
    points = _points(self, "histogram_cpu")
    scalar = points.dtype.type
    keep = np.ones(points.shape[0], dtype=bool)
    index = np.zeros(points.shape[0], dtype=np.int64)
    for d, edges_t in enumerate(bin_edges):
        edges = edges_t._np()
        column = points[:, d]
        first, last = edges[0], edges[-1]
        keep &= (column >= first) & (column <= last)
        if algorithm == "search":
            pos = np.searchsorted(edges, column, side="right") - 1
        else:
            with np.errstate(all="ignore"):
                guess = ((column - first) * scalar(edges.size - 1) / (last - first))
            guess = np.where(keep, guess, 0).astype(np.int64)
            low = np.maximum(guess - 1, 0)
            pos = low - 1
            for step in builtins_range(3):      # upper_bound over edges[low:min(guess + 2, n)]
                at = low + step
                inside = at < np.minimum(guess + 2, edges.size)
                pos = pos + (inside & (edges[np.minimum(at, edges.size - 1)] <= column))
        pos = np.where(pos == edges.size - 1, pos - 1, pos)
        index = index * hist._shape[d] + pos
    counts = np.zeros(math.prod(hist._shape), dtype=points.dtype)
    weights = np.ones(1, points.dtype) if weight is None else weight._np().reshape(-1)[keep]
    np.add.at(counts, index[keep], weights if weight is not None else scalar(1))
    hist._np()[...] = counts.reshape(hist._shape)
    if density:
        aten.div_.Tensor(hist, aten.sum.default(hist))
        for d, edges_t in enumerate(bin_edges):
            shape = [1] * hist.dim()
            shape[d] = -1
            aten.div_.Tensor(hist, aten.diff.default(edges_t).view(shape))


def _histogram_1d(self, weight):
    """histogram() flattens: points (numel, 1), weights (numel,)."""
    return (self.reshape(self.numel(), 1),
            None if weight is None else weight.reshape(weight.numel()))


@kernel("histogram_out")
def histogram_out(self, bins=100, *, range=None, weight=None, density=False, hist, bin_edges):
    """histogram.bin_ct_out / bins_tensor_out: a 1-d histogram of all elements."""
    if _on_meta(self, weight, hist, bin_edges):
        raise _no_meta_kernel("histogram." + ("bins_tensor_out" if isinstance(bins, Tensor)
                                              else "bin_ct_out"))
    points, weight = _histogram_1d(self, weight)
    if isinstance(bins, Tensor):
        _check_histogramdd_inputs(points, [bins], weight)
        _prepare_histogram_out(points, [bins.numel() - 1], hist, [bin_edges])
        aten.copy_.default(bin_edges, bins)
        _count_into(hist, points, [bin_edges], weight, density, "search")
    else:
        _prepare_histogram_out(points, [bins], hist, [bin_edges])
        _fill_edges(points, [bins], range, [bin_edges])
        _check_histogramdd_inputs(points, [bin_edges], weight)
        _count_into(hist, points, [bin_edges], weight, density, "linear")
    return hist, bin_edges


@kernel("histogram")
def histogram(self, bins=100, *, range=None, weight=None, density=False):
    if _on_meta(self, weight):
        raise _no_meta_kernel("histogram." + ("bins_tensor" if isinstance(bins, Tensor)
                                              else "bin_ct"))
    hist, edges = (empty_tensor((0,), self.dtype, self.device) for _ in builtins_range(2))
    options = {} if isinstance(bins, Tensor) else {"range": range}
    return histogram_out(self, bins, **options, weight=weight, density=density, hist=hist,
                         bin_edges=edges)


def _empty_edges(self):
    """allocate_bin_edges_tensors: one empty edges tensor per dim of a point."""
    if self.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    return [empty_tensor((0,), self.dtype, self.device) for _ in builtins_range(self._shape[-1])]


@kernel("_histogramdd_bin_edges")
def histogramdd_bin_edges(self, bins, *, range=None, weight=None, density=False):
    """The edges histogramdd's integer bin counts give (the weight is not looked at)."""
    if _on_meta(self, weight):
        raise _no_meta_kernel("_histogramdd_bin_edges")
    out = _empty_edges(self)
    _fill_edges(self, bins, range, out)
    return out


@kernel("_histogramdd_bin_edges_out")
def histogramdd_bin_edges_out(self, bins, *, range=None, weight=None, density=False, out):
    if _on_meta(self, weight, *out):
        raise _no_meta_kernel("_histogramdd_bin_edges.out")
    _fill_edges(self, bins, range, out)


@kernel("_histogramdd_from_bin_cts")
def histogramdd_from_bin_cts(self, bins, *, range=None, weight=None, density=False):
    """The counts of histogramdd with integer bin counts: its edges first, then
    the search by linear interpolation."""
    if _on_meta(self, weight):
        raise _no_meta_kernel("_histogramdd_from_bin_cts")
    edges = _empty_edges(self)
    _fill_edges(self, bins, range, edges)
    _check_histogramdd_inputs(self, edges, weight)
    hist = empty_tensor((0,), self.dtype, self.device)
    _prepare_histogram_out(self, bins, hist, edges)
    _count_into(hist, self, edges, weight, density, "linear")
    return hist


@kernel("_histogramdd_from_bin_tensors")
def histogramdd_from_bin_tensors(self, bins, *, weight=None, density=False):
    """The counts of histogramdd over given edges (binary search)."""
    if _on_meta(self, weight, *bins):
        raise _no_meta_kernel("_histogramdd_from_bin_tensors")
    _check_histogramdd_inputs(self, bins, weight)
    hist = empty_tensor((0,), self.dtype, self.device)
    edges = [empty_tensor((0,), self.dtype, self.device) for _ in bins]
    _prepare_histogram_out(self, [b.numel() - 1 for b in bins], hist, edges)
    _count_into(hist, self, bins, weight, density, "search")
    return hist


@kernel("histogramdd")
def histogramdd(self, bins, range=None, weight=None, density=False):
    """CompositeImplicitAutograd: the counts and the edges, each its own op; given
    edges tensors are returned as the edges."""
    if isinstance(bins, int):
        bins = [bins] * self.size(-1)
    if bins and isinstance(bins[0], Tensor):
        return aten._histogramdd_from_bin_tensors.default(self, bins, weight=weight,
                                                          density=density), list(bins)
    edges = aten._histogramdd_bin_edges.default(self, bins, range=range, weight=weight,
                                                density=density)
    return aten._histogramdd_from_bin_cts.default(self, bins, range=range, weight=weight,
                                                  density=density), edges
