"""Backward ops of reductions and scans that PyTorch exposes as aten ops
(CompositeImplicitAutograd: they decompose into other ops, so their own
gradients come from those ops'):

    value_selecting_reduction_backward   max.dim, min.dim, median.dim, mode, sort, topk
    cumprod_backward                     cumprod
"""
from __future__ import annotations

from ..._core import dispatch_key as dk
from ..._core.tls import state as _tls
from ..._dispatcher.dispatcher import ops
from ..._tensor import is_tensor_subclass_like
from ..structured import wrap_dim
from . import kernel

aten = ops.aten


@kernel("value_selecting_reduction_backward")
def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    """Only the selected elements get a gradient: ``grad`` is scattered into
    zeros of the input's ``sizes`` at ``indices`` (along ``dim``)."""
    if not keepdim and sizes:
        dim = wrap_dim(dim, len(sizes))
        indices = aten.unsqueeze.default(indices, dim)
        grad = aten.unsqueeze.default(grad, dim)
    grad_in = aten.zeros.default(list(sizes), dtype=grad.dtype, device=grad.device)
    if is_tensor_subclass_like(grad) or is_tensor_subclass_like(indices):
        return aten.scatter.src(grad_in, dim, indices, grad)    # (a batched grad: out of place)
    return aten.scatter_.src(grad_in, dim, indices, grad)


def _conj(t):
    return aten.conj.default(t) if t.dtype.is_complex else t


def _reversed_cumsum(t, dim):
    return aten.flip.default(aten.cumsum.default(aten.flip.default(t, [dim]), dim), [dim])


@kernel("cumprod_backward")
def cumprod_backward(grad, input, dim, output):
    """Gradient of y = cumprod(x) along ``dim``: dF/dx_k = sum_{j>=k} g_j dy_j/dx_k,
    where dy_j/dx_k is the product of x_1..x_j without x_k.

    * No zero in x: dy_j/dx_k = y_j / x_k, so the gradient is a reversed
      cumsum of y*g divided by x.
    * Zeros, no graph to build: before the first zero z1 the same formula
      holds (the y_j / x_k terms for j >= z1 vanish); at z1 the gradient is
      prod(x before z1) * sum over z1 <= j < z2 of g_j * prod(x_{z1+1..j});
      after z1 it is 0.  That formula's own derivative is not cumprod's second
      derivative, so
    * zeros with grad mode on (double backward) use the products with x_k
      omitted directly, one position k at a time.
    Meta tensors and ``__torch_dispatch__`` subclasses (FakeTensor) have no
    values to read: they take the data-independent paths.
    """
    if input.numel() <= 1:
        return grad
    dim = wrap_dim(dim, input.dim())
    size = input.shape[dim]
    if size == 1:
        return grad
    input_conj, output_conj = _conj(input), _conj(output)
    w = aten.mul.Tensor(output_conj, grad)
    is_zero = aten.eq.Scalar(input, 0)
    if input.device.type != "meta" and not input._keys & dk.PYTHON and \
            not aten.any.default(is_zero).item():
        return aten.div.Tensor(_reversed_cumsum(w, dim), input_conj)
    if not _tls.grad_enabled:
        grad_input = aten.zeros.default(list(input.shape), dtype=grad.dtype, device=grad.device)
        zeros_before = aten.cumsum.default(is_zero, dim)
        # k < z1
        mask = aten.eq.Scalar(zeros_before, 0)
        before = aten.div.Tensor(
            _reversed_cumsum(aten.masked_fill.Scalar(w, aten.bitwise_not.default(mask), 0), dim),
            input_conj)
        grad_input = aten.where.self(mask, before, grad_input)
        # k = z1: its mask, then the elements strictly between z1 and z2
        mask = aten.eq.Scalar(zeros_before, 1)
        first_zero_index = aten.max.dim(mask, dim, True)[1]
        first_zero_mask = aten.logical_and_.default(
            aten.scatter_.value(aten.zeros_like.default(mask), dim, first_zero_index, 1), mask)
        aten.bitwise_and_.Tensor(mask, aten.bitwise_not.default(first_zero_mask))
        between = aten.cumprod.default(
            aten.masked_fill.Scalar(input_conj, aten.bitwise_not.default(mask), 1), dim)
        grad_between = aten.masked_fill.Scalar(grad, aten.ne.Scalar(zeros_before, 1), 0)
        prod_before = aten.masked_fill_.Scalar(
            aten.gather.default(output_conj, dim,
                                aten.relu_.default(aten.sub.Scalar(first_zero_index, 1))),
            aten.eq.Scalar(first_zero_index, 0), 1)
        at_zero = aten.mul.Tensor(
            aten.sum.dim_IntList(aten.mul.Tensor(between, grad_between), [dim], True), prod_before)
        return aten.where.self(first_zero_mask, at_zero, grad_input)
    grad_input = aten.zeros.default(list(input.shape), dtype=grad.dtype, device=grad.device)
    ones_size = list(input.shape)
    ones_size[dim] = 1
    ones = aten.expand.default(aten.ones.default([1], dtype=grad.dtype, device=grad.device),
                               ones_size)
    for k in range(size):
        # omitted[j] = prod_{i <= j, i != k} x_i for j >= k
        if k == 0:
            omitted = aten.cat.default(
                [ones, aten.cumprod.default(aten.slice.Tensor(input_conj, dim, 1), dim)], dim)
        else:
            until_k = aten.prod.dim_int(aten.slice.Tensor(input_conj, dim, 0, k), dim, True)
            if k == size - 1:
                omitted = until_k
            else:
                after_k = aten.cumprod.default(aten.slice.Tensor(input_conj, dim, k + 1), dim)
                omitted = aten.cat.default(
                    [until_k, aten.mul.Tensor(aten.expand_as.default(until_k, after_k), after_k)],
                    dim)
        grad_k = aten.sum.dim_IntList(aten.mul.Tensor(aten.slice.Tensor(grad, dim, k), omitted),
                                      [dim])
        aten.copy_.default(aten.select.int(grad_input, dim, k), grad_k)
    return grad_input
