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
    (a, a_bdim), (b, b_bdim) = unwrap(values[0], level), unwrap(values[1], level)
    if op is aten.bmm.default and a_bdim is not None and b_bdim is not None:
        return wrap(aten.matmul.default(to_front(a, a_bdim), to_front(b, b_bdim)), level)
    if op is aten.bmm.default:                    # one side unbatched: broadcast it
        return wrap(_matmul_physical(a, a_bdim, b, b_bdim), level)
    if op is aten.dot.default:
        a, b = to_front(a, a_bdim), to_front(b, b_bdim)
        return wrap((a * b).sum(-1), level)
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
