"""Backward ops of the linear-algebra and neural-network ops (ATen's ``*_backward``
kernels: Convolution.cpp, Pooling, layer_norm.cpp, group_norm.cpp, SoftMax.cpp,
Embedding.cpp, Dropout.cpp, Loss.cpp, LossNLL.cpp).

They are what the gradient formulas in ``derivatives.yaml`` call, and are
ops like any other: declared in ``native_functions.yaml``, dispatched, with
CPU bodies here and Meta kernels from the same meta rules.

    _softmax_backward_data(g, y)        y * (g - sum(g * y, dim))
    _log_softmax_backward_data(g, y)    g - exp(y) * sum(g, dim)
    max_pool2d_with_indices_backward    g scattered (added) at the saved argmax indices
    avg_pool2d_backward                 g / divisor spread over each window
    _adaptive_avg_pool2d_backward       g / window size spread over each adaptive window
    convolution_backward                (grad_input, grad_weight, grad_bias), per output_mask
    native_layer_norm_backward          (dx, dgamma, dbeta) from the saved mean / rstd
    native_group_norm_backward          the same per (sample, group)
    embedding_dense_backward            rows of g added into a (num_weights, D) zero matrix
    native_dropout_backward             g * mask * scale
    mse/smooth_l1/huber/binary_cross_entropy/nll_loss(2d)_backward
                                        the losses' derivatives times grad_output

Ops with an ``output_mask`` (convolution, layer and group norm) return None for
the outputs not asked for, as PyTorch returns undefined tensors; they are plain
kernels registered for CPU and Meta, the rest are structured.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..._tensor import channels_last_strides
from ..structured import TensorMeta, broadcast_shapes, elementwise_strides, empty_tensor, \
    result_type, wrap_dim
from . import impl, kernel, meta, softmax_order
from ._inner import inner, observed
from .conv_backends import convolution_backward_route
from .conv import (_adaptive_ranges, _conv_forward, _conv_transposed, _expand_param,
                   _is_channels_last, _pool_params, scatter_to_argmax)

aten = ops.aten

NONE, MEAN = 0, 1     # reduction


def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _array(t, compute):
    a = t._np()
    return a if a.dtype == compute else a.astype(compute)


def _write(out, values):
    np.copyto(out._np(), values, casting="unsafe")


def _check_same_dtype(expected, found):
    if expected.dtype is not found.dtype:
        raise RuntimeError(f"expected scalar type {expected.dtype._short} but found "
                           f"{found.dtype._short}")


def _allocate_masked(specs, device):
    """The outputs of an op with an output_mask: None where the spec is None."""
    return tuple(empty_tensor(s.shape, s.dtype, device, s.stride) if s is not None else None
                 for s in specs)


def _like_memory_format(t):
    """Strides of a fresh tensor shaped like ``t`` in ``t``'s suggested memory
    format (channels_last for a channels_last 4-d tensor, else contiguous)."""
    return channels_last_strides(t._shape) if _is_channels_last(t) else None


# -- softmax --------------------------------------------------------------------------

def _softmax_backward_meta(grad_output, output, dim, input_dtype):
    _check_same_dtype(grad_output, output)
    wrap_dim(dim, len(grad_output._shape))
    if tuple(grad_output._shape) != tuple(output._shape):
        raise RuntimeError(f"grad_output and output must have the same shape, got "
                           f"{_sizes(grad_output._shape)} and {_sizes(output._shape)}")
    if input_dtype is dt.float16 and grad_output.dtype is dt.float32:
        # half_to_float: only the CUDA kernels take a float gradient for a half input
        raise RuntimeError("expected scalar type Float but found Half")
    return TensorMeta(grad_output._shape, grad_output.dtype)


meta("_softmax_backward_data")(_softmax_backward_meta)
meta("_log_softmax_backward_data")(_softmax_backward_meta)


def _softmax_operands(out, grad_output, output, dim):
    compute = out.dtype.opmath
    g, y = _array(grad_output, compute), _array(output, compute)
    axis = wrap_dim(dim, g.ndim) if g.ndim else None
    return g, y, axis


def _lastdim_backward(out, grad_output, output, dim, log) -> bool:
    """float32 rows along the last dim: ATen's lastdim kernel, bit for bit
    (kernels/softmax_order.py)."""
    if out.dtype is not dt.float32 or grad_output.dtype is not dt.float32 or (
            grad_output._shape and wrap_dim(dim, len(grad_output._shape))
            != len(grad_output._shape) - 1):
        return False
    if out.numel() == 0:
        return True
    cols = grad_output._shape[-1] if grad_output._shape else 1
    g, y = (np.ascontiguousarray(t._np()).reshape(-1, cols) for t in (grad_output, output))
    _write(out, softmax_order.softmax_backward_rows(g, y, log).reshape(out._shape))
    return True


@impl("_softmax_backward_data")
def softmax_backward_data_impl(out, grad_output, output, dim, input_dtype):
    if _lastdim_backward(out, grad_output, output, dim, log=False):
        return
    g, y, axis = _softmax_operands(out, grad_output, output, dim)
    _write(out, y * (g - np.sum(g * y, axis=axis, keepdims=True)))


@impl("_log_softmax_backward_data")
def log_softmax_backward_data_impl(out, grad_output, output, dim, input_dtype):
    if _lastdim_backward(out, grad_output, output, dim, log=True):
        return
    g, y, axis = _softmax_operands(out, grad_output, output, dim)
    with np.errstate(over="ignore", invalid="ignore"):
        _write(out, g - np.exp(y) * np.sum(g, axis=axis, keepdims=True))


# -- pooling ----------------------------------------------------------------------------

def _pool_grad_checks(name, grad_output, self, out_hw):
    if grad_output.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {dt.type_meta_name(self.dtype)} for `gradOutput` but got "
                           f"dtype {dt.type_meta_name(grad_output.dtype)}")
    expected = tuple(self._shape[:-2]) + tuple(out_hw)
    if tuple(grad_output._shape) != expected:
        raise RuntimeError(f"{name}: expected grad_output of shape {_sizes(expected)}, but got "
                           f"{_sizes(grad_output._shape)}")


@meta("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward_meta(grad_output, self, kernel_size, stride, padding,
                                          dilation, ceil_mode, indices):
    *_, out_hw = _pool_params("max_pool2d", self, kernel_size, stride, padding, dilation,
                              ceil_mode)
    _pool_grad_checks("max_pool2d_with_indices_backward", grad_output, self, out_hw)
    if tuple(indices._shape) != tuple(grad_output._shape):
        raise RuntimeError(f"max_pool2d_with_indices_backward: indices of shape "
                           f"{_sizes(indices._shape)} don't match grad_output of shape "
                           f"{_sizes(grad_output._shape)}")
    return TensorMeta(self._shape, self.dtype, _like_memory_format(self))


@impl("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward_impl(out, grad_output, self, kernel_size, stride, padding,
                                          dilation, ceil_mode, indices):
    """Each plane's gradient is added at its argmax positions (overlapping
    windows may pick the same input element: those add up); ATen's kernel
    clears the gradient first (``zero_``)."""
    inner.zero_(out)
    scatter_to_argmax(out, grad_output, self, indices)


@meta("avg_pool2d_backward")
def avg_pool2d_backward_meta(grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    *_, out_hw = _pool_params("avg_pool2d", self, kernel_size, stride, padding, 1, ceil_mode)
    _pool_grad_checks("avg_pool2d_backward", grad_output, self, out_hw)
    return TensorMeta(self._shape, self.dtype, _like_memory_format(self))


def _window_spans(n_out, stride, pad, k, size):
    """Per output position: the window's length counting padding, and the
    number of its elements inside the input (avg_pool2d's divisors)."""
    start = np.arange(n_out) * stride - pad
    end = np.minimum(start + k, size + pad)
    return end - start, np.minimum(end, size) - np.maximum(start, 0)


@impl("avg_pool2d_backward")
def avg_pool2d_backward_impl(out, grad_output, self, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override):
    """Spread g / divisor over every window: for each kernel offset (i, j), one
    strided slice of a padded buffer gets the whole output grid at once; the
    padding is cropped off at the end.  ATen's kernel clears the gradient
    first (``zero_``)."""
    inner.zero_(out)
    (kh, kw), (sh, sw), (ph, pw), _, (oh, ow) = _pool_params(
        "avg_pool2d", self, kernel_size, stride, padding, 1, ceil_mode)
    compute = out.dtype.opmath
    h, w = self._shape[-2:]
    if divisor_override is not None:
        divisor = compute.type(divisor_override)
    else:
        pool_h, valid_h = _window_spans(oh, sh, ph, kh, h)
        pool_w, valid_w = _window_spans(ow, sw, pw, kw, w)
        divisor = (np.outer(pool_h, pool_w) if count_include_pad
                   else np.outer(valid_h, valid_w)).astype(compute)
    g = _array(grad_output, compute) / divisor
    full_h = max(h + 2 * ph, (oh - 1) * sh + kh)
    full_w = max(w + 2 * pw, (ow - 1) * sw + kw)
    buf = np.zeros(tuple(self._shape[:-2]) + (full_h, full_w), dtype=compute)
    for i in range(kh):
        for j in range(kw):
            buf[..., i:i + sh * oh:sh, j:j + sw * ow:sw] += g
    _write(out, buf[..., ph:ph + h, pw:pw + w])


@meta("_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward_meta(grad_output, self):
    ndim = len(self._shape)
    if ndim not in (3, 4) or len(grad_output._shape) != ndim:
        raise RuntimeError(f"adaptive_avg_pool2d_backward(): Expected 3D or 4D grad_output, but "
                           f"got {_sizes(grad_output._shape)}")
    if grad_output.dtype is not self.dtype:
        raise RuntimeError(f"adaptive_avg_pool2d_backward_out_cpu_template: Expected dtype "
                           f"{dt.type_meta_name(self.dtype)} for `grad_output` but got dtype "
                           f"{dt.type_meta_name(grad_output.dtype)}")
    return TensorMeta(self._shape, self.dtype, _like_memory_format(self))


def _adaptive_matrix(size_in, size_out, compute):
    """(size_out, size_in): row o averages input positions [start(o), end(o))."""
    m = np.zeros((size_out, size_in), dtype=compute)
    for o, (a, b) in enumerate(_adaptive_ranges(size_in, size_out)):
        m[o, a:b] = compute.type(1) / (b - a)
    return m


@impl("_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward_impl(out, grad_output, self):
    """Adaptive average pooling is separable, out = A_h @ x @ A_w^T, so the
    gradient is A_h^T @ g @ A_w."""
    compute = out.dtype.opmath
    h, w = self._shape[-2:]
    oh, ow = grad_output._shape[-2:]
    a_h, a_w = _adaptive_matrix(h, oh, compute), _adaptive_matrix(w, ow, compute)
    _write(out, np.matmul(np.matmul(a_h.T, _array(grad_output, compute)), a_w))


# -- convolution ------------------------------------------------------------------------

def _conv_weight_grad(x, gy, kernel_size, stride, padding, dilation, groups, compute):
    """d<conv(x, w), gy>/dw: every receptive field of x times the output
    gradient there, summed over the batch and the output positions."""
    k = len(kernel_size)
    if any(padding):
        x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    eff = [d * (kk - 1) + 1 for d, kk in zip(dilation, kernel_size)]
    win = sliding_window_view(x, eff, axis=tuple(range(2, 2 + k)))
    out_spatial = gy.shape[2:]
    win = win[(slice(None), slice(None))
              + tuple(slice(None, n * s, s) for n, s in zip(out_spatial, stride))
              + tuple(slice(None, None, d) for d in dilation)]
    cg = x.shape[1] // groups
    og = gy.shape[1] // groups
    grad = np.empty((gy.shape[1], cg) + tuple(kernel_size), dtype=compute)
    batch_and_space = [0] + list(range(2, 2 + k))
    for g in range(groups):
        grad[g * og:(g + 1) * og] = np.tensordot(gy[:, g * og:(g + 1) * og],
                                                 win[:, g * cg:(g + 1) * cg],
                                                 axes=(batch_and_space, batch_and_space))
    return grad


def _conv_backward_specs(grad_output, input, weight, bias_sizes, output_mask):
    strides = None
    if len(input._shape) == 4 and (_is_channels_last(input) or _is_channels_last(weight)):
        strides = channels_last_strides
    out_channels = grad_output._shape[1]
    shapes = (tuple(input._shape), tuple(weight._shape),
              tuple(bias_sizes) if bias_sizes is not None else (out_channels,))
    return [TensorMeta(shape, grad_output.dtype,
                       strides(shape) if strides is not None and i < 2 else None)
            if want else None for i, (shape, want) in enumerate(zip(shapes, output_mask))]


@kernel("convolution_backward")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    """convolution is bilinear in (input, weight): grad_input is the adjoint map
    applied to grad_output (a transposed convolution, or a plain one for a
    transposed forward), grad_weight correlates input with grad_output (their
    roles swap for a transposed forward), grad_bias sums grad_output."""
    for t in (weight, grad_output):
        _check_same_dtype(input, t)
    specs = _conv_backward_specs(grad_output, input, weight, bias_sizes, output_mask)
    if observed() and input.device.type == "cpu":   # ATen's route, op by op
        outs = convolution_backward_route(
            grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
            output_padding, groups, output_mask,
            lambda outs, gy, x, w, s, p, d, op: _convolution_backward_cpu(
                outs, gy, x, w, s, p, d, transposed, op, groups))
        if outs is not None:
            return outs
    outs = _allocate_masked(specs, input.device)
    if input.device.type == "cpu":
        _convolution_backward_cpu(outs, grad_output, input, weight, stride, padding, dilation,
                                  transposed, output_padding, groups)
    return outs


def _convolution_backward_cpu(outs, grad_output, input, weight, stride, padding, dilation,
                              transposed, output_padding, groups):
    grad_input, grad_weight, grad_bias = outs
    k = len(weight._shape) - 2
    stride = _expand_param("stride", stride, k)
    padding = _expand_param("padding", padding, k)
    dilation = _expand_param("dilation", dilation, k)
    compute = grad_output.dtype.opmath
    gy, x, w = (_array(t, compute) for t in (grad_output, input, weight))
    kernel_size = w.shape[2:]
    empty = gy.size == 0 or x.size == 0 or w.size == 0
    if grad_input is not None:
        if empty:
            res = np.zeros(x.shape, dtype=compute)
        elif transposed:    # (output_padding's extra rows/columns reach no input)
            res = _conv_forward(gy, w, stride, padding, dilation, groups, compute)
            res = res[(Ellipsis,) + tuple(slice(0, n) for n in x.shape[2:])]
        else:
            fit = [n - ((m - 1) * s - 2 * p + d * (kk - 1) + 1) for n, m, s, p, d, kk in
                   zip(x.shape[2:], gy.shape[2:], stride, padding, dilation, kernel_size)]
            res = _conv_transposed(gy, w, stride, padding, dilation, fit, groups, compute)
        _write(grad_input, res)
    if grad_weight is not None:
        if empty:
            res = np.zeros(w.shape, dtype=compute)
        elif transposed:
            res = _conv_weight_grad(gy, x, kernel_size, stride, padding, dilation, groups,
                                    compute)
        else:
            res = _conv_weight_grad(x, gy, kernel_size, stride, padding, dilation, groups,
                                    compute)
        _write(grad_weight, res)
    if grad_bias is not None:
        _write(grad_bias, gy.sum(axis=(0,) + tuple(range(2, gy.ndim)), dtype=compute))


# -- normalization ----------------------------------------------------------------------

def _dtype_of(param, input):
    return (param if param is not None else input).dtype


def _normalized_grads(dy, x_hat, gamma, axis):
    """dx * (1 / rstd) for y = x_hat * gamma + beta, x_hat normalized over ``axis``:
    g - mean(g) - x_hat * mean(g * x_hat), with g = dy * gamma."""
    g = dy * gamma if gamma is not None else dy
    return g - g.mean(axis=axis, keepdims=True) - \
        x_hat * (g * x_hat).mean(axis=axis, keepdims=True)


@kernel("native_layer_norm_backward")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    """Over the last D = prod(normalized_shape) elements of each row, with
    x_hat = (x - mean) * rstd:  dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat))
    for g = grad_out * weight;  dweight = sum_rows grad_out * x_hat;
    dbias = sum_rows grad_out.  As ATen's CPU kernel: ``empty`` for each
    wanted output, then its per-thread (dweight, dbias) partial sums buffer
    (``empty``, ``resize_``, ``zero_``), which numpy needs not: dispatched
    only while observed."""
    k = len(normalized_shape)
    param_shape = [int(n) for n in normalized_shape]
    device = input.device
    outs = (inner.empty(input._shape, dtype=input.dtype, device=device) if output_mask[0] else None,
            inner.empty(param_shape, dtype=_dtype_of(weight, input), device=device)
            if output_mask[1] else None,
            inner.empty(param_shape, dtype=_dtype_of(bias, input), device=device)
            if output_mask[2] else None)
    if observed() and device.type == "cpu":
        buffer = inner.empty([0], dtype=input.dtype, device=device)
        if output_mask[1] or output_mask[2]:
            inner.zero_(ops.aten.resize_.default(buffer, [2, 1, math.prod(param_shape)]))
    if input.device.type != "cpu":
        return outs
    if input.numel() == 0:
        for o in outs:
            if o is not None:
                _write(o, 0)
        return outs
    compute = input.dtype.opmath
    rows = math.prod(input._shape[:len(input._shape) - k])
    x = _array(input, compute).reshape(rows, -1)
    dy = _array(grad_out, compute).reshape(rows, -1)
    mu = _array(mean, compute).reshape(rows, 1)
    r = _array(rstd, compute).reshape(rows, 1)
    x_hat = (x - mu) * r
    dx, dw, db = outs
    if dx is not None:
        gamma = _array(weight, compute).reshape(1, -1) if weight is not None else None
        _write(dx, (r * _normalized_grads(dy, x_hat, gamma, 1)).reshape(input._shape))
    if dw is not None:
        _write(dw, (dy * x_hat).sum(axis=0).reshape(param_shape))
    if db is not None:
        _write(db, dy.sum(axis=0).reshape(param_shape))
    return outs


@kernel("native_group_norm_backward")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group,
                               output_mask):
    """Per (sample, group of C/G channels) as layer norm's backward; dweight and
    dbias sum over the batch and the spatial positions of each channel."""
    if weight is not None and weight.numel() != C:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {_sizes(weight._shape)} and normalized_shape = "
                           f"[{C}]")
    strides = _like_memory_format(input)
    specs = [TensorMeta(input._shape, input.dtype, strides) if output_mask[0] else None,
             TensorMeta((C,), _dtype_of(weight, input)) if output_mask[1] else None,
             TensorMeta((C,), _dtype_of(weight, input)) if output_mask[2] else None]
    outs = _allocate_masked(specs, input.device)
    if input.device.type != "cpu":
        return outs
    compute = input.dtype.opmath
    x = _array(input, compute).reshape(N, group, C // group, HxW)
    dy = _array(grad_out, compute).reshape(N, group, C // group, HxW)
    mu = _array(mean, compute).reshape(N, group, 1, 1)
    r = _array(rstd, compute).reshape(N, group, 1, 1)
    x_hat = (x - mu) * r
    dx, dw, db = outs
    if dx is not None:
        gamma = _array(weight, compute).reshape(1, group, C // group, 1) \
            if weight is not None else None
        grads = r * _normalized_grads(dy, x_hat, gamma, (2, 3)) if x.size else x
        _write(dx, grads.reshape(input._shape))
    if dw is not None:
        _write(dw, (dy * x_hat).sum(axis=(0, 3)).reshape(C))
    if db is not None:
        _write(db, dy.sum(axis=(0, 3)).reshape(C))
    return outs


# -- embedding / dropout ----------------------------------------------------------------

@kernel("embedding_dense_backward")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
                             scale_grad_by_freq):
    """Row ``indices[i]`` gets ``grad_output[i]`` added (rows equal to
    ``padding_idx`` get nothing); with ``scale_grad_by_freq`` each contribution
    is divided by how often its index occurs in the batch.  As ATen's CPU
    kernel: ``zeros`` for the result, the gradient made contiguous and viewed
    as (indices, D) rows."""
    if indices.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{indices.dtype._short}Tensor instead (while checking arguments "
                           "for embedding_backward)")
    d = grad_output._shape[-1]
    out = inner.zeros([num_weights, d], dtype=grad_output.dtype, device=grad_output.device)
    if not grad_output._is_contiguous():
        grad_output = inner.contiguous(grad_output)
    grad = inner.view(grad_output, [indices.numel(), d])
    if out.device.type != "cpu":
        return out
    compute = out.dtype.opmath
    idx = indices._np().astype(np.int64).ravel()
    g = _array(grad, compute)
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num_weights)
        g = g / counts[idx][:, None].astype(compute)
    keep = idx != padding_idx
    total = np.zeros(out._shape, dtype=compute)
    np.add.at(total, idx[keep], g[keep])
    _write(out, total)
    return out


@kernel("embedding_backward")
def embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    """embedding's weight gradient: the dense one (glasstorch has no sparse layout)."""
    if sparse:
        raise NotImplementedError("embedding_backward: sparse gradients (sparse=True) are not "
                                  "supported by glasstorch")
    return aten.embedding_dense_backward.default(grad, indices, num_weights, padding_idx,
                                                 scale_grad_by_freq)


@meta("native_dropout_backward")
def native_dropout_backward_meta(grad_output, mask, scale):
    shape = broadcast_shapes(grad_output._shape, mask._shape)
    return TensorMeta(shape, result_type(grad_output, mask),
                      elementwise_strides(shape, [grad_output, mask]))


@impl("native_dropout_backward")
def native_dropout_backward_impl(out, grad_output, mask, scale):
    compute = out.dtype.opmath
    _write(out, _array(grad_output, compute) * _array(mask, compute) * compute.type(scale))


# -- pointwise losses -------------------------------------------------------------------

def _loss_backward_meta(grad_output, self, target, *extra):
    """The gradient has self's shape and dtype; the other operands broadcast to it."""
    shape = tuple(self._shape)
    for t in (target, grad_output, *extra):
        if t is not None and broadcast_shapes(shape, t._shape) != shape:
            raise RuntimeError(f"output with shape {_sizes(shape)} doesn't match the broadcast "
                               f"shape {_sizes(broadcast_shapes(shape, t._shape))}")
    return shape


def _norm(reduction, self, compute):
    return compute.type(1 / self.numel()) if reduction == MEAN and self.numel() else \
        compute.type(1)


@meta("mse_loss_backward")
def mse_loss_backward_meta(grad_output, self, target, reduction):
    return TensorMeta(_loss_backward_meta(grad_output, self, target), self.dtype)


@impl("mse_loss_backward")
def mse_loss_backward_impl(out, grad_output, self, target, reduction):
    """2 (self - target) grad_output, over numel for a mean."""
    compute = out.dtype.opmath
    norm = 2 * _norm(reduction, self, compute)
    diff = _array(self, compute) - _array(target, compute)
    _write(out, norm * diff * _array(grad_output, compute))


@meta("smooth_l1_loss_backward")
def smooth_l1_loss_backward_meta(grad_output, self, target, reduction, beta):
    return TensorMeta(_loss_backward_meta(grad_output, self, target), self.dtype)


@impl("smooth_l1_loss_backward")
def smooth_l1_loss_backward_impl(out, grad_output, self, target, reduction, beta):
    """d = self - target: -1 for d <= -beta, 1 for d >= beta, d / beta between
    (PyTorch tests the bounds in that order, so beta = 0 and d = 0 gives -1)."""
    compute = out.dtype.opmath
    norm = _norm(reduction, self, compute)
    d = _array(self, compute) - _array(target, compute)
    g = np.broadcast_to(_array(grad_output, compute), d.shape) * norm
    b = compute.type(beta)
    with np.errstate(divide="ignore", invalid="ignore"):
        res = np.where(d <= -b, -g, np.where(d >= b, g, d * g / b))
    _write(out, res)


@meta("huber_loss_backward")
def huber_loss_backward_meta(grad_output, self, target, reduction, delta):
    return TensorMeta(_loss_backward_meta(grad_output, self, target), self.dtype)


@impl("huber_loss_backward")
def huber_loss_backward_impl(out, grad_output, self, target, reduction, delta):
    """d = self - target: -delta below -delta, delta above delta, d between."""
    compute = out.dtype.opmath
    norm = _norm(reduction, self, compute)
    d = _array(self, compute) - _array(target, compute)
    g = np.broadcast_to(_array(grad_output, compute), d.shape) * norm
    dl = compute.type(delta)
    _write(out, np.where(d < -dl, -g * dl, np.where(d > dl, g * dl, d * g)))


@meta("binary_cross_entropy_backward")
def binary_cross_entropy_backward_meta(grad_output, self, target, weight=None, reduction=MEAN):
    shape = _loss_backward_meta(grad_output, self, target, weight)
    return TensorMeta(shape, self.dtype, elementwise_strides(shape, [self]))


@impl("binary_cross_entropy_backward")
def binary_cross_entropy_backward_impl(out, grad_output, self, target, weight=None,
                                       reduction=MEAN):
    """grad_output (x - t) / max(x (1 - x), 1e-12), times weight, over numel for
    a mean."""
    compute = out.dtype.opmath
    x, t = _array(self, compute), _array(target, compute)
    res = _array(grad_output, compute) * (x - t) / \
        np.maximum((1 - x) * x, compute.type(1e-12))
    if weight is not None:
        res = res * _array(weight, compute)
    if reduction == MEAN:
        res = res / compute.type(self.numel())
    _write(out, res)


# -- nll_loss ---------------------------------------------------------------------------

def _nll_backward_meta(name, grad_output, self, target, weight, reduction, total_weight,
                       batch_shape):
    if reduction == NONE and len(self._shape) > 1:
        if tuple(grad_output._shape) != tuple(batch_shape):
            raise RuntimeError(f"{name}: Expected a tensor of dimension {len(batch_shape)} and "
                               f"tensor.size[0] == {batch_shape[0]} but got: dimension "
                               f"{len(grad_output._shape)} and tensor.size[0] = "
                               f"{grad_output._shape[0] if grad_output._shape else 1}")
    elif grad_output.numel() != 1:
        raise RuntimeError(f"{name}: Expected a single element grad_output tensor, but got: "
                           f"{_sizes(grad_output._shape)}")
    if total_weight.numel() != 1:
        raise RuntimeError(f"expected total_weight to be a single element tensor, got: "
                           f"{_sizes(total_weight._shape)} ({total_weight.numel()} elements)")
    return TensorMeta(self._shape, self.dtype)


def _nll_backward(out, grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """Only the target class of each position gets a gradient:
    -weight[t] * grad_output (/ total_weight for a mean); ignored positions get 0.
    ATen's kernel clears the gradient first (``zero_``), then scatters into it."""
    inner.zero_(out)
    compute = out.dtype.opmath
    x_shape = self._shape if len(self._shape) > 1 else (1,) + tuple(self._shape)
    t = target._np().astype(np.int64).reshape((x_shape[0],) + tuple(x_shape[2:]))
    ignored = t == ignore_index
    safe_t = np.where(ignored, 0, t)
    w = _array(weight, compute)[safe_t] if weight is not None else np.ones(t.shape, compute)
    g = _array(grad_output, compute)
    with np.errstate(divide="ignore", invalid="ignore"):
        if reduction == MEAN:
            g = g / _array(total_weight, compute)
        values = w * -g.reshape(g.shape if reduction == NONE and len(self._shape) > 1 else ())
    values = np.where(ignored, compute.type(0), values)    # (even when total_weight is 0)
    res = np.zeros(x_shape, dtype=compute)
    np.put_along_axis(res, np.expand_dims(safe_t, 1), np.expand_dims(values, 1), axis=1)
    _write(out, res.reshape(self._shape))


@meta("nll_loss_backward")
def nll_loss_backward_meta(grad_output, self, target, weight, reduction, ignore_index,
                           total_weight):
    if len(self._shape) not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    return _nll_backward_meta("nll_loss_backward", grad_output, self, target, weight, reduction,
                              total_weight, self._shape[:1])


@meta("nll_loss2d_backward")
def nll_loss2d_backward_meta(grad_output, self, target, weight, reduction, ignore_index,
                             total_weight):
    if len(self._shape) != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input "
                           f"of dimension: {len(self._shape)}")
    return _nll_backward_meta("nll_loss2d_backward", grad_output, self, target, weight,
                              reduction, total_weight, target._shape)


impl("nll_loss_backward")(_nll_backward)
impl("nll_loss2d_backward")(_nll_backward)
