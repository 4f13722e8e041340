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
from .._tensor import Tensor, wrapped_numbers
from .dispatcher import function_range

__all__ = ["python_fallback", "push_dispatch_mode", "pop_dispatch_mode", "dispatch_types"]

_PYTHON_KEYS = dk.PYTHON | dk.PYTHON_TLS_SNAPSHOT
_BELOW_AUTOGRAD = dk.AUTOGRAD_KEYS | dk.ADINPLACEORVIEW


def push_dispatch_mode(mode) -> None:
    """Push ``mode``; an infrastructure mode (FakeTensorMode: ``is_infra_mode()``)
    goes below every user mode, so user modes always see ops first."""
    stack = _tls.dispatch_modes
    if getattr(mode, "is_infra_mode", None) is not None and mode.is_infra_mode():
        users = sum(1 for m in stack if not m.is_infra_mode())
        stack = stack[:len(stack) - users] + (mode,) + stack[len(stack) - users:]
    else:
        stack = stack + (mode,)
    _set_stack(stack)


def pop_dispatch_mode(mode=None):
    """Remove ``mode`` (the innermost one when not given) and return it."""
    stack = _tls.dispatch_modes
    if not stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    index = len(stack) - 1 if mode is None else \
        max(i for i, m in enumerate(stack) if m is mode)
    _set_stack(stack[:index] + stack[index + 1:])
    return stack[index]


def _set_stack(stack) -> None:
    _tls.dispatch_modes = stack
    _tls.included = (_tls.included | _PYTHON_KEYS) if stack else (_tls.included & ~_PYTHON_KEYS)


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
    excluded, stack = _tls.excluded, _tls.dispatch_modes
    _tls.excluded = excluded | _BELOW_AUTOGRAD
    try:
        types = dispatch_types(args, kwargs)
        args, kwargs = _without_defaults(op, tuple(_as_python_number(a) for a in args), kwargs)
        if stack:
            mode = stack[-1]
            _set_stack(stack[:-1])          # popped while its handler runs
            try:
                rule = _torch_dispatch_rule(op, type(mode))
                with function_range("PythonDispatchMode", args):
                    result = rule(mode, op, types, args, kwargs) if rule is not None else \
                        mode.__torch_dispatch__(op, types, args, kwargs)
            finally:
                _set_stack(stack)
            if result is not NotImplemented:
                return result
        for cls in types:
            rule = _torch_dispatch_rule(op, cls)
            with function_range("PythonSubclass", args):
                result = rule(cls, op, types, args, kwargs) if rule is not None else \
                    cls.__torch_dispatch__(op, types, args, kwargs)
            if result is not NotImplemented:
                return result
    finally:
        _tls.excluded = excluded
    listed = "".join(f"  - tensor subclass {t}\n" for t in types)
    raise TypeError(f"Multiple dispatch failed for 'torch._ops.{op}'; all __torch_dispatch__ "
                    f"handlers returned NotImplemented:\n\n{listed}\n"
                    "For more information, try re-running with TORCH_LOGS=not_implemented")


def _without_defaults(op, args: tuple, kwargs: dict):
    """The call as PyTorch hands it to Python (torch's parseIValuesToPyArgsKwargs):
    trailing positional arguments and keyword-only ones that equal their schema
    defaults are left out, however the caller spelled them, and lists are lists."""
    defaults = _DEFAULTS.get(op)
    if defaults is None:
        defaults = _DEFAULTS[op] = _schema_defaults(op._schema)
    positional, first_default, list_positions, keyword_only = defaults
    for i in list_positions:        # an int[] given as a tuple arrives as a list
        if i < len(args) and type(args[i]) is tuple:
            args = args[:i] + (list(args[i]),) + args[i + 1:]
    end = len(args)
    while first_default < end <= len(positional) and _is_default(args[end - 1],
                                                                 positional[end - 1]):
        end -= 1
    if kwargs:
        kwargs = {k: list(v) if type(v) is tuple else v for k, v in kwargs.items()
                  if k not in keyword_only or not _is_default(v, keyword_only[k])}
    return (args if end == len(args) else args[:end]), kwargs


_NO_DEFAULT = object()
_DEFAULTS: dict = {}


def _schema_defaults(schema):
    """Per operator, once: (each positional argument's default or _NO_DEFAULT,
    the index from which they all have one, the positions of list arguments,
    {keyword-only name: default})."""
    positional, list_positions, keyword_only = [], [], {}
    for arg in schema.arguments:
        default = arg.default_value if arg.has_default_value() else _NO_DEFAULT
        if arg.kwarg_only:
            if default is not _NO_DEFAULT:
                keyword_only[arg.name] = default
        else:
            if arg.type.is_list:
                list_positions.append(len(positional))
            positional.append(default)
    first_default = len(positional)
    while first_default and positional[first_default - 1] is not _NO_DEFAULT:
        first_default -= 1
    return positional, first_default, tuple(list_positions), keyword_only


def _is_default(value, default) -> bool:
    if default is None or default is _NO_DEFAULT:
        return value is default
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple)) and list(value) == list(default)
    return type(value) is type(default) and value == default


def _as_python_number(value):
    """A wrapped number (``x * 2``'s 2 saved for backward) reaches handlers as the
    Python number it stands for, as in PyTorch."""
    if value.__class__ is Tensor and not value._shape:
        number = wrapped_numbers.get(id(value), _NOT_WRAPPED)
        if number is not _NOT_WRAPPED:
            return number
    return value


_NOT_WRAPPED = object()


def _torch_dispatch_rule(op, cls):
    """A rule ``torch.library.register_torch_dispatch`` gave ``op`` for ``cls``."""
    from .._library.simple_registry import find_torch_dispatch_rule
    return find_torch_dispatch_rule(op, cls)
