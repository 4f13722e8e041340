"""``torch.overrides``: the ``__torch_function__`` protocol's public helpers and
TorchFunctionMode.

The mechanism (which calls are handed over, in what order) lives in
``glasstorch/_dispatcher/torch_function.py``; this module is what user code imports.
A TorchFunctionMode sees every public call on this thread before any dispatch::

    class Printer(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            print(func.__name__)              # add, __get__, linear ...
            return func(*args, **(kwargs or {}))
"""
from __future__ import annotations

import contextlib

from ._core.tls import state as _tls
from ._dispatcher.torch_function import (handle_torch_function, has_torch_function,
                                         overloaded_args, pop_function_mode, push_function_mode)
from ._tensor import Tensor, _is_nowrap

__all__ = ["TorchFunctionMode", "BaseTorchFunctionMode", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "get_default_nowrap_functions", "enable_torch_function_mode",
           "_get_current_function_mode", "_get_current_function_mode_stack", "_push_mode",
           "_pop_mode", "_pop_mode_temporarily", "_get_overloaded_args"]


def has_torch_function_unary(arg) -> bool:
    return has_torch_function((arg,))


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def _get_overloaded_args(relevant_args, get_type_fn=None) -> list:
    return overloaded_args(relevant_args)


def is_tensor_like(inp) -> bool:
    """A Tensor, or an object whose type defines ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def get_default_nowrap_functions() -> set:
    """Getters whose results ``Tensor.__torch_function__`` returns unconverted."""
    return {Tensor._base.__get__, Tensor.grad.__get__}


assert all(_is_nowrap(f) for f in get_default_nowrap_functions())


class TorchFunctionMode:
    """Subclass and define ``__torch_function__(self, func, types, args=(), kwargs=None)``;
    ``with mode:`` makes it see every public call on this thread (innermost first)."""

    inner: "TorchFunctionMode"

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        import warnings
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`")
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every function unchanged (a base for modes that only watch)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    stack = _tls.function_modes
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list:
    return list(_tls.function_modes)


def _push_mode(mode) -> None:
    push_function_mode(mode)


def _pop_mode():
    return pop_function_mode()


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = pop_function_mode()
    try:
        yield mode
    finally:
        push_function_mode(mode)


@contextlib.contextmanager
def enable_torch_function_mode(mode, replace=None, ignore_preexisting=False):
    """Deprecated spelling of ``with mode:``."""
    with mode:
        yield mode


