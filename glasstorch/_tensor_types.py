"""The legacy tensor types (PyTorch's torch/csrc/tensor/python_tensor.cpp):
``torch.FloatTensor``, ``torch.LongTensor`` ... and ``Tensor.new``.

Each type is a class whose metaclass is ``tensortype``; it is not a subclass of
``Tensor``.  Calling it is the legacy constructor in that dtype::

    torch.FloatTensor(2, 3)      uninitialized, shape (2, 3)
    torch.LongTensor([1, 2])     from data
    isinstance(t, torch.FloatTensor)   t is a float32 strided CPU tensor

``x.type(torch.LongTensor)`` converts (``_creation._type``), and
``torch.set_default_tensor_type(torch.DoubleTensor)`` sets the default dtype.
"""
from __future__ import annotations

import warnings

from ._core import dtype as dt
from ._core.layout import strided
from ._creation import _legacy_new
from ._tensor import Tensor
from ._toplevel import is_warn_always_enabled

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
           "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
           "set_default_tensor_type"]

# c10's names for the dtypes in TensorOptions' printout (the dtype-mismatch error)
_CPP_NAMES = {dt.float32: "float", dt.float64: "double", dt.float16: "c10::Half",
              dt.bfloat16: "c10::BFloat16", dt.uint8: "unsigned char", dt.int8: "signed char",
              dt.int16: "short int", dt.int32: "int", dt.int64: "long int", dt.bool_: "bool"}


def _options(dtype) -> str:
    return (f"TensorOptions(dtype={_CPP_NAMES.get(dtype, dtype._short)}, device=cpu, "
            f"layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            f"memory_format=(nullopt))")


def _construct(dtype, args, kwargs):
    """The legacy constructor in ``dtype``: an existing tensor must
    already have that dtype (it is returned as is, PyTorch's alias)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Tensor) and \
            args[0].dtype is not dtype:
        raise TypeError(f"expected {_options(dtype)} (got {_options(args[0].dtype)})")
    return _legacy_new(Tensor, *args, _dtype=dtype, **kwargs)


class tensortype(type):
    """The metaclass of the legacy types: their dtype, layout, and an
    ``isinstance`` that tests a tensor's dtype, layout and device."""

    dtype = property(lambda cls: cls._dtype)
    layout = property(lambda cls: strided)
    is_cuda = property(lambda cls: False)
    is_sparse = property(lambda cls: False)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls._dtype and \
            obj.layout is strided and obj.device.type == "cpu"

    def __call__(cls, *args, **kwargs):
        return _construct(cls._dtype, args, kwargs)


tensortype.__module__ = "torch"
_TYPES = {}
for _dtype in (dt.float32, dt.float64, dt.float16, dt.bfloat16, dt.uint8, dt.int8, dt.int16,
               dt.int32, dt.int64, dt.bool_):
    _cls = tensortype(f"{_dtype._short}Tensor", (), {"_dtype": _dtype, "__module__": "torch"})
    _TYPES[_cls.__name__] = _cls
    globals()[_cls.__name__] = _cls
del _dtype, _cls


def _new(self, *args, **kwargs):
    """``Tensor.new``: the legacy constructor in this tensor's dtype and device."""
    return _construct(self.dtype, args, kwargs)


_new.__name__ = _new.__qualname__ = "new"


_warned = False


def set_default_tensor_type(t, /) -> None:
    """``torch.set_default_tensor_type`` (deprecated): a floating legacy type, or
    its name, sets the default dtype."""
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module != "torch" or name not in _TYPES:
            raise AttributeError(f"module '{module or name}' has no attribute '{name}'")
        t = _TYPES[name]
    global _warned
    if not _warned or is_warn_always_enabled():     # TORCH_WARN_ONCE
        _warned = True
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives. (Triggered internally at /__w/pytorch/pytorch/torch/csrc/"
                      "tensor/python_tensor.cpp:434.)", UserWarning, stacklevel=2)
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if t.dtype.category != dt.FLOATING:
        raise TypeError("only floating-point types are supported as the default type")
    dt.set_default_dtype(t.dtype)


Tensor.new = _new
