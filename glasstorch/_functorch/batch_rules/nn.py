"""Neural-network ops (BatchRulesNorm.cpp, BatchRulesModules.cpp, BatchRulesLoss.cpp)."""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from . import batched_again, loop_fallback, register, to_front, unwrap, wrap

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


@register(aten.nll_loss_forward.default)
def _nll_loss(op, level, values):
    """Per-element losses of the whole batch in one call, then each example's
    reduction with batched ops (PyTorch's rule also goes through ``none``)."""
    self, target, weight, reduction, ignore_index = values
    if unwrap(weight, level)[1] is not None:
        return loop_fallback(op, level, values)
    x, x_bdim = unwrap(self, level)
    t, t_bdim = unwrap(target, level)
    size = x.shape[x_bdim] if x_bdim is not None else t.shape[t_bdim]
    x, t = to_front(x, x_bdim, size), to_front(t, t_bdim, size)
    classes = x.shape[-1] if x.dim() == 2 else x.shape[2]
    flat_x = x if x.dim() == 2 else x.movedim(2, -1).reshape(-1, classes)
    losses, _ = op(flat_x, t.reshape(-1), weight, 0, ignore_index)
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
