"""``torch._higher_order_ops``: operators that take functions (graphs) as arguments.

``cond(pred, true_fn, false_fn, operands)`` runs one of two functions on the
operands, chosen by a boolean (or a one-element boolean tensor).  In eager
mode that is an ``if``; under ``torch.compile`` both branches are traced into
subgraphs and the choice stays in the graph (``torch.ops.higher_order.cond``,
``cond.py``), so a branch on a tensor's value is no graph break.
"""
from __future__ import annotations

__all__ = ["cond", "cond_op"]


class HigherOrderOperator:
    """An operator over functions, named as PyTorch names it
    (``torch.ops.higher_order.<name>``)."""

    def __init__(self, name: str, fn):
        self.__name__ = self._name = name
        self.__module__ = "torch._ops.higher_order"
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"torch.ops.higher_order.{self._name}"


from .cond import cond, cond_op  # noqa: E402
