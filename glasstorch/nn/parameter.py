"""``torch.nn.parameter``: Parameter, Buffer and UninitializedParameter.

A Parameter is a Tensor subclass that a Module registers when it is assigned
as an attribute; a Buffer marks a tensor that assigning registers as a buffer.
Ops on a Parameter return plain Tensors (the kernels build ``Tensor``
outputs), as PyTorch's disabled ``__torch_function__`` makes them do.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict

from .. import _utils
from .._tensor import Tensor, _disabled_torch_function_impl

__all__ = ["Parameter", "UninitializedParameter", "UninitializedBuffer", "is_lazy", "Buffer",
           "UninitializedTensorMixin"]


def _empty():
    from .. import empty
    return empty(0)


class _ParameterMeta(type):
    """``isinstance(t, Parameter)`` is also true for custom tensor subclasses
    made parameters (they carry ``_is_param``, not the Parameter class)."""

    def __instancecheck__(cls, instance) -> bool:
        if type.__instancecheck__(cls, instance):
            return True
        # (a plain Tensor has no attribute dict: skip the lookup)
        return (cls is Parameter and type(instance) is not Tensor and isinstance(instance, Tensor)
                and getattr(instance, "_is_param", False))


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A tensor that Modules register as a parameter when it is assigned as an
    attribute.  ``requires_grad`` defaults to True, even under ``no_grad``."""

    # ops on a Parameter return plain Tensors, and it takes no part in the protocol
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _empty()
        if type(data) is Tensor or type(data) is Parameter:
            return Tensor._make_subclass(cls, data, requires_grad)
        # a custom tensor subclass stays its own type, flagged as a parameter
        t = data.detach().requires_grad_(requires_grad)
        if type(t) is not type(data):
            raise RuntimeError(
                f"Creating a Parameter from an instance of type {type(data).__name__} requires "
                "that detach() returns an instance of the same type, but return type "
                f"{type(t).__name__} was found instead. To use the type as a Parameter, please "
                "correct the detach() semantics defined by its __torch_dispatch__() "
                "implementation.")
        t._is_param = True
        return t

    def __deepcopy__(self, memo):
        """A fresh parameter over cloned values (the grad is not copied)."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        """Pickles as ``torch._utils._rebuild_parameter(data, requires_grad, hooks)``
        (hooks are never saved)."""
        state = _utils._get_obj_state(self)
        if not state:
            return _utils._rebuild_parameter, (self.data, self.requires_grad, OrderedDict())
        return (_utils._rebuild_parameter_with_state,
                (self.data, self.requires_grad, OrderedDict(), state))


# -- Buffer ------------------------------------------------------------------------------
# PyTorch's Buffer(...) returns a plain Tensor carrying two attributes (``_is_buffer``,
# ``persistent``).  Our Tensor has fixed slots, so the marks live in a side table keyed
# by id and dropped when the tensor dies.

_buffer_marks: dict = {}   # id(tensor) -> (weakref to the tensor, persistent)


def _buffer_mark(tensor):
    """``(ref, persistent)`` if ``tensor`` was made by ``Buffer(...)``, else None."""
    mark = _buffer_marks.get(id(tensor))
    if mark is not None and mark[0]() is tensor:
        return mark
    return None


def _forget_buffer(key):
    return lambda _ref: _buffer_marks.pop(key, None)


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` is true for the tensors ``Buffer(...)`` returned."""

    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and _buffer_mark(instance) is not None
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor that Modules register as a buffer when it is assigned as an
    attribute; ``persistent=False`` keeps it out of the ``state_dict``.
    ``Buffer(data)`` returns a plain Tensor (a detached alias of ``data``)."""

    __torch_function__ = _disabled_torch_function_impl   # never instantiated

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _empty()
        t = data.detach().requires_grad_(data.requires_grad)
        key = id(t)
        _buffer_marks[key] = (weakref.ref(t, _forget_buffer(key)), bool(persistent))
        return t


def _buffer_persistent(tensor) -> bool:
    """The ``persistent`` flag given to ``Buffer(...)``."""
    return _buffer_mark(tensor)[1]


# -- lazy (uninitialized) tensors ---------------------------------------------------------

class UninitializedTensorMixin:
    """A tensor whose shape is not known yet; ``materialize(shape)`` turns it
    into a real Parameter or Tensor (used by the Lazy* modules)."""

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None) -> None:
        from .. import empty
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param) -> bool:
    """True for an UninitializedParameter/UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is decided on the first forward of a Lazy module."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from .. import empty
        data = empty(0, device=device, dtype=dtype)
        return Tensor._make_subclass(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is decided on the first forward of a Lazy module
    (it becomes a plain Tensor)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from .. import empty
        ret = Tensor._make_subclass(cls, empty(0, device=device, dtype=dtype), requires_grad)
        ret.persistent = persistent
        return ret
