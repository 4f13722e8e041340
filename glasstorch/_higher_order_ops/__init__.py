"""``torch._higher_order_ops``: operators that take functions (graphs) as arguments.

``cond(pred, true_fn, false_fn, operands)`` runs one of two functions on the
operands, chosen by a boolean (or a one-element boolean tensor).  In eager
mode that is an ``if``; under ``torch.compile`` both branches are traced into
subgraphs and the choice stays in the graph (``torch.ops.higher_order.cond``),
so a branch on a tensor's value is no graph break.
"""
from __future__ import annotations

__all__ = ["cond"]


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


def _cond_op(pred, true_fn, false_fn, operands):
    """The graph's form: the chosen branch (a subgraph returning a tuple) on the operands."""
    return (true_fn if bool(pred) else false_fn)(*operands)


cond_op = HigherOrderOperator("cond", _cond_op)


def cond(pred, true_fn, false_fn, operands=()):
    """``torch.cond``: ``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``."""
    from .._tensor import Tensor
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
    elif not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    return (true_fn if bool(pred) else false_fn)(*operands)
