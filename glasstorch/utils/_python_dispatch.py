"""``torch.utils._python_dispatch``: TorchDispatchMode and its stack.

A mode intercepts every operator call below autograd on this thread, whatever
tensors it gets::

    class Logger(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)                       # aten.addmm.default
            return func(*args, **(kwargs or {}))

    with Logger():
        model(x)

While the handler runs the mode is popped, so ``func(...)`` goes on to the next
mode out, or to the kernels (``_dispatcher/python_key.py`` has the mechanism).
"""
from __future__ import annotations

import contextlib

from .._core.tls import state as _tls
from .._dispatcher.python_key import pop_dispatch_mode, push_dispatch_mode
from .._tensor import Tensor

__all__ = ["TorchDispatchMode", "is_traceable_wrapper_subclass",
           "_get_current_dispatch_mode", "_get_current_dispatch_mode_stack",
           "_push_mode", "_pop_mode", "_pop_mode_temporarily", "_disable_current_modes",
           "_len_torch_dispatch_stack"]


class TorchDispatchMode:
    """Subclass and define ``__torch_dispatch__(self, func, types, args=(), kwargs=None)``."""

    def __init__(self, _dispatch_key=None):
        self.old_dispatch_mode_flags = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        pop_dispatch_mode(self)

    @classmethod
    def push(cls, *args, **kwargs):
        import warnings
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`")
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


def _get_current_dispatch_mode():
    stack = _tls.dispatch_modes
    return stack[-1] if stack else None


def _get_current_dispatch_mode_stack() -> list:
    return list(_tls.dispatch_modes)


def _len_torch_dispatch_stack() -> int:
    return len(_tls.dispatch_modes)


def _push_mode(mode) -> None:
    push_dispatch_mode(mode)


def _pop_mode(k=None):
    return pop_dispatch_mode(k if isinstance(k, TorchDispatchMode) else None)


@contextlib.contextmanager
def _pop_mode_temporarily(k=None):
    mode = pop_dispatch_mode()
    try:
        yield mode
    finally:
        push_dispatch_mode(mode)


@contextlib.contextmanager
def _disable_current_modes():
    """Run a block with no dispatch mode active (the stack comes back after)."""
    popped = [pop_dispatch_mode() for _ in range(len(_tls.dispatch_modes))]
    try:
        yield popped
    finally:
        for mode in reversed(popped):
            push_dispatch_mode(mode)


def is_traceable_wrapper_subclass(t) -> bool:
    """A wrapper subclass that says how to flatten itself (``__tensor_flatten__``)."""
    return isinstance(t, Tensor) and type(t) is not Tensor and \
        hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")
