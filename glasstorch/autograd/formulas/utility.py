"""Gradient helpers of the tensor utilities (kernels/utility.py; PyTorch's
FunctionsManual.cpp)."""
from __future__ import annotations

import math

from ..._core.tls import state as _tls
from ..._dispatcher.dispatcher import ops
from .common import handle_r_to_c
from .reduction import sum_backward

__all__ = ["block_diag_backward", "logit_grad", "deg2rad_backward",
           "rad2deg_backward", "nansum_backward",
           "index_copy_source_backward", "scatter_reduce_backward",
           "euclidean_dist_backward"]

aten = ops.aten


def block_diag_backward(grad, sizes, dtypes):
    """Input i gets its block of the gradient (a 0-d or 1-d input's block reshaped
    back; a 1-d empty input gets an empty gradient, as in PyTorch)."""
    grads, row, col = [], 0, 0
    for shape, dtype in zip(sizes, dtypes):
        shape = list(shape)
        if shape == [0]:
            grads.append(aten.zeros.default([0], dtype=grad.dtype, device=grad.device))
            continue
        rows, cols = shape if len(shape) == 2 else (1, shape[0] if shape else 1)
        block = aten.slice.Tensor(aten.slice.Tensor(grad, 0, row, row + rows), 1, col,
                                  col + cols)
        if len(shape) != 2:
            block = aten.reshape.default(block, shape)
        grads.append(handle_r_to_c(dtype, block))
        row, col = row + rows, col + cols
    return grads


def logit_grad(grad, self, eps):
    """logit's gradient: the logit_backward kernel, or (when building a graph for double
    backward) the same expression written with differentiable ops."""
    if not _tls.grad_enabled:
        return aten.logit_backward.default(grad, self, eps)
    scaled = aten.div.Tensor(grad, aten.mul.Tensor(self, aten.rsub.Scalar(self, 1)))
    return _logit_masked(scaled, self, eps)


def _logit_masked(values, self, eps):
    """``values`` where logit's gradient is defined; NaN outside [0, 1] (no eps), or 0
    outside [eps, 1 - eps]."""
    low, high, fill = (0, 1, math.nan) if eps is None or eps < 0 else (eps, 1 - eps, 0)
    outside = aten.logical_or.default(aten.lt.Scalar(self, low), aten.gt.Scalar(self, high))
    return aten.where.ScalarSelf(outside, fill, values)


def deg2rad_backward(grad):
    return aten.mul.Tensor(grad, math.pi / 180)


def rad2deg_backward(grad):
    return aten.mul.Tensor(grad, 180 / math.pi)


def nansum_backward(grad, self, dims, keepdim):
    """sum's gradient, zero where the input was NaN."""
    spread = sum_backward(grad, self._shape, dims, keepdim)
    return aten.mul.Tensor(spread, aten.logical_not.default(aten.ne.Tensor(self, self)))


def index_copy_source_backward(grad, dim, index, source):
    """The slices of the gradient that the copy wrote (a 0-d source takes its one slice)."""
    if source.dim() > 0:
        return aten.expand.default(aten.index_select.default(grad, dim, index),
                                   list(source._shape))
    return aten.index_select.default(grad, dim, aten.squeeze.dim(index, 0))


def scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result):
    """Gradients of scatter_reduce for (self, src), as PyTorch's scatter_reduce_backward:
    sum passes grad through; mean divides it by each position's count; prod multiplies
    by the product of the others (a single zero handled by recomputing without it);
    amax/amin split it evenly among the elements equal to the result."""
    if reduce == "sum":
        grad_self, grad_src = grad, aten.gather.default(grad, dim, index)
    elif reduce == "mean":
        counts = aten.ones_like.default(grad) if include_self else aten.zeros_like.default(grad)
        counts = aten.scatter_add.default(counts, dim, index, aten.ones_like.default(src))
        counts = aten.masked_fill.Scalar(counts, aten.eq.Scalar(counts, 0), 1)
        grad_self = aten.div.Tensor(grad, counts)
        grad_src = aten.gather.default(grad_self, dim, index)
    elif reduce == "prod":
        grad_self, grad_src = _scatter_prod_backward(grad, self, dim, index, src, include_self,
                                                     result)
    elif reduce in ("amax", "amin"):
        value = aten.gather.default(result, dim, index)
        self_is_result = aten.eq.Tensor(self, result)
        src_is_result = aten.eq.Tensor(src, value)
        ties = aten.scatter_add.default(aten.to.dtype(self_is_result, self.dtype), dim, index,
                                        aten.to.dtype(src_is_result, self.dtype))
        share = aten.div.Tensor(grad, ties)
        grad_self = aten.mul.Tensor(self_is_result, share)
        grad_src = aten.mul.Tensor(src_is_result, aten.gather.default(share, dim, index))
    else:
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    if not include_self:
        grad_self = aten.scatter.value(grad_self, dim, index, 0)
    return grad_self, grad_src


def _scatter_prod_backward(grad, self, dim, index, src, include_self, result):
    nonzero_self = aten.masked_fill.Scalar(self, aten.eq.Scalar(self, 0), 1)
    nonzero_self_result = aten.scatter_reduce.two(nonzero_self, dim, index, src, "prod",
                                                  include_self=include_self)
    grad_self = aten.div.Tensor(aten.mul.Tensor(grad, nonzero_self_result), nonzero_self)
    src_zero = aten.eq.Scalar(src, 0)
    zeros_at = aten.scatter_add.default(aten.zeros_like.default(self), dim, index,
                                        aten.to.dtype(src_zero, self.dtype))
    src_zeros = aten.gather.default(zeros_at, dim, index)
    single_zero = aten.bitwise_and.Tensor(src_zero, aten.eq.Scalar(src_zeros, 1))
    if _tls.grad_enabled and bool(aten.any.default(aten.gt.Scalar(src_zeros, 1))):
        raise RuntimeError(
            "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
            "scattered to the same position. This is because the gradient will be different "
            "based on the order of the scattered elements.")
    without_zero = aten.scatter_reduce.two(self, dim, index,
                                           aten.masked_fill.Scalar(src, single_zero, 1), "prod",
                                           include_self=include_self)
    grad_src = aten.where.self(
        single_zero, aten.gather.default(aten.mul.Tensor(grad, without_zero), dim, index),
        aten.div.Tensor(aten.gather.default(aten.mul.Tensor(grad, result), dim, index),
                        aten.masked_fill.Scalar(src, src_zero, 1)))
    return grad_self, grad_src


def euclidean_dist_backward(grad, x1, x2, result):
    """_euclidean_dist's gradients: with r = grad / dist (0 where dist is 0),
    x1 r.sum(-1) - r @ x2 and x2 r.sum(-2) - r^T @ x1."""
    ratio = aten.div.Tensor(grad, result)
    ratio = aten.masked_fill_.Scalar(ratio, aten.eq.Scalar(result, 0), 0)
    grad_x1 = aten.sub.Tensor(aten.mul.Tensor(x1, aten.sum.dim_IntList(ratio, [-1], True)),
                              aten.matmul.default(ratio, x2))
    grad_x2 = aten.sub.Tensor(
        aten.mul.Tensor(x2, aten.unsqueeze.default(aten.sum.dim_IntList(ratio, [-2]), -1)),
        aten.matmul.default(aten.transpose.int(ratio, -2, -1), x1))
    return grad_x1, grad_x2
