"""Pairwise distances between the rows of one matrix (ATen's Distance.cpp,
cpu/DistanceOpsKernel.cpp): what torch.pdist / F.pdist call.

    _pdist_forward(x (n, m), p) -> (n (n - 1) / 2,): ||x_i - x_j||_p for i < j,
        row-major over the upper triangle
    p = 0 counts the differing coordinates, p = inf takes the largest |difference|

_pdist_backward adds each pair's gradient to row i and subtracts it from row j:
    p = 1: sign(d);  p < 2: sign(d) |d|^(p-1) / dist^(p-1) (0 where dist is 0, or
    d is 0 with p < 1);  p = 2: d / dist;  p = inf: sign(d) where |d| = dist;
    else d |d|^(p-2) / dist^(p-1)     (d = x_i - x_j, times the pair's gradient)
"""
from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..structured import TensorMeta
from . import impl, kernel, meta
from ._common import _array, _write

aten = ops.aten


@kernel("pdist")
def pdist(self, p=2.0):
    if self.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.dim()}D")
    if self.dtype.category != dt.FLOATING:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return aten._pdist_forward.default(aten.contiguous.default(self), p)


def _check_floating(self):
    if self.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f"\"pdist\" not implemented for '{self.dtype._short}'")


def _pairs(n):
    return np.triu_indices(n, 1)


@meta("_pdist_forward")
def _pdist_forward_meta(self, p=2.0):
    if not self.is_contiguous():
        raise RuntimeError("_pdist_forward requires contiguous input")
    n = self._shape[0]
    return TensorMeta((n * (n - 1) // 2 if n > 1 else 0,), self.dtype)


@impl("_pdist_forward")
def _pdist_forward_impl(out, self, p=2.0):
    _check_floating(self)
    if out.numel() == 0:
        return
    x = _array(self, self.dtype.numpy)
    i, j = _pairs(x.shape[0])
    d = np.abs(x[i] - x[j])
    if p == 0:
        dist = (d != 0).sum(-1).astype(x.dtype)
    elif p == 1:
        dist = d.sum(-1)
    elif p == 2:
        dist = np.sqrt((d * d).sum(-1))
    elif p == np.inf:
        dist = d.max(-1, initial=0)
    else:
        dist = np.power(np.power(d, p).sum(-1), 1.0 / p)
    _write(out, dist)


@meta("_pdist_backward")
def _pdist_backward_meta(grad, self, p, pdist):
    if not self.is_contiguous():
        raise RuntimeError("_pdist_backward requires self to be contiguous")
    if not pdist.is_contiguous():
        raise RuntimeError("_pdist_backward requires pdist to be contiguous")
    return TensorMeta(tuple(self._shape), self.dtype)


@impl("_pdist_backward")
def _pdist_backward_impl(out, grad, self, p, pdist):
    _check_floating(self)
    compute = self.dtype.numpy
    x = _array(self, compute)
    result = np.zeros(x.shape, dtype=compute)
    n, m = x.shape
    if n > 1 and m > 0 and p != 0:
        i, j = _pairs(n)
        diff = x[i] - x[j]
        g = _array(grad, compute).reshape(-1)[:, None]
        dist = _array(pdist, compute).reshape(-1)[:, None]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if p == 1:
                term = np.sign(diff) * g
            elif p < 2:
                term = np.sign(diff) * np.power(np.abs(diff), p - 1) * g / np.power(dist, p - 1)
                term = np.where((dist == 0) | ((diff == 0) & (p < 1)), 0, term)
            elif p == 2:
                term = np.where(dist == 0, 0, g * diff / dist)
            elif p == np.inf:
                term = g * np.sign(diff) * (np.abs(diff) == dist)
            else:
                term = diff * np.power(np.abs(diff), p - 2) * g / np.power(dist, p - 1)
                term = np.where(dist == 0, 0, term)
        np.add.at(result, i, term.astype(compute))
        np.add.at(result, j, -term.astype(compute))
    _write(out, result)
