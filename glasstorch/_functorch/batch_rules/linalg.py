"""Matrix products (BatchRulesLinearAlgebra.cpp): the examples of a batched
operand become (part of) the leading batch of one ``bmm``/``mm``, or, where
only the left operand is batched, extra rows of one ``mm``.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from . import (batch_size_of, call, logical_rank, pad_rank, register, register_decomposition,
               tensor_slots, to_front, unwrap, wrap, wrap_dim)

aten = ops.aten


def _matmul_physical(a, a_bdim, b, b_bdim):
    """Logical ``a @ b`` (each 1-d or 2-d) of every example, batch first."""
    if b_bdim is None:
        return aten.matmul.default(to_front(a, a_bdim), b)   # (B, n, k) @ (k, m): rows of one mm
    return aten.matmul.default(to_front(a, a_bdim), to_front(b, b_bdim)) if a_bdim is not None \
        else aten.matmul.default(a, to_front(b, b_bdim))


@register(aten.mm.default, aten.mv.default, aten.dot.default, aten.vdot.default, aten.bmm.default)
def _products(op, level, values):
    """One broadcasting ``matmul`` of the batch-first operands (an unbatched one
    broadcasts over the batch); a batched ``mv`` vector becomes a column and
    ``dot`` a product summed over the last dim (``vdot`` conjugates ``a`` first)."""
    (a, a_bdim), (b, b_bdim) = unwrap(values[0], level), unwrap(values[1], level)
    if op in (aten.dot.default, aten.vdot.default):
        a = to_front(a, a_bdim)
        a = a.conj() if op is aten.vdot.default else a
        return wrap((a * to_front(b, b_bdim)).sum(-1), level)
    if op is aten.mv.default and b_bdim is not None:
        column = to_front(b, b_bdim).unsqueeze(-1)
        return wrap(_matmul_physical(a, a_bdim, column, 0).squeeze(-1), level)
    return wrap(_matmul_physical(a, a_bdim, b, b_bdim), level)


@register_decomposition(aten.addmm.default, aten.addmv.default, aten.baddbmm.default)
def _add_products(self, m1, m2, *, beta=1, alpha=1):
    """``beta * self + alpha * (m1 @ m2)``, the product batched by its own rule."""
    product = aten.matmul.default(m1, m2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (self if beta == 1 else self * beta)


@register(aten.trace.default)
def _trace(op, level, values):
    """Each example's diagonal, summed."""
    matrices = to_front(*unwrap(values[0], level))
    return wrap(matrices.diagonal(0, 1, 2).sum(-1), level)


@register(aten._cdist_forward.default, aten._cdist_backward.default)
def _broadcast_batch_dims(op, level, values):
    """Ops whose leading dims are a broadcast batch (cdist and its backward):
    every tensor batch first (an unbatched one expanded: the backward takes
    its batch shape from x1 and x2) and padded to the largest logical rank,
    so that the vmap batch lines up with itself and the op's batch follows it."""
    size = batch_size_of(level)
    unwrapped = {i: unwrap(values[i], level) for i in tensor_slots(op, values)}
    rank = max(logical_rank(t, b) for t, b in unwrapped.values())
    for i, (tensor, bdim) in unwrapped.items():
        values[i] = pad_rank(to_front(tensor, bdim, size), rank)
    return wrap(call(op, values), level)


@register(aten.linalg_cross.default)
def _cross(op, level, values):
    """Both operands batch first (an unbatched one expanded), ``dim`` moved past the batch."""
    (a, a_bdim), (b, b_bdim) = unwrap(values[0], level), unwrap(values[1], level)
    rank = logical_rank(a, a_bdim)
    if rank != logical_rank(b, b_bdim):
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    size = batch_size_of(level)
    return wrap(op(to_front(a, a_bdim, size), to_front(b, b_bdim, size),
                   dim=wrap_dim(values[2], rank) + 1), level)


@register(aten.diag_embed.default)
def _diag_embed(op, level, values):
    """Batch first; ``dim1``/``dim2`` (dims of the result, one more than the
    input has) moved past the batch."""
    x, bdim = unwrap(values[0], level)
    rank = logical_rank(x, bdim) + 1
    return wrap(op(to_front(x, bdim), values[1], wrap_dim(values[2], rank) + 1,
                   wrap_dim(values[3], rank) + 1), level)
