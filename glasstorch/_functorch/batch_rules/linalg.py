"""Matrix products (BatchRulesLinearAlgebra.cpp): the examples of a batched
operand become (part of) the leading batch of one ``bmm``/``mm``, or, where
only the left operand is batched, extra rows of one ``mm``.
"""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops
from . import register, register_decomposition, to_front, unwrap, wrap

aten = ops.aten


def _matmul_physical(a, a_bdim, b, b_bdim):
    """Logical ``a @ b`` (each 1-d or 2-d) of every example, batch first."""
    if b_bdim is None:
        return aten.matmul.default(to_front(a, a_bdim), b)   # (B, n, k) @ (k, m): rows of one mm
    return aten.matmul.default(to_front(a, a_bdim), to_front(b, b_bdim)) if a_bdim is not None \
        else aten.matmul.default(a, to_front(b, b_bdim))


@register(aten.mm.default, aten.mv.default, aten.dot.default, aten.bmm.default)
def _products(op, level, values):
    """One broadcasting ``matmul`` of the batch-first operands (an unbatched one
    broadcasts over the batch); a batched ``mv`` vector becomes a column and
    ``dot`` a product summed over the last dim."""
    (a, a_bdim), (b, b_bdim) = unwrap(values[0], level), unwrap(values[1], level)
    if op is aten.dot.default:
        return wrap((to_front(a, a_bdim) * to_front(b, b_bdim)).sum(-1), level)
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
