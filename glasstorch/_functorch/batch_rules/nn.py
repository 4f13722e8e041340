"""Neural-network ops and their backward ops (BatchRulesNorm.cpp,
BatchRulesModules.cpp, BatchRulesLoss.cpp, BatchRulesPooling.cpp).

Most fold the batch into a dim the op already loops over (the rows of a
layer norm, N of a pooling, the rows of an embedding table); what must stay
per example (a loss's reduction, a weight's gradient) is finished with
batched ops, whose own rules keep the examples apart.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from ..._tensor import Tensor
from . import (RULES, batch_size_of, batched_again, call, logical_rank, loop_fallback, overloads,
               register, register_decomposition, to_front, unwrap, wrap)
from .pointwise import pointwise_rule

aten = ops.aten


@register(aten.native_layer_norm.default)
def _layer_norm(op, level, values):
    """An unbatched weight and bias: the examples are more leading rows.  A
    batched one: normalise without them, then scale and shift batched."""
    x, x_bdim = unwrap(values[0], level)
    weight, bias = values[2], values[3]
    if unwrap(weight, level)[1] is None and unwrap(bias, level)[1] is None:
        values[0] = to_front(x, x_bdim)
        return wrap(op(*values), level)
    out, mean, rstd = op(to_front(x, x_bdim), values[1], None, None, values[4])
    with batched_again():
        out = wrap(out, level)
        if weight is not None:
            out = out * weight
        if bias is not None:
            out = out + bias
    return out, wrap(mean, level), wrap(rstd, level)


@register(aten.embedding.default)
def _embedding(op, level, values):
    weight, w_bdim = unwrap(values[0], level)
    indices, i_bdim = unwrap(values[1], level)
    if w_bdim is None:
        values[1] = to_front(indices, i_bdim)
        return wrap(op(*values), level)
    weight = to_front(weight, w_bdim)
    size, rows = weight.shape[0], weight.shape[1]
    indices = to_front(indices, i_bdim, size)
    offsets = aten.arange.start_step(0, size * rows, rows, device=indices.device)
    shifted = indices + offsets.reshape((size,) + (1,) * (indices.dim() - 1))
    values[0], values[1] = weight.reshape(size * rows, -1), shifted
    return wrap(op(*values), level)


def _class_last(x):
    """A batch-first nll input (B, C), (B, N, C) or (B, N, C, d...) as rows of
    classes, and the function that puts a result of that shape back."""
    if x.dim() == 2:
        return x, lambda r: r
    moved = x.movedim(2, -1)
    return moved.reshape(-1, x.shape[2]), lambda r: r.reshape(moved.shape).movedim(-1, 2)


@register(*overloads("nll_loss_forward", "nll_loss2d_forward"))
def _nll_loss(op, level, values):
    """Per-element losses of the whole batch in one call (on rows of classes,
    also for the 2d op), then each example's reduction with batched ops
    (PyTorch's rule also goes through ``none``)."""
    self, target, weight, reduction, ignore_index = values
    if unwrap(weight, level)[1] is not None:
        return loop_fallback(op, level, values)
    x, x_bdim = unwrap(self, level)
    t, t_bdim = unwrap(target, level)
    size = x.shape[x_bdim] if x_bdim is not None else t.shape[t_bdim]
    x, t = to_front(x, x_bdim, size), to_front(t, t_bdim, size)
    losses, _ = aten.nll_loss_forward.default(_class_last(x)[0], t.reshape(-1), weight, 0,
                                              ignore_index)
    losses = wrap(losses.reshape(t.shape), level)
    with batched_again():
        target = wrap(t, level)
        kept = (target != ignore_index).to(losses.dtype)
        weights = kept if weight is None else weight[target.clamp(min=0)] * kept
        total = weights.sum()
        if reduction == 0:
            return losses, total
        if reduction == 1:
            return losses.sum() / total, total
        return losses.sum(), total


@register(*overloads("nll_loss_backward", "nll_loss2d_backward"))
def _nll_loss_backward(op, level, values):
    """Each position's upstream gradient (the example's ``grad_output``, over
    its ``total_weight`` for a mean) made batched, then one unreduced backward."""
    grad, self, target, weight, reduction, ignore_index, total_weight = values
    if unwrap(weight, level)[1] is not None:
        return loop_fallback(op, level, values)
    size = batch_size_of(level)
    with batched_again():
        if reduction == 1:
            grad = grad / total_weight
        if reduction != 0:
            grad = grad.expand(target.shape)
    x, restore = _class_last(to_front(*unwrap(self, level), size))
    t = to_front(*unwrap(target, level), size)
    grad = to_front(*unwrap(grad, level), size)
    one = aten.ones.default([], dtype=x.dtype, device=x.device)
    rows = aten.nll_loss_backward.default(grad.reshape(-1), x, t.reshape(-1), weight, 0, ignore_index,
                                          one)
    return wrap(restore(rows), level)


@register(aten.native_layer_norm_backward.default)
def _layer_norm_backward(op, level, values):
    """The input's gradient from one backward without weight (fed ``grad *
    weight``: the same thing); the weight's and bias's gradients summed over
    each example's rows only, with batched ops."""
    grad, x, shape, mean, rstd, weight, bias, mask = values
    size = batch_size_of(level)
    grad_x = grad_w = grad_b = None
    if mask[0]:
        with batched_again():
            scaled = grad if weight is None else grad * weight
        physical = [to_front(*unwrap(t, level), size) for t in (scaled, x, mean, rstd)]
        grad_x = wrap(op(physical[0], physical[1], shape, *physical[2:], None, None,
                         [True, False, False])[0], level)
    with batched_again():
        rows = list(range(x.dim() - len(shape)))
        per_row = lambda t: t.sum(rows) if rows else t  # noqa: E731
        if mask[1] and weight is not None:
            grad_w = per_row(grad * ((x - mean) * rstd))
        if mask[2] and bias is not None:
            grad_b = per_row(grad)
    return grad_x, grad_w, grad_b


@register(aten.embedding_dense_backward.default)
def _embedding_backward(op, level, values):
    """Example ``b``'s rows are rows ``b * num_weights + i`` of one B times
    taller table (the forward rule's offsets); ``padding_idx`` rows masked first."""
    grad, indices, num_weights, padding_idx, scale_grad_by_freq = values
    size = batch_size_of(level)
    grad = to_front(*unwrap(grad, level), size)
    indices = to_front(*unwrap(indices, level), size)
    if padding_idx >= 0:
        grad = grad * (indices != padding_idx).unsqueeze(-1)
    offsets = aten.arange.start_step(0, size * num_weights, num_weights, device=indices.device)
    shifted = indices + offsets.reshape((size,) + (1,) * (indices.dim() - 1))
    table = op(grad.reshape(-1, grad.shape[-1]), shifted.reshape(-1), size * num_weights, -1,
               scale_grad_by_freq)
    return wrap(table.reshape(size, num_weights, -1), level)


def _reduction_at(op) -> int:
    return next(i for i, a in enumerate(op._schema.arguments) if a.name == "reduction")


def _loss(op, level, values):
    """An elementwise loss: unreduced it is pointwise; a mean or sum then
    reduces each example's losses with batched ops."""
    at = _reduction_at(op)
    reduction, values[at] = values[at], 0
    if reduction == 0:
        return pointwise_rule(op, level, values)
    with batched_again():
        losses = call(op, values)
        return losses.mean() if reduction == 1 else losses.sum()


def _loss_backward(op, level, values):
    """The elementwise loss's backward: a reduced one is the unreduced one fed
    the example's gradient spread over its elements (over their count, for a mean)."""
    at = _reduction_at(op)
    reduction, values[at] = values[at], 0
    if reduction == 0:
        return pointwise_rule(op, level, values)
    with batched_again():
        self = values[1]
        values[0] = values[0].expand(self.shape)
        grad = call(op, values)
        return grad / self.numel() if reduction == 1 else grad


for _names, _rule in (
        (("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
          "binary_cross_entropy_with_logits", "soft_margin_loss"), _loss),
        (("mse_loss_backward", "smooth_l1_loss_backward", "huber_loss_backward",
          "binary_cross_entropy_backward", "soft_margin_loss_backward"), _loss_backward)):
    for _op in overloads(*_names):
        RULES[_op] = _rule


def _fold_into_n(spatial: int):
    """Pooling-like ops on (N, C, *spatial) or unbatched (C, *spatial)
    activations: every tensor argument goes batch first; an N folds into the
    batch (B*N, C, ...), an example without one has B as its N."""
    def rule(op, level, values):
        size = batch_size_of(level)
        first = next(v for v in values if isinstance(v, Tensor))
        has_n = logical_rank(*unwrap(first, level)) == spatial + 2
        for i, v in enumerate(values):
            if isinstance(v, Tensor):
                v = to_front(*unwrap(v, level), size)
                values[i] = v.flatten(0, 1) if has_n else v
        result = call(op, values)
        unfold = (lambda r: r.unflatten(0, (size, -1))) if has_n else (lambda r: r)
        if isinstance(result, Tensor):
            return wrap(unfold(result), level)
        return wrap(type(result)(unfold(r) for r in result), level)
    return rule


for _spatial, _names in (
        (1, ("max_pool1d_with_indices", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d",
             "adaptive_max_pool1d", "reflection_pad1d", "reflection_pad1d_backward",
             "replication_pad1d", "replication_pad1d_backward", "upsample_nearest1d",
             "_upsample_nearest_exact1d", "upsample_linear1d")),
        (2, ("max_pool2d_with_indices", "max_pool2d_with_indices_backward", "max_pool2d",
             "avg_pool2d", "avg_pool2d_backward", "_adaptive_avg_pool2d",
             "_adaptive_avg_pool2d_backward", "adaptive_max_pool2d", "adaptive_max_pool2d_backward",
             "upsample_nearest2d", "upsample_nearest2d.vec", "_upsample_nearest_exact2d",
             "upsample_bilinear2d",
             "upsample_bilinear2d.vec", "reflection_pad2d", "reflection_pad2d_backward",
             "replication_pad2d", "replication_pad2d_backward",
             "pixel_shuffle", "pixel_unshuffle"))):
    for _op in overloads(*_names):
        RULES[_op] = _fold_into_n(_spatial)


def _upsample_backward(spatial: int):
    """An upsampling's backward: as ``_fold_into_n``, with the N of its
    ``input_size`` (N, C, *spatial) grown to B*N."""
    fold = _fold_into_n(spatial)

    def rule(op, level, values):
        n, *rest = values[2]
        values[2] = [n * batch_size_of(level), *rest]
        return fold(op, level, values)
    return rule


for _spatial, _names in (
        (1, ("upsample_nearest1d_backward", "_upsample_nearest_exact1d_backward",
             "upsample_linear1d_backward")),
        (2, ("upsample_nearest2d_backward", "_upsample_nearest_exact2d_backward",
             "upsample_bilinear2d_backward"))):
    for _op in overloads(*_names):
        RULES[_op] = _upsample_backward(_spatial)


@register_decomposition(aten.one_hot.default)
def _one_hot(self, num_classes=-1):
    """Under vmap the class values cannot be read (``.item()``): with an
    explicit ``num_classes``, ``self[..., None] == arange(num_classes)`` (a
    value out of range gives a row of zeros, as in torch.vmap); without, PyTorch's error."""
    if num_classes == -1:
        raise RuntimeError("When vmap-ing torch.nn.functional.one_hot, please provide an explicit "
                           "positive num_classes argument.")
    index = aten.arange.default(num_classes, dtype=self.dtype, device=self.device)
    return aten.eq.Tensor(self.unsqueeze(-1), index).long()
