"""Batch norm and group norm (BatchRulesNorm.cpp): the vmap batch folds into
the channels, as a batched weight does in a convolution (``conv.py``):

    activation  (B, N, C, ...)  ->  (N, B*C, ...)
    per channel (B, C)          ->  (B*C,)           weight, bias, running stats
    per group   (B, N, G)       ->  (N, B*G)         group norm's mean and rstd

A channel of the folded tensor holds one example's channel only (and a group
one example's group), so each example is normalised on its own statistics,
and the per-channel gradients of the backward come out per example.  Unbatched
per-channel tensors are repeated for every example.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from . import batch_size_of, register, to_front, unwrap, wrap
from .conv import _channels_folded, _channels_unfolded

aten = ops.aten

_UNBATCHED_RUNNING_STATS = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will be "
    "updated in place, were not batched.\nIf you are using a module and do not need eval mode, please "
    "set `track_running_stats` to be False.If you are using a prebuilt module and do not need eval "
    "mode, please see the functorch website for resources on how to patch your module to work with "
    "vmap")


def _activation(tensor, level, size):
    """(N, B*C, ...) of a logical (N, C, ...) tensor."""
    return _channels_folded(*unwrap(tensor, level), size, True)


def _per_channel(tensor, level, size):
    """(B*C,) of a logical (C,) tensor (None stays None)."""
    return None if tensor is None else to_front(*unwrap(tensor, level), size).flatten()


def _per_example(tensor, level, size):
    """(B*C,) back to (B, C), batched (an empty save_mean of eval mode stays empty)."""
    return None if tensor is None else wrap(tensor.reshape(size, tensor.shape[0] // size), level)


@register(aten.native_batch_norm.default)
def _batch_norm(op, level, values):
    """One batch norm over the channel-folded input.  In training the running
    stats are updated in place, so they must be batched too (PyTorch's error
    otherwise); a folded copy of them is written back."""
    x, weight, bias, running_mean, running_var, training = values[:6]
    stats = [s for s in (running_mean, running_var) if s is not None]
    if training and unwrap(x, level)[1] is not None and any(unwrap(s, level)[1] is None for s in stats):
        raise RuntimeError(_UNBATCHED_RUNNING_STATS)
    size = batch_size_of(level)
    folded = [_per_channel(t, level, size) for t in (weight, bias, running_mean, running_var)]
    out, save_mean, save_invstd = op(_activation(x, level, size), *folded, *values[5:])
    if training:
        for stat, copy in zip((running_mean, running_var), folded[2:]):
            physical = None if stat is None else to_front(*unwrap(stat, level))
            if physical is not None and not physical.is_contiguous():   # flatten copied it
                physical.copy_(copy.view(physical.shape))
    return (wrap(_channels_unfolded(out, size, True), level),
            _per_example(save_mean, level, size), _per_example(save_invstd, level, size))


@register(aten.native_batch_norm_backward.default)
def _batch_norm_backward(op, level, values):
    """The backward of the folded batch norm: the weight's and bias's (B*C,)
    gradients are each example's own."""
    grad, x, *per_channel = values[:7]
    size = batch_size_of(level)
    grad_x, grad_w, grad_b = op(_activation(grad, level, size), _activation(x, level, size),
                                *(_per_channel(t, level, size) for t in per_channel), *values[7:])
    return (None if grad_x is None else wrap(_channels_unfolded(grad_x, size, True), level),
            _per_example(grad_w, level, size), _per_example(grad_b, level, size))


def _groups(tensor, level, size):
    """(N, B*G) of a logical (N, G) mean or rstd."""
    return _channels_folded(*unwrap(tensor, level), size, True)


@register(aten.native_group_norm.default)
def _group_norm(op, level, values):
    """One group norm over the channel-folded input with B times the groups
    (C/G channels each, so no group spans two examples)."""
    x, weight, bias, n, c, hxw, group, eps = values
    size = batch_size_of(level)
    out, mean, rstd = op(_activation(x, level, size), _per_channel(weight, level, size),
                         _per_channel(bias, level, size), n, size * c, hxw, size * group, eps)
    return tuple(wrap(_channels_unfolded(t, size, True), level) for t in (out, mean, rstd))


@register(aten.native_group_norm_backward.default)
def _group_norm_backward(op, level, values):
    """The backward of the folded group norm; per-example weight and bias gradients."""
    grad, x, mean, rstd, weight, n, c, hxw, group, mask = values
    size = batch_size_of(level)
    grad_x, grad_w, grad_b = op(
        _activation(grad, level, size), _activation(x, level, size), _groups(mean, level, size),
        _groups(rstd, level, size), _per_channel(weight, level, size), n, size * c, hxw,
        size * group, mask)
    return (None if grad_x is None else wrap(_channels_unfolded(grad_x, size, True), level),
            _per_example(grad_w, level, size), _per_example(grad_b, level, size))
