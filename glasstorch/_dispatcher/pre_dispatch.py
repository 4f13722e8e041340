"""The PreDispatch key: where export's tracer sees ops before autograd
(PyTorch's PreDispatch functionality and its pre-dispatch mode stack,
torch/_ops.py's ``_pre_dispatch`` handling).

A TorchDispatchMode pushed here (``pre_dispatch_mode(mode)``) gets every op the
program calls, at the top of the dispatcher: ``aten.linear.default`` whole,
before CompositeImplicitAutograd splits it into ``t`` and ``addmm``, and before
autograd records anything.  While the handler runs the mode is popped, so its
``func(*args)`` goes on through autograd and the kernels and the ops that call
makes are not seen here again: export's graph holds the program's own calls.

    pre_dispatch_fallback(op, keyset, args, kwargs)
      pop the innermost pre-dispatch mode (PreDispatch leaves the included set
      with the last one)
      mode.__torch_dispatch__(op, types, args, kwargs)   args as the Python key
                                                        hands them (no defaults)
"""
from __future__ import annotations

import contextlib

from .._core import dispatch_key as dk
from .._core.tls import state as _tls
from .python_key import _as_python_number, _without_defaults, dispatch_types

__all__ = ["pre_dispatch_fallback", "pre_dispatch_mode", "current_pre_dispatch_modes",
           "no_pre_dispatch_modes"]

_PRE_DISPATCH = dk.functionality_bit(dk.FUNC["PreDispatch"])


def _set_stack(stack) -> None:
    _tls.pre_dispatch_modes = stack
    _tls.included = (_tls.included | _PRE_DISPATCH) if stack else \
        (_tls.included & ~_PRE_DISPATCH)


def current_pre_dispatch_modes() -> tuple:
    return _tls.pre_dispatch_modes


@contextlib.contextmanager
def pre_dispatch_mode(mode):
    """Run a block with ``mode`` handling every op at the PreDispatch key."""
    stack = _tls.pre_dispatch_modes
    _set_stack(stack + (mode,))
    try:
        yield mode
    finally:
        _set_stack(stack)


@contextlib.contextmanager
def no_pre_dispatch_modes():
    """Run a block with no pre-dispatch mode (a nested trace of its own)."""
    stack = _tls.pre_dispatch_modes
    _set_stack(())
    try:
        yield
    finally:
        _set_stack(stack)


def pre_dispatch_fallback(op, keyset, args, kwargs):
    """The boxed kernel registered at PreDispatch for every operator."""
    stack = _tls.pre_dispatch_modes
    if not stack:                  # PreDispatch included by hand, no mode: pass through
        return op.redispatch(keyset & ~_PRE_DISPATCH, *args, **kwargs)
    mode = stack[-1]
    _set_stack(stack[:-1])
    try:
        types = dispatch_types(args, kwargs)
        args, kwargs = _without_defaults(op, tuple(_as_python_number(a) for a in args), kwargs)
        return mode.__torch_dispatch__(op, types, args, kwargs)
    finally:
        _set_stack(stack)
