"""``torch.func``: function transforms (functorch's public API).

A transform takes a function and returns a function that computes something
else about it: ``vmap``, ``grad``, ``vjp``, ``jacrev``, ``jvp``, ``jacfwd``,
``hessian``, ``functionalize``.  ``functional_call`` runs a
Module as a function of its parameters and buffers.
"""
from __future__ import annotations

import functools

from .._tensor import Tensor
from .._subclasses.functional_tensor import FunctionalTensor, FunctionalTensorMode
from ..nn.utils.stateless import _functional_call as functional_call
from ..utils import _pytree as pytree

from .._functorch.apis import (grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize,
                               vjp, vmap)
from .._functorch.functional_call import stack_module_state

__all__ = ["functional_call", "functionalize", "vmap", "grad", "grad_and_value", "vjp", "jacrev",
           "jvp", "jacfwd", "linearize", "hessian", "stack_module_state"]


def functionalize(func, *, remove="mutations"):
    """``func`` with its mutations (and, for ``remove="mutations_and_views"``,
    its views) replaced by out-of-place ops, same results (torch.func.functionalize).

    The inputs run as FunctionalTensors under a FunctionalTensorMode (Note
    [functionalization]); the outputs come back as plain tensors.  An input
    ``func`` wrote to gets the new value afterwards by one ``copy_``, as in
    PyTorch.
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the "
            "program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators "
            "{view} will be replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        mode = FunctionalTensorMode()
        mode._level_reapply_views = remove == "mutations"
        inputs = pytree.tree_leaves((args, kwargs))
        wrapped_args, wrapped_kwargs = pytree.tree_map(
            lambda t: FunctionalTensor(t, mode) if isinstance(t, Tensor) else t, (args, kwargs))
        with mode:
            outputs = func(*wrapped_args, **wrapped_kwargs)
        outputs = pytree.tree_map(
            lambda t: t.from_functional() if isinstance(t, FunctionalTensor) else t, outputs)
        wrapped_inputs = pytree.tree_leaves((wrapped_args, wrapped_kwargs))
        for w in wrapped_inputs:
            if isinstance(w, FunctionalTensor):
                w._sync()
        for plain, w in zip(inputs, wrapped_inputs):
            if isinstance(w, FunctionalTensor):
                _propagate_input_mutation(plain, w.elem)
        return outputs

    return wrapped


def _propagate_input_mutation(plain, value):
    """Give input ``plain`` the value ``func`` left it with, if it changed:
    new geometry first (resize_ / as_strided_), then one ``copy_``."""
    if value is plain:
        return
    if plain.numel() * plain.element_size() != value.numel() * value.element_size():
        plain.resize_(value.shape)
    if plain.shape != value.shape:
        plain.as_strided_(value.shape, value.stride())
    plain.copy_(value)
