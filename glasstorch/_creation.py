"""Tensors from Python data and numpy, and the Tensor methods that convert
(torch/csrc/utils/tensor_new.cpp, python_variable_methods.cpp).

``torch.tensor`` infers a dtype the way PyTorch does (``promote_types`` over
every leaf: bool, int -> int64, float -> default dtype, complex -> default
complex, numpy scalars/arrays and tensors keep theirs), copies the data into
fresh storage from the allocator, and runs no operator, as in PyTorch.
``from_numpy`` and ``as_tensor`` share the array's memory.

This module also binds what PyTorch binds by hand rather than from the op
declarations: ``Tensor.to``'s three signatures, ``type``, ``float()`` and the
other dtype shortcuts, ``cpu``/``cuda``, ``contiguous`` (no dispatch for an
already contiguous tensor), ``item``-based Python conversions
(``__bool__``, ``__float__``, ``__int__``, ``__index__``, ``__complex__``),
the legacy constructor ``torch.Tensor(...)``, and the ``requires_grad=``
keyword of factory functions.
"""
from __future__ import annotations

import sys
import threading
import warnings

import numpy as np

from ._core import dispatch_key as dk
from ._core import dtype as dt
from ._core.device import device as Device
from ._core import tls
from ._core.tls import overrides as _overrides, state as _tls
from ._core.layout import contiguous_format, memory_format as _MemoryFormat, preserve_format
from ._core.layout import strided
from ._core.storage import TypedStorage, UntypedStorage
from ._dispatcher import binding as _binding
from ._dispatcher import torch_function as _torch_function
from ._dispatcher.dispatcher import ops
from ._ops import registry as _registry
from ._ops.kernels._inner import observed
from ._ops.structured import convert_array
from ._ops.structured import empty_tensor
from ._tensor import Tensor, Size, keys_for_device

_FACTORIES = ["empty", "empty_strided", "empty_like", "zeros", "zeros_like", "ones", "ones_like",
              "full", "full_like", "arange", "linspace", "logspace", "eye", "scalar_tensor",
              "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
              "normal", "hann_window", "hamming_window", "bartlett_window", "blackman_window",
              "kaiser_window", "from_file", "empty_permuted", "tril_indices", "triu_indices"]

__all__ = ["nonzero", "conj", "tensor", "from_numpy", "as_tensor", "is_tensor", "is_storage", "typename", "numel",
           "is_floating_point", "is_complex", "is_nonzero", "get_default_device",
           "set_default_device"] + _FACTORIES

_CPU = Device("cpu")


def _lift_fresh(t):
    """``at::lift_fresh``: only a dispatch mode or subclass can observe it, so
    it is dispatched only when one might be listening."""
    return ops.aten.lift_fresh.default(t) if tls.state.dispatch_modes else t


# -- torch.tensor --------------------------------------------------------------------

def _is_sequence(x):
    return isinstance(x, (list, tuple)) or (isinstance(x, Tensor) and x.dim() > 0) or \
        (isinstance(x, np.ndarray) and x.ndim > 0)


def _numpy_dtype(np_dtype):
    """The dtype of a numpy array's elements, or torch/csrc/utils/tensor_numpy.cpp's
    TypeError naming the numpy scalar type (``numpy.object_``) it cannot hold."""
    d = dt.FROM_NUMPY.get(np_dtype)
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The "
                        "only supported types are: float64, float32, float16, complex64, "
                        "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                        "and bool.")
    return d


def _leaf_dtype(x):
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return _numpy_dtype(x.dtype)
    if isinstance(x, (bool, int, float, complex)):
        return dt.scalar_dtype(x)
    if isinstance(x, str):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _infer_dtype(data):
    """PyTorch's infer_scalar_type: promote_types over all leaves; an empty
    sequence is the default dtype; complex128 ends the search."""
    if isinstance(data, (list, tuple)):
        if not data:
            return dt.get_default_dtype()
        if isinstance(data[0], str):
            _compute_sizes(data)        # PyTorch measures first: "too many dimensions 'str'"
        best = None
        for x in data:
            d = _infer_dtype(x)
            best = d if best is None else dt.promote_types(best, d)
            if best is dt.complex128:
                break
        return best
    return _leaf_dtype(data)


def _compute_sizes(data):
    sizes = []
    x = data
    while _is_sequence(x):
        n = len(x)
        sizes.append(n)
        if n == 0:
            break
        if isinstance(x, (Tensor, np.ndarray)):
            sizes.extend(x.shape[1:])
            break
        x = x[0]
    if sizes and isinstance(x, str):   # a str is a sequence to PyTorch, without end
        raise ValueError("too many dimensions 'str'")
    return sizes


def _fill(data, sizes, dim, out: list):
    """Flatten ``data`` into ``out`` (numpy pieces and scalars), checking sizes."""
    if isinstance(data, Tensor) and dim > 0 and data.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    if isinstance(data, (Tensor, np.ndarray)):
        arr = data._cpu_array() if isinstance(data, Tensor) else data
        if tuple(arr.shape) != tuple(sizes[dim:]):
            got = arr.shape[0] if arr.ndim else 0
            raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {got})")
        out.append(np.asarray(arr).reshape(-1))
        return
    if dim == len(sizes):
        if isinstance(data, (list, tuple)):
            raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as an integer")
        out.append(data)
        return
    if not isinstance(data, (list, tuple)):
        raise TypeError("not a sequence")
    if len(data) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(data)})")
    for x in data:
        _fill(x, sizes, dim + 1, out)


def _checked_integer(v, dtype) -> int:
    """A Python number stored into an integer ``dtype`` other than uint64, checked as
    PyTorch checks it: ints must fit int64 (they are unpacked as C long long), then
    the value must fit the type (c10's checked_convert; unsigned types also take
    negatives down to -max, which wrap)."""
    if isinstance(v, complex):
        v = v.real
    if isinstance(v, int) and not -(1 << 63) <= v < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    info = np.iinfo(dtype.numpy)
    if not (-info.max if info.min == 0 else info.min) <= v <= info.max:   # (NaN fails too)
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")
    return int(v)


def _unsigned_long_long(v) -> int:
    """A Python number stored into uint64: an int in [0, 2**64) (C unsigned long long)."""
    if not isinstance(v, int):
        raise TypeError("an integer is required")
    if v < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if v >= 1 << 64:
        raise OverflowError("int too big to convert")
    return v


def _python_leaf_array(values, dtype):
    """A flat list of Python scalars -> numpy, converted as PyTorch stores them."""
    if dtype.category == dt.COMPLEX:
        return np.array([complex(v) for v in values], dtype=dtype.numpy)
    if dtype is dt.bool_:
        return np.array([bool(v) for v in values], dtype=np.bool_)
    if dtype is dt.uint64:
        return np.array([_unsigned_long_long(v) for v in values], dtype=np.uint64)
    if dtype.category == dt.INTEGRAL:
        return convert_array(np.array([_checked_integer(v, dtype) for v in values],
                                      dtype=np.int64), dt.int64, dtype)
    floats = []
    for v in values:
        if isinstance(v, complex):
            raise TypeError("must be real number, not complex")
        floats.append(float(v))
    return convert_array(np.array(floats, dtype=np.float64), dt.float64, dtype)


def _data_to_array(data, dtype):
    """``data`` as a numpy array of ``dtype`` (always a fresh copy)."""
    if isinstance(data, Tensor):
        return convert_array(data._cpu_array(), data.dtype, dtype).copy()
    if isinstance(data, np.ndarray):
        _leaf_dtype(data)
        return convert_array(data, dt.FROM_NUMPY[data.dtype], dtype).copy()
    if isinstance(data, np.generic):
        return convert_array(np.asarray(data), _leaf_dtype(data), dtype).copy()
    if not isinstance(data, (list, tuple)):
        if isinstance(data, (bool, int, float, complex)):
            return _python_leaf_array([data], dtype).reshape(())
        _leaf_dtype(data)
    sizes = _compute_sizes(data)
    pieces: list = []
    _fill(data, sizes, 0, pieces)
    if all(not isinstance(p, np.ndarray) for p in pieces):
        for p in pieces:
            if not isinstance(p, (bool, int, float, complex, np.generic)):
                _leaf_dtype(p)
        flat = _python_leaf_array([p.item() if isinstance(p, np.generic) else p
                                   for p in pieces], dtype)
    else:
        parts = []
        for p in pieces:
            if isinstance(p, np.ndarray):
                parts.append(convert_array(p, dt.FROM_NUMPY[p.dtype], dtype).reshape(-1))
            elif isinstance(p, np.generic):
                parts.append(convert_array(np.asarray(p).reshape(1), dt.FROM_NUMPY[p.dtype],
                                           dtype))
            else:
                parts.append(_python_leaf_array([p], dtype))
        flat = np.concatenate(parts) if parts else np.empty((0,), dtype.numpy)
    return flat.reshape(sizes)


def _target_device(device):
    return Device(device) if device is not None else (tls.default_device() or _CPU)


def _on_device(out, device):
    if device.type != "cpu":
        out = ops.aten._to_copy.default(out, device=device)
    return out


def _new_from_data_dispatched(values, dtype, device):
    """What PyTorch's internal_new_from_data dispatches, for an observer (the
    profiler): ``empty`` (then filled) and ``to`` the device, below autograd
    and the Python key, so a dispatch mode sees neither; then ``lift_fresh``.
    A meta tensor is only ``empty`` (no data to copy)."""
    with tls.exclude_keys(dk.AUTOGRAD_KEYS | dk.ADINPLACEORVIEW | dk.PYTHON
                          | dk.PYTHON_TLS_SNAPSHOT):
        if device.type == "meta":
            return ops.aten.empty.memory_format(list(values.shape), dtype=dtype, device=device)
        out = ops.aten.empty.memory_format(list(values.shape), dtype=dtype, device=_CPU)
        if values.size:
            out._np()[...] = values
        out = ops.aten.to.device(out, device, dtype)
    return ops.aten.lift_fresh.default(out)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """``torch.tensor``: always copies."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    dtype = _dtype_argument("tensor", dtype) if dtype is not None else _infer_dtype(data)
    target = _target_device(device)
    if isinstance(data, Tensor):    # internal_new_from_data's copy of a tensor, on its device
        out = data.detach().to(data.device if device is None else target, dtype, copy=True)
    elif observed():
        out = _new_from_data_dispatched(_data_to_array(data, dtype), dtype, target)
    elif target.type == "meta":     # no data to copy, nothing lifted
        out = empty_tensor(_data_to_array(data, dtype).shape, dtype, target)
    else:
        values = _data_to_array(data, dtype)
        out = empty_tensor(values.shape, dtype, _CPU)
        if values.size:
            out._np()[...] = values
        out = _lift_fresh(_on_device(out, target))
    if observed():
        out.detach_()   # tensor_ctor's; a fresh tensor has no history, so only an observer sees it
    if requires_grad:
        _check_requires_grad(out)
        out.requires_grad_(True)
    return out


def from_numpy(array: np.ndarray) -> Tensor:
    """``torch.from_numpy``: shares memory with the array (writes show both ways)."""
    if not isinstance(array, np.ndarray):
        kind = type(array)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"expected np.ndarray (got {name})")
    dtype = _numpy_dtype(array.dtype)
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    itemsize = array.itemsize
    if any(s % itemsize for s in array.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    base = array
    while isinstance(base.base, np.ndarray):
        base = base.base
    if not (base.flags.c_contiguous or base.flags.f_contiguous):
        base = array = array.copy()  # an exotic base: sharing is impossible
    # Storage = the whole underlying buffer (external memory: no allocator counts it,
    # as PyTorch's from_numpy wraps memory it did not allocate); the tensor is the
    # array's window on it.
    flat = base.ravel(order="K").view(np.uint8)
    offset = array.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    storage = UntypedStorage._wrap(flat, _CPU, None)
    t = Tensor._make(storage, array.shape, tuple(s // itemsize for s in array.strides),
                     offset // itemsize, dtype, _CPU, keys_for_device("cpu", tls.state.inference_mode))
    t._array = array
    return t


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``torch.as_tensor``: no copy when ``data`` already is a tensor or a numpy
    array with the requested dtype on the requested device."""
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray) and data.dtype in dt.FROM_NUMPY and \
            all(s >= 0 for s in data.strides):
        t = from_numpy(data)
        target = Device(device) if device is not None else tls.default_device()
        return t.to(dtype=dtype, device=target)
    return tensor(data, dtype=dtype, device=device)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def typename(obj) -> str:
    """``torch.typename``: ``torch.FloatTensor`` for tensors, else the qualified type name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_storage(obj) -> bool:
    return isinstance(obj, (UntypedStorage, TypedStorage))


def numel(input) -> int:
    return input.numel()


def is_floating_point(input) -> bool:
    return input.is_floating_point()


def is_complex(input) -> bool:
    return input.is_complex()


def is_nonzero(input) -> bool:
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


# -- default device --------------------------------------------------------------------

_global_default = threading.local()


def set_default_device(device) -> None:
    """``torch.set_default_device``: the bottom of this thread's default-device
    stack (``with torch.device(...)`` blocks push above it)."""
    devices = tls.state.default_devices
    if getattr(_global_default, "set", False):
        devices = devices[1:]
    if device is None:
        _global_default.set = False
        tls.state.default_devices = devices
        return
    device = Device(device)
    if device.type == "cuda" and device.index is None:
        device = Device("cuda", 0)
    tls.state.default_devices = (device,) + devices
    _global_default.set = True


def get_default_device() -> Device:
    return tls.default_device() or _CPU


# -- requires_grad= on factories -----------------------------------------------------

def _check_requires_grad(t):
    if t.dtype.category < dt.FLOATING:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")


_BELOW_AD = dk.AUTOGRAD_KEYS | dk.ADINPLACEORVIEW


def _with_requires_grad(fn, name):
    """Factories take ``requires_grad=`` in Python (it is not in their schemas),
    and run below autograd and ADInplaceOrView (PyTorch's variable_factories:
    the fill_/normal_ a factory does inside is not a user-visible in-place op,
    so a new tensor is at version 0)."""
    def factory(*args, requires_grad=False, **kwargs):
        if any(isinstance(a, Tensor) and a.requires_grad for a in args):
            out = fn(*args, **kwargs)     # normal(mean, std) with tensors: differentiable
        else:
            with tls.exclude_keys(_BELOW_AD):
                out = fn(*args, **kwargs)
        if requires_grad:
            _check_requires_grad(out)
            out.requires_grad_(True)
        return out
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = fn.__doc__
    factory._signatures = getattr(fn, "_signatures", None)
    return factory


for _name in _FACTORIES:
    globals()[_name] = _with_requires_grad(_registry.function(_name), _name)
for _name in ("new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full"):
    setattr(Tensor, _name, _with_requires_grad(getattr(Tensor, _name), _name))
del _name


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
    dtype = dtype if dtype is not None else self.dtype
    values = _data_to_array(data, dtype)
    out = empty_tensor(values.shape, dtype, _CPU)
    if values.size:
        out._np()[...] = values
    out = _lift_fresh(_on_device(out, Device(device) if device is not None else self.device))
    if requires_grad:
        _check_requires_grad(out)
        out.requires_grad_(True)
    return out


# -- Tensor.to and friends -----------------------------------------------------------

def _as_dtype(x):
    try:
        return _binding._conv_dtype(x)
    except _binding._NoMatch:
        return None


def _dtype_argument(fn, dtype):
    """The ``dtype=`` of a Python-level factory, converted as PyTorch's parser does."""
    converted = _as_dtype(dtype)
    if converted is None:
        raise TypeError(f"{fn}(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    return converted


_TO_ERROR = ("to() received an invalid combination of arguments - got ({got}), but expected "
             "one of:\n * (torch.device device = None, torch.dtype dtype = None, bool "
             "non_blocking = False, bool copy = False, *, torch.memory_format memory_format = "
             "None)\n * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
             "torch.memory_format memory_format = None)\n * (Tensor tensor, bool non_blocking = "
             "False, bool copy = False, *, torch.memory_format memory_format = None)\n")


def _to(self, *args, **kwargs):
    """``Tensor.to``: ``to(device=None, dtype=None, non_blocking=False, copy=False)``,
    ``to(dtype, non_blocking=False, copy=False)`` or ``to(tensor, non_blocking=False,
    copy=False)``; ``memory_format=`` keyword in all three."""
    memory_format = kwargs.pop("memory_format", None)
    first = args[0] if args else kwargs.get("other", kwargs.get("tensor"))
    if isinstance(first, Tensor):
        rest = list(args[1:]) if args else []
        kwargs.pop("other", None)
        kwargs.pop("tensor", None)
        non_blocking, copy = _flags(rest, kwargs, args)
        return ops.aten.to.other(self, first, non_blocking, copy, memory_format)
    dtype_first = _as_dtype(args[0]) if args and isinstance(args[0], (dt.dtype, type, np.dtype)) \
        else None
    if dtype_first is not None:
        non_blocking, copy = _flags(list(args[1:]), kwargs, args)
        return ops.aten.to.dtype(self, dtype_first, non_blocking, copy, memory_format)
    rest = list(args)
    device = rest.pop(0) if rest else kwargs.pop("device", None)
    dtype = rest.pop(0) if rest else kwargs.pop("dtype", None)
    non_blocking, copy = _flags(rest, kwargs, args)
    if device is not None:
        if not isinstance(device, (str, Device, int)) or isinstance(device, bool):
            raise TypeError(_TO_ERROR.format(got=_got(args, kwargs)))
        device = Device(device)
    if dtype is not None:
        converted = _as_dtype(dtype)
        if converted is None:
            raise TypeError(_TO_ERROR.format(got=_got(args, kwargs)))
        dtype = converted
    return ops.aten.to.dtype_layout(self, dtype=dtype, device=device, non_blocking=non_blocking,
                                    copy=copy, memory_format=memory_format)


def _flags(rest, kwargs, args):
    non_blocking = rest.pop(0) if rest else kwargs.pop("non_blocking", False)
    copy = rest.pop(0) if rest else kwargs.pop("copy", False)
    if rest or kwargs:
        raise TypeError(_TO_ERROR.format(got=_got(args, kwargs)))
    return bool(non_blocking), bool(copy)


def _got(args, kwargs):
    return ", ".join([_binding._describe_value(a) for a in args] +
                     [f"{k}={_binding._describe_value(v)}" for k, v in kwargs.items()])


_TYPE_PREFIX = {"cpu": "torch.", "cuda": "torch.cuda.", "meta": "torch.meta."}
_BY_TYPE_NAME = {f"{d._short}Tensor": d for d in dt.ALL_DTYPES}


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """``x.type()`` -> 'torch.FloatTensor'; ``x.type(torch.int32)`` / ``x.type('torch.DoubleTensor')``
    convert (returning ``self`` when nothing changes)."""
    if dtype is None:
        prefix = _TYPE_PREFIX.get(self.device.type, f"torch.{self.device.type}.")
        if self.layout is not strided:      # torch.sparse.FloatTensor; compressed: none
            if not self.is_sparse:
                raise RuntimeError(f"Unimplemented backend SparseCsr{self.device.type.upper()}")
            prefix += "sparse."
        return prefix + f"{self.dtype._short}Tensor"
    if isinstance(dtype, str):
        name = dtype
        device = None
        if name.startswith("torch.cuda."):
            device, name = Device("cuda"), name[len("torch.cuda."):]
        elif name.startswith("torch."):
            name = name[len("torch."):]
        else:
            name = None
        target = _BY_TYPE_NAME.get(name) if name else None
        if target is None:
            raise ValueError(f"invalid type: '{dtype}'")
        if device is not None:
            from . import cuda
            cuda._lazy_init()
        return self.to(dtype=target, non_blocking=non_blocking)
    target = getattr(dtype, "_dtype", None) if isinstance(dtype, type) else _as_dtype(dtype)
    if target is None:     # (a legacy type such as torch.LongTensor has its ``_dtype``)
        raise TypeError(f"type() received an invalid combination of arguments - got "
                        f"({type(dtype).__name__})")
    return self.to(target, non_blocking)


def _make_cast(dtype):
    def cast(self, memory_format=preserve_format):
        return ops.aten.to.dtype(self, dtype, False, False,
                                 None if memory_format is preserve_format else memory_format)
    cast.__name__ = cast.__qualname__ = dtype.name
    cast.__doc__ = f"``self.to({dtype})``"
    return cast


_CASTS = {"float": dt.float32, "double": dt.float64, "half": dt.float16, "bfloat16": dt.bfloat16,
          "int": dt.int32, "long": dt.int64, "short": dt.int16, "char": dt.int8, "byte": dt.uint8,
          "bool": dt.bool_, "cfloat": dt.complex64, "cdouble": dt.complex128}


def _cpu(self, memory_format=preserve_format):
    return self.to("cpu", memory_format=None if memory_format is preserve_format
                   else memory_format)


_dispatch_contiguous = Tensor.contiguous     # the binding generated from the declaration


def _contiguous(self, *args, **kwargs):
    """``Tensor.contiguous``: an already contiguous tensor comes back itself
    with no op dispatched (PyTorch's hand-written binding checks first, so the
    profiler shows no ``aten::contiguous``); otherwise the op."""
    fmt = kwargs.get("memory_format", contiguous_format)
    overridable = _overrides.on and (type(self) is not Tensor or _tls.function_modes)
    if not overridable and not args and len(kwargs) <= ("memory_format" in kwargs) and \
            isinstance(fmt, _MemoryFormat) and fmt is not preserve_format and \
            self.is_contiguous(memory_format=fmt):
        return self
    return _dispatch_contiguous(self, *args, **kwargs)


_contiguous.__name__ = _contiguous.__qualname__ = "contiguous"
_contiguous._signatures = _dispatch_contiguous._signatures   # the binding checks overrides


def _real_is_own_conj(binding):
    """``conj`` (function and method): a real tensor is its own conjugate and
    comes back itself with no op dispatched, as PyTorch's inline
    ``Tensor::conj`` does (no ``aten::conj`` in the profiler, nor in the
    backward of formulas that conjugate for complex inputs)."""
    def conj(*args, **kwargs):
        self = args[0] if args else kwargs.get("input")
        overridable = _overrides.on and (type(self) is not Tensor or _tls.function_modes)
        if not overridable and len(args) + len(kwargs) == 1 and isinstance(self, Tensor) \
                and not self.is_complex():
            return self
        return binding(*args, **kwargs)
    conj.__doc__ = binding.__doc__
    conj._signatures = binding._signatures   # the binding checks overrides
    return conj


def _cuda(self, device=None, non_blocking=False, memory_format=preserve_format):
    from . import cuda
    cuda._lazy_init()
    device = Device("cuda", device) if isinstance(device, int) else \
        Device(device if device is not None else "cuda")
    return self.to(device, non_blocking=non_blocking)


# -- Python number conversions -----------------------------------------------------

def _one_element(self):
    if self.numel() != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return self.item()


def _bool(self):
    """``if tensor:`` is the ``is_nonzero`` op, as in PyTorch (so vmap can refuse it)."""
    return ops.aten.is_nonzero.default(self)


def _real_element(self, c_type):
    """The one element as a real number: complex values with an imaginary part
    don't convert (c10's checked_convert of a complex Scalar)."""
    value = _one_element(self)
    if isinstance(value, complex):
        if value.imag:
            raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
        value = value.real
    return value


def _float(self):
    return float(_real_element(self, "double"))


def _int(self):
    return int(_real_element(self, "int64_t"))


def _complex(self):
    return complex(_one_element(self))


def _index(self):
    if self.numel() != 1 or self.dtype.category > dt.INTEGRAL:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(self.item())


# -- the legacy constructor --------------------------------------------------------

def _legacy_new(cls, *args, _dtype=None, **kwargs):
    """``torch.Tensor()`` / ``torch.Tensor(2, 3)`` (uninitialized) /
    ``torch.Tensor(torch.Size)`` / ``torch.Tensor([1, 2])`` (default dtype) /
    ``torch.Tensor(tensor)`` (an alias); ``cls`` may be a subclass.  The legacy
    types (``torch.LongTensor(...)``, ``_tensor_types.py``) pass their ``_dtype``."""
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({_got(args, kwargs)})")
    if device is not None and Device(device).type != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                           f"{Device(device).type} was passed")
    dtype = _dtype or dt.get_default_dtype()
    if not args:
        out = empty_tensor((0,), dtype, _CPU)
    elif len(args) == 1 and isinstance(args[0], Tensor):
        out = args[0]
    elif len(args) == 1 and isinstance(args[0], UntypedStorage):
        storage = args[0]
        out = Tensor._make(storage, (storage.nbytes() // dtype.itemsize,), (1,), 0, dtype, _CPU,
                           keys_for_device("cpu", tls.state.inference_mode))
    elif isinstance(args[0], Size) or all(isinstance(a, (int, np.integer)) and
                                          not isinstance(a, bool) for a in args):
        shape = tuple(args[0]) if isinstance(args[0], Size) else tuple(int(a) for a in args)
        for n in shape:
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                                   f"{list(shape)}")
        out = empty_tensor(shape, dtype, _CPU)
    elif len(args) == 1 and (isinstance(args[0], (list, tuple, np.ndarray))):
        values = _data_to_array(args[0], dtype)
        out = empty_tensor(values.shape, dtype, _CPU)
        if values.size:
            out._np()[...] = values
    elif len(args) == 1 and isinstance(args[0], str):
        raise TypeError(f"new(): invalid data type '{type(args[0]).__name__}'")
    else:
        bad = next((i for i, a in enumerate(args)
                    if not isinstance(a, (int, np.integer)) or isinstance(a, bool)), 0)
        raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {bad + 1} "
                        f"with error \"type must be tuple of ints,but got "
                        f"{type(args[bad]).__name__}\"")
    if (args and out is args[0]) or type(out) is not cls:
        out = out.as_subclass(cls)
    return out


def _with_as_tuple(fn):
    """``nonzero``'s Python binding takes ``as_tuple=`` (not in its schema): the
    indices as one tensor per dim, a 0-d input read as 1-d (PyTorch's
    nonzero_numpy)."""
    def nonzero(*args, as_tuple=False, **kwargs):
        if not as_tuple:
            return fn(*args, **kwargs)
        if kwargs.pop("out", None) is not None:
            raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
        self = args[0] if args else kwargs.pop("input")
        return fn(self if self.dim() else self.unsqueeze(0), **kwargs).unbind(1)
    nonzero.__doc__ = fn.__doc__
    nonzero._signatures = getattr(fn, "_signatures", None)
    return nonzero


nonzero = _with_as_tuple(_registry.function("nonzero"))
conj = _real_is_own_conj(_registry.function("conj"))
Tensor.conj = _real_is_own_conj(Tensor.conj)
Tensor.nonzero = _with_as_tuple(Tensor.nonzero)
Tensor._legacy_new = staticmethod(_legacy_new)
Tensor.to = _to
Tensor.contiguous = _contiguous
Tensor.type = _type
Tensor.cpu = _cpu
Tensor.cuda = _cuda
Tensor.new_tensor = _new_tensor
Tensor.__bool__ = _bool
Tensor.__float__ = _float
Tensor.__int__ = _int
Tensor.__complex__ = _complex
Tensor.__index__ = _index
for _name, _d in _CASTS.items():
    setattr(Tensor, _name, _make_cast(_d))
del _name, _d


# What torch's C++ bindings route through ``__torch_function__`` (``is_tensor``,
# ``from_numpy`` and the device defaults are not overridable there either).
_torch_function.install_module_overrides(
    sys.modules[__name__], names=("tensor", "as_tensor", "numel", "is_floating_point",
                                  "is_complex", "is_nonzero"), python_level=False)
