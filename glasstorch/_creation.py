"""Tensors from Python data and numpy (torch/csrc/utils/tensor_new.cpp).

``torch.tensor`` infers a dtype the way PyTorch does (bool < int64 < default
float < default complex over all leaves), copies the data into fresh storage
from the allocator, and runs no operator, as in PyTorch.  ``from_numpy``
shares the array's memory.
"""
from __future__ import annotations

import numpy as np

from ._core import dtype as dt
from ._core.device import device as Device
from ._core import tls
from ._tensor import Tensor, keys_for_device
from ._core.storage import UntypedStorage
from ._ops.structured import empty_tensor

__all__ = ["tensor", "from_numpy"]

_CPU = Device("cpu")


def _infer_dtype(data):
    """The dtype ``torch.tensor(data)`` picks: the highest category among leaves."""
    best = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            d = x.dtype
        elif isinstance(x, np.ndarray):
            d = dt.FROM_NUMPY.get(x.dtype)
            if d is None:
                raise TypeError(f"can't convert np.ndarray of type {x.dtype}.")
        elif isinstance(x, np.generic):
            d = dt.FROM_NUMPY[x.dtype] if x.dtype in dt.FROM_NUMPY else dt.scalar_dtype(x.item())
        elif isinstance(x, (bool, int, float, complex)):
            d = dt.scalar_dtype(x)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
        if best is None:
            best = d
        elif isinstance(x, (bool, int, float, complex)) or d.category != best.category:
            best = best if best.category >= d.category else d
            if best.category == dt.COMPLEX and d.category == dt.COMPLEX and d.itemsize > best.itemsize:
                best = d
        else:
            best = dt.promote_types(best, d) if isinstance(x, (Tensor, np.ndarray, np.generic)) else best
    return best if best is not None else dt.get_default_dtype()


def _to_numpy(data, np_dtype):
    if isinstance(data, Tensor):
        return data._cpu_array().astype(np_dtype)
    if isinstance(data, (list, tuple)) and any(isinstance(x, (Tensor, list, tuple)) for x in data):
        parts = [_to_numpy(x, np_dtype) for x in data]
        shapes = {p.shape for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"expected sequence of length {parts[0].shape[0] if parts[0].ndim else 0} "
                             f"at dim 1 (got {parts[-1].shape[0] if parts[-1].ndim else 0})")
        return np.stack(parts) if parts else np.empty((0,), np_dtype)
    try:
        return np.array(data, dtype=np_dtype)
    except OverflowError:
        return np.array(data, dtype=object).astype(np_dtype)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """``torch.tensor``: always copies."""
    dtype = dtype if dtype is not None else _infer_dtype(data)
    values = _to_numpy(data, dtype.numpy)
    out = empty_tensor(values.shape, dtype, _CPU)
    out._np()[...] = values
    target = Device(device) if device is not None else (tls.default_device() or _CPU)
    if target.type != "cpu":
        out = out.to(target)
    if requires_grad:
        out.requires_grad_(True)
    return out


def from_numpy(array: np.ndarray) -> Tensor:
    """``torch.from_numpy``: shares memory with the array (writes show both ways)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtype = dt.FROM_NUMPY.get(array.dtype)
    if dtype is None:
        raise TypeError(f"can't convert np.ndarray of type {array.dtype}. The only supported "
                        "types are: float64, float32, float16, complex64, complex128, int64, "
                        "int32, int16, int8, uint8, and bool.")
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
