"""Ops vmap refuses (BatchRulesDynamic.cpp): those whose result would be a
Python value read from one example (``.item()``, ``if x.sum() > 0``), or
whose output shape depends on each example's values (``nonzero``,
``unique``): the examples would not stack into one tensor.  Each raises
PyTorch's message instead of running the per-example loop.
"""
from __future__ import annotations

from . import RULES, overloads


def _refuse(message):
    def rule(op, level, values):
        raise RuntimeError(message.format(op=op._name))
    return rule


for _names, _message in (
        (("_local_scalar_dense",),
         "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
         "calling .item() on a Tensor, please try to rewrite what you're doing with other "
         "operations. If error is occurring somewhere inside PyTorch internals, please file a bug "
         "report."),
        (("is_nonzero",),
         "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
         "flow. We don't support that yet, please file an issue at "
         "https://github.com/pytorch/pytorch/issues ."),
        (("nonzero", "_unique2", "unique_dim", "unique_consecutive", "unique_dim_consecutive"),
         "vmap: We do not support batching operators that can output dynamic shape. Attempted "
         "to vmap over {op}. Please file an issue at https://github.com/pytorch/pytorch/issues "
         "if you need this feature."),
        (("allclose",),
         "vmap over torch.allclose isn't supported yet. Please file an issue at "
         "https://github.com/pytorch/pytorch/issues if you need this feature.")):
    for _op in overloads(*_names):
        RULES[_op] = _refuse(_message)
