"""``__torch_function__``: the override protocol that runs *before* the dispatcher.

PyTorch checks every public callable's arguments in C++
(torch/csrc/utils/python_arg_parser.cpp, ``handle_torch_function``) and, in
Python functions, with ``has_torch_function`` (torch/overrides.py).  When an
argument's type defines a live ``__torch_function__``, or a TorchFunctionMode
is active, the call is handed to Python instead of running:

    public(*args)                             torch.add, Tensor.add, F.relu, Tensor.shape.__get__
      has_torch_function(args)?               modes on the thread's stack, or an argument
                                              whose type overrides (Parameter opts out)
      handle_torch_function(public, args)
        innermost mode (popped while it runs) mode.__torch_function__(public, types, args, kwargs)
        then each overriding type in order   subclasses before their parents, else left to right
        the first result not NotImplemented wins

``Tensor.__torch_function__`` (the default, in ``_tensor.py``) runs the
function with subclass handling off and converts tensor results to the
subclass.  Nothing here is paid until an override can exist
(``_core.tls.overrides.on``), except for tensor-like objects that are not
Tensors: a generated binding looks for them only once its arguments failed
to parse (they never parse as tensors), a Python-defined function on entry.
"""
from __future__ import annotations

import functools
import warnings

from .._core.tls import state as _tls, overrides as _overrides, ALL_DISABLED, SUBCLASSES_DISABLED
from .._tensor import Tensor, _disabled_torch_function_impl

__all__ = ["has_torch_function", "foreign_override", "handle_torch_function", "overridable", "overridable_property",
           "overloaded_args", "push_function_mode", "pop_function_mode",
           "install_tensor_overrides", "install_module_overrides"]

_PLAIN = frozenset((Tensor, int, float, bool, complex, str, type(None)))


def _overrides_type(t) -> bool:
    """Does an argument of type ``t`` take part (python_arg_parser's check)?"""
    if t in _PLAIN:
        return False
    handler = getattr(t, "__torch_function__", None)
    return handler is not None and \
        getattr(handler, "__func__", handler) is not _disabled_torch_function_impl


def _candidates(args, kwargs):
    for a in args:
        yield a
        if type(a) is list or type(a) is tuple:
            yield from a
    if kwargs:
        for a in kwargs.values():
            yield a
            if type(a) is list or type(a) is tuple:
                yield from a


def foreign_override(args, kwargs) -> bool:
    """Is an argument a non-Tensor whose type defines ``__torch_function__``?
    (Such objects can't turn the switch on: nothing sees them made.)"""
    for a in _candidates(args, kwargs):
        t = type(a)
        if t not in _PLAIN and not isinstance(a, Tensor) and \
                getattr(t, "__torch_function__", None) is not None:
            return True
    return False


def has_torch_function(args, kwargs=None) -> bool:
    """Would a call with these arguments be handed to ``__torch_function__``?"""
    state = _tls.torch_function
    if state == ALL_DISABLED:
        return False
    if _tls.function_modes:
        return True
    if state == SUBCLASSES_DISABLED:
        return False
    return any(_overrides_type(type(a)) for a in _candidates(args, kwargs))


def overloaded_args(relevant, plain_tensors=False) -> list:
    """One argument per overriding type, subclasses before their parents,
    otherwise in argument order (torch.overrides._get_overloaded_args).  Python-
    level functions also count plain tensors (``plain_tensors``), as torch's
    Python helper does; the C++ parser skips them."""
    if _tls.torch_function != 0:
        return []
    found, types = [], []
    for arg in relevant:
        t = type(arg)
        if t in types or not (_overrides_type(t) or (plain_tensors and t is Tensor)):
            continue
        index = len(found)
        for i, other in enumerate(types):
            if issubclass(t, other):
                index = i
                break
        found.insert(index, arg)
        types.insert(index, t)
    return found


def _qualified_name(func) -> str:
    name = getattr(func, "__name__", repr(func))
    if vars(Tensor).get(name) is func:
        return f"torch.Tensor.{name}"
    module = getattr(func, "__module__", None) or "torch"
    return f"{module}.{getattr(func, '__qualname__', name)}"


def handle_torch_function(public_api, relevant_args, *args, _python_level=False, **kwargs):
    """Hand a call to the active mode and the overriding types, in PyTorch's order."""
    overloaded = overloaded_args(_candidates(relevant_args, None), _python_level)
    types = tuple(type(a) for a in overloaded)
    if _tls.function_modes and _tls.torch_function != ALL_DISABLED:
        mode = pop_function_mode()
        try:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        finally:
            push_function_mode(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        handler = arg.__torch_function__
        if getattr(handler, "__self__", None) is arg:
            warnings.warn("Defining your `__torch_function__` as a plain method is deprecated "
                          "and will be an error in future, please define it as a classmethod.")
        result = handler(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    listed = "".join(f"  - tensor subclass {t}\n" for t in types)
    raise TypeError(f"Multiple dispatch failed for '{_qualified_name(public_api)}'; all "
                    f"__torch_function__ handlers returned NotImplemented:\n\n{listed}\n"
                    "For more information, try re-running with TORCH_LOGS=not_implemented")


def overridable(fn, name=None, python_level=True):
    """Wrap a Python-defined public function (as torch's ``has_torch_function``
    preambles do): overrides see the wrapper, named ``name``, as ``func``.
    ``python_level=False`` for what torch implements in C++ (the handler then
    gets no plain ``Tensor`` in ``types``)."""
    @functools.wraps(fn)
    def public(*args, **kwargs):
        if (_overrides.on or foreign_override(args, kwargs)) and has_torch_function(args, kwargs):
            return handle_torch_function(public, args + tuple(kwargs.values()), *args,
                                         _python_level=python_level, **kwargs)
        return fn(*args, **kwargs)
    if name is not None:
        public.__name__ = public.__qualname__ = name
    return public


def overridable_property(prop: property) -> property:
    """The same property, its getter routed through the protocol: overrides see
    ``Tensor.shape.__get__`` (named ``__get__``) as ``func``."""
    getter = prop.fget

    def get(self):
        if _overrides.on and (type(self) is not Tensor or _tls.function_modes) \
                and has_torch_function((self,)):
            return handle_torch_function(wrapped.__get__, (self,), self, _python_level=True)
        return getter(self)
    wrapped = property(get, prop.fset, prop.fdel, prop.__doc__)
    return wrapped


# Tensor methods defined in Python that take part, besides every public name.
_OVERRIDABLE_DUNDERS = ("__repr__", "__format__", "__len__", "__iter__", "__getitem__",
                        "__setitem__", "__array__", "__contains__", "__reversed__",
                        "__deepcopy__", "__reduce_ex__", "__bool__", "__float__", "__int__",
                        "__index__", "__complex__")
_NOT_OVERRIDABLE = ("as_subclass",)
# Those torch defines in Python (torch/_tensor.py): their handlers also list plain
# tensors in ``types``; the rest are C++ methods there.
_PYTHON_LEVEL_METHODS = frozenset((
    "__repr__", "__format__", "__len__", "__iter__", "__array__", "__contains__",
    "__reversed__", "__deepcopy__", "__reduce_ex__", "backward", "register_hook",
    "register_post_accumulate_grad_hook", "storage", "split", "unique", "unique_consecutive",
    "norm", "unflatten", "stft", "istft", "lu", "is_shared", "share_memory_", "__rsub__",
    "__rpow__", "__rfloordiv__", "__rmatmul__", "__rlshift__", "__rrshift__"))


def install_tensor_overrides() -> None:
    """Route every Python-defined Tensor method and property through the protocol
    (the generated op methods check for themselves, see ``registry._make_public``)."""
    for name, value in list(vars(Tensor).items()):
        if name in _NOT_OVERRIDABLE or (name.startswith("_") and name not in _OVERRIDABLE_DUNDERS):
            continue
        if isinstance(value, property):
            setattr(Tensor, name, overridable_property(value))
        elif callable(value) and hasattr(value, "__code__") and not hasattr(value, "_signatures"):
            setattr(Tensor, name, overridable(value, name, name in _PYTHON_LEVEL_METHODS))


def install_module_overrides(module, namespaces=(), names=None, python_level=True) -> None:
    """Rebind the public functions ``module`` defines (or just ``names``) to
    overridable wrappers, in the module and wherever ``namespaces`` (module
    dicts) re-export them."""
    for name, fn in list(vars(module).items()):
        if name.startswith("_") or getattr(fn, "__module__", None) != module.__name__ or \
                not hasattr(fn, "__code__") or hasattr(fn, "_signatures") or \
                (names is not None and name not in names):
            continue
        wrapper = overridable(fn, fn.__name__, python_level)     # an alias keeps its name
        setattr(module, name, wrapper)
        for namespace in namespaces:
            if namespace.get(name) is fn:
                namespace[name] = wrapper


# -- the mode stack ------------------------------------------------------------------

def push_function_mode(mode) -> None:
    _tls.function_modes = _tls.function_modes + (mode,)
    _overrides.modes += 1
    _overrides.refresh()


def pop_function_mode():
    stack = _tls.function_modes
    if not stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    _tls.function_modes = stack[:-1]
    _overrides.modes -= 1
    _overrides.refresh()
    return stack[-1]
