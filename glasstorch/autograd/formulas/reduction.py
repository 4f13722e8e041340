"""Helpers for the gradients of reductions, scans, sorting and norms
(PyTorch's FunctionsManual.cpp: sum_backward, prod_backward, norm_backward...).

A reduced gradient is first given back the dims the forward removed
(unsqueeze, or a reshape), then broadcast against the input.  Where PyTorch
picks a cheaper formula by looking at the data (no zeros in ``prod``'s input,
a NaN maximum), these helpers look the same way, with ``item()``; on the Meta
device they take the formula that reads no values.
``value_selecting_reduction_backward`` and ``cumprod_backward`` are aten ops
(kernels/reduction.py), as in PyTorch.
"""
from __future__ import annotations

import math

from ..._core import dtype as dt
from ..._core.tls import state as _tls
from ..._core.type_info import finfo
from ..._dispatcher.dispatcher import ops
from ..._tensor import is_tensor_subclass_like
from ..._ops.structured import wrap_dim
from .common import is_complex_dtype

__all__ = ["unsqueeze_multiple", "sum_backward", "mean_backward", "prod_backward",
           "evenly_distribute_backward", "restore_reduced_dims", "scale_grad_by_count",
           "aminmax_backward", "cumsum_backward", "logsumexp_backward", "norm_backward",
           "foreach_norm_backward", "var_backward", "std_backward", "var_mean_backward",
           "std_mean_backward", "nansum_backward", "softmax_double_backward",
           "log_softmax_double_backward_grad_output", "log_softmax_double_backward_output",
           "logcumsumexp_backward", "renorm_norms", "renorm_backward"]

aten = ops.aten


def _conj(t):
    """``t.conj()``: nothing to do (and no op) for a real tensor."""
    return aten.conj.default(t) if is_complex_dtype(t.dtype) else t


def _dim_list(dim):
    """An ``int[1]?`` argument as a list (None stays None: "every dim")."""
    return [dim] if isinstance(dim, int) else dim


def _has_data(t) -> bool:
    """Whether ``t``'s values can be read (a Meta tensor, a subclass-like one has
    none of its own): the data-dependent shortcuts are taken only then, as in
    PyTorch."""
    return t.device.type != "meta" and not is_tensor_subclass_like(t)


def _safe_size(sizes, dims):
    """How many elements each reduced slice has (1 for a 0-d input)."""
    if not sizes:
        return 1
    return math.prod(sizes[wrap_dim(d, len(sizes))] for d in dims)


def unsqueeze_multiple(t, dims, n_dims):
    """Put back the ``dims`` (of an ``n_dims``-d input) that a reduction
    without keepdim removed; None or [] leaves ``t`` alone."""
    dims = _dim_list(dims)
    if not dims:
        return t
    if len(dims) == 1:
        return aten.unsqueeze.default(t, dims[0])
    for d in sorted(wrap_dim(d, n_dims) for d in dims):
        t = aten.unsqueeze.default(t, d)
    return t


def sum_backward(grad, sizes, dims, keepdim):
    """Each input element of a sum gets its slice's gradient."""
    if not keepdim and sizes:
        grad = unsqueeze_multiple(grad, dims, len(sizes))
    return aten.expand.default(grad, list(sizes))


def mean_backward(grad, sizes, dims, numel, keepdim):
    """sum_backward divided by the number of elements averaged."""
    dims = _dim_list(dims)
    n = numel if not dims else _safe_size(sizes, dims)
    return aten.div.Scalar(sum_backward(grad, sizes, dims, keepdim), n)


def _prod_safe_zeros_backward(grad, inp, dim):
    """Product of all the other elements along ``dim``, computed without
    dividing (so zeros are fine): exclusive cumprods from the left and from
    the right, multiplied."""
    if inp.numel() == 0:
        return aten.expand_as.default(grad, inp)
    n = inp.shape[dim]
    if n == 1:
        return grad
    ones_size = list(inp.shape)
    ones_size[dim] = 1
    ones = aten.ones.default(ones_size, dtype=grad.dtype, device=grad.device)
    before = aten.cumprod.default(aten.cat.default([ones, aten.narrow.default(inp, dim, 0, n - 1)],
                                                   dim), dim)
    reversed_tail = aten.flip.default(aten.narrow.default(inp, dim, 1, n - 1), [dim])
    after = aten.flip.default(
        aten.cumprod.default(aten.cat.default([ones, reversed_tail], dim), dim), [dim])
    return aten.mul.Tensor(grad, _conj(aten.mul.Tensor(before, after)))


def prod_backward(grad, input, result, dim=None, keepdim=False):
    """d prod / dx_i = product of the other elements: result / x_i when no
    element is zero, else computed without division.  With two zeros or more
    in a full product every gradient is 0 (shortcut when no graph is built)."""
    if input.dim() == 0:
        return grad
    if dim is None:
        if _has_data(input):
            zeros = aten.nonzero.default(aten.eq.Scalar(input, 0))
            if zeros.shape[0] == 0:
                return aten.mul.Tensor(grad, _conj(aten.div.Tensor(result, input)))
            if not _tls.grad_enabled and zeros.shape[0] > 1:
                return aten.zeros_like.default(input)
        flat = aten.view.default(aten.contiguous.default(input), [-1])
        return aten.view_as.default(_prod_safe_zeros_backward(grad, flat, 0), input)
    dim = wrap_dim(dim, input.dim())
    if not keepdim:
        grad = aten.unsqueeze.default(grad, dim)
        result = aten.unsqueeze.default(result, dim)
    if _has_data(input):
        zero_counts = aten.sum.dim_IntList(aten.eq.Scalar(input, 0), [dim], True)
        if aten.sum.default(zero_counts).item() == 0:
            return aten.mul.Tensor(grad, _conj(aten.div.Tensor(result, input)))
    return _prod_safe_zeros_backward(grad, input, dim)


def evenly_distribute_backward(grad, input, value):
    """Full max/min/median: the gradient is shared equally by every element
    equal to the result (every NaN when the result is NaN)."""
    if not _has_data(input):
        both_nan = aten.logical_and.default(aten.isnan.default(input), aten.isnan.default(value))
        mask = aten.logical_or_.default(aten.eq.Tensor(input, value), both_nan)
        return aten.mul.Tensor(mask, aten.div.Tensor(grad, aten.sum.default(mask)))
    if aten.isnan.default(value).item():
        mask = aten.isnan.default(input)
    else:
        mask = aten.eq.Tensor(input, value)
    zeros = aten.new_zeros.default(grad, list(input.shape), dtype=input.dtype)
    return aten.masked_fill_.Tensor(zeros, mask, aten.div.Tensor(grad, aten.sum.default(mask)))


def restore_reduced_dims(output, dims, keepdim):
    """Reshape a reduction's output to its keepdim shape (size 1 at ``dims``)."""
    if keepdim:
        return output
    dims = _dim_list(dims)
    total = output.dim() + len(dims)
    shape = [0] * total
    for d in dims:
        shape[d + total if d < 0 else d] = 1
    kept = iter(output.shape)
    shape = [1 if s == 1 else next(kept) for s in shape]
    return aten.reshape.default(output, shape)


def scale_grad_by_count(grad, mask, dims):
    """Share each slice's gradient equally among the ``mask``ed elements."""
    counts = aten.sum.dim_IntList(mask, _dim_list(dims), True)
    return aten.mul.Tensor(aten.div.Tensor(grad, counts), mask)


def _amaxamin_backward(grad, self, value, dims, keepdim):
    mask = aten.eq.Tensor(restore_reduced_dims(value, dims, keepdim), self)
    return scale_grad_by_count(restore_reduced_dims(grad, dims, keepdim), mask, dims)


def aminmax_backward(self, dim, keepdim, grad_min, grad_max, min, max):
    """amin's and amax's gradients, added."""
    dims = [] if dim is None else [dim]
    return aten.add.Tensor(_amaxamin_backward(grad_min, self, min, dims, keepdim),
                           _amaxamin_backward(grad_max, self, max, dims, keepdim))


def cumsum_backward(grad, dim):
    """Input k feeds outputs k, k+1, ...: a cumsum from the end."""
    if grad.numel() <= 1 or grad.shape[dim] == 1:
        return grad
    return aten.flip.default(aten.cumsum.default(aten.flip.default(grad, [dim]), dim), [dim])


def logsumexp_backward(grad, self, result, dim, keepdim):
    """softmax(self) along ``dim``, times the gradient."""
    if not keepdim and self.dim() != 0:
        grad = unsqueeze_multiple(grad, dim, self.dim())
        result = unsqueeze_multiple(result, dim, self.dim())
    return aten.mul.Tensor(grad, _conj(aten.exp.default(aten.sub.Tensor(self, result))))


def foreach_norm_backward(grads, tensors, p, norms):
    """_foreach_norm's gradients: each tensor's norm_backward."""
    return [norm_backward(g, t, p, n) for g, t, n in zip(grads, tensors, norms)]


def norm_backward(grad, self, p, norm, dim=(), keepdim=False):
    """Gradient of the p-norm; 0 where the norm is 0 (and no gradient at all
    for p = 0, which counts non-zeros)."""
    p = 2.0 if p is None else float(p)
    dim = list(_dim_list(dim) or [])
    if not keepdim and self.dim() != 0:
        grad = unsqueeze_multiple(grad, dim, self.dim())
        norm = unsqueeze_multiple(norm, dim, self.dim())
    if p == 0.0:
        return None
    if p == 1.0:
        return aten.mul.Tensor(aten.sgn.default(self), grad)
    if p == 2.0:
        scaled = aten.masked_fill_.Scalar(aten.div.Tensor(self, norm), aten.eq.Scalar(norm, 0), 0)
        return aten.mul.Tensor(grad, scaled)
    if math.isinf(p):
        # the gradient of amax(|self|), NaNs counting as maxima
        self_abs = aten.abs.default(self)
        mask = aten.logical_or.default(aten.eq.Tensor(self_abs, norm),
                                       aten.isnan.default(self_abs))
        return aten.mul.Tensor(aten.sgn.default(self), scale_grad_by_count(grad, mask, dim))
    if p < 1.0:
        powered = aten.masked_fill_.Scalar(aten.pow_.Scalar(aten.abs.default(self), p - 1),
                                           aten.eq.Scalar(self, 0), 0)
        self_scaled = aten.mul.Tensor(aten.sgn.default(self), powered)
        norm_power = aten.pow.Tensor_Scalar(norm, 1 - p)
        return aten.mul.Tensor(aten.mul.Tensor(self_scaled, grad), norm_power)
    if p < 2.0:
        powered = aten.pow_.Scalar(aten.abs.default(self), p - 1)
        self_scaled = aten.mul.Tensor(aten.sgn.default(self), powered)
    else:
        self_scaled = aten.mul.Tensor(self, aten.pow_.Scalar(aten.abs.default(self), p - 2))
    scale = aten.div.Tensor(grad, aten.pow.Tensor_Scalar(norm, p - 1))
    aten.masked_fill_.Scalar(scale, aten.eq.Scalar(norm, 0), 0)
    return aten.mul.Tensor(self_scaled, scale)


def var_backward(grad, self, dim, correction, keepdim):
    """2 (x - mean) / (N - correction), times the gradient; N - correction
    <= 0 over the whole input gives inf (NaN where x equals the mean)."""
    correction = 1 if correction is None else correction
    if float(correction).is_integer():     # N - correction stays an int (a SymInt under
        correction = int(correction)       # dynamic shapes, which takes no float)
    dim = _dim_list(dim)
    if self.dim() == 0 or dim is None:
        dof = self.numel() - correction
        if dof <= 0:
            at_mean = aten.eq.Tensor(self, aten.mean.default(self))
            return aten.mul.Tensor(grad, aten.where.Scalar(at_mean, math.nan, math.inf))
        centered = aten.sub.Tensor(self, aten.mean.default(self))
        return aten.mul.Tensor(_twice_over(grad, dof), centered)
    if not keepdim and self.dim() > 1:
        grad = unsqueeze_multiple(grad, dim, self.dim())
    centered = aten.sub.Tensor(self, aten.mean.dim(self, dim, True))
    dof = _safe_size(self.shape, dim) - correction
    return aten.mul.Tensor(_twice_over(grad, dof), centered)


def _twice_over(grad, dof):
    """``grad * (2 / dof)`` (C++'s double division: inf for 0); a symbolic
    ``dof``, whose ratio would be a SymFloat, divides ``2 grad`` instead."""
    if not isinstance(dof, (int, float)):          # a SymInt
        return aten.div.Scalar(aten.mul.Scalar(grad, 2.0), dof)
    return aten.mul.Scalar(grad, 2.0 / dof if dof != 0 else math.inf)


def std_backward(result, grad, self, dim, correction, keepdim):
    """var_backward of grad / (2 std), with 0 where std is 0."""
    grad_var = aten.masked_fill_.Scalar(aten.div.Tensor(grad, aten.mul.Scalar(result, 2)),
                                        aten.eq.Scalar(result, 0), 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def var_mean_backward(grad_var, grad_mean, self, dim, correction, keepdim):
    """var's and mean's gradients, added."""
    return aten.add.Tensor(var_backward(grad_var, self, dim, correction, keepdim),
                           mean_backward(grad_mean, self.shape, dim, self.numel(), keepdim))


def std_mean_backward(grad_std, grad_mean, self, std, dim, correction, keepdim):
    """std's and mean's gradients, added."""
    return aten.add.Tensor(std_backward(std, grad_std, self, dim, correction, keepdim),
                           mean_backward(grad_mean, self.shape, dim, self.numel(), keepdim))


# -- nansum --------------------------------------------------------------------------------

def nansum_backward(grad, self, dims, keepdim):
    """sum's gradient, zero where the input was NaN."""
    spread = sum_backward(grad, self._shape, dims, keepdim)
    return aten.mul.Tensor(spread, aten.logical_not.default(aten.ne.Tensor(self, self)))


# -- softmax's double backward -------------------------------------------------------------

def softmax_double_backward(grad, grad_output, dim, output):
    """d/d output of <output * (grad_output - sum(grad_output * output)), grad>:
    grad * (grad_output - sum(grad_output * output)) - grad_output * sum(grad * output)."""
    grad = aten.to.dtype(grad, output.dtype)
    inner = aten.sum.dim_IntList(aten.mul.Tensor(grad_output, output), [dim], True)
    cross = aten.sum.dim_IntList(aten.mul.Tensor(grad, output), [dim], True)
    return aten.sub.Tensor(aten.mul.Tensor(grad, aten.sub.Tensor(grad_output, inner)),
                           aten.mul.Tensor(grad_output, cross))


def log_softmax_double_backward_grad_output(grad, dim, output):
    """d/d grad_output of <grad_output - exp(output) sum(grad_output), grad>."""
    grad = aten.to.dtype(grad, output.dtype)
    total = aten.sum.dim_IntList(aten.mul.Tensor(grad, aten.exp.default(output)), [dim], True)
    return aten.sub.Tensor(grad, total)


def log_softmax_double_backward_output(grad, grad_output, dim, output):
    """d/d output of the same: -sum(grad_output) * exp(output) * grad."""
    total = aten.sum.dim_IntList(grad_output, [dim], True)
    return aten.mul.Tensor(aten.mul.Tensor(aten.neg.default(total), aten.exp.default(output)),
                           aten.to.dtype(grad, output.dtype))


def logcumsumexp_backward(grad, self, result, dim):
    """logcumsumexp's gradient: grad_i = sum_{j >= i} grad_j exp(self_i - result_j),
    as reversed logcumsumexps of log|grad| - result, the positive and
    negative parts of a real grad apart (a complex grad needs no split)."""
    if grad.dim() == 0 or grad.numel() == 0:
        return grad

    def reversed_logcumsumexp(x):
        return aten.flip.default(aten.logcumsumexp.default(aten.flip.default(x, [dim]), dim),
                                 [dim])
    if is_complex_dtype(grad.dtype):
        log_grad = aten.log.default(aten.conj.default(grad))
        return aten.conj.default(aten.exp.default(reversed_logcumsumexp(log_grad - result) + self))
    lowest = aten.scalar_tensor.default(finfo(grad.dtype).min, dtype=grad.dtype,
                                        device=grad.device)
    log_abs = aten.log.default(aten.abs.default(grad))
    parts = [aten.where.self(cond, log_abs, lowest) for cond in (grad > 0, grad < 0)]
    positive, negative = (aten.exp.default(reversed_logcumsumexp(part - result) + self)
                          for part in parts)
    return positive - negative


def renorm_norms(self, p, dim):
    """renorm's per-slice norms (kept dims) and the dims they reduce; half and
    bfloat16 in float32 (ATen asks for the CUDA accumulate type)."""
    d = wrap_dim(dim, self.dim())
    dims = [i for i in range(self.dim()) if i != d]
    low = self.dtype in (dt.float16, dt.bfloat16)
    return aten.linalg_vector_norm.default(self, float(p), dims, True,
                                           dtype=dt.float32 if low else None), dims


def renorm_backward(grad, self, p, dim, maxnorm):
    """renorm's gradient (FunctionsManual.cpp): where a slice's norm exceeds
    maxnorm, the scaled gradient minus the norm's own gradient term."""
    norm, dims = renorm_norms(self, p, dim)
    grad_output = aten.conj.default(self) * grad
    if is_complex_dtype(grad_output.dtype):
        grad_output = aten.real.default(grad_output)
    grad_output = aten.sum.dim_IntList(grad_output, dims, True, dtype=norm.dtype)
    nb = norm_backward(grad_output, self, p, norm, dims, True)
    invnorm = aten.reciprocal.default(norm + 1e-7)
    factor = invnorm * maxnorm
    return aten.where.self(norm > maxnorm, factor * grad - (factor * invnorm) * nb, grad)
