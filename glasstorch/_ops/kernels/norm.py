"""Normalization, embedding and dropout (ATen's layer_norm.cpp, group_norm.cpp,
Embedding.cpp, Dropout.cpp).

    native_layer_norm(x, normalized_shape, w, b, eps) -> (out, mean, rstd)
        over the trailing dims D = normalized_shape, for each leading index i:
            mean[i] = avg(x[i, :])       rstd[i] = 1 / sqrt(var[i] + eps)   (biased var)
            out[i]  = (x[i, :] - mean[i]) * rstd[i] * w + b
        mean/rstd keep the leading dims and have size 1 in the normalized dims.
    native_group_norm: the same per (sample, group of C/G channels); mean/rstd (N, G).
    embedding(weight, indices)  out[...] = weight[indices[...]]
    native_dropout(x, p, train) -> (x * mask / (1 - p), mask),  mask ~ Bernoulli(1 - p)

``layer_norm`` / ``group_norm`` / ``dropout`` are CompositeImplicitAutograd.
On CPU PyTorch's ``dropout`` is ``empty_like`` + ``bernoulli_`` + ``div_`` + ``mul``
(the fused ``native_dropout`` is only used on accelerators), and so is ours.
"""
from __future__ import annotations

import math

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..structured import TensorMeta
from . import impl, kernel, meta

aten = ops.aten

_LOW = ("float16", "bfloat16")


def _sizes(shape) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _stats_dtype(input, weight, bias):
    """CPU's mixed-dtype rule: a float16/bfloat16 input may take float32 parameters,
    and then mean/rstd are float32."""
    params = [t for t in (weight, bias) if t is not None]
    if all(p.dtype is input.dtype for p in params):
        return input.dtype
    if input.dtype.name in _LOW and all(p.dtype is dt.float32 for p in params):
        return dt.float32
    if input.dtype.name in _LOW or input.dtype is dt.float32:
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


# -- layer norm ------------------------------------------------------------------------

def _layer_norm_checks(input, normalized_shape, weight, bias):
    normalized_shape = [int(n) for n in normalized_shape]
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


@meta("native_layer_norm")
def native_layer_norm_meta(input, normalized_shape, weight, bias, eps):
    k = _layer_norm_checks(input, normalized_shape, weight, bias)
    stats = _stats_dtype(input, weight, bias)
    lead = tuple(input._shape[:len(input._shape) - k])
    stat_shape = lead + (1,) * k
    return (TensorMeta(input._shape, input.dtype), TensorMeta(stat_shape, stats),
            TensorMeta(stat_shape, stats))


@impl("native_layer_norm")
def native_layer_norm_impl(outs, input, normalized_shape, weight, bias, eps):
    out, mean_out, rstd_out = outs
    k = len(normalized_shape)
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
        rstd = (1.0 / np.sqrt(var + acc(eps))).astype(compute)
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


# -- embedding -------------------------------------------------------------------------

@meta("embedding")
def embedding_meta(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if indices.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{indices.dtype._short}Tensor instead (while checking arguments "
                           "for embedding)")
    if len(weight._shape) != 2:
        raise RuntimeError("'weight' must be 2-D")
    return TensorMeta(tuple(indices._shape) + (weight._shape[1],), weight.dtype)


@impl("embedding")
def embedding_impl(out, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    idx = indices._np()
    num = weight._shape[0]
    if idx.size and (idx.min() < -num or idx.max() >= num or idx.min() < 0):
        raise IndexError("index out of range in self")
    np.take(weight._np(), idx, axis=0, out=out._np())


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


def _dropout_impl(input, p, train, inplace):
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    mul = aten.mul_.Tensor if inplace else aten.mul.Tensor
    if p == 1:
        return mul(input, aten.zeros.default([], dtype=input.dtype, device=input.device))
    noise = aten.empty_like.default(input)
    aten.bernoulli_.float(noise, 1 - p)
    aten.div_.Scalar(noise, 1 - p)
    return mul(input, noise)


@kernel("dropout")
def dropout(input, p, train):
    return _dropout_impl(input, p, train, False)


@kernel("dropout_")
def dropout_(self, p, train):
    return _dropout_impl(self, p, train, True)
