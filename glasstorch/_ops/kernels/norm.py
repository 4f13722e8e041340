"""Normalization, embedding and dropout (ATen's layer_norm.cpp, group_norm.cpp,
Normalization.cpp, Embedding.cpp, Dropout.cpp).

    native_layer_norm(x, normalized_shape, w, b, eps) -> (out, mean, rstd)
        over the trailing dims D = normalized_shape, for each leading index i:
            mean[i] = avg(x[i, :])       rstd[i] = 1 / sqrt(var[i] + eps)   (biased var)
            out[i]  = (x[i, :] - mean[i]) * rstd[i] * w + b
        mean/rstd keep the leading dims and have size 1 in the normalized dims.
    native_group_norm: the same per (sample, group of C/G channels); mean/rstd (N, G).
    native_batch_norm(x, w, b, running_mean, running_var, training, momentum, eps)
        -> (out, save_mean, save_invstd), per channel c = dim 1, over every other dim:
        training: mean/invstd of the batch (biased var); running stats, when given,
                  become momentum * batch + (1 - momentum) * running (unbiased var)
        eval:     the running stats normalize; save_mean/save_invstd are empty
    native_batch_norm_backward: (dx, dweight, dbias) from the saved or running stats
    embedding(weight, indices)  out[...] = weight[indices[...]]
    native_dropout(x, p, train) -> (x * mask / (1 - p), mask),  mask ~ Bernoulli(1 - p)

``layer_norm`` / ``group_norm`` / ``dropout`` (and its feature / alpha variants) / ``batch_norm``
(-> ``_batch_norm_impl_index`` -> ``native_batch_norm``) / ``instance_norm`` /
``rms_norm`` are CompositeImplicitAutograd, calling the ops PyTorch's do.
On CPU PyTorch's ``dropout`` is ``empty_like`` + ``bernoulli_`` + ``div_`` + ``mul``
(the fused ``native_dropout`` is only used on accelerators), and so is ours.

Their backward ops (native_layer_norm_backward, native_group_norm_backward,
embedding_dense_backward, native_dropout_backward) are at the end; those with an
``output_mask`` return None for the outputs not asked for, as PyTorch returns
undefined tensors.
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._core.layout import strided
from ..._dispatcher.dispatcher import ops
from ..._tensor import channels_last_strides
from ..structured import broadcast_shapes, elementwise_strides, result_type, TensorMeta, wrap_dim
from . import impl, kernel, meta, native
from ._common import _allocate_masked, _array, _sizes, _write
from ._inner import inner, observed
from .conv import _is_channels_last, _like_memory_format
from .native import multiply_add
from .view import suggest_memory_format

aten = ops.aten

_LOW = ("float16", "bfloat16")


def _stats_dtype(input, *params):
    """CPU's mixed-dtype rule: a float16/bfloat16 input may take float32 parameters
    (weight, bias, running stats), and then the saved statistics are float32."""
    params = [t for t in params if t is not None]
    if all(p.dtype is input.dtype for p in params):
        return input.dtype
    if input.dtype.name in _LOW and all(p.dtype is dt.float32 for p in params):
        return dt.float32
    if input.dtype.name in _LOW or input.dtype is dt.float32:
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


# -- layer norm ------------------------------------------------------------------------

def _layer_norm_checks(input, normalized_shape, weight, bias):
    normalized_shape = list(normalized_shape)     # (SymInts stay symbolic: no guard)
    if len(normalized_shape) < 1:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{_sizes(normalized_shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t._shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {_sizes(t._shape)} and normalized_shape = "
                               f"{_sizes(normalized_shape)}")
    shape = list(input._shape)
    k = len(normalized_shape)
    if len(shape) < k or shape[-k:] != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={_sizes(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{_sizes(shape)}")
    return k


@kernel("native_layer_norm")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """ATen's layer_norm_cpu: the input made contiguous, ``empty`` for the
    output and for the (M,) mean and rstd, which are then viewed with size 1
    in the normalized dims."""
    k = _layer_norm_checks(input, normalized_shape, weight, bias)
    stats = _stats_dtype(input, weight, bias)
    lead = list(input._shape[:len(input._shape) - k])
    if not input._is_contiguous():
        input = inner.contiguous(input)
    out = inner.empty(input._shape, dtype=input.dtype, device=input.device)
    mean = inner.empty([math.prod(lead)], dtype=stats, device=input.device)
    rstd = inner.empty([math.prod(lead)], dtype=stats, device=input.device)
    outs = out, inner.view(mean, lead + [1] * k), inner.view(rstd, lead + [1] * k)
    if input.device.type == "cpu":
        _layer_norm_fill(outs, input, k, weight, bias, eps)
    return outs


def _layer_norm_fill(outs, input, k, weight, bias, eps):
    """Write native_layer_norm's (out, mean, rstd) for a contiguous input."""
    out, mean_out, rstd_out = outs
    compute = input.dtype.opmath
    x = input._np().astype(compute, copy=False)
    lead = x.shape[:x.ndim - k]
    n = math.prod(x.shape[x.ndim - k:])
    x2 = x.reshape(lead + (n,))
    if x2.size == 0:
        mean = np.zeros(lead + (1,), dtype=compute)
        rstd = np.full(lead + (1,), np.nan, dtype=compute)
    else:
        acc = np.float64 if compute == np.float64 else np.float32
        mean = x2.mean(axis=-1, keepdims=True, dtype=acc)
        centered = x2 - mean
        var = np.mean(np.square(centered), axis=-1, keepdims=True, dtype=acc)
        _constant_rows_exact(x2.reshape(-1, n), mean.reshape(-1), centered.reshape(-1, n),
                             var.reshape(-1))
        rstd = (1.0 / np.sqrt(var + acc(eps))).astype(compute)
        if input.dtype.name in _LOW:    # ATen's float kernel: x * rstd + (-mean * rstd), fused
            y = multiply_add(x2, rstd, -(mean * rstd))
        else:
            y = centered * rstd
        y = y.reshape(x.shape)
        if weight is not None:
            y = y * weight._np().astype(compute, copy=False)
        if bias is not None:
            y = y + bias._np().astype(compute, copy=False)
        np.copyto(out._np(), y, casting="unsafe")
        mean = mean.astype(compute, copy=False)
    stat_shape = mean_out._shape
    np.copyto(mean_out._np(), mean.reshape(stat_shape), casting="unsafe")
    np.copyto(rstd_out._np(), rstd.reshape(stat_shape), casting="unsafe")


def _constant_rows_exact(x, mean, centered, var):
    """Rows of one value get that value as their mean and 0 as their variance,
    as ATen's Welford moments give them (every update adds 0), where numpy's
    sum / n may miss the value by an ulp: noise that 1/sqrt(eps) then makes
    visible (layer_norm of [1.3] * 7 would be -3.8e-05, not 0).  Only rows whose
    variance is within rounding of 0 are looked at.  The arrays are 2-D views:
    written in place."""
    close = np.flatnonzero(var <= np.square(4 * np.spacing(np.abs(mean))))
    if close.size:
        rows = close[(x[close] == x[close, :1]).all(axis=1)]
        mean[rows], var[rows], centered[rows] = x[rows, 0], 0, 0


@kernel("layer_norm")
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return aten.native_layer_norm.default(input, normalized_shape, weight, bias, eps)[0]


# -- group norm ------------------------------------------------------------------------

@meta("native_group_norm")
def native_group_norm_meta(input, weight, bias, N, C, HxW, group, eps):
    if group <= 0 or C % group != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {_sizes(input._shape)} and num_groups={group}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (len(t._shape) != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {_sizes(t._shape)} "
                               f"and input of shape {_sizes(input._shape)}")
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, but got "
                           f"{input.numel()}")
    stats = _stats_dtype(input, weight, bias)
    return (TensorMeta(input._shape, input.dtype), TensorMeta((N, group), stats),
            TensorMeta((N, group), stats))


@impl("native_group_norm")
def native_group_norm_impl(outs, input, weight, bias, N, C, HxW, group, eps):
    out, mean_out, rstd_out = outs
    compute = input.dtype.opmath
    x = input._np().astype(compute, copy=False).reshape(N, group, (C // group) * HxW)
    if x.size == 0:
        np.copyto(mean_out._np(), 0, casting="unsafe")
        np.copyto(rstd_out._np(), np.nan if x.shape[-1] == 0 else 0, casting="unsafe")
        return
    acc = np.float64 if compute == np.float64 else np.float32
    mean = x.mean(axis=-1, keepdims=True, dtype=acc)
    centered = x - mean
    var = np.mean(np.square(centered), axis=-1, keepdims=True, dtype=acc)
    rstd = (1.0 / np.sqrt(var + acc(eps))).astype(compute)
    y = (centered * rstd).reshape(N, C, HxW)
    if weight is not None:
        y = y * weight._np().astype(compute, copy=False)[:, None]
    if bias is not None:
        y = y + bias._np().astype(compute, copy=False)[:, None]
    np.copyto(out._np(), y.reshape(input._shape), casting="unsafe")
    np.copyto(mean_out._np(), mean.reshape(N, group), casting="unsafe")
    np.copyto(rstd_out._np(), rstd.reshape(N, group), casting="unsafe")


@kernel("group_norm")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    shape = input._shape
    if len(shape) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{len(shape)}")
    n, c = shape[0], shape[1]
    if c % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {_sizes(shape)} and num_groups={num_groups}")
    hxw = math.prod(shape[2:])
    if not input.is_contiguous():
        input = aten.contiguous.default(input)
    return aten.native_group_norm.default(input, weight, bias, n, c, hxw, num_groups, eps)[0]


# -- batch norm ------------------------------------------------------------------------

def _channel_shape(ndim):
    """Shape that broadcasts a per-channel (C,) vector against an (N, C, *) input."""
    return (1, -1) + (1,) * (ndim - 2)


def _reduce_axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _float_array(t, compute):
    a = t._np()
    return a if a.dtype == compute else a.astype(compute)


def _invstd(var, eps):
    """1 / sqrt(var + eps), and 0 where both are 0 (PyTorch's InvStd)."""
    with np.errstate(divide="ignore"):
        inv = 1.0 / np.sqrt(var + var.dtype.type(eps))
    return np.where((var == 0) & (eps == 0), var.dtype.type(0), inv)


@meta("native_batch_norm")
def native_batch_norm_meta(input, weight, bias, running_mean, running_var, training, momentum,
                           eps):
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    channels = input._shape[wrap_dim(1, len(input._shape))]
    if input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = "
                           f"{_sizes(input._shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"batch_norm" not implemented for \'{input.dtype._short}\'')
    stats = _stats_dtype(input, weight, bias, running_mean, running_var)
    saved = (channels if training else 0,)
    strides = channels_last_strides(input._shape) if _is_channels_last(input) else None
    return (TensorMeta(input._shape, input.dtype, strides), TensorMeta(saved, stats),
            TensorMeta(saved, stats))


@kernel("native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """ATen's batch_norm_cpu: the output is ``empty_like`` in the input's
    suggested memory format, the saved statistics ``empty``; its statistics
    pass allocates per-channel scratch that numpy needs not (dispatched only
    while observed): 2 tensors in eval; while training 4, or on the
    channels-last kernels (a channels-last input, or a contiguous one whose
    channels are innermost) 2, a zeroed accumulator and a per-thread
    ``zeros`` buffer, then 2 more."""
    _, mean_spec, _ = native_batch_norm_meta(input, weight, bias, running_mean, running_var,
                                             training, momentum, eps)
    device = input.device
    out = inner.empty_like(input, memory_format=suggest_memory_format(input))
    saved = [inner.empty(list(mean_spec.shape), dtype=mean_spec.dtype, device=device)
             for _ in range(2)]
    if observed():
        channels = [input._shape[1]]
        scratch = [inner.empty(channels, dtype=mean_spec.dtype, device=device)
                   for _ in range(2)]
        if training and (_is_channels_last(input) or
                         input._is_contiguous() and input._stride[1] == 1):
            inner.zeros([1] + channels, dtype=mean_spec.dtype, device=device)
            inner.zero_(scratch[1])
        if training:
            scratch += [inner.empty(channels, dtype=mean_spec.dtype, device=device)
                        for _ in range(2)]
    outs = (out, *saved)
    if device.type == "cpu":
        native_batch_norm_impl(outs, input, weight, bias, running_mean, running_var, training,
                               momentum, eps)
    return outs


def _update_running(running, batch_stat, momentum):
    """running <- momentum * batch_stat + (1 - momentum) * running, in place."""
    old = running._np().astype(np.float64)
    np.copyto(running._np(), momentum * batch_stat + (1 - momentum) * old, casting="unsafe")


@impl("native_batch_norm")
def native_batch_norm_impl(outs, input, weight, bias, running_mean, running_var, training,
                           momentum, eps):
    out, save_mean, save_invstd = outs
    compute = input.dtype.opmath
    x = _float_array(input, compute)
    channel = _channel_shape(x.ndim)
    axes = _reduce_axes(x.ndim)
    if training:
        n = x.size // x.shape[1]
        mean = x.mean(axis=axes, dtype=compute)
        centered = x - mean.reshape(channel)
        per_channel = centered.reshape(x.shape[0], x.shape[1], -1)
        var_sum = np.einsum("ncs,ncs->c", per_channel, per_channel)
        # With bfloat16 parameters ATen keeps the mean and the sum of squares in
        # bfloat16 and divides there (float16 keeps them in float, as measured
        # against torch); InvStd then works in double
        stats = save_mean._np().dtype if save_mean.dtype is dt.bfloat16 else compute
        mean, var_sum = mean.astype(stats), var_sum.astype(stats)
        with np.errstate(divide="ignore", invalid="ignore"):
            biased = (var_sum.astype(compute) / compute.type(n)).astype(stats)
            np.copyto(save_mean._np(), mean, casting="unsafe")
            np.copyto(save_invstd._np(), _invstd(biased.astype(np.float64), eps),
                      casting="unsafe")
            if running_mean is not None:
                unbiased = (var_sum.astype(compute) / compute.type(n - 1)).astype(stats)
                _update_running(running_mean, mean.astype(np.float64), momentum)
                _update_running(running_var, unbiased.astype(np.float64), momentum)
        # the output normalizes with the statistics as saved, as ATen reads them back
        mean, invstd = _float_array(save_mean, compute), _float_array(save_invstd, compute)
    else:
        mean = _float_array(running_mean, compute)
        invstd = _invstd(_float_array(running_var, compute), eps)
    # ATen's batch_norm_cpu_collect_linear_and_constant_terms: out = x * alpha + beta
    # with alpha = invstd * w and beta = b - mean * alpha, in the compute type (the
    # multiply-add fused where ATen's build contracts it)
    alpha = invstd if weight is None else invstd * _float_array(weight, compute)
    beta = -(mean * alpha) if bias is None else _float_array(bias, compute) - mean * alpha
    shape = x.shape
    y = native.multiply_add(x, *(np.ascontiguousarray(np.broadcast_to(
        v.reshape(channel), shape)) for v in (alpha, beta)))
    np.copyto(out._np(), y, casting="unsafe")


@kernel("native_batch_norm_backward")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):
    """Per channel, with x_hat = (x - mean) * invstd (saved batch stats when
    ``train``, else the running ones):
        train: dx = invstd * w * (g - mean(g) - x_hat * mean(g * x_hat))
        eval:  dx = invstd * w * g
        dweight = sum(g * x_hat),  dbias = sum(g).
    As ATen's batch_norm_backward_cpu: ``empty_like`` (the input's suggested
    memory format) for dx, ``empty`` for dweight and dbias; its contiguous
    kernel's scratch (an ``empty_like`` of the input) is dispatched only while
    observed.  (The scratch of its channels-last and non-contiguous-gradient
    kernels is not mirrored.)"""
    channels = [input._shape[1]]
    param_dtype = weight.dtype if weight is not None else input.dtype
    device = input.device
    fmt = suggest_memory_format(input)
    outs = (inner.empty_like(input, memory_format=fmt) if output_mask[0] else None,
            inner.empty(channels, dtype=param_dtype, device=device) if output_mask[1] else None,
            inner.empty(channels, dtype=param_dtype, device=device) if output_mask[2] else None)
    if observed() and input._is_contiguous() and grad_out._is_contiguous() and \
            not (_is_channels_last(input) or input._stride[1] == 1):
        inner.empty_like(input, memory_format=fmt)
    if input.device.type != "cpu":
        return outs
    compute = input.dtype.opmath
    x, g = _float_array(input, compute), _float_array(grad_out, compute)
    channel = _channel_shape(x.ndim)
    axes = _reduce_axes(x.ndim)
    if train:
        mean, invstd = _float_array(save_mean, compute), _float_array(save_invstd, compute)
    else:
        mean = _float_array(running_mean, compute)
        invstd = _invstd(_float_array(running_var, compute), eps)
    x_hat = (x - mean.reshape(channel)) * invstd.reshape(channel)
    g_sum = g.sum(axis=axes, dtype=compute)
    g_dot = (g * x_hat).sum(axis=axes, dtype=compute)
    dx, dw, db = outs
    if dx is not None:
        scale = invstd if weight is None else invstd * _float_array(weight, compute)
        if train:
            n = x.size // x.shape[1]
            g = g - (g_sum / n).reshape(channel) - x_hat * (g_dot / n).reshape(channel)
        np.copyto(dx._np(), g * scale.reshape(channel), casting="unsafe")
    if dw is not None:
        np.copyto(dw._np(), g_dot, casting="unsafe")
    if db is not None:
        np.copyto(db._np(), g_sum, casting="unsafe")
    return outs


# -- the export-era batch norm ops (_native_batch_norm_legit, _batch_norm_with_update) ----

def _check_stats_or_training(training, *stats):
    """A call without running statistics must normalize with the batch's (ATen
    reads the missing tensors and crashes; this refuses with _batch_norm_impl_index's
    message instead)."""
    if not training and any(s is None for s in stats):
        raise RuntimeError("running_mean must be defined in evaluation mode")


@kernel("_native_batch_norm_legit")
def _native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum,
                             eps):
    """ATen's _batch_norm_legit_cpu: native_batch_norm with running statistics that
    are always given (updated in place while training)."""
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                             eps)


@kernel("_native_batch_norm_legit.no_stats")
def _native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    """_native_batch_norm_legit without running statistics: the batch's own."""
    _check_stats_or_training(training, None)
    return native_batch_norm(input, weight, bias, None, None, training, momentum, eps)


@kernel("_native_batch_norm_legit.out")
def _native_batch_norm_legit_out(input, weight, bias, running_mean, running_var, training,
                                 momentum, eps, *, out, save_mean, save_invstd):
    """ATen's _batch_norm_legit_cpu_out: native_batch_norm into the given tensors."""
    return aten.native_batch_norm.out(input, weight, bias, running_mean, running_var, training,
                                      momentum, eps, out=out, save_mean=save_mean,
                                      save_invstd=save_invstd)


@kernel("_native_batch_norm_legit.no_stats_out")
def _native_batch_norm_legit_no_stats_out(input, weight, bias, training, momentum, eps, *, out,
                                          save_mean, save_invstd):
    _check_stats_or_training(training, None)
    return aten.native_batch_norm.out(input, weight, bias, None, None, training, momentum, eps,
                                      out=out, save_mean=save_mean, save_invstd=save_invstd)


@kernel("_native_batch_norm_legit_no_training")
def _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var,
                                         momentum, eps):
    """CompositeExplicitAutograd: _native_batch_norm_legit in eval mode."""
    return aten._native_batch_norm_legit.default(input, weight, bias, running_mean, running_var,
                                                 False, momentum, eps)


def _reserve(input):
    """The (0,) uint8 workspace the native backend returns where cuDNN keeps one."""
    return aten.empty.memory_format([0], dtype=dt.uint8, layout=strided, device=input.device)


@kernel("_batch_norm_with_update")
def _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """ATen's _batch_norm_with_update_cpu: a training step of batch norm that
    updates the running statistics in place; the fourth output is the (empty)
    reserve that batch_norm_backward takes."""
    outs = native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    return (*outs, _reserve(input))


@kernel("_batch_norm_with_update.out")
def _batch_norm_with_update_out(input, weight, bias, running_mean, running_var, momentum, eps, *,
                                out, save_mean, save_invstd, reserve):
    """_batch_norm_with_update into the given tensors (``reserve`` left as it is)."""
    aten.native_batch_norm.out(input, weight, bias, running_mean, running_var, True, momentum,
                               eps, out=out, save_mean=save_mean, save_invstd=save_invstd)
    return out, save_mean, save_invstd, reserve


@kernel("_batch_norm_no_update")
def _batch_norm_no_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """CompositeExplicitAutograd: batch norm that leaves the running statistics
    alone (eval with them, the batch's own when there are none)."""
    training = running_mean is None or running_var is None
    outs = aten.native_batch_norm.default(input, weight, bias, running_mean, running_var,
                                          training, momentum, eps)
    return (*outs, _reserve(input))


@kernel("batch_norm_backward")
def batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_var,
                        update, eps, output_mask, reserve):
    """The backward of _batch_norm_with_update / _batch_norm_no_update (ATen's
    _new_batch_norm_backward_cpu): native_batch_norm_backward, the batch's
    statistics used when the forward updated the running ones."""
    return native_batch_norm_backward(grad_out, input, weight, running_mean, running_var,
                                      save_mean, save_var, update, eps, output_mask)


def _check_features(name, expected, t):
    if t is not None and t.numel() != expected:
        raise RuntimeError(f"{name} should contain {expected} elements not {t.numel()}")


@kernel("_batch_norm_impl_index")
def _batch_norm_impl_index(input, weight, bias, running_mean, running_var, training, momentum,
                           eps, cudnn_enabled):
    """The native backend (index 0): ATen picks cuDNN/MIOpen here on GPUs only."""
    channels = input._shape[wrap_dim(1, len(input._shape))]
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        _check_features(name, channels, t)
        if t is None and not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    _check_features("weight", channels, weight)
    _check_features("bias", channels, bias)
    reserve = _reserve(input)
    out, save_mean, save_invstd = aten.native_batch_norm.default(
        input, weight, bias, running_mean, running_var, training, momentum, eps)
    return out, save_mean, save_invstd, reserve, 0


@kernel("batch_norm")
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    if input.numel() == 0:      # a copy, not a view, so the graph still reaches the params
        out = aten.clone.default(input)
        if weight is not None:
            out = aten.mul.Tensor(out, aten.select.int(weight, 0, 0))
        if bias is not None:
            out = aten.add.Tensor(out, aten.select.int(bias, 0, 0))
        return out
    return aten._batch_norm_impl_index.default(input, weight, bias, running_mean, running_var,
                                               training, momentum, eps, cudnn_enabled)[0]


@kernel("instance_norm")
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    """Batch norm of the (1, N * C, *) view: every (sample, channel) is its own
    channel; the running stats (repeated per sample) are averaged back."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    n, c = input._shape[0], input._shape[1]
    repeated = [aten.repeat.default(t, [n]) if t is not None else None
                for t in (weight, bias, running_mean, running_var)]
    shape = [1, n * c] + list(input._shape[2:])
    out = aten.batch_norm.default(aten.view.default(aten.contiguous.default(input), shape),
                                  *repeated, use_input_stats, momentum, eps, cudnn_enabled)
    for running, updated in ((running_mean, repeated[2]), (running_var, repeated[3])):
        if running is not None:
            aten.copy_.default(aten.alias.default(running),
                               aten.mean.dim(aten.view.default(updated, [n, c]), [0]))
    return aten.view.default(out, list(input._shape))


# -- rms norm --------------------------------------------------------------------------

@kernel("rms_norm")
def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x * rsqrt(mean(x**2 over the normalized dims) + eps) [* weight], computed in
    float32 for float16/bfloat16 inputs; eps defaults to the compute type's
    machine epsilon (its real type's, for complex inputs, whose x**2 is complex)."""
    normalized = [int(n) for n in normalized_shape]
    if len(normalized) < 1:
        raise RuntimeError(f"Expected normalized_shape to be at least 1-dimensional, i.e., "
                           f"containing at least one element, but got normalized_shape = "
                           f"{_sizes(normalized)}")
    if weight is not None and list(weight._shape) != normalized:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {_sizes(weight._shape)} and normalized_shape = "
                           f"{_sizes(normalized)}")
    shape = list(input._shape)
    k = len(normalized)
    if len(shape) < k or shape[len(shape) - k:] != normalized:
        raise RuntimeError(f"Given normalized_shape={_sizes(normalized)}, expected input with "
                           f"shape [*{', '.join(map(str, normalized))}], but got input of "
                           f"size{_sizes(shape)}")
    if input.dtype.category < dt.FLOATING:
        raise NotImplementedError(f'"rms_norm" not implemented for \'{input.dtype._short}\'')
    compute = dt.float32 if input.dtype.name in _LOW else input.dtype
    x = input if compute is input.dtype else aten._to_copy.default(input, dtype=compute)
    if eps is None:
        eps = float(np.finfo(compute.numpy).eps)
    dims = [len(shape) - 1 - i for i in range(k)]
    ms = aten.mean.dim(aten.pow.Tensor_Scalar(x, 2), dims, True)
    result = aten.mul.Tensor(x, aten.rsqrt.default(aten.add_.Scalar(ms, eps)))
    if weight is not None:
        result = aten.mul.Tensor(result, weight)
    if result.dtype is not input.dtype:
        result = aten._to_copy.default(result, dtype=input.dtype, layout=input.layout,
                                       device=input.device)
    return result


# -- embedding -------------------------------------------------------------------------

@kernel("embedding")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """ATen's embedding: rows of ``weight`` picked by ``index_select`` over the
    flattened indices (``reshape``), then viewed to indices' shape + (D,)."""
    if indices.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{indices.dtype._short}Tensor instead (while checking arguments "
                           "for embedding)")
    if len(weight._shape) != 2:
        raise RuntimeError("'weight' must be 2-D")
    if len(indices._shape) == 1:
        return inner.index_select(weight, 0, indices)
    rows = inner.index_select(weight, 0, inner.reshape(indices, [-1]))
    return inner.view(rows, list(indices._shape) + [weight._shape[1]])


# -- dropout ---------------------------------------------------------------------------

_rng = np.random.default_rng()


def _bernoulli_mask(shape, keep):
    """A Bernoulli(keep) mask drawn from glasstorch's default generator (so
    ``manual_seed`` makes it reproducible), as ``bernoulli_.float`` draws."""
    try:
        from .random import _uniform_double, get_generator
    except ImportError:                     # no random kernels: an unseeded numpy stream
        return _rng.random(shape) < keep
    gen = get_generator(None)
    n = int(np.prod(shape))
    with gen._lock:
        return (np.asarray(_uniform_double(gen, n)) < keep).reshape(shape)


@meta("native_dropout")
def native_dropout_meta(input, p, train):
    return (TensorMeta(input._shape, input.dtype), TensorMeta(input._shape, dt.bool_))


@impl("native_dropout")
def native_dropout_impl(outs, input, p, train):
    out, mask_out = outs
    x = input._np()
    if train is None or train:
        if not 0 <= p <= 1:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        keep = 1.0 - p
        mask = _bernoulli_mask(x.shape, keep)
        compute = input.dtype.opmath
        scale = compute.type(0.0 if keep == 0 else 1.0 / keep)
        np.copyto(out._np(), np.multiply(x, mask, dtype=compute) * scale, casting="unsafe")
        np.copyto(mask_out._np(), mask)
    else:
        np.copyto(out._np(), x)
        mask_out._np()[...] = True


_ALPHA = 1.7580993408473766    # SELU's -scale * alpha: the value alpha dropout drops to


def _dropout_impl(input, p, train, inplace, feature=False, alpha=False):
    """ATen's _dropout_impl: multiply by Bernoulli(1 - p) noise scaled by 1 / (1 - p)
    (per (sample, channel) for feature dropout).  Alpha dropout instead keeps
    SELU's mean and variance: x * a * noise + b, with dropped units at -alpha."""
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    mul = aten.mul_.Tensor if inplace else aten.mul.Tensor
    if p == 1:
        return mul(input, aten.zeros.default([], dtype=input.dtype, layout=input.layout,
                                             device=input.device))
    if feature:
        if len(input._shape) < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        noise = aten.new_empty.default(input, list(input._shape[:2]) +
                                       [1] * (len(input._shape) - 2))
    else:
        noise = aten.empty_like.default(input)
    aten.bernoulli_.float(noise, 1 - p)
    if not alpha:
        aten.div_.Scalar(noise, 1 - p)
        return mul(input, noise)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = aten.add_.Scalar(aten.mul_.Scalar(aten.add.Scalar(noise, -1), _ALPHA * a),
                             _ALPHA * a * p)
    aten.mul_.Scalar(noise, a)
    return aten.add_.Tensor(mul(input, noise), shift)


def _dropout_kernels(name, **kind):
    kernel(name)(lambda input, p, train: _dropout_impl(input, p, train, False, **kind))
    kernel(f"{name}_")(lambda self, p, train: _dropout_impl(self, p, train, True, **kind))


_dropout_kernels("dropout")
_dropout_kernels("feature_dropout", feature=True)
_dropout_kernels("alpha_dropout", alpha=True)
_dropout_kernels("feature_alpha_dropout", feature=True, alpha=True)


# -- embedding max_norm ---------------------------------------------------------------------

@kernel("embedding_renorm_")
def embedding_renorm_(self, indices, max_norm, norm_type):
    """Rows of ``self`` named in ``indices`` whose norm exceeds max_norm are scaled
    (in place) to norm max_norm / (norm + 1e-7) * norm."""
    if indices.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{indices.dtype._short}Tensor instead (while checking arguments "
                           "for embedding_renorm_)")
    if len(self._shape) != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {len(self._shape)}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "embedding_renorm_)")
    if self.device.type != "cpu":
        return self
    rows = np.unique(indices._np())
    num = self._shape[0]
    bad = rows[(rows < -num) | (rows >= num)]
    if bad.size:
        raise IndexError(f"select(): index {bad[0]} out of range for tensor of size "
                         f"{_sizes(self._shape)} at dimension 0")
    weight = self._np()
    compute = self.dtype.opmath
    picked = weight[rows].astype(compute)
    # row.norm() comes back in the weight's dtype and is read as a double; ``row *=
    # scale`` casts the double scale to the weight's dtype before multiplying
    norms = np.linalg.norm(picked, ord=norm_type, axis=1).astype(weight.dtype).astype(np.float64)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1).astype(weight.dtype) \
        .astype(compute)
    weight[rows] = (picked * scale[:, None]).astype(weight.dtype)
    return self


# -- backward ops of normalization, embedding and dropout ----------------------------------

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
    """embedding's weight gradient: a sparse COO one for ``sparse=True``, else dense."""
    if sparse:
        return aten.embedding_sparse_backward.default(grad, indices, num_weights, padding_idx,
                                                      scale_grad_by_freq)
    return aten.embedding_dense_backward.default(grad, indices, num_weights, padding_idx,
                                                 scale_grad_by_freq)


@meta("native_dropout_backward")
def native_dropout_backward_meta(grad_output, mask, scale):
    """ATen's ``grad_output * mask * scale``: the float scale makes an integer or
    bool product the default float dtype."""
    shape = broadcast_shapes(grad_output._shape, mask._shape)
    product = result_type(grad_output, mask)
    dtype = product if product.category >= dt.FLOATING else dt.get_default_dtype()
    return TensorMeta(shape, dtype, elementwise_strides(shape, [grad_output, mask]))


@impl("native_dropout_backward")
def native_dropout_backward_impl(out, grad_output, mask, scale):
    compute = out.dtype.opmath
    product = _array(grad_output, compute) * _array(mask, compute)
    _write(out, product * compute.type(scale))


# -- weight normalization (WeightNorm.cpp) --------------------------------------------------

@kernel("norm_except_dim")
def norm_except_dim(v, pow=2, dim=0):
    """CompositeImplicitAutograd: the ``pow``-norm of each slice of ``v`` along
    ``dim``, shaped to broadcast against ``v`` (of all of ``v`` for dim -1)."""
    if dim == -1:
        return aten.norm.Scalar(v, pow)
    if dim == 0:
        shape = [v.size(0)] + [1] * (v.dim() - 1)
        rows = aten.view.default(aten.contiguous.default(v), [v.size(0), -1])
        return aten.view.default(aten.norm.ScalarOpt_dim(rows, pow, [1]), shape)
    if dim == v.dim() - 1:
        shape = [1] * (v.dim() - 1) + [v.size(-1)]
        columns = aten.view.default(aten.contiguous.default(v), [-1, v.size(-1)])
        return aten.view.default(aten.norm.ScalarOpt_dim(columns, pow, [0]), shape)
    moved = aten.norm_except_dim.default(aten.transpose.int(v, 0, dim), pow, 0)
    return aten.transpose.int(moved, 0, dim)


@kernel("_weight_norm")
def weight_norm(v, g, dim=0):
    """CompositeImplicitAutograd: ``v * (g / ||v||)`` per slice along ``dim``; the
    fused ``_weight_norm_interface`` for the first or last dim."""
    if v.device != g.device:
        raise RuntimeError("weight_norm: expected v_in and g_in to be on the same device, but "
                           f"v_in is on {v.device} and g_in is on {g.device}")
    v, g = aten.contiguous.default(v), aten.contiguous.default(g)
    if dim in (0, v.dim() - 1):
        return aten._weight_norm_interface.default(v, g, dim)[0]
    return aten.mul.Tensor(v, aten.div.Tensor(g, aten.norm_except_dim.default(v, 2, dim)))


def _slices(array, dim):
    """The array as (slices, elements per slice): rows for dim 0, columns otherwise."""
    return array.reshape(array.shape[0], -1) if dim == 0 else \
        array.reshape(-1, array.shape[-1]).T


@kernel("_weight_norm_interface")
def weight_norm_interface(v, g, dim=0):
    """weight_norm_cpu: ``w = v * g / norm`` with the 2-norm of each slice of ``v``
    along ``dim`` (0 or last); the norms come back shaped like ``g`` (float for a
    float16 or bfloat16 ``g``), computed in the accumulation type."""
    if v.dtype.category != dt.FLOATING:
        raise NotImplementedError(f'"weight_norm_kernel" not implemented for \'{v.dtype._short}\'')
    if g.dtype is not v.dtype:
        raise RuntimeError(f"expected scalar type {v.dtype._short} but found {g.dtype._short}")
    norm_dtype = dt.float32 if g.dtype in (dt.bfloat16, dt.float16) else g.dtype
    w = aten.empty.memory_format(list(v._shape), dtype=v.dtype, device=v.device)
    norms = aten.empty_strided.default(list(g._shape), list(g._stride), dtype=norm_dtype,
                                       device=g.device)
    if v.device.type == "meta":
        return w, norms
    compute = v.dtype.opmath
    slices = _slices(_array(v, compute), dim)
    n = np.sqrt(np.einsum("ij,ij->i", slices, slices))
    scale = _array(g, compute).reshape(-1) / n
    out = slices * scale[:, None]
    _write(w, (out if dim == 0 else out.T).reshape(v._shape))
    _write(norms, n.reshape(g._shape))
    return w, norms


@kernel("_weight_norm_interface_backward")
def weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    """weight_norm_backward_cpu: per slice, with ``s = sum(grad_w * v)``:
    ``grad_g = s / norm`` and ``grad_v = g / norm * (grad_w - v * s / norm**2)``."""
    for t, name in ((saved_v, "saved_v"), (saved_g, "saved_g"), (saved_norms, "saved_norm")):
        if not t.is_contiguous():
            raise RuntimeError(f"{name} must be contiguous")
    if dim not in (0, saved_v.dim() - 1):
        raise RuntimeError("fused kernels can only be applied for first or last dim")
    for t in (grad_w, saved_g):
        if t.dtype is not saved_v.dtype:
            raise RuntimeError(f"expected scalar type {saved_v.dtype._short} but found "
                               f"{t.dtype._short}")
    grad_v = aten.empty.memory_format(list(saved_v._shape), dtype=saved_v.dtype,
                                      device=saved_v.device)
    grad_g = aten.empty.memory_format(list(saved_g._shape), dtype=saved_g.dtype,
                                      device=saved_g.device)
    if saved_v.device.type == "meta":
        return grad_v, grad_g
    compute = saved_v.dtype.opmath
    v = _slices(_array(saved_v, compute), dim)
    gw = _slices(_array(grad_w, compute), dim)
    norms = _array(saved_norms, compute).reshape(-1)
    g = _array(saved_g, compute).reshape(-1)
    sums = np.einsum("ij,ij->i", gw, v)
    gv = (g / norms)[:, None] * (gw - v * (sums / (norms * norms))[:, None])
    _write(grad_v, (gv if dim == 0 else gv.T).reshape(saved_v._shape))
    _write(grad_g, (sums / norms).reshape(saved_g._shape))
    return grad_v, grad_g


@kernel("_weight_norm_differentiable_backward")
def weight_norm_differentiable_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    """CompositeImplicitAutograd: weight_norm_interface_backward's gradients from
    differentiable ops (what a backward that builds a graph calls)."""
    for t, name in ((saved_v, "saved_v"), (saved_g, "saved_g"), (saved_norms, "saved_norms")):
        if not t.is_contiguous():
            raise RuntimeError(f"{name} must be contiguous")
    last = saved_v.dim() - 1
    if dim not in (0, last):
        raise RuntimeError("Expected dim to be the first or last dimension")
    norms = aten._to_copy.default(saved_norms, dtype=saved_g.dtype) \
        if saved_norms.dtype is not saved_g.dtype else saved_norms
    shape = [1] * saved_v.dim()
    shape[dim] = saved_v.size(dim)
    products = aten.mul.Tensor(grad_w, saved_v)
    if dim == 0:
        sums = aten.sum.dim_IntList(aten.view.default(products, [saved_v.size(0), -1]), [1])
    else:
        sums = aten.sum.dim_IntList(aten.view.default(products, [-1, saved_v.size(last)]), [0])
    sums = aten.view.default(sums, shape)
    grad_v = aten.mul.Tensor(aten.div.Tensor(saved_g, norms), aten.sub.Tensor(
        grad_w, aten.mul.Tensor(saved_v, aten.div.Tensor(sums, aten.mul.Tensor(norms, norms)))))
    return grad_v, aten.div.Tensor(sums, norms)
