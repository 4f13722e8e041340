"""scaled_dot_product_attention (ATen's transformers/attention.cpp, sdp_utils_cpp.h).

    attention(q, k, v) = softmax(q k^T * scale + mask) v,   scale = 1/sqrt(E) by default
    q: (N, ..., Hq, L, E)   k: (N, ..., H, S, E)   v: (N, ..., H, S, Ev)
    mask: broadcast to (N, ..., Hq, L, S)

``scaled_dot_product_attention`` is CompositeImplicitAutograd, as in PyTorch: it
validates its inputs, converts a boolean mask to an additive one (True = attend),
and picks a backend the way PyTorch's CPU build does:

* ``_scaled_dot_product_flash_attention_for_cpu`` (backend 1) for 4-D float inputs
  with no dropout, equal head sizes, matching batch and heads (or grouped heads
  with ``enable_gqa``), non-empty sequences, unit last-dim strides and a 2-D/4-D
  mask that needs no gradient.  One kernel computes the output and the
  row-wise logsumexp; its backward op recomputes the probabilities from them.
* ``_scaled_dot_product_attention_math`` (backend 0) otherwise: the same formula
  as ops (matmul, ``_safe_softmax``, dropout), which autograd differentiates.

Rows whose every score is masked out (-inf) give zeros, in both backends.  The
math backend adds the mask out of place (``add.Tensor``), which is what PyTorch
dispatches whenever a Python dispatch mode watches it.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..._core import dtype as dt
from ..._dispatcher.dispatcher import ops
from ..._tensor import _non_overlapping_and_dense, contiguous_strides
from ..structured import TensorMeta, iterator_strides
from . import impl, kernel, meta
from .pointwise import quiet

__all__ = []

aten = ops.aten

MATH, FLASH = 0, 1          # sdp::SDPBackend
_FLASH_DTYPES = (dt.float32, dt.float64, dt.bfloat16, dt.float16)




def _validate_sdpa_input(query, key, value, attn_mask):
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {dt.type_meta_name(query.dtype)} key.dtype: "
                           f"{dt.type_meta_name(key.dtype)} and value.dtype: {dt.type_meta_name(value.dtype)}"
                           f" instead.")
    if not (query.device == key.device == value.device):
        raise RuntimeError(f"Expected query, key, and value to have the same device type, but "
                           f"got query.device: {query.device} key.device: {key.device} and "
                           f"value.device: {value.device} instead.")
    if min(len(query._shape), len(key._shape), len(value._shape)) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {len(query._shape)} key.dim: {len(key._shape)} "
                           f"and value.dim: {len(value._shape)} instead.")
    if attn_mask is not None and attn_mask.dtype not in (dt.bool_, dt.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {dt.type_meta_name(attn_mask.dtype)} and  "
                           f"query.dtype: {dt.type_meta_name(query.dtype)} instead.")


def _convert_boolean_mask(attn_mask, dtype):
    """A boolean mask (True = take part) becomes 0 / -inf, added to the scores."""
    if attn_mask is None or attn_mask.dtype is not dt.bool_:
        return attn_mask
    neg_inf = aten.scalar_tensor.default(-math.inf, dtype=dtype, device=attn_mask.device)
    return aten.where.ScalarSelf(attn_mask, 0.0, neg_inf)


def _mask_shape_fits(attn_mask, query, key) -> bool:
    """check_attn_mask_shape: 2-D (L|1, S|1) or 4-D (N|1, H|1, L|1, S|1), no gradient."""
    if attn_mask is None:
        return True
    if attn_mask.requires_grad:
        return False
    shape = attn_mask._shape
    if len(shape) not in (2, 4):
        return False
    wanted = (query._shape[0], query._shape[1]) if len(shape) == 4 else ()
    wanted += (query._shape[2], key._shape[2])
    return all(m in (w, 1) for m, w in zip(shape, wanted))


def _flash_supported(query, key, value, attn_mask, dropout_p, enable_gqa) -> bool:
    """use_flash_attention_cpp's gates, in PyTorch's order."""
    if dropout_p > 0.0:
        return False
    if not (len(query._shape) == len(key._shape) == len(value._shape) == 4):
        return False
    if not (query._shape[0] == key._shape[0] == value._shape[0]):
        return False
    q_heads, k_heads, v_heads = query._shape[1], key._shape[1], value._shape[1]
    if enable_gqa:
        if k_heads != v_heads or q_heads % k_heads:
            return False
    elif not (q_heads == k_heads == v_heads):
        return False
    if not _mask_shape_fits(attn_mask, query, key):
        return False
    if not (query._shape[-1] == key._shape[-1] == value._shape[-1]):
        return False
    if query._shape[-2] == 0 or key._shape[-2] == 0:
        return False
    if not (query._stride[-1] == key._stride[-1] == value._stride[-1] == 1):
        return False
    return query.dtype is key.dtype is value.dtype and query.dtype in _FLASH_DTYPES


def _select_backend(query, key, value, attn_mask, dropout_p, enable_gqa) -> int:
    return FLASH if _flash_supported(query, key, value, attn_mask, dropout_p, enable_gqa) \
        else MATH


@kernel("_fused_sdp_choice_cpu")
def fused_sdp_choice_cpu(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *,
                         scale=None, enable_gqa=False):
    return _select_backend(query, key, value, attn_mask, dropout_p, enable_gqa)


@kernel("_fused_sdp_choice_meta")
def fused_sdp_choice_meta(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *,
                          scale=None, enable_gqa=False):
    """Meta tensors take the math backend, as PyTorch's meta kernel answers."""
    return MATH


@kernel("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, *, scale=None, enable_gqa=False):
    """CompositeImplicitAutograd: validate, choose a backend, run it."""
    _validate_sdpa_input(query, key, value, attn_mask)
    if 0 in (query.numel(), key.numel(), value.numel()):
        # zeros that still depend on every input, so backward gives zero gradients
        shape = list(query._shape[:-1]) + [value._shape[-1]]
        out = aten.zeros.default(shape, dtype=query.dtype, device=query.device)
        total = aten.add.Tensor(aten.add.Tensor(aten.sum.default(query), aten.sum.default(key)),
                                aten.sum.default(value))
        return aten.add.Tensor(out, aten.mul.Scalar(total, 0))
    backend = _select_backend(query, key, value, attn_mask, dropout_p, enable_gqa)
    attn_mask = _convert_boolean_mask(attn_mask, query.dtype)
    if backend == FLASH:
        return aten._scaled_dot_product_flash_attention_for_cpu.default(
            query, key, value, dropout_p, is_causal, attn_mask=attn_mask, scale=scale)[0]
    return aten._scaled_dot_product_attention_math.default(
        query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale,
        enable_gqa=enable_gqa)[0]


# -- the math backend ---------------------------------------------------------------------

def _repeat_heads(t, repeats):
    """``t.repeat_interleave(repeats, -3)``: each head repeated ``repeats`` times in place."""
    dim = len(t._shape) - 3
    expanded = list(t._shape)
    expanded.insert(dim + 1, repeats)
    t = aten.expand.default(aten.unsqueeze.default(t, dim + 1), expanded)
    return aten.flatten.using_ints(aten.clone.default(t), dim, dim + 1)


def _grouped_key_value(query, key, value, enable_gqa):
    """pre_process_group_query_attention_input: with enable_gqa, key/value heads are
    repeated to match the query's."""
    if not enable_gqa:
        return key, value
    q_heads, k_heads, v_heads = query._shape[-3], key._shape[-3], value._shape[-3]
    if q_heads == k_heads == v_heads:
        return key, value
    if q_heads % k_heads or q_heads % v_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return _repeat_heads(key, q_heads // k_heads), _repeat_heads(value, q_heads // v_heads)


_warned_dropout_mask = False


@kernel("_scaled_dot_product_attention_math")
def scaled_dot_product_attention_math(query, key, value, attn_mask=None, dropout_p=0.0,
                                      is_causal=False, dropout_mask=None, *, scale=None,
                                      enable_gqa=False):
    """CompositeImplicitAutograd: (output, attention weights).  float16/bfloat16 compute
    in float32; q and k are each scaled by sqrt(scale) before the product."""
    global _warned_dropout_mask
    origin = query.dtype
    query, key, value = (aten.to.dtype(t, dt.float32) if t.dtype in (dt.float16, dt.bfloat16)
                         else t for t in (query, key, value))
    negative = scale is not None and scale < 0
    factor = math.sqrt(abs(scale) if negative else
                       (scale if scale is not None else 1.0 / math.sqrt(query._shape[-1])))
    query = aten.mul.Scalar(query, -factor if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        size = [query._shape[-2], key._shape[-2]]
        causal = aten.tril.default(aten.ones.default(size, dtype=dt.bool_, device=query.device))
        attn_mask = _convert_boolean_mask(causal, query.dtype)
    key, value = _grouped_key_value(query, key, value, enable_gqa)
    attn = aten.matmul.default(query, aten.mul.Scalar(aten.transpose.int(key, -2, -1), factor))
    if attn_mask is not None:
        attn = aten.add.Tensor(attn, attn_mask)
    attn = aten._safe_softmax.default(attn, -1)
    if dropout_p > 0.0:
        if dropout_mask is not None:
            if not _warned_dropout_mask:
                _warned_dropout_mask = True
                warnings.warn("Dropout mask should only be used for testing purposes.")
            attn = aten.masked_fill.Scalar(attn, aten.logical_not.default(dropout_mask), 0.0)
            value = aten.mul.Scalar(value, 1.0 / (1 - dropout_p))
        else:
            attn = aten.dropout.default(attn, dropout_p, True)
    weights = aten.to.dtype(attn, origin)          # (PyTorch evaluates this one first)
    return aten.to.dtype(aten.matmul.default(attn, value), origin), weights


@kernel("_safe_softmax")
def safe_softmax(self, dim, dtype=None):
    """CompositeExplicitAutograd: softmax, with rows that are all -inf giving zeros."""
    out = aten.softmax.int(self, dim, dtype)
    neg_inf = aten.scalar_tensor.default(-math.inf, dtype=out.dtype, device=out.device)
    masked_rows = aten.all.dim(aten.eq.Tensor(self, neg_inf), dim, True)
    zero = aten.scalar_tensor.default(0.0, dtype=out.dtype, device=out.device)
    return aten.where.self(masked_rows, zero, out)


# -- the flash backend: one numpy pass over all heads -------------------------------------
#
#   s = q k^T * scale + mask (+ -inf above the diagonal when causal)
#   lse = logsumexp(s, -1)        out = exp(s - lse) v
#   backward, with p = exp(s - lse) and D = rowsum(dO * out):
#     dv = p^T dO     ds = p * (dO v^T - D)     dq = ds k * scale     dk = ds^T q * scale

def _check_flash(query, key, value, dropout_p, attn_mask):
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention_flash_attention: Expected data type in "
                           f"FP32, FP64, BF16, FP16, but got {query.dtype._short} instead.")
    if not (len(query._shape) == len(key._shape) == len(value._shape) == 4):
        raise RuntimeError("scaled_dot_product_attention_flash_attention: Accept only 4 dims "
                           "inputs shape of {B, H, T, K}")
    if dropout_p != 0.0:
        raise RuntimeError("scaled_dot_product_attention_flash_attention: Currently do not "
                           "support dropout > 0")
    if not (query._shape[3] == value._shape[3] and key._shape[3] == value._shape[3]):
        raise RuntimeError("scaled_dot_product_attention_flash_attention: Q/K/V should have the "
                           "same head size")
    if attn_mask is not None:
        if attn_mask.dtype not in (dt.float32, query.dtype):
            raise RuntimeError("scaled_dot_product_attention_flash_attention: Attention mask is "
                               "the same data type as query")
        if len(attn_mask._shape) not in (2, 4):
            raise RuntimeError("scaled_dot_product_attention_flash_attention: Attention mask dim "
                               "in {2, 4}")
    for t in (key, value):
        if t.dtype is not query.dtype:
            raise RuntimeError(f"expected scalar type {query.dtype._short} but found "
                               f"{t.dtype._short}")


def _like_strides(t):
    """empty_like's strides: kept when dense, else the same dim order made dense."""
    if _non_overlapping_and_dense(t._shape, t._stride):
        return t._stride
    return iterator_strides(t._shape, [t._stride])


def _heads_second(shape):
    """Strides of a (B, H, T, E) tensor laid out as (B, T, H, E)."""
    b, h, t, e = shape
    return (t * h * e, e, h * e, 1)


@meta("_scaled_dot_product_flash_attention_for_cpu")
def flash_attention_meta(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                         scale=None):
    _check_flash(query, key, value, dropout_p, attn_mask)
    b, h, length = query._shape[:3]
    stride = _like_strides(query)
    return (TensorMeta(query._shape, query.dtype,
                       None if stride == contiguous_strides(query._shape) else stride),
            TensorMeta((b, h, length), dt.float64 if query.dtype is dt.float64 else dt.float32,
                       (length * h, 1, h)))


def _flash_scores(query, key, attn_mask, is_causal, scale, compute):
    """The scaled, masked scores (B, H, L, S), with key heads repeated to the query's."""
    q = query._np().astype(compute, copy=False)
    k = key._np().astype(compute, copy=False)
    groups = q.shape[1] // k.shape[1]
    if groups > 1:
        k = np.repeat(k, groups, axis=1)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    scores = np.matmul(q, np.swapaxes(k, -1, -2))
    if is_causal:       # masked before scaling, as PyTorch's kernel does (a negative
        length, source = scores.shape[-2:]          # scale then gives NaN rows there too)
        scores[..., np.triu(np.ones((length, source), dtype=bool), 1)] = -np.inf
    scores *= compute.type(scale)
    if attn_mask is not None:
        scores += attn_mask._np().astype(compute, copy=False)
    return scores, groups, compute.type(scale)


@impl("_scaled_dot_product_flash_attention_for_cpu")
@quiet
def flash_attention_impl(outs, query, key, value, dropout_p=0.0, is_causal=False, *,
                         attn_mask=None, scale=None):
    out, logsumexp = outs
    compute = logsumexp.dtype.numpy
    scores, groups, _ = _flash_scores(query, key, attn_mask, is_causal, scale, compute)
    v = value._np().astype(compute, copy=False)
    if groups > 1:
        v = np.repeat(v, groups, axis=1)
    row_max = scores.max(axis=-1, keepdims=True)
    masked_rows = np.isneginf(row_max)
    row_max[masked_rows] = 0
    probs = np.exp(scores - row_max)
    total = probs.sum(axis=-1, keepdims=True)
    result = np.matmul(probs, v)
    np.divide(result, total, out=result, where=~masked_rows)
    result[np.broadcast_to(masked_rows, result.shape)] = 0
    lse = row_max + np.log(total)
    lse[masked_rows] = 0
    np.copyto(out._np(), result, casting="unsafe")
    np.copyto(logsumexp._np(), lse[..., 0])


@meta("_scaled_dot_product_flash_attention_for_cpu_backward")
def flash_attention_backward_meta(grad_out, query, key, value, out, logsumexp, dropout_p,
                                  is_causal, *, attn_mask=None, scale=None):
    return tuple(TensorMeta(t._shape, t.dtype, _heads_second(t._shape))
                 for t in (query, key, value))


def _sum_groups(grad, heads, shape):
    """Fold a gradient computed per query head back onto the (fewer) key heads, and
    onto a broadcast batch."""
    b, h = grad.shape[:2]
    if h != heads:
        grad = grad.reshape(b, heads, h // heads, *grad.shape[2:]).sum(axis=2)
    if shape[0] != b:
        grad = grad.sum(axis=0, keepdims=True)
    return grad


@impl("_scaled_dot_product_flash_attention_for_cpu_backward")
@quiet
def flash_attention_backward_impl(outs, grad_out, query, key, value, out, logsumexp, dropout_p,
                                  is_causal, *, attn_mask=None, scale=None):
    compute = logsumexp.dtype.numpy
    scores, groups, scale = _flash_scores(query, key, attn_mask, is_causal, scale, compute)
    probs = np.exp(scores - logsumexp._np()[..., None].astype(compute, copy=False))
    q = query._np().astype(compute, copy=False)
    k, v = (t._np().astype(compute, copy=False) for t in (key, value))
    if groups > 1:
        k, v = np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1)
    d_out = grad_out._np().astype(compute, copy=False)
    delta = (d_out * out._np().astype(compute, copy=False)).sum(axis=-1, keepdims=True)
    d_scores = probs * (np.matmul(d_out, np.swapaxes(v, -1, -2)) - delta)
    d_scores *= scale
    grads = (np.matmul(d_scores, k),
             np.matmul(np.swapaxes(d_scores, -1, -2), q),
             np.matmul(np.swapaxes(probs, -1, -2), d_out))
    for target, grad, source in zip(outs, grads, (query, key, value)):
        np.copyto(target._np(), _sum_groups(grad, source._shape[1], source._shape),
                  casting="unsafe")
