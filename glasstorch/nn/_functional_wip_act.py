"""torch.nn.functional's activations, distances, KL divergence and attention (issue 4
"act" fragment, star-imported at the end of functional.py until the lead merges it).

Written as torch/nn/functional.py writes them: same signatures, argument checks and
messages, calling the same aten ops.  Functions that are plain bindings in PyTorch
(``F.logsigmoid`` is ``torch._C._nn.log_sigmoid``, ``F.prelu`` is ``torch.prelu``)
are the registry's bindings here too.

``multi_head_attention_forward`` is the one behind ``nn.MultiheadAttention``:

    q, k, v = in-projections of query, key, value        (one packed matmul for self-attention)
    heads:   (L, N, E) -> (N * H, L, E / H)
    masks:   boolean masks become additive (-inf where True); key_padding_mask merges into
             attn_mask
    need_weights: softmax(q k^T / sqrt(E/H) + mask) by bmm/baddbmm, weights returned
                  (averaged over heads by default)
    else:    scaled_dot_product_attention (the fused CPU kernel where it applies)
    out:     out_proj(concat(heads))
"""
from __future__ import annotations

import math
import warnings

from .._core import dtype as _dt
from .._ops.registry import FUNCTIONS as _F
from .._tensor import Tensor
from . import functional as _functional

_nn = _F["nn"]
_T = _F["torch"]

__all__ = ["logsigmoid", "hardshrink", "tanhshrink", "softsign", "glu", "selu", "selu_",
           "celu", "celu_", "prelu", "threshold_", "normalize", "cosine_similarity",
           "pairwise_distance", "kl_div", "margin_ranking_loss", "hinge_embedding_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
           "multilabel_soft_margin_loss", "scaled_dot_product_attention",
           "multi_head_attention_forward", "_canonical_mask", "_none_or_dtype",
           "_mha_shape_check", "_in_projection_packed", "_in_projection",
           "_check_key_padding_mask"]


# -- activations ---------------------------------------------------------------------------

logsigmoid = _nn["log_sigmoid"]
hardshrink = _T["hardshrink"]
prelu = _T["prelu"]
threshold_ = _T["threshold_"]
selu_ = _T["selu_"]
celu_ = _T["celu_"]


def tanhshrink(input):
    return input - input.tanh()


def softsign(input):
    return input / (input.abs() + 1)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _nn["glu"](input, dim)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _T["selu_"](input) if inplace else _T["selu"](input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _T["celu_"](input, alpha) if inplace else _T["celu"](input, alpha)


# -- distances -------------------------------------------------------------------------------

cosine_similarity = _T["cosine_similarity"]
pairwise_distance = _T["pairwise_distance"]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """input / max(||input||_p, eps) along ``dim``."""
    if out is None:
        denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
        return input / denom
    denom = input.norm(p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
    return _T["div"](input, denom, out=out)


# -- KL divergence ---------------------------------------------------------------------------

def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """'batchmean' sums, then divides by the batch size (the KL divergence's definition);
    'mean' divides by every element and warns about it."""
    if size_average is not None or reduce is not None:
        reduction_enum = _functional._reduction(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the "
                "KL div math definition.'mean' will be changed to behave the same as "
                "'batchmean' in the next major release.", stacklevel=2)
        reduction_enum = _functional._reduction_enum("sum" if reduction == "batchmean"
                                                     else reduction)
    reduced = _T["kl_div"](input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


# -- margin and embedding losses -----------------------------------------------------------

def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    reduction_enum = _functional._reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    return _T["margin_ranking_loss"](input1, input2, target, margin, reduction_enum)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    return _T["hinge_embedding_loss"](input, target, margin,
                                      _functional._reduction(size_average, reduce, reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    return _T["cosine_embedding_loss"](input1, input2, target, margin,
                                       _functional._reduction(size_average, reduce, reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    reduction_enum = _functional._reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _T["triplet_margin_loss"](anchor, positive, negative, margin, p, eps, swap,
                                     reduction_enum)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _functional._legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _T["poisson_nll_loss"](input, target, log_input, full, eps,
                                  _functional._reduction_enum(reduction))


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None, size_average=None,
                                reduce=None, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy with logits per class, averaged over the classes (last dim)."""
    if size_average is not None or reduce is not None:
        reduction = _functional._legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


# -- attention -------------------------------------------------------------------------------

scaled_dot_product_attention = _nn["scaled_dot_product_attention"]


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask becomes an additive float mask of ``target_type`` (-inf where True);
    a float mask is returned as is."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype is not _dt.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=2)
    if not is_float:
        mask = _T["zeros_like"](mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Checks the ranks; True for batched (3-D) input, False for unbatched (2-D)."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    batched = query.dim() == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.dim() != query.dim() or value.dim() != query.dim():
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{query.dim()}-D but found {key.dim()}-D and {value.dim()}-D "
                             "tensors respectively")
    padding_rank = query.dim() - 1
    if key_padding_mask is not None and key_padding_mask.dim() != padding_rank:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{padding_rank}-D but found {key_padding_mask.dim()}-D tensor "
                             "instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.dim()}-D tensor instead")
        if not batched and attn_mask.dim() == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.shape != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
    return batched


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the packed (3E, E) weight: one matmul when q, k, v are the
    same tensor (self-attention), two when only k and v are (encoder-decoder)."""
    linear = _functional.linear
    embed = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            # (..., 3E) -> (3, ..., E), so each projection is contiguous
            proj = proj.unflatten(-1, (3, embed)).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([embed, embed * 2])
        b_q, b_kv = (None, None) if b is None else b.split([embed, embed * 2])
        kv_proj = linear(k, w_kv, b_kv).unflatten(-1, (2, embed)).unsqueeze(0)
        kv_proj = kv_proj.transpose(0, -2).squeeze(-2).contiguous()
        return linear(q, w_q, b_q), kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """Three separate projections (key/value may have their own embedding sizes)."""
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    for what, tensor, expected in (("query weights", w_q, (eq, eq)), ("key weights", w_k, (eq, ek)),
                                   ("value weights", w_v, (eq, ev)), ("query bias", b_q, (eq,)),
                                   ("key bias", b_k, (eq,)), ("value bias", b_v, (eq,))):
        if tensor is not None and tensor.shape != expected:
            raise AssertionError(f"expecting {what} shape of {expected}, but got {tensor.shape}")
    linear = _functional.linear
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _check_key_padding_mask(key_padding_mask, src_len, bsz):
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")


def _attn_mask_3d(attn_mask, tgt_len, src_len, bsz, num_heads):
    """attn_mask as (1 or N * H, L, S)."""
    if attn_mask.dim() == 2:
        if attn_mask.shape != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if attn_mask.shape != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _split_heads(t, length, bsz, num_heads, head_dim):
    """(length, N, E) -> (N * H, length, E / H)."""
    return t.view(length, bsz * num_heads, head_dim).transpose(0, 1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v,
                                 add_zero_attn: bool, dropout_p: float, out_proj_weight,
                                 out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None,
                                 use_separate_proj_weight: bool = False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True,
                                 is_causal: bool = False):
    """Sequence-first (L, N, E) query and (S, N, E) key/value (or unbatched (L, E));
    returns (output, weights or None)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:      # compute batched, with a batch of one
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]

    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None    # sdpa applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False   # merged with key_padding_mask below: no longer causal

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # in-projection
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, weight in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if weight is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        biases = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, *biases)

    if attn_mask is not None:
        attn_mask = _attn_mask_3d(attn_mask, tgt_len, src_len, bsz, num_heads)

    # learned key/value biases appended along the sequence
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _T["cat"]([k, bias_k.repeat(1, bsz, 1)])
        v = _T["cat"]([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _functional.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _functional.pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads, batch first
    q = _split_heads(q, tgt_len, bsz, num_heads, head_dim)
    k = _split_heads(k, k.shape[0], bsz, num_heads, head_dim) if static_k is None else \
        _static(static_k, "static_k", bsz * num_heads, head_dim)
    v = _split_heads(v, v.shape[0], bsz, num_heads, head_dim) if static_v is None else \
        _static(static_v, "static_v", bsz * num_heads, head_dim)

    if add_zero_attn:
        zeros_shape = (bsz * num_heads, 1, head_dim)
        k = _T["cat"]([k, _T["zeros"](zeros_shape, dtype=k.dtype, device=k.device)], dim=1)
        v = _T["cat"]([v, _T["zeros"](zeros_shape, dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = _functional.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _functional.pad(key_padding_mask, (0, 1))
    src_len = k.size(1)

    if key_padding_mask is not None:
        _check_key_padding_mask(key_padding_mask, src_len, bsz)
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        batch_heads, _, head_size = q.shape
        q_scaled = q * math.sqrt(1.0 / float(head_size))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = _T["baddbmm"](attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = _T["bmm"](q_scaled, k.transpose(-2, -1))
        weights = _functional.softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = _functional.dropout(weights, p=dropout_p)
        attn_output = _T["bmm"](weights, v)
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = _functional.linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            attn_output, weights = attn_output.squeeze(1), weights.squeeze(0)
        return attn_output, weights

    # sdpa takes (N, H, L, E / H) and a mask broadcastable to (N, H, L, S)
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    attn_output = _functional.linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None


def _static(t, name, batch_heads, head_dim):
    """A precomputed (N * H, S, E / H) key or value."""
    if t.size(0) != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got {t.size(0)}")
    if t.size(2) != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.size(2)}")
    return t
