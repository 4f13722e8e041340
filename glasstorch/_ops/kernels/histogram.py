"""Histograms (ATen's native/Histogram.cpp and cpu/HistogramKernel.cpp).

    histc(x, bins, min, max)   counts of x in ``bins`` equal-width bins over [min, max]
                               (min == max: the data's range); outside elements and NaNs
                               are dropped, an element equal to max falls in the last bin

Also here: bincount (SummaryOps.cpp).
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..structured import TensorMeta
from . import impl, kernel, meta
from ._common import _from_array, _no_meta_kernel, _not_implemented, _on_meta
from .factory import _linspace_values
from .native import cpu_capability

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
    truncated, computed in the input's arithmetic (float for float16/bfloat16):
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
    kept = values[(values >= left) & (values <= right)].astype(compute)
    pos = np.minimum(((kept - left) * compute(bins) / (right - left)).astype(np.int64), bins - 1)
    out._np()[...] = np.bincount(pos, minlength=bins)


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
