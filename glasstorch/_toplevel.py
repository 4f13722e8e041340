"""The rest of the torch namespace and the Tensor attributes PyTorch binds by
hand (torch/__init__.py, torch/_tensor.py, torch/csrc/autograd/python_variable.cpp):
math constants, process-wide switches, the legacy storage classes, and Tensor
properties and methods no schema declares (``x.H``, ``x.real``, ``x.new``,
``x.apply_`` ...)."""
from __future__ import annotations

import builtins
import ctypes
import math
from collections.abc import Sequence
import os
import warnings

import numpy as np

from ._core import tls as _tls
from ._core.device import device as _device
from ._core.dtype import get_default_dtype, int64
from ._core.dispatch_key import DispatchKey, DispatchKeySet
from ._core.layout import channels_last, channels_last_3d, contiguous_format, memory_format
from ._core.storage import (LEGACY_STORAGE_CLASSES, TypedStorage, UntypedStorage,
                            warn_typed_storage_removal)
from ._core.dtype import type_meta_name
from ._dispatcher.dispatcher import ops
from ._creation import _check_requires_grad, from_numpy, tensor
from ._indexing import _tupled
from ._ops import registry as _registry
from ._tensor import Size, Tensor, keys_for_device
from .fx.experimental.sym_node import SymBool, SymFloat, SymInt

__all__ = ["e", "pi", "inf", "nan", "newaxis", "has_lapack", "has_mkl", "has_openmp",
           "has_spectral", "set_warn_always", "is_warn_always_enabled",
           "get_num_interop_threads", "set_num_interop_threads", "init_num_threads",
           "set_flush_denormal", "get_device", "is_distributed", "is_conj", "is_neg",
           "is_signed", "range", "unravel_index", "SymFloat", "sym_not", "sym_float", "sym_int",
           "sym_ite", "sym_sqrt", "sym_sum", "DispatchKey", "DispatchKeySet",
           "get_device_module", "gradient", "frombuffer", "asarray"] + \
    [c.__name__ for c in LEGACY_STORAGE_CLASSES.values()]

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

# What this build has: LAPACK and pocketfft through numpy; no MKL, no OpenMP runtime
# (kernels/native.c threads itself).
has_lapack, has_spectral, has_mkl, has_openmp = True, True, False, False

globals().update({c.__name__: c for c in LEGACY_STORAGE_CLASSES.values()})

# -- process-wide switches ------------------------------------------------------------

_state = {"warn_always": False, "interop_threads": os.cpu_count() or 1}


def set_warn_always(b, /) -> None:
    """``torch.set_warn_always``: warnings PyTorch gives once per process would
    be given every time (recorded)."""
    _state["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _state["warn_always"]


def get_num_interop_threads() -> int:
    return _state["interop_threads"]


def set_num_interop_threads(n, /) -> None:
    """The inter-op pool's size (glasstorch runs ops one at a time: recorded)."""
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _state["interop_threads"] = int(n)


def init_num_threads() -> None:
    """Per-thread intra-op setup, done at each kernel call here: nothing to do."""


def set_flush_denormal(mode, /) -> bool:
    """Whether denormals are now flushed to zero: numpy's loops cannot be told
    to, so this reports the mode as unsupported."""
    return False


def get_device(input, /) -> int:
    return input.get_device()


def is_distributed(input, /) -> bool:
    return False


def is_conj(input, /) -> bool:
    return ops.aten.is_conj.default(input)


def is_neg(input, /) -> bool:
    return ops.aten.is_neg.default(input)


def is_signed(input, /) -> bool:
    return input.is_signed()


# -- Tensor attributes bound by hand in PyTorch -------------------------------------------

_warned_H = False


def _H(self):
    n = len(self._shape)
    if n == 2:
        return ops.aten.adjoint.default(self)
    if n == 0:
        global _warned_H
        if not _warned_H or _state["warn_always"]:      # TORCH_WARN_ONCE
            _warned_H = True
            warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj(). "
                          "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                          "TensorShape.cpp:4335.)", UserWarning, stacklevel=2)
        return self
    raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D "
                       f"tensor." + (" For batches of matrices, consider using tensor.mH"
                                     if n > 2 else ""))


def _mH(self):
    n = len(self._shape)
    if n < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {n}-D tensor.")
    return ops.aten.adjoint.default(self)


def _set_part(part):
    def setter(self, value):
        ops.aten.copy_.default(part(self), value)
    return setter


def _real(self):
    return ops.aten.real.default(self)


def _imag(self):
    return ops.aten.imag.default(self)


def _resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    return ops.aten.resize_.default(self.clone(), list(sizes[0] if len(sizes) == 1 and
                                                       isinstance(sizes[0], (list, tuple))
                                                       else sizes))


def _resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return ops.aten.resize_.default(self.clone(), list(tensor.shape))


def _is_pinned(self, device=None) -> bool:
    return False


def _pin_memory(self, device=None):
    raise RuntimeError("Cannot access accelerator device when none is available.")


def _record_stream(self, stream):
    raise RuntimeError("unknown parameter type")


def _storage_type(self):
    warn_typed_storage_removal()
    return LEGACY_STORAGE_CLASSES[self.dtype]


def _dim_order(self, *, ambiguity_check=False):
    """Dims from outermost to innermost in memory (a stable sort by stride); with
    ``ambiguity_check`` the order must be the only one (no size-1 dims, no equal
    strides), or exactly one of the given memory formats must match."""
    formats = ambiguity_check
    if not isinstance(formats, bool) and not (
            isinstance(formats, list) and all(isinstance(f, memory_format) for f in formats)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        "formats.")
    shape, stride = self._shape, self._stride
    order = tuple(sorted(builtins.range(len(shape)), key=lambda d: -stride[d]))
    if formats is False:
        return order
    unique = all(n != 1 for n in shape) and len(set(stride)) == len(stride)
    if isinstance(formats, list):
        matches = [f for f in formats if f in (contiguous_format, channels_last, channels_last_3d)
                   and self.is_contiguous(memory_format=f)]
        if len(matches) == 1:
            return order
        unique = False
    if not unique:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")
    return order


def _elementwise_python(name, self, fn, *others):
    """apply_ / map_ / map2_: a Python function over the elements, written in place."""
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")
    arrays = [self._np()] + [o.expand(self.shape)._np() for o in others]
    for index in np.ndindex(arrays[0].shape):
        arrays[0][index] = fn(*(a[index].item() for a in arrays))
    return self


def _apply_(self, callable):
    return _elementwise_python("apply_", self, callable)


def _map_(self, tensor, callable):
    return _elementwise_python("map_", self, callable, tensor)


def _map2_(self, x, y, callable):
    return _elementwise_python("map2_", self, callable, x, y)


def _is_set_to(self, tensor) -> bool:
    """Same storage, offset, sizes and strides (ATen's is_set_to)."""
    return self._storage is tensor._storage and self._offset == tensor._offset and \
        self._shape == tensor._shape and self._stride == tensor._stride


_bound_set_ = Tensor.set_


def _set_(self, *args, **kwargs):
    """``Tensor.set_``: a TypedStorage source is its untyped storage, and must
    have this tensor's dtype (python_variable_methods' storage argument)."""
    where, source = (0, args[0]) if args else ("source", kwargs.get("source"))
    if isinstance(source, TypedStorage):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Expected a Storage of type {type_meta_name(self.dtype)} or an "
                               f"UntypedStorage, but got type {source.dtype._short} for argument "
                               "1 'storage'")
        if where == 0:
            args = (source._untyped_storage,) + args[1:]
        else:
            kwargs["source"] = source._untyped_storage
    return _bound_set_(self, *args, **kwargs)


def _module_load(self, other, assign=False):
    """``Tensor.module_load``: what ``load_state_dict`` swaps into a parameter or
    buffer under ``set_swap_module_params_on_conversion(True)`` (subclasses may
    override it): ``other`` detached with ``assign``, else ``self`` after copying
    ``other`` into it, detached."""
    from .overrides import handle_torch_function, has_torch_function_variadic
    if has_torch_function_variadic(self, other):
        return handle_torch_function(Tensor.module_load, (self, other), self, other,
                                     assign=assign)
    if assign:
        return other.detach()
    return self.copy_(other).detach()


for _name in ("xpu", "mps", "ipu", "xla", "mtia", "maia"):
    setattr(Tensor, f"is_{_name}", property(lambda self, _t=_name: self.device.type == _t))
del _name
Tensor.is_nested = property(lambda self: False)
Tensor.H = property(_H)
Tensor.mH = property(_mH)
Tensor.real = property(_real, _set_part(_real))
Tensor.imag = property(_imag, _set_part(_imag))
Tensor.resize = _resize
Tensor.resize_as = _resize_as
Tensor.is_pinned = _is_pinned
Tensor.pin_memory = _pin_memory
Tensor.record_stream = _record_stream
Tensor.storage_type = _storage_type
Tensor.dim_order = _dim_order
Tensor.apply_ = _apply_
Tensor.map_ = _map_
Tensor.map2_ = _map2_
Tensor.is_set_to = _is_set_to
Tensor.set_ = _set_
Tensor.module_load = _module_load
Tensor.is_distributed = lambda self: False



# -- torch.range, torch.unravel_index (python_torch_functions_manual.cpp, torch/functional.py) --

def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    """``torch.range``: deprecated, as its warning says; ``end`` is included and
    the result is the default float dtype even for integer bounds."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if out is not None:
        return ops.aten.range.out(start, end, step, out=out).requires_grad_(requires_grad)
    result = ops.aten.range.step(start, end, step, dtype=dtype, device=device)
    return result.requires_grad_() if requires_grad else result


def unravel_index(indices, shape):
    """Flat indices to coordinates in ``shape`` (one tensor per dim): each
    coordinate is ``index // (product of the later sizes) % size``."""
    if indices.is_complex() or indices.is_floating_point() or indices.dtype.name == "bool":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, (int, SymInt)):
        shape = Size([shape])
    elif isinstance(shape, Sequence):
        for n in shape:
            if not isinstance(n, (int, SymInt)):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                                f"{type(n)}")
        shape = Size(shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    strides = [math.prod(shape[i + 1:]) for i in builtins.range(len(shape))]
    coords = ops.aten.remainder.Tensor(
        ops.aten.floor_divide.default(indices.unsqueeze(-1),
                                      tensor(strides, dtype=int64, device=indices.device)),
        tensor(list(shape), dtype=int64, device=indices.device))
    return coords.unbind(-1)


# torch.gradient's estimates, one per dim, come back as a tuple (a Tensor[] binding)
gradient = _tupled(_registry.FUNCTIONS["torch"]["gradient"], "gradient")


# -- frombuffer, asarray (torch/csrc/utils/tensor_new.cpp) --------------------------------

_warned_once = set()


def _warn_once(key, message, where):
    """A TORCH_WARN_ONCE of the C++ side (again each time under set_warn_always)."""
    if key not in _warned_once or _state["warn_always"]:
        _warned_once.add(key)
        warnings.warn(f"{message} (Triggered internally at /__w/pytorch/pytorch/{where}.)",
                      UserWarning, stacklevel=3)


def _buffer_bytes(buffer):
    """The buffer's bytes as a writable uint8 array over the same memory (a
    read-only buffer too, as PyTorch writes through it: with a warning), and
    whether it was read-only."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    data = np.frombuffer(view, np.uint8) if view.nbytes else np.empty(0, np.uint8)
    if data.flags.writeable:
        return data, False
    raw = (ctypes.c_uint8 * data.size).from_address(data.ctypes.data)
    raw._keep = view            # the memory belongs to the buffer: keep it alive
    return np.ctypeslib.as_array(raw), True


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """``torch.frombuffer``: a 1-d tensor sharing memory with a buffer-protocol
    object: ``count`` elements of ``dtype`` (all that fit, if negative) from byte
    ``offset``.  Its storage is exactly those bytes, and cannot grow."""
    data, read_only = _buffer_bytes(buffer)
    length, size = data.size, dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if read_only:
        _warn_once("frombuffer", "The given buffer is not writable, and PyTorch does not support "
                   "non-writable tensors. This means you can write to the underlying (supposedly "
                   "non-writable) buffer using the tensor. You may want to copy the buffer to "
                   "protect its data or make it writable before converting it to a tensor. This "
                   "type of warning will be suppressed for the rest of this program.",
                   "torch/csrc/utils/tensor_new.cpp:1556")
    # external memory: no allocator counts it, so the storage is not resizable
    storage = UntypedStorage._wrap(data[offset: offset + count * size], _device("cpu"), None)
    out = Tensor._make(storage, (count,), (1,), 0, dtype, _device("cpu"),
                       keys_for_device("cpu", _tls.state.inference_mode))
    if requires_grad:
        _check_requires_grad(out)
    return out.requires_grad_() if requires_grad else out


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """``torch.asarray``: a tensor, numpy array (or scalar) or buffer is aliased
    when ``copy`` allows it and ``dtype``/``device`` match (a buffer's bytes are
    read as ``dtype``, the default dtype if none); ``copy=True`` always copies,
    ``copy=False`` refuses to.  Anything else (sequences, scalars) is copied as
    ``torch.tensor`` would.  ``requires_grad``, when given, is set on an aliased
    leaf in place, and detaches a non-leaf result when False."""
    result, read_only = None, False
    if isinstance(obj, Tensor):
        result = obj
    elif isinstance(obj, (np.ndarray, np.generic)):
        array = np.asarray(obj)
        result, read_only = from_numpy(array), not array.flags.writeable
    else:
        try:
            memoryview(obj)
        except TypeError:
            pass
        else:
            result = frombuffer(obj, dtype=dtype or get_default_dtype(),
                                requires_grad=bool(requires_grad))
    if result is None:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        result = tensor(obj, dtype=dtype, device=device)
        if requires_grad:
            _check_requires_grad(result)
        return result.requires_grad_() if requires_grad else result
    target = _device(device) if device is not None else None
    wrong_device = target is not None and target != result.device
    wrong_dtype = dtype is not None and dtype is not result.dtype
    if copy or (copy is None and (wrong_device or wrong_dtype)):
        if wrong_device or wrong_dtype:
            result = result.to(target or result.device, dtype or result.dtype, copy=bool(copy))
        else:
            result = result.clone()
    else:
        if wrong_device:
            raise ValueError(f"can't alias tensor from device '{result.device}' to '{target}'.")
        if wrong_dtype:
            raise ValueError(f"can't alias tensor with dtype '{result.dtype._short}' into dtype "
                             f"'{dtype._short}'.")
        if read_only:
            _warn_once("numpy", "The given NumPy array is not writable, and PyTorch does not "
                       "support non-writable tensors. This means writing to this tensor will "
                       "result in undefined behavior. You may want to copy the array to protect "
                       "its data or make it writable before converting it to a tensor. This type "
                       "of warning will be suppressed for the rest of this program.",
                       "torch/csrc/utils/tensor_numpy.cpp:213")
    if requires_grad is None:
        if result.requires_grad:
            _warn_once("asarray", "torch.asarray: unspecified requires_grad now defaults to "
                       "obj.requires_grad instead of False. Pass requires_grad=False explicitly "
                       "to get the old behavior and silence this warning.",
                       "torch/csrc/utils/tensor_new.cpp:1737")
    elif result.is_leaf:
        if requires_grad:
            _check_requires_grad(result)
        result.requires_grad_(requires_grad)
    elif not requires_grad:
        result = result.detach()
    return result


# -- symbolic-aware Python helpers (torch/__init__.py's sym_*) ------------------------------

def sym_not(a):
    """Logical not that keeps a SymBool symbolic where it can (else guards on it)."""
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


def sym_float(a):
    if isinstance(a, SymFloat):
        return a
    if hasattr(a, "__sym_float__"):
        return a.__sym_float__()
    return builtins.float(a)


def sym_int(a):
    if isinstance(a, SymInt):
        return a
    if isinstance(a, SymFloat):
        return math.trunc(a)
    return builtins.int(a)


def sym_ite(b, t, f):
    """``t if b else f`` for a bool or SymBool condition; t and f of one type."""
    if not isinstance(b, (SymBool, builtins.bool)):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    if isinstance(b, SymBool) and hasattr(b, "__sym_ite__"):
        return b.__sym_ite__(t, f)
    return t if b else f


def sym_sqrt(a):
    if hasattr(a, "__sym_sqrt__"):
        return a.__sym_sqrt__()
    return math.sqrt(a)


def sym_sum(*args):
    """n-ary addition; ``sym_sum([a, b])`` and ``sym_sum(a, b)`` alike."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def get_device_module(device=None):
    """``torch.get_device_module``: the module named after a device type
    (``torch.cuda``, ``torch.cpu``); with none given, the accelerator's or CPU's."""
    import glasstorch
    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = _device(device).type
    elif device is None:
        name = "cuda" if glasstorch.cuda.is_available() else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    module = getattr(glasstorch, name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as "
                           f"'torch.{name}'.")
    return module


Tensor.const_data_ptr = lambda self: self.data_ptr()
