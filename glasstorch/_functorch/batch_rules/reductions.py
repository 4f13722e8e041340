"""Ops along dims: reductions, scans, softmax, sorting (BatchRulesReduceOps.cpp).

The batch dim goes first and every logical ``dim`` argument moves up by one.
"All dims" (``dim=None`` or ``[]``) becomes every dim but the batch one; a
logical scalar (physical rank 1) is reduced over a size-1 dim added for it.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from . import (RULES, call, logical_rank, overloads, register, tensor_slots, to_front, unwrap, wrap,
               wrap_dim)

aten = ops.aten


def _dims_rule(op, level, values):
    """``self`` and an ``int[1]? dim`` (None or [] = every dim), ``keepdim``."""
    tensor, bdim = unwrap(values[0], level)
    rank = logical_rank(tensor, bdim)
    tensor = to_front(tensor, bdim)
    params = op._schema.arguments
    at = next(i for i, a in enumerate(params) if a.name == "dim")
    dims = values[at]
    if isinstance(dims, int):
        dims = [dims]
    if rank == 0:
        for d in dims or ():
            wrap_dim(d, 0)
        tensor = tensor.unsqueeze(1)
        values[at] = [1]
        keep = next((i for i, a in enumerate(params) if a.name == "keepdim"), None)
        if keep is not None:
            values[keep] = False
    elif dims is None or len(dims) == 0:
        values[at] = list(range(1, rank + 1))
    else:
        values[at] = [wrap_dim(d, rank) + 1 for d in dims]
    values[0] = tensor
    return wrap(call(op, values), level)


def _full_reduction(dim_op):
    """``op(self)`` reducing everything: ``dim_op`` over each example's elements."""
    def rule(op, level, values):
        tensor, bdim = unwrap(values[0], level)
        flat = to_front(tensor, bdim).reshape(tensor.shape[bdim], -1)
        extra = {a.name: v for a, v in zip(op._schema.arguments[1:], values[1:])}
        dim = [1] if dim_op._schema.arguments[1].type.is_list else 1
        return wrap(dim_op(flat, dim, **extra), level)
    return rule


def _one_dim_rule(op, level, values):
    """Every tensor argument batch-first (unbatched ones expanded), one
    ``int dim`` shifted: softmax, scans, sort, gather-free dim ops."""
    params = op._schema.arguments
    slots = tensor_slots(op, values)
    unwrapped = {i: unwrap(values[i], level) for i in slots}
    size = next(t.shape[b] for t, b in unwrapped.values() if b is not None)
    rank = max(logical_rank(t, b) for t, b in unwrapped.values())
    for i, (tensor, bdim) in unwrapped.items():
        values[i] = to_front(tensor, bdim, size)
    at = next(i for i, a in enumerate(params) if a.name == "dim")
    if values[at] is not None:
        values[at] = wrap_dim(values[at], rank) + 1
    if rank == 0:
        for i in slots:
            values[i] = values[i].unsqueeze(1)
        result = call(op, values)
        return wrap(_squeeze_last(result), level)
    return wrap(call(op, values), level)


def _squeeze_last(result):
    if hasattr(result, "_keys"):
        return result.squeeze(1) if result.dim() > 1 else result
    return type(result)(*(_squeeze_last(r) for r in result)) if hasattr(result, "_fields") \
        else type(result)(_squeeze_last(r) for r in result)


def _flatten_when_no_dim(op, level, values):
    """argmax/argmin: ``dim=None`` means over the flattened example."""
    params = op._schema.arguments
    at = next(i for i, a in enumerate(params) if a.name == "dim")
    if values[at] is not None:
        return _one_dim_rule(op, level, values)
    tensor, bdim = unwrap(values[0], level)
    values[0] = to_front(tensor, bdim).reshape(tensor.shape[bdim], -1)
    values[at] = 1
    keep = next(i for i, a in enumerate(params) if a.name == "keepdim")
    keepdim, values[keep] = values[keep], False
    result = call(op, values)
    if keepdim:
        result = result.reshape(result.shape[:1] + (1,) * logical_rank(tensor, bdim))
    return wrap(result, level)


for _op in overloads("sum.dim_IntList", "mean.dim", "amax", "amin", "std.correction",
                     "var.correction", "std_mean.correction", "var_mean.correction", "logsumexp",
                     "nansum", "linalg_vector_norm", "any.dims", "all.dims",
                     "count_nonzero.dim_IntList", "norm.ScalarOpt_dim"):
    RULES[_op] = _dims_rule

for _op, _dim_op in ((aten.sum.default, aten.sum.dim_IntList), (aten.mean.default, aten.mean.dim),
                     (aten.any.default, aten.any.dims), (aten.all.default, aten.all.dims),
                     (aten.max.default, aten.amax.default), (aten.min.default, aten.amin.default),
                     (aten.prod.default, aten.prod.dim_int)):
    RULES[_op] = _full_reduction(_dim_op)

for _op in overloads("_softmax", "_log_softmax", "_safe_softmax", "cumsum", "cumprod", "logcumsumexp", "cummax",
                     "cummin", "sort", "sort.stable", "argsort", "argsort.stable", "topk",
                     "kthvalue", "max.dim", "min.dim", "median.dim", "mode", "prod.dim_int",
                     "all.dim", "any.dim", "_softmax_backward_data",
                     "_log_softmax_backward_data", "glu", "diff"):
    RULES[_op] = _one_dim_rule

for _op in overloads("argmax", "argmin"):
    RULES[_op] = _flatten_when_no_dim


@register(aten.aminmax.default)
def _aminmax(op, level, values):
    """With a ``dim``, a one-dim op; without, each example flattened and
    reduced over that one dim, which ``keepdim`` keeps (as torch.vmap does: a
    result of one dim whatever the example's rank, none for a scalar)."""
    if values[1] is not None:
        return _one_dim_rule(op, level, values)
    tensor, bdim = unwrap(values[0], level)
    flat = to_front(tensor, bdim).reshape(tensor.shape[bdim], -1)
    return wrap(op(flat, dim=1, keepdim=values[2] and logical_rank(tensor, bdim) > 0), level)
