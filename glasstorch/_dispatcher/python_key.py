"""The Python dispatch key: where ``__torch_dispatch__`` and TorchDispatchModes run
(aten/src/ATen/core/PythonFallbackKernel.cpp, c10/core/impl/TorchDispatchModeTLS).

Two things put the Python key into a call's key set:

* a tensor whose class defines ``__torch_dispatch__`` (it carries the Python and
  PythonTLSSnapshot keys from birth: ``Tensor.__init_subclass__``);
* an active TorchDispatchMode (entering one adds both keys to the thread's
  included set; popping the last one removes them).

The Python key sits below Autograd and above the backends, so a handler sees
what autograd redispatched: ``aten.addmm.default``, post-decomposition, with the
OpOverload as ``func``.  One boxed fallback serves every operator:

    python_fallback(op, keyset, args, kwargs)
      exclude Autograd + ADInplaceOrView      (AutoDispatchBelowADInplaceOrView: what the
                                              handler calls doesn't record again)
      innermost mode? pop it while it runs    mode.__torch_dispatch__(op, types, args, kwargs)
      else each subclass type in order        cls.__torch_dispatch__(op, types, args, kwargs)
      the first result not NotImplemented wins
"""
from __future__ import annotations

from .._core import dispatch_key as dk
from .._core.tls import state as _tls
from .._tensor import Tensor

__all__ = ["python_fallback", "push_dispatch_mode", "pop_dispatch_mode", "dispatch_types"]

_PYTHON_KEYS = dk.PYTHON | dk.PYTHON_TLS_SNAPSHOT
_BELOW_AUTOGRAD = dk.AUTOGRAD_KEYS | dk.ADINPLACEORVIEW


def push_dispatch_mode(mode) -> None:
    _tls.dispatch_modes = _tls.dispatch_modes + (mode,)
    _tls.included = _tls.included | _PYTHON_KEYS


def pop_dispatch_mode():
    stack = _tls.dispatch_modes
    if not stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    _tls.dispatch_modes = stack[:-1]
    if len(stack) == 1:
        _tls.included = _tls.included & ~_PYTHON_KEYS
    return stack[-1]


def dispatch_types(args, kwargs) -> tuple:
    """The distinct classes with a ``__torch_dispatch__`` among the tensor
    arguments (also inside lists), subclasses before their parents."""
    types = []
    for value in (*args, *kwargs.values()):
        for t in (value if type(value) in (list, tuple) else (value,)):
            cls = type(t)
            if isinstance(t, Tensor) and cls._python_keys and cls not in types:
                index = next((i for i, other in enumerate(types) if issubclass(cls, other)),
                             len(types))
                types.insert(index, cls)
    return tuple(types)


def python_fallback(op, keyset, args, kwargs):
    """The boxed kernel registered at the Python key for every operator."""
    excluded = _tls.excluded
    _tls.excluded = excluded | _BELOW_AUTOGRAD
    try:
        types = dispatch_types(args, kwargs)
        if _tls.dispatch_modes:
            mode = pop_dispatch_mode()
            try:
                result = mode.__torch_dispatch__(op, types, args, kwargs)
            finally:
                push_dispatch_mode(mode)
            if result is not NotImplemented:
                return result
        for cls in types:
            result = cls.__torch_dispatch__(op, types, args, kwargs)
            if result is not NotImplemented:
                return result
    finally:
        _tls.excluded = excluded
    listed = "".join(f"  - tensor subclass {t}\n" for t in types)
    raise TypeError(f"Multiple dispatch failed for 'torch._ops.{op}'; all __torch_dispatch__ "
                    f"handlers returned NotImplemented:\n\n{listed}\n"
                    "For more information, try re-running with TORCH_LOGS=not_implemented")
