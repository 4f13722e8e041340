"""cosine_similarity and pairwise_distance (ATen's Distance.cpp): CompositeImplicitAutograd
decompositions, with PyTorch's op sequence.

    cosine_similarity(x1, x2, dim, eps) = sum((x1 / max(|x1|, eps)) * (x2 / max(|x2|, eps)), dim)
        (each vector is divided by its clamped 2-norm first, which keeps the result in [-1, 1])
    pairwise_distance(x1, x2, p, eps, keepdim) = norm(x1 - x2 + eps, p, last dim)

Also here: cdist (``_cdist_forward``: p-norm distances between rows; p=2 may
use a matrix product, as ATen's ``_euclidean_dist``) and its backward.
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._core.tls import state as _tls
from ..._dispatcher.dispatcher import ops
from ..structured import broadcast_shapes, result_type, TensorMeta
from . import impl, kernel, meta
from ._common import _not_implemented
from .pointwise import quiet, write

__all__ = []

aten = ops.aten


@kernel("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{common._short}")
    # integer (and bool) inputs are converted; linalg_vector_norm takes floats only
    if not x1.dtype.is_floating_point:
        x1 = aten.to.dtype(x1, common)
    if not x2.dtype.is_floating_point:
        x2 = aten.to.dtype(x2, common)
    if x1._shape != x2._shape:                       # expand_outplace
        shape = list(broadcast_shapes(x1._shape, x2._shape))
        x1, x2 = aten.expand.default(x1, shape), aten.expand.default(x2, shape)
    x1_norm = aten.clone.default(aten.linalg_vector_norm.default(x1, 2, [dim], True))
    x2_norm = aten.clone.default(aten.linalg_vector_norm.default(x2, 2, [dim], True))
    grad_enabled, _tls.grad_enabled = _tls.grad_enabled, False   # NoGradGuard: the clamp
    try:                                                          # is not differentiated
        eps_tensor = aten.scalar_tensor.default(eps, dtype=x1_norm.dtype, device=x1_norm.device)
        aten.clamp_min_.Tensor(x1_norm, eps_tensor)
        aten.clamp_min_.Tensor(x2_norm, eps_tensor)
    finally:
        _tls.grad_enabled = grad_enabled
    return aten.sum.dim_IntList(aten.mul.Tensor(aten.div.Tensor(x1, x1_norm),
                                                aten.div.Tensor(x2, x2_norm)), [dim])


@kernel("pairwise_distance")
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    innermost = max(len(x1._shape), len(x2._shape)) - 1
    difference = aten.add.Scalar(aten.sub.Tensor(x1, x2), eps)
    return aten.norm.ScalarOpt_dim(difference, p, [innermost], keepdim)


# -- pairwise distances: cdist -------------------------------------------------------------

def _cdist_shape_check(x1, x2):
    for name, x in (("X1", x1), ("X2", x2)):
        if len(x._shape) < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{len(x._shape)}D")
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1._shape[-1]} X2: {x2._shape[-1]}")


def _cdist_layout(x1, x2, p, compute_mode):
    """cdist_impl's checks; the broadcast batch dims and the result's shape."""
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dtype.category != dt.FLOATING:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{x.dtype._short}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = 0 if compute_mode is None else compute_mode
    if not 0 <= mode <= 2:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")
    batch = broadcast_shapes(x1._shape[:-2], x2._shape[:-2])
    return batch, batch + (x1._shape[-2], x2._shape[-2])


def _uses_matmul(p, compute_mode, rows1, rows2):
    """Whether p=2 distances take the matmul route (_euclidean_dist)."""
    mode = 0 if compute_mode is None else compute_mode
    return p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25)))


@kernel("cdist")
def cdist(x1, x2, p=2.0, compute_mode=None):
    """p-norm distances between the rows of x1 and x2 (batched): _cdist_forward, or for
    p=2 on many rows ||a||^2 - 2 a.b + ||b||^2 through _euclidean_dist (its own gradient)."""
    _cdist_shape_check(x1, x2)
    rows1, rows2, cols = x1._shape[-2], x2._shape[-2], x1._shape[-1]
    if x1.numel() == 0 or x2.numel() == 0 or not _uses_matmul(p, compute_mode, rows1, rows2):
        return aten._cdist_forward.default(x1, x2, p, compute_mode)
    batch, shape = _cdist_layout(x1, x2, p, compute_mode)
    count = math.prod(batch)
    flat1 = aten.view.default(aten.contiguous.default(
        aten.expand.default(x1, list(batch) + [rows1, cols])), [count, rows1, cols])
    flat2 = aten.view.default(aten.contiguous.default(
        aten.expand.default(x2, list(batch) + [rows2, cols])), [count, rows2, cols])
    dist = aten._euclidean_dist.default(x1, x2) if count == 1 else \
        aten._euclidean_dist.default(flat1, flat2)
    return aten.view.default(dist, list(shape))


@kernel("_euclidean_dist")
def _euclidean_dist(x1, x2):
    """sqrt(max(0, [-2 a, |a|^2, 1] . [b, 1, |b|^2])): all distances with one matmul."""
    norm1 = aten.sum.dim_IntList(aten.pow.Tensor_Scalar(x1, 2), [-1], True)
    norm2 = aten.sum.dim_IntList(aten.pow.Tensor_Scalar(x2, 2), [-1], True)
    rows1 = aten.cat.default([aten.mul.Tensor(x1, -2), norm1, aten.ones_like.default(norm1)], -1)
    rows2 = aten.cat.default([x2, aten.ones_like.default(norm2), norm2], -1)
    squared = aten.matmul.default(rows1, aten.transpose.int(rows2, -2, -1))
    return aten.sqrt_.default(aten.clamp_min_.default(squared, 0))


def _pairwise_differences(x1, x2, batch):
    """x1[..., i, :] - x2[..., j, :] for all i, j, computed in x1's dtype."""
    a = np.broadcast_to(x1._np(), batch + x1._shape[-2:])
    b = np.broadcast_to(x2._np(), batch + x2._shape[-2:])
    return a[..., :, None, :] - b[..., None, :, :]


def _check_cdist_kernel_dtypes(x1, x2):
    """The CPU loop's dtype dispatch (float32 / float64 only, one dtype)."""
    if x1.dtype not in (dt.float32, dt.float64):
        raise _not_implemented("cdist", x1.dtype)
    if x2.dtype is not x1.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype._short} but found {x2.dtype._short}")


@meta("_cdist_forward")
def _cdist_forward_meta(x1, x2, p, compute_mode):
    _cdist_shape_check(x1, x2)
    return TensorMeta(_cdist_layout(x1, x2, p, compute_mode)[1], x1.dtype)


@impl("_cdist_forward")
@quiet
def _cdist_forward_impl(out, x1, x2, p, compute_mode):
    batch, shape = _cdist_layout(x1, x2, p, compute_mode)
    if out.numel() == 0:
        return
    if x1._shape[-1] == 0:
        out._np()[...] = 0
        return
    if _uses_matmul(p, compute_mode, x1._shape[-2], x2._shape[-2]):
        out._np()[...] = aten.cdist.default(x1, x2, p, compute_mode)._np()
        return
    _check_cdist_kernel_dtypes(x1, x2)
    size = np.abs(_pairwise_differences(x1, x2, batch))
    if p == 0:
        dist = np.count_nonzero(size, axis=-1)
    elif p == 1:
        dist = size.sum(-1)
    elif p == 2:
        dist = np.sqrt(np.square(size).sum(-1))
    elif math.isinf(p):
        dist = size.max(-1, initial=0)
    else:
        dist = np.power(np.power(size, p).sum(-1), 1 / p)
    write(out, dist)


@meta("_cdist_backward")
def _cdist_backward_meta(grad, x1, x2, p, cdist):
    batch = broadcast_shapes(x1._shape[:-2], x2._shape[:-2])
    return TensorMeta(batch + x1._shape[-2:], x1.dtype)


@impl("_cdist_backward")
@quiet
def _cdist_backward_impl(out, grad, x1, x2, p, cdist):
    """d dist(i, j) / d x1[i] summed over j with grad's weights (0 where dist is 0)."""
    batch = out._shape[:-2]
    if out.numel() == 0 or p == 0 or x2._shape[-2] == 0:
        out._np()[...] = 0
        return
    diff = _pairwise_differences(x1, x2, batch)
    dist = cdist._np()[..., None]
    weight = grad._np()[..., None]
    sign, size = np.sign(diff), np.abs(diff)
    if p == 1:
        slope = sign
    elif math.isinf(p):
        slope = sign * (size == dist)
    elif p == 2:
        slope = np.where(dist == 0, 0, diff / dist)
    elif p < 2:
        zero = (dist == 0) | ((diff == 0) & (p < 1))
        slope = np.where(zero, 0, sign * np.power(size, p - 1) / np.power(dist, p - 1))
    else:
        slope = np.where(dist == 0, 0, diff * np.power(size, p - 2) / np.power(dist, p - 1))
    write(out, (slope * weight).sum(-2))
