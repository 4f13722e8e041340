"""Grad modes (torch/autograd/grad_mode.py over c10's GradMode and InferenceMode).

``no_grad``/``enable_grad``/``set_grad_enabled`` flip one thread-local flag that
the autograd kernels read: the Autograd key still dispatches, the kernel just
records nothing.  ``inference_mode`` instead changes the thread's dispatch key
sets (Autograd keys excluded, ADInplaceOrView no longer included), so those
kernels are never entered at all, and tensors made inside are inference
tensors (no autograd keys, no version counter).  That difference is why
inference_mode is the faster of the two.
"""
from __future__ import annotations

import functools
import inspect
import warnings

from .._core import dispatch_key as dk
from .._core.tls import state as _tls

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled"]


def is_grad_enabled() -> bool:
    return _tls.grad_enabled


def is_inference_mode_enabled() -> bool:
    return _tls.inference_mode


class _DecoratorContextManager:
    """A context manager that also decorates functions, entering a fresh copy
    of itself around each call; a generator function gets the mode around each
    of its steps only, as in PyTorch."""

    def __call__(self, func):
        if inspect.isclass(func):
            warnings.warn("Decorating classes is deprecated and will be disabled in future "
                          "versions. You should only decorate functions or methods. To preserve "
                          "the current behavior of class decoration, you can directly decorate "
                          "the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return decorated

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:      # the wrapped generator returned
                return stop.value
        return generator

    def clone(self):
        return self.__class__()


class _NoParamDecorator(_DecoratorContextManager):
    """Allows ``@torch.no_grad`` without parentheses."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator):
    """Ops record no graph inside (outputs don't require grad); keys are unchanged."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _tls.grad_enabled
        _tls.grad_enabled = False

    def __exit__(self, *exc) -> None:
        _tls.grad_enabled = self.prev


class enable_grad(_NoParamDecorator):
    """Turns recording back on inside ``no_grad``."""

    def __enter__(self) -> None:
        self.prev = _tls.grad_enabled
        _tls.grad_enabled = True

    def __exit__(self, *exc) -> None:
        _tls.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on construction (so it works as a plain call), restores it
    on exit when used as a context manager."""

    def __init__(self, mode: bool) -> None:
        if type(mode) is not bool:          # torch._C._set_grad_enabled parses a strict bool
            kind = type(mode)   # C types print dotted (numpy.bool), Python classes bare
            name = f"{kind.__module__}.{kind.__name__}" if kind.__module__ == "numpy" else \
                kind.__name__
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {name}")
        self.prev = _tls.grad_enabled
        self.mode = mode
        _tls.grad_enabled = self.mode

    def __call__(self, func):
        _tls.grad_enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _tls.grad_enabled = self.mode

    def __exit__(self, *exc) -> None:
        _tls.grad_enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


# The keys inference mode takes out of dispatch (c10::autograd_dispatch_keyset:
# AutogradFunctionality, AutogradOther, AutogradNestedTensor).
_AUTOGRAD_FUNCTIONALITY_KEYS = dk.AUTOGRAD_KEYS | dk.AUTOGRAD_FUNCTIONALITY


class inference_mode(_DecoratorContextManager):
    """``torch.inference_mode(mode=True)``: the Autograd keys are excluded and
    ADInplaceOrView is no longer included, grad mode is off, and new tensors are
    inference tensors.  ``inference_mode(False)`` nested inside restores normal
    dispatch and turns grad mode on (it does not restore the outer value)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self.saved = (_tls.grad_enabled, _tls.inference_mode, _tls.included, _tls.excluded)
        if self.mode:
            _tls.included &= ~dk.ADINPLACEORVIEW
            _tls.excluded |= _AUTOGRAD_FUNCTIONALITY_KEYS
            _tls.grad_enabled = False
        else:
            _tls.included |= dk.ADINPLACEORVIEW
            _tls.excluded &= ~_AUTOGRAD_FUNCTIONALITY_KEYS
            _tls.grad_enabled = True
        _tls.inference_mode = self.mode

    def __exit__(self, *exc) -> None:
        _tls.grad_enabled, _tls.inference_mode, _tls.included, _tls.excluded = self.saved

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """Accepted for compatibility: glasstorch's engine runs CPU work on the
    calling thread, as PyTorch does for CPU-only graphs."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        pass

    def clone(self):
        return self.__class__(self.mode)


class enforce_grad_layout_policy(_DecoratorContextManager):
    """Whether AccumulateGrad keeps the gradient layout contract when it steals
    an incoming gradient for ``.grad``: with ``False`` a stealable gradient is
    stored as it is, whatever its strides (a gradient it must copy is still
    laid out like the parameter).  Thread-local; a plain call sets it."""

    def __init__(self, enable: bool = True) -> None:
        self.prev = _tls.grad_layout_enforced
        self.enable = enable
        _tls.grad_layout_enforced = enable

    def __call__(self, func):
        _tls.grad_layout_enforced = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _tls.grad_layout_enforced = self.enable

    def __exit__(self, *exc) -> None:
        _tls.grad_layout_enforced = self.prev

    def clone(self):
        return self.__class__(self.enable)
