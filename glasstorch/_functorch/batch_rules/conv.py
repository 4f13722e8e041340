"""Convolution (BatchRulesModules.cpp): one convolution for the whole batch.

    only the input batched     the examples are more images: B folds into N
                               (B, N, C, H, W) -> (B*N, C, H, W)
    the weight batched         B folds into the groups: each example's
                               weight is one more set of groups, seeing its
                               own copy of the input's channels
                               input (N, B*C, H, W), weight (B*O, C/g, kh, kw),
                               groups B*g, output (N, B*O, ...) -> (N, B, O, ...)

A logical input without N (an unbatched example, (C, H, W)) gets N = 1.  The
backward always takes the group form: it gives the per-example gradients of
the weight that per-sample gradients need.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from . import batch_size_of, batched_again, logical_rank, register, to_front, unwrap, wrap

aten = ops.aten


def _has_n(x, x_bdim, weight, w_bdim) -> bool:
    return logical_rank(x, x_bdim) == logical_rank(weight, w_bdim)


def _channels_folded(tensor, bdim, size, has_n):
    """(N, B*C, ...) from a batched (or expanded) activation of logical (N, C, ...) or (C, ...)."""
    tensor = to_front(tensor, bdim, size)
    if not has_n:
        tensor = tensor.unsqueeze(1)
    tensor = tensor.movedim(0, 1)
    return tensor.reshape(tensor.shape[0], -1, *tensor.shape[3:])


def _channels_unfolded(tensor, size, has_n):
    """(N, B*C, ...) back to a batch-first (B, [N,] C, ...)."""
    tensor = tensor.reshape(tensor.shape[0], size, -1, *tensor.shape[2:]).movedim(1, 0)
    return tensor if has_n else tensor.squeeze(1)


def _groups_folded(weight, w_bdim, size):
    return to_front(weight, w_bdim, size).flatten(0, 1)


@register(aten.convolution.default)
def _convolution(op, level, values):
    (x, x_bdim), (weight, w_bdim) = unwrap(values[0], level), unwrap(values[1], level)
    bias, b_bdim = unwrap(values[2], level)
    has_n = _has_n(x, x_bdim, weight, w_bdim)
    if w_bdim is None:
        x = to_front(x, x_bdim)
        folded = x.flatten(0, 1) if has_n else x
        out = op(folded, weight, bias if b_bdim is None else None, *values[3:])
        out = out.unflatten(0, x.shape[:2]) if has_n else out
        if b_bdim is None:
            return wrap(out, level)
        with batched_again():                      # a batched bias: added per example
            out = wrap(out, level)
            return out + values[2].reshape(values[2].shape + (1,) * (out.dim() - 1 - has_n))
    size = batch_size_of(level)
    groups = values[8]
    out = op(_channels_folded(x, x_bdim, size, has_n), _groups_folded(weight, w_bdim, size),
             None if bias is None else to_front(bias, b_bdim, size).flatten(),
             *values[3:8], groups * size)
    return wrap(_channels_unfolded(out, size, has_n), level)


@register(aten.convolution_backward.default)
def _convolution_backward(op, level, values):
    """The gradients of the group-folded convolution, unfolded."""
    (grad, g_bdim), (x, x_bdim) = unwrap(values[0], level), unwrap(values[1], level)
    weight, w_bdim = unwrap(values[2], level)
    size = batch_size_of(level)
    has_n = _has_n(x, x_bdim, weight, w_bdim)
    bias_sizes = values[3]
    grad_x, grad_w, grad_b = op(
        _channels_folded(grad, g_bdim, size, has_n), _channels_folded(x, x_bdim, size, has_n),
        _groups_folded(weight, w_bdim, size), None if bias_sizes is None else [size * bias_sizes[0]],
        *values[4:9], values[9] * size, values[10])
    return (None if grad_x is None else wrap(_channels_unfolded(grad_x, size, has_n), level),
            None if grad_w is None else wrap(grad_w.unflatten(0, (size, -1)), level),
            None if grad_b is None else wrap(grad_b.unflatten(0, (size, -1)), level))
