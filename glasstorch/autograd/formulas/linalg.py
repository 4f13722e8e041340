"""Linear-algebra gradients (FunctionsManual.cpp's svd_backward)."""
from __future__ import annotations

from ..._dispatcher.dispatcher import ops

__all__ = ["svd_singular_values_backward"]

aten = ops.aten


def svd_singular_values_backward(gS, U, Vh):
    """svd_backward's term for the singular values: ``U diag(gS) Vh``; the U and
    Vh terms are absent because those outputs are not differentiable here."""
    scaled = aten.mul.Tensor(U, aten.unsqueeze.default(gS, -2))
    return aten.matmul.default(scaled, Vh)
